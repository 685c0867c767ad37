//! The Stamping Office and the Dispatch Dock: a hallmarked item is rebased onto the latest
//! base, shipped with the `ship` template, its review posted with `review_comment`, and
//! closed.
//!
//! A rebase that leaves the patch as approved (same `git patch-id`) carries the approval
//! to the new commit: the shipper verifies the original hallmark's signature, then signs
//! a statement for the new commit that names the approved one (`rebased {carried:
//! true}`, a signed hallmark on the new SHA). A rebase that conflicts, or changes the
//! patch, returns the item to development, so nothing unreviewed ships. When the base it
//! lands on gates differently from the rules its checks ran under (`rules_used`: a new
//! check, another `setup`), that base's checks run first on the commit to ship; red
//! sends the item to the fixer like any failed check (decision 0026).
//!
//! The hallmark is verified before anything moves (and the carried one right after it
//! is signed); then `refs/notes/hallmark` is pushed to origin (merged with origin's
//! first, never forced) before the ship command runs, so the CI check that verifies the
//! pull request finds the note when the PR opens.

use std::path::Path;

use super::Step;
use crate::error::{Code, HallError, IoContext, Result};
use crate::git;
use crate::hall::hallmark::{self, Trust};
use crate::hall::{Ctx, Hall};
use crate::item::{Action, EventKind, HoldKind, Item, ItemId, Sha, State};

/// The base the item ships onto: origin's copy, freshly fetched, when there is one.
fn latest_base(wt: &Path, base: &str) -> String {
    let remote = format!("refs/remotes/origin/{base}");
    if git::has_remote(wt, "origin")
        && git::fetch(wt, "origin", base).is_ok()
        && git::commit(wt, &remote).is_some()
    {
        return format!("origin/{base}");
    }
    base.to_string()
}

fn pull_back(hall: &Hall, ctx: &Ctx, id: ItemId, reason: String) -> Result<Step> {
    let applied = hall.change(ctx, id).apply(Action::RebaseFailed {
        reason: reason.clone(),
    })?;
    Ok(Step {
        did: reason,
        after: applied.after,
    })
}

fn hold(hall: &Hall, ctx: &Ctx, id: ItemId, reason: String) -> Result<Step> {
    super::held(hall, ctx, id, HoldKind::ShipFailed, reason)
}

/// An item whose PR (adopted, or reopened) merged on GitHub before the update: with the
/// hallmarked commit in the base, the item closes with nothing pushed and is delivered;
/// without it, nothing can carry the work there, and a person decides. `None` when the
/// PR is open, or GitHub can't say (the update then goes as usual).
fn already_merged(
    hall: &Hall,
    ctx: &Ctx,
    id: ItemId,
    item: &Item,
    (wt, base, sha): (&Path, &str, &Sha),
) -> Result<Option<Step>> {
    let (Some(url), None) = (&item.pr, &item.delivered) else {
        return Ok(None);
    };
    let Some(number) = super::delivery::pr_number(url) else {
        return Ok(None);
    };
    let Ok(pr) = crate::gh::pull_request(&hall.repo.main_root, Some(&number.to_string())) else {
        return Ok(None);
    };
    if pr.state != "MERGED" {
        return Ok(None);
    }
    if !git::is_ancestor(wt, sha.as_str(), base) {
        return hold(
            hall,
            ctx,
            id,
            format!(
                "PR #{number} merged without {}, so there is nothing to update; the work needs a PR of its own (`hall pull-back {id}`, then a new item)",
                sha.short()
            ),
        )
        .map(Some);
    }
    hall.change(ctx, id).apply(Action::Shipped { pr: None })?;
    let applied = hall.change(ctx, id).apply(Action::Deliver {
        pr: url.clone(),
        merged: true,
    })?;
    Ok(Some(Step {
        did: format!(
            "PR #{number} already merged with {} in it; closed with nothing pushed",
            sha.short()
        ),
        after: applied.after,
    }))
}

/// The PR body and the review comment, from the journal.
fn review_text(id: ItemId, item: &Item, events: &[crate::item::Event]) -> (String, String) {
    let mut body = format!(
        "{}\n\n",
        item.summary.clone().unwrap_or_else(|| item.title.clone())
    );
    // An item started from an issue closes it when the PR merges.
    if let Some(n) = item.issue {
        body.push_str(&format!("Closes #{n}\n\n"));
    }
    let mut review = format!("## Hallmark review of {id}\n\n");
    for e in events {
        if let EventKind::Verdict {
            round,
            approved,
            findings,
            summary,
            by,
            model,
            ..
        } = &e.kind
        {
            review.push_str(&format!(
                "**Round {round}: {}**{}{}\n\n",
                if *approved {
                    "approved"
                } else {
                    "changes requested"
                },
                match by.as_deref() {
                    Some("you") => " (a person's override)",
                    Some("carried") => " (carried across a rebase)",
                    _ => "",
                },
                model
                    .as_ref()
                    .map(|m| format!(" by {m}"))
                    .unwrap_or_default()
            ));
            if let Some(s) = summary {
                review.push_str(&format!("{s}\n\n"));
            }
            for f in findings {
                review.push_str(&format!(
                    "- {} {} ({}) `{}`: {}\n",
                    f.id,
                    f.severity,
                    f.lens,
                    f.location(),
                    f.scenario
                ));
            }
            review.push('\n');
        }
    }
    body.push_str(&format!(
        "Hallmarked by Hallmark: {id}, round {}, commit {}.\n",
        item.round,
        item.hallmark.as_ref().map(Sha::as_str).unwrap_or("")
    ));
    (body, review)
}

