//! `hall policy report`: what the tool-call policy said, per detector, so a person can
//! tune the counts before turning a detector to `enforce`.
//!
//! Read from the repository's journal, where the hooks write a `tool_policy` line for
//! each nudge, would-block and block. The report counts and names sessions; it never
//! shows the calls themselves unless asked for with `--calls`.

use std::collections::BTreeMap;

use serde::Serialize;

use super::{Ctx, Reply};
use crate::cli::{PolicyCmd, PolicyReportArgs};
use crate::config::PolicyMode;
use crate::error::Result;
use crate::hall::tool_policy::{Settings, user_policy};
use crate::item::EventKind;

/// The most calls `--calls` lists.
const CALLS: usize = 50;

#[derive(Serialize, schemars::JsonSchema)]
pub struct PolicyReport {
    /// Only lines since this time, when asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub since: Option<String>,
    /// One row per detector that spoke, then every configured one that didn't.
    pub detectors: Vec<DetectorRow>,
    /// How many sessions the counted lines come from.
    pub sessions: usize,
    /// The newest calls the policy spoke about, newest first (with `--calls`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub calls: Vec<CallRow>,
    pub next: Vec<String>,
}

#[derive(Serialize, schemars::JsonSchema, Default)]
pub struct DetectorRow {
    pub detector: String,
    /// Its mode now: `off`, `observe` or `enforce`.
    pub mode: String,
    pub nudge_at: u32,
    pub block_at: u32,
    /// Nudges that were only nudges.
    pub nudges: u64,
    /// Blocks or questions that `observe` mode turned into nudges.
    pub would_block: u64,
    /// Calls denied.
    pub blocks: u64,
    /// Calls a person was asked about.
    pub asks: u64,
}

#[derive(Serialize, schemars::JsonSchema)]
pub struct CallRow {
    pub t: String,
    pub detector: String,
    pub action: String,
    pub would_block: bool,
    pub tool: String,
    pub call: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub item: Option<String>,
}

pub fn run(ctx: &Ctx, cmd: &PolicyCmd) -> Result<Reply> {
    match cmd {
        PolicyCmd::Report(args) => report(ctx, args),
    }
}

fn report(ctx: &Ctx, args: &PolicyReportArgs) -> Result<Reply> {
    let hall = ctx.hall()?;
    let since = match &args.since {
        Some(s) => Some(super::since(ctx, s)?),
        None => None,
    };
    let user = hall.user_config_dir().map(|d| user_policy(&d)).transpose();
    let user = match user {
        Ok(p) => p.flatten(),
        Err(e) => {
            return Err(crate::error::HallError::new(
                crate::error::Code::InvalidConfig,
                format!("the user's [policy] can't be read: {e}"),
            )
            .hint("hall schema config"));
        }
    };
    let settings = Settings::resolve(&hall.config.policy, user.as_ref());
    let events = crate::journal::file::read(&hall.journal.repo_file())?.events;
    let mut rows: BTreeMap<String, DetectorRow> = BTreeMap::new();
    let mut sessions = std::collections::BTreeSet::new();
    let mut calls = Vec::new();
    for e in events.iter().rev() {
        let EventKind::ToolPolicy {
            detector,
            action,
            would_block,
            tool,
            call,
            session,
            ..
        } = &e.kind
        else {
            continue;
        };
        if since.as_deref().is_some_and(|s| e.t.as_str() < s) {
            continue;
        }
        let row = rows.entry(detector.clone()).or_default();
        match (action.as_str(), would_block) {
            (_, true) => row.would_block += 1,
            ("deny", _) => row.blocks += 1,
            ("ask", _) => row.asks += 1,
            _ => row.nudges += 1,
        }
        if let Some(s) = session {
            sessions.insert(s.clone());
        }
        if args.calls && calls.len() < CALLS {
            calls.push(CallRow {
                t: e.t.clone(),
                detector: detector.clone(),
                action: action.clone(),
                would_block: *would_block,
                tool: tool.clone(),
                call: call.clone(),
                item: e.item.map(|i| i.to_string()),
            });
        }
    }
    let mut detectors = Vec::new();
    for d in &settings.detectors {
        let mut row = rows.remove(&d.name).unwrap_or_default();
        row.detector = d.name.clone();
        row.mode = mode_name(settings.mode_of(&d.name)).into();
        row.nudge_at = d.nudge_at;
        row.block_at = d.block_at;
        detectors.push(row);
    }
    // Detectors a repository's room named that no setting lists.
    for (name, mut row) in rows {
        row.mode = mode_name(settings.mode_of(&name)).into();
        row.detector = name;
        detectors.push(row);
    }
    let total: u64 = detectors
        .iter()
        .map(|r| r.nudges + r.would_block + r.blocks + r.asks)
        .sum();
    let mut text = format!(
        "tool policy: {total} verdicts across {} session(s){}\n\n{:<14} {:<8} {:>6} {:>6} {:>7} {:>12} {:>7} {:>5}\n",
        sessions.len(),
        since
            .as_deref()
            .map(|s| format!(" since {s}"))
            .unwrap_or_default(),
        "detector",
        "mode",
        "nudge",
        "block",
        "nudges",
        "would-block",
        "blocks",
        "asks",
    );
    for r in &detectors {
        text.push_str(&format!(
            "{:<14} {:<8} {:>6} {:>6} {:>7} {:>12} {:>7} {:>5}\n",
            r.detector, r.mode, r.nudge_at, r.block_at, r.nudges, r.would_block, r.blocks, r.asks
        ));
    }
    for c in &calls {
        let what = if c.would_block {
            "would block"
        } else {
            &c.action
        };
        text.push_str(&format!(
            "\n{} {} {what}: {} ({})",
            c.t, c.detector, c.call, c.tool
        ));
    }
    let next = vec![
        "hall policy report --calls".to_string(),
        "hall schema config".to_string(),
    ];
    Ok(Reply::new(
        &PolicyReport {
            since,
            detectors,
            sessions: sessions.len(),
            calls,
            next,
        },
        text.trim_end().to_string(),
    ))
}

fn mode_name(mode: PolicyMode) -> &'static str {
    match mode {
        PolicyMode::Off => "off",
        PolicyMode::Observe => "observe",
        PolicyMode::Enforce => "enforce",
    }
}
