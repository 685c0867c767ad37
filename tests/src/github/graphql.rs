//! GraphQL, answered by operation name. Each answer carries every field gh may select
//! for that object (gh keeps only what it asked for), in the shapes GitHub's schema
//! gives them, including the aliases gh uses (`statusCheckRollup: commits(last: 1)`).

use serde_json::{Value, json};

use super::model::{Check, CheckState, Comment, NOW, Pr, PrState, World};
use crate::http::Response;

/// `PullRequestByNumber` from `query PullRequestByNumber($owner: …) { … }`, or the name
/// of a `mutation`; the first named operation of the document.
pub fn operation_name(query: &str) -> Option<String> {
    let words: Vec<&str> = query
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .collect();
    words
        .windows(2)
        .find(|w| matches!(w[0], "query" | "mutation"))
        .map(|w| w[1].to_string())
}

/// Labels as GitHub's schema gives a connection of them.
fn labels(names: &[String]) -> Value {
    let nodes: Vec<Value> = names
        .iter()
        .map(|n| json!({ "id": format!("LA_kwSim{n}"), "name": n, "description": "", "color": "ededed" }))
        .collect();
    json!({ "nodes": nodes, "totalCount": names.len() })
}

fn data(value: Value) -> Response {
    Response::json(200, &json!({ "data": value }))
}

/// GitHub's GraphQL error, with the data it names set to null.
fn error(kind: &str, message: &str, null_data: Value) -> Response {
    Response::json(
        200,
        &json!({ "data": null_data, "errors": [{ "type": kind, "message": message }] }),
    )
}

