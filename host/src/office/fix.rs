//! The Repair Shop: the fixer works in the item's worktree on the open findings and the
//! failing checks, commits, and says what it fixed with `hall fixed`.
//!
//! `fixer = "claude -p"` (the default) runs the plugin's fixer agent headless, with the
//! hooks on, so the gates refuse it `ready`, `retry`, `drop`, `verdict` and pushes. Any
//! other `fixer` is an external fix engine, run through the platform shell with the
//! prompt in `HALL_PROMPT_FILE`. A fixer that commits but forgets `hall fixed` is
//! resubmitted for it (claiming no findings); one that changes nothing, or leaves the
//! worktree dirty, has failed its run.

use std::path::Path;

use super::runs::{self, failed, stopped, usage_events};
use super::{Step, budget, review};
use crate::claude::{Headless, RunSpec};
use crate::error::{HallError, IoContext, Result};
use crate::git;
use crate::hall::confine::{RunKind, Scope};
use crate::hall::{Ctx, Hall};
use crate::item::{Action, EventKind, Item, ItemId, Sha, State};

/// Open findings and failing checks, as the fixer (and `hall findings`) sees them.
pub fn brief(
    events: &[crate::item::Event],
    item: &Item,
) -> (Vec<crate::item::event::Finding>, Vec<FailedCheck>) {
    let open = match review::previous(events) {
        // Findings of a verdict older than the last fix are closed or disputed once claimed.
        Some(p) => p
            .open
            .into_iter()
            .filter(|f| !p.fixed.contains(&f.id) && !p.disputed.iter().any(|(d, _)| *d == f.id))
            .collect(),
        None => Vec::new(),
    };
    // Open findings exist only while the last verdict is the latest word.
    let open = if item.state == State::Hallmarked {
        Vec::new()
    } else {
        open
    };
    let mut checks = Vec::new();
    if let Some(at) = events.iter().rposition(|e| {
        matches!(
            e.kind,
            EventKind::ChecksFailed { .. } | EventKind::ChecksPassed { .. }
        )
    }) && let EventKind::ChecksFailed { sha, .. } = &events[at].kind
    {
        for e in events[..at].iter().rev() {
            match &e.kind {
                EventKind::CheckRun {
                    sha: s,
                    check,
                    exit_code,
                    output,
                    log,
                    ..
                } if s == sha && *exit_code != 0 => checks.push(FailedCheck {
                    check: check.clone(),
                    exit_code: *exit_code,
                    output: output.clone().unwrap_or_default(),
                    log: log.clone(),
                    sha: sha.clone(),
                }),
                EventKind::ChecksFailed { .. } | EventKind::ChecksPassed { .. } => break,
                _ => {}
            }
        }
        checks.reverse();
    }
    (open, checks)
}

#[derive(Clone, Debug, serde::Serialize, schemars::JsonSchema)]
pub struct FailedCheck {
    /// The check's command line.
    pub check: String,
    pub exit_code: i32,
    /// The condensed output.
    pub output: String,
    /// The whole output (`hall run --show <log>`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log: Option<String>,
    pub sha: Sha,
}

/// The fixer's prompt.
pub fn prompt(id: ItemId, item: &Item, events: &[crate::item::Event]) -> String {
    let (open, checks) = brief(events, item);
    let mut p = format!(
        "Fix {id} (\"{}\") in this worktree, at {}.\n\n",
        item.title,
        item.sha.as_ref().map(Sha::short).unwrap_or("")
    );
    if !checks.is_empty() {
        p.push_str("# Failing checks\n\n");
        for c in &checks {
            p.push_str(&format!(
                "## `{}` exited {}\n\n{}\n",
                c.check,
                c.exit_code,
                review::clip(
                    c.output.trim_end().to_string(),
                    crate::platform::max_arg_bytes() / 4
                )
            ));
            if let Some(log) = &c.log {
                p.push_str(&format!(
                    "(whole output: `hall run --show {log} --grep <text>`)\n"
                ));
            }
            p.push('\n');
        }
    }
    if !open.is_empty() {
        p.push_str("# Open findings\n\n");
        for f in &open {
            p.push_str(&format!("- {f}\n"));
        }
        p.push('\n');
    }
    let ids: Vec<&str> = open.iter().map(|f| f.id.as_str()).collect();
    p.push_str(&format!(
        "Fix the causes, run the checks with `hall run -- <check>`, commit, then run `hall fixed {}` (add `--dispute <id> --reason \"…\"` for a finding you show is wrong). Never push, and never run `hall ready`, `retry`, `drop` or `verdict`.\n",
        if ids.is_empty() { "<ids>".to_string() } else { ids.join(" ") }
    ));
    p
}

fn is_claude(fixer: &str) -> bool {
    fixer
        .split_whitespace()
        .next()
        .and_then(|w| Path::new(w).file_name())
        .is_some_and(|n| n == "claude" || n == "claude.exe")
}

