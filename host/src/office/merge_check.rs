//! The pre-merge check (`[merge] pre_merge_check`): the repository's gates run on a PR
//! merged onto its base's current tip, a commit `git merge-tree` and `git commit-tree`
//! make without touching any checkout or ref. It catches the merge that is clean as text
//! and broken as code: two PRs green alone whose combination fails.
//!
//! Each result is kept, keyed by the tip and the head it merged, in
//! `<journal>/merge-checks.jsonl`, so a check runs once per pair and the merger room reads
//! it on every pass. Passing gates also land in the checks cache by tree, so a tree the
//! loop already checked costs nothing.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::checks::{cache_key, cached_pass, record_pass, run_command};
use crate::error::Result;
use crate::git;
use crate::hall::{Ctx, Hall};
use crate::item::{ItemId, Sha};
use crate::rooms::types::{CiState, MergeCheck};

/// One line of the record.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Recorded {
    onto: String,
    head: String,
    #[serde(default)]
    tree: Option<String>,
    /// `green`, `red` or `missing`.
    state: String,
    #[serde(default)]
    skipped: Option<String>,
    #[serde(default)]
    failed: Vec<String>,
}

fn record_file(hall: &Hall) -> PathBuf {
    hall.journal.root().join("merge-checks.jsonl")
}

fn state_of(s: &str) -> CiState {
    match s {
        "green" => CiState::Green,
        "red" => CiState::Red,
        _ => CiState::Missing,
    }
}

/// The kept result for `head` merged onto `onto`, if the check ran.
pub fn recorded(hall: &Hall, onto: &str, head: &str) -> Option<MergeCheck> {
    let text = std::fs::read_to_string(record_file(hall)).ok()?;
    text.lines()
        .rev()
        .filter_map(|l| serde_json::from_str::<Recorded>(l).ok())
        .find(|r| r.onto == onto && r.head == head)
        .map(|r| MergeCheck {
            state: state_of(&r.state),
            onto: r.onto,
            head: r.head,
            tree: r.tree,
            skipped: r.skipped,
        })
}

/// Runs the check for `head` (item `id`'s PR) merged onto `onto`, keeps the result and
/// returns it with the gates that failed.
pub fn run(
    hall: &Hall,
    ctx: &Ctx,
    id: ItemId,
    onto: &str,
    head: &str,
) -> Result<(MergeCheck, Vec<String>)> {
    let checks = hall.config.checks.clone();
    let root = &hall.repo.main_root;
    let mut r = Recorded {
        onto: onto.to_string(),
        head: head.to_string(),
        tree: None,
        state: "missing".into(),
        skipped: None,
        failed: Vec::new(),
    };
    if checks.is_empty() {
        r.skipped = Some("the repository has no gates to run on the merged result".into());
    } else {
        match git::merge_commit(root, onto, head)? {
            // A conflict: GitHub says so too, and the PR is rebased at its turn.
            None => r.state = "red".into(),
            Some((tree, commit)) => {
                r.tree = Some(tree.clone());
                if checks
                    .iter()
                    .all(|c| cached_pass(hall, &cache_key(&tree, c, &checks)))
                {
                    r.state = "green".into();
                } else {
                    r.failed = run_gates(hall, ctx, id, &commit, &tree, &checks)?;
                    r.state = if r.failed.is_empty() { "green" } else { "red" }.into();
                }
            }
        }
    }
    let line = serde_json::to_string(&r).map_err(crate::error::HallError::internal)?;
    crate::journal::file::append_raw(&record_file(hall), &line)?;
    let failed = r.failed.clone();
    Ok((
        MergeCheck {
            state: state_of(&r.state),
            onto: r.onto,
            head: r.head,
            tree: r.tree,
            skipped: r.skipped,
        },
        failed,
    ))
}

/// Runs every gate in the item's loop checkout at `commit` (setup first, as the
/// assayer does); returns the ones that failed.
fn run_gates(
    hall: &Hall,
    ctx: &Ctx,
    id: ItemId,
    commit: &Sha,
    tree: &str,
    checks: &[String],
) -> Result<Vec<String>> {
    let dir = crate::hall::worktree::loop_checkout(hall, id, commit.as_str())?;
    let mut events = Vec::new();
    if let Some(failed) = super::setup::prepare(hall, ctx, id, commit, &dir, &mut events)? {
        return Ok(vec![format!("setup: {}", failed.command)]);
    }
    let mut failed = Vec::new();
    for check in checks {
        let key = cache_key(tree, check, checks);
        if cached_pass(hall, &key) {
            continue;
        }
        let ran = run_command(check, &dir, id)?;
        if ran.exit_code == 0 {
            record_pass(hall, ctx, &key, commit, id, check, ran.duration_ms)?;
        } else {
            failed.push(check.clone());
        }
    }
    Ok(failed)
}
