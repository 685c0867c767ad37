//! Self-repair. The index holds nothing the journal doesn't, so a damaged `index.sqlite`
//! is a cache miss: the handle that notices throws the file away, folds the journal
//! again, writes a line to `index.log`, and the command goes on. It does so once: damage
//! seen again right after a rebuild (by the same handle, or by this process within a
//! minute) is an error naming the file, never another rebuild.
//!
//! What counts as damage is decided here, from the error alone, so a healthy index pays
//! nothing for the check. Failures that a rebuild can't cure (a directory that can't be
//! written, a file that is a directory) are errors that name the path and what to check.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use fs4::FileExt;
use rusqlite::ErrorCode;

use crate::journal::{Journal, JournalError};

/// Why the index could not answer, once it has tried to heal: the adapter's error,
/// which the command boundary turns into the contract's (`error.rs`).
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    /// Reading the journal failed; its error says where.
    #[error(transparent)]
    Journal(#[from] JournalError),
    /// The file holds what no fold ever wrote.
    #[error("{}: {why}", path.display())]
    Damaged { path: PathBuf, why: String },
    /// Damage that a rebuild from the journal did not cure.
    #[error("{} is still damaged right after a rebuild from the journal: {why}", path.display())]
    StillDamaged { path: PathBuf, why: String },
    /// The file can't be opened or written at all: `dir` is where to look.
    #[error("the index {} can't be opened or written: {why}", path.display())]
    Unusable {
        path: PathBuf,
        why: String,
        dir: PathBuf,
        disk_full: bool,
    },
    /// Any other SQLite error.
    #[error("{}: {source}", path.display())]
    Sql {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },
    /// A question asked wrong (an unknown grouping, say).
    #[error("{0}")]
    Query(String),
}

impl IndexError {
    /// What to check first, for errors a rebuild can't cure.
    pub fn fix(&self) -> Option<String> {
        match self {
            IndexError::Unusable {
                dir,
                disk_full: true,
                ..
            } => Some(format!(
                "free some space on the disk that holds {}",
                dir.display()
            )),
            IndexError::Unusable { dir, .. } => {
                Some(format!("check the permissions of {}", dir.display()))
            }
            IndexError::StillDamaged { path, .. } => Some(format!(
                "check the disk and any process that writes into {}",
                path.parent().unwrap_or(Path::new(".")).display()
            )),
            _ => None,
        }
    }
}

/// Why an index operation failed, before it becomes an [`IndexError`]: the only place
/// that still knows whether SQLite blamed the file.
#[derive(Debug)]
pub(super) enum Fault {
    /// SQLite's own error.
    Sql(rusqlite::Error),
    /// Values SQLite returned without complaint but no fold ever wrote, such as an offset
    /// past the end of its journal file or an item that doesn't decode.
    Damaged(String),
    /// The journal could not be read, or a line of it doesn't decode.
    Journal(JournalError),
}

impl From<rusqlite::Error> for Fault {
    fn from(e: rusqlite::Error) -> Self {
        Fault::Sql(e)
    }
}

impl From<JournalError> for Fault {
    fn from(e: JournalError) -> Self {
        Fault::Journal(e)
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fault::Sql(e) => write!(f, "{e}"),
            Fault::Damaged(m) => f.write_str(m),
            Fault::Journal(e) => write!(f, "{e}"),
        }
    }
}

impl Fault {
    /// A file error, with the path it happened to.
    pub(super) fn io(path: &Path, source: std::io::Error) -> Fault {
        Fault::Journal(crate::journal::io_error(path, source))
    }

    /// Whether the error says the file itself is bad, so that a rebuild cures it.
    pub(super) fn is_damage(&self) -> bool {
        match self {
            Fault::Sql(e) => sql_damage(e),
            Fault::Damaged(_) => true,
            Fault::Journal(_) => false,
        }
    }

    /// Whether another connection holds the database for now.
    pub(super) fn is_busy(&self) -> bool {
        matches!(self, Fault::Sql(e) if matches!(
            e.sqlite_error_code(),
            Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
        ))
    }

    /// A journal line that doesn't decode where the index expected a line to start: the
    /// offsets it remembers no longer match the file (someone repaired it by hand), so a
    /// fold from the start is due. If the journal itself is corrupt, the fold says where.
    pub(super) fn is_journal_corrupt(&self) -> bool {
        matches!(self, Fault::Journal(JournalError::Corrupt { .. }))
    }

