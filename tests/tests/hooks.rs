//! `hall hook <event>` through the real binary: Claude Code's JSON in, context and
//! verdicts out; the edit, push and note gates; hallmark verification; what hooks
//! record; and failing open on any error of their own.

use std::io::Write;
use std::path::Path;
use std::process::Stdio;

use hallmark_tests::sandbox::{Run, Sandbox};
use serde_json::{Value, json};

fn hook(sb: &Sandbox, event: &str, input: &Value, vars: &[(&str, &str)]) -> Run {
    hook_raw(sb, event, input.to_string().as_bytes(), vars)
}

fn hook_raw(sb: &Sandbox, event: &str, stdin: &[u8], vars: &[(&str, &str)]) -> Run {
    // Claude Code runs hooks in the project directory.
    let mut cmd = sb.hall_command(&sb.repo);
    cmd.args(["hook", event])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in vars {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("spawn");
    let mut stdin_pipe = child.stdin.take().expect("stdin");
    let _ = stdin_pipe.write_all(stdin);
    drop(stdin_pipe);
    let out = child.wait_with_output().expect("wait");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).to_string(),
        stderr: String::from_utf8_lossy(&out.stderr).to_string(),
    }
}

fn bash(cwd: &Path, command: &str) -> Value {
    json!({"session_id": "s-1", "cwd": cwd, "hook_event_name": "PreToolUse", "tool_name": "Bash",
           "tool_input": {"command": command, "description": "run"}, "tool_use_id": "toolu_1"})
}

fn write(cwd: &Path, file: &Path) -> Value {
    json!({"session_id": "s-1", "cwd": cwd, "hook_event_name": "PreToolUse", "tool_name": "Write",
           "tool_input": {"file_path": file, "content": "x"}, "tool_use_id": "toolu_2"})
}

/// The decision of a PreToolUse answer: `allow` when the hook printed nothing.
fn decision(run: &Run) -> (String, Value) {
    assert_eq!(run.code, 0, "hooks always exit 0: {run:?}");
    if run.stdout.trim().is_empty() {
        return ("allow".into(), Value::Null);
    }
    let v: Value = serde_json::from_str(run.stdout.trim()).expect("hook JSON");
    let out = &v["hookSpecificOutput"];
    assert_eq!(out["hookEventName"], "PreToolUse");
    let reason: Value =
        serde_json::from_str(out["permissionDecisionReason"].as_str().expect("reason"))
            .expect("reason is error JSON");
    (
        out["permissionDecision"]
            .as_str()
            .expect("decision")
            .to_string(),
        reason,
    )
}

/// Writes `.hallmark.toml` in the main checkout and commits it: the rules in effect are
/// the base branch's committed ones.
fn commit_config(sb: &Sandbox, text: &str) {
    std::fs::write(sb.repo.join(".hallmark.toml"), text).expect("config");
    sb.git(
        &sb.repo,
        &[
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "Configure",
            "--",
            ".hallmark.toml",
        ],
    );
}

fn setup() -> (Sandbox, String, std::path::PathBuf) {
    let sb = Sandbox::initialized();
    let v = sb.hall(&sb.repo, &["new", "--title", "Hooked"]).ok();
    let id = v["item"].as_str().expect("id").to_string();
    let wt = sb.worktree(&id);
    (sb, id, wt)
}

