//! `hall propose-ready`: the agent says the work is done. Straight to checks when nothing
//! is left to confirm and `auto_ready` is on; otherwise it waits in Your Office.

use super::{Ctx, ItemReply, Reply, on_base, refused, require_clean, sync_queue};
use crate::cli::ProposeArgs;
use crate::error::Result;
use crate::git;
use crate::item::{Action, State, decide, fold};

pub fn run(ctx: &Ctx, args: &ProposeArgs) -> Result<Reply> {
    let hall = ctx.hall()?;
    let id = hall.resolve(args.id.as_deref())?;
    let item = fold(&hall.journal.read_item(id)?.events);
    let wt = hall.worktree_of(&item);
    if matches!(item.state, State::Development | State::AwaitingYou) {
        require_clean(&hall, &item)?;
    }
    // A dropped item's worktree may be gone; the state machine refuses it below.
    let head = if wt.is_dir() {
        git::head(&wt)?
    } else {
        item.sha.clone().unwrap_or_default()
    };
    let on_base = on_base(&wt, item.rebase_requested.as_deref());
    let tx = hall.journal.transact(id, |item, _| {
        let action = Action::ProposeReady {
            sha: head.clone(),
            summary: args.summary.clone(),
            why: args.why.clone(),
            how: args.how.clone(),
            ask: args.ask,
            auto_ready: hall.config.auto_ready,
            on_base,
        };
        let kinds = decide(item, &action).map_err(|r| refused(id, r))?;
        Ok(kinds.into_iter().map(|k| ctx.event(Some(id), k)).collect())
    })?;
    sync_queue(&hall, &tx.after)?;
    let what = if tx.after.state == State::AwaitingYou {
        "waits for you to confirm"
    } else {
        "is frozen and queued for checks"
    };
    Ok(ItemReply::reply(&tx.after, !tx.appended.is_empty(), what))
}
