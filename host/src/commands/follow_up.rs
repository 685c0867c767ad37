//! `hall new --follow-up <pr>`: an item started from a pull request's feedback (its
//! failing checks, a reviewer's request for changes, the review comments nobody has
//! answered), written into the item's request.
//!
//! The item is new work on a new branch cut from the PR's base (the configured base when
//! that branch is gone), and a new PR when it ships; its journal links the PR and the
//! item that shipped it (decision 0011). The earlier item is left as it is: a
//! `ci_failed` hold on it clears by itself once a re-run of its PR's checks passes,
//! which is what a follow-up that fixes the cause brings about.

use super::new::{Fresh, create, finish};
use super::{Ctx, Hall, Reply};
use crate::cli::NewArgs;
use crate::error::{HallError, Result};
use crate::gh;
use crate::git;
use crate::item::{EventKind, ItemId, Source};

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
    // Whether a thread is resolved only GraphQL knows; without it, a thread nobody
    // answered stands for one nobody resolved.
    let threads = gh::review_threads(root, pr.number);
    let mut brief = brief(&pr, &comments, threads.as_deref().ok());
    if let (Err(e), None) = (&threads, &unread) {
        brief.push_str(&format!(
            "\n(Whether its review threads are resolved could not be read: {e}. Comments nobody answered are listed instead.)\n"
        ));
    }
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
    let earlier = shipped_by(&hall, &pr.url)?;
    let link = EventKind::FollowUpOf {
        pr: pr.url.clone(),
        earlier,
    };
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
    let made = create(ctx, &hall, &fresh, vec![link])?;
    finish(&hall, args, made, Some(&request))
}

/// The feedback on `pr`, as the item's request reads it.
fn brief(
    pr: &gh::PullRequest,
    comments: &[gh::ReviewComment],
    threads: Option<&[gh::ReviewThread]>,
) -> String {
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
    let open = open_threads(comments, threads);
    if !open.is_empty() {
        let what = if threads.is_some() {
            "Review threads nobody has resolved"
        } else {
            "Review comments nobody has answered"
        };
        b.push_str(&format!(
            "\n{what} (answer each with `hall reply <id> --body \"…\"` once your change addresses it):\n"
        ));
        b.push_str(&open.join("\n"));
        b.push('\n');
    }
    if asked.is_empty() && open.is_empty() && !matches!(pr.ci(), gh::Ci::Red { .. }) {
        b.push_str(
            "\nNo failing check or open review is on it now; say what to do in the request.\n",
        );
    }
    b
}

/// The review threads still open, one entry each: its first comment, then its
/// replies indented. With `threads`, open means not resolved; without, not answered.
fn open_threads(
    comments: &[gh::ReviewComment],
    threads: Option<&[gh::ReviewThread]>,
) -> Vec<String> {
    let resolved = |id: u64| {
        threads.is_some_and(|ts| ts.iter().any(|t| t.resolved && t.comments.contains(&id)))
    };
    let replies = |id: u64| {
        comments
            .iter()
            .filter(move |c| c.in_reply_to_id == Some(id))
    };
    comments
        .iter()
        .filter(|c| c.in_reply_to_id.is_none() && !resolved(c.id))
        .filter(|c| threads.is_some() || replies(c.id).next().is_none())
        .map(|c| {
            let at = c.line.map(|l| format!(":{l}")).unwrap_or_default();
            let mut entry = format!(
                "- #{} {}{at} {}: {}",
                c.id,
                c.path,
                c.user.login,
                c.body.trim()
            );
            for r in replies(c.id) {
                entry.push_str(&format!("\n  - {}: {}", r.user.login, r.body.trim()));
            }
            entry
        })
        .collect()
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

/// The newest item that shipped the PR at `url`, if Hallmark shipped it.
fn shipped_by(hall: &Hall, url: &str) -> Result<Option<ItemId>> {
    Ok(hall
        .index()?
        .items(true)?
        .into_iter()
        .filter(|r| r.pr.as_deref() == Some(url))
        .map(|r| r.id)
        .max_by_key(|id| id.0))
}
