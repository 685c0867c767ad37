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
pub mod condense;
pub mod confine;
pub mod hallmark;
pub mod inbox;
pub mod lock;
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
    /// Who acts: `HALL_ACTOR`, else `agent` inside Claude Code, else `you`; the loop's
    /// workers act as `assayer`, `fixer` or `shipper`.
    pub actor: String,
    /// How a person's command reached `hall` when not typed in a shell (`web`); written
    /// into every event it records.
    pub via: Option<String>,
}

impl Ctx {
    /// The context of a command: this process's directory, clock and actor.
    pub fn from_env() -> Result<Ctx> {
        let cwd = std::env::current_dir().map_err(|e| {
            HallError::internal(format!("the current directory can't be read: {e}"))
        })?;
        let actor = match std::env::var("HALL_ACTOR") {
            Ok(a) if !a.trim().is_empty() => a.trim().to_string(),
            _ if std::env::var_os("CLAUDECODE").is_some() => "agent".to_string(),
            _ => "you".to_string(),
        };
        Ok(Ctx::at(cwd, Clock::from_env(), actor))
    }

    /// A context for `actor` in `cwd`, stamped now by `clock`.
    pub fn at(cwd: PathBuf, clock: Clock, actor: impl Into<String>) -> Ctx {
        let now = clock.now();
        Ctx {
            cwd,
            clock,
            now,
            stamp: crate::clock::stamp(now),
            actor: actor.into(),
            via: None,
        }
    }

    /// The same place and clock, acting as `actor`, stamped anew.
    pub fn acting_as(&self, actor: impl Into<String>) -> Ctx {
        Ctx::at(self.cwd.clone(), self.clock, actor)
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

    /// The fixer works on findings; deciding what happens to the item is not its call.
    /// A person's call (a verdict, what the Library teaches every later review): refused
    /// to the loop's roles and to anything run inside a Claude Code session.
    pub fn refuse_agent(&self, verb: &str, what: &str) -> Result<()> {
        if self.actor != "you" || std::env::var_os("CLAUDECODE").is_some() {
            let who = if self.actor == "you" {
                "a Claude Code session"
            } else {
                self.actor.as_str()
            };
            return Err(HallError::new(
                Code::GateDenied,
                format!("`hall {verb}` {what}; it is refused to {who}"),
            )
            .hint("hall findings")
            .hint("hall fixed <ids>"));
        }
        Ok(())
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
