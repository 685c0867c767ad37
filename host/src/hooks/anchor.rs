//! Which repository a hook call is judged for.
//!
//! The session's working directory is the agent's to change: `git init -q x && cd x`
//! puts it in a repository of its own, `cd /tmp` outside every repository, and deleting
//! the directory it stands in leaves it nowhere. None of that may take a session out from
//! under the gates of the repository it works for. So the hooks anchor a session on what
//! the agent can't change:
//!
//! - the **binding** of the session id (Claude Code's, never the agent's) to a
//!   repository, recorded the first time a hook of that session sees one, in
//!   `sessions/<id>.json` under the user data directory. That directory is a protected
//!   path for every session and out of the sandbox's reach, so no session can write,
//!   move or delete its own binding;
//! - `CLAUDE_PROJECT_DIR` in the hook's own environment, which Claude Code sets to the
//!   directory the session started in; a command the agent runs can't change the
//!   environment Claude Code gives its hooks.
//!
//! The working directory still counts: the nearest initialized repository at or above
//! it (walking past uninitialized repositories nested inside one) is judged too, as it
//! always was. A call is judged for that repository and, when the session's repository
//! is another one, for the session's as well; either can refuse it.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use crate::config::Config;
use crate::git::{Repo, normalize};
use crate::hall::Hall;
use crate::journal::Journal;

/// How many uninitialized repositories nested in one another the walk up from a
/// directory passes over.
const MAX_NESTED: usize = 16;

/// Bindings older than this are removed when a session starts.
const KEEP_BINDINGS: Duration = Duration::from_secs(30 * 24 * 3600);

/// A repository a call is judged for, and its checkout that is the session's own.
pub struct Anchor {
    pub hall: Hall,
    /// The checkout the session works in: the one the working directory is in, or the
    /// one the session was bound in (which may since have been removed).
    pub checkout: PathBuf,
}

/// The repositories one hook call is judged for.
#[derive(Default)]
pub struct Anchors {
    /// The nearest initialized repository at or above the working directory.
    pub here: Option<Anchor>,
    /// The session's repository, when it is not `here`'s.
    pub session: Option<Anchor>,
}

impl Anchors {
    /// Finds them for a call of session `id` in `cwd`, with Claude Code's project
    /// directory `project`; records the session's binding at first sight.
    pub fn find(id: Option<&str>, cwd: &Path, project: Option<&Path>) -> Anchors {
        let here = nearest(cwd);
        let binding = id.and_then(Binding::read);
        if let Some(b) = &binding {
            if here.as_ref().is_some_and(|r| b.is_of(r)) {
                return Anchors {
                    here: here.and_then(|r| open(r, None)),
                    session: None,
                };
            }
            if let Some(session) = b.open() {
                return Anchors {
                    here: here.and_then(|r| open(r, None)),
                    session: Some(session),
                };
            }
        }
        // No usable binding yet: the project directory's repository is the session's,
        // else the working directory's, and that is recorded.
        let from_project = project.and_then(nearest);
        let chosen = from_project.as_ref().or(here.as_ref());
        if let (Some(id), Some(repo)) = (id, chosen) {
            Binding::of(repo).write(id);
        }
        let session = match (from_project, &here) {
            (Some(p), Some(h)) if same(&p, h) => None,
            (p, _) => p,
        };
        Anchors {
            here: here.and_then(|r| open(r, None)),
            session: session.and_then(|r| open(r, None)),
        }
    }

    /// The repository the hook records in and asks for context: the working
    /// directory's, else the session's.
    pub fn primary(&self) -> Option<&Anchor> {
        self.here.as_ref().or(self.session.as_ref())
    }

    /// Every repository the call is judged for, the primary one first.
    pub fn all(self) -> Vec<Anchor> {
        self.here.into_iter().chain(self.session).collect()
    }
}

/// Whether two repositories are one (the same common directory).
fn same(a: &Repo, b: &Repo) -> bool {
    normalize(&a.common_dir) == normalize(&b.common_dir)
}

