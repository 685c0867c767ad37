//! One PR's turn in the walk of its base: whether it waits (and for whom), is
//! rebased, held for a person or merged, and whether it claims its files and joins
//! the train.

use std::collections::HashSet;

use super::super::model::*;
use super::train::{counting_check, reds_at_head, reds_on_tree};
use super::{Fnv, decide, lit_match};

/// What a base contributes to a PR's decision at its turn.
#[derive(Clone, Copy)]
pub(super) struct QueueFacts<'a> {
    pub(super) tip_ci: CiState,
    pub(super) tip_checked: bool,
    pub(super) merge_in_flight: Option<u32>,
    pub(super) line_stopped: bool,
    pub(super) hot: &'a HashSet<&'a str, Fnv>,
    /// Every PR number in this base's queue.
    pub(super) queued: &'a HashSet<u32, Fnv>,
}

/// Who is ahead on a base, as the walk has found so far.
#[derive(Clone, Copy)]
pub(super) struct Line<'a> {
    /// The PR merging this pass.
    pub(super) merging: Option<u32>,
    /// The train: the PRs ahead that got past their own CI to the
    /// merged-result stage (and were not put off by a red check on a
    /// predicted tip), in queue order, with their heads. They merge first, so
    /// a PR behind them is checked on the tip with them merged in.
    pub(super) train: &'a [(u32, &'a str)],
    /// The PRs ahead that claim their files but are not ready themselves:
    /// being rebased, or waiting on their own CI.
    pub(super) unready: &'a HashSet<u32, Fnv>,
}

/// A decision plus whether the PR claims its files, and whether it joins the
/// train (it merges after the PRs ahead in it, and before the ones behind).
pub(super) struct Turn {
    pub(super) decision: Decision,
    pub(super) claims: bool,
    pub(super) joins: bool,
    /// It claims, but is not ready: a ready PR behind may overtake it (see
    /// `rides_behind`).
    pub(super) unready: bool,
}

/// The paths changed in at least `threshold` of the base's last `window`
/// commits; none when either is 0.
pub(super) fn hot_paths<'a>(
    settings: &MergeSettings,
    recent: &'a [PathCount],
) -> HashSet<&'a str, Fnv> {
    if settings.hot.window == 0 || settings.hot.threshold == 0 {
        return HashSet::default();
    }
    recent
        .iter()
        .filter(|p| p.commits >= settings.hot.threshold)
        .map(|p| p.path.as_str())
        .collect()
}

/// Why a green CI summary proves nothing, if it doesn't: a required check
/// never reported, or a green check that ran no tests. With required checks
/// named, only those are asked for their test counts (a lint job runs none).
fn vacuous_green(settings: &MergeSettings, pr: &PrFacts) -> Option<&'static str> {
    let required = &settings.required_checks;
    let reported = |name: &str| {
        pr.checks
            .iter()
            .any(|c| c.name == name && !matches!(c.state, CiState::Missing))
    };
    if required.iter().any(|name| !reported(name)) {
        return Some("required_check_missing");
    }
    let counted = |c: &&CheckFact| required.is_empty() || required.contains(&c.name);
    if pr
        .checks
        .iter()
        .filter(counted)
        .any(|c| matches!(c.state, CiState::Green) && c.tests == Some(0))
    {
        return Some("no_tests_ran");
    }
    None
}

/// The state of a required check that has reported something other than green,
/// which outranks a green summary.
fn required_state(settings: &MergeSettings, pr: &PrFacts) -> Option<CiState> {
    let mut worst = None;
    for c in &pr.checks {
        if !settings.required_checks.contains(&c.name) {
            continue;
        }
        match c.state {
            CiState::Red => return Some(CiState::Red),
            CiState::Pending | CiState::Abandoned => worst = Some(c.state),
            CiState::Green | CiState::Missing => {}
        }
    }
    worst
}

