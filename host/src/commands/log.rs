//! `hall log`: an item's journal as recorded, or the newest events of every item.

use serde::Serialize;

use super::{Ctx, Reply, next_text};
use crate::cli::LogArgs;
use crate::error::{Code, HallError, Result};
use crate::index::EventRow;
use crate::item::{Event, EventKind, ItemId};
use crate::record::describe;

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
