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
    if let Err(why) = hallmark::verify_commit(&wt, &sha, &trust, Some(&hall.journal)) {
        return hold(hall, ctx, id, not_shippable(hall, &why));
    }
    let base = latest_base(&wt, &hall.config.base);
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
        // The original approval was verified above; the rebased commit gets a statement
        // of its own that names it.
        let applied = hall
            .change(ctx, id)
            .signed_by(&signer)
            .apply(Action::Rebased {
                sha: new.clone(),
                seal: None,
            })?;
        item = applied.after;
        hallmark::ensure_note(hall, id, &item)?;
        let carried = item.hallmark.clone().unwrap_or_default();
        if let Err(why) = hallmark::verify_commit(&wt, &carried, &trust, Some(&hall.journal)) {
            return hold(hall, ctx, id, not_shippable(hall, &why));
        }
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
        ("base", hall.config.base.as_str()),
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
mod tests {
    use std::path::PathBuf;
    use std::sync::Arc;

    use super::*;
    use crate::claude::{RunOutcome, RunSpec, Runner};
    use crate::config::Config;
    use crate::hall::hallmark::{NOTES_REF, Note};
    use crate::office::tests::{BRANCH, Bench, LIB, PRINCIPAL, git_in, git_maybe, kinds};

    const PR: &str = "https://github.com/acme/widgets/pull/7";

    /// The shipper runs no model.
    struct NoModel;

    impl Runner for NoModel {
        fn run(
            &self,
            _dir: &Path,
            _stamp: &str,
            _spec: &RunSpec,
        ) -> crate::claude::Result<RunOutcome> {
            panic!("the shipper started a model run")
        }
    }

    /// How the fake `gh` answers `gh pr create`.
    #[derive(Clone, Copy)]
    enum Gh {
        Opens,
        Refuses,
    }

    const REFUSAL: &str = "pull request create failed: GraphQL: Resource not accessible by integration (createPullRequest)";

    /// A hallmarked item (its note struck) whose branch is on `main`, a bare local
    /// `origin` holding `main`, and the default ship and review commands with a fake
    /// `gh` that logs its arguments.
    struct World {
        bench: Bench,
        ctx: Ctx,
        id: ItemId,
        sha: Sha,
        origin: PathBuf,
        gh_log: PathBuf,
    }

    fn world(gh: Gh) -> World {
        let mut bench = Bench::new(Arc::new(NoModel));
        let base = bench.root.parent().unwrap().to_path_buf();
        let origin = base.join("origin.git");
        let origin_s = origin.display().to_string();
        git_in(&base, &["init", "-q", "--bare", "-b", "main", &origin_s]);
        git_in(&bench.root, &["remote", "add", "origin", &origin_s]);
        git_in(&bench.root, &["push", "-q", "origin", "main"]);
        let (id, sha) = bench.item_in_review();
        approve(&bench, id, &sha);
        let bin = base.join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        let gh_log = base.join("gh.log");
        let create = match gh {
            Gh::Opens => format!(
                "echo 'Creating pull request for {BRANCH} into main in acme/widgets'; echo; echo '{PR}'"
            ),
            Gh::Refuses => format!("echo '{REFUSAL}' >&2; exit 1"),
        };
        let script = format!(
            "#!/bin/sh\nprintf '%s\\n' \"$*\" >> '{}'\ncase \"$1 $2\" in\n'pr create') {create} ;;\n'pr comment') echo '{PR}#issuecomment-1' ;;\n*) echo \"gh: unexpected: $*\" >&2; exit 1 ;;\nesac\n",
            gh_log.display()
        );
        let fake = bin.join("gh");
        std::fs::write(&fake, script).unwrap();
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let path = format!(
            "PATH={}:\"$PATH\" && ",
            crate::platform::shell_quote(&bin.display().to_string())
        );
        let defaults = Config::default();
        bench.hall.config.ship = path.clone() + &defaults.ship;
        bench.hall.config.review_comment = path + &defaults.review_comment;
        let ctx = bench.ctx.acting_as("shipper");
        World {
            bench,
            ctx,
            id,
            sha,
            origin,
            gh_log,
        }
    }

