//! What holds a merge, and what a merge never does twice: a failed command, a PR a person must look at, a daemon killed mid-merge, a merged result that fails, a check the host can't run, and a green that ran no tests.

use super::*;

#[test]
fn a_failed_merge_command_holds_the_item_and_retry_merges_it() {
    let q = Queue::new(
        "command = \"test -f merge-ok.flag && gh pr merge {pr} --squash --match-head-commit {pr_head}\"\n",
    );
    let a = q.ship("a", "a.txt", "a\n");
    let b = q.ship("b", "b.txt", "b\n");
    let run = q.daemon();
    assert!(q.merged().is_empty(), "{}", run.stderr);
    let item = q.status(&a.id);
    assert_eq!(item["hold"]["kind"], "merge_failed", "{item}");
    assert_eq!(item["state"], "closed");
    let inbox = q.sb.hall(&q.sb.repo, &["inbox"]).ok();
    assert!(
        inbox["entries"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["kind"] == "merge_failed" && e["item"] == a.id.as_str()),
        "{inbox}"
    );
    // Held, #1 is left alone; #2 is judged on its own and its command fails too.
    std::fs::write(q.sb.repo.join("merge-ok.flag"), "").unwrap();
    let run = q.daemon();
    assert_eq!(q.merged(), [b.n], "{}", run.stderr);
    let held = q.queue()["held"].clone();
    assert_eq!(held[0]["number"], a.n, "{held}");
    assert_eq!(held[0]["hold"], "merge_failed");
    q.daemon();
    q.sb.hall(&q.sb.repo, &["retry", &a.id, "--reason", "merge again"])
        .ok();
    let run = q.daemon();
    assert_eq!(q.merged(), [a.n, b.n], "{}", run.stderr);
    assert_eq!(q.events_of(&a.id, "pr_merged").len(), 1);
}

#[test]
fn a_lit_pr_is_held_for_a_person_and_merges_after_retry() {
    let q = Queue::new("lit = [\"deploy/\"]\n");
    let a = q.ship("a", "deploy/prod.yml", "replicas: 3\n");
    let b = q.ship("b", "b.txt", "b\n");
    let run = q.daemon();
    // #1 is put to a person and claims nothing, so #2 merges past it.
    assert_eq!(q.planned(a.n).0, "hold");
    assert_eq!(q.planned(a.n).1, ["lit"]);
    assert_eq!(q.merged(), [b.n], "{}", run.stderr);
    let item = q.status(&a.id);
    assert_eq!(item["hold"]["kind"], "lit", "{item}");
    assert!(
        item["hold"]["reason"].as_str().unwrap().contains("deploy/"),
        "{item}"
    );
    // Held: later passes leave it alone and hold it no second time.
    q.daemon();
    assert_eq!(q.merged(), [b.n]);
    assert_eq!(q.events_of(&a.id, "held").len(), 1);
    // The person clears this head.
    q.sb.hall(&q.sb.repo, &["retry", &a.id, "--reason", "merge this head"])
        .ok();
    let run = q.daemon();
    assert_eq!(q.merged(), [a.n, b.n], "{}", run.stderr);
    assert_eq!(q.events_of(&a.id, "pr_merged")[0]["head"], a.sha.as_str());

    // Another lit PR, merged by the person on GitHub instead: once delivered, its hold
    // is gone from the item and the inbox.
    let c = q.ship("c", "deploy/staging.yml", "replicas: 1\n");
    q.daemon();
    assert_eq!(q.status(&c.id)["hold"]["kind"], "lit");
    q.sb.github().merge(c.n);
    let run = q.daemon();
    let item = q.status(&c.id);
    assert_eq!(item["delivered"]["merged"], true, "{}", run.stderr);
    assert!(item["hold"].is_null(), "{item}");
    let inbox = q.sb.hall(&q.sb.repo, &["inbox"]).ok();
    assert!(
        !inbox["entries"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["kind"] == "lit"),
        "{inbox}"
    );
    assert!(
        q.events_of(&c.id, "merging").is_empty(),
        "the merger never ran it"
    );
}

