//! The briefing a review receives: learnings scoped to the changed paths first (the
//! most specific scope first), then what a search of the rest found, fitted under a
//! token cap.
//!
//! Tokens are estimated as a quarter of the characters, rounded up: close enough for
//! English and code under the tokenizers Claude uses, and cheap. The cap is never
//! exceeded by that estimate; a line that doesn't fit is left out and the next one tried.
//!
//! Path globs speak the language of a part's paths (`rooms/sdk/src/rules/plan.rs`): `*`
//! and `?` stay within one segment, `**` spans whole segments, and a glob without
//! wildcards (or ending in `/`) covers everything below it.

use std::collections::{HashMap, HashSet};

use schemars::JsonSchema;
use serde::Serialize;

use rusqlite::{OptionalExtension, params};

use super::learning::Learning;
use super::search::{Search, SearchFilter, db};
use super::{Library, Result};
use crate::item::{LearningId, LearningKind};

/// What a briefing needs of a learning in force.
#[derive(Clone, Debug, PartialEq)]
pub struct Card {
    pub id: LearningId,
    pub kind: LearningKind,
    pub title: String,
    pub paths: Vec<String>,
    pub body: String,
}

impl From<&Learning> for Card {
    fn from(l: &Learning) -> Card {
        Card {
            id: l.id(),
            kind: l.meta.kind,
            title: l.meta.title.clone(),
            paths: l.meta.paths.clone(),
            body: l.body.clone(),
        }
    }
}

/// Why a learning is in a briefing.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// One of its globs matches a changed path.
    Path { glob: String },
    /// The search for the query found it.
    Search { query: String },
}

impl Scope {
    /// The words a briefing line gives for it: `scoped to web/**`, `matched "parse_config"`.
    pub fn why(&self) -> String {
        match self {
            Scope::Path { glob } => format!("scoped to {glob}"),
            Scope::Search { query } => format!("matched \"{query}\""),
        }
    }
}

/// One learning in a briefing.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct BriefLine {
    pub id: LearningId,
    pub kind: LearningKind,
    pub title: String,
    pub scope: Scope,
    /// The line as the review reads it, ending in a newline.
    pub text: String,
    /// Its estimated tokens ([`estimate_tokens`]).
    pub tokens: usize,
}

/// What fits under the cap, and what didn't.
#[derive(Clone, Debug, Default, PartialEq, Serialize, JsonSchema)]
pub struct Briefing {
    pub lines: Vec<BriefLine>,
    /// The estimated tokens of all lines together: never more than `cap`.
    pub tokens: usize,
    pub cap: usize,
    /// Candidates that did not fit, in the order they were considered.
    pub left_out: Vec<LearningId>,
}

impl Briefing {
    /// The lines as one text.
    pub fn text(&self) -> String {
        self.lines.iter().map(|l| l.text.as_str()).collect()
    }
}

/// A quarter of the characters, rounded up.
pub fn estimate_tokens(text: &str) -> usize {
    text.chars().count().div_ceil(4)
}

/// Builds a briefing from learnings in force that may be scoped to the changed paths
/// (`scoped`: any that don't match are left out), the changed paths, what the search
/// for `query` found (`found`, best first) and the cap. Pure: the same input gives the
/// same lines.
pub fn brief(
    scoped: &[Card],
    changed: &[String],
    query: &str,
    found: &[Card],
    cap: usize,
) -> Briefing {
    let plan = plan(scoped, changed, query, found, cap);
    plan.write(|from| match from {
        Origin::Scoped(i) => &scoped[i].body,
        Origin::Found(i) => &found[i].body,
    })
}

/// What fitting a learning into a briefing needs of it: everything but its body's text,
/// of which only the length on one line counts until the line is known to fit.
trait Candidate {
    /// Its card; the body may be left unread (empty) until the line is known to fit.
    fn card(&self) -> &Card;
    /// The characters of the body on one line (whitespace runs as one space).
    fn summary_chars(&self) -> usize;
}

impl Candidate for Card {
    fn card(&self) -> &Card {
        self
    }
    fn summary_chars(&self) -> usize {
        summary_chars(&self.body)
    }
}

/// Which input list a line comes from, and where in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Origin {
    Scoped(usize),
    Found(usize),
}

