//! `hall doctor`: is everything Hallmark needs here, and if not, what fixes it.
//!
//! The reply is the same whether or not the checks pass, but the exit code is not: 1 when
//! a required check fails, so a script or an agent that only looks at the status learns
//! that this repository can't be worked in as it is. It is 1 rather than one of the
//! specific codes because the failures are of every kind (a missing tool, a bad config,
//! an unreadable journal) and none of them is the doctor's own error; the reply says
//! which check failed and its fix.

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
        crate::git::version().ok_or(("git is not on PATH".into(), "install git".into())),
    );
    add(
        "gh",
        false,
        crate::gh::version().ok_or((
            "gh is not on PATH (needed for --issue, --pr and shipping)".into(),
            "install gh from https://cli.github.com, then `gh auth login`".into(),
        )),
    );
    add(
        "claude",
        false,
        crate::claude::version().ok_or((
            "claude is not on PATH (needed for reviews and fixes)".into(),
            "npm install -g @anthropic-ai/claude-code".into(),
        )),
    );
    add(
        "plugin",
        false,
        crate::hall::plugin::installed().map_err(|e| (e, "hall setup claude".to_string())),
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
                add("config", true, check_config(&repo));
                add("edit", true, check_working_copy(&repo));
                add("journal", true, check_journal(&journal));
                let hall = crate::hall::rules::rules(&repo)
                    .ok()
                    .map(|rules| super::Hall::with(repo.clone(), journal.clone(), rules.config));
                add("rooms", true, check_rooms(hall.as_ref()));
                if let Some(h) = hall.as_ref() {
                    // A check that can't start holds every item at its checks: that
                    // fails doctor. No checks at all only warns (nothing to start). The
                    // entry keeps the name of the config key it reads, `gates`.
                    let checks = check_checks(&h.config, &repo.main_root);
                    let required = checks.is_err() && !h.config.checks.is_empty();
                    add("gates", required, checks);
                }
                add("index", true, check_index(&journal));
                add("signers", false, check_signers(&repo));
                add("sessions", false, check_sessions());
                // Without the sandbox the loop holds every item at its checks rather
                // than run its code with the key in reach: that fails doctor.
                if let Some(h) = hall.as_ref() {
                    let (required, result) = check_loop(h);
                    add("loop", required, result);
                }
            }
        }
    }
    let ok = checks.iter().all(|c| c.ok || !c.required);
    // What blocks Hallmark first, then what only some commands need.
    let next: Vec<String> = checks
        .iter()
        .filter(|c| !c.ok && c.required)
        .chain(checks.iter().filter(|c| !c.ok && !c.required))
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
                .map(|f| format!("  → {}", crate::error::as_command(f)))
                .unwrap_or_default();
            format!("{mark} {:<8} {}{fix}", c.name, c.detail)
        })
        .collect();
    let failed = checks.iter().filter(|c| !c.ok && c.required).count();
    let warned = checks.iter().filter(|c| !c.ok && !c.required).count();
    text.push(match (failed, warned) {
        (0, 0) => "Every check passes.".to_string(),
        (0, w) => format!(
            "Every required check passes; {w} warning{} for what some commands need.",
            if w == 1 { "" } else { "s" }
        ),
        (f, _) => format!(
            "{f} required check{} failed: Hallmark can't work here until {} fixed (exit {FAILED}).",
            if f == 1 { "" } else { "s" },
            if f == 1 { "it is" } else { "they are" }
        ),
    });
    text.push(next_text(&next));
    let mut reply = Reply::new(&DoctorReply { ok, checks, next }, text.join("\n"));
    if !ok {
        reply.exit = FAILED;
    }
    Ok(reply)
}

