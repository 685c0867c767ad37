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

#[test]
fn a_conflict_is_rebased_by_a_dev_run_reviewed_again_and_the_same_pr_updated() {
    let l = Loop::ready(
        CONFIG,
        json!({"review": [approve()],
               // In a rebase, "theirs" is the item's side.
               "develop": [{"sh": "git rebase -q -X theirs origin/main"}]}),
    );
    l.daemon();
    let shipped = l.sb.git(&l.wt, &["rev-parse", "HEAD"]);
    // Another change to the same line lands on main.
    l.sb.commit(&l.sb.repo, "lib.txt", "attempts < 5\n", "Raise the cap");
    l.sb.git(&l.sb.repo, &["push", "-q", "origin", "main"]);
    let run = watch(&l);
    assert!(
        said(&run, "delivery")
            .iter()
            .any(|d| d.contains("conflicts with main")),
        "{}",
        run.stderr
    );
    let follow = l.events_of(&l.id, "follow_through");
    assert_eq!(follow.len(), 1, "{}", run.stderr);
    assert_eq!(follow[0]["kind"], "conflict");
    let prompts = dev_prompts(&l);
    assert_eq!(
        prompts.len(),
        1,
        "git could not rebase alone, so a dev run did"
    );
    assert!(prompts[0].contains("origin/main"), "{}", prompts[0]);
    // The resolution changed the patch (main's line is the one replaced now), so the
    // commit went through checks and a second review before the update.
    let head = updated_in_place(&l);
    assert_ne!(head, shipped);
    let main = l.sb.git(&l.sb.repo, &["rev-parse", "origin/main"]);
    l.sb.git(&l.wt, &["merge-base", "--is-ancestor", &main, &head]);
    let verdicts = l.events_of(&l.id, "verdict");
    assert_eq!(verdicts.len(), 2, "{}", run.stderr);
    assert_ne!(verdicts[1]["by"], "carried");
    assert_eq!(verdicts[1]["sha"], head.as_str());
    assert_eq!(l.status()["item"]["rebase_requested"], Value::Null);
    // The watch that follows finds nothing to do.
    let mark = l.sb.github().requests().len();
    watch(&l);
    let asked: Vec<String> =
        l.sb.github()
            .requests_since(mark)
            .into_iter()
            .map(|r| r.operation)
            .collect();
    assert_eq!(asked, ["PullRequestList"]);
    assert_eq!(l.events_of(&l.id, "reopened").len(), 1);
}

#[test]
fn a_pr_behind_on_its_files_is_rebased_with_no_model_run_and_keeps_its_approval() {
    let l = Loop::signed(CONFIG, json!({"review": [approve()]}));
    let lines: String = (1..=40).map(|n| format!("line {n}\n")).collect();
    l.sb.commit(&l.sb.repo, "long.txt", &lines, "A long file");
    l.sb.git(&l.sb.repo, &["push", "-q", "origin", "main"]);
    l.sb.git(&l.wt, &["fetch", "-q", "origin"]);
    l.sb.git(&l.wt, &["rebase", "-q", "origin/main"]);
    let end = lines.replace("line 40\n", "line forty\n");
    l.sb.commit(&l.wt, "long.txt", &end, "Spell out the last line");
    l.make_ready();
    l.daemon();
    let shipped = l.sb.git(&l.wt, &["rev-parse", "HEAD"]);
    let calls = l.claude_calls().len();
    // Main edits the same file far from the item's change: no conflict, but behind.
    let start = lines.replace("line 1\n", "line one\n");
    l.sb.commit(&l.sb.repo, "long.txt", &start, "Spell out the first line");
    l.sb.git(&l.sb.repo, &["push", "-q", "origin", "main"]);
    let run = watch(&l);
    let reopened = l.events_of(&l.id, "reopened");
    assert_eq!(reopened.len(), 1, "{}", run.stderr);
    let reason = reopened[0]["reason"].as_str().unwrap();
    assert!(
        reason.contains("behind main on its own files (long.txt)"),
        "{reason}"
    );
    assert_eq!(l.claude_calls().len(), calls, "no model run at all");
    let head = updated_in_place(&l);
    assert_ne!(head, shipped);
    let verdicts = l.events_of(&l.id, "verdict");
    assert_eq!(verdicts.len(), 2);
    assert_eq!(verdicts[1]["by"], "carried", "{}", run.stderr);
    assert_eq!(verdicts[1]["sha"], head.as_str());
    // The carried hallmark is a real one: `hall verify` accepts the new head.
    l.sb.hall(&l.wt, &["verify", &head]).ok();
}

