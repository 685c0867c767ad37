//! The principal engineer's run: the prompt, the exact command line, and what its
//! answer does to the item.
//!
//! The reviewer runs headless in the loop's own checkout of the frozen commit, as the
//! plugin's namespaced agent, with the verdict schema, isolated from the checkout's
//! settings, MCP servers, CLAUDE.md and hooks, and confined by `--settings`. Its rules
//! (`rules`, `.hallmark/review.md`) come from the base branch, so a branch can't soften
//! its own review; from round 2 it reads only the diff since the last round plus the
//! findings still open.
//!
//! The prompt is built by [`prompt()`]; this module reads the earlier rounds, makes the
//! command line, runs it and applies the verdict.

use std::path::Path;

use super::runs::{self, failed, stopped, usage_events};
use super::{Step, budget, verdict};
use crate::claude::{Headless, RunSpec};
use crate::error::{HallError, Result};
use crate::git;
use crate::hall::confine::{RunKind, Scope};
use crate::hall::rules::BaseTip;
use crate::hall::{Ctx, Hall, hallmark};
use crate::item::event::Finding;
use crate::item::{Action, Event, EventKind, Item, ItemId, Sha, State};

mod prompt;

pub use prompt::{REBASE_REVIEW_LINES, clip, prompt};

/// What the previous round left: the commit it reviewed and its findings, with the
/// fixer's answers since.
pub struct Previous {
    pub sha: Sha,
    pub round: u32,
    pub open: Vec<Finding>,
    pub fixed: Vec<String>,
    pub disputed: Vec<(String, String)>,
}

/// The last rejecting verdict and what happened to its findings.
pub fn previous(events: &[Event]) -> Option<Previous> {
    let at = events
        .iter()
        .rposition(|e| matches!(&e.kind, EventKind::Verdict { .. }))?;
    let EventKind::Verdict {
        sha,
        round,
        findings,
        approved: false,
        ..
    } = &events[at].kind
    else {
        return None;
    };
    let mut p = Previous {
        sha: sha.clone(),
        round: *round,
        open: findings.clone(),
        fixed: Vec::new(),
        disputed: Vec::new(),
    };
    for e in &events[at + 1..] {
        match &e.kind {
            EventKind::FixSubmitted {
                fixed, disputed, ..
            } => {
                p.fixed.extend(fixed.iter().cloned());
                p.disputed.extend(
                    disputed
                        .iter()
                        .map(|d| (d.finding.clone(), d.reason.clone())),
                );
            }
            EventKind::Commit { fixes, .. } => p.fixed.extend(fixes.iter().cloned()),
            _ => {}
        }
    }
    Some(p)
}

/// How many findings the item's verdicts have numbered so far.
pub fn findings_so_far(events: &[Event]) -> u32 {
    events
        .iter()
        .map(|e| match &e.kind {
            EventKind::Verdict { findings, .. } => findings.len() as u32,
            _ => 0,
        })
        .sum()
}

/// Counts the learnings a verdict says it relied on (their `used` and `last_used`),
/// which keeps them from ageing out. Ids the Library doesn't know are skipped; a store
/// that can't be written is only said on stderr, never a failed review.
fn record_learnings(hall: &Hall, ctx: &Ctx, used: &[String]) {
    let ids: Vec<crate::item::LearningId> = used.iter().filter_map(|u| u.parse().ok()).collect();
    if ids.is_empty() {
        return;
    }
    let library = crate::library::Library::new(
        &hall.journal,
        crate::library::Settings::from_config(&hall.config.library),
    );
    if let Err(e) = library.record_use(&ids, &ctx.stamp) {
        eprintln!("hall: the Library did not record the learnings used: {e}");
    }
}

/// What the whole change is measured from: the configured base's tip read for the step,
/// or a stacked item's own base (decision 0011); the branch name when neither resolves.
fn base_rev(hall: &Hall, item: &Item, tip: Option<&BaseTip>) -> String {
    if item.base != hall.config.base {
        crate::hall::rules::item_base_tip(hall, item).map(|t| t.sha)
    } else {
        tip.map(|t| t.sha.clone())
    }
    .unwrap_or_else(|| item.base.clone())
}

/// The reviewer's command line, exactly as the loop runs it.
pub fn command(hall: &Hall, id: ItemId, plugin: &Path, dir: &Path, prompt: &str) -> RunSpec {
    let config = &hall.config;
    let scope = Scope {
        repo: &hall.repo,
        checkout: dir,
        base: &config.base,
        domains: &config.sandbox.domains,
    };
    let settings = crate::hall::confine::run_settings(
        config,
        RunKind::Review,
        &[dir.to_path_buf()],
        &[],
        Some(&scope),
    );
    let agent = "hallmark:principal-engineer";
    let args = Headless {
        json_schema: Some(verdict::SCHEMA_FILE.trim()),
        model: Some(&config.budget.review_model),
        setting_sources: Some("user"),
        max_budget_usd: runs::max_usd(config.budget.review.max_usd.as_ref(), 6.0),
        ..Headless::agent(plugin, agent, &settings, &config.claude_args, prompt)
    }
    .args();
    runs::headless_spec(
        config,
        RunKind::Review,
        id,
        dir,
        "claude".into(),
        args,
        prompt,
    )
}

