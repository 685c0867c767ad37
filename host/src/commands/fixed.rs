//! `hall fixed <ids> [--dispute <id> --reason …]`: the fixer says what its commit fixes
//! (and which findings it disputes), and the item goes back to the checks at HEAD.

use super::{Ctx, ItemReply, Reply};
use crate::cli::FixedArgs;
use crate::error::{HallError, Result};
use crate::git;
use crate::hall::worktree::require_clean;
use crate::item::event::Dispute;
use crate::item::{Action, EventKind, fold};

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
    let events = hall.events(id)?;
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
    let applied = hall.change(ctx, id).apply(Action::FixSubmitted {
        sha: head,
        fixed,
        disputed: disputes,
    })?;
    Ok(ItemReply::reply(
        &applied.after,
        applied.changed(),
        "is resubmitted for checks",
    ))
}
