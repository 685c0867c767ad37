//! What the Library's search and briefing cost, in process, at 1,000 and 10,000
//! learnings, in two stores:
//!
//! - `narrow`: 42 words, 10 identifiers, 8 error strings and 16 directories, drawn
//!   evenly. Nearly every learning matches every query: the worst case for ranking.
//! - `varied`: closer to a real store. 4,000 words, 2,000 identifiers, 300 error strings
//!   and 300 directories, each drawn by Zipf's law (a few are everywhere, most are
//!   rare), and sentences half made of English's common short words.
//!
//! For each: the first open (the search tables built from the files), search p50 and p99
//! over a mix of word, identifier, path and error-string queries (and the p99 of each
//! kind), how many of the first ten hits a search shares with one that ranks every match
//! (the ranking budget's cost in quality), and a briefing for a 50-file diff, whole and by
//! phase. Nothing printed is fixed in advance: every figure is measured or counted.
//!
//! Run: `cargo bench -p hallmark --bench library` (`HALL_BENCH_KEEP=1` keeps the stores).

use std::time::{Duration, Instant};

use hallmark::item::{LearningId, LearningKind, LearningStatus};
use hallmark::journal::Journal;
use hallmark::library::{Learning, Library, Meta, Search, SearchFilter, Settings, Source, brief};

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

/// English's common short words: about half of every sentence in the varied store.
const COMMON: &[&str] = &[
    "the", "a", "an", "of", "to", "in", "is", "it", "and", "or", "for", "on", "with", "that",
    "this", "be", "by", "not", "as", "at", "from", "when", "if", "must", "should", "can", "are",
    "was", "its", "no", "but", "then", "so", "all", "one", "only", "before", "after",
];

/// Syllables the varied store's words are made of.
const SYLLABLES: &[&str] = &[
    "ba", "ko", "ri", "tem", "lo", "sa", "vin", "du", "mer", "pa", "ne", "chi", "ost", "ul", "gra",
    "fen", "mo", "tar", "wil", "ze", "han", "qui", "dro", "pel", "su", "ka", "lin", "rom", "tu",
    "vex", "jo", "nar", "bel", "fi", "gor", "pu", "sel", "cra", "di", "mun",
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
    /// A number in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() % (1 << 40)) as f64 / (1u64 << 40) as f64
    }
}

/// A list drawn from by Zipf's law: the n-th most common entry comes up in proportion
/// to 1/n.
struct Zipf {
    items: Vec<String>,
    cumulative: Vec<f64>,
}

impl Zipf {
    fn new(items: Vec<String>) -> Zipf {
        let mut total = 0.0;
        let cumulative = (0..items.len())
            .map(|n| {
                total += 1.0 / (n + 1) as f64;
                total
            })
            .collect();
        Zipf { items, cumulative }
    }
    fn pick(&self, rng: &mut Rng) -> &str {
        let total = self.cumulative.last().copied().unwrap_or(0.0);
        let at = rng.unit() * total;
        let n = self.cumulative.partition_point(|c| *c < at);
        &self.items[n.min(self.items.len() - 1)]
    }
}

/// The varied store's lists.
struct Varied {
    words: Zipf,
    idents: Zipf,
    errors: Zipf,
    dirs: Zipf,
}

