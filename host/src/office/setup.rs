//! The repository's `setup` commands (`npm ci`, `uv sync --frozen`), run in the loop's
//! checkout before its checks.
//!
//! The loop's checkout is fresh and lives outside the repository's folder tree, so it
//! has none of the dependencies the main checkout installed. Setup installs them, once
//! per checkout: a stamp next to the checkout records a fingerprint of the setup
//! commands and of the tracked lockfiles and manifests they read, and setup runs again
//! only when that fingerprint changes (a new lockfile, a new `setup` list) or the
//! checkout is new. What setup installs must be ignored by git (`node_modules/`,
//! `.venv/`): the checkout is cleaned of untracked files each time it moves.

use std::path::Path;

use sha2::{Digest, Sha256};

use super::checks::{Ran, write_log};
use super::missing::Missing;
use crate::error::{IoContext, Result};
use crate::git;
use crate::hall::{Ctx, Hall};
use crate::item::{Event, EventKind, ItemId, Sha};

/// Files whose content decides what setup installs, by name, wherever they are in the
/// tree (a monorepo has several).
const DEPENDENCY_FILES: &[&str] = &[
    "package.json",
    "package-lock.json",
    "npm-shrinkwrap.json",
    "yarn.lock",
    "pnpm-lock.yaml",
    "pnpm-workspace.yaml",
    "bun.lock",
    "bun.lockb",
    ".nvmrc",
    ".node-version",
    "pyproject.toml",
    "poetry.lock",
    "uv.lock",
    "Pipfile",
    "Pipfile.lock",
    "setup.py",
    "setup.cfg",
    ".python-version",
    "Cargo.toml",
    "Cargo.lock",
    "rust-toolchain.toml",
    "go.mod",
    "go.sum",
    "Gemfile",
    "Gemfile.lock",
    "composer.json",
    "composer.lock",
    "mix.exs",
    "mix.lock",
    "pubspec.lock",
    "flake.lock",
    ".tool-versions",
];

/// Whether the tracked file at `path` decides what setup installs: a known manifest or
/// lockfile, a `requirements*.txt`, or a path one of the `setup` commands names.
pub fn depends_on(path: &str, setup: &[String]) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    DEPENDENCY_FILES.contains(&name)
        || (name.starts_with("requirements") && name.ends_with(".txt"))
        || setup
            .iter()
            .any(|c| c.split_whitespace().any(|w| w == path))
}

