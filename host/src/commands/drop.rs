//! `hall drop`: abandon an item. Its branch and journal stay; its worktree goes unless
//! `--keep-worktree`, and never by force.

use serde::Serialize;

use super::{Ctx, ItemReply, Reply, refused, sync_queue};
use crate::cli::DropArgs;
use crate::error::Result;
use crate::git;
use crate::item::{Action, decide};

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
    super::refuse_fixer(ctx, "drop")?;
    let hall = ctx.hall()?;
    let id = hall.resolve(args.id.as_deref())?;
    if args.reason.trim().is_empty() {
        return Err(crate::error::HallError::usage("--reason must say why")
            .hint(format!("hall drop {id} --reason \"…\"")));
    }
    let tx = hall.journal.transact(id, |item, _| {
        let kinds = decide(
            item,
            &Action::Drop {
                reason: args.reason.clone(),
            },
        )
        .map_err(|r| refused(id, r))?;
        Ok(kinds.into_iter().map(|k| ctx.event(Some(id), k)).collect())
    })?;
    sync_queue(&hall, &tx.after)?;
    let wt = hall.worktree_of(&tx.after);
    let (removed, kept) = if args.keep_worktree {
        (false, Some("--keep-worktree".to_string()))
    } else if wt == hall.repo.main_root || !wt.is_dir() {
        (
            false,
            (wt == hall.repo.main_root).then(|| "it is the main checkout".to_string()),
        )
    } else {
        match git::run(
            &hall.repo.main_root,
            &["worktree", "remove", &wt.display().to_string()],
        ) {
            Ok(_) => (true, None),
            Err(e) => (false, Some(e.message)),
        }
    };
    let base = ItemReply::of(&tx.after, !tx.appended.is_empty());
    let text = format!(
        "{id} is dropped; its branch {} and journal stay.{}",
        tx.after.branch,
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
