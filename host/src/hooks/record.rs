//! What hooks record: commits and session bindings (PostToolUse), the turn summary and
//! token usage (Stop), and notices (Notification).

use std::collections::BTreeMap;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{Hook, session};
use crate::error::Result;
use crate::gate::{self, Effect};
use crate::git;
use crate::item::event::Usage;
use crate::item::{Event, EventKind, ItemId};

/// The most of a transcript read by one Stop hook.
const MAX_TRANSCRIPT_CHUNK: u64 = 64 * 1024 * 1024;

fn append(hook: &Hook, item: Option<ItemId>, events: &[Event]) -> Result<()> {
    Ok(match item {
        Some(id) => hook.hall.journal.append_item(id, events),
        None => hook.hall.journal.append_repo(events),
    }?)
}

/// PostToolUseFailure: the call failed; the policy's window records it.
pub fn post_tool_use_failure(hook: &Hook) -> Result<Option<String>> {
    super::tool_policy::record_outcome(hook, false);
    Ok(None)
}

pub fn post_tool_use(hook: &Hook) -> Result<Option<String>> {
    super::tool_policy::record_outcome(hook, true);
    if hook.input.tool_name.as_deref() != Some("Bash") {
        return Ok(None);
    }
    let command = hook
        .input
        .tool_input
        .as_ref()
        .and_then(|i| i.get("command"))
        .and_then(Value::as_str)
        .unwrap_or("");
    // `hall new`, `hall adopt` and `hall ask` print JSON naming an item: bind the session.
    if command.contains("hall ")
        && let Some(sid) = hook.session_id()
        && let Some(id) = bound_item(hook)
    {
        session::update(&hook.hall.journal, sid, |s| s.item = Some(id));
    }
    // No aliases or scripts: PostToolUse only asks whether a commit ran.
    let no_context = gate::StaticContext::default();
    let commits = gate::analyze(command, &no_context)
        .findings
        .iter()
        .any(|f| matches!(f.effect, Effect::Commit { .. }));
    if !commits {
        return Ok(None);
    }
    let Some((sha, subject)) = git::last_commit(&hook.cwd) else {
        return Ok(None);
    };
    let item = hook.item().map(|(id, _)| id);
    let mut event = hook.ctx.event(
        item,
        EventKind::Commit {
            sha,
            subject,
            fixes: Vec::new(),
        },
    );
    event.actor = "agent".into();
    append(hook, item, &[event])?;
    Ok(None)
}

/// The item named by a `hall` reply in the tool's output (`{"item":"H-0042",…}`).
fn bound_item(hook: &Hook) -> Option<ItemId> {
    let resp = hook.input.tool_response.as_ref()?;
    let stdout = resp
        .get("stdout")
        .and_then(Value::as_str)
        .or_else(|| resp.as_str())?;
    let v: Value = serde_json::from_str(stdout.trim()).ok()?;
    let id: ItemId = v.get("item")?.as_str()?.parse().ok()?;
    hook.hall.journal.item_exists(id).then_some(id)
}

pub fn stop(hook: &Hook) -> Result<Option<String>> {
    let item = hook.item().map(|(id, _)| id);
    let mut events = Vec::new();
    if let Some(summary) = hook
        .input
        .last_assistant_message
        .as_deref()
        .filter(|m| !m.trim().is_empty())
    {
        let mut e = hook.ctx.event(
            item,
            EventKind::Turn {
                summary: summary.chars().take(4000).collect(),
                session: hook.session_id().map(str::to_string),
            },
        );
        e.actor = "agent".into();
        events.push(e);
    }
    if let (Some(sid), Some(transcript)) =
        (hook.session_id(), hook.input.transcript_path.as_deref())
    {
        let usage = session::update(&hook.hall.journal, sid, |s| {
            if item.is_some() {
                s.item = item;
            }
            read_usage(s, Path::new(transcript), sid)
        })
        .unwrap_or_default();
        for u in usage {
            let mut e = hook.ctx.event(item, EventKind::Usage(u));
            e.actor = "agent".into();
            events.push(e);
        }
    }
    if !events.is_empty() {
        append(hook, item, &events)?;
    }
    Ok(None)
}

