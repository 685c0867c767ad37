//! The SQLite projection of the journal. Derived only: it catches up from the journal
//! files on read, by the offsets it remembers, and `hall reindex` rebuilds it from
//! nothing. Deleting `index.sqlite` loses nothing.
//!
//! Writers append the name of every file they grew to `changes`; a reader whose stored
//! offset into `changes` equals the file's size knows the index is current with one
//! `stat`, and otherwise folds only the files named since.
//!
//! Because it is derived, a damaged file is repaired rather than reported: see [`heal`]
//! for what counts as damage, and `index.log` in the journal directory for the record of
//! every repair.

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Instant;

use rusqlite::{Connection, OptionalExtension, Transaction, params};

pub use heal::IndexError;

type Result<T, E = IndexError> = std::result::Result<T, E>;
use crate::item::event::{EVENT_VERSION, Head, decode, payload_matters};
use crate::item::{Event, EventKind, Item, ItemId, Sha, State};
use crate::journal::{self, Journal, REPO_FILE};

mod fold;
mod schema;
use schema::{OPEN_QUERY, PLACE_QUERY, SCHEMA, SCHEMA_VERSION, WAITING_QUERY};
mod heal;
mod inbox;

pub use inbox::{NoticeRow, NotifiedRow};
mod lookups;
use fold::{apply_file, read_names};
pub use heal::log_file;
use heal::{Fault, RebuildLock, Record};

/// An open, current index.
pub struct Index {
    /// Replaced in place when a query finds the file damaged and the handle rebuilds it.
    conn: RefCell<Connection>,
    journal: Journal,
    /// Why this handle rebuilt the file, once it has: damage seen after that is an error.
    healed: RefCell<Option<String>>,
}

/// One row of the items table.
#[derive(Clone, Debug, serde::Serialize, schemars::JsonSchema)]
pub struct ItemRow {
    pub id: ItemId,
    pub title: String,
    pub state: State,
    /// Where in the building the state is (`Workshop`, `Assay Office`…).
    pub station: String,
    pub branch: String,
    pub base: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worktree: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hold: Option<String>,
    pub round: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sha: Option<Sha>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pr: Option<String>,
    pub created: String,
    pub updated: String,
    /// When it entered its current state.
    pub since: String,
}

/// How a connection is used: serving commands, or writing a rebuild from nothing.
#[derive(Clone, Copy)]
enum Mode {
    Serve,
    Build,
}

/// How often, and how long apart, opening tries again while another process holds a
/// fresh file (the switch to WAL and its recovery answer "busy" without waiting).
const BUSY_TRIES: u32 = 100;
const BUSY_PAUSE: std::time::Duration = std::time::Duration::from_millis(20);

/// Runs `attempt` until it does not answer "busy", at most [`BUSY_TRIES`] times.
fn patiently<T>(mut attempt: impl FnMut() -> Result<T, Fault>) -> Result<T, Fault> {
    let mut tries = 0;
    loop {
        match attempt() {
            Err(f) if tries < BUSY_TRIES && f.is_busy() => {
                tries += 1;
                std::thread::sleep(BUSY_PAUSE);
            }
            other => return other,
        }
    }
}

impl Index {
    /// Opens the index and brings it up to date with the journal, rebuilding it first if
    /// the file turns out to be damaged.
    pub fn open(journal: &Journal) -> Result<Index> {
        match Index::attach(journal) {
            Ok(index) => Ok(index),
            Err(f) if f.is_damage() || f.is_journal_corrupt() => Index::heal(journal, f, "open"),
            Err(f) => Err(f.into_error(&journal.index_file())),
        }
    }

    /// Connects and catches up, waiting out other processes that open a fresh index at
    /// the same moment.
    fn attach(journal: &Journal) -> Result<Index, Fault> {
        patiently(|| {
            Index::connect(journal).and_then(|index| {
                index.catch_up()?;
                Ok(index)
            })
        })
    }

