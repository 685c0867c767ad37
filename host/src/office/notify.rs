//! The notify worker: tells a person of each new escalation in the inbox, once per
//! channel, reminds them while it waits, holds the phone back in quiet hours and
//! gathers what it held into the digest.
//!
//! What was told is the journal's: a `notified` line per entry (its key and stamp) and
//! channel, appended and synced right after the channel took the message. A restart
//! reads them back, so nothing is sent twice and nothing is lost, save one window: a
//! process killed after a channel took a message and before its line was synced sends
//! that message again. Delivery is therefore at least once, and every delivery of one
//! message carries the same key (`X-Hall-Key` on the phone channels) for a receiver to
//! drop the repeat by. One worker per repository at a time: its lease is an exclusive
//! lock on `leases/notify.lock`, which the system drops when the process ends.
//!
//! Channels that fail are tried again at later passes, with a growing pause; the third
//! failure in a row becomes one `notify_failed` notice, cleared by the channel's next
//! delivery. A rate limit is waited out within the pass when it is short, else at the
//! first pass after it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use crate::channels::{self, Message, Outcome, Target};
use crate::config::{Channel, NOTIFIED_KINDS, Notify};
use crate::error::{HallError, IoContext, Result};
use crate::hall::inbox::Entry;
use crate::hall::{Ctx, Hall};
use crate::index::NotifiedRow;
use crate::item::EventKind;

/// How long a pass waits out rate limits on one channel before leaving the rest for
/// the next pass (`HALL_NOTIFY_PATIENCE` overrides, e.g. `2s`).
fn patience() -> Duration {
    std::env::var("HALL_NOTIFY_PATIENCE")
        .ok()
        .and_then(|v| crate::clock::parse_duration(&v).ok())
        .unwrap_or(Duration::from_secs(30))
}

/// Failures in a row that make a `notify_failed` notice.
const FAILURES_NOTICED: u32 = 3;

/// The settings in force: the user's `[notify]` over the repository's, key by key.
/// `None` when neither has one: nothing is sent.
pub fn settings(hall: &Hall) -> Result<Option<Notify>> {
    let user = crate::platform::config_dir()
        .map(|d| crate::config::notify::user_table(&d))
        .transpose()?
        .flatten();
    let repo = hall.config.notify.as_ref();
    if user.is_none() && repo.is_none() {
        return Ok(None);
    }
    let path = match &user {
        Some((_, p)) => p.clone(),
        None => crate::config::Config::path(&hall.repo.main_root),
    };
    merge(repo, user.as_ref().map(|(t, _)| t))
        .map(Some)
        .map_err(|message| crate::config::ConfigError { path, message }.into())
}

/// The repository's `[notify]` with the person's table over it, key by key, checked as
/// the settings in force.
fn merge(repo: Option<&Notify>, user: Option<&toml::Table>) -> std::result::Result<Notify, String> {
    let mut merged = match repo {
        Some(r) => toml::Table::try_from(r).map_err(|e| e.to_string())?,
        None => toml::Table::new(),
    };
    if let Some(table) = user {
        deep_merge(&mut merged, table);
    }
    let notify: Notify = toml::Value::Table(merged)
        .try_into()
        .map_err(|e: toml::de::Error| e.message().to_string())?;
    notify.validate(false).map_err(|(_, msg)| msg)?;
    Ok(notify)
}

fn deep_merge(into: &mut toml::Table, from: &toml::Table) {
    for (k, v) in from {
        match (into.get_mut(k), v) {
            (Some(toml::Value::Table(a)), toml::Value::Table(b)) => deep_merge(a, b),
            _ => {
                into.insert(k.clone(), v.clone());
            }
        }
    }
}

