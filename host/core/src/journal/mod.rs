//! The journal: append-only files under `<git-common-dir>/hallmark/`, the source of
//! truth for every item. Everything else (`item.json`, the SQLite index) is a cache.
//!
//! ```text
//! items/H-0042/events.jsonl   one item's events
//! items/H-0042/item.json      cached fold (delete at will)
//! items/H-0042/runs/          headless runs
//! events.jsonl                repo-level events
//! sessions/ checks-cache/ leases/ checkouts/
//! counters.json               next item and question numbers
//! changes                     ids of files appended to, tailed by the index
//! index.sqlite                derived
//! ```

pub mod file;

use std::path::{Path, PathBuf};

use fs4::FileExt;
use serde::{Deserialize, Serialize};

use crate::item::{Event, EventKind, Item, ItemId, QuestionId, fold};
pub use file::{Contents, JournalError, Locked, Torn};

type Result<T, E = JournalError> = std::result::Result<T, E>;

/// The journal directory of one repository.
#[derive(Clone, Debug)]
pub struct Journal {
    root: PathBuf,
}

/// The name the change log uses for the repo-level file.
pub const REPO_FILE: &str = "-";

#[derive(Default, Serialize, Deserialize)]
struct Counters {
    #[serde(default = "one")]
    item: u32,
    #[serde(default = "one")]
    question: u32,
}

fn one() -> u32 {
    1
}

/// Replaces `counters.json` at `path` with `counters`, in one atomic write.
fn write_counters(path: &Path, counters: &Counters) -> Result<()> {
    let bytes = serde_json::to_vec(counters).map_err(|e| {
        io_error(
            path,
            std::io::Error::new(std::io::ErrorKind::InvalidData, e),
        )
    })?;
    file::write_atomic(path, &bytes).map_err(|e| io_error(path, e))
}

/// A file error with the path it happened to.
pub fn io_error(path: &Path, source: std::io::Error) -> JournalError {
    JournalError::Io {
        path: path.to_path_buf(),
        source,
    }
}

impl Journal {
    pub fn new(root: PathBuf) -> Journal {
        Journal { root }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn exists(&self) -> bool {
        self.root.is_dir()
    }

    /// Creates the layout (idempotent).
    pub fn init(&self) -> std::io::Result<()> {
        for d in ["items", "sessions", "checks-cache", "runs"] {
            let dir = self.root.join(d);
            std::fs::create_dir_all(&dir).map_err(file::at(&dir))?;
        }
        let counters = self.root.join("counters.json");
        if !counters.exists() {
            file::write_atomic(&counters, b"{\"item\":1,\"question\":1}\n")?;
        }
        Ok(())
    }

    pub fn items_dir(&self) -> PathBuf {
        self.root.join("items")
    }

    pub fn item_dir(&self, id: ItemId) -> PathBuf {
        self.items_dir().join(id.to_string())
    }

    pub fn item_file(&self, id: ItemId) -> PathBuf {
        self.item_dir(id).join("events.jsonl")
    }

    pub fn repo_file(&self) -> PathBuf {
        self.root.join("events.jsonl")
    }

    pub fn changes_file(&self) -> PathBuf {
        self.root.join("changes")
    }

    pub fn index_file(&self) -> PathBuf {
        self.root.join("index.sqlite")
    }

    /// The file behind a change-log name (`H-0042` or `-`).
    pub fn file_for(&self, name: &str) -> Option<PathBuf> {
        if name == REPO_FILE {
            return Some(self.repo_file());
        }
        name.parse::<ItemId>().ok().map(|id| self.item_file(id))
    }

    pub fn item_exists(&self, id: ItemId) -> bool {
        self.item_file(id).is_file()
    }

    /// Every item with a journal, in id order.
    pub fn item_ids(&self) -> Result<Vec<ItemId>> {
        let mut ids = Vec::new();
        let items = self.items_dir();
        let dir = match std::fs::read_dir(&items) {
            Ok(d) => d,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(ids),
            Err(e) => return Err(io_error(&items, e)),
        };
        for entry in dir {
            let entry = entry.map_err(|e| io_error(&items, e))?;
            if let Some(id) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<ItemId>().ok())
            {
                ids.push(id);
            }
        }
        ids.sort();
        Ok(ids)
    }

