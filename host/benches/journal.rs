//! Journal and index benchmarks, as whole processes where a user would feel them.
//!
//! Builds a repository with 10,000 items and 1,000,000 events, then measures against a
//! do-nothing process run in the same session: `hall reindex` throughput, `hall status
//! --json` with a warm index, `hall status --json` right after one append (incremental
//! catch-up), and the latency of a single-event append (lock, write, fsync).
//!
//! Run: `cargo bench -p hallmark --bench journal` (figures go to docs/performance.md).

use std::io::Write;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use hallmark::item::event::{EVENT_VERSION, encode};
use hallmark::item::{Event, EventKind, ItemId, Source, State};
use hallmark::journal::Journal;

const ITEMS: u32 = 10_000;
const EVENTS_PER_ITEM: u32 = 100;

fn ev(id: ItemId, n: u32, kind: EventKind) -> Event {
    let t = format!(
        "2026-11-{:02}T{:02}:{:02}:{:02}Z",
        1 + n % 28,
        n % 24,
        n % 60,
        id.0 % 60
    );
    Event {
        v: EVENT_VERSION,
        t,
        actor: "agent".into(),
        kind,
        item: Some(id),
    }
}

/// The events of one item: created, prompts, commits, usage, a loop, and an end state
/// that varies so `status` has a realistic mix (most items closed).
fn item_events(id: ItemId) -> Vec<Event> {
    let mut out = vec![ev(
        id,
        0,
        EventKind::Created {
            title: format!("Item number {}", id.0),
            request: Some("Make the thing work better for everyone involved.".into()),
            branch: format!("hm/{id}-item"),
            base: "main".into(),
            worktree: Some(format!("/work/repo-{id}")),
            source: Source::New,
            issue: None,
            pr: None,
        },
    )];
    let sha = format!("{:040x}", id.0);
    let tail: Vec<EventKind> = match id.0 % 10 {
        0 => vec![],
        1 => vec![EventKind::Ready {
            sha: sha.clone(),
            round: 1,
            note: None,
        }],
        2 => vec![EventKind::Dropped {
            reason: "superseded".into(),
        }],
        _ => vec![
            EventKind::Ready {
                sha: sha.clone(),
                round: 1,
                note: None,
            },
            EventKind::ChecksPassed { sha: sha.clone() },
            EventKind::Verdict {
                sha: sha.clone(),
                round: 1,
                approved: true,
                findings: vec![],
                model: Some("opus".into()),
            },
            EventKind::Hallmarked {
                sha: sha.clone(),
                round: 1,
            },
            EventKind::Shipped {
                sha: sha.clone(),
                pr: Some(format!("https://github.com/o/r/pull/{}", id.0)),
            },
        ],
    };
    let filler = EVENTS_PER_ITEM as usize - 1 - tail.len();
    for n in 0..filler as u32 {
        let kind = match n % 4 {
            0 => EventKind::Prompt {
                text: format!("please adjust step {n} of the plan"),
                session: Some("s-1".into()),
            },
            1 => EventKind::Commit {
                sha: format!("{:040x}", n),
                subject: format!("Step {n}"),
                fixes: vec![],
            },
            2 => EventKind::Usage(hallmark::item::event::Usage {
                model: "sonnet".into(),
                role: "dev".into(),
                input: 1200,
                output: 300,
                cache_read: 20_000,
                cache_write: 500,
                cost_usd: 0.012,
                session: Some("s-1".into()),
                request_id: Some(format!("req_{n}")),
            }),
            _ => EventKind::Turn {
                summary: format!("Did step {n}."),
                session: Some("s-1".into()),
            },
        };
        out.push(ev(id, n + 1, kind));
    }
    for (i, k) in tail.into_iter().enumerate() {
        out.push(ev(id, EVENTS_PER_ITEM + i as u32, k));
    }
    out
}

