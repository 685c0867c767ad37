//! The simulator driven by the real gh: what hall and the Delivery office ask of GitHub.

use std::path::Path;
use std::process::Command;

use super::*;

/// A bare origin with `main` and a branch `feat` one commit ahead, and the simulator.
struct Fixture {
    _dir: tempfile::TempDir,
    root: std::path::PathBuf,
    gh: GitHub,
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "Ada")
        .env("GIT_AUTHOR_EMAIL", "ada@example.com")
        .env("GIT_COMMITTER_NAME", "Ada")
        .env("GIT_COMMITTER_EMAIL", "ada@example.com")
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().canonicalize().expect("canonical");
        git(&root, &["init", "-q", "--bare", "-b", "main", "origin.git"]);
        git(&root, &["init", "-q", "-b", "main", "work"]);
        let work = root.join("work");
        std::fs::write(work.join("a.txt"), "one\n").expect("write");
        git(&work, &["add", "-A"]);
        git(&work, &["commit", "-q", "-m", "initial"]);
        git(
            &work,
            &[
                "remote",
                "add",
                "origin",
                root.join("origin.git").to_str().expect("utf8"),
            ],
        );
        git(&work, &["push", "-q", "origin", "main"]);
        git(&work, &["checkout", "-q", "-b", "feat"]);
        std::fs::write(work.join("b.txt"), "two\n").expect("write");
        git(&work, &["add", "-A"]);
        git(&work, &["commit", "-q", "-m", "feat"]);
        git(&work, &["push", "-q", "origin", "feat"]);
        let gh = GitHub::start(&root.join("origin.git"), "acme/widget", &root).expect("starts");
        Fixture {
            _dir: dir,
            root,
            gh,
        }
    }

    /// Runs the real gh in the work tree; (exit code, stdout, stderr).
    fn gh(&self, args: &[&str]) -> (i32, String, String) {
        let bin = gh_binary().unwrap_or_else(|| {
            panic!("the real gh is not installed: run `python3 -m venv tests/gh/venv && tests/gh/venv/bin/pip install -r tests/gh/requirements.txt`")
        });
        let out = Command::new(bin)
            .args(args)
            .current_dir(self.root.join("work"))
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", self.root.join("home"))
            .envs(self.gh.env())
            .output()
            .expect("gh runs");
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    fn ok(&self, args: &[&str]) -> String {
        let (code, out, err) = self.gh(args);
        assert_eq!(
            code,
            0,
            "gh {args:?} failed: {err}\nsimulator: {:?}",
            self.gh.errors()
        );
        out
    }
}

#[test]
fn the_real_gh_opens_views_lists_comments_and_merges_a_pr() {
    let f = Fixture::new();
    let body = f.root.join("body.md");
    std::fs::write(&body, "Why it matters\n").expect("write");
    let url = f.ok(&[
        "pr",
        "create",
        "--base",
        "main",
        "--head",
        "feat",
        "--title",
        "Add b",
        "--body-file",
        body.to_str().expect("utf8"),
    ]);
    assert_eq!(url.trim(), f.gh.pr_url(1));
    let view: Value = serde_json::from_str(&f.ok(&[
        "pr",
        "view",
        "1",
        "--json",
        "number,title,headRefName,headRefOid,baseRefName,url,state,mergeable,body",
    ]))
    .expect("json");
    let feat = git(&f.root.join("work"), &["rev-parse", "feat"]);
    assert_eq!(view["headRefOid"], feat.as_str());
    assert_eq!(
        (
            view["state"].as_str(),
            view["mergeable"].as_str(),
            view["body"].as_str()
        ),
        (Some("OPEN"), Some("MERGEABLE"), Some("Why it matters\n"))
    );
    // A second PR from the same branch is refused as GitHub refuses it.
    let (code, _, err) = f.gh(&[
        "pr", "create", "--base", "main", "--head", "feat", "--title", "again", "--body", "x",
    ]);
    assert_ne!(code, 0);
    assert!(err.contains("already exists"), "{err}");

    f.ok(&["pr", "comment", "1", "--body", "Looks good"]);
    f.gh.comment(1, "octocat", "Please rename b");
    let list: Value = serde_json::from_str(&f.ok(&[
        "pr",
        "list",
        "--json",
        "number,comments,reviewDecision,statusCheckRollup",
    ]))
    .expect("json");
    let comments: Vec<&str> = list[0]["comments"]
        .as_array()
        .expect("comments")
        .iter()
        .filter_map(|c| c["body"].as_str())
        .collect();
    assert_eq!(comments, ["Looks good", "Please rename b"]);

    // A merge with a stale head is refused; with the real head it lands on main.
    let (code, _, err) = f.gh(&[
        "pr",
        "merge",
        "1",
        "--squash",
        "--match-head-commit",
        "0000000",
    ]);
    assert_ne!(code, 0, "a stale head must not merge");
    assert!(err.contains("modified"), "{err}");
    f.ok(&["pr", "merge", "1", "--squash", "--match-head-commit", &feat]);
    let merged = f.gh.pr(1).expect("pr 1");
    assert_eq!(merged.state, PrState::Merged);
    let main_files = git(
        &f.root.join("origin.git"),
        &["ls-tree", "--name-only", "main"],
    );
    assert_eq!(main_files.lines().collect::<Vec<_>>(), ["a.txt", "b.txt"]);
    assert!(f.gh.errors().is_empty(), "{:?}", f.gh.errors());
    let ops: Vec<String> = f.gh.requests().into_iter().map(|l| l.operation).collect();
    eprintln!("{ops:?}");
    for op in [
        "RepositoryInfo",
        "PullRequestCreate",
        "PullRequestByNumber",
        "CommentCreate",
        "PullRequestList",
        "PullRequestMerge",
    ] {
        assert!(ops.iter().any(|o| o == op), "gh asked for {op}: {ops:?}");
    }
}

