//! The merge-check train: the PRs whose checks already run with the ones ahead merged
//! in, the check that counts for a PR at its place, and the suspects that carry
//! nobody behind them.

use std::collections::HashSet;

use super::super::model::*;
use super::Fnv;

/// The merge check of `pr`'s current head that counts with `train` ahead of it,
/// the newest first. Merging next (no train): only a check of the very tree its
/// merge would write, whatever it was planned on, or one that says no check will
/// run on the tip itself. Behind a train: a check planned on the tip with the
/// same PRs ahead, at the same heads; PRs that have left the queue since
/// (merged, in the tree it checked) no longer count, and if one left without
/// merging, its turn finds a different tree and checks anew.
pub(super) fn counting_check<'a>(
    pr: &'a PrFacts,
    train: &[(u32, &str)],
    queued: &HashSet<u32, Fnv>,
) -> Option<&'a MergeCheck> {
    let mut mine = pr.merge_checks.iter().filter(|m| m.head == pr.head_sha);
    if train.is_empty() {
        let now = pr.merged_tree.as_deref();
        mine.find(|m| {
            (now.is_some() && m.tree.as_deref() == now)
                || (m.skipped.is_some() && m.ahead.is_empty())
        })
    } else {
        mine.find(|m| planned_on(m, train, queued))
    }
}

/// How many red merge checks of `pr`'s head found the tree `m` checked (none
/// when `m` has no tree: a merge git refused is not a flake).
pub(super) fn reds_on_tree(pr: &PrFacts, m: &MergeCheck) -> usize {
    let Some(tree) = m.tree.as_deref() else {
        return 0;
    };
    pr.merge_checks
        .iter()
        .filter(|c| {
            c.head == pr.head_sha
                && matches!(c.state, CiState::Red)
                && c.tree.as_deref() == Some(tree)
        })
        .count()
}

/// True for a PR whose merged result failed at this head in a way that points
/// at it: red on the tip with no queued PR merged in ahead, or red on two
/// different trees. The PRs behind such a PR are not checked with it merged in
/// ahead of them (one bad PR would turn every check behind it red) until a
/// check of its own is green.
pub(super) fn suspect(pr: &PrFacts, queued: &HashSet<u32, Fnv>) -> bool {
    let mut reds = pr
        .merge_checks
        .iter()
        .filter(|m| m.head == pr.head_sha && matches!(m.state, CiState::Red));
    let mut trees: Vec<Option<&str>> = Vec::new();
    reds.any(|m| {
        let alone = m.ahead.iter().all(|a| !queued.contains(&a.number));
        let tree = m.tree.as_deref();
        if !trees.contains(&tree) {
            trees.push(tree);
        }
        alone || trees.len() >= 2
    })
}

/// True when `decision` rests on a green merge check of the PR's own (it merges
/// now or waits only for the PRs ahead of it).
pub(super) fn turn_green(decision: &Decision) -> bool {
    decision.reasons.first().is_some_and(|r| {
        matches!(
            r.as_str(),
            "merge_check_ahead"
                | "ready"
                | "merge_in_flight"
                | "one_merge_at_a_time"
                | "base_ci_pending"
                | "base_ci_abandoned"
        )
    })
}

/// One PR in a base's train. A car that does not carry (a suspect whose own
/// check has not come back green) is checked on the cars ahead of it, but the
/// cars behind are checked without it.
#[derive(Clone, Copy)]
pub(super) struct Car<'a> {
    pub(super) number: u32,
    pub(super) head: &'a str,
    pub(super) carries: bool,
}

/// The PRs merged in ahead of whatever comes after `cars`: the ones that carry.
pub(super) fn carried<'a>(cars: &[Car<'a>]) -> Vec<(u32, &'a str)> {
    cars.iter()
        .filter(|c| c.carries)
        .map(|c| (c.number, c.head))
        .collect()
}

/// How many red merge checks `pr`'s head has had, on any tree.
pub(super) fn reds_at_head(pr: &PrFacts) -> usize {
    pr.merge_checks
        .iter()
        .filter(|c| c.head == pr.head_sha && matches!(c.state, CiState::Red))
        .count()
}

/// The train its merge checks already form: greedily from the tip, the PR
/// whose counting check (see `counting_check`) with the carrying PRs found so
/// far ahead is pending or green. At most `train` PRs (0 read as 1), none of
/// those in `dropped`.
pub(super) fn committed_train<'a>(
    queue: &'a BaseQueue,
    queued: &HashSet<u32, Fnv>,
    limit: u32,
    dropped: &HashSet<u32, Fnv>,
) -> Vec<Car<'a>> {
    let mut train: Vec<Car<'a>> = Vec::new();
    while train.len() < limit.max(1) as usize {
        let ahead = carried(&train);
        let next = queue.prs.iter().find_map(|p| {
            if dropped.contains(&p.number) || train.iter().any(|c| c.number == p.number) {
                return None;
            }
            let state = counting_check(p, &ahead, queued)?.state;
            matches!(state, CiState::Pending | CiState::Green).then_some((p, state))
        });
        match next {
            Some((p, state)) => train.push(Car {
                number: p.number,
                head: p.head_sha.as_str(),
                carries: matches!(state, CiState::Green) || !suspect(p, queued),
            }),
            None => break,
        }
    }
    train
}

/// True when merge check `m` was planned on the tip with exactly the train
/// ahead merged in, at the same heads, once the PRs that have left this base's
/// queue are taken out of it.
fn planned_on(m: &MergeCheck, train: &[(u32, &str)], queued: &HashSet<u32, Fnv>) -> bool {
    let mut still = m.ahead.iter().filter(|a| queued.contains(&a.number));
    let mut want = train.iter();
    loop {
        match (still.next(), want.next()) {
            (None, None) => return true,
            (Some(a), Some((n, head))) if a.number == *n && a.head == *head => {}
            _ => return false,
        }
    }
}