    /// [`Index::connect`] for a rebuild, retried while another process holds the database.
    fn connect_patiently(journal: &Journal) -> Result<Index, Fault> {
        patiently(|| Index::connect_as(journal, Mode::Build))
    }

    fn connect(journal: &Journal) -> Result<Index, Fault> {
        Index::connect_as(journal, Mode::Serve)
    }

    fn connect_as(journal: &Journal, mode: Mode) -> Result<Index, Fault> {
        let conn = Connection::open(journal.index_file())?;
        conn.busy_timeout(std::time::Duration::from_secs(10))?;
        match mode {
            Mode::Serve => {
                conn.pragma_update(None, "journal_mode", "WAL")?;
                conn.pragma_update(None, "synchronous", "NORMAL")?;
                keep_log_files(&conn);
            }
            Mode::Build => {
                // A rebuild writes a new file from nothing, in one transaction: nothing to
                // roll back to, so no log (a crash leaves a file the next open heals). A
                // bigger page cache measured slower (its allocations cost more than the
                // writes it saves).
                // Best effort: a process that opened the fresh file first may have put it
                // in WAL mode already, and the build then runs with the log.
                let _ = conn.pragma_update(None, "journal_mode", "OFF");
                conn.pragma_update(None, "synchronous", "OFF")?;
            }
        }
        let index = Index {
            conn: RefCell::new(conn),
            journal: journal.clone(),
            healed: RefCell::new(None),
        };
        let conn = index.conn.borrow();
        let current: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
        if current != SCHEMA_VERSION {
            // Check again and create the schema inside one write transaction, so processes
            // that open a fresh index at the same moment can't drop each other's tables.
            conn.execute_batch("BEGIN IMMEDIATE")?;
            let setup = (|| -> rusqlite::Result<()> {
                let version: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
                if version != SCHEMA_VERSION {
                    conn.execute_batch(
                        "DROP TABLE IF EXISTS meta; DROP TABLE IF EXISTS files; DROP TABLE IF EXISTS items;
                         DROP TABLE IF EXISTS events; DROP TABLE IF EXISTS usage; DROP TABLE IF EXISTS questions;
                         DROP TABLE IF EXISTS dismissed; DROP TABLE IF EXISTS notices; DROP TABLE IF EXISTS notified; DROP TABLE IF EXISTS item_json;",
                    )?;
                    conn.execute_batch(SCHEMA)?;
                    conn.pragma_update(None, "user_version", SCHEMA_VERSION)?;
                }
                Ok(())
            })();
            match setup {
                Ok(()) => conn.execute_batch("COMMIT")?,
                Err(e) => {
                    let _ = conn.execute_batch("ROLLBACK");
                    return Err(e.into());
                }
            }
        }
        drop(conn);
        Ok(index)
    }

    /// Deletes everything and folds every journal file again.
    pub fn rebuild(journal: &Journal) -> Result<(Index, RebuildStats)> {
        let path = journal.index_file();
        let lock = RebuildLock::take(journal).map_err(|f| f.into_error(&path))?;
        let rebuilt = Index::rebuild_locked(journal);
        drop(lock);
        rebuilt.map_err(|f| f.into_error(&path))
    }

