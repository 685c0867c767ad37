//! The librarian: one headless run (`hallmark:librarian`, `[budget] librarian_model`) per
//! closed item reads the item's record (requests, rounds, verdicts, fixes, disputes,
//! rulings) and the accepted learnings it touched, and answers with a [`Distillation`]:
//! learnings to propose, learnings the record shows wrong, and the words of the item's
//! Gazette. Nothing waits on it: a run that fails, times out or answers nonsense is
//! recorded on the item (`distilled {failed}`) and the loop goes on.
//!
//! The answer is held to a JSON schema made for this item ([`schema`]): the rounds, the
//! finding ids, the rulings and the learnings it may name are spelled out as enums, so
//! every rule [`check`] enforces is one the model was told. The schema, not a room,
//! checks it: the rules are the answer's shape, nothing a repository should loosen, and
//! nothing it proposes is in force before a person accepts it (unless `auto_accept`).

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

use super::fence::Prompt;
use crate::claude::RunSpec;
use crate::error::{Code, HallError, Result};
use crate::gazette::words::WORDS_FILE;
use crate::hall::{Ctx, Hall};
use crate::item::{Event, EventKind, Item, ItemId, LearningId, State};
use crate::library::{Learning, Library, Settings, Stamp, glob_matches};

mod answer;

pub use answer::{
    Checked, Contradiction, Distillation, Known, Proposal, SCHEMA_FILE, check, schema,
};

/// The most learnings one run may propose.
pub const MAX_PROPOSALS: usize = 6;

/// The most accepted learnings a run is shown (and may update or contradict).
const MAX_SHOWN: usize = 20;

/// The record a run reads is cut to this many characters.
const MAX_RECORD_CHARS: usize = 60_000;

/// Items closed longer ago than this are not distilled by the daemon on its own (so an
/// upgrade doesn't pay for a repository's whole past); `hall library distill <id>` can.
pub const RECENT: Duration = Duration::from_secs(7 * 24 * 3600);

/// What a librarian run did for an item, as the `distilled` event records it.
#[derive(Debug, Default)]
pub struct Distilled {
    pub proposed: Vec<LearningId>,
    pub retired: Vec<LearningId>,
    pub words: bool,
    pub problems: Vec<String>,
    pub failed: bool,
    pub run: Option<String>,
}

impl Distilled {
    fn failed(problem: String, run: Option<String>) -> Distilled {
        Distilled {
            problems: vec![problem],
            failed: true,
            run,
            ..Distilled::default()
        }
    }

    pub fn event(&self) -> EventKind {
        EventKind::Distilled {
            proposed: self.proposed.clone(),
            retired: self.retired.clone(),
            words: self.words,
            problems: self.problems.clone(),
            failed: self.failed,
            run: self.run.clone(),
        }
    }
}

fn library(hall: &Hall) -> Library {
    Library::new(&hall.journal, Settings::from_config(&hall.config.library))
}

/// The accepted learnings a run about `item` is shown: the ones its verdicts named,
/// then the ones scoped to the files its findings are in, then to its changed files.
fn shown(library: &Library, events: &[Event], files: &[String]) -> Vec<Learning> {
    let Ok(listing) = library.list() else {
        return Vec::new();
    };
    let mut named = BTreeSet::new();
    let mut touched: BTreeSet<String> = files.iter().cloned().collect();
    for e in events {
        if let EventKind::Verdict {
            learnings,
            findings,
            ..
        } = &e.kind
        {
            named.extend(
                learnings
                    .iter()
                    .filter_map(|l| l.parse::<LearningId>().ok()),
            );
            touched.extend(findings.iter().map(|f| f.file.clone()));
        }
    }
    // Accepted with no update waiting: the ones an answer may update or contradict.
    let accepted: Vec<Learning> = listing
        .entries
        .into_iter()
        .map(|e| e.current)
        .filter(|l| l.meta.status == crate::item::LearningStatus::Accepted)
        .collect();
    let scoped = |l: &Learning| {
        l.meta
            .paths
            .iter()
            .any(|g| touched.iter().any(|f| glob_matches(g, f)))
    };
    let mut out: Vec<Learning> = accepted
        .iter()
        .filter(|l| named.contains(&l.id()))
        .cloned()
        .collect();
    out.extend(
        accepted
            .into_iter()
            .filter(|l| !named.contains(&l.id()) && scoped(l)),
    );
    out.truncate(MAX_SHOWN);
    out
}

