//! `hall hook <event>`: Claude Code's hook protocol in, context and verdicts out.
//!
//! Hooks have a stricter contract than the CLI. They run on every tool call, so they
//! avoid subprocesses and the index unless a decision needs them. They never break a
//! session: on their own error (bad JSON, an unreadable journal, a panic, a deadline)
//! they exit 0, print nothing, and log the error under the journal directory. They never
//! exit 2, which Claude Code reads as "block". Outside an initialized repository they do
//! nothing.

mod context;
mod gates;
mod policy_room;
mod protect;
mod record;
mod session;
pub mod statusline;
pub mod tool_policy;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

use crate::config::Config;
use crate::git::Repo;
use crate::hall::{Ctx, Hall};
use crate::journal::Journal;

/// How long a hook may take before it gives up (and fails open).
const DEADLINE: Duration = Duration::from_secs(20);
/// The most stdin a hook reads; a larger input is logged and ignored.
const MAX_INPUT: u64 = 16 * 1024 * 1024;

/// The events Hallmark handles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HookEvent {
    SessionStart,
    UserPromptSubmit,
    PreToolUse,
    PostToolUse,
    PostToolUseFailure,
    Stop,
    Notification,
}

impl HookEvent {
    /// Accepts `pre-tool-use`, `PreToolUse`, `pre_tool_use`…
    pub fn parse(s: &str) -> Option<HookEvent> {
        let key: String = s
            .chars()
            .filter(|c| c.is_ascii_alphanumeric())
            .collect::<String>()
            .to_ascii_lowercase();
        Some(match key.as_str() {
            "sessionstart" => HookEvent::SessionStart,
            "userpromptsubmit" => HookEvent::UserPromptSubmit,
            "pretooluse" => HookEvent::PreToolUse,
            "posttooluse" => HookEvent::PostToolUse,
            "posttoolusefailure" => HookEvent::PostToolUseFailure,
            "stop" => HookEvent::Stop,
            "notification" => HookEvent::Notification,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            HookEvent::SessionStart => "SessionStart",
            HookEvent::UserPromptSubmit => "UserPromptSubmit",
            HookEvent::PreToolUse => "PreToolUse",
            HookEvent::PostToolUse => "PostToolUse",
            HookEvent::PostToolUseFailure => "PostToolUseFailure",
            HookEvent::Stop => "Stop",
            HookEvent::Notification => "Notification",
        }
    }
}

/// The fields of Claude Code's hook input that Hallmark reads; everything is optional
/// so an older or newer client's input still decodes.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Input {
    pub session_id: Option<String>,
    pub transcript_path: Option<String>,
    pub cwd: Option<String>,
    pub hook_event_name: Option<String>,
    pub prompt: Option<String>,
    pub tool_name: Option<String>,
    pub tool_input: Option<Value>,
    pub tool_response: Option<Value>,
    /// PostToolUseFailure: what went wrong.
    pub error: Option<String>,
    pub last_assistant_message: Option<String>,
    pub message: Option<String>,
    pub notification_type: Option<String>,
    pub source: Option<String>,
    pub agent_type: Option<String>,
}

/// Everything a handler needs.
pub struct Hook {
    pub event: HookEvent,
    pub input: Input,
    pub cwd: PathBuf,
    pub repo: Repo,
    pub hall: Hall,
    pub ctx: Ctx,
}

/// Runs a hook and returns the process exit code, which is always 0.
pub fn main(args: &[String]) -> u8 {
    let Some(event) = args.first().and_then(|a| HookEvent::parse(a)) else {
        // An unknown event or no event: not ours to judge, and never a block.
        log_anywhere(&format!("hall hook: unknown event {:?}", args.first()));
        return 0;
    };
    // A watchdog: whatever happens below, the session gets its answer (none) in time.
    std::thread::spawn(move || {
        std::thread::sleep(DEADLINE);
        log_anywhere(&format!(
            "hall hook {}: gave up after {}s",
            event.name(),
            DEADLINE.as_secs()
        ));
        std::process::exit(0);
    });
    let outcome = std::panic::catch_unwind(|| run(event));
    match outcome {
        Ok(Ok(Some(out))) => {
            println!("{out}");
        }
        Ok(Ok(None)) => {}
        Ok(Err(e)) => log_anywhere(&format!("hall hook {}: {e}", event.name())),
        Err(p) => {
            let what = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            log_anywhere(&format!("hall hook {}: panicked: {what}", event.name()));
        }
    }
    0
}