pub fn answer(w: &mut World, operation: &str, query: &str, vars: &Value) -> Response {
    w.refresh();
    match operation {
        "RepositoryInfo" | "RepositoryNetwork" | "RepositoryFindFork" => {
            data(json!({ "repository": repository(w) }))
        }
        "UserCurrent" | "CurrentUser" | "ViewerLogin" => {
            data(json!({ "viewer": { "login": "hallmark-bot", "id": "U_kwSim1" } }))
        }
        "PullRequestByNumber" => {
            let n = vars["pr_number"].as_u64().unwrap_or(0);
            match w.prs.get(&n) {
                Some(pr) => data(json!({ "repository": { "pullRequest": pr_json(w, pr) } })),
                None => error(
                    "NOT_FOUND",
                    &format!("Could not resolve to a PullRequest with the number of {n}."),
                    json!({ "repository": { "pullRequest": null } }),
                ),
            }
        }
        "PullRequestForBranch" => {
            let head = vars["headRefName"].as_str().unwrap_or_default();
            let nodes: Vec<Value> = w
                .prs
                .values()
                .rev()
                .filter(|p| p.head == head)
                .map(|p| pr_json(w, p))
                .collect();
            data(json!({ "repository": { "pullRequests": { "nodes": nodes,
                "pageInfo": { "hasNextPage": false, "endCursor": null } } } }))
        }
        "PullRequestList" | "PullRequestSearch" => pull_request_list(w, vars),
        "IssueByNumber" | "IssueByNumberWithProjects" => {
            let n = vars["number"].as_u64().unwrap_or(0);
            let issue = if let Some(i) = w.issues.get(&n) {
                Some(json!({ "__typename": "Issue", "id": format!("I_kwSim{n}"),
                    "number": n, "title": i.title, "body": i.body, "url": w.url("issues", n),
                    "state": "OPEN", "closed": false, "author": { "login": "octocat" },
                    "comments": comments(&i.comments), "labels": labels(&i.labels),
                    "assignees": { "nodes": [], "totalCount": 0 }, "createdAt": NOW, "updatedAt": NOW }))
            } else {
                w.prs.get(&n).map(|p| pr_json(w, p))
            };
            match issue {
                Some(issue) => {
                    data(json!({ "repository": { "hasIssuesEnabled": true, "issue": issue } }))
                }
                None => error(
                    "NOT_FOUND",
                    &format!(
                        "Could not resolve to an issue or pull request with the number of {n}."
                    ),
                    json!({ "repository": { "hasIssuesEnabled": true, "issue": null } }),
                ),
            }
        }
        // Hallmark's own query (`gh api graphql`): which review threads are resolved.
        "HallReviewThreads" => {
            let n = vars["number"].as_u64().unwrap_or(0);
            match w.prs.get(&n) {
                Some(pr) => {
                    let nodes: Vec<Value> = pr
                        .line_comments
                        .iter()
                        .filter(|c| c.in_reply_to.is_none())
                        .map(|root| {
                            let comments: Vec<Value> = pr
                                .line_comments
                                .iter()
                                .filter(|c| c.id == root.id || c.in_reply_to == Some(root.id))
                                .map(|c| json!({ "databaseId": c.id, "body": c.body }))
                                .collect();
                            json!({ "id": format!("PRRT_kwSim{}", root.id),
                                "isResolved": pr.resolved.contains(&root.id),
                                "isOutdated": false,
                                "comments": { "nodes": comments } })
                        })
                        .collect();
                    data(json!({ "repository": { "pullRequest": { "reviewThreads": {
                        "nodes": nodes,
                        "pageInfo": { "hasNextPage": false, "endCursor": null } } } } }))
                }
                None => error(
                    "NOT_FOUND",
                    &format!("Could not resolve to a PullRequest with the number of {n}."),
                    json!({ "repository": { "pullRequest": null } }),
                ),
            }
        }
        "PullRequestCreate" => {
            let input = &vars["input"];
            let s = |k: &str| input[k].as_str().unwrap_or_default().to_string();
            match w.create_pr(
                &s("headRefName"),
                &s("baseRefName"),
                &s("title"),
                &s("body"),
                "hallmark-bot",
            ) {
                Ok(n) => {
                    let pr = w.prs[&n].clone();
                    data(json!({ "createPullRequest": { "pullRequest": pr_json(w, &pr) } }))
                }
                Err(message) => error(
                    "UNPROCESSABLE",
                    &message,
                    json!({ "createPullRequest": null }),
                ),
            }
        }
        "CommentCreate" => {
            let input = &vars["input"];
            let subject = input["subjectId"].as_str().unwrap_or_default();
            let body = input["body"].as_str().unwrap_or_default();
            let Some(n) = World::number_of(subject) else {
                return error(
                    "NOT_FOUND",
                    &format!("Could not resolve to a node with the global id of '{subject}'"),
                    json!({ "addComment": null }),
                );
            };
            match w.add_comment(n, "hallmark-bot", body) {
                Ok(()) => {
                    let kind = if w.issues.contains_key(&n) {
                        "issues"
                    } else {
                        "pull"
                    };
                    let url = format!("{}#issuecomment-{n}", w.url(kind, n));
                    data(json!({ "addComment": { "commentEdge": { "node": { "url": url } } } }))
                }
                Err(message) => error("NOT_FOUND", &message, json!({ "addComment": null })),
            }
        }
        "PullRequestMerge" => {
            let input = &vars["input"];
            let id = input["pullRequestId"].as_str().unwrap_or_default();
            let method = input["mergeMethod"].as_str().unwrap_or("MERGE");
            let expected = input["expectedHeadOid"].as_str();
            let result = World::number_of(id)
                .ok_or_else(|| format!("Could not resolve to a node with the global id of '{id}'"))
                .and_then(|n| w.merge(n, method, expected));
            match result {
                Ok(()) => data(json!({ "mergePullRequest": { "clientMutationId": null } })),
                Err(message) => error(
                    "UNPROCESSABLE",
                    &message,
                    json!({ "mergePullRequest": null }),
                ),
            }
        }
        "MergerBaseTips" => data(json!({ "repository": commit_objects(w, query) })),
        "PullRequestStatusChecks" => {
            let id = vars["id"].as_str().unwrap_or_default();
            match World::number_of(id).and_then(|n| w.prs.get(&n)) {
                Some(pr) => data(json!({ "node": { "statusCheckRollup": rollup(w, pr) } })),
                None => error(
                    "NOT_FOUND",
                    &format!("Could not resolve to a node with the global id of '{id}'"),
                    json!({ "node": null }),
                ),
            }
        }
        op if op.ends_with("_fields") || op.ends_with("_fields2") || query.contains("__type(") => {
            introspection(query)
        }
        other => {
            w.note_error(format!("unsupported GraphQL operation {other}: {}", vars));
            error(
                "SIMULATOR",
                &format!("the GitHub simulator does not answer the operation {other}"),
                Value::Null,
            )
        }
    }
}

