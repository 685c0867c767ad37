//! End to end: every Stage 1 command and every transition, through the real `hall`
//! binary on real git repositories with real worktrees.

use hallmark_tests::sandbox::Sandbox;
use insta::assert_snapshot;
use serde_json::json;

mod people;

fn new_item(sb: &Sandbox, title: &str) -> String {
    let v = sb.hall(&sb.repo, &["new", "--title", title]).ok();
    v["item"].as_str().expect("item id").to_string()
}

#[test]
fn init_writes_everything_once_and_is_idempotent() {
    let sb = Sandbox::new();
    std::fs::write(sb.repo.join("CLAUDE.md"), "# House rules\n\nBe kind.\n").expect("write");
    let first = sb.hall(&sb.repo, &["init"]);
    assert_snapshot!(sb.snap(&first));
    let claude = std::fs::read_to_string(sb.repo.join("CLAUDE.md")).expect("read");
    assert!(
        claude.starts_with("# House rules\n\nBe kind.\n"),
        "existing text kept: {claude}"
    );
    assert_eq!(claude.matches("<!-- hallmark:start -->").count(), 1);
    assert!(sb.repo.join(".git/hallmark/items").is_dir());
    assert!(sb.repo.join(".git/hallmark/counters.json").is_file());
    assert!(sb.repo.join(".hallmark/review.md").is_file());
    let config = std::fs::read_to_string(sb.repo.join(".hallmark.toml")).expect("config");
    assert!(
        config.contains("base = \"main\""),
        "base detected from origin/HEAD: {config}"
    );
    let registry = std::fs::read_to_string(sb.root.join("data/repos.json")).expect("registered");
    assert!(registry.contains(sb.repo.to_str().expect("utf8")));

    let again = sb.hall(&sb.repo, &["init"]).ok();
    assert_eq!(again["wrote"], json!([]), "a second init changes nothing");
    let claude2 = std::fs::read_to_string(sb.repo.join("CLAUDE.md")).expect("read");
    assert_eq!(claude, claude2);
}

#[test]
fn init_options() {
    let sb = Sandbox::new();
    let v = sb
        .hall(
            &sb.repo,
            &[
                "init",
                "--no-claude-md",
                "--capture",
                "off",
                "--base",
                "trunk",
            ],
        )
        .ok();
    assert_eq!(v["base"], "trunk");
    assert!(!sb.repo.join("CLAUDE.md").exists());
    let config = std::fs::read_to_string(sb.repo.join(".hallmark.toml")).expect("config");
    assert!(config.contains("mode = \"off\""), "{config}");
    // A repeat with a different --capture is refused rather than silently ignored.
    sb.hall(&sb.repo, &["init", "--capture", "gate"])
        .err("USAGE", 2);
    // AGENTS.md is used when it is the file the repo has.
    let sb = Sandbox::new();
    std::fs::write(sb.repo.join("AGENTS.md"), "rules\n").expect("write");
    sb.hall(&sb.repo, &["init"]).ok();
    assert!(!sb.repo.join("CLAUDE.md").exists());
    assert!(
        std::fs::read_to_string(sb.repo.join("AGENTS.md"))
            .expect("read")
            .contains("hallmark:end")
    );
}

#[test]
fn commands_before_init_and_outside_a_repo_say_what_to_do() {
    let sb = Sandbox::new();
    let v = sb.hall(&sb.repo, &["status"]).err("NOT_INITIALIZED", 3);
    assert_eq!(v["error"]["next"][0], "hall init");
    sb.hall(&sb.home, &["status"]).err("NOT_A_REPO", 3);
    sb.hall(&sb.home, &["init"]).err("NOT_A_REPO", 3);
}

