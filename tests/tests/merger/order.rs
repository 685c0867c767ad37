//! Who merges when: the merger room from the base branch, the base tip's checks, stacked PRs and a red base tip that stops the line.

use super::*;

#[test]
fn the_base_branch_merger_room_decides_and_one_on_a_pr_branch_changes_nothing() {
    let q = Queue::new("");
    // PR #1 brings a stricter merger room (it holds every PR) and names it in its own
    // copy of the config: a branch can't choose its own judge, so the built-in room
    // decides and #1 merges.
    let sb = &q.sb;
    sb.git(&sb.repo, &["switch", "-q", "-c", "strict", "origin/main"]);
    std::fs::create_dir_all(sb.repo.join("rooms")).unwrap();
    std::fs::copy(
        built_wasm("hall_fixture_hold_all.wasm"),
        sb.repo.join("rooms/hold-all.wasm"),
    )
    .unwrap();
    let config = std::fs::read_to_string(sb.repo.join(".hallmark.toml")).unwrap();
    std::fs::write(
        sb.repo.join(".hallmark.toml"),
        format!("{config}[rooms]\nmerger = \"rooms/hold-all.wasm\"\n"),
    )
    .unwrap();
    sb.git(&sb.repo, &["add", "-A"]);
    sb.git(&sb.repo, &["commit", "-q", "-m", "A stricter merger room"]);
    let sha = sb.git(&sb.repo, &["rev-parse", "HEAD"]);
    sb.git(&sb.repo, &["push", "-q", "origin", "strict"]);
    sb.git(&sb.repo, &["switch", "-q", "main"]);
    let github = sb.github();
    let n = github.open_pr("strict", "main", "A stricter merger room", "hallmark-bot");
    github.ci(&sha).set("test", CheckState::Success);
    let strict = sb.shipped_item("strict", None, &sha, Some(&github.pr_url(n)));
    let run = q.daemon();
    assert_eq!(
        q.queue()["room"]["name"],
        "builtin:merger",
        "{}",
        run.stderr
    );
    assert_eq!(q.merged(), [n], "{}", run.stderr);
    let used = q.events_of(&strict, "room_used");
    assert_eq!(used.last().unwrap()["source"], "built-in", "{used:?}");

    // Once it is on the base branch, it decides: the next PR is held, not merged.
    q.daemon();
    sb.git(&sb.repo, &["pull", "-q", "--ff-only", "origin", "main"]);
    let b = q.ship("b", "b.txt", "b\n");
    let run = q.daemon();
    let plan = q.queue();
    assert!(
        plan["room"]["name"]
            .as_str()
            .unwrap()
            .contains("rooms/hold-all.wasm"),
        "{plan}"
    );
    let (action, reasons, _) = q.planned(b.n);
    assert_eq!(action, "hold", "{}", run.stderr);
    assert_eq!(reasons, ["held_by_the_repository_room"]);
    assert_eq!(q.merged(), [n], "{}", run.stderr);
    // Not a `lit` hold, so the item itself is not held: the plan says why it waits.
    assert!(q.status(&b.id)["hold"].is_null());
}

#[test]
fn a_merge_waits_for_the_base_tip_checks() {
    let q = Queue::new("");
    // The base has CI, so a tip with no run yet counts as running.
    let sb = &q.sb;
    std::fs::create_dir_all(sb.repo.join(".github/workflows")).unwrap();
    sb.commit(
        &sb.repo,
        ".github/workflows/ci.yml",
        "on: [push, pull_request]\n",
        "CI",
    );
    sb.git(&sb.repo, &["push", "-q", "origin", "main"]);
    let a = q.ship("a", "a.txt", "a\n");
    let b = q.ship("b", "b.txt", "b\n");
    let run = q.daemon();
    let (action, reasons, _) = q.planned(a.n);
    assert_eq!(
        (action.as_str(), reasons),
        ("wait", vec!["base_ci_pending".to_string()]),
        "{}",
        run.stderr
    );
    assert_eq!(q.queue()["bases"][0]["tip_ci"], "pending");
    assert!(q.merged().is_empty());
    // Five minutes on with still no run: none is coming, and #1 merges.
    let later = sb.run_loop(
        &sb.script_model(&json!({})),
        &[("HALL_NOW", "2026-11-02T09:06:00Z")],
    );
    assert_eq!(later.code, 0, "{}", later.stderr);
    assert_eq!(q.merged(), [a.n], "{}", later.stderr);
    // The merge's tip: its run is going, then passes.
    let tip = q.tip();
    q.sb.github().ci(&tip).set("test", CheckState::Running);
    let run = q.daemon();
    assert_eq!(q.planned(b.n).1, ["base_ci_pending"], "{}", run.stderr);
    assert_eq!(q.merged(), [a.n]);
    q.sb.github().ci(&tip).set("test", CheckState::Success);
    let run = q.daemon();
    assert_eq!(q.merged(), [a.n, b.n], "{}", run.stderr);
}

#[test]
fn a_stacked_pr_waits_for_its_parent_then_is_retargeted_and_rebased_at_its_turn() {
    let q = Queue::new("");
    let github = q.sb.github();
    github.delete_branch_on_merge(true);
    let a = q.ship("a", "a.txt", "a\n");
    // #2 is built on #1's branch, and its PR is based on it.
    let (n, b) = q.ship_stacked_on_a();

    let run = q.daemon();
    assert_eq!(q.merged(), [a.n], "{}", run.stderr);
    let (action, reasons, waits) = q.planned(n);
    assert_eq!(
        (action.as_str(), reasons, waits),
        ("wait", vec!["depends_on_open".to_string()], vec![a.n]),
        "{}",
        run.stderr
    );
    let plan = q.queue();
    assert!(
        plan["bases"]
            .as_array()
            .unwrap()
            .iter()
            .any(|b| b["base"] == "a"),
        "#2 is in the queue of its own base: {plan}"
    );
    // GitHub deleted #1's branch and moved #2 onto main; at #2's turn it is behind main
    // on the files #1 brought (squashed there), so it is reopened to be rebased, never
    // merged into the finished branch.
    assert_eq!(github.pr(n).unwrap().base, "main");
    let run = q.daemon();
    let asked = q.events_of(&b, "rebase_requested");
    assert_eq!(asked.len(), 1, "{}", run.stderr);
    assert_eq!(asked[0]["base"], "main");
    assert_eq!(asked[0]["actor"], "merger");
    assert_ne!(github.pr(n).unwrap().state, PrState::Merged);
}

