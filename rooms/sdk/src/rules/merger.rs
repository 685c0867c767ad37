//! The built-in merger rules, as a pure function over the merger world's types.
//!
//! This file names its types only through `super::model`, so it compiles both
//! inside the room (against the generated WIT types) and natively in `hall`'s
//! benchmark (against the host's plain types), which keeps the wasm-versus-native
//! comparison honest: it is the same source.
//!
//! The walk, per base and oldest PR first:
//! - a PR that needs a person (no hallmark on its head, changes requested, a
//!   pending review request, CI the host gave up on) is held and claims nothing;
//!   so is any PR that depends on one, directly or not;
//! - every other PR claims its files; a PR touching a file an older PR claims
//!   waits for that PR, so PRs on disjoint files move in parallel lanes and each
//!   is rebased once, after what it overlaps with has merged;
//! - at its turn a PR that conflicts, or is behind on its own files, is rebased;
//!   a ready one merges, one per base per pass;
//! - a red base tip stops the line: nothing merges into it or is rebased onto it.
//!
//! And the guards on the merged result:
//! - a green that proves nothing (a required check never reported, a green
//!   check that ran no tests) is not green: the PR is put to a person;
//! - with `pre-merge-check` on, a PR whose base moved since its merge base
//!   merges only once the repository's checks passed on exactly the tree its
//!   merge would write (`merged-tree`); red there once is checked again (a
//!   flaky gate must not cost a dev run), red twice rebases it, so its dev run
//!   meets the failure on its own branch;
//! - the PRs that got that far form a train: up to `train` of them per base
//!   have merge checks at once, each on the tip with the PRs ahead of it merged
//!   in, in train order. When the ones ahead merge
//!   cleanly, the tip holds the very tree the next one was checked on, and it
//!   merges without a new check. The train keeps its order from pass to pass
//!   (the checks' plans carry it), and with `update = "conflicts"` a clean PR
//!   may ride behind train PRs on its own files. A tip
//!   whose tree passed a merge check does not make the next merge wait for its
//!   own CI; red still stops the line. A suspect (red on the tip alone, or on
//!   two trees) is checked where it stands, but carries nobody behind it until
//!   a check of its own is green;
//! - a PR touching a hot path (changed in `threshold` of the base's last
//!   `window` commits) must have been checked on a tree holding the tip, whatever
//!   `update` says: by the merge check when it is on, else by being rebased.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

use super::model::*;

/// Judges every queue in `input`. Refuses input that contradicts itself.
pub fn judge(input: &MergerInput) -> Result<MergerPlan, Failure> {
    judge_with(input, |_| None)
}

