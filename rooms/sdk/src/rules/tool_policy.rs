//! The built-in tool-policy rules, as a pure function over the tool-policy
//! world's types (named only through `super::model`, so the file also compiles
//! natively, against hall's plain types).
//!
//! The room is asked before every tool call, so each detector reads the window
//! once or a few times (O(window), oscillation O(window × 3)) and nothing here
//! allocates more than a list of the window's keys.
//!
//! | detector | counts | nudges at | blocks at, given its evidence |
//! |---|---|---|---|
//! | `repetition` | calls with the same key, this one included | 3 | 5, when all but one returned the same thing |
//! | `oscillation` | full laps of a cycle of 2 to 4 calls | 2 | 3 |
//! | `error-streak` | past calls that failed in a row, up to this one | 4 | 6 |
//! | `same-failure` | runs a check failed in a row with the same output, on a commit or `hall fixed` | 2 | 3 |
//!
//! The detectors run in that order; the answer is the strongest action among
//! theirs, and a tie goes to the earlier one. A detector whose mode is `off` does
//! not run; one missing from the settings runs with the defaults above.
//! Thresholds are made safe before use: `nudge-at` at least 2 (1 would nudge on
//! every call) and `block-at` at least `nudge-at`.
//!
//! [`guard`] states, for given settings, what each running detector needs before
//! it can fire; `hall` checks those conditions itself and skips the room for a
//! call that meets none. Each detector's guard sits beside it, and must stay at
//! least as wide as the detector: a guard narrower than its detector silences it.

use std::collections::BTreeMap;

use super::model::*;

/// Each built-in detector with its default `nudge-at` and `block-at`, in the
/// order the detectors run. `hall`'s config takes its defaults from here too.
pub const DEFAULTS: [(&str, u32, u32); 4] = [
    ("repetition", 3, 5),
    ("oscillation", 2, 3),
    ("error-streak", 4, 6),
    ("same-failure", 2, 3),
];

/// The longest reason, in bytes; longer ones are cut on a character boundary.
const MAX_REASON: usize = 600;

/// One detector: reads the input with its thresholds and answers, when it
/// fires, its action and its reason.
type Detector = fn(&PolicyInput, Thresholds) -> Option<(Action, String)>;

/// The detectors, one per entry of [`DEFAULTS`], in the same order.
const DETECTORS: [Detector; 4] = [repetition, oscillation, error_streak, same_failure];

/// Each detector's guard for its thresholds: a condition every input it fires
/// on meets. One per entry of [`DEFAULTS`], in the same order.
const GUARDS: [fn(Thresholds) -> Trigger; 4] = [
    repetition_guard,
    oscillation_guard,
    error_streak_guard,
    same_failure_guard,
];

/// The longest cycle oscillation looks for, in calls.
const LONGEST_CYCLE: usize = 4;

/// A detector's thresholds, made safe.
#[derive(Clone, Copy)]
struct Thresholds {
    nudge_at: u32,
    block_at: u32,
}

impl Thresholds {
    fn safe(nudge_at: u32, block_at: u32) -> Self {
        let nudge_at = nudge_at.max(2);
        Self {
            nudge_at,
            block_at: block_at.max(nudge_at),
        }
    }

    /// The action for a count against these thresholds.
    fn action(self, count: u32) -> Option<Action> {
        if count >= self.block_at {
            Some(Action::Deny)
        } else if count >= self.nudge_at {
            Some(Action::Nudge)
        } else {
            None
        }
    }
}

/// Decides one call by the built-in detectors.
pub fn decide(input: &PolicyInput) -> PolicyVerdict {
    let mut best: Option<(Action, &str, String)> = None;
    for ((name, nudge_at, block_at), detector) in DEFAULTS.into_iter().zip(DETECTORS) {
        let Some(thresholds) = thresholds(&input.settings, name, nudge_at, block_at) else {
            continue;
        };
        let Some((action, reason)) = detector(input, thresholds) else {
            continue;
        };
        // Strictly stronger only: a tie keeps the earlier detector.
        if best
            .as_ref()
            .is_none_or(|(held, _, _)| rank(action) > rank(*held))
        {
            best = Some((action, name, reason));
        }
    }
    match best {
        Some((action, detector, reason)) if rank(action) > rank(Action::Allow) => PolicyVerdict {
            action,
            detector: detector.to_string(),
            reason: clean(&reason),
        },
        _ => PolicyVerdict {
            action: Action::Allow,
            detector: String::new(),
            reason: String::new(),
        },
    }
}

/// The conditions under which [`decide`], given these settings, may answer
/// anything but `allow`: one trigger per detector that runs. A detector that is
/// `off` adds none, so with every detector off the guard is empty.
pub fn guard(settings: &[DetectorSetting]) -> Vec<Trigger> {
    DEFAULTS
        .into_iter()
        .zip(GUARDS)
        .filter_map(|((name, nudge_at, block_at), guard)| {
            thresholds(settings, name, nudge_at, block_at).map(guard)
        })
        .collect()
}

