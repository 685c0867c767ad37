//! Whether the session's own settings undo its confinement.
//!
//! `hall setup claude` confines every session through Claude Code's *user* settings.
//! Claude Code merges the path lists of its settings scopes, but a single value is the
//! most specific scope's: a project's `.claude/settings.json` or `.claude/settings.local.json`
//! with `sandbox.enabled: false` runs the session unsandboxed (measured on 2.1.332), and
//! so does a session started with `--setting-sources` that leaves the user's settings
//! out, or with a `--settings` of its own that turns the sandbox off. Neither the
//! operating system nor the user settings can stop that, so the hooks look, on every
//! tool call, at what the session was started with: the project's two files and the
//! `claude` process's own command line, read from the process table (the hook's
//! ancestor), never from anything the agent's commands can set. When they loosen the
//! sandbox, Bash and the file-writing tools are denied, with the fix named.
//!
//! A session `hall claude` started is confined by its `--settings`, which no project
//! file can loosen; it is recognized by `HALL_SESSION` naming a settings file under the
//! journal (which no session can write) that is also the process's `--settings`.
//! `hall claude --unconfined` and `[sessions] confine = false` are the person's own
//! choice, and change nothing here. `--dangerously-skip-permissions` (or the
//! `bypassPermissions` mode) is not a loosening: the sandbox and the deny rules hold
//! in it (measured).

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::Hook;
use crate::error::{Code, HallError};

/// How far up the process table the hook looks for its `claude`.
const DEPTH: usize = 6;

/// What undoes the confinement, and how to fix it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Loosened {
    pub why: String,
    pub fix: Vec<String>,
}

/// How the session is confined, as far as its start says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Confinement {
    /// By `hall claude`'s settings (or, `unconfined`, deliberately not).
    Hallmark { unconfined: bool },
    /// By the user settings `hall setup claude` wrote.
    UserSettings,
    /// The user settings don't confine sessions (setup not run, or opted out).
    None,
    /// Something the session was started with undoes it.
    Loosened(Loosened),
}

/// The `claude` process this hook runs under, with its command line.
fn claude_args() -> Option<Vec<String>> {
    let ancestors =
        crate::platform::ancestors(DEPTH, std::time::Duration::from_millis(500)).ok()?;
    ancestors.into_iter().find_map(|a| {
        let agent = crate::hall::person::not_a_persons(&a);
        matches!(
            agent,
            Some(crate::hall::person::NotAPerson::Agent { ref program, .. })
                if program == "claude" || program == "@anthropic-ai/claude-code"
        )
        .then_some(a.args)
    })
}

/// The value of `--flag` (`--flag value` or `--flag=value`) in `args`, the last one
/// given.
fn flag(args: &[String], name: &str) -> Option<String> {
    let mut found = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == name {
            found = it.next().cloned();
        } else if let Some(v) = a.strip_prefix(&format!("{name}=")) {
            found = Some(v.to_string());
        }
    }
    found
}

/// What in a settings object turns the sandbox or the hooks off.
pub fn loosening(settings: &Value) -> Option<String> {
    let sandbox = &settings["sandbox"];
    if sandbox["enabled"] == Value::Bool(false) {
        return Some("`sandbox.enabled: false`".into());
    }
    if sandbox["allowUnsandboxedCommands"] == Value::Bool(true) {
        return Some("`sandbox.allowUnsandboxedCommands: true`".into());
    }
    if settings["disableAllHooks"] == Value::Bool(true) {
        return Some("`disableAllHooks: true`".into());
    }
    None
}

/// A `--settings` value: a JSON object given inline, or a file.
fn settings_value(given: &str) -> Option<Value> {
    let text = if given.trim_start().starts_with('{') {
        given.to_string()
    } else {
        std::fs::read_to_string(given).ok()?
    };
    serde_json::from_str(&text).ok()
}

/// Whether `path` is one of the session settings files `hall claude` writes (under the
/// journal's `sessions/`), and whether it leaves the session unconfined.
fn hallmark_session(hook: &Hook, path: &Path) -> Option<bool> {
    let dir = hook.hall.journal.root().join("sessions");
    let real = crate::platform::canonicalize(path).ok()?;
    let dir = crate::platform::canonicalize(&dir).ok()?;
    if real.parent() != Some(dir.as_path()) {
        return None;
    }
    let name = real.file_name()?.to_string_lossy().to_string();
    if name.starts_with("confine-") {
        Some(false)
    } else if name.starts_with("unconfined-") {
        Some(true)
    } else {
        None
    }
}

/// The project directories whose `.claude/` Claude Code reads: where the session
/// started (`CLAUDE_PROJECT_DIR`, which Claude Code gives its hooks), and the checkout
/// the tool call is in.
fn project_dirs(hook: &Hook) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(d) = std::env::var_os("CLAUDE_PROJECT_DIR").filter(|d| !d.is_empty()) {
        dirs.push(PathBuf::from(d));
    }
    if let Ok(repo) = crate::git::Repo::discover(&hook.cwd) {
        dirs.push(repo.toplevel);
    }
    dirs.dedup();
    dirs
}

