//! The tool-policy rules' tests, and the builders the table and hall's own tests of
//! the built-in room make their inputs with. The table itself is in `table`.

use super::super::model::*;
use super::{DEFAULTS, decide, guard};

#[path = "tests/table.rs"]
mod table;

pub(crate) use table::{rows, twins};

/// A call that changes something (an edit), with `key` as its identity.
pub(crate) fn edit(key: &str) -> ToolCall {
    ToolCall {
        tool: "Edit".into(),
        key: key.into(),
        preview: format!("Edit {key}"),
        read_only: false,
        command: None,
    }
}

/// A call that only reads.
pub(crate) fn read(key: &str) -> ToolCall {
    ToolCall {
        tool: "Read".into(),
        key: key.into(),
        preview: format!("Read {key}"),
        read_only: true,
        command: None,
    }
}

/// The same call, read-only.
pub(crate) fn reading(call: &ToolCall) -> ToolCall {
    with(call.clone(), |c| c.read_only = true)
}

/// The input for `call` after `window` with every detector but `detector` off.
pub(crate) fn only(detector: &str, call: ToolCall, window: Vec<PastCall>) -> PolicyInput {
    with(input(call, window), |i| {
        i.settings = DEFAULTS
            .iter()
            .map(|(n, a, b)| {
                setting(
                    n,
                    if *n == detector {
                        Mode::Observe
                    } else {
                        Mode::Off
                    },
                    *a,
                    *b,
                )
            })
            .collect();
    })
}

/// A Bash call of `kind` running `words`, keyed by its command line.
pub(crate) fn bash(line: &str, kind: CommandKind) -> ToolCall {
    let words: Vec<String> = line
        .split("&&")
        .map(|w| w.split_whitespace().take(2).collect::<Vec<_>>().join(" "))
        .collect();
    ToolCall {
        tool: "Bash".into(),
        key: format!("bash:{line}"),
        preview: line.into(),
        read_only: matches!(kind, CommandKind::ReadOnly),
        command: Some(Command {
            kind,
            commits: words.iter().any(|w| w == "git commit"),
            reports_fix: words.iter().any(|w| w == "hall fixed"),
            words,
        }),
    }
}

pub(crate) fn past(call: ToolCall, outcome: Outcome, output_hash: &str) -> PastCall {
    PastCall {
        call,
        outcome,
        output_hash: output_hash.into(),
        detector: match outcome {
            Outcome::Blocked => "repetition".into(),
            _ => String::new(),
        },
    }
}

pub(crate) fn ok(call: ToolCall) -> PastCall {
    past(call, Outcome::Success, "")
}

pub(crate) fn failed(call: ToolCall, output_hash: &str) -> PastCall {
    past(call, Outcome::Error, output_hash)
}

/// The input for `call` after `window`, with no item and no settings (every
/// detector at its defaults).
pub(crate) fn input(call: ToolCall, window: Vec<PastCall>) -> PolicyInput {
    PolicyInput {
        call,
        item: None,
        window,
        settings: Vec::new(),
    }
}

/// `n` earlier runs of `call`, each ending as `make` says for its index.
pub(crate) fn runs(
    call: &ToolCall,
    n: usize,
    make: impl Fn(ToolCall, usize) -> PastCall,
) -> Vec<PastCall> {
    (0..n).map(|i| make(call.clone(), i)).collect()
}

/// The keys in order, each an edit of its own file (`"abab"`: a, b, a, b).
pub(crate) fn edits(keys: &str) -> Vec<PastCall> {
    keys.chars().map(|k| ok(edit(&k.to_string()))).collect()
}

pub(crate) fn setting(name: &str, mode: Mode, nudge_at: u32, block_at: u32) -> DetectorSetting {
    DetectorSetting {
        name: name.into(),
        mode,
        nudge_at,
        block_at,
    }
}