/// Judges like [`judge`], with one more reason to put a PR to a person:
/// `hold` returns a reason code for a PR that a person must merge. Such a PR is
/// held and claims nothing, exactly like one with a request for changes, so the
/// PRs behind it move on.
pub fn judge_with(
    input: &MergerInput,
    hold: impl Fn(&PrFacts) -> Option<String>,
) -> Result<MergerPlan, Failure> {
    let problems = input_problems(input);
    if !problems.is_empty() {
        return Err(Failure {
            message: format!("the merger input has {} problem(s)", problems.len()),
            problems,
        });
    }

    // Every PR's open dependencies, across bases: they may cross bases.
    let mut open: BTreeSet<u32> = input.open_prs.iter().copied().collect();
    let mut by_number: BTreeMap<u32, &PrFacts> = BTreeMap::new();
    for queue in &input.bases {
        for pr in &queue.prs {
            open.insert(pr.number);
            by_number.insert(pr.number, pr);
        }
    }
    let deps: BTreeMap<u32, Vec<u32>> = by_number
        .iter()
        .map(|(&number, pr)| {
            let mut list = dependencies(&pr.body);
            if let Some(parent) = pr.stacked_on {
                list.push(parent);
            }
            list.retain(|d| *d != number && open.contains(d));
            list.sort_unstable();
            list.dedup();
            (number, list)
        })
        .collect();

    // Who needs a person, then everyone who depends on them (to a fixed point,
    // which also catches cycles through a held PR).
    let mut person: BTreeMap<u32, Vec<String>> = BTreeMap::new();
    for (&number, pr) in &by_number {
        let mut reasons = person_reasons(pr);
        if let Some(reason) = hold(pr) {
            reasons.insert(0, reason);
        }
        if !reasons.is_empty() {
            person.insert(number, reasons);
        }
    }
    let mut behind_person: BTreeSet<u32> = BTreeSet::new();
    loop {
        let mut changed = false;
        for (&number, list) in &deps {
            if person.contains_key(&number) || behind_person.contains(&number) {
                continue;
            }
            if list
                .iter()
                .any(|d| person.contains_key(d) || behind_person.contains(d))
            {
                behind_person.insert(number);
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    let cyclic = cycle_members(&deps);

    let people = People {
        deps: &deps,
        person: &person,
        behind_person: &behind_person,
        cyclic: &cyclic,
    };
    let bases = input
        .bases
        .iter()
        .map(|queue| {
            let queued: HashSet<u32, Fnv> = queue.prs.iter().map(|p| p.number).collect();
            // The train as its merge checks already have it keeps its order.
            // A PR in it that does not get through this pass leaves it, and
            // the walk runs again without it, so no PR waits behind one that
            // no longer merges first; each round drops at least one PR.
            let mut dropped: HashSet<u32, Fnv> = HashSet::default();
            loop {
                let committed = if input.settings.pre_merge_check {
                    committed_train(queue, &queued, input.settings.train, &dropped)
                } else {
                    Vec::new()
                };
                let (decisions, left) = walk_base(input, &people, queue, &queued, &committed);
                if left.is_empty() {
                    return BasePlan {
                        base: queue.base.clone(),
                        line_stopped: matches!(queue.tip_ci, CiState::Red),
                        decisions,
                    };
                }
                dropped.extend(left);
            }
        })
        .collect();
    Ok(MergerPlan { bases })
}

/// Who waits on a person or on each other, across bases.
struct People<'a> {
    deps: &'a BTreeMap<u32, Vec<u32>>,
    person: &'a BTreeMap<u32, Vec<String>>,
    behind_person: &'a BTreeSet<u32>,
    cyclic: &'a BTreeSet<u32>,
}

/// One walk of a base's queue, oldest first, with the `committed` train ahead
/// of every PR that joins the train this pass: its PRs claim their files first
/// and keep their order, so an older PR that got ready later does not spoil the
/// merge checks running behind them. Returns the decisions and the committed
/// PRs that did not get through.
fn walk_base(
    input: &MergerInput,
    people: &People<'_>,
    queue: &BaseQueue,
    queued: &HashSet<u32, Fnv>,
    committed: &[Car<'_>],
) -> (Vec<Decision>, Vec<u32>) {
    let line_stopped = matches!(queue.tip_ci, CiState::Red);
    let hot = hot_paths(&input.settings, &queue.recent);
    let mut merging: Option<u32> = None;
    let mut unready: HashSet<u32, Fnv> = HashSet::default();
    let mut train: Vec<Car<'_>> = committed.to_vec();
    let mut left = Vec::new();
    let mut claims: Claims = Claims::default();
    for pr in &queue.prs {
        if committed.iter().any(|c| c.number == pr.number) {
            for file in &pr.files {
                claims.entry(file.as_str()).or_default().push(pr.number);
            }
        }
    }
    let mut decisions = Vec::with_capacity(queue.prs.len());
    for pr in &queue.prs {
        let empty = Vec::new();
        let my_deps = people.deps.get(&pr.number).unwrap_or(&empty);
        let place = train.iter().position(|c| c.number == pr.number);
        let in_committed = committed.iter().any(|c| c.number == pr.number);
        let mut joined = false;
        let decision = if let Some(reasons) = people.person.get(&pr.number) {
            decide(pr.number, Action::Hold, Vec::new(), reasons.clone())
        } else if people.behind_person.contains(&pr.number) {
            decide(
                pr.number,
                Action::Wait,
                my_deps.clone(),
                vec!["depends_on_held".into()],
            )
        } else if people.cyclic.contains(&pr.number) {
            decide(
                pr.number,
                Action::Hold,
                Vec::new(),
                vec!["dependency_cycle".into()],
            )
        } else {
            // A PR in the committed train sees only the ones ahead of it
            // there: everything else merges after it.
            let (overlapping, line_train) = match place {
                Some(k) => {
                    let ahead = carried(&train[..k]);
                    let mut over = claimers(&claims, &pr.files);
                    over.retain(|n| ahead.iter().any(|(a, _)| a == n));
                    (over, ahead)
                }
                None => (claimers(&claims, &pr.files), carried(&train)),
            };
            let turn = turn_decision(
                input,
                QueueFacts {
                    tip_ci: queue.tip_ci,
                    tip_checked: queue.tip_checked,
                    merge_in_flight: queue.merge_in_flight,
                    line_stopped,
                    hot: &hot,
                    queued,
                },
                pr,
                my_deps,
                overlapping,
                Line {
                    merging,
                    train: &line_train,
                    unready: &unready,
                },
            );
            if turn.unready {
                unready.insert(pr.number);
            }
            joined = turn.joins;
            // A suspect is checked where it stands but carries nobody behind
            // it until a check of its own comes back green.
            let carries = !suspect(pr, queued) || turn_green(&turn.decision);
            if !in_committed && turn.joins {
                train.push(Car {
                    number: pr.number,
                    head: pr.head_sha.as_str(),
                    carries,
                });
            }
            if turn.claims && !in_committed {
                for file in &pr.files {
                    claims.entry(file.as_str()).or_default().push(pr.number);
                }
            }
            if matches!(turn.decision.action, Action::Merge) {
                merging = Some(pr.number);
            }
            turn.decision
        };
        if in_committed && !joined {
            left.push(pr.number);
        }
        decisions.push(decision);
    }
    (decisions, left)
}

/// File claims of one base: path to the PRs claiming it, oldest first.
type Claims<'a> = HashMap<&'a str, Vec<u32>, Fnv>;

/// FNV-1a: a fixed, dependency-free hash for path keys. Fixed on purpose: the
/// standard random hasher would make the room import WASI randomness, and the
/// judgement must not depend on anything but its input.
type Fnv = BuildHasherDefault<FnvHasher>;

struct FnvHasher(u64);

impl Default for FnvHasher {
    fn default() -> Self {
        Self(0xcbf2_9ce4_8422_2325)
    }
}

impl Hasher for FnvHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
}

/// What a base contributes to a PR's decision at its turn.
#[derive(Clone, Copy)]
struct QueueFacts<'a> {
    tip_ci: CiState,
    tip_checked: bool,
    merge_in_flight: Option<u32>,
    line_stopped: bool,
    hot: &'a HashSet<&'a str, Fnv>,
    /// Every PR number in this base's queue.
    queued: &'a HashSet<u32, Fnv>,
}

/// Who is ahead on a base, as the walk has found so far.
#[derive(Clone, Copy)]
struct Line<'a> {
    /// The PR merging this pass.
    merging: Option<u32>,
    /// The train: the PRs ahead that got past their own CI to the
    /// merged-result stage (and were not put off by a red check on a
    /// predicted tip), in queue order, with their heads. They merge first, so
    /// a PR behind them is checked on the tip with them merged in.
    train: &'a [(u32, &'a str)],
    /// The PRs ahead that claim their files but are not ready themselves:
    /// being rebased, or waiting on their own CI.
    unready: &'a HashSet<u32, Fnv>,
}