#[test]
fn a_conflict_the_dev_run_resolves_to_the_approved_change_keeps_its_approval() {
    // In a rebase, "ours" is the base's side: the dev run keeps main's lines.
    let l = Loop::signed(
        CONFIG,
        json!({"review": [approve()],
               "develop": [{"sh": "git rebase -q -X ours origin/main"}]}),
    );
    let lines: Vec<String> = (1..=60).map(|n| format!("line {n}")).collect();
    let text = |v: &[String]| v.join("\n") + "\n";
    l.sb.commit(&l.sb.repo, "long.txt", &text(&lines), "A long file");
    l.sb.git(&l.sb.repo, &["push", "-q", "origin", "main"]);
    l.sb.git(&l.wt, &["fetch", "-q", "origin"]);
    l.sb.git(&l.wt, &["rebase", "-q", "origin/main"]);
    // The item's history touches line 5 and puts it back; its change is line 50 alone.
    let mut a = lines.clone();
    a[4] = "line 5, for a while".into();
    l.sb.commit(&l.wt, "long.txt", &text(&a), "Try a new line 5");
    let mut b = lines.clone();
    b[49] = "line fifty".into();
    l.sb.commit(
        &l.wt,
        "long.txt",
        &text(&b),
        "Keep line 5; spell out line 50",
    );
    l.make_ready();
    l.daemon();
    let shipped = l.sb.git(&l.wt, &["rev-parse", "HEAD"]);
    let calls = dev_prompts(&l).len();
    // Main edits line 5: GitHub can merge the PR (its net change is line 50), but the
    // branch is behind on long.txt, and replaying its commits conflicts.
    let mut theirs = lines.clone();
    theirs[4] = "line five, from main".into();
    l.sb.commit(&l.sb.repo, "long.txt", &text(&theirs), "Spell out line 5");
    l.sb.git(&l.sb.repo, &["push", "-q", "origin", "main"]);
    let run = watch(&l);
    assert_eq!(
        dev_prompts(&l).len(),
        calls + 1,
        "git could not replay it alone: {}",
        run.stderr
    );
    let head = updated_in_place(&l);
    assert_ne!(head, shipped);
    let verdicts = l.events_of(&l.id, "verdict");
    assert_eq!(verdicts.len(), 2, "{}", run.stderr);
    assert_eq!(verdicts[1]["by"], "carried", "no review run");
    assert_eq!(review_prompts(&l).len(), 1);
    l.sb.hall(&l.wt, &["verify", &head]).ok();
    // It merges: delivered, and the worktree swept.
    l.sb.github().merge(1);
    watch(&l);
    assert_eq!(l.status()["item"]["delivered"]["merged"], true);
    assert!(!l.wt.exists());
}

/// The prompts of the reviewer's runs.
fn review_prompts(l: &Loop) -> Vec<String> {
    prompts_of(l, "hallmark:principal-engineer")
}

