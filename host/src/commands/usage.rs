//! `hall usage`: tokens and list-price cost of recorded model runs, grouped.

use serde::Serialize;

use super::{Ctx, Reply};
use crate::cli::UsageArgs;
use crate::error::Result;
use crate::index::UsageRow;

#[derive(Serialize, schemars::JsonSchema)]
pub struct UsageReply {
    pub by: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub since: Option<String>,
    pub rows: Vec<UsageRow>,
    pub total: UsageRow,
    pub next: Vec<String>,
}

pub fn run(ctx: &Ctx, args: &UsageArgs) -> Result<Reply> {
    let hall = ctx.hall()?;
    let since = match &args.since {
        Some(s) => Some(super::since(ctx, s)?),
        None => None,
    };
    let item = match &args.item {
        Some(raw) => Some(hall.resolve(Some(raw))?),
        None => None,
    };
    let rows = hall.index()?.usage(&args.by, since.as_deref(), item)?;
    let mut total = UsageRow {
        key: "total".into(),
        input: 0,
        output: 0,
        cache_read: 0,
        cache_write: 0,
        cost_usd: 0.0,
        runs: 0,
    };
    for r in &rows {
        total.input += r.input;
        total.output += r.output;
        total.cache_read += r.cache_read;
        total.cache_write += r.cache_write;
        total.cost_usd += r.cost_usd;
        total.runs += r.runs;
    }
    total.cost_usd = (total.cost_usd * 10_000.0).round() / 10_000.0;
    let mut text = format!(
        "{:<24} {:>10} {:>10} {:>12} {:>12} {:>10}\n",
        args.by, "input", "output", "cache read", "cache write", "cost $"
    );
    for r in rows.iter().chain(std::iter::once(&total)) {
        text.push_str(&format!(
            "{:<24} {:>10} {:>10} {:>12} {:>12} {:>10.4}\n",
            r.key, r.input, r.output, r.cache_read, r.cache_write, r.cost_usd
        ));
    }
    let next = vec![
        "hall usage --by day".to_string(),
        "hall usage --by model".to_string(),
    ];
    Ok(Reply::new(
        &UsageReply {
            by: args.by.clone(),
            since,
            rows,
            total,
            next,
        },
        text.trim_end().to_string(),
    ))
}
