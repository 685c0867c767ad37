//! `hall new --follow-up <pr>`: an item started from a pull request's feedback (its
//! failing checks, a reviewer's request for changes, the review comments nobody has
//! answered), written into the item's request.
//!
//! Where the item works depends on the PR (decision 0011):
//! - **Open:** the item takes the PR over. It works on the PR's head branch and ships
//!   with `update` onto the same PR. An item still in development on that branch (one
//!   the Delivery office held with `ci_failed`, say) is dropped for it, with its
//!   worktree kept for the new item; an item in the loop is refused, since it is
//!   working on the PR right now.
//! - **Merged or closed:** a new branch from the PR's base, and a new PR when it ships.

use super::new::{Fresh, create, finish};
use super::{Ctx, Hall, Reply};
use crate::cli::NewArgs;
use crate::error::{Code, HallError, Result};
use crate::gh;
use crate::git;
use crate::item::{Action, EventKind, ItemId, Source, State};

pub fn run(ctx: &Ctx, args: &NewArgs, pr: &str) -> Result<Reply> {
    ctx.refuse_fixer("new --follow-up")?;
    let hall = ctx.hall()?;
    let root = &hall.repo.main_root;
    let pr = gh::pull_request_in_full(root, pr.trim()).map_err(|e| {
        HallError::from(e)
            .context(format!("`--follow-up {pr}` can't be read"))
            .hint("gh pr list --state all")
            .hint("hall new --title \"…\"")
    })?;
    let comments = gh::review_comments(root, pr.number);
    let (comments, unread) = match comments {
        Ok(c) => (c, None),
        Err(e) => (Vec::new(), Some(e.to_string())),
    };
    let mut brief = brief(&pr, &comments);
    if let Some(e) = &unread {
        brief.push_str(&format!(
            "\n(The PR's review comments could not be read: {e}. Read them with `gh pr view {} --comments`.)\n",
            pr.number
        ));
    }
    let request = match args.request.as_deref().map(str::trim) {
        Some(r) if !r.is_empty() => format!("{r}\n\n{brief}"),
        _ => brief,
    };
    let title = match args.title.as_deref().map(str::trim) {
        Some(t) if !t.is_empty() => t.to_string(),
        _ => clip_title(&format!("Follow-up to #{}: {}", pr.number, pr.title)),
    };
    let link = EventKind::FollowUpOf { pr: pr.url.clone() };
    let made = if pr.is_open() {
        take_over(ctx, &hall, &pr, &title, &request, link)?
    } else {
        let base = if pr.base_ref_name.is_empty() || !branch_known(&hall, &pr.base_ref_name) {
            hall.config.base.clone()
        } else {
            pr.base_ref_name.clone()
        };
        let fresh = Fresh {
            title: &title,
            request: Some(&request),
            branch: args.branch.as_deref(),
            base: &base,
            source: Source::FollowUp,
            issue: None,
        };
        create(ctx, &hall, &fresh, vec![link])?
    };
    finish(&hall, args, made, Some(&request))
}