    /// The principal engineer's approval of `sha`, signed and struck, as the review
    /// step leaves it.
    fn approve(bench: &Bench, id: ItemId, sha: &Sha) {
        let signer = hallmark::signer(&bench.hall).unwrap();
        let applied = bench
            .hall
            .change(&bench.ctx, id)
            .signed_by(&signer)
            .apply(Action::Verdict {
                sha: sha.clone(),
                approved: true,
                findings: Vec::new(),
                model: Some("claude-opus-4-1".into()),
                summary: Some("Caps retries at three attempts.".into()),
                by: None,
                max_rejects: 3,
                seal: None,
            })
            .unwrap();
        assert_eq!(applied.after.state, State::Hallmarked);
        assert!(hallmark::ensure_note(&bench.hall, id, &applied.after).unwrap());
    }

    impl World {
        fn ship(&self) -> Step {
            let item = self.bench.hall.item(self.id).unwrap();
            run(&self.bench.hall, &self.ctx, self.id, &item).unwrap()
        }

        /// Someone else's commit on origin's `main`, changing `file` to `text`; its SHA.
        fn advance_origin(&self, file: &str, text: &str) -> String {
            let other = self.origin.with_file_name("other");
            let origin = self.origin.display().to_string();
            let path = other.display().to_string();
            git_in(
                self.origin.parent().unwrap(),
                &["clone", "-q", &origin, &path],
            );
            std::fs::write(other.join(file), text).unwrap();
            git_in(&other, &["add", file]);
            git_in(&other, &["commit", "-qm", "Meanwhile on main"]);
            git_in(&other, &["push", "-q", "origin", "main"]);
            git_in(&other, &["rev-parse", "HEAD"])
        }

        /// The commit `name` names in origin, if any.
        fn on_origin(&self, name: &str) -> Option<String> {
            git_maybe(&self.origin, &["rev-parse", "--verify", "--quiet", name])
        }

        fn gh_calls(&self) -> Vec<String> {
            std::fs::read_to_string(&self.gh_log)
                .map(|t| t.lines().map(str::to_string).collect())
                .unwrap_or_default()
        }

        fn runs(&self) -> PathBuf {
            self.bench.hall.journal.item_dir(self.id).join("runs")
        }

        fn head(&self) -> Sha {
            Sha::new(git_in(&self.bench.worktree(), &["rev-parse", "HEAD"]))
        }
    }

    fn branch_ref() -> String {
        format!("refs/heads/{BRANCH}")
    }

    #[test]
    fn a_hallmarked_item_is_pushed_its_pull_request_opened_and_recorded() {
        let w = world(Gh::Opens);
        let step = w.ship();
        assert_eq!(
            step.did,
            format!("shipped {} as {PR}; review posted", w.sha.short())
        );
        assert_eq!(step.after.state, State::Closed);
        assert_eq!(step.after.pr.as_deref(), Some(PR));
        assert_eq!(step.after.hallmark.as_ref(), Some(&w.sha));
        let events = w.bench.hall.events(w.id).unwrap();
        assert_eq!(
            events.last().map(|e| &e.kind),
            Some(&EventKind::Shipped {
                sha: w.sha.clone(),
                pr: Some(PR.into()),
            })
        );
        assert_eq!(events.last().unwrap().actor, "shipper");
        // The branch is on origin at the hallmarked commit, and so is its hallmark.
        assert_eq!(w.on_origin(&branch_ref()).as_deref(), Some(w.sha.as_str()));
        let verified = hallmark::verify_commit(&w.origin, w.sha.as_str(), &w.bench.trust(), None)
            .expect("origin's note verifies without the journal");
        assert_eq!(verified.note.signer.as_deref(), Some(PRINCIPAL));
        // gh opened the PR from the body file and was given the review to post.
        let body = w.runs().join("pr-body.md");
        let review = w.runs().join("review-round-1.md");
        assert_eq!(
            w.gh_calls(),
            [
                format!(
                    "pr create --base main --head {BRANCH} --title Cap retries --body-file {}",
                    body.display()
                ),
                format!("pr comment {PR} --body-file {}", review.display()),
            ]
        );
        let body = std::fs::read_to_string(body).unwrap();
        assert!(
            body.ends_with(&format!(
                "Hallmarked by Hallmark: {}, round 1, commit {}.\n",
                w.id, w.sha
            )),
            "{body}"
        );
        let review = std::fs::read_to_string(review).unwrap();
        assert!(
            review.contains(
                "**Round 1: approved** by claude-opus-4-1\n\nCaps retries at three attempts."
            ),
            "{review}"
        );
        assert_eq!(super::super::work_for(&step.after), None);
    }

