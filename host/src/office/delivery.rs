//! The Delivery office: it follows each shipped item's PR until the PR merges or closes
//! (`delivered`), and its sweeper then removes the item's worktree.
//!
//! GitHub's API is a budget. One watch of a repository asks for all its open PRs in one
//! paged `gh pr list` (100 a page), whatever the number of items shipped, and asks about
//! a single PR only once it has left that list, to learn whether it merged. A repository
//! with nothing shipped and undelivered costs no call at all. How often a repository is
//! watched is the daemon's to bound (`[delivery] watch_every`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::config::MergeUpdate;
use crate::error::{HallError, Result};
use crate::gh::{self, GhError};
use crate::git;
use crate::hall::{Ctx, Hall};
use crate::item::{Action, EventKind, FollowKind, HoldKind, Item, ItemId, Sha, State};

/// What one watch did.
#[derive(Debug, Default)]
pub struct Watched {
    /// A line for each item whose PR ended.
    pub did: Vec<String>,
    /// gh calls made.
    pub calls: usize,
}

/// Why a watch could not finish: GitHub is the problem, not the items.
#[derive(Debug)]
pub enum WatchError {
    /// GitHub's rate limit is spent: wait before asking again.
    RateLimited(String),
    /// gh failed otherwise (missing, a 502, unreadable JSON).
    Gh(String),
    /// The repository itself could not be read.
    Hall(HallError),
}

impl From<HallError> for WatchError {
    fn from(e: HallError) -> Self {
        WatchError::Hall(e)
    }
}

impl From<GhError> for WatchError {
    fn from(e: GhError) -> Self {
        if e.is_rate_limit() {
            WatchError::RateLimited(e.to_string())
        } else {
            WatchError::Gh(e.to_string())
        }
    }
}

impl std::fmt::Display for WatchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WatchError::RateLimited(m) => write!(f, "GitHub's rate limit is spent: {m}"),
            WatchError::Gh(m) => write!(f, "GitHub could not be asked: {m}"),
            WatchError::Hall(e) => write!(f, "{}", e.message),
        }
    }
}

/// The number at the end of a PR's URL (`…/pull/12`), or the text itself when it is a
/// number.
pub fn pr_number(pr: &str) -> Option<u64> {
    pr.trim_end_matches('/').rsplit('/').next()?.parse().ok()
}

/// What the watch follows: closed items whose PR nobody has seen end yet, and items
/// reopened for red CI (a pass at the same head restores them).
struct Followed {
    id: ItemId,
    url: String,
    number: u64,
    /// Reopened for red CI at this head.
    ci_at: Option<Sha>,
    /// Closed with replies the shipper could not post.
    replies: bool,
    /// The branch the item's change is measured against (a stacked item's is another
    /// PR's branch).
    base: String,
}

fn watched(hall: &Hall) -> Result<Vec<Followed>> {
    let index = hall.index()?;
    let rows = index.items(true)?;
    let mut out = Vec::new();
    for row in &rows {
        let (State::Closed | State::Development, Some(pr)) = (row.state, row.pr.as_deref()) else {
            continue;
        };
        let Some(number) = pr_number(pr) else {
            continue;
        };
        let Some(item) = index.item(row.id)? else {
            continue;
        };
        let follow = match row.state {
            State::Closed => item.delivered.is_none(),
            // Reopened for red CI and waiting on the re-run (or held `ci_failed`, which
            // a passing re-run clears); once a dev run is due, the loop has the item.
            _ => {
                item.ci_reopened_at.is_some()
                    && item.follow.is_none()
                    && item
                        .hold
                        .as_ref()
                        .is_none_or(|h| h.kind == HoldKind::CiFailed)
            }
        };
        if follow {
            out.push(Followed {
                id: row.id,
                url: pr.to_string(),
                number,
                ci_at: item.ci_reopened_at.clone(),
                replies: row.state == State::Closed && item.replies.iter().any(|r| !r.posted),
                base: item.base.clone(),
            });
        }
    }
    Ok(out)
}

