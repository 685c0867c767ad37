use super::*;
use crate::library::search::{grams_fts, grams_query, seams, words_query};

fn accepted(f: &Fixture, title: &str, body: &str, paths: &[&str]) -> LearningId {
    let s = stamp(T0);
    let l = f
        .library
        .propose(draft(LearningKind::Rule, title, body, paths), &s)
        .expect("proposes");
    f.library.accept(l.id(), &s).expect("accepts");
    l.id()
}

fn ids(search: &Search, query: &str, filter: &SearchFilter) -> Vec<LearningId> {
    search
        .search(query, 10, filter)
        .expect("searches")
        .hits
        .iter()
        .map(|h| h.id)
        .collect()
}

#[test]
fn words_rank_titles_over_bodies_and_trigrams_find_substrings() {
    let f = fixture(&[]);
    let body = accepted(&f, "Pool sizes", "Mentions retries once in passing.", &[]);
    let title = accepted(&f, "Retries are capped", "At most six attempts.", &[]);
    let ident = accepted(
        &f,
        "Config",
        "`parse_config` rejects unknown keys.",
        &["src/config/**"],
    );
    let search = Search::open(&f.library).expect("opens");
    let found = search
        .search("retries", 10, &SearchFilter::default())
        .expect("searches");
    assert_eq!(
        found.hits.iter().map(|h| h.id).collect::<Vec<_>>(),
        [title, body]
    );
    let sub = search
        .search("arse_conf", 10, &SearchFilter::default())
        .expect("searches");
    assert_eq!(sub.hits.len(), 1);
    assert_eq!(sub.hits[0].id, ident);
    assert_eq!(sub.hits[0].matched, ["trigram"], "only a substring matches");
    let both = search
        .search("parse_config", 10, &SearchFilter::default())
        .expect("searches");
    assert_eq!(both.hits[0].id, ident);
    assert_eq!(both.hits[0].matched, ["words", "trigram"]);
    assert!(both.hits[0].score > 0.0);
}

#[test]
fn fts5_syntax_in_a_query_never_errors() {
    let f = fixture(&[]);
    let id = accepted(&f, "Quotes", "He said \"NEAR\" (twice): a-b * c:d", &[]);
    let search = Search::open(&f.library).expect("opens");
    for q in [
        "\"",
        "\"\"",
        "'",
        "*",
        "-",
        "-x",
        ":",
        "a:b",
        "(",
        ")",
        "((a",
        "NEAR",
        "NEAR(a b)",
        "a NEAR/2 b",
        "AND",
        "OR",
        "NOT",
        "a OR",
        "title:x",
        "^x",
        "x*",
        "{a b}",
        "+",
        "\\",
        "ab\"cd",
        "col:\"x\"",
        "–",
        "🦀",
        "  ",
    ] {
        let r = search.search(q, 5, &SearchFilter::default());
        assert!(r.is_ok(), "{q:?}: {:?}", r.err());
    }
    assert_eq!(
        ids(&search, "\"NEAR\" (twice)", &SearchFilter::default()),
        [id]
    );
    let q = words_query("a\"b (NEAR) c");
    assert!(
        q.phrases
            .iter()
            .chain(&q.chunks)
            .flatten()
            .all(|w| !w.is_empty() && w.chars().all(char::is_alphanumeric)),
        "{q:?}"
    );
    assert_eq!(grams_fts(&grams_query("say \"hi\" now")), "\"\"\"hi\"\"\"");
}

#[test]
fn proposed_and_retired_learnings_are_left_out_unless_all() {
    let f = fixture(&[]);
    let s = stamp(T0);
    let live = accepted(&f, "Timeouts live", "timeouts", &[]);
    let retired = accepted(&f, "Timeouts retired", "timeouts", &[]);
    f.library.retire(retired, None, &s).expect("retires");
    let proposed = f
        .library
        .propose(
            draft(LearningKind::Rule, "Timeouts proposed", "timeouts", &[]),
            &s,
        )
        .expect("proposes")
        .id();
    let search = Search::open(&f.library).expect("opens");
    assert_eq!(ids(&search, "timeouts", &SearchFilter::default()), [live]);
    let mut all = ids(
        &search,
        "timeouts",
        &SearchFilter {
            all: true,
            kinds: Vec::new(),
        },
    );
    all.sort();
    assert_eq!(all, [live, retired, proposed]);
    let maps_only = SearchFilter {
        all: true,
        kinds: vec![LearningKind::Map],
    };
    assert!(ids(&search, "timeouts", &maps_only).is_empty());
}

