//! `hall merge [<part>]`: a finished part merges into its parent's branch, in the
//! parent's worktree, with a merge commit naming the part; the part is closed
//! (`merged`) and its worktree removed unless `--keep-worktree`. A conflict aborts the
//! merge and leaves both branches and both worktrees as they were.

use serde::Serialize;

use super::{Ctx, ItemReply, Reply};
use crate::cli::MergeArgs;
use crate::error::{Code, HallError, Result};
use crate::git;
use std::path::Path;

use crate::item::{Action, Item, ItemId, Sha, State};

#[derive(Serialize, schemars::JsonSchema)]
pub struct MergeReply {
    #[serde(flatten)]
    pub item: ItemReply,
    pub parent: String,
    /// The parent's branch the part merged into, and the merge commit.
    pub into: String,
    pub commit: String,
    /// The parent's parts still open.
    pub open_parts: Vec<String>,
    pub worktree_removed: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worktree_kept: Option<String>,
}

pub fn run(ctx: &Ctx, args: &MergeArgs) -> Result<Reply> {
    ctx.refuse_fixer("merge")?;
    let hall = ctx.hall()?;
    let id = hall.resolve(args.part.as_deref())?;
    let item = hall.item(id)?;
    let Some(parent) = item.parent else {
        return Err(crate::hall::change::refused(
            id,
            crate::item::Refusal::NotAPart,
        ));
    };
    let parent_item = hall.item(parent)?;
    if !matches!(item.state, State::Development | State::AwaitingYou) {
        // Already merged: the same answer again, nothing done twice.
        if item.merged.is_none() {
            return Err(crate::hall::change::refused(
                id,
                crate::item::Refusal::WrongState {
                    state: item.state,
                    action: "merge",
                },
            ));
        }
    }
    let part_wt = hall.worktree_of(&item);
    let parent_wt = hall.worktree_of(&parent_item);
    if item.merged.is_none() && (parent_wt == hall.repo.main_root || !parent_wt.is_dir()) {
        return Err(HallError::new(
            Code::WrongState,
            format!(
                "{parent}'s worktree is not there ({}), so there is nowhere to merge {id} into",
                parent_wt.display()
            ),
        )
        .hint(format!("hall status {parent}")));
    }
    // Merged already: the same answer again, nothing done twice.
    let (after, changed, commit) = match &item.merged {
        Some(commit) => (item.clone(), false, commit.clone()),
        None => merge_once(
            ctx,
            &hall,
            (id, &item),
            (parent, &parent_item),
            (&part_wt, &parent_wt),
        )?,
    };
    let (removed, kept) = if args.keep_worktree {
        (false, Some("--keep-worktree".to_string()))
    } else if part_wt == hall.repo.main_root || !part_wt.is_dir() {
        (false, None)
    } else {
        match git::worktree_remove(&hall.repo.main_root, &part_wt) {
            Ok(()) => {
                hall.change(ctx, id).apply(Action::RemoveWorktree {
                    path: part_wt.display().to_string(),
                })?;
                (true, None)
            }
            Err(e) => (false, Some(e.to_string())),
        }
    };
    let open_parts: Vec<String> = hall
        .item(parent)?
        .parts
        .iter()
        .filter(|p| p.id != id)
        .filter_map(|p| hall.item(p.id).ok().map(|i| (p.id, i)))
        .filter(|(_, i)| !matches!(i.state, State::Closed | State::Dropped))
        .map(|(p, _)| p.to_string())
        .collect();
    let mut next = vec![format!("hall status {parent}")];
    if open_parts.is_empty() {
        next.insert(0, format!("hall ready {parent}"));
    } else {
        next.extend(open_parts.iter().map(|p| format!("hall merge {p}")));
    }
    let mut base = ItemReply::of(&after, changed);
    base.next = next;
    let reply = MergeReply {
        item: base,
        parent: parent.to_string(),
        into: parent_item.branch.clone(),
        commit: commit.to_string(),
        open_parts,
        worktree_removed: removed,
        worktree_kept: kept,
    };
    let mut text = format!(
        "{id} merged into {parent}'s branch {} as {}.",
        reply.into,
        commit.short()
    );
    if !reply.open_parts.is_empty() {
        text.push_str(&format!(" Still open: {}.", reply.open_parts.join(", ")));
    }
    text.push('\n');
    text.push_str(&super::next_text(&reply.item.next));
    Ok(Reply::new(&reply, text))
}

/// Merges part `id` into its parent's branch and records it: the part after, whether
/// it changed, and the merge commit.
fn merge_once(
    ctx: &Ctx,
    hall: &crate::hall::Hall,
    (id, item): (ItemId, &Item),
    (parent, parent_item): (ItemId, &Item),
    (part_wt, parent_wt): (&Path, &Path),
) -> Result<(Item, bool, Sha)> {
    for (who, wt) in [(id, part_wt), (parent, parent_wt)] {
        if !wt.is_dir() || wt == hall.repo.main_root {
            continue;
        }
        let dirty = git::dirty_paths(wt)?;
        if !dirty.is_empty() {
            return Err(HallError::new(
                Code::DirtyWorktree,
                format!(
                    "{who}'s worktree {} has changes not committed ({}): commit them, or put them away, before the merge",
                    wt.display(),
                    dirty.join(", ")
                ),
            )
            .hint(format!("git -C {} status", wt.display()))
            .hint(format!("hall merge {id}")));
        }
    }
    let sha = git::rev_parse(parent_wt, &item.branch)?;
    let message = format!(
        "Merge part {id} \"{}\" into {parent}\n\nHallmark-Part: {id}",
        item.title
    );
    let commit = if git::is_ancestor(parent_wt, sha.as_str(), "HEAD") {
        // Merged already (by hand, after a conflict): the parent's HEAD holds it.
        git::head(parent_wt)?
    } else {
        match git::merge_no_ff(parent_wt, &item.branch, &message)? {
            Ok(commit) => commit,
            Err(files) => return Err(conflict((id, item), (parent, parent_wt), &files)),
        }
    };
    let applied = hall.change(ctx, id).apply(Action::Merge {
        into: parent_item.branch.clone(),
        sha,
        commit: commit.clone(),
    })?;
    Ok((applied.after.clone(), applied.changed(), commit))
}

/// `MERGE_CONFLICT`: the files, and how to resolve it by hand.
fn conflict(
    (id, item): (ItemId, &Item),
    (parent, parent_wt): (ItemId, &Path),
    files: &[String],
) -> HallError {
    let at = parent_wt.display();
    HallError::new(
        Code::MergeConflict,
        format!(
            "{id} does not merge cleanly into {parent}'s branch: {} conflict. Nothing was \
             merged; both branches are as they were",
            files.join(", ")
        ),
    )
    .hint(format!("git -C {at} merge --no-ff {}", item.branch))
    .hint(format!(
        "git -C {at} add {} && git -C {at} commit --no-edit",
        files.join(" ")
    ))
    .hint(format!("hall merge {id}"))
}
