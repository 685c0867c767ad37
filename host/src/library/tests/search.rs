use super::*;
use crate::library::search::{grams_query, words_query};

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
    assert!(
        words_query("a\"b")
            .split(" OR ")
            .all(|t| t.starts_with('"') && t.ends_with('"'))
    );
    assert_eq!(
        grams_query("say \"hi\" now"),
        "\"say \"\"hi\"\" now\" OR \"\"\"hi\"\"\""
    );
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