/// One watch of the repository: records `delivered` for each shipped PR that merged or
/// closed. An open PR is left as it is.
pub fn watch(hall: &Hall, ctx: &Ctx) -> std::result::Result<Watched, WatchError> {
    let items = watched(hall)?;
    let mut out = Watched::default();
    if items.is_empty() {
        return Ok(out);
    }
    let dir = &hall.repo.main_root;
    let open = gh::open_pull_requests(dir)?;
    out.calls += 1;
    let open: BTreeMap<u64, &gh::PullRequest> = open.iter().map(|p| (p.number, p)).collect();
    let office = ctx.acting_as("delivery");
    // Each base as origin has it now (fetched once a watch), to see which PRs are behind
    // on their own files.
    let mut bases: BTreeMap<String, Option<String>> = BTreeMap::new();
    let mut onto_of = |base: &str| -> Option<String> {
        bases
            .entry(base.to_string())
            .or_insert_with(|| {
                let fetched =
                    git::has_remote(dir, "origin") && git::fetch(dir, "origin", base).is_ok();
                fetched.then(|| format!("origin/{base}"))
            })
            .clone()
    };
    // CI that never started on any followed PR is one entry for the repository, not
    // one per PR: runners or billing are down, and no dev run can fix that.
    let cis: Vec<(u64, gh::Ci)> = items
        .iter()
        .filter_map(|f| open.get(&f.number).map(|pr| (f.number, pr.ci())))
        .collect();
    if let Some(said) = ci_down(hall, &office, &cis)? {
        out.did.push(said);
    }
    for Followed {
        id,
        url,
        number,
        ci_at,
        replies,
        base,
    } in items
    {
        if let Some(pr) = open.get(&number) {
            // GitHub retargets a PR stacked on a branch that merged: its base is the
            // PR's base from here on (decision 0011).
            let base = if pr.base_ref_name.is_empty() || pr.base_ref_name == base {
                base
            } else {
                let to = pr.base_ref_name.clone();
                let applied = hall
                    .change(&office, id)
                    .apply(Action::Restack { base: to.clone() })?;
                if applied.changed() {
                    out.did
                        .push(format!("{id}: PR #{number} targets {to} now, not {base}"));
                }
                to
            };
            if replies {
                let (did, calls) = post_replies(hall, &office, id, &hall.item(id)?)?;
                out.calls += calls;
                out.did.extend(did);
            }
            let did = match &ci_at {
                Some(at) => after_ci_reopen(hall, &office, id, number, at, pr)?,
                None => follow(
                    hall,
                    &office,
                    (id, number),
                    pr,
                    onto_of(&base).as_deref(),
                    &mut out.calls,
                )?,
            };
            out.did.extend(did);
            continue;
        }
        if ci_at.is_some() {
            // Reopened, and its PR closed meanwhile: the loop has the item now.
            continue;
        }
        let n = number.to_string();
        let ended = match gh::pull_request(dir, Some(&n)) {
            Ok(pr) => pr,
            Err(GhError::Failed { stderr, .. }) if stderr.contains("Could not resolve") => {
                // Deleted (or moved where this token can't see it): say so once and stop
                // watching, rather than asking again every pass.
                out.calls += 1;
                let message = format!("{id}'s PR #{number} is gone from GitHub ({stderr})");
                let notice = office.event(
                    Some(id),
                    EventKind::Notification {
                        kind: "pr_gone".into(),
                        message: message.clone(),
                        session: None,
                    },
                );
                // Grounds, not records: written only if the item is still closed.
                hall.change(&office, id)
                    .grounded_on([notice])
                    .apply_with(|item| {
                        (item.state == State::Closed).then(|| Action::Deliver {
                            pr: url.clone(),
                            merged: false,
                        })
                    })?;
                out.did.push(message);
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        out.calls += 1;
        let merged = match ended.state.as_str() {
            "MERGED" => true,
            "CLOSED" => false,
            // Opened again between the two calls: the next watch sees it in the list.
            _ => continue,
        };
        // Reopened (by `adopt`, say) between the index read and now: nothing to deliver.
        let applied = hall.change(&office, id).apply_with(|item| {
            (item.state == State::Closed).then(|| Action::Deliver {
                pr: url.clone(),
                merged,
            })
        })?;
        if applied.changed() {
            out.did.push(format!(
                "{id}: PR #{number} {}",
                if merged {
                    "merged"
                } else {
                    "closed without merging"
                }
            ));
        }
    }
    Ok(out)
}

/// An open PR that needs the item back: a conflict with its base (reopened with a
/// rebase request, so `ready` waits until the branch is on its base, decision 0027), or a
/// reviewer's request for changes at the PR's head (reopened with what they asked).
/// Returns what it did.
fn follow(
    hall: &Hall,
    office: &Ctx,
    (id, number): (ItemId, u64),
    pr: &gh::PullRequest,
    onto: Option<&str>,
    calls: &mut usize,
) -> Result<Option<String>> {
    let behind = match onto {
        Some(onto) if hall.config.merge.update == MergeUpdate::Files => {
            behind_on_files(&hall.repo.main_root, &pr.head_ref_oid, onto)
        }
        _ => Vec::new(),
    };
    // A request for changes counts when it was given at the PR's head: one given at an
    // earlier head was answered by the push that moved it.
    let asked: Vec<String> = pr
        .latest_reviews
        .iter()
        .filter(|r| r.state == "CHANGES_REQUESTED" && r.commit.oid == pr.head_ref_oid)
        .map(|r| format!("{}: {}", r.author.login, r.body.trim()))
        .collect();
    let ci = pr.ci();
    let mut ci_at = None;
    // With the merger on, conflicts and staleness are its to bring up at each PR's turn.
    let merger = hall.config.merge.mode == crate::config::MergeMode::Auto;
    let (reason, follow) = if pr.mergeable == "CONFLICTING" && !merger {
        let reason = format!(
            "PR #{number} conflicts with {}: rebase it onto {0}",
            pr.base_ref_name
        );
        (reason, Some(FollowKind::Conflict))
    } else if !behind.is_empty() && !merger {
        let reason = format!(
            "PR #{number} is behind {} on its own files ({}): rebase it onto {0}",
            pr.base_ref_name,
            behind.join(", ")
        );
        (reason, Some(FollowKind::Conflict))
    } else if let Some(reason) = feedback(hall, (id, number), pr, &asked, calls)? {
        (reason, Some(FollowKind::Feedback))
    } else if let gh::Ci::Red { failed, .. } = &ci {
        ci_at = pr.head();
        // The dev run waits for the re-run: a flaky check needs no model run.
        let reason = format!(
            "PR #{number}: CI failed at {} ({}); its failed jobs are re-run first",
            Sha::new(&*pr.head_ref_oid).short(),
            failed.join(", ")
        );
        (reason, None)
    } else {
        return Ok(None);
    };
    let mut change = hall.change(office, id);
    if follow == Some(FollowKind::Conflict) {
        let base = pr.base_ref_name.clone();
        change = change.grounded_on([office.event(Some(id), EventKind::RebaseRequested { base })]);
    }
    let applied = change.apply_with(|item| {
        (item.state == State::Closed).then(|| Action::Reopen {
            reason: reason.clone(),
            ci_at: ci_at.clone(),
            follow,
        })
    })?;
    if !applied.changed() {
        return Ok(None);
    }
    // Red CI: re-run the failed jobs before anyone spends a run on a fix (a flaky check
    // passes on its own, and the item is restored with no model run, decision 0027). A
    // re-run GitHub refuses is said; the next watch sees the CI as it stands.
    let mut did = format!("{id} reopened: {reason}");
    if let (Some(_), gh::Ci::Red { runs, .. }) = (&ci_at, &ci) {
        for run in runs {
            *calls += 1;
            if let Err(e) = gh::rerun_failed(&hall.repo.main_root, *run) {
                did.push_str(&format!("; the re-run of run {run} failed: {e}"));
            }
        }
    }
    Ok(Some(did))
}

/// Posts the item's drafted replies to its PR's review comments, each once: a reply
/// already on the PR (posted before a crash could record it) is recorded, not posted
/// again. Called by the shipper after an update, and by the watch for any left over.
/// Returns what it did, and the gh calls made.
pub fn post_replies(
    hall: &Hall,
    ctx: &Ctx,
    id: ItemId,
    item: &Item,
) -> Result<(Vec<String>, usize)> {
    let pending: Vec<&crate::item::Reply> = item.replies.iter().filter(|r| !r.posted).collect();
    let (Some(number), false) = (item.pr.as_deref().and_then(pr_number), pending.is_empty()) else {
        return Ok((Vec::new(), 0));
    };
    let dir = &hall.repo.main_root;
    let mut calls = 1;
    let on_pr = gh::review_comments(dir, number)?;
    let mut did = Vec::new();
    for r in pending {
        let there = on_pr
            .iter()
            .any(|c| c.in_reply_to_id == Some(r.comment) && c.body.trim() == r.body.trim());
        if !there {
            calls += 1;
            if let Err(e) = gh::reply_to_comment(dir, number, r.comment, &r.body) {
                did.push(format!(
                    "{id}: the reply to #{} could not be posted: {e}",
                    r.comment
                ));
                continue;
            }
        }
        hall.change(ctx, id)
            .apply(Action::PostReply { comment: r.comment })?;
        did.push(format!("{id}: replied to #{} on PR #{number}", r.comment));
    }
    Ok((did, calls))
}

/// Records `ci_down` (an inbox entry for the repository) when CI never started on any
/// of the followed PRs and none ran, and `ci_up` once one runs again; each once, by the
/// repository's journal. Returns what it said.
fn ci_down(hall: &Hall, office: &Ctx, cis: &[(u64, gh::Ci)]) -> Result<Option<String>> {
    let never: Vec<String> = cis
        .iter()
        .filter(|(_, ci)| matches!(ci, gh::Ci::NeverStarted(_)))
        .map(|(n, _)| format!("#{n}"))
        .collect();
    let ran = cis
        .iter()
        .any(|(_, ci)| matches!(ci, gh::Ci::Green | gh::Ci::Red { .. } | gh::Ci::Pending));
    let (kind, message) = if !never.is_empty() && !ran {
        let message = format!(
            "CI never started on PR {}: no runner picked its jobs up (runners offline, or Actions billing)",
            never.join(", ")
        );
        ("ci_down", message)
    } else if ran {
        ("ci_up", "CI runs again".to_string())
    } else {
        return Ok(None);
    };
    let said = say_once(hall, office, (kind, &message), |events| {
        let last = events.iter().rev().find_map(|e| match &e.kind {
            EventKind::Notification { kind, .. } if kind == "ci_down" || kind == "ci_up" => {
                Some(kind.as_str())
            }
            _ => None,
        });
        // Down is said once; up only after a down.
        match kind {
            "ci_down" => last != Some("ci_down"),
            _ => last == Some("ci_down"),
        }
    })?;
    Ok(said.then_some(message))
}

/// Writes a notification of the repository's own (no item) when `due` says so, judged
/// from the repository journal's events under its lock, so two daemons say it once.
/// Returns whether it was written.
pub(super) fn say_once(
    hall: &Hall,
    office: &Ctx,
    (kind, message): (&str, &str),
    due: impl FnOnce(&[crate::item::Event]) -> bool,
) -> Result<bool> {
    let written = hall.journal.append_checked(None, |events| {
        Ok::<_, HallError>(if due(events) {
            vec![office.event(
                None,
                EventKind::Notification {
                    kind: kind.into(),
                    message: message.to_string(),
                    session: None,
                },
            )]
        } else {
            Vec::new()
        })
    })?;
    Ok(!written.is_empty())
}

/// What reviewers asked on the PR at its head, when anything is unanswered: a request
/// for changes, and the review comments nobody has replied to (each with the id the dev
/// run's `hall reply` names). The comments cost one call, made only for a PR with a
/// review at its head.
fn feedback(
    hall: &Hall,
    (id, number): (ItemId, u64),
    pr: &gh::PullRequest,
    asked: &[String],
    calls: &mut usize,
) -> Result<Option<String>> {
    let requested = pr.review_decision == "CHANGES_REQUESTED" && !asked.is_empty();
    let commented = pr
        .latest_reviews
        .iter()
        .any(|r| r.state == "COMMENTED" && r.commit.oid == pr.head_ref_oid);
    if !requested && !commented {
        return Ok(None);
    }
    *calls += 1;
    let all = gh::review_comments(&hall.repo.main_root, number)?;
    let drafted: Vec<u64> = hall.item(id)?.replies.iter().map(|r| r.comment).collect();
    let answered: Vec<u64> = all.iter().filter_map(|c| c.in_reply_to_id).collect();
    let open: Vec<&gh::ReviewComment> = all
        .iter()
        .filter(|c| {
            c.in_reply_to_id.is_none() && !answered.contains(&c.id) && !drafted.contains(&c.id)
        })
        .collect();
    // What a reviewer wrote in the body of a review that only comments, at this head: the
    // update that answers it moves the head, so it counts once.
    let said: Vec<String> = pr
        .latest_reviews
        .iter()
        .filter(|r| {
            r.state == "COMMENTED" && r.commit.oid == pr.head_ref_oid && !r.body.trim().is_empty()
        })
        .map(|r| format!("{}: {}", r.author.login, r.body.trim()))
        .collect();
    if !requested && open.is_empty() && said.is_empty() {
        return Ok(None);
    }
    let mut reason = if requested {
        format!("PR #{number}: changes requested ({})", asked.join("; "))
    } else {
        format!("PR #{number}: new review comments")
    };
    if !said.is_empty() {
        reason.push_str(&format!(
            "\n\nIn the reviews' own words (answered by the update; no `hall reply` for these): {}",
            said.join("; ")
        ));
    }
    if !open.is_empty() {
        reason.push_str(
            "\n\nReview comments to answer, each with `hall reply <id> --body \"…\"` once your commit addresses it (or says why not):",
        );
        for c in open {
            let at = c.line.map(|l| format!(":{l}")).unwrap_or_default();
            reason.push_str(&format!(
                "\n- #{} {}{at} {}: {}",
                c.id,
                c.path,
                c.user.login,
                c.body.trim()
            ));
        }
    }
    Ok(Some(reason))
}

/// The files the PR at `head` changes that its base (`onto`) has changed too since
/// they parted (`[merge] update = "files"`). Empty when git can't tell (a head this
/// clone doesn't have): the conflict check still stands.
fn behind_on_files(dir: &Path, head: &str, onto: &str) -> Vec<String> {
    let Ok(fork) = git::merge_base(dir, onto, head) else {
        return Vec::new();
    };
    let (Ok(ours), Ok(theirs)) = (
        git::files_between(dir, fork.as_str(), head),
        git::files_between(dir, fork.as_str(), onto),
    ) else {
        return Vec::new();
    };
    ours.into_iter().filter(|f| theirs.contains(f)).collect()
}

/// An item reopened for red CI at `at`, while its PR head is still `at`: a pass there
/// restores it with no model run (decision 0027); a failure after the re-run holds it
/// (`ci_failed`) for a fix. Once the head moves, the loop has it.
fn after_ci_reopen(
    hall: &Hall,
    office: &Ctx,
    id: ItemId,
    number: u64,
    at: &Sha,
    pr: &gh::PullRequest,
) -> Result<Option<String>> {
    if pr.head().as_ref() != Some(at) {
        return Ok(None);
    }
    let (action, did) = match pr.ci() {
        gh::Ci::Green => (
            Action::Restore,
            format!("{id} restored: PR #{number}'s CI passed on a re-run with nothing moved"),
        ),
        // Held already: only a pass changes anything.
        gh::Ci::Red { .. } if hall.item(id)?.hold.is_some() => return Ok(None),
        gh::Ci::Red { failed, .. } => {
            let reason = format!(
                "PR #{number}'s CI still fails at {} after a re-run of its failed jobs: {}",
                at.short(),
                failed.join(", ")
            );
            // One dev run tries a fix; CI red again after it is a person's (decision 0027).
            if hall.item(id)?.ci_fixes == 0 {
                let did = format!("{id}: a dev run is due: {reason}");
                let action = Action::FollowThrough {
                    kind: FollowKind::Ci,
                    brief: reason,
                };
                (action, did)
            } else {
                let reason = format!("{reason}, and a dev run's fix did not make it pass");
                let did = format!("{id} held: {reason}");
                let action = Action::Hold {
                    kind: HoldKind::CiFailed,
                    reason,
                    next: vec![
                        format!("gh pr checks {number}"),
                        format!("hall new --follow-up {number}"),
                        format!("hall retry {id}"),
                    ],
                };
                (action, did)
            }
        }
        _ => return Ok(None),
    };
    let applied = hall.change(office, id).apply_with(|item| {
        (item.state == State::Development && item.ci_reopened_at.as_ref() == Some(at))
            .then(|| action.clone())
    })?;
    Ok(applied.changed().then_some(did))
}

/// What one sweep did: worktrees removed, and those kept with the reason (the daemon
/// says each reason once).
#[derive(Debug, Default)]
pub struct Swept {
    pub removed: Vec<String>,
    pub kept: Vec<(ItemId, String)>,
}

/// Whether an item is done with its worktree: closed and either delivered or shipped
/// with no PR to watch.
fn done_with_worktree(item: &Item) -> bool {
    item.state == State::Closed
        && !item.worktree_removed
        && item.worktree.is_some()
        && (item.delivered.is_some() || item.pr.is_none())
}

fn same_path(a: &Path, b: &Path) -> bool {
    let canon = |p: &Path| crate::platform::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    canon(a) == canon(b)
}

/// Removes the worktree of each item that is done with it, with `git worktree remove`
/// (never `--force`: a dirty worktree stays). Never the main checkout, a worktree now on
/// another branch, or a path a live item still uses.
pub fn sweep(hall: &Hall, ctx: &Ctx) -> Result<Swept> {
    let index = hall.index()?;
    let rows = index.items(true)?;
    let mut done = Vec::new();
    let mut live: Vec<PathBuf> = Vec::new();
    let mut finished: Vec<ItemId> = Vec::new();
    for row in &rows {
        if !row.state.is_terminal() {
            live.extend(row.worktree.as_deref().map(PathBuf::from));
            continue;
        }
        finished.push(row.id);
        if row.state != State::Closed || row.worktree.is_none() {
            continue;
        }
        if let Some(item) = index.item(row.id)?
            && done_with_worktree(&item)
        {
            done.push(item);
        }
    }
    let mut out = Swept::default();
    // The loop's own checkouts of closed and dropped items go first: no one's work is
    // in them.
    let (removed, kept) = crate::hall::worktree::sweep_loop_checkouts(hall, &finished);
    out.removed.extend(removed);
    out.kept.extend(kept);
    if done.is_empty() {
        return Ok(out);
    }
    let main = &hall.repo.main_root;
    let worktrees = git::worktrees(main)?;
    let sweeper = ctx.acting_as("sweeper");
    for item in done {
        let Some(id) = item.id else { continue };
        let path = PathBuf::from(item.worktree.as_deref().unwrap_or_default());
        let mut keep = |why: String| out.kept.push((id, why));
        if same_path(&path, main) {
            keep(format!("{id}'s worktree is the main checkout; it stays"));
            continue;
        }
        if live.iter().any(|p| same_path(p, &path)) {
            keep(format!(
                "{id}'s worktree {} is used by a live item; it stays",
                path.display()
            ));
            continue;
        }
        let registered = worktrees.iter().find(|w| same_path(&w.path, &path));
        match registered {
            None if path.exists() => {
                keep(format!(
                    "{} is not a worktree of this repository any more; it stays",
                    path.display()
                ));
                continue;
            }
            None => {}
            Some(w) if w.branch.as_deref() != Some(item.branch.as_str()) => {
                keep(format!(
                    "{id}'s worktree {} is on {} now, not {}; it stays",
                    path.display(),
                    w.branch.as_deref().unwrap_or("a detached HEAD"),
                    item.branch
                ));
                continue;
            }
            Some(_) => {
                if let Err(e) = git::worktree_remove(main, &path) {
                    keep(format!(
                        "{id}'s worktree {} has changes of its own, so it stays: {e}",
                        path.display()
                    ));
                    continue;
                }
            }
        }
        let shown = path.display().to_string();
        hall.change(&sweeper, id).apply(Action::RemoveWorktree {
            path: shown.clone(),
        })?;
        out.removed
            .push(format!("{id}: removed its worktree {shown}"));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::pr_number;

    #[test]
    fn a_pr_number_comes_from_its_url_or_is_the_number() {
        assert_eq!(pr_number("https://github.com/o/r/pull/12"), Some(12));
        assert_eq!(pr_number("http://github.localhost/o/r/pull/7/"), Some(7));
        assert_eq!(pr_number("31"), Some(31));
        assert_eq!(pr_number("https://github.com/o/r/pull/x"), None);
    }
}
