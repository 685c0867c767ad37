//! The tool-call policy through the real `hall hook`: the replay corpus of sessions in
//! `tests/fixtures/tool-policy/sessions/` (each call's verdict against its label), a
//! repository's own policy room swapped in from the base branch and not from a branch,
//! failing open, and `hall policy report`.

use std::path::{Path, PathBuf};

use hallmark_tests::sandbox::{Sandbox, built_wasm};
use serde_json::{Value, json};

/// What the hook said about one call.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Said {
    Allow,
    /// A nudge: the detector, and whether it is a would-block.
    Nudge(String, bool),
    /// A denial (or a question) by the tool policy: the detector.
    Deny(String),
    /// A denial by one of the other gates.
    Gate(String),
}

impl Said {
    fn blocks(&self) -> bool {
        matches!(self, Said::Nudge(_, true) | Said::Deny(_))
    }
}

/// Reads a PreToolUse answer.
fn said(stdout: &str) -> Said {
    if stdout.trim().is_empty() {
        return Said::Allow;
    }
    let v: Value = serde_json::from_str(stdout.trim()).expect("hook JSON");
    let out = &v["hookSpecificOutput"];
    if let Some(text) = out["additionalContext"].as_str() {
        let inner = text
            .strip_prefix("Hallmark's tool policy (")
            .and_then(|t| t.split_once(')'))
            .map(|(d, _)| d.to_string())
            .unwrap_or_else(|| panic!("a nudge names its detector: {text}"));
        return Said::Nudge(inner, text.contains("would have been blocked"));
    }
    let reason: Value = serde_json::from_str(
        out["permissionDecisionReason"]
            .as_str()
            .expect("a decision has a reason"),
    )
    .expect("the reason is error JSON");
    let check = reason["error"]["check"].as_str().unwrap_or("").to_string();
    match check.strip_prefix("tool-policy:") {
        Some(d) => Said::Deny(d.to_string()),
        None => Said::Gate(check),
    }
}

/// A sandbox with an item whose worktree the sessions work in, and the policy's mode
/// set the way a person sets it: `enforce` in the user's own config (a repository may
/// only relax), `observe` by default.
struct World {
    sb: Sandbox,
    wt: PathBuf,
}

impl World {
    fn new(mode: &str) -> World {
        let sb = Sandbox::initialized();
        if mode == "enforce" {
            enforce(&sb);
        }
        let wt = new_item(&sb, "Policy replay");
        World { sb, wt }
    }

    /// Runs one hook with `input` (given the session and cwd) and returns its stdout.
    fn hook(&self, event: &str, session: &str, cwd: &Path, mut input: Value) -> String {
        input["session_id"] = session.into();
        input["cwd"] = cwd.display().to_string().into();
        input["transcript_path"] = "/dev/null".into();
        let (stdout, code) = self.sb.hook(cwd, event, &input, &[]);
        assert_eq!(code, Some(0), "hooks always exit 0");
        stdout
    }
}

fn enforce(sb: &Sandbox) {
    let file = sb.config_dir().join("config.toml");
    let mut text = std::fs::read_to_string(&file).unwrap_or_default();
    text.push_str("\n[policy]\nmode = \"enforce\"\n");
    std::fs::write(&file, text).expect("user config");
}

fn new_item(sb: &Sandbox, title: &str) -> PathBuf {
    new_item_id(sb, title).1
}

fn new_item_id(sb: &Sandbox, title: &str) -> (String, PathBuf) {
    let v = sb.hall(&sb.repo, &["new", "--title", title]).ok();
    let id = v["item"].as_str().expect("id").to_string();
    let wt = sb.worktree(&id);
    (id, wt)
}

/// The corpus's relative paths made absolute in `wt`.
fn absolute(input: &Value, wt: &Path) -> Value {
    let mut input = input.clone();
    for key in ["file_path", "notebook_path", "path"] {
        if let Some(p) = input[key].as_str()
            && !p.starts_with('/')
        {
            input[key] = wt.join(p).display().to_string().into();
        }
    }
    input
}

