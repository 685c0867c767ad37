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

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::verdict::{HAS_TEXT, OUTSIDE_THE_REPOSITORY};
use crate::claude::RunSpec;
use crate::error::{Code, HallError, Result};
use crate::gazette::words::{GazetteWords, WORDS_FILE, Words};
use crate::hall::{Ctx, Hall};
use crate::item::{Event, EventKind, Item, ItemId, LearningId, LearningKind, State};
use crate::library::{Draft, Learning, Library, Settings, Source, Stamp, glob_matches};

/// The most learnings one run may propose.
pub const MAX_PROPOSALS: usize = 6;

/// The most accepted learnings a run is shown (and may update or contradict).
const MAX_SHOWN: usize = 20;

/// The record a run reads is cut to this many characters.
const MAX_RECORD_CHARS: usize = 60_000;

/// Items closed longer ago than this are not distilled by the daemon on its own (so an
/// upgrade doesn't pay for a repository's whole past); `hall library distill <id>` can.
pub const RECENT: Duration = Duration::from_secs(7 * 24 * 3600);

/// What the librarian answers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "Hallmark librarian's distillation")]
pub struct Distillation {
    /// What later reviews of this repository should know, learned from this item.
    /// Empty when the item taught nothing new.
    pub learnings: Vec<Proposal>,
    /// Accepted learnings this item's record shows to be wrong.
    #[serde(default)]
    pub contradicted: Vec<Contradiction>,
    /// The words of the item's Gazette page.
    pub gazette: GazetteWords,
}

/// One learning to propose, or a new version of an accepted one (`updates`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Proposal {
    /// `rule`: a finding that proved right; `false-positive`: what not to flag, and
    /// why; `map`: what a module does; `decision`: a person's ruling.
    pub kind: LearningKind,
    /// One line a reviewer can act on.
    #[schemars(length(min = 1, max = 160), regex(pattern = &*HAS_TEXT))]
    pub title: String,
    /// The learning in a few sentences of Markdown: what to do or not, and why.
    #[schemars(length(min = 1), regex(pattern = &*HAS_TEXT))]
    pub body: String,
    /// Path globs it is about, relative to the repository's root (`src/api/**`); empty
    /// for the whole repository.
    #[serde(default)]
    #[schemars(inner(length(min = 1), regex(pattern = &*HAS_TEXT)))]
    pub paths: Vec<String>,
    /// The round it comes from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round: Option<u32>,
    /// The finding of that round's verdict it distils (`F2`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finding: Option<String>,
    /// The question a person answered that it records (`Q-12`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ruling: Option<String>,
    /// The accepted learning this is a new version of.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updates: Option<String>,
}

/// An accepted learning the record shows wrong, and where it shows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Contradiction {
    pub learning: String,
    #[schemars(length(min = 1), regex(pattern = &*HAS_TEXT))]
    pub why: String,
}

/// What the answer may name: read from the item's journal and the Library.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Known {
    /// Each round's finding ids.
    pub findings: BTreeMap<u32, Vec<String>>,
    /// The rounds the item went through.
    pub rounds: u32,
    /// Questions a person answered (not by default).
    pub rulings: Vec<String>,
    /// Accepted learnings shown to the run: it may update any of them.
    pub shown: Vec<LearningId>,
    /// The ones of those this item's verdicts said they relied on: only these can be
    /// contradicted by its record, so text an agent put in the record (a dispute's
    /// reason, a commit message) can't get any other learning retired.
    pub named: Vec<LearningId>,
}

impl Known {
    pub fn of(events: &[Event], shown: Vec<LearningId>) -> Known {
        let mut k = Known {
            shown,
            ..Known::default()
        };
        let mut answered = BTreeSet::new();
        for e in events {
            match &e.kind {
                EventKind::Verdict {
                    round,
                    findings,
                    learnings,
                    ..
                } => {
                    for l in learnings
                        .iter()
                        .filter_map(|l| l.parse::<LearningId>().ok())
                    {
                        if k.shown.contains(&l) && !k.named.contains(&l) {
                            k.named.push(l);
                        }
                    }
                    k.rounds = k.rounds.max(*round);
                    let ids = k.findings.entry(*round).or_default();
                    ids.extend(findings.iter().map(|f| f.id.clone()));
                    ids.sort();
                    ids.dedup();
                }
                EventKind::Answered {
                    qid, by_default, ..
                } if !by_default => {
                    answered.insert(qid.to_string());
                }
                _ => {}
            }
        }
        k.findings.retain(|_, ids| !ids.is_empty());
        k.rulings = answered.into_iter().collect();
        k
    }

