//! The Delivery office through the daemon, against the GitHub simulator driven by the
//! real gh: a shipped PR followed until it merges or closes (`delivered`), the sweeper
//! removing worktrees and refusing the ones it must keep, the watch's cost in gh calls,
//! and GitHub failing under it.

#![allow(clippy::unwrap_used)] // a panic is how a test fails

mod common;

use std::path::Path;

use common::*;
use hallmark_tests::github::{CheckState, Fault};
use hallmark_tests::sandbox::{Run, Sandbox};

/// The live log lines of a daemon run (stderr, one JSON object a line).
fn log_lines(run: &Run) -> Vec<Value> {
    run.stderr
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

fn said(run: &Run, role: &str) -> Vec<String> {
    log_lines(run)
        .into_iter()
        .filter(|l| l["role"] == role)
        .map(|l| l["did"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// A daemon run of the sandbox's repository, until idle.
fn daemon(sb: &Sandbox) -> Run {
    let run = sb.hall(
        &sb.repo,
        &["daemon", "run", "--until-idle", "--tick", "0.05"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    run
}

#[test]
fn a_merged_pr_is_delivered_and_its_worktree_swept() {
    let l = Loop::ready(CONFIG, json!({"review": [approve()]}));
    l.daemon();
    let github = l.sb.github();
    let shipped = l.status();
    assert_eq!(shipped["item"]["state"], "closed");
    assert_eq!(shipped["item"]["pr"], github.pr_url(1));
    assert!(l.wt.is_dir(), "the worktree stays while the PR is open");

    // An open PR: the watch asks once, records nothing, and the worktree stays.
    let mark = github.requests().len();
    let run = daemon(&l.sb);
    let asked: Vec<String> = github
        .requests_since(mark)
        .into_iter()
        .map(|r| r.operation)
        .collect();
    assert_eq!(asked, ["PullRequestList"], "{}", run.stderr);
    assert!(l.events_of(&l.id, "delivered").is_empty());
    assert!(l.wt.is_dir());

    // Someone merges it on GitHub: the next watch sees it leave the open list, asks
    // about that one PR, records `delivered`, and the sweeper removes the worktree.
    github.merge(1);
    let mark = github.requests().len();
    let run = daemon(&l.sb);
    let asked: Vec<String> = github
        .requests_since(mark)
        .into_iter()
        .map(|r| r.operation)
        .collect();
    assert_eq!(asked, ["PullRequestList", "PullRequestByNumber"]);
    let delivered = l.events_of(&l.id, "delivered");
    assert_eq!(delivered.len(), 1, "{}", run.stderr);
    assert_eq!(delivered[0]["merged"], true);
    assert_eq!(delivered[0]["actor"], "delivery");
    assert!(!l.wt.exists(), "the sweeper removed the worktree");
    let removed = l.events_of(&l.id, "worktree_removed");
    assert_eq!(removed.len(), 1);
    assert_eq!(removed[0]["path"], l.wt.display().to_string());
    // The branch and the journal stay; the item is still closed.
    let branch = shipped["item"]["branch"].as_str().unwrap();
    assert!(
        !l.sb
            .git(&l.sb.repo, &["branch", "--list", branch])
            .is_empty()
    );
    let after = l.status();
    assert_eq!(after["item"]["state"], "closed");
    assert_eq!(after["item"]["delivered"]["merged"], true);
    assert!(
        said(&run, "delivery")
            .iter()
            .any(|d| d.contains("PR #1 merged")),
        "{}",
        run.stderr
    );

    // Nothing left to watch: a later pass asks GitHub nothing at all.
    let mark = github.requests().len();
    daemon(&l.sb);
    assert!(github.requests_since(mark).is_empty());
}

#[test]
fn a_pr_closed_without_merging_is_delivered_as_closed() {
    let l = Loop::ready(CONFIG, json!({"review": [approve()]}));
    l.daemon();
    l.sb.github().close_pr(1);
    daemon(&l.sb);
    let delivered = l.events_of(&l.id, "delivered");
    assert_eq!(delivered.len(), 1);
    assert_eq!(delivered[0]["merged"], false);
}

/// A worktree at `path` on a new branch `branch`, with one commit of its own.
fn worktree(sb: &Sandbox, branch: &str, path: &Path) -> String {
    sb.git(
        &sb.repo,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            branch,
            path.to_str().unwrap(),
        ],
    );
    sb.commit(path, &format!("{branch}.txt"), "work\n", branch)
}

#[test]
fn the_sweeper_keeps_what_it_must_and_says_so_once() {
    let sb = Sandbox::initialized();
    let main_sha = sb.git(&sb.repo, &["rev-parse", "HEAD"]);
    // Shipped with no PR to watch, so done with their worktrees at once:
    // a clean one (removed),
    let clean = sb.root.join("wt-clean");
    let sha = worktree(&sb, "clean", &clean);
    let removed = sb.shipped_item("clean", Some(&clean), &sha, None);
    // a dirty one (kept: `git worktree remove` without --force refuses),
    let dirty = sb.root.join("wt-dirty");
    let sha = worktree(&sb, "dirty", &dirty);
    std::fs::write(dirty.join("notes.txt"), "mine\n").unwrap();
    let kept_dirty = sb.shipped_item("dirty", Some(&dirty), &sha, None);
    // one whose worktree someone switched to another branch,
    let moved = sb.root.join("wt-moved");
    let sha = worktree(&sb, "moved", &moved);
    sb.git(&moved, &["switch", "-q", "-c", "something-else"]);
    let kept_moved = sb.shipped_item("moved", Some(&moved), &sha, None);
    // one that names the main checkout,
    let kept_main = sb.shipped_item("main", Some(&sb.repo), &main_sha, None);
    // and one whose worktree a live item still uses.
    let shared = sb.root.join("wt-shared");
    let sha = worktree(&sb, "shared", &shared);
    let kept_shared = sb.shipped_item("shared", Some(&shared), &sha, None);
    let live = sb.hall(&sb.repo, &["new", "--title", "Live"]).ok();
    let live_id = live["item"].as_str().unwrap().to_string();
    let journal = sb.journal();
    let live_file = journal.item_file(live_id.parse().unwrap());
    let mut text = std::fs::read_to_string(&live_file).unwrap();
    // The live item's worktree is the shared one (as an adopt of that path would make it).
    text = text.replace(
        &sb.worktree(&live_id).display().to_string(),
        &shared.display().to_string(),
    );
    std::fs::write(&live_file, text).unwrap();
    sb.hall(&sb.repo, &["reindex"]).ok();

    let run = daemon(&sb);
    let sweeper = said(&run, "sweeper");
    assert!(!clean.exists(), "{sweeper:?}");
    assert!(dirty.join("notes.txt").is_file(), "a dirty worktree stays");
    assert!(moved.is_dir() && shared.is_dir() && sb.repo.is_dir());
    let count = |needle: &str| sweeper.iter().filter(|d| d.contains(needle)).count();
    assert_eq!(count(&format!("{removed}: removed")), 1, "{sweeper:?}");
    assert_eq!(count(&format!("{kept_dirty}'s worktree")), 1, "{sweeper:?}");
    assert_eq!(count("is on something-else now"), 1, "{sweeper:?}");
    assert_eq!(count("is the main checkout"), 1, "{sweeper:?}");
    assert_eq!(count("used by a live item"), 1, "{sweeper:?}");
    let events = |id: &str| {
        sb.hall(&sb.repo, &["log", id, "--kind", "worktree_removed"])
            .ok()["events"]
            .as_array()
            .unwrap()
            .len()
    };
    assert_eq!(events(&removed), 1);
    for id in [&kept_dirty, &kept_moved, &kept_main, &kept_shared] {
        assert_eq!(events(id), 0, "{id} keeps its worktree");
    }
    // The branch of the removed worktree stays.
    assert!(!sb.git(&sb.repo, &["branch", "--list", "clean"]).is_empty());
}

#[test]
fn one_watch_costs_a_page_of_open_prs_whatever_their_number() {
    let mut counts = Vec::new();
    for n in [1usize, 20, 200] {
        let sb = Sandbox::initialized();
        let github = sb.github();
        let sha = sb.git(&sb.repo, &["rev-parse", "HEAD"]);
        // n shipped items, each with its branch on origin and an open PR.
        let refspecs: Vec<String> = (1..=n).map(|k| format!("HEAD:refs/heads/hm/{k}")).collect();
        let mut push = vec!["push", "-q", "origin"];
        push.extend(refspecs.iter().map(String::as_str));
        sb.git(&sb.repo, &push);
        for k in 1..=n {
            let number = github.open_pr(
                &format!("hm/{k}"),
                "main",
                &format!("PR {k}"),
                "hallmark-bot",
            );
            sb.shipped_item(&format!("hm/{k}"), None, &sha, Some(&github.pr_url(number)));
        }
        sb.hall(&sb.repo, &["reindex"]).ok();
        let mark = github.requests().len();
        daemon(&sb);
        let asked = github.requests_since(mark);
        eprintln!(
            "{n} open shipped PRs: {} gh requests in one pass",
            asked.len()
        );
        assert!(
            asked.iter().all(|r| r.operation == "PullRequestList"),
            "{asked:?}"
        );
        counts.push(asked.len());
    }
    // 100 PRs a page: one request for 1 and 20, two for 200 (the goal: at most 3).
    assert_eq!(counts, [1, 1, 2]);
}

#[test]
fn github_failing_under_the_watch_loses_nothing_and_the_daemon_goes_on() {
    let l = Loop::ready(CONFIG, json!({"review": [approve()]}));
    l.daemon();
    let github = l.sb.github();
    github.merge(1);
    for (fault, words) in [
        (
            Fault::Status(502),
            "delivery watch paused until GitHub answers",
        ),
        (
            Fault::Malformed,
            "delivery watch paused until GitHub answers",
        ),
        (Fault::RateLimited, "rate limit is spent; next try in 15m"),
    ] {
        github.fail_next(fault.clone(), 10);
        let run = daemon(&l.sb);
        let delivery = said(&run, "delivery");
        assert!(
            delivery.iter().any(|d| d.contains(words)),
            "{fault:?}: {delivery:?}"
        );
        assert!(l.events_of(&l.id, "delivered").is_empty(), "{fault:?}");
        assert!(
            l.wt.is_dir(),
            "{fault:?}: nothing swept while GitHub can't say"
        );
        github.clear_faults();
    }
    // Once GitHub answers again, the merge is seen.
    daemon(&l.sb);
    assert_eq!(l.events_of(&l.id, "delivered").len(), 1);
    assert!(!l.wt.exists());
}

#[test]
fn gh_missing_from_path_is_said_and_nothing_is_recorded() {
    let l = Loop::ready(CONFIG, json!({"review": [approve()]}));
    l.daemon();
    l.sb.github().merge(1);
    std::fs::remove_file(l.sb.bin.join("gh")).unwrap();
    let run = daemon(&l.sb);
    assert!(
        said(&run, "delivery")
            .iter()
            .any(|d| d.contains("not installed")),
        "{}",
        run.stderr
    );
    assert!(l.events_of(&l.id, "delivered").is_empty());
    assert!(l.wt.is_dir());
}

#[test]
fn a_pr_deleted_under_the_watch_is_said_and_no_longer_watched() {
    let l = Loop::ready(CONFIG, json!({"review": [approve()]}));
    l.daemon();
    let github = l.sb.github();
    github.delete_pr(1);
    let run = daemon(&l.sb);
    assert!(
        said(&run, "delivery")
            .iter()
            .any(|d| d.contains("is gone from GitHub")),
        "{}",
        run.stderr
    );
    let delivered = l.events_of(&l.id, "delivered");
    assert_eq!(delivered.len(), 1);
    assert_eq!(delivered[0]["merged"], false);
    let mark = github.requests().len();
    daemon(&l.sb);
    assert!(
        github.requests_since(mark).is_empty(),
        "not asked about again"
    );
}

#[test]
fn a_pr_that_conflicts_after_the_base_moves_is_reopened_with_a_rebase_request() {
    let l = Loop::ready(CONFIG, json!({"review": [approve()]}));
    l.daemon();
    // Another change to the same line lands on main.
    l.sb.commit(&l.sb.repo, "lib.txt", "attempts < 5\n", "Raise the cap");
    l.sb.git(&l.sb.repo, &["push", "-q", "origin", "main"]);
    let run = daemon(&l.sb);
    assert!(
        said(&run, "delivery")
            .iter()
            .any(|d| d.contains("conflicts with main")),
        "{}",
        run.stderr
    );
    let status = l.status();
    assert_eq!(status["item"]["state"], "development");
    assert_eq!(status["item"]["rebase_requested"], "main");
    assert!(l.wt.is_dir(), "a reopened item keeps its worktree");
    // `ready` waits for the rebase (ADR 0043), and keeps the request.
    l.sb.hall(&l.wt, &["ready"]).err("WRONG_STATE", 4);
    assert_eq!(l.status()["item"]["rebase_requested"], "main");
    // Once the branch is on its base, `ready` goes through.
    l.sb.git(&l.wt, &["fetch", "-q", "origin"]);
    // (The conflict resolved in the item's favour: in a rebase, "theirs" is the item's.)
    let rebase = l.sb.sh(&l.wt, "git rebase -q -X theirs origin/main", &[]);
    assert_eq!(rebase.code, 0, "{}", rebase.stderr);
    l.sb.hall(&l.wt, &["ready"]).ok();
    assert_eq!(l.status()["item"]["state"], "checks");
}

/// An item shipped through the loop whose PR (#1) then got a request for changes.
fn shipped_with_changes_requested() -> Loop {
    let l = Loop::ready(CONFIG, json!({"review": [approve()]}));
    l.daemon();
    let github = l.sb.github();
    github.review(
        1,
        "grace",
        hallmark_tests::github::ReviewState::ChangesRequested,
        "Please log when the cap is hit.",
    );
    l
}

#[test]
fn a_request_for_changes_on_the_pr_reopens_the_item_with_what_was_asked() {
    let l = shipped_with_changes_requested();
    let run = daemon(&l.sb);
    let reopened = l.events_of(&l.id, "reopened");
    assert_eq!(reopened.len(), 1, "{}", run.stderr);
    let reason = reopened[0]["reason"].as_str().unwrap();
    assert!(
        reason.contains("changes requested")
            && reason.contains("grace: Please log when the cap is hit."),
        "{reason}"
    );
    assert_eq!(l.status()["item"]["state"], "development");
    // Reopened once: a second watch of the same review does not reopen it again.
    daemon(&l.sb);
    assert_eq!(l.events_of(&l.id, "reopened").len(), 1);
}

#[test]
fn a_request_for_changes_given_at_an_older_head_does_not_reopen() {
    let l = shipped_with_changes_requested();
    // The branch moved on since (a push that answered the review).
    l.sb.commit(&l.wt, "log.txt", "logged\n", "Log when the cap is hit");
    l.sb.git(&l.wt, &["push", "-q", "origin", "HEAD"]);
    daemon(&l.sb);
    assert!(l.events_of(&l.id, "reopened").is_empty());
    assert_eq!(l.status()["item"]["state"], "closed");
}

#[test]
fn flaky_ci_is_re_run_and_restored_with_no_model_run() {
    let l = Loop::ready(CONFIG, json!({"review": [approve()]}));
    l.daemon();
    let runs_before = l.claude_calls().len();
    let github = l.sb.github();
    let head = github.pr(1).unwrap().head_oid;
    github
        .ci(&head)
        .set("build", CheckState::Success)
        .set("test", CheckState::Failure)
        .then("test", &[CheckState::Success]);
    let run = daemon(&l.sb);
    let reopened = l.events_of(&l.id, "reopened");
    assert_eq!(reopened.len(), 1, "{}", run.stderr);
    assert!(
        reopened[0]["reason"]
            .as_str()
            .unwrap()
            .contains("CI failed")
    );
    assert_eq!(reopened[0]["ci_at"], head.as_str());
    assert!(
        github
            .requests()
            .iter()
            .any(|r| r.operation.ends_with("/rerun-failed-jobs")),
        "the failed jobs were re-run"
    );
    // The re-run passed at the same head: restored, closed again, no model ran.
    daemon(&l.sb);
    assert_eq!(l.events_of(&l.id, "restored").len(), 1);
    assert_eq!(l.status()["item"]["state"], "closed");
    assert_eq!(l.claude_calls().len(), runs_before, "no model run");
}

#[test]
fn ci_that_fails_again_after_the_re_run_holds_the_item() {
    let l = Loop::ready(CONFIG, json!({"review": [approve()]}));
    l.daemon();
    let github = l.sb.github();
    let head = github.pr(1).unwrap().head_oid;
    github
        .ci(&head)
        .set("test", CheckState::Failure)
        .then("test", &[CheckState::Failure]);
    daemon(&l.sb);
    daemon(&l.sb);
    let status = l.status();
    assert_eq!(status["item"]["state"], "development");
    assert_eq!(status["item"]["hold"]["kind"], "ci_failed", "{status}");
    assert!(
        status["item"]["hold"]["reason"]
            .as_str()
            .unwrap()
            .contains("still fails"),
        "{status}"
    );
    // Held: the watch leaves it alone until a person retries.
    let mark = github.requests().len();
    daemon(&l.sb);
    assert!(
        github
            .requests_since(mark)
            .iter()
            .all(|r| !r.operation.ends_with("/rerun-failed-jobs")),
        "no second re-run"
    );
}
