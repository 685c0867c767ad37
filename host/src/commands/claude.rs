//! `hall claude [ID] [-- ARGS]`: starts Claude Code in an item's worktree, confined.
//!
//! The settings come from [`crate::hall::confine`] and are handed to Claude Code with
//! `--settings`, the one place (besides managed settings) where its sandbox can't be
//! loosened by a project or local settings file. `HALL_SESSION` in the session's
//! environment names the settings file, so the hooks can tell a confined session from
//! one started with plain `claude`. `--unconfined` (or `[sessions] confine = false` in
//! the user config) is the documented opt-out: the hooks still gate every tool call.
//! Since every session is confined by the user settings `hall setup claude` writes, an
//! unconfined session is given `--settings` too, turning the sandbox off for it alone.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::{Ctx, Reply};
use crate::cli::ClaudeArgs;
use crate::error::{Code, HallError, IoContext, Result};
use crate::hall::confine::{self, Scope};

/// The environment variable that marks a confined session (its value is the settings
/// file), read by the SessionStart hook.
pub const SESSION_ENV: &str = "HALL_SESSION";

#[derive(Serialize, schemars::JsonSchema)]
pub struct ClaudeReply {
    /// The checkout the session ran in.
    pub dir: String,
    /// Whether it ran in Claude Code's sandbox.
    pub confined: bool,
    /// The settings file it was started with (the confinement, or turning it off).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub settings: Option<String>,
    /// `claude`'s exit code.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit: Option<i32>,
    pub next: Vec<String>,
}

/// Whether the user wants sessions confined (`[sessions] confine`, default yes).
pub fn confine_by_default() -> bool {
    let Some(dir) = crate::platform::config_dir() else {
        return true;
    };
    let Ok(text) = std::fs::read_to_string(dir.join("config.toml")) else {
        return true;
    };
    text.parse::<toml::Table>()
        .ok()
        .and_then(|t| {
            t.get("sessions")
                .and_then(|s| s.get("confine"))
                .and_then(|v| v.as_bool())
        })
        .unwrap_or(true)
}

/// Writes the confined session's settings for `checkout` and gets the repository ready;
/// returns the settings file.
pub fn prepare_session(
    hall: &crate::hall::Hall,
    checkout: &Path,
    name: &str,
) -> Result<(PathBuf, serde_json::Value)> {
    let scope = Scope {
        repo: &hall.repo,
        checkout,
        base: &hall.config.base,
        domains: &hall.config.sandbox.domains,
    };
    confine::prepare(&scope).map_err(|e| {
        HallError::internal(format!(
            "could not get {} ready for a confined session: {e}",
            hall.repo.common_dir.display()
        ))
    })?;
    let settings = confine::settings(&scope, &[]);
    let dir = hall.journal.root().join("sessions");
    std::fs::create_dir_all(&dir).at(&dir)?;
    let path = dir.join(format!("confine-{name}.json"));
    let text = serde_json::to_string_pretty(&settings).map_err(HallError::internal)?;
    crate::journal::file::write_atomic(&path, text.as_bytes()).at(&path)?;
    Ok((path, settings))
}

/// Writes the settings of a session the person chose to run unconfined (the sandbox
/// off, whatever the user settings say); returns the file.
fn unconfined_session(hall: &crate::hall::Hall, name: &str) -> Result<PathBuf> {
    let dir = hall.journal.root().join("sessions");
    std::fs::create_dir_all(&dir).at(&dir)?;
    let path = dir.join(format!("unconfined-{name}.json"));
    let text = serde_json::json!({ "sandbox": { "enabled": false } }).to_string();
    crate::journal::file::write_atomic(&path, text.as_bytes()).at(&path)?;
    Ok(path)
}

/// Starts `claude` in `checkout`, confined unless `unconfined`; returns the settings file
/// it was given and its exit code.
pub fn launch(
    hall: &crate::hall::Hall,
    checkout: &Path,
    name: &str,
    unconfined: bool,
    args: &[String],
) -> Result<(Option<PathBuf>, Option<i32>)> {
    let settings_file = if unconfined {
        unconfined_session(hall, name)?
    } else {
        confine::available().map_err(|why| {
            HallError::new(
                Code::CommandFailed,
                format!("{why}, so the session can't be confined"),
            )
            .hint(format!("hall claude {name} --unconfined"))
            .hint("hall doctor")
        })?;
        prepare_session(hall, checkout, name)?.0
    };
    let env = [(SESSION_ENV, settings_file.as_path())];
    let exit = crate::claude::session(checkout, Some(&settings_file), &env, args).map_err(|e| {
        HallError::new(
            Code::CommandFailed,
            format!("could not start `claude`: {e}"),
        )
        .hint("npm install -g @anthropic-ai/claude-code")
        .hint("hall doctor")
    })?;
    Ok((Some(settings_file), exit))
}

pub fn run(ctx: &Ctx, args: &ClaudeArgs) -> Result<Reply> {
    let hall = ctx.hall()?;
    let (checkout, name) = match &args.id {
        Some(_) => {
            let id = hall.resolve(args.id.as_deref())?;
            let item = hall.item(id)?;
            (hall.worktree_of(&item), id.to_string())
        }
        None => match hall.resolve(None) {
            Ok(id) => {
                let item = hall.item(id)?;
                (hall.worktree_of(&item), id.to_string())
            }
            Err(_) => (hall.repo.main_root.clone(), "main".to_string()),
        },
    };
    let unconfined = args.unconfined || !confine_by_default();
    if args.print_settings {
        let (path, settings) = prepare_session(&hall, &checkout, &name)?;
        let reply = serde_json::json!({
            "dir": checkout.display().to_string(),
            "settings": path.display().to_string(),
            "contents": settings,
            "next": [format!("hall claude {name}")],
        });
        let text = serde_json::to_string_pretty(&settings).unwrap_or_default();
        return Ok(Reply::new(&reply, text));
    }
    let (settings, exit) = launch(&hall, &checkout, &name, unconfined, &args.claude_args)?;
    let reply = ClaudeReply {
        dir: checkout.display().to_string(),
        confined: !unconfined,
        settings: settings.map(|p| p.display().to_string()),
        exit,
        next: vec![format!("hall status {name}"), format!("hall claude {name}")],
    };
    let text = format!(
        "The {} session in {} ended.",
        if reply.confined {
            "confined"
        } else {
            "unconfined"
        },
        reply.dir
    );
    let mut r = Reply::new(&reply, text);
    r.exit = exit.map(|c| c.clamp(0, 255) as u8).unwrap_or(1);
    Ok(r)
}