    #[test]
    fn a_push_origin_refuses_holds_the_item_and_opens_no_pull_request() {
        let w = world(Gh::Opens);
        let hook = w.origin.join("hooks/pre-receive");
        std::fs::write(
            &hook,
            "#!/bin/sh\nwhile read old new ref; do case \"$ref\" in refs/heads/hm/*) echo \"protected: $ref\" >&2; exit 1 ;; esac; done\n",
        )
        .unwrap();
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let step = w.ship();
        let why = format!(
            "exited with 1: error: failed to push some refs to '{}'",
            w.origin.display()
        );
        assert!(
            step.did.starts_with("the ship command failed: `PATH=") && step.did.ends_with(&why),
            "{}",
            step.did
        );
        assert_eq!(step.after.state, State::Hallmarked);
        let hold = step.after.hold.as_ref().expect("held");
        assert_eq!(
            (hold.kind, hold.reason.as_str()),
            (HoldKind::ShipFailed, step.did.as_str())
        );
        let events = w.bench.hall.events(w.id).unwrap();
        assert_eq!(kinds(&events).last(), Some(&"held"));
        assert_eq!(step.after.pr, None);
        assert!(w.gh_calls().is_empty(), "`&&` stops before gh");
        assert_eq!(w.on_origin(&branch_ref()), None);
        // The notes went first, so a retry's PR finds its hallmark.
        assert!(w.on_origin(NOTES_REF).is_some());
        assert_eq!(super::super::work_for(&step.after), None);
    }

    #[test]
    fn a_pull_request_gh_refuses_holds_the_item_with_ghs_words() {
        let w = world(Gh::Refuses);
        let step = w.ship();
        assert!(
            step.did.starts_with("the ship command failed: `PATH=")
                && step.did.ends_with(&format!("` exited with 1: {REFUSAL}")),
            "{}",
            step.did
        );
        assert_eq!(step.after.state, State::Hallmarked);
        assert_eq!(step.after.pr, None);
        let hold = step.after.hold.as_ref().expect("held");
        assert_eq!(
            (hold.kind, hold.reason.as_str()),
            (HoldKind::ShipFailed, step.did.as_str())
        );
        assert_eq!(
            w.gh_calls().len(),
            1,
            "no review is posted without a PR: {:?}",
            w.gh_calls()
        );
        // The push itself went through.
        assert_eq!(w.on_origin(&branch_ref()).as_deref(), Some(w.sha.as_str()));
        let events = w.bench.hall.events(w.id).unwrap();
        assert!(!kinds(&events).contains(&"shipped"), "{:?}", kinds(&events));
    }

    #[test]
    fn an_approval_is_carried_and_signed_anew_across_a_rebase_that_keeps_the_patch() {
        let w = world(Gh::Opens);
        let tip = w.advance_origin("README.md", "Widgets.\n");
        let step = w.ship();
        let new = w.head();
        assert_ne!(new, w.sha);
        assert_eq!(
            git_in(&w.bench.worktree(), &["rev-parse", "HEAD^"]),
            tip,
            "rebased onto origin's main"
        );
        assert_eq!(
            step.did,
            format!("shipped {} as {PR}; review posted", new.short())
        );
        assert_eq!(step.after.state, State::Closed);
        assert_eq!(step.after.hallmark.as_ref(), Some(&new));
        let events = w.bench.hall.events(w.id).unwrap();
        let n = events.len();
        assert_eq!(
            kinds(&events)[n - 4..],
            ["rebased", "verdict", "hallmarked", "shipped"]
        );
        assert_eq!(
            events[n - 4].kind,
            EventKind::Rebased {
                from: w.sha.clone(),
                sha: new.clone(),
                carried: true,
            }
        );
        let EventKind::Verdict {
            sha, approved, by, ..
        } = &events[n - 3].kind
        else {
            panic!("a carried verdict: {:?}", events[n - 3])
        };
        assert_eq!(
            (sha, *approved, by.as_deref()),
            (&new, true, Some("carried"))
        );
        assert!(matches!(
            &events[n - 2].kind,
            EventKind::Hallmarked { sha, seal: Some(_), .. } if *sha == new
        ));
        // The new commit's note is a signed statement naming the approved commit.
        let verified = hallmark::verify_commit(
            &w.bench.root,
            new.as_str(),
            &w.bench.trust(),
            Some(&w.bench.hall.journal),
        )
        .unwrap();
        let note: Note = verified.note;
        assert_eq!(note.approved_sha.as_ref(), Some(&w.sha));
        assert_eq!(note.actor.as_deref(), Some("assayer"));
        assert_eq!(note.model.as_deref(), Some("claude-opus-4-1"));
        assert_eq!(w.on_origin(&branch_ref()).as_deref(), Some(new.as_str()));
        assert!(hallmark::verify_commit(&w.origin, new.as_str(), &w.bench.trust(), None).is_ok());
        let review = std::fs::read_to_string(w.runs().join("review-round-1.md")).unwrap();
        assert!(
            review.contains("**Round 1: approved** (carried across a rebase)"),
            "{review}"
        );
    }

