//! The terminal app at scale: a repository with 10,000 items and 1,000,000 events.
//!
//! 1. The first frame: `hall frame` as a whole process (start, open the index, load the
//!    board and the inbox, draw 120×40), against a do-nothing process in the same run
//!    (goal: ≤ 150 ms), with its peak resident memory from `/usr/bin/time` (goal:
//!    ≤ 100 MB).
//! 2. A keypress to the next frame, in process: the key's effect on the app's state and
//!    a full 120×40 frame drawn from the loaded board (goal: p99 ≤ 16 ms).
//!
//! Run: `cargo bench -p hallmark --bench app` (figures go to docs/performance.md).

mod common;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use common::{generate_committed, median, ms, time};
use hallmark::app::data::Data;
use hallmark::app::keymap::Key;
use hallmark::app::render::to_text;
use hallmark::app::state::{App, Effect};

const ITEMS: u32 = 10_000;
const EVENTS_PER_ITEM: u32 = 100;
const RUNS: usize = 20;
const KEYS: usize = 2_000;

fn run(program: &str, args: &[&str], cwd: &Path, config: &Path) -> std::process::Output {
    Command::new(program)
        .args(args)
        .current_dir(cwd)
        .env("HALL_CONFIG_DIR", config)
        .output()
        .expect("spawn")
}

fn main() {
    let hall = env!("CARGO_BIN_EXE_hall");
    let (_dir, root, config) = common::scratch();
    let mut repo = root.clone();
    let made = time(|| repo = generate_committed(&root, ITEMS, EVENTS_PER_ITEM).1);
    let indexed = time(|| {
        let out = run(hall, &["reindex"], &repo, &config);
        assert!(out.status.success(), "reindex: {out:?}");
    });
    println!(
        "{ITEMS} items, {} events: written in {:.1} s, indexed in {:.1} s",
        ITEMS * EVENTS_PER_ITEM,
        made.as_secs_f64(),
        indexed.as_secs_f64()
    );

    // 1. The first frame, as a process, taking turns with `true`.
    let args = ["frame", "--size", "120x40", "--json"];
    let out = run(hall, &args, &repo, &config);
    assert!(out.status.success(), "frame: {out:?}");
    let frame: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let rows = frame["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 40);
    let shown = rows
        .iter()
        .filter(|r| r.as_str().is_some_and(|r| r.trim_start().starts_with("H-")))
        .count();
    assert!(shown > 30, "a screenful of items: {rows:?}");
    let (mut t_hall, mut t_true) = (Vec::new(), Vec::new());
    for _ in 0..RUNS {
        t_hall.push(time(|| drop(run(hall, &args, &repo, &config))));
        t_true.push(time(|| drop(run("true", &[], &repo, &config))));
    }
    let (h, t) = (median(t_hall.clone()), median(t_true));
    let worst = t_hall.iter().max().copied().unwrap_or_default();
    let peak = Command::new("/usr/bin/time")
        .args(["-f", "%M", hall])
        .args(args)
        .current_dir(&repo)
        .env("HALL_CONFIG_DIR", &config)
        .output()
        .ok()
        .and_then(|o| {
            String::from_utf8_lossy(&o.stderr)
                .lines()
                .last()
                .and_then(|l| l.trim().parse::<u64>().ok())
        });
    println!(
        "first frame (hall frame, 120x40): median {:.1} ms, worst {:.1} ms of {RUNS}; true: {:.2} ms (goal <= 150 ms)",
        ms(h),
        ms(worst),
        ms(t)
    );
    match peak {
        Some(kb) => println!(
            "peak resident memory of the first frame: {:.1} MB (goal <= 100 MB)",
            kb as f64 / 1024.0
        ),
        None => println!("peak resident memory: /usr/bin/time is not available"),
    }

    // 2. A key to the next frame, in process.
    let ctx = hallmark::hall::Ctx::at(repo.clone(), hallmark::clock::Clock::from_env(), "you");
    let hall_ = ctx.hall().expect("the repository");
    let data = Data::load(&hall_).expect("data");
    let shown = data.board("").len();
    assert!(shown > 1_000, "the board has the open items: {shown}");
    println!("the board: {shown} rows (open items and the newest closed ones)");
    let mut app = App::default();
    to_text(&mut app, &data, 120, 40);
    let keys = [
        Key::Down,
        Key::Down,
        Key::PageDown,
        Key::Up,
        Key::End,
        Key::PageUp,
        Key::Home,
    ];
    let mut lags: Vec<Duration> = Vec::with_capacity(KEYS);
    for n in 0..KEYS {
        let key = keys[n % keys.len()];
        lags.push(time(|| {
            let effect = app.on_key(key, &data);
            assert_eq!(effect, Effect::None);
            drop(to_text(&mut app, &data, 120, 40));
        }));
    }
    lags.sort();
    let p99 = lags[lags.len() * 99 / 100];
    println!(
        "key to frame ({KEYS} keys over {ITEMS} items, 120x40): median {:.2} ms, p99 {:.2} ms, worst {:.2} ms (goal p99 <= 16 ms)",
        ms(lags[lags.len() / 2]),
        ms(p99),
        ms(*lags.last().expect("lags"))
    );
}