/// `tN: object(expression: "<sha>") { ... on Commit { oid statusCheckRollup { contexts
/// … } } }`, as many as the query names: each commit with the check runs the test set
/// at it (a null rollup when none).
fn commit_objects(w: &World, query: &str) -> Value {
    let mut out = serde_json::Map::new();
    let mut rest = query;
    while let Some(i) = rest.find(": object(expression:") {
        let alias = rest[..i]
            .rsplit(|c: char| !(c.is_alphanumeric() || c == '_'))
            .next()
            .unwrap_or_default()
            .to_string();
        let after = &rest[i + ": object(expression:".len()..];
        let sha = after
            .trim_start()
            .trim_start_matches('"')
            .split('"')
            .next()
            .unwrap_or_default()
            .to_string();
        let known = w
            .git(&["cat-file", "-e", &format!("{sha}^{{commit}}")])
            .is_ok();
        let value = if known {
            let rollup = w.ci.run_at(&sha).map(|(id, checks)| {
                let nodes: Vec<Value> = checks.iter().map(|c| check_json(*id, c)).collect();
                json!({ "contexts": { "nodes": nodes } })
            });
            json!({ "oid": sha, "statusCheckRollup": rollup })
        } else {
            Value::Null
        };
        out.insert(alias, value);
        rest = after;
    }
    Value::Object(out)
}

fn repository(w: &World) -> Value {
    let repo = json!({
        "id": "R_kwSim1", "databaseId": 1, "name": w.name, "owner": { "login": w.owner },
        "sshUrl": format!("git@{}:{}/{}.git", super::HOST, w.owner, w.name),
        "url": format!("http://{}/{}/{}", super::HOST, w.owner, w.name),
        "hasIssuesEnabled": true, "description": "", "hasWikiEnabled": false,
        "viewerPermission": "ADMIN", "defaultBranchRef": { "name": "main" },
        "isPrivate": false, "isFork": false, "isArchived": false,
    });
    let mut full = repo.clone();
    full["parent"] = Value::Null;
    full["mergeCommitAllowed"] = json!(true);
    full["rebaseMergeAllowed"] = json!(true);
    full["squashMergeAllowed"] = json!(true);
    full
}

fn comments(list: &[Comment]) -> Value {
    let nodes: Vec<Value> = list
        .iter()
        .map(|c| {
            json!({ "id": format!("IC_kwSim{}", c.id), "databaseId": c.id,
                "author": { "login": c.author }, "authorAssociation": "MEMBER", "body": c.body,
                "createdAt": NOW, "includesCreatedEdit": false, "isMinimized": false,
                "minimizedReason": "", "reactionGroups": [], "url": "", "viewerDidAuthor": false })
        })
        .collect();
    json!({ "nodes": nodes, "totalCount": list.len(),
            "pageInfo": { "hasNextPage": false, "endCursor": null } })
}

fn check_json(run_id: u64, c: &Check) -> Value {
    let (status, conclusion) = match c.state {
        CheckState::NeverStarted => ("QUEUED", Value::Null),
        CheckState::Running => ("IN_PROGRESS", Value::Null),
        CheckState::Success => ("COMPLETED", json!("SUCCESS")),
        CheckState::Failure => ("COMPLETED", json!("FAILURE")),
    };
    let started = if c.state == CheckState::NeverStarted {
        Value::Null
    } else {
        json!(NOW)
    };
    json!({ "__typename": "CheckRun", "name": c.name, "status": status, "conclusion": conclusion,
        "startedAt": started, "completedAt": if conclusion.is_null() { Value::Null } else { json!(NOW) },
        "detailsUrl": format!("http://{}/actions/runs/{run_id}", super::HOST),
        "isRequired": true, "title": c.title, "summary": c.summary,
        "checkSuite": { "workflowRun": { "databaseId": run_id, "event": "pull_request",
            "workflow": { "name": "CI" } } } })
}

/// The alias gh selects as `statusCheckRollup: commits(last: 1) { nodes { commit {
/// statusCheckRollup { contexts … } } } }`.
fn rollup(w: &World, pr: &Pr) -> Value {
    let contexts: Vec<Value> =
        w.ci.run_at(&pr.head_oid)
            .map(|(id, checks)| checks.iter().map(|c| check_json(*id, c)).collect())
            .unwrap_or_default();
    let total = contexts.len();
    let state = w.ci.run_at(&pr.head_oid).map(|(_, checks)| {
        if checks.iter().any(|c| c.state == CheckState::Failure) {
            "FAILURE"
        } else if checks.iter().all(|c| c.state == CheckState::Success) {
            "SUCCESS"
        } else {
            "PENDING"
        }
    });
    json!({ "nodes": [{ "commit": { "oid": pr.head_oid, "statusCheckRollup": state.map(|s| json!({
        "state": s,
        "contexts": { "nodes": contexts, "totalCount": total,
            "checkRunCount": total, "checkRunCountsByState": [], "statusContextCount": 0,
            "statusContextCountsByState": [],
            "pageInfo": { "hasNextPage": false, "endCursor": null } } })) } }] })
}

