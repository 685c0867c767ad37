//! What every headless run of the loop shares: its environment, its caps and timeout,
//! and what a run that stopped short records. The command line itself is built by the
//! claude adapter's [`crate::claude::Headless`], and what the run may touch by
//! [`crate::hall::confine::run_settings`].

use std::time::Duration;

use super::{Step, budget};
use crate::claude::{RunOutcome, RunSpec};
use crate::config::{Config, Money};
use crate::error::Result;
use crate::hall::confine::RunKind;
use crate::hall::{Ctx, Hall};
use crate::item::{Action, Event, EventKind, Item, ItemId, Sha};

/// Who does a run of `kind` (its role, for the run's file and its usage) and as whom
/// it acts (`HALL_ACTOR`).
fn role_and_actor(kind: RunKind) -> (&'static str, &'static str) {
    match kind {
        RunKind::Review => ("review", "assayer"),
        RunKind::Fix => ("fix", "fixer"),
        RunKind::Resume => ("resume", "agent"),
    }
}

/// A headless run of `kind` for item `id` (Claude Code, or an external fix engine that
/// adjusts it): `program` with `args` in `cwd`,
/// stream-json out, the loop's environment with the credentials and `[sandbox]
/// remove_env` taken out, bounded by the role's timeout. Only a review must end with a
/// structured answer (its verdict).
pub fn headless_spec(
    config: &Config,
    kind: RunKind,
    id: ItemId,
    cwd: &std::path::Path,
    program: String,
    args: Vec<String>,
    prompt: &str,
) -> RunSpec {
    let (role, actor) = role_and_actor(kind);
    let timeout = match kind {
        RunKind::Review => timeout(config.budget.review.timeout.as_deref(), 20 * 60),
        RunKind::Fix => timeout(config.budget.fix.timeout.as_deref(), 30 * 60),
        RunKind::Resume => timeout(None, 30 * 60),
    };
    RunSpec {
        role: role.into(),
        program,
        args,
        cwd: cwd.to_path_buf(),
        env: base_env(kind, actor, id),
        remove_env: removed_env(config),
        timeout,
        structured: kind == RunKind::Review,
        stream_json: true,
        prompt: prompt.to_string(),
    }
}

/// What sets a read-only side run (the Front Desk's intake, the librarian) apart.
pub struct SideRun<'a> {
    /// The plugin's agent, namespaced (`hallmark:intake`).
    pub agent: &'a str,
    pub model: &'a str,
    pub schema: &'a str,
    pub max_usd: Option<f64>,
    /// The role its usage and stream are filed under.
    pub role: &'a str,
    /// `HALL_ACTOR` in the run.
    pub actor: &'a str,
    pub timeout: Duration,
}

/// A read-only headless run in the main checkout with the reviewer's isolation and
/// confinement (no hooks, no CLAUDE.md, the checkout's settings left out), answering
/// through `schema`.
pub fn side_run(
    hall: &crate::hall::Hall,
    id: ItemId,
    plugin: &std::path::Path,
    run: &SideRun<'_>,
    prompt: &str,
) -> RunSpec {
    let config = &hall.config;
    let dir = hall.repo.main_root.clone();
    let settings = crate::hall::confine::run_settings(
        config,
        RunKind::Review,
        std::slice::from_ref(&dir),
        &[],
        None,
    );
    let args = crate::claude::Headless {
        json_schema: Some(run.schema),
        model: Some(run.model),
        setting_sources: Some("user"),
        max_budget_usd: run.max_usd,
        ..crate::claude::Headless::agent(plugin, run.agent, &settings, &config.claude_args, prompt)
    }
    .args();
    let mut spec = headless_spec(
        config,
        RunKind::Review,
        id,
        &dir,
        "claude".into(),
        args,
        prompt,
    );
    spec.role = run.role.into();
    spec.timeout = run.timeout;
    for (k, v) in &mut spec.env {
        if k == "HALL_ACTOR" {
            *v = run.actor.into();
        }
    }
    spec
}

