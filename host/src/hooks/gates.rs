//! PreToolUse: the gates. The file tools are checked against the protected paths and
//! the edit gate; reads against the secrets; Bash commands through the shell analysis
//! ([`crate::gate`]) and then judged against this repository and this session
//! ([`HookWorld`]); any other tool by what its input says ([`super::tools`]).
//!
//! Hooks fail open on their own errors, but a gate fails closed on what it can't read:
//! anything that may push, write a note or write where a session may not is denied when
//! the answer needed to allow it can't be had (an unreadable journal, a computed path,
//! a commit that can't be resolved).
//!
//! This module holds the gates themselves and the answers they give; what they ask of
//! the repository and the session is answered in `world`.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::Hook;
use super::glob;
use super::protect::{absolute, resolve};
use super::tools::{self, ToolKind};
use crate::config::{CaptureMode, PushGuard};
use crate::error::{Code, HallError, Result};
use crate::gate::{self, Access, Effect, Gate, GuardMode};
use crate::git::{self, Repo};
use crate::item::EventKind;

mod world;

use world::HookContext;
pub use world::HookWorld;

/// The push, note, edit and protected-path gates: `Some` answer when one refuses.
/// Every tool is judged: the ones the hook knows by their fields, any other by what its
/// input says ([`other_tool_gate`]).
pub(super) fn gates(hook: &Hook) -> Result<Option<String>> {
    let tool = hook.input.tool_name.as_deref().unwrap_or("");
    let input = hook.input.tool_input.as_ref();
    let field = |k: &str| {
        input
            .and_then(|i| i.get(k))
            .and_then(|v| v.as_str())
            .map(str::to_string)
    };
    match tools::kind(tool) {
        ToolKind::Write => match field("file_path").or_else(|| field("notebook_path")) {
            Some(path) => edit_gate(hook, tool, &path),
            // A write tool without the field it names its file in: read it as any
            // other tool.
            None => other_tool_gate(hook, tool, input),
        },
        ToolKind::Read => {
            let Some(path) = field("file_path")
                .or_else(|| field("path"))
                .or_else(|| field("notebook_path"))
            else {
                return Ok(None);
            };
            read_gate(hook, tool, &path)
        }
        ToolKind::Bash => {
            let Some(command) = field("command") else {
                return Ok(None);
            };
            bash_gate(hook, &command)
        }
        ToolKind::Inert => Ok(None),
        ToolKind::Other => other_tool_gate(hook, tool, input),
    }
}

/// A tool the hook doesn't know (an MCP server's, `PowerShell`, `Monitor`…): a name
/// that says it pushes is a push it can't check; shell text it is given is judged as a
/// Bash command (PowerShell also for what the shell reading can't follow, in strict
/// mode); and every string in its input is a path it may write, refused when it lands
/// in a protected place. See [`super::tools`].
fn other_tool_gate(hook: &Hook, tool: &str, input: Option<&Value>) -> Result<Option<String>> {
    let refuse = |gate: Gate, why: String| {
        let err = HallError::new(
            Code::GateDenied,
            sentence(&format!("`{tool}` is refused: {why}")),
        )
        .hint("hall status")
        .hint("hall ask \"…\"")
        .with_check(gate.name());
        deny_hard(hook, gate.name(), tool, err)
    };
    if let Some(why) = tools::pushes_by_name(tool) {
        return Ok(Some(refuse(
            Gate::Push,
            format!(
                "{why}, and what it sends can't be checked for a hallmark; Hallmark ships approved work itself"
            ),
        )));
    }
    let Some(input) = input else {
        return Ok(None);
    };
    let strict = hook.hall.config.capture.push_guard == PushGuard::Strict;
    let powershell = tools::is_powershell(tool);
    let command = tools::shell_text(input);
    if let Some(command) = &command {
        if let Some(denied) = bash_gate(hook, command)? {
            return Ok(Some(denied));
        }
        if powershell
            && strict
            && let Some(why) = tools::powershell_hidden(command)
        {
            return Ok(Some(refuse(
                Gate::Unreadable,
                format!("its PowerShell can't be followed: {why}"),
            )));
        }
    }
    let strings = match tools::strings(input) {
        Ok(s) => s,
        Err(why) => {
            return Ok(Some(refuse(
                Gate::Unreadable,
                format!("{why}, so the paths it may write can't all be checked"),
            )));
        }
    };
    let words: Vec<&str> = match (&command, powershell) {
        (Some(c), true) => tools::powershell_words(c).collect(),
        _ => Vec::new(),
    };
    let world = HookWorld::new(hook);
    for s in strings.into_iter().chain(words) {
        for path in tools::as_paths(s) {
            if let Some(why) = world.protection().check(&hook.cwd, path, Access::Write) {
                return Ok(Some(refuse(
                    Gate::Protect,
                    format!(
                        "it is given {path}, and a tool the hook doesn't know is judged as writing every path it is given: {why}"
                    ),
                )));
            }
        }
    }
    Ok(None)
}

