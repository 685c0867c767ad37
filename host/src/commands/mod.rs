//! One file per verb; this module holds what they share: the context a command runs
//! in, the reply it returns, and the dispatch `match`.

mod adopt;
mod answer;
mod ask;
mod budget;
mod claude;
mod daemon;
mod doctor;
mod drop;
mod findings;
mod fixed;
mod help;
mod inbox;
mod next;
pub mod trace;
mod verdict;
mod verify;
pub use claude::{SESSION_ENV, confine_by_default as claude_confine_by_default};
pub use inbox::count as inbox_count;
mod init;
mod log;
mod new;
mod propose_ready;
mod pull_back;
mod ready;
mod reindex;
mod retry;
mod rooms;
pub mod run;
pub mod schema;
pub mod setup;
mod status;
mod usage;

use std::path::PathBuf;

use serde::Serialize;

use crate::cli::Cmd;
use crate::config::Config;
use crate::error::{Code, HallError, Result};
use crate::git::{self, Repo};
use crate::index::Index;
use crate::item::event::EVENT_VERSION;
use crate::item::{Event, EventKind, Item, ItemId, Refusal, State};
use crate::journal::Journal;

/// What a command returns: the JSON reply (which always has `next`) and its text form.
pub struct Reply {
    pub json: serde_json::Value,
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
        let json = serde_json::to_value(value)
            .unwrap_or_else(|e| serde_json::json!({ "error": e.to_string() }));
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

/// Where and when a command runs, and on whose behalf.
pub struct Ctx {
    pub cwd: PathBuf,
    pub stamp: String,
    pub now: std::time::SystemTime,
    /// `HALL_ACTOR`, else `agent` inside Claude Code, else `you`.
    pub actor: String,
}

impl Ctx {
    pub fn from_env() -> Result<Ctx> {
        let cwd = std::env::current_dir()?;
        let now = crate::clock::now();
        let actor = match std::env::var("HALL_ACTOR") {
            Ok(a) if !a.trim().is_empty() => a.trim().to_string(),
            _ if std::env::var_os("CLAUDECODE").is_some() => "agent".to_string(),
            _ => "you".to_string(),
        };
        Ok(Ctx {
            cwd,
            stamp: crate::clock::stamp(now),
            now,
            actor,
        })
    }

    pub fn repo(&self) -> Result<Repo> {
        Repo::discover(&self.cwd)
    }

    /// The repository with its journal and config; `NOT_INITIALIZED` before `hall init`.
    pub fn hall(&self) -> Result<Hall> {
        let repo = self.repo()?;
        let journal = Journal::new(repo.hall_dir());
        if !journal.exists() {
            return Err(HallError::new(
                Code::NotInitialized,
                format!("{} has no Hallmark journal yet", repo.main_root.display()),
            )
            .hint("hall init"));
        }
        // The rules in effect are the base branch's committed ones, never a working copy.
        let config = crate::committed::rules(&repo)?.config;
        Ok(Hall {
            repo,
            journal,
            config,
        })
    }

    pub fn event(&self, item: Option<ItemId>, kind: EventKind) -> Event {
        Event {
            v: EVENT_VERSION,
            t: self.stamp.clone(),
            actor: self.actor.clone(),
            kind,
            item,
        }
    }
}

/// An initialized repository.
pub struct Hall {
    pub repo: Repo,
    pub journal: Journal,
    pub config: Config,
}

impl Hall {
    pub fn index(&self) -> Result<Index> {
        Index::open(&self.journal)
    }

    /// The item named by `id`, or the one whose worktree (or branch) we are in.
    pub fn resolve(&self, id: Option<&str>) -> Result<ItemId> {
        if let Some(raw) = id {
            let id: ItemId = raw.parse().map_err(|e: crate::item::id::BadId| {
                HallError::new(Code::Usage, e.to_string()).hint("hall status --all")
            })?;
            if !self.journal.item_exists(id) {
                return Err(crate::journal::item_not_found(id));
            }
            return Ok(id);
        }
        let index = self.index()?;
        let top = self.repo.toplevel.to_string_lossy().to_string();
        let branch = if self.repo.is_linked_worktree() {
            git::current_branch(&self.repo.toplevel)
        } else {
            None
        };
        index
            .item_for_place(&top, branch.as_deref())?
            .ok_or_else(|| {
                HallError::new(
                    Code::NoItem,
                    "no item was named and this directory is not an item's worktree",
                )
                .hint("hall status")
                .hint("hall new --title \"…\"")
                .hint("hall adopt")
            })
    }

