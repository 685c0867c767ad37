//! `hall reply <comment> --body …`: a dev run (or a person) drafts the answer to a
//! review comment on the item's PR. Nothing reaches GitHub here: the shipper posts each
//! draft once the change that answers it has been reviewed and pushed, so the reviewer
//! reads the replies with the code.

use super::{Ctx, ItemReply, Reply};
use crate::cli::ReplyArgs;
use crate::error::{HallError, Result};
use crate::item::Action;

pub fn run(ctx: &Ctx, args: &ReplyArgs) -> Result<Reply> {
    let hall = ctx.hall()?;
    let id = hall.resolve(args.item.as_deref())?;
    let comment: u64 = args
        .comment
        .trim()
        .trim_start_matches('#')
        .parse()
        .map_err(|_| {
            HallError::usage(format!(
                "`{}` is not a review comment id (a number, such as 123 or #123)",
                args.comment
            ))
            .hint(format!("hall status {id}"))
        })?;
    let body = args.body.trim();
    if body.is_empty() {
        return Err(
            HallError::usage("--body is empty: a reply says something").hint(format!(
                "hall reply {comment} --body \"Fixed in the next commit: …\""
            )),
        );
    }
    let applied = hall.change(ctx, id).apply(Action::DraftReply {
        comment,
        body: body.to_string(),
    })?;
    Ok(ItemReply::reply(
        &applied.after,
        applied.changed(),
        "has the reply drafted; it is posted when the change ships",
    ))
}
