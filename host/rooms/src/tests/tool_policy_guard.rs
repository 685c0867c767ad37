//! The tool-policy room's guard: sound for the built-in rules (over generated sessions,
//! no call that meets none of its conditions is answered anything but `allow`, checked
//! with the same evaluator the hook uses), the same through the component as natively,
//! and the stricter room's own; `hall rooms run` asks for it too.

use std::collections::BTreeMap;

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;

use super::built_in_tool_policy::{builtin_room, rules, strict_room};
use super::*;
use crate::guard::matches;

/// The detector names a generated setting may have: the built-in four and one the
/// rules don't know.
const NAMES: [&str; 5] = [
    "repetition",
    "oscillation",
    "error-streak",
    "same-failure",
    "other",
];

/// How many sessions the deterministic count below generates.
const GENERATED: usize = 10_000;

/// The call with key number `key`: what it does is part of its key, so every call
/// with that key has the same tool and command (`kind` 0 is an edit, 1 to 5 a Bash
/// command of each kind); only whether it counts as read-only varies.
fn keyed(key: usize, read_only: bool, kind: u8) -> ToolCall {
    let kind = match kind {
        0 => None,
        1 => Some(CommandKind::ReadOnly),
        2 => Some(CommandKind::Test),
        3 => Some(CommandKind::Build),
        4 => Some(CommandKind::Mutating),
        _ => Some(CommandKind::Unknown),
    };
    ToolCall {
        tool: if kind.is_some() { "Bash" } else { "Edit" }.into(),
        key: format!("k{key}"),
        preview: format!("call {key}"),
        read_only,
        command: kind.map(|kind| ShellCommand {
            kind,
            words: Vec::new(),
            commits: false,
            reports_fix: false,
        }),
    }
}

/// Sessions near the guard's edges: any settings (modes with `off`, thresholds 0 to 8
/// that the rules floor, names missing, repeated or unknown), windows of up to 40
/// calls over three to five keys (each key read-only or not, now and then the other
/// way), every outcome, output hashes from a small set, and a call that may commit or
/// report a fix while the item has checks failing up to five runs. Half the windows
/// end in one to four laps of a cycle of two to four keys, the call next in it, as
/// random windows rarely do.
fn sessions() -> impl Strategy<Value = PolicyInput> {
    let mode = prop_oneof![
        Just(PolicyMode::Off),
        Just(PolicyMode::Observe),
        Just(PolicyMode::Enforce),
    ];
    let setting =
        (0..NAMES.len(), mode, 0u32..=8, 0u32..=8).prop_map(|(n, mode, a, b)| DetectorSetting {
            name: NAMES[n].into(),
            mode,
            nudge_at: a,
            block_at: b,
        });
    let settings = prop::collection::vec(setting, 0..7);
    let shapes = prop::collection::vec((any::<bool>(), 0u8..6), 5);
    // Failures weigh more, so that streaks reach the thresholds.
    let outcome = prop_oneof![
        2 => Just(CallOutcome::Success),
        3 => Just(CallOutcome::Error),
        1 => Just(CallOutcome::Blocked),
    ];
    let past = (0usize..5, outcome, 0u8..3, prop::bool::weighted(0.1)).boxed();
    let window = prop::collection::vec(past.clone(), 0..=40);
    let cycle = prop::option::of((
        prop::collection::vec(0usize..5, 2..=4),
        1usize..=4,
        prop::collection::vec(past, 16),
    ));
    let call = (
        0usize..5,
        prop::bool::weighted(0.2),
        prop::bool::weighted(0.2),
        prop::bool::weighted(0.1),
    );
    let item = prop::option::of(prop::collection::vec(0u32..6, 0..3));
    (settings, 3usize..=5, shapes, window, call, item, cycle).prop_map(
        |(
            settings,
            keys,
            shapes,
            mut window,
            (mut key, commits, reports_fix, flip),
            item,
            cycle,
        )| {
            if let Some((cycle, laps, ends)) = cycle {
                for i in 0..cycle.len() * laps {
                    let (_, outcome, hash, flip) = ends[i % ends.len()];
                    window.push((cycle[i % cycle.len()], outcome, hash, flip));
                }
                key = cycle[0];
            }
            let shape = |key: usize, flip: bool| {
                let (read_only, kind) = shapes[key % keys];
                keyed(key % keys, read_only != flip, kind)
            };
            let mut call = shape(key, flip);
            if let Some(command) = &mut call.command {
                command.commits = commits;
                command.reports_fix = reports_fix;
            }
            let window = window
                .into_iter()
                .map(|(key, outcome, hash, flip)| PastCall {
                    call: shape(key, flip),
                    outcome,
                    output_hash: ["", "h1", "h2"][usize::from(hash)].into(),
                    detector: String::new(),
                })
                .collect();
            let item = item.map(|runs| ItemFacts {
                id: "H-0001".into(),
                state: "development".into(),
                failing_checks: runs
                    .into_iter()
                    .enumerate()
                    .map(|(i, same_output_runs)| FailingCheck {
                        check: format!("check {i}"),
                        same_output_runs,
                    })
                    .collect(),
            });
            PolicyInput {
                call,
                item,
                window,
                settings,
            }
        },
    )
}

