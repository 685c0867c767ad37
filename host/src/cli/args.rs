//! The arguments and subcommands of each verb, as clap reads them; their long help is
//! what `hall help` and docs/reference.md show.

use clap::{Args, Subcommand};

#[derive(Subcommand, Debug)]
pub enum ConfigCmd {
    /// The file's text and its values.
    Show {
        /// Your own config.toml instead of the repository's .hallmark.toml.
        #[arg(long)]
        user: bool,
    },
    /// Set keys (`merge.mode=auto stuck_after=3h`), validated as hall reads the file; an
    /// invalid result is refused and nothing is written.
    Set {
        /// KEY=VALUE pairs; a key is dotted (`policy.mode`).
        #[arg(required = true)]
        assignments: Vec<String>,
        /// Your own config.toml instead of the repository's .hallmark.toml.
        #[arg(long)]
        user: bool,
        /// Show the change without writing it.
        #[arg(long)]
        dry_run: bool,
    },
}

#[derive(Args, Debug)]
pub struct WebArgs {
    #[command(subcommand)]
    pub token: Option<WebCmd>,
    /// The port on 127.0.0.1 (default: a free one).
    #[arg(long)]
    pub port: Option<u16>,
    /// Print the launch URL without opening a browser.
    #[arg(long)]
    pub no_open: bool,
}

#[derive(Subcommand, Debug)]
pub enum WebCmd {
    /// API tokens for scripts: `Authorization: Bearer <token>` on every request.
    #[command(subcommand)]
    Token(WebTokenCmd),
}

#[derive(Subcommand, Debug)]
pub enum WebTokenCmd {
    /// Make a token; it is printed once and stored only as its hash.
    Create {
        /// A name to list and revoke it by.
        name: String,
    },
    /// The tokens by name, with when each was made and last used.
    List,
    /// Revoke a token: the next request carrying it is refused.
    Revoke {
        /// The token's name.
        name: String,
    },
}

#[derive(Args, Debug)]
pub struct FrameArgs {
    /// board, inbox, history, usage[:BY], repos, queue, help, or an item: `H-0001` (its
    /// now block), `H-0001:TAB` (now, journal, findings, usage, runs), `H-0001:trace`,
    /// `H-0001:gazette`.
    #[arg(default_value = "board")]
    pub view: String,
    /// The terminal's size, columns x rows.
    #[arg(long, default_value = "100x30")]
    pub size: String,
}

#[derive(Args, Debug)]
pub struct InitArgs {
    /// How the edit gate behaves: gate, ask or off.
    #[arg(long, value_parser = ["gate", "ask", "off"])]
    pub capture: Option<String>,
    /// The base branch (default: origin's HEAD, else the current branch).
    #[arg(long)]
    pub base: Option<String>,
    /// Don't write the Hallmark section into CLAUDE.md / AGENTS.md.
    #[arg(long)]
    pub no_claude_md: bool,
    /// Add your signing key to .hallmark/allowed_signers (then commit it on the base branch).
    #[arg(long)]
    pub signers: bool,
}

#[derive(Args, Debug)]
pub struct NewArgs {
    /// What to build, in your words.
    pub request: Option<String>,
    /// A short title (default: the request's first line).
    #[arg(long)]
    pub title: Option<String>,
    /// Start from a GitHub issue (needs gh).
    #[arg(long)]
    pub issue: Option<u64>,
    /// Start Claude in the new worktree.
    #[arg(long)]
    pub open: bool,
    /// Use this branch name instead of the template.
    #[arg(long)]
    pub branch: Option<String>,
    /// Start from a pull request's feedback (a number or URL; needs gh): its failing
    /// checks, requests for changes and the review threads nobody has resolved. An open
    /// PR is taken over (the item works on its branch and updates it); a merged or
    /// closed one gets a new branch from its base.
    #[arg(long, value_name = "PR", conflicts_with = "issue")]
    pub follow_up: Option<String>,
    /// Make one item: the Front Desk does not try to split the request into parts.
    #[arg(long)]
    pub no_split: bool,
    /// Add the new item as a part of this item (its branch is cut from the parent's).
    #[arg(long, value_name = "ID", conflicts_with_all = ["follow_up", "branch"])]
    pub parent: Option<String>,
}