    /// The error the index reports, naming its file.
    pub(super) fn into_error(self, path: &Path) -> IndexError {
        match self {
            Fault::Journal(e) => IndexError::Journal(e),
            Fault::Damaged(why) => IndexError::Damaged {
                path: path.to_path_buf(),
                why,
            },
            Fault::Sql(e) => match e.sqlite_error_code() {
                Some(
                    ErrorCode::CannotOpen
                    | ErrorCode::ReadOnly
                    | ErrorCode::PermissionDenied
                    | ErrorCode::SystemIoFailure
                    | ErrorCode::DiskFull,
                ) => unusable(path, &e),
                _ => IndexError::Sql {
                    path: path.to_path_buf(),
                    source: e,
                },
            },
        }
    }
}

/// SQLite's words for a file that is not (or no longer) a database this hall wrote.
fn sql_damage(e: &rusqlite::Error) -> bool {
    use rusqlite::Error as E;
    match e {
        E::SqliteFailure(err, msg) => match err.code {
            ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase => true,
            // The schema is ours and fixed for a given `user_version`: a table or column
            // that is missing, or a schema that doesn't parse, means the pages that hold
            // it were overwritten.
            ErrorCode::Unknown => msg.as_deref().is_some_and(|m| {
                [
                    "no such table",
                    "no such column",
                    "malformed database schema",
                ]
                .iter()
                .any(|s| m.contains(s))
            }),
            _ => false,
        },
        // Every column is written by the fold with one type; a value of another type (or
        // text that isn't UTF-8) was never written by it.
        E::FromSqlConversionFailure(..)
        | E::InvalidColumnType(..)
        | E::IntegralValueOutOfRange(..)
        | E::Utf8Error(..) => true,
        _ => false,
    }
}

/// The error for an index that can't be opened or written at all: say which path is at
/// fault and why, instead of SQLite's "unable to open database file".
fn unusable(path: &Path, e: &rusqlite::Error) -> IndexError {
    let (why, dir) = diagnose(path);
    IndexError::Unusable {
        path: path.to_path_buf(),
        why: why.unwrap_or_else(|| e.to_string()),
        dir,
        disk_full: e.sqlite_error_code() == Some(ErrorCode::DiskFull),
    }
}

/// What in the file system stops SQLite from using `path`, and the directory to look at.
fn diagnose(path: &Path) -> (Option<String>, PathBuf) {
    let parent = |p: &Path| p.parent().unwrap_or(Path::new(".")).to_path_buf();
    if path.is_dir() {
        return (
            Some(format!("{} is a directory, not a file", path.display())),
            parent(path),
        );
    }
    // A symbolic link is followed by SQLite; what matters is where it points.
    let target = match std::fs::read_link(path) {
        Ok(t) => parent(path).join(t),
        Err(_) => path.to_path_buf(),
    };
    let dir = parent(&target);
    if let Err(e) = probe_dir(&dir) {
        return (Some(format!("{}: {e}", dir.display())), dir);
    }
    for suffix in ["", "-wal", "-shm"] {
        let mut name = target.clone().into_os_string();
        name.push(suffix);
        let file = PathBuf::from(name);
        if file.exists()
            && let Err(e) = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open(&file)
        {
            return (Some(format!("{}: {e}", file.display())), dir);
        }
    }
    (None, dir)
}

/// Whether a file can be created in `dir` (as SQLite must, for its write-ahead log).
fn probe_dir(dir: &Path) -> std::io::Result<()> {
    let probe = dir.join(format!(".index-probe.{}", std::process::id()));
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)?;
    std::fs::remove_file(&probe)
}

/// Who the file at `path` is, to tell whether another process replaced it meanwhile.
pub(super) fn identity(path: &Path) -> Option<(u64, u64)> {
    crate::platform::file_identity(&std::fs::metadata(path).ok()?)
}

/// How long after a rebuild this process treats new damage to the same index as an error
/// rather than rebuilding again: long enough to span every handle one command opens.
const QUIET: Duration = Duration::from_secs(60);

