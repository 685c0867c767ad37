//! The tool-policy rules' table: per detector and action, a row that trips it and a
//! twin that must not, then the rows for modes, thresholds, combining and limits.
//! hall runs the same rows through the built-in room as a component.

use super::*;

/// What a row that no detector fires on must get.
const ALLOW: Want = (Action::Allow, "");

/// Per detector and action: a row that trips it, and its twin, which differs
/// only in the one fact the rule reads and gets the weaker answer. A rule
/// that does nothing fails the first; one that fires on anything fails the
/// second.
pub(crate) fn twins() -> Vec<(Row, Row)> {
    let test = bash("cargo test", CommandKind::Test);
    let x = edit("src/x.rs");
    vec![
        // ---- repetition: 3 calls nudge; 5 block when 4 returned the same.
        (
            (
                "repetition nudges at 3",
                input(x.clone(), runs(&x, 2, |c, _| ok(c))),
                (Action::Nudge, "repetition"),
            ),
            (
                "twin: 2 calls",
                input(x.clone(), runs(&x, 1, |c, _| ok(c))),
                ALLOW,
            ),
        ),
        (
            (
                "repetition blocks 5 identical failures",
                input(x.clone(), runs(&x, 4, |c, _| failed(c, "e1"))),
                (Action::Deny, "repetition"),
            ),
            (
                "twin: the failures differ",
                input(x.clone(), runs(&x, 4, |c, i| failed(c, &format!("e{i}")))),
                (Action::Nudge, "repetition"),
            ),
        ),
        (
            (
                "repetition blocks identical output",
                input(
                    x.clone(),
                    runs(&x, 4, |c, _| past(c, Outcome::Success, "same")),
                ),
                (Action::Deny, "repetition"),
            ),
            (
                "twin: no output to compare",
                input(x.clone(), runs(&x, 4, |c, _| past(c, Outcome::Success, ""))),
                (Action::Nudge, "repetition"),
            ),
        ),
        (
            (
                "repetition blocks retrying what was blocked",
                input(
                    x.clone(),
                    runs(&x, 4, |c, i| past(c, Outcome::Blocked, &format!("h{i}"))),
                ),
                (Action::Deny, "repetition"),
            ),
            (
                "twin: the same calls failed differently",
                input(
                    x.clone(),
                    runs(&x, 4, |c, i| past(c, Outcome::Error, &format!("h{i}"))),
                ),
                (Action::Nudge, "repetition"),
            ),
        ),
        (
            (
                "repetition blocks at 5 with all 4 earlier ones alike",
                input(x.clone(), runs(&x, 4, |c, _| failed(c, "e"))),
                (Action::Deny, "repetition"),
            ),
            (
                "twin: 3 of 4 alike",
                input(
                    x.clone(),
                    runs(&x, 4, |c, i| failed(c, if i == 0 { "other" } else { "e" })),
                ),
                (Action::Nudge, "repetition"),
            ),
        ),
        (
            (
                "repetition counts only the same key",
                input(
                    x.clone(),
                    vec![ok(x.clone()), ok(edit("src/y.rs")), ok(x.clone())],
                ),
                (Action::Nudge, "repetition"),
            ),
            (
                "twin: another key in between",
                input(
                    x.clone(),
                    vec![ok(edit("src/z.rs")), ok(edit("src/y.rs")), ok(x.clone())],
                ),
                ALLOW,
            ),
        ),
        (
            (
                "tests run again fail the same way",
                input(test.clone(), runs(&test, 2, |c, _| failed(c, "t"))),
                (Action::Nudge, "repetition"),
            ),
            (
                "twin: tests run again after edits fail differently",
                input(
                    test.clone(),
                    runs(&test, 2, |c, i| failed(c, &format!("t{i}"))),
                ),
                ALLOW,
            ),
        ),
        (
            (
                "a mutating command run again nudges without evidence",
                input(
                    bash("cargo test", CommandKind::Mutating),
                    runs(&bash("cargo test", CommandKind::Mutating), 2, |c, i| {
                        failed(c, &format!("t{i}"))
                    }),
                ),
                (Action::Nudge, "repetition"),
            ),
            (
                "twin: a build stays quiet",
                input(
                    bash("cargo test", CommandKind::Build),
                    runs(&bash("cargo test", CommandKind::Build), 2, |c, i| {
                        failed(c, &format!("t{i}"))
                    }),
                ),
                ALLOW,
            ),
        ),
        (
            (
                "repetition: a write repeated",
                input(x.clone(), runs(&x, 2, |c, _| ok(c))),
                (Action::Nudge, "repetition"),
            ),
            (
                "twin: a read repeated is exempt",
                input(reading(&x), runs(&reading(&x), 2, |c, _| ok(c))),
                ALLOW,
            ),
        ),
        // ---- oscillation: 2 laps nudge, 3 block (repetition off, so that
        // the calls a cycle repeats do not answer first).
        (
            (
                "oscillation nudges at 2 laps",
                only("oscillation", edit("b"), edits("aba")),
                (Action::Nudge, "oscillation"),
            ),
            (
                "twin: one distinct key is no cycle",
                only("oscillation", edit("b"), edits("bbb")),
                ALLOW,
            ),
        ),
        (
            (
                "oscillation blocks at 3 laps",
                only("oscillation", edit("b"), edits("ababa")),
                (Action::Deny, "oscillation"),
            ),
            (
                "twin: the first lap broken",
                only("oscillation", edit("b"), edits("cbaba")),
                (Action::Nudge, "oscillation"),
            ),
        ),
        (
            (
                "oscillation counts 5 calls as 2 laps",
                only("oscillation", edit("a"), edits("abab")),
                (Action::Nudge, "oscillation"),
            ),
            (
                "twin: the cycle broken",
                only("oscillation", edit("a"), edits("abcb")),
                ALLOW,
            ),
        ),
        (
            (
                "oscillation of 3 calls",
                only("oscillation", edit("c"), edits("abcab")),
                (Action::Nudge, "oscillation"),
            ),
            (
                "twin: the 3-cycle broken",
                only("oscillation", edit("c"), edits("abcdb")),
                ALLOW,
            ),
        ),
        (
            (
                "oscillation of 4 calls",
                only("oscillation", edit("d"), edits("abcdabc")),
                (Action::Nudge, "oscillation"),
            ),
            (
                "twin: the 4-cycle broken",
                only("oscillation", edit("d"), edits("abceabc")),
                ALLOW,
            ),
        ),
        (
            (
                "oscillation skips reads between the calls",
                only(
                    "oscillation",
                    edit("b"),
                    vec![
                        ok(edit("a")),
                        ok(read("r")),
                        ok(edit("b")),
                        ok(read("r")),
                        ok(edit("a")),
                    ],
                ),
                (Action::Nudge, "oscillation"),
            ),
            (
                "twin: a read current call is exempt",
                only(
                    "oscillation",
                    reading(&edit("b")),
                    vec![
                        ok(edit("a")),
                        ok(read("r")),
                        ok(edit("b")),
                        ok(read("r")),
                        ok(edit("a")),
                    ],
                ),
                ALLOW,
            ),
        ),
        (
            (
                "oscillation counts blocked calls too",
                only(
                    "oscillation",
                    edit("b"),
                    vec![
                        ok(edit("a")),
                        past(edit("b"), Outcome::Blocked, ""),
                        failed(edit("a"), "e"),
                    ],
                ),
                (Action::Nudge, "oscillation"),
            ),
            (
                "twin: one of them read-only",
                only(
                    "oscillation",
                    edit("b"),
                    vec![
                        ok(edit("a")),
                        past(reading(&edit("b")), Outcome::Blocked, ""),
                        failed(edit("a"), "e"),
                    ],
                ),
                ALLOW,
            ),
        ),
        // ---- error streak: 4 errors nudge, 6 block.
        (
            (
                "error streak nudges at 4",
                input(
                    edit("n"),
                    (0..4)
                        .map(|i| failed(edit(&format!("f{i}")), "e"))
                        .collect(),
                ),
                (Action::Nudge, "error-streak"),
            ),
            (
                "twin: the last one succeeded",
                input(
                    edit("n"),
                    (0..4)
                        .map(|i| {
                            let c = edit(&format!("f{i}"));
                            if i == 3 { ok(c) } else { failed(c, "e") }
                        })
                        .collect(),
                ),
                ALLOW,
            ),
        ),
        (
            (
                "error streak blocks at 6",
                input(
                    edit("n"),
                    (0..6)
                        .map(|i| failed(edit(&format!("f{i}")), "e"))
                        .collect(),
                ),
                (Action::Deny, "error-streak"),
            ),
            (
                "twin: a block breaks the streak",
                input(
                    edit("n"),
                    (0..6)
                        .map(|i| {
                            let c = edit(&format!("f{i}"));
                            if i == 2 {
                                past(c, Outcome::Blocked, "")
                            } else {
                                failed(c, "e")
                            }
                        })
                        .collect(),
                ),
                ALLOW,
            ),
        ),
        (
            (
                "error streak counts failed reads",
                input(
                    edit("n"),
                    (0..4)
                        .map(|i| failed(read(&format!("r{i}")), "e"))
                        .collect(),
                ),
                (Action::Nudge, "error-streak"),
            ),
            (
                "twin: the reads succeeded",
                input(
                    edit("n"),
                    (0..4).map(|i| ok(read(&format!("r{i}")))).collect(),
                ),
                ALLOW,
            ),
        ),
        // ---- same failure: 2 runs nudge, 3 block, on a commit or a fix report.
        (
            (
                "same failure nudges at 2",
                commit_with(2),
                (Action::Nudge, "same-failure"),
            ),
            ("twin: it failed once", commit_with(1), ALLOW),
        ),
        (
            (
                "same failure blocks at 3",
                commit_with(3),
                (Action::Deny, "same-failure"),
            ),
            (
                "twin: the call does not commit",
                with(commit_with(3), |i| {
                    i.call = bash("git status", CommandKind::ReadOnly)
                }),
                ALLOW,
            ),
        ),
        (
            (
                "same failure on `hall fixed`",
                with(commit_with(3), |i| {
                    i.call = bash("hall fixed H-0042", CommandKind::Mutating)
                }),
                (Action::Deny, "same-failure"),
            ),
            (
                "twin: no item",
                with(commit_with(3), |i| i.item = None),
                ALLOW,
            ),
        ),
    ]
}

