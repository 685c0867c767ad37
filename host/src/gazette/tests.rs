//! The page as a whole: a snapshot of a fixed journal, hostile strings, and what the
//! page may reference.

use super::*;
use crate::item::event::{EVENT_VERSION, Usage};
use crate::item::{Dispute, Event, EventKind, Finding, Lens, Severity, Sha, Source};

const A: &str = "1111111111111111111111111111111111111111";
const B: &str = "2222222222222222222222222222222222222222";
const C: &str = "3333333333333333333333333333333333333333";
/// A one-pixel PNG.
const PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x02, 0x00, 0x00, 0x00, 0x90, 0x77, 0x53,
    0xde, 0x00, 0x00, 0x00, 0x0c, 0x49, 0x44, 0x41, 0x54, 0x08, 0xd7, 0x63, 0xf8, 0xcf, 0xc0, 0x00,
    0x00, 0x03, 0x01, 0x01, 0x00, 0x18, 0xdd, 0x8d, 0xb0, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e,
    0x44, 0xae, 0x42, 0x60, 0x82,
];

fn at(minute: u32, actor: &str, kind: EventKind) -> Event {
    Event {
        v: EVENT_VERSION,
        t: format!("2026-11-02T09:{minute:02}:00Z"),
        actor: actor.to_string(),
        kind,
        item: Some(ItemId(7)),
        via: None,
    }
}

fn finding(id: &str, lens: Lens, severity: Severity, scenario: &str) -> Finding {
    Finding {
        id: id.to_string(),
        lens,
        severity,
        file: "src/retry.rs".to_string(),
        line: Some(12),
        scenario: scenario.to_string(),
    }
}

fn usage(role: &str, input: u64, output: u64, cost_usd: f64) -> EventKind {
    EventKind::Usage(Usage {
        model: "claude-sonnet".into(),
        role: role.into(),
        input,
        output,
        cost_usd,
        ..Usage::default()
    })
}

/// A journal that went the whole way: a failed check, a rejection, a fix, an approval,
/// the ship and the merge, with costs and two plates.
fn journal(title: &str, scenario: &str) -> Vec<Event> {
    let check = |minute, sha: &str, code| {
        at(
            minute,
            "assayer",
            EventKind::CheckRun {
                sha: Sha::new(sha),
                check: "cargo test".into(),
                exit_code: code,
                duration_ms: 900,
                cached: false,
                output: None,
                log: None,
            },
        )
    };
    vec![
        at(
            0,
            "you",
            EventKind::Created {
                title: title.into(),
                request: None,
                branch: "hall/H-0007-cap-retries".into(),
                base: "main".into(),
                worktree: None,
                source: Source::New,
                issue: None,
                pr: None,
            },
        ),
        at(1, "agent", usage("dev", 12_000, 3_400, 0.42)),
        at(
            2,
            "you",
            EventKind::Ready {
                sha: Sha::new(A),
                round: 1,
                note: None,
            },
        ),
        check(3, A, 1),
        at(
            3,
            "assayer",
            EventKind::ChecksFailed {
                sha: Sha::new(A),
                failed: vec!["cargo test".into()],
            },
        ),
        at(
            4,
            "fixer",
            EventKind::FixSubmitted {
                sha: Sha::new(B),
                fixed: vec![],
                disputed: vec![],
            },
        ),
        check(5, B, 0),
        at(5, "assayer", EventKind::ChecksPassed { sha: Sha::new(B) }),
        at(6, "assayer", usage("review", 30_000, 1_200, 0.9)),
        at(
            6,
            "assayer",
            EventKind::Verdict {
                sha: Sha::new(B),
                round: 2,
                approved: false,
                findings: vec![
                    finding("F1", Lens::Correctness, Severity::Major, scenario),
                    finding(
                        "F2",
                        Lens::Security,
                        Severity::Minor,
                        "The limit is read from the environment unchecked.",
                    ),
                ],
                model: None,
                summary: None,
                by: None,
                learnings: Vec::new(),
            },
        ),
        at(
            7,
            "fixer",
            EventKind::FixSubmitted {
                sha: Sha::new(C),
                fixed: vec!["F1".into()],
                disputed: vec![Dispute {
                    finding: "F2".into(),
                    reason: "The environment is the operator's.".into(),
                }],
            },
        ),
        check(8, C, 0),
        at(8, "assayer", EventKind::ChecksPassed { sha: Sha::new(C) }),
        at(
            9,
            "assayer",
            EventKind::Verdict {
                sha: Sha::new(C),
                round: 3,
                approved: true,
                findings: vec![],
                model: None,
                summary: None,
                by: None,
                learnings: Vec::new(),
            },
        ),
        at(
            9,
            "assayer",
            EventKind::Hallmarked {
                sha: Sha::new(C),
                round: 3,
                seal: None,
            },
        ),
        at(
            10,
            "agent",
            EventKind::Attached {
                file: Some("1-chart.png".into()),
                url: None,
                caption: Some("Retries before and after".into()),
                bytes: PNG.len() as u64,
                from: "chart.png".into(),
            },
        ),
        at(
            10,
            "agent",
            EventKind::Attached {
                file: None,
                url: Some("https://example.com/issue/7".into()),
                caption: Some("The report".into()),
                bytes: 0,
                from: "https://example.com/issue/7".into(),
            },
        ),
        at(
            11,
            "shipper",
            EventKind::Shipped {
                sha: Sha::new(C),
                pr: Some("https://github.com/acme/app/pull/12".into()),
            },
        ),
        at(
            30,
            "delivery",
            EventKind::Delivered {
                pr: "https://github.com/acme/app/pull/12".into(),
                merged: true,
            },
        ),
    ]
}

