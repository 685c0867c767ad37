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
use crate::error::{Code, HallError, IoContext, Result};
use crate::git::{self, Repo, Sha};

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

/// The base branch's tip: the fresher of the local branch and origin's copy of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BaseTip {
    /// The branch name.
    pub base: String,
    /// The full ref it was read from (`refs/heads/main`, `refs/remotes/origin/main`).
    pub reference: String,
    /// The commit.
    pub sha: String,
    /// Origin's copy of the branch when it and the local branch have diverged (neither
    /// contains the other): the local one is used, and this says what was passed over.
    pub diverged: Option<String>,
}

/// Finds the tip of `base`: the local branch and origin's copy, whichever contains the
/// other (origin's when the local branch is behind it, so a gate added upstream gates
/// here before anyone pulls), the local one when they are the same or have diverged.
///
/// The refs are read from git's files, and git is asked only when they don't say
/// (reftable, odd layouts) or when the two differ; which of two commits is the
/// fresher is cached by the pair, so a hook pays for it once per new tip.
pub fn base_tip(repo: &Repo, base: &str) -> Option<BaseTip> {
    let local = format!("refs/heads/{base}");
    let remote = format!("refs/remotes/origin/{base}");
    let read = |reference: &str| match git::refs::ref_files(&repo.common_dir, reference) {
        git::refs::RefFiles::Commit(sha) => Some(sha),
        git::refs::RefFiles::Absent => None,
        // Git is asked only about the refs its files could not answer for: a repository
        // with no base yet (a fresh `hall init`) starts no process here.
        git::refs::RefFiles::Ask => git::commit(&repo.main_root, reference).map(Sha::into_string),
    };
    let tip = |reference: &str, sha: String, diverged: Option<String>| BaseTip {
        base: base.to_string(),
        reference: reference.to_string(),
        sha,
        diverged,
    };
    match (read(&local), read(&remote)) {
        (None, None) => None,
        (Some(l), None) => Some(tip(&local, l, None)),
        (None, Some(r)) => Some(tip(&remote, r, None)),
        (Some(l), Some(r)) if l == r => Some(tip(&local, l, None)),
        (Some(l), Some(r)) => Some(match fresher(repo, &l, &r) {
            Fresher::Remote => tip(&remote, r, None),
            Fresher::Local => tip(&local, l, None),
            Fresher::Diverged => tip(&local, l, Some(r)),
        }),
    }
}

/// Which of the local base (`l`) and origin's (`r`) is the newer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fresher {
    Local,
    Remote,
    Diverged,
}

fn fresher(repo: &Repo, l: &str, r: &str) -> Fresher {
    let cached = verified_dir(repo).join("tips").join(format!("{l}-{r}"));
    let answer = match std::fs::read_to_string(&cached).as_deref() {
        Ok("remote") => return Fresher::Remote,
        Ok("local") => return Fresher::Local,
        Ok("diverged") => return Fresher::Diverged,
        _ if git::is_ancestor_as_committed(&repo.main_root, l, r) => Fresher::Remote,
        _ if git::is_ancestor_as_committed(&repo.main_root, r, l) => Fresher::Local,
        _ => Fresher::Diverged,
    };
    let word = match answer {
        Fresher::Local => "local",
        Fresher::Remote => "remote",
        Fresher::Diverged => "diverged",
    };
    // Ancestry between two commits never changes.
    keep(repo, &cached, word.as_bytes());
    answer
}

/// Files' bytes at commit `sha`, by path, each read through the commit and its trees
/// with every object re-hashed against its name ([`git::Committed`]): `None` for a path
/// the commit doesn't have, an error naming the object when one doesn't match.
pub fn files_at(repo: &Repo, sha: &str, paths: &[&str]) -> Result<Vec<Option<Vec<u8>>>> {
    git::committed_files(&repo.main_root, sha, paths).map_err(|e| unverified(sha, e))
}

/// A file's bytes at commit `sha`, read as [`files_at`] reads them.
pub fn file_at(repo: &Repo, sha: &str, path: &str) -> Result<Option<Vec<u8>>> {
    Ok(files_at(repo, sha, &[path])?.pop().flatten())
}

/// The error for committed content at `sha` that could not be read as committed.
fn unverified(sha: &str, e: git::GitError) -> HallError {
    if !matches!(e, git::GitError::Unverified { .. }) {
        return e.into();
    }
    HallError::new(
        Code::InvalidConfig,
        format!(
            "the rules committed at {} can't be read: {e}; nothing is gated or reviewed on them",
            crate::item::sha::short(sha)
        ),
    )
    .hint("git fsck --full")
    .hint("hall doctor")
}

/// How long the loop waits for origin when it refreshes the base before a pass.
pub const FETCH_LIMIT: std::time::Duration = std::time::Duration::from_secs(20);

/// Fetches the base branch from origin, so the rules read next come from its newest
/// commit there ([`base_tip`] takes origin's copy when the local branch is behind it).
/// `Ok(false)` when the repository has no `origin`; an error when the fetch failed or
/// took longer than [`FETCH_LIMIT`], which the caller records (the rules then come from
/// what this clone has).
pub fn fetch_base(repo: &Repo) -> std::result::Result<bool, git::GitError> {
    if !git::has_remote(&repo.main_root, "origin") {
        return Ok(false);
    }
    let base = base_name(repo);
    git::fetch_within(&repo.main_root, "origin", &base, FETCH_LIMIT).map(|()| true)
}

