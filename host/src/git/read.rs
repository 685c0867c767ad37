//! The git commands that only read: revisions, history and diffs, the working tree's
//! state, objects and configuration. Changing something is `changes`'.

use std::path::{Path, PathBuf};

use super::{GitError, Invocation, Result, Sha, normalize, output, run, sha, succeeds};

/// The commit (or other object) `rev` names.
pub fn rev_parse(dir: &Path, rev: &str) -> Result<Sha> {
    let args = ["rev-parse", "--verify", "--quiet", "--end-of-options", rev];
    sha(&args, run(dir, &args)?)
}

/// The commit `rev` names, or `None` when it names none.
pub fn commit(dir: &Path, rev: &str) -> Option<Sha> {
    rev_parse(dir, &format!("{rev}^{{commit}}")).ok()
}

/// The tree of commit `rev`.
pub fn tree_of(dir: &Path, rev: &str) -> Result<Sha> {
    rev_parse(dir, &format!("{rev}^{{tree}}"))
}

/// The commit HEAD is at.
pub fn head(dir: &Path) -> Result<Sha> {
    let args = ["rev-parse", "HEAD"];
    sha(&args, run(dir, &args)?)
}

/// The branch checked out at `dir`; `None` on a detached HEAD.
pub fn current_branch(dir: &Path) -> Option<String> {
    run(dir, &["symbolic-ref", "--quiet", "--short", "HEAD"])
        .ok()
        .filter(|b| !b.is_empty())
}

/// Paths with uncommitted changes, untracked files included (they would not be in the
/// frozen commit), ignored files excluded.
pub fn dirty_paths(dir: &Path) -> Result<Vec<String>> {
    Ok(dirty_entries(dir)?.into_iter().map(|(_, p)| p).collect())
}

