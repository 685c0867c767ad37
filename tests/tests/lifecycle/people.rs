//! What people see and answer: questions, the inbox, usage, status and log, and the
//! interactive session `hall new --open` starts.

use hallmark_tests::sandbox::Sandbox;
use insta::assert_snapshot;
use serde_json::json;

use super::new_item;

#[test]
fn questions_are_asked_answered_and_idempotent() {
    let sb = Sandbox::initialized();
    let id = new_item(&sb, "Q");
    let wt = sb.worktree(&id);
    let run = sb.hall(
        &wt,
        &[
            "ask",
            "billed or raw?",
            "--options",
            "billed,raw",
            "--default",
            "billed",
            "--wait",
            "4h",
            "--session",
            "s-1",
        ],
    );
    assert_snapshot!(sb.snap(&run));
    assert_eq!(run.ok()["wait_until"], "2026-11-02T13:00:00Z");
    sb.hall(&wt, &["ask", "x?", "--options", "a,b", "--default", "c"])
        .err("USAGE", 2);
    sb.hall(&sb.repo, &["ask", "repo-level?"]).ok();
    let inbox = sb.hall(&sb.repo, &["inbox"]).ok();
    assert_eq!(inbox["entries"].as_array().map(Vec::len), Some(2));
    assert_eq!(inbox["entries"][0]["kind"], "question");
    sb.hall(&sb.repo, &["answer", "Q-1", "maybe"])
        .err("USAGE", 2);
    let v = sb.hall(&sb.repo, &["answer", "Q-1", "b"]).ok();
    assert_eq!(v["answer"], "raw", "letters pick options");
    assert_eq!(
        sb.hall(&sb.repo, &["answer", "Q-1", "raw"]).ok()["changed"],
        false
    );
    sb.hall(&sb.repo, &["answer", "Q-1", "billed"])
        .err("ALREADY_ANSWERED", 4);
    sb.hall(&sb.repo, &["answer", "Q-9", "x"])
        .err("QUESTION_NOT_FOUND", 3);
    sb.hall(&sb.repo, &["answer", "nope", "x"]).err("USAGE", 2);
    assert_eq!(
        sb.hall(&sb.repo, &["answer", "2", "free text"]).ok()["answer"],
        "free text"
    );
    let status = sb.hall(&sb.repo, &["status", &id]).ok();
    assert_eq!(status["item"]["questions"]["1"]["answer"], "raw");
    assert_eq!(sb.hall(&sb.repo, &["inbox"]).ok()["entries"], json!([]));
}

#[test]
fn inbox_dismissals_hold_until_the_entry_changes() {
    let sb = Sandbox::initialized();
    let a = new_item(&sb, "A");
    sb.record(
        &a,
        "daemon",
        json!({"event": "held", "kind": "run_failed", "reason": "two failed runs"}),
    );
    sb.hall(&sb.repo, &["ask", "first?"]).ok();
    let inbox = sb.hall(&sb.repo, &["inbox"]).ok();
    assert_eq!(inbox["entries"].as_array().map(Vec::len), Some(2));
    let v = sb.hall(&sb.repo, &["inbox", "1", "--dismiss"]).ok();
    assert_eq!(v["entries"].as_array().map(Vec::len), Some(1));
    assert_eq!(v["hidden"], 1);
    let all = sb.hall(&sb.repo, &["inbox", "--all"]).ok();
    assert_eq!(all["entries"].as_array().map(Vec::len), Some(2));
    sb.hall(&sb.repo, &["inbox", "5", "--dismiss"])
        .err("USAGE", 2);
    sb.hall(&sb.repo, &["inbox", "--clear"]).ok();
    assert_eq!(sb.hall(&sb.repo, &["inbox"]).ok()["entries"], json!([]));
    // The hold changes (a new one at a later time): it shows again.
    sb.hall(&sb.repo, &["retry", &a, "--reason", "ok"]).ok();
    let sb2_now = "2026-11-02T10:00:00Z";
    let run = sb
        .hall_env(&sb.repo, &["inbox"], &[("HALL_NOW", sb2_now)])
        .ok();
    assert_eq!(run["entries"], json!([]));
    let id: hallmark_core::item::ItemId = a.parse().expect("id");
    let e: hallmark_core::item::Event = serde_json::from_value(
        json!({"v": 1, "t": sb2_now, "actor": "daemon", "event": "held",
        "kind": "run_failed", "reason": "failed again", "item": a}),
    )
    .expect("event");
    sb.journal().append_item(id, &[e]).expect("append");
    let v = sb.hall(&sb.repo, &["inbox"]).ok();
    assert_eq!(
        v["entries"][0]["kind"], "run_failed",
        "a changed entry is shown again"
    );
    // Notices are separate and never in the office.
    sb.record(&a, "hook", json!({"event": "notification", "kind": "session_waiting", "message": "Claude needs your permission", "session": "s-9"}));
    let n = sb.hall(&sb.repo, &["inbox", "--notices"]).ok();
    assert_eq!(n["notices"][0]["kind"], "session_waiting");
    sb.record(
        &a,
        "hook",
        json!({"event": "prompt", "text": "go on", "session": "s-9"}),
    );
    assert_eq!(
        sb.hall(&sb.repo, &["inbox", "--notices"]).ok()["notices"],
        json!([]),
        "the next prompt clears it"
    );
}