/// Commits (`git commit`) while the item's check `check` failed `runs`
/// times the same way.
pub(crate) fn commit_with(runs: u32) -> PolicyInput {
    with(
        input(
            bash("git commit -am wip", CommandKind::Mutating),
            Vec::new(),
        ),
        |i| {
            i.item = Some(ItemFacts {
                id: "H-0042".into(),
                state: "development".into(),
                failing_checks: vec![
                    FailingCheck {
                        check: "cargo fmt --check".into(),
                        same_output_runs: 1,
                    },
                    FailingCheck {
                        check: "cargo test".into(),
                        same_output_runs: runs,
                    },
                ],
            })
        },
    )
}

pub(crate) fn with<T>(mut value: T, f: impl FnOnce(&mut T)) -> T {
    f(&mut value);
    value
}

/// What a row expects: the action, and the detector that decided (empty
/// for allow).
pub(crate) type Want = (Action, &'static str);

/// One row: a name, the input, and the answer it must get.
pub(crate) type Row = (&'static str, PolicyInput, Want);

/// Holds one row's verdict to the row.
pub(crate) fn assert_row(name: &str, want: Want, got: &PolicyVerdict) {
    assert!(
        got.action == want.0,
        "{name}: got {:?} by {:?}: {}",
        got.action,
        got.detector,
        got.reason
    );
    assert_eq!(got.detector, want.1, "{name}: {}", got.reason);
    if want.0 == Action::Allow {
        assert!(got.reason.is_empty(), "{name}: {}", got.reason);
    } else {
        assert!(!got.reason.is_empty(), "{name}");
        assert!(!got.reason.contains('\n'), "{name}: {}", got.reason);
        assert!(got.reason.len() <= 600, "{name}: {}", got.reason.len());
    }
}

#[test]
fn every_detector_tells_its_twins_apart() {
    let twins = twins();
    for ((name, row, want), (twin_name, twin, twin_want)) in &twins {
        assert!(want != twin_want, "{name}: a twin must get another answer");
        assert_row(name, *want, &decide(row));
        assert_row(twin_name, *twin_want, &decide(twin));
    }
    // Every detector nudges and blocks in the table.
    for (name, _, _) in DEFAULTS {
        for action in [Action::Nudge, Action::Deny] {
            assert!(
                twins
                    .iter()
                    .any(|((_, _, a), (_, _, b))| *a == (action, name) || *b == (action, name)),
                "{name} never answers {action:?}"
            );
        }
    }
}

#[test]
fn modes_thresholds_and_combining() {
    for (name, row, want) in rows() {
        assert_row(name, want, &decide(&row));
    }
}

#[test]
fn reasons_name_what_was_seen() {
    let x = edit("src/x.rs");
    let got = decide(&input(x.clone(), runs(&x, 4, |c, _| failed(c, "e"))));
    assert_eq!(
        got.reason,
        "`Edit src/x.rs` would run for the 5th time with the same input, and it failed the same way 4 times. \
         Doing it again will not change the answer: read the error, change your approach, or ask a person with `hall ask`."
    );
    let got = decide(&input(
        x.clone(),
        runs(&x, 4, |c, _| past(c, Outcome::Blocked, "")),
    ));
    assert!(
        got.reason.contains("it was blocked before (4 times)"),
        "{}",
        got.reason
    );
    let got = decide(&input(
        x.clone(),
        runs(&x, 2, |c, _| past(c, Outcome::Success, "o")),
    ));
    assert!(got.reason.contains("3rd time"), "{}", got.reason);
    assert!(
        got.reason.contains("it returned identical output 2 times"),
        "{}",
        got.reason
    );

    let got = decide(&input(edit("c"), edits("abcab")));
    assert_eq!(
        got.reason,
        "These calls keep coming back in a cycle (`Edit a` ↔ `Edit b` ↔ `Edit c`), 2 laps so far. \
         Step back: say what the goal is, read the tests, or ask a person with `hall ask`."
    );

    let got = decide(&input(
        edit("n"),
        (0..5)
            .map(|i| failed(edit(&format!("f{i}")), "e"))
            .collect(),
    ));
    assert_eq!(
        got.reason,
        "The last 5 calls all failed (the latest: `Edit f2`, `Edit f3`, `Edit f4`); stop and read the last error before trying again."
    );

    let got = decide(&commit_with(3));
    assert_eq!(
        got.reason,
        "`cargo test` has failed 3 runs in a row with the same output, and a commit does not change what it prints. \
         `hall findings` shows its log: read it (`hall run --show LOG`) before committing again."
    );
}

#[test]
fn reasons_are_one_line_and_bounded() {
    let mut long = edit("k");
    long.preview = format!("line one\nline two\r\n{}", "é".repeat(400));
    let got = decide(&input(long.clone(), runs(&long, 4, |c, _| failed(c, "e"))));
    assert_eq!(got.action, Action::Deny);
    assert!(!got.reason.contains(['\n', '\r']), "{}", got.reason);
    assert!(
        got.reason.len() <= 600 && got.reason.len() > 590,
        "{}",
        got.reason.len()
    );
    assert!(
        got.reason.starts_with("`line one line two  é"),
        "{}",
        got.reason
    );
}

#[test]
fn no_input_panics() {
    let big = input(
        edit("a"),
        (0..10_000)
            .map(|i| failed(edit(&(i % 7).to_string()), ""))
            .collect(),
    );
    let got = decide(&big);
    assert_eq!(got.action, Action::Deny);
    let mut odd = input(edit(""), vec![past(edit(""), Outcome::Blocked, ""); 3]);
    odd.settings = vec![
        setting("", Mode::Enforce, u32::MAX, 0),
        setting("oscillation", Mode::Observe, u32::MAX, u32::MAX),
    ];
    odd.item = Some(ItemFacts {
        id: String::new(),
        state: String::new(),
        failing_checks: Vec::new(),
    });
    let got = decide(&odd);
    assert_eq!(got.action, Action::Nudge, "{}", got.reason);
}

#[test]
fn the_guard_has_one_trigger_per_detector_that_runs() {
    let recurs = |times, last| {
        Trigger::Recurs(Recurrence {
            times,
            last,
            reads_exempt: true,
        })
    };
    // Compared as shown: the WIT's generated variants have no `PartialEq`.
    let shown = |triggers: &[Trigger]| format!("{triggers:?}");
    // No settings: every detector at its defaults.
    assert_eq!(
        shown(&guard(&[])),
        shown(&[
            recurs(2, 0),
            recurs(1, 4),
            Trigger::ErrorStreak(4),
            Trigger::ClaimsFix
        ])
    );
    // Thresholds made safe first; an unknown detector adds nothing; the first
    // entry of a name counts.
    let settings = [
        setting("repetition", Mode::Enforce, 0, 0),
        setting("error-streak", Mode::Observe, 7, 9),
        setting("error-streak", Mode::Off, 7, 9),
        setting("oscillation", Mode::Off, 2, 3),
        setting("loops", Mode::Enforce, 2, 3),
    ];
    assert_eq!(
        shown(&guard(&settings)),
        shown(&[recurs(1, 0), Trigger::ErrorStreak(7), Trigger::ClaimsFix])
    );
    // Every detector off: the room never objects.
    let off: Vec<DetectorSetting> = DEFAULTS
        .iter()
        .map(|(n, a, b)| setting(n, Mode::Off, *a, *b))
        .collect();
    assert!(guard(&off).is_empty());
}

#[test]
fn ordinals() {
    let got: Vec<String> = [1, 2, 3, 4, 11, 12, 13, 21, 22, 23, 101, 111]
        .map(super::ordinal)
        .into();
    assert_eq!(
        got,
        [
            "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "23rd", "101st",
            "111th"
        ]
    );
}
