//! Finding the repository a directory is in. The ordinary layout is read from the
//! `.git` files directly, because a hook runs on every tool call and a git process costs
//! more than the rest of the hook; anything unusual is asked of `git rev-parse`.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use super::{GitError, Result, output};

/// Where a repository's pieces are, as seen from one directory inside it.
#[derive(Clone, Debug, PartialEq)]
pub struct Repo {
    /// The top of the checkout the directory is in (the main checkout or a worktree).
    pub toplevel: PathBuf,
    /// The git dir of that checkout (`.git`, or `.git/worktrees/<name>`).
    pub git_dir: PathBuf,
    /// The common dir shared by every worktree.
    pub common_dir: PathBuf,
    /// The main checkout, where `.hallmark.toml` is read from.
    pub main_root: PathBuf,
}

impl Repo {
    /// Finds the repository that contains `start`, without running git when the layout
    /// is the ordinary one; falls back to `git rev-parse` otherwise.
    pub fn discover(start: &Path) -> Result<Repo> {
        if std::env::var_os("GIT_DIR").is_some() {
            return discover_with_git(start);
        }
        match discover_natively(start) {
            Native::Found(repo) => Ok(repo),
            // No `.git` anywhere above: not a repository, and no need to ask git.
            Native::Nothing => Err(not_a_repo(start)),
            Native::Unusual => discover_with_git(start),
        }
    }

    /// `<common>/hallmark`, the journal's home.
    pub fn hall_dir(&self) -> PathBuf {
        self.common_dir.join("hallmark")
    }

    /// The repository's short name, for templates (`{repo}`).
    pub fn name(&self) -> String {
        self.main_root
            .file_name()
            .and_then(OsStr::to_str)
            .unwrap_or("repo")
            .to_string()
    }

    /// Whether `toplevel` is a linked worktree rather than the main checkout.
    pub fn is_linked_worktree(&self) -> bool {
        self.git_dir != self.common_dir
    }
}

/// What native discovery found.
enum Native {
    Found(Repo),
    /// A layout this reader doesn't handle (bare repos, odd common dirs): ask git.
    Unusual,
    /// No `.git` in any parent.
    Nothing,
}

fn discover_natively(start: &Path) -> Native {
    match find_natively(start) {
        Ok(Some(repo)) => Native::Found(repo),
        Ok(None) => Native::Nothing,
        Err(()) => Native::Unusual,
    }
}

fn find_natively(start: &Path) -> Result<Option<Repo>, ()> {
    let start = absolute(start);
    for dir in start.ancestors() {
        let dot_git = dir.join(".git");
        let meta = match std::fs::metadata(&dot_git) {
            Ok(m) => m,
            Err(_) => continue,
        };
        let git_dir = if meta.is_dir() {
            dot_git
        } else {
            let text = std::fs::read_to_string(&dot_git).map_err(|_| ())?;
            let target = text.strip_prefix("gitdir:").ok_or(())?.trim();
            let p = PathBuf::from(target);
            if p.is_absolute() { p } else { dir.join(p) }
        };
        let common_dir = match std::fs::read_to_string(git_dir.join("commondir")) {
            Ok(c) => {
                let p = PathBuf::from(c.trim());
                normalize(&if p.is_absolute() { p } else { git_dir.join(p) })
            }
            Err(_) => git_dir.clone(),
        };
        // Only the plain layout (`<main>/.git`) is handled here; anything else asks git.
        if common_dir.file_name() != Some(OsStr::new(".git")) {
            return Err(());
        }
        let main_root = common_dir.parent().ok_or(())?.to_path_buf();
        return Ok(Some(Repo {
            toplevel: dir.to_path_buf(),
            git_dir: normalize(&git_dir),
            common_dir,
            main_root,
        }));
    }
    Ok(None)
}

fn discover_with_git(start: &Path) -> Result<Repo> {
    let out = output(
        start,
        &[
            "rev-parse",
            "--path-format=absolute",
            "--show-toplevel",
            "--git-dir",
            "--git-common-dir",
        ],
    )?;
    if !out.status.success() {
        return Err(not_a_repo(start));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines = text.lines();
    let (Some(top), Some(git_dir), Some(common)) = (lines.next(), lines.next(), lines.next())
    else {
        return Err(not_a_repo(start));
    };
    let common_dir = PathBuf::from(common);
    let main_root = if common_dir.file_name() == Some(OsStr::new(".git")) {
        common_dir
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from(top))
    } else {
        PathBuf::from(top)
    };
    Ok(Repo {
        toplevel: PathBuf::from(top),
        git_dir: PathBuf::from(git_dir),
        common_dir,
        main_root,
    })
}

fn not_a_repo(dir: &Path) -> GitError {
    GitError::NotARepo {
        dir: dir.to_path_buf(),
    }
}

fn absolute(p: &Path) -> PathBuf {
    // Canonical paths, so a worktree reached through a symlink matches the path git
    // records for it.
    if let Ok(c) = crate::platform::canonicalize(p) {
        return c;
    }
    if p.is_absolute() {
        normalize(p)
    } else {
        std::env::current_dir()
            .map(|c| normalize(&c.join(p)))
            .unwrap_or_else(|_| p.to_path_buf())
    }
}

/// Removes `.` and `..` lexically (paths from `.git` files are absolute or simple).
pub fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}
