//! Properties of the state machine over arbitrary runs of actions, and the transition
//! table checked edge by edge.

use proptest::prelude::*;

use super::*;

fn action() -> impl Strategy<Value = Action> {
    let sha = prop_oneof![Just(Sha::from("a")), Just(Sha::from("b"))];
    let hold = prop_oneof![
        Just(HoldKind::Budget),
        Just(HoldKind::Checks),
        Just(HoldKind::Lit),
        Just(HoldKind::CiFailed)
    ];
    prop_oneof![
        (sha.clone(), any::<bool>(), any::<bool>(), any::<bool>()).prop_map(
            |(sha, ask, auto_ready, on_base)| {
                Action::ProposeReady {
                    sha,
                    summary: "s".into(),
                    why: None,
                    how: None,
                    ask,
                    auto_ready,
                    on_base,
                }
            }
        ),
        (sha.clone(), any::<bool>()).prop_map(|(sha, on_base)| Action::Ready {
            sha,
            note: None,
            on_base
        }),
        Just(Action::PullBack { reason: None }),
        Just(Action::Drop { reason: "r".into() }),
        proptest::option::of(1u64..1000).prop_map(|tokens| Action::Retry {
            reason: "r".into(),
            tokens
        }),
        sha.clone().prop_map(|sha| Action::ChecksPassed { sha }),
        (sha.clone(), 1u32..4).prop_map(|(sha, max)| Action::ChecksFailed {
            sha,
            failed: vec![],
            max_check_failures: max
        }),
        (sha.clone(), any::<bool>(), 1u32..4)
            .prop_map(|(sha, approved, max)| verdict_on(sha, approved, max)),
        any::<bool>().prop_map(|second| Action::RunFailed {
            role: if second {
                "review".into()
            } else {
                "fix".into()
            },
            reason: "no structured output".into(),
            run: None,
        }),
        sha.clone().prop_map(|sha| Action::Rebased {
            sha,
            seal: Some(seal())
        }),
        sha.clone().prop_map(|sha| Action::FixSubmitted {
            sha,
            fixed: vec![],
            disputed: vec![]
        }),
        Just(Action::Shipped {
            pr: Some("p".into())
        }),
        Just(Action::RebaseFailed {
            reason: "conflict".into()
        }),
        Just(Action::Reopen {
            reason: "ci".into(),
            ci_at: None,
            follow: None,
        }),
        Just(Action::Restore),
        prop_oneof![
            Just(FollowKind::Conflict),
            Just(FollowKind::Feedback),
            Just(FollowKind::Ci)
        ]
        .prop_map(|kind| Action::FollowThrough {
            kind,
            brief: "b".into()
        }),
        Just(Action::DraftReply {
            comment: 7,
            body: "done".into()
        }),
        Just(Action::PostReply { comment: 7 }),
        Just(Action::RequestRebase {
            base: "main".into()
        }),
        Just(Action::Restack {
            base: "parent".into()
        }),
        hold.prop_map(|kind| Action::Hold {
            kind,
            reason: "r".into(),
            next: Vec::new(),
        }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// No sequence of actions moves an item along an edge the tables forbid, and
    /// replaying the written journal (through JSON) equals the in-memory fold.
    #[test]
    fn actions_follow_the_tables_and_replay_equals_the_fold(actions in proptest::collection::vec(action(), 0..60)) {
        let (mut item, mut log) = start();
        for a in &actions {
            let before = item.state;
            if run(&mut item, &mut log, a).is_ok() {
                prop_assert!(allowed(before, item.state), "{:?} -> {:?} by {:?}", before, item.state, a);
                if before.is_terminal() && before != item.state {
                    prop_assert!(before == State::Closed && item.state == State::Development);
                }
            }
        }
        prop_assert_eq!(&fold(&log), &item);
        let text: String = log.iter().map(|e| encode(e) + "\n").collect();
        let replayed: Vec<Event> = text.lines().map(|l| decode(l).expect("own lines decode")).collect();
        prop_assert_eq!(fold(&replayed), item);
    }
}

#[test]
fn every_listed_edge_is_reachable() {
    // Walks random sequences and records edges, so a table entry no action can take is caught.
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let strategy = proptest::collection::vec(action(), 0..80);
    let mut seen = std::collections::HashSet::new();
    for i in 0..6000 {
        let actions = strategy.new_tree(&mut runner).expect("tree").current();
        // Half the walks start at a shipped, reopened item, whose edges take a long
        // walk to reach by chance.
        let (mut item, mut log) = if i % 2 == 0 {
            start()
        } else {
            shipped_and_reopened()
        };
        for a in &actions {
            let before = item.state;
            if run(&mut item, &mut log, a).is_ok() && before != item.state {
                seen.insert((before, item.state));
            }
        }
    }
    let missing: Vec<_> = TRANSITIONS.iter().filter(|e| !seen.contains(e)).collect();
    assert!(missing.is_empty(), "never taken: {missing:?}");
}
