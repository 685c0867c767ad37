//! Room benchmarks, reported as ratios (the goals are ratios too):
//!
//! 1. a cached room call as a whole process, against a do-nothing process
//!    started the same way in the same run (goal: at most 4x);
//! 2. compiling a room on a cache miss, against loading it from the cache, and
//!    what `hall rooms check` adds: instantiating it and type-checking its
//!    exports;
//! 3. the merger judging 1,000 PRs of 20 files each through the wasm room,
//!    against the same rules compiled natively (goal: at most 3x). The native
//!    side includes the very file the room is built from,
//!    `rooms/sdk/src/rules/merger.rs`, compiled against hall's plain types.
//!
//! Run with `cargo bench --bench rooms`. The whole-process part runs
//! `HALL_BENCH_ROOM_CMD` and `HALL_BENCH_NOOP_CMD` (whitespace-separated argv)
//! when set, else `hall rooms run merger --input <json>` and `true`
//! from the same target directory; it is skipped when neither is available.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use hallmark::rooms::types::*;
use hallmark::rooms::{Rooms, World};

/// The host's plain types under the names the shared rules file expects.
mod model {
    pub use hallmark::rooms::types::*;
}

#[path = "../../../rooms/sdk/src/rules/merger.rs"]
#[allow(dead_code)]
mod merger_rules;

fn main() {
    let cache = std::env::temp_dir().join(format!("hall-bench-rooms-{}", std::process::id()));
    let mut summary = Vec::new();

    // ---------------------------------------------------------------- 2. compile
    let mut misses = Vec::new();
    let mut hits = Vec::new();
    for i in 0..5 {
        let dir = cache.join(format!("miss-{i}"));
        let rooms = Rooms::new(&dir).expect("engine");
        let start = Instant::now();
        let room = rooms.builtin(World::Merger).expect("merger room");
        misses.push(start.elapsed());
        assert!(room.was_compiled());
        let rooms = Rooms::new(&dir).expect("engine");
        let start = Instant::now();
        let room = rooms.builtin(World::Merger).expect("merger room");
        hits.push(start.elapsed());
        assert!(!room.was_compiled());
    }
    let (miss, hit) = (median(&mut misses), median(&mut hits));
    println!("cache miss (compile + store) merger room: {}", ms(miss));
    println!("cache hit (load artifact) merger room:    {}", ms(hit));
    println!("  miss / hit = {:.1}x", ratio(miss, hit));
    summary.push(("compile_miss_ms", miss.as_secs_f64() * 1e3));
    summary.push(("load_hit_ms", hit.as_secs_f64() * 1e3));

    let rooms = Rooms::new(cache.join("verify")).expect("engine");
    let room = rooms.builtin(World::Merger).expect("merger room");
    let mut verifies = Vec::new();
    for _ in 0..50 {
        let start = Instant::now();
        room.verify().expect("the built-in merger room verifies");
        verifies.push(start.elapsed());
    }
    let verify = median(&mut verifies);
    println!("verify (instantiate + type-check exports): {}", ms(verify));
    summary.push(("verify_ms", verify.as_secs_f64() * 1e3));

    // ---------------------------------------------------------------- 3. merger
    let input = big_queue(1000, 20);
    let rooms = Rooms::new(cache.join("merger")).expect("engine");
    let room = rooms.builtin(World::Merger).expect("merger room");
    let wasm_plan = room.judge_merges(&input).expect("call").expect("answer");
    let native_plan = merger_rules::judge(&input).expect("answer");
    assert_eq!(
        wasm_plan, native_plan,
        "the room and the native rules disagree"
    );
    let actions = count_actions(&native_plan);
    println!("merger input: 1000 PRs x 20 files; plan {actions}");

    let mut wasm = Vec::new();
    let mut native = Vec::new();
    for _ in 0..15 {
        let start = Instant::now();
        let plan = room.judge_merges(&input).expect("call").expect("answer");
        wasm.push(start.elapsed());
        std::hint::black_box(plan);
        let start = Instant::now();
        let plan = merger_rules::judge(std::hint::black_box(&input)).expect("answer");
        native.push(start.elapsed());
        std::hint::black_box(plan);
    }
    let (wasm, native) = (median(&mut wasm), median(&mut native));
    // The same input with an empty base name is refused after validation, so
    // this is the cost of crossing into the room: converting, lowering every
    // string into the guest, and a fresh instance.
    let mut refused = input.clone();
    refused.bases[0].base = String::new();
    let mut boundary = Vec::new();
    for _ in 0..15 {
        let start = Instant::now();
        let outcome = room.judge_merges(&refused).expect("call");
        boundary.push(start.elapsed());
        assert!(outcome.is_err());
    }
    let boundary = median(&mut boundary);
    println!(
        "merger, wasm room (fresh store + instantiate + call): {}",
        ms(wasm)
    );
    println!(
        "merger, native (same rules file):                     {}",
        ms(native)
    );
    println!(
        "merger, crossing only (input refused at once): {}",
        ms(boundary)
    );
    println!("  wasm / native = {:.2}x (goal <= 3x)", ratio(wasm, native));
    summary.push(("merger_wasm_ms", wasm.as_secs_f64() * 1e3));
    summary.push(("merger_native_ms", native.as_secs_f64() * 1e3));
    summary.push(("merger_boundary_ms", boundary.as_secs_f64() * 1e3));
    summary.push(("merger_ratio", ratio(wasm, native)));

    // ---------------------------------------------------------------- 1. process
    match process_commands() {
        Some((room_cmd, noop_cmd)) => {
            // Warm the cache and the page cache.
            for _ in 0..3 {
                run(&room_cmd);
                run(&noop_cmd);
            }
            let mut room_times = Vec::new();
            let mut noop_times = Vec::new();
            for _ in 0..60 {
                room_times.push(run(&room_cmd));
                noop_times.push(run(&noop_cmd));
            }
            let (room_t, noop_t) = (median(&mut room_times), median(&mut noop_times));
            println!(
                "process, cached room call: {} ({})",
                ms(room_t),
                room_cmd[..4].join(" ") + " --input <10 PRs as JSON>"
            );
            println!(
                "process, do-nothing:       {} ({})",
                ms(noop_t),
                noop_cmd.join(" ")
            );
            println!(
                "  room / do-nothing = {:.2}x (goal <= 4x)",
                ratio(room_t, noop_t)
            );
            summary.push(("process_room_ms", room_t.as_secs_f64() * 1e3));
            summary.push(("process_noop_ms", noop_t.as_secs_f64() * 1e3));
            summary.push(("process_ratio", ratio(room_t, noop_t)));
        }
        None => println!(
            "process benchmark skipped: no hall binary (set HALL_BENCH_ROOM_CMD and HALL_BENCH_NOOP_CMD)"
        ),
    }

    let fields: Vec<String> = summary
        .iter()
        .map(|(k, v)| format!("\"{k}\": {v:.3}"))
        .collect();
    println!("{{{}}}", fields.join(", "));
    let _ = std::fs::remove_dir_all(&cache);
}

