//! The plain Rust types rooms take and return, as the rest of `hall` sees them.
//!
//! They mirror the records of the `hall:rooms` WIT package field for field (the
//! generated bindings stay private to `bindings.rs`), and carry serde and
//! schemars derives so `hall rooms run` can read them as JSON and `hall schema`
//! can describe them. Names and field names match the WIT ones on purpose: the
//! built-in rules in `rooms/sdk/src/rules/` compile against these types as well,
//! which is how the benchmark runs the same merger logic natively. The
//! exceptions are names that would not say of what outside their interface: the
//! plan world's `part` is [`PlanPart`] here, and the tool-policy world's
//! `command`, `outcome`, `action`, `mode` and `trigger` are [`ShellCommand`],
//! [`CallOutcome`], [`PolicyAction`], [`PolicyMode`] and [`PolicyTrigger`].

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A room's expected refusal: it understood the input and will not answer it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Failure {
    /// One sentence a person can act on.
    pub message: String,
    /// Every individual problem, in the order found.
    #[serde(default)]
    pub problems: Vec<String>,
}

// ---------------------------------------------------------------- checks

/// A root-level file the host read for check detection.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// Path relative to the repository root, `/`-separated.
    pub path: String,
    /// The file's content (UTF-8, invalid bytes replaced).
    pub content: String,
}

/// What the checks room sees of a repository.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ChecksInput {
    /// Every tracked path, relative and `/`-separated.
    #[serde(default)]
    pub files: Vec<String>,
    /// The root-level manifests found among `files` (see [`ChecksInput::MANIFESTS`]).
    #[serde(default)]
    pub manifests: Vec<Manifest>,
    /// The CI definitions found among `files` (see [`ChecksInput::is_ci`]).
    #[serde(default)]
    pub ci: Vec<Manifest>,
}

impl ChecksInput {
    /// The root-level files whose contents the checks room reads, when present.
    pub const MANIFESTS: &'static [&'static str] = &[
        "package.json",
        "Cargo.toml",
        "go.mod",
        "pyproject.toml",
        "setup.cfg",
        "tox.ini",
        "pytest.ini",
        "Makefile",
        "GNUmakefile",
        "makefile",
        "justfile",
        "Justfile",
        ".justfile",
        "noxfile.py",
        "Taskfile.yml",
        "Taskfile.yaml",
        ".pre-commit-config.yaml",
        "configure.ac",
        "scripts/check",
        "scripts/check.sh",
        "scripts/test",
        "scripts/test.sh",
        "scripts/lint",
        "scripts/lint.sh",
    ];

    /// True for a CI definition the checks room reads as evidence.
    pub fn is_ci(path: &str) -> bool {
        if let Some(name) = path.strip_prefix(".github/workflows/") {
            return !name.contains('/') && (name.ends_with(".yml") || name.ends_with(".yaml"));
        }
        [
            ".gitlab-ci.yml",
            ".circleci/config.yml",
            "azure-pipelines.yml",
            ".travis.yml",
        ]
        .contains(&path)
    }
}

/// One proposed check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Check {
    /// The command line, run from the repository root.
    pub command: String,
    /// The file that suggested it.
    pub source: String,
}

/// A command the checks room considered and did not propose.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct LeftOut {
    /// The command line.
    pub command: String,
    /// The file it came from.
    pub source: String,
    /// Why it is not a check.
    pub reason: String,
}

/// The checks room's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Detection {
    /// Checks in run order.
    pub checks: Vec<Check>,
    /// Commands preparing a fresh checkout.
    #[serde(default)]
    pub setup: Vec<Check>,
    /// Commands considered and left out, with the reason.
    #[serde(default)]
    pub left_out: Vec<LeftOut>,
    /// Observations for people; never fatal.
    pub notes: Vec<String>,
}

// ---------------------------------------------------------------- verdict

// The lenses and severities are the core's: one definition for the schema, the
// journal, this boundary and the SDK.
pub use hallmark_core::item::finding::{Lens, Severity};