#[test]
fn the_tables_follow_the_files() {
    let f = fixture(&[]);
    let s = stamp(T0);
    let id = accepted(&f, "Old words", "alpha", &[]);
    let search = Search::open(&f.library).expect("opens");
    assert_eq!(ids(&search, "alpha", &SearchFilter::default()), [id]);
    // A pending update leaves the accepted text searchable, not the proposal.
    f.library
        .propose_update(id, draft(LearningKind::Rule, "New words", "beta", &[]), &s)
        .expect("updates");
    assert_eq!(ids(&search, "alpha", &SearchFilter::default()), [id]);
    assert!(ids(&search, "beta", &SearchFilter::default()).is_empty());
    f.library.accept(id, &s).expect("accepts");
    assert!(ids(&search, "alpha", &SearchFilter::default()).is_empty());
    assert_eq!(ids(&search, "beta", &SearchFilter::default()), [id]);
    // A hand edit saved by rename (as editors do) is picked up too.
    let path = f.library.file_of(id);
    let text = std::fs::read_to_string(&path)
        .expect("read")
        .replace("beta", "gamma");
    crate::journal::file::write_atomic(&path, text.as_bytes()).expect("write");
    assert_eq!(ids(&search, "gamma", &SearchFilter::default()), [id]);
    // A file broken by hand is reported, and the rest still found.
    let other = accepted(&f, "Other", "gamma too", &[]);
    std::fs::write(&path, "broken").expect("write");
    let found = search
        .search("gamma", 5, &SearchFilter::default())
        .expect("searches");
    assert_eq!(found.hits.iter().map(|h| h.id).collect::<Vec<_>>(), [other]);
    assert_eq!(found.problems.len(), 1);
    assert!(
        found.problems[0].file.ends_with("L-0001.md"),
        "{:?}",
        found.problems
    );
    // The database is derived: deleting it loses nothing.
    drop(search);
    std::fs::remove_file(f.library.search_file()).expect("remove");
    let again = Search::open(&f.library).expect("reopens");
    assert_eq!(ids(&again, "gamma", &SearchFilter::default()), [other]);
}

#[test]
fn a_damaged_database_is_rebuilt() {
    let f = fixture(&[]);
    let id = accepted(&f, "Kept", "delta", &[]);
    std::fs::write(
        f.library.search_file(),
        b"this is not sqlite at all, just bytes",
    )
    .expect("write");
    let search = Search::open(&f.library).expect("opens");
    assert_eq!(ids(&search, "delta", &SearchFilter::default()), [id]);
}

#[test]
fn the_qmd_backend_needs_qmd_on_path() {
    let dir = tempfile::tempdir().expect("tempdir");
    let journal = Journal::new(dir.path().join("hallmark"));
    let qmd = Library::new(
        &journal,
        Settings {
            auto_accept: Vec::new(),
            search: SearchBackend::Qmd,
        },
    );
    let empty = dir.path().join("empty");
    std::fs::create_dir_all(&empty).expect("dir");
    let err = qmd.check_backend(Some(empty.as_os_str())).unwrap_err();
    assert!(matches!(err, LibraryError::QmdMissing));
    let hall_err: crate::error::HallError = err.into();
    assert_eq!(hall_err.code, crate::error::Code::SearchUnavailable);
    assert!(
        hall_err
            .next
            .iter()
            .any(|n| n.contains("search = \"builtin\"")),
        "{:?}",
        hall_err.next
    );
    assert!(qmd.check_backend(None).is_err());
    let bin = dir.path().join("bin");
    std::fs::create_dir_all(&bin).expect("dir");
    let exe = bin.join("qmd");
    std::fs::write(&exe, "#!/bin/sh\n").expect("write");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert!(
            qmd.check_backend(Some(bin.as_os_str())).is_err(),
            "not executable yet"
        );
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    let path = std::env::join_paths([empty, bin]).expect("join");
    assert!(qmd.check_backend(Some(&path)).is_ok());
    assert_eq!(qmd_on(Some(&path)), Some(exe));
    let builtin = Library::new(&journal, Settings::default());
    assert!(builtin.check_backend(None).is_ok());
}

#[test]
fn a_query_past_the_budget_ranks_the_learnings_with_every_word_first() {
    let f = fixture(&[]);
    let both = [
        accepted(&f, "Pool timeout", "The pool waits for a timeout.", &[]),
        accepted(&f, "Waiting", "A timeout on the pool is logged.", &[]),
    ];
    let mut pool_only = Vec::new();
    for n in 0..10 {
        let title = format!("Pool note {n}");
        pool_only.push(accepted(&f, &title, "The pool is sized by hand.", &[]));
    }
    // Fewer than half the learnings hold "pool", so it keeps its weight.
    for n in 0..14 {
        accepted(&f, &format!("Other {n}"), "Nothing in common.", &[]);
    }
    let every = Search::open(&f.library).expect("opens");
    let narrowed = Search::open(&f.library).expect("opens").with_budget(4);
    let filter = SearchFilter::default();
    // Twelve learnings match, four are ranked: the two with both words come first all
    // the same, then the newest of the rest.
    let found = ids(&narrowed, "pool timeout", &filter);
    let mut first: Vec<LearningId> = found[..2].to_vec();
    first.sort();
    assert_eq!(first, both);
    assert_eq!(found.len(), 6, "{found:?}");
    assert!(found[2..].iter().all(|id| pool_only[6..].contains(id)));
    // Within the budget nothing changes.
    let all = ids(&every, "pool timeout", &filter);
    assert_eq!(all.len(), 10);
    let mut first: Vec<LearningId> = all[..2].to_vec();
    first.sort();
    assert_eq!(first, both);
    // One word in more learnings than the budget: the words table ranks its newest
    // matches (the trigram table lists more of them, newest first).
    let pool: Vec<LearningId> = narrowed
        .search_with("pool", 10, &filter, Engines::Words)
        .expect("searches")
        .hits
        .iter()
        .map(|h| h.id)
        .collect();
    assert_eq!(pool.len(), 4);
    assert!(
        pool.iter().all(|id| pool_only[6..].contains(id)),
        "{pool:?}"
    );
}