/// [`dirty_paths`] with whether each path is untracked (`git add` has never seen it).
pub fn dirty_entries(dir: &Path) -> Result<Vec<(bool, String)>> {
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
        .map(|l| (l.starts_with("??"), l[3..].to_string()))
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

/// [`is_ancestor`] with replacement refs ignored: for choosing which copy of the base
/// the rules are read from, where a `refs/replace` entry must not rewrite the history.
pub fn is_ancestor_as_committed(dir: &Path, ancestor: &str, descendant: &str) -> bool {
    succeeds(
        dir,
        &[
            "--no-replace-objects",
            "merge-base",
            "--is-ancestor",
            ancestor,
            descendant,
        ],
    )
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
    let mut input = String::new();
    for n in names {
        // A name with a newline would be two queries; it can't name anything anyway.
        input.push_str(&n.replace(['\n', '\r'], " "));
        input.push('\n');
    }
    let out = Invocation::at(dir).input(input.as_bytes()).output(&[
        "--no-replace-objects",
        "cat-file",
        "--batch",
    ])?;
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

/// One path that differs between two trees, as [`tree_changes`] lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TreeChange {
    /// The mode on the `to` side (`100644`, `120000` for a symbolic link, `000000` when
    /// the path goes away).
    pub mode: String,
    /// The object on the `to` side.
    pub oid: String,
    /// The path from the top of the checkout.
    pub path: String,
}

/// The paths whose entry differs between the trees of `from` and `to`, recursively,
/// without rename detection (`git diff-tree -r`): what moving a working tree from one
/// to the other writes. `Err` when either side doesn't resolve to a tree.
pub fn tree_changes(dir: &Path, from: &str, to: &str) -> Result<Vec<TreeChange>> {
    let text = run(
        dir,
        &[
            "--no-replace-objects",
            "diff-tree",
            "-r",
            "-z",
            "--no-renames",
            "--no-commit-id",
            "--end-of-options",
            from,
            to,
            // A name that is both a revision and a file here (a branch `evil` and a
            // directory `evil/`) would otherwise fail as ambiguous, and the caller would
            // take it for a path while `git checkout evil` checks out the branch.
            "--",
        ],
    )?;
    let mut out = Vec::new();
    let mut fields = text.split('\0');
    while let Some(meta) = fields.next() {
        let Some(path) = fields.next() else {
            break;
        };
        let parts: Vec<&str> = meta.trim_start_matches(':').split(' ').collect();
        if parts.len() >= 4 {
            out.push(TreeChange {
                mode: parts[1].to_string(),
                oid: parts[3].to_string(),
                path: path.to_string(),
            });
        }
    }
    Ok(out)
}

/// The git directory of the checkout at `dir`, as an absolute path.
pub fn absolute_git_dir(dir: &Path) -> Result<PathBuf> {
    run(dir, &["rev-parse", "--absolute-git-dir"]).map(PathBuf::from)
}

/// A file's bytes at `rev` (`None` when the revision has no such file). The one way a
/// file is read from a branch rather than a working tree.
pub fn show_file(dir: &Path, rev: &str, path: &str) -> Result<Option<Vec<u8>>> {
    let spec = format!("{rev}:{path}");
    let out = output(dir, &["show", &spec])?;
    Ok(out.status.success().then_some(out.stdout))
}

/// One value of git's configuration as seen from `dir` (`user.email`).
pub fn config_value(dir: &Path, key: &str) -> Option<String> {
    run(dir, &["config", "--get", key])
        .ok()
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
}

/// A git alias's definition, without running the file-system monitor git may be
/// configured with (a program the repository names).
pub fn alias(dir: &Path, name: &str) -> Option<String> {
    let key = format!("alias.{name}");
    run(
        dir,
        &["-c", "core.fsmonitor=false", "config", "--get", &key],
    )
    .ok()
    .filter(|v| !v.is_empty())
}

/// Every configuration entry whose key matches `regexp`, as (key, value).
pub fn config_matching(dir: &Path, regexp: &str) -> Result<Vec<(String, String)>> {
    let out = output(dir, &["config", "--get-regexp", regexp])?;
    // Exit 1 means "no such key"; anything else is a real failure.
    if !out.status.success() && out.status.code() != Some(1) {
        return Err(GitError::Failed {
            args: format!("config --get-regexp {regexp}"),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| {
            let (k, v) = l.split_once(' ').unwrap_or((l, ""));
            (k.to_string(), v.to_string())
        })
        .collect())
}

/// The remotes of the repository at `root` whose URL is a path on this machine (a bare
/// `origin` next to the checkout), by name, as absolute paths.
pub fn local_remotes(root: &Path) -> Vec<(String, PathBuf)> {
    let Ok(entries) = config_matching(root, r"^remote\..*\.(url|pushurl)$") else {
        return Vec::new();
    };
    entries
        .into_iter()
        .filter_map(|(key, url)| {
            let path = url.strip_prefix("file://").unwrap_or(&url).to_string();
            // `host:path` and `scheme://…` name other machines; a drive letter has a
            // colon too, but then the path is absolute.
            let local =
                Path::new(&path).is_absolute() || !(path.contains("://") || path.contains(':'));
            let name = key.split('.').nth(1).unwrap_or("").to_string();
            local.then(|| (name, normalize(&root.join(&path))))
        })
        .collect()
}

/// HEAD's commit and subject line.
pub fn last_commit(dir: &Path) -> Option<(Sha, String)> {
    let line = run(dir, &["log", "-1", "--format=%H%x00%s"]).ok()?;
    let (sha, subject) = line.split_once('\0')?;
    Some((Sha::new(sha), subject.to_string()))
}

/// Paths staged in the index (`git diff --cached --name-only`), or with `unstaged`, the
/// paths changed in the working tree but not staged.
pub fn changed_paths(dir: &Path, unstaged: bool) -> Result<Vec<String>> {
    let mut args = vec!["-c", "core.fsmonitor=false", "diff", "--name-only"];
    if !unstaged {
        args.push("--cached");
    }
    Ok(run(dir, &args)?.lines().map(str::to_string).collect())
}

/// Every tracked path, relative to the top of the checkout.
pub fn tracked_files(dir: &Path) -> Result<Vec<String>> {
    let text = run(dir, &["ls-files", "-z"])?;
    Ok(text
        .split('\0')
        .filter(|p| !p.is_empty())
        .map(str::to_string)
        .collect())
}

/// The diff from `from` to `to`.
pub fn diff(dir: &Path, from: &str, to: &str) -> Result<String> {
    run(dir, &["diff", &format!("{from}..{to}")])
}

/// The best common ancestor of two commits.
pub fn merge_base(dir: &Path, a: &str, b: &str) -> Result<Sha> {
    let args = ["merge-base", a, b];
    sha(&args, run(dir, &args)?)
}

/// `git patch-id --stable` of the diff from `from` to `to`: the same change gives the
/// same id whatever it was applied onto. `None` when there is no diff or git fails.
pub fn patch_id(dir: &Path, from: &str, to: &str) -> Option<String> {
    let out = output(dir, &["diff", &format!("{from}..{to}")]).ok()?;
    if !out.status.success() {
        return None;
    }
    let id = Invocation::at(dir)
        .input(&out.stdout)
        .run(&["patch-id", "--stable"])
        .ok()?;
    id.split_whitespace().next().map(str::to_string)
}

/// The paths that differ between two commits (`git diff --name-only from..to`).
pub fn files_between(dir: &Path, from: &str, to: &str) -> Result<Vec<String>> {
    let range = format!("{from}..{to}");
    let out = run(
        dir,
        &["-c", "core.quotePath=false", "diff", "--name-only", &range],
    )?;
    Ok(out.lines().map(str::to_string).collect())
}

/// Whether the repository has a remote called `name`.
pub fn has_remote(dir: &Path, name: &str) -> bool {
    succeeds(dir, &["remote", "get-url", name])
}

/// How many of the last `window` first-parent commits up to `tip` changed each path.
pub fn recent_path_counts(dir: &Path, tip: &str, window: u32) -> Result<Vec<(String, u32)>> {
    if window == 0 {
        return Ok(Vec::new());
    }
    let n = window.to_string();
    let out = run(
        dir,
        &[
            "-c",
            "core.quotePath=false",
            "log",
            "--first-parent",
            "--diff-merges=first-parent",
            "-n",
            &n,
            "--name-only",
            "--format=",
            tip,
        ],
    )?;
    let mut counts: std::collections::BTreeMap<String, u32> = std::collections::BTreeMap::new();
    for line in out.lines().map(str::trim).filter(|l| !l.is_empty()) {
        *counts.entry(line.to_string()).or_default() += 1;
    }
    Ok(counts.into_iter().collect())
}

/// The commits in `from..to`, oldest first, each with the paths it changed.
pub fn commits_with_files(dir: &Path, from: &str, to: &str) -> Result<Vec<(Sha, Vec<String>)>> {
    let range = format!("{from}..{to}");
    let out = run(
        dir,
        &[
            "-c",
            "core.quotePath=false",
            "log",
            "--reverse",
            "--no-merges",
            "--name-only",
            "--format=%x00%H",
            &range,
        ],
    )?;
    let mut commits: Vec<(Sha, Vec<String>)> = Vec::new();
    for line in out.lines() {
        if let Some(sha) = line.strip_prefix('\0') {
            commits.push((Sha::new(sha.trim()), Vec::new()));
        } else if let Some((_, files)) = commits.last_mut()
            && !line.trim().is_empty()
        {
            files.push(line.to_string());
        }
    }
    Ok(commits)
}

/// The committer time of `rev`, in seconds since the Unix epoch.
pub fn commit_time(dir: &Path, rev: &str) -> Option<u64> {
    run(dir, &["show", "-s", "--format=%ct", rev])
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// Whether the tree of `rev` has any file under `dir_path` (`.github/workflows`, say).
pub fn has_files_under(dir: &Path, rev: &str, dir_path: &str) -> bool {
    run(
        dir,
        &["ls-tree", "--name-only", rev, &format!("{dir_path}/")],
    )
    .is_ok_and(|out| !out.trim().is_empty())
}