#[test]
fn a_daemon_killed_between_the_merge_and_its_record_merges_nothing_twice() {
    // The command merges, then kills the daemon that ran it before it can record the
    // merge.
    let q = Queue::new(
        "command = \"gh pr merge {pr} --squash --match-head-commit {pr_head} && kill -9 $PPID\"\n",
    );
    let a = q.ship("a", "a.txt", "a\n");
    let b = q.ship("b", "b.txt", "b\n");
    let daemon = || {
        q.sb.hall(
            &q.sb.repo,
            &["daemon", "run", "--until-idle", "--tick", "0.05"],
        )
    };
    let run = daemon();
    assert_ne!(run.code, 0, "the daemon was killed: {}", run.stderr);
    assert_eq!(q.merged(), [a.n]);
    assert_eq!(q.events_of(&a.id, "merging").len(), 1);
    assert!(q.events_of(&a.id, "pr_merged").is_empty());
    // The next daemon's watch can't reach GitHub, so #1's delivery is not recorded:
    // the merger counts #1 in flight and merges nothing.
    q.sb.github()
        .fail_next(hallmark_tests::github::Fault::Status(502), 1);
    let run = daemon();
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(q.status(&a.id)["delivered"].is_null());
    let (action, reasons, waits) = q.planned(b.n);
    assert_eq!(action, "wait", "{}", run.stderr);
    assert_eq!(reasons, ["merge_in_flight"]);
    assert_eq!(waits, [a.n]);
    assert_eq!(q.queue()["bases"][0]["merge_in_flight"], a.n);
    assert_eq!(q.merged(), [a.n]);
    // Once the watch records it, #2 merges (and its command kills that daemon too).
    daemon();
    assert_eq!(q.status(&a.id)["delivered"]["merged"], true);
    assert_eq!(q.merged(), [a.n, b.n]);
    let merges: Vec<u64> =
        q.sb.github()
            .requests()
            .iter()
            .filter(|r| r.operation == "PullRequestMerge")
            .map(|r| {
                r.variables["input"]["pullRequestId"]
                    .as_str()
                    .unwrap()
                    .trim_start_matches("PR_kwSim")
                    .parse()
                    .unwrap()
            })
            .collect();
    assert_eq!(merges, [a.n, b.n], "each PR merged once");
}

#[test]
fn a_pr_whose_merged_result_fails_the_checks_is_not_merged_but_rebased() {
    let q = Queue::new("");
    // Two changes that are each fine, and together break the repository's check: the
    // kind of merge that is clean as text and broken as code.
    q.sb.commit(
        &q.sb.repo,
        "check.sh",
        "grep -q '<=' lib.txt || exit 1\nif [ -f a.txt ] && [ -f b.txt ]; then echo 'a.txt and b.txt clash'; exit 1; fi\n",
        "Check that a and b never meet",
    );
    q.sb.git(&q.sb.repo, &["push", "-q", "origin", "main"]);
    let a = q.ship_in_worktree("a", "a.txt", "a\n");
    let b = q.ship_in_worktree("b", "b.txt", "b\n");
    // #1 merges; #2 is checked behind it, on the tip with #1 merged in, and fails
    // there although it is green on its own. With #1 not yet merged, the failure
    // may be #1's: #2 waits to meet that tree on the real tip.
    let first = q.daemon();
    assert_eq!(q.merged(), [a.n]);
    assert!(
        first.stderr.contains(&format!("PR #{}: merged onto", b.n))
            && first.stderr.contains("its checks are red (sh check.sh)"),
        "{}",
        first.stderr
    );
    let (action, reasons, waits) = q.planned(b.n);
    assert_eq!(
        (action.as_str(), reasons, waits),
        ("wait", vec!["merge_check_red_ahead".to_string()], vec![a.n])
    );
    // #1 is in main: the tip now holds the very tree #2 was checked on. One red
    // result could be a flaky gate, so that tree is checked once more in this pass
    // (red again), and only then is the PR sent back.
    let run = q.daemon();
    assert_eq!(q.merged(), [a.n], "not merged: {}", run.stderr);
    assert_eq!(
        run.stderr
            .matches(&format!("PR #{}: merged onto", b.n))
            .count(),
        1,
        "checked once more: {}",
        run.stderr
    );
    let (action, reasons, _) = q.planned(b.n);
    assert_eq!(action, "rebase");
    assert_eq!(reasons.first().map(String::as_str), Some("merge_check_red"));
    // Rebased at its turn (git rebases it alone, and the unchanged change keeps its
    // approval): the PR's head now has #1 under it, and its CI runs there.
    assert_eq!(q.events_of(&b.id, "rebase_requested").len(), 1);
    let head = q.sb.github().pr(b.n).unwrap().head_oid;
    assert_ne!(head, b.sha, "rebased");
    q.sb.github().ci(&head).set("test", CheckState::Failure);
    // Red there too: it stays out of main, and the kept result is not checked again.
    let again = q.daemon();
    assert!(
        !again.stderr.contains(&format!("PR #{}: merged onto", b.n)),
        "checked once a head and tip: {}",
        again.stderr
    );
    assert_eq!(q.merged(), [a.n]);
}

