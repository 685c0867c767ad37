//! Hallmark's own files in the main checkout that the base branch doesn't have yet.
//!
//! A new item's worktree is made from the base branch, so until `hall init`'s files
//! are committed there, an agent working in the worktree has no `.hallmark.toml`, no
//! review instructions and no CLAUDE.md section. `init` and `new` say so.

use std::path::Path;

use super::init::{MARK_END, MARK_START};
use crate::git::{self, Repo};

/// The files (relative to the main checkout) whose content on `base` differs from the
/// main checkout's: absent there, or, for CLAUDE.md/AGENTS.md, without the same
/// Hallmark section.
pub fn files(repo: &Repo, base: &str) -> Vec<String> {
    let root = &repo.main_root;
    let mut out = Vec::new();
    for path in [".hallmark.toml", ".hallmark/review.md"] {
        let Ok(here) = std::fs::read(root.join(path)) else {
            continue;
        };
        if committed(root, base, path).as_deref() != Some(here.as_slice()) {
            out.push(path.to_string());
        }
    }
    for path in ["CLAUDE.md", "AGENTS.md"] {
        let Some(here) = std::fs::read_to_string(root.join(path))
            .ok()
            .and_then(|t| section(&t).map(str::to_string))
        else {
            continue;
        };
        let there = committed(root, base, path)
            .map(|b| String::from_utf8_lossy(&b).to_string())
            .and_then(|t| section(&t).map(str::to_string));
        if there.as_deref() != Some(here.as_str()) {
            out.push(path.to_string());
        }
    }
    out
}

/// The warning for `files`, or `None` when every file is committed.
pub fn warning(files: &[String], base: &str) -> Option<String> {
    (!files.is_empty()).then(|| {
        format!(
            "{} not committed on {base}, so new worktrees won't have {}: commit {} on {base}",
            files.join(", "),
            if files.len() == 1 { "it" } else { "them" },
            if files.len() == 1 { "it" } else { "them" },
        )
    })
}

/// The command that commits `files` in the main checkout at `root`.
pub fn commit_command(root: &Path, files: &[String], base: &str) -> String {
    let switch = match git::current_branch(root) {
        Some(b) if b == base => String::new(),
        _ => format!("git switch {base} && "),
    };
    format!(
        "{switch}git add {} && git commit -m \"Set up Hallmark\"",
        files.join(" ")
    )
}

fn committed(root: &Path, base: &str, path: &str) -> Option<Vec<u8>> {
    git::show_file(root, base, path).ok().flatten()
}

/// The Hallmark section of a CLAUDE.md, markers included.
fn section(text: &str) -> Option<&str> {
    let start = text.find(MARK_START)?;
    let end = text[start..].find(MARK_END)? + start + MARK_END.len();
    Some(&text[start..end])
}
