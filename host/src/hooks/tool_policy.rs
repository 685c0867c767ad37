//! The tool-call policy in the hooks: PreToolUse asks the tool-policy room about each
//! call the gates let through; PostToolUse and PostToolUseFailure record how each call
//! ended in the session's window, which is what the room judges the next call by.
//!
//! Most calls are allowed, and starting the room runtime is most of what asking costs a
//! hook process. So the room is asked only when the call meets its guard, the conditions
//! it states ahead of any call for the settings in force (`crate::rooms::guard`); a
//! call that meets none is allowed without loading the room, as the room promised.
//!
//! The room detects and `hall` enforces: a detector in `observe` mode (the default)
//! only nudges, and its would-be block is journaled for `hall policy report`. Every
//! failure here fails open: a room that errs, traps or runs out of time, a window that
//! can't be read, a user config that doesn't parse, all let the call run and log why.
//! A block is journaled and enters the window as `blocked`, which ends the error streak
//! it may have come from: a denied call never wedges the agent.

use std::fmt::Write as _;

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::policy_room::{PolicyRoom, decide};
use super::{Hook, session};
use crate::config::PolicyMode;
use crate::error::{Code, HallError, Result};
use crate::gate::{self, CommandKind};
use crate::hall::tool_policy::{Settings, user_policy};
use crate::item::{EventKind, ItemId, State};
use crate::rooms::guard;
use crate::rooms::types::{
    self, CallOutcome, FailingCheck, ItemFacts, PastCall, PolicyAction, PolicyInput, PolicyVerdict,
    ShellCommand, ToolCall,
};

/// The longest preview of a call.
const PREVIEW: usize = 120;
/// Bash input fields that change nothing about what the command does.
const VOLATILE: &[&str] = &["description", "timeout", "run_in_background"];

/// The settings in force: the base branch's `[policy]`, tightened by the user's. A
/// user file that can't be read is logged and left out, never a reason to block.
pub fn settings(hook: &Hook) -> Settings {
    let user = hook
        .hall
        .user_config_dir()
        .and_then(|dir| match user_policy(&dir) {
            Ok(p) => p,
            Err(e) => {
                super::log_anywhere(&format!("tool policy: the user's [policy] is ignored: {e}"));
                None
            }
        });
    Settings::resolve(&hook.hall.config.policy, user.as_ref())
}

/// PreToolUse, after every gate let the call through.
pub fn pre_tool_use(hook: &Hook) -> Result<Option<String>> {
    let settings = settings(hook);
    if settings.all_off() {
        return Ok(None);
    }
    let Some(call) = call_of(hook, &settings) else {
        return Ok(None);
    };
    let session = hook
        .session_id()
        .map(|sid| session::load(&hook.hall.journal, sid))
        .unwrap_or_default();
    let skip = session.calls.len().saturating_sub(settings.window);
    let window: Vec<PastCall> = session.calls.into_iter().skip(skip).collect();
    // Fail open: whatever keeps the room from answering, the call runs and the log
    // says why nobody judged it.
    let fail_open = |why: String| {
        super::log_anywhere(&format!("tool policy: {why}; the call was allowed"));
        Ok(None)
    };
    let mut policy = match PolicyRoom::choose(hook) {
        Ok(p) => p,
        Err(why) => return fail_open(why),
    };
    // The room promised `allow` for a call that meets none of its guard's conditions:
    // such a call runs without the room being loaded, and without the item being read,
    // which only the room needs.
    if !guard::matches(&policy.guard(&settings.detectors), &call, &window) {
        return Ok(None);
    }
    let item = item_facts(hook, session.item, &call);
    let input = PolicyInput {
        call: call.clone(),
        item: item.as_ref().map(|(_, f)| f.clone()),
        window,
        settings: settings.detectors.clone(),
    };
    let room = match policy.loaded() {
        Ok(r) => r,
        Err(why) => return fail_open(why),
    };
    let mut verdict = match decide(room, &input) {
        Ok(v) => v,
        Err(why) => return fail_open(why),
    };
    let Some(mut applied) = apply(&settings, &verdict) else {
        return Ok(None);
    };
    // The room answers with one detector; an observed one may have won over an enforced
    // one that fired too. Asked again without the observed detectors, an enforced block
    // is never hidden behind a nudge.
    if applied.would_block
        && settings
            .detectors
            .iter()
            .any(|d| d.name != verdict.detector && d.mode == types::PolicyMode::Enforce)
    {
        let mut enforced = input.clone();
        for d in &mut enforced.settings {
            if d.mode == types::PolicyMode::Observe {
                d.mode = types::PolicyMode::Off;
            }
        }
        if let Ok(v) = decide(room, &enforced)
            && let Some(a) = apply(&settings, &v)
            && matches!(a.action, PolicyAction::Deny | PolicyAction::Ask)
        {
            verdict = v;
            applied = a;
        }
    }
    record(
        hook,
        item.map(|(id, _)| id),
        &call,
        &verdict,
        &applied,
        settings.window,
    );
    Ok(Some(answer(&verdict, &applied)))
}

