//! `hall watch [<id>]`: the item's now block, live, until the item leaves the loop.
//!
//! It waits on the file system (the `notify` crate, docs/decisions/0018) for the files
//! that say something about the item: its journal, its runs, the leases, the merger's
//! plan and the check logs. A change is shown as a new frame: on a terminal the screen
//! is cleared and drawn again (no terminal mode is changed, so Ctrl-C leaves the
//! terminal as it was), off a terminal (or with `--json`) each frame is one JSON line.
//! A slow tick catches what changes without a file changing (a lease that expires).

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use notify::{RecursiveMode, Watcher};
use serde::Serialize;

use super::{Ctx, Hall, Reply, next_for, next_text};
use crate::cli::WatchArgs;
use crate::error::{HallError, Result};
use crate::hall::statusline::QueueSpot;
use crate::item::{EventKind, ItemId, State};

/// How long to gather a burst of file events before drawing once.
const SETTLE: Duration = Duration::from_millis(15);
/// How often the frame is recomputed with no file event.
const TICK: Duration = Duration::from_secs(2);
/// Steps of the live run shown.
const STEPS: usize = 6;
/// Lines of the check log shown.
const LOG_LINES: usize = 10;

/// One frame: what the item is doing now.
#[derive(Serialize, schemars::JsonSchema)]
pub struct WatchReply {
    pub item: ItemId,
    pub title: String,
    pub state: State,
    /// Where in the building the state is (`Workshop`, `Assay Office`…).
    pub station: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hold: Option<String>,
    /// Lines in the item's journal.
    pub events: usize,
    /// The newest of them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last: Option<super::status::RecentEvent>,
    /// The lease, the checks queue and the latest run, as `hall status <id>` shows them.
    pub now: super::status::Now,
    /// Its place in the merge queue, when the merger's last plan has its PR.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue: Option<QueueSpot>,
    /// The latest run's last steps.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<String>,
    /// The last lines of the newest check's kept log (a failing check's output).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub check_log: Option<CheckLog>,
    /// The item has left the loop (closed or dropped): this is the last frame.
    pub ended: bool,
    pub next: Vec<String>,
}

/// The tail of a check's kept output.
#[derive(Serialize, schemars::JsonSchema)]
pub struct CheckLog {
    pub check: String,
    /// The log's name, for `hall run --show`.
    pub log: String,
    pub tail: Vec<String>,
}

pub fn run(ctx: &Ctx, args: &WatchArgs) -> Result<Reply> {
    let hall = ctx.hall()?;
    let id = hall.resolve(args.id.as_deref())?;
    let json = std::env::args().any(|a| a == "--json") || !std::io::stdout().is_terminal();
    let (tx, rx) = mpsc::channel();
    let mut watcher = notify::recommended_watcher(move |e: notify::Result<notify::Event>| {
        // Reading a file is an event too (inotify's open and access), and the frame
        // itself reads the item's files: only a write, a new or a removed file counts,
        // or the watch would wake itself forever.
        if let Ok(e) = e
            && !matches!(e.kind, notify::EventKind::Access(_))
        {
            // A send fails only once the receiver is gone, when nothing needs to know.
            let _ = tx.send(());
        }
    })
    .map_err(|e| watch_error(&e))?;
    for (path, mode) in watched(&hall, id) {
        // A directory that does not exist yet (no run, no lease so far) is watched
        // through its parent, which every change of it touches.
        if path.exists() {
            watcher.watch(&path, mode).map_err(|e| watch_error(&e))?;
        }
    }
    let mut shown = String::new();
    let mut out = std::io::stdout().lock();
    loop {
        let f = frame(&hall, id)?;
        if f.ended {
            // The last frame is the reply, printed by `main` like any other.
            let text = format!(
                "{}\n{id} left the loop ({}).\n{}",
                text_of(&f),
                f.state,
                next_text(&f.next)
            );
            return Ok(Reply::new(&f, text));
        }
        let line = serde_json::to_string(&f).unwrap_or_default();
        let key = change_key(&f);
        if key != shown {
            let written = if json {
                writeln!(out, "{line}")
            } else {
                // Home and clear, then the frame: a redraw with no terminal mode to undo.
                write!(out, "\x1b[H\x1b[2J{}\n(Ctrl-C to stop)\n", text_of(&f))
            };
            if written.and_then(|()| out.flush()).is_err() {
                // The reader went away (a closed pipe): nobody is watching any more.
                return Ok(Reply::new(&f, text_of(&f)));
            }
            shown = key;
        }
        match rx.recv_timeout(TICK) {
            Ok(_) => {
                // Let a burst (a write, then the cache and the changes file) settle.
                std::thread::sleep(SETTLE);
                while rx.try_recv().is_ok() {}
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err(HallError::internal("the file watcher stopped").hint("hall status"));
            }
        }
    }
}