fn corpus() -> Vec<(String, Value)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/tool-policy/sessions");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("the corpus")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let name = p.file_name().expect("name").to_string_lossy().into_owned();
            let v = serde_json::from_slice(&std::fs::read(&p).expect("read")).expect("JSON");
            (name, v)
        })
        .collect()
}

/// Makes the item's journal show `check` failing `runs` times in a row the same way.
fn failing_check(sb: &Sandbox, id: &str, wt: &Path, check: &str, runs: u64) {
    let sha = sb.git(wt, &["rev-parse", "HEAD"]);
    for _ in 0..runs {
        sb.record(
            id,
            "assayer",
            json!({"event": "check_run", "sha": sha, "check": check, "exit_code": 1,
                   "duration_ms": 10, "output": "test parse::empty ... FAILED\nassertion failed"}),
        );
    }
}

/// Replays one session; returns the problems found (empty when every label held).
fn replay(world: &World, file: &str, session: &Value, wt: &Path) -> Vec<String> {
    let sid = file.trim_end_matches(".json").replace('.', "-");
    let mode = session["mode"].as_str().unwrap_or("observe");
    let healthy = session["kind"] == "healthy";
    let calls = session["calls"].as_array().expect("calls");
    let first_label = calls
        .iter()
        .position(|c| c["expect"].as_str().is_some_and(|e| e.starts_with("deny:")));
    assert!(
        healthy || first_label.is_some(),
        "{file}: a flail session labels the call that must be caught"
    );
    let mut problems = Vec::new();
    for (i, c) in calls.iter().enumerate() {
        let tool = c["tool"].as_str().expect("tool");
        let input = absolute(&c["input"], wt);
        let pre = json!({"hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": input,
                         "tool_use_id": format!("toolu_{i}")});
        let got = said(&world.hook("pre-tool-use", &sid, wt, pre));
        let at = format!("{file} call {} ({tool} {})", i + 1, c["input"]);
        if let Said::Gate(g) = &got {
            problems.push(format!(
                "{at}: the {g} gate denied it; the corpus should not"
            ));
            continue;
        }
        match c["expect"].as_str() {
            Some(e) if e.starts_with("deny:") => {
                let d = &e["deny:".len()..];
                let want = if mode == "enforce" {
                    Said::Deny(d.into())
                } else {
                    Said::Nudge(d.into(), true)
                };
                if got != want {
                    problems.push(format!("{at}: expected {want:?}, got {got:?}"));
                }
            }
            Some(e) if e.starts_with("nudge:") => {
                let want = Said::Nudge(e["nudge:".len()..].into(), false);
                if got != want {
                    problems.push(format!("{at}: expected {want:?}, got {got:?}"));
                }
            }
            _ => {
                let early = first_label.is_none_or(|f| i < f);
                if got.blocks() && (healthy || early) {
                    problems.push(format!("{at}: a false positive: {got:?}"));
                }
            }
        }
        if matches!(got, Said::Deny(_)) {
            // A denied call does not run, so no post-tool event follows it.
            continue;
        }
        let output = c["output"].as_str().unwrap_or("");
        let post = if c["ok"].as_bool().unwrap_or(true) {
            let response = if tool == "Bash" {
                json!({"stdout": output, "stderr": "", "interrupted": false, "isImage": false})
            } else {
                json!({"content": output})
            };
            (
                "post-tool-use",
                json!({"hook_event_name": "PostToolUse", "tool_name": tool,
                "tool_input": input, "tool_response": response, "tool_use_id": format!("toolu_{i}")}),
            )
        } else {
            (
                "post-tool-use-failure",
                json!({"hook_event_name": "PostToolUseFailure",
                "tool_name": tool, "tool_input": input, "error": output, "is_interrupt": false,
                "tool_use_id": format!("toolu_{i}")}),
            )
        };
        world.hook(post.0, &sid, wt, post.1);
    }
    problems
}