/// Whether `rel` (relative to the repository root, `/`-separated) is a `[capture] free`
/// path: `dir/` matches everything below it, a pattern without `/` matches file names,
/// any other pattern the whole path; `*` and `?` are wildcards.
pub fn is_free(rel: &str, free: &[String]) -> bool {
    free.iter().any(|pattern| {
        if let Some(dir) = pattern.strip_suffix('/') {
            rel == dir || rel.starts_with(&format!("{dir}/"))
        } else if !pattern.contains('/') {
            let name = rel.rsplit('/').next().unwrap_or(rel);
            glob::segments_match(pattern, name)
        } else {
            // `*` and `?` stay within one path segment, as in .gitignore.
            glob::segments_match(pattern, rel)
        }
    })
}

/// The nearest existing directory at or above `path` (a new file's folder may not exist).
fn existing_dir(path: &Path) -> Option<PathBuf> {
    path.ancestors()
        .skip(1)
        .find(|a| a.is_dir())
        .map(Path::to_path_buf)
}

fn relative(path: &Path, root: &Path) -> Option<String> {
    let canon_root = resolve(root);
    let full = resolve(path);
    let rel = full.strip_prefix(&canon_root).ok()?;
    Some(rel.to_string_lossy().replace('\\', "/"))
}

/// Read, Grep and Glob: only the secrets are refused.
fn read_gate(hook: &Hook, tool: &str, raw: &str) -> Result<Option<String>> {
    let world = HookWorld::new(hook);
    let Some(why) = world.protection().check(&hook.cwd, raw, Access::Read) else {
        return Ok(None);
    };
    let err = HallError::new(
        Code::GateDenied,
        format!("{tool} of {raw} is refused: {why}."),
    )
    .hint("hall status")
    .with_check(Gate::Protect.name());
    Ok(Some(deny(hook, Gate::Protect.name(), raw, err)))
}

fn edit_gate(hook: &Hook, tool: &str, raw: &str) -> Result<Option<String>> {
    let world = HookWorld::new(hook);
    // Protected paths are refused whatever `[capture] mode` says: the mode chooses how
    // work is captured, never whether git's internals can be written.
    if let Some(why) = world.protection().check(&hook.cwd, raw, Access::Write) {
        let err = HallError::new(
            Code::GateDenied,
            format!("{tool} of {raw} is refused: {why}."),
        )
        .hint("hall status")
        .hint("hall ask \"…\"")
        .with_check(Gate::Protect.name());
        return Ok(Some(deny_hard(hook, Gate::Protect.name(), raw, err)));
    }
    if hook.hall.config.capture.mode == CaptureMode::Off {
        return Ok(None);
    }
    let path = absolute(&hook.cwd, raw);
    let Some(dir) = existing_dir(&path) else {
        return Ok(None);
    };
    // Files outside this repository are never gated by the edit gate.
    let Ok(repo) = Repo::discover(&dir) else {
        return Ok(None);
    };
    if resolve(&repo.common_dir) != resolve(&hook.repo.common_dir) {
        return Ok(None);
    }
    let Some(rel) = relative(&path, &repo.toplevel) else {
        return Ok(None);
    };
    if is_free(&rel, &hook.hall.config.capture.free) {
        return Ok(None);
    }
    // Whether the file is in an item's worktree can't be told from an unreadable
    // journal; the edit gate then stands down (decision 0003). The protected paths were
    // checked above, whatever the journal says.
    match hook.worktree_item(&dir) {
        Ok(Some(_)) => return Ok(None),
        Ok(None) => {}
        Err(e) => {
            super::log_anywhere(&format!(
                "PreToolUse: {}; the edit gate lets {rel} through",
                e.message
            ));
            return Ok(None);
        }
    }
    let err = HallError::new(
        Code::GateDenied,
        format!(
            "{tool} of {rel} is outside an item's worktree. In this repository, work happens in items: start one \
             (or adopt this branch), then edit in the worktree it prints."
        ),
    )
    .hint("hall new --title \"…\"")
    .hint("hall adopt")
    .hint("hall status")
    .with_check("edit");
    Ok(Some(deny(hook, "edit", raw, err)))
}

