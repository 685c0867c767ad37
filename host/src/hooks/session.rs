//! `sessions/<id>.json`: which item a Claude Code session works on, how far its
//! transcripts have been read, and what it was already told.

use std::collections::{BTreeMap, VecDeque};
use std::path::PathBuf;

use fs4::FileExt;
use serde::{Deserialize, Serialize};

use crate::item::ItemId;
use crate::journal::Journal;
use crate::rooms::types::PastCall;

/// How many request ids are remembered for de-duplication across Stop hooks.
const SEEN: usize = 500;

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Session {
    pub item: Option<ItemId>,
    /// Byte offset read so far in each transcript (the main one and subagents').
    pub offsets: BTreeMap<String, u64>,
    /// Request (or message) ids already counted, newest last.
    pub seen: VecDeque<String>,
    /// The number of the item's events up to which the person's words were shown.
    pub shown: u64,
    /// The tool-call policy's window: the session's latest calls and how each ended,
    /// oldest first, at most `[policy] window` of them.
    pub calls: VecDeque<PastCall>,
}

impl Session {
    pub fn seen(&self, id: &str) -> bool {
        self.seen.iter().any(|s| s == id)
    }

    /// Adds a call to the policy's window, dropping the oldest beyond `window`.
    pub fn push_call(&mut self, call: PastCall, window: usize) {
        self.calls.push_back(call);
        let keep = window.clamp(1, crate::config::POLICY_WINDOW_MAX as usize);
        while self.calls.len() > keep {
            self.calls.pop_front();
        }
    }

    pub fn remember(&mut self, id: String) {
        self.seen.push_back(id);
        while self.seen.len() > SEEN {
            self.seen.pop_front();
        }
    }
}

/// Whether `id` can name a session's files: session ids are UUIDs, and anything else
/// must not name a path.
pub(super) fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 128
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

fn path(journal: &Journal, id: &str) -> Option<PathBuf> {
    if !valid_id(id) {
        return None;
    }
    Some(journal.root().join("sessions").join(format!("{id}.json")))
}

pub fn load(journal: &Journal, id: &str) -> Session {
    path(journal, id)
        .and_then(|p| std::fs::read(p).ok())
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

/// Reads, changes and writes a session's file under its lock.
pub fn update<T>(journal: &Journal, id: &str, f: impl FnOnce(&mut Session) -> T) -> Option<T> {
    let p = path(journal, id)?;
    std::fs::create_dir_all(p.parent()?).ok()?;
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(p.with_extension("lock"))
        .ok()?;
    FileExt::lock(&lock).ok()?;
    let mut s: Session = std::fs::read(&p)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default();
    let out = f(&mut s);
    let bytes = serde_json::to_vec(&s).ok()?;
    crate::journal::file::write_atomic(&p, &bytes).ok()?;
    Some(out)
}
