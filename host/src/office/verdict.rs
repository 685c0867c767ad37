//! The verdict: its JSON shape (the schema the reviewer answers with, generated from
//! these types into the plugin's `schemas/verdict.json`), and validation through the
//! verdict room. The lenses and severities are the core's ([`Lens`], [`Severity`]),
//! so the schema, the journal and the room speak one vocabulary.

use std::sync::LazyLock;

use schemars::{JsonSchema, Schema};
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::hall::{Ctx, Hall};
use crate::item::event::Finding;
use crate::item::{ItemId, Lens, Severity};
use crate::rooms::World;
use crate::rooms::types::CheckedVerdict;

// Every rule the built-in verdict room enforces that JSON Schema can say is in the
// schema generated from these types, so a run never spends its budget on an answer the
// room then refuses: Claude Code checks a structured answer against the schema and asks
// again. Each constraint is computed from the definition the room reads (the lens count
// from `Lens::ALL`, which severities block from `Severity::blocks_approval`, blank text
// from `char::is_whitespace`, which is what the room's `trim` uses); what JSON Schema
// cannot say is `UNSTATED`, listed in the schema's description. The doc comments are the
// schema's descriptions, which the reviewer reads.
/// What the reviewer answers with.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(transform = rules_across_fields)]
pub struct VerdictDoc {
    /// Optional (leave it out rather than write null), and must agree with the
    /// findings: approve means no blocker and no major; reject means at least one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Decision")]
    pub verdict: Option<Decision>,
    /// One paragraph: what the change does and whether it is right.
    #[schemars(length(min = 1), regex(pattern = &*HAS_TEXT))]
    pub summary: String,
    /// Every lens applied, each once: a review applies all seven.
    #[schemars(length(equal = Lens::ALL.len()), extend("uniqueItems" = true))]
    pub lenses: Vec<Lens>,
    /// Problems found, each with the scenario that breaks.
    pub findings: Vec<FindingDoc>,
    /// Library learnings the review relied on, by id.
    #[serde(default)]
    #[schemars(inner(length(min = 1), regex(pattern = &*HAS_TEXT)))]
    pub learnings_used: Vec<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    Approve,
    Reject,
}

impl Decision {
    /// Both decisions, as the schema spells them.
    pub const ALL: [Decision; 2] = [Decision::Approve, Decision::Reject];

    pub fn id(self) -> &'static str {
        match self {
            Decision::Approve => "approve",
            Decision::Reject => "reject",
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FindingDoc {
    pub lens: Lens,
    pub severity: Severity,
    /// Path relative to the repository root (no leading `/`, no `..`).
    #[schemars(
        length(min = 1),
        regex(pattern = &*HAS_TEXT),
        extend("not" = { "pattern": &*OUTSIDE_THE_REPOSITORY })
    )]
    pub file: String,
    /// 1-based line.
    #[schemars(range(min = 1, max = u32::MAX))]
    pub line: u32,
    /// The concrete scenario that breaks.
    #[schemars(length(min = 1), regex(pattern = &*HAS_TEXT))]
    pub scenario: String,
}

/// A rule of the verdict room that JSON Schema cannot state. The schema's description
/// lists each, so the reviewer knows it; the property test in
/// `rooms/tests/built_in_verdict.rs` allows a room's refusal of a schema-valid answer
/// only with one of these problems.
#[derive(Clone, Copy, Debug)]
pub struct Unstated {
    /// The rule, as the reviewer reads it.
    pub rule: &'static str,
    /// How the room's problem ends when the rule is broken (after `<path>: `).
    pub problem: &'static str,
}

/// The verdict room's rules the schema cannot state.
pub const UNSTATED: [Unstated; 2] = [
    Unstated {
        rule: "A `line` is written as digits alone (`12`, never `12.0` or `1.2e1`): \
               JSON Schema counts 12.0 as the integer 12, the room does not.",
        problem: "must be a positive integer",
    },
    Unstated {
        rule: "Text is whole Unicode: no lone surrogate escape such as `\\ud800` \
               (the room cannot read the answer at all).",
        problem: "not valid JSON",
    },
];

