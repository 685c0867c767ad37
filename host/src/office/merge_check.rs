//! The pre-merge check (`[merge] pre_merge_check`): the repository's gates run on a PR
//! merged onto its base's tip, or onto a predicted tip (the tip with the PRs ahead of
//! it in the merge train merged in first), a chain of commits `git merge-tree` and `git
//! commit-tree` make without touching any checkout or ref. It catches the merge that is
//! clean as text and broken as code: two PRs green alone whose combination fails.
//!
//! Each result is kept, with the tip, the PRs merged in ahead and the head, in
//! `<journal>/merge-checks.jsonl`, so a check runs once per chain and the merger room
//! reads it on every pass. The room lets a PR merge on a result only when the checked
//! tree is the tree its merge would write now. Passing gates also land in the checks
//! cache by tree, so a tree the loop already checked costs nothing.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::checks::{cache_key, cached_pass, record_run, run_command};
use crate::error::{HallError, Result};
use crate::git;
use crate::hall::{Ctx, Hall};
use crate::item::{ItemId, Sha};
use crate::rooms::types::{CiState, MergeCheck, MergerInput, PrHead};

/// How many results for one head the room is given, newest first.
const KEPT_PER_HEAD: usize = 8;

/// One line of the record.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Recorded {
    onto: String,
    #[serde(default)]
    ahead: Vec<PrHead>,
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

impl Recorded {
    fn check(&self) -> MergeCheck {
        MergeCheck {
            state: state_of(&self.state),
            onto: self.onto.clone(),
            ahead: self.ahead.clone(),
            head: self.head.clone(),
            tree: self.tree.clone(),
            skipped: self.skipped.clone(),
        }
    }
}

/// Every kept result, read once a pass.
pub struct Records(Vec<Recorded>);

impl Records {
    /// Reads `<journal>/merge-checks.jsonl`; a line that does not parse is skipped
    /// (it only means a check runs again).
    pub fn load(hall: &Hall) -> Self {
        let text = std::fs::read_to_string(record_file(hall)).unwrap_or_default();
        Self(
            text.lines()
                .filter_map(|l| serde_json::from_str::<Recorded>(l).ok())
                .collect(),
        )
    }

    /// The results for `head`, newest first. A chain (tip and PRs ahead) checked
    /// twice shows twice: the room runs a red tree once more and counts the reds.
    pub fn for_head(&self, head: &str) -> Vec<MergeCheck> {
        self.0
            .iter()
            .rev()
            .filter(|r| r.head == head)
            .take(KEPT_PER_HEAD)
            .map(Recorded::check)
            .collect()
    }

    /// The gates that failed in the newest red result for `head`.
    pub fn failed_for(&self, head: &str) -> Vec<String> {
        self.0
            .iter()
            .rev()
            .find(|r| r.head == head && r.state == "red")
            .map(|r| r.failed.clone())
            .unwrap_or_default()
    }

    /// True when the repository's checks passed on exactly `tree`.
    pub fn passed(&self, tree: &str) -> bool {
        self.0
            .iter()
            .any(|r| r.state == "green" && r.tree.as_deref() == Some(tree))
    }
}