#[test]
fn the_replay_corpus_is_judged_as_labelled_through_the_real_hooks() {
    let sessions = corpus();
    assert!(
        sessions.len() >= 40,
        "the corpus has {} sessions",
        sessions.len()
    );
    let healthy = sessions
        .iter()
        .filter(|(_, s)| s["kind"] == "healthy")
        .count();
    assert!(healthy >= 10 && sessions.len() - healthy >= 10);
    let observe = World::new("observe");
    let enforce = World::new("enforce");
    let mut problems = Vec::new();
    let mut labels = 0;
    for (file, session) in &sessions {
        let world = if session["mode"] == "enforce" {
            &enforce
        } else {
            &observe
        };
        // A session whose item has a failing check gets an item of its own.
        let wt = match session.get("failing_check").filter(|f| !f.is_null()) {
            Some(f) => {
                let (id, wt) = new_item_id(&world.sb, file);
                let check = f["check"].as_str().expect("check");
                let runs = f["same_output_runs"].as_u64().expect("runs");
                failing_check(&world.sb, &id, &wt, check, runs);
                wt
            }
            None => world.wt.clone(),
        };
        labels += session["calls"]
            .as_array()
            .expect("calls")
            .iter()
            .filter(|c| c["expect"].is_string())
            .count();
        problems.extend(replay(world, file, session, &wt));
    }
    assert!(labels >= 20, "{labels} labelled calls");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // Every nudge, would-block and block is in the journal, and the report counts them.
    let report = observe
        .sb
        .hall(&observe.sb.repo, &["policy", "report"])
        .ok();
    let would: u64 = report["detectors"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|r| r["would_block"].as_u64().unwrap_or(0))
        .sum();
    assert!(would > 0, "{report}");
    assert!(
        report["detectors"]
            .as_array()
            .expect("rows")
            .iter()
            .all(|r| r["blocks"] == 0),
        "observe mode blocks nothing: {report}"
    );
    let report = enforce
        .sb
        .hall(&enforce.sb.repo, &["policy", "report"])
        .ok();
    let blocks: u64 = report["detectors"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|r| r["blocks"].as_u64().unwrap_or(0))
        .sum();
    assert!(blocks > 0, "{report}");
}

/// Calls the same failing command `n` times in session `sid`; what the hook said each time.
fn repeat_failure(world: &World, sid: &str, n: usize) -> Vec<Said> {
    (0..n)
        .map(|i| {
            let input = json!({"command": "./run-integration.sh --fast"});
            let pre = json!({"hook_event_name": "PreToolUse", "tool_name": "Bash",
                             "tool_input": input, "tool_use_id": format!("t{i}")});
            let got = said(&world.hook("pre-tool-use", sid, &world.wt, pre));
            if !matches!(got, Said::Deny(_)) {
                let post = json!({"hook_event_name": "PostToolUseFailure", "tool_name": "Bash",
                    "tool_input": input, "error": "Exit code 127\n./run-integration.sh: not found",
                    "tool_use_id": format!("t{i}")});
                world.hook("post-tool-use-failure", sid, &world.wt, post);
            }
            got
        })
        .collect()
}

