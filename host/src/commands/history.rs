//! `hall history [--rejected] [--lens L] [--since D] [--limit N]`: the items that left
//! the loop (closed or dropped), newest first, each with how it ended; with
//! `--rejected`, what the reviews rejected and what became of each finding.
//!
//! The list comes from the index; how each item ended and its findings from its
//! journal, since only the events know how a finding ended (`item::outcome`).

use std::collections::BTreeMap;

use serde::Serialize;

use super::{Ctx, Reply, next_text};
use crate::cli::HistoryArgs;
use crate::error::{HallError, Result};
use crate::item::outcome::{Outcome, Told, outcomes};
use crate::item::{EventKind, ItemId, Lens, State};

#[derive(Serialize, schemars::JsonSchema)]
pub struct HistoryReply {
    pub items: Vec<Past>,
    /// With `--rejected`: the findings of the listed items, counted by lens and by how
    /// they ended.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rejected: Option<Tally>,
    /// More items matched than `--limit` let through.
    pub more: bool,
    pub next: Vec<String>,
}

/// An item that left the loop.
#[derive(Serialize, schemars::JsonSchema)]
pub struct Past {
    pub item: ItemId,
    pub title: String,
    pub state: State,
    /// When it closed or was dropped.
    pub ended: String,
    /// How: `merged`, `closed unmerged`, `shipped`, `merged into H-…` (a part), or the
    /// reason it was dropped.
    pub how: String,
    pub rounds: u32,
    pub rejects: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pr: Option<String>,
    /// With `--rejected` or `--lens`: the findings its reviews raised.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<Told>,
}

#[derive(Default, Serialize, schemars::JsonSchema)]
pub struct Tally {
    pub findings: usize,
    pub by_lens: BTreeMap<String, usize>,
    pub by_outcome: BTreeMap<String, usize>,
}

pub fn run(ctx: &Ctx, args: &HistoryArgs) -> Result<Reply> {
    let hall = ctx.hall()?;
    let since = match &args.since {
        Some(s) => Some(super::since(ctx, s)?),
        None => None,
    };
    let lens = match &args.lens {
        Some(l) => Some(Lens::from_text(l).ok_or_else(|| {
            HallError::usage(format!(
                "--lens `{l}` is not a lens: one of {}",
                Lens::ALL.map(Lens::id).join(", ")
            ))
            .hint("hall history --rejected")
        })?),
        None => None,
    };
    let with_findings = args.rejected || lens.is_some();
    let mut rows: Vec<_> = hall
        .index()?
        .items(true)?
        .into_iter()
        .filter(|r| matches!(r.state, State::Closed | State::Dropped))
        .filter(|r| since.as_deref().is_none_or(|s| r.since.as_str() >= s))
        .collect();
    rows.sort_by(|a, b| b.since.cmp(&a.since).then(b.id.0.cmp(&a.id.0)));
    let mut items = Vec::new();
    let mut more = false;
    for row in rows {
        // How it ended and what was rejected are in its journal, not the index.
        let events = hall.events(row.id)?;
        let item = crate::item::fold(&events);
        let mut findings = Vec::new();
        if with_findings {
            findings = outcomes(&events);
            findings.retain(|t| lens.is_none_or(|l| t.finding.lens == l));
        }
        let (how, rejects) = (ending(&events, &item), item.rejects);
        if with_findings && findings.is_empty() {
            continue;
        }
        if items.len() == args.limit {
            more = true;
            break;
        }
        items.push(Past {
            item: row.id,
            title: row.title,
            state: row.state,
            ended: row.since,
            how,
            rounds: row.round,
            rejects,
            pr: row.pr,
            findings,
        });
    }
    let rejected = with_findings.then(|| tally(&items));
    let mut next = Vec::new();
    if let Some(p) = items.first() {
        next.push(format!("hall export {}", p.item));
    }
    if !with_findings {
        next.push("hall history --rejected".into());
    }
    if more {
        next.push(format!("hall history --limit {}", args.limit * 2));
    }
    let text = text(&items, rejected.as_ref(), &next);
    Ok(Reply::new(
        &HistoryReply {
            items,
            rejected,
            more,
            next,
        },
        text,
    ))
}

/// How an item left the loop, in a few words.
fn ending(events: &[crate::item::Event], item: &crate::item::Item) -> String {
    if item.state == State::Dropped {
        let reason = events.iter().rev().find_map(|e| match &e.kind {
            EventKind::Dropped { reason } => Some(reason.clone()),
            _ => None,
        });
        return format!("dropped: {}", reason.unwrap_or_default());
    }
    match (&item.parent, &item.delivered, &item.pr) {
        (Some(parent), _, _) if item.merged.is_some() => format!("merged into {parent}"),
        (_, Some(d), _) if d.merged => "merged".into(),
        (_, Some(_), _) => "closed unmerged".into(),
        (_, None, Some(_)) => "shipped".into(),
        _ => "closed".into(),
    }
}

fn tally(items: &[Past]) -> Tally {
    let mut t = Tally::default();
    for told in items.iter().flat_map(|p| &p.findings) {
        t.findings += 1;
        *t.by_lens
            .entry(told.finding.lens.id().to_string())
            .or_default() += 1;
        *t.by_outcome
            .entry(outcome_word(&told.outcome).to_string())
            .or_default() += 1;
    }
    t
}

fn outcome_word(o: &Outcome) -> &'static str {
    match o {
        Outcome::Fixed { .. } => "fixed",
        Outcome::DisputeUpheld { .. } => "dispute_upheld",
        Outcome::DisputeRejected { .. } => "dispute_rejected",
        Outcome::Dropped => "dropped",
        Outcome::Open => "open",
    }
}

fn text(items: &[Past], rejected: Option<&Tally>, next: &[String]) -> String {
    let mut t = String::new();
    if items.is_empty() {
        t.push_str("No item has left the loop that matches.\n");
    }
    for p in items {
        t.push_str(&format!(
            "{} {} \"{}\": {} ({} rounds, {} rejects)\n",
            p.ended.get(..10).unwrap_or(&p.ended),
            p.item,
            p.title,
            p.how,
            p.rounds,
            p.rejects
        ));
        for told in &p.findings {
            t.push_str(&format!(
                "  round {}: {} -> {}\n",
                told.round,
                told.finding,
                outcome_word(&told.outcome)
            ));
        }
    }
    if let Some(r) = rejected {
        let lenses: Vec<String> = r.by_lens.iter().map(|(l, n)| format!("{l} {n}")).collect();
        t.push_str(&format!(
            "\n{} findings: {}\n",
            r.findings,
            lenses.join(", ")
        ));
    }
    t.push_str(&next_text(next));
    t
}
