//! The Stamping Room and the Dispatch Dock: a hallmarked item is rebased onto the latest
//! base, shipped with the `ship` template, its review posted with `review_comment`, and
//! closed.
//!
//! A rebase that leaves the patch as approved (same `git patch-id`) carries the approval
//! to the new commit: the shipper verifies the original hallmark's signature, then signs
//! a statement for the new commit that names the approved one (`rebased {carried:
//! true}`, a signed hallmark on the new SHA). A rebase that conflicts, or changes the
//! patch, returns the item to development, so nothing unreviewed ships.
//!
//! The hallmark is verified before anything moves (and the carried one right after it
//! is signed); then `refs/notes/hallmark` is pushed to origin (merged with origin's
//! first, never forced) before the ship command runs, so the CI check that verifies the
//! pull request finds the note when the PR opens.

use std::path::Path;

use super::Step;
use super::verdict;
use crate::commands::{Ctx, Hall, short};
use crate::error::{Code, HallError, Result};
use crate::git;
use crate::hallmark::{self, NOTES_REF, Trust};
use crate::item::{Action, EventKind, HoldKind, Item, ItemId, State, decide};

fn patch_id(dir: &Path, from: &str, to: &str) -> Option<String> {
    let diff = git::output(dir, &["diff", &format!("{from}..{to}")]).ok()?;
    let mut child = std::process::Command::new("git")
        .current_dir(dir)
        .args(["patch-id", "--stable"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .ok()?;
    use std::io::Write;
    child.stdin.take()?.write_all(&diff.stdout).ok()?;
    let out = child.wait_with_output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    Some(text.split_whitespace().next().unwrap_or("").to_string())
}

/// The base the item ships onto: origin's copy, freshly fetched, when there is one.
fn latest_base(wt: &Path, base: &str) -> String {
    if git::succeeds(wt, &["remote", "get-url", "origin"])
        && git::succeeds(wt, &["fetch", "--quiet", "origin", base])
        && git::succeeds(
            wt,
            &[
                "rev-parse",
                "--verify",
                "--quiet",
                &format!("refs/remotes/origin/{base}"),
            ],
        )
    {
        return format!("origin/{base}");
    }
    base.to_string()
}

fn pull_back(hall: &Hall, ctx: &Ctx, id: ItemId, reason: String) -> Result<Step> {
    let tx = hall.journal.transact(id, |now, _| {
        let kinds = decide(
            now,
            &Action::RebaseFailed {
                reason: reason.clone(),
            },
        )
        .map_err(|r| crate::commands::refused(id, r))?;
        Ok(kinds.into_iter().map(|k| ctx.event(Some(id), k)).collect())
    })?;
    Ok(Step {
        did: reason,
        after: tx.after,
    })
}

fn hold(hall: &Hall, ctx: &Ctx, id: ItemId, reason: String) -> Result<Step> {
    let after = super::hold(hall, ctx, id, HoldKind::ShipFailed, &reason)?;
    Ok(Step { did: reason, after })
}

/// The PR body and the review comment, from the journal.
fn review_text(id: ItemId, item: &Item, events: &[crate::item::Event]) -> (String, String) {
    let mut body = format!(
        "{}\n\n",
        item.summary.clone().unwrap_or_else(|| item.title.clone())
    );
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
        item.hallmark.as_deref().unwrap_or("")
    ));
    (body, review)
}

/// Where origin's notes are fetched to before they are merged into ours.
const ORIGIN_NOTES: &str = "refs/notes/hallmark-origin";