pub fn pr_json(w: &World, pr: &Pr) -> Value {
    let decision = World::review_decision(pr);
    let reviews: Vec<Value> = pr
        .reviews
        .iter()
        .map(|r| {
            json!({ "id": format!("PRR_kwSim{}", r.id), "author": { "login": r.author },
                "authorAssociation": "MEMBER", "body": r.body, "submittedAt": NOW,
                "includesCreatedEdit": false, "reactionGroups": [], "state": r.state.as_str(),
                "commit": { "oid": r.commit } })
        })
        .collect();
    let checks_failed =
        w.ci.run_at(&pr.head_oid)
            .is_some_and(|(_, c)| c.iter().any(|c| c.state == CheckState::Failure));
    let merge_state = match (pr.state, pr.mergeable) {
        (PrState::Open, "CONFLICTING") => "DIRTY",
        (PrState::Open, "UNKNOWN") => "UNKNOWN",
        (PrState::Open, _) if decision == "CHANGES_REQUESTED" => "BLOCKED",
        (PrState::Open, _) if checks_failed => "UNSTABLE",
        (PrState::Open, _) => "CLEAN",
        _ => "UNKNOWN",
    };
    let base_oid = w.branch_oid(&pr.base).unwrap_or_default();
    let mut out = json!({
        "id": World::pr_node_id(pr.number), "number": pr.number, "title": pr.title, "body": pr.body,
        "url": w.url("pull", pr.number), "state": pr.state.as_str(),
        "closed": pr.state != PrState::Open, "merged": pr.state == PrState::Merged,
        "isDraft": false, "isCrossRepository": false, "maintainerCanModify": true, "locked": false,
        "headRefName": pr.head, "headRefOid": pr.head_oid, "baseRefName": pr.base, "baseRefOid": base_oid,
        "headRepository": { "id": "R_kwSim1", "name": w.name },
        "headRepositoryOwner": { "id": "U_kwSim0", "login": w.owner },
        "author": { "login": pr.author }, "mergeable": pr.mergeable, "mergeStateStatus": merge_state,
        "reviewDecision": decision, "createdAt": NOW, "updatedAt": NOW,
        "closedAt": if pr.state == PrState::Open { Value::Null } else { json!(NOW) },
        "mergedAt": if pr.state == PrState::Merged { json!(NOW) } else { Value::Null },
        "mergeCommit": pr.merge_commit.as_ref().map(|oid| json!({ "oid": oid })),
        "mergedBy": if pr.state == PrState::Merged { json!({ "login": "hallmark-bot" }) } else { Value::Null },
        "additions": 0, "deletions": 0, "changedFiles": 0,
    });
    let more = json!({
        "comments": comments(&pr.comments),
        "reviews": { "nodes": reviews.clone(), "totalCount": reviews.len(),
            "pageInfo": { "hasNextPage": false, "endCursor": null } },
        "latestReviews": { "nodes": reviews, "totalCount": pr.reviews.len() },
        "reviewRequests": { "nodes": [], "totalCount": 0 },
        "commits": { "nodes": [{ "commit": { "oid": pr.head_oid, "messageHeadline": pr.title,
            "messageBody": "", "committedDate": NOW, "authoredDate": NOW,
            "authors": { "nodes": [{ "name": "Ada", "email": "ada@example.com", "user": null }] } } }],
            "totalCount": 1 },
        "statusCheckRollup": rollup(w, pr),
        "labels": { "nodes": [], "totalCount": 0 }, "assignees": { "nodes": [], "totalCount": 0 },
        "projectCards": { "nodes": [], "totalCount": 0 }, "projectItems": { "nodes": [], "totalCount": 0 },
        "milestone": null, "closingIssuesReferences": { "nodes": [], "totalCount": 0 },
        "autoMergeRequest": null, "isInMergeQueue": false, "isMergeQueueEnabled": false,
        "reactionGroups": [], "files": { "nodes": [], "totalCount": 0 },
        "potentialMergeCommit": null,
    });
    if let (Value::Object(out), Value::Object(more)) = (&mut out, more) {
        out.extend(more);
    }
    out
}

