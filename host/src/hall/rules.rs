//! The rules in effect: the configuration and rule files committed on the base branch.
//!
//! An agent works in a checkout and can edit any file there, so nothing that gates or
//! reviews it may come from a working tree. `.hallmark.toml`, `[rooms]` components and
//! `.hallmark/allowed_signers` are read from the tip of the base branch instead, as
//! committed. An edit in the main checkout takes effect once it is committed there, and
//! `hall doctor` says so until then.
//!
//! Which branch is the base is itself a rule, so it is not read from the working copy
//! either: `hall init` records it in the journal (`<journal>/repo.json`). A repository
//! initialized before that record existed falls back to origin's default branch, else
//! `main`.
//!
//! The hook runs on every tool call, so the tip is read from git's ref files directly
//! and the committed config is cached by commit in `<journal>/cache/committed/`; only a
//! new tip of the base costs a `git` process.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::config::{Config, FILE_NAME};
use crate::error::{HallError, IoContext, Result};
use crate::git::{self, Repo};

/// The journal's record of repository-wide choices that must not come from a checkout.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RepoRecord {
    /// The base branch: items start from it, and the rules are read from it.
    pub base: String,
}

const RECORD: &str = "repo.json";

/// Reads the record in `journal_dir`, if there is one.
pub fn record(journal_dir: &Path) -> Option<RepoRecord> {
    let bytes = std::fs::read(journal_dir.join(RECORD)).ok()?;
    serde_json::from_slice::<RepoRecord>(&bytes)
        .ok()
        .filter(|r| !r.base.trim().is_empty())
}

/// Writes the record (atomically); `hall init` calls it.
pub fn write_record(journal_dir: &Path, record: &RepoRecord) -> Result<()> {
    let bytes = serde_json::to_vec_pretty(record).map_err(HallError::internal)?;
    let path = journal_dir.join(RECORD);
    crate::journal::file::write_atomic(&path, &bytes).at(&path)
}

/// The base branch's name for `repo`: the journal's record, else origin's default
/// branch, else `main`.
pub fn base_name(repo: &Repo) -> String {
    if let Some(r) = record(&repo.hall_dir()) {
        return r.base;
    }
    origin_head(&repo.common_dir).unwrap_or_else(|| "main".to_string())
}

/// `refs/remotes/origin/HEAD`'s branch, read from the file git keeps.
fn origin_head(common: &Path) -> Option<String> {
    let text = std::fs::read_to_string(common.join("refs/remotes/origin/HEAD")).ok()?;
    text.trim()
        .strip_prefix("ref: refs/remotes/origin/")
        .map(str::to_string)
        .filter(|b| !b.is_empty())
}

/// The base branch's tip: the local branch, else origin's copy of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BaseTip {
    /// The branch name.
    pub base: String,
    /// The full ref it was read from (`refs/heads/main`, `refs/remotes/origin/main`).
    pub reference: String,
    /// The commit.
    pub sha: String,
}

/// Finds the tip of `base` in the repository whose common dir is `common`, reading
/// git's files and asking git only when they don't say (reftable, odd layouts).
pub fn base_tip(repo: &Repo, base: &str) -> Option<BaseTip> {
    let mut ask = Vec::new();
    for reference in [
        format!("refs/heads/{base}"),
        format!("refs/remotes/origin/{base}"),
    ] {
        match git::refs::ref_files(&repo.common_dir, &reference) {
            git::refs::RefFiles::Commit(sha) => {
                return Some(BaseTip {
                    base: base.to_string(),
                    reference,
                    sha,
                });
            }
            git::refs::RefFiles::Ask => ask.push(reference),
            git::refs::RefFiles::Absent => {}
        }
    }
    // Git is asked only about the refs its files could not answer for: a repository
    // with no base yet (a fresh `hall init`) starts no process here.
    ask.into_iter().find_map(|reference| {
        git::commit(&repo.main_root, &reference).map(|sha| BaseTip {
            base: base.to_string(),
            reference,
            sha: sha.into_string(),
        })
    })
}

/// A file's bytes at commit `sha`, if it exists there.
pub fn file_at(repo: &Repo, sha: &str, path: &str) -> Option<Vec<u8>> {
    git::show_file(&repo.main_root, sha, path).ok().flatten()
}

/// The tip of the base branch named in the rules (the local branch, else origin's):
/// where the reviewer's rules and everything else the loop reads from the base come
/// from. `None` when the base has no commit yet.
pub fn base_tip_of(hall: &super::Hall) -> Option<BaseTip> {
    base_tip(&hall.repo, &hall.config.base)
}