/// One review of an item in `review`.
pub fn run(hall: &Hall, ctx: &Ctx, id: ItemId, item: &Item) -> Result<Step> {
    let sha = item
        .sha
        .clone()
        .ok_or_else(|| HallError::internal("an item in review has no frozen SHA"))?;
    if let Some(stop) = budget::before_run(hall, ctx, id, item, "review")? {
        return Ok(stop);
    }
    // An approval is signed on the spot, so a key that can't be had stops the item
    // before the reviewer spends anything.
    let signer = match hallmark::signer(hall) {
        Ok(s) => s,
        Err(reason) => {
            return super::held(hall, ctx, id, crate::item::HoldKind::RunFailed, reason);
        }
    };
    let dir = crate::hall::worktree::loop_checkout(hall, id, &sha)?;
    let events = hall.events(id)?;
    let tip = crate::hall::rules::base_tip_of(hall);
    let prompt = match prompt(hall, id, item, &events, &dir, tip.as_ref()) {
        Ok(p) => p,
        // Rules that can't be read as committed are no rules to review by: a person
        // looks first.
        Err(e) if e.code == crate::error::Code::InvalidConfig => {
            let reason = format!("{}; next: `{}`", e.message, e.next.join("`, `"));
            return super::held(hall, ctx, id, crate::item::HoldKind::RunFailed, reason);
        }
        Err(e) => return Err(e),
    };
    let plugin = hall.plugin()?;
    let spec = command(hall, id, &plugin, &dir, &prompt);
    let runs_dir = crate::claude::runs_dir(&hall.journal.item_dir(id));
    let all = crate::claude::run_with_fallback(&*hall.runner, &runs_dir, &ctx.stamp, &spec)?;
    let usage: Vec<Event> = all
        .iter()
        .flat_map(|o| usage_events(ctx, id, "review", o))
        .collect();
    let Some(o) = all.last() else {
        return Err(HallError::internal("no run outcome"));
    };
    if let Some(step) = stopped(hall, ctx, id, item, ("review", &sha), o, &usage)? {
        return Ok(step);
    }
    let text = serde_json::to_string(&o.structured).map_err(HallError::internal)?;
    let (checked, used) = verdict::validate(hall, ctx, id, &text)?;
    let checked = match checked {
        Ok(c) => c,
        Err(why) => {
            let reason = format!("the verdict room refused the verdict: {why}");
            let mut records = usage;
            records.push(used);
            let after = failed(hall, ctx, id, ("review", &reason, &o.run), records, &sha)?;
            return Ok(Step { did: reason, after });
        }
    };
    let findings = verdict::findings(&checked, findings_so_far(&events) + 1);
    let model = o.usage.first().map(|u| u.model.clone());
    let max_rejects = hall.config.max_rejects;
    let applied = hall
        .change(ctx, id)
        .recording(usage)
        .grounded_on([used])
        .signed_by(&signer);
    // The approval covers the change from where the reviewer's diff started.
    let applied = match git::merge_base(&dir, &base_rev(hall, item, tip.as_ref()), sha.as_str()) {
        Ok(fork) => applied.measured_from(fork),
        Err(_) => applied,
    };
    let applied = applied.apply_with(|now| {
        // Pulled back (or already decided) while the reviewer ran: keep the usage only.
        if now.state != State::Review || now.sha.as_ref() != Some(&sha) {
            return None;
        }
        Some(Action::Verdict {
            sha: sha.clone(),
            approved: checked.approved,
            findings: findings.clone(),
            model: model.clone(),
            summary: Some(checked.summary.clone()),
            by: None,
            learnings: checked.learnings_used.clone(),
            max_rejects,
            seal: None,
        })
    })?;
    if applied.after.hallmark.as_ref() == Some(&sha) {
        hallmark::ensure_note(hall, id, &applied.after)?;
    }
    record_learnings(hall, ctx, &checked.learnings_used);
    let n = super::checks::count(findings.len(), "finding", "findings");
    let did = match applied.after.state {
        State::Hallmarked => format!("approved; hallmark struck on {}", sha.short()),
        State::Escalated => format!("changes requested ({n}); escalated"),
        _ => format!("changes requested ({n})"),
    };
    Ok(Step {
        did,
        after: applied.after,
    })
}

#[cfg(test)]
mod tests;
