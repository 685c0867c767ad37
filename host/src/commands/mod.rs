//! One file per verb; this module holds what they share: the context a command runs
//! in, the reply it returns, and the dispatch `match`.

mod adopt;
mod answer;
mod ask;
mod attach;
pub mod board;
mod budget;
mod claude;
pub mod config;
mod daemon;
mod doctor;
mod drop;
pub mod export;
mod findings;
mod fixed;
mod follow_up;
mod gazette;
mod help;
mod history;
mod inbox;
mod library;
mod next;
pub mod notify;
mod policy;
pub mod trace;
mod verdict;
mod verify;
pub use claude::{SESSION_ENV, confine_by_default as claude_confine_by_default};
pub use help::usage_error;
pub use inbox::count as inbox_count;
pub use inbox::entries as inbox_entries;
mod init;
mod log;
mod merge;
mod new;
mod propose_ready;
mod pull_back;
mod queue;
mod ready;
mod reindex;
mod reply;
mod retry;
mod rooms;
pub mod run;
pub mod schema;
pub mod setup;
mod status;
mod unshared;
mod usage;
mod watch;
pub mod web;

use serde::Serialize;

use crate::cli::Cmd;
use crate::error::{HallError, Result};
pub use crate::hall::{Ctx, Hall};
use crate::item::{Item, ItemId, Sha, State};

/// What a command returns: the JSON reply (which always has `next`) and its text form.
pub struct Reply {
    /// The JSON reply, serialized once, straight from the command's reply type.
    pub json: String,
    pub text: String,
    /// Lines for stderr (warnings such as a torn journal line).
    pub warnings: Vec<String>,
    /// The process exit code (0, except for `hall run`, which passes its command's on).
    pub exit: u8,
    /// Print the text even off a terminal unless `--json` is given (`hall run`, whose
    /// output is what an agent reads from its Bash tool).
    pub text_first: bool,
}

impl Reply {
    pub fn new(value: &impl Serialize, text: String) -> Reply {
        let json = serde_json::to_string(value)
            .unwrap_or_else(|e| serde_json::json!({ "error": e.to_string() }).to_string());
        Reply {
            json,
            text,
            warnings: Vec::new(),
            exit: 0,
            text_first: false,
        }
    }

    pub fn warn(mut self, warnings: impl IntoIterator<Item = String>) -> Reply {
        self.warnings.extend(warnings);
        self
    }
}

/// The commands that make sense for an item in its state.
pub fn next_for(item: &Item) -> Vec<String> {
    let id = item.id.map(|i| i.to_string()).unwrap_or_default();
    let mut next = Vec::new();
    if let Some(hold) = &item.hold {
        // A hold that says what to do (a missing tool) comes with its own retry.
        next.extend(hold.next.iter().cloned());
        if !hold.next.iter().any(|n| n.starts_with("hall retry")) {
            next.push(format!("hall retry {id} --reason \"…\""));
        }
    }
    match item.state {
        State::Development => {
            next.push(format!("hall propose-ready {id} --summary \"…\""));
            next.push(format!("hall ready {id}"));
            next.push(format!("hall status {id}"));
        }
        State::AwaitingYou => {
            next.push(format!("hall ready {id}"));
            next.push(format!("hall pull-back {id} --reason \"…\""));
        }
        State::Checks | State::Review | State::Fixing => {
            next.push(format!("hall log {id}"));
            next.push(format!("hall pull-back {id} --reason \"…\""));
        }
        State::Escalated => {
            next.push(format!("hall retry {id} --reason \"…\""));
            next.push(format!("hall pull-back {id} --reason \"…\""));
            next.push(format!("hall log {id} --kind verdict"));
        }
        State::Hallmarked => {
            next.push(format!("hall log {id}"));
            next.push(format!("hall pull-back {id} --reason \"…\""));
        }
        State::Closed | State::Dropped => {
            next.push(format!("hall log {id}"));
            next.push("hall new --title \"…\"".to_string());
        }
    }
    next
}

/// `hall frame`'s reply (the terminal app draws it, a layer above the commands).
#[derive(Serialize, schemars::JsonSchema)]
pub struct FrameReply {
    /// The frame's rows, as text, trailing spaces trimmed.
    pub rows: Vec<String>,
}

/// Warnings for torn lines a read or write skipped.
pub fn torn_warnings(path: &std::path::Path, torn: &[crate::journal::Torn]) -> Vec<String> {
    torn.iter()
        .map(|t| {
            format!(
                "{}:{}: skipped a torn line of {} bytes (a crash mid-write)",
                path.display(),
                t.line,
                t.bytes
            )
        })
        .collect()
}

