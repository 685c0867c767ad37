//! `hall status`: items by state, or one item in detail. `hall` with no arguments prints
//! the same list.

use std::collections::BTreeMap;

use serde::Serialize;

use super::{Ctx, Hall, Reply, inbox, next_for, next_text};
use crate::cli::StatusArgs;
use crate::error::Result;
use crate::index::ItemRow;
use crate::item::state::Question;
use crate::item::{Item, ItemId, State};
use crate::record::describe;

#[derive(Serialize, schemars::JsonSchema)]
pub struct StatusReply {
    pub items: Vec<ItemRow>,
    /// How many items are in each state (all items, closed and dropped included).
    pub counts: BTreeMap<String, u64>,
    /// Entries waiting in `hall inbox`.
    pub inbox: usize,
    /// The item whose worktree this is, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub current: Option<ItemId>,
    pub next: Vec<String>,
}

#[derive(Serialize, schemars::JsonSchema)]
pub struct ItemStatusReply {
    pub item: Item,
    /// Where in the building the state is (`Workshop`, `Assay Office`…).
    pub station: String,
    pub open_questions: Vec<Question>,
    /// The newest events, oldest first.
    pub recent: Vec<RecentEvent>,
    /// What the item is doing right now.
    pub now: Now,
    /// Its parts and where each stands (for an item split into parts).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<PartStatus>,
    pub next: Vec<String>,
}

/// One part of an item, as `hall status <parent>` shows it.
#[derive(Serialize, schemars::JsonSchema)]
pub struct PartStatus {
    pub item: ItemId,
    pub title: String,
    pub state: crate::item::State,
    pub branch: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worktree: Option<String>,
    /// The merge commit in the parent's branch, once `hall merge` merged it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub merged: Option<crate::item::Sha>,
}

/// The derived "now" block: the lease, whether the item waits for the assayer, and the
/// latest run.
#[derive(Serialize, schemars::JsonSchema)]
pub struct Now {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lease: Option<crate::office::lease::Lease>,
    /// The item waits for the assayer's checks (in `checks`, not held): derived from
    /// the state, like everything else here.
    pub queued: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run: Option<super::trace::RunInfo>,
    /// The command to watch or pick up the run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offer: Option<String>,
}

pub(super) fn now_block(hall: &Hall, id: crate::item::ItemId, item: &Item) -> Now {
    let lease = crate::office::lease::current(hall.journal.root(), id);
    let run = super::trace::runs(&hall.journal.item_dir(id).join("runs"))
        .last()
        .map(|p| super::trace::info(p).0);
    // A stream without its end line proves nothing alone (its daemon may have died):
    // it is live only while the loop holds the lease and the run's process lives.
    let offer = match &run {
        Some(r) if r.live && lease.is_some() => Some(format!("hall trace {id} --follow")),
        Some(r) if item.hold.is_some() && r.ended => Some(match &r.session {
            Some(s) => format!(
                "cd {} && claude --resume {s}",
                hall.worktree_of(item).display()
            ),
            None => format!("hall trace {id}"),
        }),
        Some(_) => Some(format!("hall trace {id}")),
        None => None,
    };
    Now {
        lease,
        queued: crate::office::work_for(item) == Some(crate::office::Phase::Checks),
        run,
        offer,
    }
}

#[derive(Serialize, schemars::JsonSchema)]
pub struct RecentEvent {
    pub t: String,
    pub actor: String,
    pub event: String,
    pub summary: String,
}

pub fn run(ctx: &Ctx, args: &StatusArgs) -> Result<Reply> {
    let hall = ctx.hall()?;
    match &args.id {
        Some(id) => one(&hall, hall.resolve(Some(id))?),
        None => list(&hall, args.all),
    }
}

fn list(hall: &Hall, all: bool) -> Result<Reply> {
    let index = hall.index()?;
    let items = index.items(all)?;
    let counts: BTreeMap<String, u64> = index
        .count_by_state()?
        .into_iter()
        .map(|(s, n)| (s.as_str().to_string(), n))
        .collect();
    let inbox = inbox::count(&index)?;
    let top = hall.repo.toplevel.display().to_string();
    let current = items
        .iter()
        .find(|r| r.worktree.as_deref() == Some(top.as_str()))
        .map(|r| r.id);
    let mut next = Vec::new();
    if let Some(id) = current {
        next.push(format!("hall status {id}"));
    }
    if inbox > 0 {
        next.push("hall inbox".to_string());
    }
    next.push("hall new --title \"…\"".to_string());
    if !all {
        next.push("hall status --all".to_string());
    }
    let text = render_list(&items, inbox, &next);
    Ok(Reply::new(
        &StatusReply {
            items,
            counts,
            inbox,
            current,
            next,
        },
        text,
    ))
}