/// The tip of the branch an item's change is measured against: the configured base,
/// or the branch it is stacked on (ADR 0029). Only what the change *is* comes from
/// here; rules, rooms and signers always come from the configured base.
pub fn item_base_tip(hall: &super::Hall, item: &crate::item::Item) -> Option<BaseTip> {
    if item.base.is_empty() || item.base == hall.config.base {
        return base_tip_of(hall);
    }
    base_tip(&hall.repo, &item.base)
}

/// The configuration in effect and where it came from.
#[derive(Clone, Debug)]
pub struct Rules {
    pub config: Config,
    /// The base tip the config was read from; `None` when the base has no commit yet.
    pub tip: Option<BaseTip>,
    /// Whether the base tip has a `.hallmark.toml` (else every key is its default).
    pub committed: bool,
}

fn cache_path(repo: &Repo, sha: &str) -> PathBuf {
    repo.hall_dir()
        .join("cache")
        .join("committed")
        .join(format!("{sha}.toml"))
}

/// A marker the cache keeps for a tip with no `.hallmark.toml`.
const ABSENT: &str = "# hallmark: no .hallmark.toml at this commit\n";

/// The committed `.hallmark.toml` text at `sha` (`None` when absent), cached by commit.
fn committed_text(repo: &Repo, sha: &str) -> Option<String> {
    let cached = cache_path(repo, sha);
    if let Ok(text) = std::fs::read_to_string(&cached) {
        return (text != ABSENT).then_some(text);
    }
    let text = file_at(repo, sha, FILE_NAME).map(|b| String::from_utf8_lossy(&b).into_owned());
    // A cache that can't be written (a read-only journal in a confined session) only
    // costs the next call a `git show`.
    if let Some(dir) = cached.parent()
        && std::fs::create_dir_all(dir).is_ok()
    {
        let _ = crate::journal::file::write_atomic(
            &cached,
            text.as_deref().unwrap_or(ABSENT).as_bytes(),
        );
    }
    text
}

/// The rules in effect for `repo`: the base branch's committed `.hallmark.toml`.
///
/// A committed file that doesn't parse is an error naming the commit, so a person
/// fixes it; the hooks then gate with the defaults (see `hooks::initialized`).
pub fn rules(repo: &Repo) -> Result<Rules> {
    let base = base_name(repo);
    let Some(tip) = base_tip(repo, &base) else {
        let config = Config {
            base,
            ..Config::default()
        };
        return Ok(Rules {
            config,
            tip: None,
            committed: false,
        });
    };
    let (mut config, committed) = match committed_text(repo, &tip.sha) {
        Some(text) => {
            let shown = PathBuf::from(format!(
                "{FILE_NAME} at {} ({})",
                crate::item::sha::short(&tip.sha),
                tip.reference
            ));
            (Config::parse(&text, &shown)?, true)
        }
        None => (Config::default(), false),
    };
    // The record names the branch the rules come from; a committed `base` that differs
    // is reported by `hall doctor`, and doesn't move where the rules are read.
    config.base = base;
    Ok(Rules {
        config,
        tip: Some(tip),
        committed,
    })
}

/// How the working copy's `.hallmark.toml` in the main checkout compares with the
/// committed one, for `hall doctor`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WorkingCopy {
    /// The same text as committed, or both absent.
    Committed,
    /// Edited (or created) in the main checkout and not committed on the base branch: not
    /// in effect until it is.
    Uncommitted,
    /// Committed on the base, but removed from the main checkout.
    Removed,
}

/// Compares the main checkout's `.hallmark.toml` with the committed one.
pub fn working_copy(repo: &Repo, rules: &Rules) -> WorkingCopy {
    let on_disk = std::fs::read_to_string(Config::path(&repo.main_root)).ok();
    let committed = rules
        .tip
        .as_ref()
        .and_then(|t| committed_text(repo, &t.sha));
    match (on_disk, committed) {
        (None, None) => WorkingCopy::Committed,
        (None, Some(_)) => WorkingCopy::Removed,
        (Some(_), None) => WorkingCopy::Uncommitted,
        (Some(a), Some(b)) if a == b => WorkingCopy::Committed,
        (Some(_), Some(_)) => WorkingCopy::Uncommitted,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_record_names_the_base() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(record(dir.path()), None);
        write_record(
            dir.path(),
            &RepoRecord {
                base: "trunk".into(),
            },
        )
        .unwrap();
        assert_eq!(record(dir.path()).unwrap().base, "trunk");
        std::fs::write(dir.path().join(RECORD), "{\"base\": \"\"}").unwrap();
        assert_eq!(record(dir.path()), None, "an empty base is no record");
    }
}