fn words() -> GazetteWords {
    GazetteWords {
        headline: "Retries now stop at three".into(),
        story: "Clients that hammered the API now back off.\n\nThe review caught an off-by-one before it shipped.".into(),
        findings: [("F1".to_string(), "The third retry was refused when it should have been allowed.".to_string())]
            .into_iter()
            .collect(),
        diagram: Some(Outline {
            nodes: vec![
                Node { id: "req".into(), label: "Request".into() },
                Node { id: "retry".into(), label: "Retry loop".into() },
                Node { id: "done".into(), label: "Response".into() },
            ],
            edges: vec![
                Edge { from: "req".into(), to: "retry".into(), label: Some("fails".into()) },
                Edge { from: "retry".into(), to: "done".into(), label: None },
                Edge { from: "retry".into(), to: "req".into(), label: Some("again".into()) },
            ],
        }),
    }
}

fn plates() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("1-chart.png"), PNG).unwrap();
    dir
}

fn page(events: &[Event], words: &Words) -> String {
    let dir = plates();
    render(ItemId(7), events, words, "stamp", dir.path())
}

#[test]
fn the_page_of_a_whole_loop() {
    let events = journal(
        "Cap retries at 3",
        "With 3 attempts allowed, the third is refused.",
    );
    let html = page(&events, &Words::Found(words()));
    insta::assert_snapshot!(html);
}

#[test]
fn without_words_the_headline_is_the_title_and_there_is_no_story() {
    let events = journal(
        "Cap retries at 3",
        "With 3 attempts allowed, the third is refused.",
    );
    let html = page(&events, &Words::Absent);
    assert!(html.contains("<h1>Cap retries at 3</h1>"), "{html}");
    assert!(html.contains("The librarian has not written this item's story yet."));
    // The finding falls back to the reviewer's own words.
    assert!(html.contains("With 3 attempts allowed, the third is refused."));
    assert!(!html.contains("<svg"));
    let invalid = page(&events, &Words::parse(b"{\"headline\": 3}"));
    assert!(invalid.contains("<h1>Cap retries at 3</h1>"));
    assert!(
        invalid
            .contains("The words file (gazette-words.json) was not used: it is not a words file"),
        "{invalid}"
    );
}

#[test]
fn every_fact_comes_from_the_journal() {
    let events = journal("Cap retries at 3", "s");
    let html = page(&events, &Words::Found(words()));
    for fact in [
        "<dt>Created</dt><dd>2026-11-02T09:00:00Z</dd>",
        "<dt>Hallmarked</dt><dd>2026-11-02T09:09:00Z</dd>",
        "<dt>Shipped</dt><dd>2026-11-02T09:11:00Z</dd>",
        "<dt>Merged</dt><dd>2026-11-02T09:30:00Z</dd>",
        &format!("<span class=\"sha\">{C}</span>"),
        "<dt>Pull request</dt><dd>https://github.com/acme/app/pull/12</dd>",
        "<dt>Rounds</dt><dd>3</dd>",
        // 12,000 + 3,400 + 30,000 + 1,200 tokens; $0.42 + $0.90.
        "<dt>Cost</dt><dd>$1.32 for 46,600 tokens</dd>",
        "dev: 12,000 in, 3,400 out, 0 cache; $0.42 over 1 run",
        "Round 1 at <span class=\"sha\">1111111</span>: <span class=\"fail\">checks failed</span> (<code>cargo test</code> <span class=\"fail\">failed</span>); no verdict; answered by fix <span class=\"sha\">2222222</span>.",
        "Round 2 at <span class=\"sha\">2222222</span>: <span class=\"pass\">checks passed</span> (<code>cargo test</code> <span class=\"pass\">passed</span>); changes requested, 2 findings; answered by fix <span class=\"sha\">3333333</span>.",
        "Round 3 at <span class=\"sha\">3333333</span>: <span class=\"pass\">checks passed</span> (<code>cargo test</code> <span class=\"pass\">passed</span>); approved, 0 findings.",
        "The third retry was refused when it should have been allowed.",
        "Fixed in <code>3333333</code>.",
        "Disputed by the fixer, and let go: The environment is the operator&#39;s.",
        "Security &amp; tenancy",
    ] {
        assert!(html.contains(fact), "missing {fact}\n{html}");
    }
}