    /// The rebuild itself, for a caller that holds the [`RebuildLock`].
    fn rebuild_locked(journal: &Journal) -> Result<(Index, RebuildStats), Fault> {
        for file in index_files(&journal.index_file()) {
            match std::fs::remove_file(&file) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(Fault::io(&file, e)),
            }
        }
        let index = Index::connect_patiently(journal)?;
        let mut stats = RebuildStats::default();
        {
            let mut conn = index.conn.borrow_mut();
            // Read the change log's size first: anything appended during the scan is named
            // after this offset and caught up by the next read.
            let changes_len = file_len(&journal.changes_file());
            let mut names: Vec<String> =
                journal.item_ids()?.iter().map(ItemId::to_string).collect();
            names.push(REPO_FILE.to_string());
            let tx = conn.transaction()?;
            // Building the time index once at the end beats updating it a million times.
            tx.execute_batch("DROP INDEX IF EXISTS events_t")?;
            // Reading and decoding the files is about half the work and needs no
            // database: a second thread does it, a few files ahead of the writer.
            std::thread::scope(|scope| -> Result<(), Fault> {
                let (send, receive) = std::sync::mpsc::sync_channel(32);
                let names = &names;
                scope.spawn(move || {
                    for name in names {
                        let loaded = fold::load(journal, name, 0, 0);
                        let failed = loaded.is_err();
                        if send.send((name, loaded)).is_err() || failed {
                            break;
                        }
                    }
                });
                for (name, loaded) in receive {
                    if let Some(loaded) = loaded? {
                        let s = fold::store(&tx, name, loaded)?;
                        stats.events += s.events;
                        stats.torn += s.torn;
                    }
                    stats.files += 1;
                }
                Ok(())
            })?;
            set_meta(&tx, "changes", changes_len as i64)?;
            tx.execute_batch("CREATE INDEX IF NOT EXISTS events_t ON events(t)")?;
            tx.commit()?;
            // On disk before anyone relies on it, then back to how every reader opens it.
            let path = journal.index_file();
            std::fs::File::open(&path)
                .and_then(|f| f.sync_all())
                .map_err(|e| Fault::io(&path, e))?;
            // Every later connection asks for WAL too, so a refusal here (another reader
            // holds the file) only defers the switch to the next open.
            let _ = conn.pragma_update(None, "journal_mode", "WAL");
            conn.pragma_update(None, "synchronous", "NORMAL")?;
            conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")?;
        }
        Ok((index, stats))
    }

    /// Rebuilds the file after `fault`, once, and logs it. Processes that found the same
    /// damage wait for each other; one that finds the file already replaced by another
    /// uses that one instead of rebuilding again.
    fn heal(journal: &Journal, fault: Fault, during: &str) -> Result<Index> {
        let path = journal.index_file();
        if fault.is_damage() && heal::rebuilt_lately(journal) {
            return Err(still_damaged(fault, &path));
        }
        let reason = fault.to_string();
        let seen = heal::identity(&path);
        let lock = RebuildLock::take(journal).map_err(|f| f.into_error(&path))?;
        let started = Instant::now();
        let rebuild = || Index::rebuild_locked(journal).map(|(i, s)| (i, Some(s)));
        let result = if heal::identity(&path) != seen {
            match Index::attach(journal) {
                Ok(index) => Ok((index, None)),
                Err(f) if f.is_damage() => rebuild(),
                Err(f) => Err(f),
            }
        } else {
            rebuild()
        };
        drop(lock);
        match result {
            Ok((index, stats)) => {
                if let Some(stats) = stats {
                    heal::note_rebuilt(journal);
                    heal::log(
                        journal,
                        Record {
                            reason: &reason,
                            during,
                            outcome: Ok((stats, started)),
                        },
                    );
                }
                index.healed.replace(Some(reason));
                Ok(index)
            }
            Err(f) => {
                if fault.is_damage() {
                    heal::log(
                        journal,
                        Record {
                            reason: &reason,
                            during,
                            outcome: Err(&f.to_string()),
                        },
                    );
                }
                Err(still_damaged(f, &path))
            }
        }
    }

    /// Runs a query; if it finds the file damaged, rebuilds once and runs it again. A
    /// query that finds the database busy despite the busy timeout (SQLite skips the
    /// handler where waiting could deadlock, and while another process recovers a
    /// fresh file's log) is tried again, as opening is.
    fn read<T>(&self, query: impl Fn(&Connection) -> Result<T, Fault>) -> Result<T> {
        let first = patiently(|| query(&self.conn.borrow()));
        let fault = match first {
            Ok(value) => return Ok(value),
            Err(f) => f,
        };
        let path = self.journal.index_file();
        if !fault.is_damage() {
            return Err(fault.into_error(&path));
        }
        if self.healed.borrow().is_some() {
            return Err(still_damaged(fault, &path));
        }
        // The old connection stays open until it is replaced; SQLite sees that its file
        // was deleted and leaves the new file's logs alone when it closes.
        let fresh = Index::heal(&self.journal, fault, "query")?;
        self.conn.replace(fresh.conn.into_inner());
        self.healed.replace(fresh.healed.into_inner());
        patiently(|| query(&self.conn.borrow())).map_err(|f| still_damaged(f, &path))
    }

    /// Why this handle rebuilt the file from the journal, if it did.
    pub fn healed(&self) -> Option<String> {
        self.healed.borrow().clone()
    }

    /// SQLite's `quick_check` over the whole file, healing what it finds: too slow for
    /// every command, cheap enough for `hall doctor`.
    pub fn verify(&self) -> Result<()> {
        self.read(|conn| {
            let mut stmt = conn.prepare("PRAGMA quick_check")?;
            let problems: Vec<String> = stmt
                .query_map([], |r| r.get::<_, String>(0))?
                .collect::<rusqlite::Result<_>>()?;
            if problems.iter().all(|p| p == "ok") {
                return Ok(());
            }
            let shown: Vec<&str> = problems.iter().take(3).map(String::as_str).collect();
            Err(Fault::Damaged(format!(
                "integrity check failed: {}",
                shown.join("; ")
            )))
        })
    }

    fn catch_up(&self) -> Result<(), Fault> {
        let journal = &self.journal;
        let changes = journal.changes_file();
        let len = file_len(&changes);
        let mut conn = self.conn.borrow_mut();
        if get_meta(&conn, "changes")? == Some(len as i64) {
            return Ok(());
        }
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let stored = get_meta(&tx, "changes")?;
        let (names, end) = match stored {
            Some(off) if off >= 0 && off as u64 <= len => read_names(&changes, off as u64)?,
            // Never indexed, or the change log was replaced: look at every file.
            _ => {
                let mut all: BTreeSet<String> =
                    journal.item_ids()?.iter().map(ItemId::to_string).collect();
                all.insert(REPO_FILE.to_string());
                (all, len)
            }
        };
        for name in &names {
            apply_file(&tx, journal, name)?;
        }
        set_meta(&tx, "changes", end as i64)?;
        tx.commit()?;
        Ok(())
    }

    /// Items, optionally only the ones not closed or dropped, in id order.
    pub fn items(&self, include_terminal: bool) -> Result<Vec<ItemRow>> {
        let q = if include_terminal {
            "SELECT num,title,state,branch,base,worktree,hold,round,sha,pr,created,updated,since FROM items ORDER BY num"
        } else {
            OPEN_QUERY
        };
        self.read(|conn| {
            let mut stmt = conn.prepare_cached(q)?;
            let rows = stmt.query_map([], row_to_item)?;
            Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
        })
    }

    /// The `limit` closed or dropped items changed last, newest first: the board's
    /// Records, read without loading every finished item.
    pub fn recently_finished(&self, limit: u32) -> Result<Vec<ItemRow>> {
        self.read(|conn| {
            let mut stmt = conn.prepare_cached(
                "SELECT num,title,state,branch,base,worktree,hold,round,sha,pr,created,updated,since FROM items
                 WHERE state IN ('closed','dropped') ORDER BY updated DESC, num LIMIT ?1",
            )?;
            let rows = stmt.query_map([limit], row_to_item)?;
            Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
        })
    }

    /// Items that wait for a person: escalated, awaiting you, or held.
    pub fn waiting_items(&self) -> Result<Vec<ItemRow>> {
        self.read(|conn| {
            let mut stmt = conn.prepare_cached(WAITING_QUERY)?;
            let rows = stmt.query_map([], row_to_item)?;
            Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
        })
    }

    pub fn item(&self, id: ItemId) -> Result<Option<Item>> {
        self.read(|conn| {
            let json: Option<String> = conn
                .query_row("SELECT json FROM item_json WHERE num = ?1", [id.0], |r| {
                    r.get(0)
                })
                .optional()?;
            match json {
                Some(j) => serde_json::from_str(&j).map(Some).map_err(|e| {
                    Fault::Damaged(format!("the cached fold of {id} does not decode: {e}"))
                }),
                None => Ok(None),
            }
        })
    }

    /// The item whose worktree contains `dir`, or whose branch is `branch`, not terminal first.
    pub fn item_for_place(&self, toplevel: &str, branch: Option<&str>) -> Result<Option<ItemId>> {
        self.read(|conn| {
            let mut stmt = conn.prepare_cached(PLACE_QUERY)?;
            Ok(stmt
                .query_row(params![toplevel, branch], |r| r.get::<_, u32>(0))
                .optional()?
                .map(ItemId))
        })
    }

    pub fn count_by_state(&self) -> Result<Vec<(State, u64)>> {
        let rows = self.read(|conn| {
            let mut stmt =
                conn.prepare_cached("SELECT state, COUNT(*) FROM items GROUP BY state")?;
            let rows = stmt
                .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(rows)
        })?;
        Ok(rows
            .into_iter()
            .filter_map(|(s, n)| State::parse(&s).map(|st| (st, n as u64)))
            .collect())
    }

    /// The newest events across all files: (item, line, t, event, actor).
    pub fn recent_events(&self, kind: Option<&str>, limit: u32) -> Result<Vec<EventRow>> {
        self.read(|conn| {
            let mut stmt = conn.prepare_cached(
                "SELECT id >> 32, id & 4294967295, t, event, actor FROM events
                 WHERE (?1 IS NULL OR event = ?1) ORDER BY t DESC, id DESC LIMIT ?2",
            )?;
            let rows = stmt.query_map(params![kind, limit], |r| {
                Ok(EventRow {
                    item: r.get::<_, u32>(0)?,
                    line: r.get::<_, u64>(1)?,
                    t: r.get(2)?,
                    event: r.get(3)?,
                    actor: r.get(4)?,
                })
            })?;
            let mut v = rows.collect::<rusqlite::Result<Vec<_>>>()?;
            v.reverse();
            Ok(v)
        })
    }

    pub fn questions(&self, open_only: bool) -> Result<Vec<QuestionRow>> {
        self.read(|conn| {
            let mut stmt = conn.prepare_cached(
                "SELECT qid,item,question,options,dflt,asked,wait_until,session,answer,by_default,resumed FROM questions
                 WHERE (?1 = 0 OR answer IS NULL) ORDER BY qid",
            )?;
            let rows = stmt.query_map([open_only as i64], |r| {
                let options: String = r.get(3)?;
                Ok(QuestionRow {
                    qid: r.get(0)?,
                    item: r.get::<_, Option<u32>>(1)?.map(ItemId),
                    question: r.get(2)?,
                    options: serde_json::from_str(&options).unwrap_or_default(),
                    default: r.get(4)?,
                    asked: r.get(5)?,
                    wait_until: r.get(6)?,
                    session: r.get(7)?,
                    answer: r.get(8)?,
                    by_default: r.get::<_, i64>(9)? != 0,
                    resumed: r.get::<_, i64>(10)? != 0,
                })
            })?;
            Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
        })
    }

    pub fn question(&self, qid: u32) -> Result<Option<QuestionRow>> {
        Ok(self.questions(false)?.into_iter().find(|q| q.qid == qid))
    }

    /// Usage totals grouped by `by` (item, station, role, model, day).
    pub fn usage(
        &self,
        by: &str,
        since: Option<&str>,
        item: Option<ItemId>,
    ) -> Result<Vec<UsageRow>> {
        let key = match by {
            "item" => "COALESCE(printf('H-%04d', item), '(no item)')",
            "role" => "role",
            "station" => {
                "CASE role WHEN 'review' THEN 'Assay Office' WHEN 'fix' THEN 'Repair Shop' WHEN 'intake' THEN 'Front Desk'
                 WHEN 'librarian' THEN 'Library' WHEN 'dev' THEN 'Workshop' ELSE role END"
            }
            "model" => "model",
            "day" => "substr(t, 1, 10)",
            other => return Err(IndexError::Query(format!("--by takes item, station, role, model or day, not `{other}`"))),
        };
        let q = format!(
            "SELECT {key} AS k, SUM(input), SUM(output), SUM(cache_read), SUM(cache_write), SUM(cost), COUNT(*)
             FROM usage WHERE (?1 IS NULL OR t >= ?1) AND (?2 IS NULL OR item = ?2) GROUP BY k ORDER BY k"
        );
        self.read(|conn| {
            let mut stmt = conn.prepare(&q)?;
            let rows = stmt.query_map(params![since, item.map(|i| i.0)], |r| {
                Ok(UsageRow {
                    key: r.get(0)?,
                    input: r.get::<_, i64>(1)? as u64,
                    output: r.get::<_, i64>(2)? as u64,
                    cache_read: r.get::<_, i64>(3)? as u64,
                    cache_write: r.get::<_, i64>(4)? as u64,
                    cost_usd: (r.get::<_, f64>(5)? * 10_000.0).round() / 10_000.0,
                    runs: r.get::<_, i64>(6)? as u64,
                })
            })?;
            Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
        })
    }

    pub fn event_count(&self) -> Result<u64> {
        self.read(|conn| {
            Ok(conn.query_row("SELECT COUNT(*) FROM events", [], |r| r.get::<_, i64>(0))? as u64)
        })
    }
}

