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
//!   dear for a long path, is matched once instead of three times.
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

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;

use rusqlite::{Connection, OptionalExtension, params};
use schemars::JsonSchema;
use serde::Serialize;

use super::learning::Learning;
use super::store::Problem;
use super::{Library, LibraryError, Result};
use crate::item::{LearningId, LearningKind, LearningStatus};

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

/// The words of a query that reach the words table; a longer text (an item's summary)
/// is cut there, since more words match more of the store and add little.
const MAX_WORDS: usize = 32;

/// The most words the whole text is asked for as one phrase: a longer text (an item's
/// title and summary) is never written word for word in a learning, and the phrase
/// costs a walk through the doclists of all its words.
const MAX_PHRASE: usize = 12;

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

    /// The words table's best `depth`: bm25 over every match when they fit the budget.
    /// Else, each list ranked on its own and appended while there is room: the
    /// learnings holding every chunk of the query (the newest `budget` of them); those
    /// holding one of its rarer phrases or words (in at most `budget` learnings each,
    /// rarest first, as many as the budget holds); the newest `budget` matches of any
    /// word.
    fn words(
        &self,
        query: &Weighed,
        depth: usize,
        filter: &SearchFilter,
    ) -> Result<Vec<(i64, Hit)>> {
        let any = query.words.any();
        let held: Option<usize> = query
            .rows
            .iter()
            .try_fold(0usize, |sum, n| Some(sum + (*n)?));
        let floor = match held {
            Some(n) if n <= self.budget => None,
            _ => self.floor(WORDS_FLOOR_SQL, &any)?,
        };
        let Some(floor) = floor else {
            return self.ranked(WORDS_SQL, &any, 0, depth, filter);
        };
        let mut hits = Fill::new(depth);
        let every = query.words.every();
        if let Some(every) = &every {
            // Every chunk matches no more rows than its rarest chunk.
            let most = query
                .words
                .chunks
                .iter()
                .filter_map(|c| query.words.phrases.iter().position(|p| p == c))
                .filter_map(|i| query.rows[i])
                .min();
            let above = match most {
                Some(n) if n <= self.budget => 0,
                _ => self.floor(WORDS_FLOOR_SQL, every)?.unwrap_or(0),
            };
            hits.extend(self.ranked(WORDS_SQL, every, above, depth, filter)?);
        }
        if !hits.full() {
            let mut rare: Vec<(usize, String)> = Vec::new();
            for (phrase, rows) in query.words.phrases.iter().zip(&query.rows) {
                let fts = quote(phrase);
                if every.as_ref() == Some(&fts) {
                    // Ranked in full above, or in more learnings than the budget.
                    continue;
                }
                let n = match rows {
                    Some(n) if phrase.len() == 1 => *n,
                    _ => self.count(WORDS_COUNT_SQL, &fts)?,
                };
                if n <= self.budget {
                    rare.push((n, fts));
                }
            }
            rare.sort();
            let mut held = 0;
            let mut fill: Vec<String> = Vec::new();
            for (n, fts) in rare {
                if held + n > self.budget {
                    break;
                }
                held += n;
                fill.push(fts);
            }
            if !fill.is_empty() {
                hits.extend(self.ranked(WORDS_SQL, &fill.join(" OR "), 0, depth, filter)?);
            }
        }
        if !hits.full() {
            hits.extend(self.ranked(WORDS_SQL, &any, floor, depth, filter)?);
        }
        Ok(hits.rows)
    }

    /// Leaves out of `query` the words held by half the rows or more, unless nothing
    /// else would be left: bm25 gives such a word no weight (FTS5 floors its idf just
    /// above zero), so it only adds rows to rank and a long doclist to read. Phrases of
    /// several words stay, since a phrase can be rare when its words are not. Each
    /// phrase is weighed with the most rows it can match: those of its rarest word.
    fn weigh(&self, query: WordsQuery) -> Result<Weighed> {
        let mut words: Vec<String> = query.phrases.iter().flatten().cloned().collect();
        words.sort();
        words.dedup();
        let stems = self.stems(&words)?;
        let mut rows_of: HashMap<String, usize> = HashMap::new();
        {
            let mut q = self
                .conn
                .prepare_cached("SELECT rows FROM terms WHERE term = ?1")
                .map_err(db(&self.path))?;
            for (word, stem) in words.iter().zip(&stems) {
                if let Some(stem) = stem {
                    let n: Option<i64> = q
                        .query_row([stem], |r| r.get(0))
                        .optional()
                        .map_err(db(&self.path))?;
                    rows_of.insert(word.clone(), usize::try_from(n.unwrap_or(0)).unwrap_or(0));
                }
            }
        }
        let total = self.meta_number("rows")?;
        let weightless = |p: &Vec<String>| {
            p.len() == 1 && rows_of.get(p[0].as_str()).is_some_and(|n| 2 * n >= total)
        };
        let mut kept = query.clone();
        kept.phrases.retain(|p| !weightless(p));
        kept.chunks.retain(|p| !weightless(p));
        if kept.phrases.is_empty() {
            kept = query;
        }
        let rows = kept
            .phrases
            .iter()
            .map(|p| {
                p.iter()
                    .filter_map(|w| rows_of.get(w.as_str()).copied())
                    .min()
            })
            .collect();
        Ok(Weighed { words: kept, rows })
    }

    /// Each word as the words table stems it (`retries` → `retri`); None for a word
    /// that is not exactly one token there.
    fn stems(&self, words: &[String]) -> Result<Vec<Option<String>>> {
        let mut out: Vec<Option<String>> = vec![None; words.len()];
        if words.is_empty() {
            return Ok(out);
        }
        self.conn
            .execute_batch("SAVEPOINT stems")
            .map_err(db(&self.path))?;
        let read = (|| -> rusqlite::Result<()> {
            let mut put = self
                .conn
                .prepare_cached("INSERT INTO temp.stems(rowid, word) VALUES(?1, ?2)")?;
            for (n, word) in words.iter().enumerate() {
                put.execute(params![n as i64, word])?;
            }
            let mut q = self
                .conn
                .prepare_cached("SELECT doc, term FROM temp.stem_vocabulary")?;
            let mut tokens = vec![0usize; words.len()];
            let rows = q.query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))?;
            for row in rows {
                let (doc, term) = row?;
                if let Some(n) = usize::try_from(doc).ok().filter(|n| *n < words.len()) {
                    tokens[n] += 1;
                    out[n] = Some(term);
                }
            }
            for (slot, n) in out.iter_mut().zip(tokens) {
                if n != 1 {
                    *slot = None;
                }
            }
            Ok(())
        })();
        let undone = self.conn.execute_batch("ROLLBACK TO stems; RELEASE stems");
        read.map_err(db(&self.path))?;
        undone.map_err(db(&self.path))?;
        Ok(out)
    }

    /// The trigram table's best `depth`: bm25 over every match when they fit the budget,
    /// else the newest matches.
    ///
    /// A trigram phrase is costly to match (a path of thirty characters is twenty-eight
    /// trigrams, some in every learning), and FTS5's bm25 would match it twice more:
    /// once to count the rows holding it, once to rank. So the phrase is matched once,
    /// the matches' text is read from `docs`, and the same bm25 (the same weights,
    /// k1 = 1.2, b = 0.75, idf floored just above zero) is computed here from where each
    /// substring occurs; a test holds it to FTS5's order.
    fn grams(
        &self,
        chunks: &[String],
        depth: usize,
        filter: &SearchFilter,
    ) -> Result<Vec<(i64, Hit)>> {
        if chunks.is_empty() {
            return Ok(Vec::new());
        }
        let fts = grams_fts(chunks);
        let limit = i64::try_from(self.budget.saturating_add(1)).unwrap_or(i64::MAX);
        let rowids: Vec<i64> = {
            let mut q = self
                .conn
                .prepare_cached(GRAMS_MATCHES_SQL)
                .map_err(db(&self.path))?;
            q.query_map(params![fts, limit], |r| r.get(0))
                .map_err(db(&self.path))?
                .collect::<rusqlite::Result<_>>()
                .map_err(db(&self.path))?
        };
        if rowids.len() > self.budget {
            return self.ranked(GRAMS_NEWEST_SQL, &fts, 0, depth, filter);
        }
        let mut q = self
            .conn
            .prepare_cached(
                "SELECT id, version, title, kind, status, paths, body FROM docs WHERE rowid = ?1",
            )
            .map_err(db(&self.path))?;
        let mut rows = Vec::with_capacity(rowids.len());
        for rowid in rowids {
            let row = q
                .query_row([rowid], |r| {
                    Ok(Matched {
                        rowid,
                        id: r.get(0)?,
                        version: r.get(1)?,
                        title: r.get(2)?,
                        kind: r.get(3)?,
                        status: r.get(4)?,
                        paths: r.get(5)?,
                        body: r.get(6)?,
                    })
                })
                .optional()
                .map_err(db(&self.path))?;
            rows.extend(row);
        }
        let total = self.meta_number("rows")?.max(1) as f64;
        let avgdl = (self.meta_number("gram_tokens")? as f64 / total).max(1.0);
        let needles: Vec<String> = chunks.iter().map(|c| c.to_lowercase()).collect();
        let texts: Vec<[String; 3]> = rows
            .iter()
            .map(|m| {
                [
                    m.title.to_lowercase(),
                    m.body.to_lowercase(),
                    m.paths.to_lowercase(),
                ]
            })
            .collect();
        let idf: Vec<f64> = needles
            .iter()
            .map(|n| {
                let hit = texts
                    .iter()
                    .filter(|t| t.iter().any(|c| c.contains(n.as_str())))
                    .count() as f64;
                let idf = ((total - hit + 0.5) / (hit + 0.5)).ln();
                if idf <= 0.0 { 1e-6 } else { idf }
            })
            .collect();
        let (k1, b) = (1.2, 0.75);
        let mut scored: Vec<(f64, i64, Hit)> = Vec::new();
        for (m, text) in rows.into_iter().zip(&texts) {
            let length: usize = text
                .iter()
                .map(|c| c.chars().count().saturating_sub(2))
                .sum();
            let mut score = 0.0;
            for (needle, idf) in needles.iter().zip(&idf) {
                let f: f64 = [10.0, 1.0, 3.0]
                    .iter()
                    .zip(text)
                    .map(|(w, c)| w * occurrences(c, needle) as f64)
                    .sum();
                score += idf * f * (k1 + 1.0) / (f + k1 * (1.0 - b + b * length as f64 / avgdl));
            }
            let rowid = m.rowid;
            if let Some(hit) = m.hit(filter) {
                scored.push((score, rowid, hit));
            }
        }
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        scored.truncate(depth);
        Ok(scored
            .into_iter()
            .map(|(_, rowid, hit)| (rowid, hit))
            .collect())
    }

    /// FTS5's bm25 ranking of the trigram matches, for holding [`Search::grams`] to it.
    #[cfg(test)]
    pub(super) fn grams_by_fts5(&self, chunks: &[String], depth: usize) -> Result<Vec<LearningId>> {
        let found = self.ranked(
            GRAMS_SQL,
            &grams_fts(chunks),
            0,
            depth,
            &SearchFilter::default(),
        )?;
        Ok(found.into_iter().map(|(_, h)| h.id).collect())
    }

    /// [`Search::grams`]' ids, for the same.
    #[cfg(test)]
    pub(super) fn grams_ids(&self, chunks: &[String], depth: usize) -> Result<Vec<LearningId>> {
        let found = self.grams(chunks, depth, &SearchFilter::default())?;
        Ok(found.into_iter().map(|(_, h)| h.id).collect())
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

    /// How many learnings match `fts_query`, counted up to one past the budget (which
    /// says "more than it"). Reads rowids only, in the order FTS5 keeps them.
    fn count(&self, sql: &str, fts_query: &str) -> Result<usize> {
        if fts_query.is_empty() {
            return Ok(0);
        }
        let limit = i64::try_from(self.budget.saturating_add(1)).unwrap_or(i64::MAX);
        let mut q = self.conn.prepare_cached(sql).map_err(db(&self.path))?;
        let n: i64 = q
            .query_row(params![fts_query, limit], |r| r.get(0))
            .map_err(db(&self.path))?;
        Ok(usize::try_from(n).unwrap_or(usize::MAX))
    }

    /// The rowid above which the newest `budget` matches of `fts_query` lie, or None when
    /// there are no more matches than that. Reads rowids only, newest first, and stops at
    /// the budget: no match is ranked.
    fn floor(&self, sql: &str, fts_query: &str) -> Result<Option<i64>> {
        if fts_query.is_empty() {
            return Ok(None);
        }
        let budget = i64::try_from(self.budget).unwrap_or(i64::MAX);
        let mut q = self.conn.prepare_cached(sql).map_err(db(&self.path))?;
        q.query_row(params![fts_query, budget], |r| r.get(0))
            .optional()
            .map_err(db(&self.path))
    }

    /// The first `depth` rows of `sql` (one of the `*_SQL` statements) whose rowid is
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

/// Ranked by bm25: a title match counts ten times a body match, paths three times. FTS5
/// takes the rowid bound itself, so a narrowed query ranks only the rows above it.
const WORDS_SQL: &str = "SELECT d.rowid, d.id, d.version, d.title, d.kind, d.status
  FROM words JOIN docs d ON d.rowid = words.rowid
  WHERE words MATCH ?1 AND words.rowid > ?5 AND (?2 OR d.status = 'accepted')
    AND (?3 = '' OR instr(',' || ?3 || ',', ',' || d.kind || ',') > 0)
  ORDER BY bm25(words, 10.0, 1.0, 3.0, 1.0) LIMIT ?4";

/// FTS5's own ranking of a trigram query, which [`Search::grams`] computes itself.
#[cfg(test)]
const GRAMS_SQL: &str = "SELECT d.rowid, d.id, d.version, d.title, d.kind, d.status
  FROM grams JOIN docs d ON d.rowid = grams.rowid
  WHERE grams MATCH ?1 AND grams.rowid > ?5 AND (?2 OR d.status = 'accepted')
    AND (?3 = '' OR instr(',' || ?3 || ',', ',' || d.kind || ',') > 0)
  ORDER BY bm25(grams, 10.0, 1.0, 3.0) LIMIT ?4";

/// A trigram query's newest matches, unranked: FTS5 walks the rows newest first and stops
/// at the limit.
const GRAMS_NEWEST_SQL: &str = "SELECT d.rowid, d.id, d.version, d.title, d.kind, d.status
  FROM grams JOIN docs d ON d.rowid = grams.rowid
  WHERE grams MATCH ?1 AND grams.rowid > ?5 AND (?2 OR d.status = 'accepted')
    AND (?3 = '' OR instr(',' || ?3 || ',', ',' || d.kind || ',') > 0)
  ORDER BY grams.rowid DESC LIMIT ?4";

const WORDS_FLOOR_SQL: &str =
    "SELECT rowid FROM words WHERE words MATCH ?1 ORDER BY rowid DESC LIMIT 1 OFFSET ?2";

/// The rowids of a trigram query's matches, in rowid order, up to a limit: the one time
/// the phrase is matched when the matches fit the budget.
const GRAMS_MATCHES_SQL: &str = "SELECT rowid FROM grams WHERE grams MATCH ?1 LIMIT ?2";

const WORDS_COUNT_SQL: &str =
    "SELECT count(*) FROM (SELECT 1 FROM words WHERE words MATCH ?1 LIMIT ?2)";

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

/// A trigram match with its text.
struct Matched {
    rowid: i64,
    id: String,
    version: u32,
    title: String,
    kind: String,
    status: String,
    paths: String,
    body: String,
}

impl Matched {
    /// The hit, when the filter lets it through.
    fn hit(self, filter: &SearchFilter) -> Option<Hit> {
        let allowed = (filter.all || self.status == "accepted")
            && (filter.kinds.is_empty() || filter.kinds.iter().any(|k| k.as_str() == self.kind));
        if !allowed {
            return None;
        }
        hit(&self.id, self.version, self.title, &self.kind, &self.status)
    }
}

/// How many times `needle` occurs in `text`, overlaps included (as a trigram phrase
/// matches at every position it starts).
fn occurrences(text: &str, needle: &str) -> usize {
    let mut n = 0;
    let mut from = 0;
    while let Some(at) = text[from..].find(needle) {
        n += 1;
        let start = from + at;
        from = start + text[start..].chars().next().map_or(1, char::len_utf8);
    }
    n
}

/// Ranked lists appended in turn, each learning once, up to a depth.
struct Fill {
    rows: Vec<(i64, Hit)>,
    seen: HashSet<i64>,
    depth: usize,
}

impl Fill {
    fn new(depth: usize) -> Fill {
        Fill {
            rows: Vec::new(),
            seen: HashSet::new(),
            depth,
        }
    }

    fn full(&self) -> bool {
        self.rows.len() >= self.depth
    }

    fn extend(&mut self, list: Vec<(i64, Hit)>) {
        for (rowid, hit) in list {
            if self.full() {
                break;
            }
            if self.seen.insert(rowid) {
                self.rows.push((rowid, hit));
            }
        }
    }
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

/// The words table's query for what a person typed, as lowercase words: every phrase
/// and word once (the whole text as one phrase when it has more than one chunk and at
/// most [`MAX_PHRASE`] words, so a learning with the words in that order ranks first;
/// each identifier-like chunk such as `parse_config` as a phrase of its words; then each
/// word), and each chunk once.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct WordsQuery {
    pub(super) phrases: Vec<Vec<String>>,
    pub(super) chunks: Vec<Vec<String>>,
}

impl WordsQuery {
    /// Any phrase or word: the query bm25 ranks.
    pub(super) fn any(&self) -> String {
        self.phrases
            .iter()
            .map(|p| quote(p))
            .collect::<Vec<_>>()
            .join(" OR ")
    }

    /// Every chunk, when that asks for more than one word.
    pub(super) fn every(&self) -> Option<String> {
        let more = self.chunks.len() > 1 || self.chunks.first().is_some_and(|c| c.len() > 1);
        more.then(|| {
            self.chunks
                .iter()
                .map(|c| quote(c))
                .collect::<Vec<_>>()
                .join(" AND ")
        })
    }
}

/// A words query without its weightless words, and the most rows each phrase can match
/// (None: not known).
struct Weighed {
    words: WordsQuery,
    rows: Vec<Option<usize>>,
}

/// A phrase as FTS5 reads it. Only letters and digits reach FTS5, inside double quotes:
/// no input can be read as FTS5 syntax.
fn quote(words: &[String]) -> String {
    format!("\"{}\"", words.join(" "))
}

/// Splits what a person typed into chunks of lowercase words, up to [`MAX_WORDS`] words.
pub(super) fn words_query(query: &str) -> WordsQuery {
    let mut chunks: Vec<Vec<String>> = Vec::new();
    let mut count = 0;
    for chunk in query.split_whitespace() {
        if count >= MAX_WORDS {
            break;
        }
        let words: Vec<String> = chunk
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .take(MAX_WORDS - count)
            .collect();
        count += words.len();
        if !words.is_empty() {
            chunks.push(words);
        }
    }
    let push = |list: &mut Vec<Vec<String>>, phrase: Vec<String>| {
        if !list.contains(&phrase) {
            list.push(phrase);
        }
    };
    let mut q = WordsQuery::default();
    let all = chunks.concat();
    if chunks.len() > 1 && all.len() <= MAX_PHRASE {
        push(&mut q.phrases, all);
    }
    for words in &chunks {
        if words.len() > 1 {
            push(&mut q.phrases, words.clone());
        }
        push(&mut q.chunks, words.clone());
        for w in words {
            push(&mut q.phrases, vec![w.clone()]);
        }
    }
    q
}

/// The trigram table's substrings for a query: each chunk that looks like an
/// identifier, a path or a code (it holds a digit, punctuation, or a capital after its
/// first letter), or the one chunk of a one-chunk query, of three characters or more.
/// Plain words, and the text as a whole, are left to the words table, where stemming,
/// phrases and bm25 serve them better.
pub(super) fn grams_query(query: &str) -> Vec<String> {
    let chunks: Vec<&str> = query.split_whitespace().collect();
    let mut parts: Vec<String> = Vec::new();
    for chunk in &chunks {
        let looks_coded = chunk.chars().any(|c| !c.is_alphabetic())
            || chunk.chars().skip(1).any(char::is_uppercase);
        if chunk.chars().count() >= 3
            && (looks_coded || chunks.len() == 1)
            && !parts.iter().any(|p| p == chunk)
        {
            parts.push(chunk.to_string());
        }
    }
    parts
}

/// The substrings as FTS5 reads them: each quoted with `"` doubled, which FTS5 reads as
/// a literal, OR'd.
pub(super) fn grams_fts(chunks: &[String]) -> String {
    chunks
        .iter()
        .map(|c| format!("\"{}\"", c.replace('"', "\"\"")))
        .collect::<Vec<_>>()
        .join(" OR ")
}
