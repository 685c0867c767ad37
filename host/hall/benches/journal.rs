//! Journal and index benchmarks, as whole processes where a user would feel them.
//!
//! Builds a repository with 10,000 items and 1,000,000 events, then measures against a
//! do-nothing process run in the same session: `hall reindex` throughput, `hall status
//! --json` with a warm index, `hall status --json` right after one append (incremental
//! catch-up), and the latency of a single-event append (lock, write, fsync).
//!
//! Run: `cargo bench -p hallmark --bench journal` (figures go to docs/performance.md).

mod common;

use std::process::Command;
use std::time::Instant;

use common::{ev, generate, median, ms, time};
use hallmark::item::{EventKind, ItemId};

const ITEMS: u32 = 10_000;
const EVENTS_PER_ITEM: u32 = 100;

fn run(cmd: &mut Command) {
    let out = cmd.output().expect("spawn");
    assert!(
        out.status.success(),
        "{:?}: {}",
        cmd,
        String::from_utf8_lossy(&out.stdout)
    );
}

fn main() {
    // `cargo bench` passes `--bench`; nothing else to parse.
    let hall = env!("CARGO_BIN_EXE_hall");
    let dir = common::bench_dir();
    let t = Instant::now();
    let journal = generate(dir.path(), ITEMS, EVENTS_PER_ITEM);
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
        "hall reindex, 1,000,000 events: {:.0} ms (median of 3) = {:.0} events/s (goal >= 1,000,000)",
        ms(reindex),
        events / reindex.as_secs_f64()
    );

    let warm = median(
        (0..30)
            .map(|_| time(|| run(&mut hall_cmd(&["status", "--json"]))))
            .collect(),
    );
    println!(
        "hall status --json, warm index: {:.2} ms (median of 30) = {:.1}x the do-nothing process (goal <= 10 ms)",
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
}
