//! The verdict: its JSON shape (the schema the reviewer answers with, generated from
//! these types into the plugin's `schemas/verdict.json`), validation through the verdict
//! room, and the hallmark note struck on approval.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::commands::{Ctx, Hall};
use crate::error::{Code, HallError, Result};
use crate::git;
use crate::hallmark::{NOTES_REF, Note};
use crate::item::ItemId;
use crate::item::event::Finding;
use crate::rooms::World;
use crate::rooms::types::CheckedVerdict;

/// What the principal engineer answers with.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VerdictDoc {
    /// Optional, and must agree with the findings: approve means no blocker and no major.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Decision>,
    /// One paragraph: what the change does and whether it is right.
    pub summary: String,
    /// Every lens applied; a review applies all seven.
    pub lenses: Vec<LensId>,
    /// Problems found, each with the scenario that breaks.
    pub findings: Vec<FindingDoc>,
    /// Library learnings the review relied on.
    #[serde(default)]
    pub learnings_used: Vec<String>,
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    Approve,
    Reject,
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum LensId {
    FirstPrinciples,
    Correctness,
    Security,
    Data,
    Evidence,
    Operability,
    RepoRules,
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SeverityId {
    Blocker,
    Major,
    Minor,
    Nit,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FindingDoc {
    pub lens: LensId,
    pub severity: SeverityId,
    /// Path relative to the repository root.
    pub file: String,
    /// 1-based line.
    #[schemars(range(min = 1))]
    pub line: u32,
    /// The concrete scenario that breaks.
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
    let rooms = crate::policy::runtime()?;
    let room = crate::policy::room(&rooms, Some(hall), World::Verdict)?;
    let used = crate::policy::used(ctx, Some(id), room.info());
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
            lens: serde_json::to_value(f.lens)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default(),
            severity: serde_json::to_value(f.severity)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default(),
            file: f.file.clone(),
            line: Some(f.line),
            scenario: f.scenario.clone(),
        })
        .collect()
}

/// Writes the hallmark note on `sha` (replacing any note there, which can only be a
/// forgery or an earlier strike of the same approval).
pub fn strike(hall: &Hall, note: &Note) -> Result<()> {
    let body = serde_json::to_string(note).map_err(HallError::internal)?;
    let out = std::process::Command::new("git")
        .current_dir(&hall.repo.main_root)
        .env("HALL_ACTOR", note.actor.as_deref().unwrap_or("assayer"))
        .args([
            "notes",
            &format!("--ref={NOTES_REF}"),
            "add",
            "-f",
            "-m",
            &body,
            &note.sha,
        ])
        .output()?;
    if !out.status.success() {
        return Err(HallError::new(
            Code::CommandFailed,
            format!(
                "could not write the hallmark note on {}: {}",
                crate::commands::short(&note.sha),
                String::from_utf8_lossy(&out.stderr).trim()
            ),
        ));
    }
    Ok(())
}

/// Makes sure a hallmarked item's note is on its commit: a daemon that died between the
/// journal line and the note leaves it to be written here, once.
pub fn ensure_note(hall: &Hall, id: ItemId, item: &crate::item::Item) -> Result<bool> {
    let Some(sha) = item.hallmark.clone() else {
        return Ok(false);
    };
    let existing = git::output(
        &hall.repo.main_root,
        &["notes", &format!("--ref={NOTES_REF}"), "show", &sha],
    )?;
    if existing.status.success()
        && serde_json::from_slice::<Note>(&existing.stdout)
            .is_ok_and(|n| n.sha == sha && n.item == id)
    {
        return Ok(false);
    }
    let events = hall.journal.read_item(id)?.events;
    // A carried approval names the commit that was reviewed.
    let approved_sha = events.iter().rev().find_map(|e| match &e.kind {
        crate::item::EventKind::Rebased {
            from,
            sha: to,
            carried: true,
        } if *to == sha => Some(from.clone()),
        _ => None,
    });
    let (model, actor, open) = events
        .iter()
        .rev()
        .find_map(|e| match &e.kind {
            // The approval itself, not its carrying across a rebase.
            crate::item::EventKind::Verdict {
                approved: true,
                model,
                findings,
                by,
                ..
            } if by.as_deref() != Some("carried") => Some((
                model.clone(),
                e.actor.clone(),
                findings.iter().map(|f| f.id.clone()).collect::<Vec<_>>(),
            )),
            _ => None,
        })
        .unwrap_or((None, "assayer".to_string(), Vec::new()));
    strike(
        hall,
        &Note {
            v: 1,
            item: id,
            sha,
            round: item.round,
            model,
            open_findings: open,
            actor: Some(actor),
            approved_sha,
        },
    )?;
    Ok(true)
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
