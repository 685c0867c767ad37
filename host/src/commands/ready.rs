//! `hall ready`: freeze HEAD and queue the item for the Assay Office.

use super::{Ctx, ItemReply, Reply, on_base, refused, require_clean, sync_queue};
use crate::cli::ReadyArgs;
use crate::error::Result;
use crate::git;
use crate::item::{Action, State, decide, fold};

pub fn run(ctx: &Ctx, args: &ReadyArgs) -> Result<Reply> {
    super::refuse_fixer(ctx, "ready")?;
    let hall = ctx.hall()?;
    let id = hall.resolve(args.id.as_deref())?;
    let item = fold(&hall.journal.read_item(id)?.events);
    let wt = hall.worktree_of(&item);
    // Only a commit that is about to be frozen must be clean; a repeat in the loop just
    // reports where the item is.
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
        let action = Action::Ready {
            sha: head.clone(),
            note: args.note.clone(),
            on_base,
        };
        let kinds = decide(item, &action).map_err(|r| refused(id, r))?;
        Ok(kinds.into_iter().map(|k| ctx.event(Some(id), k)).collect())
    })?;
    sync_queue(&hall, &tx.after)?;
    let warnings = super::torn_warnings(&hall.journal.item_file(id), &tx.torn);
    Ok(ItemReply::reply(
        &tx.after,
        !tx.appended.is_empty(),
        "is frozen and queued for checks",
    )
    .warn(warnings))
}
