//! The app without a terminal: keys against its state. (Every view's snapshot, drawn
//! from a fixed journal, is in tests/tests/app.rs.)

use super::data::{BoardRow, Data};
use super::keymap::{self, Key};
use super::render;
use super::state::{App, Effect, Prompt, View};
use crate::hall::inbox::Entry;
use crate::item::{ItemId, State};

fn row(id: u32, title: &str, state: State, hold: Option<&str>, round: u32) -> BoardRow {
    BoardRow::from_index(&crate::index::ItemRow {
        id: ItemId(id),
        title: title.into(),
        state,
        station: String::new(),
        branch: format!("hm/H-{id:04}"),
        base: "main".into(),
        worktree: None,
        hold: hold.map(str::to_string),
        round,
        sha: None,
        pr: None,
        created: "2026-12-05T09:00:00Z".into(),
        updated: "2026-12-05T09:00:00Z".into(),
        since: "2026-12-05T09:00:00Z".into(),
    })
}

fn entry(kind: &str, item: u32, text: &str, key: &str, next: &str) -> Entry {
    Entry {
        n: 0,
        kind: kind.into(),
        item: Some(ItemId(item)),
        text: text.into(),
        since: "2026-12-05T10:00:00Z".into(),
        key: key.into(),
        dismissed: false,
        next: vec![next.into()],
    }
}

/// A fixed repository: items in each place, a question, a hold and an escalation.
fn data() -> Data {
    let mut items = vec![
        row(1, "Cap retries at 3", State::Development, None, 0),
        row(2, "Round invoices half-even", State::Checks, None, 1),
        row(3, "Faster status line", State::Review, None, 2),
        row(4, "Retry budget per item", State::Fixing, None, 2),
        row(5, "Nightly export", State::Escalated, None, 3),
        row(6, "Shorter hook path", State::Hallmarked, None, 1),
        row(
            7,
            "Merge train depth",
            State::Development,
            Some("checks"),
            1,
        ),
        row(8, "Desktop notifications", State::AwaitingYou, None, 0),
        row(9, "Cache room artifacts", State::Closed, None, 3),
    ];
    items.sort_by_key(|r| {
        (
            super::data::PLACES.iter().position(|p| *p == r.place),
            r.id.clone(),
        )
    });
    Data {
        repo: "shop".into(),
        items,
        entries: vec![
            entry(
                "question",
                1,
                "Q-1: billed or raw? [billed, raw]",
                "question:Q-1",
                "hall answer Q-1 \"…\"",
            ),
            entry(
                "escalated",
                5,
                "H-0005 \"Nightly export\" was rejected too often; you decide",
                "escalated:H-0005",
                "hall log H-0005 --kind verdict",
            ),
            entry(
                "checks",
                7,
                "H-0007 \"Merge train depth\" is held (checks): 3 failed check runs in a row",
                "hold:checks:H-0007",
                "hall retry H-0007 --reason \"…\"",
            ),
        ],
        questions: vec![("Q-1".into(), vec!["billed".into(), "raw".into()])],
        text: Vec::new(),
        text_error: None,
    }
}

fn with_text(mut d: Data, text: &str) -> Data {
    d.text = text.lines().map(str::to_string).collect();
    d
}

