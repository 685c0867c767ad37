//! The merger's guards on the merged result, one table through the built-in room:
//! vacuous greens and hot files here, the pre-merge check and its train in
//! `pre_merge_check`. Each row has a twin that differs in the one fact the rule
//! reads, so a rule that does nothing fails its row.

use super::super::*;
use super::{pr, queue, with};

/// One case: what it shows, the input, and per PR the number, the action, the first
/// reason and the PRs it waits for.
pub(super) type Case = (&'static str, MergerInput, Vec<Row>);
pub(super) type Row = (u32, Action, &'static str, &'static [u32]);

/// A base commit since the PR's merge base, touching `files`.
pub(super) fn moved(mut p: PrFacts, files: &[&str]) -> PrFacts {
    p.base_commits = vec![BaseCommit {
        sha: "b1".into(),
        files: files.iter().map(|f| f.to_string()).collect(),
    }];
    p
}

/// A merge check of `head` onto `onto` alone, of the tree `tree1`.
pub(super) fn merge_check(
    head: &str,
    state: CiState,
    onto: &str,
    skipped: Option<&str>,
) -> Vec<MergeCheck> {
    vec![MergeCheck {
        state,
        onto: onto.into(),
        ahead: Vec::new(),
        head: head.into(),
        tree: Some("tree1".into()),
        skipped: skipped.map(str::to_string),
    }]
}

/// `p` with a merge check of its head in `state`, planned on the tip with
/// `ahead` (number, head) merged in first, of tree `tree`.
pub(super) fn planned(
    mut p: PrFacts,
    state: CiState,
    ahead: &[(u32, &str)],
    tree: &str,
) -> PrFacts {
    p.merge_checks.insert(
        0,
        MergeCheck {
            state,
            onto: "tip".into(),
            ahead: ahead
                .iter()
                .map(|(number, head)| PrHead {
                    number: *number,
                    head: head.to_string(),
                })
                .collect(),
            head: p.head_sha.clone(),
            tree: Some(tree.into()),
            skipped: None,
        },
    );
    p
}

/// `p` with a merge check of its head running on the tip as it is, of the tree
/// its merge would write now.
pub(super) fn checking_alone(p: PrFacts, tree: &str) -> PrFacts {
    let mut p = planned(p, CiState::Pending, &[], tree);
    p.merged_tree = Some(tree.into());
    p
}

fn check(name: &str, state: CiState, tests: Option<u64>) -> CheckFact {
    CheckFact {
        name: name.into(),
        state,
        tests,
    }
}

/// `p` with a green merge check of its head on the tip, of the tree its merge writes.
pub(super) fn green(p: PrFacts) -> PrFacts {
    with(p, |p| {
        p.merge_checks = merge_check(&p.head_sha, CiState::Green, "tip", None);
        p.merged_tree = Some("tree1".into());
    })
}

/// `test` is a required check.
fn required(i: &mut MergerInput) {
    i.settings.required_checks = vec!["test".into()];
}

/// Hot files on: `hot.rs` changed 5 times lately (the threshold), `warm.rs` 4.
fn hot(i: &mut MergerInput) {
    i.settings.pre_merge_check = false;
    i.settings.update = UpdateMode::Conflicts;
    i.settings.hot = HotSettings {
        window: 50,
        threshold: 5,
    };
    i.bases[0].recent = vec![
        PathCount {
            path: "hot.rs".into(),
            commits: 5,
        },
        PathCount {
            path: "warm.rs".into(),
            commits: 4,
        },
    ];
}

/// A green that proves nothing is not green.
fn vacuous_green() -> Vec<Case> {
    use Action::*;
    vec![
        (
            "a required check that never reported holds; reported, it merges",
            with(
                queue(vec![
                    with(pr(1, &["a.rs"]), |p| {
                        p.checks = vec![check("lint", CiState::Green, None)]
                    }),
                    with(pr(2, &["b.rs"]), |p| {
                        p.checks = vec![
                            check("lint", CiState::Green, None),
                            check("test", CiState::Green, Some(12)),
                        ]
                    }),
                ]),
                required,
            ),
            vec![
                (1, Hold, "required_check_missing", &[]),
                (2, Merge, "ready", &[]),
            ],
        ),
        (
            "no check detail at all cannot show a required check",
            with(queue(vec![pr(1, &["a.rs"])]), required),
            vec![(1, Hold, "required_check_missing", &[])],
        ),
        (
            "a required check reported as missing is missing",
            with(
                queue(vec![with(pr(1, &["a.rs"]), |p| {
                    p.checks = vec![check("test", CiState::Missing, None)]
                })]),
                required,
            ),
            vec![(1, Hold, "required_check_missing", &[])],
        ),
        (
            "a required check still running outranks a green summary",
            with(
                queue(vec![with(pr(1, &["a.rs"]), |p| {
                    p.checks = vec![check("test", CiState::Pending, None)]
                })]),
                required,
            ),
            vec![(1, Wait, "ci_pending", &[])],
        ),
        (
            "a green check that ran no tests holds; one test is enough",
            queue(vec![
                with(pr(1, &["a.rs"]), |p| {
                    p.checks = vec![check("test", CiState::Green, Some(0))]
                }),
                with(pr(2, &["b.rs"]), |p| {
                    p.checks = vec![check("test", CiState::Green, Some(1))]
                }),
            ]),
            vec![(1, Hold, "no_tests_ran", &[]), (2, Merge, "ready", &[])],
        ),
        (
            "with required checks named, only they are asked for tests",
            with(
                queue(vec![with(pr(1, &["a.rs"]), |p| {
                    p.checks = vec![
                        check("lint", CiState::Green, Some(0)),
                        check("test", CiState::Green, Some(40)),
                    ]
                })]),
                required,
            ),
            vec![(1, Merge, "ready", &[])],
        ),
        (
            "a vacuous green claims nothing: the next PR on its files moves",
            queue(vec![
                with(pr(1, &["a.rs"]), |p| {
                    p.checks = vec![check("test", CiState::Green, Some(0))]
                }),
                pr(2, &["a.rs"]),
            ]),
            vec![(1, Hold, "no_tests_ran", &[]), (2, Merge, "ready", &[])],
        ),
        (
            "with require_ci off, test counts are not read",
            with(
                queue(vec![with(pr(1, &["a.rs"]), |p| {
                    p.checks = vec![check("test", CiState::Green, Some(0))]
                })]),
                |i| i.settings.require_ci = false,
            ),
            vec![(1, Merge, "ready", &[])],
        ),
    ]
}

/// A path the base changes often must hold the tip.
fn hot_files() -> Vec<Case> {
    use Action::*;
    vec![
        (
            "a hot path must hold the tip even with update = conflicts",
            with(
                queue(vec![
                    moved(pr(1, &["hot.rs"]), &["z.rs"]),
                    moved(pr(2, &["warm.rs"]), &["z.rs"]),
                    pr(3, &["hot.rs", "c.rs"]),
                ]),
                hot,
            ),
            vec![
                (1, Rebase, "hot_file_stale", &[]),
                (2, Merge, "ready", &[]),
                (3, Wait, "claimed_files", &[1]),
            ],
        ),
        (
            "a zero window or threshold turns hot files off",
            with(queue(vec![moved(pr(1, &["hot.rs"]), &["z.rs"])]), |i| {
                hot(i);
                i.settings.hot.threshold = 0;
            }),
            vec![(1, Merge, "ready", &[])],
        ),
        (
            "a red tip rebases no hot PR",
            with(queue(vec![moved(pr(1, &["hot.rs"]), &["z.rs"])]), |i| {
                hot(i);
                i.bases[0].tip_ci = CiState::Red;
            }),
            vec![(1, Wait, "base_red", &[])],
        ),
        (
            "with the pre-merge check on, a hot PR is checked on the tip, not rebased",
            with(
                queue(vec![green(moved(pr(1, &["hot.rs"]), &["z.rs"]))]),
                |i| {
                    hot(i);
                    i.settings.pre_merge_check = true;
                },
            ),
            vec![(1, Merge, "ready", &[])],
        ),
    ]
}

/// The rules on the merged result: vacuous greens, the pre-merge check on the tip
/// and its train, hot files.
#[test]
fn merger_room_guards_the_merged_result() {
    let cases = [
        vacuous_green(),
        super::pre_merge_check::cases(),
        hot_files(),
    ]
    .concat();
    let room = rooms().builtin(World::Merger).expect("built-in merger");
    for (name, input, rows) in cases {
        let plan = room
            .judge_merges(&input)
            .expect("call")
            .unwrap_or_else(|f| panic!("{name}: refused: {f:?}"));
        let decisions = &plan.bases[0].decisions;
        assert_eq!(decisions.len(), rows.len(), "{name}");
        for (d, (number, action, reason, waits_for)) in decisions.iter().zip(rows) {
            assert_eq!(d.number, number, "{name}");
            assert_eq!(d.action, action, "{name}: PR #{number}: {d:?}");
            assert_eq!(
                d.reasons.first().map(String::as_str),
                Some(reason),
                "{name}: PR #{number}: {d:?}"
            );
            assert_eq!(d.waits_for, waits_for, "{name}: PR #{number}: {d:?}");
            // A merge check is asked for on the tip with the PRs it waits
            // for merged in first (in train order, which the committed train
            // may put out of number order); no other decision asks for one.
            let onto: &[u32] = if reason == "merge_check_missing" {
                waits_for
            } else {
                &[]
            };
            let mut asked = d.check_onto.clone();
            asked.sort_unstable();
            assert_eq!(asked, onto, "{name}: PR #{number}: {d:?}");
        }
    }
}
