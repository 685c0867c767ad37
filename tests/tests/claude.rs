//! The real Claude Code CLI (pinned in tests/claude, installed by `npm ci --prefix
//! tests/claude`) against a scripted Messages API stub on 127.0.0.1, with the plugin
//! installed by `hall setup claude`: the hooks fire, context reaches the model, and the
//! gates deny in the real client.

use std::path::{Path, PathBuf};

use hallmark_tests::claude_stub::{ClaudeCommand, ClaudeRun, StubServer, Turn, claude_binary};
use hallmark_tests::sandbox::Sandbox;
use serde_json::Value;

fn require_claude() -> PathBuf {
    let bin = claude_binary();
    assert!(
        bin.is_file(),
        "the pinned Claude Code CLI is not installed at {}: run `npm ci --prefix tests/claude`",
        bin.display()
    );
    bin
}

/// A sandbox with hall initialized and the plugin installed for a throwaway HOME.
fn world() -> (Sandbox, PathBuf) {
    let claude = require_claude();
    let sb = Sandbox::initialized();
    let home = sb.root.join("claude-home");
    std::fs::create_dir_all(&home).expect("mkdir");
    let claude_dir = claude.parent().expect("bin dir").display().to_string();
    let path = format!("{claude_dir}:{}", std::env::var("PATH").unwrap_or_default());
    let home_s = home.display().to_string();
    let vars = [
        ("HOME", home_s.as_str()),
        ("PATH", path.as_str()),
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
    ];
    let setup = sb.hall_env(&sb.repo, &["setup", "claude"], &vars);
    assert_eq!(setup.code, 0, "hall setup claude: {setup:?}");
    let doctor = sb.hall_env(&sb.repo, &["doctor"], &vars).ok();
    let plugin = doctor["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .find(|c| c["name"] == "plugin")
        .cloned()
        .expect("plugin");
    assert_eq!(plugin["ok"], true, "{plugin}");
    (sb, home)
}

fn run(stub: &StubServer, home: &Path, cwd: &Path, prompt: &str) -> ClaudeRun {
    let run = ClaudeCommand::new(stub, home, cwd, prompt)
        .run()
        .expect("claude runs");
    assert!(run.succeeded(), "{}", run.describe());
    run
}

/// The tool_result the model got back for the `n`th scripted turn's tool call.
fn tool_result(stub: &StubServer, turn: usize) -> Value {
    let requests = stub.turn_requests();
    let id = format!("toolu_stub_{:04}_0", turn);
    requests
        .iter()
        .find_map(|r| r.tool_result_for(&id).cloned())
        .unwrap_or_else(|| panic!("no tool_result for {id}"))
}

#[test]
fn the_plugin_validates_offline() {
    let claude = require_claude();
    let plugin = Path::new(env!("CARGO_MANIFEST_DIR")).join("../plugin");
    let out = std::process::Command::new(claude)
        .args(["plugin", "validate", plugin.to_str().expect("utf8")])
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .output()
        .expect("claude runs");
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn in_the_real_client_context_arrives_and_edits_and_note_writes_are_denied() {
    let (sb, home) = world();
    let target = sb.repo.join("src/app.rs");
    let stub = StubServer::start([
        Turn::write(&target, "fn main() {}\n"),
        Turn::bash("git notes --ref=hallmark add -m '{\"v\":1}' HEAD"),
        Turn::text("Both were refused."),
    ])
    .expect("stub");
    run(&stub, &home, &sb.repo, "Add an app entry point");
    let first = &stub.turn_requests()[0];
    assert!(
        first.mentions("SessionStart hook additional context"),
        "SessionStart context reached the model"
    );
    assert!(
        first.mentions("hall new --title"),
        "with how to start an item"
    );
    let denied = tool_result(&stub, 1);
    assert_eq!(denied["is_error"], true, "{denied}");
    let text = denied.to_string();
    assert!(
        text.contains("GATE_DENIED") && text.contains("hall new --title"),
        "{text}"
    );
    assert!(!target.exists(), "the edit did not happen");
    let notes = tool_result(&stub, 2);
    assert_eq!(notes["is_error"], true, "{notes}");
    assert!(
        notes
            .to_string()
            .contains("Only Hallmark strikes hallmarks"),
        "{notes}"
    );
    let listed = sb.git(&sb.repo, &["notes", "--ref=hallmark", "list"]);
    assert_eq!(listed, "", "no note was written");
    // The prompt was recorded, and so was every denial.
    let log = sb.hall(&sb.repo, &["log", "--kind", "gate_denied"]).ok();
    assert_eq!(log["events"].as_array().map(Vec::len), Some(2));
}

#[test]
fn in_the_real_client_a_push_waits_for_the_hallmark_then_goes_through() {
    let (sb, home) = world();
    let v = sb.hall(&sb.repo, &["new", "--title", "Greeting"]).ok();
    let id = v["item"].as_str().expect("id").to_string();
    let wt = sb.worktree(&id);
    let sha = sb.commit(&wt, "greeting.txt", "hello\n", "Add a greeting");
    let push = "git push origin HEAD:refs/heads/greeting";
    let stub =
        StubServer::start([Turn::bash(push), Turn::text("The push was refused.")]).expect("stub");
    run(&stub, &home, &wt, "Ship it");
    let denied = tool_result(&stub, 1);
    assert_eq!(denied["is_error"], true);
    assert!(denied.to_string().contains("has no hallmark"), "{denied}");
    assert!(
        !sb.git(&sb.origin, &["branch", "--list", "greeting"])
            .contains("greeting"),
        "nothing reached origin"
    );

    // The Assay Office's path: the item goes through the loop and the assayer strikes
    // the hallmark (note with HALL_ACTOR=assayer, and the journal records it).
    sb.hall(&wt, &["ready"]).ok();
    sb.strike(&id, &wt, &sha, 1);

    let stub = StubServer::start([Turn::bash(push), Turn::text("Pushed.")]).expect("stub");
    run(&stub, &home, &wt, "Ship it now");
    let ok = tool_result(&stub, 1);
    assert_ne!(ok["is_error"], true, "the hallmarked push ran: {ok}");
    assert_eq!(
        sb.git(&sb.origin, &["rev-parse", "refs/heads/greeting"]),
        sha,
        "origin has the hallmarked commit"
    );

    // Usage from the transcripts landed in the item's journal, once per response.
    let usage = sb
        .hall(&sb.repo, &["usage", "--item", &id, "--by", "model"])
        .ok();
    let total = &usage["total"];
    assert!(
        total["input"].as_u64().expect("input") >= 400,
        "4 responses of 100 input tokens: {usage}"
    );
    assert!(total["cost_usd"].as_f64().expect("cost") > 0.0);
    let turns = sb.hall(&sb.repo, &["log", &id, "--kind", "turn"]).ok();
    assert_eq!(
        turns["events"].as_array().map(Vec::len),
        Some(2),
        "a turn summary per run: {turns}"
    );
    let prompts = sb.hall(&sb.repo, &["log", &id, "--kind", "prompt"]).ok();
    assert_eq!(prompts["events"][0]["text"], "Ship it");
}