/// The error for damage that a rebuild did not cure, or for whatever stopped the rebuild.
fn still_damaged(fault: Fault, path: &Path) -> IndexError {
    if !fault.is_damage() {
        return fault.into_error(path);
    }
    IndexError::StillDamaged {
        path: path.to_path_buf(),
        why: fault.to_string(),
    }
}

/// The index file and SQLite's companions to it.
/// Keeps the write-ahead log and its shared-memory file when the last connection closes
/// (emptied, not deleted). Most processes are short (a hook, a command), and each would
/// otherwise create both files on open and delete them on close: two inode allocations
/// and two unlinks, measured at about a third of a hook's time in the index.
#[allow(unsafe_code)]
fn keep_log_files(conn: &Connection) {
    use rusqlite::ffi;
    let mut on: std::ffi::c_int = 1;
    // SAFETY: the handle is valid while `conn` is borrowed, the database name is a
    // NUL-terminated literal, and this op reads and writes one int through the pointer,
    // which outlives the call. A failure only leaves SQLite's default (delete on close).
    unsafe {
        ffi::sqlite3_file_control(
            conn.handle(),
            c"main".as_ptr(),
            ffi::SQLITE_FCNTL_PERSIST_WAL,
            (&raw mut on).cast(),
        );
    }
    // With the log kept, truncate it when the last connection closes.
    let _ = conn.pragma_update(None, "journal_size_limit", 0);
}

