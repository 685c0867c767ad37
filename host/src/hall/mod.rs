//! The service layer: an initialized repository ([`Hall`]) and what every caller does
//! with it, whoever the caller is (a command, a worker of the loop, a hook).
//!
//! - [`Ctx`]: where, when and on whose behalf something is done;
//! - [`Hall`]: the repository with its journal, the rules in effect (read from the base
//!   branch, never a working copy) and the runner headless runs go through;
//! - the one transition path ([`Hall::change`], in `change.rs`);
//! - the rules in effect (`rules`), the rooms that serve them (`policy`), hallmarks
//!   (`hallmark`), confinement of sessions and runs (`confine`), the plugin's files
//!   (`plugin`), condensing (`condense`), the registry of repositories (`registry`),
//!   what a worktree must be before it is frozen (`worktree`), and the status board
//!   `hall statusline` reads (`statusline`).
//!
//! The layers above (office, daemon, commands, hooks) reach the adapters through here
//! or directly, but never the other way round.

pub mod change;
pub mod claude_settings;
pub mod condense;
pub mod confine;
pub mod hallmark;
pub mod inbox;
pub mod lock;
pub mod person;
pub mod plugin;
pub mod policy;
pub mod registry;
pub mod rules;
pub mod statusline;
pub mod tool_policy;
pub mod web_tokens;
pub mod worktree;

use std::path::PathBuf;
use std::sync::Arc;

use crate::claude::Runner;
use crate::clock::Clock;
use crate::config::Config;
use crate::error::{Code, HallError, Result};
use crate::git::{self, Repo};
use crate::index::Index;
use crate::item::event::EVENT_VERSION;
use crate::item::{Event, EventKind, Item, ItemId};
use crate::journal::Journal;

pub use change::{Applied, Change, refused};

/// Where and when something is done, and on whose behalf.
#[derive(Clone, Debug)]
pub struct Ctx {
    pub cwd: PathBuf,
    /// The clock the stamp was read from.
    pub clock: Clock,
    pub now: std::time::SystemTime,
    pub stamp: String,
    /// Who acts: `HALL_ACTOR` (the loop's workers act as `assayer`, `fixer`,
    /// `shipper`…), else `you` for a process proven to be a person's ([`person`]), else
    /// `agent`.
    pub actor: String,
    /// How a person's command reached `hall` when not typed in a shell (`web`); written
    /// into every event it records.
    pub via: Option<String>,
    /// The proof that a person acts, when there is one.
    person: Option<person::Person>,
    /// Why there is none, for the refusal of a person's verb.
    not_a_person: Option<String>,
}

impl Ctx {
    /// The context of a command: this process's directory, clock and actor, the actor
    /// being `you` only when [`person::check`] proves it.
    pub fn from_env() -> Result<Ctx> {
        let cwd = std::env::current_dir().map_err(|e| {
            HallError::internal(format!("the current directory can't be read: {e}"))
        })?;
        let mut ctx = Ctx::at(cwd, Clock::from_env(), "agent");
        match person::check() {
            Ok(you) => {
                ctx.actor = "you".into();
                ctx.person = Some(you);
            }
            Err(person::NotAPerson::Role(role)) => {
                ctx.not_a_person = Some(person::NotAPerson::Role(role.clone()).to_string());
                ctx.actor = role;
            }
            Err(why) => ctx.not_a_person = Some(why.to_string()),
        }
        Ok(ctx)
    }

    /// The context of a hook: the actor from the environment alone (`HALL_ACTOR`, else
    /// `agent` inside Claude Code, else `you`), with no proof of a person. Hooks run on
    /// every tool call as children of Claude Code by design, so they never walk the
    /// process table, and nothing they do needs a person.
    pub fn for_hook() -> Result<Ctx> {
        let cwd = std::env::current_dir().map_err(|e| {
            HallError::internal(format!("the current directory can't be read: {e}"))
        })?;
        let actor = match std::env::var("HALL_ACTOR") {
            Ok(a) if !a.trim().is_empty() => a.trim().to_string(),
            _ if std::env::var_os("CLAUDECODE").is_some() => "agent".to_string(),
            _ => "you".to_string(),
        };
        let mut ctx = Ctx::at(cwd, Clock::from_env(), actor);
        ctx.not_a_person = Some("hooks never act as a person".into());
        Ok(ctx)
    }

