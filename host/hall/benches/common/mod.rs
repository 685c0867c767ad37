//! Shared by the benches: a generated journal of many items, written straight to the
//! files (as fast as the disk allows), small timing helpers, and git.

#![allow(dead_code)] // each bench uses its own part

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use hallmark::item::event::{EVENT_VERSION, encode};
use hallmark::item::{Event, EventKind, ItemId, Source};
use hallmark::journal::Journal;

pub fn ev(id: ItemId, n: u32, kind: EventKind) -> Event {
    let t = format!(
        "2026-11-{:02}T{:02}:{:02}:{:02}Z",
        1 + n % 28,
        n % 24,
        n % 60,
        id.0 % 60
    );
    Event {
        v: EVENT_VERSION,
        t,
        actor: "agent".into(),
        kind,
        item: Some(id),
        via: None,
    }
}

/// The events of one item: created, prompts, commits, usage, a loop, and an end state
/// that varies so `status` has a realistic mix (most items closed).
pub fn item_events(id: ItemId, per_item: u32) -> Vec<Event> {
    let mut out = vec![ev(
        id,
        0,
        EventKind::Created {
            title: format!("Item number {}", id.0),
            request: Some("Make the thing work better for everyone involved.".into()),
            branch: format!("hm/{id}-item"),
            base: "main".into(),
            worktree: Some(format!("/work/repo-{id}")),
            source: Source::New,
            issue: None,
            pr: None,
        },
    )];
    let sha = hallmark::item::Sha::new(format!("{:040x}", id.0));
    let tail: Vec<EventKind> = match id.0 % 10 {
        0 => vec![],
        1 => vec![EventKind::Ready {
            sha: sha.clone(),
            round: 1,
            note: None,
        }],
        2 => vec![EventKind::Dropped {
            reason: "superseded".into(),
        }],
        _ => vec![
            EventKind::Ready {
                sha: sha.clone(),
                round: 1,
                note: None,
            },
            EventKind::ChecksPassed { sha: sha.clone() },
            EventKind::Verdict {
                sha: sha.clone(),
                round: 1,
                approved: true,
                findings: vec![],
                model: Some("opus".into()),
                summary: None,
                by: None,
                learnings: Vec::new(),
            },
            EventKind::Hallmarked {
                sha: sha.clone(),
                round: 1,
                seal: None,
            },
            EventKind::Shipped {
                sha: sha.clone(),
                pr: Some(format!("https://github.com/o/r/pull/{}", id.0)),
            },
        ],
    };
    let filler = per_item as usize - 1 - tail.len();
    for n in 0..filler as u32 {
        let kind = match n % 4 {
            0 => EventKind::Prompt {
                text: format!("please adjust step {n} of the plan"),
                session: Some("s-1".into()),
            },
            1 => EventKind::Commit {
                sha: format!("{:040x}", n).into(),
                subject: format!("Step {n}"),
                fixes: vec![],
            },
            2 => EventKind::Usage(hallmark::item::event::Usage {
                model: "sonnet".into(),
                role: "dev".into(),
                input: 1200,
                output: 300,
                cache_read: 20_000,
                cache_write: 500,
                cost_usd: 0.012,
                session: Some("s-1".into()),
                request_id: Some(format!("req_{n}")),
            }),
            _ => EventKind::Turn {
                summary: format!("Did step {n}."),
                session: Some("s-1".into()),
            },
        };
        out.push(ev(id, n + 1, kind));
    }
    for (i, k) in tail.into_iter().enumerate() {
        out.push(ev(id, per_item + i as u32, k));
    }
    out
}

/// A temporary directory (kept while the first value lives), its canonical path, and an
/// empty user config directory in it for `HALL_CONFIG_DIR`.
pub fn scratch() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().canonicalize().expect("canonical");
    let config = root.join("config");
    std::fs::create_dir_all(&config).expect("config dir");
    (dir, root, config)
}

