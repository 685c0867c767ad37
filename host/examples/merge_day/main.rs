//! The simulated day: 200 PRs on one base under Hallmark's merger (the real
//! built-in room, called every pass) and three other ways to merge.
//!
//! Run with `cargo run -p hallmark --example merge_day -- --seed 1` (a debug
//! build is enough); `--prs N` sizes the day. Prints a markdown table.

mod model;

use hallmark::rooms::types::UpdateMode;
use hallmark::rooms::{Rooms, World};
use model::{Day, Params, Report, Strategy};

fn main() {
    let mut seed = 1;
    let mut prs = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let value = args.next().and_then(|v| v.parse::<u64>().ok());
        match (arg.as_str(), value) {
            ("--seed", Some(v)) => seed = v,
            ("--prs", Some(v)) => prs = Some(v as usize),
            _ => {
                eprintln!("usage: merge_day [--seed N] [--prs N]");
                std::process::exit(2);
            }
        }
    }
    let mut params = Params::full(seed);
    if let Some(n) = prs {
        params.prs = n;
    }
    let started = std::time::Instant::now();
    let reports = match model::run_all(&Day::new(params.clone()), &STRATEGIES, &room()) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("merge_day: {e}");
            std::process::exit(1);
        }
    };
    println!(
        "{} PRs over {} h on one base, followed to {} h; seed {seed}.\n",
        params.prs,
        params.day / 3600,
        params.horizon / 3600
    );
    print!("{}", table(&reports));
    println!();
    let calls: u64 = reports.iter().map(|r| r.room_calls).sum();
    eprintln!(
        "ran in {:.1} s; {calls} calls to the merger room",
        started.elapsed().as_secs_f64()
    );
}

const STRATEGIES: [Strategy; 10] = [
    Strategy::Hallmark {
        pre_merge_check: true,
        hot: true,
        train: 4,
        update: UpdateMode::Files,
    },
    Strategy::Hallmark {
        pre_merge_check: true,
        hot: true,
        train: 1,
        update: UpdateMode::Files,
    },
    Strategy::Hallmark {
        pre_merge_check: true,
        hot: true,
        train: 4,
        update: UpdateMode::Conflicts,
    },
    Strategy::Hallmark {
        pre_merge_check: true,
        hot: true,
        train: 8,
        update: UpdateMode::Conflicts,
    },
    Strategy::Hallmark {
        pre_merge_check: false,
        hot: true,
        train: 4,
        update: UpdateMode::Files,
    },
    Strategy::Hallmark {
        pre_merge_check: false,
        hot: false,
        train: 4,
        update: UpdateMode::Files,
    },
    Strategy::WhenGreen,
    Strategy::AlwaysUpdate,
    Strategy::Batch { size: 5 },
    Strategy::Batch { size: 1 },
];

fn room() -> hallmark::rooms::Room {
    let rooms = Rooms::without_cache().unwrap_or_else(|e| {
        eprintln!("merge_day: {e}");
        std::process::exit(1);
    });
    rooms.builtin(World::Merger).unwrap_or_else(|e| {
        eprintln!("merge_day: {e}");
        std::process::exit(1);
    })
}

fn table(reports: &[Report]) -> String {
    let mut out = String::from(
        "| strategy | merged | ready→merged median | p90 | CI runs per merged PR (all runs) | base red | broken merges on the base | never merged |\n|---|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for r in reports {
        out.push_str(&format!(
            "| {} | {} | {:.0} min | {:.0} min | {:.2} ({}) | {} min | {} | {} |\n",
            r.name,
            r.merged,
            r.median_min,
            r.p90_min,
            r.ci_per_merged(),
            r.ci_runs,
            r.red_min,
            r.broken,
            r.never
        ));
    }
    out
}
