//! The typed adapter over the `git` subprocess, plus native repository discovery.
//!
//! Every git process the project starts is started here: the functions below own the
//! arguments, the environment and the Rust types of the output, and nothing outside this
//! module spells a git command line (`tests/layers.rs` checks it). Failures are
//! [`GitError`]s that keep git's own message; what to do about them is the caller's to
//! say.
//!
//! Discovery reads `.git` files directly instead of spawning `git rev-parse`, because a
//! hook runs on every tool call and a subprocess costs more than the rest of the hook.
//!
//! The submodules split the commands by what they do: `discover` finds the repository a
//! directory is in, `read` asks git what is there, `changes` changes something, and
//! `committed`, `notes`, `refs` and `interdiff` each own one narrower matter (verified
//! committed files, notes, refs read natively, diffs of diffs).
//! This module holds what they all run through: one `Invocation` per git process, and
//! [`GitError`].

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

pub use crate::item::Sha;

mod changes;
mod committed;
mod discover;
mod interdiff;
mod notes;
mod read;
pub mod refs;
pub use changes::*;
pub use committed::{Committed, committed_files};
pub use discover::{Repo, normalize};
pub use interdiff::{interdiff, interdiff_lines};
pub use notes::{NotedCommit, add_note, merge_notes, note, noted_commit};
pub use read::*;
pub use refs::head_native;

/// Sets `core.hooksPath` to a place with no hooks for every git command `cmd` starts
/// (through git's `GIT_CONFIG_COUNT` variables, kept in addition to any already set), so
/// a command line from `.hallmark.toml` that the loop runs (`ship`, `update`…) runs no
/// hook an item's branch could have written.
pub fn without_hooks(cmd: &mut std::process::Command) {
    let n: usize = std::env::var("GIT_CONFIG_COUNT")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    cmd.env("GIT_CONFIG_COUNT", (n + 1).to_string())
        .env(format!("GIT_CONFIG_KEY_{n}"), "core.hooksPath")
        .env(
            format!("GIT_CONFIG_VALUE_{n}"),
            crate::platform::no_git_hooks(),
        );
}

/// Why a git operation failed.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    /// git could not be started at all (not installed, not on `PATH`).
    #[error("could not run git: {source}")]
    Spawn {
        #[source]
        source: std::io::Error,
    },
    /// git ran and refused: `args` is the command as run, `stderr` git's own words.
    #[error("git {args} failed: {stderr}")]
    Failed { args: String, stderr: String },
    /// The directory is not inside a repository.
    #[error("{} is not inside a git repository", dir.display())]
    NotARepo { dir: PathBuf },
    /// git answered with something this adapter can't read.
    #[error("git {args} printed something unexpected: {what}")]
    Unexpected { args: String, what: String },
    /// A committed object whose content does not match its name, or a chain of objects
    /// that is broken ([`Committed`]): what it holds is not used.
    #[error("the committed object {oid} can't be trusted: {why}")]
    Unverified { oid: String, why: String },
}

pub type Result<T, E = GitError> = std::result::Result<T, E>;

/// One git process: the directory it runs in, and what it is given besides arguments.
struct Invocation<'a> {
    dir: &'a Path,
    /// `HALL_ACTOR` for git's own hooks and for Hallmark's reference hook.
    actor: Option<&'a str>,
    input: Option<&'a [u8]>,
}

