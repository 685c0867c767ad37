//! The review loop end to end: checks, the reviewer, the fixer and the
//! shipper, driven by the daemon on real git with a bare `origin`, with stand-ins only
//! for what can't run here: `gh` and the model (`claude`, scripted, printing real
//! stream-json).

#![allow(clippy::unwrap_used)] // a panic is how a test fails

use std::path::Path;

use crate::common::*;

#[test]
fn reject_fix_approve_ship_close() {
    let l = Loop::new(
        CONFIG,
        json!({"review": [reject(), approve()], "fix": [fix("attempts <= 3", ""), fix("attempts <= 3 # inclusive", "F1")]}),
    );
    // The first commit fails its gate: the fixer must see the condensed failure.
    l.sb.hall(&l.wt, &["ready"]).ok();
    let run = l.daemon();
    let log: Vec<String> = run["log"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["did"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(l.kinds(), TWO_ROUNDS_TO_SHIP, "daemon log: {log:#?}");
    let status = l.status();
    assert_eq!(status["item"]["state"], "closed");
    let sha = status["item"]["hallmark"]
        .as_str()
        .expect("hallmark")
        .to_string();
    assert_eq!(sha, l.sb.git(&l.wt, &["rev-parse", "HEAD"]).trim());
    // The note is on that exact commit, struck by the assayer, and it verifies.
    let note: Value = serde_json::from_str(
        &l.sb
            .git(&l.sb.repo, &["notes", "--ref=hallmark", "show", &sha]),
    )
    .expect("note");
    assert_eq!(note["sha"], sha.as_str());
    assert_eq!(note["actor"], "assayer");
    assert_eq!(note["round"], 3);
    assert_eq!(note["open_findings"], json!(["F2"]));
    assert_eq!(note["v"], 3, "a signed hallmark that names its base");
    assert_eq!(
        note["base"],
        l.sb.git(&l.sb.repo, &["merge-base", "main", &sha]),
        "measured from where the branch left main"
    );
    assert_eq!(note["signer"], "ada@example.com");
    // The push gate now lets that commit be pushed from the worktree.
    let (out, _) = l.bash_hook("agent", "git push origin HEAD");
    assert!(!out.contains("\"deny\""), "{out}");
    // Shipped: the branch is on origin, the PR exists with the review posted.
    let branch = status["item"]["branch"].as_str().unwrap();
    assert_eq!(l.sb.git(&l.sb.origin, &["rev-parse", branch]).trim(), sha);
    let github = l.sb.github();
    assert_eq!(status["item"]["pr"], github.pr_url(1));
    let pr = github.pr(1).expect("the PR is open on GitHub");
    assert_eq!(
        (pr.head.as_str(), pr.head_oid.as_str()),
        (branch, sha.as_str())
    );
    let comment = pr.comments[0].body.as_str();
    assert!(
        comment.contains("Round 2: changes requested") && comment.contains("Round 3: approved"),
        "{comment}"
    );
    // The reviewer ran as the plugin's agent, isolated and confined, with the schema.
    let calls = l.claude_calls();
    let review = calls
        .iter()
        .find(|c| c["env"]["HALL_ACTOR"] == "assayer")
        .expect("a review run");
    let args: Vec<&str> = review["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    for flag in [
        "-p",
        "--plugin-dir",
        "--json-schema",
        "--verbose",
        "--strict-mcp-config",
        "--settings",
        "--max-budget-usd",
    ] {
        assert!(args.contains(&flag), "{flag} missing from {args:?}");
    }
    let at = |f: &str| args[args.iter().position(|a| *a == f).unwrap() + 1];
    assert_eq!(at("--agent"), "hallmark:principal-engineer");
    assert_eq!(at("--setting-sources"), "user");
    assert_eq!(at("--output-format"), "stream-json");
    assert_eq!(review["env"]["CLAUDE_CODE_DISABLE_CLAUDE_MDS"], "1");
    let settings: Value = serde_json::from_str(at("--settings")).unwrap();
    assert_eq!(settings["disableAllHooks"], true);
    assert_eq!(settings["sandbox"]["enabled"], true);
    assert!(
        Path::new(at("--plugin-dir"))
            .join("agents/principal-engineer.md")
            .is_file()
    );
    // Round 3 reads only what changed since round 2, with the open finding.
    let last_prompt = args.last().unwrap();
    assert!(!last_prompt.is_empty());
    let prompts: Vec<String> = calls
        .iter()
        .filter(|c| c["env"]["HALL_ACTOR"] == "assayer")
        .map(|c| {
            c["args"]
                .as_array()
                .unwrap()
                .last()
                .unwrap()
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert!(prompts[0].contains("The whole change"), "{}", prompts[0]);
    assert!(
        prompts[1].contains("Review only what changed since then")
            && prompts[1].contains("F1 [major, correctness] lib.txt:1"),
        "{}",
        prompts[1]
    );
    assert!(prompts[1].contains("the fixer says it is fixed"));
    let fixer = calls
        .iter()
        .find(|c| c["env"]["HALL_ACTOR"] == "fixer")
        .expect("a fix run");
    let fargs: Vec<&str> = fixer["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert!(fargs.contains(&"hallmark:fixer") && fargs.contains(&"acceptEdits"));
    assert_eq!(fixer["cwd"], l.wt.display().to_string());
    // Usage and costs of every run, by role.
    let usage = l.sb.hall(&l.sb.repo, &["usage", "--by", "role"]).ok();
    let rows = usage["rows"].as_array().expect("rows");
    let role = |r: &str| {
        rows.iter()
            .find(|x| x["key"] == r)
            .cloned()
            .unwrap_or_default()
    };
    assert_eq!(role("review")["runs"], 2);
    assert!(role("review")["cost_usd"].as_f64().unwrap() > 0.0);
    assert!(role("fix")["cost_usd"].as_f64().unwrap() > 0.0);
    // Every run is on disk with its end line, and trace reads it.
    let trace = l.sb.hall(&l.sb.repo, &["trace", &l.id]).ok();
    assert_eq!(trace["run"]["ended"], true);
    assert!(
        trace["steps"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s.as_str().unwrap().starts_with("ended: exit 0"))
    );
}

#[test]
fn failing_gates_go_to_the_fixer_and_hold_after_max_check_failures() {
    // A fixer that commits but never fixes the gate.
    let cfg = format!("{CONFIG}max_check_failures = 2\n");
    let l = Loop::new(
        &cfg,
        json!({"fix": [{"sh": "echo more >> notes.txt && git add notes.txt && git commit -qm 'Try again' && hall fixed"}]}),
    );
    l.sb.hall(&l.wt, &["ready"]).ok();
    l.daemon();
    assert_eq!(
        l.kinds(),
        [
            "created",
            "ready",
            "checks_failed",
            "fix_submitted",
            "checks_failed",
            "held"
        ]
    );
    let status = l.status();
    assert_eq!(status["item"]["state"], "fixing");
    assert_eq!(status["item"]["hold"]["kind"], "checks");
    // The failure reaches the fixer condensed, with the full log to drill into.
    let f = l.sb.hall(&l.wt, &["findings"]).ok();
    let check = &f["checks"][0];
    assert_eq!(check["check"], "sh check.sh");
    assert!(
        check["output"]
            .as_str()
            .unwrap()
            .contains("lib.txt:1: expected <= in the limit check"),
        "{check}"
    );
    let log = check["log"].as_str().unwrap();
    let shown =
        l.sb.hall(&l.sb.repo, &["run", "--show", log, "--json"])
            .ok();
    assert!(
        shown.to_string().contains("error: 1 check failed"),
        "{shown}"
    );
    // The inbox has it, and retry releases it.
    let inbox = l.sb.hall(&l.sb.repo, &["inbox"]).ok();
    assert!(inbox.to_string().contains("\"checks\""), "{inbox}");
    l.sb.hall(
        &l.sb.repo,
        &["retry", &l.id, "--reason", "gate fixed upstream"],
    )
    .ok();
    assert!(l.status()["item"]["hold"].is_null());
}

#[test]
fn the_checks_cache_serves_a_pass_on_the_same_tree() {
    let l = Loop::new(CONFIG, json!({"review": [approve()]}));
    l.sb.commit(
        &l.wt,
        "lib.txt",
        "attempts <= 3\n",
        "Cap retries at 3, inclusive",
    );
    l.sb.hall(&l.wt, &["ready"]).ok();
    l.daemon();
    // A second item whose commit has the very same tree: its gate pass is served.
    let v = l.sb.hall(&l.sb.repo, &["new", "--title", "Same tree"]).ok();
    let id2 = v["item"].as_str().unwrap().to_string();
    let wt2 = l.sb.worktree(&id2);
    l.sb.commit(&wt2, "lib.txt", "attempts < 3\n", "First try");
    l.sb.commit(
        &wt2,
        "lib.txt",
        "attempts <= 3\n",
        "Cap retries at 3, inclusive",
    );
    l.sb.hall(&wt2, &["ready"]).ok();
    l.daemon();
    let runs = l.events_of(&id2, "check_run");
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0]["cached"], true, "{:?}", runs[0]);
    // A gate listed in gates_no_cache always runs.
    let cfg = format!("{CONFIG}gates_no_cache = [\"sh check.sh\"]\n");
    std::fs::write(l.sb.repo.join(".hallmark.toml"), cfg).unwrap();
    l.sb.git(&l.sb.repo, &["commit", "-qam", "Never cache the gate"]);
    let v = l.sb.hall(&l.sb.repo, &["new", "--title", "Uncached"]).ok();
    let id3 = v["item"].as_str().unwrap().to_string();
    let wt3 = l.sb.worktree(&id3);
    l.sb.commit(
        &wt3,
        "lib.txt",
        "attempts <= 3\n",
        "Cap retries at 3, inclusive",
    );
    l.sb.hall(&wt3, &["ready"]).ok();
    l.daemon();
    let runs = l.events_of(&id3, "check_run");
    assert_eq!(runs[0]["cached"], false, "{:?}", runs[0]);
}

#[test]
fn max_rejects_escalates_and_retry_allows_one_more_round() {
    let cfg = format!("{CONFIG}max_rejects = 2\n");
    let l = Loop::ready(
        &cfg,
        json!({"review": [reject()], "fix": [fix("attempts <= 3 # a", "F1"), fix("attempts <= 3 # b", "F2")]}),
    );
    l.daemon();
    assert_eq!(l.status()["item"]["state"], "escalated");
    let verdicts = l.of_kind("verdict").len();
    assert_eq!(verdicts, 2);
    let inbox = l.sb.hall(&l.sb.repo, &["inbox"]).ok();
    assert!(inbox.to_string().contains("escalated"), "{inbox}");
}

#[test]
fn a_review_without_structured_output_is_a_failed_run_and_two_hold() {
    let l = Loop::ready(CONFIG, json!({"review": [{"text": "Looks fine to me."}]}));
    l.daemon();
    let status = l.status();
    assert_eq!(status["item"]["state"], "review");
    assert_eq!(status["item"]["hold"]["kind"], "run_failed");
    let failures = l.of_kind("run_failed");
    assert_eq!(failures.len(), 2, "retried once, then held");
    assert!(
        failures[0]["reason"]
            .as_str()
            .unwrap()
            .contains("without structured_output"),
        "{failures:?}"
    );
    // The now block offers the failed run's session to pick up.
    assert!(
        status["now"]["offer"]
            .as_str()
            .unwrap()
            .contains("claude --resume fake-review-"),
        "{}",
        status["now"]
    );
}

/// A verdict the schema accepts and the room refuses: one of the rules the schema's
/// description lists (a line written as 12.0), so only the room can catch it.
#[test]
fn an_invalid_verdict_is_refused_by_the_verdict_room() {
    let bad = json!({"verdict": {"verdict": "approve", "summary": "ok", "lenses": lenses(), "findings": [
        {"lens": "evidence", "severity": "nit", "file": "lib.txt", "line": 1.0, "scenario": "A second example would read better."}
    ]}});
    let l = Loop::ready(CONFIG, json!({"review": [bad, approve()]}));
    l.daemon();
    assert_eq!(l.status()["item"]["state"], "closed");
    let failed = l.of_kind("run_failed");
    assert_eq!(failed.len(), 1);
    let reason = failed[0]["reason"].as_str().unwrap();
    assert!(
        reason.contains("the verdict room refused the verdict")
            && reason.contains("/findings/0/line: must be a positive integer"),
        "{failed:?}"
    );
}

/// The answer that was held after two paid runs (`lenses: []`) can't reach the room:
/// the schema the reviewer is given refuses it, as the real CLI would.
#[test]
fn a_verdict_the_schema_refuses_never_reaches_the_verdict_room() {
    let bad =
        json!({"verdict": {"verdict": "approve", "summary": "ok", "lenses": [], "findings": []}});
    let l = Loop::ready(CONFIG, json!({"review": [bad, approve()]}));
    l.daemon();
    assert_eq!(l.status()["item"]["state"], "closed");
    let failed = l.of_kind("run_failed");
    assert_eq!(failed.len(), 1);
    let reason = failed[0]["reason"].as_str().unwrap();
    assert!(
        reason.contains("does not match --json-schema") && reason.contains("/lenses"),
        "{failed:?}"
    );
    assert!(!reason.contains("verdict room"), "{failed:?}");
}

#[test]
fn a_rebase_that_keeps_the_patch_carries_the_hallmark_to_the_new_commit() {
    let l = shippable_later(json!({"review": [approve()]}));
    let old = l.status()["item"]["hallmark"].as_str().unwrap().to_string();
    // main moves on, on other files.
    l.move_main_then_ship("CHANGELOG.md", "- unrelated\n", "Unrelated change");
    let status = l.status();
    assert_eq!(status["item"]["state"], "closed", "{status}");
    let new = status["item"]["hallmark"].as_str().unwrap().to_string();
    assert_ne!(new, old);
    let rebased = l.of_kind("rebased");
    assert_eq!(rebased.len(), 1);
    assert_eq!(rebased[0]["from"], old.as_str());
    assert_eq!(rebased[0]["sha"], new.as_str());
    assert_eq!(rebased[0]["carried"], true);
    let note: Value = serde_json::from_str(
        &l.sb
            .git(&l.sb.repo, &["notes", "--ref=hallmark", "show", &new]),
    )
    .unwrap();
    assert_eq!(note["sha"], new.as_str());
    assert_eq!(
        note["approved_sha"],
        old.as_str(),
        "the note names the reviewed commit"
    );
    assert_eq!(
        note["actor"], "assayer",
        "the approval is still the assayer's"
    );
    // The shipper signed a new statement for the new commit, naming the approved one,
    // and it verifies against a list that trusts only the sandbox's key.
    assert_eq!(note["v"], 3);
    assert_eq!(
        note["base"],
        l.sb.git(&l.sb.repo, &["rev-parse", "main"]),
        "the carried approval covers what the commit adds to the new base"
    );
    assert_eq!(
        note["tree"],
        l.sb.git(&l.sb.repo, &["rev-parse", &format!("{new}^{{tree}}")])
    );
    let old_note: Value = serde_json::from_str(
        &l.sb
            .git(&l.sb.repo, &["notes", "--ref=hallmark", "show", &old]),
    )
    .unwrap();
    assert_ne!(note["sig"], old_note["sig"], "signed afresh, not copied");
    let signers = l.sb.root.join("allowed_signers");
    std::fs::write(&signers, l.sb.signers_line()).unwrap();
    let verified =
        l.sb.hall(
            &l.sb.repo,
            &[
                "verify",
                &new,
                "--allowed-signers",
                signers.to_str().unwrap(),
            ],
        )
        .ok();
    assert_eq!(verified["approved_sha"], old.as_str());
    assert_eq!(verified["signer"], "ada@example.com");
    // The original approval still verifies on the reviewed commit.
    let original =
        l.sb.hall(
            &l.sb.repo,
            &[
                "verify",
                &old,
                "--allowed-signers",
                signers.to_str().unwrap(),
            ],
        )
        .ok();
    assert!(original["approved_sha"].is_null());
    let verdicts = l.of_kind("verdict");
    assert_eq!(
        verdicts.len(),
        2,
        "the review and its carrying, with no second review run"
    );
    assert_eq!(verdicts[1]["by"], "carried");
    assert_eq!(verdicts[1]["sha"], new.as_str());
    assert_eq!(l.claude_calls().len(), 1);
    let branch = status["item"]["branch"].as_str().unwrap();
    assert_eq!(l.sb.git(&l.sb.origin, &["rev-parse", branch]).trim(), new);
    assert!(
        l.sb.git(
            &l.sb.repo,
            &["merge-base", "--is-ancestor", "origin/main", &new]
        )
        .is_empty()
    );
}

#[test]
fn a_rebase_that_conflicts_returns_the_item_to_development() {
    let l = shippable_later(json!({"review": [approve()]}));
    l.move_main_then_ship(
        "lib.txt",
        "attempts < 5\n",
        "Someone else changed the limit",
    );
    let status = l.status();
    assert_eq!(status["item"]["state"], "development");
    assert!(status["item"]["hallmark"].is_null());
    let back = l.of_kind("pulled_back");
    assert!(
        back[0]["reason"].as_str().unwrap().contains("conflicts"),
        "{back:?}"
    );
    // Nothing was pushed, and the worktree is not left mid-rebase.
    assert!(
        !l.sb
            .git(&l.sb.origin, &["branch", "--list"])
            .contains("hm/")
    );
    let git_status = l.sb.git(&l.wt, &["status"]);
    assert!(!git_status.contains("rebase"), "{git_status}");
}

#[test]
fn a_run_past_its_timeout_is_stopped_and_counts_as_failed() {
    let l = Loop::ready(
        CONFIG,
        json!({"review": [{"sleep": 20, "verdict": approve()["verdict"]}]}),
    );
    let started = std::time::Instant::now();
    l.daemon_with(&[("HALL_RUN_TIMEOUT", "1s")]);
    assert!(
        started.elapsed() < std::time::Duration::from_secs(15),
        "the runs were stopped, not waited out"
    );
    let failed = l.of_kind("run_failed");
    assert_eq!(failed.len(), 2);
    assert!(
        failed[0]["reason"]
            .as_str()
            .unwrap()
            .contains("timed out after 1 s"),
        "{failed:?}"
    );
    assert_eq!(l.status()["item"]["hold"]["kind"], "run_failed");
}

#[test]
fn an_external_fix_engine_gets_the_prompt_and_its_commit_is_resubmitted() {
    // The engine runs in the loop's jail: it reads what is under HOME, and writes only
    // the item's worktree and the git files a commit there writes (so it leaves what it
    // saw in the worktree's own git directory, not in the tree it commits).
    let cfg = format!("{CONFIG}fixer = \"sh $HOME/fix-engine.sh\"\n");
    let l = Loop::new(&cfg, json!({"review": [approve()]}));
    let engine = l.sb.home.join("fix-engine.sh");
    std::fs::write(
        &engine,
        "saw=\"$(git rev-parse --absolute-git-dir)/engine-saw.md\" && cp \"$HALL_PROMPT_FILE\" \"$saw\" && echo \"$HALL_ACTOR\" >> \"$saw\" && printf 'attempts <= 3\\n' > lib.txt && git commit -qam 'Engine fix'\n",
    )
    .unwrap();
    l.sb.hall(&l.wt, &["ready"]).ok();
    l.daemon();
    assert_eq!(l.status()["item"]["state"], "closed");
    let git_dir = l.sb.git(&l.wt, &["rev-parse", "--absolute-git-dir"]);
    let saw = std::fs::read_to_string(Path::new(git_dir.trim()).join("engine-saw.md")).unwrap();
    assert!(
        saw.contains("`sh check.sh` exited 1") && saw.contains("expected <= in the limit check"),
        "{saw}"
    );
    assert!(saw.trim_end().ends_with("fixer"));
    let fixes = l.of_kind("fix_submitted");
    assert_eq!(fixes.len(), 1);
    assert_eq!(fixes[0]["actor"], "fixer");
    assert_eq!(fixes[0]["fixed"], json!([]), "the engine claimed nothing");
}

#[test]
fn an_overloaded_model_falls_back_in_a_run_of_its_own() {
    let overloaded =
        json!({"error": "API Error: 529 {\"type\":\"overloaded_error\"}", "api_error_status": 529});
    let l = Loop::ready(CONFIG, json!({"review": [overloaded, approve()]}));
    l.daemon();
    assert_eq!(l.status()["item"]["state"], "closed");
    assert!(
        l.events().iter().all(|e| e["event"] != "run_failed"),
        "the fallback got through"
    );
    let models: Vec<String> = l
        .claude_calls()
        .iter()
        .filter(|c| c["env"]["HALL_ACTOR"] == "assayer")
        .map(|c| {
            let args = c["args"].as_array().unwrap();
            let i = args.iter().position(|a| a == "--model").unwrap();
            args[i + 1].as_str().unwrap().to_string()
        })
        .collect();
    assert_eq!(models, ["opus", "sonnet"]);
    let verdict = l
        .events()
        .into_iter()
        .find(|e| e["event"] == "verdict")
        .unwrap();
    assert_eq!(verdict["model"], "claude-sonnet-4-5");
    let runs =
        l.sb.repo
            .join(".git/hallmark/items")
            .join(&l.id)
            .join("runs");
    let streams = std::fs::read_dir(&runs)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.extension().is_some_and(|x| x == "jsonl") && p.to_string_lossy().contains("-review")
        })
        .count();
    assert_eq!(streams, 2, "the fallback is a run of its own");
}

#[test]
fn a_rebase_that_changes_the_patch_returns_the_item_for_another_review() {
    // The item changes line 2 of a file; main then changes line 4, which merges cleanly
    // but is in the change's context, so the rebased patch is not the approved one.
    let l = Loop::new(&ship_later_config(), json!({"review": [approve()]}));
    l.sb.commit(&l.sb.repo, "limits.txt", "a\nb\nc\nd\ne\n", "Limits");
    l.sb.git(&l.sb.repo, &["push", "-q", "origin", "main"]);
    l.sb.git(&l.wt, &["rebase", "-q", "main"]);
    l.sb.commit(&l.wt, "lib.txt", "attempts <= 3\n", "Inclusive");
    l.sb.commit(&l.wt, "limits.txt", "a\nB\nc\nd\ne\n", "Raise b");
    l.sb.hall(&l.wt, &["ready"]).ok();
    l.daemon();
    assert_eq!(l.status()["item"]["hold"]["kind"], "ship_failed");
    l.move_main_then_ship("limits.txt", "a\nb\nc\nD\ne\n", "Raise d");
    let status = l.status();
    assert_eq!(status["item"]["state"], "development", "{status}");
    let back = l.of_kind("pulled_back");
    assert!(
        back[0]["reason"]
            .as_str()
            .unwrap()
            .contains("changed the patch"),
        "{back:?}"
    );
    assert!(
        !l.sb
            .git(&l.sb.origin, &["branch", "--list"])
            .contains("hm/"),
        "nothing shipped"
    );
}

#[test]
fn a_huge_diff_is_cut_to_fit_one_argument_and_says_where_the_rest_is() {
    let l = Loop::new(CONFIG, json!({"review": [approve()]}));
    let big: String = (0..20_000)
        .map(|i| format!("line {i} of generated data\n"))
        .collect();
    assert!(big.len() > 300_000);
    l.sb.commit(&l.wt, "data.txt", &big, "Add generated data");
    l.make_ready();
    l.daemon();
    assert_eq!(l.status()["item"]["state"], "closed");
    let call = l
        .claude_calls()
        .into_iter()
        .find(|c| c["env"]["HALL_ACTOR"] == "assayer")
        .unwrap();
    let prompt = call["args"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .as_str()
        .unwrap()
        .to_string();
    assert!(prompt.len() <= 100 * 1024, "{} bytes", prompt.len());
    assert!(
        prompt.contains("diff truncated at") && prompt.contains("read the files in the checkout")
    );
}
