use super::*;

fn card(id: u32, title: &str, paths: &[&str], body: &str) -> Card {
    Card {
        id: LearningId(id),
        kind: LearningKind::Rule,
        title: title.into(),
        paths: paths.iter().map(|p| p.to_string()).collect(),
        body: body.into(),
    }
}

fn changed(paths: &[&str]) -> Vec<String> {
    paths.iter().map(|p| p.to_string()).collect()
}

#[test]
fn globs_speak_the_parts_language() {
    for (glob, path, hit) in [
        ("web/**", "web/src/a.ts", true),
        ("web/**", "web", true),
        ("web/**", "webby/a.ts", false),
        ("web/", "web/a.ts", true),
        ("src/config.rs", "src/config.rs", true),
        ("src", "src/deep/x.rs", true),
        ("src/*.rs", "src/a.rs", true),
        ("src/*.rs", "src/a/b.rs", false),
        ("**/*.rs", "a/b/c.rs", true),
        ("**/*.rs", "c.rs", true),
        ("src/**/mod.rs", "src/a/b/mod.rs", true),
        ("src/**/mod.rs", "src/mod.rs", true),
        ("src/?.rs", "src/a.rs", true),
        ("src/?.rs", "src/ab.rs", false),
        ("./src/**", "src/a.rs", true),
        ("src/**", "", false),
    ] {
        assert_eq!(glob_matches(glob, path), hit, "{glob} {path}");
    }
}

#[test]
fn scoped_learnings_come_first_most_specific_first_then_search_hits() {
    let wide = card(1, "Web rule", &["web/**"], "wide");
    let narrow = card(2, "Api rule", &["web/src/api/**"], "narrow");
    let exact = card(3, "Client rule", &["web/src/api/client.ts"], "exact");
    let elsewhere = card(4, "Db rule", &["src/db/**"], "db");
    let found = card(5, "Found", &[], "found by search");
    let b = brief(
        &[
            wide.clone(),
            narrow.clone(),
            exact.clone(),
            elsewhere.clone(),
        ],
        &changed(&["web/src/api/client.ts", "README.md"]),
        "parse_config",
        &[narrow.clone(), found.clone()],
        10_000,
    );
    let order: Vec<u32> = b.lines.iter().map(|l| l.id.0).collect();
    assert_eq!(order, [3, 2, 1, 5], "the db rule matches no changed path");
    assert_eq!(b.lines[0].scope.why(), "scoped to web/src/api/client.ts");
    assert_eq!(b.lines[2].scope.why(), "scoped to web/**");
    assert_eq!(b.lines[3].scope.why(), "matched \"parse_config\"");
    assert!(
        b.lines[3].text.contains("(matched \"parse_config\")"),
        "{}",
        b.lines[3].text
    );
    assert_eq!(b.tokens, b.lines.iter().map(|l| l.tokens).sum::<usize>());
    assert_eq!(b.text().lines().count(), 4);
}

#[test]
fn the_cap_is_never_exceeded_and_what_does_not_fit_is_named() {
    let long = card(1, "Long", &["web/**"], &"word ".repeat(400));
    let short = card(2, "Short", &["web/**"], "brief");
    let hit = card(3, "Hit", &[], "also brief");
    for cap in [0, 5, 20, 40, 100, 600, 10_000] {
        let b = brief(
            &[long.clone(), short.clone()],
            &changed(&["web/x"]),
            "q",
            std::slice::from_ref(&hit),
            cap,
        );
        assert!(b.tokens <= cap, "cap {cap}: {}", b.tokens);
        let total: usize = b.lines.iter().map(|l| estimate_tokens(&l.text)).sum();
        assert_eq!(total, b.tokens);
        assert_eq!(
            b.lines.len() + b.left_out.len(),
            3,
            "cap {cap}: every candidate is placed"
        );
    }
    let b = brief(&[long, short], &changed(&["web/x"]), "q", &[hit], 40);
    let kept: Vec<u32> = b.lines.iter().map(|l| l.id.0).collect();
    assert_eq!(
        kept,
        [2, 3],
        "the long one is skipped and the shorter ones still fit"
    );
    assert_eq!(b.left_out, [LearningId(1)]);
    assert_eq!(estimate_tokens("abcde"), 2);
}

#[test]
fn the_briefing_reads_the_store_through_the_search_tables() {
    let f = fixture(&[LearningKind::Rule, LearningKind::Map]);
    let s = stamp(T0);
    let web = f
        .library
        .propose(
            draft(LearningKind::Rule, "Web", "use tokens", &["web/**"]),
            &s,
        )
        .expect("web");
    let api = f
        .library
        .propose(
            draft(LearningKind::Map, "Api", "the client", &["web/src/api/"]),
            &s,
        )
        .expect("api");
    let config = f
        .library
        .propose(
            draft(
                LearningKind::Rule,
                "Config",
                "parse_config rejects unknown keys",
                &[],
            ),
            &s,
        )
        .expect("config");
    let retired = f
        .library
        .propose(draft(LearningKind::Rule, "Old web", "old", &["web/**"]), &s)
        .expect("old");
    f.library.retire(retired.id(), None, &s).expect("retires");
    let search = Search::open(&f.library).expect("opens");
    let b = f
        .library
        .briefing(
            &search,
            &changed(&["web/src/api/client.ts"]),
            "parse_config",
            6000,
        )
        .expect("briefs");
    let order: Vec<LearningId> = b.lines.iter().map(|l| l.id).collect();
    assert_eq!(order, [api.id(), web.id(), config.id()]);
    let none = f
        .library
        .briefing(&search, &changed(&["docs/x.md"]), "", 6000)
        .expect("briefs");
    assert!(none.lines.is_empty());
}