/// One finding of a checked verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Finding {
    /// The lens that found it.
    pub lens: Lens,
    /// How much it matters.
    pub severity: Severity,
    /// Path relative to the repository root.
    pub file: String,
    /// 1-based line.
    pub line: u32,
    /// The concrete scenario that breaks.
    pub scenario: String,
}

/// A verdict that passed validation, in normal form.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CheckedVerdict {
    /// No blockers and no majors.
    pub approved: bool,
    /// The reviewer's summary.
    pub summary: String,
    /// Lenses applied, canonical order.
    pub lenses: Vec<Lens>,
    /// Findings by severity, file, line.
    pub findings: Vec<Finding>,
    /// Library learnings the reviewer used.
    pub learnings_used: Vec<String>,
    /// Blocker count.
    pub blockers: u32,
    /// Major count.
    pub majors: u32,
    /// Minor count.
    pub minors: u32,
    /// Nit count.
    pub nits: u32,
}

// ---------------------------------------------------------------- merger

/// Checks at one commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CiState {
    /// Every check passed.
    Green,
    /// A check failed.
    Red,
    /// Checks are queued or running.
    Pending,
    /// No checks run and none are expected.
    Missing,
    /// The host stopped waiting; a person must look.
    Abandoned,
}

/// Whether a PR merges cleanly.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MergeableState {
    /// It merges cleanly.
    Mergeable,
    /// It conflicts.
    Conflicting,
    /// Not computed yet.
    Unknown,
}

/// When a PR behind its base is brought up to date (`[merge] update`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum UpdateMode {
    /// When base commits touch its files.
    #[default]
    Files,
    /// Only when it conflicts.
    Conflicts,
}

/// One check reported at a PR's head.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckFact {
    /// The check's name as the CI reports it.
    pub name: String,
    /// Its state.
    pub state: CiState,
    /// Tests it said it ran, when known; `Some(0)` on a green check is a vacuous green.
    #[serde(default)]
    pub tests: Option<u64>,
}

/// A PR merged into a merge check's tree ahead of the PR checked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PrHead {
    /// The PR number.
    pub number: u32,
    /// The head SHA merged.
    pub head: String,
}

/// The repository's checks on a PR merged onto the base tip, or onto the tip
/// with the PRs in `ahead` merged first (`git merge-tree --write-tree`, each step).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MergeCheck {
    /// Their result; `Missing` when none ran.
    pub state: CiState,
    /// The base tip SHA the chain started from.
    pub onto: String,
    /// The PRs merged in before this one, in order.
    #[serde(default)]
    pub ahead: Vec<PrHead>,
    /// The PR head SHA merged; only a result for the current head counts.
    pub head: String,
    /// The checked tree's object id, when every merge was clean; a result counts
    /// for merging only when it equals the PR's `merged_tree`.
    #[serde(default)]
    pub tree: Option<String>,
    /// Why none ran and none will; `None` when the host has not started one yet.
    #[serde(default)]
    pub skipped: Option<String>,
}

/// How often one path changed in the base's recent commits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PathCount {
    /// The path.
    pub path: String,
    /// How many of the last `hot.window` first-parent base commits changed it.
    pub commits: u32,
}

/// Which paths count as hot (`[merge] hot_window`, `hot_threshold`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HotSettings {
    /// How many of the base's latest first-parent commits are counted; 0 turns the rule off.
    pub window: u32,
    /// Changed in at least this many of them makes a path hot; 0 turns the rule off.
    pub threshold: u32,
}

impl Default for HotSettings {
    fn default() -> Self {
        Self {
            window: 50,
            threshold: 5,
        }
    }
}

/// A base commit since a PR's merge base.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BaseCommit {
    /// The commit SHA.
    pub sha: String,
    /// Paths it changed.
    #[serde(default)]
    pub files: Vec<String>,
}