    #[test]
    fn a_rebase_that_changes_the_patch_sends_the_item_back_to_development() {
        let w = world(Gh::Opens);
        // Not a conflict, but inside the diff's context: the patch is another patch.
        w.advance_origin("lib.txt", &LIB.replace("backoff: 1s", "backoff: 2s"));
        let step = w.ship();
        let why = "the rebase onto origin/main changed the patch; it needs another review";
        assert_eq!(step.did, why);
        assert_eq!(step.after.state, State::Development);
        assert_eq!(step.after.hallmark, None);
        assert!(step.after.hold.is_none());
        let events = w.bench.hall.events(w.id).unwrap();
        assert_eq!(
            events.last().map(|e| &e.kind),
            Some(&EventKind::PulledBack {
                from: State::Hallmarked,
                reason: Some(why.into()),
            })
        );
        assert!(!kinds(&events).contains(&"rebased"));
        assert_eq!(w.on_origin(&branch_ref()), None, "nothing unreviewed ships");
        assert!(w.gh_calls().is_empty());
    }

    #[test]
    fn a_rebase_that_conflicts_sends_the_item_back_with_its_branch_as_it_was() {
        let w = world(Gh::Opens);
        w.advance_origin("lib.txt", &LIB.replace("attempts < 3", "attempts < 5"));
        let step = w.ship();
        assert_eq!(step.did, "the rebase onto origin/main conflicts");
        assert_eq!(step.after.state, State::Development);
        assert_eq!(w.head(), w.sha, "the rebase was aborted");
        assert_eq!(w.on_origin(&branch_ref()), None);
        assert!(w.gh_calls().is_empty());
    }

    #[test]
    fn a_hallmark_the_base_does_not_trust_ships_nothing() {
        let w = world(Gh::Opens);
        // The base now lists only someone else's key.
        let stranger = w.bench.dir.path().join("stranger");
        std::fs::create_dir_all(&stranger).unwrap();
        crate::sign::ensure_key_in(&stranger).unwrap();
        let key = crate::sign::user_public_key_in(&stranger).unwrap();
        std::fs::write(
            w.bench.root.join(hallmark::SIGNERS_FILE),
            crate::sign::allowed::line("bob@example.com", &key) + "\n",
        )
        .unwrap();
        git_in(&w.bench.root, &["commit", "-qam", "Trust bob only"]);
        let main = git_in(&w.bench.root, &["rev-parse", "--short=7", "main"]);
        let step = w.ship();
        assert!(
            step.did.starts_with(&format!(
                "the hallmark on {} is signed by SHA256:",
                w.sha.short()
            )),
            "{}",
            step.did
        );
        assert!(
            step.did.ends_with(&format!(
                " as {PRINCIPAL}, which .hallmark/allowed_signers on main at {main} does not allow; nothing was shipped (to trust this key, run `hall init --signers` and commit .hallmark/allowed_signers on main)"
            )),
            "{}",
            step.did
        );
        let hold = step.after.hold.as_ref().expect("held");
        assert_eq!(hold.kind, HoldKind::ShipFailed);
        assert_eq!(step.after.state, State::Hallmarked);
        assert_eq!(w.on_origin(&branch_ref()), None);
        assert_eq!(w.on_origin(NOTES_REF), None, "not even the notes");
        assert!(w.gh_calls().is_empty());
    }

    #[test]
    fn a_branch_that_moved_after_its_hallmark_goes_back_to_development() {
        let w = world(Gh::Opens);
        let wt = w.bench.worktree();
        std::fs::write(wt.join("lib.txt"), "unreviewed\n").unwrap();
        git_in(&wt, &["commit", "-qam", "Sneak in a change"]);
        let step = w.ship();
        assert_eq!(
            step.did,
            format!(
                "the branch moved to {} after the hallmark on {}",
                w.head().short(),
                w.sha.short()
            )
        );
        assert_eq!(step.after.state, State::Development);
        assert_eq!(w.on_origin(&branch_ref()), None);
        assert!(w.gh_calls().is_empty());
    }
}
