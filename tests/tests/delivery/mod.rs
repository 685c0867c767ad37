//! The Delivery office through the daemon, against the GitHub simulator driven by the
//! real gh: a shipped PR followed until it merges or closes (`delivered`), the sweeper
//! removing worktrees and refusing the ones it must keep, the watch's cost in gh calls,
//! and GitHub failing under it.

#![allow(clippy::unwrap_used)] // a panic is how a test fails

use std::path::Path;

use crate::common::*;
use hallmark_tests::github::{CheckState, Fault};
use hallmark_tests::sandbox::{Run, Sandbox};

mod adopted;
mod feedback;
mod rebase;

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
        run.said("delivery")
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
    sb.add_worktree(branch, path, None);
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
    let sweeper = run.said("sweeper");
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
        let delivery = run.said("delivery");
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
        run.said("delivery")
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
        run.said("delivery")
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

/// A daemon run with the loop's scripted model, until idle.
fn watch(l: &Loop) -> Run {
    let run = l.sb.run_loop(&l.script, &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    run
}

/// Rewrites the scripted model's answers (what each role says next).
fn script(l: &Loop, answers: Value) {
    std::fs::write(&l.script, answers.to_string()).unwrap();
}

/// The prompts the runs of the plugin's `agent` (`hallmark:developer`…) were given.
fn prompts_of(l: &Loop, agent: &str) -> Vec<String> {
    l.claude_calls()
        .iter()
        .filter(|c| {
            c["args"]
                .as_array()
                .is_some_and(|a| a.iter().any(|x| x == agent))
        })
        .map(|c| {
            c["args"]
                .as_array()
                .and_then(|a| a.last())
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        })
        .collect()
}

/// The prompts the dev runs were given.
fn dev_prompts(l: &Loop) -> Vec<String> {
    prompts_of(l, "hallmark:developer")
}

/// The PR's head on the simulated GitHub is the item's worktree HEAD, and the item is
/// closed again on that same PR (no second one opened).
fn updated_in_place(l: &Loop) -> String {
    let github = l.sb.github();
    let head = l.sb.git(&l.wt, &["rev-parse", "HEAD"]);
    assert_eq!(github.prs().len(), 1, "no second PR");
    assert_eq!(
        github.pr(1).unwrap().head_oid,
        head,
        "the update pushed HEAD"
    );
    let status = l.status();
    assert_eq!(status["item"]["state"], "closed", "{status}");
    assert_eq!(status["item"]["pr"], github.pr_url(1));
    head
}

/// The prompts of the reviewer's runs.
fn review_prompts(l: &Loop) -> Vec<String> {
    prompts_of(l, "hallmark:principal-engineer")
}

/// An item shipped through the loop whose PR (#1) then got a request for changes.
fn shipped_with_changes_requested() -> Loop {
    Loop::shipped_then_reviewed(
        ReviewState::ChangesRequested,
        "Please log when the cap is hit.",
    )
}