/// Environment every headless run gets: its actor and item, and no CLAUDE.md from the
/// checkout for isolated roles.
pub fn base_env(kind: RunKind, actor: &str, item: ItemId) -> Vec<(String, String)> {
    let mut env = vec![
        ("HALL_ACTOR".to_string(), actor.to_string()),
        ("HALL_ITEM".to_string(), item.to_string()),
    ];
    if kind == RunKind::Review {
        env.push(("CLAUDE_CODE_DISABLE_CLAUDE_MDS".into(), "1".into()));
    }
    env
}

/// Credentials no run should see, plus the repo's own list.
pub fn removed_env(config: &Config) -> Vec<String> {
    let mut v: Vec<String> = [
        "GH_TOKEN",
        "GITHUB_TOKEN",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    v.extend(config.sandbox.remove_env.iter().cloned());
    v
}

/// Dollars for `--max-budget-usd`, or `None` for no cap.
pub fn max_usd(money: Option<&Money>, default: f64) -> Option<f64> {
    match money {
        None => Some(default),
        Some(Money::Usd(v)) => Some(*v),
        Some(Money::Word(_)) => None,
    }
}

/// How long a run may take: `HALL_RUN_TIMEOUT`, else the configured timeout, else
/// `default_secs`.
pub fn timeout(configured: Option<&str>, default_secs: u64) -> Duration {
    if let Ok(v) = std::env::var("HALL_RUN_TIMEOUT")
        && let Ok(d) = crate::clock::parse_duration(&v)
    {
        return d;
    }
    configured
        .and_then(|t| crate::clock::parse_duration(t).ok())
        .unwrap_or(Duration::from_secs(default_secs))
}

/// Usage events for a run's models, recorded under `role` (`review`, `fix`, `resume`).
pub fn usage_events(ctx: &Ctx, id: ItemId, role: &str, o: &RunOutcome) -> Vec<Event> {
    o.usage
        .iter()
        .map(|u| {
            let mut u = u.clone();
            u.role = role.to_string();
            ctx.event(Some(id), EventKind::Usage(u))
        })
        .collect()
}

/// Records a failed run (the second in a row holds the item) with `records`; only the
/// records when the item has moved on from `sha` or is held already.
pub fn failed(
    hall: &Hall,
    ctx: &Ctx,
    id: ItemId,
    (role, reason, run): (&str, &str, &str),
    records: Vec<Event>,
    sha: &Sha,
) -> Result<Item> {
    let applied = hall.change(ctx, id).recording(records).apply_with(|now| {
        (now.sha.as_ref() == Some(sha) && now.hold.is_none()).then(|| Action::RunFailed {
            role: role.to_string(),
            reason: reason.to_string(),
            run: Some(run.to_string()),
        })
    })?;
    Ok(applied.after)
}

/// What a run that stopped short records, for any role: the plan's rate limit pauses
/// the model workers (nobody failed, the usage is kept); any other failure is a failed
/// run. `None` when the run went through.
pub fn stopped(
    hall: &Hall,
    ctx: &Ctx,
    id: ItemId,
    item: &Item,
    (role, sha): (&str, &Sha),
    o: &RunOutcome,
    usage: &[Event],
) -> Result<Option<Step>> {
    if o.rate_limited {
        let why = o.failure.as_deref().unwrap_or("429");
        let until = budget::pause_for_rate_limit(hall, ctx, why)?;
        hall.journal.append_item(id, usage)?;
        return Ok(Some(Step {
            did: format!("paused by the plan's rate limit until {until}"),
            after: item.clone(),
        }));
    }
    let Some(why) = &o.failure else {
        return Ok(None);
    };
    let after = failed(hall, ctx, id, (role, why, &o.run), usage.to_vec(), sha)?;
    Ok(Some(Step {
        did: format!("the {role} run failed: {why}"),
        after,
    }))
}