pub(super) fn turn_decision(
    input: &MergerInput,
    queue: QueueFacts,
    pr: &PrFacts,
    deps: &[u32],
    overlapping: Vec<u32>,
    line: Line,
) -> Turn {
    let claim = |action: Action, waits_for: Vec<u32>, reason: &str| Turn {
        decision: decide(pr.number, action, waits_for, vec![reason.to_string()]),
        claims: true,
        joins: false,
        unready: UNREADY.contains(&reason),
    };
    // Put to a person at its turn: it claims nothing, so the PRs behind move on.
    let hold = |reason: &str| Turn {
        decision: decide(
            pr.number,
            Action::Hold,
            Vec::new(),
            vec![reason.to_string()],
        ),
        claims: false,
        joins: false,
        unready: false,
    };
    if !deps.is_empty() {
        return claim(Action::Wait, deps.to_vec(), "depends_on_open");
    }
    let lit = !pr.lit_cleared && pr.files.iter().any(|f| lit_match(&input.settings.lit, f));
    if !overlapping.is_empty() && !rides_behind(input, pr, lit, &overlapping, line) {
        return claim(Action::Wait, overlapping, "claimed_files");
    }
    // From here on it is this PR's turn.
    if pr.rebasing {
        return claim(Action::Wait, Vec::new(), "rebasing");
    }
    if lit {
        // Put to a person only now that nothing claims its files.
        return hold("lit");
    }
    let conflicting = matches!(pr.mergeable, MergeableState::Conflicting);
    let behind = matches!(input.settings.update, UpdateMode::Files) && behind_on_files(pr);
    if conflicting || behind {
        if queue.line_stopped {
            return claim(Action::Wait, Vec::new(), "base_red");
        }
        let reason = if conflicting {
            "conflicting"
        } else {
            "behind_on_files"
        };
        return claim(Action::Rebase, Vec::new(), reason);
    }
    let moved = !pr.base_commits.is_empty();
    let settings = &input.settings;
    // A hot path must be checked with the tip in: the merge check does that when
    // it is on (below); without it only a rebase does. Not rebasing a hot PR
    // that the merge check covers also keeps it from being rebased after every
    // merge in another lane, which could starve it.
    if moved && !settings.pre_merge_check && pr.files.iter().any(|f| queue.hot.contains(f.as_str()))
    {
        if queue.line_stopped {
            return claim(Action::Wait, Vec::new(), "base_red");
        }
        return claim(Action::Rebase, Vec::new(), "hot_file_stale");
    }
    if matches!(pr.mergeable, MergeableState::Unknown) {
        return claim(Action::Wait, Vec::new(), "mergeable_unknown");
    }
    if settings.require_ci {
        let summary = match (pr.ci, required_state(settings, pr)) {
            (CiState::Green, Some(worse)) => worse,
            (ci, _) => ci,
        };
        let ci = match summary {
            CiState::Green => None,
            CiState::Red => Some("ci_red"),
            CiState::Pending => Some("ci_pending"),
            CiState::Missing => Some("ci_missing"),
            // Caught by `person_reasons`; kept for completeness.
            CiState::Abandoned => Some("ci_abandoned"),
        };
        if let Some(reason) = ci {
            return claim(Action::Wait, Vec::new(), reason);
        }
        // A vacuous green is neither green nor red. Not red: nothing failed,
        // and a dev run has nothing to fix. Not a wait either: every reported
        // check has finished, so waiting brings no new facts; a job that never
        // started (a path filter, a renamed job) or a test step that selected
        // nothing stays that way on a re-run. A person decides, and the PRs
        // behind move on meanwhile.
        if let Some(reason) = vacuous_green(settings, pr) {
            return hold(reason);
        }
    }
    if queue.line_stopped {
        return claim(Action::Wait, Vec::new(), "base_red");
    }
    let ahead: Vec<u32> = line.train.iter().map(|(n, _)| *n).collect();
    let joins = |action: Action, waits_for: Vec<u32>, reason: &str| Turn {
        joins: true,
        ..claim(action, waits_for, reason)
    };
    if settings.pre_merge_check && (moved || !ahead.is_empty()) {
        let check = counting_check(pr, line.train, queue.queued);
        let state = check.map_or(CiState::Missing, |m| m.state);
        let skipped = check.and_then(|m| m.skipped.as_deref());
        match state {
            CiState::Green if ahead.is_empty() => {}
            CiState::Green => return joins(Action::Wait, ahead, "merge_check_ahead"),
            // Already running: let it finish.
            CiState::Pending => return joins(Action::Wait, ahead, "merge_check_pending"),
            // The merged tree fails. Once is not yet proof: a flaky gate would
            // send the PR back for a dev run it does not need, so that tree is
            // checked once more. Red twice, or no tree at all (git could not
            // merge it), and the PR's own branch must meet it.
            CiState::Red if ahead.is_empty() => {
                if check.is_some_and(|m| reds_on_tree(pr, m) == 1) && reds_at_head(pr) == 1 {
                    return joins(Action::Wait, Vec::new(), "merge_check_rerun");
                }
                return claim(Action::Rebase, Vec::new(), "merge_check_red");
            }
            // Red with others merged in first: it may be theirs. It leaves the
            // train and meets that tree again once they merged (or a new one
            // if they did not).
            CiState::Red => return claim(Action::Wait, ahead, "merge_check_red_ahead"),
            // It will not run (no checks to run, the host cannot build the
            // tree): merging unchecked is what this rule exists to prevent.
            CiState::Missing if skipped.is_some() => return hold("merge_check_skipped"),
            CiState::Abandoned => return hold("merge_check_abandoned"),
            CiState::Missing => {
                if ahead.len() >= settings.train.max(1) as usize {
                    return claim(Action::Wait, ahead, "merge_check_queued");
                }
                let mut turn = joins(Action::Wait, ahead.clone(), "merge_check_missing");
                turn.decision.check_onto = ahead;
                return turn;
            }
        }
    }
    // From here on it is ready but for the base: it merges next.
    let next = |waits_for: Vec<u32>, reason: &str| joins(Action::Wait, waits_for, reason);
    if let Some(n) = queue.merge_in_flight {
        return next(vec![n], "merge_in_flight");
    }
    match queue.tip_ci {
        // A tip whose tree the repository's checks passed before it became the
        // tip need not hold the line for its own run; red still stops it.
        CiState::Pending if queue.tip_checked => {}
        CiState::Pending => return next(Vec::new(), "base_ci_pending"),
        CiState::Abandoned => return next(Vec::new(), "base_ci_abandoned"),
        CiState::Green | CiState::Missing | CiState::Red => {}
    }
    if let Some(n) = line.merging {
        return claim(Action::Wait, vec![n], "one_merge_at_a_time");
    }
    joins(Action::Merge, Vec::new(), "ready")
}

