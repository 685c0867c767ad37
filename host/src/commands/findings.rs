//! `hall findings [<id>]`: what the fixer acts on: the open findings of the last verdict
//! and the failing checks, each with its condensed output and the log to drill into.

use serde::Serialize;

use super::{Ctx, Reply, next_text};
use crate::cli::FindingsArgs;
use crate::error::Result;
use crate::item::event::Finding;
use crate::item::{ItemId, State, fold};
use crate::office::fix::{FailedCheck, brief};

#[derive(Serialize, schemars::JsonSchema)]
pub struct FindingsReply {
    pub item: ItemId,
    pub state: State,
    pub findings: Vec<Finding>,
    pub checks: Vec<FailedCheck>,
    pub next: Vec<String>,
}

pub fn run(ctx: &Ctx, args: &FindingsArgs) -> Result<Reply> {
    let hall = ctx.hall()?;
    let id = hall.resolve(args.id.as_deref())?;
    let events = hall.events(id)?;
    let item = fold(&events);
    let (findings, checks) = brief(&events, &item);
    let ids: Vec<&str> = findings.iter().map(|f| f.id.as_str()).collect();
    let mut next = Vec::new();
    if item.state == State::Fixing {
        next.push(format!(
            "hall fixed {}",
            if ids.is_empty() {
                "<ids>".into()
            } else {
                ids.join(" ")
            }
        ));
    }
    for c in &checks {
        if let Some(log) = &c.log {
            next.push(format!("hall run --show {log} --grep <text>"));
        }
    }
    next.push(format!("hall status {id}"));
    let mut text = format!(
        "{id} is {}: {} open findings, {} failing checks.\n",
        item.state,
        findings.len(),
        checks.len()
    );
    for c in &checks {
        text.push_str(&format!(
            "\n`{}` exited {}:\n{}\n",
            c.check,
            c.exit_code,
            c.output.trim_end()
        ));
    }
    for f in &findings {
        text.push_str(&format!("\n{f}"));
    }
    text.push_str(&format!("\n{}", next_text(&next)));
    Ok(Reply::new(
        &FindingsReply {
            item: id,
            state: item.state,
            findings,
            checks,
            next,
        },
        text,
    ))
}
