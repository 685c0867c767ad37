//! `hall fixed <ids> [--dispute <id> --reason …]`: the fixer says what its commit fixes
//! (and which findings it disputes), and the item goes back to the checks at HEAD.

use super::{Ctx, ItemReply, Reply, refused, require_clean, sync_queue};
use crate::cli::FixedArgs;
use crate::error::{HallError, Result};
use crate::git;
use crate::item::event::Dispute;
use crate::item::{Action, EventKind, decide, fold};

pub fn run(ctx: &Ctx, args: &FixedArgs) -> Result<Reply> {
    let hall = ctx.hall()?;
    let id = hall.resolve(args.item.as_deref())?;
    if !args.dispute.is_empty() && args.reason.as_deref().is_none_or(|r| r.trim().is_empty()) {
        return Err(
            HallError::usage("--dispute needs --reason: why the finding is wrong").hint(format!(
                "hall fixed --item {id} --dispute <id> --reason \"…\""
            )),
        );
    }
    let events = hall.journal.read_item(id)?.events;
    let item = fold(&events);
    let known: Vec<String> = events
        .iter()
        .flat_map(|e| match &e.kind {
            EventKind::Verdict { findings, .. } => findings.iter().map(|f| f.id.clone()).collect(),
            _ => Vec::new(),
        })
        .collect();
    let norm = |s: &str| {
        let s = s.trim().to_ascii_uppercase();
        if s.starts_with('F') {
            s
        } else {
            format!("F{s}")
        }
    };
    let fixed: Vec<String> = args.ids.iter().map(|s| norm(s)).collect();
    let disputed: Vec<String> = args.dispute.iter().map(|s| norm(s)).collect();
    if let Some(unknown) = fixed.iter().chain(&disputed).find(|f| !known.contains(f)) {
        return Err(HallError::usage(format!("{id} has no finding {unknown}"))
            .hint(format!("hall findings {id}")));
    }
    let wt = require_clean(&hall, &item)?;
    let head = git::head(&wt)?;
    let disputes: Vec<Dispute> = disputed
        .iter()
        .map(|f| Dispute {
            finding: f.clone(),
            reason: args.reason.clone().unwrap_or_default(),
        })
        .collect();
    let tx = hall.journal.transact(id, |now, _| {
        let kinds = decide(
            now,
            &Action::FixSubmitted {
                sha: head.clone(),
                fixed: fixed.clone(),
                disputed: disputes.clone(),
            },
        )
        .map_err(|r| refused(id, r))?;
        Ok(kinds.into_iter().map(|k| ctx.event(Some(id), k)).collect())
    })?;
    sync_queue(&hall, &tx.after)?;
    Ok(ItemReply::reply(
        &tx.after,
        !tx.appended.is_empty(),
        "is resubmitted for checks",
    ))
}
