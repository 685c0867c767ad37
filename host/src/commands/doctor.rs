//! `hall doctor`: is everything Hallmark needs here, and if not, what fixes it.

use std::process::Command;

use serde::Serialize;

use super::{Ctx, Reply, next_text};
use crate::config::Config;
use crate::error::Result;
use crate::journal::Journal;

#[derive(Serialize, schemars::JsonSchema)]
pub struct DoctorReply {
    /// True when every required check passed.
    pub ok: bool,
    pub checks: Vec<Check>,
    pub next: Vec<String>,
}

#[derive(Serialize, schemars::JsonSchema)]
pub struct Check {
    pub name: String,
    pub ok: bool,
    /// Whether Hallmark can't work without it (gh and claude are only needed by some commands).
    pub required: bool,
    pub detail: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

fn version(cmd: &str) -> Option<String> {
    let out = Command::new(cmd).arg("--version").output().ok()?;
    out.status.success().then(|| {
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .next()
            .unwrap_or("")
            .trim()
            .to_string()
    })
}

pub fn run(ctx: &Ctx) -> Result<Reply> {
    let mut checks = Vec::new();
    let mut add =
        |name: &str, required: bool, result: std::result::Result<String, (String, String)>| {
            let (ok, detail, fix) = match result {
                Ok(d) => (true, d, None),
                Err((d, f)) => (false, d, Some(f)),
            };
            checks.push(Check {
                name: name.into(),
                ok,
                required,
                detail,
                fix,
            });
        };
    add(
        "git",
        true,
        version("git").ok_or(("git is not on PATH".into(), "install git".into())),
    );
    add(
        "gh",
        false,
        version("gh").ok_or((
            "gh is not on PATH (needed for --issue, --pr and shipping)".into(),
            "install gh from https://cli.github.com, then `gh auth login`".into(),
        )),
    );
    add(
        "claude",
        false,
        version("claude").ok_or((
            "claude is not on PATH (needed for reviews and fixes)".into(),
            "npm install -g @anthropic-ai/claude-code".into(),
        )),
    );
    add(
        "plugin",
        false,
        super::setup::installed().map_err(|e| (e, "hall setup claude".to_string())),
    );
    add("daemon", false, daemon_check());
    match ctx.repo() {
        Err(e) => add(
            "repo",
            true,
            Err((e.message, "cd into a git repository".into())),
        ),
        Ok(repo) => {
            add("repo", true, Ok(repo.main_root.display().to_string()));
            let journal = Journal::new(repo.hall_dir());
            if !journal.exists() {
                add(
                    "journal",
                    true,
                    Err((
                        "this repository has no Hallmark journal".into(),
                        "hall init".into(),
                    )),
                );
            } else {
                add(
                    "config",
                    true,
                    Config::load(&repo.main_root)
                        .map(|_| format!("{} is valid", Config::path(&repo.main_root).display()))
                        .map_err(|e| {
                            (
                                e.message,
                                format!("edit {}", Config::path(&repo.main_root).display()),
                            )
                        }),
                );
                add("journal", true, check_journal(&journal));
                let hall = Config::load(&repo.main_root)
                    .ok()
                    .map(|config| super::Hall {
                        repo: repo.clone(),
                        journal: journal.clone(),
                        config,
                    });
                add("rooms", true, check_rooms(hall.as_ref()));
                add(
                    "index",
                    true,
                    crate::index::Index::open(&journal)
                        .and_then(|i| i.event_count())
                        .map(|n| format!("{n} events indexed"))
                        .map_err(|e| (e.message, "hall reindex".into())),
                );
            }
        }
    }
    let ok = checks.iter().all(|c| c.ok || !c.required);
    let next: Vec<String> = checks
        .iter()
        .filter(|c| !c.ok)
        .filter_map(|c| c.fix.clone())
        .collect();
    let mut text: Vec<String> = checks
        .iter()
        .map(|c| {
            let mark = if c.ok {
                "ok  "
            } else if c.required {
                "FAIL"
            } else {
                "warn"
            };
            let fix = c
                .fix
                .as_ref()
                .map(|f| format!("  → `{f}`"))
                .unwrap_or_default();
            format!("{mark} {:<8} {}{fix}", c.name, c.detail)
        })
        .collect();
    text.push(next_text(&next));
    Ok(Reply::new(
        &DoctorReply { ok, checks, next },
        text.join("\n"),
    ))
}

/// Whether the review loop runs: the daemon's heartbeat.
fn daemon_check() -> std::result::Result<String, (String, String)> {
    let fix = "hall daemon start".to_string();
    match crate::daemon::read_state() {
        Some(s) if crate::daemon::alive(&s) => Ok(format!(
            "running (pid {}, heartbeat {} s ago)",
            s.pid,
            crate::office::lease::unix_now().saturating_sub(s.heartbeat_unix)
        )),
        Some(s) if !s.stop && s.heartbeat_unix > 0 => Err((
            format!(
                "the daemon (pid {}) stopped without being asked; its last heartbeat was {}",
                s.pid, s.heartbeat
            ),
            fix,
        )),
        _ => Err((
            "the daemon is not running, so nothing reviews ready items".into(),
            fix,
        )),
    }
}

fn check_journal(journal: &Journal) -> std::result::Result<String, (String, String)> {
    let ids = journal.item_ids().map_err(|e| {
        (
            e.message,
            "check the journal directory's permissions".into(),
        )
    })?;
    let mut events = 0usize;
    let mut torn = 0usize;
    for id in &ids {
        let c = journal.read_item(*id).map_err(|e| {
            (
                e.message.clone(),
                e.next.first().cloned().unwrap_or_default(),
            )
        })?;
        events += c.events.len();
        torn += c.torn.len();
    }
    Ok(format!(
        "{} items, {events} events readable{}",
        ids.len(),
        if torn > 0 {
            format!(", {torn} torn lines skipped")
        } else {
            String::new()
        }
    ))
}

/// Every world's room loads (a configured room that doesn't is a failure, not a fallback).
fn check_rooms(hall: Option<&super::Hall>) -> std::result::Result<String, (String, String)> {
    let serving =
        super::rooms::serving(hall).map_err(|e| (e.message, "hall rooms list".to_string()))?;
    let broken: Vec<String> = serving
        .iter()
        .filter(|s| s.code.is_some())
        .map(|s| format!("{}: {}", s.world, s.error.clone().unwrap_or_default()))
        .collect();
    if !broken.is_empty() {
        return Err((broken.join("; "), "hall rooms list".to_string()));
    }
    let names: Vec<String> = serving
        .iter()
        .filter_map(|s| {
            s.room
                .as_ref()
                .map(|r| format!("{} ({})", s.world, r.source))
        })
        .collect();
    Ok(names.join(", "))
}