fn index_files(path: &Path) -> [PathBuf; 3] {
    ["", "-wal", "-shm"].map(|suffix| {
        let mut name = path.as_os_str().to_owned();
        name.push(suffix);
        PathBuf::from(name)
    })
}

/// What a rebuild folded.
#[derive(Debug, Default, Clone, Copy)]
pub struct RebuildStats {
    pub files: u64,
    pub events: u64,
    pub torn: u64,
}

#[derive(Clone, Debug, serde::Serialize, schemars::JsonSchema)]
pub struct EventRow {
    /// 0 for repo-level events.
    pub item: u32,
    pub line: u64,
    pub t: String,
    pub event: String,
    pub actor: String,
}

#[derive(Clone, Debug, serde::Serialize, schemars::JsonSchema)]
pub struct QuestionRow {
    pub qid: u32,
    pub item: Option<ItemId>,
    pub question: String,
    pub options: Vec<String>,
    pub default: Option<String>,
    pub asked: String,
    pub wait_until: Option<String>,
    pub session: Option<String>,
    pub answer: Option<String>,
    pub by_default: bool,
    /// Whether the asking session was resumed with the answer (the daemon's business,
    /// not part of the command replies).
    #[serde(skip)]
    pub resumed: bool,
}

#[derive(Clone, Debug, serde::Serialize, schemars::JsonSchema)]
pub struct UsageRow {
    pub key: String,
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
    /// List-price cost in US dollars.
    pub cost_usd: f64,
    pub runs: u64,
}

