//! `hall budget [--set k=v] [--grant [<tokens>]]`: the caps and today's spend.

use serde::Serialize;

use super::{Ctx, Reply, next_text};
use crate::cli::BudgetArgs;
use crate::config::{Config, parse_tokens};
use crate::error::{Code, HallError, IoContext, Result};
use crate::item::EventKind;
use crate::office::budget::{self, Status};

#[derive(Serialize, schemars::JsonSchema)]
pub struct BudgetReply {
    #[serde(flatten)]
    pub status: Status,
    /// Caps changed by `--set`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub set: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub granted: Option<u64>,
    pub next: Vec<String>,
}

const KEYS: &[&str] = &["daily", "per_item", "review_model", "fix_model"];
const ROLES: &[&str] = &["review", "fix", "intake", "librarian"];

/// Edits one `[budget]` key in `.hallmark.toml`, keeping the file's comments and layout.
fn set(path: &std::path::Path, assignment: &str) -> Result<String> {
    let (key, value) = assignment.split_once('=').ok_or_else(|| {
        HallError::usage(format!("--set takes key=value, not `{assignment}`"))
            .hint("hall budget --set daily=6M")
    })?;
    let (key, value) = (key.trim(), value.trim());
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let mut doc: toml_edit::DocumentMut = text
        .parse()
        .map_err(|e| HallError::new(Code::InvalidConfig, format!("{}: {e}", path.display())))?;
    if !doc.contains_key("budget") {
        doc["budget"] = toml_edit::table();
    }
    let item = match key.split_once('.') {
        Some((role, field))
            if ROLES.contains(&role) && matches!(field, "daily" | "max_usd" | "timeout") =>
        {
            let budget = &mut doc["budget"];
            if budget.get(role).is_none() {
                budget[role] = toml_edit::table();
            }
            &mut budget[role][field]
        }
        None if KEYS.contains(&key) => &mut doc["budget"][key],
        _ => {
            return Err(HallError::usage(format!("`{key}` is not a budget key"))
                .hint("hall budget --set daily=6M")
                .hint("hall budget --set review.max_usd=3"));
        }
    };
    *item = if key.ends_with("max_usd") && value.parse::<f64>().is_ok() {
        toml_edit::value(value.parse::<f64>().unwrap_or_default())
    } else {
        toml_edit::value(value)
    };
    let new = doc.to_string();
    // Refuse a value the config would reject, before writing it.
    Config::parse(&new, path)?;
    crate::journal::file::write_atomic(path, new.as_bytes()).at(path)?;
    Ok(format!("{key} = {value}"))
}

pub fn run(ctx: &Ctx, args: &BudgetArgs) -> Result<Reply> {
    let mut hall = ctx.hall()?;
    let mut changed = Vec::new();
    if !args.set.is_empty() {
        let _you = ctx.person("budget --set", "sets the loop's budget caps")?;
        let path = Config::path(&hall.repo.main_root);
        for a in &args.set {
            changed.push(set(&path, a)?);
        }
        hall.config = Config::load(&hall.repo.main_root)?;
    }
    let mut granted = None;
    if let Some(g) = &args.grant {
        let _you = ctx.person("budget --grant", "lets the loop spend past today's cap")?;
        let tokens = if g.trim().is_empty() {
            parse_tokens(&hall.config.budget.daily)
                .ok()
                .flatten()
                .unwrap_or(0)
        } else {
            parse_tokens(g)
                .map_err(|e| HallError::usage(format!("--grant: {e}")))?
                .ok_or_else(|| HallError::usage("--grant needs a number, e.g. 2M"))?
        };
        hall.journal.append_repo(&[ctx.event(
            None,
            EventKind::BudgetGranted {
                day: budget::day(&ctx.stamp),
                tokens,
            },
        )])?;
        granted = Some(tokens);
    }
    let status = budget::status(&hall, ctx)?;
    let fmt = |n: Option<u64>| n.map(|n| n.to_string()).unwrap_or_else(|| "none".into());
    let mut text = format!(
        "Today ({}): {} tokens, ${:.4}, of a daily cap of {}{}{}.\nPer item: {}.",
        status.day,
        status.spent_today,
        status.cost_today_usd,
        fmt(status.daily),
        if status.granted_today > 0 {
            format!(" + {} granted", status.granted_today)
        } else {
            String::new()
        },
        if status.paused { " (paused)" } else { "" },
        fmt(status.per_item)
    );
    for r in &status.roles {
        text.push_str(&format!(
            "\n{}: {} of {}{}",
            r.role,
            r.spent,
            fmt(r.cap),
            if r.closed { " (closed for today)" } else { "" }
        ));
    }
    let mut next = if status.paused {
        vec!["hall budget --grant".to_string()]
    } else {
        vec!["hall usage --by day".to_string()]
    };
    if !changed.is_empty() {
        // The rules in effect are the base branch's committed ones (crate::hall::rules).
        text.push_str(&format!(
            "\nThe new caps take effect once .hallmark.toml is committed on {}.",
            hall.config.base
        ));
        next.insert(
            0,
            format!(
                "git -C {} commit -m \"Change the budget\" -- .hallmark.toml",
                crate::platform::shell_quote(&hall.repo.main_root.display().to_string())
            ),
        );
    }
    text.push_str(&format!("\n{}", next_text(&next)));
    Ok(Reply::new(
        &BudgetReply {
            status,
            set: changed,
            granted,
            next,
        },
        text,
    ))
}