#[test]
fn a_repositorys_own_policy_room_counts_from_the_base_branch_only() {
    let world = World::new("observe");
    let sb = &world.sb;
    // The built-in room: the third identical failure is only a nudge.
    let builtin = repeat_failure(&world, "s-builtin", 3);
    assert_eq!(
        builtin[2],
        Said::Nudge("repetition".into(), false),
        "{builtin:?}"
    );
    // The same stricter room committed on the item's branch changes nothing.
    let strict = built_wasm("hall_fixture_strict_tool_policy.wasm");
    std::fs::create_dir_all(world.wt.join("policy")).expect("mkdir");
    std::fs::copy(&strict, world.wt.join("policy/strict.wasm")).expect("copy");
    let config = std::fs::read_to_string(sb.repo.join(".hallmark.toml")).expect("config");
    let with_room = format!("{config}\n[rooms]\ntool-policy = \"policy/strict.wasm\"\n");
    std::fs::write(world.wt.join(".hallmark.toml"), &with_room).expect("write");
    sb.git(&world.wt, &["add", "-A"]);
    sb.git(
        &world.wt,
        &["commit", "-q", "-m", "A kinder policy, said the branch"],
    );
    let branch = repeat_failure(&world, "s-branch", 3);
    assert_eq!(branch, builtin, "a branch's room has no effect");
    // On the base branch it is the repository's: the third failure would block.
    std::fs::create_dir_all(sb.repo.join("policy")).expect("mkdir");
    std::fs::copy(&strict, sb.repo.join("policy/strict.wasm")).expect("copy");
    std::fs::write(sb.repo.join(".hallmark.toml"), &with_room).expect("write");
    sb.git(&sb.repo, &["add", "-A"]);
    sb.git(&sb.repo, &["commit", "-q", "-m", "A stricter tool policy"]);
    let base = repeat_failure(&world, "s-base", 3);
    assert_eq!(base[1], Said::Nudge("repetition".into(), false), "{base:?}");
    assert_eq!(base[2], Said::Nudge("repetition".into(), true), "{base:?}");
    let used = sb.hall(&sb.repo, &["rooms", "list"]).ok();
    let row = used["rooms"]
        .as_array()
        .expect("rooms")
        .iter()
        .find(|r| r["world"] == "tool-policy")
        .cloned()
        .expect("the tool-policy world is listed");
    assert_eq!(row["room"]["source"]["kind"], "repo", "{row}");
}

#[test]
fn the_policy_fails_open_on_a_broken_room_window_or_user_config() {
    let world = World::new("enforce");
    let sb = &world.sb;
    // Enforced, five identical failures are denied at the fifth.
    let denied = repeat_failure(&world, "s-1", 5);
    assert_eq!(denied[4], Said::Deny("repetition".into()), "{denied:?}");
    // A window that can't be read is an empty one: the call runs.
    let sessions = sb.journal().root().join("sessions");
    std::fs::write(sessions.join("s-1.json"), "{ not json").expect("write");
    assert_eq!(repeat_failure(&world, "s-1", 1)[0], Said::Allow);
    // A room that serves another world can't be run: every call runs, and the log says why.
    let wrong = built_wasm("hall_fixture_trapping.wasm");
    std::fs::copy(&wrong, sb.repo.join("wrong.wasm")).expect("copy");
    let config = std::fs::read_to_string(sb.repo.join(".hallmark.toml")).expect("config");
    std::fs::write(
        sb.repo.join(".hallmark.toml"),
        format!("{config}\n[rooms]\ntool-policy = \"wrong.wasm\"\n"),
    )
    .expect("write");
    sb.git(&sb.repo, &["add", "-A"]);
    sb.git(
        &sb.repo,
        &["commit", "-q", "-m", "A room for another world"],
    );
    let runs = repeat_failure(&world, "s-2", 6);
    assert!(runs.iter().all(|s| *s == Said::Allow), "{runs:?}");
    let log = std::fs::read_to_string(sb.journal().root().join("hooks.log")).expect("hooks.log");
    assert!(log.contains("tool policy:"), "{log}");
    // A user config that doesn't parse leaves the repository's settings (observe).
    let sb2 = Sandbox::initialized();
    std::fs::write(
        sb2.config_dir().join("config.toml"),
        "[policy]\nmode = \"loud\"\n",
    )
    .expect("write");
    let wt = new_item(&sb2, "Broken user config");
    let world2 = World { sb: sb2, wt };
    let runs = repeat_failure(&world2, "s-3", 5);
    assert_eq!(runs[4], Said::Nudge("repetition".into(), true), "{runs:?}");
}