/// The prompt: what to answer, then the item's record and the learnings shown, fenced
/// as data ([`Prompt`]): much of a record is the agent's own text (its summary, commit
/// messages, dispute reasons), and a learning was distilled from such records.
fn prompt(id: ItemId, record: &str, shown: &[Learning], named: &[LearningId]) -> String {
    let mut p = Prompt::new();
    p.text(format!(
        "Distil Hallmark item {id}, which is closed, for the repository's Library, and \
         write the words of its Gazette page. Answer through StructuredOutput only.\n"
    ));
    p.notice();
    p.data("the item's record", clip(record, MAX_RECORD_CHARS));
    if shown.is_empty() {
        p.text("\nNo accepted learning touches this item.\n");
    } else {
        p.text(
            "\nAccepted learnings that touch this item. Update one with `updates`; name \
             one its review relied on in `contradicted` if the record shows it wrong:\n",
        );
        let mut list = String::new();
        for l in shown {
            let paths = if l.meta.paths.is_empty() {
                "the whole repository".to_string()
            } else {
                l.meta.paths.join(", ")
            };
            let relied = if named.contains(&l.id()) {
                "; this item's review relied on it"
            } else {
                ""
            };
            list.push_str(&format!(
                "- {} [{}] {} (paths: {paths}; used by {} reviews{relied}): {}\n",
                l.id(),
                l.meta.kind,
                l.meta.title,
                l.meta.used,
                l.summary()
            ));
        }
        p.data("the learnings", list);
    }
    p.render()
}

/// `text` cut to at most `max` characters, on a character boundary, saying so.
fn clip(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_string(),
        Some((at, _)) => format!("{}\n… (the record is cut here)", &text[..at]),
    }
}

/// The librarian run's command line.
pub fn command(hall: &Hall, id: ItemId, plugin: &Path, prompt: &str, schema: &str) -> RunSpec {
    let config = &hall.config;
    let run = super::runs::SideRun {
        agent: "hallmark:librarian",
        model: &config.budget.librarian_model,
        schema,
        max_usd: super::runs::max_usd(config.budget.librarian.max_usd.as_ref(), 0.20),
        role: "librarian",
        actor: "librarian",
        timeout: super::runs::timeout(config.budget.librarian.timeout.as_deref(), 5 * 60),
    };
    super::runs::side_run(hall, id, plugin, &run, prompt)
}

/// Distils closed (or dropped) item `id`, records `distilled` and the run's usage on it,
/// writes the Gazette's words and prints the page. Fails only when the item can't be
/// read or isn't finished, or the journal can't be written; a run that goes wrong is a
/// `distilled {failed}` line.
pub fn distill(hall: &Hall, ctx: &Ctx, id: ItemId) -> Result<Distilled> {
    let item = hall.item(id)?;
    check_finished(id, &item)?;
    let events = hall.events(id)?;
    let (done, records) = run(hall, ctx, id, &item, &events);
    let mut lines = records;
    lines.push(ctx.event(Some(id), done.event()));
    hall.journal.append_item(id, &lines)?;
    crate::gazette::refresh(&hall.journal, id);
    Ok(done)
}

/// Refuses an item that is not closed or dropped (`WRONG_STATE`).
pub fn check_finished(id: ItemId, item: &Item) -> Result<()> {
    if matches!(item.state, State::Closed | State::Dropped) {
        return Ok(());
    }
    Err(HallError::new(
        Code::WrongState,
        format!(
            "{id} is {}: the librarian distils closed and dropped items only",
            item.state
        ),
    )
    .hint(format!("hall status {id}"))
    .hint("hall library distill"))
}

