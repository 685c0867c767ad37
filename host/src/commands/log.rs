//! `hall log`: an item's journal as recorded, or the newest events of every item.

use serde::Serialize;

use super::{Ctx, Reply, next_text};
use crate::cli::LogArgs;
use crate::error::{Code, HallError, Result};
use crate::index::EventRow;
use crate::item::{Event, EventKind, ItemId};

#[derive(Serialize, schemars::JsonSchema)]
pub struct LogReply {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub item: Option<ItemId>,
    /// Events, oldest first, each with its line number in the journal file.
    pub events: Vec<LogLine>,
    pub next: Vec<String>,
}

#[derive(Serialize, schemars::JsonSchema)]
pub struct LogLine {
    pub line: u64,
    #[serde(flatten)]
    pub event: Event,
}

#[derive(Serialize, schemars::JsonSchema)]
pub struct RepoLogReply {
    pub events: Vec<RepoEvent>,
    pub next: Vec<String>,
}

/// One event of the newest across the repository, named by its item's ID.
#[derive(Serialize, schemars::JsonSchema)]
pub struct RepoEvent {
    /// The item (`H-0001`); absent for the repository's own events (denials, prompts
    /// with no item).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub item: Option<ItemId>,
    /// The line in the item's (or the repository's) journal file.
    pub line: u64,
    pub t: String,
    pub event: String,
    pub actor: String,
}

impl From<EventRow> for RepoEvent {
    fn from(e: EventRow) -> Self {
        RepoEvent {
            item: (e.item != 0).then_some(ItemId(e.item)),
            line: e.line,
            t: e.t,
            event: e.event,
            actor: e.actor,
        }
    }
}

/// The text when no event matched: says so, instead of an empty screen.
fn none_found(kind: Option<&str>, of: &str) -> String {
    match kind {
        Some(k) => format!("No `{k}` events {of}."),
        None => format!("No events {of}."),
    }
}

pub fn run(ctx: &Ctx, args: &LogArgs) -> Result<Reply> {
    let hall = ctx.hall()?;
    if let Some(k) = &args.kind
        && !EventKind::KINDS.contains(&k.as_str())
    {
        return Err(HallError::new(
            Code::Usage,
            format!(
                "`{k}` is not an event kind; kinds: {}",
                EventKind::KINDS.join(", ")
            ),
        )
        .hint("hall schema event"));
    }
    let limit = args.limit.unwrap_or(u32::MAX) as usize;
    let id = match &args.id {
        Some(raw) => Some(hall.resolve(Some(raw))?),
        None => hall.resolve(None).ok(),
    };
    let Some(id) = id else {
        let events: Vec<RepoEvent> = hall
            .index()?
            .recent_events(args.kind.as_deref(), args.limit.unwrap_or(50))?
            .into_iter()
            .map(RepoEvent::from)
            .collect();
        let next = vec!["hall status".to_string()];
        let mut text: Vec<String> = events
            .iter()
            .map(|e| {
                let item = e
                    .item
                    .map(|i| i.to_string())
                    .unwrap_or_else(|| "repo".to_string());
                format!("{}  {:<7} {:<8} {}", e.t, item, e.actor, e.event)
            })
            .collect();
        if text.is_empty() {
            text.push(none_found(args.kind.as_deref(), "in this repository"));
        }
        text.push(next_text(&next));
        return Ok(Reply::new(&RepoLogReply { events, next }, text.join("\n")));
    };
    let contents = hall.journal.read_item(id)?;
    let mut lines: Vec<LogLine> = contents
        .events
        .iter()
        .zip(&contents.line_numbers)
        .filter(|(e, _)| args.kind.as_deref().is_none_or(|k| e.kind.name() == k))
        .map(|(e, l)| LogLine {
            line: *l,
            event: e.clone(),
        })
        .collect();
    if lines.len() > limit {
        lines.drain(..lines.len() - limit);
    }
    let next = vec![format!("hall status {id}")];
    let mut text: Vec<String> = lines
        .iter()
        .map(|l| {
            format!(
                "{}  {:<8} {:<14} {}",
                l.event.t,
                l.event.actor,
                l.event.kind.name(),
                describe(&l.event.kind)
            )
        })
        .collect();
    if text.is_empty() {
        text.push(none_found(args.kind.as_deref(), &format!("for {id}")));
    }
    text.push(next_text(&next));
    let warnings = super::torn_warnings(&hall.journal.item_file(id), &contents.torn);
    Ok(Reply::new(
        &LogReply {
            item: Some(id),
            events: lines,
            next,
        },
        text.join("\n"),
    )
    .warn(warnings))
}

