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
use std::time::Duration;

use super::runner::{self, Kind, RunSpec};
use super::{Step, budget, verdict};
use crate::commands::{Ctx, Hall, short};
use crate::error::{HallError, Result};
use crate::git;
use crate::item::event::Finding;
use crate::item::{Action, Event, EventKind, Item, ItemId, decide};

/// What the previous round left: the commit it reviewed and its findings, with the
/// fixer's answers since.
pub struct Previous {
    pub sha: String,
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

/// The rules files and `.hallmark/review.md` as the base branch has them.
fn base_rules(hall: &Hall) -> (String, Vec<(String, String)>) {
    let root = &hall.repo.main_root;
    let Some(rev) = crate::policy::base_ref(root, &hall.config.base) else {
        return (String::new(), Vec::new());
    };
    let mut paths: Vec<String> = hall.config.rules.clone();
    paths.push(".hallmark/review.md".into());
    let files = paths
        .into_iter()
        .filter_map(|p| {
            let out = git::output(root, &["show", &format!("{rev}:{p}")]).ok()?;
            out.status
                .success()
                .then(|| (p, String::from_utf8_lossy(&out.stdout).into_owned()))
        })
        .collect();
    (rev, files)
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

/// The review prompt for the item's current round.
pub fn prompt(
    hall: &Hall,
    id: ItemId,
    item: &Item,
    events: &[Event],
    dir: &Path,
) -> Result<String> {
    let sha = item.sha.clone().unwrap_or_default();
    let base = &hall.config.base;
    let mut p = format!(
        "Review {id} round {}: commit {} against {base}.\n\nTitle: {}\n",
        item.round,
        short(&sha),
        item.title
    );
    if let Some(s) = &item.summary {
        p.push_str(&format!("The developer's summary: {s}\n"));
    }
    p.push_str(&format!(
        "\nThe checkout at {} holds exactly this commit; read any file there. Answer only by calling the StructuredOutput tool with the verdict.\n",
        dir.display()
    ));
    if let Some(skill) = crate::commands::setup::plugin_file("skills/principal-review/SKILL.md") {
        p.push_str("\n# How to review\n\n");
        p.push_str(strip_frontmatter(skill));
    }
    let (rev, rules) = base_rules(hall);
    if !rules.is_empty() {
        p.push_str(&format!(
            "\n# The repository's rules (from {base} at {})\n",
            short(&git::run(&hall.repo.main_root, &["rev-parse", &rev]).unwrap_or_default())
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
                short(&prev.sha),
                short(&prev.sha),
                short(&sha)
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
            git::run(dir, &["diff", &format!("{}..{sha}", prev.sha)])?
        }
        _ => {
            let base_rev =
                crate::policy::base_ref(&hall.repo.main_root, base).unwrap_or_else(|| base.clone());
            let mb = git::run(dir, &["merge-base", &base_rev, &sha]).unwrap_or(base_rev);
            p.push_str(&format!(
                "\n# What to review\n\nThe whole change: {}..{}.\n",
                short(&mb),
                short(&sha)
            ));
            git::run(dir, &["diff", &format!("{mb}..{sha}")])?
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
    let scope = crate::confine::Scope {
        repo: &hall.repo,
        checkout: dir,
        base: &config.base,
        domains: &config.sandbox.domains,
    };
    let settings = runner::confinement(
        config,
        Kind::Review,
        &[dir.to_path_buf()],
        &[],
        Some(&scope),
    );
    let mut args: Vec<String> = vec![
        "-p".into(),
        "--plugin-dir".into(),
        plugin.display().to_string(),
        "--agent".into(),
        "hallmark:principal-engineer".into(),
        "--json-schema".into(),
        verdict::SCHEMA_FILE.trim().to_string(),
        "--output-format".into(),
        "stream-json".into(),
        "--verbose".into(),
        "--model".into(),
        config.budget.review_model.clone(),
        "--setting-sources".into(),
        "user".into(),
        "--strict-mcp-config".into(),
        "--settings".into(),
        settings.to_string(),
    ];
    runner::finish_args(
        &mut args,
        config,
        config.budget.review.max_usd.as_ref(),
        6.0,
        prompt,
    );
    RunSpec {
        role: "review".into(),
        program: "claude".into(),
        args,
        cwd: dir.to_path_buf(),
        env: runner::base_env(Kind::Review, "assayer", &id.to_string()),
        remove_env: runner::removed_env(config),
        timeout: timeout(config.budget.review.timeout.as_deref(), 20 * 60),
        structured: true,
        stream_json: true,
        prompt: prompt.to_string(),
    }
}

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

/// Usage events for a run's models.
pub fn usage_events(ctx: &Ctx, id: ItemId, role: &str, o: &runner::RunOutcome) -> Vec<Event> {
    o.usage
        .iter()
        .map(|u| {
            let mut u = u.clone();
            u.role = role.to_string();
            ctx.event(Some(id), EventKind::Usage(u))
        })
        .collect()
}

/// Records a failed run (the second in a row holds the item).
pub fn failed(
    hall: &Hall,
    ctx: &Ctx,
    id: ItemId,
    (role, reason, run): (&str, &str, &str),
    mut extra: Vec<Event>,
    sha: &str,
) -> Result<Item> {
    let tx = hall.journal.transact(id, |now, _| {
        if now.sha.as_deref() != Some(sha) || now.hold.is_some() {
            return Ok(std::mem::take(&mut extra));
        }
        let action = Action::RunFailed {
            role: role.to_string(),
            reason: reason.to_string(),
            run: Some(run.to_string()),
        };
        let kinds = decide(now, &action).map_err(|r| crate::commands::refused(id, r))?;
        let mut out: Vec<Event> = std::mem::take(&mut extra);
        out.extend(kinds.into_iter().map(|k| ctx.event(Some(id), k)));
        Ok(out)
    })?;
    Ok(tx.after)
}

/// What a run that stopped short records, for any role: the plan's rate limit pauses
/// the model workers (nobody failed, the usage is kept); any other failure is a failed
/// run. `None` when the run went through.
pub fn stopped(
    hall: &Hall,
    ctx: &Ctx,
    id: ItemId,
    item: &Item,
    (role, sha): (&str, &str),
    o: &runner::RunOutcome,
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
    let signer = match verdict::signer(hall) {
        Ok(s) => s,
        Err(reason) => {
            let after = super::hold(hall, ctx, id, crate::item::HoldKind::RunFailed, &reason)?;
            return Ok(Step { did: reason, after });
        }
    };
    let dir = super::checks::checkout(hall, id, &sha)?;
    let events = hall.journal.read_item(id)?.events;
    let prompt = prompt(hall, id, item, &events, &dir)?;
    let plugin = crate::commands::setup::ensure_plugin()?;
    let spec = command(hall, id, &plugin, &dir, &prompt);
    let runs = runner::runs_dir(&hall.journal.item_dir(id));
    let all = runner::run_with_fallback(&runs, &ctx.stamp, &spec)?;
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
            let mut extra = usage;
            extra.push(used);
            let after = failed(hall, ctx, id, ("review", &reason, &o.run), extra, &sha)?;
            return Ok(Step { did: reason, after });
        }
    };
    let findings = verdict::findings(&checked, findings_so_far(&events) + 1);
    let model = o.usage.first().map(|u| u.model.clone());
    let max_rejects = hall.config.max_rejects;
    let tx = hall.journal.transact(id, |now, events| {
        if now.state != crate::item::State::Review || now.sha.as_deref() != Some(&sha) {
            // Pulled back (or already decided) while the reviewer ran: keep the usage only.
            return Ok(usage.clone());
        }
        let action = Action::Verdict {
            sha: sha.clone(),
            approved: checked.approved,
            findings: findings.clone(),
            model: model.clone(),
            summary: Some(checked.summary.clone()),
            by: None,
            max_rejects,
            seal: None,
        };
        let mut out = usage.clone();
        out.push(used.clone());
        out.extend(verdict::decide_signed(
            hall,
            ctx,
            id,
            (now, events),
            action,
            &signer,
        )?);
        Ok(out)
    })?;
    if tx.after.hallmark.as_deref() == Some(sha.as_str()) {
        verdict::ensure_note(hall, id, &tx.after)?;
    }
    crate::commands::sync_queue(hall, &tx.after)?;
    let did = if tx.after.state == crate::item::State::Hallmarked {
        format!("approved; hallmark struck on {}", short(&sha))
    } else if tx.after.state == crate::item::State::Escalated {
        format!(
            "changes requested ({}); escalated",
            super::checks::count(findings.len(), "finding", "findings")
        )
    } else {
        format!(
            "changes requested ({})",
            super::checks::count(findings.len(), "finding", "findings")
        )
    };
    Ok(Step {
        did,
        after: tx.after,
    })
}