/// The facts about one open shipped PR.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PrFacts {
    /// PR number.
    pub number: u32,
    /// SHA at the head now.
    pub head_sha: String,
    /// SHA the hallmark is for, if any.
    #[serde(default)]
    pub hallmark_sha: Option<String>,
    /// Whether it merges cleanly.
    pub mergeable: MergeableState,
    /// Checks at the head, summed up.
    pub ci: CiState,
    /// Each check at the head.
    #[serde(default)]
    pub checks: Vec<CheckFact>,
    /// The checks on this head merged onto the tip or a predicted tip, newest
    /// first.
    #[serde(default)]
    pub merge_checks: Vec<MergeCheck>,
    /// The tree merging this head onto the tip would write now, if clean.
    #[serde(default)]
    pub merged_tree: Option<String>,
    /// A request for changes stands.
    #[serde(default)]
    pub changes_requested: bool,
    /// Reviewers still asked to review.
    #[serde(default)]
    pub review_requests: Vec<String>,
    /// The PR description (dependency lines are read from it).
    #[serde(default)]
    pub body: String,
    /// The PR this one is stacked on.
    #[serde(default)]
    pub stacked_on: Option<u32>,
    /// Paths the PR touches.
    #[serde(default)]
    pub files: Vec<String>,
    /// Base commits since the merge base, oldest first.
    #[serde(default)]
    pub base_commits: Vec<BaseCommit>,
    /// A rebase was requested and is under way.
    #[serde(default)]
    pub rebasing: bool,
    /// A person cleared this head despite lit paths.
    #[serde(default)]
    pub lit_cleared: bool,
}

/// One base and its queue.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BaseQueue {
    /// Base branch name.
    pub base: String,
    /// The base tip's SHA.
    #[serde(default)]
    pub tip_sha: String,
    /// Checks at the base tip.
    pub tip_ci: CiState,
    /// The repository's checks passed on exactly the tip's tree before it was
    /// the tip.
    #[serde(default)]
    pub tip_checked: bool,
    /// How often each path changed lately.
    #[serde(default)]
    pub recent: Vec<PathCount>,
    /// A merged PR whose delivery is not yet recorded.
    #[serde(default)]
    pub merge_in_flight: Option<u32>,
    /// Open shipped PRs, oldest first.
    #[serde(default)]
    pub prs: Vec<PrFacts>,
}

/// The `[merge]` settings the merger needs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MergeSettings {
    /// CI must be green at the head.
    #[serde(default = "default_true")]
    pub require_ci: bool,
    /// When a PR behind its base is updated.
    #[serde(default)]
    pub update: UpdateMode,
    /// Lit path patterns.
    #[serde(default)]
    pub lit: Vec<String>,
    /// Check names that must be reported at a PR's head for green to count.
    #[serde(default)]
    pub required_checks: Vec<String>,
    /// A PR whose base moved merges only with its checks green merged onto the tip.
    #[serde(default = "default_true")]
    pub pre_merge_check: bool,
    /// Which paths are hot.
    #[serde(default)]
    pub hot: HotSettings,
    /// How many PRs per base may have merge checks in line at once (`[merge] train`).
    #[serde(default = "default_train")]
    pub train: u32,
}

impl Default for MergeSettings {
    fn default() -> Self {
        Self {
            require_ci: true,
            update: UpdateMode::Files,
            lit: Vec::new(),
            required_checks: Vec::new(),
            pre_merge_check: true,
            hot: HotSettings::default(),
            train: default_train(),
        }
    }
}

/// The merge train's default length. `[merge] train` defaults to the same (the host's
/// test of its `[merge]` conversion holds the two together).
pub const DEFAULT_TRAIN: u32 = 4;

fn default_train() -> u32 {
    DEFAULT_TRAIN
}

fn default_true() -> bool {
    true
}

/// The merger's input for one pass.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MergerInput {
    /// `[merge]` settings from the base branch.
    #[serde(default)]
    pub settings: MergeSettings,
    /// Every base with shipped PRs.
    #[serde(default)]
    pub bases: Vec<BaseQueue>,
    /// Other open PR numbers dependency lines may name.
    #[serde(default)]
    pub open_prs: Vec<u32>,
}