/// Why a hallmark that doesn't verify stops the ship, with the fix when there is one.
fn not_shippable(hall: &Hall, why: &hallmark::NotHallmarked) -> String {
    let mut reason = format!("{why}; nothing was shipped");
    if let hallmark::NotHallmarked::UnknownSigner { .. } = why {
        reason.push_str(&format!(
            " (to trust this key, run `hall init --signers` and commit {} on {})",
            hallmark::SIGNERS_FILE,
            hall.config.base
        ));
    }
    reason
}

/// The rules of the base the item lands on, and the commit they were read from. An
/// item on the configured base lands on `base` itself (origin's copy, just fetched),
/// whose committed `.hallmark.toml` is read as the rules are (every object re-hashed);
/// a stacked item's base is another branch, which an agent can write, so its rules are
/// the configured base's, as everywhere else (decision 0011).
fn landing_rules(hall: &Hall, item: &Item, wt: &Path, base: &str) -> Result<(Hall, Sha)> {
    let mut landing = hall.clone();
    if item.base != hall.config.base {
        let rules = crate::hall::rules::rules(&hall.repo)?;
        landing.config = rules.config;
        let at = rules.tip.map(|t| Sha::new(t.sha)).unwrap_or_default();
        return Ok((landing, at));
    }
    let at = git::rev_parse(wt, base)?;
    let shown = format!("{} ({base})", at.short());
    landing.config = crate::hall::rules::config_at(&hall.repo, at.as_str(), &shown)?;
    landing.config.base = hall.config.base.clone();
    Ok((landing, at))
}

/// For an item whose checks ran before `rules_used` was recorded: the gating of the
/// rules at the commit its approved change was measured from on the configured base
/// (where it forked), the best word there is on what its checks ran under. `None` for a
/// stacked item (its fork is on a branch an agent can write) or when it can't be read,
/// and then the checks run again.
fn legacy_gating(hall: &Hall, item: &Item, wt: &Path, base: &str) -> Option<String> {
    if item.base != hall.config.base {
        return None;
    }
    let approved = item.hallmark.as_ref().or(item.sha.as_ref())?;
    let fork = git::merge_base(wt, base, approved.as_str()).ok()?;
    let shown = format!("{} (where {} forked)", fork.short(), approved.short());
    let config = crate::hall::rules::config_at(&hall.repo, fork.as_str(), &shown).ok()?;
    Some(super::checks::gating(&config))
}

/// Runs the checks of the base the item lands on at `candidate` (the rebased commit, or
/// the hallmarked one) when that base's rules gate differently from those its checks
/// ran under, before any approval is carried or shipped there. `None` when they gate
/// alike or the checks pass (their runs are recorded); else the step that sent the item
/// back: red checks go to the fixer like any failed check, and checks that could not
/// run (a missing tool, a failed setup) return it to development with the reason.
fn gate_on_landing(
    hall: &Hall,
    ctx: &Ctx,
    id: ItemId,
    (item, events): (&Item, &[crate::item::Event]),
    wt: &Path,
    base: &str,
    candidate: &Sha,
) -> Result<Option<Step>> {
    let (landing, at) = match landing_rules(hall, item, wt, base) {
        Ok(l) => l,
        Err(e) => {
            let reason = format!(
                "the rules of {base} can't be read, so nothing ships onto it: {}; next: `{}`",
                e.message,
                e.next.join("`, `")
            );
            return hold(hall, ctx, id, reason).map(Some);
        }
    };
    let gating = super::checks::gating(&landing.config);
    let recorded = super::checks::gated_by(events).or_else(|| legacy_gating(hall, item, wt, base));
    if recorded.as_deref() == Some(gating.as_str()) {
        return Ok(None);
    }
    let bench = super::checks::bench(&landing, ctx, id, candidate, at.clone())?;
    let onto = format!("{base} ({})", at.short());
    let cannot = bench.hold(id, &landing.config).map(|(why, _)| why);
    if let Some(why) = cannot {
        let reason = format!(
            "the checks of {onto}, which gate differently from those {} was checked by, could not run at {}: {why}",
            item.sha.as_ref().map(Sha::short).unwrap_or(""),
            candidate.short()
        );
        let applied =
            hall.change(ctx, id)
                .grounded_on(bench.events)
                .apply(Action::RebaseFailed {
                    reason: reason.clone(),
                })?;
        return Ok(Some(Step {
            did: reason,
            after: applied.after,
        }));
    }
    if !bench.failed.is_empty() {
        let applied =
            hall.change(ctx, id)
                .grounded_on(bench.events)
                .apply(Action::ChecksFailed {
                    sha: candidate.clone(),
                    failed: bench.failed.clone(),
                    max_check_failures: landing.config.max_check_failures,
                })?;
        return Ok(Some(Step {
            did: format!(
                "the checks of {onto} failed at {}: {}; back to the fixer, nothing shipped",
                candidate.short(),
                bench.failed.join(", ")
            ),
            after: applied.after,
        }));
    }
    hall.journal.append_item(id, &bench.events)?;
    Ok(None)
}