/// Every `src`, `href` and `url(` on a page, and whether it could reach the network.
fn references(html: &str) -> Vec<String> {
    let mut out = Vec::new();
    for marker in ["src=\"", "href=\"", "url("] {
        let mut rest = html;
        while let Some(at) = rest.find(marker) {
            rest = &rest[at + marker.len()..];
            let end = rest.find(['"', ')']).unwrap_or(rest.len());
            out.push(format!("{marker}{}", &rest[..end.min(60)]));
        }
    }
    out
}

#[test]
fn the_page_runs_nothing_and_fetches_nothing() {
    let events = journal("Cap retries at 3", "s");
    let html = page(&events, &Words::Found(words()));
    assert!(!html.to_ascii_lowercase().contains("<script"));
    let refs = references(&html);
    assert!(!refs.is_empty(), "the page has its plates");
    for r in &refs {
        let ok = r.starts_with("src=\"data:image/")
            || r.starts_with("href=\"plates/")
            // A link a person clicks is not a request the page makes: only the
            // anchors of link plates may name the network.
            || (r.starts_with("href=\"https://") && html.contains(&format!("<a {r}\" rel=\"noreferrer noopener\">")));
        assert!(ok, "{r} could reach the network");
    }
    let link_plates = html.matches("<a href=\"http").count();
    assert_eq!(link_plates, 1, "the one link plate");
    // The policy forbids every fetch but the page's own style and data: images.
    let policy = page::policy();
    assert!(
        policy.starts_with("default-src 'none'; style-src 'sha256-"),
        "{policy}"
    );
    assert!(policy.contains("img-src data:;") && policy.contains("base-uri 'none'"));
    assert!(html.contains(&format!(
        "<meta http-equiv=\"Content-Security-Policy\" content=\"{policy}\">"
    )));
    assert_eq!(html.matches("<style>").count(), 1);
}

#[test]
fn hostile_strings_render_escaped_and_intact() {
    let long = "x".repeat(5000);
    let hostile = format!(
        "</style><script>alert(1)</script><img src=https://evil.example/p.png> \"quoted\" 'single' \u{0}\u{1b}[2J\u{202e}{long}"
    );
    let mut events = journal(&hostile, &hostile);
    events.push(at(
        40,
        "agent",
        EventKind::Attached {
            file: None,
            url: Some("javascript:alert(1)".into()),
            caption: Some(hostile.clone()),
            bytes: 0,
            from: String::new(),
        },
    ));
    events.push(at(
        41,
        "agent",
        EventKind::Attached {
            file: Some("../../../../etc/passwd".into()),
            url: None,
            caption: None,
            bytes: 1,
            from: String::new(),
        },
    ));
    events.push(at(
        42,
        "agent",
        usage(&hostile, u64::MAX, u64::MAX, f64::NAN),
    ));
    let mut w = words();
    w.headline = hostile.clone();
    w.story = hostile.clone();
    w.findings.insert("F1".into(), hostile.clone());
    if let Some(d) = &mut w.diagram {
        d.nodes[0].label = hostile.clone();
        d.edges[0].label = Some(hostile.clone());
    }
    let html = page(&events, &Words::Found(w));
    let lower = html.to_ascii_lowercase();
    assert!(!lower.contains("<script"), "no script survives");
    assert_eq!(
        lower.matches("</style>").count(),
        1,
        "only the page's own style ends"
    );
    // The hostile <img> is text: every image element on the page is a data: plate.
    assert_eq!(
        lower.matches("<img ").count(),
        lower.matches("<img src=\"data:image/").count()
    );
    assert!(html.contains("&lt;img src=https://evil.example/p.png&gt;"));
    assert!(!html.contains("href=\"javascript"));
    assert!(!html.contains("etc/passwd\""));
    assert!(!html.contains('\u{0}') && !html.contains('\u{1b}') && !html.contains('\u{202e}'));
    let escaped = escape::text(&hostile);
    // The headline, the title, the story, the finding and a caption each carry it whole.
    assert!(html.matches(&escaped).count() >= 5, "intact");
    assert!(html.contains("&lt;/style&gt;&lt;script&gt;alert(1)&lt;/script&gt;"));
    // Huge numbers are printed, not overflowed; a NaN cost is not trusted.
    assert!(html.contains(&page::grouped(u64::MAX)));
    assert!(html.contains("an unreadable amount"));
    // The long line wraps anywhere, so the layout survives it.
    assert!(html.contains("overflow-wrap:anywhere"));
    for r in references(&html) {
        assert!(
            r.starts_with("src=\"data:image/")
                || r.starts_with("href=\"https://example.com/")
                || r.starts_with("href=\"plates/"),
            "{r}"
        );
    }
}