#[test]
fn new_makes_an_item_branch_and_worktree() {
    let sb = Sandbox::initialized();
    let run = sb.hall(
        &sb.repo,
        &[
            "new",
            "Users can't log in with SSO.\nSee the logs.",
            "--title",
            "Fix SSO login",
        ],
    );
    assert_snapshot!(sb.snap(&run));
    let wt = sb.worktree("H-0001");
    assert!(
        wt.join("README.md").is_file(),
        "the worktree is a real checkout"
    );
    assert_eq!(
        sb.git(&wt, &["branch", "--show-current"]),
        "hm/H-0001-fix-sso-login"
    );
    // The title defaults to the request's first line; a second item gets the next id.
    let v = sb.hall(&sb.repo, &["new", "Add a dark mode"]).ok();
    assert_eq!(v["item"], "H-0002");
    assert_eq!(v["title"], "Add a dark mode");
    // --branch overrides the template; a taken branch is refused and no item is left behind.
    let v = sb
        .hall(&sb.repo, &["new", "--title", "x", "--branch", "feature/x"])
        .ok();
    assert_eq!(v["branch"], "feature/x");
    sb.hall(&sb.repo, &["new", "--title", "y", "--branch", "feature/x"])
        .err("WRONG_STATE", 4);
    let all = sb.hall(&sb.repo, &["status", "--all"]).ok();
    assert_eq!(all["items"].as_array().map(Vec::len), Some(3));
    sb.hall(&sb.repo, &["new"]).err("USAGE", 2);
}

#[test]
fn new_from_an_issue_reads_it_with_gh() {
    let sb = Sandbox::initialized();
    sb.hall(&sb.repo, &["new", "--issue", "212"])
        .err("GH_UNAVAILABLE", 1);
    // With GitHub reachable but no such issue, gh's refusal is passed on.
    let github = sb.github();
    sb.hall(&sb.repo, &["new", "--issue", "212"])
        .err("GH_UNAVAILABLE", 1);
    let n = github.add_issue("Export is slow", "It takes 40 s.");
    let v = sb.hall(&sb.repo, &["new", "--issue", &n.to_string()]).ok();
    assert_eq!(v["title"], "Export is slow");
    assert_eq!(v["issue"], n);
    let log = sb.hall(&sb.repo, &["log", "H-0001"]).ok();
    assert!(
        log["events"][0]["request"]
            .as_str()
            .expect("request")
            .contains("It takes 40 s.")
    );
    let asked: Vec<_> = github
        .requests()
        .into_iter()
        .filter(|r| r.operation == "IssueByNumber")
        .map(|r| r.variables["number"].clone())
        .collect();
    assert_eq!(asked, [json!(212), json!(n)], "one gh call per attempt");
}

#[test]
fn ids_are_accepted_in_every_form_and_inferred_in_a_worktree() {
    let sb = Sandbox::initialized();
    let id = new_item(&sb, "Forms");
    assert_eq!(id, "H-0001");
    for form in ["1", "H-1", "H-0001", "h-0001"] {
        let v = sb.hall(&sb.repo, &["status", form]).ok();
        assert_eq!(v["item"]["id"], "H-0001", "{form}");
    }
    sb.hall(&sb.repo, &["status", "H-x"]).err("USAGE", 2);
    sb.hall(&sb.repo, &["status", "99"])
        .err("ITEM_NOT_FOUND", 3);
    // In the worktree (and below it) the id is optional; in the main checkout it is not.
    let wt = sb.worktree("H-0001");
    std::fs::create_dir_all(wt.join("src/deep")).expect("mkdir");
    let v = sb.hall(&wt.join("src/deep"), &["log"]).ok();
    assert_eq!(v["item"], "H-0001");
    sb.hall(&sb.repo, &["ready"]).err("NO_ITEM", 3);
}