/// Runs one parsed command, then brings the status board up to date when the command
/// changed the journal (see `board.rs`).
pub fn dispatch(cmd: Option<Cmd>, ctx: &Ctx) -> Result<Reply> {
    // Commands that never write the journal, or that watch it for a long time, skip the
    // board check.
    let skip = matches!(
        cmd,
        Some(
            Cmd::Help { .. }
                | Cmd::Schema(_)
                | Cmd::Hook { .. }
                | Cmd::Statusline
                | Cmd::Frame(_)
                | Cmd::Web(_)
                | Cmd::Watch(_)
                | Cmd::Verify(_)
        )
    );
    let reply = run_command(cmd, ctx);
    if !skip {
        board::after_command(ctx);
    }
    reply
}

fn run_command(cmd: Option<Cmd>, ctx: &Ctx) -> Result<Reply> {
    match cmd {
        None => status::run(
            ctx,
            &crate::cli::StatusArgs {
                id: None,
                all: false,
            },
        ),
        Some(Cmd::Init(a)) => init::run(ctx, &a),
        Some(Cmd::Doctor) => doctor::run(ctx),
        Some(Cmd::Setup(crate::cli::SetupCmd::Claude {
            dry_run,
            no_confine,
            statusline,
        })) => {
            // It changes Claude Code's settings and whether later sessions are
            // confined: a person's call, never a session's. Even a dry run: what it
            // shows is where the person's key and settings are.
            let you = ctx.person(
                "setup claude",
                "changes Claude Code's settings and the confinement of every later session",
            )?;
            setup::claude(you, dry_run, no_confine, statusline)
        }
        Some(Cmd::New(a)) => new::run(ctx, &a),
        Some(Cmd::Claude(a)) => claude::run(ctx, &a),
        Some(Cmd::Adopt(a)) => adopt::run(ctx, &a),
        Some(Cmd::Status(a)) => status::run(ctx, &a),
        Some(Cmd::Log(a)) => log::run(ctx, &a),
        Some(Cmd::Inbox(a)) => inbox::run(ctx, &a),
        Some(Cmd::Queue(a)) => queue::run(ctx, &a),
        Some(Cmd::Ready(a)) => ready::run(ctx, &a),
        Some(Cmd::PullBack(a)) => pull_back::run(ctx, &a),
        Some(Cmd::Drop(a)) => drop::run(ctx, &a),
        Some(Cmd::Merge(a)) => merge::run(ctx, &a),
        Some(Cmd::Retry(a)) => retry::run(ctx, &a),
        Some(Cmd::ProposeReady(a)) => propose_ready::run(ctx, &a),
        Some(Cmd::Ask(a)) => ask::run(ctx, &a),
        Some(Cmd::Answer(a)) => answer::run(ctx, &a),
        Some(Cmd::Usage(a)) => usage::run(ctx, &a),
        Some(Cmd::History(a)) => history::run(ctx, &a),
        Some(Cmd::Export(a)) => export::run(ctx, &a),
        Some(Cmd::Reindex) => reindex::run(ctx),
        Some(Cmd::Rooms(c)) => rooms::run(ctx, &c),
        Some(Cmd::Library(c)) => library::run(ctx, &c),
        Some(Cmd::Policy(c)) => policy::run(ctx, &c),
        Some(Cmd::Notify(c)) => notify::run(ctx, &c),
        Some(Cmd::Run(a)) => run::run(ctx, &a),
        Some(Cmd::Daemon(c)) => daemon::run(ctx, &c),
        Some(Cmd::Next(a)) => next::run(ctx, &a),
        Some(Cmd::Findings(a)) => findings::run(ctx, &a),
        Some(Cmd::Fixed(a)) => fixed::run(ctx, &a),
        Some(Cmd::Reply(a)) => reply::run(ctx, &a),
        Some(Cmd::Verdict(a)) => verdict::run(ctx, &a),
        Some(Cmd::Verify(a)) => verify::run(ctx, &a),
        Some(Cmd::Budget(a)) => budget::run(ctx, &a),
        Some(Cmd::Trace(a)) => trace::run(ctx, &a),
        Some(Cmd::Attach(a)) => attach::run(ctx, &a),
        Some(Cmd::Gazette(a)) => gazette::run(ctx, &a),
        Some(Cmd::Watch(a)) => watch::run(ctx, &a),
        Some(Cmd::Help { command, markdown }) => help::run(&command, markdown),
        Some(Cmd::Schema(a)) => schema::run(&a),
        // main() hands `hall hook` to the hooks before parsing; this arm only serves
        // `hall help`, which lists it.
        Some(Cmd::Hook { .. }) => Err(HallError::usage(
            "`hall hook` reads Claude Code's hook JSON on stdin",
        )),
        Some(Cmd::Config(c)) => config::run(ctx, &c),
        Some(Cmd::Web(crate::cli::WebArgs { token: Some(c), .. })) => web::run(ctx, &c),
        // main() hands `hall web` to the web app, a layer above the commands.
        Some(Cmd::Web(_)) => Err(HallError::usage(
            "`hall web` is served by the web app; run it as `hall web`",
        )),
        // main() hands `hall frame` to the terminal app, a layer above the commands.
        Some(Cmd::Frame(_)) => Err(HallError::usage(
            "`hall frame` is drawn by the terminal app; run it as `hall frame`",
        )),
        // Like `hall hook`, main() hands `hall statusline` to its reader before parsing
        // (it must never fail); only `hall --json statusline` gets here.
        Some(Cmd::Statusline) => Err(HallError::usage(
            "`hall statusline` takes `--json` after the command",
        )
        .hint("hall statusline --json")),
    }
}

