//! `hall propose-ready`: the agent says the work is done. Straight to checks when nothing
//! is left to confirm and `auto_ready` is on; otherwise it waits in Your Office.

use super::{Ctx, ItemReply, Reply};
use crate::cli::ProposeArgs;
use crate::error::Result;
use crate::hall::worktree::freeze_point;
use crate::item::{Action, State};

pub fn run(ctx: &Ctx, args: &ProposeArgs) -> Result<Reply> {
    let hall = ctx.hall()?;
    let id = hall.resolve(args.id.as_deref())?;
    let (sha, on_base) = freeze_point(&hall, &hall.item(id)?)?;
    let applied = hall.change(ctx, id).apply(Action::ProposeReady {
        sha,
        summary: args.summary.clone(),
        why: args.why.clone(),
        how: args.how.clone(),
        ask: args.ask,
        auto_ready: hall.config.auto_ready,
        on_base,
    })?;
    let what = if applied.after.state == State::AwaitingYou {
        "waits for you to confirm"
    } else {
        "is frozen and queued for checks"
    };
    Ok(ItemReply::reply(&applied.after, applied.changed(), what))
}
