//! `hall inbox`: Your Office. Only escalations, oldest first, derived from the journal;
//! a dismissed entry stays hidden until it changes.

use serde::Serialize;

use super::{Ctx, Reply, next_text};
use crate::cli::InboxArgs;
use crate::error::{HallError, Result};
use crate::index::{Index, NoticeRow};
use crate::item::EventKind;

pub use crate::hall::inbox::Entry;

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

/// The entry for a daemon that should run but has no heartbeat: the loop has stopped.
pub fn daemon_stopped() -> Option<Entry> {
    let d = crate::daemon::read_state()?;
    (!d.stop && d.heartbeat_unix > 0 && !crate::daemon::alive(&d)).then(|| Entry {
        n: 0,
        kind: "daemon stopped".into(),
        item: None,
        text: format!(
            "The daemon (pid {}) has no heartbeat since {}; nothing moves items through the loop.",
            d.pid, d.heartbeat
        ),
        since: d.heartbeat.clone(),
        key: format!("daemon:{}", d.pid),
        dismissed: false,
        next: vec!["hall daemon start".into(), "hall daemon status".into()],
    })
}

/// Every entry, dismissed or not, oldest first.
pub fn entries(index: &Index) -> Result<Vec<Entry>> {
    crate::hall::inbox::entries(index, daemon_stopped().into_iter().collect())
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
        let _you = ctx.person(
            if args.clear {
                "inbox --clear"
            } else {
                "inbox --dismiss"
            },
            "hides what waits for a person",
        )?;
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
