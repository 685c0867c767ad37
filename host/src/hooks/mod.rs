//! `hall hook <event>`: Claude Code's hook protocol in, context and verdicts out.
//!
//! Hooks have a stricter contract than the CLI: they run on every tool call, so they
//! avoid subprocesses and the index unless a decision needs them, and they never break
//! a session. They never exit 2, which Claude Code reads as "block". On their own error
//! (bad JSON, an unreadable journal, a panic) they exit 0, print nothing, and log the
//! error under the journal directory, except where the call might push, write a
//! protected place or act as a person: there an error, an input too large to read, or
//! running out of time ([`DEADLINE`]) denies the call, with the reason, as any other
//! denial. Outside every initialized repository they do nothing; which repository a
//! call is judged for is the session's, not only the working directory's
//! ([`anchor`]).

mod anchor;
mod confinement;
mod context;
mod gates;
mod glob;
mod policy_room;
mod protect;
mod record;
mod session;
pub mod statusline;
pub mod tool_policy;
mod tools;

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

use crate::error::{Code, HallError};
use crate::git::Repo;
use crate::hall::{Ctx, Hall};

/// How long a hook may take before it is answered for: a denial for a call
/// that might push, write a protected place or act as a person, nothing (allow) for
/// any other. Claude Code gives a hook 60 seconds (the plugin says so for PreToolUse)
/// and lets the call through when it takes longer, so the hook must answer well
/// before that even on a loaded machine: a third of it. The analysis itself takes
/// milliseconds; the slowest honest judgement is a hallmark check that asks `gh` for a
/// pull request's head, which takes seconds.
pub const DEADLINE: Duration = Duration::from_secs(20);
/// A shorter deadline in milliseconds (never a longer one), for tests.
const DEADLINE_ENV: &str = "HALL_HOOK_DEADLINE_MS";
/// Makes the hook sleep this many milliseconds before judging, for tests of the
/// deadline. It can only make the hook slower, so a call that might do harm is denied.
const STALL_ENV: &str = "HALL_HOOK_STALL_MS";
/// The most stdin a hook reads; a larger input is not read (and, for a call that might
/// do harm, denied).
const MAX_INPUT: u64 = 16 * 1024 * 1024;
/// The judging thread's stack. The analysis bounds its own recursion; this is room to
/// spare (reserved, not used), because a hook that overflows its stack dies, and Claude
/// Code lets the call through.
const STACK: usize = 64 * 1024 * 1024;

/// Whether the hook denies when it can't finish (out of time, its own error): set for
/// PreToolUse until the call is known to be harmless, or the gates let it through and
/// only the advisory tool-call policy is left.
static DENY_IF_UNFINISHED: AtomicBool = AtomicBool::new(false);

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
#[derive(Debug, Default, Clone, Deserialize)]
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
    /// The directory the call runs in: the one Claude Code reports, or, when that one is
    /// gone, where Claude Code runs the command instead (the project directory).
    pub cwd: PathBuf,
    /// The repository this hook judges for.
    pub repo: Repo,
    pub hall: Hall,
    /// The checkout of `repo` that is the session's own (see [`anchor`]).
    pub checkout: PathBuf,
    pub ctx: Ctx,
}

