//! `hall next --role assayer|fixer|shipper`: claims the oldest item that has work for
//! the role, with a lease, so an agent can be a worker too.

use serde::Serialize;

use super::{Ctx, Reply, next_text};
use crate::cli::NextArgs;
use crate::error::{Code, HallError, Result};
use crate::item::{ItemId, State};
use crate::office::{self, Role, lease};

#[derive(Serialize, schemars::JsonSchema)]
pub struct NextReply {
    pub role: String,
    /// The claimed item, or none when nothing waits for the role.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub item: Option<ItemId>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<State>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sha: Option<crate::item::Sha>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lease: Option<lease::Lease>,
    pub next: Vec<String>,
}

pub fn run(ctx: &Ctx, args: &NextArgs) -> Result<Reply> {
    let hall = ctx.hall()?;
    let role = Role::parse(&args.role)
        .ok_or_else(|| HallError::usage("--role takes assayer, fixer or shipper"))?;
    let holder = args
        .holder
        .clone()
        .or_else(|| std::env::var("HALL_HOLDER").ok())
        .unwrap_or_else(|| format!("{}:{}", ctx.actor, std::process::id()));
    let index = hall.index()?;
    let mut taken_by: Vec<(ItemId, String)> = Vec::new();
    // Oldest first: the item that entered its state earliest.
    let mut rows = index.items(false)?;
    rows.sort_by(|a, b| a.since.cmp(&b.since).then(a.id.cmp(&b.id)));
    for row in rows {
        let Some(item) = index.item(row.id)? else {
            continue;
        };
        let Some(phase) = office::work_for(&item) else {
            continue;
        };
        if phase.role() != role {
            continue;
        }
        match office::claim(&hall, row.id, phase, &holder, 0)? {
            lease::Claim::Taken(l) => {
                let id = row.id;
                let reply = NextReply {
                    role: role.as_str().into(),
                    item: Some(id),
                    state: Some(item.state),
                    sha: item.sha.clone(),
                    lease: Some(l.clone()),
                    next: vec![format!("hall findings {id}"), format!("hall status {id}")],
                };
                let text = format!(
                    "{id} ({}) is yours as {} until the lease expires ({} s).\n{}",
                    item.state,
                    role.as_str(),
                    l.expires.saturating_sub(l.taken),
                    next_text(&reply.next)
                );
                return Ok(Reply::new(&reply, text));
            }
            lease::Claim::Held(l) => taken_by.push((row.id, l.holder)),
            lease::Claim::Full { phase, limit } => taken_by.push((
                row.id,
                format!("the {phase} phase is full ({limit} at once)"),
            )),
        }
    }
    if let Some((id, by)) = taken_by.first() {
        return Err(HallError::new(
            Code::Claimed,
            format!(
                "every item with {} work is claimed; {id}: {by}",
                role.as_str()
            ),
        )
        .hint("hall daemon status")
        .hint(format!("hall next --role {}", role.as_str())));
    }
    let reply = NextReply {
        role: role.as_str().into(),
        item: None,
        state: None,
        sha: None,
        lease: None,
        next: vec!["hall status".into()],
    };
    let text = format!(
        "Nothing waits for the {}.\n{}",
        role.as_str(),
        next_text(&reply.next)
    );
    Ok(Reply::new(&reply, text))
}