/// A git command run as the shipper (the actor a reference hook would ask about).
fn shipper_git(root: &Path, args: &[&str]) -> std::result::Result<String, String> {
    let out = std::process::Command::new("git")
        .current_dir(root)
        .env("HALL_ACTOR", "shipper")
        .args(args)
        .output()
        .map_err(|e| format!("could not run git: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    } else {
        Err(format!(
            "git {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// Pushes `refs/notes/hallmark` to origin: origin's notes are fetched and merged first
/// (ours win only where both clones noted the same commit), so notes struck from other
/// clones are kept, and the push is never forced. A push that loses a race is tried
/// again from the fetch. Nothing to do without an origin.
fn push_notes(root: &Path) -> std::result::Result<(), String> {
    if !git::succeeds(root, &["remote", "get-url", "origin"]) {
        return Ok(());
    }
    let mut last = String::new();
    for _ in 0..3 {
        let listed = shipper_git(root, &["ls-remote", "origin", NOTES_REF])?;
        if !listed.is_empty() {
            shipper_git(
                root,
                &[
                    "fetch",
                    "--quiet",
                    "origin",
                    &format!("+{NOTES_REF}:{ORIGIN_NOTES}"),
                ],
            )?;
            shipper_git(
                root,
                &[
                    "notes",
                    &format!("--ref={NOTES_REF}"),
                    "merge",
                    "--quiet",
                    "--strategy=ours",
                    ORIGIN_NOTES,
                ],
            )?;
        }
        match shipper_git(
            root,
            &[
                "push",
                "--quiet",
                "origin",
                &format!("{NOTES_REF}:{NOTES_REF}"),
            ],
        ) {
            Ok(_) => return Ok(()),
            Err(e) => last = e,
        }
    }
    Err(last)
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

/// Ships one hallmarked item.
pub fn run(hall: &Hall, ctx: &Ctx, id: ItemId, item: &Item) -> Result<Step> {
    match verdict::ensure_note(hall, id, item) {
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
                short(&head),
                short(&sha)
            ),
        );
    }
    // Only a real hallmark ships or carries: it is checked before anything moves.
    let trust = Trust::for_repo(&hall.repo.main_root, &hall.config.base);
    if let Err(why) = hallmark::verify_commit(&wt, &sha, &trust, Some(&hall.journal)) {
        return hold(hall, ctx, id, not_shippable(hall, &why));
    }
    let base = latest_base(&wt, &hall.config.base);
    let mut item = item.clone();
    if !git::is_ancestor(&wt, &base, &sha) {
        // The carried approval is signed anew, so the key must be at hand before the
        // branch is rebased.
        let signer = match verdict::signer(hall) {
            Ok(s) => s,
            Err(reason) => return hold(hall, ctx, id, reason),
        };
        let old_base = git::run(&wt, &["merge-base", &base, &sha])?;
        if !git::succeeds(&wt, &["rebase", "--quiet", &base]) {
            let _ = git::run(&wt, &["rebase", "--abort"]);
            return pull_back(hall, ctx, id, format!("the rebase onto {base} conflicts"));
        }
        let new = git::head(&wt)?;
        let before = patch_id(&wt, &old_base, &sha);
        let after = patch_id(&wt, &base, &new);
        if before.is_none() || before != after {
            return pull_back(
                hall,
                ctx,
                id,
                format!("the rebase onto {base} changed the patch; it needs another review"),
            );
        }
        // The original approval was verified above; the rebased commit gets a statement
        // of its own that names it.
        let tx = hall.journal.transact(id, |now, events| {
            let action = Action::Rebased {
                sha: new.clone(),
                seal: None,
            };
            verdict::decide_signed(hall, ctx, id, (now, events), action, &signer)
        })?;
        item = tx.after;
        verdict::ensure_note(hall, id, &item)?;
        let carried = item.hallmark.clone().unwrap_or_default();
        if let Err(why) = hallmark::verify_commit(&wt, &carried, &trust, Some(&hall.journal)) {
            return hold(hall, ctx, id, not_shippable(hall, &why));
        }
    }
    if let Err(e) = push_notes(&hall.repo.main_root) {
        return hold(
            hall,
            ctx,
            id,
            format!("pushing the hallmark notes to origin failed, so nothing was shipped: {e}"),
        );
    }
    let events = hall.journal.read_item(id)?.events;
    let (body, review) = review_text(id, &item, &events);
    let runs = hall.journal.item_dir(id).join("runs");
    std::fs::create_dir_all(&runs)?;
    let body_file = runs.join("pr-body.md");
    let review_file = runs.join(format!("review-round-{}.md", item.round));
    std::fs::write(&body_file, body)?;
    std::fs::write(&review_file, review)?;
    let slug = crate::template::slug(&item.title);
    let id_s = id.to_string();
    let body_s = body_file.display().to_string();
    let repo = hall.repo.name();
    let values = [
        ("repo", repo.as_str()),
        ("id", id_s.as_str()),
        ("branch", item.branch.as_str()),
        ("base", hall.config.base.as_str()),
        ("slug", slug.as_str()),
        ("title", item.title.as_str()),
        ("body_file", body_s.as_str()),
    ];
    let command = crate::template::render(&hall.config.ship, &values, true);
    let out = match crate::template::run_logged(&command, &wt, "shipper") {
        Ok(o) => o,
        Err(e) => {
            return hold(
                hall,
                ctx,
                id,
                format!("the ship command failed: {}", e.message),
            );
        }
    };
    let pr = out
        .split_whitespace()
        .rev()
        .find(|w| w.starts_with("https://") || w.starts_with("http://"))
        .map(str::to_string);
    let tx = hall.journal.transact(id, |now, _| {
        let kinds = decide(now, &Action::Shipped { pr: pr.clone() })
            .map_err(|r| crate::commands::refused(id, r))?;
        Ok(kinds.into_iter().map(|k| ctx.event(Some(id), k)).collect())
    })?;
    let mut did = format!(
        "shipped {}{}",
        short(tx.after.hallmark.as_deref().unwrap_or(&sha)),
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
                        message: e.message.clone(),
                        session: None,
                    },
                )],
            )?;
            did.push_str("; posting the review failed");
        } else {
            did.push_str("; review posted");
        }
    }
    debug_assert!(tx.after.state == State::Closed || tx.appended.is_empty());
    Ok(Step {
        did,
        after: tx.after,
    })
}
