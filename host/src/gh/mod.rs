//! The typed adapter over the GitHub CLI.
//!
//! Every `gh` process the project starts is started here, with the JSON shapes it
//! prints as Rust types. Hallmark asks gh for what it needs by field name
//! (`--json title,body,url`), so the types below list exactly those fields, each with a
//! default: an older gh that leaves one out still decodes. What to do when gh fails is
//! the caller's to say.

use std::path::Path;
use std::process::{Output, Stdio};

use serde::Deserialize;

use crate::item::Sha;

/// Why a gh call failed.
#[derive(Debug, thiserror::Error)]
pub enum GhError {
    /// gh is not installed (or not on `PATH`).
    #[error("the GitHub CLI (gh) is not installed: {source}")]
    NotInstalled {
        #[source]
        source: std::io::Error,
    },
    /// gh ran and refused (not logged in, no such issue…): `stderr` is its own words.
    #[error("gh {args} failed: {stderr}")]
    Failed { args: String, stderr: String },
    /// gh printed JSON of another shape than asked for.
    #[error("gh {args} printed unexpected JSON: {source}")]
    BadJson {
        args: String,
        #[source]
        source: serde_json::Error,
    },
}

pub type Result<T, E = GhError> = std::result::Result<T, E>;

/// An issue, as `gh issue view --json number,title,body,url,labels` prints it.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct Issue {
    pub number: u64,
    pub title: String,
    pub body: String,
    pub url: String,
    pub labels: Vec<Label>,
}

/// A label on an issue or a pull request (gh also prints its id, colour and description).
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct Label {
    pub name: String,
}

/// A pull request, as `gh pr view --json …` prints the fields in [`PR_FIELDS`].
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct PullRequest {
    pub number: u64,
    pub title: String,
    pub head_ref_name: String,
    pub head_ref_oid: String,
    pub base_ref_name: String,
    pub url: String,
    /// `OPEN`, `CLOSED` or `MERGED`.
    pub state: String,
    /// `MERGEABLE`, `CONFLICTING` or `UNKNOWN` (when asked for).
    pub mergeable: String,
    /// `APPROVED`, `CHANGES_REQUESTED`, `REVIEW_REQUIRED`, or empty (when asked for).
    pub review_decision: String,
    /// Each reviewer's latest review (when asked for).
    pub latest_reviews: Vec<Review>,
    /// The checks and statuses at the head commit (when asked for).
    pub status_check_rollup: Vec<CheckContext>,
    /// The description (when asked for).
    pub body: String,
    /// Reviewers and teams still asked to review (when asked for).
    pub review_requests: Vec<ReviewRequest>,
    /// When it was opened, RFC 3339 (when asked for).
    pub created_at: String,
}

/// A reviewer still asked to review: a user (`login`) or a team (`name`, `slug`).
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct ReviewRequest {
    pub login: String,
    pub name: String,
    pub slug: String,
}

impl ReviewRequest {
    /// The user's login, else the team's slug or name.
    pub fn who(&self) -> String {
        [&self.login, &self.slug, &self.name]
            .into_iter()
            .find(|s| !s.is_empty())
            .cloned()
            .unwrap_or_default()
    }
}

/// One check run or commit status at a PR's head, as `statusCheckRollup` lists them.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct CheckContext {
    /// `CheckRun` or `StatusContext`.
    #[serde(rename = "__typename")]
    pub typename: String,
    /// A check run's name (a status has `context` instead).
    pub name: String,
    pub context: String,
    /// A check run's `QUEUED`, `IN_PROGRESS`, `COMPLETED`…
    pub status: String,
    /// A check run's `SUCCESS`, `FAILURE`, `TIMED_OUT`… once completed.
    pub conclusion: String,
    /// A status's `SUCCESS`, `FAILURE`, `ERROR`, `PENDING`.
    pub state: String,
    /// Where it ran; for Actions, `…/actions/runs/<run id>/…`.
    pub details_url: String,
    pub started_at: Option<String>,
    /// A check run's output title and summary (what a test reporter writes there);
    /// only the merger's own GraphQL call asks for them.
    pub title: String,
    pub summary: String,
}

