//! The built-in merger room, table-driven through the real component.

use super::*;

pub(super) fn pr(number: u32, files: &[&str]) -> PrFacts {
    let sha = format!("sha{number}");
    PrFacts {
        number,
        head_sha: sha.clone(),
        hallmark_sha: Some(sha),
        mergeable: MergeableState::Mergeable,
        ci: CiState::Green,
        checks: Vec::new(),
        merge_checks: Vec::new(),
        merged_tree: None,
        changes_requested: false,
        review_requests: Vec::new(),
        body: String::new(),
        stacked_on: None,
        files: files.iter().map(|f| f.to_string()).collect(),
        base_commits: Vec::new(),
        rebasing: false,
        lit_cleared: false,
    }
}

pub(super) fn queue(prs: Vec<PrFacts>) -> MergerInput {
    MergerInput {
        settings: MergeSettings::default(),
        bases: vec![BaseQueue {
            base: "main".into(),
            tip_sha: "tip".into(),
            tip_ci: CiState::Green,
            tip_checked: false,
            recent: Vec::new(),
            merge_in_flight: None,
            prs,
        }],
        open_prs: Vec::new(),
    }
}

fn with<T>(mut value: T, f: impl FnOnce(&mut T)) -> T {
    f(&mut value);
    value
}

#[test]
fn merger_room_table() {
    use Action::*;
    // (name, input, expected per PR: (number, action, first reason, waits_for))
    type Row = (u32, Action, &'static str, &'static [u32]);
    let behind = |p: PrFacts| {
        with(p, |p| {
            p.base_commits = vec![BaseCommit {
                sha: "b1".into(),
                files: vec!["a.rs".into()],
            }]
        })
    };
    let cases: Vec<(&str, MergerInput, Vec<Row>)> = vec![
        (
            "one ready PR merges",
            queue(vec![pr(1, &["a.rs"])]),
            vec![(1, Merge, "ready", &[])],
        ),
        (
            "one merge at a time per base (no merge check lines the next one up)",
            with(queue(vec![pr(1, &["a.rs"]), pr(2, &["b.rs"])]), |i| {
                i.settings.pre_merge_check = false
            }),
            vec![
                (1, Merge, "ready", &[]),
                (2, Wait, "one_merge_at_a_time", &[1]),
            ],
        ),
        (
            "a claimed file makes a newer PR wait",
            queue(vec![
                with(pr(1, &["a.rs"]), |p| p.ci = CiState::Pending),
                pr(2, &["a.rs", "c.rs"]),
            ]),
            vec![
                (1, Wait, "ci_pending", &[]),
                (2, Wait, "claimed_files", &[1]),
            ],
        ),
        (
            // PR 2's base moved; the pre-merge check is off here, and its own
            // rows are in `merger_room_guards_the_merged_result`.
            "disjoint files move in parallel lanes",
            with(
                queue(vec![
                    with(pr(1, &["a.rs"]), |p| p.ci = CiState::Pending),
                    behind(pr(2, &["b.rs", "a2.rs"])),
                    with(behind(pr(3, &["a.rs"])), |p| p.files = vec!["a.rs".into()]),
                    with(pr(4, &["d.rs"]), |p| {
                        p.mergeable = MergeableState::Conflicting
                    }),
                ]),
                |i| i.settings.pre_merge_check = false,
            ),
            vec![
                (1, Wait, "ci_pending", &[]),
                (2, Merge, "ready", &[]),
                (3, Wait, "claimed_files", &[1]),
                (4, Rebase, "conflicting", &[]),
            ],
        ),
        (
            "behind on its own files is rebased at its turn",
            queue(vec![behind(pr(1, &["a.rs"]))]),
            vec![(1, Rebase, "behind_on_files", &[])],
        ),
        (
            "with update = conflicts, mergeable is enough",
            with(queue(vec![behind(pr(1, &["a.rs"]))]), |i| {
                i.settings.update = UpdateMode::Conflicts;
                i.settings.pre_merge_check = false;
            }),
            vec![(1, Merge, "ready", &[])],
        ),
        (
            "a red base tip stops the line",
            with(
                queue(vec![
                    pr(1, &["a.rs"]),
                    with(pr(2, &["b.rs"]), |p| {
                        p.mergeable = MergeableState::Conflicting
                    }),
                ]),
                |i| i.bases[0].tip_ci = CiState::Red,
            ),
            vec![(1, Wait, "base_red", &[]), (2, Wait, "base_red", &[])],
        ),
        (
            "a pending base tip makes merges wait but not rebases",
            with(
                queue(vec![
                    pr(1, &["a.rs"]),
                    with(pr(2, &["b.rs"]), |p| {
                        p.mergeable = MergeableState::Conflicting
                    }),
                ]),
                |i| i.bases[0].tip_ci = CiState::Pending,
            ),
            vec![
                (1, Wait, "base_ci_pending", &[]),
                (2, Rebase, "conflicting", &[]),
            ],
        ),
        (
            "nothing merges while a merge is being delivered",
            with(queue(vec![pr(1, &["a.rs"])]), |i| {
                i.bases[0].merge_in_flight = Some(9)
            }),
            vec![(1, Wait, "merge_in_flight", &[9])],
        ),
        (
            "no hallmark on the head holds and claims nothing",
            queue(vec![
                with(pr(1, &["a.rs"]), |p| p.head_sha = "new".into()),
                pr(2, &["a.rs"]),
            ]),
            vec![(1, Hold, "not_hallmarked", &[]), (2, Merge, "ready", &[])],
        ),
        (
            "requests for changes and reviews hold",
            queue(vec![
                with(pr(1, &["a.rs"]), |p| p.changes_requested = true),
                with(pr(2, &["b.rs"]), |p| p.review_requests = vec!["ana".into()]),
                with(pr(3, &["c.rs"]), |p| p.ci = CiState::Abandoned),
            ]),
            vec![
                (1, Hold, "changes_requested", &[]),
                (2, Hold, "review_requested", &[]),
                (3, Hold, "ci_abandoned", &[]),
            ],
        ),
        (
            "dependency lines in the body, in every spelling",
            with(
                queue(vec![with(pr(10, &["z.rs"]), |p| {
                    p.body = "Fixes #1\n\nDepends on #3\n- Blocked by #4, #8\nAfter: https://github.com/o/r/pull/5\nDepends-On: #6\nAftermath #7\n".into()
                })]),
                |i| i.open_prs = vec![1, 3, 4, 5, 6, 7],
            ),
            vec![(10, Wait, "depends_on_open", &[3, 4, 5, 6])],
        ),
        (
            "a dependency that is no longer open is ignored",
            queue(vec![with(pr(2, &["b.rs"]), |p| {
                p.body = "Depends on #1".into()
            })]),
            vec![(2, Merge, "ready", &[])],
        ),
        (
            "a stacked PR waits for the PR below it",
            queue(vec![
                with(pr(1, &["a.rs"]), |p| p.ci = CiState::Pending),
                with(pr(2, &["b.rs"]), |p| p.stacked_on = Some(1)),
            ]),
            vec![
                (1, Wait, "ci_pending", &[]),
                (2, Wait, "depends_on_open", &[1]),
            ],
        ),
        (
            "waiting on a held PR claims nothing",
            queue(vec![
                with(pr(1, &["a.rs"]), |p| p.changes_requested = true),
                with(pr(2, &["b.rs"]), |p| p.body = "After #1".into()),
                pr(3, &["b.rs"]),
            ]),
            vec![
                (1, Hold, "changes_requested", &[]),
                (2, Wait, "depends_on_held", &[1]),
                (3, Merge, "ready", &[]),
            ],
        ),
        (
            "a dependency cycle is put to a person",
            queue(vec![
                with(pr(1, &["a.rs"]), |p| p.body = "Depends on #2".into()),
                with(pr(2, &["b.rs"]), |p| p.body = "Depends on #1".into()),
            ]),
            vec![
                (1, Hold, "dependency_cycle", &[]),
                (2, Hold, "dependency_cycle", &[]),
            ],
        ),
        (
            "a lit path is held only once nothing claims its files",
            with(
                queue(vec![
                    with(pr(1, &["x.rs"]), |p| p.ci = CiState::Pending),
                    pr(2, &[".github/workflows/ci.yml", "x.rs"]),
                    pr(3, &["release.toml"]),
                    with(pr(4, &["deploy/prod.yml"]), |p| p.lit_cleared = true),
                ]),
                |i| {
                    i.settings.lit = vec![".github/".into(), "release.*".into(), "deploy/**".into()]
                },
            ),
            vec![
                (1, Wait, "ci_pending", &[]),
                (2, Wait, "claimed_files", &[1]),
                (3, Hold, "lit", &[]),
                (4, Merge, "ready", &[]),
            ],
        ),
        (
            "a rebase under way claims its files",
            queue(vec![
                with(pr(1, &["a.rs"]), |p| p.rebasing = true),
                pr(2, &["a.rs"]),
            ]),
            vec![(1, Wait, "rebasing", &[]), (2, Wait, "claimed_files", &[1])],
        ),
        (
            "require_ci = false merges on pending CI",
            with(
                queue(vec![with(pr(1, &["a.rs"]), |p| p.ci = CiState::Pending)]),
                |i| i.settings.require_ci = false,
            ),
            vec![(1, Merge, "ready", &[])],
        ),
        (
            "unknown mergeability waits",
            queue(vec![with(pr(1, &["a.rs"]), |p| {
                p.mergeable = MergeableState::Unknown
            })]),
            vec![(1, Wait, "mergeable_unknown", &[])],
        ),
    ];
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
        }
    }
}