/// The tip of the base branch named in the rules (the fresher of the local branch and
/// origin's): where the reviewer's rules and everything else the loop reads from the
/// base come from. `None` when the base has no commit yet.
pub fn base_tip_of(hall: &super::Hall) -> Option<BaseTip> {
    base_tip(&hall.repo, &hall.config.base)
}

/// The tip of the branch an item's change is measured against: the configured base,
/// or the branch it is stacked on (decision 0011). Only what the change *is* comes from
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

/// Where what was read and verified from the base is cached: `verified/` under the
/// journal's cache, which no session may write. (An older `committed/` cache was filled
/// without re-hashing, so it is never read.)
fn verified_dir(repo: &Repo) -> PathBuf {
    repo.hall_dir().join("cache").join("verified")
}

fn cache_path(repo: &Repo, sha: &str) -> PathBuf {
    verified_dir(repo).join(format!("{sha}.toml"))
}

/// A marker the cache keeps for a tip with no `.hallmark.toml`.
const ABSENT: &str = "# hallmark: no .hallmark.toml at this commit\n";

/// The committed `.hallmark.toml` text at `sha` (`None` when absent), verified on its
/// first read and cached by commit after it.
fn committed_text(repo: &Repo, sha: &str) -> Result<Option<String>> {
    let cached = cache_path(repo, sha);
    if let Ok(text) = std::fs::read_to_string(&cached) {
        return Ok((text != ABSENT).then_some(text));
    }
    let text = file_at(repo, sha, FILE_NAME)?.map(|b| String::from_utf8_lossy(&b).into_owned());
    keep(repo, &cached, text.as_deref().unwrap_or(ABSENT).as_bytes());
    Ok(text)
}

/// Writes a cache file under the journal, when there is a journal: a repository `hall
/// init` hasn't set up gets no `hallmark/` directory from a read. A cache that can't be
/// written (a confined session's read-only journal) only costs the next call a read.
fn keep(repo: &Repo, path: &Path, bytes: &[u8]) {
    if !repo.hall_dir().is_dir() {
        return;
    }
    if let Some(dir) = path.parent()
        && std::fs::create_dir_all(dir).is_ok()
    {
        let _ = crate::journal::file::write_atomic(path, bytes);
    }
}

/// The configuration committed at `sha` (the defaults when it has no `.hallmark.toml`),
/// read as the rules are; `shown` names the commit in a parse error.
pub fn config_at(repo: &Repo, sha: &str, shown: &str) -> Result<Config> {
    match committed_text(repo, sha)? {
        Some(text) => {
            let shown = PathBuf::from(format!("{FILE_NAME} at {shown}"));
            Ok(Config::parse(&text, &shown)?)
        }
        None => Ok(Config::default()),
    }
}

/// The rules in effect for `repo`: the base branch's committed `.hallmark.toml`.
///
/// A committed file that doesn't parse, or whose objects don't match their names, is an
/// error naming the commit, so a person fixes it; the hooks then gate with the defaults
/// (see `hooks::initialized`), and the loop runs nothing on it.
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
    let (mut config, committed) = match committed_text(repo, &tip.sha)? {
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
        .and_then(|t| committed_text(repo, &t.sha).ok().flatten());
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
    use crate::git::tests::git;

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

    #[test]
    fn the_tip_is_origins_when_the_local_base_is_behind_and_the_local_one_when_they_diverge() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("r");
        std::fs::create_dir_all(&root).unwrap();
        git(&root, &["init", "-q", "-b", "main"]);
        git(&root, &["commit", "-q", "--allow-empty", "-m", "one"]);
        let one = git(&root, &["rev-parse", "HEAD"]);
        git(&root, &["commit", "-q", "--allow-empty", "-m", "two"]);
        let two = git(&root, &["rev-parse", "HEAD"]);
        let repo = Repo::discover(&root).unwrap();
        std::fs::create_dir_all(repo.hall_dir()).unwrap();
        let tip = |r: &Repo| base_tip(r, "main").unwrap();
        // Origin ahead of the local base.
        git(&root, &["update-ref", "refs/remotes/origin/main", &two]);
        git(&root, &["update-ref", "refs/heads/main", &one]);
        let t = tip(&repo);
        assert_eq!(
            (t.reference.as_str(), t.sha.as_str()),
            ("refs/remotes/origin/main", two.as_str())
        );
        assert_eq!(t.diverged, None);
        // The answer is cached by the pair: it stands without asking git again.
        let cached = verified_dir(&repo)
            .join("tips")
            .join(format!("{one}-{two}"));
        assert_eq!(std::fs::read_to_string(cached).unwrap(), "remote");
        // The local base ahead.
        git(&root, &["update-ref", "refs/heads/main", &two]);
        git(&root, &["update-ref", "refs/remotes/origin/main", &one]);
        assert_eq!(tip(&repo).reference, "refs/heads/main");
        // Diverged: the local one, naming origin's.
        git(&root, &["checkout", "-q", "--detach", &one]);
        git(&root, &["commit", "-q", "--allow-empty", "-m", "three"]);
        let three = git(&root, &["rev-parse", "HEAD"]);
        git(&root, &["update-ref", "refs/remotes/origin/main", &three]);
        let t = tip(&repo);
        assert_eq!(
            (t.reference.as_str(), t.sha.as_str()),
            ("refs/heads/main", two.as_str())
        );
        assert_eq!(t.diverged.as_deref(), Some(three.as_str()));
    }
}
