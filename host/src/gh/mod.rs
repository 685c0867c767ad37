//! The typed adapter over the GitHub CLI.
//!
//! Every `gh` process the project starts is started here, with the JSON shapes it
//! prints as Rust types. Hallmark asks gh for what it needs by field name
//! (`--json title,body,url`), so the types below list exactly those fields, each with a
//! default: an older gh that leaves one out still decodes. What to do when gh fails is
//! the caller's to say.

use std::path::Path;
use std::process::{Command, Output, Stdio};

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

/// An issue, as `gh issue view --json number,title,body,url` prints it.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct Issue {
    pub number: u64,
    pub title: String,
    pub body: String,
    pub url: String,
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
    let out = Command::new("gh")
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
        &["issue", "view", &n, "--json", "number,title,body,url"],
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

/// The fields [`open_pull_requests`] asks for.
pub const OPEN_PR_FIELDS: &str = "number,title,headRefName,headRefOid,baseRefName,url,state,mergeable,reviewDecision,latestReviews";

/// Every open pull request of the repository at `dir`, newest first, in as few calls as
/// GitHub's paging allows (100 a page: 200 open PRs are two requests).
pub fn open_pull_requests(dir: &Path) -> Result<Vec<PullRequest>> {
    json(
        dir,
        &[
            "pr",
            "list",
            "--state",
            "open",
            "--limit",
            "10000",
            "--json",
            OPEN_PR_FIELDS,
        ],
    )
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