/// What `hall` does with a room's verdict once the detector's mode is applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Applied {
    /// What happens to the call: `nudge`, `ask` or `deny`.
    pub action: PolicyAction,
    /// The detector wanted to deny or ask, and its `observe` mode made it a nudge.
    pub would_block: bool,
}

/// The verdict under its detector's mode; `None` when the call runs unremarked.
pub fn apply(settings: &Settings, verdict: &PolicyVerdict) -> Option<Applied> {
    if verdict.action == PolicyAction::Allow {
        return None;
    }
    match settings.mode_of(&verdict.detector) {
        PolicyMode::Off => None,
        PolicyMode::Observe => Some(Applied {
            action: PolicyAction::Nudge,
            would_block: verdict.action != PolicyAction::Nudge,
        }),
        PolicyMode::Enforce => Some(Applied {
            action: verdict.action,
            would_block: false,
        }),
    }
}

/// The hook's answer to Claude Code.
fn answer(verdict: &PolicyVerdict, applied: &Applied) -> String {
    let detector = &verdict.detector;
    match applied.action {
        PolicyAction::Deny | PolicyAction::Ask => {
            let decision = if applied.action == PolicyAction::Deny {
                "deny"
            } else {
                "ask"
            };
            let err = HallError::new(
                Code::GateDenied,
                format!("Hallmark's tool policy ({detector}): {}", verdict.reason),
            )
            .hint("hall findings")
            .hint("hall ask \"…\"")
            .with_check(format!("tool-policy:{detector}"));
            let reason =
                serde_json::to_string(&err.reply()).unwrap_or_else(|_| err.message.clone());
            super::gates::decision_json(decision, &reason)
        }
        _ => {
            let mut text = format!("Hallmark's tool policy ({detector}): {}", verdict.reason);
            if applied.would_block {
                text.push_str(
                    " (In enforce mode this call would have been blocked; the policy is observing.)",
                );
            }
            json!({
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "additionalContext": text,
                }
            })
            .to_string()
        }
    }
}

