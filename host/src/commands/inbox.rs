//! `hall inbox`: Your Office. Only escalations, oldest first, derived from the journal;
//! a dismissed entry stays hidden until it changes.

use serde::Serialize;

use super::{Ctx, Reply, next_text};
use crate::cli::InboxArgs;
use crate::error::{HallError, Result};
use crate::index::{Index, NoticeRow};
use crate::item::{EventKind, ItemId, State};

/// One thing waiting for a person.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
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

#[derive(Serialize, schemars::JsonSchema)]
pub struct InboxReply {
    pub entries: Vec<Entry>,
    /// Entries hidden by --dismiss/--clear (shown with --all).
    pub hidden: usize,
    pub next: Vec<String>,
}

#[derive(Serialize, schemars::JsonSchema)]
pub struct NoticesReply {
    pub notices: Vec<NoticeRow>,
    pub next: Vec<String>,
}

/// Every entry, dismissed or not, oldest first.
pub fn entries(index: &Index) -> Result<Vec<Entry>> {
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
    // A daemon that should run but has no heartbeat: the loop has stopped.
    if let Some(d) = crate::daemon::read_state()
        && !d.stop
        && d.heartbeat_unix > 0
        && !crate::daemon::alive(&d)
    {
        out.push(Entry {
            n: 0,
            kind: "daemon stopped".into(),
            item: None,
            text: format!("The daemon (pid {}) has no heartbeat since {}; nothing moves items through the loop.", d.pid, d.heartbeat),
            since: d.heartbeat.clone(),
            key: format!("daemon:{}", d.pid),
            dismissed: false,
            next: vec!["hall daemon start".into(), "hall daemon status".into()],
        });
    }
    let dismissed = index.dismissed()?;
    for e in &mut out {
        e.dismissed = dismissed
            .iter()
            .any(|(k, stamp)| *k == e.key && *stamp == e.since);
    }
    out.sort_by(|a, b| a.since.cmp(&b.since).then(a.key.cmp(&b.key)));
    Ok(out)
}

/// The one notice for the Library's proposals waiting for a person, when there are any:
/// read from the store itself (its files are the truth), dated by the newest proposal.
fn proposed_learnings(hall: &crate::hall::Hall) -> Option<NoticeRow> {
    let library = crate::library::Library::new(
        &hall.journal,
        crate::library::Settings::from_config(&hall.config.library),
    );
    if !library.learnings_dir().is_dir() {
        return None;
    }
    let waiting: Vec<crate::library::Learning> = library
        .list()
        .ok()?
        .entries
        .into_iter()
        .map(|e| e.current)
        .filter(|l| l.meta.status == crate::item::LearningStatus::Proposed)
        .collect();
    let newest = waiting.iter().map(|l| l.meta.updated.clone()).max()?;
    let ids: Vec<String> = waiting.iter().map(|l| l.id().to_string()).collect();
    let n = ids.len();
    Some(NoticeRow {
        item: None,
        t: newest,
        kind: "learnings".into(),
        message: format!(
            "{n} proposed learning{} wait{} in the Library: {} (hall library review)",
            if n == 1 { "" } else { "s" },
            if n == 1 { "s" } else { "" },
            ids.join(", ")
        ),
        session: None,
    })
}

/// The number of entries not dismissed.
pub fn count(index: &Index) -> Result<usize> {
    Ok(entries(index)?.iter().filter(|e| !e.dismissed).count())
}

pub fn run(ctx: &Ctx, args: &InboxArgs) -> Result<Reply> {
    let hall = ctx.hall()?;
    let index = hall.index()?;
    if args.notices {
        let mut notices = index.notices()?;
        let waiting = proposed_learnings(&hall);
        if let Some(n) = &waiting {
            notices.push(n.clone());
        }
        let text = if notices.is_empty() {
            "No notices.".to_string()
        } else {
            notices
                .iter()
                .map(|n| {
                    let item = n.item.map(|i| format!("{i} ")).unwrap_or_default();
                    format!("{} {item}{}: {}", n.t, n.kind, n.message)
                })
                .collect::<Vec<_>>()
                .join("\n")
        };
        let mut next = vec!["hall inbox".to_string()];
        if waiting.is_some() {
            next.insert(0, "hall library review".into());
        }
        return Ok(Reply::new(&NoticesReply { notices, next }, text));
    }
    let all = entries(&index)?;
    let visible: Vec<Entry> = all.iter().filter(|e| !e.dismissed).cloned().collect();
    if args.dismiss || args.clear {
        let targets: Vec<Entry> = if args.clear {
            visible.clone()
        } else {
            let n = args.n.unwrap_or(0);
            match visible.get(n.wrapping_sub(1)) {
                Some(e) => vec![e.clone()],
                None => {
                    return Err(HallError::new(
                        crate::error::Code::Usage,
                        format!("the inbox has no entry {n} (it lists {})", visible.len()),
                    )
                    .hint("hall inbox"));
                }
            }
        };
        if !targets.is_empty() {
            let events: Vec<_> = targets
                .iter()
                .map(|e| {
                    ctx.event(
                        None,
                        EventKind::InboxDismissed {
                            key: e.key.clone(),
                            stamp: e.since.clone(),
                        },
                    )
                })
                .collect();
            hall.journal.append_repo(&events)?;
        }
        return run(
            ctx,
            &InboxArgs {
                n: None,
                dismiss: false,
                clear: false,
                all: args.all,
                notices: false,
            },
        );
    }
    let mut shown: Vec<Entry> = if args.all { all.clone() } else { visible };
    for (i, e) in shown.iter_mut().enumerate() {
        e.n = i + 1;
    }
    let hidden = all.iter().filter(|e| e.dismissed).count();
    let mut next = Vec::new();
    if let Some(first) = shown.first() {
        next.extend(first.next.iter().cloned());
        next.push(format!("hall inbox {} --dismiss", first.n));
    } else {
        next.push("hall status".into());
    }
    if hidden > 0 && !args.all {
        next.push("hall inbox --all".into());
    }
    let text = if shown.is_empty() {
        format!(
            "Your Office is empty.{}",
            if hidden > 0 {
                format!(" ({hidden} dismissed)")
            } else {
                String::new()
            }
        )
    } else {
        let mut lines: Vec<String> = shown
            .iter()
            .map(|e| {
                format!(
                    "{:>3}. [{}] {}{}",
                    e.n,
                    e.kind,
                    e.text,
                    if e.dismissed { " (dismissed)" } else { "" }
                )
            })
            .collect();
        lines.push(next_text(&next));
        lines.join("\n")
    };
    Ok(Reply::new(
        &InboxReply {
            entries: shown,
            hidden,
            next,
        },
        text,
    ))
}
