//! Checkouts: an item's worktree (made from the `worktree` template, checked before its
//! HEAD is frozen) and the loop's own detached checkout of a frozen commit.

use std::path::{Path, PathBuf};

use super::Hall;
use crate::error::{Code, HallError, IoContext, Result};
use crate::git;
use crate::item::{Item, ItemId};
use crate::template;

/// Refuses when the item's worktree is gone or has uncommitted changes (they would not
/// be in the frozen commit); returns the worktree.
pub fn require_clean(hall: &Hall, item: &Item) -> Result<PathBuf> {
    let wt = hall.worktree_of(item);
    let id = item.id.map(|i| i.to_string()).unwrap_or_default();
    if !wt.is_dir() {
        return Err(HallError::new(
            Code::WrongState,
            format!("the worktree {} is gone", wt.display()),
        )
        .hint(format!("hall drop {id} --reason \"…\"")));
    }
    let dirty = git::dirty_entries(&wt)?;
    if !dirty.is_empty() {
        let shown: Vec<String> = dirty
            .iter()
            .take(5)
            .map(|(untracked, p)| {
                if *untracked {
                    format!("{p} (untracked)")
                } else {
                    p.clone()
                }
            })
            .collect();
        let more = if dirty.len() > 5 {
            format!(" and {} more", dirty.len() - 5)
        } else {
            String::new()
        };
        // Untracked files need `-A`/`-u`: a plain `git commit` or `git stash` leaves
        // them, and a `commit` without `-m` opens an editor an agent can't use.
        let at = shell_word(&wt.display().to_string());
        return Err(HallError::new(
            Code::DirtyWorktree,
            format!(
                "{} has uncommitted changes, which would not be in the frozen commit: {}{more}",
                wt.display(),
                shown.join(", ")
            ),
        )
        .hint(format!("git -C {at} add -A && git -C {at} commit -m \"…\""))
        .hint(format!("git -C {at} stash -u")));
    }
    Ok(wt)
}

/// Whether the branch in `wt` contains `base` and has no half-done operation: what
/// satisfies a standing rebase request. No request is satisfied by anything.
pub fn on_base(wt: &Path, base: Option<&str>) -> bool {
    let Some(base) = base else { return true };
    if git::absolute_git_dir(wt).is_ok_and(|d| git::operation_in_progress(&d)) {
        return false;
    }
    // The branch must contain the base as this clone has it and as origin has it (what
    // the PR is compared with); a branch stacked on another PR's branch may have only
    // origin's copy of it.
    let present: Vec<String> = [
        format!("refs/heads/{base}"),
        format!("refs/remotes/origin/{base}"),
    ]
    .into_iter()
    .filter(|r| git::commit(wt, r).is_some())
    .collect();
    !present.is_empty() && present.iter().all(|r| git::is_ancestor(wt, r, "HEAD"))
}

/// The repository's worktree list is one, and `git worktree prune` deletes an entry that
/// another `git worktree add` has begun but not finished writing. So every change hall
/// makes to the list (the `worktree` template, the loop's checkouts, pruning, sweeping)
/// happens under this lock, held while the returned file lives, across the daemon's
/// threads and other hall processes.
fn worktree_lock(hall: &Hall) -> Result<std::fs::File> {
    super::lock::wait(&hall.journal.root().join("leases/worktrees.lock"))
}

