//! Built-in search: two SQLite FTS5 tables over the learnings, fused by reciprocal rank.
//!
//! - `words` (porter stemming over unicode61 words) ranks by bm25 with the title
//!   weighted over the body: what a sentence of English finds, and an error string
//!   (`connection reset by peer`) as a phrase.
//! - `grams` (the trigram tokenizer) matches any substring of three characters or more:
//!   identifiers (`HttpClient::retry`), paths and codes (`E0502`) that word tokenizing
//!   splits apart, or that sit inside a longer word.
//!
//! What a query costs is what it matches: FTS5 reads the doclist of every word it asks
//! for and ranks every row that matches. So:
//!
//! - A word held by half the rows or more is left out of the words query (unless nothing
//!   else is left): bm25 gives it no weight, FTS5 flooring its idf just above zero. The
//!   counts come from a copy of FTS5's vocabulary taken at each refresh, the query's
//!   words stemmed by FTS5 itself.
//! - Each table ranks at most [`RANK_BUDGET`] matches. A query that matches more is
//!   narrowed: the words table ranks the learnings holding every chunk of the query
//!   first, then those holding its rarer words, then the newest matches; the trigram
//!   table lists its newest matches unranked, since a substring found that often tells
//!   learnings apart no better than the words do. What this costs in ranking is measured
//!   by the bench (`benches/library.rs`) against a search that ranks every match.
//! - The trigram table's bm25 is computed here from the matches' text, so its phrase,
//!   dear for a long path, is matched once instead of three times; and where a chunk's
//!   seams (`tu::qu`, `in/ze`: see `grams.rs`) find few enough rows, it is not matched
//!   at all, the text read for ranking telling which rows hold it.
//!
//! The words table's side (the query, weighing, narrowing) is in `words.rs`, the
//! trigram table's (seams, matching, ranking) in `grams.rs`; this file opens the
//! database, keeps it in step with the files, and fuses the two lists.
//!
//! Both need nothing beyond rusqlite's `bundled` feature: the SQLite it compiles has
//! FTS5 enabled, and is newer than 3.34, which brought the trigram tokenizer.
//!
//! The database is `library/search.sqlite`, a sibling of the journal's `index.sqlite`
//! rather than tables inside it: the index is derived from the journal and rebuilt by
//! deleting its file whenever its schema or the journal calls for it, while these
//! tables are derived from the learning files and are brought up to date by their own
//! cheap check. Keeping them apart means neither rebuild pays for, or can break, the
//! other. The files are the truth; the tables only ever follow them.

mod grams;
mod words;

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

use rusqlite::{Connection, OptionalExtension, params};
use schemars::JsonSchema;
use serde::Serialize;

use super::learning::Learning;
use super::store::Problem;
use super::{Library, LibraryError, Result};
use crate::item::{LearningId, LearningKind, LearningStatus};
pub(super) use grams::grams_query;
#[cfg(test)]
pub(super) use grams::{grams_fts, seams};
pub(super) use words::words_query;

const SCHEMA_VERSION: i64 = 3;

const SCHEMA: &str = "
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE files(name TEXT PRIMARY KEY, size INTEGER NOT NULL, mtime INTEGER NOT NULL);
CREATE TABLE problems(name TEXT PRIMARY KEY, file TEXT NOT NULL, message TEXT NOT NULL);
-- `chars`: the body's characters on one line, which a briefing fits lines by before it
-- reads any body.
CREATE TABLE docs(rowid INTEGER PRIMARY KEY, name TEXT NOT NULL, id TEXT NOT NULL,
  version INTEGER NOT NULL, status TEXT NOT NULL, kind TEXT NOT NULL, title TEXT NOT NULL,
  paths TEXT NOT NULL, body TEXT NOT NULL, chars INTEGER NOT NULL);
CREATE INDEX docs_name ON docs(name);
CREATE INDEX docs_id ON docs(id);
-- A row of docs under each literal prefix of its path globs (`web/src` of
-- `web/src/**/*.ts`): a briefing looks up the learnings that could match a changed path
-- by that path's ancestors, not by every glob. Each row holds what a briefing plans
-- with (all but the body), and rows of one prefix are stored together, so a wide diff
-- reads a few runs of pages rather than a page of docs per learning.
CREATE TABLE scopes(prefix TEXT NOT NULL, doc INTEGER NOT NULL, status TEXT NOT NULL,
  id TEXT NOT NULL, kind TEXT NOT NULL, title TEXT NOT NULL, paths TEXT NOT NULL,
  chars INTEGER NOT NULL, PRIMARY KEY(prefix, doc)) WITHOUT ROWID;
