//! PreToolUse: the edit gate, the push gate and the note gate.

use std::path::{Path, PathBuf};

use serde_json::json;

use super::Hook;
use crate::config::{CaptureMode, PushGuard};
use crate::error::{Code, HallError, Result};
use crate::gate::{self, Effect, GateContext, GuardMode};
use crate::git::{self, Repo};
use crate::item::EventKind;

/// The most of a script the strict guard reads to look for push or release.
const MAX_SCRIPT: u64 = 256 * 1024;

/// How the command analysis learns about this repository: git aliases (asked of git
/// itself, only when a subcommand is not one of git's own), scripts, the ship command.
struct HookContext<'a> {
    cwd: &'a Path,
    ship: &'a str,
    allow: &'a [String],
}

impl GateContext for HookContext<'_> {
    fn git_alias(&self, name: &str) -> Option<String> {
        git::run(self.cwd, &["config", "--get", &format!("alias.{name}")])
            .ok()
            .filter(|v| !v.is_empty())
    }
    fn read_script(&self, path: &str) -> Option<String> {
        use std::io::Read;
        let p = self.cwd.join(path);
        let mut text = String::new();
        std::fs::File::open(p)
            .ok()?
            .take(MAX_SCRIPT)
            .read_to_string(&mut text)
            .ok()?;
        Some(text)
    }
    fn ship_command(&self) -> Option<&str> {
        Some(self.ship).filter(|s| !s.trim().is_empty())
    }
    fn push_allow(&self) -> &[String] {
        self.allow
    }
    fn env_var(&self, name: &str) -> Option<String> {
        std::env::var(name).ok()
    }
}

pub fn pre_tool_use(hook: &Hook) -> Result<Option<String>> {
    let tool = hook.input.tool_name.as_deref().unwrap_or("");
    let input = hook.input.tool_input.as_ref();
    let field = |k: &str| {
        input
            .and_then(|i| i.get(k))
            .and_then(|v| v.as_str())
            .map(str::to_string)
    };
    match tool {
        "Edit" | "Write" | "MultiEdit" | "NotebookEdit" => {
            let Some(path) = field("file_path").or_else(|| field("notebook_path")) else {
                return Ok(None);
            };
            edit_gate(hook, tool, &path)
        }
        "Bash" => {
            let Some(command) = field("command") else {
                return Ok(None);
            };
            bash_gate(hook, &command)
        }
        _ => Ok(None),
    }
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
            glob(pattern.as_bytes(), name.as_bytes())
        } else {
            glob(pattern.as_bytes(), rel.as_bytes())
        }
    })
}

fn glob(p: &[u8], s: &[u8]) -> bool {
    match (p.first(), s.first()) {
        (None, None) => true,
        // `*` and `?` stay within one path segment, as in .gitignore.
        (Some(b'*'), _) => {
            glob(&p[1..], s) || (s.first().is_some_and(|&c| c != b'/') && glob(p, &s[1..]))
        }
        (Some(b'?'), Some(&c)) if c != b'/' => glob(&p[1..], &s[1..]),
        (Some(a), Some(b)) if a == b => glob(&p[1..], &s[1..]),
        _ => false,
    }
}

/// The nearest existing directory at or above `path` (a new file's folder may not exist).
fn existing_dir(path: &Path) -> Option<PathBuf> {
    path.ancestors()
        .skip(1)
        .find(|a| a.is_dir())
        .map(Path::to_path_buf)
}

fn relative(path: &Path, root: &Path) -> Option<String> {
    let canon_root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let dir = existing_dir(path)?.canonicalize().ok()?;
    let rest = path.strip_prefix(existing_dir(path)?).ok()?;
    let full = dir.join(rest);
    let rel = full.strip_prefix(&canon_root).ok()?;
    Some(rel.to_string_lossy().replace('\\', "/"))
}