/// The session's transcript and its subagents' transcripts.
fn transcripts(main: &Path, session_id: &str) -> Vec<PathBuf> {
    let mut out = vec![main.to_path_buf()];
    if let Some(dir) = main.parent() {
        let sub = dir.join(session_id).join("subagents");
        if let Ok(entries) = std::fs::read_dir(sub) {
            let mut more: Vec<PathBuf> = entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
                .collect();
            more.sort();
            out.extend(more);
        }
    }
    out
}

/// New usage since the stored offsets, one record per model, deduplicated by request
/// id (falling back to the message id): each content block of a response is its own
/// transcript line carrying the same usage.
fn read_usage(s: &mut session::Session, main: &Path, session_id: &str) -> Vec<Usage> {
    let mut by_model: BTreeMap<String, Usage> = BTreeMap::new();
    for path in transcripts(main, session_id) {
        let key = path.display().to_string();
        let start = s.offsets.get(&key).copied().unwrap_or(0);
        let Ok(mut f) = std::fs::File::open(&path) else {
            continue;
        };
        if f.seek(SeekFrom::Start(start)).is_err() {
            continue;
        }
        let mut buf = Vec::new();
        if f.take(MAX_TRANSCRIPT_CHUNK).read_to_end(&mut buf).is_err() {
            continue;
        }
        // Only whole lines: the transcript is written while we read it.
        let complete = buf
            .iter()
            .rposition(|&b| b == b'\n')
            .map(|i| i + 1)
            .unwrap_or(0);
        for line in buf[..complete].split(|&b| b == b'\n') {
            let Ok(v) = serde_json::from_slice::<Value>(line) else {
                continue;
            };
            if v.get("type").and_then(Value::as_str) != Some("assistant") {
                continue;
            }
            let message = &v["message"];
            let id = v
                .get("requestId")
                .and_then(Value::as_str)
                .or_else(|| message.get("id").and_then(Value::as_str));
            let Some(id) = id else { continue };
            if s.seen(id) {
                continue;
            }
            s.remember(id.to_string());
            let u = &message["usage"];
            let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
            let model = message
                .get("model")
                .and_then(Value::as_str)
                .unwrap_or("unknown")
                .to_string();
            let entry = by_model.entry(model.clone()).or_insert_with(|| Usage {
                model: model.clone(),
                role: "dev".into(),
                session: Some(session_id.to_string()),
                ..Usage::default()
            });
            entry.input += n("input_tokens");
            entry.output += n("output_tokens");
            entry.cache_read += n("cache_read_input_tokens");
            entry.cache_write += n("cache_creation_input_tokens");
            entry.request_id = Some(id.to_string());
        }
        s.offsets.insert(key, start + complete as u64);
    }
    by_model
        .into_values()
        .map(|mut u| {
            u.cost_usd =
                crate::pricing::cost(&u.model, u.input, u.output, u.cache_write, u.cache_read);
            u
        })
        .collect()
}

pub fn notification(hook: &Hook) -> Result<Option<String>> {
    let kind = match hook.input.notification_type.as_deref() {
        Some("permission_prompt" | "idle_prompt" | "agent_needs_input" | "elicitation_dialog")
        | None => "session_waiting",
        Some(other) => other,
    };
    let item = hook.item().map(|(id, _)| id);
    let mut e = hook.ctx.event(
        item,
        EventKind::Notification {
            kind: kind.to_string(),
            message: hook.input.message.clone().unwrap_or_default(),
            session: hook.session_id().map(str::to_string),
        },
    );
    e.actor = "hook".into();
    append(hook, item, &[e])?;
    Ok(None)
}