/// What makes a frame new: everything but the lease's expiry, which the daemon pushes
/// back on every pass without anything having happened.
fn change_key(f: &WatchReply) -> String {
    let mut v = serde_json::to_value(f).unwrap_or_default();
    if let Some(lease) = v["now"].get_mut("lease").and_then(|l| l.as_object_mut()) {
        lease.remove("expires");
    }
    v.to_string()
}

fn watch_error(e: &notify::Error) -> HallError {
    HallError::internal(format!("the journal can't be watched: {e}"))
        .hint("hall status")
        .hint("hall trace --follow")
}

/// The files a frame is made from: the item's directory (its journal, its cache, its
/// runs), the journal's root (the changes file, the merger's plan), the leases and the
/// check logs.
fn watched(hall: &Hall, id: ItemId) -> Vec<(PathBuf, RecursiveMode)> {
    let root = hall.journal.root();
    vec![
        (hall.journal.item_dir(id), RecursiveMode::Recursive),
        (root.to_path_buf(), RecursiveMode::NonRecursive),
        (root.join("leases"), RecursiveMode::NonRecursive),
        (root.join("runs"), RecursiveMode::NonRecursive),
        (root.join("runs").join("logs"), RecursiveMode::NonRecursive),
    ]
}

/// What the item is doing now, from its journal and the files beside it.
pub fn frame(hall: &Hall, id: ItemId) -> Result<WatchReply> {
    let contents = hall.journal.read_item(id)?;
    let item = crate::item::fold(&contents.events);
    let now = super::status::now_block(hall, id, &item);
    let steps = super::trace::runs(&hall.journal.item_dir(id).join("runs"))
        .last()
        .map(|p| {
            let steps = super::trace::info(p).1;
            let skip = steps.len().saturating_sub(STEPS);
            steps.into_iter().skip(skip).collect()
        })
        .unwrap_or_default();
    let check_log = contents.events.iter().rev().find_map(|e| match &e.kind {
        EventKind::CheckRun { check, log, .. } => Some((check.clone(), log.clone())),
        _ => None,
    });
    let check_log = check_log.and_then(|(check, log)| {
        let log = log?;
        let tail = tail(&hall.journal.root().join("runs").join("logs").join(&log));
        Some(CheckLog { check, log, tail })
    });
    let queue = if hall.config.merge.mode == crate::config::MergeMode::Auto {
        super::board::queue_spots(hall).remove(&id)
    } else {
        None
    };
    let last = contents.events.last().map(|e| super::status::RecentEvent {
        t: e.t.clone(),
        actor: e.actor.clone(),
        event: e.kind.name().into(),
        summary: crate::record::describe(&e.kind),
    });
    let mut next = next_for(&item);
    if let Some(o) = &now.offer {
        next.insert(0, o.clone());
    }
    Ok(WatchReply {
        item: id,
        title: item.title.clone(),
        state: item.state,
        station: item.state.station().to_string(),
        hold: item.hold.as_ref().map(|h| h.kind.as_str().to_string()),
        events: contents.events.len(),
        last,
        now,
        queue,
        steps,
        check_log,
        ended: item.state.is_terminal(),
        next,
    })
}