/// The feedback on `pr`, as the item's request reads it.
fn brief(pr: &gh::PullRequest, comments: &[gh::ReviewComment]) -> String {
    let state = match pr.state.as_str() {
        "MERGED" => "merged",
        "CLOSED" => "closed without merging",
        _ => "open",
    };
    let mut b = format!(
        "Follow up on PR #{} \"{}\" ({}), {state}.\n",
        pr.number, pr.title, pr.url
    );
    if let gh::Ci::Red { failed, .. } = pr.ci() {
        b.push_str(&format!(
            "\nIts CI fails at {}: {}. Read the logs with `gh pr checks {}`.\n",
            crate::item::sha::short(&pr.head_ref_oid),
            failed.join(", "),
            pr.number
        ));
    }
    let asked: Vec<String> = pr
        .latest_reviews
        .iter()
        .filter(|r| {
            r.state == "CHANGES_REQUESTED" || (r.state == "COMMENTED" && !r.body.trim().is_empty())
        })
        .map(|r| {
            format!(
                "- {} ({}): {}",
                r.author.login,
                r.state.to_lowercase(),
                r.body.trim()
            )
        })
        .collect();
    if !asked.is_empty() {
        b.push_str("\nReviews:\n");
        b.push_str(&asked.join("\n"));
        b.push('\n');
    }
    let answered: Vec<u64> = comments.iter().filter_map(|c| c.in_reply_to_id).collect();
    let open: Vec<String> = comments
        .iter()
        .filter(|c| c.in_reply_to_id.is_none() && !answered.contains(&c.id))
        .map(|c| {
            let at = c.line.map(|l| format!(":{l}")).unwrap_or_default();
            format!(
                "- #{} {}{at} {}: {}",
                c.id,
                c.path,
                c.user.login,
                c.body.trim()
            )
        })
        .collect();
    if !open.is_empty() {
        b.push_str(
            "\nReview comments nobody has answered (answer each with `hall reply <id> --body \"…\"` once your change addresses it):\n",
        );
        b.push_str(&open.join("\n"));
        b.push('\n');
    }
    if asked.is_empty() && open.is_empty() && !matches!(pr.ci(), gh::Ci::Red { .. }) {
        b.push_str("\nNo failing check or unanswered review is on it now; say what to do in the request.\n");
    }
    b
}

fn clip_title(t: &str) -> String {
    let mut out: String = t.chars().take(72).collect();
    if t.chars().count() > 72 {
        out.push('…');
    }
    out
}

/// Whether this clone has `branch`, or origin does (fetched when only origin has it).
fn branch_known(hall: &Hall, branch: &str) -> bool {
    let root = &hall.repo.main_root;
    let remote = format!("refs/remotes/origin/{branch}");
    let here = |root: &std::path::Path| {
        git::branch_exists(root, branch) || git::commit(root, &remote).is_some()
    };
    here(root) || (git::fetch(root, "origin", branch).is_ok() && here(root))
}

/// The follow-up item of an open PR: on its head branch, updating it.
fn take_over(
    ctx: &Ctx,
    hall: &Hall,
    pr: &gh::PullRequest,
    title: &str,
    request: &str,
    link: EventKind,
) -> Result<(ItemId, crate::item::Item)> {
    let head = &pr.head_ref_name;
    let index = hall.index()?;
    let holder = index
        .items(true)?
        .into_iter()
        .filter(|r| r.branch == *head && r.state != State::Dropped)
        .max_by_key(|r| r.id.0);
    if let Some(row) = holder {
        match row.state {
            State::Development => {
                // Dropped first: a crash before the new item is written leaves the PR
                // with no live item, and the same command again finishes the job.
                hall.change(ctx, row.id).apply(Action::Drop {
                    reason: format!("PR #{}'s feedback goes to a follow-up item", pr.number),
                })?;
            }
            State::Closed => {}
            state => {
                return Err(HallError::new(
                    Code::WrongState,
                    format!(
                        "{} is working on PR #{} right now ({state}); a follow-up would race it",
                        row.id, pr.number
                    ),
                )
                .hint(format!("hall status {}", row.id))
                .hint(format!("hall pull-back {}", row.id)));
            }
        }
    }
    let worktree = super::adopt::checkout_pr(hall, head)?;
    let base = if pr.base_ref_name.is_empty() {
        hall.config.base.clone()
    } else {
        pr.base_ref_name.clone()
    };
    hall.journal.create_item(|id| -> Result<_> {
        Ok(vec![
            ctx.event(
                Some(id),
                EventKind::Created {
                    title: title.to_string(),
                    request: Some(request.to_string()),
                    branch: head.clone(),
                    base: base.clone(),
                    worktree: Some(worktree.clone()),
                    source: Source::FollowUp,
                    issue: None,
                    pr: Some(pr.url.clone()).filter(|u| !u.is_empty()),
                },
            ),
            ctx.event(Some(id), link.clone()),
        ])
    })
}