#[test]
fn the_page_as_text_keeps_every_word_and_no_markup() {
    let events = journal(
        "Cap retries at 3",
        "With 3 attempts allowed, the third is refused.",
    );
    let text = escape::plain(&page(&events, &Words::Found(words())));
    insta::assert_snapshot!(text);
    assert!(!text.contains('<') && !text.contains("&amp;"), "{text}");
    assert!(!text.contains("font:"), "no style: {text}");
}

#[test]
fn a_hostile_string_reads_as_itself_in_the_text() {
    let hostile = "</style><script>alert(1)</script> & \u{1b}[2J";
    let mut w = words();
    w.headline = hostile.into();
    let text = escape::plain(&page(&journal(hostile, "ok"), &Words::Found(w)));
    // Shown as the characters it is, the escape as its control picture, and nothing of
    // it read as the page's own tags.
    assert!(
        text.contains("</style><script>alert(1)</script> & \u{241b}[2J"),
        "{text}"
    );
    assert!(!text.contains('\u{1b}'));
    assert!(text.contains("Title: </style><script>"), "{text}");
}

#[test]
fn a_page_is_printed_once_per_journal_position() {
    let dir = tempfile::tempdir().unwrap();
    let journal = Journal::new(dir.path().join("hallmark"));
    journal.init().unwrap();
    let (id, _) = journal
        .create_item(|id| {
            let mut e = self::journal("Cap retries at 3", "s").remove(0);
            e.item = Some(id);
            Ok::<_, JournalError>(vec![e])
        })
        .unwrap();
    let first = print(&journal, id).unwrap();
    assert!(first.printed);
    assert!(
        std::fs::read_to_string(&first.path)
            .unwrap()
            .contains("events=1 last-line=1 words=none")
    );
    assert!(!print(&journal, id).unwrap().printed, "nothing changed");
    // A new event, new words and an invalid words file each print it again.
    journal
        .append_item(id, &[at(5, "agent", usage("dev", 1, 1, 0.01))])
        .unwrap();
    let again = print(&journal, id).unwrap();
    assert!(
        again.printed && again.stamp.contains("events=2"),
        "{}",
        again.stamp
    );
    let words_path = journal.item_dir(id).join(words::WORDS_FILE);
    std::fs::write(&words_path, serde_json::to_vec(&words()).unwrap()).unwrap();
    let worded = print(&journal, id).unwrap();
    assert!(worded.printed && !worded.stamp.contains("words=none"));
    assert!(
        std::fs::read_to_string(&worded.path)
            .unwrap()
            .contains("<h1>Retries now stop at three</h1>")
    );
    std::fs::write(&words_path, "not json").unwrap();
    let broken = print(&journal, id).unwrap();
    assert!(broken.printed);
    assert!(
        std::fs::read_to_string(&broken.path)
            .unwrap()
            .contains("was not used")
    );
    // A page from another renderer is printed again.
    let path = page_path(&journal, id);
    let old =
        std::fs::read_to_string(&path)
            .unwrap()
            .replacen("renderer=", "renderer=0.0.0-old/", 1);
    std::fs::write(&path, old).unwrap();
    assert!(print(&journal, id).unwrap().printed);
    // Refreshing an item with no journal says so and does not fail.
    refresh(&journal, ItemId(99));
}

#[test]
fn the_same_journal_prints_the_same_bytes() {
    let events = journal("Cap retries at 3", "s");
    let w = Words::Found(words());
    assert_eq!(page(&events, &w), page(&events, &w));
}