/// The last lines of a file, or none when it can't be read.
fn tail(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    let skip = lines.len().saturating_sub(LOG_LINES);
    lines[skip..].iter().map(|l| l.to_string()).collect()
}

/// A frame for a person.
fn text_of(f: &WatchReply) -> String {
    let mut t = format!(
        "{} \"{}\"\n  state    {} ({})",
        f.item, f.title, f.state, f.station
    );
    if let Some(h) = &f.hold {
        t.push_str(&format!("  held: {h}"));
    }
    t.push('\n');
    if let Some(e) = &f.last {
        t.push_str(&format!(
            "  last     {}  {} {}: {}\n",
            e.t, e.actor, e.event, e.summary
        ));
    }
    match &f.now.lease {
        Some(l) => t.push_str(&format!(
            "  now      {} ({}) by {}\n",
            l.role, l.phase, l.holder
        )),
        None if f.now.queued => t.push_str("  now      waiting for the assayer's checks\n"),
        None => {}
    }
    if let Some(q) = &f.queue {
        t.push_str(&format!(
            "  queue    {}/{} on {} ({})\n",
            q.position, q.of, q.base, q.action
        ));
    }
    if let Some(r) = &f.now.run {
        let how = if r.live {
            "live"
        } else if r.ended {
            "ended"
        } else {
            "no end line"
        };
        t.push_str(&format!("  run      {} {how}\n", r.run));
        for s in &f.steps {
            t.push_str(&format!("    {}\n", s.lines().next().unwrap_or("")));
        }
    }
    if let Some(c) = &f.check_log {
        t.push_str(&format!("  check    {} ({})\n", c.check, c.log));
        for l in &c.tail {
            t.push_str(&format!("    {l}\n"));
        }
    }
    t.push_str(&next_text(&f.next));
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::office::lease::Lease;
    use crate::office::{Phase, Role};

    fn frame(lease: Option<Lease>, events: usize) -> WatchReply {
        WatchReply {
            item: ItemId(1),
            title: "t".into(),
            state: State::Checks,
            station: State::Checks.station().into(),
            hold: None,
            events,
            last: None,
            now: super::super::status::Now {
                lease,
                queued: false,
                run: None,
                offer: None,
            },
            queue: None,
            steps: Vec::new(),
            check_log: Some(CheckLog {
                check: "cargo test".into(),
                log: "cargo-test.log".into(),
                tail: vec!["test a ... FAILED".into()],
            }),
            ended: false,
            next: Vec::new(),
        }
    }

    #[test]
    fn a_renewed_lease_is_not_a_change_but_a_new_event_or_holder_is() {
        let lease = |holder: &str, expires: u64| Lease {
            item: ItemId(1),
            role: Role::Assayer,
            phase: Phase::Checks,
            holder: holder.into(),
            pid: 0,
            taken: 100,
            expires,
        };
        let a = change_key(&frame(Some(lease("daemon:1", 200)), 3));
        assert_eq!(a, change_key(&frame(Some(lease("daemon:1", 260)), 3)));
        assert_ne!(a, change_key(&frame(Some(lease("daemon:2", 200)), 3)));
        assert_ne!(a, change_key(&frame(Some(lease("daemon:1", 200)), 4)));
        assert_ne!(a, change_key(&frame(None, 3)));
        let text = text_of(&frame(Some(lease("daemon:1", 200)), 3));
        assert!(
            text.contains("now      assayer (checks) by daemon:1"),
            "{text}"
        );
        assert!(
            text.contains("check    cargo test (cargo-test.log)"),
            "{text}"
        );
        assert!(text.contains("    test a ... FAILED"), "{text}");
    }
}
