//! The words table's side of a search: what a person typed as FTS5 phrases, the
//! words that weigh nothing left out, and a query past the ranking budget narrowed.

use std::collections::{HashMap, HashSet};

use rusqlite::{OptionalExtension, params};

use super::{Hit, Search, SearchFilter, db};
use crate::library::Result;

/// The words of a query that reach the words table; a longer text (an item's summary)
/// is cut there, since more words match more of the store and add little.
const MAX_WORDS: usize = 32;

/// The most words the whole text is asked for as one phrase: a longer text (an item's
/// title and summary) is never written word for word in a learning, and the phrase
/// costs a walk through the doclists of all its words.
const MAX_PHRASE: usize = 12;

impl Search {
    /// The words table's best `depth`: bm25 over every match when they fit the budget.
    /// Else, each list ranked on its own and appended while there is room: the
    /// learnings holding every chunk of the query (the newest `budget` of them); those
    /// holding one of its rarer phrases or words (in at most `budget` learnings each,
    /// rarest first, as many as the budget holds); the newest `budget` matches of any
    /// word.
    pub(super) fn words(
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
        // A word's count is exact, so one word held by more rows than the budget settles
        // that the query is narrowed; the walk that finds where its newest matches begin
        // is then left for the last list, which the first two often make needless.
        let surely = query
            .words
            .phrases
            .iter()
            .zip(&query.rows)
            .any(|(p, n)| p.len() == 1 && n.is_some_and(|n| n > self.budget));
        let mut floor = None;
        if !surely {
            floor = match held {
                Some(n) if n <= self.budget => None,
                _ => self.floor(WORDS_FLOOR_SQL, &any)?,
            };
            if floor.is_none() {
                return self.ranked(WORDS_SQL, &any, 0, depth, filter);
            }
        }
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
            let floor = match floor {
                Some(floor) => floor,
                None => self.floor(WORDS_FLOOR_SQL, &any)?.unwrap_or(0),
            };
            hits.extend(self.ranked(WORDS_SQL, &any, floor, depth, filter)?);
        }
        Ok(hits.rows)
    }

    /// Leaves out of `query` the words held by half the rows or more, unless nothing
    /// else would be left: bm25 gives such a word no weight (FTS5 floors its idf just
    /// above zero), so it only adds rows to rank and a long doclist to read. Phrases of
    /// several words stay, since a phrase can be rare when its words are not. Each
    /// phrase is weighed with the most rows it can match: those of its rarest word.
    pub(super) fn weigh(&self, query: WordsQuery) -> Result<Weighed> {
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
}

/// Ranked by bm25: a title match counts ten times a body match, paths three times. FTS5
/// takes the rowid bound itself, so a narrowed query ranks only the rows above it.
const WORDS_SQL: &str = "SELECT d.rowid, d.id, d.version, d.title, d.kind, d.status
  FROM words JOIN docs d ON d.rowid = words.rowid
  WHERE words MATCH ?1 AND words.rowid > ?5 AND (?2 OR d.status = 'accepted')
    AND (?3 = '' OR instr(',' || ?3 || ',', ',' || d.kind || ',') > 0)
  ORDER BY bm25(words, 10.0, 1.0, 3.0, 1.0) LIMIT ?4";

const WORDS_FLOOR_SQL: &str =
    "SELECT rowid FROM words WHERE words MATCH ?1 ORDER BY rowid DESC LIMIT 1 OFFSET ?2";

const WORDS_COUNT_SQL: &str =
    "SELECT count(*) FROM (SELECT 1 FROM words WHERE words MATCH ?1 LIMIT ?2)";

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

/// The words table's query for what a person typed, as lowercase words: every phrase
/// and word once (the whole text as one phrase when it has more than one chunk and at
/// most [`MAX_PHRASE`] words, so a learning with the words in that order ranks first;
/// each identifier-like chunk such as `parse_config` as a phrase of its words; then each
/// word), and each chunk once.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(in crate::library) struct WordsQuery {
    pub(in crate::library) phrases: Vec<Vec<String>>,
    pub(in crate::library) chunks: Vec<Vec<String>>,
}

impl WordsQuery {
    /// Any phrase or word: the query bm25 ranks.
    pub(in crate::library) fn any(&self) -> String {
        self.phrases
            .iter()
            .map(|p| quote(p))
            .collect::<Vec<_>>()
            .join(" OR ")
    }

    /// Every chunk, when that asks for more than one word.
    pub(in crate::library) fn every(&self) -> Option<String> {
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
pub(super) struct Weighed {
    words: WordsQuery,
    rows: Vec<Option<usize>>,
}

/// A phrase as FTS5 reads it. Only letters and digits reach FTS5, inside double quotes:
/// no input can be read as FTS5 syntax.
fn quote(words: &[String]) -> String {
    format!("\"{}\"", words.join(" "))
}

/// Splits what a person typed into chunks of lowercase words, up to [`MAX_WORDS`] words.
pub(in crate::library) fn words_query(query: &str) -> WordsQuery {
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