#[test]
fn ready_freezes_head_and_is_idempotent() {
    let sb = Sandbox::initialized();
    let id = new_item(&sb, "Ready");
    let wt = sb.worktree(&id);
    std::fs::write(wt.join("work.txt"), "draft").expect("write");
    let dirty = sb.hall(&wt, &["ready"]);
    assert_snapshot!("ready_dirty", sb.snap(&dirty));
    dirty.err("DIRTY_WORKTREE", 4);
    let sha = sb.commit(&wt, "work.txt", "done", "Do the work");
    let run = sb.hall(&wt, &["ready", "--note", "first try"]);
    assert_snapshot!("ready_ok", sb.snap(&run));
    let v = run.ok();
    assert_eq!(v["sha"], sha.as_str());
    assert_eq!(v["state"], "checks");
    // Queued for the assayer: derived from the state, no ticket file to keep in step.
    let status = sb.hall(&wt, &["status", &id]).ok();
    assert_eq!(status["now"]["queued"], true, "{status}");
    assert_eq!(status["item"]["sha"], sha.as_str());
    // Same SHA: the current result, nothing recorded.
    let again = sb.hall(&wt, &["ready"]).ok();
    assert_eq!(again["changed"], false);
    // Another SHA: ITEM_IN_REVIEW with pull-back offered.
    sb.commit(&wt, "more.txt", "more", "More work");
    let other = sb.hall(&wt, &["ready"]);
    assert_snapshot!("ready_in_review", sb.snap(&other));
    let e = other.err("ITEM_IN_REVIEW", 4);
    assert_eq!(
        e["error"]["next"][0],
        format!("hall pull-back {id} && hall ready {id}")
    );
    let log = sb.hall(&wt, &["log", "--kind", "ready"]).ok();
    assert_eq!(
        log["events"].as_array().map(Vec::len),
        Some(1),
        "exactly one ready recorded"
    );
}

#[test]
fn pull_back_returns_to_development_and_clears_the_queue() {
    let sb = Sandbox::initialized();
    let id = new_item(&sb, "Pull");
    let wt = sb.worktree(&id);
    sb.commit(&wt, "a.txt", "a", "a");
    sb.hall(&wt, &["ready"]).ok();
    assert_eq!(sb.hall(&wt, &["status", &id]).ok()["now"]["queued"], true);
    let run = sb.hall(&wt, &["pull-back", "--reason", "not yet"]);
    assert_snapshot!(sb.snap(&run));
    assert_eq!(
        sb.hall(&wt, &["status", &id]).ok()["now"]["queued"],
        false,
        "no longer waiting for the assayer"
    );
    let again = sb.hall(&wt, &["pull-back"]).ok();
    assert_eq!(
        again["changed"], false,
        "pull-back in development is a repeat, not an error"
    );
    // And ready works again at a new SHA.
    sb.commit(&wt, "b.txt", "b", "b");
    assert_eq!(sb.hall(&wt, &["ready"]).ok()["round"], 2);
}

#[test]
fn propose_ready_goes_to_checks_or_waits_for_you() {
    let sb = Sandbox::initialized();
    let a = new_item(&sb, "Auto");
    let wt = sb.worktree(&a);
    sb.commit(&wt, "a.txt", "a", "a");
    let v = sb
        .hall(
            &wt,
            &[
                "propose-ready",
                "--summary",
                "Done",
                "--why",
                "asked",
                "--how",
                "simply",
            ],
        )
        .ok();
    assert_eq!(v["state"], "checks", "auto_ready with nothing to confirm");

    let b = new_item(&sb, "Asking");
    let wt = sb.worktree(&b);
    sb.commit(&wt, "b.txt", "b", "b");
    let run = sb.hall(&wt, &["propose-ready", "--summary", "Done?", "--ask"]);
    assert_snapshot!(sb.snap(&run));
    assert_eq!(run.ok()["state"], "awaiting_you");
    let inbox = sb.hall(&sb.repo, &["inbox"]).ok();
    assert_eq!(inbox["entries"][0]["kind"], "ready?");
    // A person says yes, or not yet.
    let v = sb.hall(&sb.repo, &["ready", &b]).ok();
    assert_eq!(v["state"], "checks");

    let c = new_item(&sb, "Open question");
    let wt = sb.worktree(&c);
    sb.hall(&wt, &["ask", "billed or raw?"]).ok();
    sb.commit(&wt, "c.txt", "c", "c");
    let v = sb.hall(&wt, &["propose-ready", "--summary", "Done"]).ok();
    assert_eq!(
        v["state"], "awaiting_you",
        "an open question is left to confirm"
    );
    let v = sb
        .hall(&sb.repo, &["pull-back", &c, "--reason", "answer first"])
        .ok();
    assert_eq!(v["state"], "development");
    // propose-ready also refuses a dirty worktree.
    std::fs::write(wt.join("d.txt"), "d").expect("write");
    sb.hall(&wt, &["propose-ready", "--summary", "x"])
        .err("DIRTY_WORKTREE", 4);
}