/// The ntfy topic, made and written into the user's config.toml on first use: a random
/// one, since anyone who knows a topic can read it.
pub fn ensure_topic(notify: &mut Notify) -> Result<()> {
    if !notify.channels.contains(&Channel::Ntfy) || notify.ntfy.topic.is_some() {
        return Ok(());
    }
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| HallError::internal(format!("randomness: {e}")))?;
    let topic = format!(
        "hall-{}",
        bytes.iter().map(|b| format!("{b:02x}")).collect::<String>()
    );
    let dir = crate::platform::config_dir()
        .ok_or_else(|| HallError::internal("no user configuration directory"))?;
    let path = dir.join("config.toml");
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e).at(&path),
    };
    let text = crate::config::notify::with_topic(&text, &topic).map_err(|message| {
        crate::config::ConfigError {
            path: path.clone(),
            message,
        }
    })?;
    // The file may hold tokens: the new one keeps the old one's permissions.
    let kept = std::fs::metadata(&path).ok().map(|m| m.permissions());
    std::fs::create_dir_all(&dir).at(&dir)?;
    crate::journal::file::write_atomic(&path, text.as_bytes()).at(&path)?;
    if let Some(p) = kept {
        std::fs::set_permissions(&path, p).at(&path)?;
    }
    notify.ntfy.topic = Some(topic);
    Ok(())
}

/// What a pass remembers between passes that the journal doesn't: failures in a row
/// and when each channel may be tried again (wall clock, seconds since the epoch).
#[derive(Debug, Default, Serialize, Deserialize)]
struct Backoff {
    #[serde(default)]
    failures: BTreeMap<String, u32>,
    #[serde(default)]
    not_before: BTreeMap<String, u64>,
}

impl Backoff {
    fn path(root: &Path) -> std::path::PathBuf {
        root.join("state").join("notify.json")
    }

    fn load(root: &Path) -> Backoff {
        std::fs::read(Backoff::path(root))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default()
    }

    fn save(&self, root: &Path) -> Result<()> {
        let path = Backoff::path(root);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).at(dir)?;
        }
        let bytes = serde_json::to_vec_pretty(self).map_err(HallError::internal)?;
        crate::journal::file::write_atomic(&path, &bytes).at(&path)
    }
}

/// The local time of day (minutes after midnight) and date at `t` in `tz`.
fn local(t: SystemTime, tz: &jiff::tz::TimeZone) -> (u32, String) {
    let ts = jiff::Timestamp::try_from(t).unwrap_or(jiff::Timestamp::UNIX_EPOCH);
    let z = ts.to_zoned_datetime(tz.clone());
    (
        z.hour() as u32 * 60 + z.minute() as u32,
        z.date().to_string(),
    )
}

fn in_quiet(minute: u32, (start, end): (u32, u32)) -> bool {
    if start < end {
        (start..end).contains(&minute)
    } else {
        minute >= start || minute < end
    }
}

/// The repository's name as a message shows it.
fn repo_name(hall: &Hall) -> String {
    hall.repo.name()
}

/// What a message says of `entry`: built from its kind, its item and its command,
/// never from free text the loop's agents wrote, save a question and its options.
pub fn message(entry: &Entry, repo: &str, reminder: u32) -> Message {
    let id = entry
        .item
        .map(|i| i.to_string())
        .unwrap_or_else(|| "the repository".into());
    let what = match entry.kind.as_str() {
        "question" => format!("{id} asks"),
        "escalated" => format!("{id} escalated"),
        "ready?" => format!("{id} is ready?"),
        "daemon stopped" => "the loop stopped".into(),
        "base_red" => "the base is red".into(),
        "ci_down" => "CI is down".into(),
        kind => format!("{id} is held ({kind})"),
    };
    let body = match entry.kind.as_str() {
        "question" => entry.text.clone(),
        "escalated" => format!("{id} was rejected too often; you decide."),
        "ready?" => format!("{id} is proposed as ready; merge it or pull it back."),
        "budget" => format!("{id} spent its token budget."),
        "run_failed" => format!("{id}: two runs failed in a row."),
        "checks" => format!("{id}: its checks failed too often in a row."),
        "ship_failed" => format!("{id} could not ship."),
        "conflict" => format!("{id}: a rebase needs you."),
        "feedback" => format!("{id}: PR comments need you."),
        "ci_failed" => format!("{id}: CI still fails after the fixes."),
        "merge_failed" => format!("{id}: the merge command failed."),
        "lit" => format!("{id}'s PR touches a lit path: merging it is yours."),
        "base_red" => {
            let base = entry.key.split(':').nth(1).unwrap_or("the base");
            format!("The tip of {base} failed its checks; its merge queue waits.")
        }
        "ci_down" => "CI never started on the open PRs (runners, or billing).".into(),
        "daemon stopped" => "The daemon has no heartbeat; nothing moves items.".into(),
        kind => format!("{id}: {kind}."),
    };
    let body = if reminder > 0 {
        format!("Reminder {reminder}: {body}")
    } else {
        body
    };
    Message {
        title: format!("hall · {repo}: {what}"),
        body,
        answer: entry.next.first().cloned().unwrap_or_default(),
        key: format!("{}@{}#{reminder}", entry.key, entry.since),
    }
}