/// A decision plus whether the PR claims its files, and whether it joins the
/// train (it merges after the PRs ahead in it, and before the ones behind).
struct Turn {
    decision: Decision,
    claims: bool,
    joins: bool,
    /// It claims, but is not ready: a ready PR behind may overtake it (see
    /// `rides_behind`).
    unready: bool,
}

/// The paths changed in at least `threshold` of the base's last `window`
/// commits; none when either is 0.
fn hot_paths<'a>(settings: &MergeSettings, recent: &'a [PathCount]) -> HashSet<&'a str, Fnv> {
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

fn turn_decision(
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

/// The merge check of `pr`'s current head that counts with `train` ahead of it,
/// the newest first. Merging next (no train): only a check of the very tree its
/// merge would write, whatever it was planned on, or one that says no check will
/// run on the tip itself. Behind a train: a check planned on the tip with the
/// same PRs ahead, at the same heads; PRs that have left the queue since
/// (merged, in the tree it checked) no longer count, and if one left without
/// merging, its turn finds a different tree and checks anew.
fn counting_check<'a>(
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
fn reds_on_tree(pr: &PrFacts, m: &MergeCheck) -> usize {
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
fn suspect(pr: &PrFacts, queued: &HashSet<u32, Fnv>) -> bool {
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
fn turn_green(decision: &Decision) -> bool {
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
struct Car<'a> {
    number: u32,
    head: &'a str,
    carries: bool,
}

/// The PRs merged in ahead of whatever comes after `cars`: the ones that carry.
fn carried<'a>(cars: &[Car<'a>]) -> Vec<(u32, &'a str)> {
    cars.iter()
        .filter(|c| c.carries)
        .map(|c| (c.number, c.head))
        .collect()
}

/// How many red merge checks `pr`'s head has had, on any tree.
fn reds_at_head(pr: &PrFacts) -> usize {
    pr.merge_checks
        .iter()
        .filter(|c| c.head == pr.head_sha && matches!(c.state, CiState::Red))
        .count()
}

/// The train its merge checks already form: greedily from the tip, the PR
/// whose counting check (see `counting_check`) with the carrying PRs found so
/// far ahead is pending or green. At most `train` PRs (0 read as 1), none of
/// those in `dropped`.
fn committed_train<'a>(
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

fn decide(number: u32, action: Action, mut waits_for: Vec<u32>, reasons: Vec<String>) -> Decision {
    waits_for.sort_unstable();
    waits_for.dedup();
    Decision {
        number,
        action,
        waits_for,
        check_onto: Vec::new(),
        reasons,
    }
}

/// Reasons a PR needs a person before the merger can move it, in priority order.
fn person_reasons(pr: &PrFacts) -> Vec<String> {
    let mut reasons = Vec::new();
    let hallmarked = pr.hallmark_sha.as_deref() == Some(pr.head_sha.as_str());
    // A PR being rebased has a new head whose hallmark is carried once it lands.
    if !hallmarked && !pr.rebasing {
        reasons.push("not_hallmarked".to_string());
    }
    if pr.changes_requested {
        reasons.push("changes_requested".to_string());
    }
    if !pr.review_requests.is_empty() {
        reasons.push("review_requested".to_string());
    }
    if matches!(pr.ci, CiState::Abandoned) {
        reasons.push("ci_abandoned".to_string());
    }
    reasons
}

/// The PRs already claiming any of `files`, ascending.
fn claimers(claims: &Claims, files: &[String]) -> Vec<u32> {
    let mut out: Vec<u32> = Vec::new();
    for file in files {
        if let Some(list) = claims.get(file.as_str()) {
            out.extend(list.iter().copied());
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

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

/// The PRs on a dependency cycle (each waits for itself through the others).
fn cycle_members(deps: &BTreeMap<u32, Vec<u32>>) -> BTreeSet<u32> {
    let mut cyclic = BTreeSet::new();
    for &start in deps.keys() {
        // Depth-first search from `start`, looking for a way back to it.
        let mut stack: Vec<u32> = deps.get(&start).cloned().unwrap_or_default();
        let mut seen: BTreeSet<u32> = BTreeSet::new();
        while let Some(n) = stack.pop() {
            if n == start {
                cyclic.insert(start);
                break;
            }
            if seen.insert(n)
                && let Some(next) = deps.get(&n)
            {
                stack.extend(next.iter().copied());
            }
        }
    }
    cyclic
}

fn input_problems(input: &MergerInput) -> Vec<String> {
    let mut problems = Vec::new();
    let mut seen: BTreeMap<u32, usize> = BTreeMap::new();
    let mut bases: BTreeSet<&str> = BTreeSet::new();
    for (b, queue) in input.bases.iter().enumerate() {
        if queue.base.trim().is_empty() {
            problems.push(format!("bases[{b}].base is empty"));
        } else if !bases.insert(queue.base.as_str()) {
            problems.push(format!("bases[{b}].base `{}` appears twice", queue.base));
        }
        for (p, pr) in queue.prs.iter().enumerate() {
            if let Some(first) = seen.insert(pr.number, b) {
                problems.push(format!(
                    "bases[{b}].prs[{p}]: PR #{} is also queued on bases[{first}]",
                    pr.number
                ));
            }
            if pr.head_sha.trim().is_empty() {
                problems.push(format!("bases[{b}].prs[{p}].head_sha is empty"));
            }
        }
    }
    problems
}

/// The PR numbers a PR body declares it depends on.
///
/// A dependency line starts (after any list marker) with `Depends on`,
/// `Depends-On:`, `Blocked by` or `After`, in any case, and names PRs as `#N`
/// or as pull-request URLs ending in `/pull/N`.
pub fn dependencies(body: &str) -> Vec<u32> {
    const KEYWORDS: [&str; 4] = ["depends on", "depends-on:", "blocked by", "after"];
    let mut out = Vec::new();
    for line in body.lines() {
        let line = line
            .trim_start()
            .trim_start_matches(['-', '*', '+', '>'])
            .trim_start();
        let lower = line.to_ascii_lowercase();
        let Some(keyword) = KEYWORDS.iter().find(|k| lower.starts_with(*k)) else {
            continue;
        };
        let rest = &line[keyword.len()..];
        // `After` must be a word on its own ("Aftermath" is not a dependency).
        if rest.starts_with(|c: char| c.is_ascii_alphanumeric()) {
            continue;
        }
        for marker in ["#", "/pull/"] {
            let mut from = 0;
            while let Some(at) = rest[from..].find(marker) {
                let start = from + at + marker.len();
                let digits: String = rest[start..]
                    .chars()
                    .take_while(char::is_ascii_digit)
                    .collect();
                if let Ok(n) = digits.parse::<u32>() {
                    out.push(n);
                }
                from = start;
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// True when `path` matches one of the `[merge] lit` patterns.
///
/// A pattern ending in `/` matches everything under that directory; `**`
/// matches across directories, `*` and `?` within one. A pattern with no `/`
/// matches a file name at any depth, as in `.gitignore`.
pub fn lit_match(patterns: &[String], path: &str) -> bool {
    patterns.iter().any(|pattern| {
        let pattern = pattern.trim_start_matches("./");
        if let Some(dir) = pattern.strip_suffix('/') {
            return path.starts_with(pattern) || path == dir;
        }
        if pattern.contains('/') {
            glob(pattern.as_bytes(), path.as_bytes())
        } else {
            let name = path.rsplit('/').next().unwrap_or(path);
            glob(pattern.as_bytes(), name.as_bytes())
        }
    })
}

fn glob(pattern: &[u8], text: &[u8]) -> bool {
    match pattern.split_first() {
        None => text.is_empty(),
        Some((b'*', rest)) if rest.first() == Some(&b'*') => {
            let after = &rest[1..];
            if after.is_empty() {
                return true;
            }
            let rest = after.strip_prefix(b"/").unwrap_or(after);
            // `**` stands for whole directories, so it resumes only at a boundary.
            (0..=text.len()).any(|i| (i == 0 || text[i - 1] == b'/') && glob(rest, &text[i..]))
        }
        Some((b'*', rest)) => {
            let segment = text.iter().position(|&c| c == b'/').unwrap_or(text.len());
            (0..=segment).any(|i| glob(rest, &text[i..]))
        }
        Some((b'?', rest)) => {
            matches!(text.first(), Some(&c) if c != b'/') && glob(rest, &text[1..])
        }
        Some((c, rest)) => text.first() == Some(c) && glob(rest, &text[1..]),
    }
}
