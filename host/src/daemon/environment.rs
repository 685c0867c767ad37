//! What the daemon runs, fixed once when it starts.
//!
//! The daemon runs `claude`, `gh`, `git`, `sh` and a configured fixer for every
//! registered repository, with the person's key. Found through `PATH` at each spawn,
//! any of them could be whatever an agent put first on `PATH` (`$PWD/bin`, a
//! `node_modules/.bin`, a directory `direnv` adds) or wrote into a directory on it
//! since. So at start the daemon keeps only the `PATH` entries no agent's checkout can
//! hold (never one inside a registered repository, any of its worktrees or the loop's
//! own checkouts, never a relative one), resolves each program on what is left to an
//! absolute path, pins both in the process ([`crate::platform::pin`]) so every later
//! pass starts exactly those, and records them in its state file
//! (`hall daemon status` shows them).

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Code, HallError, Result};

/// The daemon's programs and `PATH`, as resolved at its start.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Environment {
    /// The `PATH` every program the daemon starts is given.
    pub path: String,
    /// Each program the loop runs, by name, with the file it runs.
    pub programs: BTreeMap<String, String>,
    /// The `PATH` entries left out, each with why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refused: Vec<String>,
}

impl Environment {
    /// What [`crate::platform::pin`] takes.
    pub fn pinned(&self) -> crate::platform::Pinned {
        crate::platform::Pinned {
            path: OsString::from(&self.path),
            programs: self
                .programs
                .iter()
                .map(|(k, v)| (k.clone(), PathBuf::from(v)))
                .collect(),
        }
    }
}

/// The programs every daemon runs (the fixer's own comes from each repository's config).
fn programs() -> Vec<String> {
    let mut v: Vec<String> = ["git", "gh", "claude"].map(String::from).to_vec();
    v.push(
        if crate::platform::SHELL_IS_CMD {
            "cmd"
        } else {
            "sh"
        }
        .to_string(),
    );
    v
}

/// The places an agent's checkout can be: every registered repository's main checkout
/// and worktrees, and the loop's checkouts.
pub fn untrusted_places(repos: &[PathBuf]) -> Vec<PathBuf> {
    let mut places = Vec::new();
    for repo in repos {
        places.push(repo.clone());
        if let Ok(list) = crate::git::worktrees(repo) {
            places.extend(list.into_iter().map(|w| w.path));
        }
    }
    places.push(crate::platform::checkouts_dir(crate::platform::cache_dir()));
    places
        .into_iter()
        .map(|p| crate::platform::canonicalize(&p).unwrap_or(p))
        .collect()
}

/// `path` without the entries inside `untrusted` or relative ones, and each program of
/// `wanted` resolved on what is left. `own_dir` (the running `hall`'s directory) is kept
/// wherever it is: it is the program the person started. `git` must be found.
pub fn resolve(
    path: &std::ffi::OsStr,
    untrusted: &[PathBuf],
    own_dir: Option<&Path>,
    wanted: &[String],
) -> Result<Environment> {
    let mut kept: Vec<PathBuf> = Vec::new();
    let mut refused = Vec::new();
    for entry in std::env::split_paths(path) {
        let shown = entry.display().to_string();
        if entry.as_os_str().is_empty() || !entry.is_absolute() {
            refused.push(format!(
                "`{shown}`: a relative entry means whatever directory a program runs in"
            ));
            continue;
        }
        let real = crate::platform::canonicalize(&entry).unwrap_or_else(|_| entry.clone());
        let own = own_dir.is_some_and(|d| real == d);
        if !own && let Some(place) = untrusted.iter().find(|u| real.starts_with(u)) {
            refused.push(format!(
                "`{shown}`: inside {}, which an agent's checkout can write",
                place.display()
            ));
            continue;
        }
        if !kept.contains(&entry) {
            kept.push(entry);
        }
    }
    let joined = std::env::join_paths(&kept)
        .map_err(|e| HallError::internal(format!("PATH can't be put together again: {e}")))?;
    let mut programs = BTreeMap::new();
    for name in wanted {
        if let Some(file) = crate::platform::find_program(name, &joined) {
            programs.insert(name.clone(), file.display().to_string());
        }
    }
    if !programs.contains_key("git") {
        return Err(HallError::new(
            Code::CommandFailed,
            format!(
                "git is not on PATH outside the repositories, so the daemon can't run{}",
                if refused.is_empty() {
                    String::new()
                } else {
                    format!(" (left out: {})", refused.join("; "))
                }
            ),
        )
        .hint("hall doctor")
        .hint("hall daemon start"));
    }
    Ok(Environment {
        path: joined.to_string_lossy().into_owned(),
        programs,
        refused,
    })
}