/// Journals what the policy said, and puts a block into the session's window.
fn record(
    hook: &Hook,
    item: Option<ItemId>,
    call: &ToolCall,
    verdict: &PolicyVerdict,
    applied: &Applied,
    window: usize,
) {
    let action = match applied.action {
        PolicyAction::Allow => "allow",
        PolicyAction::Nudge => "nudge",
        PolicyAction::Ask => "ask",
        PolicyAction::Deny => "deny",
    };
    if hook.hall.journal.exists() {
        let mut event = hook.ctx.event(
            item,
            EventKind::ToolPolicy {
                detector: verdict.detector.clone(),
                action: action.to_string(),
                would_block: applied.would_block,
                tool: call.tool.clone(),
                call: call.preview.clone(),
                reason: verdict.reason.chars().take(1000).collect(),
                session: hook.session_id().map(str::to_string),
            },
        );
        event.actor = "hook".into();
        if let Err(e) = hook.hall.journal.append_repo(&[event]) {
            super::log_anywhere(&format!("tool policy: could not journal a {action}: {e}"));
        }
    }
    if applied.action == PolicyAction::Deny
        && let Some(sid) = hook.session_id()
    {
        let past = PastCall {
            call: call.clone(),
            outcome: CallOutcome::Blocked,
            output_hash: String::new(),
            detector: verdict.detector.clone(),
        };
        session::update(&hook.hall.journal, sid, |s| s.push_call(past, window));
    }
}

/// PostToolUse (`ok`) and PostToolUseFailure: how the call ended, into the window.
pub fn record_outcome(hook: &Hook, ok: bool) {
    let Some(sid) = hook.session_id() else {
        return;
    };
    let settings = settings(hook);
    if settings.all_off() {
        return;
    }
    let Some(call) = call_of(hook, &settings) else {
        return;
    };
    let output_hash = if ok {
        // A response with no text at all (a silent type check) says nothing about
        // whether the agent is stuck: it gets no hash, so it is no evidence.
        hook.input
            .tool_response
            .as_ref()
            .filter(|v| has_text(v))
            .map(|v| hash(&canonical(v, &[])))
            .unwrap_or_default()
    } else {
        hook.input
            .error
            .as_deref()
            .map(|e| hash(&fold(e)))
            .unwrap_or_default()
    };
    let past = PastCall {
        call,
        outcome: if ok {
            CallOutcome::Success
        } else {
            CallOutcome::Error
        },
        output_hash,
        detector: String::new(),
    };
    session::update(&hook.hall.journal, sid, |s| {
        s.push_call(past, settings.window)
    });
}

/// The call in the hook's input, normalised; `None` when there is no tool name.
pub fn call_of(hook: &Hook, settings: &Settings) -> Option<ToolCall> {
    let tool = hook.input.tool_name.as_deref().filter(|t| !t.is_empty())?;
    let input = hook.input.tool_input.clone().unwrap_or(Value::Null);
    Some(normalise(tool, &input, settings))
}

/// A tool call as the room sees it: its identity, a preview, whether it only reads,
/// and for Bash what the command does.
pub fn normalise(tool: &str, input: &Value, settings: &Settings) -> ToolCall {
    let volatile: &[&str] = if tool == "Bash" { VOLATILE } else { &[] };
    let key = hash(&format!("{tool}\0{}", canonical(input, volatile)));
    let field = |k: &str| input.get(k).and_then(Value::as_str).map(fold);
    // The command is analysed as written: folding its white space would join the lines
    // of a multi-line command into one (`git add .` then `git commit` would read as one
    // `git add` with more arguments).
    let command = (tool == "Bash")
        .then(|| input.get("command").and_then(Value::as_str))
        .flatten()
        .map(|c| {
            let k = gate::kinds(&gate::analyze(c, &gate::StaticContext::default()));
            ShellCommand {
                kind: match k.kind {
                    CommandKind::ReadOnly => types::CommandKind::ReadOnly,
                    CommandKind::Test => types::CommandKind::Test,
                    CommandKind::Build => types::CommandKind::Build,
                    CommandKind::Unknown => types::CommandKind::Unknown,
                    CommandKind::Mutating => types::CommandKind::Mutating,
                },
                words: k.words,
                commits: k.commits,
                reports_fix: k.reports_fix,
            }
        });
    let preview = match tool {
        "Bash" => field("command").unwrap_or_default(),
        _ => {
            let what = [
                "file_path",
                "notebook_path",
                "path",
                "pattern",
                "url",
                "query",
            ]
            .iter()
            .find_map(|k| field(k))
            .or_else(|| first_string(input))
            .unwrap_or_default();
            format!("{tool} {what}").trim_end().to_string()
        }
    };
    let read_only = settings.read_only(tool)
        || command
            .as_ref()
            .is_some_and(|c| c.kind == types::CommandKind::ReadOnly);
    ToolCall {
        tool: tool.to_string(),
        key,
        preview: clip(&preview, PREVIEW),
        read_only,
        command,
    }
}