    /// The worktree an item works in (its recorded one, else the main checkout).
    pub fn worktree_of(&self, item: &Item) -> PathBuf {
        item.worktree
            .as_ref()
            .map(PathBuf::from)
            .unwrap_or_else(|| self.repo.main_root.clone())
    }
}

/// The fixer works on findings; deciding what happens to the item is not its call.
pub fn refuse_fixer(ctx: &Ctx, verb: &str) -> Result<()> {
    if ctx.actor == "fixer" {
        return Err(HallError::new(
            Code::GateDenied,
            format!("the fixer may not run `hall {verb}`; it fixes, commits and says so with `hall fixed`"),
        )
        .hint("hall findings")
        .hint("hall fixed <ids>"));
    }
    Ok(())
}

/// The commands that make sense for an item in its state.
pub fn next_for(item: &Item) -> Vec<String> {
    let id = item.id.map(|i| i.to_string()).unwrap_or_default();
    let mut next = Vec::new();
    if item.hold.is_some() {
        next.push(format!("hall retry {id} --reason \"…\""));
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

/// Turns a refusal of the state machine into the agent contract's error.
pub fn refused(id: ItemId, r: Refusal) -> HallError {
    match r {
        Refusal::WrongState { state, action } => {
            HallError::new(Code::WrongState, format!("{id} is {state}; `{action}` is not allowed there"))
                .hint(format!("hall status {id}"))
        }
        Refusal::InReview { state, round, sha } => HallError::new(
            Code::ItemInReview,
            format!("{id} is in {state}, round {round}, at {}.", short(&sha)),
        )
        .hint(format!("hall pull-back {id}"))
        .hint(format!("hall log {id} --kind verdict")),
        Refusal::RebasePending { base } => HallError::new(
            Code::WrongState,
            format!("{id} has a standing request to rebase onto {base}, and its branch isn't on {base} yet"),
        )
        .hint(format!("git rebase {base}"))
        .hint(format!("hall ready {id}")),
        Refusal::NothingToRetry { state } => {
            HallError::new(Code::WrongState, format!("{id} is {state} with no hold; there is nothing to retry"))
                .hint(format!("hall status {id}"))
        }
    }
}

pub fn short(sha: &str) -> &str {
    &sha[..sha.len().min(7)]
}

/// Refuses when the worktree has uncommitted changes.
pub fn require_clean(hall: &Hall, item: &Item) -> Result<PathBuf> {
    let wt = hall.worktree_of(item);
    if !wt.is_dir() {
        return Err(HallError::new(
            Code::WrongState,
            format!("the worktree {} is gone", wt.display()),
        )
        .hint(format!(
            "hall drop {} --reason \"…\"",
            item.id.map(|i| i.to_string()).unwrap_or_default()
        )));
    }
    let dirty = git::dirty_paths(&wt)?;
    if !dirty.is_empty() {
        let shown: Vec<_> = dirty.iter().take(5).cloned().collect();
        let more = if dirty.len() > 5 {
            format!(" and {} more", dirty.len() - 5)
        } else {
            String::new()
        };
        return Err(HallError::new(
            Code::DirtyWorktree,
            format!(
                "{} has uncommitted changes: {}{more}",
                wt.display(),
                shown.join(", ")
            ),
        )
        .hint(format!(
            "git -C {} add -A && git -C {} commit",
            wt.display(),
            wt.display()
        ))
        .hint(format!("git -C {} stash", wt.display())));
    }
    Ok(wt)
}

/// Whether the branch in `wt` contains `base` and has no half-done operation: what
/// satisfies a standing rebase request.
pub fn on_base(wt: &std::path::Path, base: Option<&str>) -> bool {
    let Some(base) = base else { return true };
    let git_dir = git::run(wt, &["rev-parse", "--absolute-git-dir"])
        .map(PathBuf::from)
        .ok();
    if git_dir.is_some_and(|d| git::operation_in_progress(&d)) {
        return false;
    }
    git::is_ancestor(wt, base, "HEAD")
}

/// Writes (or removes) the queue ticket the assayer picks up.
pub fn sync_queue(hall: &Hall, item: &Item) -> Result<()> {
    let Some(id) = item.id else { return Ok(()) };
    let path = hall.journal.queue_file(id);
    if item.state == State::Checks {
        let ticket = serde_json::json!({ "item": id, "sha": item.sha, "round": item.round, "since": item.since });
        let bytes = serde_json::to_vec_pretty(&ticket).map_err(HallError::internal)?;
        crate::journal::file::write_atomic(&path, &bytes)?;
    } else {
        match std::fs::remove_file(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
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

/// Runs one parsed command.
pub fn dispatch(cmd: Option<Cmd>, ctx: &Ctx) -> Result<Reply> {
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
        })) => setup::claude(dry_run, no_confine),
        Some(Cmd::New(a)) => new::run(ctx, &a),
        Some(Cmd::Claude(a)) => claude::run(ctx, &a),
        Some(Cmd::Adopt(a)) => adopt::run(ctx, &a),
        Some(Cmd::Status(a)) => status::run(ctx, &a),
        Some(Cmd::Log(a)) => log::run(ctx, &a),
        Some(Cmd::Inbox(a)) => inbox::run(ctx, &a),
        Some(Cmd::Ready(a)) => ready::run(ctx, &a),
        Some(Cmd::PullBack(a)) => pull_back::run(ctx, &a),
        Some(Cmd::Drop(a)) => drop::run(ctx, &a),
        Some(Cmd::Retry(a)) => retry::run(ctx, &a),
        Some(Cmd::ProposeReady(a)) => propose_ready::run(ctx, &a),
        Some(Cmd::Ask(a)) => ask::run(ctx, &a),
        Some(Cmd::Answer(a)) => answer::run(ctx, &a),
        Some(Cmd::Usage(a)) => usage::run(ctx, &a),
        Some(Cmd::Reindex) => reindex::run(ctx),
        Some(Cmd::Rooms(c)) => rooms::run(ctx, &c),
        Some(Cmd::Run(a)) => run::run(ctx, &a),
        Some(Cmd::Daemon(c)) => daemon::run(ctx, &c),
        Some(Cmd::Next(a)) => next::run(ctx, &a),
        Some(Cmd::Findings(a)) => findings::run(ctx, &a),
        Some(Cmd::Fixed(a)) => fixed::run(ctx, &a),
        Some(Cmd::Verdict(a)) => verdict::run(ctx, &a),
        Some(Cmd::Verify(a)) => verify::run(ctx, &a),
        Some(Cmd::Budget(a)) => budget::run(ctx, &a),
        Some(Cmd::Trace(a)) => trace::run(ctx, &a),
        Some(Cmd::Help) => help::run(),
        Some(Cmd::Schema(a)) => schema::run(&a),
        // main() hands `hall hook` to the hooks before parsing; this arm only serves
        // `hall help`, which lists it.
        Some(Cmd::Hook { .. }) => Err(HallError::usage(
            "`hall hook` reads Claude Code's hook JSON on stdin",
        )),
    }
}

/// A reply that shows one item after a state change.
#[derive(Serialize, schemars::JsonSchema)]
pub struct ItemReply {
    pub item: ItemId,
    pub title: String,
    pub state: State,
    pub room: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sha: Option<String>,
    pub round: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hold: Option<crate::item::state::Hold>,
    /// False when the command found the item already where it asked for (a repeat).
    pub changed: bool,
    pub next: Vec<String>,
}

impl ItemReply {
    pub fn of(item: &Item, changed: bool) -> ItemReply {
        ItemReply {
            item: item.id.unwrap_or(ItemId(0)),
            title: item.title.clone(),
            state: item.state,
            room: item.state.room().to_string(),
            sha: item.sha.clone(),
            round: item.round,
            hold: item.hold.clone(),
            changed,
            next: next_for(item),
        }
    }

    pub fn reply(item: &Item, changed: bool, what: &str) -> Reply {
        let r = ItemReply::of(item, changed);
        let id = r.item;
        let head = if changed {
            what.to_string()
        } else {
            format!("{what} (already so; nothing changed)")
        };
        let text = format!(
            "{id} {head}: {} ({})\n{}",
            item.state,
            item.state.room(),
            next_text(&r.next)
        );
        Reply::new(&r, text)
    }
}

pub fn next_text(next: &[String]) -> String {
    if next.is_empty() {
        return String::new();
    }
    let cmds: Vec<String> = next.iter().map(|c| format!("`{c}`")).collect();
    format!("next: {}", cmds.join("  "))
}