    /// A context for `actor` in `cwd`, stamped now by `clock`, with no proof of a person.
    pub fn at(cwd: PathBuf, clock: Clock, actor: impl Into<String>) -> Ctx {
        let now = clock.now();
        Ctx {
            cwd,
            clock,
            now,
            stamp: crate::clock::stamp(now),
            actor: actor.into(),
            via: None,
            person: None,
            not_a_person: Some("it was not started by a person".into()),
        }
    }

    /// The same place and clock, acting as `actor`, stamped anew. The proof of a person
    /// goes along only when `actor` is `you` (the web app acting for the person who
    /// started it).
    pub fn acting_as(&self, actor: impl Into<String>) -> Ctx {
        let actor = actor.into();
        let mut ctx = Ctx::at(self.cwd.clone(), self.clock, actor.clone());
        if actor == "you" {
            ctx.person = self.person.clone();
            ctx.not_a_person = self.not_a_person.clone();
        }
        ctx
    }

    /// This context with the proof of a person (unit tests of a person's verbs).
    #[cfg(test)]
    pub fn with_person(mut self, you: person::Person) -> Ctx {
        self.actor = "you".into();
        self.person = Some(you);
        self.not_a_person = None;
        self
    }

    pub fn repo(&self) -> Result<Repo> {
        Ok(Repo::discover(&self.cwd)?)
    }

    /// The repository with its journal and config; `NOT_INITIALIZED` before `hall init`.
    pub fn hall(&self) -> Result<Hall> {
        Hall::open(self.repo()?)
    }

    /// An event stamped by this context.
    pub fn event(&self, item: Option<ItemId>, kind: EventKind) -> Event {
        Event {
            v: EVENT_VERSION,
            t: self.stamp.clone(),
            actor: self.actor.clone(),
            kind,
            item,
            via: self.via.clone(),
        }
    }

    /// The proof that a person runs `hall {verb}` (which `what`), or `GATE_DENIED`
    /// saying why this process is not shown to be one and what to do: run the same
    /// command from the person's own terminal. Nothing is written before it is asked.
    pub fn person(&self, verb: &str, what: &str) -> Result<&person::Person> {
        if let (Some(you), "you") = (&self.person, self.actor.as_str()) {
            return Ok(you);
        }
        let why = self
            .not_a_person
            .clone()
            .unwrap_or_else(|| format!("it acts as {}", self.actor));
        Err(HallError::new(
            Code::GateDenied,
            format!(
                "`hall {verb}` {what}, which only a person may do, and this process is not shown to be a person's: {why}. \
                 A person's command runs from your own terminal, outside every agent session and sandbox, \
                 with your user config directory readable"
            ),
        )
        .hint(typed_command(verb)))
    }

    pub fn refuse_fixer(&self, verb: &str) -> Result<()> {
        if self.actor == "fixer" {
            return Err(HallError::new(
                Code::GateDenied,
                format!("the fixer may not run `hall {verb}`; it fixes, commits and says so with `hall fixed`"),
            )
            .hint("hall findings")
            .hint("hall fixed <ids>"));
        }
        Ok(())
    }
}

/// The command this process was started with, when it is `hall {verb} …` (what the
/// person should type in their own terminal); else `hall {verb}`.
fn typed_command(verb: &str) -> String {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let first = verb.split_whitespace().next().unwrap_or(verb);
    let words: Vec<&str> = args
        .iter()
        .map(String::as_str)
        .filter(|a| *a != "--json")
        .collect();
    if words.first() == Some(&first) {
        let quoted: Vec<String> = words
            .iter()
            .map(|w| crate::platform::shell_quote(w))
            .collect();
        format!("hall {}", quoted.join(" "))
    } else {
        format!("hall {verb}")
    }
}