/// One thing a pass decided to do.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// Send `entry` on `channel` (reminder 0 is the first message).
    Send {
        entry: Entry,
        channel: Channel,
        reminder: u32,
    },
    /// Quiet hours: keep it for the digest.
    Defer { entry: Entry, channel: Channel },
    /// The digest on `channel`: the deferred rows it carries, the entries still waiting,
    /// and, for the morning digest, its date.
    Digest {
        channel: Channel,
        deferred: Vec<NotifiedRow>,
        waiting: Vec<Entry>,
        date: Option<String>,
    },
}

/// What to do at `now` for `entries` (the inbox, dismissed ones included), given what
/// was recorded; quiet hours and the digest are read in `tz`. Pure: the pass carries
/// it out.
pub fn plan(
    notify: &Notify,
    entries: &[Entry],
    records: &[NotifiedRow],
    now: SystemTime,
    tz: &jiff::tz::TimeZone,
) -> Vec<Action> {
    let (minute, date) = local(now, tz);
    let quiet = notify
        .quiet
        .as_deref()
        .and_then(|q| crate::config::notify::parse_quiet(q).ok())
        .is_some_and(|q| in_quiet(minute, q));
    let remind = notify.remind_every();
    let open: Vec<&Entry> = entries
        .iter()
        .filter(|e| !e.dismissed && NOTIFIED_KINDS.contains(&e.kind.as_str()))
        .collect();
    let mut out = Vec::new();
    for e in &open {
        for &channel in notify.routed(&e.kind) {
            let prior: Vec<&NotifiedRow> = records
                .iter()
                .filter(|r| r.key == e.key && r.stamp == e.since && r.channel == channel.as_str())
                .collect();
            let held = channel.phone() && quiet;
            if prior.is_empty() {
                out.push(if held {
                    Action::Defer {
                        entry: (*e).clone(),
                        channel,
                    }
                } else {
                    Action::Send {
                        entry: (*e).clone(),
                        channel,
                        reminder: 0,
                    }
                });
                continue;
            }
            let told: Vec<&&NotifiedRow> = prior.iter().filter(|r| r.how != "deferred").collect();
            let (Some(every), Some(last)) = (remind, told.iter().map(|r| r.t.as_str()).max())
            else {
                continue;
            };
            let due = crate::clock::parse(last)
                .and_then(|t| now.duration_since(t).ok())
                .is_some_and(|since| since >= every);
            if due && !held {
                let n = told.iter().map(|r| r.reminder).max().unwrap_or(0) + 1;
                out.push(Action::Send {
                    entry: (*e).clone(),
                    channel,
                    reminder: n,
                });
            }
        }
    }
    if quiet {
        return out;
    }
    let digest_at = notify
        .digest
        .as_deref()
        .and_then(|d| crate::config::notify::parse_clock(d).ok());
    for &channel in notify.channels.iter().filter(|c| c.phone()) {
        let ch = channel.as_str();
        let digested: BTreeSet<(&str, &str)> = records
            .iter()
            .filter(|r| r.channel == ch && r.how == "digest")
            .map(|r| (r.key.as_str(), r.stamp.as_str()))
            .collect();
        let deferred: Vec<NotifiedRow> = records
            .iter()
            .filter(|r| r.channel == ch && r.how == "deferred")
            .filter(|r| !digested.contains(&(r.key.as_str(), r.stamp.as_str())))
            .cloned()
            .collect();
        let morning_key = format!("digest:{date}");
        let morning = digest_at.is_some_and(|at| minute >= at)
            && !records
                .iter()
                .any(|r| r.channel == ch && r.key == morning_key);
        // With a digest time, what quiet hours held waits for it; without one, it goes
        // out as soon as the quiet ends.
        if morning || (digest_at.is_none() && !deferred.is_empty()) {
            let waiting = if morning {
                open.iter()
                    .filter(|e| notify.routed(&e.kind).contains(&channel))
                    .filter(|e| {
                        !deferred
                            .iter()
                            .any(|d| d.key == e.key && d.stamp == e.since)
                    })
                    .map(|e| (*e).clone())
                    .collect()
            } else {
                Vec::new()
            };
            out.push(Action::Digest {
                channel,
                deferred,
                waiting,
                date: morning.then(|| date.clone()),
            });
        }
    }
    out
}