/// Every check's command (and every setup command) can start here: its first word is on
/// PATH, a shell builtin, or a script in the repository. Zero checks is a warning too:
/// nothing would be checked.
fn check_checks(
    config: &Config,
    root: &std::path::Path,
) -> std::result::Result<String, (String, String)> {
    let path = Config::path(root);
    if config.checks.is_empty() {
        return Err((
            "no checks: work would be reviewed without any command proving it".into(),
            format!(
                "list the repository's checks under `gates` in {} and commit it",
                path.display()
            ),
        ));
    }
    let missing: Vec<String> = config
        .checks
        .iter()
        .chain(&config.setup)
        .filter_map(|c| program(c).filter(|p| !runnable(p, root)))
        .collect();
    if missing.is_empty() {
        return Ok(format!(
            "{} check{}, each command found",
            config.checks.len(),
            if config.checks.len() == 1 { "" } else { "s" }
        ));
    }
    Err((
        format!("not found on PATH: {}", missing.join(", ")),
        format!(
            "install {} or change `gates` in {}",
            missing.join(", "),
            path.display()
        ),
    ))
}

/// The program a command line starts, after `VAR=value` assignments and `cd dir &&`.
fn program(command: &str) -> Option<String> {
    let last = command.rsplit("&&").next().unwrap_or(command);
    let first = if command.trim_start().starts_with("cd ") {
        last
    } else {
        command
    };
    first
        .split_whitespace()
        .find(|w| !w.contains('=') || w.starts_with(['.', '/']))
        .map(str::to_string)
}

fn runnable(program: &str, root: &std::path::Path) -> bool {
    const BUILTINS: &[&str] = &[
        "cd", "test", "[", "true", "false", "echo", "exit", "export", "set", "!",
    ];
    if BUILTINS.contains(&program) {
        return true;
    }
    if program.contains('/') {
        return root.join(program).is_file() || std::path::Path::new(program).is_file();
    }
    std::env::var_os("PATH")
        .map(|path| std::env::split_paths(&path).any(|d| d.join(program).is_file()))
        .unwrap_or(false)
}

/// The rules in effect: the base branch's committed `.hallmark.toml`.
fn check_config(repo: &crate::git::Repo) -> std::result::Result<String, (String, String)> {
    match crate::hall::rules::rules(repo) {
        Ok(r) => Ok(match (&r.tip, r.committed) {
            (Some(tip), true) => format!(
                "the rules in effect are .hallmark.toml on {} at {}",
                r.config.base,
                crate::item::sha::short(&tip.sha)
            ),
            (Some(_), false) => format!(
                "{} has no .hallmark.toml: every key is its default",
                r.config.base
            ),
            (None, _) => format!(
                "the base branch {} has no commit yet: every key is its default",
                r.config.base
            ),
        }),
        Err(e) => Err((
            e.message,
            "fix .hallmark.toml and commit it on the base branch".to_string(),
        )),
    }
}

/// An edit of `.hallmark.toml` in the main checkout that isn't committed is not in
/// effect; one that doesn't parse is a mistake waiting to be committed.
fn check_working_copy(repo: &crate::git::Repo) -> std::result::Result<String, (String, String)> {
    let path = Config::path(&repo.main_root);
    let Ok(rules) = crate::hall::rules::rules(repo) else {
        return Ok("see the config check".into());
    };
    match crate::hall::rules::working_copy(repo, &rules) {
        crate::hall::rules::WorkingCopy::Committed => {
            Ok(format!("{} is as committed", path.display()))
        }
        crate::hall::rules::WorkingCopy::Removed => Ok(format!(
            "{} is removed in the main checkout; the committed one stays in effect until the removal is committed",
            path.display()
        )),
        crate::hall::rules::WorkingCopy::Uncommitted => match Config::load(&repo.main_root) {
            Ok(_) => Ok(format!(
                "{} has changes that are not in effect until committed on {}",
                path.display(),
                rules.config.base
            )),
            Err(e) => Err((
                format!("{} (not in effect until committed)", e.message),
                format!("edit {}", path.display()),
            )),
        },
    }
}

/// Whether the base branch lists who may sign hallmarks, so CI can verify them.
fn check_signers(repo: &crate::git::Repo) -> std::result::Result<String, (String, String)> {
    let base = crate::hall::rules::base_name(repo);
    match crate::hall::hallmark::Trust::from_base(&repo.main_root, &base) {
        Ok(Some(t)) if !t.is_empty() => Ok(format!("hallmarks verify against {}", t.source())),
        _ => Err((
            format!("{base} has no .hallmark/allowed_signers, so CI can't verify hallmarks"),
            format!("`hall init --signers`, then commit .hallmark/allowed_signers on {base}"),
        )),
    }
}