    fn all_findings(&self) -> Vec<String> {
        let mut all: Vec<String> = self.findings.values().flatten().cloned().collect();
        all.sort();
        all.dedup();
        all
    }
}

/// The schema the run is given: the generated one, with what `known` allows spelled out.
pub fn schema(known: &Known) -> Value {
    let generator = schemars::generate::SchemaSettings::draft07()
        .with(|s| s.inline_subschemas = true)
        .into_generator();
    let mut schema = serde_json::to_value(generator.into_root_schema_for::<Distillation>())
        .unwrap_or(Value::Null);
    let refused_path = json!({ "pattern": format!("{}|\\\\", *OUTSIDE_THE_REPOSITORY) });
    let shown: Vec<String> = known.shown.iter().map(|l| l.to_string()).collect();
    let named: Vec<String> = known.named.iter().map(|l| l.to_string()).collect();
    let set = |schema: &mut Value, at: &str, key: &str, value: Value| {
        if let Some(fields) = schema.pointer_mut(at).and_then(Value::as_object_mut) {
            fields.insert(key.into(), value);
        }
    };
    let proposal = "/properties/learnings/items";
    set(
        &mut schema,
        "/properties/learnings",
        "maxItems",
        MAX_PROPOSALS.into(),
    );
    set(
        &mut schema,
        &format!("{proposal}/properties/title"),
        "not",
        json!({ "pattern": "[\\n\\r]" }),
    );
    set(
        &mut schema,
        &format!("{proposal}/properties/paths/items"),
        "not",
        refused_path,
    );
    // Where it came from: nothing, a round, a round's finding, or a person's ruling.
    let mut from = vec![json!({
        "not": { "anyOf": [{ "required": ["finding"] }, { "required": ["ruling"] }] },
        "properties": { "round": { "type": "integer", "minimum": 1, "maximum": known.rounds.max(1) } }
    })];
    for (round, ids) in &known.findings {
        from.push(json!({
            "required": ["round", "finding"],
            "properties": { "round": { "const": round }, "finding": { "enum": ids } },
            "not": { "required": ["ruling"] }
        }));
    }
    if !known.rulings.is_empty() {
        from.push(json!({
            "required": ["ruling"],
            "properties": { "ruling": { "enum": known.rulings } },
            "not": { "anyOf": [{ "required": ["finding"] }, { "required": ["round"] }] }
        }));
    }
    set(&mut schema, proposal, "anyOf", Value::Array(from));
    if known.rounds == 0 {
        set(
            &mut schema,
            &format!("{proposal}/properties/round"),
            "maximum",
            0.into(),
        );
    }
    let names = |ids: &[String]| {
        if ids.is_empty() {
            json!({ "not": {} })
        } else {
            json!({ "type": "string", "enum": ids })
        }
    };
    if let Some(fields) = schema
        .pointer_mut(&format!("{proposal}/properties"))
        .and_then(Value::as_object_mut)
    {
        fields.insert("updates".into(), names(&shown));
        fields.insert("finding".into(), names(&known.all_findings()));
        fields.insert("ruling".into(), names(&known.rulings));
    }
    if let Some(fields) = schema
        .pointer_mut("/properties/contradicted/items/properties")
        .and_then(Value::as_object_mut)
    {
        fields.insert("learning".into(), names(&named));
    }
    if named.is_empty() {
        set(
            &mut schema,
            "/properties/contradicted",
            "maxItems",
            0.into(),
        );
    }
    let words = "/properties/gazette/properties";
    set(
        &mut schema,
        &format!("{words}/headline"),
        "pattern",
        Value::String(HAS_TEXT.clone()),
    );
    let all = known.all_findings();
    if all.is_empty() {
        set(
            &mut schema,
            &format!("{words}/findings"),
            "maxProperties",
            0.into(),
        );
    } else {
        set(
            &mut schema,
            &format!("{words}/findings"),
            "propertyNames",
            json!({ "enum": all }),
        );
    }
    schema
}

/// The schema file the plugin ships (`plugin/schemas/distillation.json`): the schema
/// for an item with no rounds, findings, rulings or learnings shown; each run is given
/// [`schema`] for its own item.
pub const SCHEMA_FILE: &str = include_str!("../../../plugin/schemas/distillation.json");

/// What [`check`] kept of an answer, and what it left out and why.
#[derive(Debug, Default, PartialEq)]
pub struct Checked {
    pub proposals: Vec<(Option<LearningId>, Draft)>,
    pub contradicted: Vec<(LearningId, String)>,
    pub words: Option<GazetteWords>,
    pub problems: Vec<String>,
}

