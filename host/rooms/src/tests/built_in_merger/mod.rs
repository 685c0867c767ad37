//! The built-in merger room, table-driven through the real component: the queue's
//! own rules here, the guards on the merged result in `merged_result` and
//! `pre_merge_check`.

use super::*;

mod merged_result;
mod pre_merge_check;

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