/// Ships one hallmarked item.
pub fn run(hall: &Hall, ctx: &Ctx, id: ItemId, item: &Item) -> Result<Step> {
    match hallmark::ensure_note(hall, id, item) {
        Ok(_) => {}
        Err(e) if e.code == Code::NotHallmarked => {
            let reason = format!("{}; next: `{}`", e.message, e.next.join("`, `"));
            return hold(hall, ctx, id, reason);
        }
        Err(e) => return Err(e),
    }
    let sha = item
        .hallmark
        .clone()
        .ok_or_else(|| HallError::internal("a hallmarked item has no hallmark"))?;
    let wt = hall.worktree_of(item);
    if !wt.is_dir() {
        return hold(
            hall,
            ctx,
            id,
            format!("the worktree {} is gone", wt.display()),
        );
    }
    let head = git::head(&wt)?;
    if head != sha {
        return pull_back(
            hall,
            ctx,
            id,
            format!(
                "the branch moved to {} after the hallmark on {}",
                head.short(),
                sha.short()
            ),
        );
    }
    // Only a real hallmark ships or carries: it is checked before anything moves.
    let trust = Trust::for_repo(&hall.repo.main_root, &hall.config.base);
    let mut verified = match hallmark::verify_commit(&wt, &sha, &trust, Some(&hall.journal)) {
        Ok(v) => v,
        Err(why) => return hold(hall, ctx, id, not_shippable(hall, &why)),
    };
    // A stacked item is rebased onto, and its PR opened against, its own base.
    let base = latest_base(&wt, &item.base);
    if let Some(step) = already_merged(hall, ctx, id, item, (&wt, &base, &sha))? {
        return Ok(step);
    }
    let mut item = item.clone();
    if !git::is_ancestor(&wt, &base, &sha) {
        // The carried approval is signed anew, so the key must be at hand before the
        // branch is rebased.
        let signer = match hallmark::signer(hall) {
            Ok(s) => s,
            Err(reason) => return hold(hall, ctx, id, reason),
        };
        let old_base = git::merge_base(&wt, &base, &sha)?;
        if !git::rebase(&wt, &base)? {
            return pull_back(hall, ctx, id, format!("the rebase onto {base} conflicts"));
        }
        let new = git::head(&wt)?;
        let before = git::patch_id(&wt, &old_base, &sha);
        let after = git::patch_id(&wt, &base, &new);
        if before.is_none() || before != after {
            return pull_back(
                hall,
                ctx,
                id,
                format!("the rebase onto {base} changed the patch; it needs another review"),
            );
        }
        // The base it now sits on may gate differently from the rules its checks ran
        // under: its checks run on the rebased commit before the approval moves there.
        let events = hall.events(id)?;
        if let Some(step) = gate_on_landing(hall, ctx, id, (&item, &events), &wt, &base, &new)? {
            return Ok(step);
        }
        // The original approval was verified above; the rebased commit gets a statement
        // of its own that names it.
        let applied = hall
            .change(ctx, id)
            .signed_by(&signer)
            .measured_from(git::merge_base(&wt, &base, new.as_str())?)
            .apply(Action::Rebased {
                sha: new.clone(),
                seal: None,
            })?;
        item = applied.after;
        hallmark::ensure_note(hall, id, &item)?;
        let carried = item.hallmark.clone().unwrap_or_default();
        verified = match hallmark::verify_commit(&wt, &carried, &trust, Some(&hall.journal)) {
            Ok(v) => v,
            Err(why) => return hold(hall, ctx, id, not_shippable(hall, &why)),
        };
    } else {
        let events = hall.events(id)?;
        if let Some(step) = gate_on_landing(hall, ctx, id, (&item, &events), &wt, &base, &sha)? {
            return Ok(step);
        }
    }
    // The approval covers what the commit adds to the base it was measured from; that
    // base must be in the one the PR lands on (a stacked item retargeted before the
    // branch under it merged is not), or the rest was never reviewed with it.
    // (The base as this clone has it counts too: a commit on the local base that origin
    // lacks is the person's own, as the review's rules are.)
    let local = format!("refs/heads/{}", item.base);
    if let Err(why) = hallmark::check_base(&wt, &verified, &base)
        && (git::commit(&wt, &local).is_none()
            || hallmark::check_base(&wt, &verified, &local).is_err())
    {
        return pull_back(
            hall,
            ctx,
            id,
            format!("{why}; it needs a review against {base}"),
        );
    }
    if let Err(e) = hallmark::push_notes(&hall.repo.main_root) {
        return hold(
            hall,
            ctx,
            id,
            format!("pushing the hallmark notes to origin failed, so nothing was shipped: {e}"),
        );
    }
    let events = hall.events(id)?;
    let (body, review) = review_text(id, &item, &events);
    let runs = hall.journal.item_dir(id).join("runs");
    std::fs::create_dir_all(&runs).at(&runs)?;
    let body_file = runs.join("pr-body.md");
    let review_file = runs.join(format!("review-round-{}.md", item.round));
    std::fs::write(&body_file, body).at(&body_file)?;
    std::fs::write(&review_file, review).at(&review_file)?;
    let slug = crate::template::slug(&item.title);
    let id_s = id.to_string();
    let body_s = body_file.display().to_string();
    let repo = hall.repo.name();
    let values = [
        ("repo", repo.as_str()),
        ("id", id_s.as_str()),
        ("branch", item.branch.as_str()),
        ("base", item.base.as_str()),
        ("slug", slug.as_str()),
        ("title", item.title.as_str()),
        ("body_file", body_s.as_str()),
    ];
    // An item that has an open PR (reopened by the Delivery office, or adopted)
    // updates it; any other opens one.
    let updating = item.pr.is_some() && item.delivered.is_none();
    let (template, what) = if updating {
        (&hall.config.update, "update")
    } else {
        (&hall.config.ship, "ship")
    };
    let command = crate::template::render(template, &values, true);
    let out = match crate::template::run_logged(&command, &wt, "shipper") {
        Ok(o) => o,
        Err(e) => {
            return hold(hall, ctx, id, format!("the {what} command failed: {e}"));
        }
    };
    let pr = if updating {
        item.pr.clone()
    } else {
        out.split_whitespace()
            .rev()
            .find(|w| w.starts_with("https://") || w.starts_with("http://"))
            .map(str::to_string)
    };
    let applied = hall
        .change(ctx, id)
        .apply(Action::Shipped { pr: pr.clone() })?;
    let shipped = applied.after.hallmark.clone().unwrap_or(sha);
    let mut did = format!(
        "{} {}{}",
        if updating {
            "updated the PR with"
        } else {
            "shipped"
        },
        shipped.short(),
        pr.as_ref().map(|p| format!(" as {p}")).unwrap_or_default()
    );
    if let Some(pr) = &pr
        && !hall.config.review_comment.trim().is_empty()
    {
        let review_s = review_file.display().to_string();
        let cmd = crate::template::render(
            &hall.config.review_comment,
            &[
                ("pr", pr.as_str()),
                ("review_file", review_s.as_str()),
                ("id", id_s.as_str()),
            ],
            true,
        );
        if let Err(e) = crate::template::run_logged(&cmd, &wt, "shipper") {
            hall.journal.append_item(
                id,
                &[ctx.event(
                    Some(id),
                    EventKind::Notification {
                        kind: "review_comment_failed".into(),
                        message: e.to_string(),
                        session: None,
                    },
                )],
            )?;
            did.push_str("; posting the review failed");
        } else {
            did.push_str("; review posted");
        }
    }
    // The replies the dev run drafted go out with the change that answers them.
    match super::delivery::post_replies(hall, ctx, id, &applied.after) {
        Ok((posted, _)) if !posted.is_empty() => {
            did.push_str(&format!("; {}", posted.join("; ")));
        }
        Ok(_) => {}
        // The watch posts what is left over.
        Err(e) => did.push_str(&format!("; the replies wait: {}", e.message)),
    }
    debug_assert!(applied.after.state == State::Closed || !applied.changed());
    // Posting replies recorded events after the ship: read the item as it is now.
    let after = if applied.after.replies.is_empty() {
        applied.after
    } else {
        hall.item(id)?
    };
    Ok(Step { did, after })
}

// The ship command is the repository's template, run through the platform shell; these
// tests run the default one with a fake `gh` first on its `PATH`, so they need `sh`.
// (Their processes start in `office/tests.rs`, which the layering test leaves out.)
#[cfg(all(test, unix))]
mod tests;