fn generate(root: &Path) -> Journal {
    let repo = root.join("repo");
    std::fs::create_dir_all(&repo).expect("mkdir");
    let ok = Command::new("git")
        .args(["init", "-q", "-b", "main"])
        .current_dir(&repo)
        .status()
        .expect("git");
    assert!(ok.success());
    let journal = Journal::new(repo.join(".git/hallmark"));
    journal.init().expect("init");
    for n in 1..=ITEMS {
        let id = ItemId(n);
        std::fs::create_dir_all(journal.item_dir(id)).expect("mkdir");
        let mut f =
            std::io::BufWriter::new(std::fs::File::create(journal.item_file(id)).expect("create"));
        for e in item_events(id) {
            f.write_all(encode(&e).as_bytes()).expect("write");
            f.write_all(b"\n").expect("write");
        }
    }
    std::fs::write(
        journal.root().join("counters.json"),
        format!("{{\"item\":{},\"question\":1}}", ITEMS + 1),
    )
    .expect("counters");
    journal
}

fn time(mut f: impl FnMut()) -> Duration {
    let t = Instant::now();
    f();
    t.elapsed()
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn run(cmd: &mut Command) {
    let out = cmd.output().expect("spawn");
    assert!(
        out.status.success(),
        "{:?}: {}",
        cmd,
        String::from_utf8_lossy(&out.stdout)
    );
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn main() {
    // `cargo bench` passes `--bench`; nothing else to parse.
    let hall = env!("CARGO_BIN_EXE_hall");
    let dir = tempfile::tempdir().expect("tempdir");
    let t = Instant::now();
    let journal = generate(dir.path());
    let repo = dir.path().join("repo");
    println!(
        "generated {ITEMS} items x {EVENTS_PER_ITEM} events in {:.1} s",
        t.elapsed().as_secs_f64()
    );

    let hall_cmd = |args: &[&str]| {
        let mut c = Command::new(hall);
        c.args(args)
            .current_dir(&repo)
            .env("HALL_DATA_DIR", dir.path().join("data"));
        c
    };

    let baseline = median(
        (0..30)
            .map(|_| time(|| run(&mut Command::new("true"))))
            .collect(),
    );
    println!(
        "do-nothing process (`true`): {:.2} ms (median of 30)",
        ms(baseline)
    );

    let mut reindex = Vec::new();
    for _ in 0..3 {
        reindex.push(time(|| run(&mut hall_cmd(&["reindex"]))));
    }
    let reindex = median(reindex);
    let events = f64::from(ITEMS * EVENTS_PER_ITEM);
    println!(
        "hall reindex, 1,000,000 events: {:.0} ms (median of 3) = {:.0} events/s (goal >= 200,000)",
        ms(reindex),
        events / reindex.as_secs_f64()
    );

    let warm = median(
        (0..30)
            .map(|_| time(|| run(&mut hall_cmd(&["status", "--json"]))))
            .collect(),
    );
    println!(
        "hall status --json, warm index: {:.2} ms (median of 30) = {:.1}x the do-nothing process (goal <= 50 ms)",
        ms(warm),
        warm.as_secs_f64() / baseline.as_secs_f64()
    );
    let count = {
        let out = hall_cmd(&["status", "--json"]).output().expect("status");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
        v["items"].as_array().map(Vec::len).unwrap_or(0)
    };
    println!("  (it lists the {count} items not closed or dropped)");

    let mut after_append = Vec::new();
    for n in 0..10u32 {
        let id = ItemId(1 + n * 7);
        let e = ev(
            id,
            999,
            EventKind::Prompt {
                text: "one more".into(),
                session: None,
            },
        );
        journal.append_item(id, &[e]).expect("append");
        after_append.push(time(|| run(&mut hall_cmd(&["status", "--json"]))));
    }
    println!(
        "hall status --json after one append (incremental catch-up): {:.2} ms (median of 10)",
        ms(median(after_append))
    );

    let id = ItemId(ITEMS / 2);
    let mut appends = Vec::new();
    for n in 0..500u32 {
        let e = ev(
            id,
            2000 + n,
            EventKind::Prompt {
                text: format!("latency {n}"),
                session: None,
            },
        );
        appends.push(time(|| {
            journal
                .append_item(id, std::slice::from_ref(&e))
                .expect("append")
        }));
    }
    appends.sort();
    println!(
        "single-event append (lock, one write, fsync), in process: median {:.3} ms, p99 {:.3} ms (500 appends)",
        ms(appends[appends.len() / 2]),
        ms(appends[appends.len() * 99 / 100])
    );
    let _ = State::Closed;
}
