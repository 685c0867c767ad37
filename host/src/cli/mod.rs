//! The command line, declared once with clap; `hall help --json` is generated from it.

use clap::{Parser, Subcommand};

mod args;

pub use args::*;

#[derive(Parser, Debug)]
#[command(
    name = "hall",
    version,
    about = "An agent-first development loop: items, a journal, gates and hallmarks",
    long_about = "An agent-first development loop: items, a journal, gates and hallmarks.\n\n\
        `hall` alone opens the terminal app on a terminal and prints the status list \
        elsewhere. Every command replies in JSON when stdout is not a terminal (`--json` \
        forces it) and in text on one. `hall --version --json` also gives the commit it was \
        built from, its target, the WIT package its rooms speak and each embedded room's sha256.",
    disable_help_subcommand = true
)]
pub struct Cli {
    /// Print JSON even on a terminal.
    #[arg(long, global = true)]
    pub json: bool,
    #[command(subcommand)]
    pub command: Option<Cmd>,
}

#[derive(Subcommand, Debug)]
pub enum Cmd {
    /// Create the journal, .hallmark.toml, the review stub and the CLAUDE.md section;
    /// register the repo.
    ///
    /// The checks room fills `gates` and `setup` from what the repository's CI runs, and
    /// the reply's `detection` says where each came from and what was left out. Your
    /// signing key is made when you have none; `--signers` also adds it to
    /// `.hallmark/allowed_signers`, which you commit on the base branch so that CI trusts
    /// your hallmarks. Safe to run again: a second run refreshes only the Hallmark section
    /// of CLAUDE.md or AGENTS.md.
    Init(InitArgs),
    /// Check git, gh, claude, the plugin, the hooks and the repo; each failure names its
    /// fix.
    ///
    /// It looks at the tools, the plugin, the daemon, the repository, the rules in effect
    /// on the base branch and any edit of them not committed yet, the journal, the rooms,
    /// the programs the repository's checks start, the index (rebuilt from the journal when
    /// it is damaged), the allowed signers, and whether sessions and the loop can be
    /// confined. The reply is the same whatever it finds, but the exit code is 1 when
    /// something Hallmark can't work without is missing.
    Doctor,
    /// Install the Claude Code plugin (the /hallmark skill and the hooks) for this user.
    #[command(subcommand)]
    Setup(SetupCmd),
    /// Create an item with its branch and worktree.
    ///
    /// The names come from the `branch` and `worktree` templates. Given a request, the
    /// Front Desk's intake may split it into parts: a parent item and one item per part,
    /// built side by side. When it is unsure it makes one item and the reply says why;
    /// `--no-split` skips it. `--issue` starts from a GitHub issue and `--follow-up` from a
    /// PR's feedback (both read with gh), `--parent` adds a part by hand, and `--open`
    /// starts a confined Claude Code session in the new worktree.
    New(NewArgs),
    /// Start Claude Code in an item's worktree, confined by its sandbox (see
    /// docs/security.md).
    ///
    /// The session gets the settings Hallmark writes for it (`--print-settings` shows them
    /// and starts nothing). `--unconfined` starts it without the sandbox: the hooks still
    /// gate it, nothing else holds it. Arguments after `--` go to `claude`.
    Claude(ClaudeArgs),
    /// Turn the current branch and worktree (or an open PR) into an item.
    ///
    /// If the branch is a shipped item's and its PR is still open, that item is reopened
    /// instead of a new one made. `--base` stacks the item on another branch than the
    /// configured base.
    Adopt(AdoptArgs),
    /// List items by state, or show one item.
    ///
    /// One item's status includes its now block: the lease, whether it waits for the
    /// assayer, and the latest run. `--all` includes closed and dropped items.
    Status(StatusArgs),
    /// Print an item's journal (or the newest events of all items).
    Log(LogArgs),
    /// The escalations waiting for you, oldest first.
    ///
    /// Your Office: questions, escalations, "ready?" and holds, derived from the journal.
    /// `--dismiss N` hides entry N and `--clear` hides them all, each until it changes;
    /// `--all` shows the hidden ones, and `--notices` lists what the loop handles on its
    /// own.
    Inbox(InboxArgs),
    /// The merge queue: the merger's last judgement of every shipped PR (merger.json; never
    /// asks GitHub).
    Queue(QueueArgs),
    /// Freeze HEAD and queue the item for checks and review.
    ///
    /// Running it again at the same commit changes nothing. A parent waits for its parts
    /// (`CHILDREN_OPEN`), and a part is never frozen on its own: the parent is reviewed
    /// once, with every part merged in.
    Ready(ReadyArgs),
    /// Return the item to development.
    ///
    /// It works from anywhere in the loop (checks, review, fixing, escalated, hallmarked)
    /// and from awaiting you.
    PullBack(PullBackArgs),
    /// Abandon the item; the branch and journal stay.
    Drop(DropArgs),
    /// Merge a finished part into its parent's branch, and close it.
    ///
    /// The merge is `--no-ff`. On a conflict (`MERGE_CONFLICT`) both branches are left as
    /// they were.
    Merge(MergeArgs),
    /// Allow an escalated item one more round, or release a hold.
    ///
    /// For a budget hold, `--tokens` grants that many more tokens to the item (default:
    /// another `per_item`).
    Retry(RetryArgs),
    /// The agent says the work is done.
    ///
    /// The item goes straight to the checks when nothing is left to confirm, or to you
    /// (awaiting you) with `--ask` or when something is. A part's proposal never freezes
    /// it.
    ProposeReady(ProposeArgs),
    /// Record a question for a person.
    ///
    /// It shows in the inbox. `--options` lists the answers to pick from, `--default` is
    /// taken when `--wait` runs out, and `--session` names the session to resume with the
    /// answer.
    Ask(AskArgs),
    /// Record the answer to a question.
    ///
    /// The answer is an option's letter (`a`, `b`…) or its text, or free text when the
    /// question has no options.
    Answer(AnswerArgs),
    /// Tokens and list-price cost of recorded model runs.
    ///
    /// Grouped `--by` item, station, role, model or day.
    Usage(UsageArgs),
    /// Closed and dropped items, newest first, and why things were rejected.
    ///
    /// Each item comes with how it ended. `--rejected` lists every finding of the reviews
    /// that rejected it and what became of it (fixed, disputed and upheld…).
    History(HistoryArgs),
    /// An item's whole record as Markdown: rounds, checks, verdicts, fixes, runs.
    ///
    /// Also the request, the decisions people made, the questions and answers, usage and
    /// cost per role, and every headless run step by step. It is read from the journal
    /// alone, so it is the same on any machine that has the journal.
    Export(ExportArgs),
    /// Rebuild the SQLite index from the journal files.
    Reindex,
    /// Run a command, keep its full output, and print the condensed view an agent should
    /// read.
    ///
    /// The condense room makes the view: the exit code, each failure with its file and
    /// line, the summary, each distinct warning once. `hall run` exits with the command's
    /// own code. `--show LOG` prints any part of a kept log instead (`--lines A-B`, `--grep
    /// TEXT`).
    Run(RunArgs),
    /// The review loop for every registered repo: start, stop, status, or run it here.
    #[command(subcommand)]
    Daemon(DaemonCmd),
    /// Claim the next item for a role, with a lease (exit 7 `CLAIMED` when all are taken).
    Next(NextArgs),
    /// Open findings and failing checks of an item.
    ///
    /// A failing check is shown condensed, with the kept log to drill into (`hall run
    /// --show`).
    Findings(FindingsArgs),
    /// Record what the fixer's commit fixes and resubmit the item to the checks.
    ///
    /// `--dispute ID --reason R` says a finding is wrong instead, and why; the next review
    /// settles it.
    Fixed(FixedArgs),
    /// Draft a reply to a review comment on the item's PR, posted once the change ships.
    Reply(ReplyArgs),
    /// Record a person's schema-checked verdict (a human override; refused to agents).
    ///
    /// The verdict room checks the file as it checks the reviewer's answer (`hall schema
    /// verdict-file`). Only a process the operating system shows to be a person's may run
    /// it (decision 0023); an approval is signed with your key and named as an override.
    Verdict(VerdictArgs),
    /// Check that a commit carries a valid signed hallmark, without the journal (the CI
    /// check).
    ///
    /// It works in any clone: the note must name the commit and its tree and carry a
    /// signature by a signer the base branch's `.hallmark/allowed_signers` lists. On
    /// failure, `NOT_HALLMARKED` names the failed step in `check`.
    Verify(VerifyArgs),
    /// The budget caps and today's spend; set a cap or grant more for today.
    Budget(BudgetArgs),
    /// The steps of an item's headless runs (`--follow` tails the live one).
    ///
    /// Without `--run` it shows the newest run; `--list` lists every run of the item,
    /// newest first.
    Trace(TraceArgs),
    /// Attach a file (copied into the journal) or a link (never fetched) to the item's
    /// Gazette.
    ///
    /// The attachment is a plate: a file from the item's worktree or the repository, at
    /// most 5 MB, or an http(s) link.
    Attach(AttachArgs),
    /// Follow an item live (state, lease, queue, the run's last steps, the check log) until
    /// it leaves the loop.
    ///
    /// On a terminal it redraws the now block until the item leaves the loop or Ctrl-C; off
    /// a terminal it prints one JSON line per change.
    Watch(WatchArgs),
    /// Print one frame of the terminal app as text (the board unless a view is named).
    ///
    /// For scripts and bug reports: any view of the app, drawn at `--size` columns x rows.
    Frame(FrameArgs),
    /// One line for Claude Code's status line (session JSON on stdin; `--json` for its
    /// parts); never fails.
    ///
    /// It shows the session's item and state, what runs for it, its place in the merge
    /// queue and the inbox count. It reads a small state file, never the journal, and
    /// always exits 0.
    Statusline,
    /// Print the item's Gazette page if it is stale, and say where it is (`--open` shows
    /// it).
    ///
    /// The page is one self-contained HTML file: no script and nothing from the network.
    /// `--text` also returns its words as plain text.
    Gazette(GazetteArgs),
    /// Which room serves each world; check or run a room component.
    #[command(subcommand)]
    Rooms(RoomsCmd),
    /// The Library of learnings: search, review proposals, retire, show, export, import.
    ///
    /// The Library is kept next to the journal. `distill` runs the librarian over closed
    /// items now; the daemon also does it on its own.
    #[command(subcommand)]
    Library(LibraryCmd),
    /// The tool-call policy: what its detectors said, to tune them before enforcing.
    #[command(subcommand)]
    Policy(PolicyCmd),
    /// Notifications: test each channel, or run the notify worker's pass now.
    ///
    /// The channels (desktop, ntfy, Telegram, Slack) are set under `[notify]` in your own
    /// config.toml.
    #[command(subcommand)]
    Notify(NotifyCmd),
    /// The settings: show the main checkout's .hallmark.toml (or `--user` your config.toml),
    /// or set keys in it, keeping its comments and order.
    #[command(subcommand)]
    Config(ConfigCmd),
    /// The web app on 127.0.0.1: the views, the inbox and the settings in a browser, each
    /// action a hall command; `hall web token` makes and revokes API tokens for scripts.
    ///
    /// It is opened through a one-time launch URL, and what a button does is recorded
    /// with `via: web`.
    Web(WebArgs),
    /// List every command (`--json` for agents), or show one: `hall help drop`.
    ///
    /// `--markdown` prints the same description as Markdown: every command, its usage and
    /// options, then the exit codes and error codes. docs/reference.md is its output.
    Help {
        /// A command (`drop`, or `daemon run` for a nested one).
        command: Vec<String>,
        /// Print the reference as Markdown, even off a terminal (`--json` still gives JSON).
        #[arg(long)]
        markdown: bool,
    },
    /// Print the JSON Schema of a command's reply, or of `error`, `event` or `config`.
    ///
    /// Also of the files and answers hall reads: `verdict-file`, `plan-file`,
    /// `gazette-words`, `distillation`, `statusline-board`, `version` and `config-reply`.
    Schema(SchemaArgs),
    /// The entry point for Claude Code hooks: reads the hook JSON on stdin.
    ///
    /// It always exits 0, whatever it is given: Claude Code reads exit 2 as a refusal.
    Hook {
        /// session-start, user-prompt-submit, pre-tool-use, post-tool-use,
        /// post-tool-use-failure, stop or notification.
        event: String,
    },
}
