//! `hall pull-back`: "not yet". The item returns to development from anywhere in the loop.

use super::{Ctx, ItemReply, Reply, refused, sync_queue};
use crate::cli::PullBackArgs;
use crate::error::Result;
use crate::item::{Action, decide};

pub fn run(ctx: &Ctx, args: &PullBackArgs) -> Result<Reply> {
    let hall = ctx.hall()?;
    let id = hall.resolve(args.id.as_deref())?;
    let tx = hall.journal.transact(id, |item, _| {
        let kinds = decide(
            item,
            &Action::PullBack {
                reason: args.reason.clone(),
            },
        )
        .map_err(|r| refused(id, r))?;
        Ok(kinds.into_iter().map(|k| ctx.event(Some(id), k)).collect())
    })?;
    sync_queue(&hall, &tx.after)?;
    Ok(ItemReply::reply(
        &tx.after,
        !tx.appended.is_empty(),
        "is back in development",
    ))
}