/// How strong an action is: deny over ask over nudge over allow.
fn rank(action: Action) -> u8 {
    match action {
        Action::Allow => 0,
        Action::Nudge => 1,
        Action::Ask => 2,
        Action::Deny => 3,
    }
}

/// The detector's thresholds from the settings (the first entry with its name),
/// or the defaults when it has none; `None` when its mode is `off`.
fn thresholds(
    settings: &[DetectorSetting],
    name: &str,
    nudge_at: u32,
    block_at: u32,
) -> Option<Thresholds> {
    match settings.iter().find(|s| s.name == name) {
        Some(setting) if matches!(setting.mode, Mode::Off) => None,
        Some(setting) => Some(Thresholds::safe(setting.nudge_at, setting.block_at)),
        None => Some(Thresholds::safe(nudge_at, block_at)),
    }
}

/// A count as the thresholds' type; a window never holds four billion calls,
/// but a room must not panic on any input.
fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

// ---------------------------------------------------------------- repetition

/// What a group of earlier calls with the same key had in common.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Same {
    /// They were blocked.
    Blocked,
    /// They failed with the same error.
    Failed,
    /// They succeeded with the same output.
    Returned,
}

fn repetition(input: &PolicyInput, t: Thresholds) -> Option<(Action, String)> {
    let call = &input.call;
    // Reading the same file again is how an agent looks; it changes nothing.
    if call.read_only {
        return None;
    }
    let mut prior = 0usize;
    // (what they shared, the output hash) -> how many earlier calls shared it.
    let mut groups: BTreeMap<(Same, &str), u32> = BTreeMap::new();
    for past in input.window.iter().filter(|p| p.call.key == call.key) {
        prior += 1;
        let group = match past.outcome {
            Outcome::Blocked => (Same::Blocked, ""),
            // Nothing came back, so nothing shows the calls were alike.
            _ if past.output_hash.is_empty() => continue,
            Outcome::Error => (Same::Failed, past.output_hash.as_str()),
            Outcome::Success => (Same::Returned, past.output_hash.as_str()),
        };
        *groups.entry(group).or_insert(0) += 1;
    }
    let repeats = count(prior).saturating_add(1);
    // The largest group; among equals, the first in `Same`'s order, so the
    // reason does not depend on the hashes.
    let evidence = groups
        .iter()
        .map(|(&(same, _), &n)| (n, std::cmp::Reverse(same)))
        .max()
        .map(|(n, std::cmp::Reverse(same))| (same, n));
    let evident = evidence.map_or(0, |(_, n)| n);
    let action = if repeats >= t.block_at && evident >= t.block_at - 1 {
        Action::Deny
    } else if repeats >= t.nudge_at {
        // Running the tests again after an edit is the normal loop; only the
        // same result again says it is going nowhere.
        let builds = call
            .command
            .as_ref()
            .is_some_and(|c| matches!(c.kind, CommandKind::Test | CommandKind::Build));
        if builds && evident < t.nudge_at - 1 {
            return None;
        }
        Action::Nudge
    } else {
        return None;
    };
    // One earlier call alike is no pattern; two or more are.
    let seen = match evidence.filter(|&(_, n)| n >= 2) {
        Some((Same::Blocked, n)) => format!(", and it was blocked before ({n} times)"),
        Some((Same::Failed, n)) => format!(", and it failed the same way {n} times"),
        Some((Same::Returned, n)) => format!(", and it returned identical output {n} times"),
        None => String::new(),
    };
    Some((
        action,
        format!(
            "`{}` would run for the {} time with the same input{seen}. Doing it again will not \
             change the answer: read the error, change your approach, or ask a person with `hall ask`.",
            call.preview,
            ordinal(repeats)
        ),
    ))
}

/// Repetition counts every earlier call in the window with the call's key (any
/// outcome, read-only or not) plus the call itself, and nudges at the least; it
/// leaves read-only calls alone.
fn repetition_guard(t: Thresholds) -> Trigger {
    Trigger::Recurs(Recurrence {
        times: t.nudge_at - 1,
        last: 0,
        reads_exempt: true,
    })
}

/// `1st`, `2nd`, `3rd`, `4th`, `11th`, `22nd`…
fn ordinal(n: u32) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

// ---------------------------------------------------------------- oscillation

fn oscillation(input: &PolicyInput, t: Thresholds) -> Option<(Action, String)> {
    let call = &input.call;
    // Looking around between edits is no cycle.
    if call.read_only {
        return None;
    }
    let calls: Vec<&ToolCall> = input
        .window
        .iter()
        .map(|p| &p.call)
        .filter(|c| !c.read_only)
        .chain(std::iter::once(call))
        .collect();
    let (period, laps) = (2..=LONGEST_CYCLE).find_map(|p| laps(&calls, p).map(|laps| (p, laps)))?;
    let action = t.action(count(laps))?;
    let cycle: Vec<String> = calls[calls.len() - period..]
        .iter()
        .map(|c| format!("`{}`", c.preview))
        .collect();
    Some((
        action,
        format!(
            "These calls keep coming back in a cycle ({}), {laps} laps so far. Step back: say \
             what the goal is, read the tests, or ask a person with `hall ask`.",
            cycle.join(" ↔ ")
        ),
    ))
}