fn process_commands() -> Option<(Vec<String>, Vec<String>)> {
    let split = |s: String| s.split_whitespace().map(str::to_string).collect::<Vec<_>>();
    if let (Ok(room), Ok(noop)) = (
        std::env::var("HALL_BENCH_ROOM_CMD"),
        std::env::var("HALL_BENCH_NOOP_CMD"),
    ) {
        return Some((split(room), split(noop)));
    }
    let hall = env!("CARGO_BIN_EXE_hall").to_string();
    let input = serde_json::to_string(&big_queue(10, 5)).ok()?;
    // The baseline is a process that does nothing at all, measured in the same run.
    Some((
        vec![
            hall,
            "rooms".into(),
            "run".into(),
            "merger".into(),
            "--input".into(),
            input,
        ],
        vec!["true".into()],
    ))
}

fn run(argv: &[String]) -> Duration {
    let start = Instant::now();
    let status = Command::new(&argv[0])
        .args(&argv[1..])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("spawn");
    let took = start.elapsed();
    assert!(status.success(), "{argv:?} failed");
    took
}

/// A deterministic queue: `prs` PRs of `files` files each, drawn from a pool
/// sized so that some PRs overlap, with a mix of states the rules care about.
fn big_queue(prs: u32, files: u32) -> MergerInput {
    let mut seed: u64 = 0x5eed;
    let mut next = move |n: u64| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) % n
    };
    let pool = u64::from(prs) * u64::from(files) * 4;
    let queue = (1..=prs)
        .map(|number| {
            let files: Vec<String> = (0..files)
                .map(|_| format!("src/module{}/file{}.rs", next(50), next(pool)))
                .collect();
            let base_commits = (0..3)
                .map(|c| BaseCommit {
                    sha: format!("base{number}-{c}"),
                    files: (0..5)
                        .map(|_| format!("src/module{}/file{}.rs", next(50), next(pool)))
                        .collect(),
                })
                .collect();
            let sha = format!("{number:040x}");
            PrFacts {
                number,
                head_sha: sha.clone(),
                hallmark_sha: if next(20) == 0 { None } else { Some(sha) },
                mergeable: match next(20) {
                    0 => MergeableState::Conflicting,
                    1 => MergeableState::Unknown,
                    _ => MergeableState::Mergeable,
                },
                ci: match next(10) {
                    0 => CiState::Pending,
                    1 => CiState::Red,
                    _ => CiState::Green,
                },
                checks: Vec::new(),
                merge_checks: Vec::new(),
                merged_tree: None,
                changes_requested: next(50) == 0,
                review_requests: Vec::new(),
                body: if number > 1 && next(10) == 0 {
                    format!(
                        "Part of the plan.\n\nDepends on #{}\n",
                        1 + next(u64::from(number - 1))
                    )
                } else {
                    "A change.".to_string()
                },
                stacked_on: None,
                files,
                base_commits,
                rebasing: next(30) == 0,
                lit_cleared: false,
            }
        })
        .collect();
    MergerInput {
        settings: MergeSettings {
            require_ci: true,
            update: UpdateMode::Files,
            lit: vec![".github/".into()],
            ..MergeSettings::default()
        },
        bases: vec![BaseQueue {
            base: "main".into(),
            tip_sha: "tip".into(),
            tip_ci: CiState::Green,
            tip_checked: false,
            recent: Vec::new(),
            merge_in_flight: None,
            prs: queue,
        }],
        open_prs: Vec::new(),
    }
}

fn count_actions(plan: &MergerPlan) -> String {
    let mut counts = [0usize; 4];
    for base in &plan.bases {
        for d in &base.decisions {
            counts[match d.action {
                Action::Merge => 0,
                Action::Rebase => 1,
                Action::Wait => 2,
                Action::Hold => 3,
            }] += 1;
        }
    }
    format!(
        "merge {}, rebase {}, wait {}, hold {}",
        counts[0], counts[1], counts[2], counts[3]
    )
}

fn median(times: &mut [Duration]) -> Duration {
    times.sort_unstable();
    times[times.len() / 2]
}

fn ratio(a: Duration, b: Duration) -> f64 {
    a.as_secs_f64() / b.as_secs_f64().max(1e-9)
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1e3)
}
