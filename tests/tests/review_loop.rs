//! The review loop end to end: the daemon drives items through checks, the principal
//! engineer, the fixer and the shipper, on real git with a bare `origin`, with stand-ins
//! only for what can't run here: `gh` and the model (`claude`, scripted, printing real
//! stream-json).

#![allow(clippy::unwrap_used)] // a panic is how a test fails

use std::path::{Path, PathBuf};

use hallmark_tests::sandbox::{Run, Sandbox, hall_bin};
use serde_json::{Value, json};

const LENSES: [&str; 7] = [
    "first-principles",
    "correctness",
    "security",
    "data",
    "evidence",
    "operability",
    "repo-rules",
];

fn approve() -> Value {
    json!({"verdict": {"verdict": "approve", "summary": "The change does what it says and is tested.", "lenses": LENSES, "findings": [
        {"lens": "evidence", "severity": "nit", "file": "lib.txt", "line": 1, "scenario": "A second example would read better."}
    ], "learnings_used": []}})
}

fn reject() -> Value {
    json!({"verdict": {"verdict": "reject", "summary": "The limit is off by one.", "lenses": LENSES, "findings": [
        {"lens": "correctness", "severity": "major", "file": "lib.txt", "line": 1, "scenario": "With 3 attempts allowed, the third is refused because the check uses < instead of <=."}
    ], "learnings_used": []}})
}

/// A fixer step: writes `content` to lib.txt, commits and says what it fixed.
fn fix(content: &str, ids: &str) -> Value {
    json!({"sh": format!("printf '%s\\n' '{content}' > lib.txt && git commit -qam 'Fix the limit' && hall fixed {ids}")})
}

struct Loop {
    sb: Sandbox,
    script: PathBuf,
    wt: PathBuf,
    id: String,
}

impl Loop {
    /// A repository whose config is `config` (on main), one item with a commit, ready.
    fn new(config: &str, script: Value) -> Loop {
        let sb = Sandbox::initialized();
        sb.fake("gh", Path::new(env!("CARGO_BIN_EXE_fake-gh")));
        sb.fake("claude", Path::new(env!("CARGO_BIN_EXE_fake-claude")));
        std::os::unix::fs::symlink(hall_bin(), sb.bin.join("hall")).expect("link hall");
        std::fs::write(sb.repo.join(".hallmark.toml"), config).expect("config");
        std::fs::write(sb.repo.join("check.sh"), "grep -q '<=' lib.txt || { echo 'lib.txt:1: expected <= in the limit check'; echo 'error: 1 check failed'; exit 1; }\n").expect("gate");
        sb.git(&sb.repo, &["add", "-A"]);
        sb.git(&sb.repo, &["commit", "-q", "-m", "Configure the loop"]);
        sb.git(&sb.repo, &["push", "-q", "origin", "main"]);
        let script_path = sb.root.join("script.json");
        std::fs::write(&script_path, script.to_string()).expect("script");
        let v = sb.hall(&sb.repo, &["new", "--title", "Cap retries"]).ok();
        let id = v["item"].as_str().expect("id").to_string();
        let wt = sb.worktree(&id);
        sb.commit(&wt, "lib.txt", "attempts < 3\n", "Cap retries at 3");
        Loop {
            sb,
            script: script_path,
            wt,
            id,
        }
    }

    fn hall(&self, dir: &Path, args: &[&str]) -> Run {
        let script = self.script.display().to_string();
        let log = self.sb.root.join("claude").display().to_string();
        self.sb.hall_env(
            dir,
            args,
            &[("FAKE_CLAUDE_SCRIPT", &script), ("FAKE_CLAUDE_LOG", &log)],
        )
    }

    fn daemon(&self) -> Value {
        let run = self.hall(
            &self.sb.repo,
            &["daemon", "run", "--until-idle", "--tick", "0.05"],
        );
        eprintln!("{}", run.stderr);
        run.ok()
    }

    fn events(&self) -> Vec<Value> {
        let v = self
            .sb
            .hall(&self.sb.repo, &["log", &self.id, "--limit", "1000"])
            .ok();
        v["events"].as_array().cloned().unwrap_or_default()
    }

    fn kinds(&self) -> Vec<String> {
        self.events()
            .iter()
            .map(|e| e["event"].as_str().unwrap_or("").to_string())
            .filter(|k| {
                !matches!(
                    k.as_str(),
                    "usage" | "room_used" | "check_run" | "commit" | "notification"
                )
            })
            .collect()
    }

    fn status(&self) -> Value {
        self.sb.hall(&self.sb.repo, &["status", &self.id]).ok()
    }

    fn claude_calls(&self) -> Vec<Value> {
        std::fs::read_to_string(self.sb.root.join("claude.jsonl"))
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).expect("json"))
            .collect()
    }
}

