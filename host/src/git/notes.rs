//! Git notes: the hallmark's storage. Reading a commit with its note in one process,
//! writing a note as one of the loop's actors, and merging notes fetched from a remote.

use std::path::Path;

use super::{Invocation, Result, Sha, output};

/// A commit with the note `notes_ref` keeps on it.
#[derive(Clone, Debug, PartialEq)]
pub struct NotedCommit {
    pub sha: Sha,
    pub tree: Sha,
    /// The note's text, empty when there is none.
    pub note: String,
}

/// The commit `rev` names, its tree and its note under `notes_ref`, in one git call
/// with replacement refs ignored (`git replace` can't swap in another notes commit).
/// `None` when `rev` names no commit.
pub fn noted_commit(dir: &Path, rev: &str, notes_ref: &str) -> Result<Option<NotedCommit>> {
    if rev.starts_with('-') {
        return Ok(None);
    }
    let notes = format!("--notes={notes_ref}");
    let spec = format!("{rev}^{{commit}}");
    let out = output(
        dir,
        &[
            "--no-replace-objects",
            "show",
            "--no-patch",
            "--no-color",
            &notes,
            "--format=%H%x00%T%x00%N",
            &spec,
            "--",
        ],
    )?;
    if !out.status.success() {
        return Ok(None);
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut parts = text.splitn(3, '\0');
    let (Some(sha), Some(tree), Some(note)) = (parts.next(), parts.next(), parts.next()) else {
        return Ok(None);
    };
    Ok(Some(NotedCommit {
        sha: Sha::new(sha.trim()),
        tree: Sha::new(tree.trim()),
        note: note.trim().to_string(),
    }))
}

/// The note on `sha` under `notes_ref`, if there is one.
pub fn note(dir: &Path, notes_ref: &str, sha: &str) -> Result<Option<String>> {
    let r = format!("--ref={notes_ref}");
    let out = output(dir, &["notes", &r, "show", sha])?;
    Ok(out
        .status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned()))
}

/// Writes `body` as the note on `sha` under `notes_ref`, replacing any note there, as
/// `actor` (the reference hook lets only the loop's own actors write hallmarks).
pub fn add_note(dir: &Path, notes_ref: &str, sha: &str, body: &str, actor: &str) -> Result<()> {
    let r = format!("--ref={notes_ref}");
    Invocation::at(dir)
        .actor(actor)
        .run(&["notes", &r, "add", "-f", "-m", body, sha])
        .map(drop)
}

/// Merges the notes under `other` into `notes_ref`, ours winning where both noted the
/// same commit, as `actor`.
pub fn merge_notes(dir: &Path, notes_ref: &str, other: &str, actor: &str) -> Result<()> {
    let r = format!("--ref={notes_ref}");
    Invocation::at(dir)
        .actor(actor)
        .run(&["notes", &r, "merge", "--quiet", "--strategy=ours", other])
        .map(drop)
}