#[derive(Args, Debug)]
pub struct ClaudeArgs {
    /// The item (default: the one whose worktree this is; else the main checkout).
    pub id: Option<String>,
    /// Start it without the sandbox: the hooks still gate, nothing else confines it.
    #[arg(long)]
    pub unconfined: bool,
    /// Print the settings it would start Claude Code with, and start nothing.
    #[arg(long)]
    pub print_settings: bool,
    /// Arguments passed on to `claude` (after `--`).
    #[arg(last = true)]
    pub claude_args: Vec<String>,
}

#[derive(Args, Debug)]
pub struct AdoptArgs {
    /// A short title (default: the PR's title, else the branch name).
    #[arg(long)]
    pub title: Option<String>,
    /// Adopt an open PR (needs gh).
    #[arg(long)]
    pub pr: Option<u64>,
    /// Stack the item on this branch instead of the configured base.
    #[arg(long)]
    pub base: Option<String>,
}

#[derive(Args, Debug)]
pub struct StatusArgs {
    /// One item to show in detail (default: every open item).
    pub id: Option<String>,
    /// Include closed and dropped items.
    #[arg(long)]
    pub all: bool,
}

#[derive(Args, Debug)]
pub struct LogArgs {
    /// The item (default: the one whose worktree this is, else every item's newest events).
    pub id: Option<String>,
    /// Only events of this kind (e.g. verdict, ready, prompt).
    #[arg(long)]
    pub kind: Option<String>,
    /// At most this many events, the newest.
    #[arg(long)]
    pub limit: Option<u32>,
}

#[derive(Args, Debug)]
pub struct InboxArgs {
    /// An entry's number, for --dismiss.
    pub n: Option<usize>,
    /// Hide entry N until it changes.
    #[arg(long, requires = "n")]
    pub dismiss: bool,
    /// Hide every entry until each changes.
    #[arg(long, conflicts_with = "dismiss")]
    pub clear: bool,
    /// Show dismissed entries too.
    #[arg(long)]
    pub all: bool,
    /// What the loop handles on its own.
    #[arg(long)]
    pub notices: bool,
}

#[derive(Args, Debug)]
pub struct WatchArgs {
    /// The item (default: the one whose worktree this is).
    pub id: Option<String>,
}

#[derive(Args, Debug)]
pub struct QueueArgs {
    /// Only this base's queue.
    #[arg(long)]
    pub base: Option<String>,
}

#[derive(Args, Debug)]
pub struct ReadyArgs {
    /// The item (default: the one whose worktree this is).
    pub id: Option<String>,
    /// A note for the journal, recorded with the `ready` event.
    #[arg(long)]
    pub note: Option<String>,
}

#[derive(Args, Debug)]
pub struct PullBackArgs {
    /// The item (default: the one whose worktree this is).
    pub id: Option<String>,
    /// Why, for the journal.
    #[arg(long)]
    pub reason: Option<String>,
}

#[derive(Args, Debug)]
pub struct MergeArgs {
    /// The part (default: the item whose worktree this is).
    pub part: Option<String>,
    /// Leave the part's worktree on disk.
    #[arg(long)]
    pub keep_worktree: bool,
}

#[derive(Args, Debug)]
pub struct DropArgs {
    /// The item (default: the one whose worktree this is).
    pub id: Option<String>,
    /// Why the item is abandoned (required: dropping is destructive).
    #[arg(long, required = true)]
    pub reason: String,
    /// Leave the worktree on disk.
    #[arg(long)]
    pub keep_worktree: bool,
}

#[derive(Args, Debug)]
pub struct RetryArgs {
    /// The item (default: the one whose worktree this is).
    pub id: Option<String>,
    /// Why one more round (or the hold's release) is worth it, for the journal.
    #[arg(long, required = true)]
    pub reason: String,
    /// For a budget hold: grant this many more tokens (default: another per_item).
    #[arg(long)]
    pub tokens: Option<String>,
}