#[test]
fn a_substring_past_the_budget_lists_its_newest_learnings() {
    let f = fixture(&[]);
    let made: Vec<LearningId> = (0..6)
        .map(|n| {
            let body = format!("`reparse_config{n}` reads the file again.");
            accepted(&f, &format!("Note {n}"), &body, &[])
        })
        .collect();
    let narrowed = Search::open(&f.library).expect("opens").with_budget(3);
    let found = narrowed
        .search("arse_conf", 10, &SearchFilter::default())
        .expect("searches");
    let newest_first: Vec<LearningId> = made.iter().rev().copied().collect();
    assert_eq!(
        found.hits.iter().map(|h| h.id).collect::<Vec<_>>(),
        newest_first
    );
    assert!(found.hits.iter().all(|h| h.matched == ["trigram"]));
}

#[test]
fn words_query_asks_for_the_whole_text_each_identifier_and_each_word() {
    let q = words_query("Retry  parse_config!");
    assert_eq!(
        q.any(),
        "\"retry parse config\" OR \"retry\" OR \"parse config\" OR \"parse\" OR \"config\""
    );
    assert_eq!(q.every().as_deref(), Some("\"retry\" AND \"parse config\""));
    assert_eq!(words_query("retry").every(), None);
    assert_eq!(
        words_query("parse_config").every().as_deref(),
        Some("\"parse config\"")
    );
    assert_eq!(words_query("").any(), "");
    let long = words_query(&"word ".repeat(100));
    assert_eq!(long.chunks, [["word"]], "each word once");
    let many: String = (0..100).map(|n| format!("w{n} ")).collect();
    assert_eq!(words_query(&many).chunks.len(), 32, "a long text is cut");
    let twelve: String = (0..12).map(|n| format!("w{n} ")).collect();
    assert_eq!(words_query(&twelve).phrases[0].len(), 12, "the whole text");
    assert_eq!(
        words_query(&many).phrases[0],
        ["w0"],
        "no phrase of a long text"
    );
}

#[test]
fn a_word_in_half_the_learnings_or_more_is_left_out_unless_nothing_else_is_left() {
    let f = fixture(&[]);
    let timeout = accepted(&f, "Timeouts", "The note is about the timeout.", &[]);
    let mut notes = vec![timeout];
    for n in 0..5 {
        notes.push(accepted(&f, &format!("Note {n}"), "A note. The end.", &[]));
    }
    let search = Search::open(&f.library).expect("opens");
    let words = |q: &str| -> Vec<LearningId> {
        search
            .search_with(q, 10, &SearchFilter::default(), Engines::Words)
            .expect("searches")
            .hits
            .iter()
            .map(|h| h.id)
            .collect()
    };
    // bm25 gives "note" no weight here: it only ever ordered the tail.
    assert_eq!(words("note timeout"), [timeout]);
    let mut all = words("note");
    all.sort();
    assert_eq!(all, notes);
    // A phrase stays, however common its words.
    assert_eq!(words("the note"), [timeout]);
}

#[test]
fn a_chunks_seams_are_where_its_words_meet() {
    assert_eq!(seams("Ditu::quilinhan"), Some(vec!["tu::qu".to_string()]));
    assert_eq!(
        seams("src/jobs/queue.rs"),
        Some(vec!["rc/jo".into(), "bs/qu".into(), "ue.rs".into()])
    );
    // Nothing to gain: no seam, a short chunk, a chunk beyond ASCII.
    assert_eq!(seams("formatCents"), None);
    assert_eq!(seams("a_b"), None);
    assert_eq!(seams("données::clé"), None);
}

#[test]
fn a_learning_holding_the_seams_but_not_the_chunk_is_not_a_match() {
    let f = fixture(&[]);
    let whole = accepted(&f, "Retry", "`HttpClient::retry` backs off.", &[]);
    // `nt::re` and every trigram of the chunk, but never the chunk itself.
    accepted(
        &f,
        "Apart",
        "Client::reset, then HttpClient and retry.",
        &[],
    );
    let search = Search::open(&f.library).expect("opens");
    let found = search
        .search_with(
            "HttpClient::retry",
            10,
            &SearchFilter::default(),
            Engines::WordsAndGrams,
        )
        .expect("searches");
    let trigram: Vec<LearningId> = found
        .hits
        .iter()
        .filter(|h| h.matched.contains(&"trigram"))
        .map(|h| h.id)
        .collect();
    assert_eq!(trigram, [whole]);
}