impl<'a> Invocation<'a> {
    fn at(dir: &'a Path) -> Invocation<'a> {
        Invocation {
            dir,
            actor: None,
            input: None,
        }
    }

    fn actor(mut self, actor: &'a str) -> Self {
        self.actor = Some(actor);
        self
    }

    fn input(mut self, bytes: &'a [u8]) -> Self {
        self.input = Some(bytes);
        self
    }

    /// git with `args` in the directory, as the actor. No hook runs for git commands
    /// Hallmark makes: a relative `core.hooksPath` would run scripts from whatever branch
    /// is checked out (an item's).
    fn command(&self, args: &[&str]) -> std::process::Command {
        let mut cmd = crate::platform::program("git");
        cmd.arg("-c")
            .arg(format!(
                "core.hooksPath={}",
                crate::platform::no_git_hooks()
            ))
            .arg("-C")
            .arg(self.dir)
            .args(args);
        if let Some(actor) = self.actor {
            cmd.env("HALL_ACTOR", actor);
        }
        cmd
    }

    /// Runs git and returns the raw output, whatever the exit code.
    fn output(&self, args: &[&str]) -> Result<Output> {
        let mut cmd = self.command(args);
        let spawn = |source| GitError::Spawn { source };
        let Some(input) = self.input else {
            return cmd.stdin(Stdio::null()).output().map_err(spawn);
        };
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(spawn)?;
        // git reads all of its input before it answers, so writing first can't deadlock.
        if let Some(mut stdin) = child.stdin.take() {
            use std::io::Write;
            stdin.write_all(input).map_err(spawn)?;
        }
        child.wait_with_output().map_err(spawn)
    }

    /// Starts git with piped stdin and stdout (stderr discarded), for a caller that
    /// talks to it ([`Committed`]).
    fn spawn(&self, args: &[&str]) -> Result<std::process::Child> {
        let mut cmd = self.command(args);
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|source| GitError::Spawn { source })
    }

    /// Runs git and returns its stdout with trailing white space trimmed, or git's
    /// message when it fails.
    fn run(&self, args: &[&str]) -> Result<String> {
        let out = self.output(args)?;
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).trim_end().to_string())
        } else {
            Err(GitError::Failed {
                args: args.join(" "),
                stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
            })
        }
    }

    fn succeeds(&self, args: &[&str]) -> bool {
        self.output(args).is_ok_and(|o| o.status.success())
    }
}

fn run(dir: &Path, args: &[&str]) -> Result<String> {
    Invocation::at(dir).run(args)
}

fn output(dir: &Path, args: &[&str]) -> Result<Output> {
    Invocation::at(dir).output(args)
}

fn succeeds(dir: &Path, args: &[&str]) -> bool {
    Invocation::at(dir).succeeds(args)
}

/// A full object name from git's output, or [`GitError::Unexpected`].
fn sha(args: &[&str], text: String) -> Result<Sha> {
    let text = text.trim().to_string();
    if crate::item::sha::is_full(&text) {
        Ok(Sha::new(text))
    } else {
        Err(GitError::Unexpected {
            args: args.join(" "),
            what: format!("`{text}` is not an object name"),
        })
    }
}

/// `git --version`'s first line, when git runs.
pub fn version() -> Option<String> {
    let out = output(Path::new("."), &["--version"]).ok()?;
    crate::platform::first_line(&out)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::process::Command;

    /// git in `dir` with no user config and a fixed identity; panics when it fails.
    pub(crate) fn git(dir: &Path, args: &[&str]) -> String {
        let out = Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@t")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@t")
            .output()
            .expect("git");
        assert!(out.status.success(), "{args:?}");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    #[test]
    fn native_head_agrees_with_git_for_loose_packed_detached_and_worktree_heads() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("r");
        std::fs::create_dir_all(&root).expect("mkdir");
        git(&root, &["init", "-q", "-b", "main"]);
        git(&root, &["commit", "-q", "--allow-empty", "-m", "one"]);
        let check = |d: &Path| {
            let repo = Repo::discover(d).expect("repo");
            assert_eq!(
                head_native(&repo),
                Some(Sha::new(git(d, &["rev-parse", "HEAD"]))),
                "{}",
                d.display()
            );
        };
        check(&root);
        git(&root, &["pack-refs", "--all"]);
        check(&root);
        git(&root, &["commit", "-q", "--allow-empty", "-m", "two"]);
        check(&root);
        let wt = dir.path().join("wt");
        git(
            &root,
            &[
                "worktree",
                "add",
                "-q",
                "-b",
                "side",
                wt.to_str().expect("utf8"),
            ],
        );
        git(&wt, &["commit", "-q", "--allow-empty", "-m", "three"]);
        check(&wt);
        git(&root, &["checkout", "-q", "--detach", "HEAD~1"]);
        check(&root);
    }
}
