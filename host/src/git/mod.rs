//! A typed adapter over the `git` subprocess, plus native repository discovery.
//!
//! Discovery reads `.git` files directly instead of spawning `git rev-parse`, because a
//! hook runs on every tool call and a subprocess costs more than the rest of the hook.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::error::{Code, HallError, Result};

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
    let out = Command::new("git")
        .arg("-C")
        .arg(start)
        .args([
            "rev-parse",
            "--path-format=absolute",
            "--show-toplevel",
            "--git-dir",
            "--git-common-dir",
        ])
        .output()
        .map_err(|e| {
            HallError::new(Code::CommandFailed, format!("could not run git: {e}"))
                .hint("hall doctor")
        })?;
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

pub fn not_a_repo(dir: &Path) -> HallError {
    HallError::new(
        Code::NotARepo,
        format!("{} is not inside a git repository", dir.display()),
    )
    .hint("git init")
    .hint("cd <your repository>")
}

fn absolute(p: &Path) -> PathBuf {
    // Canonical paths, so a worktree reached through a symlink matches the path git
    // records for it.
    if let Ok(c) = std::fs::canonicalize(p) {
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

/// Runs git in `dir` and returns its trimmed stdout, or a `COMMAND_FAILED` error with
/// git's own message.
pub fn run(dir: &Path, args: &[&str]) -> Result<String> {
    let out = output(dir, args)?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim_end().to_string())
    } else {
        Err(HallError::new(
            Code::CommandFailed,
            format!(
                "git {} failed: {}",
                args.join(" "),
                String::from_utf8_lossy(&out.stderr).trim()
            ),
        )
        .hint("hall doctor"))
    }
}

/// Runs git and returns the raw output, whatever the exit code.
pub fn output(dir: &Path, args: &[&str]) -> Result<Output> {
    Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .map_err(|e| {
            HallError::new(Code::CommandFailed, format!("could not run git: {e}"))
                .hint("hall doctor")
        })
}

/// Whether `git` exits 0.
pub fn succeeds(dir: &Path, args: &[&str]) -> bool {
    output(dir, args)
        .map(|o| o.status.success())
        .unwrap_or(false)
}

pub fn head(dir: &Path) -> Result<String> {
    run(dir, &["rev-parse", "HEAD"])
}

/// HEAD's commit read from the files git keeps (HEAD, the loose ref, packed-refs), for
/// the hot path of a hook; `None` whenever the layout is anything but the plain one
/// (reftable, symbolic chains, a missing ref), and the caller then asks git.
pub fn head_native(repo: &Repo) -> Option<String> {
    let is_sha = |s: &str| s.len() == 40 && s.bytes().all(|b| b.is_ascii_hexdigit());
    let head = std::fs::read_to_string(repo.git_dir.join("HEAD")).ok()?;
    let head = head.trim();
    let Some(name) = head.strip_prefix("ref: ") else {
        return is_sha(head).then(|| head.to_string());
    };
    if !name.starts_with("refs/heads/") || name.contains("..") {
        return None;
    }
    if let Ok(loose) = std::fs::read_to_string(repo.common_dir.join(name)) {
        let loose = loose.trim();
        return is_sha(loose).then(|| loose.to_string());
    }
    let packed = std::fs::read_to_string(repo.common_dir.join("packed-refs")).ok()?;
    packed.lines().find_map(|line| {
        let (sha, r) = line.split_once(' ')?;
        (r == name && is_sha(sha)).then(|| sha.to_string())
    })
}

pub fn current_branch(dir: &Path) -> Option<String> {
    run(dir, &["symbolic-ref", "--quiet", "--short", "HEAD"])
        .ok()
        .filter(|b| !b.is_empty())
}

/// Paths with uncommitted changes, untracked files included (they would not be in the
/// frozen commit), ignored files excluded.
pub fn dirty_paths(dir: &Path) -> Result<Vec<String>> {
    // No optional locks: hall must not race the user's own git (or another hall) for
    // the index lock just to refresh stat data.
    let text = run(
        dir,
        &[
            "--no-optional-locks",
            "status",
            "--porcelain=v1",
            "--untracked-files=all",
        ],
    )?;
    Ok(text
        .lines()
        .filter(|l| l.len() > 3)
        .map(|l| l[3..].to_string())
        .collect())
}

