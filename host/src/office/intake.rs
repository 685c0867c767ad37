//! The Front Desk's intake: one headless run (`hallmark:intake`, `[budget] intake_model`)
//! reads the request and the repository and answers with a plan
//! (`plugin/schemas/plan.json`, generated from [`Plan`]); the plan room decides whether
//! the plan may be used as parts. Every doubt fails open to one item, and the reason is
//! kept: a run that fails, times out or cannot start, an answer that is not a plan, a
//! plan the room refuses, a room that cannot be run.
//!
//! The run has the reviewer's confinement (read-only, no hooks, no CLAUDE.md, the
//! checkout's settings left out) in the main checkout, a small budget
//! (`[budget.intake] max_usd`, $0.10 unless set) and `[intake] timeout`.

use std::path::Path;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::fence::Prompt;
use super::verdict::{HAS_TEXT, OUTSIDE_THE_REPOSITORY};
use crate::claude::RunSpec;
use crate::error::{HallError, Result};
use crate::hall::{Ctx, Hall};
use crate::item::{Event, EventKind, ItemId};
use crate::rooms::World;
use crate::rooms::types::{PlanInput, PlanPart};

/// The intake's answer: whether the request splits, why, and the parts.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "Hallmark intake plan")]
pub struct Plan {
    /// True when the request splits into parts that are truly independent: disjoint
    /// paths, no ordering between them, each testable alone.
    pub split: bool,
    /// Why it splits, or why it does not.
    #[schemars(length(min = 1))]
    pub reason: String,
    /// The parts, when it splits (empty otherwise).
    pub parts: Vec<Part>,
}

/// One part of a split request.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Part {
    /// A short title for the part's item.
    #[schemars(length(min = 1), regex(pattern = &*HAS_TEXT))]
    pub title: String,
    /// Path globs, relative to the repository root (no leading `/`, no `..`, `/` as
    /// the separator), that the part alone changes (`src/api/**`, `docs/api.md`); no
    /// two parts may have globs that match a common path.
    #[schemars(length(min = 1), inner(length(min = 1), regex(pattern = &*HAS_TEXT)))]
    pub paths: Vec<String>,
    /// One line saying how to tell the part is done (its test).
    #[schemars(length(min = 1), regex(pattern = &*HAS_TEXT))]
    pub acceptance: String,
}

/// The plan's JSON Schema as `--json-schema` is given it: the generated schema with
/// `parts` capped at `max_parts` (the room refuses more, so the model is told first).
pub fn schema(max_parts: u32) -> Value {
    let generator = schemars::generate::SchemaSettings::draft07()
        .with(|s| s.inline_subschemas = true)
        .into_generator();
    let mut schema =
        serde_json::to_value(generator.into_root_schema_for::<Plan>()).unwrap_or(Value::Null);
    if let Some(fields) = schema
        .pointer_mut("/properties/parts")
        .and_then(Value::as_object_mut)
    {
        fields.insert("maxItems".into(), max_parts.into());
    }
    // A path the room refuses: outside the repository, or with a backslash.
    let refused = format!("{}|\\\\", *OUTSIDE_THE_REPOSITORY);
    if let Some(fields) = schema
        .pointer_mut("/properties/parts/items/properties/paths/items")
        .and_then(Value::as_object_mut)
    {
        fields.insert("not".into(), serde_json::json!({ "pattern": refused }));
    }
    schema
}

/// The schema file the plugin ships (`plugin/schemas/plan.json`), for the default
/// `max_parts`; the run is given [`schema`] with the configured one.
pub const SCHEMA_FILE: &str = include_str!("../../../plugin/schemas/plan.json");