#[test]
fn a_block_breaks_the_error_streak_and_a_success_clears_it() {
    let world = World::new("enforce");
    let sid = "s-streak";
    let run = |i: usize, command: &str, ok: bool| {
        let input = json!({"command": command});
        let pre = json!({"hook_event_name": "PreToolUse", "tool_name": "Bash",
                         "tool_input": input, "tool_use_id": format!("t{i}")});
        let got = said(&world.hook("pre-tool-use", sid, &world.wt, pre));
        if !matches!(got, Said::Deny(_)) {
            let post = if ok {
                (
                    "post-tool-use",
                    json!({"hook_event_name": "PostToolUse", "tool_name": "Bash",
                    "tool_input": input, "tool_response": {"stdout": "ok"}}),
                )
            } else {
                (
                    "post-tool-use-failure",
                    json!({"hook_event_name": "PostToolUseFailure",
                    "tool_name": "Bash", "tool_input": input, "error": format!("Exit code 1 ({i})")}),
                )
            };
            world.hook(post.0, sid, &world.wt, post.1);
        }
        got
    };
    // Six different failing commands: the seventh call meets a streak of six.
    let mut said_ = Vec::new();
    for i in 0..7 {
        said_.push(run(i, &format!("./step-{i}.sh"), false));
    }
    assert_eq!(
        said_[4],
        Said::Nudge("error-streak".into(), false),
        "{said_:?}"
    );
    assert_eq!(said_[6], Said::Deny("error-streak".into()), "{said_:?}");
    // The block ended the streak: the next failure starts again from one.
    assert_eq!(run(7, "./step-7.sh", false), Said::Allow);
    assert_eq!(run(8, "make lint", true), Said::Allow);
    assert_eq!(run(9, "./step-9.sh", false), Said::Allow);
    let log = world
        .sb
        .hall(&world.sb.repo, &["log", "--kind", "tool_policy"])
        .ok();
    let events = log["events"].as_array().expect("events");
    assert_eq!(events.len(), 3, "{log}");
}

/// With repetition observed and everything else enforced, the seventh identical failure
/// trips both repetition (which the room names first) and the error streak: the
/// enforced block is not hidden behind the observed detector's nudge.
#[test]
fn an_enforced_block_is_not_hidden_behind_an_observed_detector() {
    let sb = Sandbox::initialized();
    std::fs::write(
        sb.config_dir().join("config.toml"),
        "[policy]\nmode = \"enforce\"\n[policy.detectors.repetition]\nmode = \"observe\"\n",
    )
    .expect("user config");
    let wt = new_item(&sb, "Mixed modes");
    let world = World { sb, wt };
    let said_ = repeat_failure(&world, "s-mixed", 7);
    // The fifth: repetition would block (observed), the streak of four only nudges.
    assert_eq!(
        said_[4],
        Said::Nudge("repetition".into(), true),
        "{said_:?}"
    );
    // The seventh: the streak of six blocks, enforced.
    assert_eq!(said_[6], Said::Deny("error-streak".into()), "{said_:?}");
}

/// The rooms' cache directory of a sandbox: the compiled rooms and the kept guards.
fn rooms_cache(sb: &Sandbox) -> PathBuf {
    sb.root.join("cache").join("rooms")
}

/// The files in `dir` whose names start with `prefix` and end with `suffix`.
fn files(dir: &Path, prefix: &str, suffix: &str) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(prefix) && n.ends_with(suffix))
        })
        .collect();
    found.sort();
    found
}

/// The kept guard files of a sandbox.
fn guards(sb: &Sandbox) -> Vec<PathBuf> {
    files(&rooms_cache(sb), "tool-policy-guard-", ".json")
}

/// The compiled rooms of a sandbox: one appears whenever a hook loads a room that
/// isn't compiled yet.
fn compiled(sb: &Sandbox) -> Vec<PathBuf> {
    files(&rooms_cache(sb), "", ".cwasm")
}

