//! The simulator's state: pull requests, issues, comments, reviews and check runs, with
//! branches, mergeability and merges read from and written to the bare origin.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::{Faults, Logged};

/// What the rate-limit headers say the hour's budget is, and when it resets.
pub const RATE_LIMIT: u64 = 5000;
pub const RATE_RESET: u64 = 1_893_456_000;
/// Every timestamp the simulator writes (the sandbox's clock is fixed too).
pub const NOW: &str = "2026-11-02T09:00:00Z";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrState {
    Open,
    Closed,
    Merged,
}

impl PrState {
    pub fn as_str(self) -> &'static str {
        match self {
            PrState::Open => "OPEN",
            PrState::Closed => "CLOSED",
            PrState::Merged => "MERGED",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReviewState {
    Approved,
    ChangesRequested,
    Commented,
}

impl ReviewState {
    pub fn as_str(self) -> &'static str {
        match self {
            ReviewState::Approved => "APPROVED",
            ReviewState::ChangesRequested => "CHANGES_REQUESTED",
            ReviewState::Commented => "COMMENTED",
        }
    }
}

/// A conversation comment, or a review comment on a line (`path` and `line` set).
#[derive(Clone, Debug, PartialEq)]
pub struct Comment {
    pub id: u64,
    pub author: String,
    pub body: String,
    pub path: Option<String>,
    pub line: Option<u32>,
    /// The review comment this one answers.
    pub in_reply_to: Option<u64>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Review {
    pub id: u64,
    pub author: String,
    pub state: ReviewState,
    pub body: String,
    /// The head commit the review was given at.
    pub commit: String,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Pr {
    pub number: u64,
    pub title: String,
    pub body: String,
    pub author: String,
    pub head: String,
    pub base: String,
    pub state: PrState,
    /// The head commit: read from the origin while open, frozen when merged or closed.
    pub head_oid: String,
    /// `MERGEABLE`, `CONFLICTING` or `UNKNOWN` (a branch is missing).
    pub mergeable: &'static str,
    pub comments: Vec<Comment>,
    pub line_comments: Vec<Comment>,
    pub reviews: Vec<Review>,
    /// The review threads marked resolved, by their first comment's id.
    pub resolved: Vec<u64>,
    pub merge_commit: Option<String>,
}

/// A check run's state, as a test sets it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CheckState {
    /// Queued and never picked up (no runners, billing).
    NeverStarted,
    Running,
    Success,
    Failure,
}

/// One check run of workflow `CI` at a commit.
#[derive(Clone, Debug, PartialEq)]
pub struct Check {
    pub name: String,
    pub state: CheckState,
    /// What later re-runs turn it into, in order.
    pub script: Vec<CheckState>,
    pub attempt: u32,
    /// The run's output title and summary, as a test reporter writes them.
    pub title: String,
    pub summary: String,
}

/// The CI: check runs per commit, one workflow run per commit (its id is stable).
#[derive(Debug, Default)]
pub struct Ci {
    pub runs: BTreeMap<String, (u64, Vec<Check>)>,
    next_run: u64,
}

impl Ci {
    fn run_mut(&mut self, sha: &str) -> &mut (u64, Vec<Check>) {
        if !self.runs.contains_key(sha) {
            self.next_run += 1;
            let id = 9000 + self.next_run;
            self.runs.insert(sha.to_string(), (id, Vec::new()));
        }
        self.runs.get_mut(sha).expect("just inserted")
    }

    fn check_mut(&mut self, sha: &str, name: &str) -> &mut Check {
        let (_, checks) = self.run_mut(sha);
        if let Some(i) = checks.iter().position(|c| c.name == name) {
            return &mut checks[i];
        }
        checks.push(Check {
            name: name.to_string(),
            state: CheckState::Running,
            script: Vec::new(),
            attempt: 1,
            title: String::new(),
            summary: String::new(),
        });
        checks.last_mut().expect("just pushed")
    }

    pub fn set(&mut self, sha: &str, name: &str, state: CheckState) {
        self.check_mut(sha, name).state = state;
    }

    pub fn report(&mut self, sha: &str, name: &str, title: &str, summary: &str) {
        let check = self.check_mut(sha, name);
        check.title = title.to_string();
        check.summary = summary.to_string();
    }

    pub fn script(&mut self, sha: &str, name: &str, states: Vec<CheckState>) {
        self.check_mut(sha, name).script = states;
    }

    /// The workflow run at `sha`, if CI ran there.
    pub fn run_at(&self, sha: &str) -> Option<&(u64, Vec<Check>)> {
        self.runs.get(sha)
    }