/// The agent's way around the stack: `gh pr edit --base main` on a PR stacked on a
/// branch that has not merged. Its hallmark was measured from that branch, so it vouches
/// for only part of what the PR would bring into main: the merger holds it.
#[test]
fn a_stacked_pr_pointed_at_main_before_its_parent_merged_is_held_not_merged() {
    let q = Queue::new("");
    let github = q.sb.github();
    let a = q.ship("a", "a.txt", "a\n");
    // #1 cannot merge yet: its CI is red.
    github.ci(&a.sha).set("test", CheckState::Failure);
    let (n, _) = q.ship_stacked_on_a();
    github.retarget(n, "main");

    let run = q.daemon();
    assert_eq!(q.merged(), Vec::<u64>::new(), "{}", run.stderr);
    let (action, reasons, _) = q.planned(n);
    assert_eq!(action, "hold", "{}", run.stderr);
    assert_eq!(reasons.first().map(String::as_str), Some("not_hallmarked"));
    assert_ne!(github.pr(n).unwrap().state, PrState::Merged);
    // A journal line saying #1 merged, written by hand, does not make #1's changes part
    // of main: git shows they are not there, and #2 stays held.
    q.sb.record(
        &a.id,
        "delivery",
        json!({"event": "delivered", "pr": github.pr_url(a.n), "merged": true}),
    );
    let run = q.daemon();
    let (action, reasons, _) = q.planned(n);
    assert_eq!(action, "hold", "{}", run.stderr);
    assert_eq!(reasons.first().map(String::as_str), Some("not_hallmarked"));
    assert_ne!(github.pr(n).unwrap().state, PrState::Merged);
    // Its twin, still stacked on #1's branch, is hallmarked there and waits for #1.
    github.retarget(n, "a");
    let run = q.daemon();
    let (action, reasons, waits) = q.planned(n);
    assert_eq!(
        (action.as_str(), waits),
        ("wait", vec![a.n]),
        "{}",
        run.stderr
    );
    assert!(
        reasons.iter().all(|r| r.starts_with("depends_on_")),
        "{reasons:?}"
    );
}

#[test]
fn a_red_base_tip_stops_the_line_names_the_suspect_and_green_resumes_it() {
    let q = Queue::new("");
    let a = q.ship("a", "a.txt", "a\n");
    let b = q.ship("b", "b.txt", "b\n");
    q.daemon();
    assert_eq!(q.merged(), [a.n]);
    // #1's merge broke main.
    q.sb.github().ci(&q.tip()).set("test", CheckState::Failure);
    let run = q.daemon();
    assert_eq!(q.merged(), [a.n], "nothing merges into a red base");
    let (action, reasons, _) = q.planned(b.n);
    assert_eq!(action, "wait");
    assert_eq!(reasons, ["base_red"]);
    assert_eq!(q.queue()["bases"][0]["line_stopped"], true);
    let inbox = q.sb.hall(&q.sb.repo, &["inbox"]).ok();
    let red: Vec<&Value> = inbox["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "base_red")
        .collect();
    assert_eq!(red.len(), 1, "{inbox}");
    let text = red[0]["text"].as_str().unwrap();
    assert!(text.contains(&format!("Suspects: #{}", a.n)), "{text}");
    assert!(
        run.said("merger")
            .iter()
            .any(|d| d.contains("a check failed")),
        "{}",
        run.stderr
    );
    // Said once: another pass at the same red tip adds nothing.
    q.daemon();
    let notices = q.sb.hall(&q.sb.repo, &["inbox", "--notices"]).ok();
    let reds = notices["notices"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["kind"] == "base_red")
        .count();
    assert_eq!(reds, 1, "{notices}");
    // Someone fixes main's CI (a re-run passes): the line moves again.
    q.sb.github().ci(&q.tip()).set("test", CheckState::Success);
    let run = q.daemon();
    assert_eq!(q.merged(), [a.n, b.n], "{}", run.stderr);
    let inbox = q.sb.hall(&q.sb.repo, &["inbox"]).ok();
    assert!(
        !inbox["entries"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["kind"] == "base_red"),
        "{inbox}"
    );

    // #2's merge breaks main too, and nothing else is queued: a tip after a merge is
    // still watched, and so is the stopped line, until the tip is green.
    q.sb.github().ci(&q.tip()).set("test", CheckState::Failure);
    q.daemon();
    let reds = || -> Vec<String> {
        q.sb.hall(&q.sb.repo, &["inbox"]).ok()["entries"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["kind"] == "base_red")
            .map(|e| e["text"].as_str().unwrap().to_string())
            .collect()
    };
    let now_red = reds();
    assert_eq!(now_red.len(), 1, "{now_red:?}");
    assert!(
        now_red[0].ends_with(&format!("Suspects: #{}", b.n)),
        "{now_red:?}"
    );
    q.sb.github().ci(&q.tip()).set("test", CheckState::Success);
    q.daemon();
    assert!(reds().is_empty());
}
