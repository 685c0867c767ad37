//! `hall queue`: the merge queue as the merger's last pass judged it. It prints that
//! pass's `merger.json` and never calls GitHub (decision 0028); the daemon's merger writes a
//! new one at most every 20 seconds while `[merge] mode = "auto"`.

use serde::Serialize;

use super::{Ctx, Reply, next_text};
use crate::cli::QueueArgs;
use crate::config::MergeMode;
use crate::error::{Code, HallError, Result};
use crate::office::merger::{HeldPr, PlannedBase, RoomSeen};

#[derive(Serialize, schemars::JsonSchema)]
pub struct QueueReply {
    /// Whether the merger is on (`[merge] mode = "auto"` on the base branch).
    pub merger_on: bool,
    /// When the pass that judged this ran.
    pub at: String,
    /// The room that judged it.
    pub room: RoomSeen,
    /// gh calls that pass made to gather its facts.
    pub calls: usize,
    /// One queue per base, each PR with its action, reasons and `waits_for`.
    pub bases: Vec<PlannedBase>,
    /// Shipped PRs left alone while their item is held for a person.
    pub held: Vec<HeldPr>,
    pub next: Vec<String>,
}

pub fn run(ctx: &Ctx, args: &QueueArgs) -> Result<Reply> {
    let hall = ctx.hall()?;
    let merger_on = hall.config.merge.mode == MergeMode::Auto;
    let Some(plan) = crate::office::merger::read_plan(&hall) else {
        let mut e = HallError::new(
            Code::WrongState,
            "the merger has not judged the queue yet: it writes merger.json on each pass of the daemon",
        );
        if !merger_on {
            e = e.hint("set `[merge] mode = \"auto\"` in .hallmark.toml on the base branch");
        }
        return Err(e.hint("hall daemon start"));
    };
    let bases: Vec<PlannedBase> = plan
        .bases
        .into_iter()
        .filter(|b| args.base.as_deref().is_none_or(|want| want == b.base))
        .collect();
    let mut text = String::new();
    if !merger_on {
        text.push_str("The merger is off ([merge] mode); this is its last plan.\n");
    }
    text.push_str(&format!("Judged {} by {}.\n", plan.at, plan.room.name));
    for b in &bases {
        let stopped = if b.line_stopped { ", line stopped" } else { "" };
        text.push_str(&format!(
            "\n{} (tip {}, CI {}{stopped})\n",
            b.base,
            crate::item::sha::short(&b.tip),
            b.tip_ci
        ));
        if let Some(n) = b.merge_in_flight {
            text.push_str(&format!("  #{n} merged, waiting for its delivery\n"));
        }
        for pr in &b.prs {
            let waits = if pr.waits_for.is_empty() {
                String::new()
            } else {
                let list: Vec<String> = pr.waits_for.iter().map(|n| format!("#{n}")).collect();
                format!(" for {}", list.join(", "))
            };
            text.push_str(&format!(
                "  #{} {}  {}{waits}: {}\n",
                pr.number,
                pr.item,
                pr.action,
                pr.reasons.join(", ")
            ));
        }
    }
    for h in &plan.held {
        text.push_str(&format!(
            "\n#{} {} is held ({})\n",
            h.number, h.item, h.hold
        ));
    }
    let mut next = vec!["hall inbox".to_string()];
    next.extend(plan.held.iter().map(|h| format!("hall status {}", h.item)));
    text.push_str(&next_text(&next));
    let reply = QueueReply {
        merger_on,
        at: plan.at,
        room: plan.room,
        calls: plan.calls,
        bases,
        held: plan.held,
        next,
    };
    Ok(Reply::new(&reply, text))
}