    pub fn run_by_id(&self, id: u64) -> Option<(&str, &Vec<Check>)> {
        self.runs
            .iter()
            .find(|(_, (i, _))| *i == id)
            .map(|(sha, (_, checks))| (sha.as_str(), checks))
    }

    /// Re-runs the failed checks of run `id`: each takes the next state of its script
    /// (or passes, when it has none). False when there is no such run.
    pub fn rerun_failed(&mut self, id: u64) -> bool {
        let Some((_, (_, checks))) = self.runs.iter_mut().find(|(_, (i, _))| *i == id) else {
            return false;
        };
        for c in checks.iter_mut().filter(|c| c.state == CheckState::Failure) {
            c.attempt += 1;
            c.state = if c.script.is_empty() {
                CheckState::Success
            } else {
                c.script.remove(0)
            };
        }
        true
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Issue {
    pub number: u64,
    pub title: String,
    pub body: String,
    pub labels: Vec<String>,
    pub comments: Vec<Comment>,
}

/// Everything the simulator knows.
#[derive(Debug)]
pub struct World {
    pub owner: String,
    pub name: String,
    pub origin: PathBuf,
    pub prs: BTreeMap<u64, Pr>,
    pub issues: BTreeMap<u64, Issue>,
    next_number: u64,
    next_id: u64,
    pub ci: Ci,
    pub log: Vec<Logged>,
    pub faults: Faults,
    pub rate_remaining: u64,
    pub errors: Vec<String>,
    /// `git merge-tree`'s answer per (base, head) commit pair.
    mergeable: BTreeMap<(String, String), &'static str>,
    /// The repository setting "automatically delete head branches": a merge deletes
    /// the PR's branch, and GitHub retargets the PRs based on it onto the merged PR's
    /// base.
    pub delete_branch_on_merge: bool,
}

impl World {
    pub fn new(owner: &str, name: &str, origin: &Path) -> World {
        World {
            owner: owner.to_string(),
            name: name.to_string(),
            origin: origin.to_path_buf(),
            prs: BTreeMap::new(),
            issues: BTreeMap::new(),
            next_number: 0,
            next_id: 100,
            ci: Ci::default(),
            log: Vec::new(),
            faults: Faults::new(),
            rate_remaining: RATE_LIMIT,
            errors: Vec::new(),
            mergeable: BTreeMap::new(),
            delete_branch_on_merge: false,
        }
    }

    pub fn url(&self, kind: &str, n: u64) -> String {
        format!(
            "http://{}/{}/{}/{kind}/{n}",
            super::HOST,
            self.owner,
            self.name
        )
    }

    fn id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    /// `git` in the origin; stdout trimmed, or stderr as the error.
    pub fn git(&self, args: &[&str]) -> Result<String, String> {
        let out = Command::new("git")
            .arg("-C")
            .arg(&self.origin)
            .args(args)
            .env("GIT_AUTHOR_NAME", "GitHub")
            .env("GIT_AUTHOR_EMAIL", "noreply@github.localhost")
            .env("GIT_COMMITTER_NAME", "GitHub")
            .env("GIT_COMMITTER_EMAIL", "noreply@github.localhost")
            .output()
            .map_err(|e| format!("git: {e}"))?;
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
        } else {
            Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
        }
    }

    pub fn branch_oid(&self, branch: &str) -> Option<String> {
        self.git(&[
            "rev-parse",
            "--verify",
            "-q",
            &format!("refs/heads/{branch}^{{commit}}"),
        ])
        .ok()
        .filter(|s| !s.is_empty())
    }

    /// Every branch of the origin and its commit, in one git call.
    fn branches(&self) -> BTreeMap<String, String> {
        self.git(&[
            "for-each-ref",
            "refs/heads",
            "--format=%(refname:short) %(objectname)",
        ])
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_once(' '))
        .map(|(b, o)| (b.to_string(), o.to_string()))
        .collect()
    }

