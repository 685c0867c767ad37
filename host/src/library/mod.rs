//! The Library: learnings distilled from closed items, kept as Markdown files next to
//! the journal and searched through SQLite FTS5.
//!
//! ```text
//! <git-common-dir>/hallmark/library/
//!   learnings/L-0007.md       one learning: TOML front matter between `+++` fences, then Markdown
//!   history/L-0007/1.md       every earlier version of a learning's text, before it was overwritten
//!   lock                      held while anything in the store changes
//!   generation                bumped by every change, so a reader sees one with a single read
//!   search.sqlite             derived from the files (delete at will)
//! ```
//!
//! The files are the truth. They are never committed: every worktree shares them, and
//! no branch can change what its review is told. Every change takes the lock, writes a
//! temporary file, syncs it and renames it into place, then appends a repo-level
//! `learning_*` event to the journal.

mod briefing;
mod learning;
mod ops;
mod search;
mod store;
mod transfer;

#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};

pub use briefing::{BriefLine, Briefing, Card, Scope, brief, estimate_tokens, glob_matches};
pub use learning::{Draft, Learning, Meta, Source, check_paths};
pub use ops::Stamp;
pub use search::{Engines, Hit, Search, SearchFilter, Searched};
pub use store::{Entry, Listing, Problem};
pub use transfer::{EXPORT_FORMAT, Imported};

use crate::config::{self, SearchBackend};
use crate::item::{LearningId, LearningKind, LearningStatus};
use crate::journal::{Journal, JournalError};

/// Why a Library operation failed.
#[derive(Debug, thiserror::Error)]
pub enum LibraryError {
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A learning file (or an export's line) that does not parse, and why.
    #[error("{}: {message}", path.display())]
    Malformed { path: PathBuf, message: String },
    #[error("the Library has no learning {0}")]
    NotFound(LearningId),
    /// The learning is not in a status the operation applies to.
    #[error("{id} is {status}: {message}")]
    WrongStatus {
        id: LearningId,
        status: LearningStatus,
        message: String,
    },
    /// A draft a person or the librarian gave that can't become a learning.
    #[error("{0}")]
    Invalid(String),
    #[error("{} already holds learnings; import restores an export into an empty store only", dir.display())]
    NotEmpty { dir: PathBuf },
    #[error("the search database {}: {source}", path.display())]
    Database {
        path: PathBuf,
        source: rusqlite::Error,
    },
    /// `[library] search = "qmd"` and no `qmd` on `PATH`.
    #[error("[library] search is \"qmd\", and no `qmd` command is on PATH")]
    QmdMissing,
    #[error(transparent)]
    Journal(#[from] JournalError),
}

pub type Result<T, E = LibraryError> = std::result::Result<T, E>;

pub(crate) fn io(path: &Path) -> impl Fn(std::io::Error) -> LibraryError + '_ {
    move |source| LibraryError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// What the Library takes from `[library]` in `.hallmark.toml`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Settings {
    /// Kinds that are accepted as they are proposed.
    pub auto_accept: Vec<LearningKind>,
    pub search: SearchBackend,
}

impl Settings {
    pub fn from_config(library: &config::Library) -> Settings {
        Settings {
            auto_accept: library.auto_accept.clone(),
            search: library.search,
        }
    }
}

/// One repository's Library.
#[derive(Clone, Debug)]
pub struct Library {
    root: PathBuf,
    journal: Journal,
    settings: Settings,
}

impl Library {
    /// The Library next to `journal` (`<journal>/library`); nothing is created until the
    /// first change.
    pub fn new(journal: &Journal, settings: Settings) -> Library {
        Library {
            root: journal.root().join("library"),
            journal: journal.clone(),
            settings,
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    pub fn learnings_dir(&self) -> PathBuf {
        self.root.join("learnings")
    }

    pub fn history_dir(&self) -> PathBuf {
        self.root.join("history")
    }

    pub fn file_of(&self, id: LearningId) -> PathBuf {
        self.learnings_dir().join(format!("{id}.md"))
    }

    /// Where version `version` of a learning is kept once a later one replaced it.
    pub fn history_file(&self, id: LearningId, version: u32) -> PathBuf {
        self.history_dir()
            .join(id.to_string())
            .join(format!("{version}.md"))
    }

    pub fn generation_file(&self) -> PathBuf {
        self.root.join("generation")
    }

    pub fn search_file(&self) -> PathBuf {
        self.root.join("search.sqlite")
    }

    /// Fails with [`LibraryError::QmdMissing`] when the configured backend is qmd and
    /// `path` (a `PATH` value) has no `qmd` on it; the built-in search needs nothing.
    pub fn check_backend(&self, path: Option<&std::ffi::OsStr>) -> Result<()> {
        match self.settings.search {
            SearchBackend::Builtin => Ok(()),
            SearchBackend::Qmd if qmd_on(path).is_some() => Ok(()),
            SearchBackend::Qmd => Err(LibraryError::QmdMissing),
        }
    }
}

/// The `qmd` executable on `path` (a `PATH` value), if there is one.
pub fn qmd_on(path: Option<&std::ffi::OsStr>) -> Option<PathBuf> {
    let names = crate::platform::program_files("qmd");
    std::env::split_paths(path?).find_map(|dir| {
        names
            .iter()
            .map(|n| dir.join(n))
            .find(|candidate| crate::platform::is_executable(candidate))
    })
}
