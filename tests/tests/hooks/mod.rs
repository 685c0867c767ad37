//! `hall hook <event>` through the real binary: Claude Code's JSON in, context and
//! verdicts out; the edit, push and note gates; hallmark verification; what hooks
//! record; and failing open on any error of their own.

use std::io::Write;
use std::path::Path;
use std::process::Stdio;

use hallmark_tests::sandbox::{Run, Sandbox};
use serde_json::{Value, json};

mod record;
mod resilience;

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
