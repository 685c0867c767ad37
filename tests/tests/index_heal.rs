//! The index repairs itself through the real binary: garbage written into the middle of
//! `index.sqlite` or over its header is rebuilt from the journal by whichever command
//! reads it first, and `index.log` says so; a journal directory that can't be written is
//! an error naming it; `hall doctor` fails with exit 1 when a required check fails.

use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use hallmark_tests::sandbox::{Run, Sandbox};
use serde_json::{Value, json};

fn journal_dir(sb: &Sandbox) -> PathBuf {
    sb.repo.join(".git/hallmark")
}

fn index_file(sb: &Sandbox) -> PathBuf {
    journal_dir(sb).join("index.sqlite")
}

/// Rebuilds the index and lets every connection close, so the whole of it is in the
/// main file (SQLite folds its write-ahead log in and deletes it on the last close).
fn settle(sb: &Sandbox) {
    sb.hall(&sb.repo, &["reindex"]).ok();
    let wal = journal_dir(sb).join("index.sqlite-wal");
    assert!(
        std::fs::metadata(&wal).map_or(true, |m| m.len() == 0),
        "no write-ahead log is left to mask the damage"
    );
}

/// Overwrites `len` bytes at `offset` with a pattern that is no valid page.
fn smash(path: &Path, offset: u64, len: usize) {
    let garbage: Vec<u8> = (0..len)
        .map(|i| (i as u8).wrapping_mul(37).wrapping_add(11))
        .collect();
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .expect("open the index");
    f.seek(SeekFrom::Start(offset)).expect("seek");
    f.write_all(&garbage).expect("write");
}

/// SQLite's page size, from the file's header.
fn page_size(bytes: &[u8]) -> usize {
    match u16::from_be_bytes([bytes[16], bytes[17]]) {
        1 => 65_536,
        n => usize::from(n),
    }
}

/// Overwrites every page of the index that holds `needle` where `keep` (given the bytes
/// before it) says so: the way to hit the table or index one query reads.
fn smash_pages(sb: &Sandbox, needle: &str, keep: impl Fn(&[u8]) -> bool) {
    let path = index_file(sb);
    let bytes = std::fs::read(&path).expect("read the index");
    let size = page_size(&bytes);
    let needle = needle.as_bytes();
    let mut pages: Vec<usize> = bytes
        .windows(needle.len())
        .enumerate()
        .filter(|(at, w)| *w == needle && keep(&bytes[..*at]))
        .map(|(at, _)| at / size)
        .collect();
    pages.dedup();
    assert!(!pages.is_empty(), "no page holds {needle:?}");
    assert!(!pages.contains(&0), "the schema page is not the target");
    for page in pages {
        smash(&path, (page * size) as u64, size);
    }
}

/// The repairs `index.log` records.
fn heals(sb: &Sandbox) -> Vec<Value> {
    std::fs::read_to_string(journal_dir(sb).join("index.log"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).expect("index.log holds JSON lines"))
        .collect()
}

/// Every journal file, byte for byte.
fn journal_files(sb: &Sandbox) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut dirs = vec![journal_dir(sb)];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("read dir").flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "jsonl")
                || path.file_name().is_some_and(|n| n == "changes")
            {
                out.push((path.clone(), std::fs::read(&path).expect("read")));
            }
        }
    }
    out.sort();
    out
}

/// A repository with three items, a question and some usage.
fn populated() -> Sandbox {
    let sb = Sandbox::initialized();
    for t in ["Alpha target", "Beta target", "Gamma target"] {
        sb.hall(&sb.repo, &["new", "--title", t]).ok();
    }
    sb.hall(&sb.repo, &["ask", "Which colour for the sign?"])
        .ok();
    sb.record(
        "H-0002",
        "assayer",
        json!({"event": "usage", "model": "opus", "role": "review", "input": 10, "cost_usd": 0.5}),
    );
    sb
}

#[test]
fn four_kib_of_garbage_inside_the_index_is_rebuilt_by_the_next_status() {
    let sb = populated();
    settle(&sb);
    let before = (
        sb.hall(&sb.repo, &["status"]).ok(),
        sb.hall(&sb.repo, &["inbox"]).ok(),
        sb.hall(&sb.repo, &["usage"]).ok(),
    );
    assert_eq!(before.0["items"].as_array().map(Vec::len), Some(3));
    let journal = journal_files(&sb);
    let index = index_file(&sb);
    assert!(
        std::fs::metadata(&index).expect("index").len() > 12_288,
        "the damage lands inside the file, past its header page"
    );
    smash(&index, 8192, 4096);
    let after = (
        sb.hall(&sb.repo, &["status"]).ok(),
        sb.hall(&sb.repo, &["inbox"]).ok(),
        sb.hall(&sb.repo, &["usage"]).ok(),
    );
    assert_eq!(after, before);
    let log = heals(&sb);
    assert_eq!(log.len(), 1, "the first command rebuilt it, once: {log:?}");
    assert_eq!(log[0]["event"], "rebuilt");
    assert_eq!(log[0]["index"], index.display().to_string());
    assert_eq!(log[0]["files"], 4, "three items and the repo-level file");
    assert!(
        log[0]["reason"].as_str().is_some_and(|r| !r.is_empty()),
        "{log:?}"
    );
    assert_eq!(journal_files(&sb), journal, "the journal is never touched");
}

