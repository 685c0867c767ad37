//! The hallmark: a git note under `refs/notes/hallmark` on the approved commit, and the
//! check that a note on HEAD really is one.
//!
//! Anyone with git can write a note, so a note counts only when it parses as the
//! hallmark's JSON (version 1), names HEAD itself, and the journal of the item it names
//! records `hallmarked` at HEAD. A failure says which of the three checks failed.

use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::git;
use crate::item::{EventKind, ItemId};
use crate::journal::Journal;

/// The notes ref hallmarks live under.
pub const NOTES_REF: &str = "refs/notes/hallmark";

/// The note's JSON.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Note {
    pub v: u32,
    pub item: ItemId,
    pub sha: String,
    pub round: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Findings still open (minors and nits) when it was approved.
    #[serde(default)]
    pub open_findings: Vec<String>,
    /// `assayer`, or `you` for a person's verdict (absent on notes struck before it existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actor: Option<String>,
    /// For an approval carried across a rebase: the commit that was reviewed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approved_sha: Option<String>,
}

/// Why HEAD is not hallmarked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NotHallmarked {
    NoHead,
    NoNote { head: String },
    NotAHallmark { head: String, why: String },
    OtherCommit { head: String, note_sha: String },
    NotInJournal { head: String, item: ItemId },
}

impl std::fmt::Display for NotHallmarked {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = |sha: &str| sha[..sha.len().min(7)].to_string();
        match self {
            NotHallmarked::NoHead => write!(f, "there is no HEAD commit"),
            NotHallmarked::NoNote { head } => write!(f, "HEAD ({}) has no hallmark", s(head)),
            NotHallmarked::NotAHallmark { head, why } => {
                write!(f, "the note on HEAD ({}) is not a hallmark: {why}", s(head))
            }
            NotHallmarked::OtherCommit { head, note_sha } => {
                write!(f, "its note is for {}, not {}", s(note_sha), s(head))
            }
            NotHallmarked::NotInJournal { head, item } => {
                write!(
                    f,
                    "the journal of {item} records no hallmark at {}",
                    s(head)
                )
            }
        }
    }
}

/// Checks that HEAD in `dir` carries a hallmark struck by Hallmark.
pub fn verify(journal: &Journal, dir: &Path) -> Result<Note, NotHallmarked> {
    let head = match git::Repo::discover(dir)
        .ok()
        .and_then(|r| git::head_native(&r))
    {
        Some(h) => h,
        None => git::head(dir).map_err(|_| NotHallmarked::NoHead)?,
    };
    let out = git::output(
        dir,
        &["notes", &format!("--ref={NOTES_REF}"), "show", &head],
    )
    .map_err(|_| NotHallmarked::NoNote { head: head.clone() })?;
    if !out.status.success() {
        return Err(NotHallmarked::NoNote { head });
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let note: Note =
        serde_json::from_str(text.trim()).map_err(|e| NotHallmarked::NotAHallmark {
            head: head.clone(),
            why: format!("not its JSON ({e})"),
        })?;
    if note.v != 1 {
        return Err(NotHallmarked::NotAHallmark {
            head,
            why: format!("version {} is not 1", note.v),
        });
    }
    if note.sha != head {
        return Err(NotHallmarked::OtherCommit {
            head,
            note_sha: note.sha,
        });
    }
    let recorded = journal.read_item(note.item).ok().is_some_and(|c| {
        c.events
            .iter()
            .any(|e| matches!(&e.kind, EventKind::Hallmarked { sha, .. } if *sha == head))
    });
    if !recorded {
        return Err(NotHallmarked::NotInJournal {
            head,
            item: note.item,
        });
    }
    Ok(note)
}
