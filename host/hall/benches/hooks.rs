//! `hall hook pre-tool-use` as Claude Code runs it: a whole process per tool call, fed
//! the hook JSON on stdin, in a repository with 1,000 items and 100,000 events. Each
//! figure is a ratio against a process that does nothing (`true`, fed the same stdin),
//! measured in the same run.
//!
//! Run: `cargo bench -p hallmark --bench hooks` (figures go to docs/performance.md). With
//! `HALL_BENCH_BASELINE=<path to another hall>`, every case is also run by that binary, in
//! a repository built the same way, the two binaries taking turns run by run, for a
//! side-by-side comparison (`cdedb70`'s binary also needs
//! `HALL_BENCH_BASELINE_EVENT_VERSION=1`).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use common::{bench_worktree, generate_committed, git, median, ms, time};
use hallmark::item::event::EVENT_VERSION;
use hallmark::item::{Event, EventKind, ItemId, Source};

const ITEMS: u32 = 1_000;
const EVENTS_PER_ITEM: u32 = 100;
const RUNS: usize = 60;

/// The user config directory every process here runs with (the signing key lives there).
static CONFIG_DIR: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();

fn feed(program: &str, args: &[&str], stdin: &[u8], cwd: &Path) -> Vec<u8> {
    common::feed(program, args, stdin, cwd, CONFIG_DIR.get().expect("set"))
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

/// The medians of two binaries run in turn (one of each, `RUNS` times), so that a change
/// in the machine's load falls on both alike.
fn bench_pair(a: (&str, &[u8], &Path), b: (&str, &[u8], &Path)) -> (Duration, Duration) {
    let args = ["hook", "pre-tool-use"];
    for _ in 0..3 {
        feed(a.0, &args, a.1, a.2);
        feed(b.0, &args, b.1, b.2);
    }
    let (mut ta, mut tb) = (Vec::with_capacity(RUNS), Vec::with_capacity(RUNS));
    for _ in 0..RUNS {
        ta.push(time(|| drop(feed(a.0, &args, a.1, a.2))));
        tb.push(time(|| drop(feed(b.0, &args, b.1, b.2))));
    }
    (median(ta), median(tb))
}

/// A repository with `ITEMS` items and one more whose worktree's HEAD is hallmarked, its
/// index built by `program`; returns the repository and the worktree.
fn repository(root: &Path, program: &str, line_version: Option<u32>) -> (PathBuf, PathBuf) {
    std::fs::create_dir_all(root).expect("mkdir");
    let config_dir = CONFIG_DIR.get().expect("set");
    let (journal, repo) = generate_committed(root, ITEMS, EVENTS_PER_ITEM);
    // One more item with a real worktree, hallmarked at its HEAD, as the assayer leaves it.
    let wt = bench_worktree(root, &repo);
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
        via: None,
    };
    // The hallmark is struck as the assayer strikes it: signed with the user's key (in
    // this bench's own config directory, which every hall below is given).
    let signer = hallmark::sign::Signer::load_in(config_dir, Some(&repo)).expect("signer");
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
            learnings: Vec::new(),
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
    if let Some(v) = line_version {
        rewrite_version(&journal, v);
    }
    let out = Command::new(program)
        .arg("reindex")
        .current_dir(&repo)
        .env("HALL_CONFIG_DIR", config_dir)
        .output()
        .expect("reindex");
    assert!(
        out.status.success(),
        "{program} reindex: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (repo, wt)
}

/// Stamps every journal line with an older event version, for a baseline binary that reads
/// only that one. The events written here carry none of the fields the versions since
/// renamed (a check run's command, a finding's lens), which is asserted.
fn rewrite_version(journal: &hallmark::journal::Journal, v: u32) {
    for entry in std::fs::read_dir(journal.root().join("items")).expect("items") {
        let file = entry.expect("entry").path().join("events.jsonl");
        let text = std::fs::read_to_string(&file).expect("read");
        let mut out = String::with_capacity(text.len());
        for line in text.lines() {
            let mut value: serde_json::Value = serde_json::from_str(line).expect("json");
            let kind = value["event"].as_str().unwrap_or_default();
            assert!(
                kind != "check_run" && value["findings"].as_array().is_none_or(Vec::is_empty),
                "a {kind} line would need more than its version rewritten"
            );
            value["v"] = v.into();
            out.push_str(&value.to_string());
            out.push('\n');
        }
        std::fs::write(&file, out).expect("write");
    }
}

/// Records `n` finished calls (builds, reads and edits, some failing) in the bench
/// session's window, through the PostToolUse hooks, as a real session would. With 30:
/// ten `cargo build -p crateN` (N = i % 5, so each crate twice), ten reads of different
/// files and ten different edits of `work.txt`, every fourth call failed, the last one
/// a success. None of the measured calls but `cargo build -p crate1` is in it.
fn fill_window(hall: &str, wt: &Path, repo: &Path, n: usize) {
    for i in 0..n {
        let (tool, input) = match i % 3 {
            0 => (
                "Bash",
                serde_json::json!({"command": format!("cargo build -p crate{}", i % 5)}),
            ),
            1 => (
                "Read",
                serde_json::json!({"file_path": wt.join(format!("src/f{i}.rs"))}),
            ),
            _ => (
                "Edit",
                serde_json::json!({"file_path": wt.join("work.txt"),
                    "old_string": format!("a{i}"), "new_string": format!("b{i}")}),
            ),
        };
        let (event, body) = if i % 4 == 0 {
            (
                "post-tool-use-failure",
                serde_json::json!({"error": format!("Exit code 1: error {i}")}),
            )
        } else {
            (
                "post-tool-use",
                serde_json::json!({"tool_response": {"stdout": format!("ok {i}")}}),
            )
        };
        let mut hook = serde_json::json!({"session_id": "bench", "cwd": wt, "tool_name": tool,
            "tool_input": input, "tool_use_id": format!("toolu_{i}")});
        for (k, v) in body.as_object().expect("object") {
            hook[k] = v.clone();
        }
        feed(hall, &["hook", event], hook.to_string().as_bytes(), repo);
    }
    let window = std::fs::read_to_string(repo.join(".git/hallmark/sessions/bench.json"))
        .expect("the session's window");
    let calls: serde_json::Value = serde_json::from_str(&window).expect("json");
    assert_eq!(calls["calls"].as_array().map(Vec::len), Some(n.min(30)));
}

/// The hook inputs measured, each a tool call in `wt`.
fn cases(wt: &Path) -> Vec<(&'static str, Vec<u8>)> {
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
    vec![
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
        // Twice in the window of 30 (see `fill_window`): there it meets the built-in
        // room's guard (repetition's), so the room is loaded and asked (it allows: a
        // build run again with new output is no evidence). With an empty window it is
        // as quiet as the others.
        (
            "Bash `cargo build -p crate1` (in the window of 30 twice: the room is asked)",
            bash("cargo build -p crate1"),
        ),
    ]
}

/// Measures every case once more under a heading, as ratios to the do-nothing process.
fn each_case(heading: &str, hall: &str, cases: &[(&str, Vec<u8>)], repo: &Path, noop: Duration) {
    println!("{heading}");
    for (name, stdin) in cases {
        let t = bench(hall, &["hook", "pre-tool-use"], stdin, repo);
        println!(
            "  {name}: {:.2} ms = {:.1}x",
            ms(t),
            t.as_secs_f64() / noop.as_secs_f64()
        );
    }
}

fn main() {
    let hall = env!("CARGO_BIN_EXE_hall");
    let dir = common::bench_dir();
    CONFIG_DIR.set(dir.path().join("config")).expect("once");
    let (repo, wt) = repository(&dir.path().join("current"), hall, None);
    let cases = cases(&wt);
    if std::env::var_os("HALL_BENCH_KEEP").is_some() {
        std::fs::write(dir.path().join("push.json"), &cases[4].1).expect("write");
    }
    // With a baseline binary, that binary gets its own repository built the same way (its
    // index may be of another schema version), measured right after the current one. An
    // older binary that reads only older journal lines is named with its version in
    // `HALL_BENCH_BASELINE_EVENT_VERSION`.
    let baseline = std::env::var("HALL_BENCH_BASELINE").ok().map(|other| {
        let v = std::env::var("HALL_BENCH_BASELINE_EVENT_VERSION")
            .ok()
            .map(|v| v.parse().expect("an event version"));
        let (repo, wt) = repository(&dir.path().join("baseline"), &other, v);
        (other, repo, self::cases(&wt))
    });
    println!(
        "repository: {} items, {} events, index warm",
        ITEMS + 1,
        ITEMS * EVENTS_PER_ITEM + 4
    );
    // Sanity: the push case really verifies and allows, an unhallmarked one is denied.
    assert!(
        feed(hall, &["hook", "pre-tool-use"], &cases[4].1, &repo).is_empty(),
        "the hallmarked push is allowed"
    );
    if let Some((other, repo, cases)) = &baseline {
        let reply = feed(other, &["hook", "pre-tool-use"], &cases[4].1, repo);
        assert!(
            reply.is_empty(),
            "the baseline binary allows the hallmarked push too: {}",
            String::from_utf8_lossy(&reply)
        );
    }
    let noop = bench("true", &[], &cases[0].1, &repo);
    println!(
        "do-nothing process (`true`): {:.2} ms (median of {RUNS})",
        ms(noop)
    );
    for (n, (name, stdin)) in cases.iter().enumerate() {
        let ratio = |d: Duration| d.as_secs_f64() / noop.as_secs_f64();
        match &baseline {
            None => {
                let t = bench(hall, &["hook", "pre-tool-use"], stdin, &repo);
                println!("{name}: {:.2} ms = {:.1}x", ms(t), ratio(t));
            }
            Some((other, other_repo, other_cases)) => {
                let (t, b) =
                    bench_pair((hall, stdin, &repo), (other, &other_cases[n].1, other_repo));
                println!(
                    "{name}: {:.2} ms = {:.1}x (baseline binary, in turn: {:.2} ms = {:.1}x)",
                    ms(t),
                    ratio(t),
                    ms(b),
                    ratio(b)
                );
            }
        }
    }
    // The tool-call policy ran in every case above (it is on by default, observing), with
    // an empty window: no call meets the room's guard, so the room is not loaded. Here it
    // meets a session with a full window of past calls (one case then meets the guard),
    // and then is switched off on the base branch, to show what the policy itself costs.
    fill_window(hall, &wt, &repo, 30);
    each_case("with a window of 30 past calls:", hall, &cases, &repo, noop);
    std::fs::write(repo.join(".hallmark.toml"), "[policy]\nmode = \"off\"\n").expect("write");
    git(&repo, &["add", ".hallmark.toml"]);
    git(&repo, &["commit", "-q", "-m", "policy off"]);
    each_case(
        "without the tool-call policy ([policy] mode = \"off\"):",
        hall,
        &cases,
        &repo,
        noop,
    );
    let version = bench(hall, &["--version"], b"", &repo);
    println!(
        "(for scale: `hall --version`, process start alone: {:.2} ms = {:.1}x)",
        ms(version),
        version.as_secs_f64() / noop.as_secs_f64()
    );
}
