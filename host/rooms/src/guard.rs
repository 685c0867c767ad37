//! The tool-policy room's guard, on the host's side: checking a call against it, and
//! keeping it beside the compiled rooms.
//!
//! A tool-policy room states, for given settings, the conditions under which it may
//! answer anything but `allow` (its guard, `hall:rooms@0.8.0`). Loading a room costs a
//! hook process far more than the call itself, and most calls meet none of the
//! conditions, so the hook checks them here, natively, and asks the room only when one
//! holds. The conditions are the room's own: nothing here knows a detector. A room that
//! leaves a condition out only silences itself.
//!
//! A guard depends on the component and the settings alone (a room is a function of its
//! input), so it is computed once and kept in a file named by both. The file lives in
//! the rooms' cache directory, which the hooks keep every session from writing, like
//! the compiled artifacts beside it: a session that could write it could silence the
//! policy. A file that can't be read, or reads as something else, is no guard.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::types::{CallOutcome, DetectorSetting, PastCall, PolicyTrigger, Recurrence, ToolCall};

/// The guard file's format. A file of another format is ignored (and replaced).
const FORMAT: u32 = 1;

/// Whether any of `triggers` holds for `call` after `window`: when none does, the room
/// promised to answer `allow`.
pub fn matches(triggers: &[PolicyTrigger], call: &ToolCall, window: &[PastCall]) -> bool {
    triggers.iter().any(|t| holds(*t, call, window))
}

/// Whether one trigger holds, as the WIT documents it.
fn holds(trigger: PolicyTrigger, call: &ToolCall, window: &[PastCall]) -> bool {
    match trigger {
        PolicyTrigger::Always => true,
        PolicyTrigger::Recurs(r) => recurs(r, call, window),
        PolicyTrigger::ErrorStreak(n) => error_streak(window) >= widen(n),
        PolicyTrigger::ClaimsFix => call
            .command
            .as_ref()
            .is_some_and(|c| c.commits || c.reports_fix),
    }
}

/// At least `times` past calls have the call's key: among the last `last` calls that
/// are not read-only, or the whole window when `last` is 0.
fn recurs(r: Recurrence, call: &ToolCall, window: &[PastCall]) -> bool {
    if r.reads_exempt && call.read_only {
        return false;
    }
    let same = |p: &&PastCall| p.call.key == call.key;
    let seen = if r.last == 0 {
        window.iter().filter(same).count()
    } else {
        window
            .iter()
            .rev()
            .filter(|p| !p.call.read_only)
            .take(widen(r.last))
            .filter(same)
            .count()
    };
    seen >= widen(r.times)
}

/// How many calls at the end of the window failed, in a row.
fn error_streak(window: &[PastCall]) -> usize {
    window
        .iter()
        .rev()
        .take_while(|p| p.outcome == CallOutcome::Error)
        .count()
}

fn widen(n: u32) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

/// The guards kept in one directory (hall's is the rooms' cache directory).
#[derive(Debug, Clone)]
pub struct GuardCache {
    dir: PathBuf,
}

/// What a guard file holds: the guard, with what it was computed for, so that a file
/// is only ever taken for the room and settings it names.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Stored {
    format: u32,
    room: String,
    settings: Vec<DetectorSetting>,
    triggers: Vec<PolicyTrigger>,
}

impl GuardCache {
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    /// The file for the room with this sha256 under these settings.
    pub fn path(&self, room: &str, settings: &[DetectorSetting]) -> PathBuf {
        let settings = serde_json::to_vec(settings).unwrap_or_default();
        let digest = super::sha256_hex(&settings);
        self.dir.join(format!(
            "tool-policy-guard-v{FORMAT}-{room}-{}.json",
            &digest[..16]
        ))
    }

    /// The guard kept for this room and settings; `None` when there is none, or the file
    /// is damaged, of another format, or for another room or settings.
    pub fn read(&self, room: &str, settings: &[DetectorSetting]) -> Option<Vec<PolicyTrigger>> {
        let bytes = std::fs::read(self.path(room, settings)).ok()?;
        let stored: Stored = serde_json::from_slice(&bytes).ok()?;
        (stored.format == FORMAT && stored.room == room && stored.settings == settings)
            .then_some(stored.triggers)
    }

