//! The journal under stress: many concurrent writers, racing state changes, a writer
//! killed mid-append, corruption, and the index as a disposable cache.

use std::process::Command;

use hallmark_tests::sandbox::Sandbox;
use serde_json::json;

fn writer() -> Command {
    Command::new(env!("CARGO_BIN_EXE_journal-writer"))
}

fn hall_dir(sb: &Sandbox) -> String {
    sb.repo.join(".git/hallmark").display().to_string()
}

#[test]
fn eight_processes_append_a_thousand_events_each_without_losing_or_tearing_one() {
    let sb = Sandbox::initialized();
    sb.hall(&sb.repo, &["new", "--title", "Busy"]).ok();
    let children: Vec<_> = (0..8)
        .map(|w| {
            writer()
                .args([&hall_dir(&sb), "H-0001", "append", "1000", &format!("w{w}")])
                .spawn()
                .expect("spawn")
        })
        .collect();
    for mut c in children {
        assert!(c.wait().expect("wait").success());
    }
    let path = sb.repo.join(".git/hallmark/items/H-0001/events.jsonl");
    let text = std::fs::read_to_string(&path).expect("read");
    assert!(text.ends_with('\n'));
    let mut per_writer = [0usize; 8];
    let mut lines = 0;
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("torn or mixed line ({e}): {line}"));
        lines += 1;
        if v["event"] == "prompt" {
            let tag = v["text"].as_str().expect("text");
            let w: usize = tag[1..tag.find('-').expect("dash")]
                .parse()
                .expect("writer");
            per_writer[w] += 1;
        }
    }
    assert_eq!(lines, 8001, "the created line plus 8,000 appends");
    assert_eq!(per_writer, [1000; 8]);
    // The index saw every one of them too.
    let log = sb
        .hall(&sb.repo, &["log", "H-0001", "--kind", "prompt"])
        .ok();
    assert_eq!(log["events"].as_array().map(Vec::len), Some(8000));
    let r = sb.hall(&sb.repo, &["reindex"]).ok();
    assert_eq!(
        r["events"], 8002,
        "the created line, 8,000 prompts, and init's room_used record"
    );
}

#[test]
fn racing_ready_commands_record_exactly_one_transition() {
    let sb = Sandbox::initialized();
    sb.hall(&sb.repo, &["new", "--title", "Race"]).ok();
    let wt = sb.worktree("H-0001");
    sb.commit(&wt, "a.txt", "a", "a");
    let children: Vec<_> = (0..8)
        .map(|_| {
            sb.hall_command(&wt)
                .arg("ready")
                .stdout(std::process::Stdio::piped())
                .spawn()
                .expect("spawn")
        })
        .collect();
    let mut changed = 0;
    for c in children {
        let out = c.wait_with_output().expect("wait");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
        assert_eq!(v["state"], "checks");
        if v["changed"] == true {
            changed += 1;
        }
    }
    assert_eq!(changed, 1, "one winner; the rest see the current result");
    let log = sb
        .hall(&sb.repo, &["log", "H-0001", "--kind", "ready"])
        .ok();
    assert_eq!(log["events"].as_array().map(Vec::len), Some(1));
}

#[test]
fn a_writer_killed_mid_append_leaves_a_journal_that_reads_folds_and_takes_appends() {
    let sb = Sandbox::initialized();
    sb.hall(&sb.repo, &["new", "--title", "Crash"]).ok();
    let status = writer()
        .args([&hall_dir(&sb), "H-0001", "tear"])
        .status()
        .expect("run");
    assert!(!status.success(), "the writer died");
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(9), "killed by SIGKILL");
    }
    // Reads: the torn tail is reported and skipped.
    let run = sb.hall(&sb.repo, &["status", "H-0001"]);
    assert_eq!(run.ok()["item"]["state"], "development");
    assert!(run.stderr.contains("torn line"), "reported: {}", run.stderr);
    // The lock died with the writer; new state changes go through.
    let wt = sb.worktree("H-0001");
    sb.commit(&wt, "a.txt", "a", "a");
    assert_eq!(sb.hall(&wt, &["ready"]).ok()["state"], "checks");
    let log = sb.hall(&sb.repo, &["log", "H-0001"]).ok();
    let kinds: Vec<&str> = log["events"]
        .as_array()
        .expect("e")
        .iter()
        .map(|e| e["event"].as_str().expect("k"))
        .collect();
    assert_eq!(kinds, ["created", "torn_line", "ready"]);
    // The fragment is still on disk, untouched, and a fresh index agrees.
    let raw = std::fs::read_to_string(sb.repo.join(".git/hallmark/items/H-0001/events.jsonl"))
        .expect("raw");
    assert!(raw.lines().nth(1).is_some_and(
        |l| l.starts_with("{\"v\":1") && serde_json::from_str::<serde_json::Value>(l).is_err()
    ));
    let r = sb.hall(&sb.repo, &["reindex"]).ok();
    assert_eq!(r["torn"], 1);
    assert_eq!(
        sb.hall(&sb.repo, &["status", "H-0001"]).ok()["item"]["state"],
        "checks"
    );
}

