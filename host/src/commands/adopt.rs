//! `hall adopt`: the current branch and worktree, or an open PR, become an item. On the
//! branch of a shipped item whose PR is still open, the item is reopened instead.

use serde::Serialize;

use super::{Ctx, Hall, Placed, Reply, next_for, next_text};
use crate::cli::AdoptArgs;
use crate::error::{Code, HallError, Result};
use crate::git;
use crate::item::{Action, EventKind, ItemId, Source, State};

#[derive(Serialize, schemars::JsonSchema)]
pub struct AdoptReply {
    #[serde(flatten)]
    pub placed: Placed,
    /// `created`, `reopened` or `existing`.
    pub outcome: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pr: Option<String>,
    pub next: Vec<String>,
}

/// An open PR, read with gh, in this command's terms.
fn gh_pr(hall: &Hall, pr: &str) -> Result<crate::gh::PullRequest> {
    crate::gh::pull_request(&hall.repo.main_root, Some(pr))
        .map_err(|e| HallError::from(e).context(format!("reading PR {pr}")))
}

pub fn run(ctx: &Ctx, args: &AdoptArgs) -> Result<Reply> {
    let hall = ctx.hall()?;
    let mut base = args
        .base
        .clone()
        .unwrap_or_else(|| hall.config.base.clone());
    let (branch, worktree, title, pr) = match args.pr {
        Some(n) => {
            let pr = gh_pr(&hall, &n.to_string())?;
            // A PR already targets a base: the item is measured against it (stacked
            // when it isn't the configured base), unless `--base` says otherwise.
            if args.base.is_none() && !pr.base_ref_name.is_empty() {
                base = pr.base_ref_name.clone();
            }
            let wt = checkout_pr(&hall, &pr.head_ref_name)?;
            (
                pr.head_ref_name,
                wt,
                args.title.clone().unwrap_or(pr.title),
                Some(pr.url).filter(|u| !u.is_empty()),
            )
        }
        None => {
            let top = hall.repo.toplevel.clone();
            let branch = git::current_branch(&top).ok_or_else(|| {
                HallError::new(
                    Code::WrongState,
                    "HEAD is detached; adopt works on a branch",
                )
                .hint("git switch -c <branch>")
                .hint("hall new --title \"…\"")
            })?;
            if branch == hall.config.base || branch == base {
                return Err(HallError::new(
                    Code::WrongState,
                    format!(
                        "you are on the base branch {branch}; an item needs a branch of its own"
                    ),
                )
                .hint("hall new --title \"…\"")
                .hint("git switch -c <branch> && hall adopt"));
            }
            let title = args.title.clone().unwrap_or_else(|| branch.clone());
            (branch, top.display().to_string(), title, None)
        }
    };

    stack_base(&hall, &branch, &base)?;
    let index = hall.index()?;
    if let Some(id) = index.item_for_place(&worktree, Some(&branch))? {
        let mut item = hall.item(id)?;
        // `--base` on an item that exists moves its base (stacks or unstacks it).
        if args.base.is_some() && item.state != State::Dropped {
            item = hall
                .change(ctx, id)
                .apply(Action::Restack { base: base.clone() })?
                .after;
        }
        match item.state {
            State::Dropped => {}
            State::Closed => {
                let open = match &item.pr {
                    Some(url) => gh_pr(&hall, url)?.is_open(),
                    None => false,
                };
                if !open {
                    return Err(HallError::new(
                        Code::WrongState,
                        format!("{id} is closed and its PR is not open; later work is a new item"),
                    )
                    .hint("hall new --title \"…\""));
                }
                let applied = hall.change(ctx, id).apply(Action::Reopen {
                    reason: "adopted again while its PR is open".into(),
                    ci_at: None,
                    follow: None,
                })?;
                return Ok(reply(id, &applied.after, "reopened"));
            }
            _ => return Ok(reply(id, &item, "existing")),
        }
    }
    let (id, item) = hall.journal.create_item(|id| -> Result<_> {
        Ok(vec![ctx.event(
            Some(id),
            EventKind::Created {
                title: title.clone(),
                request: None,
                branch: branch.clone(),
                base: base.clone(),
                worktree: Some(worktree.clone()),
                source: Source::Adopt,
                issue: None,
                pr: pr.clone(),
            },
        )])
    })?;
    Ok(reply(id, &item, "created"))
}

fn reply(id: ItemId, item: &crate::item::Item, outcome: &str) -> Reply {
    let r = AdoptReply {
        placed: Placed::of(id, item),
        outcome: outcome.to_string(),
        pr: item.pr.clone(),
        next: next_for(item),
    };
    let text = format!(
        "{id} \"{}\" ({outcome}) is {} on {}.\n{}",
        r.placed.title,
        r.placed.state,
        r.placed.branch,
        next_text(&r.next)
    );
    Reply::new(&r, text)
}

/// Checks that `base` is a branch the item can be measured against: not its own
/// branch, and one this clone has (fetched from origin when only origin has it).
fn stack_base(hall: &Hall, branch: &str, base: &str) -> Result<()> {
    if base == branch {
        return Err(HallError::usage(format!(
            "an item can't be stacked on its own branch {branch}"
        ))
        .hint(format!("hall adopt --base {}", hall.config.base)));
    }
    if base == hall.config.base {
        return Ok(());
    }
    let root = &hall.repo.main_root;
    let remote = format!("refs/remotes/origin/{base}");
    let known = |root: &std::path::Path| {
        git::branch_exists(root, base) || git::commit(root, &remote).is_some()
    };
    if known(root)
        || (git::has_remote(root, "origin")
            && git::fetch(root, "origin", base).is_ok()
            && known(root))
    {
        return Ok(());
    }
    Err(HallError::usage(format!(
        "there is no branch {base} here or on origin to stack the item on"
    ))
    .hint("git branch --all")
    .hint(format!("hall adopt --base {}", hall.config.base)))
}

/// Fetches a PR's branch and gives it a worktree next to the main checkout.
fn checkout_pr(hall: &Hall, head: &str) -> Result<String> {
    if let Some(w) = git::worktrees(&hall.repo.main_root)?
        .into_iter()
        .find(|w| w.branch.as_deref() == Some(head))
    {
        return Ok(w.path.display().to_string());
    }
    let root = &hall.repo.main_root;
    if !git::branch_exists(root, head) {
        git::fetch(root, "origin", &format!("{head}:{head}"))?;
    }
    let dir = root.parent().unwrap_or(root).join(format!(
        "{}-{}",
        hall.repo.name(),
        crate::template::slug(head)
    ));
    git::worktree_add(root, &dir, head)?;
    Ok(dir.display().to_string())
}