/// Ships an item that changes every tenth line of a long file (`hunks` of them), then
/// lands on main a change to a line in the context of each of the item's hunks: no
/// conflict, but the rebased change differs from the shipped one by two lines a hunk.
/// Returns the loop after the watch and the loop have run, and the new review's prompt.
fn rebased_with_difference(hunks: usize) -> (Loop, String) {
    let l = Loop::signed(CONFIG, json!({"review": [approve()]}));
    let lines: Vec<String> = (1..=hunks * 10 + 5).map(|n| format!("line {n}")).collect();
    let text = |v: &[String]| v.join("\n") + "\n";
    l.sb.commit(&l.sb.repo, "big.txt", &text(&lines), "A big file");
    l.sb.git(&l.sb.repo, &["push", "-q", "origin", "main"]);
    l.sb.git(&l.wt, &["fetch", "-q", "origin"]);
    l.sb.git(&l.wt, &["rebase", "-q", "origin/main"]);
    let mut ours = lines.clone();
    for k in 1..=hunks {
        ours[k * 10 - 1] = format!("line {} (the item's)", k * 10);
    }
    l.sb.commit(&l.wt, "big.txt", &text(&ours), "Mark every tenth line");
    l.make_ready();
    l.daemon();
    let mut theirs = lines.clone();
    for k in 1..=hunks {
        theirs[k * 10 - 4] = format!("line {} (main's)", k * 10 - 3);
    }
    l.sb.commit(&l.sb.repo, "big.txt", &text(&theirs), "Mark lines on main");
    l.sb.git(&l.sb.repo, &["push", "-q", "origin", "main"]);
    let run = watch(&l);
    let prompts = review_prompts(&l);
    assert_eq!(prompts.len(), 2, "{}", run.stderr);
    let verdicts = l.events_of(&l.id, "verdict");
    assert_eq!(verdicts.len(), 2, "{}", run.stderr);
    assert_ne!(verdicts[1]["by"], "carried");
    updated_in_place(&l);
    let prompt = prompts[1].clone();
    (l, prompt)
}

#[test]
fn a_rebase_that_moves_forty_lines_gets_a_review_of_only_that_difference() {
    let (l, prompt) = rebased_with_difference(20);
    assert!(
        prompt.contains("Review only that difference") && prompt.contains("40 lines differ"),
        "{prompt}"
    );
    // The difference, not the change: main's lines are in it, the item's unchanged
    // hunks are not repeated in full.
    assert!(prompt.contains("line 7 (main's)"), "{prompt}");
    assert!(!prompt.contains("The whole change"), "{prompt}");
    assert_eq!(dev_prompts(&l).len(), 0, "git rebased it alone");
}

