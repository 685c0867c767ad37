//! The built-in tool-policy room, table-driven through the real component (and
//! held to the same rules file compiled natively), a repository's stricter room
//! built on the same rules, and the cost of a call with a full window. The room's
//! defaults against `[policy]`'s, and the stricter room named on a base branch, are
//! tested in the host (`office/tests/rooms`).

use super::*;

/// The host's plain types under the names the shared rules file expects.
mod model {
    pub use crate::types::{
        CallOutcome as Outcome, CommandKind, DetectorSetting, FailingCheck, ItemFacts, PastCall,
        PolicyAction as Action, PolicyInput, PolicyMode as Mode, PolicyTrigger as Trigger,
        PolicyVerdict, Recurrence, ShellCommand as Command, ToolCall,
    };
}

/// The rules the built-in room is built from, compiled natively, with their
/// table of twins.
#[path = "../../../../rooms/sdk/src/rules/tool_policy.rs"]
pub(super) mod rules;

use rules::tests::{bash, edit, failed, input, ok, past, runs, setting};

pub(super) const STRICT_TOOL_POLICY: &[u8] =
    include_bytes!(env!("HALL_FIXTURE_STRICT_TOOL_POLICY_WASM"));

pub(super) fn builtin_room() -> Room {
    rooms()
        .builtin(World::ToolPolicy)
        .expect("built-in tool-policy room")
}

pub(super) fn strict_room() -> Room {
    rooms()
        .load(
            World::ToolPolicy,
            STRICT_TOOL_POLICY,
            RoomSource::File {
                path: "strict-tool-policy.wasm".into(),
            },
        )
        .expect("the strict room loads")
}

fn call(room: &Room, input: &PolicyInput) -> PolicyVerdict {
    room.decide_tool_policy(input)
        .unwrap_or_else(|e| panic!("{e}"))
        .unwrap_or_else(|f| panic!("refused: {f:?}"))
}

/// The built-in room's answer, which must be the native rules' answer too.
fn decide(room: &Room, input: &PolicyInput) -> PolicyVerdict {
    let verdict = call(room, input);
    assert_eq!(verdict, rules::decide(input), "wasm and native differ");
    verdict
}

#[test]
fn tool_policy_room_twins() {
    // The rules file's own table, through the component this time.
    let room = builtin_room();
    for ((name, row, want), (twin_name, twin, twin_want)) in rules::tests::twins() {
        rules::tests::assert_row(name, want, &decide(&room, &row));
        rules::tests::assert_row(twin_name, twin_want, &decide(&room, &twin));
    }
    for (name, row, want) in rules::tests::rows() {
        rules::tests::assert_row(name, want, &decide(&room, &row));
    }
}

/// The repository's stricter room repeats the built-in rules with repetition at
/// 2 and 3, whatever the settings say; the same input gets a stronger answer.
#[test]
fn the_strict_room_answers_differently_on_the_same_input() {
    let builtin = builtin_room();
    let strict = strict_room();
    let x = edit("src/x.rs");
    let enforce = |mut i: PolicyInput| {
        i.settings = vec![setting("repetition", PolicyMode::Enforce, 3, 5)];
        i
    };

    // A second identical call: the built-in room lets it be, the strict one nudges.
    let second = enforce(input(x.clone(), runs(&x, 1, |c, _| ok(c))));
    assert_eq!(decide(&builtin, &second).action, PolicyAction::Allow);
    let got = call(&strict, &second);
    assert_eq!(
        (got.action, got.detector.as_str()),
        (PolicyAction::Nudge, "repetition"),
        "{got:?}"
    );
    assert!(got.reason.contains("2nd time"), "{}", got.reason);

    // A third that failed the same way twice: a nudge against a block.
    let third = enforce(input(x.clone(), runs(&x, 2, |c, _| failed(c, "e"))));
    assert_eq!(decide(&builtin, &third).action, PolicyAction::Nudge);
    assert_eq!(call(&strict, &third).action, PolicyAction::Deny);

    // Configured thresholds do not loosen it.
    let loose = with_settings(
        &third,
        vec![setting("repetition", PolicyMode::Enforce, 50, 90)],
    );
    assert_eq!(decide(&builtin, &loose).action, PolicyAction::Allow);
    assert_eq!(call(&strict, &loose).action, PolicyAction::Deny);

    // But a detector turned off stays off, and the other detectors are the
    // standard ones.
    let off = with_settings(&third, vec![setting("repetition", PolicyMode::Off, 3, 5)]);
    assert_eq!(call(&strict, &off).action, PolicyAction::Allow);
    let streak = input(
        edit("n"),
        (0..6)
            .map(|i| failed(edit(&format!("f{i}")), "e"))
            .collect(),
    );
    assert_eq!(call(&strict, &streak), decide(&builtin, &streak));
}

fn with_settings(input: &PolicyInput, settings: Vec<DetectorSetting>) -> PolicyInput {
    PolicyInput {
        settings,
        ..input.clone()
    }
}