#[test]
fn config_comes_from_the_base_branch_as_committed() {
    let sb = Sandbox::initialized();
    let config = std::fs::read_to_string(sb.repo.join(".hallmark.toml")).expect("config");
    std::fs::write(
        sb.repo.join(".hallmark.toml"),
        format!("auto_ready = false\n{config}"),
    )
    .expect("write");
    sb.git(&sb.repo, &["commit", "-qam", "Ask before review"]);
    let id = new_item(&sb, "Loosen");
    let wt = sb.worktree(&id);
    // The item's branch tries to loosen the rule for itself.
    std::fs::write(wt.join(".hallmark.toml"), "auto_ready = true\n").expect("write");
    sb.git(&wt, &["add", ".hallmark.toml"]);
    sb.git(&wt, &["commit", "-q", "-m", "loosen"]);
    // So does an uncommitted edit in the main checkout.
    std::fs::write(sb.repo.join(".hallmark.toml"), "auto_ready = true\n").expect("write");
    let v = sb.hall(&wt, &["propose-ready", "--summary", "Done"]).ok();
    assert_eq!(
        v["state"], "awaiting_you",
        "the base branch's committed auto_ready = false rules"
    );
}

#[test]
fn a_standing_rebase_request_blocks_ready_until_the_branch_is_on_its_base() {
    let sb = Sandbox::initialized();
    let id = new_item(&sb, "Rebase");
    let wt = sb.worktree(&id);
    sb.commit(&wt, "a.txt", "a", "a");
    sb.commit(&sb.repo, "base.txt", "new on main", "main moves on");
    sb.record(
        &id,
        "daemon",
        json!({"event": "rebase_requested", "base": "main"}),
    );
    let run = sb.hall(&wt, &["ready"]);
    assert_snapshot!(sb.snap(&run));
    run.err("WRONG_STATE", 4);
    sb.hall(&wt, &["propose-ready", "--summary", "x", "--ask"])
        .err("WRONG_STATE", 4);
    let status = sb.hall(&wt, &["status", &id]).ok();
    assert_eq!(
        status["item"]["rebase_requested"], "main",
        "the request is kept"
    );
    sb.git(&wt, &["rebase", "-q", "main"]);
    let v = sb.hall(&wt, &["ready"]).ok();
    assert_eq!(v["state"], "checks");
    let status = sb.hall(&wt, &["status", &id]).ok();
    assert!(
        status["item"].get("rebase_requested").is_none(),
        "a ready on the base clears it"
    );
}