CREATE INDEX scopes_doc ON scopes(doc);
CREATE VIRTUAL TABLE words USING fts5(title, body, paths, kind, tokenize='porter unicode61');
CREATE VIRTUAL TABLE grams USING fts5(title, body, paths, tokenize='trigram');
-- FTS5's own vocabulary of the words table, and a copy of it taken after each refresh:
-- each stemmed word and how many rows hold it. Reading the copy is a lookup; reading
-- the vocabulary walks every row that holds the word.
CREATE VIRTUAL TABLE words_vocabulary USING fts5vocab(words, 'row');
CREATE TABLE terms(term TEXT PRIMARY KEY, rows INTEGER NOT NULL) WITHOUT ROWID;
";

/// The rank constant of reciprocal rank fusion: large enough that one list's top hit
/// doesn't drown what both lists agree on.
const RRF_K: f64 = 60.0;

/// How many matches a table ranks in full; past it the query is narrowed (see the
/// module's documentation). Ranking a match costs microseconds, so this bounds a search
/// to a few milliseconds however common its words are in the store.
pub const RANK_BUDGET: usize = 500;

/// A refresh that read this many files builds the tables almost from nothing, and leaves
/// them in as many segments as it wrote; merging them into one makes every later query
/// read one doclist per term instead of several.
const OPTIMIZE_AFTER: usize = 256;

/// Which learnings a search may return.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SearchFilter {
    /// Proposed and retired learnings too (by default only those in force).
    pub all: bool,
    /// Only these kinds (empty: every kind).
    pub kinds: Vec<LearningKind>,
}

/// Which tables a search asks; both unless measuring one against the other.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engines {
    Words,
    WordsAndGrams,
}

/// One learning a search found.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct Hit {
    pub id: LearningId,
    pub version: u32,
    pub title: String,
    pub kind: LearningKind,
    pub status: LearningStatus,
    /// The fused score: the sum of 1/(60 + rank) over the tables that found it.
    pub score: f64,
    /// The tables that found it: `words`, `trigram`.
    pub matched: Vec<&'static str>,
}

/// A search's hits, and the learning files it could not read.
#[derive(Clone, Debug, Default)]
pub struct Searched {
    pub hits: Vec<Hit>,
    pub problems: Vec<Problem>,
}

/// An open search database, kept in step with the learning files.
pub struct Search {
    library: Library,
    pub(super) conn: Connection,
    pub(super) path: PathBuf,
    budget: usize,
}

pub(super) fn db(path: &std::path::Path) -> impl Fn(rusqlite::Error) -> LibraryError + '_ {
    move |source| LibraryError::Database {
        path: path.to_path_buf(),
        source,
    }
}

impl Search {
    /// Opens (or creates) the database and brings it up to date with the files; a
    /// database that can't be read is deleted and built again, since it is derived.
    pub fn open(library: &Library) -> Result<Search> {
        let path = library.search_file();
        std::fs::create_dir_all(library.root()).map_err(super::io(library.root()))?;
        let search = match Search::connect(library, &path) {
            Ok(s) => s,
            Err(LibraryError::Database { .. }) => {
                for suffix in ["", "-wal", "-shm"] {
                    let file = PathBuf::from(format!("{}{suffix}", path.display()));
                    let _ = std::fs::remove_file(file);
                }
                Search::connect(library, &path)?
            }
            Err(e) => return Err(e),
        };
        search.sync()?;
        Ok(search)
    }