impl Varied {
    fn new(rng: &mut Rng) -> Varied {
        let mut seen = std::collections::HashSet::new();
        let mut words = Vec::new();
        while words.len() < 4_000 {
            let n = 2 + rng.next() % 2;
            let w: String = (0..n).map(|_| rng.pick(SYLLABLES)).collect();
            if seen.insert(w.clone()) {
                words.push(w);
            }
        }
        let pair = |rng: &mut Rng| {
            (
                words[rng.next() % words.len()].clone(),
                words[rng.next() % words.len()].clone(),
            )
        };
        let capital = |w: &str| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_uppercase().chain(c).collect::<String>())
                .unwrap_or_default()
        };
        let idents = (0..2_000)
            .map(|i| {
                let (a, b) = pair(rng);
                match i % 3 {
                    0 => format!("{a}_{b}"),
                    1 => format!("{a}{}", capital(&b)),
                    _ => format!("{}::{b}", capital(&a)),
                }
            })
            .collect();
        let errors = (0..300)
            .map(|i| {
                if i % 4 == 0 {
                    format!("E{:04}", rng.next() % 10_000)
                } else {
                    let (a, b) = pair(rng);
                    format!("{} {a} {} {b}", rng.pick(COMMON), rng.pick(COMMON))
                }
            })
            .collect();
        let dirs = (0..300)
            .map(|i| {
                let (a, b) = pair(rng);
                match i % 3 {
                    0 => format!("src/{a}"),
                    1 => format!("src/{a}/{b}"),
                    _ => format!("web/src/{a}"),
                }
            })
            .collect();
        Varied {
            words: Zipf::new(words),
            idents: Zipf::new(idents),
            errors: Zipf::new(errors),
            dirs: Zipf::new(dirs),
        }
    }

    fn file(&self, rng: &mut Rng) -> String {
        format!("{}/{}.rs", self.dirs.pick(rng), self.words.pick(rng))
    }

    /// `count` words, about half of them common short ones.
    fn words(&self, count: usize, rng: &mut Rng) -> String {
        (0..count)
            .map(|_| {
                if rng.next().is_multiple_of(2) {
                    rng.pick(COMMON).to_string()
                } else {
                    self.words.pick(rng).to_string()
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn learning(&self, rng: &mut Rng) -> (String, String, Vec<String>) {
        let mut title = self.words(3 + rng.next() % 5, rng);
        if rng.next().is_multiple_of(3) {
            title = format!("{title} {}", self.idents.pick(rng));
        }
        let mut body = String::new();
        for _ in 0..3 + rng.next() % 4 {
            body.push_str(&self.words(8 + rng.next() % 9, rng));
            match rng.next() % 6 {
                0 => body.push_str(&format!(" `{}`", self.idents.pick(rng))),
                1 => body.push_str(&format!(" ({})", self.errors.pick(rng))),
                2 => body.push_str(&format!(" in {}", self.file(rng))),
                _ => {}
            }
            body.push_str(". ");
        }
        let paths = match rng.next() % 3 {
            0 => Vec::new(),
            1 => vec![format!("{}/**", self.dirs.pick(rng))],
            _ => vec![self.file(rng)],
        };
        (title, body, paths)
    }

    fn query(&self, i: usize, rng: &mut Rng) -> String {
        match i % 5 {
            0 => format!("{} {}", self.words.pick(rng), self.words.pick(rng)),
            1 => self.idents.pick(rng).to_string(),
            2 => self.errors.pick(rng).to_string(),
            3 => self.file(rng),
            _ => format!(
                "{} {} {}",
                self.words.pick(rng),
                self.idents.pick(rng),
                self.words.pick(rng)
            ),
        }
    }
}

/// Which store a run fills.
enum Store {
    Narrow,
    Varied(Box<Varied>),
}

impl Store {
    fn name(&self) -> &'static str {
        match self {
            Store::Narrow => "narrow",
            Store::Varied(_) => "varied",
        }
    }

    fn learning(&self, n: u32, rng: &mut Rng) -> Learning {
        let kind = LearningKind::ALL[rng.next() % 4];
        let (title, body, paths) = match self {
            Store::Narrow => narrow_learning(rng),
            Store::Varied(v) => v.learning(rng),
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

    fn query(&self, i: usize, rng: &mut Rng) -> String {
        match self {
            Store::Narrow => match i % 5 {
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
            },
            Store::Varied(v) => v.query(i, rng),
        }
    }

    /// The diff a briefing is for, and the query made of its item's title and summary.
    fn review(&self, rng: &mut Rng) -> (Vec<String>, String) {
        match self {
            Store::Narrow => (
                (0..50)
                    .map(|i| format!("{}/file{}.rs", DIRS[i % DIRS.len()], (i * 7) % 40))
                    .collect(),
                "retry backoff parse_config connection reset by peer".into(),
            ),
            Store::Varied(v) => (
                (0..50).map(|_| v.file(rng)).collect(),
                format!(
                    "{} {} {}",
                    v.words(6, rng),
                    v.idents.pick(rng),
                    v.words(14, rng)
                ),
            ),
        }
    }
}

/// The narrow store's title, body and paths (drawn exactly as before the varied store
/// was added, so its figures compare with the earlier ones).
fn narrow_learning(rng: &mut Rng) -> (String, String, Vec<String>) {
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
    (title, body, paths)
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

const KINDS: [&str; 5] = [
    "two words",
    "identifier",
    "error string",
    "path",
    "words and identifier",
];

fn bench(store: &Store, count: u32, rng: &mut Rng) {
    let name = store.name();
    let dir = tempfile::tempdir().expect("tempdir");
    let journal = Journal::new(dir.path().join("hallmark"));
    journal.init().expect("journal");
    let library = Library::new(&journal, Settings::default());
    let files = library.learnings_dir();
    std::fs::create_dir_all(&files).expect("dir");
    // Written straight to the files: the bench measures reading, not a million fsyncs.
    for n in 1..=count {
        let l = store.learning(n, rng);
        std::fs::write(library.file_of(l.meta.id), l.render()).expect("write");
    }
    let t = Instant::now();
    let search = Search::open(&library).expect("opens");
    let built = t.elapsed();
    let at = format!("{name} {count:>6}");

    let queries: Vec<String> = (0..50).map(|i| store.query(i, rng)).collect();
    let filter = SearchFilter::default();
    let mut hits = 0usize;
    let (p50, p99) = measure(500, |i| {
        let found = search
            .search(&queries[i % queries.len()], 10, &filter)
            .expect("searches");
        hits += found.hits.len();
    });
    println!(
        "{at}: tables built from the files in {:>8.1} ms; search p50 {:>6.3} ms  p99 {:>6.3} ms ({} hits per query)",
        ms(built),
        ms(p50),
        ms(p99),
        hits / 520
    );

    // The tail by kind of query: the p99 of each kind on its own.
    let per_kind: Vec<String> = KINDS
        .iter()
        .enumerate()
        .map(|(k, kind)| {
            let mine: Vec<&String> = queries.iter().skip(k).step_by(KINDS.len()).collect();
            let (_, p99) = measure(100, |i| {
                search
                    .search(mine[i % mine.len()], 10, &filter)
                    .expect("searches");
            });
            format!("{kind} {:.3}", ms(p99))
        })
        .collect();
    println!("{at}: search p99 by kind (ms): {}", per_kind.join(", "));

    // What the budget costs in quality: the first ten hits shared with a search that
    // ranks every match.
    let every = Search::open(&library)
        .expect("opens")
        .with_budget(usize::MAX);
    let (mut shared, mut total) = (0, 0);
    let mut exhaustive = Vec::new();
    for q in &queries {
        let ids = |s: &Search| -> Vec<LearningId> {
            let found = s.search(q, 10, &filter).expect("searches");
            found.hits.iter().map(|h| h.id).collect()
        };
        let (mine, all) = (ids(&search), ids(&every));
        total += all.len();
        shared += all.iter().filter(|id| mine.contains(id)).count();
        let t = Instant::now();
        every.search(q, 10, &filter).expect("searches");
        exhaustive.push(t.elapsed());
    }
    exhaustive.sort();
    println!(
        "{at}: first ten hits shared with ranking every match: {shared} of {total} ({:.1}%); ranking every match takes up to {:.3} ms",
        100.0 * shared as f64 / total.max(1) as f64,
        ms(exhaustive[exhaustive.len() - 1])
    );

    let (changed, query) = store.review(rng);
    let mut lines = 0;
    let (b50, b99) = measure(100, |_| {
        let b = library
            .briefing(&search, &changed, &query, 6000)
            .expect("briefs");
        lines = b.lines.len();
    });
    println!(
        "{at}: briefing for a 50-file diff (6k cap) p50 {:>6.3} ms  p99 {:>6.3} ms ({lines} lines)",
        ms(b50),
        ms(b99)
    );

    // The briefing's phases one by one, through the public calls that give the same
    // lines: scoped_cards and brief read and measure every scoped body, where the
    // briefing itself plans from stored lengths and reads only the bodies that fit, so
    // these two are upper bounds of its parts.
    let (_, scoped99) = measure(50, |_| {
        search.scoped_cards(&changed).expect("scoped");
    });
    let (_, search99) = measure(50, |_| {
        search.search(&query, 20, &filter).expect("searches");
    });
    let scoped = search.scoped_cards(&changed).expect("scoped");
    let ids: Vec<LearningId> = search
        .search(&query, 20, &filter)
        .expect("searches")
        .hits
        .iter()
        .map(|h| h.id)
        .collect();
    let (_, cards99) = measure(50, |_| {
        search.cards(&ids).expect("cards");
    });
    let found = search.cards(&ids).expect("cards");
    let (_, brief99) = measure(50, |_| {
        brief(&scoped, &changed, &query, &found, 6000);
    });
    println!(
        "{at}: briefing phases p99 (ms): scoped cards {:.3} ({} cards), search {:.3}, cards {:.3}, brief {:.3}",
        ms(scoped99),
        scoped.len(),
        ms(search99),
        ms(cards99),
        ms(brief99)
    );
    if std::env::var_os("HALL_BENCH_KEEP").is_some() {
        let kept = dir.keep();
        println!("kept {}", kept.display());
    }
}

fn main() {
    for count in [1_000, 10_000] {
        // The same seed as before the varied store was added, for the narrow store.
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        bench(&Store::Narrow, count, &mut rng);
    }
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let varied = Store::Varied(Box::new(Varied::new(&mut rng)));
    for count in [1_000, 10_000] {
        bench(&varied, count, &mut rng);
    }
}