/// The item the session works on, with its failing checks when the call commits or
/// reports a fix (the only calls the same-failure detector looks at). Those calls find
/// the item as the gates do (the worktree's first, through the index); any other call
/// takes the item the session is bound to (Hallmark binds a session when a turn ends
/// in an item's worktree, or when `hall new` or `hall adopt` names one), which costs
/// one small read instead of opening the index on every tool call.
fn item_facts(hook: &Hook, bound: Option<ItemId>, call: &ToolCall) -> Option<(ItemId, ItemFacts)> {
    let wants_checks = call
        .command
        .as_ref()
        .is_some_and(|c| c.commits || c.reports_fix);
    let id = match bound {
        _ if wants_checks => hook.item()?.0,
        Some(id) => id,
        None => return None,
    };
    let events = hook.hall.events(id).ok()?;
    let item = crate::item::fold(&events);
    let failing_checks = if wants_checks {
        failing_checks(&events)
    } else {
        Vec::new()
    };
    Some((
        id,
        ItemFacts {
            id: id.to_string(),
            state: state_name(item.state),
            failing_checks,
        },
    ))
}

fn state_name(state: State) -> String {
    serde_json::to_value(state)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_else(|| format!("{state:?}").to_lowercase())
}

/// The checks whose latest run failed, each with how many of its latest runs in a row
/// failed with the same (condensed) output.
pub fn failing_checks(events: &[crate::item::Event]) -> Vec<FailingCheck> {
    // Per check, in order of first appearance: (latest output hash, runs in a row).
    let mut runs: Vec<(String, Option<String>, u32)> = Vec::new();
    for e in events {
        let EventKind::CheckRun {
            check,
            exit_code,
            output,
            ..
        } = &e.kind
        else {
            continue;
        };
        let failed = (*exit_code != 0).then(|| hash(&fold(output.as_deref().unwrap_or(""))));
        match runs.iter_mut().find(|(c, _, _)| c == check) {
            Some(entry) => {
                entry.2 = match (&failed, &entry.1) {
                    (Some(new), Some(old)) if new == old => entry.2 + 1,
                    (Some(_), _) => 1,
                    (None, _) => 0,
                };
                entry.1 = failed;
            }
            None => runs.push((check.clone(), failed.clone(), u32::from(failed.is_some()))),
        }
    }
    runs.into_iter()
        .filter(|(_, failed, n)| failed.is_some() && *n > 0)
        .map(|(check, _, n)| FailingCheck {
            check,
            same_output_runs: n,
        })
        .collect()
}

/// JSON with object keys sorted, `skip` keys of the top object left out, and white space
/// runs in strings folded: the same call spelled with other spacing is the same call.
fn canonical(v: &Value, skip: &[&str]) -> String {
    fn walk(v: &Value, skip: &[&str], out: &mut String) {
        match v {
            Value::Object(map) => {
                let mut keys: Vec<&String> =
                    map.keys().filter(|k| !skip.contains(&k.as_str())).collect();
                keys.sort();
                out.push('{');
                for (i, k) in keys.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    let _ = write!(out, "{}:", Value::String((*k).clone()));
                    walk(&map[*k], &[], out);
                }
                out.push('}');
            }
            Value::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    walk(item, &[], out);
                }
                out.push(']');
            }
            Value::String(s) => {
                let _ = write!(out, "{}", Value::String(fold(s)));
            }
            other => {
                let _ = write!(out, "{other}");
            }
        }
    }
    let mut out = String::new();
    walk(v, skip, &mut out);
    out
}