/// What a PR's CI says at its head, from its checks and statuses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ci {
    /// No check or status at all.
    Silent,
    /// Something is still queued or running.
    Pending,
    /// Every check is queued and none ever started (no runners, billing).
    NeverStarted(Vec<String>),
    /// These failed; `runs` are the Actions runs to re-run (from their URLs).
    Red {
        failed: Vec<String>,
        runs: Vec<u64>,
    },
    Green,
}

impl PullRequest {
    /// The CI verdict at the head.
    pub fn ci(&self) -> Ci {
        let checks = &self.status_check_rollup;
        if checks.is_empty() {
            return Ci::Silent;
        }
        let name = |c: &CheckContext| {
            if c.name.is_empty() {
                c.context.clone()
            } else {
                c.name.clone()
            }
        };
        let failed: Vec<&CheckContext> = checks
            .iter()
            .filter(|c| {
                matches!(
                    c.conclusion.as_str(),
                    "FAILURE" | "TIMED_OUT" | "CANCELLED" | "STARTUP_FAILURE" | "ACTION_REQUIRED"
                ) || matches!(c.state.as_str(), "FAILURE" | "ERROR")
            })
            .collect();
        if !failed.is_empty() {
            let mut runs: Vec<u64> = failed
                .iter()
                .filter_map(|c| run_id(&c.details_url))
                .collect();
            runs.sort_unstable();
            runs.dedup();
            return Ci::Red {
                failed: failed.iter().map(|c| name(c)).collect(),
                runs,
            };
        }
        let done = |c: &CheckContext| {
            (c.typename == "StatusContext" && c.state == "SUCCESS")
                || (c.status == "COMPLETED" && !c.conclusion.is_empty())
        };
        if checks.iter().all(done) {
            return Ci::Green;
        }
        // gh prints a missing time as Go's zero time, not null.
        let never_started = |c: &CheckContext| {
            c.status == "QUEUED"
                && c.started_at
                    .as_deref()
                    .is_none_or(|t| t.is_empty() || t.starts_with("0001-01-01"))
        };
        if checks.iter().all(never_started) {
            return Ci::NeverStarted(checks.iter().map(name).collect());
        }
        Ci::Pending
    }
}

/// The Actions run id in a check's URL (`…/actions/runs/123/job/456`).
fn run_id(url: &str) -> Option<u64> {
    let (_, after) = url.split_once("/actions/runs/")?;
    after.split('/').next()?.parse().ok()
}

/// Re-runs the failed jobs of Actions run `id`.
pub fn rerun_failed(dir: &Path, id: u64) -> Result<()> {
    let id = id.to_string();
    gh(dir, &["run", "rerun", &id, "--failed"]).map(drop)
}