    /// Reads an item's events without locking.
    pub fn read_item(&self, id: ItemId) -> Result<Contents> {
        if !self.item_exists(id) {
            return Err(JournalError::NoItem(id));
        }
        file::read(&self.item_file(id))
    }

    /// Locks an item's journal, folds it, lets `decide` choose the events, appends them
    /// in one write and returns the new state. The service layer's transition path
    /// (`Hall::change` in the `hallmark` crate) is its one caller for state changes.
    pub fn transact<F, E>(&self, id: ItemId, decide: F) -> Result<Transaction, E>
    where
        F: FnOnce(&Item, &[Event]) -> Result<Vec<Event>, E>,
        E: From<JournalError>,
    {
        if !self.item_exists(id) {
            return Err(JournalError::NoItem(id).into());
        }
        let path = self.item_file(id);
        let mut locked = Locked::open(&path)?;
        let before = fold(locked.events());
        let new = decide(&before, locked.events())?;
        let mut after = before.clone();
        for e in &new {
            after.apply(e);
        }
        locked.append(&new)?;
        let torn = locked.torn();
        drop(locked);
        if !new.is_empty() {
            self.note_change(&id.to_string());
            self.write_item_cache(&after);
        }
        Ok(Transaction {
            before,
            after,
            appended: new,
            torn,
        })
    }

    /// Reserves the next item number, lets `make` do the outside work (branch, worktree)
    /// and writes the item's first events; a failure leaves no item behind.
    pub fn create_item<E: From<JournalError>>(
        &self,
        make: impl FnOnce(ItemId) -> Result<Vec<Event>, E>,
    ) -> Result<(ItemId, Item), E> {
        let items = self.items_dir();
        std::fs::create_dir_all(&items).map_err(|e| io_error(&items, e))?;
        loop {
            let id = ItemId(self.bump(|c| &mut c.item)?);
            let dir = self.item_dir(id);
            match std::fs::create_dir(&dir) {
                Ok(()) => {}
                // A stale counter (deleted counters.json): skip numbers already taken.
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(io_error(&dir, e).into()),
            }
            let events = match make(id) {
                Ok(e) => e,
                Err(e) => {
                    // Nothing was made: the empty directory goes, and the number is
                    // given back unless another item took a later one meanwhile.
                    let _ = std::fs::remove_dir(self.item_dir(id));
                    let _ = self.give_back(|c| &mut c.item, id.0);
                    return Err(e);
                }
            };
            let mut locked = Locked::open(&self.item_file(id))?;
            locked.append(&events)?;
            drop(locked);
            let item = fold(&events);
            self.note_change(&id.to_string());
            self.write_item_cache(&item);
            return Ok((id, item));
        }
    }

    /// Appends repo-level events (prompts with no item, denials, dismissals).
    pub fn append_repo(&self, events: &[Event]) -> Result<()> {
        let mut locked = Locked::open_for_append(&self.repo_file())?;
        locked.append(events)?;
        drop(locked);
        self.note_change(REPO_FILE);
        Ok(())
    }

    /// Appends events to an item without a transition check (records such as prompts,
    /// commits and usage, which never change state).
    pub fn append_item(&self, id: ItemId, events: &[Event]) -> Result<()> {
        if !self.item_exists(id) {
            return Err(JournalError::NoItem(id));
        }
        let mut locked = Locked::open_for_append(&self.item_file(id))?;
        locked.append(events)?;
        drop(locked);
        self.note_change(&id.to_string());
        Ok(())
    }

    /// Locks one file (an item's, or the repo-level one with `None`), shows `decide` its
    /// events and appends what it returns, in one step.
    pub fn append_checked<F, E>(&self, item: Option<ItemId>, decide: F) -> Result<Vec<Event>, E>
    where
        F: FnOnce(&[Event]) -> Result<Vec<Event>, E>,
        E: From<JournalError>,
    {
        let (path, name) = match item {
            Some(id) if !self.item_exists(id) => return Err(JournalError::NoItem(id).into()),
            Some(id) => (self.item_file(id), id.to_string()),
            None => (self.repo_file(), REPO_FILE.to_string()),
        };
        let mut locked = Locked::open(&path)?;
        let new = decide(locked.events())?;
        locked.append(&new)?;
        drop(locked);
        if !new.is_empty() {
            self.note_change(&name);
        }
        Ok(new)
    }