    /// Reads every open PR's head and mergeability from the origin: one git call for the
    /// branches, and `git merge-tree` only for a (base, head) pair not seen before.
    pub fn refresh(&mut self) {
        let branches = self.branches();
        let numbers: Vec<u64> = self
            .prs
            .values()
            .filter(|p| p.state == PrState::Open)
            .map(|p| p.number)
            .collect();
        for n in numbers {
            let (head, base) = {
                let p = &self.prs[&n];
                (
                    branches.get(&p.head).cloned(),
                    branches.get(&p.base).cloned(),
                )
            };
            let mergeable = match (&head, &base) {
                (Some(h), Some(b)) => {
                    let key = (b.clone(), h.clone());
                    match self.mergeable.get(&key) {
                        Some(m) => *m,
                        None => {
                            let m = match self.git(&["merge-tree", "--write-tree", b, h]) {
                                Ok(_) => "MERGEABLE",
                                Err(_) => "CONFLICTING",
                            };
                            self.mergeable.insert(key, m);
                            m
                        }
                    }
                }
                _ => "UNKNOWN",
            };
            let pr = self.prs.get_mut(&n).expect("listed");
            if let Some(h) = head {
                pr.head_oid = h;
            }
            pr.mergeable = mergeable;
        }
    }

    pub fn create_pr(
        &mut self,
        head: &str,
        base: &str,
        title: &str,
        body: &str,
        author: &str,
    ) -> Result<u64, String> {
        let head_oid = self.branch_oid(head).ok_or_else(|| {
            format!("Head sha can't be blank, Head ref must be a branch ({head})")
        })?;
        self.branch_oid(base)
            .ok_or_else(|| format!("Base ref must be a branch ({base})"))?;
        if let Some(p) = self
            .prs
            .values()
            .find(|p| p.state == PrState::Open && p.head == head && p.base == base)
        {
            return Err(format!(
                "A pull request already exists for {}:{head}. ({})",
                self.owner,
                self.url("pull", p.number)
            ));
        }
        self.next_number += 1;
        let number = self.next_number;
        self.prs.insert(
            number,
            Pr {
                number,
                title: title.to_string(),
                body: body.to_string(),
                author: author.to_string(),
                head: head.to_string(),
                base: base.to_string(),
                state: PrState::Open,
                head_oid,
                mergeable: "UNKNOWN",
                comments: Vec::new(),
                line_comments: Vec::new(),
                reviews: Vec::new(),
                resolved: Vec::new(),
                merge_commit: None,
            },
        );
        self.refresh();
        Ok(number)
    }

    pub fn create_issue(&mut self, title: &str, body: &str) -> u64 {
        self.next_number += 1;
        let number = self.next_number;
        self.issues.insert(
            number,
            Issue {
                number,
                title: title.to_string(),
                body: body.to_string(),
                labels: Vec::new(),
                comments: Vec::new(),
            },
        );
        number
    }

    fn pr_mut(&mut self, n: u64) -> Result<&mut Pr, String> {
        self.prs
            .get_mut(&n)
            .ok_or_else(|| format!("Could not resolve to a PullRequest with the number of {n}."))
    }

    pub fn add_comment(&mut self, n: u64, author: &str, body: &str) -> Result<(), String> {
        let id = self.id();
        let comment = Comment {
            id,
            author: author.to_string(),
            body: body.to_string(),
            path: None,
            line: None,
            in_reply_to: None,
        };
        if let Some(issue) = self.issues.get_mut(&n) {
            issue.comments.push(comment);
            return Ok(());
        }
        self.pr_mut(n)?.comments.push(comment);
        Ok(())
    }

    pub fn add_review(
        &mut self,
        n: u64,
        author: &str,
        state: ReviewState,
        body: &str,
    ) -> Result<(), String> {
        self.refresh();
        let id = self.id();
        let pr = self.pr_mut(n)?;
        let commit = pr.head_oid.clone();
        pr.reviews.push(Review {
            id,
            author: author.to_string(),
            state,
            body: body.to_string(),
            commit,
        });
        Ok(())
    }

    pub fn add_line_comment(
        &mut self,
        n: u64,
        author: &str,
        path: &str,
        line: u32,
        body: &str,
    ) -> Result<u64, String> {
        // On GitHub a line comment always belongs to a review: a lone one is a
        // `COMMENTED` review at the head with an empty body.
        self.add_review(n, author, ReviewState::Commented, "")?;
        let id = self.id();
        self.pr_mut(n)?.line_comments.push(Comment {
            id,
            author: author.to_string(),
            body: body.to_string(),
            path: Some(path.to_string()),
            line: Some(line),
            in_reply_to: None,
        });
        Ok(id)
    }

    pub fn reply(&mut self, n: u64, to: u64, author: &str, body: &str) -> Result<u64, String> {
        let id = self.id();
        let pr = self.pr_mut(n)?;
        let Some(parent) = pr.line_comments.iter().find(|c| c.id == to).cloned() else {
            return Err(format!("Not Found: review comment {to}"));
        };
        pr.line_comments.push(Comment {
            id,
            author: author.to_string(),
            body: body.to_string(),
            in_reply_to: Some(to),
            ..parent
        });
        Ok(id)
    }