#[test]
fn a_conflict_after_the_base_moves_shows_as_conflicting() {
    let f = Fixture::new();
    let work = f.root.join("work");
    let n = f.gh.open_pr("feat", "main", "Add b", "octocat");
    // Someone else lands a different b.txt on main.
    git(&work, &["checkout", "-q", "main"]);
    std::fs::write(work.join("b.txt"), "other\n").expect("write");
    git(&work, &["add", "-A"]);
    git(&work, &["commit", "-q", "-m", "other b"]);
    git(&work, &["push", "-q", "origin", "main"]);
    let view: Value = serde_json::from_str(&f.ok(&[
        "pr",
        "view",
        &n.to_string(),
        "--json",
        "mergeable,mergeStateStatus",
    ]))
    .expect("json");
    assert_eq!(
        (
            view["mergeable"].as_str(),
            view["mergeStateStatus"].as_str()
        ),
        (Some("CONFLICTING"), Some("DIRTY"))
    );
    let (code, _, _) = f.gh(&["pr", "merge", &n.to_string(), "--merge"]);
    assert_ne!(code, 0, "a conflicting PR does not merge");
}

#[test]
fn checks_fail_and_a_rerun_of_the_failed_jobs_plays_the_next_state() {
    let f = Fixture::new();
    let n = f.gh.open_pr("feat", "main", "Add b", "octocat");
    let head = f.gh.pr(n).expect("pr").head_oid;
    f.gh.ci(&head)
        .set("build", CheckState::Success)
        .set("test", CheckState::Failure)
        .then("test", &[CheckState::Success]);
    let (code, out, _) = f.gh(&["pr", "checks", &n.to_string()]);
    assert_ne!(
        code, 0,
        "gh pr checks exits non-zero on a failed check: {out}"
    );
    assert!(out.contains("test") && out.contains("fail"), "{out}");
    let runs: Value = serde_json::from_str(&f.ok(&[
        "api",
        &format!("repos/acme/widget/actions/runs?head_sha={head}"),
    ]))
    .expect("json");
    let run = runs["workflow_runs"][0]["id"].as_u64().expect("a run");
    f.ok(&["run", "rerun", &run.to_string(), "--failed"]);
    let (code, out, _) = f.gh(&["pr", "checks", &n.to_string()]);
    assert_eq!(code, 0, "passes after the re-run: {out}");
    let ops: Vec<String> = f.gh.requests().into_iter().map(|l| l.operation).collect();
    eprintln!("{ops:?}");
    assert!(
        ops.iter().any(|o| o.ends_with("/rerun-failed-jobs")),
        "{ops:?}"
    );
}

#[test]
fn faults_answer_as_github_fails_and_every_request_is_logged() {
    let f = Fixture::new();
    f.gh.open_pr("feat", "main", "Add b", "octocat");
    let before = f.gh.requests().len();
    f.gh.fail_next(Fault::Status(502), 1);
    let (code, _, err) = f.gh(&["pr", "view", "1", "--json", "number"]);
    assert_ne!(code, 0);
    assert!(err.contains("502"), "{err}");
    f.gh.fail_next(Fault::Malformed, 1);
    let (code, _, _) = f.gh(&["pr", "view", "1", "--json", "number"]);
    assert_ne!(code, 0, "malformed JSON is an error");
    f.gh.set_rate_remaining(0);
    let (code, _, err) = f.gh(&["pr", "view", "1", "--json", "number"]);
    assert_ne!(code, 0);
    assert!(err.to_lowercase().contains("rate limit"), "{err}");
    f.gh.set_rate_remaining(100);
    f.ok(&["pr", "view", "1", "--json", "number"]);
    let ops: Vec<String> =
        f.gh.requests_since(before)
            .into_iter()
            .map(|l| l.operation)
            .collect();
    assert!(
        ops.iter().filter(|o| *o == "PullRequestByNumber").count() >= 4,
        "{ops:?}"
    );
    // A deleted PR is "not found" to gh.
    f.gh.delete_pr(1);
    let (code, _, err) = f.gh(&["pr", "view", "1", "--json", "number"]);
    assert_ne!(code, 0);
    assert!(err.contains("Could not resolve"), "{err}");
}

#[test]
fn issues_are_read_with_their_text() {
    let f = Fixture::new();
    let n =
        f.gh.add_issue("Crash on empty input", "Steps: run with no args");
    let issue: Value = serde_json::from_str(&f.ok(&[
        "issue",
        "view",
        &n.to_string(),
        "--json",
        "number,title,body,url",
    ]))
    .expect("json");
    assert_eq!(issue["title"], "Crash on empty input");
    assert_eq!(
        issue["url"],
        format!("http://{HOST}/acme/widget/issues/{n}")
    );
}
