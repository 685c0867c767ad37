//! `hall new`: the Front Desk. An item, its branch from the template, and its worktree.

use serde::Serialize;

use super::{Ctx, Hall, Placed, Reply, next_text};
use crate::cli::NewArgs;
use crate::error::{Code, HallError, Result};
use crate::git;
use crate::item::{EventKind, ItemId, Source, State};
use crate::office::intake::Intake;
use crate::rooms::types::PlanPart;
use crate::template;

#[derive(Serialize, schemars::JsonSchema)]
pub struct NewReply {
    #[serde(flatten)]
    pub placed: Placed,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub issue: Option<u64>,
    /// The item this one is a part of (`--parent`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent: Option<ItemId>,
    /// What the Front Desk's intake made of the request (absent when it did not run:
    /// `--parent`, `--follow-up`, adopting).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub intake: Option<IntakeReply>,
    /// The parts the request was split into, each an item of its own.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<PartReply>,
    /// What the person should know: Hallmark's files not committed on the base, so
    /// missing from this worktree.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    pub next: Vec<String>,
}

/// Whether the request was split, and if not, why.
#[derive(Serialize, schemars::JsonSchema)]
pub struct IntakeReply {
    pub split: bool,
    /// Reason codes when it made one item (`no_split`, `splitting_off`, `one_part`,
    /// `overlapping_paths`, `timed_out`, `no_model`, `not_a_plan`…).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub reasons: Vec<String>,
    /// The same, in sentences.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub why: Vec<String>,
}

/// One part of a split request.
#[derive(Serialize, schemars::JsonSchema)]
pub struct PartReply {
    pub item: ItemId,
    pub title: String,
    pub branch: String,
    pub worktree: String,
    pub paths: Vec<String>,
    pub acceptance: String,
}