#[test]
fn a_summarys_length_is_counted_as_the_line_writes_it() {
    for body in [
        "",
        "   ",
        "one",
        "  two  words  ",
        "tabs\tand\nnew\r\nlines\n\n\nparagraphs",
        "no\u{a0}break and\u{2003}em space",
        "ünïcödé — dash…",
    ] {
        let line: String = body.split_whitespace().collect::<Vec<_>>().join(" ");
        assert_eq!(
            crate::library::briefing::summary_chars(body),
            line.chars().count(),
            "{body:?}"
        );
    }
}

#[test]
fn the_stores_briefing_reads_only_the_bodies_that_fit_and_says_what_brief_says() {
    let f = fixture(&LearningKind::ALL);
    let s = stamp(T0);
    let dirs = ["web/src/api", "web/src", "src/db", "src", "docs"];
    for n in 0..60 {
        let dir = dirs[n % dirs.len()];
        let paths: Vec<String> = match n % 4 {
            0 => vec![format!("{dir}/**")],
            1 => vec![format!("{dir}/x{}.rs", n % 3)],
            2 => vec![format!("{dir}/*.rs"), "**/*.md".into()],
            _ => Vec::new(),
        };
        let body = format!(
            "About retry {n}.\n\n  Then\tmore  words: `pool_size` {}\n",
            "x ".repeat(n)
        );
        let d = Draft {
            kind: LearningKind::ALL[n % 4],
            title: format!("Learning {n} on retry"),
            body,
            paths,
            source: Source::default(),
        };
        f.library.propose(d, &s).expect("proposes");
    }
    f.library.retire(LearningId(1), None, &s).expect("retires");
    let search = Search::open(&f.library).expect("opens");
    let changed = changed(&[
        "web/src/api/x0.rs",
        "src/db/x1.rs",
        "README.md",
        "docs/guide.md",
    ]);
    let query = "retry pool_size";
    let hits = search
        .search(query, 20, &SearchFilter::default())
        .expect("searches")
        .hits;
    let found = search
        .cards(&hits.iter().map(|h| h.id).collect::<Vec<_>>())
        .expect("cards");
    let scoped = search.scoped_cards(&changed).expect("scoped");
    for cap in [0, 50, 300, 1_000, 100_000] {
        let got = f
            .library
            .briefing(&search, &changed, query, cap)
            .expect("briefs");
        assert_eq!(
            got,
            brief(&scoped, &changed, query, &found, cap),
            "cap {cap}"
        );
        assert!(got.lines.iter().all(|l| l.id != LearningId(1)), "retired");
        if cap == 1_000 {
            assert!(!got.lines.is_empty() && !got.left_out.is_empty());
        }
    }
}

#[test]
fn a_glob_is_tried_against_the_paths_under_its_prefix_and_matches_as_it_would_against_all() {
    let globs = [
        "web/**",
        "web",
        "web/",
        "./web/src/**",
        "web/src//",
        "web//x",
        "/**",
        "**",
        "**/*.rs",
        "src/*.rs",
        "src/**/mod.rs",
        "src/a.rs",
        "src/a.rs/",
        "./src",
        "src/?.rs",
        "a//b",
        "/abs",
        "./",
        "src/**",
        "*",
        "docs/**",
        "src/*.ts",
        "web/src/b.ts",
        "*.md",
        "web/src",
        "src/a",
        "/web/**",
    ];
    let paths = changed(&[
        "web/src/a.ts",
        "web",
        "webby/a.ts",
        "web//x",
        "src/a.rs",
        "src/a/b/mod.rs",
        "src/mod.rs",
        "./src/b.rs",
        "a//b/c",
        "/abs/x",
        "top.rs",
        "src/a.rs/deeper",
    ]);
    let cards: Vec<Card> = globs
        .iter()
        .enumerate()
        .map(|(n, g)| card(n as u32 + 1, "T", &[g], "b"))
        .collect();
    let b = brief(&cards, &paths, "", &[], 1_000_000);
    let mut placed: Vec<u32> = b.lines.iter().map(|l| l.id.0).collect();
    placed.sort();
    let want: Vec<u32> = globs
        .iter()
        .enumerate()
        .filter(|(_, g)| paths.iter().any(|p| glob_matches(g, p)))
        .map(|(n, _)| n as u32 + 1)
        .collect();
    assert_eq!(placed, want);
    assert!(want.len() > 10 && want.len() < globs.len(), "{want:?}");
}
