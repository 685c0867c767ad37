//! Search quality on a fixed store: 200 learnings about a plausible web service and 30
//! labelled queries (tests/fixtures/library, written by its generate.py). Recall@5 is
//! the share of a query's relevant learnings among its first five hits, averaged over
//! the queries.
//!
//! `cargo test -p hallmark-host --lib library::tests::quality -- --nocapture` prints both.

use std::path::PathBuf;

use super::*;

#[derive(serde::Deserialize)]
struct Record {
    id: LearningId,
    kind: LearningKind,
    title: String,
    paths: Vec<String>,
    body: String,
}

#[derive(serde::Deserialize)]
struct Labelled {
    query: String,
    relevant: Vec<LearningId>,
}

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/library")
}

/// A store holding the fixture's learnings, all accepted, under their own ids.
pub(super) fn fixture_store() -> Fixture {
    let f = fixture(&LearningKind::ALL);
    let text = std::fs::read_to_string(fixtures().join("learnings.jsonl")).expect("fixture");
    let s = stamp(T0);
    for line in text.lines() {
        let r: Record = serde_json::from_str(line).expect("a fixture line");
        let made = f
            .library
            .propose(
                Draft {
                    kind: r.kind,
                    title: r.title,
                    body: r.body,
                    paths: r.paths,
                    source: Source::default(),
                },
                &s,
            )
            .expect("proposes");
        assert_eq!(made.id(), r.id, "fixture ids are in order");
    }
    f
}

fn recall_at_5(search: &Search, queries: &[Labelled], engines: Engines) -> f64 {
    let mut total = 0.0;
    for q in queries {
        let hits = search
            .search_with(&q.query, 5, &SearchFilter::default(), engines)
            .expect("searches")
            .hits;
        let found = q
            .relevant
            .iter()
            .filter(|id| hits.iter().any(|h| h.id == **id))
            .count();
        let recall = found as f64 / q.relevant.len() as f64;
        if recall < 1.0 {
            let got: Vec<String> = hits.iter().map(|h| h.id.to_string()).collect();
            println!(
                "{engines:?} {:?}: {found}/{} in {got:?}",
                q.query,
                q.relevant.len()
            );
        }
        total += recall;
    }
    total / queries.len() as f64
}

#[test]
fn trigrams_fused_with_words_find_at_least_what_words_alone_find() {
    let f = fixture_store();
    let text = std::fs::read_to_string(fixtures().join("queries.json")).expect("queries");
    let queries: Vec<Labelled> = serde_json::from_str(&text).expect("queries parse");
    assert_eq!(queries.len(), 30);
    let search = Search::open(&f.library).expect("opens");
    let words = recall_at_5(&search, &queries, Engines::Words);
    let fused = recall_at_5(&search, &queries, Engines::WordsAndGrams);
    println!("recall@5: FTS5 words alone {words:.3}, words + trigram fused {fused:.3}");
    assert!(fused >= words, "fused {fused:.3} < words alone {words:.3}");
    assert!(
        fused >= FUSED_FLOOR,
        "fused recall@5 {fused:.3} fell below {FUSED_FLOOR}"
    );
}

/// Measured on the fixture when the search was written (see docs/performance.md), less a
/// little room for a tokenizer change in a newer SQLite.
const FUSED_FLOOR: f64 = 0.95;

#[test]
fn the_trigram_ranking_computed_here_is_fts5s_bm25() {
    let f = fixture_store();
    let text = std::fs::read_to_string(fixtures().join("queries.json")).expect("queries");
    let queries: Vec<Labelled> = serde_json::from_str(&text).expect("queries parse");
    let search = Search::open(&f.library).expect("opens");
    let mut asked = 0;
    let extra = ["arse_conf", "HttpClient", "src/", "Config", "retry", "_id"];
    for q in queries.iter().map(|q| q.query.as_str()).chain(extra) {
        let chunks = crate::library::search::grams_query(q);
        if chunks.is_empty() {
            continue;
        }
        asked += 1;
        let fts5 = search.grams_by_fts5(&chunks, 40).expect("fts5");
        let here = search.grams_ids(&chunks, 40).expect("here");
        assert_eq!(here, fts5, "{q:?}");
    }
    assert!(asked >= 15, "{asked}");
}