/// The digest's message.
fn digest_message(repo: &str, deferred: &[NotifiedRow], waiting: &[Entry], key: &str) -> Message {
    let mut lines = Vec::new();
    if !deferred.is_empty() {
        lines.push("Held back in quiet hours:".to_string());
        lines.extend(deferred.iter().map(|d| format!("• {}", d.text)));
    }
    if !waiting.is_empty() {
        lines.push("Still waiting:".to_string());
        lines.extend(waiting.iter().map(|e| {
            let m = message(e, repo, 0);
            format!("• {} — {}", m.body, m.answer)
        }));
    }
    if lines.is_empty() {
        lines.push("Nothing waits for you.".into());
    }
    Message {
        title: format!("hall · {repo}: digest"),
        body: lines.join("\n"),
        answer: "hall inbox".into(),
        key: key.to_string(),
    }
}

/// Whether a pass has anything to do now: settings in force, and an action on a channel
/// that isn't resting. The daemon asks before it starts the worker.
pub fn due(hall: &Hall, ctx: &Ctx) -> Result<bool> {
    let Some(notify) = settings(hall)? else {
        return Ok(false);
    };
    let index = hall.index()?;
    let entries = crate::hall::inbox::entries(&index, Vec::new())?;
    let actions = plan(
        &notify,
        &entries,
        &index.notified()?,
        ctx.now,
        &jiff::tz::TimeZone::system(),
    );
    let backoff = Backoff::load(hall.journal.root());
    let wall = crate::clock::wall_secs();
    let resting = |c: &Channel| {
        backoff
            .not_before
            .get(c.as_str())
            .is_some_and(|t| *t > wall)
    };
    Ok(actions.iter().any(|a| match a {
        Action::Defer { .. } => true,
        Action::Send { channel, .. } | Action::Digest { channel, .. } => !resting(channel),
    }))
}

/// The notify worker's lease on the repository, or `None` while another process has it.
fn lease(hall: &Hall) -> Result<Option<std::fs::File>> {
    super::lease::exclusive(hall.journal.root(), "notify")
}