/// What the intake made of a request.
#[derive(Debug, Default)]
pub struct Intake {
    /// The parts to make, when the plan was used.
    pub parts: Vec<PlanPart>,
    /// The plan room's reason codes (or the run's: `run_failed`, `timed_out`,
    /// `no_model`, `not_a_plan`, `room_failed`) when it makes one item.
    pub reasons: Vec<String>,
    /// The same in sentences, for the reply and the journal.
    pub problems: Vec<String>,
    /// The run's stream file, when a run was made.
    pub run: Option<String>,
    /// Usage and `room_used` lines to record on the item.
    pub records: Vec<Event>,
}

impl Intake {
    pub fn split(&self) -> bool {
        self.parts.len() >= 2
    }

    /// One item, for `reason` (a code) and `problem` (its sentence).
    pub fn one(reason: &str, problem: String) -> Self {
        Intake {
            reasons: vec![reason.to_string()],
            problems: vec![problem],
            ..Intake::default()
        }
    }

    /// The `intake` event for the item it made.
    pub fn event(&self) -> EventKind {
        EventKind::Intake {
            split: self.split(),
            reasons: self.reasons.clone(),
            problems: self.problems.clone(),
            run: self.run.clone(),
        }
    }
}

/// The intake run's command line, as `hall new` runs it.
pub fn command(hall: &Hall, id: ItemId, plugin: &Path, prompt: &str) -> RunSpec {
    let config = &hall.config;
    let schema = schema(config.intake.max_parts).to_string();
    let run = super::runs::SideRun {
        agent: "hallmark:intake",
        model: &config.budget.intake_model,
        schema: &schema,
        max_usd: super::runs::max_usd(config.budget.intake.max_usd.as_ref(), 0.10),
        role: "intake",
        actor: "front-desk",
        timeout: Duration::from_secs(config.intake.timeout.max(1)),
    };
    super::runs::side_run(hall, id, plugin, &run, prompt)
}

/// The prompt: the limit on parts, then the request as it was given, fenced as data
/// ([`Prompt`]), since an agent can file a request too.
fn prompt(request: &str, max_parts: u32) -> String {
    let mut p = Prompt::new();
    p.text(format!(
        "Plan this request for Hallmark's Front Desk. Split it only into parts that are \
         truly independent (disjoint paths, no ordering, each testable alone), 2 to \
         {max_parts} of them; otherwise answer split = false and say why.\n"
    ));
    p.notice();
    p.data("the request", request.to_string());
    p.render()
}

/// Runs the intake for item `id`'s `request` and judges its plan. Never fails: any
/// error is the reason the request stays one item.
pub fn run(hall: &Hall, ctx: &Ctx, id: ItemId, request: &str) -> Intake {
    match try_run(hall, ctx, id, request) {
        Ok(intake) => intake,
        Err(e) => Intake::one("run_failed", format!("the intake could not run: {e}")),
    }
}