#[test]
fn a_rebase_that_moves_four_hundred_lines_gets_a_full_review() {
    let (_l, prompt) = rebased_with_difference(200);
    assert!(prompt.contains("The whole change"), "{prompt}");
    assert!(!prompt.contains("Review only that difference"), "{prompt}");
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
fn a_request_for_changes_is_addressed_by_a_dev_run_reviewed_again_and_the_pr_updated() {
    let l = shipped_with_changes_requested();
    script(
        &l,
        json!({"review": [approve()],
               "develop": [{"sh": "printf 'logged\\n' > log.txt && git add log.txt && git commit -qm 'Log when the cap is hit'"}]}),
    );
    let comments_before = l.sb.github().pr(1).unwrap().comments.len();
    let run = watch(&l);
    let reopened = l.events_of(&l.id, "reopened");
    assert_eq!(reopened.len(), 1, "{}", run.stderr);
    let reason = reopened[0]["reason"].as_str().unwrap();
    assert!(
        reason.contains("changes requested")
            && reason.contains("grace: Please log when the cap is hit."),
        "{reason}"
    );
    let prompts = dev_prompts(&l);
    assert_eq!(prompts.len(), 1, "{}", run.stderr);
    assert!(prompts[0].contains("Please log when the cap is hit."));
    let head = updated_in_place(&l);
    assert!(
        l.sb.git(&l.wt, &["show", "--stat", "--format=", &head])
            .contains("log.txt")
    );
    let verdicts = l.events_of(&l.id, "verdict");
    assert_eq!(verdicts.len(), 2, "re-reviewed");
    assert_eq!(verdicts[1]["sha"], head.as_str());
    assert_eq!(
        l.sb.github().pr(1).unwrap().comments.len(),
        comments_before + 1,
        "the second review is posted on the same PR"
    );
    // The request was given at the old head: the next watch does not reopen again.
    watch(&l);
    assert_eq!(l.events_of(&l.id, "reopened").len(), 1);
}

#[test]
fn a_review_comment_is_answered_by_a_dev_run_and_its_reply_posted_once_with_the_update() {
    let l = Loop::ready(CONFIG, json!({"review": [approve()]}));
    l.daemon();
    let github = l.sb.github();
    let c = github.line_comment(1, "grace", "lib.txt", 1, "Say why the cap is 3.");
    let answer = "Explained in WHY.md.";
    script(
        &l,
        json!({"review": [approve()],
               "develop": [{"sh": format!("printf 'three tries, then give up\\n' > WHY.md && git add WHY.md && git commit -qm 'Say why the cap is 3' && hall reply {c} --body '{answer}'")}]}),
    );
    let run = watch(&l);
    let reopened = l.events_of(&l.id, "reopened");
    assert_eq!(reopened.len(), 1, "{}", run.stderr);
    let reason = reopened[0]["reason"].as_str().unwrap();
    assert!(
        reason.contains("new review comments")
            && reason.contains(&format!("#{c} lib.txt:1 grace: Say why the cap is 3.")),
        "{reason}"
    );
    // The reviewer read the reply with the change, before it went out, as data.
    let reviews = review_prompts(&l);
    assert_eq!(reviews.len(), 2, "{}", run.stderr);
    assert!(
        reviews[1].contains(&format!("begins: the reply to comment #{c}]\n{answer}\n")),
        "{}",
        reviews[1]
    );
    updated_in_place(&l);
    let replies: Vec<_> = github
        .pr(1)
        .unwrap()
        .line_comments
        .into_iter()
        .filter(|x| x.in_reply_to == Some(c))
        .collect();
    assert_eq!(replies.len(), 1, "{}", run.stderr);
    assert_eq!(replies[0].body, answer);
    assert_eq!(l.events_of(&l.id, "reply_posted").len(), 1);
    // Answered: the next watch neither reopens the item nor replies again.
    watch(&l);
    assert_eq!(l.events_of(&l.id, "reopened").len(), 1);
    let again = github.pr(1).unwrap().line_comments;
    assert_eq!(again.iter().filter(|x| x.in_reply_to == Some(c)).count(), 1);
}

#[test]
fn a_dev_run_that_changes_nothing_holds_the_item_for_a_person() {
    let l = shipped_with_changes_requested();
    script(
        &l,
        json!({"review": [approve()], "develop": [{"text": "Nothing to do."}]}),
    );
    let run = watch(&l);
    let status = l.status();
    assert_eq!(status["item"]["state"], "development", "{}", run.stderr);
    assert_eq!(status["item"]["hold"]["kind"], "feedback", "{status}");
    let reason = status["item"]["hold"]["reason"].as_str().unwrap();
    assert!(reason.contains("changed nothing"), "{reason}");
    assert_eq!(dev_prompts(&l).len(), 1);
    // Held: no second run until a person retries.
    watch(&l);
    assert_eq!(dev_prompts(&l).len(), 1);
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
fn red_ci_is_fixed_by_a_dev_run_and_red_again_after_that_holds_the_item() {
    let l = Loop::ready(
        CONFIG,
        json!({"review": [approve()],
               "develop": [{"sh": "printf 'fixed\\n' > ci.txt && git add ci.txt && git commit -qm 'Fix the CI job'"}]}),
    );
    l.daemon();
    let github = l.sb.github();
    let head = github.pr(1).unwrap().head_oid;
    github
        .ci(&head)
        .set("test", CheckState::Failure)
        .then("test", &[CheckState::Failure]);
    // Red: re-run. Red again at the same head: a dev run fixes it, and the fix goes
    // through checks and review onto the same PR.
    watch(&l);
    let run = watch(&l);
    let follow = l.events_of(&l.id, "follow_through");
    assert_eq!(follow.len(), 1, "{}", run.stderr);
    assert_eq!(follow[0]["kind"], "ci");
    assert!(follow[0]["brief"].as_str().unwrap().contains("still fails"));
    let fixed = updated_in_place(&l);
    assert_ne!(fixed, head);
    assert_eq!(dev_prompts(&l).len(), 1);
    // CI fails at the fix as well, re-run included: that is a person's now.
    github
        .ci(&fixed)
        .set("test", CheckState::Failure)
        .then("test", &[CheckState::Failure]);
    watch(&l);
    watch(&l);
    let status = l.status();
    assert_eq!(status["item"]["state"], "development");
    assert_eq!(status["item"]["hold"]["kind"], "ci_failed", "{status}");
    let reason = status["item"]["hold"]["reason"].as_str().unwrap();
    assert!(
        reason.contains("still fails") && reason.contains("dev run"),
        "{reason}"
    );
    assert_eq!(dev_prompts(&l).len(), 1, "no second dev run");
    // Held: the watch leaves it alone until a person retries.
    let mark = github.requests().len();
    watch(&l);
    assert!(
        github
            .requests_since(mark)
            .iter()
            .all(|r| !r.operation.ends_with("/rerun-failed-jobs")),
        "no further re-run"
    );
}

#[test]
fn ci_that_never_starts_is_one_ci_down_entry_for_every_pr_until_it_runs_again() {
    let sb = Sandbox::initialized();
    let github = sb.github();
    let sha = sb.git(&sb.repo, &["rev-parse", "HEAD"]);
    sb.git(
        &sb.repo,
        &[
            "push",
            "-q",
            "origin",
            "HEAD:refs/heads/hm/1",
            "HEAD:refs/heads/hm/2",
        ],
    );
    for k in 1..=2 {
        let branch = format!("hm/{k}");
        let number = github.open_pr(&branch, "main", &format!("PR {k}"), "hallmark-bot");
        sb.shipped_item(&branch, None, &sha, Some(&github.pr_url(number)));
    }
    sb.hall(&sb.repo, &["reindex"]).ok();
    // Both PRs share the head; no runner ever picks its jobs up.
    github.ci(&sha).set("test", CheckState::NeverStarted);
    let run = daemon(&sb);
    daemon(&sb);
    let inbox = sb.hall(&sb.repo, &["inbox"]).ok();
    let entries: Vec<&Value> = inbox["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "ci_down")
        .collect();
    assert_eq!(
        entries.len(),
        1,
        "one entry, said once: {inbox} {}",
        run.stderr
    );
    let text = entries[0]["text"].as_str().unwrap();
    assert!(text.contains("#1") && text.contains("#2"), "{text}");
    assert_eq!(entries[0]["item"], Value::Null);
    // No item was reopened or held for it: no dev run can start a runner.
    for id in ["H-0001", "H-0002"] {
        let status = sb.hall(&sb.repo, &["status", id]).ok();
        assert_eq!(status["item"]["state"], "closed", "{status}");
        assert_eq!(status["item"]["hold"], Value::Null);
    }
    // The runners come back: the entry goes.
    github.ci(&sha).set("test", CheckState::Success);
    daemon(&sb);
    let inbox = sb.hall(&sb.repo, &["inbox"]).ok();
    assert!(
        inbox["entries"]
            .as_array()
            .unwrap()
            .iter()
            .all(|e| e["kind"] != "ci_down"),
        "{inbox}"
    );
}

/// A PR opened outside Hallmark (#1, from `feature/inclusive`), adopted with `--pr`.
fn adopted_outside_pr() -> (Loop, u64) {
    let sb = Sandbox::initialized();
    sb.stand_ins(Path::new(env!("CARGO_BIN_EXE_fake-claude")));
    let n = {
        let github = sb.github();
        sb.configure(CONFIG, CHECK, "Configure the loop");
        sb.git(&sb.repo, &["push", "-q", "origin", "main"]);
        sb.script_model(&json!({"review": [approve()]}));
        // Someone opens a PR from a branch of their own, with no Hallmark anywhere.
        sb.git(&sb.repo, &["switch", "-q", "-c", "feature/inclusive"]);
        sb.commit(
            &sb.repo,
            "lib.txt",
            "attempts <= 3\n",
            "Make the cap inclusive",
        );
        sb.git(&sb.repo, &["push", "-q", "origin", "feature/inclusive"]);
        sb.git(&sb.repo, &["switch", "-q", "main"]);
        sb.git(&sb.repo, &["branch", "-q", "-D", "feature/inclusive"]);
        github.open_pr("feature/inclusive", "main", "Inclusive cap", "ada")
    };
    let adopted = sb.hall(&sb.repo, &["adopt", "--pr", &n.to_string()]).ok();
    assert_eq!(adopted["outcome"], "created", "{adopted}");
    assert_eq!(adopted["pr"], sb.github().pr_url(n));
    // (Where `script_model` wrote the reviewer's answers.)
    let script = sb.root.join("script.json");
    let wt = std::path::PathBuf::from(adopted["worktree"].as_str().unwrap());
    let l = Loop {
        id: adopted["item"].as_str().unwrap().to_string(),
        sb,
        script,
        wt,
    };
    (l, n)
}

#[test]
fn a_pr_opened_outside_hallmark_is_adopted_reviewed_updated_in_place_and_delivered() {
    let (l, n) = adopted_outside_pr();
    let github = l.sb.github();
    // The adopter adds a commit of their own, then hands the item to the loop.
    l.sb.commit(&l.wt, "NOTES.md", "adopted\n", "Note the adoption");
    l.sb.hall(&l.wt, &["ready"]).ok();
    watch(&l);
    let head = updated_in_place(&l);
    assert_eq!(github.pr(n).unwrap().head_oid, head);
    assert!(
        github
            .pr(n)
            .unwrap()
            .comments
            .iter()
            .any(|c| c.body.contains("approve") || c.body.to_lowercase().contains("review")),
        "the review is posted on the adopted PR"
    );
    // It merges on GitHub: delivered, and the worktree swept.
    github.merge(n);
    watch(&l);
    let status = l.status();
    assert_eq!(status["item"]["delivered"]["merged"], true, "{status}");
    assert!(!l.wt.exists(), "swept");
}

/// Starts a daemon in the background with the loop's scripted model (and `extra`).
fn background_daemon(l: &Loop, extra: &[(&str, &str)]) -> u32 {
    let mut cmd = l.sb.hall_command(&l.sb.repo);
    cmd.args(["daemon", "run", "--repo", ".", "--tick", "0.05"])
        .envs(l.sb.model_env(&l.script))
        .envs(extra.iter().copied())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    l.sb.spawn(&mut cmd)
}

#[test]
fn a_daemon_killed_mid_follow_through_leaves_one_update_one_comment_and_one_verdict() {
    let l = shipped_with_changes_requested();
    let commit = "printf 'logged\\n' > log.txt && git add log.txt && git commit -qm 'Log when the cap is hit'";
    script(
        &l,
        json!({"review": [approve()],
               "develop": [{"sleep": 30, "sh": commit}, {"sh": commit}]}),
    );
    let comments = l.sb.github().pr(1).unwrap().comments.len();
    let daemon = background_daemon(&l, &[]);
    wait_for("the dev run", 60, || dev_prompts(&l).len() == 1);
    l.sb.kill_spawned(daemon);
    // A second daemon runs the dev run again (the dead holder's lease is free) and
    // takes the item through review onto the same PR.
    watch(&l);
    assert_eq!(dev_prompts(&l).len(), 2);
    assert_eq!(l.events_of(&l.id, "reopened").len(), 1);
    assert_eq!(l.events_of(&l.id, "follow_through").len(), 1);
    assert_eq!(
        l.events_of(&l.id, "verdict").len(),
        2,
        "one verdict a round"
    );
    updated_in_place(&l);
    assert_eq!(
        l.sb.github().pr(1).unwrap().comments.len(),
        comments + 1,
        "one review comment for the update"
    );
    // The first daemon's dev run, orphaned by the kill, was stopped before the second
    // run started: nothing of it is left to commit in the worktree later.
    let left = l.sb.reap();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn a_daemon_killed_mid_update_push_leaves_one_push_and_one_comment() {
    let config = format!(
        "{CONFIG}update = \"if [ -n \\\"$HALL_TEST_SLOW_UPDATE\\\" ]; then sleep 30; fi; git push --force-with-lease origin {{branch}}\"\n"
    );
    let l = Loop::ready(&config, json!({"review": [approve()]}));
    l.daemon();
    let github = l.sb.github();
    let shipped = github.pr(1).unwrap().head_oid;
    github.review(
        1,
        "grace",
        hallmark_tests::github::ReviewState::ChangesRequested,
        "Please log when the cap is hit.",
    );
    script(
        &l,
        json!({"review": [approve()],
               "develop": [{"sh": "printf 'logged\\n' > log.txt && git add log.txt && git commit -qm 'Log when the cap is hit'"}]}),
    );
    let comments = github.pr(1).unwrap().comments.len();
    let daemon = background_daemon(&l, &[("HALL_TEST_SLOW_UPDATE", "1")]);
    wait_for("the update", 60, || {
        l.events_of(&l.id, "hallmarked").len() == 2
    });
    // The shipper is in its update command now (asleep before the push).
    std::thread::sleep(std::time::Duration::from_millis(500));
    l.sb.kill_spawned(daemon);
    assert_eq!(
        github.pr(1).unwrap().head_oid,
        shipped,
        "killed before the push"
    );
    assert_eq!(l.status()["item"]["state"], "hallmarked");
    watch(&l);
    updated_in_place(&l);
    assert_eq!(
        l.events_of(&l.id, "shipped").len(),
        2,
        "the first ship, one update"
    );
    assert_eq!(github.pr(1).unwrap().comments.len(), comments + 1);
    l.sb.reap();
}

#[test]
fn an_adopted_pr_merged_before_the_loop_ships_closes_with_nothing_pushed() {
    let (l, n) = adopted_outside_pr();
    let github = l.sb.github();
    let head = github.pr(n).unwrap().head_oid;
    l.sb.hall(&l.wt, &["ready"]).ok();
    // Someone merges it on GitHub while the loop reviews it.
    github.merge(n);
    let main =
        l.sb.git(&l.sb.repo, &["ls-remote", "origin", "refs/heads/main"]);
    let run = watch(&l);
    let status = l.status();
    assert_eq!(status["item"]["state"], "closed", "{status} {}", run.stderr);
    assert_eq!(status["item"]["delivered"]["merged"], true, "{status}");
    assert!(
        said(&run, "shipper")
            .iter()
            .any(|d| d.contains("already merged") && d.contains("nothing pushed")),
        "{}",
        run.stderr
    );
    // Nothing moved on the origin: the branch and main are as GitHub left them.
    assert_eq!(github.pr(n).unwrap().head_oid, head);
    assert_eq!(
        l.sb.git(&l.sb.repo, &["ls-remote", "origin", "refs/heads/main"]),
        main
    );
}
