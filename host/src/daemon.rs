//! The daemon: one process that runs the loop for every registered repository.
//!
//! Each pass reads the registry, and for every repo: renews its own leases, runs the
//! watchman (items stuck past `stuck_after`), resumes sessions whose questions were
//! answered, and starts a worker for every item with work, as long as the item's lease
//! and its phase's `[parallel]` limit allow. Workers run on tokio's blocking pool, so a
//! long review in one repo never holds up checks in another. A daily budget that is spent
//! pauses the model workers (review, fix, resume); checks and shipping go on.
//!
//! State lives in `<data dir>/daemon/state.json`: the pid, a heartbeat, and the stop
//! flag `hall daemon stop` sets, which works the same on every OS.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::commands::{Ctx, Hall};
use crate::error::{HallError, Result};
use crate::item::{EventKind, ItemId, State};
use crate::office::{self, lease};

/// The daemon's state file.
#[derive(Clone, Debug, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DaemonState {
    pub pid: u32,
    pub started: String,
    /// The last pass, on the wall clock.
    pub heartbeat: String,
    /// Seconds since the Unix epoch of the heartbeat.
    pub heartbeat_unix: u64,
    pub passes: u64,
    /// Set by `hall daemon stop`; the daemon exits at its next pass.
    pub stop: bool,
    /// A paused reason per repo (the daily budget).
    #[serde(default)]
    pub paused: Vec<String>,
}

pub fn dir() -> Result<PathBuf> {
    crate::platform::data_dir()
        .map(|d| d.join("daemon"))
        .ok_or_else(|| HallError::internal("no user data directory"))
}

pub fn state_file() -> Result<PathBuf> {
    Ok(dir()?.join("state.json"))
}

pub fn read_state() -> Option<DaemonState> {
    let path = state_file().ok()?;
    serde_json::from_slice(&std::fs::read(path).ok()?).ok()
}

pub fn write_state(s: &DaemonState) -> Result<()> {
    let path = state_file()?;
    std::fs::create_dir_all(dir()?)?;
    let bytes = serde_json::to_vec_pretty(s).map_err(HallError::internal)?;
    crate::journal::file::write_atomic(&path, &bytes)?;
    Ok(())
}

/// Whether a daemon is running: its process lives and its heartbeat is recent.
pub fn alive(s: &DaemonState) -> bool {
    !crate::platform::process_gone(s.pid)
        && lease::unix_now().saturating_sub(s.heartbeat_unix) < 120
}

/// The registered repositories.
pub fn registered() -> Vec<PathBuf> {
    crate::platform::data_dir()
        .and_then(|d| std::fs::read(d.join("repos.json")).ok())
        .and_then(|b| serde_json::from_slice::<Vec<String>>(&b).ok())
        .unwrap_or_default()
        .into_iter()
        .map(PathBuf::from)
        .collect()
}

/// How a `hall daemon run` ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Until {
    /// Runs until stopped.
    Stopped,
    /// Runs passes until no item has work the loop can do.
    Idle,
}

/// One line of the live log.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct LogLine {
    pub t: String,
    pub repo: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub item: Option<ItemId>,
    pub role: String,
    pub did: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<State>,
}

fn open(repo: &Path, actor: &str) -> Result<Hall> {
    let now = crate::clock::now();
    Ctx {
        cwd: repo.to_path_buf(),
        stamp: crate::clock::stamp(now),
        now,
        actor: actor.to_string(),
    }
    .hall()
}

fn emit(log: &mut Vec<LogLine>, line: LogLine) {
    // The live log goes to stderr, so stdout stays the command's one JSON reply.
    eprintln!(
        "{}",
        serde_json::to_string(&line).unwrap_or_else(|_| line.did.clone())
    );
    log.push(line);
}

type Key = (PathBuf, u32);

