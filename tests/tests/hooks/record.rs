//! What the hooks record: the session's context and prompts, commits, the turn's usage and notifications.

use super::*;

#[test]
fn session_start_and_prompts_give_context_and_are_recorded() {
    let (sb, id, wt) = setup();
    let start = json!({"session_id": "s-7", "cwd": sb.repo, "hook_event_name": "SessionStart", "source": "startup"});
    let run = hook(&sb, "session-start", &start, &[]);
    let v: Value = serde_json::from_str(run.stdout.trim()).expect("json");
    assert_eq!(v["hookSpecificOutput"]["hookEventName"], "SessionStart");
    let ctx = v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .expect("context");
    assert!(
        ctx.contains("hall new --title") && ctx.contains(&id),
        "{ctx}"
    );
    // In the worktree: the item, its state, next; and what the person said since the last run.
    sb.commit(&wt, "a.txt", "a", "a");
    sb.hall(&wt, &["ready"]).ok();
    sb.hall(&sb.repo, &["pull-back", &id, "--reason", "use the new API"])
        .ok();
    let start = json!({"session_id": "s-8", "cwd": wt, "hook_event_name": "SessionStart", "source": "startup"});
    let run = hook(&sb, "session-start", &start, &[]);
    let v: Value = serde_json::from_str(run.stdout.trim()).expect("json");
    let ctx = v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .expect("context");
    assert!(
        ctx.contains(&format!("works on {id}")) && ctx.contains("development"),
        "{ctx}"
    );
    assert!(ctx.contains("pulled it back: use the new API"), "{ctx}");
    // A prompt is recorded under the item; while in review, it offers pull-back.
    let prompt = json!({"session_id": "s-8", "cwd": wt, "hook_event_name": "UserPromptSubmit", "prompt": "rename the flag"});
    let run = hook(&sb, "user-prompt-submit", &prompt, &[]);
    assert_eq!(
        run.stdout.trim(),
        "",
        "already told at session start: {run:?}"
    );
    sb.hall(&wt, &["ready"]).ok();
    let run = hook(&sb, "user-prompt-submit", &prompt, &[]);
    let v: Value = serde_json::from_str(run.stdout.trim()).expect("json");
    assert!(
        v["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .expect("c")
            .contains(&format!("hall pull-back {id}"))
    );
    let log = sb.hall(&sb.repo, &["log", &id, "--kind", "prompt"]).ok();
    assert_eq!(log["events"].as_array().map(Vec::len), Some(2));
    assert_eq!(log["events"][0]["text"], "rename the flag");
    assert_eq!(log["events"][0]["actor"], "you");
}

#[test]
fn post_tool_use_records_commits_and_binds_sessions_from_hall_output() {
    let (sb, id, wt) = setup();
    // `hall new` run by the agent in the main checkout: its JSON binds the session.
    let stdout = json!({"item": id, "state": "development"}).to_string();
    let post = json!({"session_id": "s-9", "cwd": sb.repo, "hook_event_name": "PostToolUse", "tool_name": "Bash",
        "tool_input": {"command": "hall new --title Hooked"}, "tool_response": {"stdout": stdout, "stderr": "", "interrupted": false}});
    assert_eq!(hook(&sb, "post-tool-use", &post, &[]).code, 0);
    let session: Value = serde_json::from_str(
        &std::fs::read_to_string(sb.repo.join(".git/hallmark/sessions/s-9.json")).expect("session"),
    )
    .expect("json");
    assert_eq!(session["item"], id.as_str());
    let sha = sb.commit(&wt, "c.txt", "c", "Add c");
    let post = json!({"session_id": "s-9", "cwd": wt, "hook_event_name": "PostToolUse", "tool_name": "Bash",
        "tool_input": {"command": "git add c.txt && git commit -m 'Add c'"}, "tool_response": {"stdout": "", "stderr": ""}});
    hook(&sb, "post-tool-use", &post, &[]);
    let log = sb.hall(&sb.repo, &["log", &id, "--kind", "commit"]).ok();
    assert_eq!(log["events"][0]["sha"], sha.as_str());
    assert_eq!(log["events"][0]["subject"], "Add c");
}

#[test]
fn stop_records_the_turn_and_usage_from_the_transcript_once() {
    let (sb, id, wt) = setup();
    let dir = sb.home.join(".claude/projects/x");
    std::fs::create_dir_all(dir.join("s-5/subagents")).expect("mkdir");
    let line = |req: &str, model: &str, input: u64| {
        json!({"type": "assistant", "requestId": req, "message": {"id": format!("msg_{req}"), "model": model,
            "usage": {"input_tokens": input, "output_tokens": 10, "cache_read_input_tokens": 100, "cache_creation_input_tokens": 5}}})
        .to_string()
    };
    let transcript = dir.join("s-5.jsonl");
    // Two content blocks of one response share a request id: counted once.
    std::fs::write(
        &transcript,
        format!(
            "{}\n{}\n{{\"type\":\"user\"}}\n",
            line("r1", "claude-sonnet-5-5", 1000),
            line("r1", "claude-sonnet-5-5", 1000)
        ),
    )
    .expect("write");
    std::fs::write(
        dir.join("s-5/subagents/agent-a1.jsonl"),
        format!("{}\n", line("r2", "claude-haiku-4-5", 300)),
    )
    .expect("write");
    let stop = json!({"session_id": "s-5", "cwd": wt, "transcript_path": transcript, "hook_event_name": "Stop",
        "stop_hook_active": false, "last_assistant_message": "Renamed the flag and updated tests."});
    assert_eq!(hook(&sb, "stop", &stop, &[]).code, 0);
    // The next Stop sees the same lines plus one new response.
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&transcript)
        .expect("open");
    writeln!(f, "{}", line("r1", "claude-sonnet-5-5", 1000)).expect("write");
    writeln!(f, "{}", line("r3", "claude-sonnet-5-5", 50)).expect("write");
    assert_eq!(hook(&sb, "stop", &stop, &[]).code, 0);
    let usage = sb
        .hall(&sb.repo, &["usage", "--by", "model", "--item", &id])
        .ok();
    let rows = usage["rows"].as_array().expect("rows");
    let sonnet = rows
        .iter()
        .find(|r| r["key"] == "claude-sonnet-5-5")
        .expect("sonnet");
    assert_eq!(sonnet["input"], 1050, "r1 once, r3 once: {usage}");
    let haiku = rows
        .iter()
        .find(|r| r["key"] == "claude-haiku-4-5")
        .expect("subagent usage counted");
    assert_eq!(haiku["input"], 300);
    assert!(usage["total"]["cost_usd"].as_f64().expect("cost") > 0.0);
    let turns = sb.hall(&sb.repo, &["log", &id, "--kind", "turn"]).ok();
    assert_eq!(
        turns["events"][0]["summary"],
        "Renamed the flag and updated tests."
    );
}

#[test]
fn notifications_become_notices_under_the_sessions_item() {
    let (sb, id, wt) = setup();
    let n = json!({"session_id": "s-3", "cwd": wt, "hook_event_name": "Notification", "message": "Claude needs your permission", "notification_type": "permission_prompt"});
    assert_eq!(hook(&sb, "notification", &n, &[]).code, 0);
    let notices = sb.hall(&sb.repo, &["inbox", "--notices"]).ok();
    assert_eq!(notices["notices"][0]["kind"], "session_waiting");
    assert_eq!(notices["notices"][0]["item"], id.as_str());
}
