//! The agent contract as snapshots: the reply of every command and every error code the
//! binary can return, with stdout, stderr and the exit code, paths and hashes filtered.
//! A change in what agents read shows here as a snapshot diff.

#![allow(clippy::unwrap_used)] // a panic is how a test fails

use std::collections::BTreeSet;
use std::path::Path;

use hallmark_tests::sandbox::{Run, Sandbox, built_wasm};
use serde_json::{Value, json};

/// Codes the design reserves for capabilities that no command has yet (the Front
/// Desk's parts, the merger, budgets and checks reported as errors, a run as an error).
const RESERVED: &[&str] = &[
    "RUN_FAILED",
    // Needs `[library] search = "qmd"` committed; tests/tests/library.rs shows it.
    "SEARCH_UNAVAILABLE",
    "CHILDREN_OPEN",
    "MERGE_CONFLICT",
    "BUDGET_EXCEEDED",
    "CHECKS_FAILED",
];

/// A run as a stable snapshot: exit code, stderr (when there is any), the reply
/// pretty-printed; the sandbox's paths, object names and content hashes filtered.
fn snap(sb: &Sandbox, run: &Run) -> String {
    let mut text = sb.snap(run);
    // Components built by host/rooms/build.rs live under this build's target directory (one
    // per build-script run; each fixture is taken from the newest).
    for fixture in ["hall_fixture_panicky.wasm", "hall_fixture_wrong_world.wasm"] {
        if let Some(dir) = built_wasm(fixture).parent() {
            text = text.replace(dir.to_str().unwrap(), "[BUILT]");
        }
    }
    // The binary under test lives wherever the checkout is.
    let hall = hallmark_tests::sandbox::hall_bin();
    text = text.replace(hall.to_str().unwrap(), "[HALL]");
    // `hall run`'s log names carry the process id.
    if let Ok(v) = serde_json::from_str::<Value>(run.stdout.trim())
        && let Some(log) = v["log"].as_str()
    {
        text = text.replace(log, "[LOG]");
    }
    if !run.stderr.trim().is_empty() {
        text.push_str(&format!("\n--- stderr\n{}", sb.redact(run.stderr.trim())));
    }
    // Leases expire on the wall clock, which `HALL_NOW` doesn't pin; durations vary.
    let text: Vec<String> = text
        .lines()
        .map(|l| {
            let key = l.trim_start();
            if ["\"taken\": ", "\"expires\": ", "\"millis\": "]
                .iter()
                .any(|k| key.starts_with(k))
            {
                let (name, _) = l.split_once(": ").unwrap_or((l, ""));
                let comma = if l.ends_with(',') { "," } else { "" };
                format!("{name}: [WALL]{comma}")
            } else {
                l.to_string()
            }
        })
        .collect();
    filter_hashes(&text.join("\n"))
}

/// Hex runs of 40 or 64 characters (commits, trees, sha256 of components) become
/// `[HEX40]`/`[HEX64]`: they change with any byte of a built-in room or a test's files.
fn filter_hashes(text: &str) -> String {
    let mut out = String::new();
    let mut run = String::new();
    let flush = |run: &mut String, out: &mut String| {
        match run.len() {
            40 => out.push_str("[HEX40]"),
            64 => out.push_str("[HEX64]"),
            _ => out.push_str(run),
        }
        run.clear();
    };
    for c in text.chars() {
        if c.is_ascii_hexdigit() && !c.is_ascii_uppercase() {
            run.push(c);
        } else {
            flush(&mut run, &mut out);
            out.push(c);
        }
    }
    flush(&mut run, &mut out);
    out
}

/// Records the code of an error reply (and checks the contract's promises for it).
fn code(run: &Run, seen: &mut BTreeSet<String>) {
    let v: Value = serde_json::from_str(run.stdout.trim()).unwrap_or(Value::Null);
    if let Some(c) = v["error"]["code"].as_str() {
        assert!(
            v["error"]["next"].as_array().is_some_and(|n| !n.is_empty()),
            "{c} has no next: {run:?}"
        );
        seen.insert(c.to_string());
    }
}