fn bash_gate(hook: &Hook, command: &str) -> Result<Option<String>> {
    let actor = std::env::var("HALL_ACTOR").ok();
    let config = &hook.hall.config;
    let ctx = HookContext {
        cwd: &hook.cwd,
        ship: &config.ship,
        allow: &config.capture.push_allow,
    };
    let analysis = gate::analyze(command, &ctx);
    if analysis.findings.is_empty() && analysis.parse_error.is_none() {
        return Ok(None);
    }
    let mode = match config.capture.push_guard {
        PushGuard::Strict => GuardMode::Strict,
        PushGuard::Parse => GuardMode::Parse,
    };
    // Whether the session's checkout is an item's worktree; an unreadable journal
    // counts as "yes", which only relaxes the commit gate (nothing is pushed by a
    // commit).
    let in_item = match hook.worktree_item(&hook.checkout) {
        Ok(item) => item.is_some(),
        Err(e) => {
            super::log_anywhere(&format!(
                "PreToolUse: {}; judging as inside an item's worktree",
                e.message
            ));
            true
        }
    };
    let session = gate::Session {
        mode,
        actor: actor.as_deref(),
        in_item,
    };
    let world = HookWorld::new(hook);
    let denials = gate::judge(&analysis.findings, session, &world);
    let Some(first) = denials.first() else {
        return Ok(None);
    };
    let item = hook.worktree_item(&hook.checkout).ok().flatten();
    let reason = sentence(&first.reason);
    let err = match first.gate {
        Gate::Hall => HallError::new(
            Code::GateDenied,
            format!("{reason} A script or a person decides what happens to the item; a session says what it did and asks."),
        )
        .hint("hall findings")
        .hint("hall propose-ready --summary \"…\"")
        .hint("hall ask \"…\""),
        Gate::Note => HallError::new(
            Code::GateDenied,
            format!("{reason} Only Hallmark strikes hallmarks."),
        )
        .hint("hall status")
        .hint("hall log --kind hallmarked"),
        Gate::Push => {
            let e = HallError::new(
                Code::GateDenied,
                format!("{reason} Hallmark ships approved work itself."),
            );
            match item {
                Some(id) => e
                    .hint(format!("hall propose-ready {id} --summary \"…\""))
                    .hint(format!("hall status {id}")),
                None => e.hint("hall status").hint("hall new --title \"…\""),
            }
        }
        Gate::Commit => HallError::new(
            Code::GateDenied,
            format!("{reason} Commits happen in an item's worktree (or touch only [capture] free paths)."),
        )
        .hint("hall new --title \"…\"")
        .hint("hall adopt"),
        Gate::Protect | Gate::Repo | Gate::Config => HallError::new(Code::GateDenied, reason)
            .hint("hall status")
            .hint("hall ask \"…\""),
        Gate::Unreadable => HallError::new(Code::GateDenied, reason)
            .hint("hall status")
            .hint("hall ask \"…\""),
    };
    Ok(Some(deny_hard(
        hook,
        first.gate.name(),
        command,
        err.with_check(first.gate.name()),
    )))
}