    fn connect(library: &Library, path: &std::path::Path) -> Result<Search> {
        let conn = Connection::open(path).map_err(db(path))?;
        conn.busy_timeout(std::time::Duration::from_secs(10))
            .map_err(db(path))?;
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(db(path))?;
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(db(path))?;
        // Read the file through a mapping rather than copying each page out of the OS's
        // cache: a query over common words touches most of the index.
        conn.pragma_update(None, "mmap_size", 256 * 1024 * 1024)
            .map_err(db(path))?;
        conn.set_prepared_statement_cache_capacity(32);
        let version: i64 = conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .map_err(db(path))?;
        if version != SCHEMA_VERSION {
            conn.execute_batch("BEGIN IMMEDIATE").map_err(db(path))?;
            let setup = (|| -> rusqlite::Result<()> {
                let v: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
                if v != SCHEMA_VERSION {
                    conn.execute_batch(
                        "DROP TABLE IF EXISTS meta; DROP TABLE IF EXISTS files;
                         DROP TABLE IF EXISTS problems; DROP TABLE IF EXISTS docs;
                         DROP TABLE IF EXISTS words; DROP TABLE IF EXISTS grams;
                         DROP TABLE IF EXISTS scopes; DROP TABLE IF EXISTS terms;
                         DROP TABLE IF EXISTS words_vocabulary;",
                    )?;
                    conn.execute_batch(SCHEMA)?;
                    conn.pragma_update(None, "user_version", SCHEMA_VERSION)?;
                }
                Ok(())
            })();
            match setup {
                Ok(()) => conn.execute_batch("COMMIT").map_err(db(path))?,
                Err(e) => {
                    let _ = conn.execute_batch("ROLLBACK");
                    return Err(db(path)(e));
                }
            }
        }
        // Where a query's words are stemmed as the words table stems them: written in a
        // savepoint, read back through the vocabulary, rolled back.
        conn.execute_batch(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.stems
               USING fts5(word, tokenize = 'porter unicode61');
             CREATE VIRTUAL TABLE IF NOT EXISTS temp.stem_vocabulary
               USING fts5vocab(temp, stems, 'instance');",
        )
        .map_err(db(path))?;
        Ok(Search {
            library: library.clone(),
            conn,
            path: path.to_path_buf(),
            budget: RANK_BUDGET,
        })
    }

    /// The same search with another ranking budget (`usize::MAX`: rank every match), for
    /// measuring what narrowing a query changes.
    pub fn with_budget(mut self, rows: usize) -> Search {
        self.budget = rows;
        self
    }

    /// What the files look like, cheaply: the generation every change bumps and the
    /// `learnings/` directory's modification time, which moves when a file is added,
    /// removed or renamed into place (a hand edit saved by rename included).
    fn stamp(&self) -> String {
        let mtime = std::fs::metadata(self.library.learnings_dir())
            .ok()
            .and_then(|m| m.modified().ok())
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        format!("{}:{mtime}", self.library.generation())
    }

    /// Brings the tables up to date with the files when the stamp moved: files whose
    /// size or modification time changed are read again, removed ones dropped.
    pub fn sync(&self) -> Result<()> {
        let stamp = self.stamp();
        let stored: Option<String> = self
            .conn
            .query_row("SELECT value FROM meta WHERE key = 'stamp'", [], |r| {
                r.get(0)
            })
            .optional()
            .map_err(db(&self.path))?;
        if stored.as_deref() == Some(stamp.as_str()) {
            return Ok(());
        }
        self.refresh(&stamp).map_err(db(&self.path))
    }

