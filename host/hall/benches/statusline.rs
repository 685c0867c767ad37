//! `hall statusline` as Claude Code runs it (a whole process after each message, fed the
//! session JSON on stdin) against a process that does nothing (`true`, fed the same
//! stdin), measured in the same run, in a repository with 1,000 items and 100,000
//! events; and `hall watch`: the time from an event's append to the frame it causes.
//!
//! Run: `cargo bench -p hallmark --bench statusline` (figures go to docs/performance.md).

mod common;

use std::io::BufRead;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::{bench_worktree, feed, generate_committed, median, ms, time};
use hallmark::item::event::EVENT_VERSION;
use hallmark::item::{Event, EventKind, ItemId, Source};

const ITEMS: u32 = 1_000;
const EVENTS_PER_ITEM: u32 = 100;
const RUNS: usize = 60;
const APPENDS: usize = 30;

fn main() {
    let hall = env!("CARGO_BIN_EXE_hall");
    let (_dir, root, config) = common::scratch();
    let (journal, repo) = generate_committed(&root, ITEMS, EVENTS_PER_ITEM);
    // One more item, in development in a real worktree: the session's item.
    let wt = bench_worktree(&root, &repo);
    let id = ItemId(ITEMS + 1);
    let ev = |kind| Event {
        v: EVENT_VERSION,
        t: "2026-12-05T09:00:00Z".into(),
        actor: "you".into(),
        kind,
        item: Some(id),
        via: None,
    };
    journal
        .create_item(|_| {
            Ok::<_, hallmark::journal::JournalError>(vec![ev(EventKind::Created {
                title: "Bench".into(),
                request: None,
                branch: "hm/bench".into(),
                base: "main".into(),
                worktree: Some(wt.display().to_string()),
                source: Source::New,
                issue: None,
                pr: None,
            })])
        })
        .expect("item");
    // `hall reindex` builds the index, and like every command leaves the board current.
    common::reindex(hall, &repo, &config);
    assert!(
        journal.root().join("state/statusline.json").is_file(),
        "the board is written after a command"
    );
    let input = serde_json::json!({"session_id": "bench", "cwd": wt,
        "workspace": {"current_dir": wt}, "model": {"display_name": "Opus"}})
    .to_string()
    .into_bytes();
    let line = String::from_utf8(feed(hall, &["statusline"], &input, &wt, &config)).expect("utf8");
    assert!(line.starts_with("H-1001 development"), "{line}");
    println!("the line: {}", line.trim());

    // The two programs take turns, so a change in the machine's load falls on both.
    let (mut t_hall, mut t_true) = (Vec::new(), Vec::new());
    for _ in 0..3 {
        feed(hall, &["statusline"], &input, &wt, &config);
        feed("true", &[], &input, &wt, &config);
    }
    for _ in 0..RUNS {
        t_hall.push(time(|| {
            drop(feed(hall, &["statusline"], &input, &wt, &config))
        }));
        t_true.push(time(|| drop(feed("true", &[], &input, &wt, &config))));
    }
    let (h, t) = (median(t_hall), median(t_true));
    println!(
        "hall statusline ({ITEMS} items, {} events): {:.2} ms; true: {:.2} ms; {:.1}x (goal <= 3x)",
        ITEMS * EVENTS_PER_ITEM,
        ms(h),
        ms(t),
        h.as_secs_f64() / t.as_secs_f64()
    );

    // `hall watch`, off a terminal: one JSON line per frame.
    let mut child = Command::new(hall)
        .args(["watch", &id.to_string()])
        .current_dir(&wt)
        .env("HALL_CONFIG_DIR", &config)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("watch");
    let stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            if tx.send((Instant::now(), line)).is_err() {
                break;
            }
        }
    });
    let wait = Duration::from_secs(10);
    rx.recv_timeout(wait).expect("the first frame");
    let mut lags = Vec::new();
    for n in 0..APPENDS {
        // A quiet moment first, so each append starts a frame of its own.
        std::thread::sleep(Duration::from_millis(100));
        while rx.try_recv().is_ok() {}
        let at = Instant::now();
        journal
            .append_item(
                id,
                &[ev(EventKind::Prompt {
                    text: format!("prompt {n}"),
                    session: None,
                })],
            )
            .expect("append");
        let (seen, frame) = rx.recv_timeout(wait).expect("a frame after the append");
        assert!(frame.contains(&format!("prompt {n}")), "{frame}");
        lags.push(seen - at);
    }
    let _ = child.kill();
    let _ = child.wait();
    let worst = lags.iter().max().copied().unwrap_or_default();
    println!(
        "hall watch, append to frame: median {:.1} ms, worst {:.1} ms of {APPENDS} (goal <= 200 ms)",
        ms(median(lags)),
        ms(worst)
    );
}
