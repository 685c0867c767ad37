//! What the session is told: SessionStart's context and UserPromptSubmit's notes.

use super::{Hook, context_output, session};
use crate::commands::next_for;
use crate::error::Result;
use crate::item::{Event, EventKind, Item, ItemId, State};

/// The person's words on the item since the agent's last turn: pull-back reasons,
/// answers, notes. The agent should hear them before it carries on
/// (docs/decisions/0007-what-you-said-reaches-the-agent.md).
fn said_since_last_turn(events: &[Event]) -> Vec<String> {
    let last_turn = events
        .iter()
        .rposition(|e| matches!(e.kind, EventKind::Turn { .. }))
        .map(|i| i + 1)
        .unwrap_or(0);
    events[last_turn..]
        .iter()
        .filter(|e| e.actor == "you")
        .filter_map(|e| match &e.kind {
            EventKind::PulledBack {
                reason: Some(r), ..
            } => Some(format!("pulled it back: {r}")),
            EventKind::Answered { qid, answer, .. } => Some(format!("answered {qid}: {answer}")),
            EventKind::Retried { reason, .. } => Some(format!("allowed a retry: {reason}")),
            EventKind::Ready { note: Some(n), .. } => Some(format!("noted on ready: {n}")),
            _ => None,
        })
        .collect()
}

fn inbox_count(hook: &Hook) -> usize {
    hook.hall
        .index()
        .ok()
        .and_then(|i| crate::commands::inbox_count(&i).ok())
        .unwrap_or(0)
}

fn describe(id: ItemId, item: &Item) -> String {
    let mut s = format!(
        "Hallmark: this session works on {id} \"{}\", which is {} ({}).",
        item.title,
        item.state,
        item.state.station()
    );
    if let Some(w) = &item.worktree {
        s.push_str(&format!(" Its worktree is {w}."));
    }
    if let Some(h) = &item.hold {
        s.push_str(&format!(" It is held ({}): {}.", h.kind.as_str(), h.reason));
    }
    let next: Vec<String> = next_for(item)
        .into_iter()
        .map(|c| format!("`{c}`"))
        .collect();
    s.push_str(&format!(" Next: {}.", next.join(", ")));
    s
}

pub fn session_start(hook: &Hook) -> Result<Option<String>> {
    let inbox = inbox_count(hook);
    let mut text = match hook.item() {
        Some((id, item)) => {
            if let Some(sid) = hook.session_id() {
                session::update(&hook.hall.journal, sid, |s| s.item = Some(id));
            }
            let mut t = describe(id, &item);
            if matches!(item.state, State::Development | State::AwaitingYou) {
                let events = hook.hall.journal.read_item(id)?.events;
                let said = said_since_last_turn(&events);
                if !said.is_empty() {
                    t.push_str(&format!(
                        " Since the last agent run, the person {}.",
                        said.join("; ")
                    ));
                }
                if let Some(sid) = hook.session_id() {
                    session::update(&hook.hall.journal, sid, |s| s.shown = events.len() as u64);
                }
            }
            t
        }
        None => {
            let open: Vec<String> = hook
                .hall
                .index()
                .and_then(|i| Ok(i.items(false)?))
                .map(|rows| {
                    rows.iter()
                        .take(8)
                        .map(|r| format!("{} \"{}\" ({})", r.id, r.title, r.state))
                        .collect()
                })
                .unwrap_or_default();
            let mut t = String::from(
                "Hallmark runs in this repository: development happens in items, each with its own branch and \
                 worktree. Before editing or committing, start one with `hall new --title \"…\"` (or `hall adopt` \
                 for the current branch) and work in the worktree it prints. Never push: approved work ships on its own.",
            );
            if !open.is_empty() {
                t.push_str(&format!(" Open items: {}.", open.join(", ")));
            }
            t
        }
    };
    if inbox > 0 {
        text.push_str(&format!(
            " {inbox} thing(s) wait for the person in `hall inbox`."
        ));
    }
    // A daemon that died can't say so: the session's start tells the person, once.
    if crate::commands::notify::stopped_daemon_untold(&hook.hall) {
        let _ = crate::daemon::spawn_detached(&["notify", "now"], &hook.hall.repo.main_root);
    }
    // A session the user meant to confine that isn't (or whose own settings undo it):
    // the hooks still gate it, but nothing below them does. Say so, once, at the start.
    if let Some(note) = super::confinement::session_start(hook) {
        text.push(' ');
        text.push_str(&note);
    }
    Ok(Some(context_output(hook.event, &text)))
}

pub fn user_prompt_submit(hook: &Hook) -> Result<Option<String>> {
    let prompt = hook.input.prompt.clone().unwrap_or_default();
    let item = hook.item();
    let mut event = hook.ctx.event(
        item.as_ref().map(|(id, _)| *id),
        EventKind::Prompt {
            text: prompt,
            session: hook.session_id().map(str::to_string),
        },
    );
    event.actor = "you".into();
    match &item {
        Some((id, _)) => hook.hall.journal.append_item(*id, &[event])?,
        None => hook.hall.journal.append_repo(&[event])?,
    }
    let Some((id, item)) = item else {
        return Ok(None);
    };
    if matches!(
        item.state,
        State::Checks | State::Review | State::Fixing | State::Escalated | State::Hallmarked
    ) {
        let note = format!(
            "Hallmark: {id} is in {} (round {}), so its commit is frozen. If this prompt asks for changes, run \
             `hall pull-back {id} --reason \"…\"` first, then work in its worktree.",
            item.state, item.round
        );
        return Ok(Some(context_output(hook.event, &note)));
    }
    // In development or waiting for you: the person's words since the last run, once.
    let Some(sid) = hook.session_id() else {
        return Ok(None);
    };
    let events = hook.hall.journal.read_item(id)?.events;
    let shown = session::load(&hook.hall.journal, sid).shown as usize;
    let fresh = if shown < events.len() {
        said_since_last_turn(&events[shown.min(events.len())..])
    } else {
        Vec::new()
    };
    session::update(&hook.hall.journal, sid, |s| {
        s.shown = events.len() as u64;
        s.item = Some(id);
    });
    if fresh.is_empty() {
        return Ok(None);
    }
    Ok(Some(context_output(
        hook.event,
        &format!("Hallmark: on {id}, the person {}.", fresh.join("; ")),
    )))
}
