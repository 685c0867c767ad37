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

use schemars::JsonSchema;
use serde::Serialize;

use rusqlite::params;

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
    let mut candidates: Vec<(&Card, Scope, (usize, usize))> = Vec::new();
    for l in scoped {
        if candidates.iter().any(|c| c.0.id == l.id) {
            continue;
        }
        let best = l
            .paths
            .iter()
            .filter(|g| changed.iter().any(|p| glob_matches(g, p)))
            .max_by_key(|g| specificity(g));
        if let Some(glob) = best {
            candidates.push((l, Scope::Path { glob: glob.clone() }, specificity(glob)));
        }
    }
    // More specific first; ids break ties so the order is stable.
    candidates.sort_by(|a, b| b.2.cmp(&a.2).then(a.0.id.cmp(&b.0.id)));
    let shown: String = clip(query.split_whitespace().collect::<Vec<_>>().join(" "), 60);
    for l in found {
        if candidates.iter().any(|c| c.0.id == l.id) {
            continue;
        }
        candidates.push((
            l,
            Scope::Search {
                query: shown.clone(),
            },
            (0, 0),
        ));
    }
    let mut out = Briefing {
        cap,
        ..Briefing::default()
    };
    for (l, scope, _) in candidates {
        let summary = l.body.split_whitespace().collect::<Vec<_>>().join(" ");
        let text = format!(
            "- {} [{}] {} ({}): {summary}\n",
            l.id,
            l.kind,
            l.title,
            scope.why(),
        );
        let tokens = estimate_tokens(&text);
        if out.tokens + tokens > cap {
            out.left_out.push(l.id);
            continue;
        }
        out.tokens += tokens;
        out.lines.push(BriefLine {
            id: l.id,
            kind: l.kind,
            title: l.title.clone(),
            scope,
            text,
            tokens,
        });
    }
    out
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
pub(super) fn literal_prefix(glob: &str) -> String {
    glob.trim_start_matches("./")
        .trim_end_matches('/')
        .split('/')
        .take_while(|s| !s.contains(['*', '?']))
        .collect::<Vec<_>>()
        .join("/")
}

/// The prefixes a glob matching `path` could have: "", then each leading run of segments.
fn ancestors(path: &str) -> Vec<String> {
    let segs: Vec<&str> = path.trim_start_matches("./").split('/').collect();
    (0..=segs.len()).map(|n| segs[..n].join("/")).collect()
}

impl Library {
    /// The briefing for a review of `changed` paths: scoped learnings first, then the
    /// search for `query`, under `cap` tokens. Reads the search tables only (kept in
    /// step with the files by [`Search::sync`]).
    pub fn briefing(
        &self,
        search: &Search,
        changed: &[String],
        query: &str,
        cap: usize,
    ) -> Result<Briefing> {
        search.sync()?;
        let scoped = search.scoped_cards(changed)?;
        let found = if query.trim().is_empty() {
            Vec::new()
        } else {
            let hits = search.search(query, 20, &SearchFilter::default())?.hits;
            search.cards(&hits.iter().map(|h| h.id).collect::<Vec<_>>())?
        };
        Ok(brief(&scoped, changed, query, &found, cap))
    }
}

impl Search {
    /// Accepted learnings with a glob whose literal prefix is an ancestor of a changed
    /// path: every one that can match, and few that can't.
    pub fn scoped_cards(&self, changed: &[String]) -> Result<Vec<Card>> {
        let mut prefixes: Vec<String> = changed.iter().flat_map(|p| ancestors(p)).collect();
        prefixes.sort();
        prefixes.dedup();
        let mut q = self
            .conn
            .prepare_cached(
                "SELECT d.id, d.kind, d.title, d.paths, d.body FROM scopes s JOIN docs d ON d.rowid = s.doc
                 WHERE s.prefix = ?1 AND d.status = 'accepted'",
            )
            .map_err(db(&self.path))?;
        let mut out: Vec<Card> = Vec::new();
        for prefix in prefixes {
            let rows = q
                .query_map(params![prefix], card_row)
                .map_err(db(&self.path))?;
            for row in rows {
                if let Some(card) = row.map_err(db(&self.path))?
                    && !out.iter().any(|c| c.id == card.id)
                {
                    out.push(card);
                }
            }
        }
        Ok(out)
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
    let deep;
    let glob = if let Some(dir) = glob.strip_suffix('/') {
        deep = format!("{dir}/**");
        deep.as_str()
    } else if !glob.contains(['*', '?']) {
        deep = format!("{glob}/**");
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
            let g: Vec<char> = first.chars().collect();
            let t: Vec<char> = p.chars().collect();
            within(&g, &t) && segments(rest, tail)
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