macro_rules! reply {
    ($sb:expr, $seen:expr, $name:literal, $run:expr) => {{
        let run = $run;
        code(&run, $seen);
        insta::assert_snapshot!($name, snap($sb, &run));
        run
    }};
}

#[test]
fn every_command_and_every_error_code() {
    let mut seen = BTreeSet::new();
    let seen = &mut seen;
    let sb = Sandbox::new();
    let repo = sb.repo.clone();
    let outside = sb.root.join("elsewhere");
    std::fs::create_dir_all(&outside).unwrap();

    // Before `hall init`, and outside any repository.
    reply!(&sb, seen, "not_a_repo", sb.hall(&outside, &["status"]));
    reply!(&sb, seen, "not_initialized", sb.hall(&repo, &["status"]));
    reply!(&sb, seen, "usage", sb.hall(&repo, &["status", "--bogus"]));
    reply!(&sb, seen, "init", sb.hall(&repo, &["init"]));
    sb.git(&repo, &["add", "-A"]);
    sb.git(&repo, &["commit", "-q", "-m", "Set up Hallmark"]);
    reply!(&sb, seen, "init_again", sb.hall(&repo, &["init"]));

    // An item through the Stage 1 verbs.
    reply!(&sb, seen, "status_empty", sb.hall(&repo, &["status"]));
    reply!(
        &sb,
        seen,
        "new",
        sb.hall(&repo, &["new", "--title", "Cap retries"])
    );
    let wt = sb.worktree("H-0001");
    reply!(&sb, seen, "no_item", sb.hall(&repo, &["ready"]));
    reply!(
        &sb,
        seen,
        "item_not_found",
        sb.hall(&repo, &["status", "H-0099"])
    );
    std::fs::write(wt.join("lib.txt"), "attempts < 3\n").unwrap();
    reply!(&sb, seen, "dirty_worktree", sb.hall(&wt, &["ready"]));
    sb.git(&wt, &["add", "lib.txt"]);
    sb.git(&wt, &["commit", "-q", "-m", "Cap retries at 3"]);
    reply!(
        &sb,
        seen,
        "propose_ready_ask",
        sb.hall(
            &wt,
            &["propose-ready", "--summary", "Caps retries", "--ask"]
        )
    );
    reply!(
        &sb,
        seen,
        "ready",
        sb.hall(&wt, &["ready", "--note", "first try"])
    );
    reply!(&sb, seen, "ready_again", sb.hall(&wt, &["ready"]));
    sb.commit(&wt, "lib.txt", "attempts <= 3\n", "Inclusive");
    reply!(&sb, seen, "item_in_review", sb.hall(&wt, &["ready"]));
    reply!(&sb, seen, "status_list", sb.hall(&repo, &["status"]));
    reply!(
        &sb,
        seen,
        "status_item",
        sb.hall(&repo, &["status", "H-0001"])
    );
    reply!(&sb, seen, "findings", sb.hall(&wt, &["findings"]));
    reply!(&sb, seen, "fixed_wrong_state", sb.hall(&wt, &["fixed"]));
    reply!(
        &sb,
        seen,
        "retry_nothing",
        sb.hall(&wt, &["retry", "--reason", "again"])
    );
    reply!(
        &sb,
        seen,
        "pull_back",
        sb.hall(&wt, &["pull-back", "--reason", "not yet"])
    );
    reply!(
        &sb,
        seen,
        "log_kind",
        sb.hall(&wt, &["log", "--kind", "ready"])
    );
    reply!(
        &sb,
        seen,
        "log_repo",
        sb.hall(&repo, &["log", "--limit", "3"])
    );

    // People and agents.
    reply!(
        &sb,
        seen,
        "ask",
        sb.hall(
            &wt,
            &[
                "ask",
                "billed or raw?",
                "--options",
                "billed,raw",
                "--default",
                "billed"
            ]
        )
    );
    reply!(&sb, seen, "inbox", sb.hall(&repo, &["inbox"]));
    reply!(&sb, seen, "answer", sb.hall(&repo, &["answer", "Q-1", "a"]));
    reply!(
        &sb,
        seen,
        "already_answered",
        sb.hall(&repo, &["answer", "Q-1", "b"])
    );
    reply!(
        &sb,
        seen,
        "question_not_found",
        sb.hall(&repo, &["answer", "Q-9", "a"])
    );
    reply!(
        &sb,
        seen,
        "gate_denied",
        sb.hall_env(&wt, &["ready"], &[("HALL_ACTOR", "fixer")])
    );
    let verdict = sb.root.join("verdict.json");
    std::fs::write(&verdict, json!({"summary": ""}).to_string()).unwrap();
    sb.hall(&wt, &["ready"]).ok();
    sb.record(
        "H-0001",
        "assayer",
        json!({"event": "checks_passed", "sha": sb.git(&wt, &["rev-parse", "HEAD"])}),
    );
    reply!(
        &sb,
        seen,
        "invalid_verdict",
        sb.hall(&wt, &["verdict", "--file", verdict.to_str().unwrap()])
    );
    reply!(
        &sb,
        seen,
        "usage_report",
        sb.hall(&repo, &["usage", "--by", "station"])
    );
    reply!(&sb, seen, "budget", sb.hall(&repo, &["budget"]));
    reply!(
        &sb,
        seen,
        "trace_none",
        sb.hall(&repo, &["trace", "H-0001"])
    );
    reply!(
        &sb,
        seen,
        "next_none",
        sb.hall(&repo, &["next", "--role", "shipper"])
    );
    sb.hall(&repo, &["new", "--title", "Second"]).ok();
    let wt2 = sb.worktree("H-0002");
    sb.commit(&wt2, "b.txt", "b\n", "Second");
    sb.hall(&wt2, &["ready"]).ok();
    // Two holders take the two items with assayer work (a claim carries wall-clock
    // times, so its shape is pinned by `hall schema next`); a third finds both taken.
    let a = sb
        .hall(&repo, &["next", "--role", "assayer", "--holder", "a"])
        .ok();
    let b = sb
        .hall(&repo, &["next", "--role", "assayer", "--holder", "b"])
        .ok();
    assert_ne!(a["item"], b["item"]);
    reply!(
        &sb,
        seen,
        "claimed",
        sb.hall(&repo, &["next", "--role", "assayer", "--holder", "c"])
    );
    reply!(
        &sb,
        seen,
        "daemon_status",
        sb.hall(&repo, &["daemon", "status"])
    );
    reply!(&sb, seen, "reindex", sb.hall(&repo, &["reindex"]));
    reply!(
        &sb,
        seen,
        "run",
        sb.hall(&repo, &["run", "--json", "--", "echo", "hello"])
    );
    reply!(
        &sb,
        seen,
        "command_failed",
        sb.hall(&repo, &["run", "--json", "--", "/nonexistent/program"])
    );
    reply!(
        &sb,
        seen,
        "drop",
        sb.hall(&repo, &["drop", "H-0001", "--reason", "superseded"])
    );
    reply!(
        &sb,
        seen,
        "wrong_state",
        sb.hall(&repo, &["ready", "H-0001"])
    );

    // Hallmarks.
    reply!(&sb, seen, "no_allowed_signers", sb.hall(&repo, &["verify"]));
    let signers = sb.root.join("allowed_signers");
    std::fs::write(&signers, sb.signers_line()).unwrap();
    reply!(
        &sb,
        seen,
        "not_hallmarked",
        sb.hall(
            &repo,
            &[
                "verify",
                "HEAD",
                "--allowed-signers",
                signers.to_str().unwrap()
            ]
        )
    );

    // Rooms.
    reply!(&sb, seen, "rooms_list", sb.hall(&repo, &["rooms", "list"]));
    reply!(
        &sb,
        seen,
        "room_not_found",
        sb.hall(&repo, &["rooms", "run", "nothing", "--input", "{}"])
    );
    reply!(
        &sb,
        seen,
        "room_input_invalid",
        sb.hall(
            &repo,
            &["rooms", "run", "checks", "--input", "{\"files\": 3}"]
        )
    );
    let wrong = built_wasm("hall_fixture_wrong_world.wasm");
    reply!(
        &sb,
        seen,
        "rooms_check",
        sb.hall(&repo, &["rooms", "check", wrong.to_str().unwrap()])
    );
    reply!(
        &sb,
        seen,
        "room_incompatible",
        sb.hall(
            &repo,
            &["rooms", "run", wrong.to_str().unwrap(), "--input", "{}"]
        )
    );
    let panicky = built_wasm("hall_fixture_panicky.wasm");
    reply!(
        &sb,
        seen,
        "room_failed",
        sb.hall(
            &repo,
            &["rooms", "run", panicky.to_str().unwrap(), "--input", "{}"]
        )
    );

    // The agent's self-description.
    reply!(
        &sb,
        seen,
        "schema_error",
        sb.hall(&repo, &["schema", "error"])
    );
    // The verdict schema is the plugin's file, the same JSON value: what `--json-schema`
    // gets (pinned by the file itself, generated from the types; no snapshot repeats it).
    let verdict_schema = sb.hall(&repo, &["schema", "verdict-file"]).ok();
    let shipped: Value =
        serde_json::from_str(include_str!("../../plugin/schemas/verdict.json")).unwrap();
    assert_eq!(verdict_schema, shipped);
    let help = sb.hall(&repo, &["help", "--json"]);
    code(&help, seen);
    assert_eq!(help.code, 0);

    // A committed config that doesn't parse; a journal line that doesn't decode; an
    // issue with no gh to read it.
    std::fs::write(repo.join(".hallmark.toml"), "base = \"main\"\nmood = 3\n").unwrap();
    sb.git(&repo, &["commit", "-qam", "Break the config"]);
    reply!(&sb, seen, "invalid_config", sb.hall(&repo, &["status"]));
    sb.git(&repo, &["revert", "--no-edit", "HEAD"]);
    let events = repo.join(".git/hallmark/items/H-0001/events.jsonl");
    let mut text = std::fs::read_to_string(&events).unwrap();
    text.insert_str(0, "{not json}\n");
    std::fs::write(&events, text).unwrap();
    reply!(
        &sb,
        seen,
        "journal_corrupt",
        sb.hall(&repo, &["status", "H-0001"])
    );
    // A PATH with git and a shell but no gh.
    let no_gh = sb.root.join("no-gh");
    std::fs::create_dir_all(&no_gh).unwrap();
    for tool in ["git", "sh"] {
        let at = sb.sh(&sb.root, &format!("command -v {tool}"), &[]).stdout;
        std::os::unix::fs::symlink(at.trim(), no_gh.join(tool)).unwrap();
    }
    reply!(
        &sb,
        seen,
        "gh_unavailable",
        sb.hall_env(
            &repo,
            &["new", "--issue", "7"],
            &[("PATH", no_gh.to_str().unwrap())]
        )
    );
    // The Library: an id it does not have, and a file that is not one of its exports.
    reply!(
        &sb,
        seen,
        "learning_not_found",
        sb.hall(&repo, &["library", "show", "L-0042"])
    );
    let not_an_export = sb.root.join("not-an-export.jsonl");
    std::fs::write(&not_an_export, "{\"format\":\"other\",\"v\":1}\n").unwrap();
    reply!(
        &sb,
        seen,
        "learning_invalid",
        sb.hall(
            &repo,
            &["library", "import", not_an_export.to_str().unwrap()]
        )
    );
    // An index that can't be opened: a directory where the file should be.
    let index = repo.join(".git/hallmark/index.sqlite");
    for f in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{f}", index.display()));
    }
    std::fs::create_dir_all(&index).unwrap();
    reply!(&sb, seen, "internal", sb.hall(&repo, &["inbox"]));

    // Every code is either shown above or reserved, and the binary lists them all.
    let schema = sb.hall(&outside, &["schema", "error"]).ok();
    let listed: BTreeSet<String> = schema["x-codes"]
        .as_object()
        .or(schema["schema"]["x-codes"].as_object())
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default();
    assert_eq!(listed.len(), 32, "every code is listed: {schema}");
    let reserved: BTreeSet<String> = RESERVED.iter().map(|s| s.to_string()).collect();
    let covered: BTreeSet<String> = seen.union(&reserved).cloned().collect();
    let missing: Vec<&String> = listed.difference(&covered).collect();
    assert!(missing.is_empty(), "codes with no reply here: {missing:?}");
    assert!(
        seen.is_disjoint(&reserved),
        "a reserved code is returned now; give it a snapshot and take it off RESERVED: {:?}",
        seen.intersection(&reserved).collect::<Vec<_>>()
    );
}

