//! The principal engineer's run: the prompt, the exact command line, and what its
//! answer does to the item.
//!
//! The reviewer runs headless in the loop's own checkout of the frozen commit, as the
//! plugin's namespaced agent, with the verdict schema, isolated from the checkout's
//! settings, MCP servers, CLAUDE.md and hooks, and confined by `--settings`. Its rules
//! (`rules`, `.hallmark/review.md`) come from the base branch, so a branch can't soften
//! its own review; from round 2 it reads only the diff since the last round plus the
//! findings still open.

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

fn strip_frontmatter(text: &str) -> &str {
    text.strip_prefix("---")
        .and_then(|rest| rest.find("\n---").map(|i| &rest[i + 4..]))
        .unwrap_or(text)
        .trim_start()
}

/// The rules files and `.hallmark/review.md` as the base tip has them.
fn base_rules(hall: &Hall, tip: &BaseTip) -> Vec<(String, String)> {
    let mut paths: Vec<String> = hall.config.rules.clone();
    paths.push(".hallmark/review.md".into());
    paths
        .into_iter()
        .filter_map(|p| {
            let bytes = git::show_file(&hall.repo.main_root, &tip.sha, &p).ok()??;
            Some((p, String::from_utf8_lossy(&bytes).into_owned()))
        })
        .collect()
}

/// Cuts `text` to `max` bytes (on a character boundary), saying where the rest is.
pub fn clip(text: String, max: usize) -> String {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!(
        "{}\n… (diff truncated at {} KB; read the files in the checkout for the rest)\n",
        &text[..end],
        max / 1024
    )
}

/// The review prompt for the item's current round. `tip` is the base branch's tip,
/// read once for the whole step: the rules come from it, and the whole change is
/// measured against it.
pub fn prompt(
    hall: &Hall,
    id: ItemId,
    item: &Item,
    events: &[Event],
    dir: &Path,
    tip: Option<&BaseTip>,
) -> Result<String> {
    let sha = item.sha.clone().unwrap_or_default();
    let base = &hall.config.base;
    let mut p = format!(
        "Review {id} round {}: commit {} against {base}.\n\nTitle: {}\n",
        item.round,
        sha.short(),
        item.title
    );
    if let Some(s) = &item.summary {
        p.push_str(&format!("The developer's summary: {s}\n"));
    }
    p.push_str(&format!(
        "\nThe checkout at {} holds exactly this commit; read any file there. Answer only by calling the StructuredOutput tool with the verdict.\n",
        dir.display()
    ));
    if let Some(skill) = crate::hall::plugin::plugin_file("skills/principal-review/SKILL.md") {
        p.push_str("\n# How to review\n\n");
        p.push_str(strip_frontmatter(skill));
    }
    let rules = tip.map(|t| base_rules(hall, t)).unwrap_or_default();
    if let (Some(tip), false) = (tip, rules.is_empty()) {
        p.push_str(&format!(
            "\n# The repository's rules (from {base} at {})\n",
            crate::item::sha::short(&tip.sha)
        ));
        for (path, text) in rules {
            let text = clip(
                text.trim_end().to_string(),
                crate::platform::max_arg_bytes() / 8,
            );
            p.push_str(&format!("\n## {path}\n\n{text}\n"));
        }
    }
    let previous = previous(events);
    let diff = match &previous {
        Some(prev) if prev.sha != sha && git::is_ancestor(dir, &prev.sha, &sha) => {
            p.push_str(&format!(
                "\n# What to review\n\nRound {} asked for changes at {}. Review only what changed since then ({}..{}), and decide for each open finding whether it is fixed. Findings still open go into this verdict again; one you leave out counts as fixed.\n\nOpen findings:\n",
                prev.round,
                prev.sha.short(),
                prev.sha.short(),
                sha.short()
            ));
            for f in &prev.open {
                let claim = if prev.fixed.contains(&f.id) {
                    " (the fixer says it is fixed)".to_string()
                } else if let Some((_, why)) = prev.disputed.iter().find(|(d, _)| *d == f.id) {
                    format!(" (the fixer disputes it: {why})")
                } else {
                    String::new()
                };
                p.push_str(&format!("- {f}{claim}\n"));
            }
            git::diff(dir, &prev.sha, &sha)?
        }
        _ => {
            let base_rev = tip.map(|t| t.sha.clone()).unwrap_or_else(|| base.clone());
            let mb = git::merge_base(dir, &base_rev, &sha)
                .map(Sha::into_string)
                .unwrap_or(base_rev);
            p.push_str(&format!(
                "\n# What to review\n\nThe whole change: {}..{}.\n",
                crate::item::sha::short(&mb),
                sha.short()
            ));
            git::diff(dir, &mb, &sha)?
        }
    };
    // The prompt is one argument: the diff gets what the platform's limit leaves.
    let room = crate::platform::max_arg_bytes().saturating_sub(p.len() + 256);
    p.push_str("\n```diff\n");
    p.push_str(&clip(diff, room));
    p.push_str("\n```\n");
    Ok(p)
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
    let args = Headless {
        plugin_dir: Some(plugin),
        agent: Some("hallmark:principal-engineer"),
        json_schema: Some(verdict::SCHEMA_FILE.trim()),
        model: Some(&config.budget.review_model),
        setting_sources: Some("user"),
        strict_mcp: true,
        settings: Some(&settings),
        max_budget_usd: runs::max_usd(config.budget.review.max_usd.as_ref(), 6.0),
        extra: &config.claude_args,
        prompt,
        ..Headless::default()
    }
    .args();
    runs::headless_spec(config, RunKind::Review, id, dir, "claude".into(), args, prompt)
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
    let prompt = prompt(hall, id, item, &events, &dir, tip.as_ref())?;
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
        .signed_by(&signer)
        .apply_with(|now| {
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
                max_rejects,
                seal: None,
            })
        })?;
    if applied.after.hallmark.as_ref() == Some(&sha) {
        hallmark::ensure_note(hall, id, &applied.after)?;
    }
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