    /// Keeps a guard for this room and settings, replacing the file whole.
    pub fn write(
        &self,
        room: &str,
        settings: &[DetectorSetting],
        triggers: &[PolicyTrigger],
    ) -> std::io::Result<()> {
        let stored = Stored {
            format: FORMAT,
            room: room.to_string(),
            settings: settings.to_vec(),
            triggers: triggers.to_vec(),
        };
        let bytes = serde_json::to_vec(&stored).map_err(std::io::Error::other)?;
        super::cache::write_atomically(&self.path(room, settings), &bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{CommandKind, PolicyMode, ShellCommand};

    fn call(key: &str, read_only: bool) -> ToolCall {
        ToolCall {
            tool: "Edit".into(),
            key: key.into(),
            preview: key.into(),
            read_only,
            command: None,
        }
    }

    fn past(key: &str, read_only: bool, outcome: CallOutcome) -> PastCall {
        PastCall {
            call: call(key, read_only),
            outcome,
            output_hash: String::new(),
            detector: String::new(),
        }
    }

    fn recurs(times: u32, last: u32, reads_exempt: bool) -> PolicyTrigger {
        PolicyTrigger::Recurs(Recurrence {
            times,
            last,
            reads_exempt,
        })
    }

    #[test]
    fn a_recurrence_counts_the_calls_key_in_the_whole_window_or_its_last_changes() {
        use CallOutcome::Success as S;
        // Oldest first: a, then a read-only a, then b, c, d (none read-only).
        let window = [
            past("a", false, S),
            past("a", true, S),
            past("b", false, S),
            past("c", false, S),
            past("d", false, S),
        ];
        let a = call("a", false);
        assert!(matches(&[recurs(2, 0, true)], &a, &window));
        assert!(!matches(&[recurs(3, 0, true)], &a, &window));
        // Among the last 4 calls that are not read-only (a, b, c, d): one a.
        assert!(matches(&[recurs(1, 4, true)], &a, &window));
        // Among the last 3 (b, c, d): none; the read-only a does not count there.
        assert!(!matches(&[recurs(1, 3, true)], &a, &window));
        // A read-only call matches only when reads are not exempt.
        let read_a = call("a", true);
        assert!(!matches(&[recurs(1, 0, true)], &read_a, &window));
        assert!(matches(&[recurs(1, 0, false)], &read_a, &window));
        // Zero times always holds; no trigger never does.
        assert!(matches(&[recurs(0, 0, true)], &call("z", false), &[]));
        assert!(!matches(&[], &a, &window));
    }

    #[test]
    fn an_error_streak_counts_failures_at_the_end_and_a_block_ends_it() {
        use CallOutcome::{Blocked, Error, Success};
        let x = call("x", false);
        let window = [
            past("a", false, Success),
            past("b", false, Error),
            past("c", true, Error),
        ];
        assert!(matches(&[PolicyTrigger::ErrorStreak(2)], &x, &window));
        assert!(!matches(&[PolicyTrigger::ErrorStreak(3)], &x, &window));
        let blocked = [past("b", false, Error), past("c", false, Blocked)];
        assert!(!matches(&[PolicyTrigger::ErrorStreak(1)], &x, &blocked));
        assert!(matches(&[PolicyTrigger::ErrorStreak(0)], &x, &blocked));
    }

    #[test]
    fn claims_fix_holds_for_a_commit_or_a_fix_report_and_always_for_anything() {
        let mut commit = call("k", false);
        let shell = |commits, reports_fix| ShellCommand {
            kind: CommandKind::Mutating,
            words: Vec::new(),
            commits,
            reports_fix,
        };
        assert!(!matches(&[PolicyTrigger::ClaimsFix], &commit, &[]));
        commit.command = Some(shell(true, false));
        assert!(matches(&[PolicyTrigger::ClaimsFix], &commit, &[]));
        commit.command = Some(shell(false, true));
        assert!(matches(&[PolicyTrigger::ClaimsFix], &commit, &[]));
        commit.command = Some(shell(false, false));
        assert!(!matches(&[PolicyTrigger::ClaimsFix], &commit, &[]));
        assert!(matches(&[PolicyTrigger::Always], &commit, &[]));
    }

    fn settings(nudge_at: u32) -> Vec<DetectorSetting> {
        vec![DetectorSetting {
            name: "repetition".into(),
            mode: PolicyMode::Observe,
            nudge_at,
            block_at: 5,
        }]
    }

    #[test]
    fn a_kept_guard_is_read_back_only_for_its_room_and_settings() {
        let dir = tempfile::tempdir().expect("temp dir");
        let cache = GuardCache::new(dir.path().join("rooms"));
        let guard = [recurs(2, 0, true), PolicyTrigger::ClaimsFix];
        assert_eq!(cache.read("aa", &settings(3)), None);
        cache.write("aa", &settings(3), &guard).expect("write");
        assert_eq!(cache.read("aa", &settings(3)).as_deref(), Some(&guard[..]));
        assert_eq!(cache.read("bb", &settings(3)), None);
        assert_eq!(cache.read("aa", &settings(4)), None);
        // An empty guard is a guard too.
        cache.write("aa", &settings(4), &[]).expect("write");
        assert_eq!(cache.read("aa", &settings(4)), Some(Vec::new()));
    }

    #[test]
    fn a_damaged_or_foreign_guard_file_is_no_guard() {
        let dir = tempfile::tempdir().expect("temp dir");
        let cache = GuardCache::new(dir.path());
        let path = cache.path("aa", &settings(3));
        for text in [
            "{ not json".to_string(),
            String::new(),
            // Another format.
            format!(
                r#"{{"format":{},"room":"aa","settings":{},"triggers":[]}}"#,
                FORMAT + 1,
                serde_json::to_string(&settings(3)).expect("json")
            ),
            // Another room's guard under this room's name.
            format!(
                r#"{{"format":{FORMAT},"room":"bb","settings":{},"triggers":[]}}"#,
                serde_json::to_string(&settings(3)).expect("json")
            ),
            // Another settings' guard under these settings' name.
            format!(
                r#"{{"format":{FORMAT},"room":"aa","settings":{},"triggers":[]}}"#,
                serde_json::to_string(&settings(9)).expect("json")
            ),
        ] {
            std::fs::write(&path, &text).expect("write");
            assert_eq!(cache.read("aa", &settings(3)), None, "{text}");
        }
        // Writing replaces the bad file.
        cache.write("aa", &settings(3), &[]).expect("write");
        assert_eq!(cache.read("aa", &settings(3)), Some(Vec::new()));
    }
}
