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
//! And the guards on the merged result (from `hall:rooms@0.4`):
//! - a green that proves nothing (a required check never reported, a green
//!   check that ran no tests) is not green: the PR is put to a person;
//! - with `pre-merge-check` on, a PR whose base moved since its merge base
//!   merges only once the repository's checks passed on it merged onto the
//!   current tip; red there rebases it, so its dev run meets the failure on its
//!   own branch. One merge check runs per base at a time, for the PR that would
//!   merge next: each merge moves the tip and spoils every other check;
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

    let bases = input
        .bases
        .iter()
        .map(|queue| {
            let line_stopped = matches!(queue.tip_ci, CiState::Red);
            let hot = hot_paths(&input.settings, &queue.recent);
            let mut claims: Claims = Claims::default();
            let mut merging: Option<u32> = None;
            let mut next_in_line: Option<u32> = None;
            let mut decisions = Vec::with_capacity(queue.prs.len());
            for pr in &queue.prs {
                let empty = Vec::new();
                let my_deps = deps.get(&pr.number).unwrap_or(&empty);
                let decision = if let Some(reasons) = person.get(&pr.number) {
                    decide(pr.number, Action::Hold, Vec::new(), reasons.clone())
                } else if behind_person.contains(&pr.number) {
                    decide(
                        pr.number,
                        Action::Wait,
                        my_deps.clone(),
                        vec!["depends_on_held".into()],
                    )
                } else if cyclic.contains(&pr.number) {
                    decide(
                        pr.number,
                        Action::Hold,
                        Vec::new(),
                        vec!["dependency_cycle".into()],
                    )
                } else {
                    let overlapping = claimers(&claims, &pr.files);
                    let turn = turn_decision(
                        input,
                        QueueFacts {
                            tip_sha: &queue.tip_sha,
                            tip_ci: queue.tip_ci,
                            merge_in_flight: queue.merge_in_flight,
                            line_stopped,
                            hot: &hot,
                        },
                        pr,
                        my_deps,
                        overlapping,
                        Line {
                            merging,
                            next: next_in_line,
                        },
                    );
                    if turn.in_line && next_in_line.is_none() {
                        next_in_line = Some(pr.number);
                    }
                    if turn.claims {
                        for file in &pr.files {
                            claims.entry(file.as_str()).or_default().push(pr.number);
                        }
                    }
                    if matches!(turn.decision.action, Action::Merge) {
                        merging = Some(pr.number);
                    }
                    turn.decision
                };
                decisions.push(decision);
            }
            BasePlan {
                base: queue.base.clone(),
                line_stopped,
                decisions,
            }
        })
        .collect();
    Ok(MergerPlan { bases })
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
    tip_sha: &'a str,
    tip_ci: CiState,
    merge_in_flight: Option<u32>,
    line_stopped: bool,
    hot: &'a HashSet<&'a str, Fnv>,
}

/// Who is ahead on a base, as the walk has found so far.
#[derive(Clone, Copy)]
struct Line {
    /// The PR merging this pass.
    merging: Option<u32>,
    /// The first PR that got past its own CI to the merged-result stage: it
    /// merges next, so it alone has its merge check run.
    next: Option<u32>,
}

/// A decision plus whether the PR claims its files, and whether it got as far
/// as the merged-result stage.
struct Turn {
    decision: Decision,
    claims: bool,
    in_line: bool,
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
        in_line: false,
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
        in_line: false,
    };
    if !deps.is_empty() {
        return claim(Action::Wait, deps.to_vec(), "depends_on_open");
    }
    if !overlapping.is_empty() {
        return claim(Action::Wait, overlapping, "claimed_files");
    }
    // From here on it is this PR's turn.
    if pr.rebasing {
        return claim(Action::Wait, Vec::new(), "rebasing");
    }
    if !pr.lit_cleared && pr.files.iter().any(|f| lit_match(&input.settings.lit, f)) {
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
    if settings.pre_merge_check && moved {
        let current = pr.merge_check.as_ref().filter(|m| {
            !queue.tip_sha.is_empty() && m.onto == queue.tip_sha && m.head == pr.head_sha
        });
        let state = current.map_or(CiState::Missing, |m| m.state);
        let skipped = current.and_then(|m| m.skipped.as_deref());
        let in_line = |action: Action, waits_for: Vec<u32>, reason: &str| Turn {
            in_line: true,
            ..claim(action, waits_for, reason)
        };
        match state {
            CiState::Green => {}
            // Already running on this tip: let it finish.
            CiState::Pending => return in_line(Action::Wait, Vec::new(), "merge_check_pending"),
            // The merged tree fails: the PR's own branch must meet it.
            CiState::Red => return claim(Action::Rebase, Vec::new(), "merge_check_red"),
            // It will not run (no checks to run, the host cannot build the
            // tree): merging unchecked is what this rule exists to prevent.
            CiState::Missing if skipped.is_some() => return hold("merge_check_skipped"),
            CiState::Abandoned => return hold("merge_check_abandoned"),
            CiState::Missing => {
                // Another PR merges first and would move the tip under this check.
                if let Some(first) = line.next {
                    return claim(Action::Wait, vec![first], "merge_check_queued");
                }
                return in_line(Action::Wait, Vec::new(), "merge_check_missing");
            }
        }
    }
    // From here on it is ready but for the base: it merges next.
    let next = |waits_for: Vec<u32>, reason: &str| Turn {
        in_line: true,
        ..claim(Action::Wait, waits_for, reason)
    };
    if let Some(n) = queue.merge_in_flight {
        return next(vec![n], "merge_in_flight");
    }
    match queue.tip_ci {
        CiState::Pending => return next(Vec::new(), "base_ci_pending"),
        CiState::Abandoned => return next(Vec::new(), "base_ci_abandoned"),
        CiState::Green | CiState::Missing | CiState::Red => {}
    }
    if let Some(n) = line.merging {
        return claim(Action::Wait, vec![n], "one_merge_at_a_time");
    }
    Turn {
        in_line: true,
        ..claim(Action::Merge, Vec::new(), "ready")
    }
}

fn decide(number: u32, action: Action, mut waits_for: Vec<u32>, reasons: Vec<String>) -> Decision {
    waits_for.sort_unstable();
    waits_for.dedup();
    Decision {
        number,
        action,
        waits_for,
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