/// Whether `hall claude` can start sessions in Claude Code's sandbox here.
fn check_sessions() -> std::result::Result<String, (String, String)> {
    if !super::claude::confine_by_default() {
        return Err((
            "sessions start unconfined ([sessions] confine = false): only the hooks gate them"
                .into(),
            "hall setup claude".into(),
        ));
    }
    crate::hall::confine::available()
        .map(|_| "`hall claude` starts sessions in Claude Code's sandbox".to_string())
        .map_err(|why| (why, "install what is named, then `hall claude`".to_string()))
}

/// Whether the loop can run an item's code (checks, setup, a fix engine) confined, and
/// whether it matters: a missing sandbox holds every item (required); the person's own
/// opt-out is said, loudly, as a warning.
fn check_loop(hall: &super::Hall) -> (bool, std::result::Result<String, (String, String)>) {
    let result = match crate::hall::confine::Jail::new(hall) {
        Ok(j) if j.confined() => Ok(format!(
            "the item's checks, setup and fix engine run in {}",
            crate::sandbox::find()
                .map(|s| s.name())
                .unwrap_or("the sandbox")
        )),
        Ok(_) => Err((
            "the loop runs the item's code UNCONFINED ([loop] confine = false in your config): its tests can read your signing key".into(),
            "hall config set --user loop.confine=true".into(),
        )),
        Err(e) => {
            let fix = e.next.first().cloned().unwrap_or_else(|| "hall doctor".into());
            return (true, Err((e.reason, fix)));
        }
    };
    (false, result)
}

/// The exit code when a required check fails (see the module's comment).
const FAILED: u8 = 1;

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
    let root = journal.root();
    let permissions = format!("check the permissions of {}", root.display());
    // Every command and hook writes here; a directory that can't take a new file fails
    // them all, so say so before they do.
    let probe = root.join(format!(".doctor-probe.{}", std::process::id()));
    std::fs::write(&probe, b"")
        .and_then(|()| std::fs::remove_file(&probe))
        .map_err(|e| (format!("{}: {e}", root.display()), permissions.clone()))?;
    let ids = journal
        .item_ids()
        .map_err(|e| (e.to_string(), permissions.clone()))?;
    let mut events = 0usize;
    let mut torn = 0usize;
    for id in &ids {
        let c = journal.read_item(*id).map_err(|e| {
            let e = crate::error::HallError::from(e);
            (e.message, e.next.first().cloned().unwrap_or_default())
        })?;
        events += c.events.len();
        torn += c.torn.len();
    }
    // The repository's own events (denials, prompts with no item) are indexed too; the
    // two counts must agree.
    let repo_events = crate::journal::file::read(&journal.repo_file()).map_err(|e| {
        let e = crate::error::HallError::from(e);
        (e.message, e.next.first().cloned().unwrap_or_default())
    })?;
    events += repo_events.events.len();
    torn += repo_events.torn.len();
    Ok(format!(
        "{} item{}, {events} event{} readable{}",
        ids.len(),
        if ids.len() == 1 { "" } else { "s" },
        if events == 1 { "" } else { "s" },
        if torn > 0 {
            format!(", {torn} torn lines skipped")
        } else {
            String::new()
        }
    ))
}

/// The index opens, catches up and passes SQLite's quick check; a damaged file is
/// rebuilt from the journal on the way, which the detail mentions.
fn check_index(journal: &Journal) -> std::result::Result<String, (String, String)> {
    let failed = |e: crate::index::IndexError| {
        let e = crate::error::HallError::from(e);
        let fix = e
            .next
            .first()
            .cloned()
            .unwrap_or_else(|| "hall reindex".into());
        (e.message, fix)
    };
    let index = crate::index::Index::open(journal).map_err(failed)?;
    index.verify().map_err(failed)?;
    let events = index.event_count().map_err(failed)?;
    Ok(match index.healed() {
        Some(reason) => format!(
            "{events} events indexed; the file was damaged ({reason}) and was rebuilt from the journal (see {})",
            crate::index::log_file(journal).display()
        ),
        None => format!(
            "{events} event{} indexed",
            if events == 1 { "" } else { "s" }
        ),
    })
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
