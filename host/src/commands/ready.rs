//! `hall ready`: freeze HEAD and queue the item for the Assay Office.

use super::{Ctx, ItemReply, Reply};
use crate::cli::ReadyArgs;
use crate::error::Result;
use crate::hall::worktree::freeze_point;
use crate::item::Action;

pub fn run(ctx: &Ctx, args: &ReadyArgs) -> Result<Reply> {
    ctx.refuse_fixer("ready")?;
    let hall = ctx.hall()?;
    let id = hall.resolve(args.id.as_deref())?;
    let (sha, on_base) = freeze_point(&hall, &hall.item(id)?)?;
    let applied = hall.change(ctx, id).apply(Action::Ready {
        sha,
        note: args.note.clone(),
        on_base,
    })?;
    let warnings = super::torn_warnings(&hall.journal.item_file(id), &applied.torn);
    Ok(ItemReply::reply(
        &applied.after,
        applied.changed(),
        "is frozen and queued for checks",
    )
    .warn(warnings))
}
