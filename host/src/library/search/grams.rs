//! The trigram table's side of a search: identifiers, paths and codes as substrings,
//! ranked here by the same bm25 FTS5 would give them.

use rusqlite::params;

use super::{Hit, Search, SearchFilter, db, hit};
#[cfg(test)]
use crate::item::LearningId;
use crate::library::Result;

impl Search {
    /// The trigram table's best `depth`: bm25 over every match when they fit the budget,
    /// else the newest matches.
    ///
    /// A trigram phrase is costly to match (a path of thirty characters is twenty-eight
    /// trigrams, some in every learning), and FTS5's bm25 would match it twice more:
    /// once to count the rows holding it, once to rank. So the phrase is matched once,
    /// the matches' text is read from `docs`, and the same bm25 (the same weights,
    /// k1 = 1.2, b = 0.75, idf floored just above zero) is computed here from where each
    /// substring occurs; a test holds it to FTS5's order.
    ///
    /// Matching the phrase is itself the dearest part for a path or an identifier
    /// (FTS5 walks each trigram's doclist), so the rows holding the chunk's seams (see
    /// [`seams`]) are asked for first; when they fit the budget, the text read for
    /// ranking tells which of them hold the chunk, and the phrase is not matched at all.
    pub(super) fn grams(
        &self,
        chunks: &[String],
        depth: usize,
        filter: &SearchFilter,
    ) -> Result<Vec<(i64, Hit)>> {
        if chunks.is_empty() {
            return Ok(Vec::new());
        }
        let fts = grams_fts(chunks);
        // The seams first: when they find no more rows than the budget, those rows hold
        // every match, and the text read for ranking tells which are.
        let mut rowids = None;
        if let Some(seams) = seams_fts(chunks) {
            let found = self.matches(&seams)?;
            if found.len() <= self.budget {
                rowids = Some(found);
            }
        }
        let verify = rowids.is_some();
        let rowids = match rowids {
            Some(rowids) => rowids,
            None => {
                let found = self.matches(&fts)?;
                if found.len() > self.budget {
                    return self.ranked(GRAMS_NEWEST_SQL, &fts, 0, depth, filter);
                }
                found
            }
        };
        // One statement for every match: a statement run per row cost several times
        // what reading the row does.
        let list = rowids
            .iter()
            .map(i64::to_string)
            .collect::<Vec<_>>()
            .join(",");
        let rows: Vec<Matched> = {
            let mut q = self
                .conn
                .prepare_cached(GRAMS_TEXT_SQL)
                .map_err(db(&self.path))?;
            q.query_map([format!("[{list}]")], |r| {
                Ok(Matched {
                    rowid: r.get(0)?,
                    id: r.get(1)?,
                    version: r.get(2)?,
                    title: r.get(3)?,
                    kind: r.get(4)?,
                    status: r.get(5)?,
                    paths: r.get(6)?,
                    body: r.get(7)?,
                })
            })
            .map_err(db(&self.path))?
            .collect::<rusqlite::Result<_>>()
            .map_err(db(&self.path))?
        };
        let total = self.meta_number("rows")?.max(1) as f64;
        let avgdl = (self.meta_number("gram_tokens")? as f64 / total).max(1.0);
        let needles: Vec<String> = chunks.iter().map(|c| c.to_lowercase()).collect();
        // Each match's text, and each substring's weighted count in it, found once: the
        // counts give both the rows holding a substring (its idf) and its frequency.
        let mut found: Vec<(Matched, [String; 3], Vec<f64>)> = rows
            .into_iter()
            .map(|m| {
                let text = [
                    m.title.to_lowercase(),
                    m.body.to_lowercase(),
                    m.paths.to_lowercase(),
                ];
                let freq = needles
                    .iter()
                    .map(|needle| {
                        [10.0, 1.0, 3.0]
                            .iter()
                            .zip(&text)
                            .map(|(w, c)| w * occurrences(c, needle) as f64)
                            .sum()
                    })
                    .collect();
                (m, text, freq)
            })
            .collect();
        if verify {
            found.retain(|(_, _, freq)| freq.iter().any(|f| *f > 0.0));
        }
        let idf: Vec<f64> = (0..needles.len())
            .map(|n| {
                let hit = found.iter().filter(|(_, _, f)| f[n] > 0.0).count() as f64;
                let idf = ((total - hit + 0.5) / (hit + 0.5)).ln();
                if idf <= 0.0 { 1e-6 } else { idf }
            })
            .collect();
        let (k1, b) = (1.2, 0.75);
        let mut scored: Vec<(f64, i64, Hit)> = Vec::new();
        for (m, text, freq) in found {
            let length: usize = text
                .iter()
                .map(|c| c.chars().count().saturating_sub(2))
                .sum();
            let mut score = 0.0;
            for (f, idf) in freq.into_iter().zip(&idf) {
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
    pub(in crate::library) fn grams_by_fts5(
        &self,
        chunks: &[String],
        depth: usize,
    ) -> Result<Vec<LearningId>> {
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
    pub(in crate::library) fn grams_ids(
        &self,
        chunks: &[String],
        depth: usize,
    ) -> Result<Vec<LearningId>> {
        let found = self.grams(chunks, depth, &SearchFilter::default())?;
        Ok(found.into_iter().map(|(_, h)| h.id).collect())
    }

    /// The rowids of a trigram query's matches, in rowid order, up to one past the
    /// budget (which says "more than it").
    fn matches(&self, fts_query: &str) -> Result<Vec<i64>> {
        let limit = i64::try_from(self.budget.saturating_add(1)).unwrap_or(i64::MAX);
        let mut q = self
            .conn
            .prepare_cached(GRAMS_MATCHES_SQL)
            .map_err(db(&self.path))?;
        q.query_map(params![fts_query, limit], |r| r.get(0))
            .map_err(db(&self.path))?
            .collect::<rusqlite::Result<_>>()
            .map_err(db(&self.path))
    }
}

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

/// The rowids of a trigram query's matches, in rowid order, up to a limit: the one time
/// the phrase is matched when the matches fit the budget.
const GRAMS_MATCHES_SQL: &str = "SELECT rowid FROM grams WHERE grams MATCH ?1 LIMIT ?2";

/// The text of the trigram matches, their rowids given as a JSON array.
const GRAMS_TEXT_SQL: &str = "SELECT rowid, id, version, title, kind, status, paths, body
  FROM docs WHERE rowid IN (SELECT value FROM json_each(?1))";

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

/// The trigram table's substrings for a query: each chunk that looks like an
/// identifier, a path or a code (it holds a digit, punctuation, or a capital after its
/// first letter), or the one chunk of a one-chunk query, of three characters or more.
/// Plain words, and the text as a whole, are left to the words table, where stemming,
/// phrases and bm25 serve them better.
pub(in crate::library) fn grams_query(query: &str) -> Vec<String> {
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
pub(in crate::library) fn grams_fts(chunks: &[String]) -> String {
    chunks
        .iter()
        .map(|c| format!("\"{}\"", c.replace('"', "\"\"")))
        .collect::<Vec<_>>()
        .join(" OR ")
}

/// Where the words of an identifier or a path meet: each run of punctuation with up to
/// two characters either side (`tu::qu` in `Ditu::quilinhan`, `in/ze` in a path). A
/// trigram phrase costs FTS5 a walk through the doclist of each of its trigrams, and
/// a long path's are many, some held by nearly every learning (`src`, `.rs`); its seams
/// are fewer trigrams and rarely common. Every row holding the chunk holds its seams.
/// None when there is nothing to gain: no seam, seams with as many trigrams as the
/// chunk, or a chunk beyond ASCII (whose case the text read back might fold otherwise
/// than FTS5 does).
pub(in crate::library) fn seams(chunk: &str) -> Option<Vec<String>> {
    if !chunk.is_ascii() {
        return None;
    }
    let bytes = chunk.as_bytes();
    let mut seams: Vec<String> = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at].is_ascii_alphanumeric() {
            at += 1;
            continue;
        }
        let start = at;
        while at < bytes.len() && !bytes[at].is_ascii_alphanumeric() {
            at += 1;
        }
        if start == 0 || at == bytes.len() {
            continue;
        }
        // ASCII throughout, so these are character boundaries.
        let seam = &chunk[start.saturating_sub(2)..(at + 2).min(bytes.len())];
        if !seams.iter().any(|s| s == seam) {
            seams.push(seam.to_string());
        }
    }
    let trigrams = |s: &str| s.len().saturating_sub(2);
    let fewer = seams.iter().map(|s| trigrams(s)).sum::<usize>() < trigrams(chunk);
    (!seams.is_empty() && fewer).then_some(seams)
}

/// The query of the rows holding every seam of a chunk, or the chunk itself where it
/// has none worth asking; None when no chunk has (it would be the query itself).
fn seams_fts(chunks: &[String]) -> Option<String> {
    let quoted = |s: &str| format!("\"{}\"", s.replace('"', "\"\""));
    let mut any = false;
    let parts: Vec<String> = chunks
        .iter()
        .map(|c| match seams(c) {
            Some(seams) => {
                any = true;
                let all: Vec<String> = seams.iter().map(|s| quoted(s)).collect();
                format!("({})", all.join(" AND "))
            }
            None => quoted(c),
        })
        .collect();
    any.then(|| parts.join(" OR "))
}