/// The nearest initialized repository at or above `dir`: the one it is in, or, when
/// that one is not initialized, the nearest initialized one around it. A repository
/// made with `git init` inside a worktree doesn't hide the worktree.
pub fn nearest(dir: &Path) -> Option<Repo> {
    let mut at = dir.to_path_buf();
    for _ in 0..MAX_NESTED {
        let repo = Repo::discover(&at).ok()?;
        if is_initialized(&repo) {
            return Some(repo);
        }
        at = repo.toplevel.parent()?.to_path_buf();
    }
    None
}

/// Whether the hooks gate `repo`: it has a journal, or the user registered it (a
/// registered repository whose journal directory is gone stays gated).
fn is_initialized(repo: &Repo) -> bool {
    Journal::new(repo.hall_dir()).exists() || crate::hall::registry::contains(&repo.main_root)
}

/// The repository as the hooks gate it: the rules from the base branch as committed.
/// A broken config must not switch the gates off (an agent could break it on purpose):
/// it is logged and the gates use the defaults, on the recorded base.
pub fn open(repo: Repo, checkout: Option<PathBuf>) -> Option<Anchor> {
    if !is_initialized(&repo) {
        return None;
    }
    let journal = Journal::new(repo.hall_dir());
    let config = crate::hall::rules::rules(&repo)
        .map(|r| r.config)
        .unwrap_or_else(|e| {
            if journal.exists() {
                super::set_log_dir(journal.root());
            }
            super::log_anywhere(&format!(
                "{}; the hooks use the default configuration",
                e.message
            ));
            Config {
                base: crate::hall::rules::base_name(&repo),
                ..Config::default()
            }
        });
    let checkout = checkout.unwrap_or_else(|| repo.toplevel.clone());
    Some(Anchor {
        hall: Hall::with(repo, journal, config),
        checkout,
    })
}

/// `sessions/<id>.json` in the user data directory: the repository a session works for.
#[derive(Debug, Serialize, Deserialize)]
struct Binding {
    v: u32,
    /// The checkout the session was first seen in.
    checkout: PathBuf,
    /// That repository's main checkout.
    main: PathBuf,
}

impl Binding {
    fn path(id: &str) -> Option<PathBuf> {
        if !super::session::valid_id(id) {
            return None;
        }
        Some(sessions_dir()?.join(format!("{id}.json")))
    }

    fn read(id: &str) -> Option<Binding> {
        let bytes = std::fs::read(Binding::path(id)?).ok()?;
        serde_json::from_slice(&bytes).ok()
    }

    fn of(repo: &Repo) -> Binding {
        Binding {
            v: 1,
            checkout: repo.toplevel.clone(),
            main: repo.main_root.clone(),
        }
    }

    fn is_of(&self, repo: &Repo) -> bool {
        normalize(&self.main) == normalize(&repo.main_root)
    }

    /// Best effort: a session that can't be bound is still judged by its project
    /// directory and its working directory.
    fn write(&self, id: &str) {
        let Some(path) = Binding::path(id) else {
            return;
        };
        let Ok(bytes) = serde_json::to_vec(self) else {
            return;
        };
        if let Some(dir) = path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        if let Err(e) = crate::journal::file::write_atomic(&path, &bytes) {
            super::log_anywhere(&format!("could not bind session {id}: {e}"));
        }
    }

    /// The bound repository, from its checkout when that still belongs to it, else
    /// from its main checkout (the worktree may have been removed since); `None` when
    /// it is gone or no longer gated.
    fn open(&self) -> Option<Anchor> {
        let repo = Repo::discover(&self.checkout)
            .ok()
            .filter(|r| self.is_of(r))
            .or_else(|| Repo::discover(&self.main).ok().filter(|r| self.is_of(r)))?;
        open(repo, Some(self.checkout.clone()))
    }
}

fn sessions_dir() -> Option<PathBuf> {
    crate::platform::data_dir().map(|d| d.join("sessions"))
}

/// Removes bindings no session has started with for a month (best effort; run when a
/// session starts, never on the hot path).
pub fn prune() {
    let Some(dir) = sessions_dir() else {
        return;
    };
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return;
    };
    let now = SystemTime::now();
    for e in entries.flatten() {
        let old = e
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| now.duration_since(t).ok())
            .is_some_and(|age| age > KEEP_BINDINGS);
        if old {
            let _ = std::fs::remove_file(e.path());
        }
    }
}
