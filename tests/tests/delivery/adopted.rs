//! PRs opened outside Hallmark, adopted and delivered; and a daemon killed in the middle of following a PR through.

use super::*;

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
        run.said("shipper")
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