/// A line decided but not yet written: all of it but the body.
struct Planned {
    from: Origin,
    id: LearningId,
    kind: LearningKind,
    title: String,
    scope: Scope,
    tokens: usize,
}

/// A briefing decided but not yet written.
struct Plan {
    lines: Vec<Planned>,
    tokens: usize,
    cap: usize,
    left_out: Vec<LearningId>,
}

/// A learning that may take a line, in the order lines are tried.
struct Try<'a, C> {
    from: Origin,
    learning: &'a C,
    /// The glob it is scoped by; None for a search hit.
    glob: Option<&'a str>,
    specificity: (usize, usize),
}

impl Plan {
    /// The briefing, given each line's body.
    fn write<'a>(self, body: impl Fn(Origin) -> &'a str) -> Briefing {
        let lines = self
            .lines
            .into_iter()
            .map(|l| {
                let Planned {
                    from,
                    id,
                    kind,
                    title,
                    scope,
                    tokens,
                } = l;
                let summary = body(from).split_whitespace().collect::<Vec<_>>().join(" ");
                let text = format!("- {id} [{kind}] {title} ({}): {summary}\n", scope.why());
                debug_assert_eq!(estimate_tokens(&text), tokens, "line_chars counts the line");
                BriefLine {
                    id,
                    kind,
                    title,
                    scope,
                    text,
                    tokens,
                }
            })
            .collect();
        Briefing {
            lines,
            tokens: self.tokens,
            cap: self.cap,
            left_out: self.left_out,
        }
    }
}

/// Decides a briefing's lines. Thousands of learnings can be scoped to a wide diff while
/// a few dozen lines fit, so each glob is tried only against the changed paths under its
/// literal prefix, and a line's tokens are counted from the lengths of its parts.
fn plan<C: Candidate>(
    scoped: &[C],
    changed: &[String],
    query: &str,
    found: &[C],
    cap: usize,
) -> Plan {
    let under = Under::new(changed);
    let mut placed: HashSet<LearningId> = HashSet::new();
    let mut candidates: Vec<Try<'_, C>> = Vec::new();
    for (i, l) in scoped.iter().enumerate() {
        let card = l.card();
        if placed.contains(&card.id) {
            continue;
        }
        let best = card
            .paths
            .iter()
            .filter(|g| under.matches(g))
            .max_by_key(|g| specificity(g));
        if let Some(glob) = best {
            placed.insert(card.id);
            candidates.push(Try {
                from: Origin::Scoped(i),
                learning: l,
                glob: Some(glob),
                specificity: specificity(glob),
            });
        }
    }
    // More specific first; ids break ties so the order is stable.
    candidates.sort_by(|a, b| {
        (b.specificity)
            .cmp(&a.specificity)
            .then(a.learning.card().id.cmp(&b.learning.card().id))
    });
    let shown: String = clip(query.split_whitespace().collect::<Vec<_>>().join(" "), 60);
    for (i, l) in found.iter().enumerate() {
        if placed.insert(l.card().id) {
            candidates.push(Try {
                from: Origin::Found(i),
                learning: l,
                glob: None,
                specificity: (0, 0),
            });
        }
    }
    let search = Scope::Search { query: shown };
    let search_why = search.why().chars().count();
    let path_why = Scope::Path {
        glob: String::new(),
    }
    .why()
    .chars()
    .count();
    let mut out = Plan {
        lines: Vec::new(),
        tokens: 0,
        cap,
        left_out: Vec::new(),
    };
    for Try {
        from,
        learning: l,
        glob,
        ..
    } in candidates
    {
        let why = glob.map_or(search_why, |g| path_why + g.chars().count());
        let tokens = line_chars(l, why).div_ceil(4);
        if out.tokens + tokens > cap {
            out.left_out.push(l.card().id);
            continue;
        }
        out.tokens += tokens;
        let scope = match glob {
            Some(g) => Scope::Path {
                glob: g.to_string(),
            },
            None => search.clone(),
        };
        let card = l.card();
        out.lines.push(Planned {
            from,
            id: card.id,
            kind: card.kind,
            title: card.title.clone(),
            scope,
            tokens,
        });
    }
    out
}

