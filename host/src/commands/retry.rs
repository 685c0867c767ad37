//! `hall retry`: one more round for an escalated item, or the release of a hold. A budget
//! hold also grants the item more tokens.

use super::{Ctx, ItemReply, Reply};
use crate::cli::RetryArgs;
use crate::config::parse_tokens;
use crate::error::{HallError, Result};
use crate::item::{Action, HoldKind};

pub fn run(ctx: &Ctx, args: &RetryArgs) -> Result<Reply> {
    ctx.refuse_fixer("retry")?;
    // Another round past the reviewer's limit, or the release of a hold (a budget
    // hold's with more tokens): the person's call on the item.
    let _you = ctx.person("retry", "lets an item go on past what stopped it")?;
    let hall = ctx.hall()?;
    let id = hall.resolve(args.id.as_deref())?;
    let explicit = match &args.tokens {
        Some(t) => Some(
            parse_tokens(t)
                .map_err(|e| HallError::usage(format!("--tokens: {e}")))?
                .ok_or_else(|| HallError::usage("--tokens needs a number, e.g. 200k"))?,
        ),
        None => None,
    };
    let per_item = parse_tokens(&hall.config.budget.per_item).ok().flatten();
    let applied = hall.change(ctx, id).apply_with(|item| {
        // A budget hold grants another `per_item` unless --tokens says how much.
        let budget_hold = item
            .hold
            .as_ref()
            .is_some_and(|h| h.kind == HoldKind::Budget);
        let tokens = if budget_hold {
            explicit.or(per_item)
        } else {
            explicit
        };
        Some(Action::Retry {
            reason: args.reason.clone(),
            tokens,
        })
    })?;
    Ok(ItemReply::reply(&applied.after, true, "may go on"))
}