/// True when a PR touching files that PRs ahead claim may still join the train
/// behind them: every one of them is in the train, so its merge check runs on
/// the tip with them merged in, and with `update = "conflicts"` their merging
/// does not make it rebase. It must merge cleanly now (a conflicting PR is
/// rebased once, after they merged), not be on its way back from a rebase, and
/// not touch a lit path (put to a person only when nothing claims its files).
/// A textual conflict with one ahead shows in its check, red on the predicted
/// tip: it then waits for them as claims would have it.
fn rides_behind(
    input: &MergerInput,
    pr: &PrFacts,
    lit: bool,
    overlapping: &[u32],
    line: Line<'_>,
) -> bool {
    let settings = &input.settings;
    settings.pre_merge_check
        && matches!(settings.update, UpdateMode::Conflicts)
        && matches!(pr.mergeable, MergeableState::Mergeable)
        && !pr.rebasing
        && !lit
        && overlapping
            .iter()
            .all(|n| line.unready.contains(n) || line.train.iter().any(|(t, _)| t == n))
}

/// The reasons a PR waits on itself: a ready PR behind it on the same files may
/// overtake it where `rides_behind` allows.
const UNREADY: [&str; 8] = [
    "claimed_files",
    "rebasing",
    "conflicting",
    "behind_on_files",
    "hot_file_stale",
    "ci_pending",
    "ci_red",
    "ci_missing",
];

/// True when a base commit since the merge base touches one of the PR's files.
fn behind_on_files(pr: &PrFacts) -> bool {
    if pr.base_commits.is_empty() {
        return false;
    }
    let mine: HashSet<&str, Fnv> = pr.files.iter().map(String::as_str).collect();
    pr.base_commits
        .iter()
        .any(|c| c.files.iter().any(|f| mine.contains(f.as_str())))
}