/// The environment for a daemon over `repos` (every registered one when `None`),
/// from this process's `PATH`.
pub fn for_repos(repos: Option<&[PathBuf]>) -> Result<Environment> {
    let repos: Vec<PathBuf> = match repos {
        Some(r) => r.to_vec(),
        None => crate::hall::registry::registered(),
    };
    let mut wanted = programs();
    for repo in &repos {
        // A configured fix engine runs as its first word (`aider --yes`): that program
        // too is resolved now. A relative one (`./fix.sh`) runs from the checkout, as
        // its repository configured on the base branch.
        let fixer = crate::git::Repo::discover(repo)
            .ok()
            .and_then(|r| crate::hall::rules::rules(&r).ok())
            .map(|r| r.config.fixer)
            .unwrap_or_default();
        if let Some(first) = fixer.split_whitespace().next()
            && !first.contains('/')
            && !first.contains('\\')
            && !wanted.iter().any(|w| w == first)
        {
            wanted.push(first.to_string());
        }
    }
    let own = std::env::current_exe()
        .ok()
        .and_then(|e| crate::platform::canonicalize(&e).ok());
    let own_dir = own.as_deref().and_then(Path::parent);
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut env = resolve(&path, &untrusted_places(&repos), own_dir, &wanted)?;
    if let Some(exe) = own {
        env.programs
            .insert("hall".into(), exe.display().to_string());
    }
    Ok(env)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    fn program(dir: &Path, name: &str) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        std::fs::create_dir_all(dir).expect("mkdir");
        let file = dir.join(name);
        std::fs::write(&file, "#!/bin/sh\n").expect("write");
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        file
    }

    #[cfg(unix)]
    #[test]
    fn path_entries_in_a_repository_are_left_out_and_programs_resolve_past_them() {
        let root = tempfile::tempdir().expect("tempdir");
        let root = crate::platform::canonicalize(root.path()).expect("canonical");
        let repo = root.join("repo");
        let system = root.join("usr/bin");
        let planted = program(&repo.join("bin"), "claude");
        program(&repo.join("bin"), "git");
        let real_claude = program(&system, "claude");
        let real_git = program(&system, "git");
        let path = std::env::join_paths([
            repo.join("bin"),
            PathBuf::from("node_modules/.bin"),
            system.clone(),
        ])
        .expect("join");
        let env = resolve(
            &path,
            std::slice::from_ref(&repo),
            None,
            &["claude".into(), "git".into(), "gh".into()],
        )
        .expect("resolves");
        assert_eq!(env.path, system.display().to_string());
        assert_eq!(env.programs["claude"], real_claude.display().to_string());
        assert_eq!(env.programs["git"], real_git.display().to_string());
        assert!(!env.programs.contains_key("gh"), "gh is not installed here");
        assert_ne!(env.programs["claude"], planted.display().to_string());
        assert_eq!(env.refused.len(), 2, "{:?}", env.refused);
        assert!(env.refused[0].contains("inside"), "{:?}", env.refused);
        assert!(env.refused[1].contains("relative"), "{:?}", env.refused);
        // With only the repository's own git on PATH, the daemon does not start.
        let only = std::env::join_paths([repo.join("bin")]).expect("join");
        let e =
            resolve(&only, std::slice::from_ref(&repo), None, &["git".into()]).expect_err("no git");
        assert_eq!(e.code, Code::CommandFailed);
        assert!(e.message.contains("left out"), "{}", e.message);
        // The running hall's own directory is kept, wherever it is.
        let own = resolve(
            &path,
            std::slice::from_ref(&repo),
            Some(&repo.join("bin")),
            &["git".into()],
        )
        .expect("resolves");
        assert_eq!(
            own.programs["git"],
            repo.join("bin/git").display().to_string()
        );
    }
}
