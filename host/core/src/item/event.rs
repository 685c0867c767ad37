//! The journal's vocabulary: one typed event per line.
//!
//! Every line carries `v` so that a future shape can be upgraded before serde sees it
//! ([`upgrade`]). Unknown event kinds written by a newer `hall` decode as
//! [`EventKind::Other`] and are ignored by the fold rather than failing the read.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use super::finding::{Dispute, Finding};
use super::id::{ItemId, LearningId, QuestionId};
use super::learning::LearningKind;
use super::sha::Sha;
use super::state::State;

/// The version this build writes. Version 2 names a check run's command `check` (it was
/// `gate`) and spells lens ids in kebab-case (`first-principles`, once
/// `first_principles`); [`upgrade`] reads version 1 lines.
pub const EVENT_VERSION: u32 = 2;

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
    /// How a person's action reached `hall` when not from a shell: `web` for the web
    /// app. Absent for the command line, the hooks and the loop.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
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

/// What a follow-through dev run is for: the Delivery office found the shipped PR
/// conflicting with its base, asked for changes, or red at its head.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FollowKind {
    Conflict,
    Feedback,
    Ci,
}

impl FollowKind {
    pub fn as_str(self) -> &'static str {
        match self {
            FollowKind::Conflict => "conflict",
            FollowKind::Feedback => "feedback",
            FollowKind::Ci => "ci",
        }
    }

    /// The hold that says a dev run of this kind did not act.
    pub fn hold(self) -> HoldKind {
        match self {
            FollowKind::Conflict => HoldKind::Conflict,
            FollowKind::Feedback => HoldKind::Feedback,
            FollowKind::Ci => HoldKind::CiFailed,
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
    /// `hall new --follow-up`: started from a PR's feedback.
    FollowUp,
}

/// What signing adds to a hallmark: the tree of the approved commit, who signed it, the
/// key's fingerprint and the SSHSIG signature over the hallmark's statement
/// (the hallmark note's statement, which the `hallmark` crate builds). The core carries it as data; it never signs.
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
    /// The commit the approved change was measured from (a version 3 hallmark): the
    /// approval covers what the commit adds to it, and nothing before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<String>,
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
        sha: Sha,
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
        sha: Sha,
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
    /// One check ran (or a cached pass was served).
    CheckRun {
        sha: Sha,
        /// The check's command line, as `gates` in `.hallmark.toml` lists it.
        check: String,
        exit_code: i32,
        duration_ms: u64,
        #[serde(default)]
        cached: bool,
        /// The condensed view of a failing check's output.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        output: Option<String>,
        /// The whole output on disk (`hall run --show <log>`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        log: Option<String>,
    },
    /// One of the repository's `setup` commands ran in the loop's checkout before its
    /// checks.
    SetupRun {
        sha: Sha,
        /// The command, as `setup` in `.hallmark.toml` lists it.
        command: String,
        exit_code: i32,
        duration_ms: u64,
        /// The last lines of a failing command's output.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        output: Option<String>,
        /// The whole output on disk (`hall run --show <log>`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        log: Option<String>,
    },
    /// Every check passed at `sha`.
    ChecksPassed { sha: Sha },
    /// At least one check failed at `sha`; `failed` lists their commands.
    ChecksFailed { sha: Sha, failed: Vec<String> },
    /// The reviewer's (or a person's) verdict.
    Verdict {
        sha: Sha,
        round: u32,
        approved: bool,
        #[serde(default)]
        findings: Vec<Finding>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        summary: Option<String>,
        /// Who gave it when not the reviewer: `you` for a person's override,
        /// `carried` for an approval kept across a rebase that left the patch alone.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        by: Option<String>,
        /// The Library's learnings the reviewer says the verdict relied on (`L-0007`).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        learnings: Vec<String>,
    },
    /// `max_rejects` was reached: a person decides.
    Escalated { reason: String },
    /// The hallmark was struck on `sha`. `seal` is absent on lines written before
    /// hallmarks were signed (and on forged ones); such a hallmark never becomes a note.
    Hallmarked {
        sha: Sha,
        round: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        seal: Option<Seal>,
    },
    /// The fixer submitted a fix.
    FixSubmitted {
        sha: Sha,
        #[serde(default)]
        fixed: Vec<String>,
        #[serde(default)]
        disputed: Vec<Dispute>,
    },
    /// The ship command opened the PR.
    Shipped {
        sha: Sha,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pr: Option<String>,
    },
    /// The shipper rebased the hallmarked commit onto its base and the patch stayed the
    /// same, so the approval carries over to `sha`.
    Rebased { from: Sha, sha: Sha, carried: bool },
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
    Reopened {
        reason: String,
        /// Reopened for red CI: the PR head it failed at (a pass there restores it).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ci_at: Option<Sha>,
    },
    /// Reopened for red CI, which then passed with nothing moved.
    Restored {},
    /// The Delivery office asked for a rebase onto `base`.
    RebaseRequested { base: String },
    /// The item follows up on the feedback of PR `pr` (its URL), shipped by item
    /// `earlier` when Hallmark shipped it; written with `created`.
    FollowUpOf {
        pr: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        earlier: Option<ItemId>,
    },
    /// The item was started from issue `number` (`url`), labelled `labels` when it was
    /// read; written with `created`. The shipped PR's body closes the issue.
    IssueOf {
        number: u64,
        url: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        labels: Vec<String>,
    },
    /// What the Front Desk's intake made of the request: parts (`split`), or one item
    /// and why (`reasons`, the plan room's codes, and `problems`, its sentences or the
    /// run's own failure). Written with `created` on the item it made.
    Intake {
        split: bool,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        reasons: Vec<String>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        problems: Vec<String>,
        /// The intake run's stream, under the item's `runs/`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        run: Option<String>,
    },
    /// This item is a part of item `parent` (a child of a split request, or added by
    /// `hall new --parent`); written with `created`.
    PartOf { parent: ItemId },
    /// A part was added to this item: child `child`, to do `title` in `paths`.
    PartAdded {
        child: ItemId,
        title: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        paths: Vec<String>,
    },
    /// `hall merge`: the part's branch at `sha` merged into its parent's branch `into`
    /// as merge commit `commit`. The part is closed.
    Merged { into: String, sha: Sha, commit: Sha },
    /// The PR now targets another base (GitHub retargets a PR stacked on a branch that
    /// merged, decision 0011): the item's change is measured against `to` from here on.
    Restacked { from: String, to: String },
    /// A reply to review comment `comment` on the item's PR, drafted in development; the
    /// shipper posts it once the change that answers it is reviewed and pushed.
    ReplyDrafted { comment: u64, body: String },
    /// The shipper posted the reply to `comment` on the PR.
    ReplyPosted { comment: u64 },
    /// A headless dev run is due on the reopened item: `brief` says what to do (the
    /// base to rebase onto, the reviewers' words, the failed CI jobs).
    FollowThrough { kind: FollowKind, brief: String },
    /// The item's PR left the open state: merged, or closed without merging. The item
    /// stays closed; nothing watches it any more.
    Delivered { pr: String, merged: bool },
    /// The sweeper removed the item's worktree at `path` (branch and journal stay).
    WorktreeRemoved { path: String },
    /// The merger is about to run `[merge] command` for PR `pr` at `head`, judged
    /// against `onto` (the base tip then). Written first, so a crash between the
    /// command and its record can't merge the PR twice.
    Merging { pr: u64, head: Sha, onto: Sha },
    /// The merger's `[merge] command` merged PR `pr` at `head` into the base at `onto`.
    PrMerged { pr: u64, head: Sha, onto: Sha },
    /// The loop stopped for a person without changing state. `next` names what the
    /// person can run about it (absent on lines written before holds carried it).
    Held {
        kind: HoldKind,
        reason: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        next: Vec<String>,
    },
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
        sha: Sha,
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
    /// The tool-call policy spoke about a call: a nudge, a would-block (a block or a
    /// question the detector's `observe` mode turned into a nudge) or a block.
    ToolPolicy {
        /// The detector that decided (`repetition`, `error-streak`…).
        detector: String,
        /// What happened to the call: `nudge`, `ask` or `deny`.
        action: String,
        /// In `observe` mode: the detector would have denied or asked.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        would_block: bool,
        /// Claude Code's tool name.
        tool: String,
        /// The call's short form (a command, a path).
        call: String,
        /// What the agent was told.
        reason: String,
        /// The Claude Code session.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        session: Option<String>,
    },
    /// The checks ran under the rules committed at `base`: `gating` is a digest of what
    /// in them decides a check's outcome (the checks, `setup`, `gates_no_cache`,
    /// `[sandbox]`). The shipper compares it with the base it lands a carried approval
    /// on, and runs that base's checks first when they differ.
    RulesUsed { base: Sha, gating: String },
    /// A room made a decision: which one (name, sha256, where it came from).
    RoomUsed {
        world: String,
        room: String,
        sha256: String,
        source: String,
    },
    /// A person hid an inbox entry until it changes.
    InboxDismissed { key: String, stamp: String },
    /// The notify worker told a person of an inbox entry on one channel: the entry as
    /// it was (`key` and `stamp`, its `since`), so a restart never sends it again.
    Notified {
        key: String,
        stamp: String,
        /// The entry's kind (`question`, `escalated`, a hold's kind…), or `digest`.
        kind: String,
        /// `desktop`, `ntfy`, `telegram` or `slack`.
        channel: String,
        /// How: `sent` alone, `deferred` by quiet hours into the next digest, or sent
        /// in a `digest`.
        how: String,
        /// 0 for the first message, n for the nth reminder.
        #[serde(default, skip_serializing_if = "is_zero")]
        reminder: u32,
        /// The line a deferred entry will have in the digest (what the channel would
        /// have been sent), kept so the digest has it even once the entry is gone.
        #[serde(default, skip_serializing_if = "String::is_empty")]
        text: String,
    },
    /// `hall attach`: a plate for the item's Gazette, either a file copied into the
    /// item's `plates/` (named `file` there) or a link (`url`, never fetched).
    Attached {
        /// The copy's name under `items/<id>/plates/`; absent for a link.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        file: Option<String>,
        /// The link, http or https; absent for a file.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        url: Option<String>,
        /// What the plate shows, in the attacher's words.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        caption: Option<String>,
        /// The file's size in bytes (0 for a link).
        #[serde(default)]
        bytes: u64,
        /// Where the file was attached from, as given (the original name).
        #[serde(default)]
        from: String,
    },
    /// The writer found an unterminated line left by a crash at `line` and closed it.
    TornLine { line: u64, bytes: u64 },
    /// A learning entered the Library as `proposed` at `version` (an update of an
    /// accepted one when `replaces` names the version it would replace), or straight as
    /// accepted when its kind is in `[library] auto_accept` (`accepted`).
    LearningProposed {
        learning: LearningId,
        #[serde(default = "first_version")]
        version: u32,
        kind: LearningKind,
        #[serde(default)]
        title: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        replaces: Option<u32>,
        #[serde(default)]
        accepted: bool,
    },
    /// A person accepted a proposed learning: `version` is in force.
    LearningAccepted {
        learning: LearningId,
        #[serde(default = "first_version")]
        version: u32,
    },
    /// A person rejected proposed `version`: an update gives way to `restored`, the
    /// version it would have replaced; a new learning leaves the store (history keeps it).
    LearningRejected {
        learning: LearningId,
        #[serde(default = "first_version")]
        version: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        restored: Option<u32>,
    },
    /// The learning went out of use (its text stays, and `learning_restored` undoes it).
    LearningRetired {
        learning: LearningId,
        #[serde(default = "first_version")]
        version: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// A retired learning is in force again.
    LearningRestored {
        learning: LearningId,
        #[serde(default = "first_version")]
        version: u32,
    },
    /// The librarian distilled this closed item: the learnings it proposed (or updated:
    /// a new version of an accepted one), the ones the item's record contradicted and
    /// that were retired, whether it wrote the Gazette's words, and what it said that
    /// could not be used. `failed` when the run gave nothing usable; a failed run is
    /// not retried on its own (`hall library distill <id>` runs it again).
    Distilled {
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        proposed: Vec<LearningId>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        retired: Vec<LearningId>,
        #[serde(default)]
        words: bool,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        problems: Vec<String>,
        #[serde(default)]
        failed: bool,
        /// The run's stream, under the item's `runs/`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        run: Option<String>,
    },
    /// An event kind this build does not know (written by a newer `hall`).
    #[serde(other)]
    Other,
}

/// A verdict line's parts, borrowed from its event: for a reader that takes in the whole
/// verdict (the record renders it, a test checks it) rather than a field or two.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VerdictParts<'a> {
    pub sha: &'a Sha,
    pub round: u32,
    pub approved: bool,
    pub findings: &'a [Finding],
    pub model: Option<&'a str>,
    pub summary: Option<&'a str>,
    /// `you` for a person's override, `carried` for an approval kept across a rebase.
    pub by: Option<&'a str>,
    pub learnings: &'a [String],
}