#[test]
fn the_board_opens_an_item_and_walks_its_tabs() {
    let d = data();
    let mut app = App::default();
    // Your Office's items come first: H-0005, H-0007, H-0008.
    assert_eq!(app.selected_item(&d).as_deref(), Some("H-0005"));
    assert_eq!(app.on_key(Key::Down, &d), Effect::None);
    assert_eq!(app.on_key(Key::Char('j'), &d), Effect::None);
    assert_eq!(app.selected_item(&d).as_deref(), Some("H-0008"));
    assert_eq!(app.on_key(Key::Enter, &d), Effect::Load);
    assert_eq!(
        app.view,
        View::Item {
            id: "H-0008".into(),
            tab: 0
        }
    );
    assert_eq!(
        app.view.command(),
        Some(vec!["status".into(), "H-0008".into()])
    );
    app.on_key(Key::Right, &d);
    assert_eq!(
        app.view.command(),
        Some(vec![
            "log".into(),
            "H-0008".into(),
            "--limit".into(),
            "500".into()
        ])
    );
    app.on_key(Key::Char('h'), &d);
    app.on_key(Key::Char('h'), &d);
    assert_eq!(
        app.view.command(),
        Some(vec!["trace".into(), "H-0008".into(), "--list".into()])
    );
    // r runs `hall ready`, as the status bar says.
    assert!(app.hint(&d).contains("r: hall ready H-0008"));
    assert_eq!(
        app.on_key(Key::Char('r'), &d),
        Effect::Run(vec!["ready".into(), "H-0008".into()])
    );
    // The trace from the board: the selected item's.
    app.on_key(Key::Esc, &d);
    assert_eq!(app.on_key(Key::Char('t'), &d), Effect::Load);
    assert_eq!(
        app.view,
        View::Trace {
            id: "H-0008".into()
        }
    );
    // Back to the board, and q there quits.
    assert_eq!(app.on_key(Key::Esc, &d), Effect::Load);
    assert_eq!(app.view, View::Board);
    assert_eq!(app.on_key(Key::Char('q'), &d), Effect::Quit);
}

#[test]
fn the_inbox_answers_by_option_number_dismisses_and_clears_after_a_yes() {
    let d = data();
    let mut app = App::default();
    assert_eq!(app.on_key(Key::Char('2'), &d), Effect::Load);
    assert_eq!(app.view, View::Inbox);
    assert!(app.hint(&d).starts_with("hall answer Q-1"));
    app.on_key(Key::Char('a'), &d);
    assert!(matches!(&app.prompt, Some(Prompt::Answer { qid, .. }) if qid == "Q-1"));
    app.on_key(Key::Char('2'), &d);
    assert_eq!(
        app.on_key(Key::Enter, &d),
        Effect::Run(vec!["answer".into(), "Q-1".into(), "raw".into()])
    );
    // Free text goes as it is.
    app.on_key(Key::Enter, &d);
    for c in "billed, net".chars() {
        app.on_key(Key::Char(c), &d);
    }
    assert_eq!(
        app.on_key(Key::Enter, &d),
        Effect::Run(vec!["answer".into(), "Q-1".into(), "billed, net".into()])
    );
    // Not a question: it says what answers it instead.
    app.on_key(Key::Down, &d);
    assert_eq!(app.on_key(Key::Char('a'), &d), Effect::None);
    assert!(
        app.message.contains("hall log H-0005 --kind verdict"),
        "{}",
        app.message
    );
    assert_eq!(
        app.on_key(Key::Char('d'), &d),
        Effect::Run(vec!["inbox".into(), "2".into(), "--dismiss".into()])
    );
    // A filter keeps `hall inbox`'s own numbers.
    app.on_key(Key::Char('/'), &d);
    for c in "held".chars() {
        app.on_key(Key::Char(c), &d);
    }
    app.on_key(Key::Enter, &d);
    assert_eq!(d.inbox(&app.filter).len(), 1);
    assert_eq!(
        app.on_key(Key::Char('d'), &d),
        Effect::Run(vec!["inbox".into(), "3".into(), "--dismiss".into()])
    );
    // Clearing asks first; anything but y is a no.
    app.on_key(Key::Esc, &d);
    app.on_key(Key::Char('c'), &d);
    assert!(matches!(app.prompt, Some(Prompt::Confirm { .. })));
    assert_eq!(app.on_key(Key::Char('n'), &d), Effect::None);
    assert_eq!(app.message, "Not done.");
    app.on_key(Key::Char('c'), &d);
    assert_eq!(
        app.on_key(Key::Char('y'), &d),
        Effect::Run(vec!["inbox".into(), "--clear".into()])
    );
}