/// The run and what it leaves, and the usage lines to record.
fn run(
    hall: &Hall,
    ctx: &Ctx,
    id: ItemId,
    item: &Item,
    events: &[Event],
) -> (Distilled, Vec<Event>) {
    let library = library(hall);
    let files = changed_files(hall, item);
    let shown = shown(&library, events, &files);
    let known = Known::of(events, shown.iter().map(Learning::id).collect());
    let record = crate::record::render(id, item, events);
    let prompt = prompt(id, &record, &shown, &known.named);
    let schema = schema(&known).to_string();
    let plugin = match hall.plugin() {
        Ok(p) => p,
        Err(e) => {
            return (
                Distilled::failed(format!("the plugin can't be laid out: {e}"), None),
                Vec::new(),
            );
        }
    };
    let spec = command(hall, id, &plugin, &prompt, &schema);
    let runs_dir = crate::claude::runs_dir(&hall.journal.item_dir(id));
    let outcome = match hall.runner.run(&runs_dir, &ctx.stamp, &spec) {
        Ok(o) => o,
        Err(e) => {
            return (
                Distilled::failed(format!("the librarian could not run: {e}"), None),
                Vec::new(),
            );
        }
    };
    let records = super::runs::usage_events(ctx, id, "librarian", &outcome);
    let run = Some(outcome.run.clone());
    let failure = if outcome.timed_out {
        Some(format!(
            "the run took longer than its {} s",
            spec.timeout.as_secs()
        ))
    } else if outcome.not_installed {
        Some(format!(
            "no model is reachable: `{}` is not on PATH",
            spec.program
        ))
    } else if outcome.structured.is_none() {
        Some(
            outcome
                .failure
                .clone()
                .map_or("the run answered with no distillation".into(), |f| {
                    format!("the run failed: {f}")
                }),
        )
    } else {
        None
    };
    if let Some(why) = failure {
        return (Distilled::failed(why, run), records);
    }
    let answer =
        match serde_json::from_value::<Distillation>(outcome.structured.unwrap_or_default()) {
            Ok(a) => a,
            Err(e) => {
                return (
                    Distilled::failed(format!("the answer is not a distillation: {e}"), run),
                    records,
                );
            }
        };
    let checked = check(id, answer, &known);
    let mut done = Distilled {
        problems: checked.problems,
        run,
        ..Distilled::default()
    };
    let stamp = Stamp::new(ctx.stamp.clone(), "librarian");
    for (updates, draft) in checked.proposals {
        let title = draft.title.clone();
        let made = match updates {
            Some(l) => library.propose_update(l, draft, &stamp),
            None => library.propose(draft, &stamp),
        };
        match made {
            Ok(l) => done.proposed.push(l.id()),
            Err(e) => done
                .problems
                .push(format!("`{title}` was not proposed: {e}")),
        }
    }
    for (l, why) in checked.contradicted {
        let reason = format!("contradicted by {id}: {why}");
        match library.retire(l, Some(reason), &stamp) {
            Ok(_) => done.retired.push(l),
            Err(e) => done.problems.push(format!("{l} was not retired: {e}")),
        }
    }
    if let Some(words) = checked.words {
        let path = hall.journal.item_dir(id).join(WORDS_FILE);
        let bytes = serde_json::to_vec_pretty(&words).unwrap_or_default();
        match crate::journal::file::write_atomic(&path, &bytes) {
            Ok(()) => done.words = true,
            Err(e) => done
                .problems
                .push(format!("the Gazette's words were not written: {e}")),
        }
    }
    (done, records)
}