fn row_to_item(r: &rusqlite::Row<'_>) -> rusqlite::Result<ItemRow> {
    let state: String = r.get(2)?;
    let state = State::parse(&state).unwrap_or_default();
    Ok(ItemRow {
        id: ItemId(r.get(0)?),
        title: r.get(1)?,
        state,
        station: state.station().to_string(),
        branch: r.get(3)?,
        base: r.get(4)?,
        worktree: r.get(5)?,
        hold: r.get(6)?,
        round: r.get(7)?,
        sha: r.get::<_, Option<String>>(8)?.map(Sha::new),
        pr: r.get(9)?,
        created: r.get(10)?,
        updated: r.get(11)?,
        since: r.get(12)?,
    })
}

fn file_len(path: &Path) -> u64 {
    std::fs::metadata(path).map(|m| m.len()).unwrap_or(0)
}

fn get_meta(conn: &Connection, key: &str) -> Result<Option<i64>, Fault> {
    Ok(conn
        .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
        .optional()?)
}

fn set_meta(tx: &Transaction<'_>, key: &str, value: i64) -> Result<(), Fault> {
    tx.execute(
        "INSERT INTO meta(key,value) VALUES(?1,?2) ON CONFLICT(key) DO UPDATE SET value = ?2",
        params![key, value],
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(index: &Index, query: &str, params: impl rusqlite::Params) -> Vec<String> {
        let conn = index.conn.borrow();
        let mut stmt = conn
            .prepare(&format!("EXPLAIN QUERY PLAN {query}"))
            .expect("explain");
        stmt.query_map(params, |r| r.get::<_, String>(3))
            .expect("plan")
            .collect::<rusqlite::Result<_>>()
            .expect("rows")
    }

    fn empty_index() -> (tempfile::TempDir, Index) {
        let dir = tempfile::tempdir().expect("temp dir");
        let journal = Journal::new(dir.path().join("hallmark"));
        journal.init().expect("init");
        let index = Index::open(&journal).expect("index");
        (dir, index)
    }

    /// A hook asks for the item of a worktree on every edit: the lookup must go through
    /// the indexes, never read the whole items table.
    #[test]
    fn the_worktree_lookup_uses_indexes() {
        let (_dir, index) = empty_index();
        let plan = plan(&index, PLACE_QUERY, params!["/w", "b"]);
        assert!(
            plan.iter().any(|p| p.contains("items_worktree")),
            "{plan:?}"
        );
        assert!(plan.iter().any(|p| p.contains("items_branch")), "{plan:?}");
        assert!(
            !plan.iter().any(|p| p.starts_with("SCAN items")),
            "{plan:?}"
        );
    }

    /// `hall status` and the inbox run on every look at the building: neither may read
    /// the rows of closed items, which are most of a repository's history.
    #[test]
    fn listings_read_only_what_they_list() {
        let (_dir, index) = empty_index();
        let open = plan(&index, OPEN_QUERY, []);
        assert_eq!(
            open,
            ["SCAN items USING COVERING INDEX items_open"],
            "{open:?}"
        );
        let waiting = plan(&index, WAITING_QUERY, []);
        assert!(
            waiting.iter().any(|p| p.contains("INDEX items_state"))
                && waiting.iter().any(|p| p.contains("INDEX items_hold")),
            "{waiting:?}"
        );
        assert!(
            !waiting.iter().any(|p| p.starts_with("SCAN items")),
            "{waiting:?}"
        );
    }
}