#[test]
fn a_garbage_header_is_rebuilt_by_the_next_status() {
    let sb = populated();
    settle(&sb);
    let before = sb.hall(&sb.repo, &["status"]).ok();
    smash(&index_file(&sb), 0, 512);
    assert_eq!(sb.hall(&sb.repo, &["status"]).ok(), before);
    let log = heals(&sb);
    assert_eq!(log.len(), 1, "{log:?}");
    assert_eq!(log[0]["during"], "open");
    assert!(
        log[0]["reason"]
            .as_str()
            .is_some_and(|r| r.contains("not a database")),
        "{log:?}"
    );
}

/// Hooks fire in parallel: every process that meets the same damage must come through,
/// and the file they leave behind must be whole.
#[test]
fn commands_racing_into_the_same_damage_all_succeed() {
    let sb = populated();
    settle(&sb);
    let before = sb.hall(&sb.repo, &["status"]).ok();
    for _ in 0..3 {
        smash(&index_file(&sb), 0, 512);
        for out in sb.hall_at_once(&sb.repo, &["status"], 8) {
            assert_eq!(out, before);
        }
        settle(&sb);
    }
    let log = heals(&sb);
    assert!(
        (3..=24).contains(&log.len()) && log.iter().all(|l| l["event"] == "rebuilt"),
        "{log:?}"
    );
    let doctor = sb.hall(&sb.repo, &["doctor"]);
    assert_eq!(check(&doctor.json(), "index")["ok"], true, "{doctor:?}");
}

/// Damage no command has touched yet surfaces in the middle of a query; each command's
/// query heals the page it reads.
#[test]
fn each_command_rebuilds_the_page_its_query_reads() {
    let sb = populated();
    // `hall status`: the items table holds the bare title (the cached fold has it as JSON).
    settle(&sb);
    let status = sb.hall(&sb.repo, &["status"]).ok();
    smash_pages(&sb, "Beta target", |before| {
        !before.ends_with(b"\"title\":\"")
    });
    assert_eq!(sb.hall(&sb.repo, &["status"]).ok(), status);
    assert_eq!(
        sb.hall(&sb.repo, &["status", "H-0002"]).ok()["item"]["title"],
        "Beta target"
    );

    // `hall inbox`: the questions table.
    settle(&sb);
    let inbox = sb.hall(&sb.repo, &["inbox"]).ok();
    smash_pages(&sb, "Which colour for the sign?", |_| true);
    assert_eq!(sb.hall(&sb.repo, &["inbox"]).ok(), inbox);

    // A command in a worktree finds its item through the worktree lookup.
    settle(&sb);
    let wt = sb.worktree("H-0003");
    smash_pages(&sb, &wt.display().to_string(), |_| true);
    let log = sb.hall(&wt, &["log"]).ok();
    assert_eq!(log["item"], "H-0003", "{log}");

    let heals = heals(&sb);
    assert_eq!(heals.len(), 3, "{heals:?}");
    for h in &heals {
        assert_eq!(h["event"], "rebuilt", "{h}");
        assert_eq!(h["during"], "query", "{h}");
    }
}

/// The edit gate asks the index which item a worktree belongs to on every edit. Had the
/// damaged lookup failed, the gate would fail open and allow the edit; healed, it sees
/// the item is dropped and denies.
#[test]
fn the_edit_gate_rebuilds_a_damaged_worktree_lookup() {
    let sb = Sandbox::initialized();
    sb.hall(&sb.repo, &["new", "--title", "Dropped one"]).ok();
    let wt = sb.worktree("H-0001");
    sb.hall(&sb.repo, &["drop", "1", "--reason", "x", "--keep-worktree"])
        .ok();
    settle(&sb);
    smash_pages(&sb, &wt.display().to_string(), |_| true);
    let input = json!({"session_id": "s-1", "cwd": wt, "hook_event_name": "PreToolUse",
        "tool_name": "Write", "tool_input": {"file_path": wt.join("src/new.rs"), "content": "x"},
        "tool_use_id": "toolu_1"});
    let (out, code) = sb.hook(&sb.repo, "pre-tool-use", &input, &[]);
    assert_eq!(code, Some(0));
    let reply: Value = serde_json::from_str(&out).expect("a decision");
    assert_eq!(
        reply["hookSpecificOutput"]["permissionDecision"], "deny",
        "{reply}"
    );
    let log = heals(&sb);
    assert_eq!(log.len(), 1, "{log:?}");
    assert_eq!(log[0]["during"], "query");
    let hook_errors =
        std::fs::read_to_string(journal_dir(&sb).join("hooks.log")).unwrap_or_default();
    assert!(
        hook_errors.is_empty(),
        "the hook met no error: {hook_errors}"
    );
}