/// One Bash call in session `sid`, then how it ended; what the hook said of it.
fn bash_call(world: &World, sid: &str, command: &str, ok: bool) -> Said {
    let input = json!({"command": command});
    let pre = json!({"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": input});
    let got = said(&world.hook("pre-tool-use", sid, &world.wt, pre));
    if !matches!(got, Said::Deny(_) | Said::Gate(_)) {
        let post = if ok {
            (
                "post-tool-use",
                json!({"hook_event_name": "PostToolUse", "tool_name": "Bash",
                    "tool_input": input, "tool_response": {"stdout": "done"}}),
            )
        } else {
            (
                "post-tool-use-failure",
                json!({"hook_event_name": "PostToolUseFailure", "tool_name": "Bash",
                    "tool_input": input, "error": "Exit code 1"}),
            )
        };
        world.hook(post.0, sid, &world.wt, post.1);
    }
    got
}

/// A session's first call makes the built-in room state its guard, which is kept beside
/// the compiled rooms. From then on a call that meets none of its conditions is allowed
/// without the room being loaded (with the compiled room deleted, nothing is compiled
/// again), and a call that meets one is judged by the room as before. A damaged guard
/// file is asked for again, and no session can write one: the gates keep it out of reach.
#[test]
fn the_room_is_loaded_only_for_a_call_that_meets_its_guard() {
    let world = World::new("observe");
    let sb = &world.sb;
    assert_eq!(
        bash_call(&world, "s-guard", "cargo build", true),
        Said::Allow
    );
    let kept = guards(sb);
    assert_eq!(kept.len(), 1, "{kept:?}");
    let guard: Value =
        serde_json::from_slice(&std::fs::read(&kept[0]).expect("read")).expect("JSON");
    assert_eq!(
        guard["triggers"],
        json!([
            {"recurs": {"times": 2, "last": 0, "reads_exempt": true}},
            {"recurs": {"times": 1, "last": 4, "reads_exempt": true}},
            {"error-streak": 4},
            "claims-fix",
        ]),
        "{guard}"
    );
    assert!(!compiled(sb).is_empty(), "the first call loaded the room");

    // Quiet calls: none meets the guard, so the room is not loaded, and nothing is
    // compiled in place of the deleted artifact.
    for artifact in compiled(sb) {
        std::fs::remove_file(artifact).expect("rm");
    }
    for command in ["cargo test", "ls src", "cargo build -p other", "git status"] {
        assert_eq!(bash_call(&world, "s-guard", command, true), Said::Allow);
    }
    assert!(compiled(sb).is_empty(), "a quiet call loaded the room");

    // A call that meets the guard (a third identical failure) is judged by the room.
    let third = repeat_failure(&world, "s-guard", 3);
    assert_eq!(
        third[2],
        Said::Nudge("repetition".into(), false),
        "{third:?}"
    );
    assert!(!compiled(sb).is_empty(), "the room was asked");

    // A damaged guard is no guard: the room is asked for it again.
    std::fs::write(&kept[0], "{ not json").expect("write");
    for artifact in compiled(sb) {
        std::fs::remove_file(artifact).expect("rm");
    }
    assert_eq!(bash_call(&world, "s-other", "make", true), Said::Allow);
    assert!(!compiled(sb).is_empty(), "the room was asked for its guard");
    let again: Value =
        serde_json::from_slice(&std::fs::read(&kept[0]).expect("read")).expect("JSON");
    assert_eq!(again, guard);

    // A session can't silence the policy by writing a guard of its own: the gates
    // deny it as a write into Hallmark's cache.
    let path = kept[0].display().to_string();
    let forged = r#"{"format":1,"triggers":[]}"#;
    let denied = |tool: &str, input: Value| {
        let pre = json!({"hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": input});
        let out = world.hook("pre-tool-use", "s-forge", &world.wt, pre);
        let v: Value = serde_json::from_str(out.trim()).unwrap_or_else(|_| panic!("{tool}: {out}"));
        let out = &v["hookSpecificOutput"];
        assert_eq!(out["permissionDecision"], "deny", "{tool}: {v}");
        let reason = out["permissionDecisionReason"].as_str().unwrap_or_default();
        assert!(reason.contains("Hallmark's cache"), "{tool}: {reason}");
    };
    for command in [
        format!("echo '{forged}' > {path}"),
        format!("rm -f {path}"),
        format!("cp /dev/null {path}"),
    ] {
        denied("Bash", json!({ "command": command }));
    }
    denied("Write", json!({"file_path": path, "content": forged}));
}