fn sentence(s: &str) -> String {
    let t = s.trim_end_matches('.');
    let mut c = t.chars();
    match c.next() {
        Some(f) => format!("{}{}.", f.to_uppercase(), c.as_str()),
        None => String::new(),
    }
}

/// A commit outside a worktree passes when every path it commits is free.
fn commit_is_free(hook: &Hook, effect: &Effect) -> bool {
    let Effect::Commit {
        pathspecs,
        all,
        paths_unknown,
        place,
    } = effect
    else {
        return false;
    };
    if *paths_unknown || place.dynamic || place.git_dir.is_some() {
        return false;
    }
    let free = &hook.hall.config.capture.free;
    let cwd = match &place.dir {
        Some(d) => absolute(&hook.cwd, d),
        None => hook.cwd.clone(),
    };
    let mut paths: Vec<String> = Vec::new();
    if !pathspecs.is_empty() && !*all {
        let Ok(repo) = Repo::discover(&cwd) else {
            return false;
        };
        for spec in pathspecs {
            match relative(&cwd.join(spec), &repo.toplevel) {
                Some(rel) => paths.push(rel),
                None => return false,
            }
        }
    } else {
        let Ok(staged) = git::changed_paths(&cwd, false) else {
            return false;
        };
        paths.extend(staged);
        if *all {
            let Ok(changed) = git::changed_paths(&cwd, true) else {
                return false;
            };
            paths.extend(changed);
        }
    }
    !paths.is_empty() && paths.iter().all(|p| is_free(p, free))
}

/// The PreToolUse answer: `deny` (or `ask` for the edit gate in `[capture] mode = "ask"`)
/// with Hallmark's error JSON as the reason, and a `gate_denied` record when the journal
/// can take one. Recording is best effort: a denial is never lost to a journal error.
fn deny(hook: &Hook, gate: &str, what: &str, err: HallError) -> String {
    let decision = if gate == "edit" && hook.hall.config.capture.mode == CaptureMode::Ask {
        "ask"
    } else {
        "deny"
    };
    answer(hook, gate, what, err, decision)
}

/// A denial that `[capture] mode = "ask"` doesn't soften.
pub(super) fn deny_hard(hook: &Hook, gate: &str, what: &str, err: HallError) -> String {
    answer(hook, gate, what, err, "deny")
}

fn answer(hook: &Hook, gate: &str, what: &str, err: HallError, decision: &str) -> String {
    let reason = serde_json::to_string(&err.reply()).unwrap_or_else(|_| err.message.clone());
    if hook.hall.journal.exists() {
        let item = hook.worktree_item(&hook.checkout).ok().flatten();
        let mut event = hook.ctx.event(
            item,
            EventKind::GateDenied {
                gate: gate.to_string(),
                command: what.chars().take(2000).collect(),
                reason: err.message.clone(),
            },
        );
        event.actor = "hook".into();
        if let Err(e) = hook.hall.journal.append_repo(&[event]) {
            super::log_anywhere(&format!("PreToolUse: could not record a denial: {e}"));
        }
    }
    decision_json(decision, &reason)
}

/// A PreToolUse answer that denies (`deny`) or asks (`ask`), with its reason.
pub(super) fn decision_json(decision: &str, reason: &str) -> String {
    json!({
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": decision,
            "permissionDecisionReason": reason,
        }
    })
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::is_free;

    #[test]
    fn free_paths() {
        let free = vec![
            "docs/".to_string(),
            "*.md".to_string(),
            "notes/*.txt".to_string(),
        ];
        for p in [
            "docs/a.rs",
            "docs/x/y.png",
            "README.md",
            "src/deep/NOTES.md",
            "notes/a.txt",
        ] {
            assert!(is_free(p, &free), "{p}");
        }
        for p in [
            "src/main.rs",
            "docsx/a.rs",
            "notes/deep/a.txt",
            "README.mdx",
        ] {
            assert!(!is_free(p, &free), "{p}");
        }
    }
}
