//! The Library's tests: the store and its operations, search, briefings, export and
//! import, and search quality on the fixture under tests/fixtures/library.

mod briefing;
mod quality;
mod search;
mod store;
mod transfer;

use super::*;
use crate::item::{Event, EventKind};

pub(super) const T0: &str = "2026-11-02T09:00:00Z";
pub(super) const T1: &str = "2026-11-03T09:00:00Z";

/// A fresh journal and its Library, in a temporary directory.
pub(super) struct Fixture {
    pub _dir: tempfile::TempDir,
    pub journal: Journal,
    pub library: Library,
}

pub(super) fn fixture(auto_accept: &[LearningKind]) -> Fixture {
    let dir = tempfile::tempdir().expect("tempdir");
    let journal = Journal::new(dir.path().join("hallmark"));
    journal.init().expect("init");
    let library = Library::new(
        &journal,
        Settings {
            auto_accept: auto_accept.to_vec(),
            search: SearchBackend::Builtin,
        },
    );
    Fixture {
        _dir: dir,
        journal,
        library,
    }
}

pub(super) fn stamp(t: &str) -> Stamp {
    Stamp::new(t, "you")
}

pub(super) fn draft(kind: LearningKind, title: &str, body: &str, paths: &[&str]) -> Draft {
    Draft {
        kind,
        title: title.into(),
        body: body.into(),
        paths: paths.iter().map(|p| p.to_string()).collect(),
        source: Source {
            item: Some(crate::item::ItemId(42)),
            round: Some(2),
            finding: Some("F1".into()),
            ..Source::default()
        },
    }
}

/// The repo-level events' kinds, in order.
pub(super) fn repo_events(journal: &Journal) -> Vec<EventKind> {
    match crate::journal::file::read(&journal.repo_file()) {
        Ok(c) => c.events.into_iter().map(|e: Event| e.kind).collect(),
        Err(_) => Vec::new(),
    }
}