#[test]
fn usage_totals_by_every_grouping() {
    let sb = Sandbox::initialized();
    let a = new_item(&sb, "A");
    let b = new_item(&sb, "B");
    let usage = |model: &str, role: &str, input: u64, cost: f64| {
        json!({"event": "usage", "model": model, "role": role, "input": input, "output": input / 10,
               "cache_read": input * 2, "cache_write": 5, "cost_usd": cost})
    };
    sb.record(&a, "assayer", usage("opus", "review", 30_000, 0.6));
    sb.record(&a, "fixer", usage("sonnet", "fix", 10_000, 0.1));
    sb.record(&b, "agent", usage("sonnet", "dev", 5_000, 0.05));
    let by_item = sb.hall(&sb.repo, &["usage"]);
    assert_snapshot!(sb.snap(&by_item));
    let v = by_item.ok();
    assert_eq!(v["total"]["input"], 45_000);
    assert_eq!(v["total"]["cost_usd"], 0.75);
    let roles = sb.hall(&sb.repo, &["usage", "--by", "station"]).ok();
    let keys: Vec<&str> = roles["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|r| r["key"].as_str().expect("k"))
        .collect();
    assert_eq!(keys, ["Assay Office", "Repair Shop", "Workshop"]);
    let models = sb.hall(&sb.repo, &["usage", "--by", "model"]).ok();
    assert_eq!(models["rows"][1]["key"], "sonnet");
    assert_eq!(models["rows"][1]["runs"], 2);
    let day = sb
        .hall(&sb.repo, &["usage", "--by", "day", "--item", &a])
        .ok();
    assert_eq!(day["rows"][0]["key"], "2026-11-02");
    assert_eq!(day["total"]["input"], 40_000);
    let none = sb.hall(&sb.repo, &["usage", "--since", "2026-12-01"]).ok();
    assert_eq!(none["rows"], json!([]));
    let recent = sb
        .hall(&sb.repo, &["usage", "--since", "1d", "--by", "role"])
        .ok();
    assert_eq!(recent["rows"].as_array().map(Vec::len), Some(3));
    sb.hall(&sb.repo, &["usage", "--since", "whenever"])
        .err("USAGE", 2);
    sb.hall(&sb.repo, &["usage", "--by", "planet"])
        .err("USAGE", 2);
}

#[test]
fn status_and_log_views() {
    let sb = Sandbox::initialized();
    let a = new_item(&sb, "Alpha");
    let b = new_item(&sb, "Beta");
    let wt = sb.worktree(&b);
    sb.commit(&wt, "b.txt", "b", "b");
    sb.hall(&wt, &["ready"]).ok();
    sb.hall(&sb.repo, &["drop", &a, "--reason", "dup"]).ok();
    let list = sb.hall(&sb.repo, &[]);
    assert_snapshot!("status_list", sb.snap(&list));
    let detail = sb.hall(&sb.repo, &["status", &b]);
    assert_snapshot!("status_detail", sb.snap(&detail));
    let v = sb.hall(&wt, &["status"]).ok();
    assert_eq!(
        v["current"],
        b.as_str(),
        "the list knows which worktree it is in"
    );
    let repo_log = sb.hall(&sb.repo, &["log", "--limit", "2"]).ok();
    assert_eq!(repo_log["events"].as_array().map(Vec::len), Some(2));
    sb.hall(&sb.repo, &["log", &b, "--kind", "teleport"])
        .err("USAGE", 2);
}

#[test]
fn new_open_starts_claude_in_the_worktree_with_the_request() {
    let sb = Sandbox::initialized();
    sb.fake(
        "claude",
        std::path::Path::new(env!("CARGO_BIN_EXE_fake-claude")),
    );
    let log = sb.root.join("claude.json");
    let log_s = log.display().to_string();
    let v = sb
        .hall_env(
            &sb.repo,
            &["new", "Make the export faster", "--open"],
            &[("FAKE_CLAUDE_LOG", &log_s)],
        )
        .ok();
    let record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&log).expect("claude ran")).expect("json");
    assert_eq!(record["cwd"], v["worktree"]);
    // Started confined: the settings `hall claude` writes, then the request.
    let args = record["args"].as_array().expect("args");
    assert_eq!(args.len(), 3, "{args:?}");
    assert_eq!(args[0], "--settings");
    let settings: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(args[1].as_str().expect("path")).expect("settings"),
    )
    .expect("json");
    assert_eq!(settings["sandbox"]["allowUnsandboxedCommands"], false);
    assert_eq!(args[2], "Make the export faster");
}
