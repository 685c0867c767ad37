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