/// Two laps of a cycle of `p` calls end with the call itself equal to the call
/// `p` before it, and `laps` only ever compares calls that are not read-only: the
/// call's key is among the window's last [`LONGEST_CYCLE`] such calls. A
/// read-only call is no part of a cycle.
fn oscillation_guard(_: Thresholds) -> Trigger {
    Trigger::Recurs(Recurrence {
        times: 1,
        last: count(LONGEST_CYCLE),
        reads_exempt: true,
    })
}

/// The full laps of a cycle of `p` calls at the end of `calls`, when it has at
/// least two laps and more than one distinct call in it.
fn laps(calls: &[&ToolCall], p: usize) -> Option<usize> {
    let n = calls.len();
    if n < 2 * p {
        return None;
    }
    let tail = &calls[n - p..];
    // One key over and over is repetition's to judge.
    if tail.iter().all(|c| c.key == tail[0].key) {
        return None;
    }
    // The periodic tail: the last p calls, and every call before them that
    // equals the one p after it, going back until one does not.
    let periodic = p
        + (p..n)
            .rev()
            .take_while(|&i| calls[i].key == calls[i - p].key)
            .count();
    let laps = periodic / p;
    (laps >= 2).then_some(laps)
}

// ---------------------------------------------------------------- error streak

fn error_streak(input: &PolicyInput, t: Thresholds) -> Option<(Action, String)> {
    // Read-only calls count: a read that keeps failing is stuck too. A block
    // ends the streak, so a denied call never wedges the agent.
    let streak = input
        .window
        .iter()
        .rev()
        .take_while(|p| matches!(p.outcome, Outcome::Error))
        .count();
    let action = t.action(count(streak))?;
    let last: Vec<String> = input.window[input.window.len() - streak.min(3)..]
        .iter()
        .map(|p| format!("`{}`", p.call.preview))
        .collect();
    Some((
        action,
        format!(
            "The last {streak} calls all failed (the latest: {}); stop and read the last error \
             before trying again.",
            last.join(", ")
        ),
    ))
}

/// The streak is the window's last calls that failed, and it nudges at the least.
fn error_streak_guard(t: Thresholds) -> Trigger {
    Trigger::ErrorStreak(t.nudge_at)
}

// ---------------------------------------------------------------- same failure

fn same_failure(input: &PolicyInput, t: Thresholds) -> Option<(Action, String)> {
    let command = input.call.command.as_ref()?;
    // Only a commit or a fix report claims the failing check is dealt with.
    if !command.commits && !command.reports_fix {
        return None;
    }
    let item = input.item.as_ref()?;
    // The first check with the most runs, so the reason names a stable one.
    let worst =
        item.failing_checks
            .iter()
            .fold(None::<&FailingCheck>, |worst, check| match worst {
                Some(w) if w.same_output_runs >= check.same_output_runs => Some(w),
                _ => Some(check),
            })?;
    let action = t.action(worst.same_output_runs)?;
    Some((
        action,
        format!(
            "`{}` has failed {} runs in a row with the same output, and a commit does not change \
             what it prints. `hall findings` shows its log: read it (`hall run --show LOG`) \
             before committing again.",
            worst.check, worst.same_output_runs
        ),
    ))
}

/// Same failure only looks at a call that commits or reports a fix.
fn same_failure_guard(_: Thresholds) -> Trigger {
    Trigger::ClaimsFix
}

// ---------------------------------------------------------------- reason

/// The reason on one line, at most [`MAX_REASON`] bytes: previews may hold
/// newlines, and the agent reads the reason as one message.
fn clean(reason: &str) -> String {
    let mut out = String::with_capacity(reason.len().min(MAX_REASON));
    for c in reason.chars() {
        let c = if c == '\n' || c == '\r' { ' ' } else { c };
        if out.len() + c.len_utf8() > MAX_REASON {
            break;
        }
        out.push(c);
    }
    out
}

/// The rules' table, shared: the SDK runs it natively, and hall's tests include
/// this file to run the same rows through the built-in room as a component.
#[cfg(test)]
pub(crate) mod tests {
    use super::super::model::*;
    use super::{DEFAULTS, decide, guard};

    /// A call that changes something (an edit), with `key` as its identity.
    pub(crate) fn edit(key: &str) -> ToolCall {
        ToolCall {
            tool: "Edit".into(),
            key: key.into(),
            preview: format!("Edit {key}"),
            read_only: false,
            command: None,
        }
    }

    /// A call that only reads.
    pub(crate) fn read(key: &str) -> ToolCall {
        ToolCall {
            tool: "Read".into(),
            key: key.into(),
            preview: format!("Read {key}"),
            read_only: true,
            command: None,
        }
    }

