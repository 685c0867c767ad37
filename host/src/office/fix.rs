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

use super::runner::{self, Kind, RunSpec};
use super::{Step, budget, review};
use crate::commands::{Ctx, Hall, short};
use crate::error::{HallError, Result};
use crate::git;
use crate::item::{Action, EventKind, Item, ItemId, State, decide, fold};

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
                    gate,
                    exit_code,
                    output,
                    log,
                    ..
                } if s == sha && *exit_code != 0 => checks.push(FailedCheck {
                    gate: gate.clone(),
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
    pub gate: String,
    pub exit_code: i32,
    /// The condensed output.
    pub output: String,
    /// The whole output (`hall run --show <log>`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log: Option<String>,
    pub sha: String,
}

/// The fixer's prompt.
pub fn prompt(id: ItemId, item: &Item, events: &[crate::item::Event]) -> String {
    let (open, checks) = brief(events, item);
    let mut p = format!(
        "Fix {id} (\"{}\") in this worktree, at {}.\n\n",
        item.title,
        short(item.sha.as_deref().unwrap_or(""))
    );
    if !checks.is_empty() {
        p.push_str("# Failing checks\n\n");
        for c in &checks {
            p.push_str(&format!(
                "## `{}` exited {}\n\n{}\n",
                c.gate,
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
        "Fix the causes, run the gates with `hall run -- <gate>`, commit, then run `hall fixed {}` (add `--dispute <id> --reason \"…\"` for a finding you show is wrong). Never push, and never run `hall ready`, `retry`, `drop` or `verdict`.\n",
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
    let timeout = review::timeout(config.budget.fix.timeout.as_deref(), 30 * 60);
    let mut env = runner::base_env(Kind::Fix, "fixer", &id.to_string());
    if !is_claude(&config.fixer) {
        env.push(("HALL_PROMPT_FILE".into(), prompt_file.display().to_string()));
        let mut shell = crate::platform::shell(&config.fixer);
        let program = shell.get_program().to_string_lossy().into_owned();
        let args = shell
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let _ = &mut shell;
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
    let git_dir = git::run(wt, &["rev-parse", "--absolute-git-dir"])
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|_| wt.join(".git"));
    let scope = crate::confine::Scope {
        repo: &hall.repo,
        checkout: wt,
        base: &config.base,
        domains: &config.sandbox.domains,
    };
    let _ = crate::confine::prepare(&scope);
    let settings = runner::confinement(
        config,
        Kind::Fix,
        &[wt.to_path_buf()],
        &[wt.to_path_buf(), git_dir, std::env::temp_dir()],
        Some(&scope),
    );
    let mut args: Vec<String> = words.collect();
    if !args.iter().any(|a| a == "-p" || a == "--print") {
        args.push("-p".into());
    }
    args.extend([
        "--plugin-dir".to_string(),
        plugin.display().to_string(),
        "--agent".into(),
        "hallmark:fixer".into(),
        "--output-format".into(),
        "stream-json".into(),
        "--verbose".into(),
        "--model".into(),
        config.budget.fix_model.clone(),
        "--permission-mode".into(),
        "acceptEdits".into(),
        "--strict-mcp-config".into(),
        "--settings".into(),
        settings.to_string(),
    ]);
    runner::finish_args(
        &mut args,
        config,
        config.budget.fix.max_usd.as_ref(),
        2.0,
        prompt,
    );
    RunSpec {
        role: "fix".into(),
        program,
        args,
        cwd: wt.to_path_buf(),
        env,
        remove_env: runner::removed_env(config),
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
        let after = review::failed(
            hall,
            ctx,
            id,
            ("fix", &format!("the worktree {} is gone", wt.display()), ""),
            Vec::new(),
            &sha,
        )?;
        return Ok(Step {
            did: "the worktree is gone".into(),
            after,
        });
    }
    let events = hall.journal.read_item(id)?.events;
    let prompt = prompt(id, item, &events);
    let plugin = crate::commands::setup::ensure_plugin()?;
    let runs = runner::runs_dir(&hall.journal.item_dir(id));
    std::fs::create_dir_all(&runs)?;
    let prompt_file = runs.join("fix-prompt.md");
    std::fs::write(&prompt_file, &prompt)?;
    let head_before = git::head(&wt).unwrap_or_default();
    let spec = command(hall, id, &plugin, &wt, &prompt, &prompt_file);
    let all = runner::run_with_fallback(&runs, &ctx.stamp, &spec)?;
    let usage: Vec<crate::item::Event> = all
        .iter()
        .flat_map(|o| review::usage_events(ctx, id, "fix", o))
        .collect();
    let Some(o) = all.last() else {
        return Err(HallError::internal("no run outcome"));
    };
    let now = fold(&hall.journal.read_item(id)?.events);
    if now.state != State::Fixing || now.sha.as_deref() != Some(&sha) {
        // The fixer submitted with `hall fixed` (or a person moved the item).
        hall.journal.append_item(id, &usage)?;
        return Ok(Step {
            did: format!("fixed; now {}", now.state),
            after: now,
        });
    }
    if let Some(step) = review::stopped(hall, ctx, id, item, ("fix", &sha), o, &usage)? {
        return Ok(step);
    }
    let head = git::head(&wt).unwrap_or_default();
    let dirty = git::dirty_paths(&wt).unwrap_or_default();
    if !dirty.is_empty() || head == head_before || head == sha {
        let why = if dirty.is_empty() {
            "the fixer committed nothing".to_string()
        } else {
            format!("the fixer left uncommitted changes: {}", dirty.join(", "))
        };
        let after = review::failed(hall, ctx, id, ("fix", &why, &o.run), usage, &sha)?;
        return Ok(Step { did: why, after });
    }
    // Committed without `hall fixed`: resubmit on its behalf, claiming nothing.
    let tx = hall.journal.transact(id, |now, _| {
        let kinds = decide(
            now,
            &Action::FixSubmitted {
                sha: head.clone(),
                fixed: Vec::new(),
                disputed: Vec::new(),
            },
        )
        .map_err(|r| crate::commands::refused(id, r))?;
        let mut out = usage.clone();
        out.extend(kinds.into_iter().map(|k| ctx.event(Some(id), k)));
        Ok(out)
    })?;
    crate::commands::sync_queue(hall, &tx.after)?;
    Ok(Step {
        did: format!(
            "the fixer committed {} without `hall fixed`; resubmitted",
            short(&head)
        ),
        after: tx.after,
    })
}
