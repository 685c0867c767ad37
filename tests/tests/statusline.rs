//! `hall statusline`, `hall setup claude --statusline` and `hall watch` through the real
//! binary: the line Claude Code shows for a session in each place an item can be, the
//! status line written into a user's settings without replacing theirs, and the live
//! view off a terminal, one JSON line per change, ending with the item.

#![allow(clippy::unwrap_used)] // a panic is how a test fails

use std::io::{BufRead, Write};
use std::path::Path;
use std::process::Stdio;
use std::sync::mpsc;
use std::time::Duration;

use hallmark_tests::sandbox::{Run, Sandbox};
use serde_json::{Value, json};

/// Runs `hall statusline args…` in `dir` as Claude Code does: the session JSON on stdin.
fn statusline(sb: &Sandbox, dir: &Path, session: &str, args: &[&str]) -> Run {
    let input = json!({"session_id": session, "transcript_path": "/dev/null", "cwd": dir,
        "workspace": {"current_dir": dir, "project_dir": dir},
        "model": {"id": "claude-opus", "display_name": "Opus"}});
    let mut cmd = sb.hall_command(dir);
    cmd.arg("statusline")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("spawn");
    let mut pipe = child.stdin.take().expect("stdin");
    let _ = pipe.write_all(input.to_string().as_bytes());
    drop(pipe);
    let out = child.wait_with_output().expect("wait");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The line, asserting the contract: exit 0, nothing on stderr, at most one line.
fn line(sb: &Sandbox, dir: &Path, session: &str) -> String {
    let run = statusline(sb, dir, session, &[]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.stderr, "", "{run:?}");
    assert!(run.stdout.lines().count() <= 1, "{run:?}");
    run.stdout.trim_end().to_string()
}

#[test]
fn the_line_follows_the_item_through_development_checks_and_the_inbox() {
    let sb = Sandbox::initialized();
    let repo = sb.repo.clone();
    sb.hall(&repo, &["new", "--title", "Cap retries"]).ok();
    let wt = sb.worktree("H-0001");

    // Outside any item: the repository's count.
    assert_eq!(line(&sb, &repo, "s-main"), "hall: 1 item in the loop");

    // In the item's worktree (and below it): the item and its state.
    let dev = line(&sb, &wt, "s-1");
    assert_eq!(dev, "H-0001 development · \"Cap retries\"");
    std::fs::create_dir_all(wt.join("src")).unwrap();
    assert_eq!(line(&sb, &wt.join("src"), "s-1"), dev);

    // Frozen and queued for the checks.
    sb.commit(&wt, "lib.txt", "attempts < 3\n", "Cap retries at 3");
    sb.hall(&wt, &["ready"]).ok();
    assert_eq!(line(&sb, &wt, "s-1"), "H-0001 checks · \"Cap retries\"");

    // A question waits for a person.
    sb.hall(&wt, &["ask", "billed or raw?"]).ok();
    assert_eq!(
        line(&sb, &wt, "s-1"),
        "H-0001 checks · \"Cap retries\" · inbox 1"
    );
    assert_eq!(
        line(&sb, &repo, "s-main"),
        "hall: 1 item in the loop · inbox 1"
    );

    // --json: the same parts, for a script of the user's own.
    let parts: Value = serde_json::from_str(&statusline(&sb, &wt, "s-1", &["--json"]).stdout)
        .expect("one JSON line");
    assert_eq!(parts["item"]["id"], "H-0001");
    assert_eq!(parts["item"]["state"], "checks");
    assert_eq!(parts["inbox"], 1);
}

#[test]
fn the_line_reads_the_board_not_the_journal_and_rebuilds_a_missing_one() {
    let sb = Sandbox::initialized();
    let repo = sb.repo.clone();
    sb.hall(&repo, &["new", "--title", "Board"]).ok();
    let wt = sb.worktree("H-0001");
    let board = repo.join(".git/hallmark/state/statusline.json");
    assert!(board.is_file(), "the command left a board");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&board).unwrap()).unwrap();
    assert_eq!(v["items"][0]["id"], "H-0001");

    // A deleted board is rebuilt by the next reader.
    std::fs::remove_file(&board).unwrap();
    assert_eq!(line(&sb, &wt, "s"), "H-0001 development · \"Board\"");
    assert!(board.is_file());

    // A board that is not JSON is a cache like any other: rebuilt, never an error.
    std::fs::write(&board, "{ torn").unwrap();
    assert_eq!(line(&sb, &wt, "s"), "H-0001 development · \"Board\"");

    // The journal moved past a board written seconds ago: it is shown as it is (the
    // hooks append on every tool call; the line must not rebuild for each).
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&board).unwrap()).unwrap();
    v["inbox"] = 5.into();
    v["changes"] = 0.into();
    v["at_unix"] = now.into();
    std::fs::write(&board, v.to_string()).unwrap();
    assert_eq!(
        line(&sb, &wt, "s"),
        "H-0001 development · \"Board\" · inbox 5"
    );
    // The same board an hour old is stale: rebuilt before it is shown.
    v["at_unix"] = (now - 3600).into();
    std::fs::write(&board, v.to_string()).unwrap();
    assert_eq!(line(&sb, &wt, "s"), "H-0001 development · \"Board\"");
}

