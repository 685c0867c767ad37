//! The daemon: one process that runs the loop for every registered repository.
//!
//! A [`Scheduler`] makes passes. Each pass reads the registry, and for every repo:
//! renews its own leases, runs the watchman (items stuck past `stuck_after`), resumes
//! sessions whose questions were answered, and starts a worker for every item with
//! work, as long as the item's lease and its phase's `[parallel]` limit allow. Workers
//! run on tokio's blocking pool, so a long review in one repo never holds up checks in
//! another. A daily budget that is spent pauses the model workers (review, fix,
//! resume); checks and shipping go on.
//!
//! State lives in `<data dir>/daemon/state.json`: the pid, a heartbeat, the programs and
//! `PATH` it resolved at its start (`environment.rs`), and the stop flag `hall daemon
//! stop` sets, which works the same on every OS. Only a person starts it (the loop signs
//! with their key), from outside every agent session. The daemon stops by
//! itself, saying why in its log, when its data directory is gone, or when every
//! repository it was told to run (`--repo`, `--until-idle`) is.

pub mod environment;
mod service;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use environment::Environment;
pub use service::{install_at_login, spawn_background, spawn_detached};

use crate::clock::Clock;
use crate::error::{HallError, IoContext, Result};
use crate::git::Repo;
use crate::hall::{Ctx, Hall};
use crate::item::{Item, ItemId, State};
use crate::office::{self, Phase, Step, lease};

/// The daemon's state file.
#[derive(Clone, Debug, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DaemonState {
    pub pid: u32,
    pub started: String,
    /// The last pass, on the daemon's clock.
    pub heartbeat: String,
    /// Seconds since the Unix epoch of the heartbeat, on the wall clock.
    pub heartbeat_unix: u64,
    pub passes: u64,
    /// Set by `hall daemon stop`; the daemon exits at its next pass.
    pub stop: bool,
    /// A paused reason per repo (the daily budget).
    #[serde(default)]
    pub paused: Vec<String>,
    /// The programs and `PATH` it runs with, resolved at its start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment: Option<Environment>,
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
    let d = dir()?;
    std::fs::create_dir_all(&d).at(&d)?;
    let bytes = serde_json::to_vec_pretty(s).map_err(HallError::internal)?;
    crate::journal::file::write_atomic(&path, &bytes).at(&path)
}