#[test]
fn writers_killed_at_random_moments_never_leave_an_unreadable_journal() {
    let sb = Sandbox::initialized();
    sb.hall(&sb.repo, &["new", "--title", "Kill"]).ok();
    for round in 0..12u64 {
        let mut child = writer()
            .args([&hall_dir(&sb), "H-0001", "big", "1000"])
            .spawn()
            .expect("spawn");
        std::thread::sleep(std::time::Duration::from_millis(5 + round * 7));
        let _ = child.kill();
        let _ = child.wait();
        let v = sb.hall(&sb.repo, &["status", "H-0001"]).ok();
        assert_eq!(v["item"]["state"], "development", "round {round}");
    }
    // Still accepts appends, and everything written decodes or is a named torn line.
    sb.record(
        "H-0001",
        "agent",
        json!({"event": "prompt", "text": "after the storm"}),
    );
    let log = sb
        .hall(
            &sb.repo,
            &["log", "H-0001", "--kind", "prompt", "--limit", "1"],
        )
        .ok();
    assert_eq!(log["events"][0]["text"], "after the storm");
    sb.hall(&sb.repo, &["reindex"]).ok();
}

#[test]
fn a_garbage_line_in_the_middle_is_an_error_naming_file_and_line_and_nothing_is_appended() {
    let sb = Sandbox::initialized();
    sb.hall(&sb.repo, &["new", "--title", "Corrupt"]).ok();
    let wt = sb.worktree("H-0001");
    sb.commit(&wt, "a.txt", "a", "a");
    sb.hall(&wt, &["ready"]).ok();
    let path = sb.repo.join(".git/hallmark/items/H-0001/events.jsonl");
    let text = std::fs::read_to_string(&path).expect("read");
    let mut lines: Vec<&str> = text.lines().collect();
    lines.insert(1, "this is not json");
    let corrupted = lines.join("\n") + "\n";
    std::fs::write(&path, &corrupted).expect("write");
    let e = sb.hall(&wt, &["pull-back"]).err("JOURNAL_CORRUPT", 1);
    let msg = e["error"]["message"].as_str().expect("message");
    assert!(msg.contains("items/H-0001/events.jsonl:2:"), "{msg}");
    assert_eq!(
        std::fs::read_to_string(&path).expect("read"),
        corrupted,
        "nothing appended, nothing rewritten"
    );
    sb.hall(&sb.repo, &["status", "H-0001"])
        .err("JOURNAL_CORRUPT", 1);
    let doctor = sb.hall(&sb.repo, &["doctor"]);
    assert_eq!(
        doctor.code, 1,
        "a failed check fails the doctor: {doctor:?}"
    );
    assert_eq!(doctor.json()["ok"], false);
    // Removing the bad line by hand (the hint) restores everything.
    std::fs::write(&path, text).expect("write");
    assert_eq!(sb.hall(&wt, &["pull-back"]).ok()["state"], "development");
}

