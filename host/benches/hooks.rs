//! `hall hook pre-tool-use` as Claude Code runs it: a whole process per tool call, fed
//! the hook JSON on stdin, in a repository with 1,000 items and 100,000 events. Each
//! figure is a ratio against a process that does nothing (`true`, fed the same stdin),
//! measured in the same run.
//!
//! Run: `cargo bench -p hallmark --bench hooks` (figures go to docs/performance.md).

mod common;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::{generate, git, median, ms, time};
use hallmark::item::event::EVENT_VERSION;
use hallmark::item::{Event, EventKind, ItemId, Source};

const ITEMS: u32 = 1_000;
const EVENTS_PER_ITEM: u32 = 100;
const RUNS: usize = 60;

/// The user config directory every process here runs with (the signing key lives there).
static CONFIG_DIR: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();

fn feed(program: &str, args: &[&str], stdin: &[u8], cwd: &Path) -> Vec<u8> {
    let mut child = Command::new(program)
        .args(args)
        .current_dir(cwd)
        .env("HALL_CONFIG_DIR", CONFIG_DIR.get().expect("set"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let mut pipe = child.stdin.take().expect("stdin");
    let _ = pipe.write_all(stdin);
    drop(pipe);
    child.wait_with_output().expect("wait").stdout
}

fn bench(program: &str, args: &[&str], stdin: &[u8], cwd: &Path) -> Duration {
    for _ in 0..3 {
        feed(program, args, stdin, cwd);
    }
    median(
        (0..RUNS)
            .map(|_| time(|| drop(feed(program, args, stdin, cwd))))
            .collect(),
    )
}

fn main() {
    let hall = env!("CARGO_BIN_EXE_hall");
    let dir = tempfile::tempdir().expect("tempdir");
    let config_dir = dir.path().join("config");
    CONFIG_DIR.set(config_dir.clone()).expect("once");
    let journal = generate(dir.path(), ITEMS, EVENTS_PER_ITEM);
    let repo = dir.path().join("repo");
    std::fs::write(repo.join("README.md"), "bench\n").expect("write");
    git(&repo, &["add", "README.md"]);
    git(&repo, &["commit", "-q", "-m", "init"]);
    // One more item with a real worktree, hallmarked at its HEAD, as the assayer leaves it.
    let wt = dir.path().join("repo-wt");
    git(
        &repo,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "hm/bench",
            wt.to_str().expect("utf8"),
        ],
    );
    std::fs::write(wt.join("work.txt"), "done\n").expect("write");
    git(&wt, &["add", "work.txt"]);
    git(&wt, &["commit", "-q", "-m", "work"]);
    let sha = hallmark::item::Sha::new(git(&wt, &["rev-parse", "HEAD"]));
    let tree = git(&wt, &["rev-parse", "HEAD^{tree}"]);
    let id = ItemId(ITEMS + 1);
    let ev = |kind| Event {
        v: EVENT_VERSION,
        t: "2026-11-02T09:00:00Z".into(),
        actor: "assayer".into(),
        kind,
        item: Some(id),
    };
    // The hallmark is struck as the assayer strikes it: signed with the user's key (in
    // this bench's own config directory, which every hall below is given).
    let signer = hallmark::sign::Signer::load_in(&config_dir, Some(&repo)).expect("signer");
    let mut events = vec![
        ev(EventKind::Created {
            title: "Bench".into(),
            request: None,
            branch: "hm/bench".into(),
            base: "main".into(),
            worktree: Some(wt.canonicalize().expect("canonical").display().to_string()),
            source: Source::New,
            issue: None,
            pr: None,
        }),
        ev(EventKind::Ready {
            sha: sha.clone(),
            round: 1,
            note: None,
        }),
        ev(EventKind::ChecksPassed { sha: sha.clone() }),
        ev(EventKind::Verdict {
            sha: sha.clone(),
            round: 1,
            approved: true,
            findings: Vec::new(),
            model: Some("opus".into()),
            summary: None,
            by: None,
        }),
    ];
    let mut note = hallmark::hall::hallmark::approval_note(&events, id, &sha, 1);
    note.tree = Some(tree);
    let seal = hallmark::hall::hallmark::sign_note(&signer, &note).expect("signs");
    events.push(ev(EventKind::Hallmarked {
        sha: sha.clone(),
        round: 1,
        seal: Some(seal.clone()),
    }));
    journal
        .create_item(|_| Ok::<_, hallmark::journal::JournalError>(events))
        .expect("item");
    let note = serde_json::to_string(&note.sealed(&seal)).expect("json");
    git(
        &wt,
        &["notes", "--ref=hallmark", "add", "-m", &note, "HEAD"],
    );
    let out = Command::new(hall)
        .arg("reindex")
        .current_dir(&repo)
        .env("HALL_CONFIG_DIR", &config_dir)
        .output()
        .expect("reindex");
    assert!(out.status.success());
    println!(
        "repository: {} items, {} events, index warm",
        ITEMS + 1,
        ITEMS * EVENTS_PER_ITEM + 4
    );

    let input = |tool: &str, tool_input: serde_json::Value| {
        serde_json::json!({"session_id": "bench", "cwd": wt, "hook_event_name": "PreToolUse",
            "tool_name": tool, "tool_input": tool_input, "tool_use_id": "toolu_1"})
        .to_string()
        .into_bytes()
    };
    let bash = |c: &str| {
        input(
            "Bash",
            serde_json::json!({"command": c, "description": "bench"}),
        )
    };
    let cases: Vec<(&str, Vec<u8>)> = vec![
        (
            "Bash `cargo test --all` (not a push)",
            bash("cargo test --all"),
        ),
        (
            "Bash `cd host && cargo clippy -- -D warnings | tail -5`",
            bash("cd host && cargo clippy -- -D warnings | tail -5"),
        ),
        (
            "Read (no gate applies)",
            input(
                "Read",
                serde_json::json!({"file_path": wt.join("work.txt")}),
            ),
        ),
        (
            "Edit in the item's worktree (index lookup)",
            input(
                "Edit",
                serde_json::json!({"file_path": wt.join("work.txt"), "old_string": "a", "new_string": "b"}),
            ),
        ),
        (
            "Bash `git push -u origin HEAD` (hallmark verified, allowed)",
            bash("git push -u origin HEAD"),
        ),
    ];
    // Sanity: the push case really verifies and allows, an unhallmarked one is denied.
    assert!(
        feed(hall, &["hook", "pre-tool-use"], &cases[4].1, &repo).is_empty(),
        "the hallmarked push is allowed"
    );
    let noop = bench("true", &[], &cases[0].1, &repo);
    println!(
        "do-nothing process (`true`): {:.2} ms (median of {RUNS})",
        ms(noop)
    );
    for (name, stdin) in &cases {
        let t = bench(hall, &["hook", "pre-tool-use"], stdin, &repo);
        println!(
            "{name}: {:.2} ms = {:.1}x",
            ms(t),
            t.as_secs_f64() / noop.as_secs_f64()
        );
    }
    let version = bench(hall, &["--version"], b"", &repo);
    println!(
        "(for scale: `hall --version`, process start alone: {:.2} ms = {:.1}x)",
        ms(version),
        version.as_secs_f64() / noop.as_secs_f64()
    );
}