/// Runs the daemon loop in this process.
pub fn run(repos: Option<Vec<PathBuf>>, until: Until, tick: Duration) -> Result<Vec<LogLine>> {
    let holder = format!("daemon:{}", std::process::id());
    let mut state = DaemonState {
        pid: std::process::id(),
        started: crate::clock::stamp(std::time::SystemTime::now()),
        ..DaemonState::default()
    };
    write_state(&state)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let pid = state.pid;
    let log = runtime.block_on(async {
        let mut log = Vec::new();
        let mut jobs: tokio::task::JoinSet<(Key, Result<Option<office::Step>>, String)> =
            tokio::task::JoinSet::new();
        let mut running: HashSet<Key> = HashSet::new();
        // Items whose last step changed nothing, by their event count then.
        let mut idle_at: HashMap<Key, u64> = HashMap::new();
        // Each running item's event count when its step started.
        let mut before: HashMap<Key, u64> = HashMap::new();
        loop {
            let on_disk = read_state().unwrap_or_default();
            if on_disk.stop && on_disk.pid == pid {
                break;
            }
            state.passes += 1;
            state.heartbeat = crate::clock::stamp(std::time::SystemTime::now());
            state.heartbeat_unix = lease::unix_now();
            state.paused.clear();
            let mut started = 0;
            let list = repos.clone().unwrap_or_else(registered);
            for repo in &list {
                match pass(repo, &holder, &mut jobs, &mut running, &idle_at, &mut before, &mut log) {
                    Ok((n, paused)) => {
                        started += n;
                        if let Some(p) = paused {
                            state.paused.push(format!("{}: {p}", repo.display()));
                        }
                    }
                    Err(e) => emit(
                        &mut log,
                        LogLine {
                            t: state.heartbeat.clone(),
                            repo: repo.display().to_string(),
                            item: None,
                            role: "daemon".into(),
                            did: format!("skipped: {}", e.message),
                            state: None,
                        },
                    ),
                }
            }
            let _ = write_state(&state);
            if until == Until::Idle && started == 0 && jobs.is_empty() {
                break;
            }
            tokio::select! {
                Some(done) = jobs.join_next() => {
                    if let Ok((key, result, role)) = done {
                        running.remove(&key);
                        let (repo, num) = key.clone();
                        let t = crate::clock::stamp(std::time::SystemTime::now());
                        match result {
                            Ok(Some(step)) => {
                                let events = step.after.events;
                                emit(&mut log, LogLine { t, repo: repo.display().to_string(), item: Some(ItemId(num)), role, did: step.did, state: Some(step.after.state) });
                                // A step that wrote nothing (a closed room, a pause) is not
                                // retried until something changes the item.
                                if before.get(&key) == Some(&events) {
                                    idle_at.insert(key, events);
                                } else {
                                    idle_at.remove(&key);
                                }
                            }
                            Ok(None) => {
                                if let Some(n) = before.get(&key) {
                                    idle_at.insert(key, *n);
                                }
                            }
                            Err(e) => {
                                emit(&mut log, LogLine { t, repo: repo.display().to_string(), item: Some(ItemId(num)), role, did: format!("failed: {} ({})", e.message, e.code.as_str()), state: None });
                                if let Ok(hall) = open(&repo, "daemon")
                                    && let Ok(c) = hall.journal.read_item(ItemId(num)) {
                                    idle_at.insert(key, c.events.len() as u64);
                                }
                            }
                        }
                    }
                }
                _ = tokio::time::sleep(tick) => {}
                _ = tokio::signal::ctrl_c() => break,
            }
        }
        while let Some(done) = jobs.join_next().await {
            if let Ok(((repo, num), Ok(Some(step)), role)) = done {
                let t = crate::clock::stamp(std::time::SystemTime::now());
                emit(&mut log, LogLine { t, repo: repo.display().to_string(), item: Some(ItemId(num)), role, did: step.did, state: Some(step.after.state) });
            }
        }
        log
    });
    let mut end = read_state().unwrap_or(state);
    end.heartbeat_unix = 0;
    let _ = write_state(&end);
    Ok(log)
}