#[test]
fn a_session_bound_to_an_item_sees_it_from_the_main_checkout() {
    let sb = Sandbox::initialized();
    let repo = sb.repo.clone();
    sb.hall(&repo, &["new", "--title", "Bound"]).ok();
    let sessions = repo.join(".git/hallmark/sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    std::fs::write(sessions.join("s-bound.json"), r#"{"item":"H-0001"}"#).unwrap();
    assert_eq!(
        line(&sb, &repo, "s-bound"),
        "H-0001 development · \"Bound\""
    );
    assert_eq!(line(&sb, &repo, "s-other"), "hall: 1 item in the loop");
}

#[test]
fn without_a_repository_or_a_journal_the_line_is_empty_and_exits_0() {
    let sb = Sandbox::new();
    // A repository with no journal (no `hall init`).
    assert_eq!(line(&sb, &sb.repo, "s"), "");
    // No repository at all.
    let outside = sb.root.join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    assert_eq!(line(&sb, &outside, "s"), "");
    // Not even JSON on stdin, and an unknown flag: still exit 0 and quiet.
    let mut cmd = sb.hall_command(&outside);
    let out = cmd
        .args(["statusline", "--frobnicate"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stderr.is_empty());
}

#[test]
fn setup_writes_the_status_line_and_keeps_one_the_user_has() {
    let sb = Sandbox::initialized();
    // `hall setup claude` calls the claude CLI to install the plugin: a stand-in that
    // accepts anything.
    let fake = sb.bin.join("claude");
    std::fs::write(&fake, "#!/bin/sh\nexit 0\n").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let settings = sb.home.join(".claude/settings.json");
    // The status line alone: without `--no-confine` setup also merges the sandbox into
    // the same file (tests/tests/confined.rs covers that).

    // A dry run says what it would write, and writes nothing.
    let dry = sb
        .hall(
            &sb.repo,
            &[
                "setup",
                "claude",
                "--statusline",
                "--dry-run",
                "--no-confine",
            ],
        )
        .ok();
    assert_eq!(dry["statusline"]["outcome"], "would write");
    let command = dry["statusline"]["command"].as_str().unwrap().to_string();
    assert!(command.ends_with("/hall statusline"), "{command}");
    assert_eq!(dry["next"][0], "hall setup claude --statusline");
    assert_eq!(dry["claude_settings"]["outcome"], "unchanged");
    assert!(!settings.exists());

    // A real run into a HOME with settings but no status line adds it, keeping the rest.
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    std::fs::write(&settings, "{\n  \"model\": \"opus\"\n}\n").unwrap();
    let done = sb
        .hall(
            &sb.repo,
            &["setup", "claude", "--statusline", "--no-confine"],
        )
        .ok();
    assert_eq!(done["statusline"]["outcome"], "written");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    assert_eq!(
        v,
        json!({"model": "opus", "statusLine": {"type": "command", "command": command}})
    );

    // A user's own status line is never replaced: the reply says so, with what to do.
    let theirs = "{\"statusLine\": {\"type\": \"command\", \"command\": \"~/bin/line.sh\"}}\n";
    std::fs::write(&settings, theirs).unwrap();
    let run = sb.hall(
        &sb.repo,
        &["setup", "claude", "--statusline", "--no-confine"],
    );
    let kept = run.ok();
    assert_eq!(kept["statusline"]["outcome"], "kept");
    assert_eq!(kept["statusline"]["existing"], "~/bin/line.sh");
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), theirs);
    let next: Vec<&str> = kept["next"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(next.iter().any(|n| n.starts_with("edit ")), "{next:?}");

    // Inside a Claude Code session it is refused, and nothing is written.
    std::fs::write(&settings, "{}\n").unwrap();
    let refused = sb.hall_env(
        &sb.repo,
        &["setup", "claude", "--no-confine"],
        &[("CLAUDECODE", "1")],
    );
    refused.err("GATE_DENIED", 5);
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), "{}\n");
    assert!(run.stderr.contains("already has a status line"), "{run:?}");
}

#[test]
fn watch_off_a_terminal_prints_a_line_per_change_and_ends_with_the_item() {
    let sb = Sandbox::initialized();
    let repo = sb.repo.clone();
    sb.hall(&repo, &["new", "--title", "Watched"]).ok();
    let wt = sb.worktree("H-0001");
    let mut child = sb
        .hall_command(&wt)
        .args(["watch"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("watch");
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for l in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            if tx.send(l).is_err() {
                break;
            }
        }
    });
    let wait = Duration::from_secs(20);
    let frame = |rx: &mpsc::Receiver<String>| -> Value {
        let l = rx.recv_timeout(wait).expect("a frame");
        serde_json::from_str(&l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}"))
    };
    let first = frame(&rx);
    assert_eq!(first["item"], "H-0001");
    assert_eq!(first["state"], "development");
    assert_eq!(first["ended"], false);
    let events = first["events"].as_u64().unwrap();

    // An event appended to the item's journal by another writer is a new frame.
    sb.record(
        "H-0001",
        "you",
        json!({"event": "prompt", "text": "cap it at three", "session": null}),
    );
    let next = frame(&rx);
    assert_eq!(next["events"].as_u64(), Some(events + 1));
    assert_eq!(next["last"]["event"], "prompt");
    assert_eq!(next["ended"], false);

    // Dropping the item ends the watch: a last frame, then the process exits 0.
    sb.hall(&repo, &["drop", "H-0001", "--reason", "not needed"])
        .ok();
    let mut last = frame(&rx);
    while last["ended"] != true {
        last = frame(&rx);
    }
    assert_eq!(last["state"], "dropped");
    assert!(last["next"].as_array().is_some_and(|n| !n.is_empty()));
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0));
}