/// Whether files the current user creates belong to root, who writes through any mode.
#[cfg(unix)]
fn running_as_root(sb: &Sandbox) -> bool {
    use std::os::unix::fs::MetadataExt;
    let probe = sb.root.join("whoami");
    std::fs::write(&probe, b"").expect("write");
    let uid = std::fs::metadata(&probe).expect("stat").uid();
    std::fs::remove_file(&probe).expect("remove");
    uid == 0
}

/// Runs `hall args` in the repository so that it can't create files in the journal
/// directory: with the directory's mode at 555 for an ordinary user, and as the user
/// `nobody` against root's directory when the tests run as root (who ignores modes).
/// `None`, with the reason printed, only when root may not switch users here.
#[cfg(unix)]
fn hall_without_journal_writes(sb: &Sandbox, args: &[&str]) -> Option<Run> {
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;
    let dir = journal_dir(sb);
    if !running_as_root(sb) {
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o555)).expect("chmod");
        let run = sb.hall(&sb.repo, args);
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        return Some(run);
    }
    // `nobody` must reach the sandbox (a temp dir is private to its owner) and git must
    // accept a repository owned by someone else.
    std::fs::set_permissions(&sb.root, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let out = sb
        .hall_command(&sb.repo)
        .args(args)
        .env("GIT_CONFIG_COUNT", "1")
        .env("GIT_CONFIG_KEY_0", "safe.directory")
        .env("GIT_CONFIG_VALUE_0", "*")
        .uid(65_534)
        .gid(65_534)
        .output();
    match out {
        Ok(out) => Some(Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).to_string(),
            stderr: String::from_utf8_lossy(&out.stderr).to_string(),
        }),
        Err(e) => {
            eprintln!(
                "skipped: running as root, where a mode doesn't stop writes, and `hall` can't \
                 be started as nobody to test it instead ({e})"
            );
            None
        }
    }
}

#[cfg(unix)]
#[test]
fn a_journal_directory_that_cannot_be_written_is_an_error_naming_it() {
    let sb = Sandbox::initialized();
    sb.hall(&sb.repo, &["new", "--title", "Locked out"]).ok();
    settle(&sb);
    let dir = journal_dir(&sb).display().to_string();
    let names_the_directory = |run: &Run| {
        let e = run.err("INTERNAL", 1);
        let message = e["error"]["message"].as_str().expect("message").to_string();
        assert!(
            message.contains(&format!("{dir}: Permission denied")),
            "names the directory and why: {message}"
        );
        assert!(
            !message.contains("unable to open database file"),
            "{message}"
        );
        assert_eq!(
            e["error"]["next"][0],
            format!("check the permissions of {dir}")
        );
    };
    // With the index in place (SQLite still needs to create its logs next to it)…
    let Some(run) = hall_without_journal_writes(&sb, &["status"]) else {
        return;
    };
    names_the_directory(&run);
    // …and without one to open.
    for f in ["index.sqlite", "index.sqlite-wal", "index.sqlite-shm"] {
        let _ = std::fs::remove_file(journal_dir(&sb).join(f));
    }
    names_the_directory(&hall_without_journal_writes(&sb, &["status"]).expect("as before"));
    // A journal write names the file or directory it couldn't write.
    let run = hall_without_journal_writes(&sb, &["new", "--title", "Another"]).expect("as before");
    let e = run.err("INTERNAL", 1);
    let message = e["error"]["message"].as_str().expect("message");
    assert!(
        message.starts_with(&dir) && message.contains("Permission denied"),
        "{message}"
    );
    assert_eq!(
        e["error"]["next"][0],
        format!("check the permissions of {dir}")
    );
    // Writable again, the same command works and nothing was lost.
    let status = sb.hall(&sb.repo, &["status"]).ok();
    let titles: Vec<&str> = status["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|i| i["title"].as_str().expect("title"))
        .collect();
    assert_eq!(titles, ["Locked out"]);
    assert!(heals(&sb).is_empty(), "a permission problem is not damage");
}

/// An index path that SQLite can't open for a reason a rebuild can't cure is reported
/// with the path, and nothing is deleted.
#[cfg(unix)]
#[test]
fn an_index_linked_into_a_missing_directory_is_an_error_naming_it() {
    let sb = Sandbox::initialized();
    for f in ["index.sqlite", "index.sqlite-wal", "index.sqlite-shm"] {
        let _ = std::fs::remove_file(journal_dir(&sb).join(f));
    }
    let missing = sb.root.join("nowhere");
    std::os::unix::fs::symlink(missing.join("index.sqlite"), index_file(&sb)).expect("symlink");
    let e = sb.hall(&sb.repo, &["status"]).err("INTERNAL", 1);
    let message = e["error"]["message"].as_str().expect("message");
    assert!(
        message.contains(&index_file(&sb).display().to_string())
            && message.contains(&format!("{}: No such file or directory", missing.display())),
        "{message}"
    );
    assert!(
        std::fs::symlink_metadata(index_file(&sb)).is_ok_and(|m| m.file_type().is_symlink()),
        "left alone"
    );
    assert!(heals(&sb).is_empty(), "not damage, so no rebuild");
}

fn check<'a>(doctor: &'a Value, name: &str) -> &'a Value {
    doctor["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no {name} check: {doctor}"))
}