/// The commands the walk above leaves out, each in its own sandbox: adopting a branch,
/// installing the Claude Code plugin, the doctor, and the text a person reads on a
/// terminal (the same replies, rendered for people, errors on stderr).
#[test]
fn adopt_setup_doctor_and_text_on_a_terminal() {
    let mut seen = BTreeSet::new();
    let seen = &mut seen;
    let sb = Sandbox::initialized();
    let repo = sb.repo.clone();
    sb.git(&repo, &["switch", "-q", "-c", "feature/retries"]);
    sb.commit(&repo, "retry.txt", "3\n", "Retry three times");
    reply!(
        &sb,
        seen,
        "adopt",
        sb.hall(&repo, &["adopt", "--title", "Retries"])
    );
    reply!(
        &sb,
        seen,
        "adopt_again",
        sb.hall(&repo, &["adopt", "--title", "Retries"])
    );
    reply!(
        &sb,
        seen,
        "setup_claude_dry_run",
        sb.hall(&repo, &["setup", "claude", "--dry-run"])
    );
    // `hall claude` hands the terminal to Claude Code; the stand-in records what it was
    // started with, which is part of the reply's contract too.
    sb.fake("claude", Path::new(env!("CARGO_BIN_EXE_fake-claude")));
    let started = sb.root.join("claude-started.json");
    let log = started.display().to_string();
    for (name, args) in [
        (
            "claude_session",
            &["claude", "H-0001", "--", "--model", "sonnet"][..],
        ),
        (
            "claude_session_unconfined",
            &["claude", "H-0001", "--unconfined"][..],
        ),
    ] {
        let run = sb.hall_env(&repo, args, &[("FAKE_CLAUDE_LOG", &log)]);
        code(&run, seen);
        let seen_by_claude: Value =
            serde_json::from_str(&std::fs::read_to_string(&started).expect("claude started"))
                .expect("the stand-in's record");
        let both = format!(
            "{}\n--- claude was started with\n{}",
            snap(&sb, &run),
            sb.redact(&serde_json::to_string_pretty(&seen_by_claude).expect("json"))
        );
        insta::assert_snapshot!(name, both);
    }
    let doctor = sb.hall(&repo, &["doctor"]);
    code(&doctor, seen);
    let v: Value = serde_json::from_str(doctor.stdout.trim()).expect("doctor replies JSON");
    // Which tools a machine has varies; the checks' names and the reply's shape don't.
    let names: Vec<&str> = v["checks"]
        .as_array()
        .expect("doctor lists its checks")
        .iter()
        .filter_map(|c| c["name"].as_str())
        .collect();
    insta::assert_snapshot!("doctor_checks", names.join("\n"));
    assert!(v["ok"].is_boolean() && v["next"].is_array(), "{v}");

    let Some(text) = sb.on_a_terminal(
        &repo,
        "hall status; hall status H-0001; hall ready H-0042; hall log H-0001 --kind created",
    ) else {
        eprintln!("skipped the text replies: util-linux `script` is not installed");
        return;
    };
    assert!(!text.contains("{\""), "no JSON on a terminal: {text}");
    insta::assert_snapshot!("text_on_a_terminal", filter_hashes(&sb.redact(&text)));
}