    pub fn next_question(&self) -> Result<QuestionId> {
        Ok(QuestionId(self.bump(|c| &mut c.question)?))
    }

    /// Takes the next number from `counters.json` under its lock.
    fn bump(&self, field: impl Fn(&mut Counters) -> &mut u32) -> Result<u32> {
        self.with_counters(|path| {
            let mut counters: Counters = match std::fs::read(path) {
                Ok(b) => serde_json::from_slice(&b).unwrap_or_else(|_| self.recount()),
                Err(_) => self.recount(),
            };
            let slot = field(&mut counters);
            let n = (*slot).max(1);
            *slot = n + 1;
            write_counters(path, &counters)?;
            Ok(n)
        })
    }

    /// Returns number `n`, taken by [`Journal::bump`] for something that was not made,
    /// when it is still the last one taken; a later number taken since stays, and `n`
    /// is then a gap.
    fn give_back(&self, field: impl Fn(&mut Counters) -> &mut u32, n: u32) -> Result<()> {
        self.with_counters(|path| {
            let Some(mut counters) = std::fs::read(path)
                .ok()
                .and_then(|b| serde_json::from_slice::<Counters>(&b).ok())
            else {
                // No readable counters: the next bump recounts from what exists.
                return Ok(());
            };
            let slot = field(&mut counters);
            if *slot == n + 1 {
                *slot = n;
                write_counters(path, &counters)?;
            }
            Ok(())
        })
    }

    /// Runs `f` on the path of `counters.json` while holding `counters.lock`, the lock
    /// that every change of a number takes; it is released when `f` is done.
    fn with_counters<T>(&self, f: impl FnOnce(&Path) -> Result<T>) -> Result<T> {
        let lock_path = self.root.join("counters.lock");
        let lock = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|e| io_error(&lock_path, e))?;
        FileExt::lock(&lock).map_err(|e| io_error(&lock_path, e))?;
        let out = f(&self.root.join("counters.json"))?;
        FileExt::unlock(&lock).map_err(|e| io_error(&lock_path, e))?;
        Ok(out)
    }

    /// Rebuilds lost counters from what exists, so numbers are never reused.
    fn recount(&self) -> Counters {
        let item = self
            .item_ids()
            .ok()
            .and_then(|ids| ids.last().map(|i| i.0 + 1))
            .unwrap_or(1);
        let mut question = 1;
        let mut seen = |events: &[Event]| {
            for e in events {
                if let EventKind::Asked { qid, .. } = &e.kind {
                    question = question.max(qid.0 + 1);
                }
            }
        };
        if let Ok(c) = file::read(&self.repo_file()) {
            seen(&c.events);
        }
        for id in self.item_ids().unwrap_or_default() {
            if let Ok(c) = file::read(&self.item_file(id)) {
                seen(&c.events);
            }
        }
        Counters { item, question }
    }

    /// Tells the index which file grew. Best effort: `hall reindex` recovers a lost line.
    fn note_change(&self, name: &str) {
        let _ = file::append_raw(&self.changes_file(), &format!("{name}\n"));
    }

    /// Refreshes `item.json`, the cache anyone may delete.
    pub fn write_item_cache(&self, item: &Item) {
        if let Some(id) = item.id
            && let Ok(bytes) = serde_json::to_vec_pretty(item)
        {
            let _ = file::write_atomic(&self.item_dir(id).join("item.json"), &bytes);
        }
    }
}

/// What one locked state change did.
#[derive(Debug)]
pub struct Transaction {
    pub before: Item,
    pub after: Item,
    pub appended: Vec<Event>,
    pub torn: Vec<Torn>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_creation_gives_its_number_back() {
        let dir = tempfile::tempdir().expect("tempdir");
        let journal = Journal::new(dir.path().join("hallmark"));
        journal.init().expect("init");
        let failed: Result<(ItemId, Item), JournalError> =
            journal.create_item(|id| Err(JournalError::NoItem(id)));
        assert!(failed.is_err());
        assert!(
            !journal.item_dir(ItemId(1)).exists(),
            "no empty directory stays"
        );
        let (id, _) = journal
            .create_item(|_| Ok::<_, JournalError>(Vec::new()))
            .expect("the next creation");
        assert_eq!(id, ItemId(1), "the failed creation's number is reused");
    }
}