/// When this process last rebuilt each journal's index.
static REBUILT: Mutex<Vec<(PathBuf, Instant)>> = Mutex::new(Vec::new());

/// Whether this process rebuilt `journal`'s index within [`QUIET`].
pub(super) fn rebuilt_lately(journal: &Journal) -> bool {
    let rebuilt = REBUILT.lock().unwrap_or_else(PoisonError::into_inner);
    rebuilt
        .iter()
        .any(|(root, at)| root == journal.root() && at.elapsed() < QUIET)
}

pub(super) fn note_rebuilt(journal: &Journal) {
    let mut rebuilt = REBUILT.lock().unwrap_or_else(PoisonError::into_inner);
    rebuilt.retain(|(root, at)| root != journal.root() && at.elapsed() < QUIET);
    rebuilt.push((journal.root().to_path_buf(), Instant::now()));
}

/// The exclusive lock rebuilders take, so that processes that find the same damage at the
/// same moment rebuild once between them and never delete each other's fresh file.
pub(super) struct RebuildLock {
    file: std::fs::File,
}

impl RebuildLock {
    pub(super) fn take(journal: &Journal) -> Result<RebuildLock, Fault> {
        let path = journal.root().join("index.lock");
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| Fault::io(&path, e))?;
        FileExt::lock(&file).map_err(|e| Fault::io(&path, e))?;
        Ok(RebuildLock { file })
    }
}

impl Drop for RebuildLock {
    fn drop(&mut self) {
        let _ = FileExt::unlock(&self.file);
    }
}

/// One line of `index.log`: what the index did by itself, and why.
pub(super) struct Record<'a> {
    pub reason: &'a str,
    /// `open` (connecting or catching up) or `query`.
    pub during: &'a str,
    pub outcome: Result<(super::RebuildStats, Instant), &'a str>,
}

/// Appends a JSON line to `<journal>/index.log`. Best effort: a journal directory that
/// can't be written has already made the command fail with its own error.
pub(super) fn log(journal: &Journal, record: Record<'_>) {
    let mut line = serde_json::json!({
        "t": crate::clock::stamp(crate::clock::now()),
        "index": journal.index_file().display().to_string(),
        "during": record.during,
        "reason": record.reason,
    });
    match record.outcome {
        Ok((stats, started)) => {
            line["event"] = "rebuilt".into();
            line["files"] = stats.files.into();
            line["events"] = stats.events.into();
            line["millis"] = (started.elapsed().as_millis() as u64).into();
        }
        Err(error) => {
            line["event"] = "rebuild_failed".into();
            line["error"] = error.into();
        }
    }
    let _ = crate::journal::file::append_raw(&log_file(journal), &format!("{line}\n"));
}