    /// The same call, read-only.
    pub(crate) fn reading(call: &ToolCall) -> ToolCall {
        with(call.clone(), |c| c.read_only = true)
    }

    /// The input for `call` after `window` with every detector but `detector` off.
    pub(crate) fn only(detector: &str, call: ToolCall, window: Vec<PastCall>) -> PolicyInput {
        with(input(call, window), |i| {
            i.settings = DEFAULTS
                .iter()
                .map(|(n, a, b)| {
                    setting(
                        n,
                        if *n == detector {
                            Mode::Observe
                        } else {
                            Mode::Off
                        },
                        *a,
                        *b,
                    )
                })
                .collect();
        })
    }

    /// A Bash call of `kind` running `words`, keyed by its command line.
    pub(crate) fn bash(line: &str, kind: CommandKind) -> ToolCall {
        let words: Vec<String> = line
            .split("&&")
            .map(|w| w.split_whitespace().take(2).collect::<Vec<_>>().join(" "))
            .collect();
        ToolCall {
            tool: "Bash".into(),
            key: format!("bash:{line}"),
            preview: line.into(),
            read_only: matches!(kind, CommandKind::ReadOnly),
            command: Some(Command {
                kind,
                commits: words.iter().any(|w| w == "git commit"),
                reports_fix: words.iter().any(|w| w == "hall fixed"),
                words,
            }),
        }
    }

    pub(crate) fn past(call: ToolCall, outcome: Outcome, output_hash: &str) -> PastCall {
        PastCall {
            call,
            outcome,
            output_hash: output_hash.into(),
            detector: match outcome {
                Outcome::Blocked => "repetition".into(),
                _ => String::new(),
            },
        }
    }

    pub(crate) fn ok(call: ToolCall) -> PastCall {
        past(call, Outcome::Success, "")
    }

    pub(crate) fn failed(call: ToolCall, output_hash: &str) -> PastCall {
        past(call, Outcome::Error, output_hash)
    }

    /// The input for `call` after `window`, with no item and no settings (every
    /// detector at its defaults).
    pub(crate) fn input(call: ToolCall, window: Vec<PastCall>) -> PolicyInput {
        PolicyInput {
            call,
            item: None,
            window,
            settings: Vec::new(),
        }
    }

    /// `n` earlier runs of `call`, each ending as `make` says for its index.
    pub(crate) fn runs(
        call: &ToolCall,
        n: usize,
        make: impl Fn(ToolCall, usize) -> PastCall,
    ) -> Vec<PastCall> {
        (0..n).map(|i| make(call.clone(), i)).collect()
    }

    /// The keys in order, each an edit of its own file (`"abab"`: a, b, a, b).
    pub(crate) fn edits(keys: &str) -> Vec<PastCall> {
        keys.chars().map(|k| ok(edit(&k.to_string()))).collect()
    }

    pub(crate) fn setting(name: &str, mode: Mode, nudge_at: u32, block_at: u32) -> DetectorSetting {
        DetectorSetting {
            name: name.into(),
            mode,
            nudge_at,
            block_at,
        }
    }

    /// Commits (`git commit`) while the item's check `check` failed `runs`
    /// times the same way.
    pub(crate) fn commit_with(runs: u32) -> PolicyInput {
        with(
            input(
                bash("git commit -am wip", CommandKind::Mutating),
                Vec::new(),
            ),
            |i| {
                i.item = Some(ItemFacts {
                    id: "H-0042".into(),
                    state: "development".into(),
                    failing_checks: vec![
                        FailingCheck {
                            check: "cargo fmt --check".into(),
                            same_output_runs: 1,
                        },
                        FailingCheck {
                            check: "cargo test".into(),
                            same_output_runs: runs,
                        },
                    ],
                })
            },
        )
    }

    pub(crate) fn with<T>(mut value: T, f: impl FnOnce(&mut T)) -> T {
        f(&mut value);
        value
    }

