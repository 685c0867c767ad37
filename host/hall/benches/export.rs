//! `hall export` of a long item: 20 rounds (each with three checks, a rejecting verdict
//! with three findings, a fix and the review's usage) and 40 headless runs of 5 steps
//! each (200 steps), as a whole process against a do-nothing process in the same run,
//! and in process.
//!
//! Run: `cargo bench -p hallmark --bench export` (figures go to docs/performance.md).

mod common;

use std::io::Write;
use std::process::Command;
use std::time::Instant;

use common::{ev, generate, median, ms, time};
use hallmark::item::event::{Dispute, Finding, Usage, encode};
use hallmark::item::{EventKind, ItemId, Lens, Severity, Sha};

const ROUNDS: u32 = 20;
const RUNS: u32 = 40;
const STEPS_PER_RUN: u32 = 5;

fn rounds(id: ItemId) -> Vec<hallmark::item::Event> {
    let mut kinds = Vec::new();
    for round in 1..=ROUNDS {
        let sha = Sha::new(format!("{round:040x}"));
        // Round 1 starts with `ready`; each later one with the fix before it.
        if round == 1 {
            kinds.push(EventKind::Ready {
                sha: sha.clone(),
                round,
                note: None,
            });
        }
        for (n, check) in ["cargo fmt --check", "cargo clippy", "cargo test"]
            .iter()
            .enumerate()
        {
            let failed = n == 2 && round < ROUNDS;
            kinds.push(EventKind::CheckRun {
                sha: sha.clone(),
                check: check.to_string(),
                exit_code: if failed { 101 } else { 0 },
                duration_ms: 1200,
                cached: false,
                output: failed.then(|| {
                    "running 212 tests\ntest limit::caps ... FAILED\n\nfailures:\n  left: 4\n right: 3\n"
                        .repeat(4)
                }),
                log: Some(format!("logs/{round}-{n}.log")),
            });
        }
        let last = round == ROUNDS;
        let findings: Vec<Finding> = (1..=if last { 0 } else { 3 })
            .map(|f| Finding {
                id: format!("F{f}"),
                lens: Lens::ALL[f % 7],
                severity: Severity::Major,
                file: format!("src/module_{f}.rs"),
                line: Some(10 * f as u32),
                scenario: "a retry after the third attempt still reaches the server".into(),
            })
            .collect();
        kinds.push(EventKind::Verdict {
            sha: sha.clone(),
            round,
            approved: last,
            findings,
            model: Some("opus".into()),
            summary: Some("Two findings stand; one is new.".into()),
            by: None,
            learnings: Vec::new(),
        });
        kinds.push(EventKind::Usage(Usage {
            model: "opus".into(),
            role: "review".into(),
            input: 40_000,
            output: 3_000,
            cache_read: 120_000,
            cost_usd: 0.9,
            ..Usage::default()
        }));
        if !last {
            kinds.push(EventKind::FixSubmitted {
                sha: Sha::new(format!("{:040x}", round + 1000)),
                fixed: vec!["F1".into(), "F2".into()],
                disputed: vec![Dispute {
                    finding: "F3".into(),
                    reason: "the server is never reached in that path".into(),
                }],
            });
        }
    }
    kinds
        .into_iter()
        .enumerate()
        .map(|(n, k)| ev(id, n as u32 + 1, k))
        .collect()
}

fn run_stream(n: u32) -> String {
    let mut lines = vec![
        format!(r#"{{"type":"system","subtype":"init","model":"opus","session_id":"s-{n}"}}"#),
        r#"{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Read","input":{"file_path":"src/limit.rs"}}]}}"#.to_string(),
        r#"{"type":"user","message":{"content":[{"type":"tool_result","content":"fn cap(attempts: u32) -> bool { attempts < 3 }"}]}}"#.to_string(),
        r#"{"type":"assistant","message":{"content":[{"type":"text","text":"The cap is exclusive; a fourth attempt slips through."}]}}"#.to_string(),
        r#"{"type":"result","is_error":false,"total_cost_usd":0.02}"#.to_string(),
    ];
    lines.truncate(STEPS_PER_RUN as usize);
    lines.push(r#"{"type":"hall_run_end","exit_code":0,"duration_ms":5000}"#.to_string());
    lines.join("\n") + "\n"
}

fn main() {
    let hall = env!("CARGO_BIN_EXE_hall");
    let dir = tempfile::tempdir().expect("tempdir");
    let journal = generate(dir.path(), 1, 2);
    let id = ItemId(1);
    {
        // The generated item's first line (created), then the rounds.
        let mut f = std::fs::File::create(journal.item_file(id)).expect("open");
        let created = common::item_events(id, 2).remove(0);
        for e in std::iter::once(created).chain(rounds(id)) {
            f.write_all(encode(&e).as_bytes()).expect("write");
            f.write_all(b"\n").expect("write");
        }
    }
    let runs = journal.item_dir(id).join("runs");
    std::fs::create_dir_all(&runs).expect("mkdir");
    for n in 0..RUNS {
        std::fs::write(
            runs.join(format!("2026-11-02T10-{n:02}-00-review.jsonl")),
            run_stream(n),
        )
        .expect("write run");
    }
    let repo = dir.path().join("repo");
    let out = dir.path().join("record.md");
    let export = || {
        let o = Command::new(hall)
            .args(["export", "H-0001", "--out"])
            .arg(&out)
            .current_dir(&repo)
            .env("HALL_DATA_DIR", dir.path().join("data"))
            .output()
            .expect("spawn");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
    };
    export();
    let md = std::fs::read_to_string(&out).expect("record");
    let steps = md
        .lines()
        .filter(|l| l.starts_with(char::is_numeric))
        .count();
    assert_eq!(md.matches("\n## Round ").count(), ROUNDS as usize, "{md}");
    assert_eq!(steps, (RUNS * STEPS_PER_RUN + RUNS) as usize);
    println!(
        "record: {} bytes, {ROUNDS} rounds, {steps} run steps ({RUNS} runs)",
        md.len()
    );

    let baseline = median(
        (0..30)
            .map(|_| time(|| assert!(Command::new("true").status().expect("true").success())))
            .collect(),
    );
    let whole = median((0..30).map(|_| time(export)).collect());
    let t = Instant::now();
    for _ in 0..30 {
        let md = hallmark::commands::export::of_item(&journal, id).expect("export");
        assert!(!md.is_empty());
    }
    let inside = t.elapsed() / 30;
    println!(
        "do-nothing process (`true`): {:.2} ms (median of 30)",
        ms(baseline)
    );
    println!(
        "hall export --out, whole process: {:.2} ms (median of 30) = {:.1}x the do-nothing process (goal <= 100 ms)",
        ms(whole),
        whole.as_secs_f64() / baseline.as_secs_f64()
    );
    println!(
        "export in process (read + fold + render): {:.2} ms (mean of 30)",
        ms(inside)
    );
}