/// How this session is confined (see the module's comment).
pub fn confinement(hook: &Hook) -> Confinement {
    let args = claude_args();
    let session = std::env::var_os(crate::commands::SESSION_ENV).map(PathBuf::from);
    let given = args.as_deref().and_then(|a| flag(a, "--settings"));
    if let Some(file) = &session {
        // `hall claude`'s own: the file it names is the one the process was given.
        let matches = match &given {
            Some(g) => Path::new(g) == file.as_path(),
            None => args.is_none(),
        };
        if matches && let Some(unconfined) = hallmark_session(hook, file) {
            return Confinement::Hallmark { unconfined };
        }
    }
    if !crate::commands::claude_confine_by_default() {
        return Confinement::None;
    }
    let fix = |file: Option<&Path>| {
        let mut fix = vec!["hall claude".to_string()];
        if let Some(f) = file {
            fix.push(format!(
                "remove {} (and from the base branch, if it is committed there)",
                f.display()
            ));
        }
        fix
    };
    if let Some(args) = &args {
        if let Some(sources) = flag(args, "--setting-sources")
            && !sources.split(',').any(|s| s.trim() == "user")
        {
            return Confinement::Loosened(Loosened {
                why: format!(
                    "it was started with `--setting-sources {sources}`, which leaves out the user settings that confine it"
                ),
                fix: fix(None),
            });
        }
        if let Some(given) = &given
            && let Some(what) = settings_value(given).as_ref().and_then(loosening)
        {
            return Confinement::Loosened(Loosened {
                why: format!("it was started with `--settings` that set {what}"),
                fix: fix(None),
            });
        }
    }
    for dir in project_dirs(hook) {
        for name in ["settings.json", "settings.local.json"] {
            let file = dir.join(".claude").join(name);
            let Some(what) = std::fs::read_to_string(&file)
                .ok()
                .and_then(|t| serde_json::from_str::<Value>(&t).ok())
                .as_ref()
                .and_then(loosening)
            else {
                continue;
            };
            return Confinement::Loosened(Loosened {
                why: format!("{} sets {what}", file.display()),
                fix: fix(Some(&file)),
            });
        }
    }
    if crate::hall::claude_settings::confining() {
        Confinement::UserSettings
    } else {
        Confinement::None
    }
}

/// PreToolUse: Bash and the file-writing tools, denied in a session whose settings undo
/// its confinement.
pub fn pre_tool_use(hook: &Hook) -> Option<String> {
    let tool = hook.input.tool_name.as_deref().unwrap_or("");
    if !matches!(
        tool,
        "Bash" | "Write" | "Edit" | "MultiEdit" | "NotebookEdit"
    ) {
        return None;
    }
    let Confinement::Loosened(l) = confinement(hook) else {
        return None;
    };
    let mut err = HallError::new(
        Code::GateDenied,
        format!(
            "this session is meant to run in Claude Code's sandbox, and {}: Bash and file writes are refused here. Tell the person; they can start the session with `hall claude`",
            l.why
        ),
    );
    for f in l.fix {
        err = err.hint(f);
    }
    let what = hook
        .input
        .tool_input
        .as_ref()
        .map(|v| v.to_string())
        .unwrap_or_default();
    Some(super::gates::deny_hard(hook, "confinement", &what, err))
}

/// SessionStart: what the session is told about its confinement, if anything; a
/// session confined by the user settings gets its repository ready for the sandbox.
pub fn session_start(hook: &Hook) -> Option<String> {
    match confinement(hook) {
        Confinement::Hallmark { .. } => None,
        Confinement::UserSettings => {
            let scope = crate::hall::confine::Scope {
                repo: &hook.hall.repo,
                checkout: &hook.cwd,
                base: &hook.hall.config.base,
                domains: &hook.hall.config.sandbox.domains,
            };
            if let Err(e) = crate::hall::confine::prepare(&scope) {
                super::log_anywhere(&format!("SessionStart: the repository isn't ready for the sandbox: {e}"));
            }
            None
        }
        Confinement::None => crate::commands::claude_confine_by_default().then(|| {
            "This session runs without Claude Code's sandbox: it was not started with `hall claude`, and \
             Claude Code's user settings don't confine sessions. Tell the person, who can restart it with \
             `hall claude` or confine every session with `hall setup claude`."
                .to_string()
        }),
        Confinement::Loosened(l) => Some(format!(
            "This session is meant to run in Claude Code's sandbox, and {}: Bash and file writes will be \
             refused. Tell the person, who can restart it with `hall claude` (or {}).",
            l.why,
            l.fix.last().cloned().unwrap_or_default()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn what_loosens_the_sandbox_and_what_does_not() {
        for loose in [
            json!({"sandbox": {"enabled": false}}),
            json!({"sandbox": {"allowUnsandboxedCommands": true}}),
            json!({"disableAllHooks": true}),
        ] {
            assert!(loosening(&loose).is_some(), "{loose}");
        }
        for fine in [
            json!({}),
            json!({"sandbox": {"enabled": true, "network": {"allowedDomains": ["x.org"]}}}),
            json!({"permissions": {"allow": ["Bash(npm test)"]}, "env": {"A": "1"}}),
            json!({"disableAllHooks": false}),
        ] {
            assert_eq!(loosening(&fine), None, "{fine}");
        }
    }

    #[test]
    fn a_flag_is_read_in_both_spellings_and_the_last_wins() {
        let args: Vec<String> = [
            "claude",
            "--settings",
            "/a.json",
            "-p",
            "--settings=/b.json",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(flag(&args, "--settings").as_deref(), Some("/b.json"));
        assert_eq!(flag(&args, "--setting-sources"), None);
        assert_eq!(
            settings_value(r#"{"sandbox": {"enabled": false}}"#)
                .as_ref()
                .and_then(loosening)
                .as_deref(),
            Some("`sandbox.enabled: false`")
        );
    }
}