const CONFIG: &str = "base = \"main\"\ngates = [\"sh check.sh\"]\n";

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
    assert_eq!(
        l.kinds(),
        [
            "created",
            "ready",
            "checks_failed",
            "fix_submitted",
            "checks_passed",
            "verdict",
            "fix_submitted",
            "checks_passed",
            "verdict",
            "hallmarked",
            "shipped"
        ],
        "daemon log: {log:#?}"
    );
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
    // The push gate now lets that commit be pushed from the worktree.
    let hook = json!({"session_id": "s1", "transcript_path": "/dev/null", "cwd": l.wt, "hook_event_name": "PreToolUse",
        "tool_name": "Bash", "tool_input": {"command": "git push origin HEAD"}});
    let mut cmd = l.sb.hall_command(&l.wt);
    cmd.args(["hook", "pre-tool-use"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped());
    let mut child = cmd.spawn().expect("hook");
    std::io::Write::write_all(
        &mut child.stdin.take().unwrap(),
        hook.to_string().as_bytes(),
    )
    .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        !String::from_utf8_lossy(&out.stdout).contains("\"deny\""),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    // Shipped: the branch is on origin, the PR exists with the review posted.
    let branch = status["item"]["branch"].as_str().unwrap();
    assert_eq!(l.sb.git(&l.sb.origin, &["rev-parse", branch]).trim(), sha);
    assert_eq!(
        status["item"]["pr"],
        "https://github.com/acme/widgets/pull/1"
    );
    let pr: Value =
        serde_json::from_str(&std::fs::read_to_string(l.sb.root.join("gh/prs/1.json")).unwrap())
            .unwrap();
    assert_eq!(pr["headRefName"], branch);
    let comment = pr["comments"][0]["body"].as_str().unwrap();
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
    assert_eq!(check["gate"], "sh check.sh");
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
    let log = l.sb.hall(&l.sb.repo, &["log", &id2, "--limit", "100"]).ok();
    let runs: Vec<&Value> = log["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["event"] == "check_run")
        .collect();
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
    let log = l.sb.hall(&l.sb.repo, &["log", &id3, "--limit", "100"]).ok();
    let runs: Vec<&Value> = log["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["event"] == "check_run")
        .collect();
    assert_eq!(runs[0]["cached"], false, "{:?}", runs[0]);
}

#[test]
fn max_rejects_escalates_and_retry_allows_one_more_round() {
    let cfg = format!("{CONFIG}max_rejects = 2\n");
    let l = Loop::new(
        &cfg,
        json!({"review": [reject()], "fix": [fix("attempts <= 3 # a", "F1"), fix("attempts <= 3 # b", "F2")]}),
    );
    l.sb.commit(&l.wt, "lib.txt", "attempts <= 3\n", "Inclusive");
    l.sb.hall(&l.wt, &["ready"]).ok();
    l.daemon();
    assert_eq!(l.status()["item"]["state"], "escalated");
    let verdicts = l
        .events()
        .into_iter()
        .filter(|e| e["event"] == "verdict")
        .count();
    assert_eq!(verdicts, 2);
    let inbox = l.sb.hall(&l.sb.repo, &["inbox"]).ok();
    assert!(inbox.to_string().contains("escalated"), "{inbox}");
}

#[test]
fn a_review_without_structured_output_is_a_failed_run_and_two_hold() {
    let l = Loop::new(CONFIG, json!({"review": [{"text": "Looks fine to me."}]}));
    l.sb.commit(&l.wt, "lib.txt", "attempts <= 3\n", "Inclusive");
    l.sb.hall(&l.wt, &["ready"]).ok();
    l.daemon();
    let status = l.status();
    assert_eq!(status["item"]["state"], "review");
    assert_eq!(status["item"]["hold"]["kind"], "run_failed");
    let failures: Vec<Value> = l
        .events()
        .into_iter()
        .filter(|e| e["event"] == "run_failed")
        .collect();
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

#[test]
fn an_invalid_verdict_is_refused_by_the_verdict_room() {
    let bad = json!({"verdict": {"verdict": "approve", "summary": "ok", "lenses": ["correctness"], "findings": []}});
    let l = Loop::new(CONFIG, json!({"review": [bad, approve()]}));
    l.sb.commit(&l.wt, "lib.txt", "attempts <= 3\n", "Inclusive");
    l.sb.hall(&l.wt, &["ready"]).ok();
    l.daemon();
    assert_eq!(l.status()["item"]["state"], "closed");
    let failed: Vec<Value> = l
        .events()
        .into_iter()
        .filter(|e| e["event"] == "run_failed")
        .collect();
    assert_eq!(failed.len(), 1);
    assert!(
        failed[0]["reason"].as_str().unwrap().contains("missing"),
        "{failed:?}"
    );
}

#[test]
fn budgets_hold_items_and_pause_the_daemon() {
    // per_item: the first review spends more than the item may.
    let cfg = format!("{CONFIG}[budget]\nper_item = \"1k\"\n");
    let l = Loop::new(
        &cfg,
        json!({"review": [reject(), approve()], "fix": [fix("attempts <= 3 # a", "F1")]}),
    );
    l.sb.commit(&l.wt, "lib.txt", "attempts <= 3\n", "Inclusive");
    l.sb.hall(&l.wt, &["ready"]).ok();
    l.daemon();
    let status = l.status();
    assert_eq!(status["item"]["state"], "fixing");
    assert_eq!(status["item"]["hold"]["kind"], "budget");
    assert_eq!(l.claude_calls().len(), 1, "no fix run past the cap");
    // retry grants the item another per_item (here: explicit tokens) and the loop goes on.
    l.sb.hall(
        &l.sb.repo,
        &["retry", &l.id, "--reason", "worth it", "--tokens", "1M"],
    )
    .ok();
    l.daemon();
    assert_eq!(l.claude_calls().len(), 3, "fix, then the second review");
    assert_eq!(l.status()["item"]["state"], "closed");

    // daily: the daemon pauses model work and records it once; checks still run.
    let cfg = format!("{CONFIG}[budget]\ndaily = \"1k\"\n");
    let l = Loop::new(
        &cfg,
        json!({"review": [reject(), approve()], "fix": [fix("attempts <= 3 # a", "F1")]}),
    );
    l.sb.commit(&l.wt, "lib.txt", "attempts <= 3\n", "Inclusive");
    l.sb.hall(&l.wt, &["ready"]).ok();
    l.daemon();
    assert_eq!(l.status()["item"]["state"], "fixing");
    assert_eq!(l.claude_calls().len(), 1);
    let budget = l.sb.hall(&l.sb.repo, &["budget"]).ok();
    assert_eq!(budget["paused"], true, "{budget}");
    let repo_log = std::fs::read_to_string(l.sb.repo.join(".git/hallmark/events.jsonl")).unwrap();
    assert_eq!(
        repo_log.matches("\"event\":\"paused\"").count(),
        1,
        "{repo_log}"
    );
    // A grant lifts the pause for today.
    l.sb.hall(&l.sb.repo, &["budget", "--grant", "10M"]).ok();
    l.daemon();
    assert_eq!(l.status()["item"]["state"], "closed");
}

/// Kills the child when the test ends, however it ends.
struct Reaper(std::process::Child);

impl Drop for Reaper {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn a_daemon_killed_mid_review_loses_nothing_and_duplicates_nothing() {
    let slow = json!({"sleep": 30, "verdict": approve()["verdict"]});
    let l = Loop::new(CONFIG, json!({"review": [slow, approve()]}));
    l.sb.commit(&l.wt, "lib.txt", "attempts <= 3\n", "Inclusive");
    l.sb.hall(&l.wt, &["ready"]).ok();
    let mut cmd = l.sb.hall_command(&l.sb.repo);
    cmd.args(["daemon", "run", "--repo", ".", "--tick", "0.05"])
        .env("FAKE_CLAUDE_SCRIPT", &l.script)
        .env("FAKE_CLAUDE_LOG", l.sb.root.join("claude"))
        .stdout(std::process::Stdio::null());
    let mut daemon = Reaper(cmd.spawn().expect("daemon"));
    let runs =
        l.sb.repo
            .join(".git/hallmark/items")
            .join(&l.id)
            .join("runs");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !std::fs::read_dir(&runs).is_ok_and(|d| {
        d.filter_map(|e| e.ok())
            .any(|e| e.path().extension().is_some_and(|x| x == "lock"))
    }) {
        assert!(
            std::time::Instant::now() < deadline,
            "the review never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let status = l.status();
    assert!(
        status["now"]["lease"]["holder"]
            .as_str()
            .unwrap()
            .starts_with("daemon:"),
        "{}",
        status["now"]
    );
    assert_eq!(status["now"]["run"]["live"], true);
    daemon.0.kill().expect("SIGKILL");
    daemon.0.wait().expect("reaped");
    // A second daemon takes the work up again: the dead holder's lease is free.
    l.daemon();
    let kinds = l.kinds();
    assert_eq!(
        kinds.iter().filter(|k| *k == "verdict").count(),
        1,
        "{kinds:?}"
    );
    assert_eq!(
        kinds.iter().filter(|k| *k == "hallmarked").count(),
        1,
        "{kinds:?}"
    );
    assert_eq!(l.status()["item"]["state"], "closed");
    // The killed run's stream has no end line; the retried one does.
    let streams: Vec<PathBuf> = std::fs::read_dir(&runs)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.extension().is_some_and(|x| x == "jsonl") && p.to_string_lossy().contains("-review")
        })
        .collect();
    assert_eq!(streams.len(), 2);
    let ended = streams
        .iter()
        .filter(|p| std::fs::read_to_string(p).unwrap().contains("hall_run_end"))
        .count();
    assert_eq!(ended, 1);
}

#[test]
fn next_claims_with_a_lease_and_agents_may_not_give_verdicts() {
    let l = Loop::new(CONFIG, json!({}));
    l.sb.commit(&l.wt, "lib.txt", "attempts <= 3\n", "Inclusive");
    l.sb.hall(&l.wt, &["ready"]).ok();
    let first =
        l.sb.hall(
            &l.sb.repo,
            &["next", "--role", "assayer", "--holder", "agent-a"],
        )
        .ok();
    assert_eq!(first["item"], l.id.as_str());
    assert_eq!(first["lease"]["phase"], "checks");
    l.sb.hall(
        &l.sb.repo,
        &["next", "--role", "assayer", "--holder", "agent-b"],
    )
    .err("CLAIMED", 7);
    let none = l.sb.hall(&l.sb.repo, &["next", "--role", "shipper"]).ok();
    assert!(none["item"].is_null());
    // A verdict file from an agent (inside Claude Code) is refused; a person's is an override.
    let file = l.sb.root.join("verdict.json");
    std::fs::write(&file, approve()["verdict"].to_string()).unwrap();
    let f = file.display().to_string();
    l.sb.hall_env(
        &l.sb.repo,
        &["verdict", &l.id, "--file", &f],
        &[("CLAUDECODE", "1")],
    )
    .err("GATE_DENIED", 5);
    l.sb.hall_env(
        &l.sb.repo,
        &["verdict", &l.id, "--file", &f],
        &[("HALL_ACTOR", "fixer")],
    )
    .err("GATE_DENIED", 5);
    // The fixer may not decide the item's fate either: the command refuses it, and in a
    // Claude session the hook denies it before it runs.
    l.sb.hall_env(&l.wt, &["ready"], &[("HALL_ACTOR", "fixer")])
        .err("GATE_DENIED", 5);
    for (actor, command, denied) in [
        ("fixer", "hall ready", true),
        (
            "fixer",
            "cd . && HALL_ACTOR=you hall --json retry H-0001 --reason x",
            true,
        ),
        ("fixer", "hall fixed F1", false),
        ("agent", "hall verdict --file v.json", true),
        ("agent", "hall ready", false),
    ] {
        let hook = json!({"session_id": "s1", "transcript_path": "/dev/null", "cwd": l.wt, "hook_event_name": "PreToolUse",
            "tool_name": "Bash", "tool_input": {"command": command}});
        let mut cmd = l.sb.hall_command(&l.wt);
        cmd.args(["hook", "pre-tool-use"])
            .env("HALL_ACTOR", actor)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped());
        let mut child = cmd.spawn().expect("hook");
        std::io::Write::write_all(
            &mut child.stdin.take().unwrap(),
            hook.to_string().as_bytes(),
        )
        .unwrap();
        let out = child.wait_with_output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            text.contains("\"deny\""),
            denied,
            "{actor}: {command}: {text}"
        );
        assert_eq!(out.status.code(), Some(0), "hooks always exit 0");
    }
}

#[test]
fn start_at_login_installs_a_user_service() {
    let l = Loop::new(CONFIG, json!({}));
    let run = l.hall(&l.sb.repo, &["daemon", "start", "--at-login"]);
    let v = run.ok();
    assert_eq!(v["service"], "dev.hallmark.daemon");
    let _guard = v["state"]["pid"].as_u64().map(KillPid);
    let unit = std::fs::read_to_string(
        l.sb.home
            .join(".config/systemd/user/dev.hallmark.daemon.service"),
    )
    .or_else(|_| {
        std::fs::read_to_string(
            l.sb.home
                .join(".config/systemd/user/hallmark-daemon.service"),
        )
    })
    .expect("a systemd user unit");
    assert!(
        unit.contains(&format!("ExecStart={} daemon run", hall_bin().display())),
        "{unit}"
    );
    assert!(
        unit.contains("HALL_DATA_DIR="),
        "the service sees the same data dir: {unit}"
    );
    // Here there is no user session bus, so the service can't start now: the daemon runs
    // in the background instead, and the reply says so.
    if !run.stderr.is_empty() {
        assert!(
            run.stderr
                .contains("started the daemon in the background instead"),
            "{}",
            run.stderr
        );
    }
    assert_eq!(v["running"], true, "{v}");
    l.sb.hall(&l.sb.repo, &["daemon", "stop"]).ok();
}

/// Kills a background daemon when the test ends, however it ends.
struct KillPid(u64);

impl Drop for KillPid {
    fn drop(&mut self) {
        let _ = std::process::Command::new("kill")
            .args(["-9", &self.0.to_string()])
            .status();
    }
}

fn wait_for(what: &str, secs: u64, mut done: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    while !done() {
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

#[test]
fn the_daemon_starts_in_the_background_works_the_registry_and_stops_on_request() {
    let l = Loop::new(CONFIG, json!({"review": [approve()]}));
    l.sb.commit(&l.wt, "lib.txt", "attempts <= 3\n", "Inclusive");
    let before = l.sb.hall(&l.sb.repo, &["doctor"]).ok();
    let daemon_check = |v: &Value| {
        v["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == "daemon")
            .cloned()
            .unwrap()
    };
    assert_eq!(daemon_check(&before)["ok"], false);
    assert_eq!(daemon_check(&before)["fix"], "hall daemon start");
    let started = l.hall(&l.sb.repo, &["daemon", "start"]).ok();
    assert_eq!(started["running"], true, "{started}");
    let pid = started["state"]["pid"].as_u64().unwrap();
    let _guard = KillPid(pid);
    // It found the repository through the registry `hall init` wrote, and works it.
    l.sb.hall(&l.wt, &["ready"]).ok();
    wait_for("the item to close", 60, || {
        l.status()["item"]["state"] == "closed"
    });
    let status = l.sb.hall(&l.sb.repo, &["daemon", "status"]).ok();
    assert_eq!(status["running"], true);
    assert!(status["heartbeat_age_s"].as_u64().unwrap() < 10, "{status}");
    assert_eq!(
        daemon_check(&l.sb.hall(&l.sb.repo, &["doctor"]).ok())["ok"],
        true
    );
    // A second start finds it running and starts nothing.
    let again = l.hall(&l.sb.repo, &["daemon", "start"]).ok();
    assert_eq!(again["state"]["pid"].as_u64(), Some(pid));
    l.sb.hall(&l.sb.repo, &["daemon", "stop"]).ok();
    wait_for("the daemon to exit", 30, || {
        !Path::new(&format!("/proc/{pid}")).exists()
            || std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| s.contains(") Z"))
    });
    let after = l.sb.hall(&l.sb.repo, &["daemon", "status"]).ok();
    assert_eq!(after["running"], false, "{after}");
    // Stopped on request: nothing waits in the inbox for it.
    let inbox = l.sb.hall(&l.sb.repo, &["inbox"]).ok();
    assert!(!inbox.to_string().contains("daemon stopped"), "{inbox}");
}

#[test]
fn a_killed_daemon_shows_in_the_inbox_and_doctor() {
    let l = Loop::new(CONFIG, json!({}));
    let started = l.hall(&l.sb.repo, &["daemon", "start"]).ok();
    let pid = started["state"]["pid"].as_u64().unwrap().to_string();
    std::process::Command::new("kill")
        .args(["-9", &pid])
        .status()
        .unwrap();
    wait_for("the kill", 10, || {
        l.sb.hall(&l.sb.repo, &["daemon", "status"]).ok()["running"] == false
    });
    let inbox = l.sb.hall(&l.sb.repo, &["inbox"]).ok();
    let entry = inbox["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == "daemon stopped")
        .cloned();
    assert!(
        entry.is_some_and(|e| e["next"][0] == "hall daemon start"),
        "{inbox}"
    );
    let doctor = l.sb.hall(&l.sb.repo, &["doctor"]).ok();
    let check = doctor["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "daemon")
        .cloned()
        .unwrap();
    assert!(
        check["detail"]
            .as_str()
            .unwrap()
            .contains("stopped without being asked"),
        "{check}"
    );
}

#[test]
fn questions_take_their_default_after_the_wait_and_answers_resume_the_session() {
    let l = Loop::new(CONFIG, json!({}));
    let asked =
        l.sb.hall(
            &l.wt,
            &[
                "ask",
                "billed or raw?",
                "--options",
                "billed,raw",
                "--default",
                "billed",
                "--wait",
                "30m",
                "--session",
                "sess-1",
            ],
        )
        .ok();
    let q1 = asked["question"].as_str().unwrap().to_string();
    let asked =
        l.sb.hall(&l.wt, &["ask", "which region?", "--session", "sess-2"])
            .ok();
    let q2 = asked["question"].as_str().unwrap().to_string();
    // Before the wait runs out, nothing happens.
    l.daemon();
    assert!(l.claude_calls().is_empty());
    // An hour later the default is taken, said so, and the session resumed with it.
    let script = l.script.display().to_string();
    let log = l.sb.root.join("claude").display().to_string();
    let later = [
        ("FAKE_CLAUDE_SCRIPT", script.as_str()),
        ("FAKE_CLAUDE_LOG", log.as_str()),
        ("HALL_NOW", "2026-11-02T10:00:00Z"),
    ];
    l.sb.hall_env(
        &l.sb.repo,
        &["daemon", "run", "--until-idle", "--tick", "0.05"],
        &later,
    )
    .ok();
    let answered: Vec<Value> = l
        .events()
        .into_iter()
        .filter(|e| e["event"] == "answered")
        .collect();
    assert_eq!(answered.len(), 1);
    assert_eq!(answered[0]["answer"], "billed");
    assert_eq!(answered[0]["by_default"], true);
    let calls = l.claude_calls();
    assert_eq!(calls.len(), 1);
    let args: Vec<&str> = calls[0]["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(
        args[args.iter().position(|a| *a == "--resume").unwrap() + 1],
        "sess-1"
    );
    assert!(
        args.last()
            .unwrap()
            .contains("go ahead with the default: billed"),
        "{args:?}"
    );
    assert_eq!(calls[0]["cwd"], l.wt.display().to_string());
    // A person's answer resumes the other session, once.
    l.sb.hall(&l.sb.repo, &["answer", &q2, "eu-west"]).ok();
    l.sb.hall_env(
        &l.sb.repo,
        &["daemon", "run", "--until-idle", "--tick", "0.05"],
        &later,
    )
    .ok();
    l.sb.hall_env(
        &l.sb.repo,
        &["daemon", "run", "--until-idle", "--tick", "0.05"],
        &later,
    )
    .ok();
    let calls = l.claude_calls();
    assert_eq!(calls.len(), 2, "each session resumed once");
    assert!(
        calls[1]["args"]
            .as_array()
            .unwrap()
            .last()
            .unwrap()
            .as_str()
            .unwrap()
            .contains(&format!("The answer to {q2}: eu-west"))
    );
    let resumed: Vec<Value> = l
        .events()
        .into_iter()
        .filter(|e| e["event"] == "resumed")
        .collect();
    assert_eq!(resumed.len(), 2);
    assert_eq!(resumed[0]["qid"], q1.as_str());
}

#[test]
fn budget_set_edits_the_config_and_a_spent_room_closes_for_the_day() {
    let l = Loop::new(
        CONFIG,
        json!({"review": [reject(), approve()], "fix": [fix("attempts <= 3 # a", "F1")]}),
    );
    let set =
        l.sb.hall(
            &l.sb.repo,
            &["budget", "--set", "review.daily=1k", "--set", "per_item=2M"],
        )
        .ok();
    assert_eq!(set["set"], json!(["review.daily = 1k", "per_item = 2M"]));
    let config = std::fs::read_to_string(l.sb.repo.join(".hallmark.toml")).unwrap();
    assert!(
        config.starts_with("base = \"main\"\ngates = [\"sh check.sh\"]\n"),
        "kept as it was: {config}"
    );
    assert!(
        config.contains("[budget]")
            && config.contains("per_item = \"2M\"")
            && config.contains("daily = \"1k\""),
        "{config}"
    );
    l.sb.hall(&l.sb.repo, &["budget", "--set", "review.colour=red"])
        .err("USAGE", 2);
    l.sb.hall(&l.sb.repo, &["budget", "--set", "daily=lots"])
        .err("INVALID_CONFIG", 2);
    assert_eq!(
        std::fs::read_to_string(l.sb.repo.join(".hallmark.toml")).unwrap(),
        config,
        "a refused value is not written"
    );
    l.sb.hall_env(
        &l.sb.repo,
        &["budget", "--set", "daily=9M"],
        &[("CLAUDECODE", "1")],
    )
    .err("GATE_DENIED", 5);
    l.sb.git(&l.sb.repo, &["commit", "-qam", "Cap the review room"]);
    l.sb.commit(&l.wt, "lib.txt", "attempts <= 3\n", "Inclusive");
    l.sb.hall(&l.wt, &["ready"]).ok();
    l.daemon();
    // One review spent the room's day; the fix ran (its room has no cap); the second
    // review waits in order.
    let status = l.status();
    assert_eq!(status["item"]["state"], "review");
    assert!(
        status["item"]["hold"].is_null(),
        "a closed room holds nothing"
    );
    let roles: Vec<String> = l
        .claude_calls()
        .iter()
        .map(|c| c["env"]["HALL_ACTOR"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(roles, ["assayer", "fixer"]);
    let budget = l.sb.hall(&l.sb.repo, &["budget"]).ok();
    let review = budget["rooms"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["role"] == "review")
        .cloned()
        .unwrap();
    assert_eq!(review["closed"], true, "{budget}");
    // Waiting past `stuck_after` (30m) with nobody on it: one `stuck` notice, however many
    // passes see it.
    let script_s = l.script.display().to_string();
    let log_s = l.sb.root.join("claude").display().to_string();
    let later = [
        ("FAKE_CLAUDE_SCRIPT", script_s.as_str()),
        ("FAKE_CLAUDE_LOG", log_s.as_str()),
        ("HALL_NOW", "2026-11-02T11:00:00Z"),
    ];
    for _ in 0..2 {
        l.sb.hall_env(
            &l.sb.repo,
            &["daemon", "run", "--until-idle", "--tick", "0.05"],
            &later,
        )
        .ok();
    }
    let notices = l.sb.hall(&l.sb.repo, &["inbox", "--notices"]).ok();
    let stuck: Vec<&Value> = notices["notices"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["kind"] == "stuck")
        .collect();
    assert_eq!(stuck.len(), 1, "{notices}");
    assert!(
        stuck[0]["message"]
            .as_str()
            .unwrap()
            .contains("has been in review since"),
        "{notices}"
    );
    // The next day it opens again.
    let script = l.script.display().to_string();
    let log = l.sb.root.join("claude").display().to_string();
    let tomorrow = [
        ("FAKE_CLAUDE_SCRIPT", script.as_str()),
        ("FAKE_CLAUDE_LOG", log.as_str()),
        ("HALL_NOW", "2026-11-03T09:00:00Z"),
    ];
    l.sb.hall_env(
        &l.sb.repo,
        &["daemon", "run", "--until-idle", "--tick", "0.05"],
        &tomorrow,
    )
    .ok();
    assert_eq!(l.status()["item"]["state"], "closed");
}

/// A loop whose ship step fails until `ship-ok` exists, so the base can move between the
/// hallmark and the ship.
fn shippable_later(script: Value) -> Loop {
    let cfg = format!(
        "{CONFIG}ship = \"test -f ship-ok.flag && git push -u origin {{branch}} && gh pr create --base {{base}} --head {{branch}} --title {{title}} --body-file {{body_file}}\"\n"
    );
    let l = Loop::new(&cfg, script);
    l.sb.commit(&l.wt, "lib.txt", "attempts <= 3\n", "Inclusive");
    l.sb.hall(&l.wt, &["ready"]).ok();
    l.daemon();
    let status = l.status();
    assert_eq!(status["item"]["state"], "hallmarked");
    assert_eq!(status["item"]["hold"]["kind"], "ship_failed", "{status}");
    l
}

#[test]
fn a_rebase_that_keeps_the_patch_carries_the_hallmark_to_the_new_commit() {
    let l = shippable_later(json!({"review": [approve()]}));
    let old = l.status()["item"]["hallmark"].as_str().unwrap().to_string();
    // main moves on, on other files.
    l.sb.commit(
        &l.sb.repo,
        "CHANGELOG.md",
        "- unrelated\n",
        "Unrelated change",
    );
    l.sb.git(&l.sb.repo, &["push", "-q", "origin", "main"]);
    // The ship step may go ahead now (an untracked flag: the commit stays as approved).
    std::fs::write(l.wt.join("ship-ok.flag"), "").unwrap();
    l.sb.hall(&l.sb.repo, &["retry", &l.id, "--reason", "ship again"])
        .ok();
    l.daemon();
    let status = l.status();
    assert_eq!(status["item"]["state"], "closed", "{status}");
    let new = status["item"]["hallmark"].as_str().unwrap().to_string();
    assert_ne!(new, old);
    let rebased: Vec<Value> = l
        .events()
        .into_iter()
        .filter(|e| e["event"] == "rebased")
        .collect();
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
    l.sb.commit(
        &l.sb.repo,
        "lib.txt",
        "attempts < 5\n",
        "Someone else changed the limit",
    );
    l.sb.git(&l.sb.repo, &["push", "-q", "origin", "main"]);
    std::fs::write(l.wt.join("ship-ok.flag"), "").unwrap();
    l.sb.hall(&l.sb.repo, &["retry", &l.id, "--reason", "ship again"])
        .ok();
    l.daemon();
    let status = l.status();
    assert_eq!(status["item"]["state"], "development");
    assert!(status["item"]["hallmark"].is_null());
    let back: Vec<Value> = l
        .events()
        .into_iter()
        .filter(|e| e["event"] == "pulled_back")
        .collect();
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
    let l = Loop::new(
        CONFIG,
        json!({"review": [{"sleep": 20, "verdict": approve()["verdict"]}]}),
    );
    l.sb.commit(&l.wt, "lib.txt", "attempts <= 3\n", "Inclusive");
    l.sb.hall(&l.wt, &["ready"]).ok();
    let script = l.script.display().to_string();
    let log = l.sb.root.join("claude").display().to_string();
    let started = std::time::Instant::now();
    l.sb.hall_env(
        &l.sb.repo,
        &["daemon", "run", "--until-idle", "--tick", "0.05"],
        &[
            ("FAKE_CLAUDE_SCRIPT", &script),
            ("FAKE_CLAUDE_LOG", &log),
            ("HALL_RUN_TIMEOUT", "1s"),
        ],
    )
    .ok();
    assert!(
        started.elapsed() < std::time::Duration::from_secs(15),
        "the runs were stopped, not waited out"
    );
    let failed: Vec<Value> = l
        .events()
        .into_iter()
        .filter(|e| e["event"] == "run_failed")
        .collect();
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
    let cfg = format!("{CONFIG}fixer = \"sh ../fix-engine.sh\"\n");
    let l = Loop::new(&cfg, json!({"review": [approve()]}));
    std::fs::write(
        l.sb.root.join("fix-engine.sh"),
        "cp \"$HALL_PROMPT_FILE\" ../engine-saw.md && echo \"$HALL_ACTOR\" >> ../engine-saw.md && printf 'attempts <= 3\\n' > lib.txt && git commit -qam 'Engine fix'\n",
    )
    .unwrap();
    l.sb.hall(&l.wt, &["ready"]).ok();
    l.daemon();
    assert_eq!(l.status()["item"]["state"], "closed");
    let saw = std::fs::read_to_string(l.sb.root.join("engine-saw.md")).unwrap();
    assert!(
        saw.contains("`sh check.sh` exited 1") && saw.contains("expected <= in the limit check"),
        "{saw}"
    );
    assert!(saw.trim_end().ends_with("fixer"));
    let fixes: Vec<Value> = l
        .events()
        .into_iter()
        .filter(|e| e["event"] == "fix_submitted")
        .collect();
    assert_eq!(fixes.len(), 1);
    assert_eq!(fixes[0]["actor"], "fixer");
    assert_eq!(fixes[0]["fixed"], json!([]), "the engine claimed nothing");
}

#[test]
fn trace_follows_a_live_run_to_its_end() {
    let l = Loop::new(
        CONFIG,
        json!({"review": [{"sleep": 2, "verdict": approve()["verdict"]}]}),
    );
    l.sb.commit(&l.wt, "lib.txt", "attempts <= 3\n", "Inclusive");
    l.sb.hall(&l.wt, &["ready"]).ok();
    let mut cmd = l.sb.hall_command(&l.sb.repo);
    cmd.args(["daemon", "run", "--until-idle", "--tick", "0.05"])
        .env("FAKE_CLAUDE_SCRIPT", &l.script)
        .env("FAKE_CLAUDE_LOG", l.sb.root.join("claude"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let _daemon = Reaper(cmd.spawn().expect("daemon"));
    wait_for("the live review", 60, || {
        l.status()["now"]["run"]["live"] == true
    });
    assert_eq!(
        l.status()["now"]["offer"],
        format!("hall trace {} --follow", l.id)
    );
    let follow = l.sb.hall(&l.sb.repo, &["trace", &l.id, "--follow"]);
    let v = follow.ok();
    assert_eq!(
        v["run"]["ended"], true,
        "--follow returns once the run ends: {v}"
    );
    assert!(
        follow.stderr.contains("started: model claude-opus-4-8")
            && follow.stderr.contains("ended: exit 0"),
        "{}",
        follow.stderr
    );
}

#[test]
fn an_overloaded_model_falls_back_in_a_run_of_its_own() {
    let overloaded =
        json!({"error": "API Error: 529 {\"type\":\"overloaded_error\"}", "api_error_status": 529});
    let l = Loop::new(CONFIG, json!({"review": [overloaded, approve()]}));
    l.sb.commit(&l.wt, "lib.txt", "attempts <= 3\n", "Inclusive");
    l.sb.hall(&l.wt, &["ready"]).ok();
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
    let cfg = format!(
        "{CONFIG}ship = \"test -f ship-ok.flag && git push -u origin {{branch}} && gh pr create --base {{base}} --head {{branch}} --title {{title}} --body-file {{body_file}}\"\n"
    );
    let l = Loop::new(&cfg, json!({"review": [approve()]}));
    l.sb.commit(&l.sb.repo, "limits.txt", "a\nb\nc\nd\ne\n", "Limits");
    l.sb.git(&l.sb.repo, &["push", "-q", "origin", "main"]);
    l.sb.git(&l.wt, &["rebase", "-q", "main"]);
    l.sb.commit(&l.wt, "lib.txt", "attempts <= 3\n", "Inclusive");
    l.sb.commit(&l.wt, "limits.txt", "a\nB\nc\nd\ne\n", "Raise b");
    l.sb.hall(&l.wt, &["ready"]).ok();
    l.daemon();
    assert_eq!(l.status()["item"]["hold"]["kind"], "ship_failed");
    l.sb.commit(&l.sb.repo, "limits.txt", "a\nb\nc\nD\ne\n", "Raise d");
    l.sb.git(&l.sb.repo, &["push", "-q", "origin", "main"]);
    std::fs::write(l.wt.join("ship-ok.flag"), "").unwrap();
    l.sb.hall(&l.sb.repo, &["retry", &l.id, "--reason", "ship again"])
        .ok();
    l.daemon();
    let status = l.status();
    assert_eq!(status["item"]["state"], "development", "{status}");
    let back: Vec<Value> = l
        .events()
        .into_iter()
        .filter(|e| e["event"] == "pulled_back")
        .collect();
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
    l.sb.commit(&l.wt, "lib.txt", "attempts <= 3\n", "Inclusive");
    l.sb.hall(&l.wt, &["ready"]).ok();
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

#[test]
fn a_rate_limit_pauses_the_model_workers_until_it_resets() {
    let limited =
        json!({"error": "API Error: 429 {\"type\":\"rate_limit_error\"}", "api_error_status": 429});
    let l = Loop::new(CONFIG, json!({"review": [limited, approve()]}));
    l.sb.commit(&l.wt, "lib.txt", "attempts <= 3\n", "Inclusive");
    l.sb.hall(&l.wt, &["ready"]).ok();
    l.daemon();
    l.daemon();
    let status = l.status();
    assert_eq!(status["item"]["state"], "review");
    assert!(status["item"]["hold"].is_null(), "nobody failed: {status}");
    assert!(l.events().iter().all(|e| e["event"] != "run_failed"));
    assert_eq!(l.claude_calls().len(), 1, "no second try while paused");
    let repo_log = std::fs::read_to_string(l.sb.repo.join(".git/hallmark/events.jsonl")).unwrap();
    assert!(
        repo_log.contains("the plan's rate limit")
            && repo_log.contains("\"until\":\"2026-11-02T10:00:00Z\""),
        "{repo_log}"
    );
    // After the reset the review runs again.
    let script = l.script.display().to_string();
    let log = l.sb.root.join("claude").display().to_string();
    l.sb.hall_env(
        &l.sb.repo,
        &["daemon", "run", "--until-idle", "--tick", "0.05"],
        &[
            ("FAKE_CLAUDE_SCRIPT", &script),
            ("FAKE_CLAUDE_LOG", &log),
            ("HALL_NOW", "2026-11-02T10:00:01Z"),
        ],
    )
    .ok();
    assert_eq!(l.status()["item"]["state"], "closed");
}