pub fn run(ctx: &Ctx, args: &NewArgs) -> Result<Reply> {
    if let Some(pr) = &args.follow_up {
        return super::follow_up::run(ctx, args, pr);
    }
    let hall = ctx.hall()?;
    let mut request = args.request.clone().filter(|r| !r.trim().is_empty());
    let mut title = args.title.clone().filter(|t| !t.trim().is_empty());
    let mut linked = Vec::new();
    if let Some(n) = args.issue {
        let issue = fetch_issue(&hall, n)?;
        title = title.or(Some(issue.title.clone()));
        let labels: Vec<String> = issue.labels.iter().map(|l| l.name.clone()).collect();
        let mut body = format!("{}\n\n{}\n{}", issue.title, issue.body, issue.url);
        if !labels.is_empty() {
            body.push_str(&format!("\nLabels: {}", labels.join(", ")));
        }
        request = Some(match request {
            Some(r) => format!("{r}\n\n{body}"),
            None => body,
        });
        linked.push(EventKind::IssueOf {
            number: n,
            url: issue.url,
            labels,
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
    if let Some(parent) = &args.parent {
        return add_part(ctx, &hall, args, parent, (&title, request.as_deref()));
    }
    let fresh = Fresh {
        title: &title,
        request: request.as_deref(),
        branch: args.branch.as_deref(),
        base: &hall.config.base,
        source,
        issue: args.issue,
    };
    let (id, item) = create(ctx, &hall, &fresh, linked)?;
    // The intake runs for a request, unless told not to; a skipped one is only said.
    let intake = match (not_split(&hall, args), &request) {
        (Some((code, why)), _) => Intake::one(code, why),
        (None, None) => Intake::default(),
        (None, Some(r)) => {
            let intake = crate::office::intake::run(&hall, ctx, id, r);
            let mut records = intake.records.clone();
            records.push(ctx.event(Some(id), intake.event()));
            hall.journal.append_item(id, &records)?;
            intake
        }
    };
    let mut parts = Vec::new();
    for part in &intake.parts {
        parts.push(make_part(
            ctx,
            &hall,
            (id, &item),
            part,
            request.as_deref(),
        )?);
    }
    let mut reply = finish_reply(&hall, args, (id, item), request.as_deref())?;
    // A title alone has nothing to plan from: the reply says nothing of the intake.
    if request.is_some() {
        reply.intake = Some(IntakeReply {
            split: !parts.is_empty(),
            reasons: intake.reasons.clone(),
            why: intake.problems.clone(),
        });
    }
    if !parts.is_empty() {
        reply.next = vec![
            format!("hall status {id}"),
            "/hallmark (one subagent per part, each in its own worktree)".into(),
        ];
        reply
            .next
            .extend(parts.iter().map(|p| format!("hall merge {}", p.item)));
        reply.next.push(format!("hall ready {id}"));
    }
    reply.parts = parts;
    Ok(reply.into_reply())
}

/// Why the intake does not run for this `hall new`, if it doesn't.
fn not_split(hall: &Hall, args: &NewArgs) -> Option<(&'static str, String)> {
    if args.no_split {
        return Some(("no_split", "`--no-split` was given".into()));
    }
    if hall.config.intake.split == "off" {
        return Some(("splitting_off", "[intake] split = \"off\"".into()));
    }
    if hall.config.intake.max_parts < 2 {
        return Some((
            "splitting_off",
            format!(
                "[intake] max_parts = {}: fewer than two parts is no split",
                hall.config.intake.max_parts
            ),
        ));
    }
    None
}

/// Makes one part of `parent` that the intake planned: an item whose branch is cut
/// from the parent's, with its own worktree, listed in the parent's journal.
fn make_part(
    ctx: &Ctx,
    hall: &Hall,
    (parent, parent_item): (ItemId, &crate::item::Item),
    part: &PlanPart,
    request: Option<&str>,
) -> Result<PartReply> {
    let mut brief = format!(
        "{}\n\nThis is one part of {parent} (\"{}\"), made by the Front Desk. Change only \
         these paths: {}.\nDone when: {}\n",
        part.title,
        parent_item.title,
        part.paths.join(", "),
        part.acceptance
    );
    if let Some(r) = request {
        brief.push_str(&format!("\nThe whole request:\n{r}\n"));
    }
    let (child, item) = part_item(ctx, hall, (parent, parent_item), part, Some(&brief))?;
    Ok(PartReply {
        item: child,
        title: item.title.clone(),
        branch: item.branch.clone(),
        worktree: item.worktree.clone().unwrap_or_default(),
        paths: part.paths.clone(),
        acceptance: part.acceptance.clone(),
    })
}

/// Creates the part's item on a branch from the parent's and lists it on the parent.
fn part_item(
    ctx: &Ctx,
    hall: &Hall,
    (parent, parent_item): (ItemId, &crate::item::Item),
    part: &PlanPart,
    request: Option<&str>,
) -> Result<(ItemId, crate::item::Item)> {
    let fresh = Fresh {
        title: &part.title,
        request,
        branch: None,
        base: &parent_item.branch,
        source: Source::New,
        issue: None,
    };
    let made = create(ctx, hall, &fresh, vec![EventKind::PartOf { parent }])?;
    hall.journal.append_item(
        parent,
        &[ctx.event(
            Some(parent),
            EventKind::PartAdded {
                child: made.0,
                title: part.title.clone(),
                paths: part.paths.clone(),
            },
        )],
    )?;
    Ok(made)
}

/// `hall new --parent ID`: a part added to an existing item by hand.
fn add_part(
    ctx: &Ctx,
    hall: &Hall,
    args: &NewArgs,
    parent: &str,
    (title, request): (&str, Option<&str>),
) -> Result<Reply> {
    let parent = hall.resolve(Some(parent))?;
    let parent_item = hall.item(parent)?;
    if parent_item.parent.is_some() {
        return Err(HallError::new(
            Code::WrongState,
            format!("{parent} is itself a part: parts have no parts of their own"),
        )
        .hint(format!("hall status {parent}")));
    }
    if !matches!(parent_item.state, State::Development | State::AwaitingYou) {
        return Err(HallError::new(
            Code::WrongState,
            format!(
                "{parent} is in {}: parts are added while it is in development",
                parent_item.state.as_str().replace('_', " ")
            ),
        )
        .hint(format!("hall status {parent}"))
        .hint(format!("hall pull-back {parent}")));
    }
    let part = PlanPart {
        title: title.to_string(),
        paths: Vec::new(),
        acceptance: String::new(),
    };
    let made = part_item(ctx, hall, (parent, &parent_item), &part, request)?;
    let mut reply = finish_reply(hall, args, made, request)?;
    reply.parent = Some(parent);
    reply
        .next
        .insert(0, format!("hall merge {}", reply.placed.item));
    Ok(reply.into_reply())
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
    Ok(finish_reply(hall, args, made, request)?.into_reply())
}

/// [`finish`]'s reply, before it is rendered.
fn finish_reply(
    hall: &Hall,
    args: &NewArgs,
    made: (ItemId, crate::item::Item),
    request: Option<&str>,
) -> Result<NewReply> {
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
        placed: Placed::of(id, &item),
        issue: item.issue,
        parent: item.parent,
        intake: None,
        parts: Vec::new(),
        warnings,
        next,
    };
    Ok(reply)
}

impl NewReply {
    fn into_reply(self) -> Reply {
        let mut text = format!(
            "{} \"{}\" is in the Workshop.\n  branch   {}\n  worktree {}\n",
            self.placed.item, self.placed.title, self.placed.branch, self.placed.worktree
        );
        if let Some(parent) = self.parent {
            text.push_str(&format!("  part of  {parent}\n"));
        }
        match &self.intake {
            Some(i) if i.split => {
                text.push_str(&format!(
                    "The Front Desk split it into {} parts:\n",
                    self.parts.len()
                ));
                for p in &self.parts {
                    text.push_str(&format!(
                        "  {} \"{}\"  {}\n    paths {}\n",
                        p.item,
                        p.title,
                        p.worktree,
                        p.paths.join(", ")
                    ));
                }
            }
            Some(i) if !i.why.is_empty() => {
                text.push_str(&format!("One item: {}\n", i.why.join("; ")));
            }
            _ => {}
        }
        text.push_str(&next_text(&self.next));
        let warnings = self.warnings.clone();
        Reply::new(&self, text).warn(warnings)
    }
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
