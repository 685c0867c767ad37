//! `hall reindex`: throw the SQLite index away and fold every journal file again.

use serde::Serialize;

use super::{Ctx, Reply};
use crate::error::Result;
use crate::index::Index;

#[derive(Serialize, schemars::JsonSchema)]
pub struct ReindexReply {
    pub files: u64,
    pub events: u64,
    /// Torn lines (crash leftovers) skipped.
    pub torn: u64,
    pub millis: u64,
    pub next: Vec<String>,
}

pub fn run(ctx: &Ctx) -> Result<Reply> {
    let hall = ctx.hall()?;
    let started = std::time::Instant::now();
    let (_, stats) = Index::rebuild(&hall.journal)?;
    let millis = started.elapsed().as_millis() as u64;
    let reply = ReindexReply {
        files: stats.files,
        events: stats.events,
        torn: stats.torn,
        millis,
        next: vec!["hall status".into()],
    };
    let text = format!(
        "Indexed {} events from {} files in {} ms ({} torn lines skipped).",
        stats.events, stats.files, millis, stats.torn
    );
    Ok(Reply::new(&reply, text))
}