#[test]
fn merger_room_refuses_contradictory_input() {
    let room = rooms().builtin(World::Merger).expect("built-in merger");
    let mut input = queue(vec![
        pr(1, &["a.rs"]),
        with(pr(1, &["b.rs"]), |p| p.head_sha = String::new()),
    ]);
    input.bases.push(BaseQueue {
        base: "main".into(),
        tip_sha: "tip".into(),
        tip_ci: CiState::Green,
        tip_checked: false,
        recent: Vec::new(),
        merge_in_flight: None,
        prs: Vec::new(),
    });
    let f = room
        .judge_merges(&input)
        .expect("call")
        .expect_err("refused");
    assert_eq!(f.problems.len(), 3, "{:?}", f.problems);
}

#[test]
fn merger_room_line_stopped_is_per_base() {
    let room = rooms().builtin(World::Merger).expect("built-in merger");
    let mut input = queue(vec![pr(1, &["a.rs"])]);
    input.bases.push(BaseQueue {
        base: "release".into(),
        tip_sha: "tip".into(),
        tip_ci: CiState::Red,
        tip_checked: false,
        recent: Vec::new(),
        merge_in_flight: None,
        prs: vec![pr(2, &["a.rs"])],
    });
    let plan = room.judge_merges(&input).expect("call").expect("answer");
    assert!(!plan.bases[0].line_stopped);
    assert_eq!(plan.bases[0].decisions[0].action, Action::Merge);
    assert!(plan.bases[1].line_stopped);
    assert_eq!(plan.bases[1].decisions[0].action, Action::Wait);
}

