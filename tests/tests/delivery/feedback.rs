//! What comes back on a shipped PR: requests for changes and review comments answered by a dev run, and CI that is flaky, red or never starts.

use super::*;

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
