//! One learning file: TOML front matter between `+++` fences, then the Markdown body.
//! Parsing is strict (unknown keys, a missing fence, a file name that is not the id are
//! errors naming the file), so a typo in a hand-edited file is reported, not ignored.

use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{LibraryError, Result};
use crate::item::{ItemId, LearningId, LearningKind, LearningStatus};

const FENCE: &str = "+++";

/// Where a learning came from: the item and round, and the finding, ruling or
/// escalation it distils (or the file it was imported from).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Source {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub item: Option<ItemId>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub round: Option<u32>,
    /// A finding id of the round's verdict (`F2`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finding: Option<String>,
    /// A person's ruling: the question it answered (`Q-12`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ruling: Option<String>,
    /// The escalation it settles.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub escalation: Option<String>,
    /// The file it was imported from (`.hallmark/knowledge/rules/x.md`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
}

impl Source {
    fn is_empty(&self) -> bool {
        self == &Source::default()
    }
}

/// Everything in a learning's front matter. The field order is the file's; `source`
/// comes last because TOML writes tables after plain keys.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Meta {
    pub id: LearningId,
    pub kind: LearningKind,
    pub title: String,
    pub status: LearningStatus,
    /// The text's revision: 1 when proposed, one more for each proposed update.
    pub version: u32,
    /// Path globs the learning is about (`web/**`, `src/config.rs`); empty: the whole repo.
    #[serde(default)]
    pub paths: Vec<String>,
    pub created: String,
    pub updated: String,
    /// On a proposed update: the accepted version it would replace, which stays in
    /// force (under `history/`) until the update is accepted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replaces: Option<u32>,
    /// How many reviews said they used it.
    #[serde(default)]
    pub used: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_used: Option<String>,
    #[serde(default, skip_serializing_if = "Source::is_empty")]
    pub source: Source,
}

/// A learning: its front matter and its Markdown body.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct Learning {
    #[serde(flatten)]
    pub meta: Meta,
    pub body: String,
}

/// What a proposal says: the text, its scope and where it came from.
#[derive(Clone, Debug, PartialEq)]
pub struct Draft {
    pub kind: LearningKind,
    pub title: String,
    pub body: String,
    pub paths: Vec<String>,
    pub source: Source,
}

impl Learning {
    pub fn id(&self) -> LearningId {
        self.meta.id
    }

    /// Parses the text of `path`, which must be named after the learning's id when it
    /// is a current file (`L-0007.md`) or after its version under `history/` (`3.md`).
    pub fn parse(text: &str, path: &Path) -> Result<Learning> {
        let bad = |message: String| LibraryError::Malformed {
            path: path.to_path_buf(),
            message,
        };
        let rest = text
            .strip_prefix(FENCE)
            .and_then(|r| r.strip_prefix('\n').or_else(|| r.strip_prefix("\r\n")))
            .ok_or_else(|| bad("does not start with a `+++` line (TOML front matter)".into()))?;
        let (front, body) = split_front(rest)
            .ok_or_else(|| bad("the front matter has no closing `+++` line".into()))?;
        let meta: Meta = toml::from_str(front).map_err(|e| {
            let msg = e.message().trim().to_string();
            match e.span() {
                // Line numbers count the opening fence, as an editor shows them.
                Some(span) => {
                    let line = front[..span.start.min(front.len())].matches('\n').count() + 2;
                    bad(format!("line {line}: {msg}"))
                }
                None => bad(msg),
            }
        })?;
        validate(&meta).map_err(bad)?;
        let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
        let in_history = path
            .parent()
            .and_then(Path::file_name)
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.parse::<LearningId>().ok() == Some(meta.id));
        let named_right = if in_history {
            stem == meta.version.to_string()
        } else {
            stem == meta.id.to_string()
        };
        if !named_right {
            return Err(bad(format!(
                "the file's name does not match its id {} (version {})",
                meta.id, meta.version
            )));
        }
        Ok(Learning {
            meta,
            body: body.to_string(),
        })
    }

    /// The file's text: the front matter, then the body ending in one newline.
    pub fn render(&self) -> String {
        // Meta is plain data with string keys: TOML can always write it.
        let front = toml::to_string(&self.meta).unwrap_or_default();
        let mut body = self.body.trim_end().to_string();
        if !body.is_empty() {
            body.push('\n');
        }
        format!("{FENCE}\n{front}{FENCE}\n{body}")
    }

    /// The body on one line, for briefings and lists.
    pub fn summary(&self) -> String {
        self.body.split_whitespace().collect::<Vec<_>>().join(" ")
    }
}

/// Splits what follows the opening fence at the closing one: (front matter, body).
fn split_front(rest: &str) -> Option<(&str, &str)> {
    let mut at = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end_matches(['\n', '\r']) == FENCE {
            return Some((&rest[..at], &rest[at + line.len()..]));
        }
        at += line.len();
    }
    None
}

fn validate(meta: &Meta) -> std::result::Result<(), String> {
    if meta.title.trim().is_empty() {
        return Err("`title` is empty".into());
    }
    if meta.version == 0 {
        return Err("`version` starts at 1".into());
    }
    if crate::clock::parse(&meta.created).is_none() {
        return Err(format!("`created` is not a time: `{}`", meta.created));
    }
    if crate::clock::parse(&meta.updated).is_none() {
        return Err(format!("`updated` is not a time: `{}`", meta.updated));
    }
    if let Some(t) = &meta.last_used
        && crate::clock::parse(t).is_none()
    {
        return Err(format!("`last_used` is not a time: `{t}`"));
    }
    match meta.replaces {
        Some(_) if meta.status != LearningStatus::Proposed => {
            return Err("`replaces` is only for a proposed update".into());
        }
        Some(r) if r >= meta.version => {
            return Err(format!(
                "`replaces` ({r}) must be an earlier version than `version` ({})",
                meta.version
            ));
        }
        _ => {}
    }
    check_paths(&meta.paths)?;
    let named = [
        &meta.source.finding,
        &meta.source.ruling,
        &meta.source.escalation,
    ];
    if named.iter().filter(|n| n.is_some()).count() > 1 {
        return Err("`source` names more than one of finding, ruling and escalation".into());
    }
    Ok(())
}

/// Path globs are relative to the repository's root, `/`-separated, with no `..`.
pub fn check_paths(paths: &[String]) -> std::result::Result<(), String> {
    for p in paths {
        let bad = p.trim().is_empty()
            || p.starts_with('/')
            || p.contains('\\')
            || p.split('/').any(|s| s == "..");
        if bad {
            return Err(format!(
                "path `{p}` is not a glob relative to the repository's root (like `web/**` or `src/config.rs`)"
            ));
        }
    }
    Ok(())
}