#[derive(Args, Debug)]
pub struct ProposeArgs {
    /// The item (default: the one whose worktree this is).
    pub id: Option<String>,
    /// What was done.
    #[arg(long, required = true)]
    pub summary: String,
    /// Why it was done.
    #[arg(long)]
    pub why: Option<String>,
    /// How it was done.
    #[arg(long)]
    pub how: Option<String>,
    /// Wait for a person even when nothing is left to confirm.
    #[arg(long)]
    pub ask: bool,
}

#[derive(Args, Debug)]
pub struct AskArgs {
    /// The question, in a sentence.
    pub question: String,
    /// The item it is about (default: the one whose worktree this is, else the repository).
    #[arg(long)]
    pub item: Option<String>,
    /// Comma-separated options (answer with their text or a, b, c…).
    #[arg(long, value_delimiter = ',')]
    pub options: Vec<String>,
    /// Taken when the wait runs out.
    #[arg(long)]
    pub default: Option<String>,
    /// How long to wait for an answer (e.g. 4h).
    #[arg(long)]
    pub wait: Option<String>,
    /// The asking session, resumed with the answer.
    #[arg(long)]
    pub session: Option<String>,
}

#[derive(Args, Debug)]
pub struct AnswerArgs {
    /// The question's id (`hall ask` and the inbox show it).
    pub qid: String,
    /// An option's letter (`a`, `b`…) or its text; any text when there are no options.
    pub answer: String,
}

#[derive(Args, Debug)]
pub struct UsageArgs {
    /// What to total the runs by.
    #[arg(long, default_value = "item", value_parser = ["item", "station", "role", "model", "day"])]
    pub by: String,
    /// Only runs since this date or time (RFC 3339, e.g. 2026-11-01) or this long ago (e.g. 7d).
    #[arg(long)]
    pub since: Option<String>,
    /// Only this item's runs.
    #[arg(long)]
    pub item: Option<String>,
}

#[derive(Args, Debug)]
pub struct SchemaArgs {
    /// A command name, or `error`, `event` or `config`.
    pub name: String,
}

#[derive(Subcommand, Debug)]
pub enum RoomsCmd {
    /// Which room serves each world here: built-in, repo or user, with its sha256.
    List,
    /// What a .wasm implements, what it imports, and whether this hall can run it.
    Check {
        /// The component file.
        file: std::path::PathBuf,
    },
    /// Evaluate a room on JSON input and print its JSON answer.
    ///
    /// The room author's test loop: the same call the loop makes, without the loop.
    Run {
        /// A world (checks, verdict, merger, condense, plan, tool-policy): the room serving
        /// it here; or a .wasm file.
        room: String,
        /// The input as JSON, or @path to read it from a file (- for stdin).
        #[arg(long)]
        input: String,
    },
}

#[derive(Subcommand, Debug)]
pub enum NotifyCmd {
    /// Send one test message on every channel in force (or one), and say how each went.
    Test {
        /// Only this channel: desktop, ntfy, telegram or slack.
        #[arg(long, value_parser = ["desktop", "ntfy", "telegram", "slack"])]
        channel: Option<String>,
    },
    /// Run the notify worker's pass for this repository now (new escalations, reminders,
    /// the digest, and a stopped daemon, which the daemon can't tell of itself).
    Now,
}

#[derive(Subcommand, Debug)]
pub enum PolicyCmd {
    /// Nudges, would-blocks and blocks per detector, from the journal.
    Report(PolicyReportArgs),
}

#[derive(Args, Debug)]
pub struct PolicyReportArgs {
    /// Only since this date or time (RFC 3339, e.g. 2026-11-01) or this long ago (e.g. 7d).
    #[arg(long)]
    pub since: Option<String>,
    /// List the newest calls the policy spoke about (at most 50).
    #[arg(long)]
    pub calls: bool,
}

