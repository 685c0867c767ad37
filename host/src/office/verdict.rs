//! The verdict: its JSON shape (the schema the reviewer answers with, generated from
//! these types into the plugin's `schemas/verdict.json`), and validation through the
//! verdict room. The lenses and severities are the core's ([`Lens`], [`Severity`]),
//! so the schema, the journal and the room speak one vocabulary.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::hall::{Ctx, Hall};
use crate::item::event::Finding;
use crate::item::{ItemId, Lens, Severity};
use crate::rooms::World;
use crate::rooms::types::CheckedVerdict;

// Every rule the verdict room enforces that JSON Schema can say is in the schema
// generated from these types, so a run never spends its budget on an answer the room
// then refuses: Claude Code checks a structured answer against the schema and asks
// again. The `allOf` ties a stated verdict to the findings. The doc comments are the
// schema's descriptions, which the reviewer reads.
/// What the principal engineer answers with.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("allOf" = [
    {
        "if": { "properties": { "verdict": { "const": "approve" } }, "required": ["verdict"] },
        "then": { "properties": { "findings": { "items": {
            "properties": { "severity": { "enum": ["minor", "nit"] } }
        } } } }
    },
    {
        "if": { "properties": { "verdict": { "const": "reject" } }, "required": ["verdict"] },
        "then": { "properties": { "findings": { "contains": {
            "properties": { "severity": { "enum": ["blocker", "major"] } },
            "required": ["severity"]
        } } } }
    }
]))]
pub struct VerdictDoc {
    /// Optional, and must agree with the findings: approve means no blocker and no
    /// major; reject means at least one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Decision>,
    /// One paragraph: what the change does and whether it is right.
    #[schemars(length(min = 1), regex(pattern = r"\S"))]
    pub summary: String,
    /// Every lens applied, each once: a review applies all seven.
    #[schemars(length(min = 7), extend("uniqueItems" = true))]
    pub lenses: Vec<Lens>,
    /// Problems found, each with the scenario that breaks.
    pub findings: Vec<FindingDoc>,
    /// Library learnings the review relied on, by id.
    #[serde(default)]
    #[schemars(inner(length(min = 1), regex(pattern = r"\S")))]
    pub learnings_used: Vec<String>,
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    Approve,
    Reject,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FindingDoc {
    pub lens: Lens,
    pub severity: Severity,
    /// Path relative to the repository root (no leading `/`, no `..`).
    #[schemars(
        length(min = 1),
        regex(pattern = r"\S"),
        extend("not" = { "pattern": r"^\s*(\./)*/|(^\s*|/)\.\.(/|\s*$)" })
    )]
    pub file: String,
    /// 1-based line.
    #[schemars(range(min = 1, max = 4294967295u32))]
    pub line: u32,
    /// The concrete scenario that breaks.
    #[schemars(length(min = 1), regex(pattern = r"\S"))]
    pub scenario: String,
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
            "plugin/schemas/verdict.json is stale: run HALL_WRITE_SCHEMA=1 cargo test -p hallmark schema_is_generated"
        );
    }
}
