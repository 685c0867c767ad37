//! The journal's vocabulary: one typed event per line.
//!
//! Every line carries `v` so that a future shape can be upgraded before serde sees it
//! ([`upgrade`]). Unknown event kinds written by a newer `hall` decode as
//! [`EventKind::Other`] and are ignored by the fold rather than failing the read.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::id::{ItemId, QuestionId};
use super::state::State;

/// The version this build writes.
pub const EVENT_VERSION: u32 = 1;

/// One journal line.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Event {
    /// Shape version of this line.
    pub v: u32,
    /// When it happened, RFC 3339 in UTC.
    pub t: String,
    /// Who did it: `you`, `agent`, `assayer`, `fixer`, `shipper`, `hook`, `daemon`.
    pub actor: String,
    /// What happened, with its fields.
    #[serde(flatten)]
    pub kind: EventKind,
    /// The item it belongs to; absent for repo-level events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub item: Option<ItemId>,
}

/// Why a loop is waiting for a person without changing state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum HoldKind {
    Budget,
    RunFailed,
    Checks,
    ShipFailed,
    Conflict,
    Feedback,
    CiFailed,
    MergeFailed,
    Lit,
}

impl HoldKind {
    pub fn as_str(self) -> &'static str {
        match self {
            HoldKind::Budget => "budget",
            HoldKind::RunFailed => "run_failed",
            HoldKind::Checks => "checks",
            HoldKind::ShipFailed => "ship_failed",
            HoldKind::Conflict => "conflict",
            HoldKind::Feedback => "feedback",
            HoldKind::CiFailed => "ci_failed",
            HoldKind::MergeFailed => "merge_failed",
            HoldKind::Lit => "lit",
        }
    }
}

/// How an item came in through the Front Desk.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    New,
    Issue,
    Adopt,
}

/// A reviewer's finding, as recorded in a verdict.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Finding {
    pub id: String,
    pub lens: String,
    pub severity: String,
    pub file: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    pub scenario: String,
}

impl Finding {
    /// `file:line`, or the file alone when the finding has no line.
    pub fn location(&self) -> String {
        match self.line {
            Some(l) => format!("{}:{l}", self.file),
            None => self.file.clone(),
        }
    }
}

/// One line for an agent or a person: `F1 [high, correctness] src/a.rs:3: scenario`.
impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} [{}, {}] {}: {}",
            self.id,
            self.severity,
            self.lens,
            self.location(),
            self.scenario
        )
    }
}

/// What signing adds to a hallmark: the tree of the approved commit, who signed it, the
/// key's fingerprint and the SSHSIG signature over the hallmark's statement
/// (`crate::hallmark::Note::statement`). The core carries it as data; it never signs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Seal {
    /// The approved commit's tree.
    pub tree: String,
    /// The signer's principal (an email address, usually).
    pub signer: String,
    /// The public key's fingerprint, `SHA256:…`.
    pub key: String,
    /// The armored signature (`-----BEGIN SSH SIGNATURE-----`…).
    pub sig: String,
}

/// A fixer's dispute of a finding.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Dispute {
    pub finding: String,
    pub reason: String,
}

/// Tokens and cost of one model call or run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Usage {
    pub model: String,
    /// `dev`, `review`, `fix`, `intake`, `librarian`, `resume`.
    pub role: String,
    #[serde(default)]
    pub input: u64,
    #[serde(default)]
    pub output: u64,
    #[serde(default)]
    pub cache_read: u64,
    #[serde(default)]
    pub cache_write: u64,
    /// List-price cost in US dollars.
    #[serde(default)]
    pub cost_usd: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

