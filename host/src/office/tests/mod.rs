//! What the step tests of the office share: a real git repository whose base trusts a
//! signing key of its own, with a journal, and a `Hall` whose plugin, user config
//! (the key) and rooms cache all live in the test's temporary directory, so nothing
//! reads or writes the user's data. `rooms` holds the rooms' tests that need the host.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::claude::Runner;
use crate::clock::Clock;
use crate::config::Config;
use crate::git::Repo;
use crate::hall::{Ctx, Hall};
use crate::item::{Event, EventKind, ItemId, Sha, Source};
use crate::journal::Journal;

mod rooms;

/// The principal the bench's key signs as, and `allowed_signers` on the base lists.
pub const PRINCIPAL: &str = "ada@example.com";

/// The item's branch.
pub const BRANCH: &str = "hm/cap-retries";

/// The base's `lib.txt`: the item changes its last line.
pub const LIB: &str =
    "retries:\n  attempts: 3\n  backoff: 1s\n  jitter: none\n  limit: attempts < 3\n";

/// A runner for steps that start no model run: one that does is a failed test.
pub struct NoRuns;

impl Runner for NoRuns {
    fn run(
        &self,
        _dir: &Path,
        _stamp: &str,
        _spec: &crate::claude::RunSpec,
    ) -> crate::claude::Result<crate::claude::RunOutcome> {
        panic!("this step started a model run")
    }
}

/// Runs git in `dir` with no user or system config and a fixed identity; panics with
/// git's message when it fails.
pub fn git_in(dir: &Path, args: &[&str]) -> String {
    let out = git(dir, args);
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// [`git_in`] for a question git may answer with failure: its output, or `None`.
pub fn git_maybe(dir: &Path, args: &[&str]) -> Option<String> {
    let out = git(dir, args);
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn git(dir: &Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@t")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@t")
        .output()
        .unwrap()
}

/// A repository on `main` and the `Hall` over it.
pub struct Bench {
    pub dir: tempfile::TempDir,
    /// The main checkout.
    pub root: PathBuf,
    pub hall: Hall,
    /// The assayer's context, at a fixed time.
    pub ctx: Ctx,
}

impl Bench {
    /// `main` holds `lib.txt` and `.hallmark/allowed_signers` naming the bench's own key
    /// (Hallmark's own, made in the sandboxed config directory) for [`PRINCIPAL`].
    pub fn new(runner: Arc<dyn Runner>) -> Bench {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let root = base.join("repo");
        std::fs::create_dir_all(&root).unwrap();
        git_in(&root, &["init", "-q", "-b", "main"]);
        // What hall's own git processes commit with (notes, a rebase): the repository's
        // config, since they see the user's environment.
        git_in(&root, &["config", "user.name", "Hallmark test"]);
        git_in(&root, &["config", "user.email", "test@example.com"]);
        git_in(&root, &["config", "commit.gpgsign", "false"]);
        let config_dir = base.join("config");
        std::fs::create_dir_all(&config_dir).unwrap();
        std::fs::write(
            config_dir.join(crate::sign::USER_CONFIG),
            format!("[signing]\nprincipal = \"{PRINCIPAL}\"\n"),
        )
        .unwrap();
        crate::sign::ensure_key_in(&config_dir).unwrap();
        let key = crate::sign::user_public_key_in(&config_dir).unwrap();
        std::fs::create_dir_all(root.join(".hallmark")).unwrap();
        std::fs::write(
            root.join(crate::hall::hallmark::SIGNERS_FILE),
            crate::sign::allowed::line(PRINCIPAL, &key) + "\n",
        )
        .unwrap();
        std::fs::write(root.join("lib.txt"), LIB).unwrap();
        git_in(&root, &["add", "."]);
        git_in(&root, &["commit", "-qm", "Start"]);
        let repo = Repo::discover(&root).unwrap();
        let journal = Journal::new(repo.hall_dir());
        journal.init().unwrap();
        let mut hall = Hall::with(repo, journal, Config::default()).with_runner(runner);
        hall.plugin_dir = Some(base.join("plugin"));
        hall.config_dir = Some(config_dir);
        hall.cache_dir = Some(base.join("cache"));
        let at = crate::clock::parse("2026-11-02T09:00:00Z").unwrap();
        let ctx = Ctx::at(root.clone(), Clock::fixed(at), "assayer");
        Bench {
            dir,
            root,
            hall,
            ctx,
        }
    }

    /// The item's worktree, beside the main checkout.
    pub fn worktree(&self) -> PathBuf {
        self.root.with_file_name("wt")
    }

    /// An item whose checks passed on its one commit on [`BRANCH`] (in its own worktree,
    /// tightening the limit in `lib.txt`): in `review`, round 1.
    pub fn item_in_review(&self) -> (ItemId, Sha) {
        let wt = self.worktree();
        let path = wt.display().to_string();
        git_in(
            &self.root,
            &["worktree", "add", "-q", &path, "-b", BRANCH, "main"],
        );
        std::fs::write(
            wt.join("lib.txt"),
            LIB.replace("attempts < 3", "attempts <= 3"),
        )
        .unwrap();
        git_in(&wt, &["commit", "-qam", "Cap retries at three attempts"]);
        let sha = Sha::new(git_in(&wt, &["rev-parse", "HEAD"]));
        let (id, _) = self
            .hall
            .journal
            .create_item(|id| {
                let mut lines = created_and_ready(&self.ctx, id, BRANCH, &path, &sha);
                lines.push(
                    self.ctx
                        .event(Some(id), EventKind::ChecksPassed { sha: sha.clone() }),
                );
                Ok::<_, crate::error::HallError>(lines)
            })
            .unwrap();
        (id, sha)
    }

    /// The trust the shipper and the push gate use: `allowed_signers` on `main`.
    pub fn trust(&self) -> crate::hall::hallmark::Trust {
        crate::hall::hallmark::Trust::from_base(&self.root, "main")
            .unwrap()
            .expect("main lists the bench's key")
    }
}

/// The first lines of a test item, "Cap retries": created on `branch` with its worktree
/// at `worktree`, then made ready at `sha` for round 1.
pub fn created_and_ready(
    ctx: &Ctx,
    id: ItemId,
    branch: &str,
    worktree: &str,
    sha: &Sha,
) -> Vec<Event> {
    let created = EventKind::Created {
        title: "Cap retries".into(),
        request: None,
        branch: branch.into(),
        base: "main".into(),
        worktree: Some(worktree.into()),
        source: Source::New,
        issue: None,
        pr: None,
    };
    let ready = EventKind::Ready {
        sha: sha.clone(),
        round: 1,
        note: None,
    };
    vec![ctx.event(Some(id), created), ctx.event(Some(id), ready)]
}

/// The names of events, in order.
pub fn kinds(events: &[Event]) -> Vec<&'static str> {
    events.iter().map(|e| e.kind.name()).collect()
}