#[test]
fn doctor_exits_1_when_a_required_check_fails_and_0_when_all_pass() {
    let sb = Sandbox::initialized();
    let pass = sb.hall(&sb.repo, &["doctor"]);
    assert_eq!(pass.code, 0, "{pass:?}");
    assert_eq!(pass.json()["ok"], true);

    let config = sb.repo.join(".hallmark.toml");
    let good = std::fs::read_to_string(&config).expect("config");
    std::fs::write(&config, format!("max_rejects = \"three\"\n{good}")).expect("write");
    let fail = sb.hall(&sb.repo, &["doctor"]);
    assert_eq!(fail.code, 1, "{fail:?}");
    let v = fail.json();
    assert!(
        v.get("error").is_none(),
        "the doctor's own reply, not an error: {v}"
    );
    assert_eq!(v["ok"], false);
    // Not committed: not in effect, but a mistake doctor names.
    assert_eq!(check(&v, "edit")["ok"], false);
    assert_eq!(check(&v, "config")["ok"], true);
    assert!(
        v["next"].as_array().is_some_and(|n| n
            .iter()
            .any(|c| c.as_str().is_some_and(|c| c.contains(".hallmark.toml")))),
        "{v}"
    );

    // Committed, it is the rules in effect, and broken.
    sb.git(&sb.repo, &["commit", "-qam", "A bad key"]);
    let fail = sb.hall(&sb.repo, &["doctor"]);
    assert_eq!(fail.code, 1, "{fail:?}");
    assert_eq!(check(&fail.json(), "config")["ok"], false);

    std::fs::write(&config, good).expect("write");
    sb.git(&sb.repo, &["commit", "-qam", "Fix it"]);
    assert_eq!(sb.hall(&sb.repo, &["doctor"]).code, 0);
}

/// Damage in a page no command reads (here the usage table) is found by the doctor's
/// integrity check and rebuilt there.
#[test]
fn doctor_finds_damage_no_query_reached_and_rebuilds_it() {
    let sb = populated();
    sb.record(
        "H-0001",
        "assayer",
        json!({"event": "usage", "model": "model-in-a-page-of-its-own", "role": "review", "input": 1, "cost_usd": 0.1}),
    );
    settle(&sb);
    smash_pages(&sb, "model-in-a-page-of-its-own", |_| true);
    // `hall status` never reads the usage table, so it has nothing to heal.
    sb.hall(&sb.repo, &["status"]).ok();
    assert!(heals(&sb).is_empty());
    let doctor = sb.hall(&sb.repo, &["doctor"]);
    assert_eq!(doctor.code, 0, "healed, so every check passes: {doctor:?}");
    let index = check(&doctor.json(), "index").clone();
    assert_eq!(index["ok"], true);
    assert!(
        index["detail"]
            .as_str()
            .is_some_and(|d| d.contains("rebuilt from the journal")),
        "{index}"
    );
    let log = heals(&sb);
    assert_eq!(log.len(), 1, "{log:?}");
    assert_eq!(log[0]["during"], "query");
    let usage = sb.hall(&sb.repo, &["usage", "--by", "model"]).ok();
    assert!(
        usage.to_string().contains("model-in-a-page-of-its-own"),
        "the rebuilt index has the usage back: {usage}"
    );
}