/// Rows that are not twins: modes, thresholds, combining and limits.
pub(crate) fn rows() -> Vec<Row> {
    let x = edit("src/x.rs");
    let four_same = input(x.clone(), runs(&x, 4, |c, _| failed(c, "e")));
    vec![
        (
            "off skips the detector",
            with(four_same.clone(), |i| {
                i.settings = vec![setting("repetition", Mode::Off, 3, 5)];
            }),
            // The failures are a streak too, which still runs.
            (Action::Nudge, "error-streak"),
        ),
        (
            "off skips every detector",
            with(four_same.clone(), |i| {
                i.settings = DEFAULTS
                    .iter()
                    .map(|(n, a, b)| setting(n, Mode::Off, *a, *b))
                    .collect();
            }),
            ALLOW,
        ),
        (
            "enforce and observe decide alike (hall applies modes)",
            with(four_same.clone(), |i| {
                i.settings = vec![setting("repetition", Mode::Enforce, 3, 5)];
            }),
            (Action::Deny, "repetition"),
        ),
        (
            "zero thresholds are floored at 2",
            with(input(x.clone(), Vec::new()), |i| {
                i.settings = DEFAULTS
                    .iter()
                    .map(|(n, _, _)| setting(n, Mode::Enforce, 0, 0))
                    .collect();
            }),
            ALLOW,
        ),
        (
            "thresholds of 1 are floored at 2",
            with(input(x.clone(), runs(&x, 1, |c, _| failed(c, "e"))), |i| {
                i.settings = DEFAULTS
                    .iter()
                    .map(|(n, _, _)| setting(n, Mode::Enforce, 1, 1))
                    .collect();
            }),
            (Action::Deny, "repetition"),
        ),
        (
            "block below nudge is raised to nudge",
            with(input(x.clone(), runs(&x, 2, |c, _| ok(c))), |i| {
                i.settings = vec![setting("repetition", Mode::Enforce, 3, 1)];
            }),
            // Block at 3 needs 2 alike; these returned nothing to compare.
            (Action::Nudge, "repetition"),
        ),
        (
            "the strongest action wins, whichever detector gives it",
            // Repetition nudges (3 calls), the error streak (6) denies.
            input(
                x.clone(),
                (0..4)
                    .map(|i| failed(edit(&format!("f{i}")), "e"))
                    .chain([failed(x.clone(), "1"), failed(x.clone(), "2")])
                    .collect(),
            ),
            (Action::Deny, "error-streak"),
        ),
        (
            "a tie goes to the earlier detector",
            // Repetition nudges (3 calls) and so does the error streak (4).
            input(
                x.clone(),
                vec![
                    failed(edit("a"), "1"),
                    failed(edit("b"), "2"),
                    failed(x.clone(), "3"),
                    failed(x.clone(), "4"),
                ],
            ),
            (Action::Nudge, "repetition"),
        ),
        (
            "an empty input is allowed",
            input(edit(""), Vec::new()),
            ALLOW,
        ),
    ]
}