/// Why a session breaks the guard's promise, if it does: the rules object to a call
/// that meets none of the conditions their guard states for the session's settings.
fn broken_promise(
    input: &PolicyInput,
    verdict: &PolicyVerdict,
    guard: &[PolicyTrigger],
) -> Option<String> {
    (verdict.action != PolicyAction::Allow && !matches(guard, &input.call, &input.window)).then(
        || {
            format!(
                "{:?} by {} outside the guard {guard:?}: {}\n{input:#?}",
                verdict.action, verdict.detector, verdict.reason
            )
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 20_000, ..ProptestConfig::default() })]

    /// The property the hook relies on to skip the room.
    #[test]
    fn no_call_outside_the_guard_is_answered_anything_but_allow(input in sessions()) {
        let verdict = rules::decide(&input);
        let guard = rules::guard(&input.settings);
        if let Some(why) = broken_promise(&input, &verdict, &guard) {
            return Err(TestCaseError::fail(why));
        }
    }
}

/// The property above is not vacuous: the generated sessions make every detector
/// object, and the guard still spares the room for many of them.
#[test]
fn the_sessions_reach_every_detector_and_the_guard_often_spares_the_room() {
    let strategy = sessions();
    let mut runner = TestRunner::deterministic();
    let mut objected: BTreeMap<String, usize> = BTreeMap::new();
    let mut spared = 0;
    for _ in 0..GENERATED {
        let input = strategy.new_tree(&mut runner).expect("a session").current();
        let verdict = rules::decide(&input);
        let guard = rules::guard(&input.settings);
        assert_eq!(broken_promise(&input, &verdict, &guard), None);
        if verdict.action != PolicyAction::Allow {
            *objected.entry(verdict.detector).or_default() += 1;
        }
        if !matches(&guard, &input.call, &input.window) {
            spared += 1;
        }
    }
    eprintln!("{GENERATED} sessions: objections {objected:?}; the room spared for {spared}");
    for (name, _, _) in rules::DEFAULTS {
        assert!(objected.get(name).is_some_and(|n| *n > 0), "{objected:?}");
    }
    assert!(spared >= GENERATED / 5, "spared {spared}");
}

fn setting(name: &str, mode: PolicyMode, nudge_at: u32, block_at: u32) -> DetectorSetting {
    DetectorSetting {
        name: name.into(),
        mode,
        nudge_at,
        block_at,
    }
}

fn guard_of(room: &Room, settings: &[DetectorSetting]) -> Vec<PolicyTrigger> {
    room.guard_tool_policy(settings)
        .unwrap_or_else(|e| panic!("{e}"))
        .unwrap_or_else(|f| panic!("refused: {f:?}"))
}