/// The characters the room trims (`str::trim`, which is `char::is_whitespace`), as the
/// inside of a regex class. Spelled out rather than `\s`, whose meaning differs between
/// regex engines (ECMA 262's counts U+FEFF and not U+0085; Rust's the reverse).
static WHITESPACE: LazyLock<String> = LazyLock::new(|| {
    let mut class = String::new();
    let mut run: Option<(u32, u32)> = None;
    let close = |class: &mut String, (from, to): (u32, u32)| {
        class.push_str(&format!("\\u{from:04X}"));
        if to > from {
            class.push_str(&format!("-\\u{to:04X}"));
        }
    };
    // Every whitespace character is in the Basic Multilingual Plane (a test checks),
    // so `\uXXXX` reads the same in every engine.
    for c in (0..=0xFFFFu32).filter_map(char::from_u32) {
        let n = c as u32;
        if !c.is_whitespace() {
            continue;
        }
        run = match run {
            Some((from, to)) if to + 1 == n => Some((from, n)),
            Some(done) => {
                close(&mut class, done);
                Some((n, n))
            }
            None => Some((n, n)),
        };
    }
    if let Some(done) = run {
        close(&mut class, done);
    }
    class
});

/// Text the room keeps after trimming: one character that isn't whitespace.
pub(crate) static HAS_TEXT: LazyLock<String> = LazyLock::new(|| format!("[^{}]", *WHITESPACE));

/// A path the room refuses: after trimming and dropping leading `./`, one that starts
/// with `/` or has a `..` part.
pub(crate) static OUTSIDE_THE_REPOSITORY: LazyLock<String> = LazyLock::new(|| {
    let ws = format!("[{}]", *WHITESPACE);
    format!(r"^{ws}*(\./)*/|(^{ws}*|/)\.\.(/|{ws}*$)")
});

/// The rules that tie fields together, and the description that lists what the schema
/// cannot say: a stated verdict agrees with the findings' severities.
fn rules_across_fields(schema: &mut Schema) {
    let severities = |blocking: bool| -> Vec<&'static str> {
        Severity::ALL
            .into_iter()
            .filter(|s| s.blocks_approval() == blocking)
            .map(Severity::id)
            .collect()
    };
    let stated = |d: Decision| {
        serde_json::json!({
            "properties": { "verdict": { "const": d.id() } },
            "required": ["verdict"]
        })
    };
    let ties: Vec<serde_json::Value> = Decision::ALL
        .into_iter()
        .map(|d| match d {
            // Approve: every finding is one that doesn't block.
            Decision::Approve => serde_json::json!({
                "if": stated(d),
                "then": { "properties": { "findings": { "items": {
                    "properties": { "severity": { "enum": severities(false) } }
                } } } }
            }),
            // Reject: at least one finding blocks.
            Decision::Reject => serde_json::json!({
                "if": stated(d),
                "then": { "properties": { "findings": { "contains": {
                    "properties": { "severity": { "enum": severities(true) } },
                    "required": ["severity"]
                } } } }
            }),
        })
        .collect();
    schema.insert("allOf".into(), ties.into());
    schema.insert("description".into(), description().into());
}

/// The schema's top-level description: what the answer is, then every rule of the room
/// that the schema itself cannot state.
fn description() -> String {
    let mut text = format!(
        "What the reviewer answers with: a verdict on one commit, checked by \
         Hallmark's verdict room. The schema states every rule of the room it can \
         (all {} lenses once each, the severities, a stated verdict agreeing with the \
         findings, non-blank text, paths inside the repository, lines from 1). The \
         room also refuses an answer that breaks one of these, which JSON Schema \
         cannot state:",
        Lens::ALL.len()
    );
    for (i, u) in UNSTATED.iter().enumerate() {
        text.push_str(&format!("\n{}. {}", i + 1, u.rule));
    }
    text.push_str(&format!(
        "\nNot refused, but bounded: the whole answer must stay under {} MiB, the \
         rooms' answer limit. The room does not check that `file` and `line` point into \
         the diff; point them at the new side of the diff all the same.",
        crate::rooms::Limits::default().answer_bytes >> 20
    ));
    text
}