#[test]
fn edit_gate_denies_outside_an_items_worktree_and_names_the_fix() {
    let (sb, _id, wt) = setup();
    let (d, reason) = decision(&hook(
        &sb,
        "pre-tool-use",
        &write(&sb.repo, &sb.repo.join("src/new.rs")),
        &[],
    ));
    assert_eq!(d, "deny");
    assert_eq!(reason["error"]["code"], "GATE_DENIED");
    assert_eq!(reason["error"]["next"][0], "hall new --title \"…\"");
    assert_eq!(
        decision(&hook(
            &sb,
            "pre-tool-use",
            &write(&wt, &wt.join("src/new.rs")),
            &[]
        ))
        .0,
        "allow"
    );
    assert_eq!(
        decision(&hook(
            &sb,
            "pre-tool-use",
            &write(&sb.repo, &sb.repo.join("docs/plan.md")),
            &[]
        ))
        .0,
        "allow",
        "free path"
    );
    assert_eq!(
        decision(&hook(
            &sb,
            "pre-tool-use",
            &write(&sb.repo, &sb.repo.join("NOTES.md")),
            &[]
        ))
        .0,
        "allow",
        "*.md"
    );
    assert_eq!(
        decision(&hook(
            &sb,
            "pre-tool-use",
            &write(&sb.repo, &sb.home.join("elsewhere.rs")),
            &[]
        ))
        .0,
        "allow",
        "outside the repo"
    );
    let edit = json!({"session_id": "s", "cwd": sb.repo, "hook_event_name": "PreToolUse", "tool_name": "Edit",
        "tool_input": {"file_path": sb.repo.join("README.md").with_extension("rs"), "old_string": "a", "new_string": "b"}});
    assert_eq!(decision(&hook(&sb, "pre-tool-use", &edit, &[])).0, "deny");
    // Reads are never gated; neither is git commit inside the worktree.
    let read = json!({"session_id": "s", "cwd": sb.repo, "hook_event_name": "PreToolUse", "tool_name": "Read", "tool_input": {"file_path": sb.repo.join("x.rs")}});
    assert_eq!(decision(&hook(&sb, "pre-tool-use", &read, &[])).0, "allow");
    // The denial is recorded.
    let log = sb.hall(&sb.repo, &["log", "--kind", "gate_denied"]).ok();
    assert_eq!(log["events"].as_array().map(Vec::len), Some(2));
    // A dropped item's worktree is no longer an item's worktree.
    sb.hall(&sb.repo, &["drop", "1", "--reason", "x", "--keep-worktree"])
        .ok();
    assert_eq!(
        decision(&hook(
            &sb,
            "pre-tool-use",
            &write(&wt, &wt.join("src/new.rs")),
            &[]
        ))
        .0,
        "deny"
    );
}

#[test]
fn capture_modes_ask_and_off() {
    let (sb, _id, _wt) = setup();
    let config = std::fs::read_to_string(sb.repo.join(".hallmark.toml")).expect("config");
    commit_config(
        &sb,
        &config.replace(
            "# mode = \"gate\"            # gate | ask | off",
            "mode = \"ask\"",
        ),
    );
    assert_eq!(
        decision(&hook(
            &sb,
            "pre-tool-use",
            &write(&sb.repo, &sb.repo.join("a.rs")),
            &[]
        ))
        .0,
        "ask"
    );
    assert_eq!(
        decision(&hook(&sb, "pre-tool-use", &bash(&sb.repo, "git push"), &[])).0,
        "deny",
        "push is never ask"
    );
    commit_config(
        &sb,
        &config.replace(
            "# mode = \"gate\"            # gate | ask | off",
            "mode = \"off\"",
        ),
    );
    assert_eq!(
        decision(&hook(
            &sb,
            "pre-tool-use",
            &write(&sb.repo, &sb.repo.join("a.rs")),
            &[]
        ))
        .0,
        "allow"
    );
}