/// What `hall rooms run tool-policy --input JSON` reads and prints, and what
/// `hall rooms check` says of the built-in room.
#[test]
fn tool_policy_room_speaks_json_and_only_its_world() {
    let room = builtin_room();
    assert_eq!(room.info().version, CURRENT_VERSION);
    assert_eq!(room.world(), World::ToolPolicy);
    let past = serde_json::json!({
        "call": {"tool": "Bash", "key": "k1", "preview": "cargo build",
                 "command": {"kind": "build", "words": ["cargo build"]}},
        "outcome": "error",
        "output_hash": "h",
    });
    let out = room
        .run_json(serde_json::json!({
            "call": {"tool": "Bash", "key": "k1", "preview": "cargo build",
                     "command": {"kind": "build", "words": ["cargo build"]}},
            "item": {"id": "H-0042", "state": "development"},
            "window": [past, past, past, past],
            "settings": [{"name": "repetition", "mode": "enforce", "nudge_at": 3, "block_at": 5}]
        }))
        .expect("runs");
    assert_eq!(out["ok"]["action"], "deny", "{out}");
    assert_eq!(out["ok"]["detector"], "repetition", "{out}");
    let reason = out["ok"]["reason"].as_str().expect("a reason");
    assert!(
        reason.starts_with("`cargo build` would run for the 5th time"),
        "{reason}"
    );
    let keys: Vec<&str> = out["ok"]
        .as_object()
        .expect("an object")
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys, ["action", "detector", "reason"], "{out}");

    let out = room
        .run_json(serde_json::json!({"call": {"tool": "Read", "key": "r", "read_only": true}}))
        .expect("runs");
    assert_eq!(
        out,
        serde_json::json!({"ok": {"action": "allow", "detector": "", "reason": ""}})
    );

    let err = room
        .run_json(serde_json::json!({"call": {"tool": "Edit"}}))
        .expect_err("a call needs its key");
    assert_eq!(err.code(), "ROOM_INPUT_INVALID");
    let err = room
        .run_json(serde_json::json!({"call": {"tool": "Edit", "key": "k"}, "windows": []}))
        .expect_err("unknown fields are refused");
    assert_eq!(err.code(), "ROOM_INPUT_INVALID");

    let report = rooms().check(builtin::bytes(World::ToolPolicy).expect("tool-policy bytes"));
    assert_eq!(report.runnable, [World::ToolPolicy], "{report:?}");
    assert_eq!(report.implements.len(), 1);
    assert_eq!(report.implements[0].export, "hall:rooms/tool-policy@0.8.0");
    assert!(report.problems.is_empty(), "{:?}", report.problems);

    let err = rooms()
        .builtin(World::Merger)
        .expect("merger")
        .decide_tool_policy(&input(edit("a"), Vec::new()))
        .expect_err("a merger room decides no tool calls");
    assert_eq!(err.code(), "ROOM_INCOMPATIBLE");
    let err = rooms()
        .load(
            World::Merger,
            builtin::bytes(World::ToolPolicy).expect("tool-policy bytes"),
            RoomSource::File {
                path: "tool-policy.wasm".into(),
            },
        )
        .expect_err("not a merger");
    assert!(
        err.message().contains("hall:rooms/tool-policy@0.8.0"),
        "{}",
        err.message()
    );
}

/// The room runs before every tool call: with a window of 200 past calls it
/// must decide in a small fraction of its deadline, and the rules alone in
/// microseconds.
#[test]
fn a_full_window_decides_well_within_the_deadline() {
    let room = builtin_room();
    let test = bash("cargo test", CommandKind::Test);
    let mut window: Vec<PastCall> = (0..200)
        .map(|i| match i % 4 {
            0 => ok(edit(&format!("src/f{}.rs", i % 13))),
            1 => failed(test.clone(), &format!("out{}", i % 5)),
            2 => past(
                rules::tests::read(&format!("src/r{i}.rs")),
                CallOutcome::Success,
                "",
            ),
            _ => failed(edit(&format!("src/g{}.rs", i % 3)), "e"),
        })
        .collect();
    window.iter_mut().for_each(|p| {
        p.call.preview = format!("{} {}", p.call.preview, "x".repeat(100));
    });
    let input = PolicyInput {
        item: Some(ItemFacts {
            id: "H-0042".into(),
            state: "development".into(),
            failing_checks: Vec::new(),
        }),
        ..input(test.clone(), window)
    };
    // The first call may compile the component into the cache.
    let first = decide(&room, &input);
    assert_eq!(first.detector, "repetition", "{first:?}");

    let mut times: Vec<Duration> = (0..15)
        .map(|_| {
            let start = Instant::now();
            call(&room, &input);
            start.elapsed()
        })
        .collect();
    times.sort();
    let median = times[times.len() / 2];
    let deadline = room_limits().timeout;
    assert!(
        median < deadline / 20,
        "a 200-call window took {median:?} (median), against a deadline of {deadline:?}"
    );

    let start = Instant::now();
    for _ in 0..100 {
        std::hint::black_box(rules::decide(std::hint::black_box(&input)));
    }
    let native = start.elapsed() / 100;
    assert!(
        native < Duration::from_millis(2),
        "the rules alone took {native:?}"
    );
    eprintln!("a 200-call window: {median:?} through the component (median), {native:?} natively");
}

fn room_limits() -> Limits {
    rooms().limits()
}