    /// What a row expects: the action, and the detector that decided (empty
    /// for allow).
    pub(crate) type Want = (Action, &'static str);

    const ALLOW: Want = (Action::Allow, "");

    /// One row: a name, the input, and the answer it must get.
    pub(crate) type Row = (&'static str, PolicyInput, Want);

    /// Per detector and action: a row that trips it, and its twin, which differs
    /// only in the one fact the rule reads and gets the weaker answer. A rule
    /// that does nothing fails the first; one that fires on anything fails the
    /// second.
    pub(crate) fn twins() -> Vec<(Row, Row)> {
        let test = bash("cargo test", CommandKind::Test);
        let x = edit("src/x.rs");
        vec![
            // ---- repetition: 3 calls nudge; 5 block when 4 returned the same.
            (
                (
                    "repetition nudges at 3",
                    input(x.clone(), runs(&x, 2, |c, _| ok(c))),
                    (Action::Nudge, "repetition"),
                ),
                (
                    "twin: 2 calls",
                    input(x.clone(), runs(&x, 1, |c, _| ok(c))),
                    ALLOW,
                ),
            ),
            (
                (
                    "repetition blocks 5 identical failures",
                    input(x.clone(), runs(&x, 4, |c, _| failed(c, "e1"))),
                    (Action::Deny, "repetition"),
                ),
                (
                    "twin: the failures differ",
                    input(x.clone(), runs(&x, 4, |c, i| failed(c, &format!("e{i}")))),
                    (Action::Nudge, "repetition"),
                ),
            ),
            (
                (
                    "repetition blocks identical output",
                    input(
                        x.clone(),
                        runs(&x, 4, |c, _| past(c, Outcome::Success, "same")),
                    ),
                    (Action::Deny, "repetition"),
                ),
                (
                    "twin: no output to compare",
                    input(x.clone(), runs(&x, 4, |c, _| past(c, Outcome::Success, ""))),
                    (Action::Nudge, "repetition"),
                ),
            ),
            (
                (
                    "repetition blocks retrying what was blocked",
                    input(
                        x.clone(),
                        runs(&x, 4, |c, i| past(c, Outcome::Blocked, &format!("h{i}"))),
                    ),
                    (Action::Deny, "repetition"),
                ),
                (
                    "twin: the same calls failed differently",
                    input(
                        x.clone(),
                        runs(&x, 4, |c, i| past(c, Outcome::Error, &format!("h{i}"))),
                    ),
                    (Action::Nudge, "repetition"),
                ),
            ),
            (
                (
                    "repetition blocks at 5 with all 4 earlier ones alike",
                    input(x.clone(), runs(&x, 4, |c, _| failed(c, "e"))),
                    (Action::Deny, "repetition"),
                ),
                (
                    "twin: 3 of 4 alike",
                    input(
                        x.clone(),
                        runs(&x, 4, |c, i| failed(c, if i == 0 { "other" } else { "e" })),
                    ),
                    (Action::Nudge, "repetition"),
                ),
            ),
            (
                (
                    "repetition counts only the same key",
                    input(
                        x.clone(),
                        vec![ok(x.clone()), ok(edit("src/y.rs")), ok(x.clone())],
                    ),
                    (Action::Nudge, "repetition"),
                ),
                (
                    "twin: another key in between",
                    input(
                        x.clone(),
                        vec![ok(edit("src/z.rs")), ok(edit("src/y.rs")), ok(x.clone())],
                    ),
                    ALLOW,
                ),
            ),
            (
                (
                    "tests run again fail the same way",
                    input(test.clone(), runs(&test, 2, |c, _| failed(c, "t"))),
                    (Action::Nudge, "repetition"),
                ),
                (
                    "twin: tests run again after edits fail differently",
                    input(
                        test.clone(),
                        runs(&test, 2, |c, i| failed(c, &format!("t{i}"))),
                    ),
                    ALLOW,
                ),
            ),
            (
                (
                    "a mutating command run again nudges without evidence",
                    input(
                        bash("cargo test", CommandKind::Mutating),
                        runs(&bash("cargo test", CommandKind::Mutating), 2, |c, i| {
                            failed(c, &format!("t{i}"))
                        }),
                    ),
                    (Action::Nudge, "repetition"),
                ),
                (
                    "twin: a build stays quiet",
                    input(
                        bash("cargo test", CommandKind::Build),
                        runs(&bash("cargo test", CommandKind::Build), 2, |c, i| {
                            failed(c, &format!("t{i}"))
                        }),
                    ),
                    ALLOW,
                ),
            ),
            (
                (
                    "repetition: a write repeated",
                    input(x.clone(), runs(&x, 2, |c, _| ok(c))),
                    (Action::Nudge, "repetition"),
                ),
                (
                    "twin: a read repeated is exempt",
                    input(reading(&x), runs(&reading(&x), 2, |c, _| ok(c))),
                    ALLOW,
                ),
            ),
            // ---- oscillation: 2 laps nudge, 3 block (repetition off, so that
            // the calls a cycle repeats do not answer first).
            (
                (
                    "oscillation nudges at 2 laps",
                    only("oscillation", edit("b"), edits("aba")),
                    (Action::Nudge, "oscillation"),
                ),
                (
                    "twin: one distinct key is no cycle",
                    only("oscillation", edit("b"), edits("bbb")),
                    ALLOW,
                ),
            ),
            (
                (
                    "oscillation blocks at 3 laps",
                    only("oscillation", edit("b"), edits("ababa")),
                    (Action::Deny, "oscillation"),
                ),
                (
                    "twin: the first lap broken",
                    only("oscillation", edit("b"), edits("cbaba")),
                    (Action::Nudge, "oscillation"),
                ),
            ),
            (
                (
                    "oscillation counts 5 calls as 2 laps",
                    only("oscillation", edit("a"), edits("abab")),
                    (Action::Nudge, "oscillation"),
                ),
                (
                    "twin: the cycle broken",
                    only("oscillation", edit("a"), edits("abcb")),
                    ALLOW,
                ),
            ),
            (
                (
                    "oscillation of 3 calls",
                    only("oscillation", edit("c"), edits("abcab")),
                    (Action::Nudge, "oscillation"),
                ),
                (
                    "twin: the 3-cycle broken",
                    only("oscillation", edit("c"), edits("abcdb")),
                    ALLOW,
                ),
            ),
            (
                (
                    "oscillation of 4 calls",
                    only("oscillation", edit("d"), edits("abcdabc")),
                    (Action::Nudge, "oscillation"),
                ),
                (
                    "twin: the 4-cycle broken",
                    only("oscillation", edit("d"), edits("abceabc")),
                    ALLOW,
                ),
            ),
            (
                (
                    "oscillation skips reads between the calls",
                    only(
                        "oscillation",
                        edit("b"),
                        vec![
                            ok(edit("a")),
                            ok(read("r")),
                            ok(edit("b")),
                            ok(read("r")),
                            ok(edit("a")),
                        ],
                    ),
                    (Action::Nudge, "oscillation"),
                ),
                (
                    "twin: a read current call is exempt",
                    only(
                        "oscillation",
                        reading(&edit("b")),
                        vec![
                            ok(edit("a")),
                            ok(read("r")),
                            ok(edit("b")),
                            ok(read("r")),
                            ok(edit("a")),
                        ],
                    ),
                    ALLOW,
                ),
            ),
            (
                (
                    "oscillation counts blocked calls too",
                    only(
                        "oscillation",
                        edit("b"),
                        vec![
                            ok(edit("a")),
                            past(edit("b"), Outcome::Blocked, ""),
                            failed(edit("a"), "e"),
                        ],
                    ),
                    (Action::Nudge, "oscillation"),
                ),
                (
                    "twin: one of them read-only",
                    only(
                        "oscillation",
                        edit("b"),
                        vec![
                            ok(edit("a")),
                            past(reading(&edit("b")), Outcome::Blocked, ""),
                            failed(edit("a"), "e"),
                        ],
                    ),
                    ALLOW,
                ),
            ),
            // ---- error streak: 4 errors nudge, 6 block.
            (
                (
                    "error streak nudges at 4",
                    input(
                        edit("n"),
                        (0..4)
                            .map(|i| failed(edit(&format!("f{i}")), "e"))
                            .collect(),
                    ),
                    (Action::Nudge, "error-streak"),
                ),
                (
                    "twin: the last one succeeded",
                    input(
                        edit("n"),
                        (0..4)
                            .map(|i| {
                                let c = edit(&format!("f{i}"));
                                if i == 3 { ok(c) } else { failed(c, "e") }
                            })
                            .collect(),
                    ),
                    ALLOW,
                ),
            ),
            (
                (
                    "error streak blocks at 6",
                    input(
                        edit("n"),
                        (0..6)
                            .map(|i| failed(edit(&format!("f{i}")), "e"))
                            .collect(),
                    ),
                    (Action::Deny, "error-streak"),
                ),
                (
                    "twin: a block breaks the streak",
                    input(
                        edit("n"),
                        (0..6)
                            .map(|i| {
                                let c = edit(&format!("f{i}"));
                                if i == 2 {
                                    past(c, Outcome::Blocked, "")
                                } else {
                                    failed(c, "e")
                                }
                            })
                            .collect(),
                    ),
                    ALLOW,
                ),
            ),
            (
                (
                    "error streak counts failed reads",
                    input(
                        edit("n"),
                        (0..4)
                            .map(|i| failed(read(&format!("r{i}")), "e"))
                            .collect(),
                    ),
                    (Action::Nudge, "error-streak"),
                ),
                (
                    "twin: the reads succeeded",
                    input(
                        edit("n"),
                        (0..4).map(|i| ok(read(&format!("r{i}")))).collect(),
                    ),
                    ALLOW,
                ),
            ),
            // ---- same failure: 2 runs nudge, 3 block, on a commit or a fix report.
            (
                (
                    "same failure nudges at 2",
                    commit_with(2),
                    (Action::Nudge, "same-failure"),
                ),
                ("twin: it failed once", commit_with(1), ALLOW),
            ),
            (
                (
                    "same failure blocks at 3",
                    commit_with(3),
                    (Action::Deny, "same-failure"),
                ),
                (
                    "twin: the call does not commit",
                    with(commit_with(3), |i| {
                        i.call = bash("git status", CommandKind::ReadOnly)
                    }),
                    ALLOW,
                ),
            ),
            (
                (
                    "same failure on `hall fixed`",
                    with(commit_with(3), |i| {
                        i.call = bash("hall fixed H-0042", CommandKind::Mutating)
                    }),
                    (Action::Deny, "same-failure"),
                ),
                (
                    "twin: no item",
                    with(commit_with(3), |i| i.item = None),
                    ALLOW,
                ),
            ),
        ]
    }

    /// Rows that are not twins: modes, thresholds, combining and limits.
    pub(crate) fn rows() -> Vec<Row> {
        let x = edit("src/x.rs");
        let four_same = input(x.clone(), runs(&x, 4, |c, _| failed(c, "e")));
        vec![
            (
                "off skips the detector",
                with(four_same.clone(), |i| {
                    i.settings = vec![setting("repetition", Mode::Off, 3, 5)];
                }),
                // The failures are a streak too, which still runs.
                (Action::Nudge, "error-streak"),
            ),
            (
                "off skips every detector",
                with(four_same.clone(), |i| {
                    i.settings = DEFAULTS
                        .iter()
                        .map(|(n, a, b)| setting(n, Mode::Off, *a, *b))
                        .collect();
                }),
                ALLOW,
            ),
            (
                "enforce and observe decide alike (hall applies modes)",
                with(four_same.clone(), |i| {
                    i.settings = vec![setting("repetition", Mode::Enforce, 3, 5)];
                }),
                (Action::Deny, "repetition"),
            ),
            (
                "zero thresholds are floored at 2",
                with(input(x.clone(), Vec::new()), |i| {
                    i.settings = DEFAULTS
                        .iter()
                        .map(|(n, _, _)| setting(n, Mode::Enforce, 0, 0))
                        .collect();
                }),
                ALLOW,
            ),
            (
                "thresholds of 1 are floored at 2",
                with(input(x.clone(), runs(&x, 1, |c, _| failed(c, "e"))), |i| {
                    i.settings = DEFAULTS
                        .iter()
                        .map(|(n, _, _)| setting(n, Mode::Enforce, 1, 1))
                        .collect();
                }),
                (Action::Deny, "repetition"),
            ),
            (
                "block below nudge is raised to nudge",
                with(input(x.clone(), runs(&x, 2, |c, _| ok(c))), |i| {
                    i.settings = vec![setting("repetition", Mode::Enforce, 3, 1)];
                }),
                // Block at 3 needs 2 alike; these returned nothing to compare.
                (Action::Nudge, "repetition"),
            ),
            (
                "the strongest action wins, whichever detector gives it",
                // Repetition nudges (3 calls), the error streak (6) denies.
                input(
                    x.clone(),
                    (0..4)
                        .map(|i| failed(edit(&format!("f{i}")), "e"))
                        .chain([failed(x.clone(), "1"), failed(x.clone(), "2")])
                        .collect(),
                ),
                (Action::Deny, "error-streak"),
            ),
            (
                "a tie goes to the earlier detector",
                // Repetition nudges (3 calls) and so does the error streak (4).
                input(
                    x.clone(),
                    vec![
                        failed(edit("a"), "1"),
                        failed(edit("b"), "2"),
                        failed(x.clone(), "3"),
                        failed(x.clone(), "4"),
                    ],
                ),
                (Action::Nudge, "repetition"),
            ),
            (
                "an empty input is allowed",
                input(edit(""), Vec::new()),
                ALLOW,
            ),
        ]
    }

    /// Holds one row's verdict to the row.
    pub(crate) fn assert_row(name: &str, want: Want, got: &PolicyVerdict) {
        assert!(
            got.action == want.0,
            "{name}: got {:?} by {:?}: {}",
            got.action,
            got.detector,
            got.reason
        );
        assert_eq!(got.detector, want.1, "{name}: {}", got.reason);
        if want.0 == Action::Allow {
            assert!(got.reason.is_empty(), "{name}: {}", got.reason);
        } else {
            assert!(!got.reason.is_empty(), "{name}");
            assert!(!got.reason.contains('\n'), "{name}: {}", got.reason);
            assert!(got.reason.len() <= 600, "{name}: {}", got.reason.len());
        }
    }

    #[test]
    fn every_detector_tells_its_twins_apart() {
        let twins = twins();
        for ((name, row, want), (twin_name, twin, twin_want)) in &twins {
            assert!(want != twin_want, "{name}: a twin must get another answer");
            assert_row(name, *want, &decide(row));
            assert_row(twin_name, *twin_want, &decide(twin));
        }
        // Every detector nudges and blocks in the table.
        for (name, _, _) in DEFAULTS {
            for action in [Action::Nudge, Action::Deny] {
                assert!(
                    twins
                        .iter()
                        .any(|((_, _, a), (_, _, b))| *a == (action, name) || *b == (action, name)),
                    "{name} never answers {action:?}"
                );
            }
        }
    }

    #[test]
    fn modes_thresholds_and_combining() {
        for (name, row, want) in rows() {
            assert_row(name, want, &decide(&row));
        }
    }

    #[test]
    fn reasons_name_what_was_seen() {
        let x = edit("src/x.rs");
        let got = decide(&input(x.clone(), runs(&x, 4, |c, _| failed(c, "e"))));
        assert_eq!(
            got.reason,
            "`Edit src/x.rs` would run for the 5th time with the same input, and it failed the same way 4 times. \
             Doing it again will not change the answer: read the error, change your approach, or ask a person with `hall ask`."
        );
        let got = decide(&input(
            x.clone(),
            runs(&x, 4, |c, _| past(c, Outcome::Blocked, "")),
        ));
        assert!(
            got.reason.contains("it was blocked before (4 times)"),
            "{}",
            got.reason
        );
        let got = decide(&input(
            x.clone(),
            runs(&x, 2, |c, _| past(c, Outcome::Success, "o")),
        ));
        assert!(got.reason.contains("3rd time"), "{}", got.reason);
        assert!(
            got.reason.contains("it returned identical output 2 times"),
            "{}",
            got.reason
        );

        let got = decide(&input(edit("c"), edits("abcab")));
        assert_eq!(
            got.reason,
            "These calls keep coming back in a cycle (`Edit a` ↔ `Edit b` ↔ `Edit c`), 2 laps so far. \
             Step back: say what the goal is, read the tests, or ask a person with `hall ask`."
        );

        let got = decide(&input(
            edit("n"),
            (0..5)
                .map(|i| failed(edit(&format!("f{i}")), "e"))
                .collect(),
        ));
        assert_eq!(
            got.reason,
            "The last 5 calls all failed (the latest: `Edit f2`, `Edit f3`, `Edit f4`); stop and read the last error before trying again."
        );

        let got = decide(&commit_with(3));
        assert_eq!(
            got.reason,
            "`cargo test` has failed 3 runs in a row with the same output, and a commit does not change what it prints. \
             `hall findings` shows its log: read it (`hall run --show LOG`) before committing again."
        );
    }

    #[test]
    fn reasons_are_one_line_and_bounded() {
        let mut long = edit("k");
        long.preview = format!("line one\nline two\r\n{}", "é".repeat(400));
        let got = decide(&input(long.clone(), runs(&long, 4, |c, _| failed(c, "e"))));
        assert_eq!(got.action, Action::Deny);
        assert!(!got.reason.contains(['\n', '\r']), "{}", got.reason);
        assert!(
            got.reason.len() <= 600 && got.reason.len() > 590,
            "{}",
            got.reason.len()
        );
        assert!(
            got.reason.starts_with("`line one line two  é"),
            "{}",
            got.reason
        );
    }

    #[test]
    fn no_input_panics() {
        let big = input(
            edit("a"),
            (0..10_000)
                .map(|i| failed(edit(&(i % 7).to_string()), ""))
                .collect(),
        );
        let got = decide(&big);
        assert_eq!(got.action, Action::Deny);
        let mut odd = input(edit(""), vec![past(edit(""), Outcome::Blocked, ""); 3]);
        odd.settings = vec![
            setting("", Mode::Enforce, u32::MAX, 0),
            setting("oscillation", Mode::Observe, u32::MAX, u32::MAX),
        ];
        odd.item = Some(ItemFacts {
            id: String::new(),
            state: String::new(),
            failing_checks: Vec::new(),
        });
        let got = decide(&odd);
        assert_eq!(got.action, Action::Nudge, "{}", got.reason);
    }

    #[test]
    fn the_guard_has_one_trigger_per_detector_that_runs() {
        let recurs = |times, last| {
            Trigger::Recurs(Recurrence {
                times,
                last,
                reads_exempt: true,
            })
        };
        // Compared as shown: the WIT's generated variants have no `PartialEq`.
        let shown = |triggers: &[Trigger]| format!("{triggers:?}");
        // No settings: every detector at its defaults.
        assert_eq!(
            shown(&guard(&[])),
            shown(&[
                recurs(2, 0),
                recurs(1, 4),
                Trigger::ErrorStreak(4),
                Trigger::ClaimsFix
            ])
        );
        // Thresholds made safe first; an unknown detector adds nothing; the first
        // entry of a name counts.
        let settings = [
            setting("repetition", Mode::Enforce, 0, 0),
            setting("error-streak", Mode::Observe, 7, 9),
            setting("error-streak", Mode::Off, 7, 9),
            setting("oscillation", Mode::Off, 2, 3),
            setting("loops", Mode::Enforce, 2, 3),
        ];
        assert_eq!(
            shown(&guard(&settings)),
            shown(&[recurs(1, 0), Trigger::ErrorStreak(7), Trigger::ClaimsFix])
        );
        // Every detector off: the room never objects.
        let off: Vec<DetectorSetting> = DEFAULTS
            .iter()
            .map(|(n, a, b)| setting(n, Mode::Off, *a, *b))
            .collect();
        assert!(guard(&off).is_empty());
    }

    #[test]
    fn ordinals() {
        let got: Vec<String> = [1, 2, 3, 4, 11, 12, 13, 21, 22, 23, 101, 111]
            .map(super::ordinal)
            .into();
        assert_eq!(
            got,
            [
                "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "23rd",
                "101st", "111th"
            ]
        );
    }
}