#[test]
fn a_merge_check_the_host_cannot_run_costs_that_pr_one_pass_and_nothing_else() {
    let q = Queue::new("");
    let a = q.ship("a", "a.txt", "a\n");
    let b = q.ship("b", "b.txt", "b\n");
    // No loop checkout can be made: a file stands where their directory goes.
    let blocker = q.sb.root.join("cache").join("checkouts");
    let _ = std::fs::remove_dir_all(&blocker);
    std::fs::write(&blocker, "not a directory\n").unwrap();
    let run = q.daemon();
    // #1 still merges; #2's check is reported and tried again later, not a paused merger.
    assert_eq!(q.merged(), [a.n], "{}", run.stderr);
    assert!(
        run.stderr
            .contains(&format!("PR #{}: its merge check could not run", b.n)),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("merger paused"), "{}", run.stderr);
    assert_eq!(q.planned(b.n).1, ["merge_check_missing"]);
    // Once the checkout can be made, the next pass runs it and #2 merges.
    std::fs::remove_file(&blocker).unwrap();
    q.daemon();
    let run = q.daemon();
    assert_eq!(q.merged(), [a.n, b.n], "{}", run.stderr);
}

#[test]
fn a_green_check_that_ran_no_tests_is_not_green_and_its_count_is_read_once() {
    let q = Queue::new("");
    let a = q.ship("a", "a.txt", "a\n");
    let b = q.ship("b", "b.txt", "b\n");
    // #1's test job is green and ran nothing (a filter that selected no tests); #2's
    // says how many it ran.
    q.sb.github().ci(&a.sha).report(
        "test",
        "pytest",
        "collected 4 items / 4 deselected\n\n4 deselected, 0 passed in 0.02s",
    );
    q.sb.github()
        .ci(&b.sha)
        .report("test", "12 passed, 0 failed", "");
    let mark = q.sb.github().requests().len();
    let run = q.daemon();
    // #1 is put to a person and claims nothing, so #2 merges in its place.
    let (action, reasons, _) = q.planned(a.n);
    assert_eq!(
        (action.as_str(), reasons.as_slice()),
        ("hold", ["no_tests_ran".to_string()].as_slice()),
        "{}",
        run.stderr
    );
    assert_eq!(q.merged(), [b.n], "{}", run.stderr);
    // The counts rode on the pass's one call for the base tips.
    let asked = q.asked_since(mark);
    assert_eq!(
        asked.iter().filter(|a| *a == "MergerBaseTips").count(),
        1,
        "{asked:?}"
    );
    let kept =
        std::fs::read_to_string(q.sb.repo.join(".git/hallmark/check-reports.jsonl")).unwrap();
    assert_eq!(kept.lines().count(), 2, "{kept}");
    // The next pass does not ask again for heads it has read, and #1 stays held.
    q.daemon();
    let kept =
        std::fs::read_to_string(q.sb.repo.join(".git/hallmark/check-reports.jsonl")).unwrap();
    assert_eq!(kept.lines().count(), 2, "read once a head: {kept}");
    assert_eq!(q.planned(a.n).1, ["no_tests_ran"]);
    assert_eq!(q.merged(), [b.n]);
}