/// A git repository at `root/repo` whose journal holds `items` items of `per_item` events.
pub fn generate(root: &Path, items: u32, per_item: u32) -> Journal {
    let repo = root.join("repo");
    std::fs::create_dir_all(&repo).expect("mkdir");
    let ok = Command::new("git")
        .args(["init", "-q", "-b", "main"])
        .current_dir(&repo)
        .status()
        .expect("git");
    assert!(ok.success());
    let journal = Journal::new(repo.join(".git/hallmark"));
    journal.init().expect("init");
    for n in 1..=items {
        let id = ItemId(n);
        std::fs::create_dir_all(journal.item_dir(id)).expect("mkdir");
        let mut f =
            std::io::BufWriter::new(std::fs::File::create(journal.item_file(id)).expect("create"));
        for e in item_events(id, per_item) {
            f.write_all(encode(&e).as_bytes()).expect("write");
            f.write_all(b"\n").expect("write");
        }
    }
    std::fs::write(
        journal.root().join("counters.json"),
        format!("{{\"item\":{},\"question\":1}}", items + 1),
    )
    .expect("counters");
    journal
}

/// [`generate`], with a first commit on `main` (a README): returns the journal and the
/// repository.
pub fn generate_committed(root: &Path, items: u32, per_item: u32) -> (Journal, PathBuf) {
    let journal = generate(root, items, per_item);
    let repo = root.join("repo");
    std::fs::write(repo.join("README.md"), "bench\n").expect("write");
    git(&repo, &["add", "README.md"]);
    git(&repo, &["commit", "-q", "-m", "init"]);
    (journal, repo)
}

/// Adds a worktree of `repo` at `root/repo-wt` on a new branch `hm/bench`.
pub fn bench_worktree(root: &Path, repo: &Path) -> PathBuf {
    let wt = root.join("repo-wt");
    git(
        repo,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "hm/bench",
            wt.to_str().expect("utf8"),
        ],
    );
    wt
}

/// `hall reindex` in `repo` with `config` as the user config directory; panics unless
/// it succeeds.
pub fn reindex(hall: &str, repo: &Path, config: &Path) {
    let out = Command::new(hall)
        .arg("reindex")
        .current_dir(repo)
        .env("HALL_CONFIG_DIR", config)
        .output()
        .expect("reindex");
    assert!(out.status.success(), "reindex: {out:?}");
}

/// A temporary directory for what a bench generates. `HALL_BENCH_KEEP=1` keeps it after
/// the run, for profiling by hand, and prints where it is.
pub fn bench_dir() -> tempfile::TempDir {
    let mut dir = tempfile::tempdir().expect("tempdir");
    if std::env::var_os("HALL_BENCH_KEEP").is_some() {
        dir.disable_cleanup(true);
        println!("keeping {}", dir.path().display());
    }
    dir
}

/// Runs `program` in `cwd` as Claude Code runs a hook or the status line: `stdin` fed
/// to it, `config` as the user config directory. Returns its stdout.
pub fn feed(program: &str, args: &[&str], stdin: &[u8], cwd: &Path, config: &Path) -> Vec<u8> {
    let mut child = Command::new(program)
        .args(args)
        .current_dir(cwd)
        .env("HALL_CONFIG_DIR", config)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let mut pipe = child.stdin.take().expect("stdin");
    let _ = pipe.write_all(stdin);
    drop(pipe);
    child.wait_with_output().expect("wait").stdout
}

pub fn time(mut f: impl FnMut()) -> Duration {
    let t = Instant::now();
    f();
    t.elapsed()
}

pub fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Runs git in `dir` as a bench author, with no user configuration, and returns its
/// trimmed stdout.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "Bench")
        .env("GIT_AUTHOR_EMAIL", "bench@example.com")
        .env("GIT_COMMITTER_NAME", "Bench")
        .env("GIT_COMMITTER_EMAIL", "bench@example.com")
        .output()
        .expect("git");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}
