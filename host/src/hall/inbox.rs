//! The inbox's entries, derived from the index: what waits for a person. `hall inbox`
//! lists them; the notify worker tells a person of them.

use serde::Serialize;

use crate::error::Result;
use crate::index::Index;
use crate::item::{ItemId, State};

/// One thing waiting for a person.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Entry {
    /// Its number in this listing, for `hall inbox <n> --dismiss`.
    pub n: usize,
    /// `question`, `escalated`, `ready?`, or a hold kind (`budget`, `checks`…).
    pub kind: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub item: Option<ItemId>,
    pub text: String,
    /// Since when it waits.
    pub since: String,
    /// Identifies the entry across listings.
    pub key: String,
    pub dismissed: bool,
    pub next: Vec<String>,
}

/// Every entry, dismissed or not, oldest first; `extra` are entries only the caller can
/// know of (a stopped daemon, known to the commands, not to the daemon itself).
pub fn entries(index: &Index, extra: Vec<Entry>) -> Result<Vec<Entry>> {
    let mut out = Vec::new();
    for q in index.questions(true)? {
        let id = q.item.map(|i| i.to_string()).unwrap_or_default();
        let opts = if q.options.is_empty() {
            String::new()
        } else {
            format!(" [{}]", q.options.join(", "))
        };
        out.push(Entry {
            n: 0,
            kind: "question".into(),
            item: q.item,
            text: format!("Q-{}: {}{opts}", q.qid, q.question),
            since: q.asked.clone(),
            key: format!("question:Q-{}", q.qid),
            dismissed: false,
            next: vec![format!("hall answer Q-{} \"…\"", q.qid)]
                .into_iter()
                .chain((!id.is_empty()).then(|| format!("hall status {id}")))
                .collect(),
        });
    }
    for row in index.waiting_items()? {
        let id = row.id;
        match row.state {
            State::Escalated => out.push(Entry {
                n: 0,
                kind: "escalated".into(),
                item: Some(id),
                text: format!("{id} \"{}\" was rejected too often; you decide", row.title),
                since: row.since.clone(),
                key: format!("escalated:{id}"),
                dismissed: false,
                next: vec![
                    format!("hall log {id} --kind verdict"),
                    format!("hall retry {id} --reason \"…\""),
                    format!("hall pull-back {id} --reason \"…\""),
                ],
            }),
            State::AwaitingYou => out.push(Entry {
                n: 0,
                kind: "ready?".into(),
                item: Some(id),
                text: match index.item(id).ok().flatten().and_then(|i| i.summary) {
                    Some(summary) => {
                        format!("{id} \"{}\" is proposed as ready: {summary}", row.title)
                    }
                    None => format!("{id} \"{}\" is proposed as ready", row.title),
                },
                since: row.since.clone(),
                key: format!("ready:{id}"),
                dismissed: false,
                next: vec![
                    format!("hall ready {id}"),
                    format!("hall pull-back {id} --reason \"…\""),
                ],
            }),
            _ => {}
        }
        if let Some(kind) = &row.hold {
            let item = index.item(id)?;
            let (reason, since, mut next) = item
                .and_then(|i| i.hold)
                .map(|h| (h.reason, h.since, h.next))
                .unwrap_or_else(|| (String::new(), row.updated.clone(), Vec::new()));
            if !next.iter().any(|n| n.starts_with("hall retry")) {
                next.push(format!("hall retry {id} --reason \"…\""));
            }
            next.push(format!("hall log {id}"));
            out.push(Entry {
                n: 0,
                kind: kind.clone(),
                item: Some(id),
                text: format!("{id} \"{}\" is held ({kind}): {reason}", row.title),
                since: since.clone(),
                key: format!("hold:{kind}:{id}"),
                dismissed: false,
                next,
            });
        }
    }
    // CI that never started on the repository's PRs, until it runs again.
    let notices = index.notices()?;
    let ci = notices
        .iter()
        .rev()
        .find(|n| n.item.is_none() && (n.kind == "ci_down" || n.kind == "ci_up"));
    if let Some(n) = ci.filter(|n| n.kind == "ci_down") {
        out.push(Entry {
            n: 0,
            kind: "ci_down".into(),
            item: None,
            text: n.message.clone(),
            since: n.t.clone(),
            key: format!("ci_down:{}", n.t),
            dismissed: false,
            next: vec!["gh run list --limit 5".into(), "hall status".into()],
        });
    }
    // A base whose tip went red: its merge queue is stopped until the tip is green.
    let mut bases_seen: Vec<&str> = Vec::new();
    for n in notices
        .iter()
        .rev()
        .filter(|n| n.item.is_none() && (n.kind == "base_red" || n.kind == "base_green"))
    {
        let base = n.message.split(": ").next().unwrap_or_default();
        if bases_seen.contains(&base) {
            continue;
        }
        bases_seen.push(base);
        if n.kind == "base_red" {
            out.push(Entry {
                n: 0,
                kind: "base_red".into(),
                item: None,
                text: n.message.clone(),
                since: n.t.clone(),
                key: format!("base_red:{base}:{}", n.t),
                dismissed: false,
                next: vec![
                    format!("gh run list --branch {base} --limit 5"),
                    "hall queue".into(),
                ],
            });
        }
    }
    out.extend(extra);
    let dismissed = index.dismissed()?;
    for e in &mut out {
        e.dismissed = dismissed
            .iter()
            .any(|(k, stamp)| *k == e.key && *stamp == e.since);
    }
    out.sort_by(|a, b| a.since.cmp(&b.since).then(a.key.cmp(&b.key)));
    Ok(out)
}