/// Runs the `worktree` template for a new item and finds where it put the worktree.
///
/// A failure leaves nothing behind: a worktree or branch the template made before it
/// failed is removed again (the branch did not exist before; `hall new` refuses one
/// that does). A path that already exists is refused before anything runs.
pub fn make(hall: &Hall, id: ItemId, branch: &str, title: &str, base: &str) -> Result<PathBuf> {
    let values = [
        ("repo", hall.repo.name()),
        ("id", id.to_string()),
        ("branch", branch.to_string()),
        ("slug", template::slug(title)),
        ("title", title.to_string()),
        ("base", base.to_string()),
    ];
    let values: Vec<(&str, &str)> = values.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let cmd = template::render(&hall.config.worktree, &values, true);
    let root = &hall.repo.main_root;
    if let Some(path) = worktree_path(&template::render(&hall.config.worktree, &values, false))
        .map(|p| git::normalize(&root.join(p)))
        && path.exists()
    {
        let at = shell_word(&path.display().to_string());
        return Err(HallError::new(
            Code::WrongState,
            format!(
                "the worktree path {} already exists (an earlier checkout, or files of \
                 your own), so `{cmd}` can't make {id}'s worktree there; nothing was created",
                path.display()
            ),
        )
        .hint(format!("ls -la {at}"))
        .hint(format!("mv {at} {at}.old"))
        .hint("git worktree prune"));
    }
    let _lock = worktree_lock(hall)?;
    let had_branch = git::branch_exists(root, branch);
    let undo = || {
        if had_branch {
            return;
        }
        if let Ok(list) = git::worktrees(root) {
            for w in list.iter().filter(|w| w.branch.as_deref() == Some(branch)) {
                let _ = git::worktree_remove(root, &w.path);
            }
        }
        let _ = git::worktree_prune(root);
        let _ = git::branch_delete(root, branch);
    };
    if let Err(e) = template::run(&cmd, root) {
        undo();
        return Err(HallError::from(e).hint("edit .hallmark.toml: worktree"));
    }
    let found = git::worktrees(root)?
        .into_iter()
        .find(|w| w.branch.as_deref() == Some(branch));
    match found {
        Some(w) => Ok(w.path),
        None => {
            undo();
            Err(HallError::new(
                Code::CommandFailed,
                format!("`{cmd}` ran but no worktree has branch {branch}"),
            )
            .hint("edit .hallmark.toml: worktree"))
        }
    }
}

/// The path a `git worktree add …` template (one command, nothing chained) makes, as
/// written in it.
fn worktree_path(rendered: &str) -> Option<String> {
    if rendered.contains(['&', ';', '|', '`', '$', '\'', '"']) {
        return None;
    }
    let words: Vec<&str> = rendered.split_whitespace().collect();
    let add = words.windows(2).position(|w| w == ["worktree", "add"])?;
    if words.first() != Some(&"git") {
        return None;
    }
    let mut rest = words[add + 2..].iter();
    while let Some(w) = rest.next() {
        match *w {
            "-b" | "-B" | "--reason" => {
                rest.next();
            }
            w if w.starts_with('-') => {}
            w => return Some(w.to_string()),
        }
    }
    None
}

/// Where this repository's loop checkouts live: `<cache>/hallmark/checkouts/<repo>-<hash>`,
/// the hash of the main checkout's path telling apart two clones with the same name.
/// Outside the repository's folder tree on purpose (see docs/decisions/0010).
pub fn loop_checkouts_root(hall: &Hall) -> PathBuf {
    crate::platform::checkouts_dir(hall.user_cache_dir()).join(repo_key(hall))
}

/// A short name for the repository that no other repository of the user shares: its
/// name and a hash of where its main checkout is.
pub fn repo_key(hall: &Hall) -> String {
    use sha2::{Digest, Sha256};
    let root = &hall.repo.main_root;
    let canon = crate::platform::canonicalize(root).unwrap_or_else(|_| root.clone());
    let digest = Sha256::digest(canon.to_string_lossy().as_bytes());
    let short: String = digest.iter().take(4).map(|b| format!("{b:02x}")).collect();
    format!("{}-{short}", template::slug(&hall.repo.name()))
}

/// Where the loop's checkout for item `id` is (whether or not it exists).
pub fn loop_checkout_path(hall: &Hall, id: ItemId) -> PathBuf {
    loop_checkouts_root(hall).join(id.to_string())
}

/// The file that records which setup ran in item `id`'s loop checkout; it goes with the
/// checkout.
pub fn setup_stamp_path(hall: &Hall, id: ItemId) -> PathBuf {
    loop_checkouts_root(hall).join(format!("{id}.setup"))
}