impl EventKind {
    /// The verdict's parts, when this is a verdict.
    pub fn verdict(&self) -> Option<VerdictParts<'_>> {
        let EventKind::Verdict {
            sha,
            round,
            approved,
            findings,
            model,
            summary,
            by,
            learnings,
        } = self
        else {
            return None;
        };
        Some(VerdictParts {
            sha,
            round: *round,
            approved: *approved,
            findings,
            model: model.as_deref(),
            summary: summary.as_deref(),
            by: by.as_deref(),
            learnings,
        })
    }

    /// Every kind's name, as [`EventKind::name`] gives it (what `hall log --kind` accepts).
    pub const KINDS: &'static [&'static str] = &[
        "created",
        "proposed_ready",
        "ready",
        "pulled_back",
        "dropped",
        "retried",
        "check_run",
        "setup_run",
        "checks_passed",
        "checks_failed",
        "verdict",
        "escalated",
        "hallmarked",
        "fix_submitted",
        "shipped",
        "rebased",
        "run_failed",
        "resumed",
        "paused",
        "budget_granted",
        "reopened",
        "restored",
        "rebase_requested",
        "restacked",
        "follow_up_of",
        "intake",
        "part_of",
        "part_added",
        "merged",
        "delivered",
        "worktree_removed",
        "merging",
        "pr_merged",
        "follow_through",
        "reply_drafted",
        "reply_posted",
        "held",
        "asked",
        "answered",
        "prompt",
        "turn",
        "commit",
        "usage",
        "notification",
        "gate_denied",
        "tool_policy",
        "room_used",
        "rules_used",
        "inbox_dismissed",
        "attached",
        "distilled",
        "torn_line",
        "learning_proposed",
        "learning_accepted",
        "learning_rejected",
        "learning_retired",
        "learning_restored",
    ];

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
            EventKind::SetupRun { .. } => "setup_run",
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
            EventKind::Restacked { .. } => "restacked",
            EventKind::FollowUpOf { .. } => "follow_up_of",
            EventKind::IssueOf { .. } => "issue_of",
            EventKind::Intake { .. } => "intake",
            EventKind::PartOf { .. } => "part_of",
            EventKind::PartAdded { .. } => "part_added",
            EventKind::Merged { .. } => "merged",
            EventKind::Delivered { .. } => "delivered",
            EventKind::WorktreeRemoved { .. } => "worktree_removed",
            EventKind::Merging { .. } => "merging",
            EventKind::PrMerged { .. } => "pr_merged",
            EventKind::FollowThrough { .. } => "follow_through",
            EventKind::ReplyDrafted { .. } => "reply_drafted",
            EventKind::ReplyPosted { .. } => "reply_posted",
            EventKind::Held { .. } => "held",
            EventKind::Asked { .. } => "asked",
            EventKind::Answered { .. } => "answered",
            EventKind::Prompt { .. } => "prompt",
            EventKind::Turn { .. } => "turn",
            EventKind::Commit { .. } => "commit",
            EventKind::Usage(_) => "usage",
            EventKind::Notification { .. } => "notification",
            EventKind::GateDenied { .. } => "gate_denied",
            EventKind::ToolPolicy { .. } => "tool_policy",
            EventKind::RoomUsed { .. } => "room_used",
            EventKind::RulesUsed { .. } => "rules_used",
            EventKind::InboxDismissed { .. } => "inbox_dismissed",
            EventKind::Notified { .. } => "notified",
            EventKind::Attached { .. } => "attached",
            EventKind::Distilled { .. } => "distilled",
            EventKind::TornLine { .. } => "torn_line",
            EventKind::LearningProposed { .. } => "learning_proposed",
            EventKind::LearningAccepted { .. } => "learning_accepted",
            EventKind::LearningRejected { .. } => "learning_rejected",
            EventKind::LearningRetired { .. } => "learning_retired",
            EventKind::LearningRestored { .. } => "learning_restored",
            EventKind::Other => "other",
        }
    }
}

/// The version a learning event names when an older line left it out.
fn first_version() -> u32 {
    1
}

pub use super::codec::{DecodeError, Head, decode, encode, payload_matters, upgrade};

fn is_zero(n: &u32) -> bool {
    *n == 0
}
