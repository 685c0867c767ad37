//! `hall daemon start|stop|status|run`.

use std::time::Duration;

use serde::Serialize;

use super::{Ctx, Reply, next_text};
use crate::cli::DaemonCmd;
use crate::daemon::{self, DaemonState};
use crate::error::{HallError, Result};
use crate::office::lease;

#[derive(Serialize, schemars::JsonSchema)]
pub struct DaemonReply {
    pub running: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<DaemonState>,
    /// Seconds since the last heartbeat.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub heartbeat_age_s: Option<u64>,
    pub repos: Vec<String>,
    /// Live leases in the repository this was run from.
    pub leases: Vec<lease::Lease>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub service: Option<String>,
    /// What `run` did, line by line.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub log: Vec<daemon::LogLine>,
    pub next: Vec<String>,
}

fn status_reply(ctx: &Ctx, service: Option<String>) -> DaemonReply {
    let state = daemon::read_state();
    let running = state.as_ref().is_some_and(daemon::alive);
    let leases = ctx
        .hall()
        .map(|h| lease::live(h.journal.root()))
        .unwrap_or_default();
    DaemonReply {
        running,
        heartbeat_age_s: state
            .as_ref()
            .filter(|s| s.heartbeat_unix > 0)
            .map(|s| lease::unix_now().saturating_sub(s.heartbeat_unix)),
        state,
        repos: crate::hall::registry::registered()
            .iter()
            .map(|p| p.display().to_string())
            .collect(),
        leases,
        service,
        log: Vec::new(),
        next: if running {
            vec!["hall daemon stop".into(), "hall status".into()]
        } else {
            vec![
                "hall daemon start".into(),
                "hall daemon run --until-idle".into(),
            ]
        },
    }
}

/// Each registered repository with what waits in it, read from its index.
fn repo_lines(repos: &[String]) -> Vec<String> {
    repos
        .iter()
        .map(|path| {
            let counts = crate::git::Repo::discover(std::path::Path::new(path))
                .map_err(crate::error::HallError::from)
                .and_then(crate::hall::Hall::open)
                .and_then(|hall| {
                    let index = hall.index()?;
                    let open = index.items(false)?.len();
                    let waiting = super::inbox_entries(&index)?
                        .iter()
                        .filter(|e| !e.dismissed)
                        .count();
                    Ok((open, waiting))
                });
            match counts {
                Ok((open, waiting)) => format!(
                    "  {path}: {open} open item{}, {waiting} in Your Office",
                    if open == 1 { "" } else { "s" }
                ),
                Err(e) => format!("  {path}: can't be read ({})", e.message),
            }
        })
        .collect()
}

fn text(r: &DaemonReply) -> String {
    let mut t = if r.running {
        format!(
            "The daemon runs (pid {}, heartbeat {} s ago, {} passes) over {} repos.",
            r.state.as_ref().map(|s| s.pid).unwrap_or(0),
            r.heartbeat_age_s.unwrap_or(0),
            r.state.as_ref().map(|s| s.passes).unwrap_or(0),
            r.repos.len()
        )
    } else {
        "The daemon is not running.".to_string()
    };
    if let Some(s) = &r.state {
        for p in &s.paused {
            t.push_str(&format!("\npaused: {p}"));
        }
        if let Some(env) = s.environment.as_ref().filter(|_| r.running) {
            let programs: Vec<String> = env
                .programs
                .iter()
                .map(|(name, file)| format!("{name} = {file}"))
                .collect();
            t.push_str(&format!("\nruns: {}", programs.join(", ")));
            for refused in &env.refused {
                t.push_str(&format!("\nleft out of PATH: {refused}"));
            }
        }
    }
    for l in &r.leases {
        t.push_str(&format!(
            "\n{} leased by {} ({})",
            l.item, l.holder, l.phase
        ));
    }
    for l in &r.log {
        t.push_str(&format!(
            "\n{} {} {}: {}",
            l.item.map(|i| i.to_string()).unwrap_or_default(),
            l.role,
            l.state.map(|s| s.to_string()).unwrap_or_default(),
            l.did
        ));
    }
    format!("{t}\n{}", next_text(&r.next))
}