/// The characters of `text` on one line: its words joined by single spaces.
pub(super) fn summary_chars(text: &str) -> usize {
    let (mut chars, mut words, mut in_word) = (0usize, 0usize, false);
    for c in text.chars() {
        if c.is_whitespace() {
            in_word = false;
        } else {
            if !in_word {
                words += 1;
                in_word = true;
            }
            chars += 1;
        }
    }
    chars + words.saturating_sub(1)
}

/// The characters of a briefing line, `- {id} [{kind}] {title} ({why}): {summary}\n`,
/// counted without writing it; `why` is the characters of the scope's words.
fn line_chars(l: &impl Candidate, why: usize) -> usize {
    let fixed = "- ".len() + " [".len() + "] ".len() + " (".len() + "): ".len() + "\n".len();
    // An id is written `L-` and at least four digits.
    let card = l.card();
    let mut digits = 1;
    let mut n = card.id.0;
    while n >= 10 {
        n /= 10;
        digits += 1;
    }
    fixed
        + 2
        + digits.max(4)
        + card.kind.as_str().chars().count()
        + card.title.chars().count()
        + why
        + l.summary_chars()
}

/// The changed paths by each of their ancestors ([`ancestors`]): a glob can only match
/// the paths filed under its literal prefix.
struct Under<'a> {
    by_prefix: HashMap<&'a str, Vec<&'a str>>,
}

impl<'a> Under<'a> {
    fn new(changed: &'a [String]) -> Under<'a> {
        let mut by_prefix: HashMap<&'a str, Vec<&'a str>> = HashMap::new();
        for path in changed {
            for prefix in ancestors(path) {
                by_prefix.entry(prefix).or_default().push(path);
            }
        }
        Under { by_prefix }
    }

    /// Whether `glob` matches one of the changed paths.
    fn matches(&self, glob: &str) -> bool {
        let prefix = literal_prefix(glob);
        let Some(paths) = self.by_prefix.get(prefix) else {
            return false;
        };
        // `web/src`, `web/src/` and `web/src/**` match every path filed under `web/src`.
        let rest = glob.trim_start_matches("./").strip_prefix(prefix);
        if !prefix.is_empty() && matches!(rest, Some("" | "/" | "/**")) {
            return true;
        }
        paths.iter().any(|p| glob_matches(glob, p))
    }
}

fn clip(s: String, max: usize) -> String {
    if s.chars().count() <= max {
        return s;
    }
    let mut cut: String = s.chars().take(max).collect();
    cut.push('…');
    cut
}

/// How specific a glob is: its literal segments before the first wildcard, then its
/// literal characters. `web/src/api.rs` > `web/src/**` > `web/**` > `**/*.rs`.
fn specificity(glob: &str) -> (usize, usize) {
    let literal = glob
        .split('/')
        .filter(|s| !s.is_empty())
        .take_while(|s| !s.contains(['*', '?']))
        .count();
    let chars = glob
        .chars()
        .filter(|c| !matches!(c, '*' | '?' | '/'))
        .count();
    (literal, chars)
}

/// A glob's literal leading segments (`web/src` of `web/src/**/*.ts`): a path it
/// matches starts with them.
pub(super) fn literal_prefix(glob: &str) -> &str {
    let trimmed = glob.trim_start_matches("./").trim_end_matches('/');
    let (mut end, mut start) = (0, 0);
    for segment in trimmed.split('/') {
        if segment.contains(['*', '?']) {
            break;
        }
        end = start + segment.len();
        start = end + 1;
    }
    &trimmed[..end]
}

/// The prefixes a glob matching `path` could have: "", then each leading run of segments.
fn ancestors(path: &str) -> Vec<&str> {
    let trimmed = path.trim_start_matches("./");
    let mut out = vec![""];
    let mut end = 0;
    for (n, segment) in trimmed.split('/').enumerate() {
        end += segment.len() + usize::from(n > 0);
        out.push(&trimmed[..end]);
    }
    out
}

impl Library {
    /// The briefing for a review of `changed` paths: scoped learnings first, then the
    /// search for `query`, under `cap` tokens; the same lines as [`brief`] over
    /// [`Search::scoped_cards`] and the search's [`Search::cards`]. Reads the search
    /// tables only (kept in step with the files by [`Search::sync`]), and the bodies of
    /// the lines that fit only.
    pub fn briefing(
        &self,
        search: &Search,
        changed: &[String],
        query: &str,
        cap: usize,
    ) -> Result<Briefing> {
        search.sync()?;
        let scoped = search.scoped_rows(changed)?;
        let found = if query.trim().is_empty() {
            Vec::new()
        } else {
            let hits = search.search(query, 20, &SearchFilter::default())?.hits;
            search.rows(&hits.iter().map(|h| h.id).collect::<Vec<_>>())?
        };
        let plan = plan(&scoped, changed, query, &found, cap);
        let mut bodies: HashMap<Origin, String> = HashMap::new();
        for line in &plan.lines {
            let from = line.from;
            let rowid = match from {
                Origin::Scoped(i) => scoped[i].rowid,
                Origin::Found(i) => found[i].rowid,
            };
            bodies.insert(from, search.body(rowid)?);
        }
        Ok(plan.write(|from| bodies.get(&from).map_or("", String::as_str)))
    }
}

/// A learning in force as a briefing plans with it: a row of `docs`, its card without
/// the body, which is read by `rowid` only for a line that fits.
struct Row {
    rowid: i64,
    card: Card,
    summary_chars: usize,
}

impl Candidate for Row {
    fn card(&self) -> &Card {
        &self.card
    }
    fn summary_chars(&self) -> usize {
        self.summary_chars
    }
}

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Option<Row>> {
    let id: String = r.get(1)?;
    let kind: String = r.get(2)?;
    let paths: String = r.get(4)?;
    let (Ok(id), Ok(kind)) = (id.parse::<LearningId>(), kind.parse::<LearningKind>()) else {
        return Ok(None);
    };
    Ok(Some(Row {
        rowid: r.get(0)?,
        card: Card {
            id,
            kind,
            title: r.get(3)?,
            paths: paths.lines().map(str::to_string).collect(),
            body: String::new(),
        },
        summary_chars: usize::try_from(r.get::<_, i64>(5)?).unwrap_or(0),
    }))
}

/// The ancestors of every changed path, each once: the prefixes a glob that matches one
/// of them can have.
fn prefixes(changed: &[String]) -> Vec<&str> {
    let mut prefixes: Vec<&str> = changed.iter().flat_map(|p| ancestors(p)).collect();
    prefixes.sort();
    prefixes.dedup();
    prefixes
}

impl Search {
    /// Accepted learnings with a glob whose literal prefix is an ancestor of a changed
    /// path: every one that can match, and few that can't.
    pub fn scoped_cards(&self, changed: &[String]) -> Result<Vec<Card>> {
        self.under_prefixes(
            changed,
            "SELECT d.id, d.kind, d.title, d.paths, d.body FROM scopes s JOIN docs d ON d.rowid = s.doc
             WHERE s.prefix = ?1 AND s.status = 'accepted'",
            card_row,
            |c| c.id,
        )
    }

