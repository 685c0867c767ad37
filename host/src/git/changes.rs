//! The git commands that change something: fetches and pushes, rebases and merges,
//! worktrees and branches. Reading is `read`'s.

use std::path::Path;

use super::*;

/// Fetches `refspec` from `remote`, quietly.
pub fn fetch(dir: &Path, remote: &str, refspec: &str) -> Result<()> {
    run(dir, &["fetch", "--quiet", remote, refspec]).map(drop)
}

/// Fetches `branch` from `remote` (which moves its remote-tracking ref), giving up
/// after `limit`: the daemon's refresh of the base before it reads the rules, which
/// must never hold up a pass. git is told never to ask for credentials, and leaves
/// `FETCH_HEAD` alone; a fetch past its time is stopped with everything it started.
pub fn fetch_within(
    dir: &Path,
    remote: &str,
    branch: &str,
    limit: std::time::Duration,
) -> Result<()> {
    let args = [
        "fetch",
        "--quiet",
        "--no-tags",
        "--no-write-fetch-head",
        remote,
        branch,
    ];
    let mut cmd = crate::platform::program("git");
    super::without_hooks(&mut cmd);
    cmd.arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    crate::platform::own_process_group(&mut cmd);
    let mut child = cmd.spawn().map_err(|source| GitError::Spawn { source })?;
    let stderr = child.stderr.take();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        if let Some(mut e) = stderr {
            use std::io::Read;
            let _ = e.read_to_string(&mut text);
        }
        text
    });
    let started = std::time::Instant::now();
    let failed = |stderr: String| GitError::Failed {
        args: args.join(" "),
        stderr,
    };
    loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                let text = reader.join().unwrap_or_default();
                return if status.success() {
                    Ok(())
                } else {
                    Err(failed(text.trim().to_string()))
                };
            }
            Ok(None) if started.elapsed() < limit => {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            _ => {
                crate::platform::kill_process_group(child.id());
                let _ = child.kill();
                let _ = child.wait();
                return Err(failed(format!(
                    "stopped after {} s without an answer",
                    limit.as_secs()
                )));
            }
        }
    }
}

/// Rebases the checkout's branch onto `onto`. A conflict is aborted, leaving the branch
/// as it was, and answers `false`.
pub fn rebase(dir: &Path, onto: &str) -> Result<bool> {
    let out = output(dir, &["rebase", "--quiet", onto])?;
    if out.status.success() {
        return Ok(true);
    }
    let _ = run(dir, &["rebase", "--abort"]);
    Ok(false)
}