/// Commits `room` on the base branch as the repository's tool-policy room.
fn base_room(sb: &Sandbox, room: &str) {
    std::fs::create_dir_all(sb.repo.join("policy")).expect("mkdir");
    std::fs::copy(built_wasm(room), sb.repo.join("policy/room.wasm")).expect("copy");
    let config = std::fs::read_to_string(sb.repo.join(".hallmark.toml")).expect("config");
    std::fs::write(
        sb.repo.join(".hallmark.toml"),
        format!("{config}\n[rooms]\ntool-policy = \"policy/room.wasm\"\n"),
    )
    .expect("write");
    sb.git(&sb.repo, &["add", "-A"]);
    sb.git(
        &sb.repo,
        &["commit", "-q", "-m", "A tool policy of our own"],
    );
}

/// Adds a detector of `name` (observed) to the user's `[policy]`: the room's guard is
/// asked again for the new settings.
fn user_detector(sb: &Sandbox, name: &str) {
    let file = sb.config_dir().join("config.toml");
    let mut text = std::fs::read_to_string(&file).unwrap_or_default();
    text.push_str(&format!(
        "\n[policy.detectors.{name}]\nmode = \"observe\"\n"
    ));
    std::fs::write(&file, text).expect("user config");
}

/// The host takes a room at its word. A room whose guard says it never objects is
/// never asked, though its `decide` objects to everything; the same room stating
/// `[always]` is asked about every call. A guard the room refuses or fails to state
/// counts as `[always]`.
#[test]
fn the_host_takes_a_room_at_its_stated_guard() {
    let world = World::new("observe");
    let sb = &world.sb;
    base_room(sb, "hall_fixture_stated_guard.wasm");
    let objection = Said::Nudge("stated-guard".into(), true);
    // Guard `[]`: never asked.
    for command in ["cargo build", "cargo build", "cargo build", "cargo build"] {
        assert_eq!(bash_call(&world, "s-quiet", command, false), Said::Allow);
    }
    assert_eq!(guards(sb).len(), 1);
    // Guard `[always]`: asked, even on a session's first call.
    user_detector(sb, "always");
    assert_eq!(bash_call(&world, "s-asked", "ls", true), objection);
    assert_eq!(bash_call(&world, "s-asked", "ls", true), objection);
    assert_eq!(guards(sb).len(), 2);
    let log = || std::fs::read_to_string(sb.journal().root().join("hooks.log")).unwrap_or_default();
    // A refusal to state a guard: asked about every call, the refusal logged once and
    // its `[always]` kept.
    user_detector(sb, "refuse");
    assert_eq!(bash_call(&world, "s-refused", "ls", true), objection);
    assert_eq!(bash_call(&world, "s-refused", "ls", true), objection);
    assert_eq!(
        log().matches("refused to state its guard").count(),
        1,
        "{}",
        log()
    );
    assert_eq!(guards(sb).len(), 3);
    // A trap: asked about every call, logged every time, nothing kept.
    user_detector(sb, "trap");
    assert_eq!(bash_call(&world, "s-trap", "ls", true), objection);
    assert_eq!(bash_call(&world, "s-trap", "ls", true), objection);
    assert_eq!(
        log().matches("failed to state its guard").count(),
        2,
        "{}",
        log()
    );
    assert_eq!(guards(sb).len(), 3);
}