/// Every kind of event, tagged by `event` in snake_case.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum EventKind {
    /// The Front Desk created the item.
    Created {
        title: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        request: Option<String>,
        branch: String,
        base: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        worktree: Option<String>,
        source: Source,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        issue: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pr: Option<String>,
    },
    /// The agent said the work is done.
    ProposedReady {
        sha: String,
        summary: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        why: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        how: Option<String>,
        #[serde(default)]
        ask: bool,
    },
    /// HEAD was frozen and queued for the Assay Office.
    Ready {
        sha: String,
        round: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        note: Option<String>,
    },
    /// Back to development.
    PulledBack {
        from: State,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// Abandoned; the branch and journal stay.
    Dropped { reason: String },
    /// A person allowed one more round or released a hold.
    Retried {
        reason: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tokens: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        released: Option<HoldKind>,
    },
    /// One gate ran (or a cached pass was served).
    CheckRun {
        sha: String,
        gate: String,
        exit_code: i32,
        duration_ms: u64,
        #[serde(default)]
        cached: bool,
        /// The condensed view of a failing gate's output.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        output: Option<String>,
        /// The whole output on disk (`hall run --show <log>`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        log: Option<String>,
    },
    /// Every gate passed at `sha`.
    ChecksPassed { sha: String },
    /// At least one gate failed at `sha`.
    ChecksFailed { sha: String, failed: Vec<String> },
    /// The principal engineer's (or a person's) verdict.
    Verdict {
        sha: String,
        round: u32,
        approved: bool,
        #[serde(default)]
        findings: Vec<Finding>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        summary: Option<String>,
        /// Who gave it when not the principal engineer: `you` for a person's override,
        /// `carried` for an approval kept across a rebase that left the patch alone.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        by: Option<String>,
    },
    /// `max_rejects` was reached: a person decides.
    Escalated { reason: String },
    /// The hallmark was struck on `sha`. `seal` is absent on lines written before
    /// hallmarks were signed (and on forged ones); such a hallmark never becomes a note.
    Hallmarked {
        sha: String,
        round: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        seal: Option<Seal>,
    },
    /// The fixer submitted a fix.
    FixSubmitted {
        sha: String,
        #[serde(default)]
        fixed: Vec<String>,
        #[serde(default)]
        disputed: Vec<Dispute>,
    },
    /// The ship command opened the PR.
    Shipped {
        sha: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pr: Option<String>,
    },
    /// The shipper rebased the hallmarked commit onto its base and the patch stayed the
    /// same, so the approval carries over to `sha`.
    Rebased {
        from: String,
        sha: String,
        carried: bool,
    },
    /// A headless run failed (no structured output, an error, a timeout, its cap).
    RunFailed {
        role: String,
        reason: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        run: Option<String>,
    },
    /// The daemon resumed the asking session with the answer.
    Resumed {
        qid: QuestionId,
        session: String,
        ok: bool,
    },
    /// The daemon paused its model workers (daily budget, plan limit) until `until`.
    Paused { reason: String, until: String },
    /// A person let the loop go past the daily cap for `day`.
    BudgetGranted { day: String, tokens: u64 },
    /// A closed item came back (PR feedback, conflicts, the merge queue).
    Reopened { reason: String },
    /// Reopened for red CI, which then passed with nothing moved.
    Restored {},
    /// The Delivery office asked for a rebase onto `base`.
    RebaseRequested { base: String },
    /// The loop stopped for a person without changing state.
    Held { kind: HoldKind, reason: String },
    /// A question for a person.
    Asked {
        qid: QuestionId,
        question: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        options: Vec<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        default: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        wait_until: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        session: Option<String>,
    },
    /// Its answer (`by_default` when the wait ran out).
    Answered {
        qid: QuestionId,
        answer: String,
        #[serde(default)]
        by_default: bool,
    },
    /// A prompt from a person in a session.
    Prompt {
        text: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        session: Option<String>,
    },
    /// The agent's summary of one turn.
    Turn {
        summary: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        session: Option<String>,
    },
    /// A commit on the item's branch.
    Commit {
        sha: String,
        subject: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        fixes: Vec<String>,
    },
    /// Tokens spent by one model run or call.
    Usage(Usage),
    /// A notification (session waiting, stuck, …).
    Notification {
        kind: String,
        message: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        session: Option<String>,
    },
    /// A gate denied a tool call.
    GateDenied {
        gate: String,
        command: String,
        reason: String,
    },
    /// A room made a decision: which one (name, sha256, where it came from).
    RoomUsed {
        world: String,
        room: String,
        sha256: String,
        source: String,
    },
    /// A person hid an inbox entry until it changes.
    InboxDismissed { key: String, stamp: String },
    /// The writer found an unterminated line left by a crash at `line` and closed it.
    TornLine { line: u64, bytes: u64 },
    /// An event kind this build does not know (written by a newer `hall`).
    #[serde(other)]
    Other,
}