/// An initialized repository.
#[derive(Clone)]
pub struct Hall {
    pub repo: Repo,
    pub journal: Journal,
    /// The rules in effect: the base branch's committed `.hallmark.toml`.
    pub config: Config,
    /// How headless runs are started.
    pub runner: Arc<dyn Runner>,
    /// Where headless runs load the plugin from; `None` writes it under the user data
    /// directory on first need (tests point it elsewhere).
    pub plugin_dir: Option<PathBuf>,
    /// The user config directory the steps read: the signing key and `[signing]`,
    /// user-level rooms. `None` is the user's own ([`crate::platform::config_dir`]);
    /// tests point it at a sandbox.
    pub config_dir: Option<PathBuf>,
    /// Where compiled rooms are cached. `None` is the user cache directory
    /// ([`crate::platform::cache_dir`]); tests point it at a sandbox.
    pub cache_dir: Option<PathBuf>,
}

impl std::fmt::Debug for Hall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hall")
            .field("repo", &self.repo)
            .field("journal", &self.journal)
            .finish_non_exhaustive()
    }
}

impl Hall {
    /// The repository `repo` with its journal, refusing one `hall init` hasn't set up.
    pub fn open(repo: Repo) -> Result<Hall> {
        let journal = Journal::new(repo.hall_dir());
        if !journal.exists() {
            return Err(HallError::new(
                Code::NotInitialized,
                format!("{} has no Hallmark journal yet", repo.main_root.display()),
            )
            .hint("hall init"));
        }
        // The rules in effect are the base branch's committed ones, never a working copy.
        let config = rules::rules(&repo)?.config;
        Ok(Hall::with(repo, journal, config))
    }

    /// A repository with the given parts and the real runner.
    pub fn with(repo: Repo, journal: Journal, config: Config) -> Hall {
        Hall {
            repo,
            journal,
            config,
            runner: Arc::new(crate::claude::Process),
            plugin_dir: None,
            config_dir: None,
            cache_dir: None,
        }
    }

    /// The same repository with headless runs going through `runner` (tests).
    pub fn with_runner(mut self, runner: Arc<dyn Runner>) -> Hall {
        self.runner = runner;
        self
    }

    /// The plugin directory headless runs load (`--plugin-dir`), written when needed.
    pub fn plugin(&self) -> Result<PathBuf> {
        match &self.plugin_dir {
            Some(dir) => Ok(dir.clone()),
            None => plugin::ensure_plugin(),
        }
    }

    /// The user config directory (see [`Hall::config_dir`]); `None` when there is none.
    pub fn user_config_dir(&self) -> Option<PathBuf> {
        self.config_dir.clone().or_else(crate::platform::config_dir)
    }

    /// The cache directory (see [`Hall::cache_dir`]); `None` when there is none.
    pub fn user_cache_dir(&self) -> Option<PathBuf> {
        self.cache_dir.clone().or_else(crate::platform::cache_dir)
    }

    pub fn index(&self) -> Result<Index> {
        Ok(Index::open(&self.journal)?)
    }

    /// An item's events, read without a lock.
    pub fn events(&self, id: ItemId) -> Result<Vec<Event>> {
        Ok(self.journal.read_item(id)?.events)
    }

    /// An item's current state, folded from its journal.
    pub fn item(&self, id: ItemId) -> Result<Item> {
        Ok(crate::item::fold(&self.events(id)?))
    }

    /// The item named by `id`, or the one whose worktree (or branch) we are in.
    pub fn resolve(&self, id: Option<&str>) -> Result<ItemId> {
        if let Some(raw) = id {
            let id: ItemId = raw.parse().map_err(|e: crate::item::id::BadId| {
                HallError::new(Code::Usage, e.to_string()).hint("hall status --all")
            })?;
            if !self.journal.item_exists(id) {
                return Err(crate::journal::JournalError::NoItem(id).into());
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