/// The files the item's shipped (or last) commit changes from its base, for scoping the
/// learnings shown; none when git can't say.
fn changed_files(hall: &Hall, item: &Item) -> Vec<String> {
    let Some(sha) = item.hallmark.as_ref().or(item.sha.as_ref()) else {
        return Vec::new();
    };
    let root = &hall.repo.main_root;
    let Ok(base) = crate::git::merge_base(root, &item.base, sha.as_str()) else {
        return Vec::new();
    };
    crate::git::files_between(root, base.as_str(), sha.as_str()).unwrap_or_default()
}

/// The closed items the daemon should distil now: finished within [`RECENT`], reviewed
/// at least once, and never distilled (a failed run is not retried on its own).
pub fn pending(hall: &Hall, now: std::time::SystemTime) -> Result<Vec<ItemId>> {
    let index = hall.index()?;
    let since = crate::clock::stamp(now.checked_sub(RECENT).unwrap_or(std::time::UNIX_EPOCH));
    let mut out = Vec::new();
    for id in index.finished_since(&since)? {
        let names = index.event_names(id)?;
        if names.iter().any(|n| n == "verdict") && !names.iter().any(|n| n == "distilled") {
            out.push(id);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests;

/// Retires the learnings unused for `[library] retire_after`, at most once a day unless
/// `now_anyway` (`hall library distill`): the day of the last sweep is kept in
/// `library/swept`.
pub fn sweep_stale(hall: &Hall, ctx: &Ctx, now_anyway: bool) -> Result<Vec<LearningId>> {
    let library = library(hall);
    if !library.learnings_dir().is_dir() {
        return Ok(Vec::new());
    }
    let marker = library.root().join("swept");
    let today = super::budget::day(&ctx.stamp);
    if !now_anyway && std::fs::read_to_string(&marker).ok().as_deref() == Some(today.as_str()) {
        return Ok(Vec::new());
    }
    let label = hall.config.library.retire_after.clone();
    let after = crate::clock::parse_duration(&label).map_err(HallError::usage)?;
    let stamp = Stamp::new(ctx.stamp.clone(), "librarian");
    let retired = library.retire_stale(ctx.clock.now(), after, &label, &stamp)?;
    crate::journal::file::write_atomic(&marker, today.as_bytes())
        .map_err(|e| HallError::io(&marker, e))?;
    Ok(retired)
}

/// Whether the daemon has librarian work: an item to distil, or the day's stale sweep
/// not made yet while the store has learnings.
pub fn due(hall: &Hall, ctx: &Ctx) -> Result<bool> {
    let auto = hall.config.library.distill == crate::config::Distill::Auto;
    if auto && !pending(hall, ctx.clock.now())?.is_empty() {
        return Ok(true);
    }
    let library = library(hall);
    let marker = library.root().join("swept");
    Ok(library.learnings_dir().is_dir()
        && std::fs::read_to_string(marker).ok().as_deref()
            != Some(super::budget::day(&ctx.stamp).as_str()))
}

/// One librarian pass, as the daemon makes it: the stale sweep (daily), then each
/// pending item distilled in turn. Returns what was done, a line each.
pub fn pass(hall: &Hall, ctx: &Ctx) -> Result<Vec<(Option<ItemId>, String)>> {
    let mut did = Vec::new();
    let stale = sweep_stale(hall, ctx, false)?;
    if !stale.is_empty() {
        let ids: Vec<String> = stale.iter().map(|l| l.to_string()).collect();
        did.push((
            None,
            format!("retired {} (unused for retire_after)", ids.join(", ")),
        ));
    }
    let status = super::budget::status(hall, ctx)?;
    if status.paused
        || status
            .roles
            .iter()
            .any(|r| r.role == "librarian" && r.closed)
    {
        return Ok(did);
    }
    if hall.config.library.distill == crate::config::Distill::Off {
        return Ok(did);
    }
    for id in pending(hall, ctx.clock.now())? {
        let d = distill(hall, ctx, id)?;
        did.push((Some(id), crate::record::describe(&d.event())));
    }
    Ok(did)
}