fn render_list(items: &[ItemRow], inbox: usize, next: &[String]) -> String {
    let mut out = String::new();
    if items.is_empty() {
        out.push_str("No items in the building.\n");
    }
    for state in State::ALL {
        let here: Vec<&ItemRow> = items.iter().filter(|r| r.state == state).collect();
        if here.is_empty() {
            continue;
        }
        out.push_str(&format!(
            "{} ({}, {})\n",
            state,
            state.station(),
            here.len()
        ));
        for r in here {
            let hold = r
                .hold
                .as_ref()
                .map(|h| format!("  [held: {h}]"))
                .unwrap_or_default();
            out.push_str(&format!("  {}  {}  ({}){hold}\n", r.id, r.title, r.branch));
        }
    }
    if inbox > 0 {
        out.push_str(&format!("Your Office: {inbox} waiting\n"));
    }
    out.push_str(&next_text(next));
    out
}

fn one(hall: &Hall, id: ItemId) -> Result<Reply> {
    let contents = hall.journal.read_item(id)?;
    let item = crate::item::fold(&contents.events);
    let recent: Vec<RecentEvent> = contents
        .events
        .iter()
        .rev()
        .take(8)
        .rev()
        .map(|e| RecentEvent {
            t: e.t.clone(),
            actor: e.actor.clone(),
            event: e.kind.name().into(),
            summary: describe(&e.kind),
        })
        .collect();
    let open_questions: Vec<Question> = item.open_questions().cloned().collect();
    let now = now_block(hall, id, &item);
    let mut next = next_for(&item);
    if let Some(o) = &now.offer {
        next.push(o.clone());
    }
    let parts: Vec<PartStatus> = item
        .parts
        .iter()
        .map(|p| {
            let part = hall.item(p.id).ok();
            PartStatus {
                item: p.id,
                title: p.title.clone(),
                state: part
                    .as_ref()
                    .map_or(crate::item::State::Development, |i| i.state),
                branch: part.as_ref().map(|i| i.branch.clone()).unwrap_or_default(),
                worktree: part
                    .as_ref()
                    .filter(|i| !i.worktree_removed)
                    .and_then(|i| i.worktree.clone()),
                merged: part.and_then(|i| i.merged),
            }
        })
        .collect();
    let open: Vec<&PartStatus> = parts
        .iter()
        .filter(|p| {
            !matches!(
                p.state,
                crate::item::State::Closed | crate::item::State::Dropped
            )
        })
        .collect();
    if !open.is_empty() {
        // The parent is not ready while a part is open: merging them is what's next.
        next.retain(|n| !n.starts_with("hall ready") && !n.starts_with("hall propose-ready"));
        let merges: Vec<String> = open
            .iter()
            .map(|p| format!("hall merge {}", p.item))
            .collect();
        next.splice(0..0, merges);
    }
    if let Some(parent) = item.parent {
        next.retain(|n| !n.starts_with("hall ready") && !n.starts_with("hall propose-ready"));
        if matches!(
            item.state,
            crate::item::State::Development | crate::item::State::AwaitingYou
        ) {
            next.insert(0, format!("hall merge {id}"));
        }
        next.push(format!("hall status {parent}"));
    }
    let mut text = format!(
        "{id} \"{}\"\n  state    {} ({})  since {}\n  branch   {} (base {})\n",
        item.title,
        item.state,
        item.state.station(),
        item.since,
        item.branch,
        item.base
    );
    if let Some(w) = &item.worktree {
        text.push_str(&format!("  worktree {w}\n"));
    }
    if let Some(sha) = &item.sha {
        text.push_str(&format!(
            "  frozen   {} (round {})\n",
            sha.short(),
            item.round
        ));
    }
    if let Some(h) = &item.hold {
        text.push_str(&format!("  held     {}: {}\n", h.kind.as_str(), h.reason));
    }
    if let Some(parent) = item.parent {
        text.push_str(&format!("  part of  {parent}\n"));
    }
    for p in &parts {
        text.push_str(&format!(
            "  part     {} {:<11} \"{}\"{}\n",
            p.item,
            p.state.as_str(),
            p.title,
            p.merged
                .as_ref()
                .map(|m| format!("  merged as {}", m.short()))
                .unwrap_or_default()
        ));
    }
    for q in &open_questions {
        text.push_str(&format!("  asks     {}: {}\n", q.qid, q.question));
    }
    if let Some(l) = &now.lease {
        text.push_str(&format!(
            "  now      {} ({}) by {}\n",
            l.role, l.phase, l.holder
        ));
    }
    if let Some(r) = &now.run {
        let step = r.last_step.as_deref().unwrap_or("");
        // An ended run's last step is its end line, which says `ended:` itself.
        let how = if r.live {
            format!("live: {step}")
        } else if r.ended {
            format!("ended: {}", step.strip_prefix("ended: ").unwrap_or(step))
        } else {
            format!("no end line: {step}")
        };
        text.push_str(&format!("  run      {} {how}\n", r.run));
    }
    for e in &recent {
        text.push_str(&format!(
            "  {}  {:<8} {:<14} {}\n",
            e.t, e.actor, e.event, e.summary
        ));
    }
    text.push_str(&next_text(&next));
    let warnings = super::torn_warnings(&hall.journal.item_file(id), &contents.torn);
    Ok(Reply::new(
        &ItemStatusReply {
            station: item.state.station().to_string(),
            item,
            open_questions,
            recent,
            now,
            parts,
            next,
        },
        text,
    )
    .warn(warnings))
}
