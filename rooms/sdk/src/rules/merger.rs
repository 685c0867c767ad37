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

// The rules file is included by path (from the SDK and from hall's benchmark), so its
// modules are found by path too, the same way from both.
#[path = "merger/lit.rs"]
mod lit;
#[path = "merger/train.rs"]
mod train;
#[path = "merger/turn.rs"]
mod turn;

pub use lit::lit_match;
use train::{Car, carried, committed_train, suspect, turn_green};
use turn::{Line, QueueFacts, hot_paths, turn_decision};

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
