//! `hall new`: the Front Desk. An item, its branch from the template, and its worktree.

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
    /// What the person should know: Hallmark's files not committed on the base, so
    /// missing from this worktree.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    pub next: Vec<String>,
}

pub fn run(ctx: &Ctx, args: &NewArgs) -> Result<Reply> {
    if let Some(pr) = &args.follow_up {
        return super::follow_up::run(ctx, args, pr);
    }
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
    let source = if args.issue.is_some() {
        Source::Issue
    } else {
        Source::New
    };
    let fresh = Fresh {
        title: &title,
        request: request.as_deref(),
        branch: args.branch.as_deref(),
        base: &hall.config.base,
        source,
        issue: args.issue,
    };
    let made = create(ctx, &hall, &fresh, Vec::new())?;
    finish(&hall, args, made, request.as_deref())
}

/// A new item on a new branch with a worktree of its own.
pub(super) struct Fresh<'a> {
    pub title: &'a str,
    pub request: Option<&'a str>,
    /// The branch name (default: the `branch` template).
    pub branch: Option<&'a str>,
    pub base: &'a str,
    pub source: Source,
    pub issue: Option<u64>,
}

/// Creates the item, its branch from `fresh.base` and its worktree; `more` are written
/// with `created`, in the same write.
pub(super) fn create(
    ctx: &Ctx,
    hall: &Hall,
    fresh: &Fresh<'_>,
    more: Vec<EventKind>,
) -> Result<(ItemId, crate::item::Item)> {
    hall.journal.create_item(|id| -> Result<_> {
        let branch = match fresh.branch {
            Some(b) => b.to_string(),
            None => template::render(
                &hall.config.branch,
                &[
                    ("id", &id.to_string()),
                    ("slug", &template::slug(fresh.title)),
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
        let worktree = crate::hall::worktree::make(hall, id, &branch, fresh.title, fresh.base)?;
        let mut events = vec![ctx.event(
            Some(id),
            EventKind::Created {
                title: fresh.title.to_string(),
                request: fresh.request.map(str::to_string),
                branch,
                base: fresh.base.to_string(),
                worktree: Some(worktree.display().to_string()),
                source: fresh.source,
                issue: fresh.issue,
                pr: None,
            },
        )];
        events.extend(more.into_iter().map(|k| ctx.event(Some(id), k)));
        Ok(events)
    })
}

/// Opens the session when asked, warns about Hallmark's files missing from the base,
/// and says what's next.
pub(super) fn finish(
    hall: &Hall,
    args: &NewArgs,
    made: (ItemId, crate::item::Item),
    request: Option<&str>,
) -> Result<Reply> {
    let (id, item) = made;
    let worktree = item.worktree.clone().unwrap_or_default();
    let mut next = vec![format!("cd {worktree}"), format!("hall status {id}")];
    if args.open {
        // The session starts confined, as `hall claude` starts it.
        let prompt = request.unwrap_or(&item.title).to_string();
        let unconfined = !super::claude::confine_by_default();
        super::claude::launch(
            hall,
            std::path::Path::new(&worktree),
            &id.to_string(),
            unconfined,
            &[prompt],
        )?;
    } else {
        next.push(format!("hall claude {id}"));
    }
    let uncommitted = super::unshared::files(&hall.repo, &item.base);
    let warnings: Vec<String> = super::unshared::warning(&uncommitted, &item.base)
        .into_iter()
        .collect();
    if !warnings.is_empty() {
        next.push(super::unshared::commit_command(
            &hall.repo.main_root,
            &uncommitted,
            &item.base,
        ));
    }
    let reply = NewReply {
        item: id,
        title: item.title.clone(),
        branch: item.branch.clone(),
        base: item.base.clone(),
        worktree: worktree.clone(),
        state: item.state,
        issue: item.issue,
        warnings: warnings.clone(),
        next,
    };
    let text = format!(
        "{id} \"{}\" is in the Workshop.\n  branch   {}\n  worktree {}\n{}",
        reply.title,
        reply.branch,
        reply.worktree,
        next_text(&reply.next)
    );
    Ok(Reply::new(&reply, text).warn(warnings))
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

/// Issue `n`, read with gh, in this command's terms.
fn fetch_issue(hall: &Hall, n: u64) -> Result<crate::gh::Issue> {
    crate::gh::issue(&hall.repo.main_root, n).map_err(|e| {
        HallError::from(e)
            .context(format!("`--issue {n}` can't be read"))
            .hint("hall new --title \"…\"")
    })
}