/// The verdict schema as the plugin ships it: self-contained (no `$ref`), so it can be
/// handed to `--json-schema` as it is.
pub fn schema() -> serde_json::Value {
    let generator = schemars::generate::SchemaSettings::draft07()
        .with(|s| s.inline_subschemas = true)
        .into_generator();
    let schema = generator.into_root_schema_for::<VerdictDoc>();
    serde_json::to_value(schema).unwrap_or_default()
}

/// The schema file's text (checked against [`schema`] by a test).
pub const SCHEMA_FILE: &str = include_str!("../../../plugin/schemas/verdict.json");

/// Validates a verdict with the repository's verdict room; records which room decided.
pub fn validate(
    hall: &Hall,
    ctx: &Ctx,
    id: ItemId,
    text: &str,
) -> Result<(
    std::result::Result<CheckedVerdict, String>,
    crate::item::Event,
)> {
    let rooms = crate::hall::policy::runtime_for(Some(hall))?;
    let room = crate::hall::policy::room(&rooms, Some(hall), World::Verdict)?;
    let used = crate::hall::policy::used(ctx, Some(id), room.info());
    let checked = room.validate_verdict(text)?;
    Ok((
        checked.map_err(|f| {
            if f.problems.is_empty() {
                f.message
            } else {
                format!("{}: {}", f.message, f.problems.join("; "))
            }
        }),
        used,
    ))
}

/// The journal's findings for a checked verdict, numbered on from `first`.
pub fn findings(checked: &CheckedVerdict, first: u32) -> Vec<Finding> {
    checked
        .findings
        .iter()
        .enumerate()
        .map(|(i, f)| Finding {
            id: format!("F{}", first + i as u32),
            lens: f.lens,
            severity: f.severity,
            file: f.file.clone(),
            line: Some(f.line),
            scenario: f.scenario.clone(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    /// The spelled-out whitespace class means what the room's `trim` means, for every
    /// character, under a real JSON Schema validator (whose `\s` is ECMA 262's).
    #[test]
    fn blank_text_in_the_schema_is_blank_text_to_the_room() {
        assert!(
            (0x1_0000..=0x10_FFFF)
                .filter_map(char::from_u32)
                .all(|c| !c.is_whitespace()),
            "a whitespace character outside the BMP needs more than \\uXXXX"
        );
        let text = serde_json::json!({ "type": "string", "pattern": &*super::HAS_TEXT });
        let text = jsonschema::validator_for(&text).expect("the pattern compiles");
        let wrong: Vec<String> = (0..=0xFFFFu32)
            .filter_map(char::from_u32)
            .filter(|c| {
                let one = c.to_string();
                text.is_valid(&serde_json::json!(one)) == one.trim().is_empty()
            })
            .map(|c| format!("U+{:04X}", c as u32))
            .collect();
        assert!(wrong.is_empty(), "{wrong:?}");
        for blank in ["", " \t\n", "\u{85}\u{3000}"] {
            assert!(!text.is_valid(&serde_json::json!(blank)), "{blank:?}");
        }
        assert!(text.is_valid(&serde_json::json!(" \u{feff} ")));
    }

    #[test]
    fn a_decision_s_id_is_its_json() {
        for d in super::Decision::ALL {
            assert_eq!(serde_json::to_value(d).unwrap(), d.id());
        }
    }

    #[test]
    fn the_plugin_schema_is_generated_from_the_types() {
        let generated = serde_json::to_string_pretty(&super::schema()).unwrap() + "\n";
        if std::env::var_os("HALL_WRITE_SCHEMA").is_some() {
            let path = concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../plugin/schemas/verdict.json"
            );
            std::fs::write(path, &generated).unwrap();
            return;
        }
        assert_eq!(
            super::SCHEMA_FILE,
            generated,
            "plugin/schemas/verdict.json is stale: run HALL_WRITE_SCHEMA=1 cargo test -p hallmark-host schema_is_generated"
        );
    }
}