#[test]
fn the_push_gate_needs_a_real_hallmark_on_head() {
    let (sb, id, wt) = setup();
    let sha = sb.commit(&wt, "a.txt", "a", "work");
    let push = bash(&wt, "git push -u origin HEAD");
    let (d, reason) = decision(&hook(&sb, "pre-tool-use", &push, &[]));
    assert_eq!(d, "deny");
    let msg = reason["error"]["message"].as_str().expect("message");
    assert!(msg.contains("has no hallmark"), "{msg}");
    assert_eq!(
        reason["error"]["next"][0],
        format!("hall propose-ready {id} --summary \"…\"")
    );

    // A forged note: not the hallmark's JSON.
    sb.note(&wt, &json!({"approved": true}));
    let (_, reason) = decision(&hook(&sb, "pre-tool-use", &push, &[]));
    assert!(
        reason["error"]["message"]
            .as_str()
            .expect("m")
            .contains("is not a hallmark"),
        "{reason}"
    );
    // A note copied from another commit.
    sb.note(
        &wt,
        &json!({"v": 1, "item": id, "sha": "3f2a9c1aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "round": 1}),
    );
    let (_, reason) = decision(&hook(&sb, "pre-tool-use", &push, &[]));
    let msg = reason["error"]["message"].as_str().expect("m");
    assert!(
        msg.contains(&format!("its note is for 3f2a9c1, not {}", &sha[..7])),
        "{msg}"
    );
    // The right shape and SHA, but version 1: no signature, so no hallmark.
    sb.note(
        &wt,
        &json!({"v": 1, "item": id, "sha": sha, "round": 1, "actor": "assayer"}),
    );
    let (_, reason) = decision(&hook(&sb, "pre-tool-use", &push, &[]));
    assert!(
        reason["error"]["message"]
            .as_str()
            .expect("m")
            .contains("unsigned"),
        "{reason}"
    );
    assert_eq!(reason["error"]["check"], "push");
    // Struck by Hallmark: signed, and the journal records it at HEAD. Now the push goes
    // through.
    sb.hall(&wt, &["ready"]).ok();
    sb.strike(&id, &wt, &sha, 1);
    assert_eq!(decision(&hook(&sb, "pre-tool-use", &push, &[])).0, "allow");
    // A later commit has no note.
    sb.commit(&wt, "b.txt", "b", "more");
    assert_eq!(decision(&hook(&sb, "pre-tool-use", &push, &[])).0, "deny");
}

#[test]
fn the_note_gate_trusts_only_the_hooks_own_environment() {
    let (sb, _id, wt) = setup();
    let add = bash(&wt, "git notes --ref=hallmark add -m '{}' HEAD");
    assert_eq!(decision(&hook(&sb, "pre-tool-use", &add, &[])).0, "deny");
    let sneaky = bash(
        &wt,
        "HALL_ACTOR=assayer git notes --ref=hallmark add -m '{}' HEAD",
    );
    assert_eq!(
        decision(&hook(&sb, "pre-tool-use", &sneaky, &[])).0,
        "deny",
        "the command text can't claim an actor"
    );
    assert_eq!(
        decision(&hook(
            &sb,
            "pre-tool-use",
            &add,
            &[("HALL_ACTOR", "assayer")]
        ))
        .0,
        "allow"
    );
    assert_eq!(
        decision(&hook(&sb, "pre-tool-use", &add, &[("HALL_ACTOR", "fixer")])).0,
        "deny"
    );
    assert_eq!(
        decision(&hook(
            &sb,
            "pre-tool-use",
            &bash(&wt, "git notes --ref=hallmark show HEAD"),
            &[]
        ))
        .0,
        "allow"
    );
}

#[test]
fn commits_outside_a_worktree_are_denied_unless_only_free_paths() {
    let (sb, _id, wt) = setup();
    std::fs::write(sb.repo.join("main.rs"), "fn main() {}").expect("write");
    sb.git(&sb.repo, &["add", "main.rs"]);
    assert_eq!(
        decision(&hook(
            &sb,
            "pre-tool-use",
            &bash(&sb.repo, "git commit -m wip"),
            &[]
        ))
        .0,
        "deny"
    );
    sb.git(&sb.repo, &["reset", "-q"]);
    std::fs::create_dir_all(sb.repo.join("docs")).expect("mkdir");
    std::fs::write(sb.repo.join("docs/adr.md"), "# ADR").expect("write");
    sb.git(&sb.repo, &["add", "docs/adr.md"]);
    assert_eq!(
        decision(&hook(
            &sb,
            "pre-tool-use",
            &bash(&sb.repo, "git commit -m docs"),
            &[]
        ))
        .0,
        "allow",
        "only free paths staged"
    );
    assert_eq!(
        decision(&hook(
            &sb,
            "pre-tool-use",
            &bash(&sb.repo, "git commit -m d -- docs/adr.md"),
            &[]
        ))
        .0,
        "allow"
    );
    let idiom = "git commit -m \"$(cat <<'EOF'\nFix the thing\n\nLonger body with `git push` in it.\nEOF\n)\"";
    assert_eq!(
        decision(&hook(&sb, "pre-tool-use", &bash(&wt, idiom), &[])).0,
        "allow",
        "the everyday idiom in a worktree"
    );
}

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

#[test]
fn hooks_fail_open_on_any_input_and_do_nothing_outside_an_initialized_repo() {
    let (sb, _id, wt) = setup();
    let good = bash(&wt, "git push").to_string();
    let mut inputs: Vec<Vec<u8>> = vec![
        b"".to_vec(),
        b"not json".to_vec(),
        b"{".to_vec(),
        good.as_bytes()[..good.len() / 2].to_vec(),
        b"[1,2,3]".to_vec(),
        b"{\"tool_name\": 7, \"tool_input\": \"git push\"}".to_vec(),
        b"{\"tool_name\": \"Bash\", \"tool_input\": {\"command\": 12}}".to_vec(),
        b"\xff\xfe\x00\x01".to_vec(),
        vec![b'{'; 100_000],
    ];
    let mut huge = b"{\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"".to_vec();
    huge.extend(std::iter::repeat_n(b'a', 17 * 1024 * 1024));
    huge.extend(b"\"}}");
    // Random bytes and random truncations of real inputs.
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for _ in 0..30 {
        let cut = (next() as usize) % good.len();
        inputs.push(good.as_bytes()[..cut].to_vec());
        inputs.push((0..(next() % 200)).map(|_| next() as u8).collect());
    }
    for input in &inputs {
        for event in [
            "pre-tool-use",
            "session-start",
            "stop",
            "post-tool-use",
            "user-prompt-submit",
            "notification",
        ] {
            let run = hook_raw(&sb, event, input, &[]);
            assert_eq!(run.code, 0, "{event}: {run:?}");
            if event == "pre-tool-use" {
                assert!(
                    !run.stdout.contains("\"deny\""),
                    "never a deny by accident: {}",
                    String::from_utf8_lossy(&input[..input.len().min(80)])
                );
            }
        }
    }
    // A call too large to read might be anything: it is refused, on purpose, with the
    // reason; every other event still just logs it.
    let (d, reason) = decision(&hook_raw(&sb, "pre-tool-use", &huge, &[]));
    assert_eq!(d, "deny");
    assert!(
        reason["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("larger than")),
        "{reason}"
    );
    for event in ["session-start", "stop", "post-tool-use"] {
        let run = hook_raw(&sb, event, &huge, &[]);
        assert_eq!((run.code, run.stdout.as_str()), (0, ""), "{event}");
    }
    let log = std::fs::read_to_string(sb.repo.join(".git/hallmark/hooks.log")).unwrap_or_default();
    assert!(
        log.contains("input is not hook JSON"),
        "errors are logged: {log}"
    );
    // Argument errors of `hall hook` itself are never exit 2.
    for args in [
        vec!["hook"],
        vec!["hook", "nope"],
        vec!["hook", "pre-tool-use", "--bogus", "x"],
    ] {
        let mut cmd = sb.hall_command(&sb.repo);
        let out = cmd.args(&args).stdin(Stdio::null()).output().expect("run");
        assert_eq!(out.status.code(), Some(0), "{args:?}");
    }
    // Outside an initialized repository: nothing at all.
    let outside = Sandbox::new();
    let run = hook(
        &outside,
        "pre-tool-use",
        &bash(&outside.repo, "git push"),
        &[],
    );
    assert_eq!((run.code, run.stdout.as_str()), (0, ""));
    let run = hook(
        &outside,
        "pre-tool-use",
        &write(&outside.repo, &outside.repo.join("a.rs")),
        &[],
    );
    assert_eq!((run.code, run.stdout.as_str()), (0, ""));
}

/// Every labelled command of the corpus, through the real `hall hook pre-tool-use`, in
/// both guard modes. Zero wrong answers.
#[test]
fn the_gate_corpus_through_the_real_hook() {
    let sb = Sandbox::initialized();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/gate");
    let context: Value = serde_json::from_str(
        &std::fs::read_to_string(fixtures.join("context.json")).expect("context"),
    )
    .expect("json");
    for (name, value) in context["aliases"].as_object().expect("aliases") {
        sb.git(
            &sb.repo,
            &[
                "config",
                &format!("alias.{name}"),
                value.as_str().expect("alias"),
            ],
        );
    }
    let base = std::fs::read_to_string(sb.repo.join(".hallmark.toml")).expect("config");
    let with_guard = |guard: &str| {
        let allow: Vec<String> = context["push_allow"]
            .as_array()
            .expect("allow")
            .iter()
            .map(|v| v.to_string())
            .collect();
        let free: Vec<String> = context["free"]
            .as_array()
            .expect("free")
            .iter()
            .map(|v| v.to_string())
            .collect();
        base.replace("# ship = ", "ship = \"rig submit\"\n# ship = ")
            .replace(
                "[capture]\n",
                &format!(
                    "[capture]\npush_guard = \"{guard}\"\npush_allow = [{}]\nfree = [{}]\n",
                    allow.join(", "),
                    free.join(", ")
                ),
            )
    };
    let id = sb.hall(&sb.repo, &["new", "--title", "Corpus"]).ok()["item"]
        .as_str()
        .expect("id")
        .to_string();
    let wt = sb.worktree(&id);
    for (path, text) in context["scripts"].as_object().expect("scripts") {
        let p = wt.join(path);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(p, text.as_str().expect("script")).expect("write");
    }
    for (path, text) in context["files"].as_object().expect("files") {
        let p = wt.join(path);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(p, text.as_str().expect("file")).expect("write");
    }
    for (name, rev) in context["revisions"].as_object().expect("revisions") {
        make_revision(&sb, &wt, name, rev);
    }
    std::fs::write(sb.repo.join("staged.rs"), "fn x() {}").expect("write");
    sb.git(&sb.repo, &["add", "staged.rs"]);
    let corpus = std::fs::read_to_string(fixtures.join("commands.jsonl")).expect("corpus");
    let entries: Vec<Value> = corpus
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("entry"))
        .collect();
    assert!(
        entries.len() >= 150,
        "the corpus has {} commands",
        entries.len()
    );
    let mut wrong = Vec::new();
    for guard in ["strict", "parse"] {
        commit_config(&sb, &with_guard(guard));
        for e in &entries {
            let cmd = e["cmd"].as_str().expect("cmd");
            let cwd = if e["where"] == "main" {
                sb.repo.clone()
            } else {
                wt.clone()
            };
            let actor = e["actor"]
                .as_str()
                .map(|a| vec![("HALL_ACTOR", a)])
                .unwrap_or_default();
            let (got, _) = decision(&hook(&sb, "pre-tool-use", &bash(&cwd, cmd), &actor));
            let expect_deny = match e["expect"].as_str().expect("expect") {
                "deny" => true,
                "deny-strict" => guard == "strict",
                _ => false,
            };
            if (got == "deny") != expect_deny {
                wrong.push(format!(
                    "[{guard}] {cmd:?}: got {got}, expected {} ({})",
                    if expect_deny { "deny" } else { "allow" },
                    e["why"]
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "{} wrong answers:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

#[test]
fn a_corrupt_journal_or_config_never_breaks_the_session() {
    let (sb, id, wt) = setup();
    let path = sb
        .repo
        .join(format!(".git/hallmark/items/{id}/events.jsonl"));
    let mut text = std::fs::read_to_string(&path).expect("read");
    text.push_str("garbage in the middle\n");
    text.push_str(&std::fs::read_to_string(&path).expect("read"));
    std::fs::write(&path, text).expect("write");
    for (event, input) in [
        ("pre-tool-use", write(&wt, &wt.join("a.rs"))),
        (
            "session-start",
            json!({"session_id": "s", "cwd": wt, "hook_event_name": "SessionStart"}),
        ),
        (
            "user-prompt-submit",
            json!({"session_id": "s", "cwd": wt, "hook_event_name": "UserPromptSubmit", "prompt": "hi"}),
        ),
        (
            "stop",
            json!({"session_id": "s", "cwd": wt, "hook_event_name": "Stop", "last_assistant_message": "done"}),
        ),
    ] {
        let run = hook(&sb, event, &input, &[]);
        assert_eq!(run.code, 0, "{event}: {run:?}");
        assert!(!run.stdout.contains("\"deny\""), "{event}: {run:?}");
    }
    // A broken config is logged, and the gates go on with the defaults: breaking the
    // config must not be a way around them.
    commit_config(&sb, "max_rejects = \"many\"\n");
    let run = hook(&sb, "pre-tool-use", &bash(&wt, "git status"), &[]);
    assert_eq!((run.code, run.stdout.as_str()), (0, ""));
    std::fs::write(
        &path,
        std::fs::read_to_string(&path)
            .expect("read")
            .replace("garbage in the middle\n", ""),
    )
    .expect("repair");
    let run = hook(&sb, "pre-tool-use", &bash(&wt, "git push"), &[]);
    let log = std::fs::read_to_string(sb.repo.join(".git/hallmark/hooks.log")).unwrap_or_default();
    assert_eq!(decision(&run).0, "deny", "{log}");
    let log = std::fs::read_to_string(sb.repo.join(".git/hallmark/hooks.log")).expect("log");
    assert!(log.contains("max_rejects"), "{log}");
}

fn tool(cwd: &Path, name: &str, input: Value) -> Value {
    json!({"session_id": "s-1", "cwd": cwd, "hook_event_name": "PreToolUse", "tool_name": name,
           "tool_input": input, "tool_use_id": "toolu_3"})
}

/// The gate that denied a PreToolUse answer, or `allow`.
fn verdict(run: &Run) -> String {
    let (d, reason) = decision(run);
    if d == "allow" {
        return d;
    }
    reason["error"]["check"].as_str().unwrap_or("?").to_string()
}

#[test]
fn a_session_stays_gated_for_its_repository_wherever_its_directory_goes() {
    let (sb, _id, wt) = setup();
    let outside = tempfile::tempdir().expect("tempdir");
    let outside = outside.path().canonicalize().expect("canonical");
    let push = format!(
        "git -C {} push -q origin HEAD:refs/heads/away",
        wt.display()
    );
    let call = |sid: &str, cwd: &Path, command: &str| {
        json!({"session_id": sid, "cwd": cwd, "hook_event_name": "PreToolUse",
               "tool_name": "Bash", "tool_input": {"command": command}})
    };
    // A session never seen in a repository, outside every repository: nothing to gate.
    let run = hook(&sb, "pre-tool-use", &call("s-free", &outside, &push), &[]);
    assert_eq!(verdict(&run), "allow");
    // A session that started in the worktree is bound to its repository, where no
    // session can write.
    let start = json!({"session_id": "s-bound", "cwd": wt, "hook_event_name": "SessionStart"});
    assert_eq!(hook(&sb, "session-start", &start, &[]).code, 0);
    let binding = sb.root.join("data/sessions/s-bound.json");
    assert!(binding.is_file(), "the binding is recorded");
    let (d, reason) = decision(&hook(&sb, "pre-tool-use", &write(&wt, &binding), &[]));
    assert_eq!(
        (d.as_str(), &reason["error"]["check"]),
        ("deny", &json!("protect"))
    );
    // From outside every repository, and from a directory that is gone.
    for cwd in [outside.clone(), outside.join("deleted")] {
        let run = hook(&sb, "pre-tool-use", &call("s-bound", &cwd, &push), &[]);
        assert_eq!(verdict(&run), "push", "{}", cwd.display());
        let note = format!(
            "git --git-dir={} notes --ref=hallmark add -m x HEAD",
            sb.repo.join(".git").display()
        );
        let run = hook(&sb, "pre-tool-use", &call("s-bound", &cwd, &note), &[]);
        assert_eq!(verdict(&run), "note", "{}", cwd.display());
    }
    // Claude Code's project directory anchors a session before it is bound (and a
    // directory that is gone is judged there, where Claude Code runs the command).
    let project = [("CLAUDE_PROJECT_DIR", wt.to_str().expect("utf8"))];
    let run = hook(
        &sb,
        "pre-tool-use",
        &call("s-new", &outside, &push),
        &project,
    );
    assert_eq!(verdict(&run), "push");
    let plain = "git push -q origin HEAD:refs/heads/away";
    let run = hook(
        &sb,
        "pre-tool-use",
        &call("", &outside.join("gone"), plain),
        &project,
    );
    assert_eq!(verdict(&run), "push");
    // A repository made inside the worktree doesn't hide the worktree: relative paths
    // resolve against the nested directory, git aimed at the worktree is judged for it,
    // and the nested repository itself is not Hallmark's to gate.
    sb.git(&wt, &["init", "-q", ".scratch"]);
    let nested = wt.join(".scratch");
    let judge = |v: &Value| verdict(&hook(&sb, "pre-tool-use", v, &[]));
    assert_eq!(
        judge(&bash(&nested, "git -C .. push -q origin HEAD:refs/heads/x")),
        "push"
    );
    assert_eq!(
        judge(&bash(&nested, "git -C .. notes add -m x HEAD")),
        "note"
    );
    assert_eq!(
        judge(&bash(&nested, "echo x > ../../repo/.git/hooks/pre-push")),
        "protect"
    );
    assert_eq!(
        judge(&write(&nested, &sb.repo.join(".git/hooks/pre-push"))),
        "protect"
    );
    assert_eq!(judge(&write(&nested, &wt.join("src/ok.rs"))), "allow");
    assert_eq!(judge(&write(&nested, &nested.join("own.txt"))), "allow");
    assert_eq!(
        judge(&bash(&nested, "git add -A && git commit -q -m 'its own'")),
        "allow"
    );
    assert!(!sb.repo.join(".git/hooks/pre-push").exists());
}

#[test]
fn tools_the_hook_does_not_know_are_judged_by_what_their_input_says() {
    let (sb, _id, wt) = setup();
    let common = sb.repo.join(".git");
    let judge = |name: &str, input: Value| {
        verdict(&hook(&sb, "pre-tool-use", &tool(&wt, name, input), &[]))
    };
    // Every string, however deep, is a path the tool may write.
    let deep = json!({"files": [{"target": {"path": common.join("config")}, "text": "x"}]});
    assert_eq!(judge("mcp__fs__write_many", deep), "protect");
    for path in [
        "../repo/.git/hooks/pre-push".to_string(),
        "~/.gitconfig".to_string(),
        format!("file://{}", common.join("hooks/post-commit").display()),
        ".git".to_string(),
    ] {
        let input = json!({"path": path, "content": "x"});
        assert_eq!(
            judge("mcp__filesystem__write_file", input),
            "protect",
            "{path}"
        );
    }
    let key = sb.config_dir().join("signing_ed25519");
    assert_eq!(judge("mcp__fs__read_file", json!({"path": key})), "protect");
    // Strings that land nowhere protected, and tools that write nothing a session chooses.
    let notes = json!({"path": wt.join("notes.md"), "content": "see .git/config", "n": 3});
    assert_eq!(judge("mcp__filesystem__write_file", notes), "allow");
    assert_eq!(
        judge("mcp__search__query", json!({"q": "git push", "limit": 5})),
        "allow"
    );
    let todos = json!({"todos": [{"content": ".git/config", "status": "pending"}]});
    assert_eq!(judge("TodoWrite", todos), "allow");
    // A name that says it pushes, and an input too big to read.
    assert_eq!(
        judge("mcp__github__push_files", json!({"branch": "x"})),
        "push"
    );
    let many: Vec<String> = (0..2000).map(|i| format!("f{i}")).collect();
    assert_eq!(
        judge("mcp__fs__touch", json!({"paths": many})),
        "unreadable"
    );
    // Input nested deeper than the hook's reader goes is refused, not let through.
    let mut deep = json!("x");
    for _ in 0..200 {
        deep = json!([deep]);
    }
    assert_eq!(judge("mcp__fs__write", json!({"path": deep})), "hook");
    // Shell text is judged as a Bash command.
    let push = json!({"command": "git push -q origin HEAD:refs/heads/x", "description": "d"});
    assert_eq!(judge("Monitor", push.clone()), "push");
    assert_eq!(judge("PowerShell", push), "push");
    let words = json!({"cmd": ["git", "notes", "--ref=hallmark", "add", "-m", "x", "HEAD"]});
    assert_eq!(judge("mcp__shell__run", words), "note");
    assert_eq!(
        judge(
            "PowerShell",
            json!({"command": "hall verdict --file v.json"})
        ),
        "hall"
    );
    // PowerShell: what the shell reading can't follow is refused in strict mode, and
    // its parameters' values are paths too.
    assert_eq!(
        judge("PowerShell", json!({"command": "Get-ChildItem -Path src"})),
        "allow"
    );
    assert_eq!(
        judge("PowerShell", json!({"command": "iex 'git status'"})),
        "unreadable"
    );
    let set = json!({"command": "Set-Content -Path:.git/hooks/post-commit -Value x"});
    assert_eq!(judge("PowerShell", set), "protect");
    // MultiEdit and NotebookEdit are judged like Edit.
    let multi = json!({"file_path": common.join("config"), "edits": []});
    assert_eq!(judge("MultiEdit", multi), "protect");
    let nb = json!({"notebook_path": common.join("hooks/x.ipynb"), "new_source": ""});
    assert_eq!(judge("NotebookEdit", nb), "protect");
    // From the main checkout, the edit gate: outside an item's worktree.
    let outside_item = json!({"file_path": sb.repo.join("src/a.rs"), "edits": []});
    let run = hook(
        &sb,
        "pre-tool-use",
        &tool(&sb.repo, "MultiEdit", outside_item),
        &[],
    );
    assert_eq!(verdict(&run), "edit");
    let mine = json!({"notebook_path": wt.join("a.ipynb"), "new_source": ""});
    assert_eq!(judge("NotebookEdit", mine), "allow");
}

#[test]
fn out_of_time_a_call_that_might_do_harm_is_denied_and_a_read_is_not() {
    let (sb, _id, wt) = setup();
    // The analysis is made to sleep past a short deadline.
    let slow = [
        ("HALL_HOOK_STALL_MS", "10000"),
        ("HALL_HOOK_DEADLINE_MS", "300"),
    ];
    let start = std::time::Instant::now();
    let run = hook(&sb, "pre-tool-use", &bash(&wt, "git status"), &slow);
    assert!(
        start.elapsed() < std::time::Duration::from_secs(5),
        "the watchdog answered in time: {:?}",
        start.elapsed()
    );
    let (d, reason) = decision(&run);
    assert_eq!(d, "deny");
    assert_eq!(reason["error"]["check"], "deadline");
    assert_eq!(reason["error"]["code"], "GATE_DENIED");
    assert!(
        reason["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("ran out of time")),
        "{reason}"
    );
    for input in [
        write(&wt, &wt.join("a.rs")),
        tool(&wt, "mcp__fs__write", json!({"path": "a.rs"})),
        tool(&wt, "PowerShell", json!({"command": "Get-ChildItem"})),
    ] {
        let run = hook(&sb, "pre-tool-use", &input, &slow);
        assert_eq!(verdict(&run), "deadline", "{input}");
    }
    // A read, a tool that writes nothing, and the other events fail open: exit 0, nothing
    // printed. A read of Hallmark's configuration (the signing key) does not.
    let read = |p: &Path| tool(&wt, "Read", json!({"file_path": p}));
    for (event, input) in [
        ("pre-tool-use", read(&wt.join("lib.rs"))),
        ("pre-tool-use", tool(&wt, "TodoWrite", json!({"todos": []}))),
        (
            "session-start",
            json!({"session_id": "s", "cwd": wt, "hook_event_name": "SessionStart"}),
        ),
    ] {
        let run = hook(&sb, event, &input, &slow);
        assert_eq!((run.code, run.stdout.as_str()), (0, ""), "{event} {input}");
    }
    let key = sb.config_dir().join("signing_ed25519");
    assert_eq!(
        verdict(&hook(&sb, "pre-tool-use", &read(&key), &slow)),
        "deadline"
    );
    // Without the stall the same calls are judged as usual.
    let run = hook(&sb, "pre-tool-use", &bash(&wt, "git status"), &[slow[1]]);
    assert_eq!(verdict(&run), "allow");
    let log = std::fs::read_to_string(sb.repo.join(".git/hallmark/hooks.log")).unwrap_or_default();
    assert!(log.contains("gave up"), "{log}");
}

#[test]
fn a_glob_that_would_backtrack_is_judged_in_time_and_the_push_after_it_too() {
    let (sb, _id, wt) = setup();
    std::fs::write(wt.join("a".repeat(200)), "").expect("write");
    let glob = format!("cat {}b", "*a".repeat(20));
    let start = std::time::Instant::now();
    let run = hook(
        &sb,
        "pre-tool-use",
        &bash(
            &wt,
            &format!("{glob} 2>/dev/null; git push -q origin HEAD:refs/heads/x"),
        ),
        &[],
    );
    assert!(
        start.elapsed() < std::time::Duration::from_secs(5),
        "judged in {:?}",
        start.elapsed()
    );
    assert_eq!(verdict(&run), "push");
    assert_eq!(
        verdict(&hook(&sb, "pre-tool-use", &bash(&wt, &glob), &[])),
        "allow"
    );
    // A chain of wrappers that once overflowed the hook's stack (a hook that dies lets
    // the call through) is judged, push and all.
    let chain = format!(
        "{}git push -q origin HEAD:refs/heads/x",
        "env ".repeat(5000)
    );
    assert_eq!(
        verdict(&hook(&sb, "pre-tool-use", &bash(&wt, &chain), &[])),
        "push"
    );
    // A glob wider than the hook lists in one call can't be checked, so it is refused.
    let many = wt.join("many");
    std::fs::create_dir_all(&many).expect("mkdir");
    for i in 0..2100 {
        std::fs::write(many.join(format!("f{i}")), "").expect("write");
    }
    let (d, reason) = decision(&hook(&sb, "pre-tool-use", &bash(&wt, "rm many/*"), &[]));
    assert_eq!(d, "deny");
    assert!(
        reason["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("more files than the hook checks")),
        "{reason}"
    );
    assert_eq!(
        verdict(&hook(&sb, "pre-tool-use", &bash(&wt, "rm many/f1*"), &[])),
        "allow"
    );
}

/// Makes branch `name` one commit on `wt`'s HEAD that adds the revision's files and
/// symbolic links, written with plumbing so no working tree changes.
fn make_revision(sb: &Sandbox, wt: &Path, name: &str, rev: &Value) {
    let mut script = String::from(
        "set -euo pipefail\nexport GIT_INDEX_FILE=\"$(git rev-parse --absolute-git-dir)/corpus-index\"\ngit read-tree HEAD\n",
    );
    let entries = [("files", "100644"), ("links", "120000")];
    for (key, mode) in entries {
        for (path, content) in rev[key].as_object().into_iter().flatten() {
            let content = content.as_str().expect("content");
            script.push_str(&format!(
                "git update-index --add --cacheinfo {mode},\"$(printf %s '{content}' | git hash-object -w --stdin)\",'{path}'\n"
            ));
        }
    }
    script.push_str(&format!(
        "git update-ref refs/heads/{name} \"$(git commit-tree -p HEAD -m {name} \"$(git write-tree)\")\"\nrm -f \"$GIT_INDEX_FILE\"\n"
    ));
    let run = sb.sh(wt, &script, &[]);
    assert_eq!(run.code, 0, "revision {name}: {}", run.stderr);
}
