//! What the Library's search and briefing cost, in process, at 1,000 and 10,000
//! learnings: the first open (the search tables built from the files), then search p50
//! and p99 over a mix of word, identifier, path and error-string queries, and a
//! briefing for a 50-file diff.
//!
//! Run: `cargo bench -p hallmark --bench library` (`HALL_BENCH_KEEP=1` keeps the store).

use std::time::{Duration, Instant};

use hallmark::item::{LearningId, LearningKind, LearningStatus};
use hallmark::journal::Journal;
use hallmark::library::{Learning, Library, Meta, Search, SearchFilter, Settings, Source};

const WORDS: &[&str] = &[
    "retry",
    "backoff",
    "timeout",
    "pool",
    "connection",
    "cache",
    "invoice",
    "session",
    "token",
    "migration",
    "deadlock",
    "handler",
    "middleware",
    "config",
    "tenant",
    "export",
    "upload",
    "queue",
    "worker",
    "metrics",
    "label",
    "cursor",
    "pagination",
    "transaction",
    "rollback",
    "idempotent",
    "locale",
    "schema",
    "serde",
    "borrow",
    "mutex",
    "await",
    "span",
    "tracing",
    "header",
    "cookie",
    "redirect",
    "signature",
    "checksum",
    "jitter",
    "deploy",
    "shutdown",
];
const IDENTS: &[&str] = &[
    "parse_config",
    "HttpClient::retry",
    "JobQueue::claim",
    "Flags::enabled",
    "useApi",
    "formatCents",
    "require_user",
    "spawn_blocking",
    "OffsetDateTime",
    "ConstantTimeEq",
];
const ERRORS: &[&str] = &[
    "connection reset by peer",
    "E0502",
    "deadlock detected",
    "missing field",
    "E0308",
    "future cannot be sent between threads safely",
    "too many open files",
    "broken pipe",
];
const DIRS: &[&str] = &[
    "src/api",
    "src/billing",
    "src/db",
    "src/jobs",
    "src/cache",
    "src/auth",
    "src/http",
    "src/config",
    "src/export",
    "src/metrics",
    "web/src/api",
    "web/src/components",
    "web/src/pages",
    "web/src/state",
    "migrations",
    "tests",
];

/// A small deterministic generator (xorshift), so every run builds the same store.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as usize
    }
    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[self.next() % from.len()]
    }
}

fn learning(n: u32, rng: &mut Rng) -> Learning {
    let kind = LearningKind::ALL[rng.next() % 4];
    let title = format!(
        "{} {} in {}",
        rng.pick(WORDS),
        rng.pick(IDENTS),
        rng.pick(WORDS)
    );
    let mut body = String::new();
    for s in 0..6 {
        body.push_str(&format!(
            "When the {} {} hits `{}` the {} must {} ({}). ",
            rng.pick(WORDS),
            rng.pick(WORDS),
            rng.pick(ERRORS),
            rng.pick(WORDS),
            rng.pick(WORDS),
            if s % 2 == 0 {
                rng.pick(IDENTS)
            } else {
                rng.pick(DIRS)
            }
        ));
    }
    let paths = match rng.next() % 3 {
        0 => Vec::new(),
        1 => vec![format!("{}/**", rng.pick(DIRS))],
        _ => vec![format!("{}/file{}.rs", rng.pick(DIRS), rng.next() % 40)],
    };
    Learning {
        meta: Meta {
            id: LearningId(n),
            kind,
            title,
            status: LearningStatus::Accepted,
            version: 1,
            paths,
            created: "2026-11-02T09:00:00Z".into(),
            updated: "2026-11-02T09:00:00Z".into(),
            replaces: None,
            used: 0,
            last_used: None,
            source: Source::default(),
        },
        body,
    }
}

/// p50 and p99 of `runs` calls after a warm-up.
fn measure(runs: usize, mut f: impl FnMut(usize)) -> (Duration, Duration) {
    for i in 0..20 {
        f(i);
    }
    let mut v: Vec<Duration> = (0..runs)
        .map(|i| {
            let t = Instant::now();
            f(i);
            t.elapsed()
        })
        .collect();
    v.sort();
    (v[v.len() / 2], v[(v.len() * 99 / 100).min(v.len() - 1)])
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn bench(count: u32) {
    let dir = tempfile::tempdir().expect("tempdir");
    let journal = Journal::new(dir.path().join("hallmark"));
    journal.init().expect("journal");
    let library = Library::new(&journal, Settings::default());
    let files = library.learnings_dir();
    std::fs::create_dir_all(&files).expect("dir");
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    // Written straight to the files: the bench measures reading, not a million fsyncs.
    for n in 1..=count {
        let l = learning(n, &mut rng);
        std::fs::write(library.file_of(l.meta.id), l.render()).expect("write");
    }
    let t = Instant::now();
    let search = Search::open(&library).expect("opens");
    let built = t.elapsed();

    let mut queries: Vec<String> = Vec::new();
    for i in 0..50 {
        queries.push(match i % 5 {
            0 => format!("{} {}", rng.pick(WORDS), rng.pick(WORDS)),
            1 => rng.pick(IDENTS).to_string(),
            2 => rng.pick(ERRORS).to_string(),
            3 => format!("{}/file{}.rs", rng.pick(DIRS), rng.next() % 40),
            _ => format!(
                "{} {} {}",
                rng.pick(WORDS),
                rng.pick(IDENTS),
                rng.pick(WORDS)
            ),
        });
    }
    let filter = SearchFilter::default();
    let mut hits = 0usize;
    let (p50, p99) = measure(500, |i| {
        let found = search
            .search(&queries[i % queries.len()], 10, &filter)
            .expect("searches");
        hits += found.hits.len();
    });
    println!(
        "{count:>6} learnings: tables built from the files in {:>8.1} ms; search p50 {:>6.3} ms  p99 {:>6.3} ms ({} hits per query)",
        ms(built),
        ms(p50),
        ms(p99),
        hits / 520
    );

    let changed: Vec<String> = (0..50)
        .map(|i| format!("{}/file{}.rs", DIRS[i % DIRS.len()], (i * 7) % 40))
        .collect();
    let mut lines = 0;
    let (b50, b99) = measure(100, |_| {
        let b = library
            .briefing(
                &search,
                &changed,
                "retry backoff parse_config connection reset by peer",
                6000,
            )
            .expect("briefs");
        lines = b.lines.len();
    });
    println!(
        "{count:>6} learnings: briefing for a 50-file diff (6k cap) p50 {:>6.3} ms  p99 {:>6.3} ms ({lines} lines)",
        ms(b50),
        ms(b99)
    );
    if std::env::var_os("HALL_BENCH_KEEP").is_some() {
        let kept = dir.keep();
        println!("kept {}", kept.display());
    }
}

fn main() {
    for count in [1_000, 10_000] {
        bench(count);
    }
}