    fn refresh(&self, stamp: &str) -> rusqlite::Result<()> {
        let tx = self.conn.unchecked_transaction()?;
        let mut known: HashMap<String, (i64, i64)> = HashMap::new();
        {
            let mut q = tx.prepare("SELECT name, size, mtime FROM files")?;
            let rows = q.query_map([], |r| Ok((r.get(0)?, (r.get(1)?, r.get(2)?))))?;
            for row in rows {
                let (name, seen) = row?;
                known.insert(name, seen);
            }
        }
        let names = self.library.current_names().unwrap_or_default();
        let dir = self.library.learnings_dir();
        let mut read = 0;
        for name in &names {
            let meta = std::fs::metadata(dir.join(name)).ok();
            let size = meta.as_ref().map(|m| m.len() as i64).unwrap_or(-1);
            let mtime = meta
                .and_then(|m| m.modified().ok())
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map(|d| d.as_nanos() as i64)
                .unwrap_or(0);
            if known.remove(name) == Some((size, mtime)) {
                continue;
            }
            forget(&tx, name)?;
            read += 1;
            tx.execute(
                "INSERT OR REPLACE INTO files(name, size, mtime) VALUES(?1, ?2, ?3)",
                params![name, size, mtime],
            )?;
            let read = self
                .library
                .read_file(&dir.join(name))
                .and_then(|l| self.library.entry_of(l));
            match read {
                Ok(entry) => {
                    insert(&tx, name, &entry.current)?;
                    if let Some(in_force) = &entry.in_force
                        && in_force.meta.version != entry.current.meta.version
                    {
                        insert(&tx, name, in_force)?;
                    }
                }
                Err(e) => {
                    let p = Problem::of(&e);
                    tx.execute(
                        "INSERT OR REPLACE INTO problems(name, file, message) VALUES(?1, ?2, ?3)",
                        params![name, p.file, p.message],
                    )?;
                }
            }
        }
        for gone in known.keys() {
            forget(&tx, gone)?;
            tx.execute("DELETE FROM files WHERE name = ?1", [gone])?;
        }
        if read >= OPTIMIZE_AFTER {
            tx.execute_batch(
                "INSERT INTO words(words) VALUES('optimize');
                 INSERT INTO grams(grams) VALUES('optimize');",
            )?;
        }
        if read > 0 || !known.is_empty() {
            tx.execute_batch(
                "DELETE FROM terms;
                 INSERT INTO terms(term, rows) SELECT term, doc FROM words_vocabulary;
                 INSERT OR REPLACE INTO meta(key, value)
                   VALUES('rows', (SELECT count(*) FROM docs));
                 INSERT OR REPLACE INTO meta(key, value)
                   VALUES('gram_tokens', (SELECT coalesce(sum(max(length(title) - 2, 0)
                     + max(length(body) - 2, 0) + max(length(paths) - 2, 0)), 0) FROM docs));",
            )?;
        }
        tx.execute(
            "INSERT OR REPLACE INTO meta(key, value) VALUES('stamp', ?1)",
            [stamp],
        )?;
        tx.commit()
    }

    /// The learning files that did not parse when the tables last followed them.
    pub fn problems(&self) -> Result<Vec<Problem>> {
        let mut q = self
            .conn
            .prepare_cached("SELECT file, message FROM problems ORDER BY name")
            .map_err(db(&self.path))?;
        let rows = q
            .query_map([], |r| {
                Ok(Problem {
                    file: r.get(0)?,
                    message: r.get(1)?,
                })
            })
            .map_err(db(&self.path))?;
        rows.collect::<rusqlite::Result<_>>()
            .map_err(db(&self.path))
    }

    /// The best `limit` learnings for `query`, from both tables fused.
    pub fn search(&self, query: &str, limit: usize, filter: &SearchFilter) -> Result<Searched> {
        self.search_with(query, limit, filter, Engines::WordsAndGrams)
    }

    /// [`Search::search`] with a choice of tables.
    pub fn search_with(
        &self,
        query: &str,
        limit: usize,
        filter: &SearchFilter,
        engines: Engines,
    ) -> Result<Searched> {
        self.sync()?;
        let depth = (limit * 4).max(20);
        let words = self.weigh(words_query(query))?;
        let mut lists = vec![("words", self.words(&words, depth, filter)?)];
        if engines == Engines::WordsAndGrams {
            lists.push(("trigram", self.grams(&grams_query(query), depth, filter)?));
        }
        let mut fused: BTreeMap<i64, Hit> = BTreeMap::new();
        for (table, list) in lists {
            for (rank, (rowid, hit)) in list.into_iter().enumerate() {
                let entry = fused.entry(rowid).or_insert(hit);
                entry.score += 1.0 / (RRF_K + rank as f64 + 1.0);
                entry.matched.push(table);
            }
        }
        let mut hits: Vec<Hit> = fused.into_values().collect();
        hits.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then(a.id.cmp(&b.id))
                .then(b.version.cmp(&a.version))
        });
        hits.truncate(limit);
        Ok(Searched {
            hits,
            problems: self.problems()?,
        })
    }

    /// A number the last refresh wrote into `meta`; 0 before the first.
    fn meta_number(&self, key: &str) -> Result<usize> {
        let value: Option<String> = self
            .conn
            .prepare_cached("SELECT value FROM meta WHERE key = ?1")
            .and_then(|mut q| q.query_row([key], |r| r.get(0)).optional())
            .map_err(db(&self.path))?;
        Ok(value.and_then(|v| v.parse().ok()).unwrap_or(0))
    }

    /// above `above`, with the filter applied before the limit.
    fn ranked(
        &self,
        sql: &str,
        fts_query: &str,
        above: i64,
        depth: usize,
        filter: &SearchFilter,
    ) -> Result<Vec<(i64, Hit)>> {
        if fts_query.is_empty() {
            return Ok(Vec::new());
        }
        let kinds: String = filter
            .kinds
            .iter()
            .map(|k| k.as_str())
            .collect::<Vec<_>>()
            .join(",");
        let mut q = self.conn.prepare_cached(sql).map_err(db(&self.path))?;
        let rows = q
            .query_map(
                params![fts_query, filter.all, kinds, depth as i64, above],
                |r| {
                    let id: String = r.get(1)?;
                    let kind: String = r.get(4)?;
                    let status: String = r.get(5)?;
                    Ok((
                        r.get::<_, i64>(0)?,
                        id,
                        r.get::<_, u32>(2)?,
                        r.get::<_, String>(3)?,
                        kind,
                        status,
                    ))
                },
            )
            .map_err(db(&self.path))?;
        let mut out = Vec::new();
        for row in rows {
            let (rowid, id, version, title, kind, status) = row.map_err(db(&self.path))?;
            if let Some(hit) = hit(&id, version, title, &kind, &status) {
                out.push((rowid, hit));
            }
        }
        Ok(out)
    }
}

