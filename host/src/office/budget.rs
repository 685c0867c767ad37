//! Budgets at four levels, with the design's effects:
//!
//! - per run: `--max-budget-usd` and a timeout; a failed run is retried once, then the
//!   item is held (`run_failed`);
//! - per item (`per_item`): the item is held for you (`budget`); `hall retry` grants it
//!   another `per_item`, or `--tokens`;
//! - per role per day (`[budget.review] daily`, …): that role's runs stop for the day
//!   and its items wait in order;
//! - daily total (`daily`): the daemon's model workers pause until tomorrow (UTC), or
//!   until `hall budget --grant`.
//!
//! Tokens here are input + output + cache writes: what a run costs to produce. Cache
//! reads, about a tenth of the price, are counted in `hall usage` but not against caps.

use serde::Serialize;

use super::Step;
use crate::config::parse_tokens;
use crate::error::Result;
use crate::hall::{Ctx, Hall};
use crate::index::UsageRow;
use crate::item::{EventKind, HoldKind, Item, ItemId};

fn tokens(r: &UsageRow) -> u64 {
    r.input + r.output + r.cache_write
}

/// The UTC day of a stamp (`2026-11-30`).
pub fn day(stamp: &str) -> String {
    stamp.chars().take(10).collect()
}

#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct RoleSpend {
    pub role: String,
    pub spent: u64,
    /// `None`: no cap.
    pub cap: Option<u64>,
    pub closed: bool,
}

#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct Status {
    pub day: String,
    pub spent_today: u64,
    pub cost_today_usd: f64,
    /// `daily`, or `None` for no cap.
    pub daily: Option<u64>,
    /// Tokens `hall budget --grant` added for today.
    pub granted_today: u64,
    pub per_item: Option<u64>,
    /// Each role's spend against its own daily cap.
    pub roles: Vec<RoleSpend>,
    /// The daily cap is reached: model workers wait.
    pub paused: bool,
}

fn role_cap(hall: &Hall, role: &str) -> Option<u64> {
    let b = &hall.config.budget;
    let caps = match role {
        "review" => &b.review,
        "fix" => &b.fix,
        "intake" => &b.intake,
        "librarian" => &b.librarian,
        _ => return None,
    };
    caps.daily
        .as_deref()
        .and_then(|d| parse_tokens(d).ok().flatten())
}

/// Today's spend against every cap.
pub fn status(hall: &Hall, ctx: &Ctx) -> Result<Status> {
    let today = day(&ctx.stamp);
    let index = hall.index()?;
    let rows = index.usage("role", Some(&today), None)?;
    let spent_today = rows.iter().map(tokens).sum();
    let cost_today_usd: f64 = rows.iter().map(|r| r.cost_usd).sum();
    let repo = crate::journal::file::read(&hall.journal.repo_file())
        .map(|c| c.events)
        .unwrap_or_default();
    let granted_today = repo
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::BudgetGranted { day: d, tokens } if *d == today => Some(*tokens),
            _ => None,
        })
        .sum();
    let daily = parse_tokens(&hall.config.budget.daily).ok().flatten();
    let roles = ["review", "fix", "intake", "librarian"]
        .into_iter()
        .map(|role| {
            let spent = rows.iter().filter(|r| r.key == role).map(tokens).sum();
            let cap = role_cap(hall, role);
            RoleSpend {
                role: role.to_string(),
                spent,
                cap,
                closed: cap.is_some_and(|c| spent >= c),
            }
        })
        .collect();
    Ok(Status {
        paused: daily.is_some_and(|d| spent_today >= d + granted_today),
        day: today,
        spent_today,
        cost_today_usd: (cost_today_usd * 10_000.0_f64).round() / 10_000.0,
        daily,
        granted_today,
        per_item: parse_tokens(&hall.config.budget.per_item).ok().flatten(),
        roles,
    })
}

/// The item's own cap: `per_item` plus what `hall retry` granted it (another
/// `per_item` for each budget hold it released, or `--tokens`).
fn item_cap(hall: &Hall, item: &Item) -> Option<u64> {
    parse_tokens(&hall.config.budget.per_item)
        .ok()
        .flatten()
        .map(|per| per + item.tokens_granted)
}

/// Records the daily pause once, until the next UTC midnight.
fn pause(hall: &Hall, ctx: &Ctx, reason: &str) -> Result<()> {
    let today = day(&ctx.stamp);
    let until = format!("{}T00:00:00Z", next_day(&today));
    hall.journal.append_checked(None, |events| -> Result<_> {
        let already = events
            .iter()
            .any(|e| matches!(&e.kind, EventKind::Paused { until: u, .. } if *u == until));
        Ok(if already {
            Vec::new()
        } else {
            vec![ctx.event(
                None,
                EventKind::Paused {
                    reason: reason.to_string(),
                    until: until.clone(),
                },
            )]
        })
    })?;
    Ok(())
}

