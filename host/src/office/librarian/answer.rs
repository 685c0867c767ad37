//! The librarian's answer: its types, the schema made for one item, and the check
//! that holds an answer to the same rules entry by entry.

use std::collections::{BTreeMap, BTreeSet};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::MAX_PROPOSALS;
use crate::gazette::words::{GazetteWords, Words};
use crate::item::{Event, EventKind, ItemId, LearningId, LearningKind};
use crate::library::{Draft, Source};
use crate::office::verdict::{HAS_TEXT, OUTSIDE_THE_REPOSITORY};

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
pub const SCHEMA_FILE: &str = include_str!("../../../../plugin/schemas/distillation.json");

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