/// One pass: carries out [`plan`] for the repository. `extra` are entries only the
/// caller knows of (a stopped daemon). Returns what it did, a line each.
pub fn pass(hall: &Hall, ctx: &Ctx, extra: Vec<Entry>, flush: bool) -> Result<Vec<String>> {
    let Some(mut notify) = settings(hall)? else {
        return Ok(Vec::new());
    };
    let Some(_lease) = lease(hall)? else {
        return Ok(vec!["another notify worker has this repository".into()]);
    };
    let office = ctx.acting_as("notify");
    let root = hall.journal.root().to_path_buf();
    let index = hall.index()?;
    let entries = crate::hall::inbox::entries(&index, extra)?;
    let records = index.notified()?;
    let actions = plan(
        &notify,
        &entries,
        &records,
        ctx.now,
        &jiff::tz::TimeZone::system(),
    );
    if actions.is_empty() {
        return Ok(Vec::new());
    }
    ensure_topic(&mut notify)?;
    let repo = repo_name(hall);
    let mut backoff = Backoff::load(&root);
    let wall = crate::clock::wall_secs();
    // Channels resting (a rate limit, failures) or failed this pass are left alone.
    let mut resting: BTreeSet<Channel> = Channel::ALL
        .into_iter()
        .filter(|c| {
            !flush
                && backoff
                    .not_before
                    .get(c.as_str())
                    .is_some_and(|t| *t > wall)
        })
        .collect();
    let mut did = Vec::new();
    let record = |kind: EventKind| -> Result<()> {
        hall.journal
            .append_repo(&[office.event(None, kind)])
            .map_err(Into::into)
    };
    for action in actions {
        match action {
            Action::Defer { entry, channel } => {
                let text = message(&entry, &repo, 0);
                record(EventKind::Notified {
                    key: entry.key.clone(),
                    stamp: entry.since.clone(),
                    kind: entry.kind.clone(),
                    channel: channel.as_str().into(),
                    how: "deferred".into(),
                    reminder: 0,
                    text: format!("{} — {}", text.body, text.answer),
                })?;
                did.push(format!(
                    "{} deferred on {} to the digest",
                    entry.key,
                    channel.as_str()
                ));
            }
            Action::Send {
                entry,
                channel,
                reminder,
            } => {
                if resting.contains(&channel) {
                    continue;
                }
                let msg = message(&entry, &repo, reminder);
                match attempt(&notify, channel, &msg, &mut backoff, wall) {
                    Ok(()) => {
                        record(EventKind::Notified {
                            key: entry.key.clone(),
                            stamp: entry.since.clone(),
                            kind: entry.kind.clone(),
                            channel: channel.as_str().into(),
                            how: "sent".into(),
                            reminder,
                            text: String::new(),
                        })?;
                        did.push(match reminder {
                            0 => format!("{} sent on {}", entry.key, channel.as_str()),
                            n => format!("{} reminder {n} sent on {}", entry.key, channel.as_str()),
                        });
                    }
                    Err(why) => {
                        resting.insert(channel);
                        did.push(why.clone());
                        failed(hall, &office, channel, &why, &backoff)?;
                    }
                }
            }
            Action::Digest {
                channel,
                deferred,
                waiting,
                date,
            } => {
                if resting.contains(&channel) {
                    continue;
                }
                let key = match &date {
                    Some(d) => format!("digest:{d}"),
                    None => format!("digest:{}", ctx.stamp),
                };
                let nothing = deferred.is_empty() && waiting.is_empty();
                // A morning with nothing to say is marked, not sent.
                if !nothing {
                    let msg = digest_message(&repo, &deferred, &waiting, &key);
                    if let Err(why) = attempt(&notify, channel, &msg, &mut backoff, wall) {
                        resting.insert(channel);
                        did.push(why.clone());
                        failed(hall, &office, channel, &why, &backoff)?;
                        continue;
                    }
                }
                let mut events: Vec<_> = deferred
                    .iter()
                    .map(|d| {
                        office.event(
                            None,
                            EventKind::Notified {
                                key: d.key.clone(),
                                stamp: d.stamp.clone(),
                                kind: d.kind.clone(),
                                channel: channel.as_str().into(),
                                how: "digest".into(),
                                reminder: 0,
                                text: String::new(),
                            },
                        )
                    })
                    .collect();
                if let Some(d) = &date {
                    events.push(office.event(
                        None,
                        EventKind::Notified {
                            key: format!("digest:{d}"),
                            stamp: d.clone(),
                            kind: "digest".into(),
                            channel: channel.as_str().into(),
                            how: "digest".into(),
                            reminder: 0,
                            text: String::new(),
                        },
                    ));
                }
                hall.journal.append_repo(&events)?;
                if !nothing {
                    did.push(format!(
                        "digest sent on {} ({} held back, {} waiting)",
                        channel.as_str(),
                        deferred.len(),
                        waiting.len()
                    ));
                }
            }
        }
    }
    backoff.save(&root)?;
    Ok(did)
}