/// A search hit from a row of `docs`; None for an id or kind this version can't read.
fn hit(id: &str, version: u32, title: String, kind: &str, status: &str) -> Option<Hit> {
    let (Ok(id), Ok(kind)) = (id.parse::<LearningId>(), kind.parse::<LearningKind>()) else {
        return None;
    };
    let status = match status {
        "proposed" => LearningStatus::Proposed,
        "retired" => LearningStatus::Retired,
        _ => LearningStatus::Accepted,
    };
    Some(Hit {
        id,
        version,
        title,
        kind,
        status,
        score: 0.0,
        matched: Vec::new(),
    })
}

fn forget(tx: &rusqlite::Transaction<'_>, name: &str) -> rusqlite::Result<()> {
    let rowids: Vec<i64> = {
        let mut q = tx.prepare_cached("SELECT rowid FROM docs WHERE name = ?1")?;
        q.query_map([name], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?
    };
    for rowid in rowids {
        tx.execute("DELETE FROM words WHERE rowid = ?1", [rowid])?;
        tx.execute("DELETE FROM grams WHERE rowid = ?1", [rowid])?;
        tx.execute("DELETE FROM docs WHERE rowid = ?1", [rowid])?;
        tx.execute("DELETE FROM scopes WHERE doc = ?1", [rowid])?;
    }
    tx.execute("DELETE FROM problems WHERE name = ?1", [name])?;
    Ok(())
}

fn insert(tx: &rusqlite::Transaction<'_>, name: &str, l: &Learning) -> rusqlite::Result<()> {
    let m = &l.meta;
    tx.execute(
        "INSERT INTO docs(name, id, version, status, kind, title, paths, body, chars)
         VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        params![
            name,
            m.id.to_string(),
            m.version,
            m.status.as_str(),
            m.kind.as_str(),
            m.title,
            m.paths.join("\n"),
            l.body,
            super::briefing::summary_chars(&l.body) as i64
        ],
    )?;
    let rowid = tx.last_insert_rowid();
    for glob in &m.paths {
        tx.execute(
            "INSERT OR IGNORE INTO scopes(prefix, doc, status, id, kind, title, paths, chars)
             SELECT ?1, rowid, status, id, kind, title, paths, chars FROM docs WHERE rowid = ?2",
            params![super::briefing::literal_prefix(glob), rowid],
        )?;
    }
    let paths = m.paths.join(" ");
    tx.execute(
        "INSERT INTO words(rowid, title, body, paths, kind) VALUES(?1, ?2, ?3, ?4, ?5)",
        params![rowid, m.title, l.body, paths, m.kind.as_str()],
    )?;
    tx.execute(
        "INSERT INTO grams(rowid, title, body, paths) VALUES(?1, ?2, ?3, ?4)",
        params![rowid, m.title, l.body, paths],
    )?;
    Ok(())
}
