//! The REST routes gh uses: Actions runs, their jobs and re-runs, review comments and
//! their replies, the rate limit.

use serde_json::{Value, json};

use super::model::{Check, CheckState, NOW, RATE_LIMIT, RATE_RESET, World};
use crate::http::{Request, Response};

fn not_found(w: &mut World, request: &Request) -> Response {
    w.note_error(format!(
        "unsupported REST route {} {}",
        request.method, request.path
    ));
    Response::json(
        404,
        &json!({ "message": "Not Found", "documentation_url": "https://docs.github.com/rest" }),
    )
}

fn run_json(w: &World, id: u64, sha: &str, checks: &[Check]) -> Value {
    let (status, conclusion) = if checks.iter().any(|c| c.state == CheckState::NeverStarted) {
        ("queued", Value::Null)
    } else if checks.iter().any(|c| c.state == CheckState::Running) {
        ("in_progress", Value::Null)
    } else if checks.iter().any(|c| c.state == CheckState::Failure) {
        ("completed", json!("failure"))
    } else {
        ("completed", json!("success"))
    };
    let branch = w
        .prs
        .values()
        .find(|p| p.head_oid == sha)
        .map(|p| p.head.clone())
        .unwrap_or_default();
    let attempt = checks.iter().map(|c| c.attempt).max().unwrap_or(1);
    let base = format!(
        "http://api.{}/repos/{}/{}/actions/runs/{id}",
        super::HOST,
        w.owner,
        w.name
    );
    json!({ "id": id, "name": "CI", "display_title": "CI", "head_branch": branch, "head_sha": sha,
        "status": status, "conclusion": conclusion, "workflow_id": 1, "event": "pull_request",
        "run_attempt": attempt, "run_number": id, "created_at": NOW, "updated_at": NOW,
        "run_started_at": NOW, "url": base, "html_url": format!("http://{}/{}/{}/actions/runs/{id}", super::HOST, w.owner, w.name),
        "jobs_url": format!("{base}/jobs"), "path": ".github/workflows/ci.yml" })
}

pub fn answer(w: &mut World, request: &Request, body: &Value) -> Response {
    let prefix = format!("/repos/{}/{}", w.owner, w.name);
    let path = request.path.clone();
    if path == "/rate_limit" {
        let core = json!({ "limit": RATE_LIMIT, "remaining": w.rate_remaining,
            "reset": RATE_RESET, "used": RATE_LIMIT - w.rate_remaining });
        return Response::json(
            200,
            &json!({ "resources": { "core": core, "graphql": core }, "rate": core }),
        );
    }
    let Some(rest) = path.strip_prefix(&prefix) else {
        return not_found(w, request);
    };
    let parts: Vec<&str> = rest.split('/').filter(|p| !p.is_empty()).collect();
    match (request.method.as_str(), parts.as_slice()) {
        ("GET", ["actions", "runs"]) => {
            let sha = request.query_value("head_sha");
            let runs: Vec<Value> =
                w.ci.runs
                    .iter()
                    .filter(|(s, _)| sha.is_none_or(|want| want == s.as_str()))
                    .map(|(s, (id, checks))| run_json(w, *id, s, checks))
                    .collect();
            Response::json(
                200,
                &json!({ "total_count": runs.len(), "workflow_runs": runs }),
            )
        }
        ("GET", ["actions", "runs", id]) => match id.parse().ok().and_then(|id| w.ci.run_by_id(id))
        {
            Some((sha, checks)) => {
                let (sha, checks) = (sha.to_string(), checks.clone());
                Response::json(200, &run_json(w, id.parse().unwrap_or(0), &sha, &checks))
            }
            None => not_found(w, request),
        },
        ("GET", ["actions", "runs", id, "jobs"]) => {
            match id.parse().ok().and_then(|id| w.ci.run_by_id(id)) {
                Some((sha, checks)) => {
                    let jobs: Vec<Value> = checks
                    .iter()
                    .enumerate()
                    .map(|(i, c)| {
                        let (status, conclusion) = match c.state {
                            CheckState::NeverStarted => ("queued", Value::Null),
                            CheckState::Running => ("in_progress", Value::Null),
                            CheckState::Success => ("completed", json!("success")),
                            CheckState::Failure => ("completed", json!("failure")),
                        };
                        json!({ "id": 7000 + i, "run_id": id.parse::<u64>().unwrap_or(0), "name": c.name,
                            "head_sha": sha, "status": status, "conclusion": conclusion,
                            "started_at": NOW, "completed_at": NOW, "run_attempt": c.attempt, "steps": [] })
                    })
                    .collect();
                    Response::json(200, &json!({ "total_count": jobs.len(), "jobs": jobs }))
                }
                None => not_found(w, request),
            }
        }
        ("GET", ["actions", "workflows", _]) => Response::json(
            200,
            &json!({ "id": 1, "name": "CI", "path": ".github/workflows/ci.yml", "state": "active" }),
        ),
        ("POST", ["actions", "runs", id, "rerun-failed-jobs"]) => {
            if id.parse().is_ok_and(|id| w.ci.rerun_failed(id)) {
                Response::json(201, &json!({}))
            } else {
                not_found(w, request)
            }
        }
        ("GET", ["pulls", n, "comments"]) => {
            match n.parse().ok().and_then(|n: u64| w.prs.get(&n)) {
                Some(pr) => {
                    let list: Vec<Value> = pr
                        .line_comments
                        .iter()
                        .map(|c| {
                            json!({ "id": c.id, "user": { "login": c.author }, "body": c.body,
                            "path": c.path, "line": c.line, "in_reply_to_id": c.in_reply_to,
                            "commit_id": pr.head_oid, "created_at": NOW, "updated_at": NOW })
                        })
                        .collect();
                    Response::json(200, &Value::Array(list))
                }
                None => not_found(w, request),
            }
        }
        ("POST", ["pulls", n, "comments", id, "replies"]) => {
            let text = body["body"].as_str().unwrap_or_default();
            let (Ok(n), Ok(id)) = (n.parse(), id.parse()) else {
                return not_found(w, request);
            };
            match w.reply(n, id, "hallmark-bot", text) {
                Ok(new) => Response::json(
                    201,
                    &json!({ "id": new, "body": text, "in_reply_to_id": id }),
                ),
                Err(message) => Response::json(404, &json!({ "message": message })),
            }
        }
        ("GET", []) => Response::json(
            200,
            &json!({ "id": 1, "name": w.name, "full_name": format!("{}/{}", w.owner, w.name),
                "default_branch": "main", "owner": { "login": w.owner } }),
        ),
        _ => not_found(w, request),
    }
}