/// Delivers `msg` on `channel`, waiting out short rate limits; keeps `backoff` up to
/// date. The error says why, for the log and the notice.
fn attempt(
    notify: &Notify,
    channel: Channel,
    msg: &Message,
    backoff: &mut Backoff,
    wall: u64,
) -> std::result::Result<(), String> {
    let ch = channel.as_str().to_string();
    let target = Target::resolve(notify, channel)?;
    match channels::deliver(&target, msg, patience()) {
        Outcome::Sent => {
            backoff.failures.remove(&ch);
            backoff.not_before.remove(&ch);
            Ok(())
        }
        Outcome::RetryAfter(d) => {
            // Not a failure: the message waits for the next pass after the limit.
            backoff
                .not_before
                .insert(ch.clone(), wall + d.as_secs().max(1));
            Err(format!(
                "{ch}: rate limited; trying again in {}s",
                d.as_secs()
            ))
        }
        Outcome::Failed(why) => {
            let n = backoff.failures.entry(ch.clone()).or_default();
            *n += 1;
            let pause = 30u64.saturating_mul(1 << (*n).min(7)).min(3600);
            backoff.not_before.insert(ch, wall + pause);
            Err(why)
        }
    }
}

/// After a failed attempt: the `notify_failed` notice, once, when the channel failed
/// [`FAILURES_NOTICED`] times in a row.
fn failed(hall: &Hall, office: &Ctx, channel: Channel, why: &str, backoff: &Backoff) -> Result<()> {
    let ch = channel.as_str();
    let n = backoff.failures.get(ch).copied().unwrap_or(0);
    if n < FAILURES_NOTICED {
        return Ok(());
    }
    let index = hall.index()?;
    let already = index
        .notices()?
        .iter()
        .any(|x| x.kind == "notify_failed" && x.message.starts_with(&format!("{ch}:")));
    if already {
        return Ok(());
    }
    let why = why.strip_prefix(&format!("{ch}: ")).unwrap_or(why);
    hall.journal.append_repo(&[office.event(
        None,
        EventKind::Notification {
            kind: "notify_failed".into(),
            message: format!(
                "{ch}: {n} deliveries failed in a row, the last: {why} (hall notify test --channel {ch})"
            ),
            session: None,
        },
    )])?;
    Ok(())
}

/// `hall notify test`: one test message on each channel in force (or `only`), each
/// result said. Nothing is recorded.
pub fn test(
    hall: &Hall,
    only: Option<Channel>,
) -> Result<Vec<(Channel, std::result::Result<String, String>)>> {
    let Some(mut notify) = settings(hall)? else {
        return Ok(Vec::new());
    };
    if let Some(c) = only {
        notify.channels.retain(|x| *x == c);
    }
    ensure_topic(&mut notify)?;
    let repo = repo_name(hall);
    let mut out = Vec::new();
    for &channel in &notify.channels {
        let msg = Message {
            title: format!("hall · {repo}: a test"),
            body: format!("This is how hall reaches you on {}.", channel.as_str()),
            answer: "hall inbox".into(),
            key: format!("test@{}", crate::clock::wall_secs()),
        };
        let result = Target::resolve(&notify, channel).and_then(|target| {
            match channels::deliver(&target, &msg, patience()) {
                Outcome::Sent => Ok(format!("sent to {}", target.describe())),
                Outcome::RetryAfter(d) => Err(format!(
                    "{}: rate limited for {}s more",
                    channel.as_str(),
                    d.as_secs()
                )),
                Outcome::Failed(why) => Err(why),
            }
        });
        out.push((channel, result));
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