/// What the merger does with a PR now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// Merge it now.
    Merge,
    /// Ask for a rebase now (its turn).
    Rebase,
    /// Nothing this pass.
    Wait,
    /// Put it to a person.
    Hold,
}

/// The judgement for one PR.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Decision {
    /// PR number.
    pub number: u32,
    /// What to do now.
    pub action: Action,
    /// PRs it waits for.
    pub waits_for: Vec<u32>,
    /// With `merge_check_missing`: the PRs to merge into the tip first, in order,
    /// for this PR's merge check.
    #[serde(default)]
    pub check_onto: Vec<u32>,
    /// Reason codes, most important first.
    pub reasons: Vec<String>,
}

/// The plan for one base.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct BasePlan {
    /// Base branch name.
    pub base: String,
    /// The base tip is red; the line is stopped.
    pub line_stopped: bool,
    /// One decision per PR, queue order.
    pub decisions: Vec<Decision>,
}

/// The plan for one pass.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct MergerPlan {
    /// One plan per base, input order.
    pub bases: Vec<BasePlan>,
}

// ---------------------------------------------------------------- condense

/// One finished command, for the condense room.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CondenseInput {
    /// The command line.
    pub command: String,
    /// Its exit code.
    pub exit_code: i32,
    /// Combined stdout and stderr.
    pub output: String,
    /// Where the full output is kept (named in the footer).
    #[serde(default)]
    pub log: String,
}

/// What condensing did, in sizes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CondenseStats {
    /// Bytes in.
    pub bytes_in: u64,
    /// Bytes out.
    pub bytes_out: u64,
    /// Lines in.
    pub lines_in: u64,
    /// Lines out.
    pub lines_out: u64,
}

/// The condensed output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Condensed {
    /// What the agent reads.
    pub text: String,
    /// The filter family used.
    pub filter: String,
    /// Sizes before and after.
    pub stats: CondenseStats,
}

// ---------------------------------------------------------------- plan

/// One part of a split request, as the intake model proposes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PlanPart {
    /// The title the part's item would get.
    pub title: String,
    /// The files the part may change: path globs relative to the repository root
    /// (`*`, `?`, a whole-segment `**`; `dir/` is everything under `dir`).
    pub paths: Vec<String>,
    /// How a reviewer tells the part is done.
    pub acceptance: String,
}

/// The intake model's answer for one request, for the plan room to judge.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PlanInput {
    /// The request as the person wrote it.
    pub request: String,
    /// Whether the model says to split it.
    pub split: bool,
    /// The model's reason, whichever way it answered.
    #[serde(default)]
    pub reason: String,
    /// The parts it proposes, in its order.
    #[serde(default)]
    pub parts: Vec<PlanPart>,
    /// `[intake] max_parts`: the most parts a split may have; below 2, none splits.
    pub max_parts: u32,
}

/// The plan room's judgement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PlanJudgement {
    /// True only when the request may be split into exactly the given parts.
    pub split: bool,
    /// Reason codes (snake_case), one per rule broken; empty when `split` is true.
    pub reasons: Vec<String>,
    /// One sentence per problem, naming the part or parts concerned.
    pub problems: Vec<String>,
}

// ---------------------------------------------------------------- tool policy

/// What a shell command does, as the gates' analysis reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum CommandKind {
    /// Only reads.
    ReadOnly,
    /// Runs tests.
    Test,
    /// Builds, checks or lints.
    Build,
    /// Changes files, a repository or anything else.
    Mutating,
    /// The analysis could not tell.
    Unknown,
}

/// The analysis of a Bash call's command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ShellCommand {
    /// The strongest kind among its simple commands.
    pub kind: CommandKind,
    /// Each simple command's program with its subcommand (`git commit`), at most 32.
    #[serde(default)]
    pub words: Vec<String>,
    /// The command makes a commit.
    #[serde(default)]
    pub commits: bool,
    /// The command tells Hallmark what a commit fixed (`hall fixed`).
    #[serde(default)]
    pub reports_fix: bool,
}

