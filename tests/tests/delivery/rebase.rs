//! Keeping a shipped PR on its base: a conflict resolved by a dev run and reviewed again, a rebase on files alone, and a rebase review sized by what the rebase changed.

use super::*;

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
        run.said("delivery")
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