/// Settings worth a look: none, the defaults, each detector off in turn, all off,
/// thresholds the rules floor, an unknown detector and a repeated one.
fn settings_samples() -> Vec<Vec<DetectorSetting>> {
    let defaults: Vec<DetectorSetting> = rules::DEFAULTS
        .iter()
        .map(|(n, a, b)| setting(n, PolicyMode::Observe, *a, *b))
        .collect();
    let mut samples = vec![Vec::new(), defaults.clone()];
    for off in 0..defaults.len() {
        let mut s = defaults.clone();
        s[off].mode = PolicyMode::Off;
        samples.push(s);
    }
    samples.push(
        defaults
            .iter()
            .map(|d| setting(&d.name, PolicyMode::Off, 3, 5))
            .collect(),
    );
    samples.push(vec![
        setting("repetition", PolicyMode::Enforce, 0, 1),
        setting("error-streak", PolicyMode::Enforce, 8, 2),
        setting("error-streak", PolicyMode::Off, 2, 3),
        setting("other", PolicyMode::Enforce, 2, 3),
    ]);
    samples
}

/// The guard the hook keeps is the component's; it must be the rules' own.
#[test]
fn the_built_in_rooms_guard_is_the_native_rules_guard() {
    let room = builtin_room();
    for settings in settings_samples() {
        assert_eq!(
            guard_of(&room, &settings),
            rules::guard(&settings),
            "{settings:?}"
        );
    }
    // Every detector off: the room says it never objects.
    let off: Vec<DetectorSetting> = rules::DEFAULTS
        .iter()
        .map(|(n, a, b)| setting(n, PolicyMode::Off, *a, *b))
        .collect();
    assert!(guard_of(&room, &off).is_empty());
}

/// The stricter room decides on settings of its own making, and states the guard of
/// those settings: its second identical call, which the standard guard would not
/// have asked it about, is inside its guard. Its promise holds over generated
/// sessions, through the component.
#[test]
fn the_strict_room_states_the_guard_of_its_own_settings() {
    let strict = strict_room();
    // Oscillation off, as its guard would take in a second identical call too.
    let settings: Vec<DetectorSetting> = rules::DEFAULTS
        .iter()
        .map(|(n, a, b)| {
            let mode = if *n == "oscillation" {
                PolicyMode::Off
            } else {
                PolicyMode::Observe
            };
            setting(n, mode, *a, *b)
        })
        .collect();
    let got = guard_of(&strict, &settings);
    assert_eq!(
        got[0],
        PolicyTrigger::Recurs(Recurrence {
            times: 1,
            last: 0,
            reads_exempt: true
        }),
        "{got:?}"
    );
    let second = rules::tests::input(
        rules::tests::edit("x"),
        vec![rules::tests::ok(rules::tests::edit("x"))],
    );
    assert!(matches(&got, &second.call, &second.window));
    assert!(!matches(
        &rules::guard(&settings),
        &second.call,
        &second.window
    ));

    let strategy = sessions();
    let mut runner = TestRunner::deterministic();
    let mut guards: BTreeMap<String, Vec<PolicyTrigger>> = BTreeMap::new();
    for _ in 0..300 {
        let input = strategy.new_tree(&mut runner).expect("a session").current();
        let verdict = strict
            .decide_tool_policy(&input)
            .expect("runs")
            .expect("answers");
        let key = format!("{:?}", input.settings);
        let guard = guards
            .entry(key)
            .or_insert_with(|| guard_of(&strict, &input.settings));
        assert_eq!(broken_promise(&input, &verdict, guard), None);
    }
}

/// `hall rooms run tool-policy --input '{"guard": [...]}'` prints the guard.
#[test]
fn rooms_run_asks_for_the_guard_with_a_guard_key() {
    let room = builtin_room();
    let out = room
        .run_json(serde_json::json!({"guard": [
            {"name": "repetition", "mode": "enforce", "nudge_at": 4, "block_at": 6},
            {"name": "oscillation", "mode": "off", "nudge_at": 2, "block_at": 3},
        ]}))
        .expect("runs");
    assert_eq!(
        out,
        serde_json::json!({"ok": [
            {"recurs": {"times": 3, "last": 0, "reads_exempt": true}},
            {"error-streak": 4},
            "claims-fix",
        ]})
    );
    let err = room
        .run_json(serde_json::json!({"guard": [{"name": "repetition"}]}))
        .expect_err("a setting needs its mode and counts");
    assert_eq!(err.code(), "ROOM_INPUT_INVALID");
}