/// Whether a daemon is running: its process lives and its heartbeat is recent.
pub fn alive(s: &DaemonState) -> bool {
    !crate::platform::process_gone(s.pid)
        && crate::clock::wall_secs().saturating_sub(s.heartbeat_unix) < 120
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

impl LogLine {
    /// The line as a person reads it: time, repository, item, role, what was done.
    pub fn text(&self) -> String {
        let repo = Path::new(&self.repo)
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_else(|| self.repo.clone());
        let item = self.item.map(|i| format!(" {i}")).unwrap_or_default();
        let state = self.state.map(|s| format!(" ({s})")).unwrap_or_default();
        format!(
            "{}  {repo}{item}  {}{state}: {}",
            self.t, self.role, self.did
        )
    }
}

/// A repository and an item number in it (0 stands for the repository's own job, the
/// resume pass).
type Key = (PathBuf, u32);

/// What a finished job hands back: its key, its result, and the role that ran it.
type Done = (Key, Result<Option<Step>>, String);

fn open(repo: &Path) -> Result<Hall> {
    Hall::open(Repo::discover(repo)?)
}

/// The scheduler's whole state: what runs, what was found idle, what it logged.
pub struct Scheduler {
    clock: Clock,
    /// The lease holder name: `daemon:<pid>`.
    holder: String,
    pid: u32,
    /// The repositories it was told to run; the registry's when `None`.
    repos: Option<Vec<PathBuf>>,
    until: Until,
    tick: Duration,
    /// The user data directory it runs under; when it goes, the daemon stops.
    data_dir: Option<PathBuf>,
    jobs: tokio::task::JoinSet<Done>,
    running: HashSet<Key>,
    /// Items whose last step changed nothing, by their event count then: not tried
    /// again until something changes them.
    idle_at: HashMap<Key, u64>,
    /// Each running item's event count when its step started.
    before: HashMap<Key, u64>,
    state: DaemonState,
    log: Vec<LogLine>,
    /// When each repository's Delivery watch may run next (the clock's time).
    next_watch: HashMap<PathBuf, std::time::SystemTime>,
    /// When each repository's merger may run next (the wall clock: `HALL_NOW` may
    /// stand still).
    next_merge: HashMap<PathBuf, std::time::Instant>,
    /// When each repository's base may be fetched from origin again (the wall clock).
    next_fetch: HashMap<PathBuf, std::time::Instant>,
    /// How long the watch of a repository waits after GitHub's rate limit, doubled on
    /// each refusal in a row.
    backoff: HashMap<PathBuf, Duration>,
    /// What was said once and is not said again (a kept worktree, a streak of gh errors).
    said: HashSet<(PathBuf, String)>,
    /// Called with each repository after its pass: keeps the caches the commands layer
    /// owns (the status board) current with what the loop changed.
    after_pass: Option<fn(&Hall)>,
}

impl Scheduler {
    pub fn new(repos: Option<Vec<PathBuf>>, until: Until, tick: Duration) -> Scheduler {
        let clock = Clock::from_env();
        let pid = std::process::id();
        Scheduler {
            clock,
            holder: format!("daemon:{pid}"),
            pid,
            repos,
            until,
            tick,
            data_dir: crate::platform::data_dir(),
            jobs: tokio::task::JoinSet::new(),
            running: HashSet::new(),
            idle_at: HashMap::new(),
            before: HashMap::new(),
            state: DaemonState {
                pid,
                started: clock.stamp(),
                ..DaemonState::default()
            },
            log: Vec::new(),
            next_watch: HashMap::new(),
            next_merge: HashMap::new(),
            next_fetch: HashMap::new(),
            backoff: HashMap::new(),
            said: HashSet::new(),
            after_pass: None,
        }
    }

    /// Calls `f` with each repository after its pass (and once more at the end).
    pub fn after_pass(mut self, f: fn(&Hall)) -> Scheduler {
        self.after_pass = Some(f);
        self
    }

    /// Says `did` unless it was said before for `repo`.
    fn say_once(&mut self, repo: &Path, item: Option<ItemId>, role: &str, did: String) {
        if self.said.insert((repo.to_path_buf(), did.clone())) {
            self.say(&repo.display().to_string(), item, role, did);
        }
    }

    /// The Delivery office's turn for one repository, when its interval has passed: the
    /// watch of its shipped PRs, then the sweeper.
    fn deliver(&mut self, repo: &Path, hall: &Hall, ctx: &Ctx) -> Result<()> {
        let now = self.clock.now();
        if self.next_watch.get(repo).is_some_and(|at| now < *at) {
            return Ok(());
        }
        let every = crate::clock::parse_duration(&hall.config.delivery.watch_every)
            .unwrap_or(Duration::from_secs(60));
        self.next_watch.insert(repo.to_path_buf(), now + every);
        match office::delivery::watch(hall, ctx) {
            Ok(watched) => {
                self.backoff.remove(repo);
                self.said
                    .retain(|(r, d)| r != repo || !d.starts_with("delivery watch"));
                for did in watched.did {
                    self.say(&repo.display().to_string(), None, "delivery", did);
                }
            }
            Err(office::delivery::WatchError::Hall(e)) => return Err(e),
            Err(office::delivery::WatchError::RateLimited(m)) => {
                let wait = self
                    .backoff
                    .get(repo)
                    .map_or(Duration::from_secs(15 * 60), |d| {
                        (*d * 2).min(Duration::from_secs(3600))
                    });
                self.backoff.insert(repo.to_path_buf(), wait);
                self.next_watch
                    .insert(repo.to_path_buf(), now + wait.max(every));
                let did = format!(
                    "delivery watch: GitHub's rate limit is spent; next try in {}",
                    humantime::format_duration(wait)
                );
                self.say(
                    &repo.display().to_string(),
                    None,
                    "delivery",
                    format!("{did} ({m})"),
                );
            }
            Err(e @ office::delivery::WatchError::Gh(_)) => {
                let did = format!("delivery watch paused until GitHub answers: {e}");
                self.say_once(repo, None, "delivery", did);
            }
        }
        let swept = office::delivery::sweep(hall, ctx)?;
        for did in swept.removed {
            self.say(&repo.display().to_string(), None, "sweeper", did);
        }
        for (id, why) in swept.kept {
            self.say_once(repo, Some(id), "sweeper", why);
        }
        Ok(())
    }

    /// The merger's turn for one repository (`[merge] mode = "auto"`), at most once
    /// every [`office::merger::EVERY`]; after the rate limit, no sooner than the
    /// watch's next try.
    fn merge_turn(&mut self, repo: &Path, hall: &Hall, ctx: &Ctx) -> Result<()> {
        if hall.config.merge.mode != crate::config::MergeMode::Auto {
            return Ok(());
        }
        let now = std::time::Instant::now();
        if self.next_merge.get(repo).is_some_and(|at| now < *at) || self.backoff.contains_key(repo)
        {
            return Ok(());
        }
        self.next_merge
            .insert(repo.to_path_buf(), now + office::merger::EVERY);
        let shown = repo.display().to_string();
        match office::merger::pass(hall, ctx) {
            Ok(passed) => {
                self.said
                    .retain(|(r, d)| r != repo || !d.starts_with("merger paused"));
                for did in passed.did {
                    self.say(&shown, None, "merger", did);
                }
            }
            Err(office::delivery::WatchError::Hall(e)) => {
                let did = format!("merger paused: {} ({})", e.message, e.code.as_str());
                self.say_once(repo, None, "merger", did);
            }
            Err(office::delivery::WatchError::RateLimited(m)) => {
                // The watch's backoff covers the repository; the merger waits as long.
                let wait = Duration::from_secs(15 * 60);
                self.next_merge.insert(repo.to_path_buf(), now + wait);
                let did = format!(
                    "merger: GitHub's rate limit is spent; next try in {} ({m})",
                    humantime::format_duration(wait)
                );
                self.say(&shown, None, "merger", did);
            }
            Err(e) => {
                let did = format!("merger paused until GitHub answers: {e}");
                self.say_once(repo, None, "merger", did);
            }
        }
        Ok(())
    }

    /// Writes the state file, never making the data directory again: a daemon whose
    /// directory was deleted under it must notice, not recreate it.
    fn save(&self) {
        if let (Ok(path), Ok(bytes)) = (state_file(), serde_json::to_vec_pretty(&self.state))
            && path.parent().is_some_and(Path::is_dir)
        {
            let _ = crate::journal::file::write_atomic(&path, &bytes);
        }
    }

    fn emit(&mut self, line: LogLine) {
        // The live log goes to stderr, so stdout stays the command's one JSON reply: a
        // line of text for a person on a terminal, JSON for a log file or a program.
        use std::io::IsTerminal;
        if std::io::stderr().is_terminal() {
            eprintln!("{}", line.text());
        } else {
            eprintln!(
                "{}",
                serde_json::to_string(&line).unwrap_or_else(|_| line.did.clone())
            );
        }
        self.log.push(line);
    }

    fn say(&mut self, repo: &str, item: Option<ItemId>, role: &str, did: String) {
        let line = LogLine {
            t: self.clock.stamp(),
            repo: repo.to_string(),
            item,
            role: role.to_string(),
            did,
            state: None,
        };
        self.emit(line);
    }

    /// Why the daemon should stop by itself, when it should: its data directory (the
    /// state file, the registry) or every repository it was told to run is gone.
    fn gone(&self) -> Option<String> {
        if let Some(d) = &self.data_dir
            && !d.is_dir()
        {
            return Some(format!(
                "the data directory {} is gone; stopping",
                d.display()
            ));
        }
        match &self.repos {
            Some(list) if !list.is_empty() && list.iter().all(|r| !r.exists()) => Some(format!(
                "{} is gone; stopping",
                list.iter()
                    .map(|r| r.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
            _ => None,
        }
    }

    /// Runs passes until stopped (or idle), then waits for the jobs still running.
    pub async fn run(mut self) -> Vec<LogLine> {
        loop {
            if let Some(why) = self.gone() {
                self.say("", None, "daemon", why);
                break;
            }
            let on_disk = read_state().unwrap_or_default();
            if on_disk.stop && on_disk.pid == self.pid {
                break;
            }
            self.state.passes += 1;
            self.state.heartbeat = self.clock.stamp();
            self.state.heartbeat_unix = crate::clock::wall_secs();
            self.state.paused.clear();
            let mut started = 0;
            let list = self
                .repos
                .clone()
                .unwrap_or_else(crate::hall::registry::registered);
            for repo in &list {
                if !repo.exists() {
                    continue;
                }
                match self.pass(repo) {
                    Ok((n, paused)) => {
                        started += n;
                        if let Some(p) = paused {
                            self.state.paused.push(format!("{}: {p}", repo.display()));
                        }
                    }
                    Err(e) => {
                        let did = format!("skipped: {}", e.message);
                        self.say(&repo.display().to_string(), None, "daemon", did);
                    }
                }
            }
            self.save();
            if self.until == Until::Idle && started == 0 && self.jobs.is_empty() {
                break;
            }
            tokio::select! {
                Some(done) = self.jobs.join_next() => {
                    if let Ok(done) = done {
                        self.finished(done);
                    }
                }
                _ = tick_or_stop(self.tick, self.pid) => {}
                _ = tokio::signal::ctrl_c() => break,
            }
        }
        if !self.jobs.is_empty() {
            // A run already paid for is let finish (its lease stays true); say why the
            // daemon is still here.
            let did = format!(
                "stopping: waiting for {} running job(s) to finish",
                self.jobs.len()
            );
            self.say("", None, "daemon", did);
        }
        while let Some(done) = self.jobs.join_next().await {
            if let Ok(((repo, num), Ok(Some(step)), role)) = done {
                let line = LogLine {
                    t: self.clock.stamp(),
                    repo: repo.display().to_string(),
                    item: item_of(num),
                    role,
                    did: step.did,
                    state: item_of(num).map(|_| step.after.state),
                };
                self.emit(line);
            }
        }
        // The last jobs' changes, which no pass followed.
        if let Some(f) = self.after_pass {
            let list = self
                .repos
                .clone()
                .unwrap_or_else(crate::hall::registry::registered);
            for hall in list.iter().filter_map(|r| open(r).ok()) {
                f(&hall);
            }
        }
        let mut end = read_state().unwrap_or_else(|| self.state.clone());
        end.heartbeat_unix = 0;
        self.state = end;
        self.save();
        self.log
    }

    /// Logs a finished job and remembers whether it changed its item.
    fn finished(&mut self, (key, result, role): Done) {
        self.running.remove(&key);
        let (repo, num) = key.clone();
        let t = self.clock.stamp();
        match result {
            Ok(Some(step)) => {
                let events = step.after.events;
                self.emit(LogLine {
                    t,
                    repo: repo.display().to_string(),
                    item: item_of(num),
                    role,
                    did: step.did,
                    state: item_of(num).map(|_| step.after.state),
                });
                // A step that wrote nothing (a role's day cap, a pause) is not retried
                // until something changes the item.
                if self.before.get(&key) == Some(&events) {
                    self.idle_at.insert(key, events);
                } else {
                    self.idle_at.remove(&key);
                }
            }
            Ok(None) => {
                if let Some(n) = self.before.get(&key) {
                    self.idle_at.insert(key, *n);
                }
            }
            Err(e) => {
                self.emit(LogLine {
                    t,
                    repo: repo.display().to_string(),
                    item: item_of(num),
                    role,
                    did: format!("failed: {} ({})", e.message, e.code.as_str()),
                    state: None,
                });
                if let Ok(hall) = open(&repo)
                    && let Ok(c) = hall.journal.read_item(ItemId(num))
                {
                    self.idle_at.insert(key, c.events.len() as u64);
                }
            }
        }
    }

    /// One pass over one repository: returns how many workers it started, and the
    /// pause reason when the daily budget stops the model workers.
    fn pass(&mut self, repo: &Path) -> Result<(usize, Option<String>)> {
        self.refresh_base(repo);
        let hall = open(repo)?;
        let ctx = Ctx::at(hall.repo.main_root.clone(), self.clock, "daemon");
        lease::renew(hall.journal.root(), &self.holder, lease::ttl())?;
        let shown = repo.display().to_string();
        for did in office::watchman::patrol(&hall, &ctx)? {
            self.say(&shown, None, "watchman", did);
        }
        self.deliver(repo, &hall, &ctx)?;
        self.merge_turn(repo, &hall, &ctx)?;
        let paused = office::budget::paused(&hall, &ctx)?;
        let mut started = 0;
        // Resumes and the librarian run models, so they run on the blocking pool like
        // any step, one job of each per repository at a time, and never while the budget
        // pauses the loop.
        if paused.is_none() && office::resume::pending(&hall, &ctx)? {
            started += self.spawn_repo_job(repo, 0, ("resume", "daemon"), |hall, ctx| {
                office::resume::run(hall, ctx)
            });
        }
        if paused.is_none() && office::librarian::due(&hall, &ctx)? {
            started +=
                self.spawn_repo_job(repo, u32::MAX, ("librarian", "librarian"), |hall, ctx| {
                    Ok(office::librarian::pass(hall, ctx)?
                        .into_iter()
                        .map(|(item, d)| match item {
                            Some(id) => format!("{id}: {d}"),
                            None => d,
                        })
                        .collect())
                });
        }
        // The notify worker sends over the network, so it too runs on the pool; a
        // `[notify]` that can't be read is said once and sends nothing.
        match office::notify::due(&hall, &ctx) {
            Ok(true) => {
                started +=
                    self.spawn_repo_job(repo, NOTIFY_JOB, ("notify", "notify"), |hall, ctx| {
                        office::notify::pass(hall, ctx, Vec::new(), false)
                    });
            }
            Ok(false) => {}
            Err(e) => self.say_once(repo, None, "notify", format!("not sending: {}", e.message)),
        }
        let index = hall.index()?;
        for row in index.items(false)? {
            let key: Key = (repo.to_path_buf(), row.id.0);
            if self.running.contains(&key) {
                continue;
            }
            let Some(item) = index.item(row.id)? else {
                continue;
            };
            let Some(phase) = office::work_for(&item) else {
                continue;
            };
            if paused.is_some() && phase.runs_a_model() {
                continue;
            }
            if self.idle_at.get(&key) == Some(&item.events) {
                continue;
            }
            // Claim before spawning, so the next pass sees the lease. The claim refuses
            // an item someone else holds and a phase at its `[parallel]` limit.
            match office::claim(&hall, row.id, phase, &self.holder, self.pid)? {
                lease::Claim::Taken(_) => {}
                _ => continue,
            }
            self.running.insert(key.clone());
            self.before.insert(key.clone(), item.events);
            self.spawn_step(repo, key, row.id, phase);
            started += 1;
        }
        if let Some(f) = self.after_pass {
            f(&hall);
        }
        Ok((started, paused))
    }

    /// Fetches the repository's base from origin before its pass reads the rules, so a
    /// gate added upstream gates the next step even when the local branch is behind:
    /// once a pass, no more often than every [`FETCH_EVERY`], within
    /// [`crate::hall::rules::FETCH_LIMIT`]. A failure is said once (and again after a
    /// success), and the rules then come from what the clone has.
    fn refresh_base(&mut self, repo: &Path) {
        let now = std::time::Instant::now();
        if self.next_fetch.get(repo).is_some_and(|at| now < *at) {
            return;
        }
        self.next_fetch
            .insert(repo.to_path_buf(), now + FETCH_EVERY);
        let Ok(found) = Repo::discover(repo) else {
            return;
        };
        const SAID: &str = "fetching the base from origin failed";
        let fetched = crate::hall::rules::fetch_base(&found);
        let base = crate::hall::rules::base_name(&found);
        let tip = crate::hall::rules::base_tip(&found, &base);
        let from = tip
            .as_ref()
            .map(|t| format!("{} at {}", t.reference, crate::item::sha::short(&t.sha)))
            .unwrap_or_else(|| "nothing yet".into());
        match fetched {
            Ok(_) => self.said.retain(|(r, d)| r != repo || !d.starts_with(SAID)),
            Err(e)
                if !self
                    .said
                    .iter()
                    .any(|(r, d)| r == repo && d.starts_with(SAID)) =>
            {
                let did = format!("{SAID} ({e}); the rules come from {from}");
                self.say_once(repo, None, "daemon", did);
            }
            Err(_) => {}
        }
        if let Some(theirs) = tip.as_ref().and_then(|t| t.diverged.as_ref()) {
            let did = format!(
                "{base} and origin/{base} ({}) have diverged; the rules come from {from}, the local one",
                crate::item::sha::short(theirs)
            );
            self.say_once(repo, None, "daemon", did);
        }
    }

    /// Starts a repository-wide job (`num` 0 for the resumes, `u32::MAX` for the
    /// librarian, [`NOTIFY_JOB`]) unless one is running, as `role` with `actor` in the journal: `work`
    /// says what it did, a line each. Returns how many jobs it started.
    fn spawn_repo_job(
        &mut self,
        repo: &Path,
        num: u32,
        (role, actor): (&'static str, &'static str),
        work: fn(&Hall, &Ctx) -> Result<Vec<String>>,
    ) -> usize {
        let key: Key = (repo.to_path_buf(), num);
        if !self.running.insert(key.clone()) {
            return 0;
        }
        let repo = repo.to_path_buf();
        let clock = self.clock;
        self.jobs.spawn_blocking(move || {
            let result = open(&repo).and_then(|hall| {
                let ctx = Ctx::at(hall.repo.main_root.clone(), clock, actor);
                let did = work(&hall, &ctx)?;
                Ok((!did.is_empty()).then(|| Step {
                    did: did.join("; "),
                    after: Item::default(),
                }))
            });
            (key, result, role.to_string())
        });
        1
    }

    fn spawn_step(&mut self, repo: &Path, key: Key, id: ItemId, phase: Phase) {
        let repo = repo.to_path_buf();
        let holder = self.holder.clone();
        let clock = self.clock;
        let role = phase.role();
        self.jobs.spawn_blocking(move || {
            let result = open(&repo).and_then(|hall| {
                let r = office::step(&hall, clock, id, role);
                let _ = lease::release(hall.journal.root(), id, &holder);
                r
            });
            (key, result, role.as_str().to_string())
        });
    }
}

/// How often a sleeping daemon looks for a stop request: `hall daemon stop` takes
/// effect within this, not at the end of a long tick.
const STOP_POLL: Duration = Duration::from_millis(200);

/// Sleeps one tick, waking early when `hall daemon stop` has asked this daemon to stop.
async fn tick_or_stop(tick: Duration, pid: u32) {
    let deadline = tokio::time::Instant::now() + tick;
    loop {
        let now = tokio::time::Instant::now();
        if now >= deadline {
            return;
        }
        tokio::time::sleep((deadline - now).min(STOP_POLL)).await;
        if read_state().is_some_and(|s| s.stop && s.pid == pid) {
            return;
        }
    }
}

/// How often the daemon fetches a repository's base from origin at most.
const FETCH_EVERY: Duration = Duration::from_secs(30);

/// The notify worker's job key.
const NOTIFY_JOB: u32 = u32::MAX - 1;

/// The item a job's key names: none for the repository-wide jobs (the resumes, key 0,
/// the librarian, key `u32::MAX`, and the notify worker).
fn item_of(num: u32) -> Option<ItemId> {
    (num != 0 && num != u32::MAX && num != NOTIFY_JOB).then_some(ItemId(num))
}

/// Runs the daemon loop in this process, for the person `_you`: its programs and `PATH`
/// are resolved and pinned first (see [`environment`]); `after_pass` is called with each
/// repository after its pass.
pub fn run(
    _you: &crate::hall::person::Person,
    repos: Option<Vec<PathBuf>>,
    until: Until,
    tick: Duration,
    after_pass: fn(&Hall),
) -> Result<Vec<LogLine>> {
    let env = environment::for_repos(repos.as_deref())?;
    if let Some(pinned) = crate::platform::pinned() {
        // Pinned once per process; a second run in the same process keeps the first.
        if *pinned != env.pinned() {
            return Err(HallError::internal(
                "this process already runs the loop with other programs",
            ));
        }
    } else {
        let _ = crate::platform::pin(env.pinned());
    }
    for line in &env.refused {
        eprintln!("hall daemon: PATH entry left out: {line}");
    }
    let mut scheduler = Scheduler::new(repos, until, tick).after_pass(after_pass);
    scheduler.state.environment = Some(env);
    write_state(&scheduler.state)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| HallError::internal(format!("the daemon's runtime can't start: {e}")))?;
    Ok(runtime.block_on(scheduler.run()))
}
