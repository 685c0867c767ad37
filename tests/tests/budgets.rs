//! Budgets: the per-item hold, the daily pause and its grant, a room closed for the day,
//! `hall budget --set`, and the plan's rate limit.

#![allow(clippy::unwrap_used)] // a panic is how a test fails

use crate::common::*;

#[test]
fn budgets_hold_items_and_pause_the_daemon() {
    // per_item: the first review spends more than the item may.
    let cfg = format!("{CONFIG}[budget]\nper_item = \"1k\"\n");
    let l = Loop::ready(
        &cfg,
        json!({"review": [reject(), approve()], "fix": [fix("attempts <= 3 # a", "F1")]}),
    );
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
    let l = Loop::ready(
        &cfg,
        json!({"review": [reject(), approve()], "fix": [fix("attempts <= 3 # a", "F1")]}),
    );
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
    l.make_ready();
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
    let review = budget["roles"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["role"] == "review")
        .cloned()
        .unwrap();
    assert_eq!(review["closed"], true, "{budget}");
    // Waiting past `stuck_after` (30m) with nobody on it: one `stuck` notice, however many
    // passes see it.
    let later = [("HALL_NOW", "2026-11-02T11:00:00Z")];
    for _ in 0..2 {
        l.daemon_with(&later);
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
    l.daemon_with(&[("HALL_NOW", "2026-11-03T09:00:00Z")]);
    assert_eq!(l.status()["item"]["state"], "closed");
}

#[test]
fn a_rate_limit_pauses_the_model_workers_until_it_resets() {
    let limited =
        json!({"error": "API Error: 429 {\"type\":\"rate_limit_error\"}", "api_error_status": 429});
    let l = Loop::ready(CONFIG, json!({"review": [limited, approve()]}));
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
    l.daemon_with(&[("HALL_NOW", "2026-11-02T10:00:01Z")]);
    assert_eq!(l.status()["item"]["state"], "closed");
}