/// The day after `day` (`YYYY-MM-DD`).
pub fn next_day(day: &str) -> String {
    crate::clock::parse(&format!("{day}T00:00:00Z"))
        .map(|t| crate::clock::stamp(t + std::time::Duration::from_secs(86_400)))
        .map(|s| s.chars().take(10).collect())
        .unwrap_or_else(|| day.to_string())
}

/// What starts a rate-limit pause's reason, to tell it from a budget pause (which a
/// grant lifts).
pub const RATE_LIMITED: &str = "the plan's rate limit";

/// How long the loop waits out a rate limit before trying again.
pub fn rate_limit_wait() -> std::time::Duration {
    std::env::var("HALL_RATE_LIMIT_WAIT")
        .ok()
        .and_then(|v| crate::clock::parse_duration(&v).ok())
        .unwrap_or(std::time::Duration::from_secs(3600))
}

/// Records that the plan's rate limit stopped a run: model workers wait until `until`.
pub fn pause_for_rate_limit(hall: &Hall, ctx: &Ctx, why: &str) -> Result<String> {
    let until = crate::clock::stamp(ctx.now + rate_limit_wait());
    let reason = format!("{RATE_LIMITED} ({why})");
    hall.journal.append_repo(&[ctx.event(
        None,
        EventKind::Paused {
            reason,
            until: until.clone(),
        },
    )])?;
    Ok(until)
}

/// A rate-limit pause still in force, from the repo journal.
fn rate_limit_pause(hall: &Hall, ctx: &Ctx) -> Option<String> {
    let events = crate::journal::file::read(&hall.journal.repo_file())
        .ok()?
        .events;
    events.iter().rev().find_map(|e| match &e.kind {
        EventKind::Paused { reason, until }
            if reason.starts_with(RATE_LIMITED) && until.as_str() > ctx.stamp.as_str() =>
        {
            Some(format!("{reason}, until {until}"))
        }
        _ => None,
    })
}

/// Whether model runs wait: a rate limit in force, or the daily cap (whose pause is
/// recorded the first time).
pub fn paused(hall: &Hall, ctx: &Ctx) -> Result<Option<String>> {
    if let Some(p) = rate_limit_pause(hall, ctx) {
        return Ok(Some(p));
    }
    let s = status(hall, ctx)?;
    if !s.paused {
        return Ok(None);
    }
    let reason = format!(
        "the daily budget is spent ({} of {} tokens)",
        s.spent_today,
        s.daily.unwrap_or(0) + s.granted_today
    );
    pause(hall, ctx, &reason)?;
    Ok(Some(reason))
}

/// Checks every cap before a model run for `id` in `role`. `Some` says why the run
/// doesn't happen (and what was recorded).
pub fn before_run(
    hall: &Hall,
    ctx: &Ctx,
    id: ItemId,
    item: &Item,
    role: &str,
) -> Result<Option<Step>> {
    if let Some(reason) = paused(hall, ctx)? {
        return Ok(Some(Step {
            did: format!("paused: {reason}"),
            after: item.clone(),
        }));
    }
    let s = status(hall, ctx)?;
    if let Some(r) = s.roles.iter().find(|r| r.role == role && r.closed) {
        return Ok(Some(Step {
            did: format!(
                "the {role} runs are done for today: their daily cap is spent ({} of {} tokens)",
                r.spent,
                r.cap.unwrap_or(0)
            ),
            after: item.clone(),
        }));
    }
    if let Some(cap) = item_cap(hall, item) {
        let spent: u64 = hall
            .index()?
            .usage("item", None, Some(id))?
            .iter()
            .map(tokens)
            .sum();
        if spent >= cap {
            let reason = format!("{id} has spent {spent} of its {cap} tokens");
            let after = super::hold(hall, ctx, id, HoldKind::Budget, &reason)?;
            return Ok(Some(Step {
                did: format!("held: {reason}"),
                after,
            }));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    #[test]
    fn days_roll_over() {
        assert_eq!(super::next_day("2026-11-30"), "2026-12-01");
        assert_eq!(super::next_day("2026-12-31"), "2027-01-01");
        assert_eq!(super::day("2026-11-30T09:00:00Z"), "2026-11-30");
    }
}
