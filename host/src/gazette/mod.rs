//! The Gazette: a newspaper page per item for people, `items/<id>/gazette.html` in the
//! journal. The librarian writes the words (`gazette-words.json`); every fact is printed
//! from the journal; `hall attach` adds plates. The page is one self-contained file: no
//! script, nothing from the network, its style inline (docs/decisions/0015-the-gazette.md).
//!
//! A page records what it was printed from (the journal's length and last line, the
//! words file's hash, this renderer's version) in a comment on its second line;
//! [`print`] prints again only when one of them differs, and [`refresh`] is the cheap,
//! never-failing call the loop makes when an item moves on.

pub mod diagram;
pub mod escape;
pub mod facts;
pub mod page;
pub mod plates;
pub mod words;

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::item::ItemId;
use crate::journal::{Journal, JournalError};
pub use words::{Edge, GazetteWords, Node, Outline, Words};

/// Bumped whenever the page would print differently from the same journal, so every
/// page printed by an older renderer is printed again.
pub const RENDERER: u32 = 1;

/// The page's file name in an item's journal directory.
pub const PAGE_FILE: &str = "gazette.html";

/// Why a page could not be printed.
#[derive(Debug, thiserror::Error)]
pub enum GazetteError {
    #[error(transparent)]
    Journal(#[from] JournalError),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// What [`print`] did.
#[derive(Debug, Clone)]
pub struct Printed {
    pub path: PathBuf,
    /// False when the page on disk was already printed from this journal.
    pub printed: bool,
    /// The page's stamp: what it was printed from.
    pub stamp: String,
}

/// Where item `id`'s page is.
pub fn page_path(journal: &Journal, id: ItemId) -> PathBuf {
    journal.item_dir(id).join(PAGE_FILE)
}

/// Where item `id`'s plates are copied.
pub fn plates_dir(journal: &Journal, id: ItemId) -> PathBuf {
    journal.item_dir(id).join(plates::PLATES_DIR)
}

/// What a page printed now would be printed from.
fn stamp(events: usize, last_line: u64, words: Option<&[u8]>) -> String {
    let words = match words {
        Some(bytes) => {
            let hex: String = Sha256::digest(bytes)
                .iter()
                .take(8)
                .map(|b| format!("{b:02x}"))
                .collect();
            hex
        }
        None => "none".to_string(),
    };
    format!(
        "hallmark-gazette renderer={}/{RENDERER} events={events} last-line={last_line} words={words}",
        env!("CARGO_PKG_VERSION")
    )
}

/// The stamp a page on disk records, if it is a page.
fn stamp_on_disk(path: &Path) -> Option<String> {
    use std::io::Read;
    let mut head = vec![0u8; 512];
    let n = std::fs::File::open(path).ok()?.read(&mut head).ok()?;
    let head = String::from_utf8_lossy(&head[..n]).to_string();
    let line = head.lines().nth(1)?;
    let inner = line.strip_prefix("<!-- ")?.strip_suffix(" -->")?;
    Some(inner.to_string())
}

/// Prints item `id`'s page unless the one on disk is already printed from this
/// journal, these words and this renderer.
pub fn print(journal: &Journal, id: ItemId) -> Result<Printed, GazetteError> {
    let contents = journal.read_item(id)?;
    let dir = journal.item_dir(id);
    let words_path = dir.join(words::WORDS_FILE);
    let words_bytes = std::fs::read(&words_path).ok();
    let last_line = contents.line_numbers.last().copied().unwrap_or(0);
    let stamp = stamp(contents.events.len(), last_line, words_bytes.as_deref());
    let path = dir.join(PAGE_FILE);
    if stamp_on_disk(&path).as_deref() == Some(stamp.as_str()) {
        return Ok(Printed {
            path,
            printed: false,
            stamp,
        });
    }
    // Parsed from the bytes the stamp hashed, so the page and its stamp agree.
    let words = match &words_bytes {
        Some(bytes) => Words::parse(bytes),
        None => Words::Absent,
    };
    let html = render(
        id,
        &contents.events,
        &words,
        &stamp,
        &plates_dir(journal, id),
    );
    crate::journal::file::write_atomic(&path, html.as_bytes()).map_err(|source| {
        GazetteError::Io {
            path: path.clone(),
            source,
        }
    })?;
    Ok(Printed {
        path,
        printed: true,
        stamp,
    })
}

/// The page for `events`, with `words`, reading plates from `plates_dir`.
pub fn render(
    id: ItemId,
    events: &[crate::item::Event],
    words: &Words,
    stamp: &str,
    plates_dir: &Path,
) -> String {
    let facts = facts::Facts::of(events);
    page::render(&page::Sheet {
        id,
        facts: &facts,
        words,
        stamp,
        plates_dir,
        events: events.len(),
    })
}

/// Prints item `id`'s page again if it is stale, for the loop when the item moves on
/// (hallmarked, shipped, merged, CI reported). Never fails its caller: a page that
/// can't be printed is said on stderr and left for `hall gazette`.
pub fn refresh(journal: &Journal, id: ItemId) {
    if let Err(e) = print(journal, id) {
        eprintln!("hall: {id}'s Gazette was not printed: {e}");
    }
}

#[cfg(test)]
mod tests;