/// Whether a rebase, merge, cherry-pick or revert is half-done in the checkout.
pub fn operation_in_progress(git_dir: &Path) -> bool {
    [
        "rebase-merge",
        "rebase-apply",
        "MERGE_HEAD",
        "CHERRY_PICK_HEAD",
        "REVERT_HEAD",
    ]
    .iter()
    .any(|f| git_dir.join(f).exists())
}

/// The base branch `hall init` proposes: origin's HEAD, else the current branch.
pub fn default_base(dir: &Path) -> String {
    if let Ok(r) = run(
        dir,
        &[
            "symbolic-ref",
            "--quiet",
            "--short",
            "refs/remotes/origin/HEAD",
        ],
    ) && let Some(b) = r.strip_prefix("origin/")
    {
        return b.to_string();
    }
    current_branch(dir).unwrap_or_else(|| "main".to_string())
}

/// One entry of `git worktree list --porcelain`.
#[derive(Clone, Debug, PartialEq)]
pub struct Worktree {
    pub path: PathBuf,
    pub branch: Option<String>,
}

pub fn worktrees(dir: &Path) -> Result<Vec<Worktree>> {
    let text = run(dir, &["worktree", "list", "--porcelain"])?;
    let mut out = Vec::new();
    let mut current: Option<Worktree> = None;
    for line in text.lines() {
        if let Some(p) = line.strip_prefix("worktree ") {
            out.extend(current.take());
            current = Some(Worktree {
                path: PathBuf::from(p),
                branch: None,
            });
        } else if let Some(b) = line.strip_prefix("branch ")
            && let Some(w) = current.as_mut()
        {
            w.branch = Some(b.strip_prefix("refs/heads/").unwrap_or(b).to_string());
        }
    }
    out.extend(current);
    Ok(out)
}

/// Whether `ancestor` is an ancestor of `descendant`.
pub fn is_ancestor(dir: &Path, ancestor: &str, descendant: &str) -> bool {
    succeeds(dir, &["merge-base", "--is-ancestor", ancestor, descendant])
}

pub fn branch_exists(dir: &Path, branch: &str) -> bool {
    succeeds(
        dir,
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("refs/heads/{branch}"),
        ],
    )
}

/// One object read by [`read_objects`].
#[derive(Clone, Debug, PartialEq)]
pub struct Object {
    pub oid: String,
    pub data: Vec<u8>,
}

/// Objects by name (`<rev>`, `<rev>:<path>`), read in one `git cat-file --batch` with
/// replacement refs ignored: `None` for a name that does not resolve.
pub fn read_objects(dir: &Path, names: &[String]) -> Result<Vec<Option<Object>>> {
    use std::io::Write;
    let failed = |e: std::io::Error| {
        HallError::new(Code::CommandFailed, format!("could not run git: {e}")).hint("hall doctor")
    };
    let mut child = Command::new("git")
        .arg("--no-replace-objects")
        .arg("-C")
        .arg(dir)
        .args(["cat-file", "--batch"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map_err(failed)?;
    let mut input = String::new();
    for n in names {
        // A name with a newline would be two queries; it can't name anything anyway.
        input.push_str(&n.replace(['\n', '\r'], " "));
        input.push('\n');
    }
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(input.as_bytes()).map_err(failed)?;
    }
    let out = child.wait_with_output().map_err(failed)?;
    let mut rest: &[u8] = &out.stdout;
    let mut answers = Vec::with_capacity(names.len());
    for _ in names {
        let Some(end) = rest.iter().position(|b| *b == b'\n') else {
            answers.push(None);
            continue;
        };
        let header = String::from_utf8_lossy(&rest[..end]).to_string();
        rest = &rest[end + 1..];
        let mut parts = header.split(' ');
        let (oid, size) = (
            parts.next(),
            parts.nth(1).and_then(|s| s.parse::<usize>().ok()),
        );
        match (oid, size) {
            (Some(oid), Some(size)) if rest.len() > size => {
                answers.push(Some(Object {
                    oid: oid.to_string(),
                    data: rest[..size].to_vec(),
                }));
                rest = &rest[size + 1..];
            }
            _ => answers.push(None),
        }
    }
    Ok(answers)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git(dir: &Path, args: &[&str]) -> String {
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
                Some(git(d, &["rev-parse", "HEAD"])),
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
