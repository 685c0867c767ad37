//! The simulated day: 200 PRs on one base under Hallmark's merger (the real
//! built-in room, called every pass) and three other ways to merge.
//!
//! Run with `cargo run -p hallmark-host --example merge_day -- --seed 1` (a debug
//! build is enough); `--prs N` sizes the day; `--only 1,3,9` runs those rows
//! of the table alone. Prints a markdown table.

mod model;

use hallmark::rooms::types::UpdateMode;
use hallmark::rooms::{Rooms, World};
use model::{Day, Params, Report, Strategy};

fn main() {
    let mut seed = 1;
    let mut prs = None;
    let mut only: Option<Vec<usize>> = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let value = args.next();
        let number = value.as_deref().and_then(|v| v.parse::<u64>().ok());
        match (arg.as_str(), number) {
            ("--seed", Some(v)) => seed = v,
            ("--prs", Some(v)) => prs = Some(v as usize),
            ("--only", _) => {
                only = value
                    .unwrap_or_default()
                    .split(',')
                    .map(|r| {
                        r.trim()
                            .parse::<usize>()
                            .ok()
                            .filter(|&r| r >= 1 && r <= STRATEGIES.len())
                    })
                    .collect();
                if only.is_none() {
                    usage();
                }
            }
            _ => usage(),
        }
    }
    let strategies: Vec<Strategy> = match &only {
        Some(rows) => rows.iter().map(|&r| STRATEGIES[r - 1]).collect(),
        None => STRATEGIES.to_vec(),
    };
    let mut params = Params::full(seed);
    if let Some(n) = prs {
        params.prs = n;
    }
    let started = std::time::Instant::now();
    let reports = match model::run_all(&Day::new(params.clone()), &strategies, &room()) {
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

fn usage() -> ! {
    eprintln!(
        "usage: merge_day [--seed N] [--prs N] [--only ROWS]\n  ROWS: the table's rows to run, 1 to {}, comma-separated",
        STRATEGIES.len()
    );
    std::process::exit(2);
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
    // The common count: 90% of what the batching queue merged, so every row is read
    // at the same number of merged PRs (a p90 over merged PRs only flatters a
    // strategy that merges fewer).
    let batch = Strategy::Batch { size: 5 }.name();
    let k = reports
        .iter()
        .find(|r| r.name == batch)
        .map(|r| (r.merged as f64 * 0.9).round() as usize);
    let head = match k {
        Some(k) => format!(" {k}th merged |"),
        None => String::new(),
    };
    let mut out = format!(
        "| strategy | merged | ready→merged median | p90 |{head} CI runs per merged PR (all runs) | base red | broken merges on the base | never merged |\n|---|---:|---:|---:|{}---:|---:|---:|---:|\n",
        if k.is_some() { "---:|" } else { "" }
    );
    for r in reports {
        let kth = match k.map(|k| r.kth_min(k)) {
            Some(Some(m)) => format!(" {m:.0} min |"),
            Some(None) => " not reached |".to_string(),
            None => String::new(),
        };
        out.push_str(&format!(
            "| {} | {} | {:.0} min | {:.0} min |{kth} {:.2} ({}) | {} min | {} | {} |\n",
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