/// `gh pr list`: filtered by state, base and head, paged by `first`/`$limit` and the
/// `endCursor` (an offset, as text).
fn pull_request_list(w: &World, vars: &Value) -> Response {
    let states: Vec<String> = match &vars["state"] {
        Value::Array(a) => a
            .iter()
            .filter_map(|s| s.as_str().map(str::to_string))
            .collect(),
        Value::String(s) => vec![s.clone()],
        _ => vec!["OPEN".to_string()],
    };
    let base = vars["baseBranch"].as_str();
    let head = vars["headBranch"].as_str();
    let matching: Vec<&Pr> = w
        .prs
        .values()
        .rev()
        .filter(|p| states.iter().any(|s| s == p.state.as_str()))
        .filter(|p| base.is_none_or(|b| p.base == b))
        .filter(|p| head.is_none_or(|h| p.head == h))
        .collect();
    let first = vars["limit"]
        .as_u64()
        .or_else(|| vars["first"].as_u64())
        .unwrap_or(30)
        .min(100) as usize;
    let offset: usize = vars["endCursor"]
        .as_str()
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let page: Vec<Value> = matching
        .iter()
        .skip(offset)
        .take(first)
        .map(|p| pr_json(w, p))
        .collect();
    let end = offset + page.len();
    data(json!({ "repository": { "pullRequests": {
        "totalCount": matching.len(), "nodes": page,
        "pageInfo": { "hasNextPage": end < matching.len(), "endCursor": end.to_string() } } } }))
}

/// gh's field checks (`PullRequest: __type(name: "PullRequest") { fields … }`): every
/// field of the types gh asks about that this simulator can answer.
fn introspection(query: &str) -> Response {
    let mut out = serde_json::Map::new();
    let mut rest = query;
    while let Some(i) = rest.find("__type(name:") {
        let before = &rest[..i];
        let alias = before
            .trim_end()
            .trim_end_matches(':')
            .rsplit(|c: char| !(c.is_alphanumeric() || c == '_'))
            .next()
            .unwrap_or_default()
            .to_string();
        let after = &rest[i + "__type(name:".len()..];
        let name = after
            .trim_start()
            .trim_start_matches('"')
            .split('"')
            .next()
            .unwrap_or_default()
            .to_string();
        let fields: Vec<Value> = fields_of(&name)
            .iter()
            .map(|f| json!({ "name": f }))
            .collect();
        out.insert(alias, json!({ "fields": fields }));
        rest = after;
    }
    data(Value::Object(out))
}

fn fields_of(type_name: &str) -> &'static [&'static str] {
    match type_name {
        "PullRequest" => &[
            "additions",
            "assignees",
            "author",
            "autoMergeRequest",
            "baseRefName",
            "baseRefOid",
            "body",
            "changedFiles",
            "closed",
            "closedAt",
            "closingIssuesReferences",
            "comments",
            "commits",
            "createdAt",
            "deletions",
            "files",
            "headRefName",
            "headRefOid",
            "headRepository",
            "headRepositoryOwner",
            "id",
            "isCrossRepository",
            "isDraft",
            "isInMergeQueue",
            "isMergeQueueEnabled",
            "labels",
            "latestReviews",
            "maintainerCanModify",
            "mergeCommit",
            "mergeStateStatus",
            "mergeable",
            "merged",
            "mergedAt",
            "mergedBy",
            "milestone",
            "number",
            "potentialMergeCommit",
            "projectCards",
            "projectItems",
            "reactionGroups",
            "reviewDecision",
            "reviewRequests",
            "reviews",
            "state",
            "statusCheckRollup",
            "title",
            "updatedAt",
            "url",
        ],
        "StatusCheckRollupContextConnection" => &[
            "checkRunCount",
            "checkRunCountsByState",
            "edges",
            "nodes",
            "pageInfo",
            "statusContextCount",
            "statusContextCountsByState",
            "totalCount",
        ],
        "WorkflowRun" => &[
            "checkSuite",
            "createdAt",
            "databaseId",
            "event",
            "id",
            "resourcePath",
            "runNumber",
            "updatedAt",
            "url",
            "workflow",
        ],
        "Issue" => &[
            "assignees",
            "author",
            "body",
            "closed",
            "closedAt",
            "comments",
            "createdAt",
            "id",
            "labels",
            "milestone",
            "number",
            "projectCards",
            "projectItems",
            "reactionGroups",
            "state",
            "stateReason",
            "title",
            "updatedAt",
            "url",
        ],
        _ => &[],
    }
}