pub fn run(ctx: &Ctx, cmd: &DaemonCmd) -> Result<Reply> {
    match cmd {
        DaemonCmd::Status => {
            let r = status_reply(ctx, None);
            let t = text(&r);
            let repos = repo_lines(&r.repos);
            let t = match t.split_once('\n') {
                Some((head, rest)) if !repos.is_empty() => {
                    format!("{head}\n{}\n{rest}", repos.join("\n"))
                }
                _ => t,
            };
            Ok(Reply::new(&r, t))
        }
        DaemonCmd::Stop => {
            ctx.person("daemon stop", "stops the loop a person started")?;
            let Some(mut s) = daemon::read_state() else {
                let r = status_reply(ctx, None);
                let t = text(&r);
                return Ok(Reply::new(&r, t));
            };
            s.stop = true;
            daemon::write_state(&s)?;
            let mut r = status_reply(ctx, None);
            r.next = vec!["hall daemon status".into()];
            let t = format!(
                "Asked the daemon (pid {}) to stop after its current pass.\n{}",
                s.pid,
                next_text(&r.next)
            );
            Ok(Reply::new(&r, t))
        }
        DaemonCmd::Start { at_login } => {
            // The loop signs with the person's key and runs their `claude`: only a
            // person starts it, and it keeps the programs it finds now.
            let you = ctx.person("daemon start", "starts the loop, which signs with your key")?;
            if let Some(s) = daemon::read_state()
                && daemon::alive(&s)
                && !s.stop
            {
                let r = status_reply(ctx, None);
                let t = format!("Already running.\n{}", text(&r));
                return Ok(Reply::new(&r, t));
            }
            let mut warnings = Vec::new();
            let (service, background) = if *at_login {
                let (label, not_started) = daemon::install_at_login(you)?;
                match not_started {
                    None => (Some(label), false),
                    Some(why) => {
                        warnings.push(format!(
                            "the login service {label} is installed but could not start now ({why}); started the daemon in the background instead"
                        ));
                        (Some(label), true)
                    }
                }
            } else {
                (None, true)
            };
            if background {
                let pid = daemon::spawn_background(you)?;
                // The child writes its own state; give it a moment so status is true.
                for _ in 0..50 {
                    if daemon::read_state().is_some_and(|s| s.pid == pid && s.heartbeat_unix > 0) {
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(100));
                }
            }
            let r = status_reply(ctx, service);
            let t = text(&r);
            Ok(Reply::new(&r, t).warn(warnings))
        }
        DaemonCmd::Run {
            until_idle,
            repo,
            tick,
        } => {
            let you = ctx.person("daemon run", "runs the loop, which signs with your key")?;
            if !tick.is_finite() || *tick < 0.0 {
                return Err(HallError::usage("--tick takes a number of seconds, e.g. 2"));
            }
            // A run until idle is for scripts and tests in one repository: the one it
            // is started in; outside any repository, every registered one (the help
            // of `--repo` says so).
            let repos = match repo {
                Some(p) => Some(vec![ctx.cwd.join(p)]),
                None if *until_idle => ctx.repo().ok().map(|r| vec![r.main_root]),
                None => None,
            };
            let until = if *until_idle {
                daemon::Until::Idle
            } else {
                daemon::Until::Stopped
            };
            let log = daemon::run(
                you,
                repos,
                until,
                Duration::from_secs_f64(*tick),
                super::board::refresh_if_moved,
            )?;
            let mut r = status_reply(ctx, None);
            r.next = vec!["hall status".into(), "hall inbox".into()];
            // The steps were printed live, on stderr; the text doesn't repeat them.
            let t = format!(
                "Ran {} step{}; {}.\n{}",
                log.len(),
                if log.len() == 1 { "" } else { "s" },
                if *until_idle {
                    "now no item has work the loop can do"
                } else {
                    "the daemon was asked to stop"
                },
                next_text(&r.next)
            );
            r.log = log;
            Ok(Reply::new(&r, t))
        }
    }
}