impl EventKind {
    /// The `event` tag as written in the journal.
    pub fn name(&self) -> &'static str {
        match self {
            EventKind::Created { .. } => "created",
            EventKind::ProposedReady { .. } => "proposed_ready",
            EventKind::Ready { .. } => "ready",
            EventKind::PulledBack { .. } => "pulled_back",
            EventKind::Dropped { .. } => "dropped",
            EventKind::Retried { .. } => "retried",
            EventKind::CheckRun { .. } => "check_run",
            EventKind::ChecksPassed { .. } => "checks_passed",
            EventKind::ChecksFailed { .. } => "checks_failed",
            EventKind::Verdict { .. } => "verdict",
            EventKind::Escalated { .. } => "escalated",
            EventKind::Hallmarked { .. } => "hallmarked",
            EventKind::FixSubmitted { .. } => "fix_submitted",
            EventKind::Shipped { .. } => "shipped",
            EventKind::Rebased { .. } => "rebased",
            EventKind::RunFailed { .. } => "run_failed",
            EventKind::Resumed { .. } => "resumed",
            EventKind::Paused { .. } => "paused",
            EventKind::BudgetGranted { .. } => "budget_granted",
            EventKind::Reopened { .. } => "reopened",
            EventKind::Restored {} => "restored",
            EventKind::RebaseRequested { .. } => "rebase_requested",
            EventKind::Held { .. } => "held",
            EventKind::Asked { .. } => "asked",
            EventKind::Answered { .. } => "answered",
            EventKind::Prompt { .. } => "prompt",
            EventKind::Turn { .. } => "turn",
            EventKind::Commit { .. } => "commit",
            EventKind::Usage(_) => "usage",
            EventKind::Notification { .. } => "notification",
            EventKind::GateDenied { .. } => "gate_denied",
            EventKind::RoomUsed { .. } => "room_used",
            EventKind::InboxDismissed { .. } => "inbox_dismissed",
            EventKind::TornLine { .. } => "torn_line",
            EventKind::Other => "other",
        }
    }
}

/// Why a line could not be decoded.
#[derive(Debug, thiserror::Error)]
pub enum DecodeError {
    #[error("not JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error("written by a newer hall (v{0}); this build reads up to v{EVENT_VERSION}")]
    TooNew(u64),
}

/// Decodes one journal line, upgrading older shapes first.
pub fn decode(line: &str) -> Result<Event, DecodeError> {
    // Fast path: the current shape decodes directly. Only when `v` differs do we pay
    // for a generic `Value` round trip to upgrade it.
    match serde_json::from_str::<Event>(line) {
        Ok(e) if e.v == EVENT_VERSION => Ok(e),
        Ok(e) => upgrade(serde_json::from_str(line)?, u64::from(e.v)),
        Err(err) => {
            let value: serde_json::Value = serde_json::from_str(line)?;
            match value.get("v").and_then(|v| v.as_u64()) {
                Some(v) if v != u64::from(EVENT_VERSION) => upgrade(value, v),
                _ => Err(err.into()),
            }
        }
    }
}

/// Upgrades an older shape to the current one. Version 1 is the first shape, so there is
/// nothing to upgrade yet; the function is where a v2 would map v1 lines.
fn upgrade(value: serde_json::Value, v: u64) -> Result<Event, DecodeError> {
    if v > u64::from(EVENT_VERSION) {
        return Err(DecodeError::TooNew(v));
    }
    let mut event: Event = serde_json::from_value(value)?;
    event.v = EVENT_VERSION;
    Ok(event)
}

