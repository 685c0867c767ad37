//! `hall drop`: abandon an item. Its branch and journal stay; its worktree goes unless
//! `--keep-worktree`, and never by force.

use serde::Serialize;

use super::{Ctx, ItemReply, Reply};
use crate::cli::DropArgs;
use crate::error::Result;
use crate::git;
use crate::item::Action;

#[derive(Serialize, schemars::JsonSchema)]
pub struct DropReply {
    #[serde(flatten)]
    pub item: ItemReply,
    /// Whether the worktree was removed.
    pub worktree_removed: bool,
    /// Why it was kept, when it was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worktree_kept: Option<String>,
}

pub fn run(ctx: &Ctx, args: &DropArgs) -> Result<Reply> {
    ctx.refuse_fixer("drop")?;
    let hall = ctx.hall()?;
    let id = hall.resolve(args.id.as_deref())?;
    if args.reason.trim().is_empty() {
        return Err(crate::error::HallError::usage("--reason must say why")
            .hint(format!("hall drop {id} --reason \"…\"")));
    }
    let applied = hall.change(ctx, id).apply(Action::Drop {
        reason: args.reason.clone(),
    })?;
    let wt = hall.worktree_of(&applied.after);
    let (removed, kept) = if args.keep_worktree {
        (false, Some("--keep-worktree".to_string()))
    } else if wt == hall.repo.main_root || !wt.is_dir() {
        (
            false,
            (wt == hall.repo.main_root).then(|| "it is the main checkout".to_string()),
        )
    } else {
        match git::worktree_remove(&hall.repo.main_root, &wt) {
            Ok(()) => (true, None),
            Err(e) => (false, Some(e.to_string())),
        }
    };
    let base = ItemReply::of(&applied.after, applied.changed());
    let text = format!(
        "{id} is dropped; its branch {} and journal stay.{}",
        applied.after.branch,
        match &kept {
            Some(why) => format!(" The worktree was kept: {why}"),
            None if removed => " The worktree was removed.".to_string(),
            None => String::new(),
        }
    );
    Ok(Reply::new(
        &DropReply {
            item: base,
            worktree_removed: removed,
            worktree_kept: kept,
        },
        text,
    ))
}