/// Runs the check for `head` (item `id`'s PR) merged onto `onto` after the PRs in
/// `ahead`, in order; keeps the result and returns it with the gates that failed.
pub fn run(
    hall: &Hall,
    ctx: &Ctx,
    id: ItemId,
    onto: &str,
    ahead: &[PrHead],
    head: &str,
) -> Result<(MergeCheck, Vec<String>)> {
    let checks = hall.config.checks.clone();
    let root = &hall.repo.main_root;
    let mut r = Recorded {
        onto: onto.to_string(),
        ahead: ahead.to_vec(),
        head: head.to_string(),
        tree: None,
        state: "missing".into(),
        skipped: None,
        failed: Vec::new(),
    };
    if checks.is_empty() {
        r.skipped = Some("the repository has no checks to run on the merged result".into());
    } else {
        // The predicted tip: each PR ahead merged in turn. They touch separate
        // files (the room's claims), so a conflict here is rare; it makes the
        // result red, and the PR meets the real tree at its turn.
        let mut base = onto.to_string();
        let mut clean = true;
        for a in ahead {
            match git::merge_commit(root, &base, &a.head)? {
                Some((_, commit)) => base = commit.to_string(),
                None => {
                    r.state = "red".into();
                    r.failed = vec![format!("#{} does not merge cleanly ahead of it", a.number)];
                    clean = false;
                    break;
                }
            }
        }
        if clean {
            match git::merge_commit(root, &base, head)? {
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
    }
    keep(hall, &r)?;
    Ok((r.check(), r.failed))
}

/// Appends one result to the record, a whole line.
fn keep(hall: &Hall, r: &Recorded) -> Result<()> {
    let line = serde_json::to_string(r).map_err(HallError::internal)?;
    crate::journal::file::append_raw(&record_file(hall), &format!("{line}\n"))?;
    Ok(())
}

/// A merge check the room asked for: PR `number` (item `id`, at `head`) on base
/// `base` (its index in the input), merged onto the tip after the PRs `ahead`.
pub struct Wanted {
    pub base: usize,
    pub number: u32,
    pub id: ItemId,
    pub ahead: Vec<PrHead>,
    pub head: String,
}

/// Runs the merge checks in `wanted`, at most `[parallel] checks` at a time;
/// results in the same order.
pub fn run_all(
    hall: &Hall,
    office: &Ctx,
    input: &MergerInput,
    wanted: &[Wanted],
) -> Vec<Result<(MergeCheck, Vec<String>)>> {
    let width = (hall.config.parallel.checks.max(1) as usize).min(wanted.len().max(1));
    let one = |w: &Wanted| {
        let tip = &input.bases[w.base].tip_sha;
        run(hall, office, w.id, tip, &w.ahead, &w.head)
    };
    let mut out = Vec::with_capacity(wanted.len());
    for chunk in wanted.chunks(width) {
        if chunk.len() == 1 {
            out.push(one(&chunk[0]));
            continue;
        }
        std::thread::scope(|scope| {
            let running: Vec<_> = chunk.iter().map(|w| scope.spawn(move || one(w))).collect();
            for r in running {
                out.push(r.join().unwrap_or_else(|_| {
                    Err(HallError::internal("a merge check's thread panicked"))
                }));
            }
        });
    }
    out
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
    let jail = super::checks::jail(hall, id)
        .map_err(|(reason, _)| HallError::new(crate::error::Code::CommandFailed, reason))?;
    let dir = crate::hall::worktree::loop_checkout(hall, id, commit.as_str())?;
    let mut events = Vec::new();
    if let Some(failed) = super::setup::prepare(&jail, hall, ctx, id, commit, &dir, &mut events)? {
        return Ok(vec![format!("setup: {}", failed.command)]);
    }
    let mut failed = Vec::new();
    for check in checks {
        let key = cache_key(tree, check, checks);
        if cached_pass(hall, &key) {
            continue;
        }
        let ran = run_command(
            &jail,
            hall,
            crate::hall::confine::Phase::Checks,
            check,
            &dir,
            id,
        )?;
        if ran.exit_code == 0 {
            record_run(hall, ctx, &key, commit, id, check, (0, ran.duration_ms))?;
        } else {
            failed.push(check.clone());
        }
    }
    Ok(failed)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::{Recorded, Records, keep};
    use crate::office::tests::{Bench, NoRuns};
    use crate::rooms::types::CiState;

    fn result(head: &str, state: &str) -> Recorded {
        Recorded {
            onto: "tip".into(),
            ahead: Vec::new(),
            head: head.into(),
            tree: Some("tree1".into()),
            state: state.into(),
            skipped: None,
            failed: vec!["sh check.sh".into()],
        }
    }

    #[test]
    fn every_result_kept_is_read_back_newest_first_repeats_included() {
        let bench = Bench::new(Arc::new(NoRuns));
        for (head, state) in [
            ("h1", "red"),
            ("h2", "green"),
            ("h1", "red"),
            ("h1", "green"),
        ] {
            keep(&bench.hall, &result(head, state)).unwrap();
        }
        let records = Records::load(&bench.hall);
        let states: Vec<CiState> = records.for_head("h1").iter().map(|m| m.state).collect();
        assert_eq!(states, [CiState::Green, CiState::Red, CiState::Red]);
        assert!(records.passed("tree1"));
        assert_eq!(records.failed_for("h1"), ["sh check.sh"]);
        assert!(records.failed_for("h2").is_empty());
    }
}