/// Walks an item through the loop with the events the Assay Office and Repair Shop
/// write, checking each state and what a person can do there.
#[test]
fn the_loop_states_and_what_a_person_can_do_in_them() {
    let sb = Sandbox::initialized();
    let id = new_item(&sb, "Loop");
    let wt = sb.worktree(&id);
    let sha = sb.commit(&wt, "a.txt", "a", "a");
    sb.hall(&wt, &["ready"]).ok();
    let state = |sb: &Sandbox| {
        sb.hall(&sb.repo, &["status", &id]).ok()["item"]["state"]
            .as_str()
            .expect("s")
            .to_string()
    };

    // checks → fixing, three times in a row: held for you.
    for n in 1..=3 {
        sb.record(
            &id,
            "assayer",
            json!({"event": "checks_failed", "sha": sha, "failed": ["cargo test"]}),
        );
        if n == 3 {
            sb.record(&id, "assayer", json!({"event": "held", "kind": "checks", "reason": "checks failed 3 times in a row"}));
        }
        assert_eq!(state(&sb), "fixing");
        if n < 3 {
            sb.record(&id, "fixer", json!({"event": "fix_submitted", "sha": sha}));
        }
    }
    let inbox = sb.hall(&sb.repo, &["inbox"]).ok();
    assert_eq!(inbox["entries"][0]["kind"], "checks");
    let retry = sb.hall(&sb.repo, &["retry", &id, "--reason", "flaky runner fixed"]);
    assert_snapshot!("retry_releases_hold", sb.snap(&retry));
    assert!(retry.ok().get("hold").is_none());

    // fixing → checks → review → fixing ×3 → escalated.
    for n in 1..=3 {
        sb.record(&id, "fixer", json!({"event": "fix_submitted", "sha": sha}));
        sb.record(
            &id,
            "assayer",
            json!({"event": "checks_passed", "sha": sha}),
        );
        assert_eq!(state(&sb), "review");
        sb.record(
            &id,
            "assayer",
            json!({"event": "verdict", "sha": sha, "round": n, "approved": false}),
        );
        if n == 3 {
            sb.record(
                &id,
                "assayer",
                json!({"event": "escalated", "reason": "3 rejected reviews"}),
            );
        }
    }
    assert_eq!(state(&sb), "escalated");
    let inbox = sb.hall(&sb.repo, &["inbox"]);
    assert_snapshot!("inbox_escalated", sb.snap(&inbox));
    sb.hall(&sb.repo, &["ready", &id]).err("WRONG_STATE", 4);
    let v = sb
        .hall(&sb.repo, &["retry", &id, "--reason", "one more"])
        .ok();
    assert_eq!(v["state"], "fixing");

    // fixing → checks → review → hallmarked; pull-back from there too.
    sb.record(&id, "fixer", json!({"event": "fix_submitted", "sha": sha}));
    sb.approve(&id, &sha, 5);
    assert_eq!(state(&sb), "hallmarked");
    assert_eq!(
        sb.hall(&wt, &["ready"]).ok()["changed"],
        false,
        "ready at the hallmarked SHA is a repeat"
    );
    sb.hall(&sb.repo, &["retry", &id, "--reason", "x"])
        .err("WRONG_STATE", 4);
    // hallmarked → closed by the shipper; closed is the end.
    sb.record(
        &id,
        "shipper",
        json!({"event": "shipped", "sha": sha, "pr": "https://github.com/o/r/pull/9"}),
    );
    assert_eq!(state(&sb), "closed");
    sb.hall(&sb.repo, &["drop", &id, "--reason", "x"])
        .err("WRONG_STATE", 4);
    sb.hall(&sb.repo, &["pull-back", &id]).err("WRONG_STATE", 4);
    let log = sb.hall(&sb.repo, &["log", &id, "--limit", "3"]);
    assert_snapshot!("log_tail", sb.snap(&log));
}

