//! Reading and writing the store's files: the listing (every learning with the version in
//! force, and every file that does not parse), the lock, atomic writes with history,
//! and the generation counter readers compare against.

use std::path::{Path, PathBuf};

use fs4::FileExt;
use schemars::JsonSchema;
use serde::Serialize;

use super::learning::Learning;
use super::{Library, LibraryError, Result, io};
use crate::item::{LearningId, LearningStatus};
use crate::journal::file::write_atomic;

/// A file the store could not read, and why; it hides nothing else.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Problem {
    pub file: String,
    pub message: String,
}

impl Problem {
    pub(super) fn of(err: &LibraryError) -> Problem {
        match err {
            LibraryError::Malformed { path, message } => Problem {
                file: path.display().to_string(),
                message: message.clone(),
            },
            other => Problem {
                file: String::new(),
                message: other.to_string(),
            },
        }
    }
}

/// One learning as the store holds it.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    /// The current file.
    pub current: Learning,
    /// The version reviews are told: the current one once accepted, the version a
    /// proposed update would replace, or none (a new proposal, a retired learning).
    pub in_force: Option<Learning>,
}

/// Every learning in the store, in id order, and the files that did not parse.
#[derive(Clone, Debug, Default)]
pub struct Listing {
    pub entries: Vec<Entry>,
    pub problems: Vec<Problem>,
}

/// The lock every change holds; released when dropped.
pub(super) struct Lock(std::fs::File);

impl Drop for Lock {
    fn drop(&mut self) {
        let _ = FileExt::unlock(&self.0);
    }
}

impl Library {
    /// Takes the store's lock, creating the layout on first use.
    pub(super) fn lock(&self) -> Result<Lock> {
        for dir in [self.learnings_dir(), self.history_dir()] {
            std::fs::create_dir_all(&dir).map_err(io(&dir))?;
        }
        let path = self.root.join("lock");
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(io(&path))?;
        FileExt::lock(&file).map_err(io(&path))?;
        Ok(Lock(file))
    }

    /// The current file names in `learnings/` (`L-0007.md`), sorted; temporary files
    /// and anything else that is not a learning's name are left out.
    pub(super) fn current_names(&self) -> Result<Vec<String>> {
        let dir = self.learnings_dir();
        let mut names = Vec::new();
        let listing = match std::fs::read_dir(&dir) {
            Ok(l) => l,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(names),
            Err(e) => return Err(io(&dir)(e)),
        };
        for entry in listing {
            let entry = entry.map_err(io(&dir))?;
            let Some(name) = entry.file_name().to_str().map(str::to_string) else {
                continue;
            };
            if name.starts_with('.') || !name.ends_with(".md") {
                continue;
            }
            names.push(name);
        }
        names.sort();
        Ok(names)
    }

    /// Reads and parses one file.
    pub(super) fn read_file(&self, path: &Path) -> Result<Learning> {
        let text = std::fs::read_to_string(path).map_err(|e| match e.kind() {
            std::io::ErrorKind::InvalidData => LibraryError::Malformed {
                path: path.to_path_buf(),
                message: "is not UTF-8 text".into(),
            },
            _ => io(path)(e),
        })?;
        Learning::parse(&text, path)
    }

    /// One learning's current file.
    pub fn read(&self, id: LearningId) -> Result<Learning> {
        let path = self.file_of(id);
        if !path.is_file() {
            return Err(LibraryError::NotFound(id));
        }
        self.read_file(&path)
    }

    /// One learning with the version in force.
    pub fn entry(&self, id: LearningId) -> Result<Entry> {
        let current = self.read(id)?;
        self.entry_of(current)
    }

    /// The entry of a current file already read.
    pub fn entry_of_current(&self, current: Learning) -> Result<Entry> {
        self.entry_of(current)
    }

    pub(super) fn entry_of(&self, current: Learning) -> Result<Entry> {
        let in_force = match (current.meta.status, current.meta.replaces) {
            (LearningStatus::Accepted, _) => Some(current.clone()),
            (LearningStatus::Proposed, Some(v)) => {
                Some(self.read_file(&self.history_file(current.id(), v))?)
            }
            _ => None,
        };
        Ok(Entry { current, in_force })
    }

    /// Every learning; a file that does not parse is reported in `problems` and the
    /// others are listed all the same.
    pub fn list(&self) -> Result<Listing> {
        let mut listing = Listing::default();
        for name in self.current_names()? {
            let path = self.learnings_dir().join(&name);
            match self.read_file(&path).and_then(|l| self.entry_of(l)) {
                Ok(entry) => listing.entries.push(entry),
                Err(e @ LibraryError::Malformed { .. }) => listing.problems.push(Problem::of(&e)),
                Err(LibraryError::Io { path, source })
                    if source.kind() == std::io::ErrorKind::NotFound =>
                {
                    // Removed between the listing and the read, or a history file missing.
                    listing.problems.push(Problem {
                        file: path.display().to_string(),
                        message: "is missing".into(),
                    });
                }
                Err(e) => return Err(e),
            }
        }
        listing.entries.sort_by_key(|e| e.current.id());
        Ok(listing)
    }

    /// The versions kept under `history/` for `id`, ascending.
    pub fn history_versions(&self, id: LearningId) -> Result<Vec<u32>> {
        let dir = self.history_dir().join(id.to_string());
        let mut out = Vec::new();
        let listing = match std::fs::read_dir(&dir) {
            Ok(l) => l,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
            Err(e) => return Err(io(&dir)(e)),
        };
        for entry in listing {
            let entry = entry.map_err(io(&dir))?;
            if let Some(v) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.strip_suffix(".md"))
                .and_then(|n| n.parse::<u32>().ok())
            {
                out.push(v);
            }
        }
        out.sort_unstable();
        Ok(out)
    }

    /// The next free id: one past every id with a current file or a history, so an id
    /// is never given twice (call under the lock).
    pub(super) fn next_id(&self) -> Result<LearningId> {
        let mut top = 0;
        for name in self.current_names()? {
            if let Some(id) = name
                .strip_suffix(".md")
                .and_then(|s| s.parse::<LearningId>().ok())
            {
                top = top.max(id.0);
            }
        }
        let dir = self.history_dir();
        if let Ok(listing) = std::fs::read_dir(&dir) {
            for entry in listing.flatten() {
                if let Some(id) = entry
                    .file_name()
                    .to_str()
                    .and_then(|s| s.parse::<LearningId>().ok())
                {
                    top = top.max(id.0);
                }
            }
        }
        Ok(LearningId(top + 1))
    }

    /// Writes `bytes` at `path` atomically (temporary file, sync, rename).
    pub(super) fn write(&self, path: &Path, bytes: &[u8]) -> Result<()> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(io(dir))?;
        }
        write_atomic(path, bytes).map_err(io(path))
    }

    /// Keeps the current file's bytes as its version under `history/` (call under the
    /// lock, before overwriting or removing it).
    pub(super) fn archive(&self, id: LearningId, version: u32) -> Result<PathBuf> {
        let from = self.file_of(id);
        let bytes = std::fs::read(&from).map_err(io(&from))?;
        let to = self.history_file(id, version);
        self.write(&to, &bytes)?;
        Ok(to)
    }

    /// The generation readers compare: bumped by every change (call under the lock).
    pub(super) fn bump_generation(&self) -> Result<u64> {
        let next = self.generation() + 1;
        self.write(&self.generation_file(), format!("{next}\n").as_bytes())?;
        Ok(next)
    }

    /// The current generation; 0 before the first change.
    pub fn generation(&self) -> u64 {
        std::fs::read_to_string(self.generation_file())
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(0)
    }
}