#[test]
fn the_index_is_a_cache_deleting_it_loses_nothing() {
    let sb = Sandbox::initialized();
    for t in ["One", "Two", "Three"] {
        sb.hall(&sb.repo, &["new", "--title", t]).ok();
    }
    sb.hall(&sb.repo, &["ask", "why?"]).ok();
    sb.record(
        "H-0002",
        "assayer",
        json!({"event": "usage", "model": "opus", "role": "review", "input": 10, "cost_usd": 0.5}),
    );
    let before = (
        sb.hall(&sb.repo, &["status"]).ok(),
        sb.hall(&sb.repo, &["inbox"]).ok(),
        sb.hall(&sb.repo, &["usage"]).ok(),
    );
    let hall = sb.repo.join(".git/hallmark");
    for f in ["index.sqlite", "index.sqlite-wal", "index.sqlite-shm"] {
        let _ = std::fs::remove_file(hall.join(f));
    }
    for id in ["H-0001", "H-0002", "H-0003"] {
        std::fs::remove_file(hall.join("items").join(id).join("item.json"))
            .expect("item.json exists and can go");
    }
    let after = (
        sb.hall(&sb.repo, &["status"]).ok(),
        sb.hall(&sb.repo, &["inbox"]).ok(),
        sb.hall(&sb.repo, &["usage"]).ok(),
    );
    assert_eq!(before, after);
    // A damaged index file is rebuilt, not an error.
    std::fs::write(hall.join("index.sqlite"), b"not a database").expect("write");
    let _ = std::fs::remove_file(hall.join("index.sqlite-wal"));
    let _ = std::fs::remove_file(hall.join("index.sqlite-shm"));
    assert_eq!(sb.hall(&sb.repo, &["status"]).ok(), before.0);
    let log = std::fs::read_to_string(hall.join("index.log")).expect("the rebuild is logged");
    assert_eq!(log.lines().count(), 1, "{log}");
    assert!(log.contains("\"event\":\"rebuilt\""), "{log}");
    // Lost counters never reuse a number.
    std::fs::remove_file(hall.join("counters.json")).expect("counters");
    assert_eq!(
        sb.hall(&sb.repo, &["new", "--title", "Four"]).ok()["item"],
        "H-0004"
    );
    assert_eq!(
        sb.hall(&sb.repo, &["ask", "again?"]).ok()["question"],
        "Q-2"
    );
}

#[test]
fn old_and_unknown_event_shapes_are_read() {
    let sb = Sandbox::initialized();
    sb.hall(&sb.repo, &["new", "--title", "Compat"]).ok();
    let path = sb.repo.join(".git/hallmark/items/H-0001/events.jsonl");
    let mut text = std::fs::read_to_string(&path).expect("read");
    text.push_str("{\"v\":1,\"t\":\"2026-11-02T09:00:00Z\",\"actor\":\"future\",\"event\":\"teleported\",\"item\":\"H-0001\",\"to\":\"mars\"}\n");
    std::fs::write(&path, text).expect("write");
    let v = sb.hall(&sb.repo, &["status", "H-0001"]).ok();
    assert_eq!(v["item"]["events"], 2);
    let newer = "{\"v\":7,\"t\":\"2026-11-02T09:00:00Z\",\"actor\":\"x\",\"event\":\"ready\",\"item\":\"H-0001\",\"sha\":\"a\",\"round\":1}\n";
    let mut text = std::fs::read_to_string(&path).expect("read");
    text.push_str(newer);
    text.push_str(newer);
    std::fs::write(&path, text).expect("write");
    let e = sb
        .hall(&sb.repo, &["status", "H-0001"])
        .err("JOURNAL_CORRUPT", 1);
    assert!(
        e["error"]["message"]
            .as_str()
            .expect("m")
            .contains("newer hall (v7)"),
        "{e}"
    );
}

/// Regression: processes opening a fresh index at the same moment got "database is
/// locked" (the switch to WAL does not wait for SQLite's busy handler).
#[test]
fn commands_racing_to_create_the_index_all_succeed() {
    let sb = Sandbox::initialized();
    sb.hall(&sb.repo, &["new", "--title", "Fresh"]).ok();
    for _ in 0..5 {
        for f in ["index.sqlite", "index.sqlite-wal", "index.sqlite-shm"] {
            let _ = std::fs::remove_file(sb.repo.join(".git/hallmark").join(f));
        }
        sb.hall_at_once(&sb.repo, &["status"], 8);
    }
}