/// Runs a hook and returns the process exit code, which is always 0.
///
/// The judging runs on a thread of its own with a generous stack, and this one waits for
/// its answer until the deadline: whatever happens there (an error, a panic, a hang),
/// the session gets its answer in time, and only this thread prints it.
pub fn main(args: &[String]) -> u8 {
    let Some(event) = args.first().and_then(|a| HookEvent::parse(a)) else {
        // An unknown event or no event: not ours to judge, and never a block.
        log_anywhere(&format!("hall hook: unknown event {:?}", args.first()));
        return 0;
    };
    // Until the input says otherwise, a PreToolUse call might be anything.
    DENY_IF_UNFINISHED.store(event == HookEvent::PreToolUse, Ordering::SeqCst);
    let deadline = deadline();
    let (tx, rx) = std::sync::mpsc::channel();
    let judge = move || {
        let answer = match std::panic::catch_unwind(|| run(event)) {
            Ok(Ok(out)) => out,
            Ok(Err(e)) => {
                log_anywhere(&format!("hall hook {}: {e}", event.name()));
                unfinished(&format!("the hook failed while judging it ({e})"), "hook")
            }
            Err(p) => {
                let what = p
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                log_anywhere(&format!("hall hook {}: panicked: {what}", event.name()));
                unfinished(
                    &format!("the hook failed while judging it ({what})"),
                    "hook",
                )
            }
        };
        let _ = tx.send(answer);
    };
    let spawned = std::thread::Builder::new()
        .name("judge".into())
        .stack_size(STACK)
        .spawn(judge);
    let answer = match spawned {
        Ok(_) => match rx.recv_timeout(deadline) {
            Ok(answer) => answer,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                let why = format!(
                    "the hook ran out of time ({} ms) judging it",
                    deadline.as_millis()
                );
                log_anywhere(&format!("hall hook {}: gave up: {why}", event.name()));
                unfinished(&why, "deadline")
            }
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                unfinished("the hook failed while judging it", "hook")
            }
        },
        Err(e) => {
            log_anywhere(&format!(
                "hall hook {}: no thread to judge on: {e}",
                event.name()
            ));
            unfinished("the hook could not start judging it", "hook")
        }
    };
    if let Some(out) = answer {
        let mut stdout = std::io::stdout().lock();
        let _ = writeln!(stdout, "{out}");
        let _ = stdout.flush();
    }
    // Returning ends the process, a judging thread still at work included.
    0
}