/// Where the index records its repairs.
pub fn log_file(journal: &Journal) -> PathBuf {
    journal.root().join("index.log")
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::super::*;
    use crate::error::HallError;
    use crate::item::event::decode;
    use crate::journal::JournalError;

    /// A journal with `n` items, and an index that has read them and been closed (so the
    /// write-ahead log is folded back into the file the tests damage).
    fn journal_with_items(n: u32) -> (tempfile::TempDir, Journal) {
        let dir = tempfile::tempdir().expect("temp dir");
        let journal = Journal::new(dir.path().join("hallmark"));
        journal.init().expect("init");
        for i in 1..=n {
            journal
                .create_item(|id| {
                    Ok::<_, JournalError>(vec![event(&format!(
                        r#"{{"v":1,"t":"2026-11-30T10:00:00Z","actor":"you","event":"created","item":"{id}","title":"Item {i}","branch":"hall/h-{i}","base":"main","source":"new"}}"#
                    ))])
                })
                .expect("item");
        }
        drop(Index::open(&journal).expect("index"));
        (dir, journal)
    }

    fn event(json: &str) -> Event {
        decode(json).expect("a valid journal line")
    }

    /// Where the first page of table `name` starts in the file.
    fn page_of(journal: &Journal, name: &str) -> (u64, usize) {
        let conn = Connection::open(journal.index_file()).expect("open");
        let root: u64 = conn
            .query_row(
                "SELECT rootpage FROM sqlite_schema WHERE name = ?1",
                [name],
                |r| r.get(0),
            )
            .expect("root page");
        let size: u64 = conn
            .pragma_query_value(None, "page_size", |r| r.get(0))
            .expect("page size");
        ((root - 1) * size, size as usize)
    }

    /// Overwrites `len` bytes at `offset` with a pattern no page starts with.
    fn smash(path: &Path, offset: u64, len: usize) {
        use std::io::{Seek, SeekFrom, Write};
        let garbage: Vec<u8> = (0..len)
            .map(|i| (i as u8).wrapping_mul(37).wrapping_add(11))
            .collect();
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .expect("open index");
        f.seek(SeekFrom::Start(offset)).expect("seek");
        f.write_all(&garbage).expect("write");
    }

    fn log_lines(journal: &Journal) -> Vec<serde_json::Value> {
        std::fs::read_to_string(log_file(journal))
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).expect("a JSON line"))
            .collect()
    }

    /// The one line the log holds: a rebuild started `during` opening or a query, for a
    /// reason that says `why`.
    fn one_rebuild(journal: &Journal, during: &str, why: &str) -> serde_json::Value {
        let log = log_lines(journal);
        assert_eq!(log.len(), 1, "{log:?}");
        assert_eq!(log[0]["during"], during);
        assert!(
            log[0]["reason"].as_str().is_some_and(|r| r.contains(why)),
            "{log:?}"
        );
        log[0].clone()
    }

    fn journal_bytes(journal: &Journal) -> Vec<Vec<u8>> {
        let mut files: Vec<Vec<u8>> = journal
            .item_ids()
            .expect("ids")
            .into_iter()
            .map(|id| std::fs::read(journal.item_file(id)).expect("read"))
            .collect();
        files.push(std::fs::read(journal.changes_file()).expect("changes"));
        files
    }

    fn titles(index: &Index) -> Vec<String> {
        index
            .items(true)
            .expect("items")
            .into_iter()
            .map(|r| r.title)
            .collect()
    }

    #[test]
    fn a_damaged_table_page_is_rebuilt_by_the_query_that_reads_it() {
        let (_dir, journal) = journal_with_items(3);
        let before = journal_bytes(&journal);
        let (offset, size) = page_of(&journal, "items");
        smash(&journal.index_file(), offset, size);
        // Opening reads only the change log's offset, which is intact.
        let index = Index::open(&journal).expect("opens");
        assert_eq!(index.healed(), None);
        assert_eq!(titles(&index), ["Item 1", "Item 2", "Item 3"]);
        assert!(index.healed().is_some(), "the query rebuilt the file");
        let line = one_rebuild(&journal, "query", "malformed");
        assert_eq!(line["event"], "rebuilt");
        assert_eq!(line["files"], 4, "three items and the repo file");
        assert_eq!(
            journal_bytes(&journal),
            before,
            "the journal is never touched"
        );
        // The next handle finds a healthy file and rebuilds nothing.
        let again = Index::open(&journal).expect("opens");
        assert_eq!(titles(&again), ["Item 1", "Item 2", "Item 3"]);
        assert_eq!(again.healed(), None);
        assert_eq!(log_lines(&journal).len(), 1);
    }

    #[test]
    fn a_damaged_page_read_on_open_is_rebuilt_there() {
        let (_dir, journal) = journal_with_items(2);
        let (offset, size) = page_of(&journal, "meta");
        smash(&journal.index_file(), offset, size);
        let index = Index::open(&journal).expect("opens");
        assert!(index.healed().is_some());
        assert_eq!(titles(&index), ["Item 1", "Item 2"]);
        let log = log_lines(&journal);
        assert_eq!(log.len(), 1, "{log:?}");
        assert_eq!(log[0]["during"], "open");
    }

    #[test]
    fn damage_met_while_catching_up_is_rebuilt_with_the_new_lines_in() {
        let (_dir, journal) = journal_with_items(2);
        let (offset, size) = page_of(&journal, "files");
        smash(&journal.index_file(), offset, size);
        // A writer grows item 2, so the next open folds it and reads `files` to know where
        // it left off.
        journal
            .append_item(
                ItemId(2),
                &[event(
                    r#"{"v":1,"t":"2026-11-30T10:05:00Z","actor":"you","event":"prompt","item":"H-0002","text":"more"}"#,
                )],
            )
            .expect("append");
        let index = Index::open(&journal).expect("opens");
        assert!(index.healed().is_some());
        let item = index.item(ItemId(2)).expect("item").expect("present");
        assert_eq!(item.events, 2, "the line appended before the heal is in");
        assert_eq!(log_lines(&journal)[0]["during"], "open");
    }

    #[test]
    fn a_header_that_is_not_sqlite_is_rebuilt() {
        let (_dir, journal) = journal_with_items(2);
        smash(&journal.index_file(), 0, 100);
        let index = Index::open(&journal).expect("opens");
        assert_eq!(titles(&index), ["Item 1", "Item 2"]);
        one_rebuild(&journal, "open", "not a database");
    }

    /// A rebuild that doesn't cure the damage must not start another: the second sign is
    /// an error that names the file.
    #[test]
    fn damage_right_after_a_rebuild_is_an_error_not_a_loop() {
        let (_dir, journal) = journal_with_items(1);
        let index = Index::open(&journal).expect("opens");
        let always_damaged = |_: &Connection| -> Result<(), Fault> {
            Err(Fault::Damaged("pages keep changing under us".into()))
        };
        let e = HallError::from(index.read(always_damaged).expect_err("still damaged"));
        let path = journal.index_file().display().to_string();
        assert!(
            e.message.contains(&path) && e.message.contains("still damaged"),
            "{e:?}"
        );
        assert!(e.next.iter().any(|n| n == "hall doctor"), "{e:?}");
        let e = HallError::from(index.read(always_damaged).expect_err("and again"));
        assert!(e.message.contains(&path), "{e:?}");
        assert_eq!(log_lines(&journal).len(), 1, "one rebuild for the handle");
        // Nor does another handle of this process rebuild again so soon, whether the
        // damage shows in a query or when it opens.
        let other = Index::open(&journal).expect("the rebuilt file opens");
        let e = HallError::from(other.read(always_damaged).expect_err("still damaged"));
        assert!(e.message.contains("still damaged"), "{e:?}");
        // An error that isn't damage passes through untouched.
        let e = other
            .read(|_| -> Result<(), Fault> {
                Err(Fault::Journal(JournalError::NoItem(crate::item::ItemId(9))))
            })
            .expect_err("not damage");
        assert!(
            matches!(e, IndexError::Journal(JournalError::NoItem(_))),
            "{e:?}"
        );
        drop((index, other));
        smash(&journal.index_file(), 0, 100);
        let e = HallError::from(Index::open(&journal).err().expect("an error"));
        assert!(
            e.message.contains(&path) && e.message.contains("still damaged"),
            "{e:?}"
        );
        let log = log_lines(&journal);
        assert_eq!(log.len(), 1, "still the one rebuild: {log:?}");
    }

    #[test]
    fn an_index_path_that_is_a_directory_is_an_error_naming_it() {
        let (_dir, journal) = journal_with_items(1);
        for file in index_files(&journal.index_file()) {
            let _ = std::fs::remove_file(file);
        }
        std::fs::create_dir(journal.index_file()).expect("mkdir");
        let e = HallError::from(Index::open(&journal).err().expect("an error"));
        let path = journal.index_file().display().to_string();
        assert!(
            e.message.contains(&format!("{path} is a directory")),
            "{e:?}"
        );
        assert!(!e.message.contains("unable to open database file"), "{e:?}");
        assert_eq!(
            e.next[0],
            format!("check the permissions of {}", journal.root().display())
        );
        assert!(journal.index_file().is_dir(), "nothing was deleted");
        assert!(log_lines(&journal).is_empty(), "no rebuild was attempted");
    }

    #[cfg(unix)]
    #[test]
    fn an_index_linked_into_a_missing_directory_names_that_directory() {
        let (dir, journal) = journal_with_items(1);
        for file in index_files(&journal.index_file()) {
            let _ = std::fs::remove_file(file);
        }
        let missing = dir.path().join("gone");
        std::os::unix::fs::symlink(missing.join("index.sqlite"), journal.index_file())
            .expect("symlink");
        let e = HallError::from(Index::open(&journal).err().expect("an error"));
        assert!(
            e.message
                .contains(&format!("{}: No such file or directory", missing.display())),
            "{e:?}"
        );
        assert_eq!(
            e.next[0],
            format!("check the permissions of {}", missing.display())
        );
    }
}