/// One tool call, normalised.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolCall {
    /// Claude Code's tool name.
    pub tool: String,
    /// The call's identity: equal keys do the same thing.
    pub key: String,
    /// A short, readable form of the call (at most 120 characters).
    #[serde(default)]
    pub preview: String,
    /// Whether the call only reads.
    #[serde(default)]
    pub read_only: bool,
    /// For Bash, the command's analysis.
    #[serde(default)]
    pub command: Option<ShellCommand>,
}

/// How a past call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum CallOutcome {
    /// It ran and succeeded.
    Success,
    /// It ran and failed.
    Error,
    /// This policy denied it; it did not run.
    Blocked,
}

/// A call from the session's recent past.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PastCall {
    /// The call.
    pub call: ToolCall,
    /// How it ended.
    pub outcome: CallOutcome,
    /// A hash of its output or error; empty when nothing came back.
    #[serde(default)]
    pub output_hash: String,
    /// For `blocked`: the detector that blocked it.
    #[serde(default)]
    pub detector: String,
}

/// A check whose latest runs keep failing the same way.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FailingCheck {
    /// The check's command line.
    pub check: String,
    /// How many of its latest runs in a row failed with the same output.
    pub same_output_runs: u32,
}

/// The item a session works on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ItemFacts {
    /// Its id (`H-0042`).
    pub id: String,
    /// Its state (`development`, `fixing`…).
    pub state: String,
    /// Checks that failed on their latest run; filled only for a commit or `hall fixed`.
    #[serde(default)]
    pub failing_checks: Vec<FailingCheck>,
}

/// How `hall` treats what a detector decides.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum PolicyMode {
    /// The detector does not run.
    Off,
    /// A `deny` or `ask` becomes a nudge, logged as a would-block.
    Observe,
    /// The detector's answer stands.
    Enforce,
}

/// One detector's settings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DetectorSetting {
    /// `repetition`, `oscillation`, `error-streak`, `same-failure`…
    pub name: String,
    /// Its mode.
    pub mode: PolicyMode,
    /// The count at which it nudges.
    pub nudge_at: u32,
    /// The count at which it blocks, given the evidence it needs.
    pub block_at: u32,
}

/// Everything the tool-policy room decides one call from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PolicyInput {
    /// The call about to run.
    pub call: ToolCall,
    /// The item the session works on.
    #[serde(default)]
    pub item: Option<ItemFacts>,
    /// The session's recent calls, oldest first.
    #[serde(default)]
    pub window: Vec<PastCall>,
    /// Every detector's settings.
    #[serde(default)]
    pub settings: Vec<DetectorSetting>,
}

/// What happens to a call.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum PolicyAction {
    /// It runs.
    Allow,
    /// It runs, and the agent is told the reason.
    Nudge,
    /// A person is asked before it runs.
    Ask,
    /// It does not run.
    Deny,
}

/// The tool-policy room's answer for one call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PolicyVerdict {
    /// What happens to the call.
    pub action: PolicyAction,
    /// The detector that decided; empty for `allow`.
    #[serde(default)]
    pub detector: String,
    /// For the agent: what it keeps doing and what to do instead; empty for `allow`.
    #[serde(default)]
    pub reason: String,
}

/// How often a call's key must recur in the window for a [`PolicyTrigger::Recurs`]
/// to hold, and where.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Recurrence {
    /// The least number of past calls with the call's key.
    pub times: u32,
    /// Above 0: only the window's last `last` calls that are not read-only count;
    /// 0: every call in the window does.
    #[serde(default)]
    pub last: u32,
    /// A read-only call never matches.
    #[serde(default)]
    pub reads_exempt: bool,
}

/// A condition under which the tool-policy room may answer something other than
/// `allow`: one item of the guard it states for given settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum PolicyTrigger {
    /// Any call: the room is asked every time.
    Always,
    /// The call's key recurs in the window.
    Recurs(Recurrence),
    /// The window ends with at least this many failed calls.
    ErrorStreak(u32),
    /// The call commits or reports a fix.
    ClaimsFix,
}