/// A one-line human summary of an event.
pub fn describe(kind: &EventKind) -> String {
    match kind {
        EventKind::Created { title, branch, .. } => format!("\"{title}\" on {branch}"),
        EventKind::ProposedReady { summary, ask, .. } => {
            format!("{summary}{}", if *ask { " (asks you)" } else { "" })
        }
        EventKind::Ready { sha, round, note } => {
            format!(
                "froze {} for round {round}{}",
                sha.short(),
                note.as_ref().map(|n| format!(": {n}")).unwrap_or_default()
            )
        }
        EventKind::PulledBack { from, reason } => {
            format!(
                "from {from}{}",
                reason
                    .as_ref()
                    .map(|r| format!(": {r}"))
                    .unwrap_or_default()
            )
        }
        EventKind::Dropped { reason } => reason.clone(),
        EventKind::Retried {
            reason, released, ..
        } => match released {
            Some(k) => format!("released {} hold: {reason}", k.as_str()),
            None => format!("one more round: {reason}"),
        },
        EventKind::CheckRun {
            check,
            exit_code,
            duration_ms,
            cached,
            ..
        } => {
            format!(
                "`{check}` exit {exit_code} in {duration_ms} ms{}",
                if *cached { " (cached)" } else { "" }
            )
        }
        EventKind::SetupRun {
            command,
            exit_code,
            duration_ms,
            ..
        } => format!("setup `{command}` exit {exit_code} in {duration_ms} ms"),
        EventKind::ChecksPassed { sha } => format!("all checks green at {}", sha.short()),
        EventKind::ChecksFailed { failed, .. } => format!("failed: {}", failed.join(", ")),
        EventKind::Verdict {
            approved,
            findings,
            round,
            by,
            ..
        } => {
            format!(
                "round {round}: {} ({} findings){}",
                if *approved {
                    "approved"
                } else {
                    "changes requested"
                },
                findings.len(),
                match by.as_deref() {
                    Some("you") => ", a person's override",
                    Some("carried") => ", carried across a rebase",
                    _ => "",
                }
            )
        }
        EventKind::Rebased { from, sha, .. } => format!(
            "rebased {} to {}; the patch is unchanged, so the approval carries",
            from.short(),
            sha.short()
        ),
        EventKind::RunFailed { role, reason, run } => format!(
            "{role} run failed: {reason}{}",
            run.as_ref().map(|r| format!(" ({r})")).unwrap_or_default()
        ),
        EventKind::Resumed { qid, session, ok } => format!(
            "{qid}: resumed session {session}{}",
            if *ok { "" } else { " (the resume failed)" }
        ),
        EventKind::Paused { reason, until } => format!("paused until {until}: {reason}"),
        EventKind::BudgetGranted { day, tokens } => {
            format!("{tokens} more tokens allowed for {day}")
        }
        EventKind::Escalated { reason } => reason.clone(),
        EventKind::Hallmarked { sha, round, .. } => {
            format!("hallmark on {} (round {round})", sha.short())
        }
        EventKind::FixSubmitted { sha, fixed, .. } => {
            format!("{} fixes {}", sha.short(), fixed.join(", "))
        }
        EventKind::Shipped { pr, .. } => pr.clone().unwrap_or_else(|| "shipped".into()),
        EventKind::Reopened { reason, .. } => reason.clone(),
        EventKind::Restored {} => "CI passed on a re-run".into(),
        EventKind::RebaseRequested { base } => format!("rebase onto {base}"),
        EventKind::Restacked { from, to } => format!("now on {to} (was {from})"),
        EventKind::FollowUpOf { pr, earlier } => match earlier {
            Some(i) => format!("follows up on {pr} ({i})"),
            None => format!("follows up on {pr}"),
        },
        EventKind::IssueOf { number, labels, .. } if labels.is_empty() => {
            format!("from issue #{number}")
        }
        EventKind::IssueOf { number, labels, .. } => {
            format!("from issue #{number} ({})", labels.join(", "))
        }
        EventKind::Intake {
            split,
            reasons,
            problems,
            ..
        } => match (split, problems.first()) {
            (true, _) => "the intake split the request into parts".into(),
            (false, Some(p)) => format!("one item: {p} ({})", reasons.join(", ")),
            (false, None) => format!("one item ({})", reasons.join(", ")),
        },
        EventKind::PartOf { parent } => format!("a part of {parent}"),
        EventKind::PartAdded { child, title, .. } => format!("part {child}: \"{title}\""),
        EventKind::Merged { into, sha, commit } => format!(
            "merged at {} into {into} (merge commit {})",
            sha.short(),
            commit.short()
        ),
        EventKind::ReplyDrafted { comment, body } => {
            format!("a reply to review comment #{comment} drafted: {body}")
        }
        EventKind::ReplyPosted { comment } => format!("the reply to #{comment} posted on the PR"),
        EventKind::FollowThrough { kind, brief } => {
            format!("a dev run is due ({}): {brief}", kind.as_str())
        }
        EventKind::Delivered { pr, merged: true } => format!("{pr} merged"),
        EventKind::Delivered { pr, merged: false } => format!("{pr} closed without merging"),
        EventKind::WorktreeRemoved { path } => format!("worktree {path} removed"),
        EventKind::Merging { pr, head, onto } => {
            format!("merging PR #{pr} at {} onto {}", head.short(), onto.short())
        }
        EventKind::PrMerged { pr, head, onto } => {
            format!("PR #{pr} merged at {} onto {}", head.short(), onto.short())
        }
        EventKind::Held { kind, reason, .. } => format!("{}: {reason}", kind.as_str()),
        EventKind::Asked { qid, question, .. } => format!("{qid}: {question}"),
        EventKind::Answered {
            qid,
            answer,
            by_default,
        } => {
            format!(
                "{qid}: {answer}{}",
                if *by_default { " (default)" } else { "" }
            )
        }
        EventKind::Prompt { text, .. } => clip(text),
        EventKind::Turn { summary, .. } => clip(summary),
        EventKind::Commit { sha, subject, .. } => format!("{} {subject}", sha.short()),
        EventKind::Usage(u) => format!(
            "{} {}: {} in / {} out, ${:.4}",
            u.role, u.model, u.input, u.output, u.cost_usd
        ),
        EventKind::Notification { kind, message, .. } => format!("{kind}: {message}"),
        EventKind::GateDenied { gate, command, .. } => format!("{gate} gate: {}", clip(command)),
        EventKind::RoomUsed {
            world,
            room,
            sha256,
            source,
        } => {
            format!(
                "{world} decided by {room} ({source}, sha256 {})",
                &sha256[..sha256.len().min(12)]
            )
        }
        EventKind::InboxDismissed { key, .. } => key.clone(),
        EventKind::Attached {
            file, url, caption, ..
        } => {
            let what = url.as_deref().or(file.as_deref()).unwrap_or("a plate");
            match caption {
                Some(c) => format!("attached {what}: {}", clip(c)),
                None => format!("attached {what}"),
            }
        }
        EventKind::TornLine { line, bytes } => {
            format!("line {line} ({bytes} bytes) was torn by a crash")
        }
        EventKind::LearningProposed {
            learning,
            version,
            kind,
            title,
            replaces,
            accepted,
        } => {
            let what = match replaces {
                Some(r) => format!("update of v{r} to v{version}"),
                None => format!("v{version}"),
            };
            let how = if *accepted { "accepted" } else { "proposed" };
            format!("{learning} {kind} {what} {how}: {}", clip(title))
        }
        EventKind::LearningAccepted { learning, version } => {
            format!("{learning} v{version} accepted")
        }
        EventKind::LearningRejected {
            learning,
            version,
            restored,
        } => match restored {
            Some(r) => format!("{learning} v{version} rejected; v{r} restored"),
            None => format!("{learning} v{version} rejected"),
        },
        EventKind::LearningRetired {
            learning, version, ..
        } => format!("{learning} v{version} retired"),
        EventKind::LearningRestored { learning, version } => {
            format!("{learning} v{version} in force again")
        }
        EventKind::Other => "(written by a newer hall)".into(),
    }
}

fn clip(s: &str) -> String {
    let one = s.lines().next().unwrap_or("");
    if one.chars().count() > 80 {
        format!("{}…", one.chars().take(80).collect::<String>())
    } else {
        one.to_string()
    }
}