fn edit_gate(hook: &Hook, tool: &str, raw: &str) -> Result<Option<String>> {
    if hook.hall.config.capture.mode == CaptureMode::Off {
        return Ok(None);
    }
    let path = if Path::new(raw).is_absolute() {
        PathBuf::from(raw)
    } else {
        hook.cwd.join(raw)
    };
    let Some(dir) = existing_dir(&path) else {
        return Ok(None);
    };
    // Files outside this repository are never gated.
    let Ok(repo) = Repo::discover(&dir) else {
        return Ok(None);
    };
    if repo.common_dir != hook.repo.common_dir {
        return Ok(None);
    }
    let Some(rel) = relative(&path, &repo.toplevel) else {
        return Ok(None);
    };
    if rel.starts_with(".git/") || rel == ".git" {
        return Ok(None);
    }
    if is_free(&rel, &hook.hall.config.capture.free) || hook.worktree_item(&dir)?.is_some() {
        return Ok(None);
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
    .hint("hall status");
    Ok(Some(deny(hook, "edit", raw, err)?))
}

/// The `hall` subcommands a command line runs, found by word: `hall` (or a path ending
/// in it) followed by its verb, after any flags. A quoted mention counts too, which only
/// errs on the side of refusing.
pub fn hall_verbs(command: &str) -> Vec<String> {
    let words: Vec<&str> = command
        .split(|c: char| c.is_whitespace() || ";&|()`$\"'{}<>".contains(c))
        .filter(|w| !w.is_empty())
        .collect();
    let mut verbs = Vec::new();
    for (i, w) in words.iter().enumerate() {
        let base = w.rsplit(['/', '\\']).next().unwrap_or(w);
        if base != "hall" && base != "hall.exe" {
            continue;
        }
        if let Some(v) = words[i + 1..].iter().find(|w| !w.starts_with('-')) {
            verbs.push(v.to_string());
        }
    }
    verbs
}

/// Verbs an agent may never run: a verdict is a person's or the loop's; the fixer also
/// may not decide the item's fate.
fn refused_verb(verbs: &[String], actor: Option<&str>) -> Option<String> {
    verbs
        .iter()
        .find(|v| {
            v.as_str() == "verdict"
                || (actor == Some("fixer") && matches!(v.as_str(), "ready" | "retry" | "drop"))
        })
        .cloned()
}

fn bash_gate(hook: &Hook, command: &str) -> Result<Option<String>> {
    let actor_env = std::env::var("HALL_ACTOR").ok();
    if let Some(verb) = refused_verb(&hall_verbs(command), actor_env.as_deref()) {
        let who = if actor_env.as_deref() == Some("fixer") {
            "the fixer"
        } else {
            "an agent"
        };
        let err = HallError::new(
            Code::GateDenied,
            format!("`hall {verb}` is refused to {who}: a script or a person decides what happens to the item."),
        )
        .hint("hall findings")
        .hint("hall fixed <ids>");
        return Ok(Some(deny(hook, "hall", command, err)?));
    }
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
    // The actor comes from the hook's own environment, never from the command text.
    let actor = std::env::var("HALL_ACTOR").ok();
    let decision = match hook.worktree_item(&hook.cwd) {
        Ok(item) => gate::decide(&analysis, mode, item.is_some(), actor.as_deref()),
        Err(e) => {
            // Can't tell whether this is an item's worktree (an unreadable journal): fail
            // open on everything that depends on it, but a definite push or note write
            // still needs its hallmark or its actor.
            super::log_anywhere(&format!(
                "PreToolUse: {}; gating only definite pushes and note writes",
                e.message
            ));
            let mut d = gate::decide(&analysis, mode, true, actor.as_deref());
            d.push = d
                .push
                .filter(|t| !matches!(t.finding.effect, Effect::Unfollowable { .. }));
            d.commits.clear();
            d
        }
    };
    if let Some(t) = &decision.note {
        let err = HallError::new(
            Code::GateDenied,
            format!("{} Only Hallmark strikes hallmarks.", sentence(&t.reason)),
        )
        .hint("hall status")
        .hint("hall log --kind hallmarked");
        return Ok(Some(deny(hook, "note", command, err)?));
    }
    if let Some(t) = &decision.push {
        match crate::hallmark::verify(&hook.hall.journal, &hook.cwd) {
            Ok(_) => {}
            Err(why) => {
                let item = hook.worktree_item(&hook.cwd)?;
                let mut err = HallError::new(
                    Code::GateDenied,
                    format!(
                        "{} It is refused because {why}. Hallmark ships approved work itself.",
                        sentence(&t.reason)
                    ),
                );
                match item {
                    Some(id) => {
                        err = err
                            .hint(format!("hall propose-ready {id} --summary \"…\""))
                            .hint(format!("hall status {id}"))
                    }
                    None => err = err.hint("hall status").hint("hall new --title \"…\""),
                }
                return Ok(Some(deny(hook, "push", command, err)?));
            }
        }
    }
    for t in &decision.commits {
        if commit_is_free(hook, &t.finding.effect) {
            continue;
        }
        let err = HallError::new(
            Code::GateDenied,
            format!(
                "{} Commits happen in an item's worktree (or touch only [capture] free paths).",
                sentence(&t.reason)
            ),
        )
        .hint("hall new --title \"…\"")
        .hint("hall adopt");
        return Ok(Some(deny(hook, "commit", command, err)?));
    }
    Ok(None)
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
        dir,
    } = effect
    else {
        return false;
    };
    if *paths_unknown {
        return false;
    }
    let free = &hook.hall.config.capture.free;
    let cwd = match dir {
        Some(d) if Path::new(d).is_absolute() => PathBuf::from(d),
        Some(d) => hook.cwd.join(d),
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
        let Ok(staged) = git::run(&cwd, &["diff", "--cached", "--name-only"]) else {
            return false;
        };
        paths.extend(staged.lines().map(str::to_string));
        if *all {
            let Ok(changed) = git::run(&cwd, &["diff", "--name-only"]) else {
                return false;
            };
            paths.extend(changed.lines().map(str::to_string));
        }
    }
    !paths.is_empty() && paths.iter().all(|p| is_free(p, free))
}

/// The PreToolUse answer: `deny` (or `ask` for the edit gate in `[capture] mode = "ask"`)
/// with Hallmark's error JSON as the reason, and a `gate_denied` record.
fn deny(hook: &Hook, gate: &str, what: &str, err: HallError) -> Result<String> {
    let reason = serde_json::to_string(&err.reply()).unwrap_or_else(|_| err.message.clone());
    let decision = if gate == "edit" && hook.hall.config.capture.mode == CaptureMode::Ask {
        "ask"
    } else {
        "deny"
    };
    let item = hook.worktree_item(&hook.cwd).ok().flatten();
    let mut event = hook.ctx.event(
        item,
        EventKind::GateDenied {
            gate: gate.to_string(),
            command: what.chars().take(2000).collect(),
            reason: err.message.clone(),
        },
    );
    event.actor = "hook".into();
    hook.hall.journal.append_repo(&[event])?;
    Ok(json!({
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": decision,
            "permissionDecisionReason": reason,
        }
    })
    .to_string())
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