#[test]
fn pull_back_from_review_fixing_escalated_and_hallmarked() {
    for path in [
        vec![json!({"event": "checks_passed", "sha": "s"})],
        vec![json!({"event": "checks_failed", "sha": "s", "failed": []})],
        vec![
            json!({"event": "checks_passed", "sha": "s"}),
            json!({"event": "verdict", "sha": "s", "round": 1, "approved": false}),
            json!({"event": "escalated", "reason": "r"}),
        ],
        vec![
            json!({"event": "checks_passed", "sha": "s"}),
            json!({"event": "hallmarked", "sha": "s", "round": 1}),
        ],
    ] {
        let sb = Sandbox::initialized();
        let id = new_item(&sb, "P");
        let wt = sb.worktree(&id);
        sb.commit(&wt, "a.txt", "a", "a");
        sb.hall(&wt, &["ready"]).ok();
        for e in path {
            sb.record(&id, "assayer", e);
        }
        let v = sb.hall(&wt, &["pull-back", "--reason", "rethink"]).ok();
        assert_eq!(v["state"], "development");
        assert_eq!(v["changed"], true);
    }
}

#[test]
fn drop_needs_a_reason_removes_the_worktree_and_keeps_branch_and_journal() {
    let sb = Sandbox::initialized();
    let id = new_item(&sb, "Drop me");
    let wt = sb.worktree(&id);
    sb.hall(&sb.repo, &["drop", &id]).err("USAGE", 2);
    let run = sb.hall(&sb.repo, &["drop", &id, "--reason", "superseded"]);
    assert_snapshot!(sb.snap(&run));
    assert!(!wt.exists(), "worktree removed");
    assert_eq!(
        sb.git(&sb.repo, &["branch", "--list", "hm/H-0001-drop-me"]),
        "hm/H-0001-drop-me"
    );
    assert_eq!(
        sb.hall(&sb.repo, &["drop", &id, "--reason", "again"]).ok()["changed"],
        false
    );
    sb.hall(&sb.repo, &["ready", &id]).err("WRONG_STATE", 4);
    assert_eq!(
        sb.hall(&sb.repo, &["status"]).ok()["items"],
        json!([]),
        "dropped items leave the list"
    );
    assert_eq!(
        sb.hall(&sb.repo, &["status", "--all"]).ok()["items"][0]["state"],
        "dropped"
    );

    // --keep-worktree, and a dirty worktree is never removed by force.
    let id = new_item(&sb, "Keep me");
    let wt = sb.worktree(&id);
    let v = sb
        .hall(
            &sb.repo,
            &["drop", &id, "--reason", "later", "--keep-worktree"],
        )
        .ok();
    assert_eq!(v["worktree_removed"], false);
    assert!(wt.exists());
    let id = new_item(&sb, "Dirty");
    let wt = sb.worktree(&id);
    std::fs::write(wt.join("unsaved.txt"), "precious").expect("write");
    let v = sb.hall(&sb.repo, &["drop", &id, "--reason", "no"]).ok();
    assert_eq!(v["worktree_removed"], false);
    assert!(wt.join("unsaved.txt").exists(), "nothing lost");
}

#[test]
fn retry_with_nothing_to_retry_is_refused() {
    let sb = Sandbox::initialized();
    let id = new_item(&sb, "R");
    sb.hall(&sb.repo, &["retry", &id, "--reason", "x"])
        .err("WRONG_STATE", 4);
    // A budget hold releases and grants tokens (another per_item unless --tokens).
    sb.record(
        &id,
        "daemon",
        json!({"event": "held", "kind": "budget", "reason": "per_item reached"}),
    );
    let v = sb
        .hall(
            &sb.repo,
            &["retry", &id, "--reason", "worth it", "--tokens", "200k"],
        )
        .ok();
    assert!(v.get("hold").is_none());
    let s = sb.hall(&sb.repo, &["status", &id]).ok();
    assert_eq!(s["item"]["tokens_granted"], 200_000);
    sb.record(
        &id,
        "daemon",
        json!({"event": "held", "kind": "budget", "reason": "again"}),
    );
    sb.hall(&sb.repo, &["retry", &id, "--reason", "default grant"])
        .ok();
    let s = sb.hall(&sb.repo, &["status", &id]).ok();
    assert_eq!(s["item"]["tokens_granted"], 1_000_000);
    sb.hall(
        &sb.repo,
        &["retry", &id, "--reason", "x", "--tokens", "lots"],
    )
    .err("USAGE", 2);
}