/// The envelope of a line without its payload: enough for the index to record events
/// that don't change state, without the cost of decoding every field.
#[derive(Debug, Deserialize)]
pub struct Head<'a> {
    pub v: u32,
    #[serde(borrow)]
    pub t: std::borrow::Cow<'a, str>,
    #[serde(borrow)]
    pub actor: std::borrow::Cow<'a, str>,
    #[serde(borrow)]
    pub event: std::borrow::Cow<'a, str>,
    #[serde(default)]
    pub item: Option<ItemId>,
    /// Only on `torn_line` markers: the line they close.
    #[serde(default)]
    pub line: Option<u64>,
    /// The session of prompts (a prompt clears its session's "waiting" notice).
    #[serde(default, borrow)]
    pub session: Option<std::borrow::Cow<'a, str>>,
}

/// Kinds whose payload matters to the fold or the index's side tables; the others are
/// fully described by their [`Head`].
pub fn payload_matters(event: &str) -> bool {
    !matches!(
        event,
        "prompt" | "turn" | "commit" | "check_run" | "gate_denied" | "torn_line"
    )
}

/// Encodes one event as a journal line without the trailing newline.
pub fn encode(event: &Event) -> String {
    serde_json::to_string(event).expect("events serialize: all fields are plain data")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_documented_line_decodes() {
        let line = r#"{"v":1,"t":"2026-10-09T10:04:12Z","actor":"you","event":"ready","item":"H-0042","sha":"7c2d018","round":1,"note":"cap at 6 attempts done"}"#;
        let e = decode(line).expect("decodes");
        assert_eq!(e.item, Some(ItemId(42)));
        assert_eq!(
            e.kind,
            EventKind::Ready {
                sha: "7c2d018".into(),
                round: 1,
                note: Some("cap at 6 attempts done".into())
            }
        );
        let again = decode(&encode(&e)).expect("round trip");
        assert_eq!(again, e);
    }

    #[test]
    fn unknown_kinds_are_kept_as_other() {
        let e = decode(r#"{"v":1,"t":"x","actor":"you","event":"teleported","where":"mars"}"#)
            .expect("decodes");
        assert_eq!(e.kind, EventKind::Other);
    }

    #[test]
    fn newer_versions_are_named() {
        let err = decode(r#"{"v":9,"t":"x","actor":"you","event":"ready","sha":"a","round":1}"#)
            .unwrap_err();
        assert!(err.to_string().contains("v9"), "{err}");
    }

    #[test]
    fn light_kinds_change_nothing_but_the_counters() {
        use crate::item::state::Item;
        let lines = [
            r#"{"v":1,"t":"2026-01-01T00:00:01Z","actor":"you","event":"prompt","text":"hi","session":"s","item":"H-0001"}"#,
            r#"{"v":1,"t":"2026-01-01T00:00:02Z","actor":"agent","event":"turn","summary":"did","item":"H-0001"}"#,
            r#"{"v":1,"t":"2026-01-01T00:00:03Z","actor":"agent","event":"commit","sha":"a","subject":"s","item":"H-0001"}"#,
            r#"{"v":1,"t":"2026-01-01T00:00:04Z","actor":"assayer","event":"check_run","sha":"a","gate":"g","exit_code":1,"duration_ms":3,"item":"H-0001"}"#,
            r#"{"v":1,"t":"2026-01-01T00:00:05Z","actor":"hook","event":"gate_denied","gate":"push","command":"git push","reason":"r","item":"H-0001"}"#,
            r#"{"v":1,"t":"2026-01-01T00:00:06Z","actor":"hall","event":"torn_line","line":3,"bytes":9,"item":"H-0001"}"#,
        ];
        let (mut full, mut light) = (Item::default(), Item::default());
        for line in lines {
            let head: Head<'_> = serde_json::from_str(line).expect("head");
            assert!(!payload_matters(&head.event), "{}", head.event);
            full.apply(&decode(line).expect("decodes"));
            light.note(&head.t, head.item);
        }
        assert_eq!(full, light);
    }

    #[test]
    fn garbage_is_an_error() {
        assert!(decode("{\"v\":1,\"t\":").is_err());
        assert!(decode("hello").is_err());
    }
}