/// `--since`'s value as a journal stamp: a date or a time (RFC 3339, `2026-11-01`), or
/// a duration back from now (`7d`).
pub fn since(ctx: &Ctx, s: &str) -> Result<String> {
    if let Some(t) =
        crate::clock::parse(s).or_else(|| crate::clock::parse(&format!("{s}T00:00:00Z")))
    {
        return Ok(crate::clock::stamp(t));
    }
    let d = crate::clock::parse_duration(s).map_err(|_| {
        HallError::usage(format!(
            "--since `{s}` is neither a date (2026-11-01) nor a duration (7d)"
        ))
    })?;
    Ok(crate::clock::stamp(ctx.now - d))
}

// Where an item stands and where it lives: the part of their replies that `hall new` and
// `hall adopt` share. Not a doc comment: schemars would make it the description of each
// reply that flattens it in, and their schemas would change.
#[derive(Serialize, schemars::JsonSchema)]
pub struct Placed {
    pub item: ItemId,
    pub title: String,
    pub branch: String,
    pub base: String,
    pub worktree: String,
    pub state: State,
}

impl Placed {
    /// Item `id` as it is now.
    pub fn of(id: ItemId, item: &Item) -> Placed {
        Placed {
            item: id,
            title: item.title.clone(),
            branch: item.branch.clone(),
            base: item.base.clone(),
            worktree: item.worktree.clone().unwrap_or_default(),
            state: item.state,
        }
    }
}

/// A reply that shows one item after a state change.
#[derive(Serialize, schemars::JsonSchema)]
pub struct ItemReply {
    pub item: ItemId,
    pub title: String,
    pub state: State,
    /// Where in the building the state is (`Workshop`, `Assay Office`…).
    pub station: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sha: Option<Sha>,
    pub round: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hold: Option<crate::item::state::Hold>,
    /// False when the command found the item already where it asked for (a repeat).
    pub changed: bool,
    /// What the person should know and may not expect (no daemon picks the item up…).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    pub next: Vec<String>,
}

impl ItemReply {
    pub fn of(item: &Item, changed: bool) -> ItemReply {
        ItemReply {
            item: item.id.unwrap_or(ItemId(0)),
            title: item.title.clone(),
            state: item.state,
            station: item.state.station().to_string(),
            sha: item.sha.clone(),
            round: item.round,
            hold: item.hold.clone(),
            changed,
            warnings: Vec::new(),
            next: next_for(item),
        }
    }

    /// The reply after a change: `changed` is false for a repeat that found the item
    /// already where it was asked to be.
    pub fn reply(item: &Item, changed: bool, what: &str) -> Reply {
        ItemReply::of(item, changed).render(item, what)
    }

    /// This reply with its text: `what` happened to `item`.
    pub fn render(self, item: &Item, what: &str) -> Reply {
        let r = self;
        let changed = r.changed;
        let id = r.item;
        let head = if changed {
            what.to_string()
        } else {
            format!("{what} (already so; nothing changed)")
        };
        let text = format!(
            "{id} {head}: {} ({})\n{}",
            item.state,
            item.state.station(),
            next_text(&r.next)
        );
        Reply::new(&r, text)
    }
}

pub fn next_text(next: &[String]) -> String {
    if next.is_empty() {
        return String::new();
    }
    let cmds: Vec<String> = next.iter().map(|c| crate::error::as_command(c)).collect();
    format!("next: {}", cmds.join("  "))
}