#[test]
fn adopt_turns_the_current_branch_into_an_item() {
    let sb = Sandbox::initialized();
    sb.hall(&sb.repo, &["adopt"]).err("WRONG_STATE", 4);
    sb.git(&sb.repo, &["switch", "-q", "-c", "feature/search"]);
    let run = sb.hall(&sb.repo, &["adopt", "--title", "Search"]);
    assert_snapshot!(sb.snap(&run));
    let again = sb.hall(&sb.repo, &["adopt"]).ok();
    assert_eq!(again["outcome"], "existing");
    assert_eq!(again["item"], "H-0001");
    // A worktree made by hand works the same, and --base stacks it.
    sb.git(
        &sb.repo,
        &["worktree", "add", "-q", "-b", "feature/two", "../two"],
    );
    let v = sb
        .hall(&sb.root.join("two"), &["adopt", "--base", "feature/search"])
        .ok();
    assert_eq!(v["base"], "feature/search");
    assert_eq!(v["worktree"], sb.root.join("two").display().to_string());
}

#[test]
fn adopt_a_pr_and_reopen_a_shipped_item_whose_pr_is_open() {
    let sb = Sandbox::initialized();
    let github = sb.github();
    // Someone else's PR branch exists only on origin.
    sb.git(&sb.repo, &["switch", "-q", "-c", "their-fix"]);
    sb.commit(&sb.repo, "fix.txt", "fix", "their fix");
    sb.git(&sb.repo, &["push", "-q", "origin", "their-fix"]);
    sb.git(&sb.repo, &["switch", "-q", "main"]);
    sb.git(&sb.repo, &["branch", "-q", "-D", "their-fix"]);
    let n = github.open_pr("their-fix", "main", "Their fix", "octocat");
    let v = sb.hall(&sb.repo, &["adopt", "--pr", &n.to_string()]).ok();
    assert_eq!(v["title"], "Their fix");
    assert_eq!(v["pr"], github.pr_url(n));
    let wt = std::path::PathBuf::from(v["worktree"].as_str().expect("worktree"));
    assert!(
        wt.join("fix.txt").is_file(),
        "the PR's branch is checked out"
    );
    let id = v["item"].as_str().expect("id").to_string();
    // Ship it, then adopt again while the PR is open: closed → development.
    let sha = sb.git(&wt, &["rev-parse", "HEAD"]);
    sb.hall(&wt, &["ready"]).ok();
    for e in [
        json!({"event": "checks_passed", "sha": sha}),
        json!({"event": "hallmarked", "sha": sha, "round": 1}),
        json!({"event": "shipped", "sha": sha, "pr": github.pr_url(n)}),
    ] {
        sb.record(&id, "assayer", e);
    }
    let v = sb.hall(&wt, &["adopt"]).ok();
    assert_eq!(v["outcome"], "reopened");
    assert_eq!(v["state"], "development");
    // Once the PR is merged, a closed item stays closed.
    for e in [
        json!({"event": "ready", "sha": sha, "round": 2}),
        json!({"event": "checks_passed", "sha": sha}),
        json!({"event": "hallmarked", "sha": sha, "round": 2}),
        json!({"event": "shipped", "sha": sha}),
    ] {
        sb.record(&id, "assayer", e);
    }
    sb.git(&sb.repo, &["fetch", "-q", "origin"]);
    let merged = sb.sh(&sb.repo, &format!("gh pr merge {n} --merge"), &[]);
    assert_eq!(merged.code, 0, "{}", merged.stderr);
    assert_eq!(
        github.pr(n).expect("pr").state,
        hallmark_tests::github::PrState::Merged
    );
    sb.hall(&wt, &["adopt"]).err("WRONG_STATE", 4);
}
