//! The Stamping Room and the Dispatch Dock: a hallmarked item is rebased onto the latest
//! base, shipped with the `ship` template, its review posted with `review_comment`, and
//! closed.
//!
//! A rebase that leaves the patch as approved (same `git patch-id`) carries the approval
//! to the new commit: `rebased {carried: true}`, a hallmark on the new SHA, and a note
//! naming it. A rebase that conflicts, or changes the patch, returns the item to
//! development, so nothing unreviewed ships.

use std::path::Path;

use super::Step;
use super::verdict;
use crate::commands::{Ctx, Hall, short};
use crate::error::{HallError, Result};
use crate::git;
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

/// Ships one hallmarked item.
pub fn run(hall: &Hall, ctx: &Ctx, id: ItemId, item: &Item) -> Result<Step> {
    verdict::ensure_note(hall, id, item)?;
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
    let base = latest_base(&wt, &hall.config.base);
    let mut item = item.clone();
    if !git::is_ancestor(&wt, &base, &sha) {
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
        let tx = hall.journal.transact(id, |now, _| {
            let kinds = decide(now, &Action::Rebased { sha: new.clone() })
                .map_err(|r| crate::commands::refused(id, r))?;
            Ok(kinds.into_iter().map(|k| ctx.event(Some(id), k)).collect())
        })?;
        item = tx.after;
        verdict::ensure_note(hall, id, &item)?;
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