/// One pass over one repository: returns how many workers it started, and the pause
/// reason when the daily budget stops the model workers.
fn pass(
    repo: &Path,
    holder: &str,
    jobs: &mut tokio::task::JoinSet<(Key, Result<Option<office::Step>>, String)>,
    running: &mut HashSet<Key>,
    idle_at: &HashMap<Key, u64>,
    before: &mut HashMap<Key, u64>,
    log: &mut Vec<LogLine>,
) -> Result<(usize, Option<String>)> {
    let hall = open(repo, "daemon")?;
    let root = hall.journal.root().to_path_buf();
    lease::renew(&root, holder, lease::ttl())?;
    let ctx = office::worker_ctx(&hall, office::Role::Assayer)?;
    for did in watchman(&hall)? {
        emit(
            log,
            LogLine {
                t: ctx.stamp.clone(),
                repo: repo.display().to_string(),
                item: None,
                role: "watchman".into(),
                did,
                state: None,
            },
        );
    }
    let paused = office::budget::paused(&hall, &ctx)?;
    let mut started = 0;
    // Resumes run models, so they run on the blocking pool like any step: one job per
    // repository at a time (item number 0 stands for the repository).
    let resume_key: Key = (repo.to_path_buf(), 0);
    if paused.is_none() && !running.contains(&resume_key) && office::resume::pending(&hall)? {
        running.insert(resume_key.clone());
        let repo = repo.to_path_buf();
        jobs.spawn_blocking(move || {
            let result = open(&repo, "daemon").and_then(|hall| {
                let ctx = Ctx {
                    actor: "daemon".into(),
                    ..office::worker_ctx(&hall, office::Role::Assayer)?
                };
                let did = office::resume::run(&hall, &ctx)?;
                Ok((!did.is_empty()).then(|| office::Step {
                    did: did.join("; "),
                    after: crate::item::Item::default(),
                }))
            });
            (resume_key, result, "resume".to_string())
        });
        started += 1;
    }
    let index = hall.index()?;
    for row in index.items(false)? {
        let key: Key = (repo.to_path_buf(), row.id.0);
        if running.contains(&key) {
            continue;
        }
        let Some(item) = index.item(row.id)? else {
            continue;
        };
        let Some((role, phase)) = office::work_for(&item) else {
            continue;
        };
        if paused.is_some() && matches!(phase, "review" | "fix") {
            continue;
        }
        if idle_at.get(&key) == Some(&item.events) {
            continue;
        }
        // Claim before spawning, so the next pass sees the lease. The claim refuses an
        // item someone else holds and a phase at its `[parallel]` limit.
        match office::claim(&hall, row.id, (role, phase), holder, std::process::id())? {
            lease::Claim::Taken(_) => {}
            _ => continue,
        }
        running.insert(key.clone());
        before.insert(key.clone(), item.events);
        let repo = repo.to_path_buf();
        let holder = holder.to_string();
        let id = row.id;
        jobs.spawn_blocking(move || {
            let result = open(&repo, role.as_str()).and_then(|hall| {
                let r = office::step(&hall, id, role);
                let _ = lease::release(hall.journal.root(), id, &holder);
                r
            });
            (key, result, role.as_str().to_string())
        });
        started += 1;
    }
    Ok((started, paused))
}