/// [`DEADLINE`], or the shorter one a test asks for.
fn deadline() -> Duration {
    std::env::var(DEADLINE_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(Duration::from_millis)
        .map_or(DEADLINE, |d| d.min(DEADLINE))
}

/// What the hook answers for a call it couldn't finish: a denial, with the reason as
/// Hallmark's error JSON, when the call might do harm; nothing otherwise.
fn unfinished(why: &str, check: &str) -> Option<String> {
    if !DENY_IF_UNFINISHED.load(Ordering::SeqCst) {
        return None;
    }
    let err = HallError::new(
        Code::GateDenied,
        format!(
            "This call is refused because {why}: a call that might push, write where a session may not, or act as a person is never let through unjudged. Try it again; if it keeps happening, split it into smaller calls or name files instead of wide globs."
        ),
    )
    .hint("hall status")
    .hint("hall ask \"…\"")
    .with_check(check);
    let reason = serde_json::to_string(&err.reply()).unwrap_or_else(|_| err.message.clone());
    Some(gates::decision_json("deny", &reason))
}

fn run(event: HookEvent) -> Result<Option<String>, String> {
    let mut raw = Vec::new();
    std::io::stdin()
        .take(MAX_INPUT + 1)
        .read_to_end(&mut raw)
        .map_err(|e| format!("reading stdin: {e}"))?;
    if raw.len() as u64 > MAX_INPUT {
        return Err(format!(
            "its input is larger than {MAX_INPUT} bytes, more than the hook reads"
        ));
    }
    let input: Input = match serde_json::from_slice(&raw) {
        Ok(i) => i,
        // Valid JSON nested deeper than the reader goes could be a real call (a tool's
        // input is the model's to shape): it stays undecided, so it is denied.
        Err(e) if e.to_string().contains("recursion limit") => {
            return Err(format!("its input is nested too deeply to read: {e}"));
        }
        Err(e) => {
            // Not a call Claude Code could send, so not one to judge.
            DENY_IF_UNFINISHED.store(false, Ordering::SeqCst);
            return Err(format!("input is not hook JSON: {e}"));
        }
    };
    if event == HookEvent::PreToolUse {
        let tool = input.tool_name.as_deref().unwrap_or("");
        let harm = tools::may_harm(tool, input.tool_input.as_ref());
        DENY_IF_UNFINISHED.store(harm, Ordering::SeqCst);
    }
    if let Some(ms) = std::env::var(STALL_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
    {
        std::thread::sleep(Duration::from_millis(ms));
    }
    let project = std::env::var_os("CLAUDE_PROJECT_DIR")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from);
    let cwd = call_dir(input.cwd.as_deref(), project.as_deref())?;
    let anchors = anchor::Anchors::find(input.session_id.as_deref(), &cwd, project.as_deref());
    let Some(primary) = anchors.primary() else {
        // Outside every initialized repository, and bound to none: nothing to gate.
        DENY_IF_UNFINISHED.store(false, Ordering::SeqCst);
        return Ok(None);
    };
    set_log_dir(primary.hall.journal.root());
    if std::env::current_dir().is_err() {
        // The process's own directory is gone; the context below reads it.
        let _ = std::env::set_current_dir(&cwd);
    }
    let mut ctx = Ctx::for_hook().map_err(|e| e.message)?;
    ctx.cwd = cwd.clone();
    let mut hooks = anchors.all().into_iter().map(|a| Hook {
        event,
        repo: a.hall.repo.clone(),
        hall: a.hall,
        checkout: a.checkout,
        input: input.clone(),
        cwd: cwd.clone(),
        ctx: ctx.clone(),
    });
    let Some(hook) = hooks.next() else {
        return Ok(None);
    };
    let result = match event {
        HookEvent::SessionStart => {
            anchor::prune();
            context::session_start(&hook)
        }
        HookEvent::UserPromptSubmit => context::user_prompt_submit(&hook),
        HookEvent::PreToolUse => {
            // A session whose settings turn its sandbox off is refused what could do harm.
            if let Some(denied) = confinement::pre_tool_use(&hook) {
                return Ok(Some(denied));
            }
            // Every repository the call is judged for may refuse it.
            if let Some(denied) = gates::gates(&hook).map_err(|e| e.message)? {
                return Ok(Some(denied));
            }
            for other in hooks {
                if let Some(denied) = gates::gates(&other).map_err(|e| e.message)? {
                    return Ok(Some(denied));
                }
            }
            // Only the advisory tool-call policy is left, and it fails open.
            DENY_IF_UNFINISHED.store(false, Ordering::SeqCst);
            tool_policy::pre_tool_use(&hook)
        }
        HookEvent::PostToolUse => record::post_tool_use(&hook),
        HookEvent::PostToolUseFailure => record::post_tool_use_failure(&hook),
        HookEvent::Stop => record::stop(&hook),
        HookEvent::Notification => record::notification(&hook),
    };
    result.map_err(|e| format!("{}: {}", e.code.as_str(), e.message))
}

/// The directory a call runs in. Claude Code reports the session's directory in `cwd`;
/// when that directory is gone (deleted, or never made), Claude Code runs hooks and
/// commands from the directory the session started in, so the call is judged there:
/// the project directory, else the directory Claude Code started this hook in.
fn call_dir(reported: Option<&str>, project: Option<&Path>) -> Result<PathBuf, String> {
    if let Some(c) = reported.filter(|c| !c.is_empty()).map(PathBuf::from)
        && c.is_dir()
    {
        return Ok(c);
    }
    if let Some(p) = project.filter(|p| p.is_dir()) {
        return Ok(p.to_path_buf());
    }
    std::env::current_dir().map_err(|e| format!("the session's directory is gone: {e}"))
}

/// The journal directory of the hook's repository, once known.
static LOG_DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();

/// Logs go to this journal directory from now on (the first one set stays).
fn set_log_dir(dir: &Path) {
    let _ = LOG_DIR.set(dir.to_path_buf());
}

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
        let here = self.worktree_item(&self.checkout).ok().flatten();
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
