//! Moving a store: `export` writes every file (current learnings and their history) to
//! one JSON Lines document, and `import` writes such a document into an empty store,
//! byte for byte. `import_knowledge` brings in the learnings earlier versions of
//! Hallmark committed under `.hallmark/knowledge/`.
//!
//! The export's first line names the format (`{"format":"hallmark-library","v":1}`);
//! each further line is one file, `{"path":"learnings/L-0007.md","text":"…"}`, in path
//! order. One line per file keeps a damaged export readable up to the damage, and a
//! diff of two exports shows which learnings changed.

use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::learning::{Draft, Source};
use super::ops::Stamp;
use super::{Library, LibraryError, Result, io};
use crate::item::{LearningId, LearningKind};

pub const EXPORT_FORMAT: &str = "hallmark-library";
const EXPORT_VERSION: u32 = 1;

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Header {
    format: String,
    v: u32,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileLine {
    path: String,
    text: String,
}

/// What an import brought in.
#[derive(Clone, Debug, Default, PartialEq, Serialize, JsonSchema)]
pub struct Imported {
    /// Learnings made (from the old layout) or written (from an export).
    pub learnings: Vec<LearningId>,
    /// Files of the old layout already in the store with the same title and text.
    pub skipped: Vec<String>,
    /// History files written (from an export).
    pub history: usize,
}

impl Library {
    /// Every file of the store, relative to its root, in path order.
    fn files(&self) -> Result<Vec<String>> {
        let mut out: Vec<String> = self
            .current_names()?
            .into_iter()
            .map(|n| format!("learnings/{n}"))
            .collect();
        let dir = self.history_dir();
        if let Ok(listing) = std::fs::read_dir(&dir) {
            for entry in listing {
                let entry = entry.map_err(io(&dir))?;
                let Some(id) = entry.file_name().to_str().map(str::to_string) else {
                    continue;
                };
                let Ok(parsed) = id.parse::<LearningId>() else {
                    continue;
                };
                for v in self.history_versions(parsed)? {
                    out.push(format!("history/{id}/{v}.md"));
                }
            }
        }
        out.sort();
        Ok(out)
    }

    /// The whole store as one document.
    pub fn export(&self) -> Result<String> {
        let header = Header {
            format: EXPORT_FORMAT.into(),
            v: EXPORT_VERSION,
        };
        let mut out = to_line(&header);
        for rel in self.files()? {
            let path = self.root.join(&rel);
            let text = std::fs::read_to_string(&path).map_err(io(&path))?;
            out.push_str(&to_line(&FileLine { path: rel, text }));
        }
        Ok(out)
    }

    /// Writes an export into this store, which must hold no learning and no history.
    /// The whole document is checked before the first file is written.
    pub fn import_export(&self, document: &str, source: &Path) -> Result<Imported> {
        let bad = |line: usize, message: String| LibraryError::Malformed {
            path: source.to_path_buf(),
            message: format!("line {line}: {message}"),
        };
        let mut lines = document.lines().enumerate();
        let header: Header = match lines.next() {
            Some((_, l)) => serde_json::from_str(l).map_err(|e| bad(1, e.to_string()))?,
            None => {
                return Err(bad(
                    1,
                    "is empty; an export starts with its format line".into(),
                ));
            }
        };
        if header.format != EXPORT_FORMAT || header.v != EXPORT_VERSION {
            return Err(bad(
                1,
                format!("is not a Library export ({EXPORT_FORMAT} v{EXPORT_VERSION})"),
            ));
        }
        let mut files: Vec<(String, String)> = Vec::new();
        for (n, line) in lines {
            if line.trim().is_empty() {
                continue;
            }
            let file: FileLine =
                serde_json::from_str(line).map_err(|e| bad(n + 1, e.to_string()))?;
            check_export_path(&file.path).map_err(|m| bad(n + 1, m))?;
            if files.iter().any(|(p, _)| p == &file.path) {
                return Err(bad(n + 1, format!("`{}` appears twice", file.path)));
            }
            files.push((file.path, file.text));
        }
        let _lock = self.lock()?;
        if !self.files()?.is_empty() {
            return Err(LibraryError::NotEmpty {
                dir: self.root.clone(),
            });
        }
        let mut imported = Imported::default();
        for (rel, text) in &files {
            self.write(&self.root.join(rel), text.as_bytes())?;
            if let Some(id) = rel
                .strip_prefix("learnings/")
                .and_then(|n| n.strip_suffix(".md"))
                .and_then(|n| n.parse::<LearningId>().ok())
            {
                imported.learnings.push(id);
            } else {
                imported.history += 1;
            }
        }
        self.bump_generation()?;
        Ok(imported)
    }

    /// Proposes every Markdown file under `dir` (a working tree's `.hallmark/knowledge/`)
    /// as a learning: the kind from its front matter, else from its folder (`rules/`,
    /// `false-positives/`, `maps/`, `decisions/`). Accepted if the kind is auto-accepted.
    /// A file whose title and text the store already has is skipped, so importing
    /// twice makes nothing new. Every file is read and checked before any is proposed.
    pub fn import_knowledge(&self, dir: &Path, root: &Path, stamp: &Stamp) -> Result<Imported> {
        let mut drafts = Vec::new();
        for path in markdown_under(dir)? {
            let text = std::fs::read_to_string(&path).map_err(io(&path))?;
            let rel = path
                .strip_prefix(root)
                .unwrap_or(&path)
                .to_string_lossy()
                .replace('\\', "/");
            drafts.push((rel.clone(), old_draft(&text, &path, dir, rel)?));
        }
        let listing = self.list()?;
        let mut imported = Imported::default();
        for (rel, draft) in drafts {
            let known = listing.entries.iter().any(|e| {
                e.current.meta.title == draft.title && e.current.body.trim() == draft.body.trim()
            });
            if known {
                imported.skipped.push(rel);
                continue;
            }
            imported.learnings.push(self.propose(draft, stamp)?.id());
        }
        Ok(imported)
    }
}

fn to_line(value: &impl Serialize) -> String {
    let mut s = serde_json::to_string(value).unwrap_or_default();
    s.push('\n');
    s
}

/// Only the store's own files: `learnings/L-0007.md` and `history/L-0007/3.md`.
fn check_export_path(rel: &str) -> std::result::Result<(), String> {
    let parts: Vec<&str> = rel.split('/').collect();
    let ok = match parts.as_slice() {
        ["learnings", name] => name
            .strip_suffix(".md")
            .is_some_and(|n| n.parse::<LearningId>().is_ok_and(|id| id.to_string() == n)),
        ["history", id, version] => {
            id.parse::<LearningId>().is_ok_and(|i| i.to_string() == *id)
                && version
                    .strip_suffix(".md")
                    .and_then(|v| v.parse::<u32>().ok())
                    .is_some_and(|v| v > 0 && format!("{v}.md") == *version)
        }
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err(format!(
            "`{rel}` is not a store file (learnings/L-0007.md or history/L-0007/3.md)"
        ))
    }
}

/// Every `.md` file under `dir`, in path order; none when it does not exist.
fn markdown_under(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let listing = match std::fs::read_dir(&d) {
            Ok(l) => l,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(io(&d)(e)),
        };
        for entry in listing {
            let path = entry.map_err(io(&d))?.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                out.push(path);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// The front matter an old knowledge file may have; everything is optional.
#[derive(Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct OldFront {
    title: Option<String>,
    kind: Option<LearningKind>,
    paths: Vec<String>,
}

/// A draft from an old knowledge file: TOML front matter between `+++` fences if it has
/// any, a title from it or the first `# ` heading or the file's name.
fn old_draft(text: &str, path: &Path, dir: &Path, rel: String) -> Result<Draft> {
    let bad = |message: String| LibraryError::Malformed {
        path: path.to_path_buf(),
        message,
    };
    let (front, body) = match text.strip_prefix("+++\n") {
        Some(rest) => {
            let end = rest
                .find("\n+++\n")
                .map(|at| (at, at + 5))
                .or_else(|| rest.strip_suffix("\n+++").map(|r| (r.len(), rest.len())))
                .ok_or_else(|| bad("the front matter has no closing `+++` line".into()))?;
            let front: OldFront =
                toml::from_str(&rest[..end.0]).map_err(|e| bad(e.message().to_string()))?;
            (front, &rest[end.1..])
        }
        None => (OldFront::default(), text),
    };
    let folder = path
        .strip_prefix(dir)
        .ok()
        .and_then(|r| r.components().next())
        .and_then(|c| c.as_os_str().to_str())
        .and_then(|f| match f {
            "rules" => Some(LearningKind::Rule),
            "false-positives" => Some(LearningKind::FalsePositive),
            "maps" => Some(LearningKind::Map),
            "decisions" => Some(LearningKind::Decision),
            _ => None,
        });
    let kind = front.kind.or(folder).ok_or_else(|| {
        bad("no kind: give it `kind` in front matter or put it under rules/, false-positives/, maps/ or decisions/".into())
    })?;
    let heading = body
        .lines()
        .find_map(|l| l.strip_prefix("# "))
        .map(|t| t.trim().to_string());
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("untitled")
        .replace(['-', '_'], " ");
    let title = front.title.or(heading).unwrap_or(stem);
    super::learning::check_paths(&front.paths).map_err(bad)?;
    Ok(Draft {
        kind,
        title,
        body: body.trim_start_matches('\n').to_string(),
        paths: front.paths,
        source: Source {
            file: Some(rel),
            ..Source::default()
        },
    })
}