/// Items in the loop that have sat in one state past `stuck_after` with nobody working
/// on them: one `stuck` notice per stay.
pub fn watchman(hall: &Hall) -> Result<Vec<String>> {
    let after =
        crate::clock::parse_duration(&hall.config.stuck_after).unwrap_or(Duration::from_secs(1800));
    let ctx = office::worker_ctx(hall, office::Role::Assayer)?;
    let root = hall.journal.root().to_path_buf();
    let mut did = Vec::new();
    for row in hall.index()?.items(false)? {
        if !matches!(
            row.state,
            State::Checks | State::Review | State::Fixing | State::Hallmarked
        ) || row.hold.is_some()
        {
            continue;
        }
        let Some(since) = crate::clock::parse(&row.since) else {
            continue;
        };
        if ctx.now.duration_since(since).unwrap_or_default() < after
            || lease::current(&root, row.id).is_some()
        {
            continue;
        }
        let message = format!(
            "{} has been in {} since {} with no worker",
            row.id, row.state, row.since
        );
        let written = hall.journal.append_checked(Some(row.id), |events| {
            let noted = events.iter().rev().take_while(|e| e.t >= row.since).any(
                |e| matches!(&e.kind, EventKind::Notification { kind, .. } if kind == "stuck"),
            );
            Ok(if noted {
                Vec::new()
            } else {
                vec![
                    Ctx {
                        actor: "watchman".into(),
                        ..office::worker_ctx(hall, office::Role::Assayer)?
                    }
                    .event(
                        Some(row.id),
                        EventKind::Notification {
                            kind: "stuck".into(),
                            message: message.clone(),
                            session: None,
                        },
                    ),
                ]
            })
        })?;
        if !written.is_empty() {
            did.push(message);
        }
    }
    Ok(did)
}

/// Starts `hall daemon run` in the background, detached, logging to `daemon.log`.
pub fn spawn_background() -> Result<u32> {
    let exe = std::env::current_exe()?;
    let d = dir()?;
    std::fs::create_dir_all(&d)?;
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(d.join("daemon.log"))?;
    let mut cmd = std::process::Command::new(exe);
    cmd.args(["daemon", "run"])
        .stdin(std::process::Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log);
    crate::platform::detach(&mut cmd);
    let child = cmd.spawn()?;
    Ok(child.id())
}

/// Installs `hall daemon run` as a user service that starts at login (a systemd user
/// unit, a launchd agent, …), through service-manager, and asks it to start now. Returns
/// the service's label, and why starting it now failed (a machine without a user
/// session bus, say), in which case the caller starts the daemon itself.
pub fn install_at_login() -> Result<(String, Option<String>)> {
    use service_manager::{
        RestartPolicy, ServiceInstallCtx, ServiceLabel, ServiceLevel, ServiceManager,
        ServiceStartCtx,
    };
    let failed = |what: &str, e: std::io::Error| {
        HallError::new(crate::error::Code::CommandFailed, format!("{what}: {e}"))
            .hint("hall daemon start")
    };
    let label: ServiceLabel = "dev.hallmark.daemon"
        .parse()
        .map_err(|e| HallError::internal(format!("{e}")))?;
    let mut manager = <dyn ServiceManager>::native()
        .map_err(|e| failed("no service manager on this machine", e))?;
    manager
        .set_level(ServiceLevel::User)
        .map_err(|e| failed("user-level services are not available", e))?;
    // The daemon must see the same data, config and cache directories as this process.
    let environment: Vec<(String, String)> = ["HALL_DATA_DIR", "HALL_CONFIG_DIR", "HALL_CACHE_DIR"]
        .iter()
        .filter_map(|k| std::env::var(k).ok().map(|v| (k.to_string(), v)))
        .collect();
    manager
        .install(ServiceInstallCtx {
            label: label.clone(),
            program: std::env::current_exe()?,
            args: vec!["daemon".into(), "run".into()],
            contents: None,
            username: None,
            working_directory: None,
            environment: (!environment.is_empty()).then_some(environment),
            autostart: true,
            restart_policy: RestartPolicy::OnFailure {
                delay_secs: Some(10),
                max_retries: None,
                reset_after_secs: None,
            },
        })
        .map_err(|e| failed("installing the login service failed", e))?;
    let started = manager
        .start(ServiceStartCtx {
            label: label.clone(),
        })
        .err()
        .map(|e| e.to_string().trim().to_string());
    Ok((label.to_string(), started))
}