/// Merges `branch` into the checkout's branch with a merge commit (`--no-ff`) saying
/// `message`, and answers the new HEAD. A conflict is aborted, leaving both branches
/// and the checkout as they were, and answers the conflicting paths.
pub fn merge_no_ff(dir: &Path, branch: &str, message: &str) -> Result<Result<Sha, Vec<String>>> {
    let out = output(
        dir,
        &["merge", "--no-ff", "--no-edit", "-m", message, branch],
    )?;
    if out.status.success() {
        return head(dir).map(Ok);
    }
    let conflicted: Vec<String> = run(dir, &["diff", "--name-only", "--diff-filter=U"])
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect();
    let _ = run(dir, &["merge", "--abort"]);
    if conflicted.is_empty() {
        // Not a conflict: git refused the merge for another reason.
        return Err(GitError::Failed {
            args: format!("merge --no-ff {branch}"),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    Ok(Err(conflicted))
}

/// Adds a worktree at `path` for the existing `branch`.
pub fn worktree_add(root: &Path, path: &Path, branch: &str) -> Result<()> {
    let p = path.display().to_string();
    run(root, &["worktree", "add", &p, branch]).map(drop)
}

/// Adds a detached worktree at `path`, at commit `sha`.
pub fn worktree_add_detached(root: &Path, path: &Path, sha: &str) -> Result<()> {
    let p = path.display().to_string();
    run(root, &["worktree", "add", "--quiet", "--detach", &p, sha]).map(drop)
}

/// Forgets worktrees whose directories are gone.
pub fn worktree_prune(root: &Path) -> Result<()> {
    run(root, &["worktree", "prune"]).map(drop)
}

/// Removes the worktree at `path`, never by force: a dirty worktree stays, and git says
/// why.
pub fn worktree_remove(root: &Path, path: &Path) -> Result<()> {
    let p = path.display().to_string();
    run(root, &["worktree", "remove", &p]).map(drop)
}

/// Removes the worktree at `path` with whatever is in it: only for the loop's own
/// checkouts, which hold nobody's work.
pub fn worktree_remove_forced(root: &Path, path: &Path) -> Result<()> {
    let p = path.display().to_string();
    run(root, &["worktree", "remove", "--force", "--force", &p]).map(drop)
}

/// Every tracked file of commit `rev` with its blob: `(path, blob)`.
pub fn tracked_blobs(dir: &Path, rev: &str) -> Result<Vec<(String, String)>> {
    let text = run(dir, &["ls-tree", "-r", "-z", "--end-of-options", rev])?;
    Ok(text
        .split('\0')
        .filter_map(|entry| {
            let (meta, path) = entry.split_once('\t')?;
            let blob = meta.split(' ').nth(2)?;
            Some((path.to_string(), blob.to_string()))
        })
        .collect())
}

/// Deletes the local branch `branch` (merged or not): for a branch `hall` made itself
/// and is taking back.
pub fn branch_delete(root: &Path, branch: &str) -> Result<()> {
    run(root, &["branch", "--quiet", "-D", branch]).map(drop)
}

/// Moves the checkout at `dir` to commit `sha`, detached, and deletes the untracked
/// files there (ignored ones, such as build output, stay for the next run).
pub fn checkout_clean(dir: &Path, sha: &str) -> Result<()> {
    run(dir, &["checkout", "--quiet", "--force", "--detach", sha])?;
    run(dir, &["clean", "-ffdq"]).map(drop)
}

/// Whether `remote` has the ref `name`, asked as `actor`.
pub fn remote_has_ref(dir: &Path, remote: &str, name: &str, actor: &str) -> Result<bool> {
    let listed = Invocation::at(dir)
        .actor(actor)
        .run(&["ls-remote", remote, name])?;
    Ok(!listed.trim().is_empty())
}

/// Fetches `refspec` from `remote` as `actor`.
pub fn fetch_as(dir: &Path, remote: &str, refspec: &str, actor: &str) -> Result<()> {
    Invocation::at(dir)
        .actor(actor)
        .run(&["fetch", "--quiet", remote, refspec])
        .map(drop)
}

/// Pushes `refspec` to `remote` as `actor`, never forced.
pub fn push_as(dir: &Path, remote: &str, refspec: &str, actor: &str) -> Result<()> {
    Invocation::at(dir)
        .actor(actor)
        .run(&["push", "--quiet", remote, refspec])
        .map(drop)
}

/// Fetches every one of `refspecs` from `remote` in one git process, quietly.
pub fn fetch_all(dir: &Path, remote: &str, refspecs: &[String]) -> Result<()> {
    let mut args = vec!["fetch", "--quiet", "--no-tags", remote];
    args.extend(refspecs.iter().map(String::as_str));
    run(dir, &args).map(drop)
}

/// The tree `theirs` merged into `ours` would have (`git merge-tree --write-tree`,
/// which touches no checkout): `Some(None)` when they conflict, `None` when git can't
/// tell (a commit this clone lacks, a git older than 2.38).
pub fn merge_tree(dir: &Path, ours: &str, theirs: &str) -> Option<Option<String>> {
    write_merge_tree(dir, ours, theirs).ok()
}

/// `git merge-tree --write-tree ours theirs`: the merged tree, `None` on a conflict,
/// an error when git could not tell.
fn write_merge_tree(dir: &Path, ours: &str, theirs: &str) -> Result<Option<String>> {
    let out = output(dir, &["merge-tree", "--write-tree", ours, theirs])?;
    let tree = String::from_utf8_lossy(&out.stdout)
        .lines()
        .next()
        .map(|l| l.trim().to_string())
        .filter(|t| !t.is_empty());
    match (out.status.code(), tree) {
        (Some(0), Some(tree)) => Ok(Some(tree)),
        (Some(1), _) => Ok(None),
        _ => Err(GitError::Failed {
            args: format!("merge-tree --write-tree {ours} {theirs}"),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        }),
    }
}

/// `theirs` merged onto `ours` as a commit of its own (`git merge-tree --write-tree`,
/// then `git commit-tree` with both as parents), for running checks on the result.
/// Touches no checkout and moves no ref. `Ok(None)` when the two conflict.
pub fn merge_commit(dir: &Path, ours: &str, theirs: &str) -> Result<Option<(String, Sha)>> {
    let Some(tree) = write_merge_tree(dir, ours, theirs)? else {
        return Ok(None);
    };
    let message = format!("Hallmark merge check: {theirs} onto {ours}");
    let commit = run(
        dir,
        &[
            "-c",
            "user.name=Hallmark",
            "-c",
            "user.email=hallmark@localhost",
            "commit-tree",
            &tree,
            "-p",
            ours,
            "-p",
            theirs,
            "-m",
            &message,
        ],
    )?;
    Ok(Some((tree, Sha::new(commit.trim()))))
}