#[derive(Subcommand, Debug)]
pub enum LibraryCmd {
    /// Search the learnings in force (`--all`: proposed and retired ones too).
    Search {
        /// Words, an identifier, a path or an error message.
        query: Vec<String>,
        /// At most this many learnings.
        #[arg(long, default_value = "10")]
        limit: usize,
        /// Search proposed and retired learnings too.
        #[arg(long)]
        all: bool,
    },
    /// List the proposed learnings, or settle them with --accept and --reject.
    Review {
        /// Put these proposed learnings (or updates) in force.
        #[arg(long, num_args = 1..)]
        accept: Vec<String>,
        /// Turn these down: an update gives way to the version it would replace.
        #[arg(long, num_args = 1..)]
        reject: Vec<String>,
    },
    /// Take a learning out of use (`--undo`: put a retired one back in force).
    Retire {
        /// The learning (`L-0007`).
        id: String,
        /// Put a retired learning back in force instead.
        #[arg(long)]
        undo: bool,
        /// Why, for the journal.
        #[arg(long)]
        reason: Option<String>,
    },
    /// One learning: its text, status, scope, source and kept versions.
    Show {
        /// The learning (`L-0007`).
        id: String,
    },
    /// Run the librarian now over closed items (default: the recently closed ones it
    /// has not read), and retire the learnings unused for `retire_after`.
    Distill {
        /// Items to distil (closed or dropped), again if they were before.
        items: Vec<String>,
    },
    /// Write the whole store (learnings and history) to one JSON Lines file.
    Export {
        /// The file to write (default: stdout).
        #[arg(long)]
        out: Option<std::path::PathBuf>,
    },
    /// Restore an export into an empty store; without a file, bring in the learnings
    /// earlier versions committed under `.hallmark/knowledge/`.
    Import {
        /// The export to restore (a JSON Lines file `hall library export` wrote).
        file: Option<std::path::PathBuf>,
    },
}

#[derive(Subcommand, Debug)]
pub enum SetupCmd {
    /// Install the plugin at user level, with this `hall` binary's absolute path in its hooks.
    ///
    /// It also confines every later session through Claude Code's user settings
    /// (`--no-confine` takes that out again). Only a person may run it.
    Claude {
        /// Say what would be written and run, and do nothing.
        #[arg(long)]
        dry_run: bool,
        /// Start sessions without Claude Code's sandbox (`hall claude --unconfined` is the
        /// per-session form); the hooks gate either way.
        #[arg(long)]
        no_confine: bool,
        /// Also make `hall statusline` Claude Code's status line (~/.claude/settings.json),
        /// unless one is set already.
        #[arg(long)]
        statusline: bool,
    },
}

#[derive(Args, Debug)]
pub struct RunArgs {
    /// Show a kept log (a name printed by `hall run`, or a path) instead of running anything.
    #[arg(long)]
    pub show: Option<String>,
    /// With --show: only lines A-B (1-based, inclusive).
    #[arg(long, requires = "show")]
    pub lines: Option<String>,
    /// With --show: only lines containing this text.
    #[arg(long, requires = "show")]
    pub grep: Option<String>,
    /// The command and its arguments, after `--`.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub command: Vec<String>,
}

#[derive(Subcommand, Debug)]
pub enum DaemonCmd {
    /// Start the daemon in the background (`--at-login`: install it as a login service).
    Start {
        /// Install it as a user service that starts at login (through service-manager).
        #[arg(long)]
        at_login: bool,
    },
    /// Ask the running daemon to stop after its current pass.
    Stop,
    /// Whether the daemon runs, its heartbeat, leases and what it is doing.
    Status,
    /// Run the loop in this process.
    Run {
        /// Stop once no item has work the loop can do (for scripts and tests).
        #[arg(long)]
        until_idle: bool,
        /// Only this repository (default: every registered one; with --until-idle, the
        /// repository it is started in, or every registered one outside a repository).
        #[arg(long)]
        repo: Option<std::path::PathBuf>,
        /// Seconds between passes.
        #[arg(long, default_value = "2")]
        tick: f64,
    },
}

#[derive(Args, Debug)]
pub struct NextArgs {
    /// assayer, fixer or shipper.
    #[arg(long, value_parser = ["assayer", "fixer", "shipper"])]
    pub role: String,
    /// Who holds the lease (default: `HALL_HOLDER`, else `agent:<parent pid>`).
    #[arg(long)]
    pub holder: Option<String>,
}

#[derive(Args, Debug)]
pub struct FindingsArgs {
    /// The item (default: the one whose worktree this is).
    pub id: Option<String>,
}

