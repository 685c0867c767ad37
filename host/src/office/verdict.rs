//! The verdict: its JSON shape (the schema the reviewer answers with, generated from
//! these types into the plugin's `schemas/verdict.json`), validation through the verdict
//! room, and the signed hallmark note struck on approval.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::commands::{Ctx, Hall};
use crate::error::{Code, HallError, Result};
use crate::git;
use crate::hallmark::{self, NOTES_REF, Note};
use crate::item::event::Finding;
use crate::item::{Action, Event, EventKind, ItemId, decide};
use crate::rooms::World;
use crate::rooms::types::CheckedVerdict;
use crate::sign::Signer;

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

/// Decides `action` (an approving verdict, or a rebase that carries an approval) and,
/// when it strikes a hallmark, signs the note the journal will then describe and
/// decides again with the signature in the action. Runs inside the item's journal
/// transaction, so what is signed is exactly what is recorded; the core never sees a
/// key.
pub fn decide_signed(
    hall: &Hall,
    ctx: &Ctx,
    id: ItemId,
    (now, events): (&crate::item::Item, &[Event]),
    mut action: Action,
    signer: &Signer,
) -> Result<Vec<Event>> {
    let kinds = decide(now, &action).map_err(|r| crate::commands::refused(id, r))?;
    let struck = kinds.iter().find_map(|k| match k {
        EventKind::Hallmarked { sha, round, .. } => Some((sha.clone(), *round)),
        _ => None,
    });
    let Some((sha, round)) = struck else {
        return Ok(kinds.into_iter().map(|k| ctx.event(Some(id), k)).collect());
    };
    let mut after: Vec<Event> = events.to_vec();
    after.extend(kinds.into_iter().map(|k| ctx.event(Some(id), k)));
    let mut note = hallmark::approval_note(&after, id, &sha, round);
    note.tree = Some(git::run(
        &hall.repo.main_root,
        &["rev-parse", &format!("{sha}^{{tree}}")],
    )?);
    let seal = hallmark::sign_note(signer, &note)?;
    match &mut action {
        Action::Verdict { seal: s, .. } | Action::Rebased { seal: s, .. } => *s = Some(seal),
        _ => return Err(HallError::internal("only an approval or a carry is signed")),
    }
    let kinds = decide(now, &action).map_err(|r| crate::commands::refused(id, r))?;
    Ok(kinds.into_iter().map(|k| ctx.event(Some(id), k)).collect())
}

/// The signer for an approval, as a held item's reason when it can't be had.
pub fn signer(hall: &Hall) -> std::result::Result<Signer, String> {
    Signer::load(Some(&hall.repo.main_root)).map_err(|e| format!("hallmarks can't be signed: {e}"))
}

/// Makes sure a hallmarked item's note is on its commit: a daemon that died between the
/// journal line and the note leaves it to be written here, once.
///
/// The note is written from the journal's `hallmarked` line and its signature; nothing
/// is signed here. A line without a signature (from before signing, or forged) becomes
/// no note at all, and a signature that doesn't match the statement the journal
/// describes is refused rather than written.
pub fn ensure_note(hall: &Hall, id: ItemId, item: &crate::item::Item) -> Result<bool> {
    let Some(sha) = item.hallmark.clone() else {
        return Ok(false);
    };
    let events = hall.journal.read_item(id)?.events;
    let seal = events.iter().rev().find_map(|e| match &e.kind {
        EventKind::Hallmarked { sha: s, seal, .. } if *s == sha => Some(seal.clone()),
        _ => None,
    });
    let Some(seal) = seal.flatten() else {
        return Err(HallError::new(
            Code::NotHallmarked,
            format!(
                "the journal's hallmark on {} is unsigned, so it can't become a note",
                crate::commands::short(&sha)
            ),
        )
        .with_check("unsigned")
        .hint(format!(
            "hall pull-back {id} --reason \"sign the approval again\""
        ))
        .hint(format!("hall log {id} --kind hallmarked")));
    };
    let existing = git::output(
        &hall.repo.main_root,
        &["notes", &format!("--ref={NOTES_REF}"), "show", &sha],
    )?;
    if existing.status.success()
        && serde_json::from_slice::<Note>(&existing.stdout)
            .is_ok_and(|n| n.sha == sha && n.item == id && n.sig.as_ref() == Some(&seal.sig))
    {
        return Ok(false);
    }
    let note = hallmark::approval_note(&events, id, &sha, item.round).sealed(&seal);
    let statement = note.statement().unwrap_or_default();
    if crate::sign::check(statement.as_bytes(), &seal.sig).is_err() {
        return Err(HallError::new(
            Code::NotHallmarked,
            format!(
                "the journal's signature on {} does not match the approval it records; the note is not written",
                crate::commands::short(&sha)
            ),
        )
        .with_check("bad_signature")
        .hint(format!("hall log {id} --kind hallmarked")));
    }
    strike(hall, &note)?;
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