    /// [`Search::scoped_cards`] without the bodies.
    fn scoped_rows(&self, changed: &[String]) -> Result<Vec<Row>> {
        self.under_prefixes(
            changed,
            "SELECT doc, id, kind, title, paths, chars FROM scopes
             WHERE prefix = ?1 AND status = 'accepted'",
            row,
            |r| r.card.id,
        )
    }

    /// What `sql` (one `?1`, a prefix) gives for each ancestor prefix of the changed
    /// paths, each learning once, in the order first found.
    fn under_prefixes<T>(
        &self,
        changed: &[String],
        sql: &str,
        map: fn(&rusqlite::Row<'_>) -> rusqlite::Result<Option<T>>,
        id_of: fn(&T) -> LearningId,
    ) -> Result<Vec<T>> {
        let mut q = self.conn.prepare_cached(sql).map_err(db(&self.path))?;
        let mut out: Vec<T> = Vec::new();
        let mut seen: HashSet<LearningId> = HashSet::new();
        for prefix in prefixes(changed) {
            let rows = q.query_map(params![prefix], map).map_err(db(&self.path))?;
            for found in rows {
                if let Some(found) = found.map_err(db(&self.path))?
                    && seen.insert(id_of(&found))
                {
                    out.push(found);
                }
            }
        }
        Ok(out)
    }

    /// [`Search::cards`] without the bodies.
    fn rows(&self, ids: &[LearningId]) -> Result<Vec<Row>> {
        let mut q = self
            .conn
            .prepare_cached(
                "SELECT rowid, id, kind, title, paths, chars FROM docs
                 WHERE id = ?1 AND status = 'accepted'",
            )
            .map_err(db(&self.path))?;
        let mut out = Vec::new();
        for id in ids {
            let found = q
                .query_row(params![id.to_string()], row)
                .optional()
                .map_err(db(&self.path))?;
            if let Some(Some(r)) = found {
                out.push(r);
            }
        }
        Ok(out)
    }

    /// The body of the learning at `rowid` of `docs`.
    fn body(&self, rowid: i64) -> Result<String> {
        let mut q = self
            .conn
            .prepare_cached("SELECT body FROM docs WHERE rowid = ?1")
            .map_err(db(&self.path))?;
        q.query_row(params![rowid], |r| r.get(0))
            .map_err(db(&self.path))
    }

    /// The accepted versions of `ids`, in that order (ids not in force are skipped).
    pub fn cards(&self, ids: &[LearningId]) -> Result<Vec<Card>> {
        let mut q = self
            .conn
            .prepare_cached(
                "SELECT id, kind, title, paths, body FROM docs WHERE id = ?1 AND status = 'accepted'",
            )
            .map_err(db(&self.path))?;
        let mut out = Vec::new();
        for id in ids {
            let card = q
                .query_row(params![id.to_string()], card_row)
                .map_err(db(&self.path));
            match card {
                Ok(Some(c)) => out.push(c),
                Ok(None) => {}
                Err(super::LibraryError::Database {
                    source: rusqlite::Error::QueryReturnedNoRows,
                    ..
                }) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(out)
    }
}

fn card_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Option<Card>> {
    let id: String = r.get(0)?;
    let kind: String = r.get(1)?;
    let paths: String = r.get(3)?;
    let (Ok(id), Ok(kind)) = (id.parse::<LearningId>(), kind.parse::<LearningKind>()) else {
        return Ok(None);
    };
    Ok(Some(Card {
        id,
        kind,
        title: r.get(2)?,
        paths: paths.lines().map(str::to_string).collect(),
        body: r.get(4)?,
    }))
}

/// Whether `glob` matches `path` (both relative to the repository's root).
pub fn glob_matches(glob: &str, path: &str) -> bool {
    let path = path.trim_start_matches("./");
    let glob = glob.trim_start_matches("./");
    if path.is_empty() {
        return false;
    }
    if !glob.contains(['*', '?']) {
        // A literal glob covers itself and everything below it.
        let dir = glob.strip_suffix('/').unwrap_or(glob);
        return path == dir || path.strip_prefix(dir).is_some_and(|r| r.starts_with('/'));
    }
    let deep;
    let glob = if let Some(dir) = glob.strip_suffix('/') {
        deep = format!("{dir}/**");
        deep.as_str()
    } else {
        glob
    };
    let g: Vec<&str> = glob.split('/').collect();
    let p: Vec<&str> = path.split('/').collect();
    segments(&g, &p)
}

fn segments(glob: &[&str], path: &[&str]) -> bool {
    match glob.split_first() {
        None => path.is_empty(),
        Some((&"**", rest)) => (0..=path.len()).any(|n| segments(rest, &path[n..])),
        Some((first, rest)) => path.split_first().is_some_and(|(p, tail)| {
            let here = if first.contains(['*', '?']) {
                let g: Vec<char> = first.chars().collect();
                let t: Vec<char> = p.chars().collect();
                within(&g, &t)
            } else {
                first == p
            };
            here && segments(rest, tail)
        }),
    }
}

/// `*` and `?` within one segment, by iterative backtracking over the last star.
fn within(glob: &[char], text: &[char]) -> bool {
    let (mut g, mut t) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        if g < glob.len() && (glob[g] == '?' || glob[g] == text[t]) {
            g += 1;
            t += 1;
        } else if g < glob.len() && glob[g] == '*' {
            star = Some((g, t));
            g += 1;
        } else if let Some((sg, st)) = star {
            g = sg + 1;
            t = st + 1;
            star = Some((sg, st + 1));
        } else {
            return false;
        }
    }
    glob[g..].iter().all(|c| *c == '*')
}
