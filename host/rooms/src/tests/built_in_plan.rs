//! The built-in plan room, table-driven through the real component (and held to
//! the same rules file compiled natively). A repository's own plan room, which
//! serves only from the base branch, is tested in the host (`office/tests/rooms`).

use super::*;

/// The host's plain types under the names the shared rules file expects.
mod model {
    pub use crate::types::{PlanInput, PlanJudgement, PlanPart as Part};
}

/// The rules the built-in room is built from, compiled natively, with their
/// table of twins.
#[path = "../../../../rooms/sdk/src/rules/plan.rs"]
mod rules;

use rules::tests::{globs, part, plan, two, with};

fn judge(room: &Room, input: &PlanInput) -> PlanJudgement {
    let judged = room
        .judge_plan(input)
        .unwrap_or_else(|e| panic!("{e}"))
        .unwrap_or_else(|f| panic!("refused: {f:?}"));
    // The component and the same rules compiled natively agree.
    assert_eq!(judged, rules::judge(input), "wasm and native differ");
    judged
}

#[test]
fn plan_room_twins() {
    // The rules file's own table, through the component this time.
    let room = rooms().builtin(World::Plan).expect("built-in plan room");
    for (reason, broken, twin) in rules::tests::twins() {
        rules::tests::assert_twins(reason, &judge(&room, &broken), &judge(&room, &twin));
    }
}

#[test]
fn plan_room_decides_overlap_by_the_glob_language() {
    // (glob of part 1, glob of part 2, the path both could change, if any)
    let cases = [
        ("src/a/**", "src/a/x.rs", Some("src/a/x.rs")),
        ("src/*.rs", "src/lib.rs", Some("src/lib.rs")),
        ("src/*.rs", "src/a/lib.rs", None),
        ("**/*.md", "docs/x.md", Some("docs/x.md")),
        ("web/**", "api/**", None),
        ("a/", "a/b", Some("a/b")),
        ("a?c", "abc", Some("abc")),
        ("a?c", "a/c", None),
        ("**", "deep/in/the/tree.txt", Some("deep/in/the/tree.txt")),
        ("**", "*.toml", Some(".toml")),
        // A path with no wildcard is a file, or the directory of that name.
        ("src/a", "src/a/b.rs", Some("src/a/b.rs")),
        ("src/a", "src/ab", None),
        ("src/*", "src/a/b.rs", None),
        ("a/**/b", "a/b", Some("a/b")),
        ("a/**/b", "a/*/c", None),
        ("*.rs", "*.md", None),
    ];
    let room = rooms().builtin(World::Plan).expect("built-in plan room");
    for (a, b, both) in cases {
        for (first, second) in [(a, b), (b, a)] {
            let got = judge(&room, &globs(first, second));
            match both {
                Some(path) => {
                    assert_eq!(got.reasons, ["overlapping_paths"], "{first} vs {second}");
                    assert_eq!(
                        got.problems,
                        [format!(
                            "part 1 (\"API\") and part 2 (\"Web\") could change the same files: \"{first}\" and \"{second}\" both match {path}"
                        )]
                    );
                }
                None => assert!(got.split, "{first} vs {second}: {got:?}"),
            }
        }
    }
}

#[test]
fn plan_room_gives_every_reason_that_applies_in_order() {
    let room = rooms().builtin(World::Plan).expect("built-in plan room");
    let mut lone = part(" ", &[]);
    lone.acceptance = String::new();
    let got = judge(
        &room,
        &with(plan(vec![lone]), |p| {
            p.split = false;
            p.reason = "it is one small change".into();
            p.max_parts = 1;
        }),
    );
    assert!(!got.split);
    assert_eq!(
        got.reasons,
        [
            "not_split",
            "splitting_off",
            "one_part",
            "untitled_part",
            "no_paths",
            "no_acceptance"
        ]
    );
    assert_eq!(
        got.problems,
        [
            "the intake model kept the request whole: it is one small change",
            "splitting is off: [intake] max_parts is 1",
            "a split needs at least 2 parts; the plan has 1",
            "part 1 has no title",
            "part 1 names no paths, so nothing keeps it apart from the others",
            "part 1 does not say how to tell it is done (acceptance is empty)",
        ]
    );

    let got = judge(
        &room,
        &with(
            plan(vec![
                part("Core", &["src/**"]),
                part("core", &["src/lib.rs", "/etc/hosts"]),
                part("Docs", &["docs/"]),
            ]),
            |p| {
                p.split = false;
                p.reason = String::new();
                p.max_parts = 2;
            },
        ),
    );
    assert_eq!(
        got.reasons,
        [
            "not_split",
            "too_many_parts",
            "bad_path",
            "overlapping_paths",
            "duplicate_titles"
        ]
    );
    assert_eq!(
        got.problems,
        [
            "the intake model kept the request whole and gave no reason",
            "the plan has 3 parts; [intake] max_parts allows 2",
            "part 2 (\"core\"): the path \"/etc/hosts\" is absolute; paths are relative to the repository root",
            "part 1 (\"Core\") and part 2 (\"core\") could change the same files: \"src/**\" and \"src/lib.rs\" both match src/lib.rs",
            "parts 1 and 2 have the same title \"Core\"",
        ]
    );
}

#[test]
fn plan_room_runs_from_json_and_only_as_the_plan_world() {
    let room = rooms().builtin(World::Plan).expect("built-in plan room");
    assert_eq!(room.info().version, CURRENT_VERSION);
    let out = room
        .run_json(serde_json::json!({
            "request": "Split me",
            "split": true,
            "reason": "two halves",
            "parts": [
                {"title": "A", "paths": ["a/"], "acceptance": "a works"},
                {"title": "B", "paths": ["a/b.rs"], "acceptance": "b works"}
            ],
            "max_parts": 4
        }))
        .expect("runs");
    assert_eq!(out["ok"]["split"], false, "{out}");
    assert_eq!(out["ok"]["reasons"][0], "overlapping_paths", "{out}");
    let err = room
        .run_json(serde_json::json!({"request": "no split given"}))
        .expect_err("split and max_parts are required");
    assert_eq!(err.code(), "ROOM_INPUT_INVALID");
    let err = rooms()
        .builtin(World::Merger)
        .expect("merger")
        .judge_plan(&two())
        .expect_err("a merger room judges no plans");
    assert_eq!(err.code(), "ROOM_INCOMPATIBLE");
    // A merger room is not a plan room, nor a plan room a merger room.
    let err = rooms()
        .load(
            World::Merger,
            builtin::bytes(World::Plan).expect("plan bytes"),
            RoomSource::File {
                path: "plan.wasm".into(),
            },
        )
        .expect_err("not a merger");
    assert!(
        err.message().contains("hall:rooms/plan@0.8.0"),
        "{}",
        err.message()
    );
}