/// A base commit since the PR's merge base, touching `files`.
fn moved(mut p: PrFacts, files: &[&str]) -> PrFacts {
    p.base_commits = vec![BaseCommit {
        sha: "b1".into(),
        files: files.iter().map(|f| f.to_string()).collect(),
    }];
    p
}

/// A merge check of `head` onto `onto` alone, of the tree `tree1`.
fn merge_check(head: &str, state: CiState, onto: &str, skipped: Option<&str>) -> Vec<MergeCheck> {
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
fn planned(mut p: PrFacts, state: CiState, ahead: &[(u32, &str)], tree: &str) -> PrFacts {
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
fn checking_alone(p: PrFacts, tree: &str) -> PrFacts {
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

/// The rules of `hall:rooms@0.4` on the merged result: vacuous greens, the
/// pre-merge check on the tip, hot files. Each row has a twin that differs in
/// the one fact the rule reads, so a rule that does nothing fails its row.
#[test]
fn merger_room_guards_the_merged_result() {
    use Action::*;
    type Row = (u32, Action, &'static str, &'static [u32]);
    let green = |p: PrFacts| {
        with(p, |p| {
            p.merge_checks = merge_check(&p.head_sha, CiState::Green, "tip", None);
            p.merged_tree = Some("tree1".into());
        })
    };
    let required = |i: &mut MergerInput| i.settings.required_checks = vec!["test".into()];
    let hot = |i: &mut MergerInput| {
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
    };
    let cases: Vec<(&str, MergerInput, Vec<Row>)> = vec![
        // ---- vacuous green
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
        // ---- the pre-merge check
        (
            "base moved: green on the tree its merge writes merges; the next is checked behind it",
            queue(vec![
                green(moved(pr(1, &["a.rs"]), &["z.rs"])),
                moved(pr(2, &["b.rs"]), &["z.rs"]),
            ]),
            vec![
                (1, Merge, "ready", &[]),
                (2, Wait, "merge_check_missing", &[1]),
            ],
        ),
        (
            "up to `train` PRs have merge checks at once; the rest queue behind them",
            with(
                queue(vec![
                    moved(pr(1, &["a.rs"]), &["z.rs"]),
                    moved(pr(2, &["b.rs"]), &["z.rs"]),
                    pr(3, &["c.rs"]),
                ]),
                |i| i.settings.train = 2,
            ),
            vec![
                (1, Wait, "merge_check_missing", &[]),
                (2, Wait, "merge_check_missing", &[1]),
                (3, Wait, "merge_check_queued", &[1, 2]),
            ],
        ),
        (
            "a train of 0 is read as 1: the PR that merges next, on the tip",
            with(
                queue(vec![
                    moved(pr(1, &["a.rs"]), &["z.rs"]),
                    moved(pr(2, &["b.rs"]), &["z.rs"]),
                ]),
                |i| i.settings.train = 0,
            ),
            vec![
                (1, Wait, "merge_check_missing", &[]),
                (2, Wait, "merge_check_queued", &[1]),
            ],
        ),
        (
            "green on the predicted tip waits for the PRs ahead, not for a new check",
            queue(vec![
                green(moved(pr(1, &["a.rs"]), &["z.rs"])),
                planned(
                    moved(pr(2, &["b.rs"]), &["z.rs"]),
                    CiState::Green,
                    &[(1, "sha1")],
                    "tree12",
                ),
            ]),
            vec![
                (1, Merge, "ready", &[]),
                (2, Wait, "merge_check_ahead", &[1]),
            ],
        ),
        (
            "once the PR ahead merged, its planned check counts on the tree it wrote",
            queue(vec![with(
                planned(
                    moved(pr(2, &["b.rs"]), &["a.rs"]),
                    CiState::Green,
                    &[(1, "sha1")],
                    "tree12",
                ),
                |p| p.merged_tree = Some("tree12".into()),
            )]),
            vec![(2, Merge, "ready", &[])],
        ),
        (
            "the PR ahead left without merging: the tree differs and it is checked anew",
            queue(vec![with(
                planned(
                    moved(pr(2, &["b.rs"]), &["z.rs"]),
                    CiState::Green,
                    &[(1, "sha1")],
                    "tree12",
                ),
                |p| p.merged_tree = Some("tree2".into()),
            )]),
            vec![(2, Wait, "merge_check_missing", &[])],
        ),
        (
            "a check planned behind another train, or another head ahead, counts for nothing",
            queue(vec![
                green(moved(pr(1, &["a.rs"]), &["z.rs"])),
                planned(
                    moved(pr(2, &["b.rs"]), &["z.rs"]),
                    CiState::Green,
                    &[],
                    "tree2",
                ),
                planned(
                    moved(pr(3, &["c.rs"]), &["z.rs"]),
                    CiState::Green,
                    &[(1, "sha1-old"), (2, "sha2")],
                    "tree123",
                ),
            ]),
            vec![
                (1, Merge, "ready", &[]),
                (2, Wait, "merge_check_missing", &[1]),
                (3, Wait, "merge_check_missing", &[1, 2]),
            ],
        ),
        (
            "red on a predicted tip waits to meet that tree, and leaves the train",
            queue(vec![
                green(moved(pr(1, &["a.rs"]), &["z.rs"])),
                planned(
                    moved(pr(2, &["b.rs"]), &["z.rs"]),
                    CiState::Red,
                    &[(1, "sha1")],
                    "tree12",
                ),
                moved(pr(3, &["c.rs"]), &["z.rs"]),
            ]),
            vec![
                (1, Merge, "ready", &[]),
                (2, Wait, "merge_check_red_ahead", &[1]),
                (3, Wait, "merge_check_missing", &[1]),
            ],
        ),
        (
            "a PR red on the tip alone is checked again, and the PR behind is checked without it",
            queue(vec![
                with(moved(pr(1, &["a.rs"]), &["z.rs"]), |p| {
                    p.merge_checks = merge_check(&p.head_sha, CiState::Red, "tip", None);
                    p.merged_tree = Some("tree1".into());
                }),
                moved(pr(2, &["b.rs"]), &["z.rs"]),
            ]),
            vec![
                (1, Wait, "merge_check_rerun", &[]),
                (2, Wait, "merge_check_missing", &[]),
            ],
        ),
        (
            "its twin: the same PR green on the tip carries the one behind",
            queue(vec![
                green(moved(pr(1, &["a.rs"]), &["z.rs"])),
                moved(pr(2, &["b.rs"]), &["z.rs"]),
            ]),
            vec![
                (1, Merge, "ready", &[]),
                (2, Wait, "merge_check_missing", &[1]),
            ],
        ),
        (
            "red on two trees makes a suspect: its running check carries nobody behind it",
            queue(vec![
                moved(pr(3, &["c.rs"]), &["z.rs"]),
                checking_alone(
                    planned(
                        planned(
                            moved(pr(4, &["d.rs"]), &["z.rs"]),
                            CiState::Red,
                            &[(3, "sha3-old")],
                            "tree34-old",
                        ),
                        CiState::Red,
                        &[(3, "sha3")],
                        "tree34",
                    ),
                    "tree4",
                ),
                moved(pr(5, &["e.rs"]), &["z.rs"]),
            ]),
            vec![
                (3, Wait, "merge_check_missing", &[]),
                (4, Wait, "merge_check_pending", &[]),
                (5, Wait, "merge_check_missing", &[3]),
            ],
        ),
        (
            "its twin: red on one tree behind a queued PR is no suspect, and carries",
            queue(vec![
                moved(pr(3, &["c.rs"]), &["z.rs"]),
                checking_alone(
                    planned(
                        moved(pr(4, &["d.rs"]), &["z.rs"]),
                        CiState::Red,
                        &[(3, "sha3")],
                        "tree34",
                    ),
                    "tree4",
                ),
                moved(pr(5, &["e.rs"]), &["z.rs"]),
            ]),
            vec![
                (3, Wait, "merge_check_missing", &[4]),
                (4, Wait, "merge_check_pending", &[]),
                (5, Wait, "merge_check_missing", &[3, 4]),
            ],
        ),
        (
            "the train its checks form keeps its order: an older PR ready later joins behind",
            queue(vec![
                moved(pr(1, &["a.rs"]), &["z.rs"]),
                with(green(moved(pr(2, &["b.rs"]), &["z.rs"])), |p| {
                    p.merge_checks[0].state = CiState::Pending
                }),
                planned(
                    moved(pr(3, &["c.rs"]), &["z.rs"]),
                    CiState::Green,
                    &[(2, "sha2")],
                    "tree23",
                ),
            ]),
            vec![
                (1, Wait, "merge_check_missing", &[2, 3]),
                (2, Wait, "merge_check_pending", &[]),
                (3, Wait, "merge_check_ahead", &[2]),
            ],
        ),
        (
            "in the train's order, a PR ahead on the same files is waited for",
            queue(vec![
                moved(pr(1, &["b.rs"]), &["z.rs"]),
                green(moved(pr(2, &["b.rs"]), &["z.rs"])),
            ]),
            vec![(1, Wait, "claimed_files", &[2]), (2, Merge, "ready", &[])],
        ),
        (
            "a PR that left the train lets the ones planned behind it check anew",
            queue(vec![
                with(green(moved(pr(2, &["b.rs"]), &["z.rs"])), |p| {
                    p.changes_requested = true
                }),
                planned(
                    moved(pr(3, &["c.rs"]), &["z.rs"]),
                    CiState::Green,
                    &[(2, "sha2")],
                    "tree23",
                ),
            ]),
            vec![
                (2, Hold, "changes_requested", &[]),
                (3, Wait, "merge_check_missing", &[]),
            ],
        ),
        (
            "a tip whose tree a merge check passed does not hold a merge for its CI",
            with(queue(vec![pr(1, &["a.rs"])]), |i| {
                i.bases[0].tip_ci = CiState::Pending;
                i.bases[0].tip_checked = true;
            }),
            vec![(1, Merge, "ready", &[])],
        ),
        (
            "an unchecked tip's running CI holds the merge",
            with(queue(vec![pr(1, &["a.rs"])]), |i| {
                i.bases[0].tip_ci = CiState::Pending
            }),
            vec![(1, Wait, "base_ci_pending", &[])],
        ),
        (
            "a checked tip that went red still stops the line",
            with(queue(vec![pr(1, &["a.rs"])]), |i| {
                i.bases[0].tip_ci = CiState::Red;
                i.bases[0].tip_checked = true;
            }),
            vec![(1, Wait, "base_red", &[])],
        ),
        (
            "update = conflicts: a mergeable PR on the train's files rides behind it",
            with(
                queue(vec![
                    green(moved(pr(1, &["a.rs"]), &["z.rs"])),
                    moved(pr(2, &["a.rs"]), &["z.rs"]),
                ]),
                |i| i.settings.update = UpdateMode::Conflicts,
            ),
            vec![
                (1, Merge, "ready", &[]),
                (2, Wait, "merge_check_missing", &[1]),
            ],
        ),
        (
            "update = files: the same PR waits for the claim, to be rebased once",
            queue(vec![
                green(moved(pr(1, &["a.rs"]), &["z.rs"])),
                moved(pr(2, &["a.rs"]), &["z.rs"]),
            ]),
            vec![(1, Merge, "ready", &[]), (2, Wait, "claimed_files", &[1])],
        ),
        (
            "update = conflicts: a conflicting PR does not ride; a lit one does not either",
            with(
                queue(vec![
                    green(moved(pr(1, &["a.rs", "db/x.sql"]), &["z.rs"])),
                    with(moved(pr(2, &["a.rs"]), &["z.rs"]), |p| {
                        p.mergeable = MergeableState::Conflicting
                    }),
                    moved(pr(3, &["db/x.sql"]), &["z.rs"]),
                ]),
                |i| {
                    i.settings.update = UpdateMode::Conflicts;
                    i.settings.lit = vec!["db/**".into()];
                    i.bases[0].prs[0].lit_cleared = true;
                },
            ),
            vec![
                (1, Merge, "ready", &[]),
                (2, Wait, "claimed_files", &[1]),
                (3, Wait, "claimed_files", &[1]),
            ],
        ),
        (
            "update = conflicts: a ready PR overtakes one on its files still on its own CI",
            with(
                queue(vec![
                    with(pr(1, &["a.rs"]), |p| p.ci = CiState::Pending),
                    pr(2, &["a.rs"]),
                ]),
                |i| i.settings.update = UpdateMode::Conflicts,
            ),
            vec![(1, Wait, "ci_pending", &[]), (2, Merge, "ready", &[])],
        ),
        (
            "update = files: it waits for that PR instead",
            queue(vec![
                with(pr(1, &["a.rs"]), |p| p.ci = CiState::Pending),
                pr(2, &["a.rs"]),
            ]),
            vec![
                (1, Wait, "ci_pending", &[]),
                (2, Wait, "claimed_files", &[1]),
            ],
        ),
        (
            "a merge check running on this tip is waited for",
            queue(vec![with(moved(pr(1, &["a.rs"]), &["z.rs"]), |p| {
                p.merge_checks = merge_check(&p.head_sha, CiState::Pending, "tip", None);
                p.merged_tree = Some("tree1".into());
            })]),
            vec![(1, Wait, "merge_check_pending", &[])],
        ),
        (
            "a green merge check of another tree than its merge would write counts for nothing",
            queue(vec![with(moved(pr(1, &["a.rs"]), &["z.rs"]), |p| {
                p.merge_checks = merge_check(&p.head_sha, CiState::Green, "old-tip", None);
                p.merged_tree = Some("tree2".into());
            })]),
            vec![(1, Wait, "merge_check_missing", &[])],
        ),
        (
            "a green merge check of an older head counts for nothing",
            queue(vec![with(moved(pr(1, &["a.rs"]), &["z.rs"]), |p| {
                p.merge_checks = merge_check(&p.head_sha, CiState::Green, "tip", None);
                p.merged_tree = Some("tree1".into());
                p.head_sha = "sha1-new".into();
                p.hallmark_sha = Some("sha1-new".into());
            })]),
            vec![(1, Wait, "merge_check_missing", &[])],
        ),
        (
            "red once on the merged tree runs that check again (a flake must not cost a dev run)",
            queue(vec![
                with(moved(pr(1, &["a.rs"]), &["z.rs"]), |p| {
                    p.merge_checks = merge_check(&p.head_sha, CiState::Red, "tip", None);
                    p.merged_tree = Some("tree1".into());
                }),
                pr(2, &["a.rs"]),
            ]),
            vec![
                (1, Wait, "merge_check_rerun", &[]),
                (2, Wait, "claimed_files", &[1]),
            ],
        ),
        (
            "red twice on the merged tree rebases the PR at its turn",
            queue(vec![
                with(moved(pr(1, &["a.rs"]), &["z.rs"]), |p| {
                    let red = merge_check(&p.head_sha, CiState::Red, "tip", None);
                    p.merge_checks = [red.clone(), red].concat();
                    p.merged_tree = Some("tree1".into());
                }),
                pr(2, &["a.rs"]),
            ]),
            vec![
                (1, Rebase, "merge_check_red", &[]),
                (2, Wait, "claimed_files", &[1]),
            ],
        ),
        (
            "red here after red on another tree at this head is no flake: rebased",
            queue(vec![with(moved(pr(1, &["a.rs"]), &["z.rs"]), |p| {
                let mut older = merge_check(&p.head_sha, CiState::Red, "tip0", None);
                older[0].tree = Some("tree0".into());
                p.merge_checks =
                    [merge_check(&p.head_sha, CiState::Red, "tip", None), older].concat();
                p.merged_tree = Some("tree1".into());
            })]),
            vec![(1, Rebase, "merge_check_red", &[])],
        ),
        (
            "a merge check that will not run holds and claims nothing",
            queue(vec![
                with(moved(pr(1, &["a.rs"]), &["z.rs"]), |p| {
                    p.merge_checks = merge_check(
                        &p.head_sha,
                        CiState::Missing,
                        "tip",
                        Some("no checks configured"),
                    );
                    p.merge_checks[0].tree = None;
                    p.merged_tree = Some("tree1".into());
                }),
                with(moved(pr(2, &["b.rs"]), &["z.rs"]), |p| {
                    p.merge_checks = merge_check(&p.head_sha, CiState::Abandoned, "tip", None);
                    p.merged_tree = Some("tree1".into());
                }),
                pr(3, &["a.rs"]),
            ]),
            vec![
                (1, Hold, "merge_check_skipped", &[]),
                (2, Hold, "merge_check_abandoned", &[]),
                (3, Merge, "ready", &[]),
            ],
        ),
        (
            "a PR holding the tip merges unchecked; the next is checked with it merged in",
            queue(vec![pr(1, &["a.rs"]), moved(pr(2, &["b.rs"]), &["z.rs"])]),
            vec![
                (1, Merge, "ready", &[]),
                (2, Wait, "merge_check_missing", &[1]),
            ],
        ),
        (
            "the merge check runs while the base tip's CI does",
            with(queue(vec![moved(pr(1, &["a.rs"]), &["z.rs"])]), |i| {
                i.bases[0].tip_ci = CiState::Pending
            }),
            vec![(1, Wait, "merge_check_missing", &[])],
        ),
        (
            "a red tip runs no merge checks",
            with(queue(vec![moved(pr(1, &["a.rs"]), &["z.rs"])]), |i| {
                i.bases[0].tip_ci = CiState::Red
            }),
            vec![(1, Wait, "base_red", &[])],
        ),
        (
            "with update = conflicts the merge check still guards a moved base",
            with(queue(vec![moved(pr(1, &["a.rs"]), &["a.rs"])]), |i| {
                i.settings.update = UpdateMode::Conflicts
            }),
            vec![(1, Wait, "merge_check_missing", &[])],
        ),
        (
            "pre_merge_check off merges a moved base on its own CI",
            with(queue(vec![moved(pr(1, &["a.rs"]), &["z.rs"])]), |i| {
                i.settings.pre_merge_check = false
            }),
            vec![(1, Merge, "ready", &[])],
        ),
        // ---- hot files
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
    ];
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