#[test]
fn drop_asks_why_then_to_confirm_and_commands_that_wait_are_refused() {
    let d = data();
    let mut app = App {
        view: View::Item {
            id: "H-0001".into(),
            tab: 0,
        },
        ..App::default()
    };
    app.on_key(Key::Char('x'), &d);
    assert_eq!(
        app.on_key(Key::Enter, &d),
        Effect::None,
        "no reason, nothing"
    );
    assert!(app.message.contains("needs a reason"));
    app.on_key(Key::Char('x'), &d);
    for c in "superseded".chars() {
        app.on_key(Key::Char(c), &d);
    }
    assert_eq!(app.on_key(Key::Enter, &d), Effect::None);
    assert!(matches!(app.prompt, Some(Prompt::Confirm { .. })));
    assert_eq!(
        app.on_key(Key::Char('y'), &d),
        Effect::Run(vec![
            "drop".into(),
            "H-0001".into(),
            "--reason".into(),
            "superseded".into()
        ])
    );
    // `:` runs a command into a view of its own; one that waits is refused.
    app.on_key(Key::Char(':'), &d);
    for c in "watch H-0001".chars() {
        app.on_key(Key::Char(c), &d);
    }
    assert_eq!(app.on_key(Key::Enter, &d), Effect::None);
    assert!(
        app.message.contains("runs until stopped"),
        "{}",
        app.message
    );
    app.on_key(Key::Char(':'), &d);
    for c in "log H-0001 --kind \"verdict\"".chars() {
        app.on_key(Key::Char(c), &d);
    }
    assert_eq!(app.on_key(Key::Enter, &d), Effect::Load);
    assert_eq!(
        app.view.command(),
        Some(vec![
            "log".into(),
            "H-0001".into(),
            "--kind".into(),
            "verdict".into()
        ])
    );
    // ? shows the help; arrows scroll it, any other key closes it.
    app.on_key(Key::Char('?'), &d);
    assert!(app.help);
    app.on_key(Key::Down, &d);
    app.on_key(Key::Down, &d);
    assert_eq!(app.help_scroll, 2);
    assert!(
        render::to_text(&mut app, &d, 80, 24)
            .join("\n")
            .contains("│:  ")
    );
    app.on_key(Key::Char('z'), &d);
    assert!(!app.help);
    assert_eq!(app.help_scroll, 0);
}

#[test]
fn o_opens_the_full_log_of_the_failing_check_the_findings_name() {
    let d = with_text(
        data(),
        "H-0004 is fixing: 0 open findings, 2 failing checks.\n\n`cargo test` exited 101:\nfailed\n\n`cargo clippy` exited 1:\nwarned\nnext: hall run --show /j/items/H-0004/checks/1.log --grep <text>\nnext: hall run --show /j/items/H-0004/checks/2.log --grep <text>",
    );
    let mut app = App {
        view: View::Item {
            id: "H-0004".into(),
            tab: 2,
        },
        ..App::default()
    };
    assert_eq!(app.on_key(Key::Char('o'), &d), Effect::Load);
    assert_eq!(
        app.view.command(),
        Some(vec![
            "run".into(),
            "--show".into(),
            "/j/items/H-0004/checks/1.log".into()
        ])
    );
    // Lower down, the next log.
    app.on_key(Key::Esc, &d);
    app.cursor = 8;
    app.on_key(Key::Char('o'), &d);
    assert_eq!(
        app.view.command(),
        Some(vec![
            "run".into(),
            "--show".into(),
            "/j/items/H-0004/checks/2.log".into()
        ])
    );
    // Nothing to open: said, nothing done.
    let mut app = App {
        view: View::Item {
            id: "H-0001".into(),
            tab: 0,
        },
        ..App::default()
    };
    assert_eq!(app.on_key(Key::Char('o'), &data()), Effect::None);
    assert!(app.message.contains("No failing check's log"));
}

#[test]
fn a_long_board_draws_only_what_fits_and_keeps_the_cursor_on_screen() {
    let mut d = data();
    d.items = (1..=10_000)
        .map(|i| row(i, &format!("Item {i}"), State::Development, None, 0))
        .collect();
    let mut app = App::default();
    app.on_key(Key::Char('G'), &d);
    assert_eq!(app.selected_item(&d).as_deref(), Some("H-10000"));
    let screen = render::to_text(&mut app, &d, 80, 24).join("\n");
    assert!(screen.contains("H-10000"), "{screen}");
    assert!(!screen.contains("H-0001 "), "{screen}");
}

#[test]
fn the_guide_prints_the_keymap() {
    let guide = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/guide.md"))
        .expect("the guide");
    assert!(
        guide.contains(&keymap::keymap_markdown()),
        "docs/guide.md's keymap differs from app/keymap.rs; paste:\n{}",
        keymap::keymap_markdown()
    );
}