    /// Marks the review thread that comment `root` starts as resolved.
    pub fn resolve_thread(&mut self, n: u64, root: u64) -> Result<(), String> {
        let pr = self.pr_mut(n)?;
        if !pr
            .line_comments
            .iter()
            .any(|c| c.id == root && c.in_reply_to.is_none())
        {
            return Err(format!("Not Found: review thread {root}"));
        }
        pr.resolved.push(root);
        Ok(())
    }

    pub fn set_pr_state(&mut self, n: u64, state: PrState) -> Result<(), String> {
        self.refresh();
        self.pr_mut(n)?.state = state;
        Ok(())
    }

    /// Merges PR `n` on the origin as GitHub would: a squash (one commit on the base
    /// with the PR's tree merged in) or a merge commit. Refuses a moved head, a
    /// conflict, or a PR that is not open.
    pub fn merge(
        &mut self,
        n: u64,
        method: &str,
        expected_head: Option<&str>,
    ) -> Result<(), String> {
        self.refresh();
        let pr = self
            .prs
            .get(&n)
            .ok_or_else(|| format!("Could not resolve to a PullRequest with the number of {n}."))?
            .clone();
        if pr.state != PrState::Open {
            return Err(format!("Pull request #{n} is not open"));
        }
        if let Some(expected) = expected_head.filter(|e| !e.is_empty())
            && expected != pr.head_oid
        {
            return Err("Head branch was modified. Review and try the merge again.".to_string());
        }
        let base_oid = self
            .branch_oid(&pr.base)
            .ok_or_else(|| format!("Base ref {} is missing", pr.base))?;
        let tree = self
            .git(&["merge-tree", "--write-tree", &base_oid, &pr.head_oid])
            .map_err(|_| "Pull Request is not mergeable".to_string())?;
        let tree = tree.lines().next().unwrap_or_default().to_string();
        let message = format!("{} (#{n})", pr.title);
        let mut args = vec!["commit-tree", tree.as_str(), "-p", base_oid.as_str()];
        if method != "SQUASH" {
            args.extend(["-p", pr.head_oid.as_str()]);
        }
        args.extend(["-m", message.as_str()]);
        let commit = self.git(&args)?;
        self.git(&[
            "update-ref",
            &format!("refs/heads/{}", pr.base),
            &commit,
            &base_oid,
        ])?;
        let merged = self.pr_mut(n)?;
        merged.state = PrState::Merged;
        merged.merge_commit = Some(commit);
        if self.delete_branch_on_merge {
            self.delete_head_branch(n)?;
            self.refresh();
        }
        Ok(())
    }

    /// Deletes merged PR `n`'s head branch, as "delete branch on merge" does. GitHub
    /// then retargets every open PR based on that branch onto the merged PR's base.
    pub fn delete_head_branch(&mut self, n: u64) -> Result<(), String> {
        let pr = self
            .prs
            .get(&n)
            .ok_or_else(|| format!("no PR #{n}"))?
            .clone();
        self.git(&["update-ref", "-d", &format!("refs/heads/{}", pr.head)])?;
        for other in self.prs.values_mut() {
            if other.state == PrState::Open && other.base == pr.head {
                other.base = pr.base.clone();
            }
        }
        Ok(())
    }

    /// The review decision GitHub derives: the latest review of each reviewer counts.
    pub fn review_decision(pr: &Pr) -> &'static str {
        let mut latest: BTreeMap<&str, ReviewState> = BTreeMap::new();
        for r in pr
            .reviews
            .iter()
            .filter(|r| r.state != ReviewState::Commented)
        {
            latest.insert(&r.author, r.state);
        }
        if latest.values().any(|s| *s == ReviewState::ChangesRequested) {
            "CHANGES_REQUESTED"
        } else if latest.values().any(|s| *s == ReviewState::Approved) {
            "APPROVED"
        } else {
            "REVIEW_REQUIRED"
        }
    }

    /// The PR's node id, as GraphQL names it.
    pub fn pr_node_id(n: u64) -> String {
        format!("PR_kwSim{n}")
    }

    /// The number behind a node id of a PR or an issue.
    pub fn number_of(node_id: &str) -> Option<u64> {
        node_id
            .strip_prefix("PR_kwSim")
            .or_else(|| node_id.strip_prefix("I_kwSim"))
            .and_then(|n| n.parse().ok())
    }

    pub fn note_error(&mut self, e: impl Into<String>) {
        self.errors.push(e.into());
    }
}