#[derive(Args, Debug)]
pub struct FixedArgs {
    /// Findings the commit fixes (`F3`, `F4`).
    pub ids: Vec<String>,
    /// An item (default: the worktree's).
    #[arg(long)]
    pub item: Option<String>,
    /// A finding the fixer shows is wrong (needs --reason).
    #[arg(long)]
    pub dispute: Vec<String>,
    /// Why the disputed finding is wrong.
    #[arg(long)]
    pub reason: Option<String>,
}

#[derive(Args, Debug)]
pub struct ReplyArgs {
    /// The review comment's id (the dev run's prompt lists them as `#123`).
    pub comment: String,
    /// What to answer.
    #[arg(long)]
    pub body: String,
    /// An item (default: the worktree's).
    #[arg(long)]
    pub item: Option<String>,
}

#[derive(Args, Debug)]
pub struct VerdictArgs {
    /// The item (default: the worktree's).
    pub id: Option<String>,
    /// The verdict JSON (the schema: `hall schema verdict-file`).
    #[arg(long)]
    pub file: std::path::PathBuf,
}

#[derive(Args, Debug)]
pub struct BudgetArgs {
    /// Set a cap in .hallmark.toml, e.g. `daily=6M`, `per_item=1M`, `review.daily=2M`, `review.max_usd=3`.
    #[arg(long)]
    pub set: Vec<String>,
    /// Let the loop go past today's daily cap by this many tokens (default: another `daily`).
    #[arg(long, num_args = 0..=1, default_missing_value = "")]
    pub grant: Option<String>,
}

#[derive(Args, Debug)]
pub struct HistoryArgs {
    /// Only items a review rejected, with each finding and how it ended.
    #[arg(long)]
    pub rejected: bool,
    /// Only findings of this lens (implies the findings: `security`, `data`…).
    #[arg(long)]
    pub lens: Option<String>,
    /// Only items that ended since this date (2026-11-01) or this long ago (7d).
    #[arg(long)]
    pub since: Option<String>,
    /// At most this many items.
    #[arg(long, default_value_t = 50)]
    pub limit: usize,
}

#[derive(Args, Debug)]
pub struct ExportArgs {
    /// The item (default: the one this worktree belongs to).
    pub id: Option<String>,
    /// Write the Markdown to this file instead of printing it in the reply.
    #[arg(long)]
    pub out: Option<std::path::PathBuf>,
}

#[derive(Args, Debug)]
pub struct TraceArgs {
    /// The item (default: the one whose worktree this is).
    pub id: Option<String>,
    /// Keep printing the live run until it ends.
    #[arg(long)]
    pub follow: bool,
    /// A run by name (default: the newest).
    #[arg(long)]
    pub run: Option<String>,
    /// List the item's runs instead of one run's steps.
    #[arg(long, conflicts_with_all = ["follow", "run"])]
    pub list: bool,
}

#[derive(Args, Debug)]
pub struct AttachArgs {
    /// A file in the item's worktree or the repository (at most 5 MB), or an http(s) link.
    pub what: String,
    /// What the plate shows.
    #[arg(long)]
    pub caption: Option<String>,
    /// The item (default: the one whose worktree this is).
    #[arg(long = "id", value_name = "ITEM")]
    pub item: Option<String>,
}

#[derive(Args, Debug)]
pub struct GazetteArgs {
    /// The item (default: the one whose worktree this is).
    pub id: Option<String>,
    /// Open the page with the system's opener (`HALL_OPENER` names another).
    #[arg(long)]
    pub open: bool,
    /// Print the page's words as plain text too (for a terminal).
    #[arg(long)]
    pub text: bool,
}

#[derive(Args, Debug)]
pub struct VerifyArgs {
    /// The commit to check (default: HEAD).
    pub rev: Option<String>,
    /// Check this pull request's head commit instead (asks gh), against its base.
    #[arg(long, conflicts_with = "rev")]
    pub pr: Option<u64>,
    /// The base branch whose .hallmark/allowed_signers is trusted (default: the config's base); a full ref (refs/remotes/origin/main) is used as given.
    #[arg(long)]
    pub base: Option<String>,
    /// Trust this allowed_signers file instead of the base branch's.
    #[arg(long)]
    pub allowed_signers: Option<std::path::PathBuf>,
}