fn try_run(hall: &Hall, ctx: &Ctx, id: ItemId, request: &str) -> Result<Intake> {
    let max_parts = hall.config.intake.max_parts;
    let plugin = hall.plugin()?;
    let prompt = prompt(request, max_parts);
    let spec = command(hall, id, &plugin, &prompt);
    let runs_dir = crate::claude::runs_dir(&hall.journal.item_dir(id));
    let outcome = match hall.runner.run(&runs_dir, &ctx.stamp, &spec) {
        Ok(o) => o,
        Err(crate::claude::ClaudeError::NotInstalled { program, .. }) => {
            return Ok(Intake::one(
                "no_model",
                format!("no model is reachable: `{program}` is not on PATH"),
            ));
        }
        Err(e) => return Err(HallError::from(e)),
    };
    let records: Vec<Event> = super::runs::usage_events(ctx, id, "intake", &outcome);
    let run = Some(outcome.run.clone());
    let with = |mut i: Intake| {
        i.run = run.clone();
        i.records = records.clone();
        i
    };
    if outcome.timed_out {
        let secs = spec.timeout.as_secs();
        return Ok(with(Intake::one(
            "timed_out",
            format!("the intake run took longer than its {secs} s"),
        )));
    }
    if outcome.not_installed {
        return Ok(with(Intake::one(
            "no_model",
            format!("no model is reachable: `{}` is not on PATH", spec.program),
        )));
    }
    // The run itself went fine and answered no plan: the answer is what failed.
    if outcome.structured.is_none() && outcome.exit_code == Some(0) {
        return Ok(with(Intake::one(
            "not_a_plan",
            "the intake answered with no plan".to_string(),
        )));
    }
    if let Some(why) = &outcome.failure {
        return Ok(with(Intake::one(
            "run_failed",
            format!("the intake run failed: {why}"),
        )));
    }
    let plan: Plan = match outcome
        .structured
        .clone()
        .map(serde_json::from_value::<Plan>)
    {
        Some(Ok(plan)) => plan,
        Some(Err(e)) => {
            return Ok(with(Intake::one(
                "not_a_plan",
                format!("the intake's answer is not a plan: {e}"),
            )));
        }
        None => {
            return Ok(with(Intake::one(
                "not_a_plan",
                "the intake answered with no plan".to_string(),
            )));
        }
    };
    let input = PlanInput {
        request: request.to_string(),
        split: plan.split,
        reason: plan.reason.clone(),
        parts: plan
            .parts
            .iter()
            .map(|p| PlanPart {
                title: p.title.clone(),
                paths: p.paths.clone(),
                acceptance: p.acceptance.clone(),
            })
            .collect(),
        max_parts,
    };
    let rooms = crate::hall::policy::runtime_for(Some(hall))?;
    let room = crate::hall::policy::room(&rooms, Some(hall), World::Plan)?;
    let used = crate::hall::policy::used(ctx, Some(id), room.info());
    let mut intake = with(Intake::default());
    intake.records.push(used);
    let judged = match room.judge_plan(&input) {
        Ok(j) => j,
        // A room that traps or outruns its deadline (thousands of globs): one item.
        Err(e) => {
            intake.reasons = vec!["room_failed".into()];
            intake.problems = vec![format!("the plan room could not judge the plan: {e}")];
            return Ok(intake);
        }
    };
    match judged {
        Ok(j) if j.split => intake.parts = input.parts,
        Ok(j) => {
            intake.reasons = j.reasons;
            intake.problems = j.problems;
            if intake.reasons.is_empty() {
                intake.reasons.push("not_split".into());
            }
        }
        Err(f) => {
            intake.reasons = vec!["room_failed".into()];
            intake.problems = vec![format!("the plan room refused the plan: {}", f.message)];
        }
    }
    Ok(intake)
}

#[cfg(test)]
mod tests {
    use super::{Plan, SCHEMA_FILE, schema};

    /// `plugin/schemas/plan.json` is the schema of [`Plan`] for the default four parts;
    /// `HALL_WRITE_SCHEMA=1` rewrites it.
    #[test]
    fn plan_schema_is_generated() {
        let want = serde_json::to_string_pretty(&schema(4)).unwrap() + "\n";
        if std::env::var_os("HALL_WRITE_SCHEMA").is_some() {
            let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../plugin/schemas/plan.json");
            std::fs::write(path, &want).unwrap();
            return;
        }
        assert_eq!(
            SCHEMA_FILE, want,
            "plugin/schemas/plan.json is stale: run HALL_WRITE_SCHEMA=1 cargo test -p hallmark-host plan_schema_is_generated"
        );
    }

    #[test]
    fn the_schema_says_what_it_can_of_the_rules() {
        let s = schema(3);
        assert_eq!(s.pointer("/properties/parts/maxItems"), Some(&3.into()));
        let part = serde_json::to_string(&s).unwrap();
        for rule in ["minItems", "minLength", "additionalProperties", "\"not\""] {
            assert!(part.contains(rule), "{rule} missing from {part}");
        }
        let plan: Plan = serde_json::from_value(serde_json::json!({
            "split": false, "reason": "one change", "parts": []
        }))
        .unwrap();
        assert!(!plan.split);
    }
}
