//! `hall pull-back`: "not yet". The item returns to development from anywhere in the loop.

use super::{Ctx, ItemReply, Reply};
use crate::cli::PullBackArgs;
use crate::error::Result;
use crate::item::Action;

pub fn run(ctx: &Ctx, args: &PullBackArgs) -> Result<Reply> {
    let hall = ctx.hall()?;
    let id = hall.resolve(args.id.as_deref())?;
    let applied = hall.change(ctx, id).apply(Action::PullBack {
        reason: args.reason.clone(),
    })?;
    Ok(ItemReply::reply(
        &applied.after,
        applied.changed(),
        "is back in development",
    ))
}