/// Whether a tool's response carries any text that isn't white space.
fn has_text(v: &Value) -> bool {
    match v {
        Value::String(s) => !s.trim().is_empty(),
        Value::Array(items) => items.iter().any(has_text),
        Value::Object(map) => map.values().any(has_text),
        _ => false,
    }
}

/// White space runs as one space, trimmed.
fn fold(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The first 16 hex digits of the SHA-256 of `s`: short, and enough to tell calls apart.
fn hash(s: &str) -> String {
    let digest = Sha256::digest(s.as_bytes());
    digest[..8]
        .iter()
        .fold(String::with_capacity(16), |mut out, b| {
            let _ = write!(out, "{b:02x}");
            out
        })
}

fn first_string(v: &Value) -> Option<String> {
    let map = v.as_object()?;
    let mut keys: Vec<&String> = map.keys().collect();
    keys.sort();
    keys.iter().find_map(|k| map[*k].as_str().map(fold))
}

fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max - 1).collect();
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Policy;
    use crate::item::{Event, Sha};

    fn settings() -> Settings {
        Settings::resolve(&Policy::default(), None)
    }

    #[test]
    fn the_same_call_spelled_otherwise_has_the_same_key() {
        let s = settings();
        let a = normalise(
            "Bash",
            &json!({"command": "cargo  test\n -p x", "description": "Run the tests"}),
            &s,
        );
        let b = normalise(
            "Bash",
            &json!({"command": "cargo test -p x", "timeout": 60000}),
            &s,
        );
        assert_eq!(a.key, b.key);
        assert_eq!(a.preview, "cargo test -p x");
        let c = normalise("Bash", &json!({"command": "cargo test -p y"}), &s);
        assert_ne!(a.key, c.key);
        // The tool is part of the identity, and key order isn't.
        let e1 = normalise(
            "Edit",
            &json!({"file_path": "a.rs", "old_string": "x", "new_string": "y"}),
            &s,
        );
        let e2 = normalise(
            "Edit",
            &json!({"new_string": "y", "old_string": "x", "file_path": "a.rs"}),
            &s,
        );
        let e3 = normalise(
            "Edit",
            &json!({"file_path": "a.rs", "old_string": "y", "new_string": "x"}),
            &s,
        );
        assert_eq!(e1.key, e2.key);
        assert_ne!(e1.key, e3.key);
        assert_eq!(e1.preview, "Edit a.rs");
        assert!(!e1.read_only);
        // `description` is only volatile for Bash.
        let t1 = normalise("Task", &json!({"description": "a", "prompt": "p"}), &s);
        let t2 = normalise("Task", &json!({"description": "b", "prompt": "p"}), &s);
        assert_ne!(t1.key, t2.key);
    }

    #[test]
    fn reads_are_read_only_by_tool_or_by_command() {
        let s = settings();
        assert!(normalise("Read", &json!({"file_path": "/x"}), &s).read_only);
        assert!(normalise("Bash", &json!({"command": "git status"}), &s).read_only);
        let test = normalise("Bash", &json!({"command": "cargo test"}), &s);
        assert!(!test.read_only);
        assert_eq!(
            test.command.as_ref().map(|c| c.kind),
            Some(types::CommandKind::Test)
        );
        let mcp = normalise("mcp__docs__search", &json!({"query": "x"}), &s);
        assert!(!mcp.read_only);
        assert_eq!(mcp.preview, "mcp__docs__search x");
        let more = Policy {
            read_only_tools: vec!["mcp__docs__search".into()],
            ..Policy::default()
        };
        let s2 = Settings::resolve(&more, None);
        assert!(normalise("mcp__docs__search", &json!({"query": "x"}), &s2).read_only);
    }

    #[test]
    fn only_a_response_with_text_is_evidence() {
        assert!(!has_text(
            &json!({"stdout": "", "stderr": " \n", "interrupted": false})
        ));
        assert!(has_text(&json!({"stdout": "", "stderr": "warning"})));
        assert!(has_text(&json!([{"type": "text", "text": "x"}])));
        assert!(!has_text(&Value::Null));
    }

    #[test]
    fn a_multi_line_command_is_analysed_line_by_line() {
        let c = normalise(
            "Bash",
            &json!({"command": "git add -A\ngit commit -m 'fix parser'"}),
            &settings(),
        );
        let shell = c.command.expect("a Bash call has its analysis");
        assert!(shell.commits, "{shell:?}");
        assert_eq!(shell.words, ["git add", "git commit"]);
        // The preview still reads as one line.
        assert_eq!(c.preview, "git add -A git commit -m 'fix parser'");
    }

    #[test]
    fn a_long_call_has_a_short_preview() {
        let long = "x".repeat(500);
        let c = normalise(
            "Bash",
            &json!({ "command": format!("echo {long}") }),
            &settings(),
        );
        assert_eq!(c.preview.chars().count(), PREVIEW);
        assert_eq!(c.key.len(), 16);
    }

    fn check_run(check: &str, exit_code: i32, output: &str) -> Event {
        Event {
            v: 1,
            t: "2026-12-05T00:00:00Z".into(),
            actor: "assayer".into(),
            kind: EventKind::CheckRun {
                sha: Sha::new("a".repeat(40)),
                check: check.into(),
                exit_code,
                duration_ms: 1,
                cached: false,
                output: Some(output.into()),
                log: None,
            },
            item: None,
            via: None,
        }
    }

    #[test]
    fn a_check_failing_the_same_way_is_counted_until_it_changes_or_passes() {
        let events = [
            check_run("cargo test", 1, "assertion failed: left == right"),
            check_run("cargo clippy", 1, "warning: x"),
            check_run("cargo test", 1, "assertion  failed:\nleft == right"),
            check_run("cargo clippy", 0, ""),
            check_run("cargo test", 1, "assertion failed: left == right"),
            check_run("npm test", 1, "a"),
            check_run("npm test", 1, "b"),
        ];
        let got = failing_checks(&events);
        assert_eq!(
            got,
            [
                FailingCheck {
                    check: "cargo test".into(),
                    same_output_runs: 3
                },
                FailingCheck {
                    check: "npm test".into(),
                    same_output_runs: 1
                },
            ]
        );
        assert!(
            failing_checks(&events[..4])
                .iter()
                .all(|c| c.check != "cargo clippy")
        );
    }

    #[test]
    fn observe_turns_a_block_into_a_nudge_and_off_silences() {
        let verdict = |action, detector: &str| PolicyVerdict {
            action,
            detector: detector.into(),
            reason: "r".into(),
        };
        let observe = settings();
        assert_eq!(
            apply(&observe, &verdict(PolicyAction::Deny, "repetition")),
            Some(Applied {
                action: PolicyAction::Nudge,
                would_block: true
            })
        );
        assert_eq!(
            apply(&observe, &verdict(PolicyAction::Nudge, "repetition")),
            Some(Applied {
                action: PolicyAction::Nudge,
                would_block: false
            })
        );
        assert_eq!(apply(&observe, &verdict(PolicyAction::Allow, "")), None);
        let enforce: Policy = toml::from_str("mode = \"enforce\"").expect("toml");
        let enforce = Settings::resolve(&Policy::default(), Some(&enforce));
        assert_eq!(
            apply(&enforce, &verdict(PolicyAction::Ask, "oscillation")),
            Some(Applied {
                action: PolicyAction::Ask,
                would_block: false
            })
        );
        let off: Policy = toml::from_str("[detectors.repetition]\nmode = \"off\"").expect("toml");
        let off = Settings::resolve(&off, None);
        assert_eq!(
            apply(&off, &verdict(PolicyAction::Deny, "repetition")),
            None
        );
    }
}