/// The fixer's command line.
pub fn command(
    hall: &Hall,
    id: ItemId,
    plugin: &Path,
    wt: &Path,
    prompt: &str,
    prompt_file: &Path,
) -> RunSpec {
    let config = &hall.config;
    let timeout = runs::timeout(config.budget.fix.timeout.as_deref(), 30 * 60);
    let mut env = runs::base_env(RunKind::Fix, "fixer", id);
    if !is_claude(&config.fixer) {
        env.push(("HALL_PROMPT_FILE".into(), prompt_file.display().to_string()));
        let shell = crate::platform::shell(&config.fixer);
        let program = shell.get_program().to_string_lossy().into_owned();
        let args = shell
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        return RunSpec {
            role: "fix".into(),
            program,
            args,
            cwd: wt.to_path_buf(),
            env,
            remove_env: Vec::new(),
            timeout,
            structured: false,
            stream_json: false,
            prompt: prompt.to_string(),
        };
    }
    let mut words = config.fixer.split_whitespace().map(str::to_string);
    let program = words.next().unwrap_or_else(|| "claude".into());
    let git_dir = git::absolute_git_dir(wt).unwrap_or_else(|_| wt.join(".git"));
    let scope = Scope {
        repo: &hall.repo,
        checkout: wt,
        base: &config.base,
        domains: &config.sandbox.domains,
    };
    let _ = crate::hall::confine::prepare(&scope);
    let settings = crate::hall::confine::run_settings(
        config,
        RunKind::Fix,
        &[wt.to_path_buf()],
        &[wt.to_path_buf(), git_dir, std::env::temp_dir()],
        Some(&scope),
    );
    let args = Headless {
        lead: words.collect(),
        plugin_dir: Some(plugin),
        agent: Some("hallmark:fixer"),
        model: Some(&config.budget.fix_model),
        permission_mode: Some("acceptEdits"),
        strict_mcp: true,
        settings: Some(&settings),
        max_budget_usd: runs::max_usd(config.budget.fix.max_usd.as_ref(), 2.0),
        extra: &config.claude_args,
        prompt,
        ..Headless::default()
    }
    .args();
    RunSpec {
        role: "fix".into(),
        program,
        args,
        cwd: wt.to_path_buf(),
        env,
        remove_env: runs::removed_env(config),
        timeout,
        structured: false,
        stream_json: true,
        prompt: prompt.to_string(),
    }
}

/// One fixer run for an item in `fixing`.
pub fn run(hall: &Hall, ctx: &Ctx, id: ItemId, item: &Item) -> Result<Step> {
    let sha = item
        .sha
        .clone()
        .ok_or_else(|| HallError::internal("an item in fixing has no SHA"))?;
    if let Some(stop) = budget::before_run(hall, ctx, id, item, "fix")? {
        return Ok(stop);
    }
    let wt = hall.worktree_of(item);
    if !wt.is_dir() {
        let why = format!("the worktree {} is gone", wt.display());
        let after = failed(hall, ctx, id, ("fix", &why, ""), Vec::new(), &sha)?;
        return Ok(Step {
            did: "the worktree is gone".into(),
            after,
        });
    }
    let events = hall.events(id)?;
    let prompt = prompt(id, item, &events);
    let plugin = crate::hall::plugin::ensure_plugin()?;
    let runs_dir = crate::claude::runs_dir(&hall.journal.item_dir(id));
    std::fs::create_dir_all(&runs_dir).at(&runs_dir)?;
    let prompt_file = runs_dir.join("fix-prompt.md");
    std::fs::write(&prompt_file, &prompt).at(&prompt_file)?;
    let head_before = git::head(&wt).ok();
    let spec = command(hall, id, &plugin, &wt, &prompt, &prompt_file);
    let all = crate::claude::run_with_fallback(&*hall.runner, &runs_dir, &ctx.stamp, &spec)?;
    let usage: Vec<crate::item::Event> = all
        .iter()
        .flat_map(|o| usage_events(ctx, id, "fix", o))
        .collect();
    let Some(o) = all.last() else {
        return Err(HallError::internal("no run outcome"));
    };
    let now = hall.item(id)?;
    if now.state != State::Fixing || now.sha.as_ref() != Some(&sha) {
        // The fixer submitted with `hall fixed` (or a person moved the item).
        hall.journal.append_item(id, &usage)?;
        return Ok(Step {
            did: format!("fixed; now {}", now.state),
            after: now,
        });
    }
    if let Some(step) = stopped(hall, ctx, id, item, ("fix", &sha), o, &usage)? {
        return Ok(step);
    }
    let head = git::head(&wt).ok();
    let dirty = git::dirty_paths(&wt).unwrap_or_default();
    let Some(head) =
        head.filter(|h| dirty.is_empty() && head_before.as_ref() != Some(h) && *h != sha)
    else {
        let why = if dirty.is_empty() {
            "the fixer committed nothing".to_string()
        } else {
            format!("the fixer left uncommitted changes: {}", dirty.join(", "))
        };
        let after = failed(hall, ctx, id, ("fix", &why, &o.run), usage, &sha)?;
        return Ok(Step { did: why, after });
    };
    // Committed without `hall fixed`: resubmit on its behalf, claiming nothing.
    let applied = hall
        .change(ctx, id)
        .recording(usage)
        .apply(Action::FixSubmitted {
            sha: head.clone(),
            fixed: Vec::new(),
            disputed: Vec::new(),
        })?;
    Ok(Step {
        did: format!(
            "the fixer committed {} without `hall fixed`; resubmitted",
            head.short()
        ),
        after: applied.after,
    })
}
