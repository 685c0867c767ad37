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
/// this file to run the same rows through the built-in room as a component. The
/// path is spelled out because this file is itself included by path, from the SDK
/// and from hall's tests, and its submodules must be found the same way from both.
#[cfg(test)]
#[path = "tool_policy/tests.rs"]
pub(crate) mod tests;
