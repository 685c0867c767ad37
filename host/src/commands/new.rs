//! `hall new`: the Front Desk. An item, its branch from the template, and its worktree.

use std::path::PathBuf;

use serde::Serialize;

use super::{Ctx, Hall, Reply, next_text};
use crate::cli::NewArgs;
use crate::error::{Code, HallError, Result};
use crate::git;
use crate::item::{EventKind, ItemId, Source, State};
use crate::template;

#[derive(Serialize, schemars::JsonSchema)]
pub struct NewReply {
    pub item: ItemId,
    pub title: String,
    pub branch: String,
    pub base: String,
    pub worktree: String,
    pub state: State,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub issue: Option<u64>,
    pub next: Vec<String>,
}

/// What `gh issue view --json number,title,body,url` prints.
#[derive(serde::Deserialize)]
struct GhIssue {
    title: String,
    #[serde(default)]
    body: String,
    #[serde(default)]
    url: String,
}

pub fn run(ctx: &Ctx, args: &NewArgs) -> Result<Reply> {
    let hall = ctx.hall()?;
    let mut request = args.request.clone().filter(|r| !r.trim().is_empty());
    let mut title = args.title.clone().filter(|t| !t.trim().is_empty());
    if let Some(n) = args.issue {
        let issue = fetch_issue(&hall, n)?;
        title = title.or(Some(issue.title.clone()));
        let body = format!("{}\n\n{}\n{}", issue.title, issue.body, issue.url);
        request = Some(match request {
            Some(r) => format!("{r}\n\n{body}"),
            None => body,
        });
    }
    let title = match (title, &request) {
        (Some(t), _) => t.trim().to_string(),
        (None, Some(r)) => first_line(r),
        (None, None) => {
            return Err(
                HallError::usage("say what to build: a request, --title or --issue")
                    .hint("hall new --title \"…\"")
                    .hint("hall new \"what to build\""),
            );
        }
    };
    let base = hall.config.base.clone();
    let made = hall.journal.create_item(|id| {
        let branch = match &args.branch {
            Some(b) => b.clone(),
            None => template::render(
                &hall.config.branch,
                &[
                    ("id", &id.to_string()),
                    ("slug", &template::slug(&title)),
                    ("repo", &hall.repo.name()),
                ],
                false,
            ),
        };
        if git::branch_exists(&hall.repo.main_root, &branch) {
            return Err(HallError::new(
                Code::WrongState,
                format!("branch {branch} already exists"),
            )
            .hint(format!("git switch {branch} && hall adopt"))
            .hint("hall new --branch <another name> …"));
        }
        let worktree = make_worktree(&hall, id, &branch, &title, &base)?;
        Ok(vec![ctx.event(
            Some(id),
            EventKind::Created {
                title: title.clone(),
                request: request.clone(),
                branch,
                base: base.clone(),
                worktree: Some(worktree.display().to_string()),
                source: if args.issue.is_some() {
                    Source::Issue
                } else {
                    Source::New
                },
                issue: args.issue,
                pr: None,
            },
        )])
    })?;
    let (id, item) = made;
    let worktree = item.worktree.clone().unwrap_or_default();
    let mut next = vec![format!("cd {worktree}"), format!("hall status {id}")];
    if args.open {
        // The session starts confined, as `hall claude` starts it.
        let prompt = request.as_deref().unwrap_or(&title).to_string();
        let unconfined = !super::claude::confine_by_default();
        super::claude::launch(
            &hall,
            std::path::Path::new(&worktree),
            &id.to_string(),
            unconfined,
            &[prompt],
        )?;
    } else {
        next.push(format!("hall claude {id}"));
    }
    let reply = NewReply {
        item: id,
        title: item.title.clone(),
        branch: item.branch.clone(),
        base: item.base.clone(),
        worktree: worktree.clone(),
        state: item.state,
        issue: item.issue,
        next,
    };
    let text = format!(
        "{id} \"{}\" is in the Workshop.\n  branch   {}\n  worktree {}\n{}",
        reply.title,
        reply.branch,
        reply.worktree,
        next_text(&reply.next)
    );
    Ok(Reply::new(&reply, text))
}

fn first_line(r: &str) -> String {
    let line = r
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("work");
    let mut t: String = line.chars().take(72).collect();
    if line.chars().count() > 72 {
        t.push('…');
    }
    t
}

/// Runs the worktree template and finds where it put the worktree.
pub fn make_worktree(
    hall: &Hall,
    id: ItemId,
    branch: &str,
    title: &str,
    base: &str,
) -> Result<PathBuf> {
    let cmd = template::render(
        &hall.config.worktree,
        &[
            ("repo", &hall.repo.name()),
            ("id", &id.to_string()),
            ("branch", branch),
            ("slug", &template::slug(title)),
            ("title", title),
            ("base", base),
        ],
        true,
    );
    template::run(&cmd, &hall.repo.main_root)
        .map_err(|e| e.hint("hall doctor").hint("edit .hallmark.toml: worktree"))?;
    let found = git::worktrees(&hall.repo.main_root)?
        .into_iter()
        .find(|w| w.branch.as_deref() == Some(branch));
    match found {
        Some(w) => Ok(w.path),
        None => Err(HallError::new(
            Code::CommandFailed,
            format!("`{cmd}` ran but no worktree has branch {branch}"),
        )
        .hint("edit .hallmark.toml: worktree")),
    }
}

fn fetch_issue(hall: &Hall, n: u64) -> Result<GhIssue> {
    let out = std::process::Command::new("gh")
        .args([
            "issue",
            "view",
            &n.to_string(),
            "--json",
            "number,title,body,url",
        ])
        .current_dir(&hall.repo.main_root)
        .output();
    let out = match out {
        Ok(o) => o,
        Err(_) => {
            return Err(HallError::new(
                Code::GhUnavailable,
                "`--issue` needs the GitHub CLI, and gh is not installed",
            )
            .hint("install gh from https://cli.github.com, then `gh auth login`")
            .hint("hall new --title \"…\""));
        }
    };
    if !out.status.success() {
        return Err(HallError::new(
            Code::GhUnavailable,
            format!(
                "gh could not read issue #{n}: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ),
        )
        .hint("gh auth status")
        .hint("hall new --title \"…\""));
    }
    serde_json::from_slice(&out.stdout).map_err(|e| {
        HallError::new(
            Code::GhUnavailable,
            format!("gh printed unexpected JSON: {e}"),
        )
    })
}