/// Holds an answer to the rules its schema states, entry by entry: one bad proposal is
/// left out (and said), the rest are kept.
pub fn check(id: ItemId, answer: Distillation, known: &Known) -> Checked {
    let mut out = Checked::default();
    let shown = |s: &str| {
        s.parse::<LearningId>()
            .ok()
            .filter(|l| known.shown.contains(l))
    };
    for (n, p) in answer.learnings.into_iter().enumerate() {
        let at = format!("learning {}", n + 1);
        if n >= MAX_PROPOSALS {
            out.problems.push(format!(
                "{at}: more than {MAX_PROPOSALS} proposed; left out"
            ));
            continue;
        }
        let title = p.title.trim().to_string();
        let why = if title.is_empty() || title.contains(['\n', '\r']) {
            Some("its title is not one line of text".to_string())
        } else if p.body.trim().is_empty() {
            Some("its body is empty".to_string())
        } else if let Err(e) = crate::library::check_paths(&p.paths) {
            Some(e)
        } else if p.finding.is_some() && p.ruling.is_some() {
            Some("it names both a finding and a ruling".to_string())
        } else if let Some(f) = &p.finding
            && !p
                .round
                .and_then(|r| known.findings.get(&r))
                .is_some_and(|ids| ids.contains(f))
        {
            Some(format!(
                "finding {f} is not in round {}'s verdict",
                p.round.map_or("(none)".into(), |r| r.to_string())
            ))
        } else if p.round.is_some_and(|r| r == 0 || r > known.rounds) {
            Some(format!("the item has no round {}", p.round.unwrap_or(0)))
        } else if let Some(q) = &p.ruling
            && !known.rulings.contains(q)
        {
            Some(format!("{q} is not a question a person answered on {id}"))
        } else if let Some(u) = &p.updates
            && shown(u).is_none()
        {
            Some(format!("{u} is not an accepted learning it was shown"))
        } else {
            None
        };
        if let Some(why) = why {
            out.problems
                .push(format!("{at} ({title}): {why}; left out"));
            continue;
        }
        let draft = Draft {
            kind: p.kind,
            title,
            body: p.body,
            paths: p.paths,
            source: Source {
                item: Some(id),
                round: p.round,
                finding: p.finding,
                ruling: p.ruling,
                ..Source::default()
            },
        };
        out.proposals
            .push((p.updates.as_deref().and_then(shown), draft));
    }
    let named = |s: &str| {
        s.parse::<LearningId>()
            .ok()
            .filter(|l| known.named.contains(l))
    };
    for c in answer.contradicted {
        match named(&c.learning) {
            Some(l) if !c.why.trim().is_empty() => {
                out.contradicted.push((l, c.why.trim().to_string()));
            }
            Some(_) => out.problems.push(format!(
                "{} is said contradicted with no reason; kept",
                c.learning
            )),
            None => out.problems.push(format!(
                "{} is not a learning this item's review relied on; nothing retired",
                c.learning
            )),
        }
    }
    let mut gazette = answer.gazette;
    let known_ids = known.all_findings();
    let strays: Vec<String> = gazette
        .findings
        .keys()
        .filter(|k| !known_ids.contains(k))
        .cloned()
        .collect();
    for k in &strays {
        gazette.findings.remove(k);
        out.problems.push(format!(
            "the Gazette's words retell {k}, which no verdict of {id} has; left out"
        ));
    }
    let bytes = serde_json::to_vec(&gazette).unwrap_or_default();
    match Words::parse(&bytes) {
        Words::Found(w) => out.words = Some(w),
        Words::Invalid(why) => out
            .problems
            .push(format!("the Gazette's words were not kept: {why}")),
        Words::Absent => {}
    }
    out
}

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

/// The prompt: the item's record, the learnings shown, and what to answer.
fn prompt(id: ItemId, record: &str, shown: &[Learning], named: &[LearningId]) -> String {
    let mut p = format!(
        "Distil Hallmark item {id}, which is closed, for the repository's Library, and \
         write the words of its Gazette page. Answer through StructuredOutput only.\n\n\
         <record>\n{}\n</record>\n",
        clip(record, MAX_RECORD_CHARS)
    );
    if shown.is_empty() {
        p.push_str("\nNo accepted learning touches this item.\n");
    } else {
        p.push_str(
            "\n<learnings>\nAccepted learnings that touch this item. Update one with \
             `updates`; name one its review relied on in `contradicted` if the record \
             shows it wrong:\n",
        );
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
            p.push_str(&format!(
                "- {} [{}] {} (paths: {paths}; used by {} reviews{relied}): {}\n",
                l.id(),
                l.meta.kind,
                l.meta.title,
                l.meta.used,
                l.summary()
            ));
        }
        p.push_str("</learnings>\n");
    }
    p
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