/// The fingerprint of a setup: its commands, the OS, and the blobs of the tracked files
/// it depends on (`(path, blob)` pairs, as `git ls-tree` lists them).
pub fn fingerprint(setup: &[String], tracked: &[(String, String)]) -> String {
    let mut h = Sha256::new();
    for part in [std::env::consts::OS, &setup.join("\n")] {
        h.update(part.as_bytes());
        h.update([0]);
    }
    let mut files: Vec<&(String, String)> = tracked
        .iter()
        .filter(|(p, _)| depends_on(p, setup))
        .collect();
    files.sort();
    for (path, blob) in files {
        h.update(path.as_bytes());
        h.update([0]);
        h.update(blob.as_bytes());
        h.update([0]);
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// Why the checkout could not be set up.
pub struct SetupFailed {
    pub command: String,
    pub exit_code: i32,
    /// The last lines of its output.
    pub tail: String,
    /// The whole output, under `runs/logs`.
    pub log: String,
    /// What it could not find, when that is why it failed.
    pub missing: Option<Missing>,
}

/// The last `n` non-empty lines of `output`.
pub fn tail(output: &str, n: usize) -> String {
    let lines: Vec<&str> = output
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.is_empty())
        .collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// Runs the `setup` commands in `dir` (item `id`'s loop checkout at `sha`) unless they
/// already ran there for the same fingerprint. Each run becomes a `setup_run` event in
/// `events`; a failure stops at that command and is returned, and the stamp is left
/// alone so the next round tries again.
pub fn prepare(
    jail: &crate::hall::confine::Jail,
    hall: &Hall,
    ctx: &Ctx,
    id: ItemId,
    sha: &Sha,
    dir: &Path,
    events: &mut Vec<Event>,
) -> Result<Option<SetupFailed>> {
    let setup = &hall.config.setup;
    if setup.is_empty() {
        return Ok(None);
    }
    let tracked = git::tracked_blobs(dir, sha)?;
    let print = fingerprint(setup, &tracked);
    let stamp = crate::hall::worktree::setup_stamp_path(hall, id);
    if std::fs::read_to_string(&stamp).is_ok_and(|s| s.trim() == print) {
        return Ok(None);
    }
    for command in setup {
        let r = super::checks::run_command(
            jail,
            hall,
            crate::hall::confine::Phase::Setup,
            command,
            dir,
            id,
        )?;
        let failed = r.exit_code != 0;
        let log = if failed {
            Some(write_log(hall, ctx, id, &format!("setup {command}"), &r)?)
        } else {
            None
        };
        let shown = failed.then(|| tail(&r.output, 20));
        events.push(ctx.event(
            Some(id),
            EventKind::SetupRun {
                sha: sha.clone(),
                command: command.clone(),
                exit_code: r.exit_code,
                duration_ms: r.duration_ms,
                output: shown.clone(),
                log: log.clone(),
            },
        ));
        if let (Some(tail), Some(log)) = (shown, log) {
            return Ok(Some(failure(command, &r, tail, log)));
        }
    }
    crate::journal::file::write_atomic(&stamp, format!("{print}\n").as_bytes()).at(&stamp)?;
    Ok(None)
}

fn failure(command: &str, r: &Ran, tail: String, log: String) -> SetupFailed {
    SetupFailed {
        command: command.to_string(),
        exit_code: r.exit_code,
        tail,
        log,
        missing: super::missing::classify(command, r.exit_code, &r.output),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[(&str, &str)]) -> Vec<(String, String)> {
        files
            .iter()
            .map(|(p, b)| (p.to_string(), b.to_string()))
            .collect()
    }

    #[test]
    fn only_lockfiles_manifests_and_named_files_move_the_fingerprint() {
        let setup = vec!["npm ci".to_string()];
        let base = tree(&[("package-lock.json", "a1"), ("src/index.js", "b1")]);
        let same = fingerprint(&setup, &base);
        // Source files change every round: setup stays done.
        let code = tree(&[("package-lock.json", "a1"), ("src/index.js", "b2")]);
        assert_eq!(fingerprint(&setup, &code), same);
        // A new lockfile, anywhere in the tree, is a new setup.
        let lock = tree(&[("package-lock.json", "a2"), ("src/index.js", "b1")]);
        assert_ne!(fingerprint(&setup, &lock), same);
        let nested = tree(&[
            ("package-lock.json", "a1"),
            ("src/index.js", "b1"),
            ("web/yarn.lock", "c1"),
        ]);
        assert_ne!(fingerprint(&setup, &nested), same);
        // So is a new setup list.
        assert_ne!(fingerprint(&["npm install".to_string()], &base), same);
        // A file the setup names is followed too.
        let pip = vec!["pip install -r deps/dev.in".to_string()];
        let a = fingerprint(&pip, &tree(&[("deps/dev.in", "d1")]));
        let b = fingerprint(&pip, &tree(&[("deps/dev.in", "d2")]));
        assert_ne!(a, b);
        assert!(depends_on("requirements-dev.txt", &[]));
        assert!(!depends_on("docs/requirements.md", &[]));
    }

    #[test]
    fn the_tail_is_the_last_lines_said() {
        assert_eq!(tail("a\nb\n\nc\n\n", 2), "b\nc");
        assert_eq!(tail("only\n", 5), "only");
        assert_eq!(tail("", 5), "");
    }
}