fn run(event: HookEvent) -> Result<Option<String>, String> {
    let mut raw = Vec::new();
    std::io::stdin()
        .take(MAX_INPUT + 1)
        .read_to_end(&mut raw)
        .map_err(|e| format!("reading stdin: {e}"))?;
    if raw.len() as u64 > MAX_INPUT {
        return Err(format!("input larger than {MAX_INPUT} bytes; ignored"));
    }
    let input: Input =
        serde_json::from_slice(&raw).map_err(|e| format!("input is not hook JSON: {e}"))?;
    let cwd = match &input.cwd {
        Some(c) if !c.is_empty() => PathBuf::from(c),
        _ => std::env::current_dir().map_err(|e| e.to_string())?,
    };
    let Some(hall) = initialized(&cwd)? else {
        return Ok(None);
    };
    let _ = LOG_DIR.set(hall.journal.root().to_path_buf());
    let mut ctx = Ctx::from_env().map_err(|e| e.message)?;
    ctx.cwd = cwd.clone();
    let hook = Hook {
        event,
        repo: hall.repo.clone(),
        hall,
        input,
        cwd,
        ctx,
    };
    let result = match event {
        HookEvent::SessionStart => context::session_start(&hook),
        HookEvent::UserPromptSubmit => context::user_prompt_submit(&hook),
        HookEvent::PreToolUse => gates::pre_tool_use(&hook),
        HookEvent::PostToolUse => record::post_tool_use(&hook),
        HookEvent::PostToolUseFailure => record::post_tool_use_failure(&hook),
        HookEvent::Stop => record::stop(&hook),
        HookEvent::Notification => record::notification(&hook),
    };
    result.map_err(|e| format!("{}: {}", e.code.as_str(), e.message))
}

/// The initialized repository containing `dir`, or `None` when there is none (the
/// hook then does nothing).
pub fn initialized(dir: &Path) -> Result<Option<Hall>, String> {
    let Ok(repo) = Repo::discover(dir) else {
        return Ok(None);
    };
    let journal = Journal::new(repo.hall_dir());
    // A repository the user registered stays gated when its journal directory is gone
    // (moved or deleted from a session): the gates then run with the defaults.
    if !journal.exists() && !registered(&repo) {
        return Ok(None);
    }
    // The rules come from the base branch as committed. A broken config must not switch
    // the gates off (an agent could break it on purpose): log it and gate with the
    // defaults, on the recorded base.
    let config = crate::hall::rules::rules(&repo)
        .map(|r| r.config)
        .unwrap_or_else(|e| {
            if journal.exists() {
                let _ = LOG_DIR.set(journal.root().to_path_buf());
            }
            log_anywhere(&format!(
                "{}; the hooks use the default configuration",
                e.message
            ));
            Config {
                base: crate::hall::rules::base_name(&repo),
                ..Config::default()
            }
        });
    Ok(Some(Hall::with(repo, journal, config)))
}

/// Whether the user registered this repository with `hall init` (the registry lives in
/// the user's data directory, outside every repository).
fn registered(repo: &Repo) -> bool {
    crate::hall::registry::contains(&repo.main_root)
}

/// The journal directory of the hook's repository, once known.
static LOG_DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();

/// Appends a line to `hooks.log` in the journal of the hook's repository (or of the
/// process's directory, before the input said where it is), if there is one.
pub(crate) fn log_anywhere(message: &str) {
    let journal_dir = match LOG_DIR.get() {
        Some(d) => d.clone(),
        None => {
            let dir = std::env::current_dir().ok();
            let Some(repo) = dir.and_then(|d| Repo::discover(&d).ok()) else {
                return;
            };
            repo.hall_dir()
        }
    };
    if !journal_dir.is_dir() {
        return;
    }
    let line =
        serde_json::json!({ "t": crate::clock::stamp(crate::clock::now()), "error": message })
            .to_string();
    let _ = crate::journal::file::append_raw(&journal_dir.join("hooks.log"), &format!("{line}\n"));
}

/// The JSON Claude Code reads from a hook that adds context.
pub fn context_output(event: HookEvent, text: &str) -> String {
    serde_json::json!({
        "hookSpecificOutput": { "hookEventName": event.name(), "additionalContext": text }
    })
    .to_string()
}

impl Hook {
    pub fn session_id(&self) -> Option<&str> {
        self.input.session_id.as_deref().filter(|s| !s.is_empty())
    }

    /// The item whose worktree the session is in, else the one the session is bound to.
    pub fn item(&self) -> Option<(crate::item::ItemId, crate::item::Item)> {
        let here = self.worktree_item(&self.cwd).ok().flatten();
        let id = here.or_else(|| {
            self.session_id()
                .and_then(|s| session::load(&self.hall.journal, s).item)
        })?;
        Some((id, self.hall.item(id).ok()?))
    }

    /// The active (not closed or dropped) item whose worktree contains `dir`. An error
    /// means "can't tell" (an unreadable journal), which gates must treat as their own
    /// failure and fail open on, never as "outside a worktree".
    pub fn worktree_item(&self, dir: &Path) -> crate::error::Result<Option<crate::item::ItemId>> {
        let Ok(repo) = Repo::discover(dir) else {
            return Ok(None);
        };
        if !repo.is_linked_worktree() || repo.common_dir != self.repo.common_dir {
            return Ok(None);
        }
        let branch = std::fs::read_to_string(repo.git_dir.join("HEAD"))
            .ok()
            .and_then(|h| {
                h.trim()
                    .strip_prefix("ref: refs/heads/")
                    .map(str::to_string)
            });
        let index = self.hall.index()?;
        let Some(id) = index.item_for_place(&repo.toplevel.to_string_lossy(), branch.as_deref())?
        else {
            return Ok(None);
        };
        // The item's own journal decides, so a damaged one is an error here too.
        let item = self.hall.item(id)?;
        Ok((!item.state.is_terminal()).then_some(id))
    }
}