/// The loop's own checkout of `sha` for item `id` ([`loop_checkout_path`]), never the
/// item's worktree, which the agent may still be changing: made once as a detached
/// worktree, then moved.
pub fn loop_checkout(hall: &Hall, id: ItemId, sha: &str) -> Result<PathBuf> {
    let dir = loop_checkout_path(hall, id);
    let root = &hall.repo.main_root;
    if dir.join(".git").exists() {
        git::checkout_clean(&dir, sha)?;
    } else {
        if dir.exists() {
            std::fs::remove_dir_all(&dir).at(&dir)?;
        }
        // A new checkout has had no setup.
        let stamp = setup_stamp_path(hall, id);
        if stamp.exists() {
            std::fs::remove_file(&stamp).at(&stamp)?;
        }
        let _lock = worktree_lock(hall)?;
        let _ = git::worktree_prune(root);
        let parent = dir.parent().unwrap_or(root);
        crate::platform::create_private_dir(parent).at(parent)?;
        git::worktree_add_detached(root, &dir, sha)?;
    }
    Ok(dir)
}

/// Removes the loop checkouts of items the loop is done with (closed or dropped), here
/// and where older versions kept them (`checkouts/` in the journal). Returns what it
/// removed and, by item, what it could not. The checkouts are the loop's own, so they
/// go even with files in them.
pub fn sweep_loop_checkouts(hall: &Hall, done: &[ItemId]) -> (Vec<String>, Vec<(ItemId, String)>) {
    let mut removed = Vec::new();
    let mut kept = Vec::new();
    let legacy = hall.journal.root().join("checkouts");
    let _lock = worktree_lock(hall);
    for id in done {
        for dir in [loop_checkout_path(hall, *id), legacy.join(id.to_string())] {
            if !dir.exists() {
                continue;
            }
            // Not (or no longer) a registered worktree: then only a directory of ours.
            let gone = git::worktree_remove_forced(&hall.repo.main_root, &dir).is_ok()
                || std::fs::remove_dir_all(&dir).is_ok();
            if gone {
                removed.push(format!(
                    "{id}: removed the loop's checkout {}",
                    dir.display()
                ));
            } else {
                kept.push((
                    *id,
                    format!(
                        "{id}: the loop's checkout {} could not be removed",
                        dir.display()
                    ),
                ));
            }
        }
        let _ = std::fs::remove_file(setup_stamp_path(hall, *id));
    }
    if !removed.is_empty() {
        let _ = git::worktree_prune(&hall.repo.main_root);
    }
    (removed, kept)
}

/// What `ready` and `propose-ready` freeze: the worktree's HEAD, and whether the branch
/// satisfies a standing rebase request. The worktree must be clean when the item is
/// about to be frozen (in development or waiting for you); a repeat in the loop only
/// reports where the item is, and a dropped item's worktree may be gone (the state
/// machine refuses it then).
pub fn freeze_point(hall: &Hall, item: &Item) -> Result<(crate::item::Sha, bool)> {
    use crate::item::State;
    let wt = hall.worktree_of(item);
    if matches!(item.state, State::Development | State::AwaitingYou) {
        require_clean(hall, item)?;
    }
    let head = if wt.is_dir() {
        git::head(&wt)?
    } else {
        item.sha.clone().unwrap_or_default()
    };
    Ok((head, on_base(&wt, item.rebase_requested.as_deref())))
}

/// A path as one shell word: quoted when it holds anything a shell would split or expand.
fn shell_word(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:@,+".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::worktree_path;

    #[test]
    fn the_path_of_a_worktree_template() {
        assert_eq!(
            worktree_path("git worktree add ../demo-H-0002 -b hm/H-0002-two main").as_deref(),
            Some("../demo-H-0002")
        );
        assert_eq!(
            worktree_path("git worktree add -b hm/x --quiet /tmp/wt main").as_deref(),
            Some("/tmp/wt")
        );
        assert_eq!(worktree_path("mkdir x && git worktree add x"), None);
        assert_eq!(worktree_path("./make-worktree.sh 2"), None);
    }
}
