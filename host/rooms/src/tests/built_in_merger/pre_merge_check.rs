//! The pre-merge check: a PR whose base moved merges only once the repository's
//! checks passed on the tree its merge would write, and the train of such checks
//! run ahead on predicted tips. Run by `merged_result`'s test.

use super::super::*;
use super::merged_result::{Case, checking_alone, green, merge_check, moved, planned};
use super::{pr, queue, with};

/// Every case of the pre-merge check and its train.
pub(super) fn cases() -> Vec<Case> {
    use Action::*;
    vec![
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
    ]
}