/// A review of a pull request.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct Review {
    pub author: Author,
    /// `APPROVED`, `CHANGES_REQUESTED`, `COMMENTED`…
    pub state: String,
    pub body: String,
    /// The head commit the review was given at.
    pub commit: Commit,
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct Commit {
    pub oid: String,
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct Author {
    pub login: String,
}

impl PullRequest {
    /// The head commit, when gh named one.
    pub fn head(&self) -> Option<Sha> {
        (!self.head_ref_oid.is_empty()).then(|| Sha::new(&*self.head_ref_oid))
    }

    pub fn is_open(&self) -> bool {
        self.state == "OPEN"
    }
}

/// The fields [`pull_request`] asks for.
pub const PR_FIELDS: &str = "number,title,headRefName,headRefOid,baseRefName,url,state";

fn gh(dir: &Path, args: &[&str]) -> Result<Output> {
    let out = crate::platform::program("gh")
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .map_err(|source| GhError::NotInstalled { source })?;
    if !out.status.success() {
        return Err(GhError::Failed {
            args: args.join(" "),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    Ok(out)
}

fn json<T: for<'de> Deserialize<'de>>(dir: &Path, args: &[&str]) -> Result<T> {
    let out = gh(dir, args)?;
    serde_json::from_slice(&out.stdout).map_err(|source| GhError::BadJson {
        args: args.join(" "),
        source,
    })
}

/// Issue `n` of the repository at `dir`.
pub fn issue(dir: &Path, n: u64) -> Result<Issue> {
    let n = n.to_string();
    json(
        dir,
        &[
            "issue",
            "view",
            &n,
            "--json",
            "number,title,body,url,labels",
        ],
    )
}

/// A pull request by number or URL, or with `None` the one for the branch checked out
/// at `dir`.
pub fn pull_request(dir: &Path, pr: Option<&str>) -> Result<PullRequest> {
    let mut args = vec!["pr", "view"];
    args.extend(pr);
    args.extend(["--json", PR_FIELDS]);
    json(dir, &args)
}

/// A pull request by number or URL with everything a follow-up needs to know about it:
/// its reviews, its review decision and its checks ([`OPEN_PR_FIELDS`]).
pub fn pull_request_in_full(dir: &Path, pr: &str) -> Result<PullRequest> {
    json(dir, &["pr", "view", pr, "--json", OPEN_PR_FIELDS])
}

/// The fields [`open_pull_requests`] asks for.
pub const OPEN_PR_FIELDS: &str = "number,title,headRefName,headRefOid,baseRefName,url,state,\
                                  mergeable,reviewDecision,latestReviews,statusCheckRollup";

/// Every open pull request of the repository at `dir`, newest first, in as few calls as
/// GitHub's paging allows (100 a page: 200 open PRs are two requests).
pub fn open_pull_requests(dir: &Path) -> Result<Vec<PullRequest>> {
    open_pull_requests_with(dir, OPEN_PR_FIELDS)
}

/// Every open pull request with `fields`, in one paged `gh pr list`.
fn open_pull_requests_with(dir: &Path, fields: &str) -> Result<Vec<PullRequest>> {
    json(
        dir,
        &[
            "pr", "list", "--state", "open", "--limit", "10000", "--json", fields,
        ],
    )
}

/// The fields [`open_pull_requests_for_merger`] asks for: the watch's, and what the
/// merger judges besides (the description, review requests, age).
pub const MERGER_PR_FIELDS: &str = "number,title,headRefName,headRefOid,baseRefName,url,state,\
                                    mergeable,reviewDecision,latestReviews,statusCheckRollup,\
                                    body,reviewRequests,createdAt";

/// Every open pull request with the merger's fields, in one paged call like
/// [`open_pull_requests`].
pub fn open_pull_requests_for_merger(dir: &Path) -> Result<Vec<PullRequest>> {
    open_pull_requests_with(dir, MERGER_PR_FIELDS)
}

/// The checks and statuses at each of `commits` (full SHAs), with each check run's
/// output title and summary, in one GraphQL call whatever their number; a commit
/// GitHub doesn't know is left out.
pub fn commit_checks(
    dir: &Path,
    commits: &[String],
) -> Result<std::collections::BTreeMap<String, Vec<CheckContext>>> {
    let mut query = String::from(
        "query MergerBaseTips($owner: String!, $name: String!) { repository(owner: $owner, name: $name) {",
    );
    for (i, sha) in commits.iter().enumerate() {
        // Only hexadecimal reaches the query text.
        let sha: String = sha.chars().filter(char::is_ascii_hexdigit).collect();
        query.push_str(&format!(
            " t{i}: object(expression: \"{sha}\") {{ ... on Commit {{ oid statusCheckRollup {{ contexts(first: 100) {{ nodes {{ __typename ... on CheckRun {{ name status conclusion startedAt detailsUrl title summary }} ... on StatusContext {{ context state targetUrl }} }} }} }} }} }}"
        ));
    }
    query.push_str(" } }");
    let q = format!("query={query}");
    let value: serde_json::Value = json(
        dir,
        &[
            "api",
            "graphql",
            "-F",
            "owner={owner}",
            "-F",
            "name={repo}",
            "-f",
            &q,
        ],
    )?;
    let mut out = std::collections::BTreeMap::new();
    for (i, sha) in commits.iter().enumerate() {
        let node = &value["data"]["repository"][format!("t{i}")];
        if node.is_null() {
            continue;
        }
        let contexts = &node["statusCheckRollup"]["contexts"]["nodes"];
        // Raw GraphQL says `null` where gh's own JSON says "" (a running check's
        // conclusion): those fields are dropped, so their defaults stand.
        let mut list: Vec<CheckContext> = Vec::new();
        for node in contexts.as_array().into_iter().flatten() {
            let mut node = node.clone();
            if let Some(fields) = node.as_object_mut() {
                fields.retain(|_, v| !v.is_null());
            }
            list.push(
                serde_json::from_value(node).map_err(|source| GhError::BadJson {
                    args: "api graphql (MergerBaseTips)".into(),
                    source,
                })?,
            );
        }
        out.insert(sha.clone(), list);
    }
    Ok(out)
}

/// A review comment on a line of a pull request's diff.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct ReviewComment {
    pub id: u64,
    pub user: Author,
    pub body: String,
    pub path: String,
    pub line: Option<u64>,
    /// The comment this one answers, for a reply.
    pub in_reply_to_id: Option<u64>,
}

/// The review comments of pull request `n`, replies included, oldest first.
pub fn review_comments(dir: &Path, n: u64) -> Result<Vec<ReviewComment>> {
    let route = format!("repos/{{owner}}/{{repo}}/pulls/{n}/comments?per_page=100");
    let pages: Vec<Vec<ReviewComment>> = json(dir, &["api", "--paginate", "--slurp", &route])?;
    Ok(pages.into_iter().flatten().collect())
}

/// A review thread of a pull request: whether it is resolved, and the ids of its
/// comments (the first one starts it).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReviewThread {
    pub resolved: bool,
    pub comments: Vec<u64>,
}

/// The review threads of pull request `n`, every page of them. Only GraphQL knows
/// whether a thread is resolved.
pub fn review_threads(dir: &Path, n: u64) -> Result<Vec<ReviewThread>> {
    const QUERY: &str = "query=query HallReviewThreads($owner: String!, $name: String!, \
        $number: Int!, $endCursor: String) { repository(owner: $owner, name: $name) { \
        pullRequest(number: $number) { reviewThreads(first: 100, after: $endCursor) { \
        nodes { isResolved comments(first: 100) { nodes { databaseId } } } \
        pageInfo { hasNextPage endCursor } } } } }";
    let number = format!("number={n}");
    let pages: Vec<serde_json::Value> = json(
        dir,
        &[
            "api",
            "graphql",
            "--paginate",
            "--slurp",
            "-F",
            "owner={owner}",
            "-F",
            "name={repo}",
            "-F",
            &number,
            "-f",
            QUERY,
        ],
    )?;
    let mut threads = Vec::new();
    for page in &pages {
        let nodes = &page["data"]["repository"]["pullRequest"]["reviewThreads"]["nodes"];
        for node in nodes.as_array().into_iter().flatten() {
            let comments = node["comments"]["nodes"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|c| c["databaseId"].as_u64())
                .collect();
            threads.push(ReviewThread {
                resolved: node["isResolved"].as_bool().unwrap_or(false),
                comments,
            });
        }
    }
    Ok(threads)
}

/// Answers review comment `comment` of pull request `n` with `body`.
pub fn reply_to_comment(dir: &Path, n: u64, comment: u64, body: &str) -> Result<()> {
    let route = format!("repos/{{owner}}/{{repo}}/pulls/{n}/comments/{comment}/replies");
    let field = format!("body={body}");
    gh(dir, &["api", "--method", "POST", &route, "-f", &field]).map(drop)
}

impl GhError {
    /// GitHub refused for its rate limit (gh passes the API's words on).
    pub fn is_rate_limit(&self) -> bool {
        matches!(self, GhError::Failed { stderr, .. } if stderr.to_ascii_lowercase().contains("rate limit"))
    }
}

/// `gh --version`'s first line, when gh runs.
pub fn version() -> Option<String> {
    let out = gh(Path::new("."), &["--version"]).ok()?;
    crate::platform::first_line(&out)
}
