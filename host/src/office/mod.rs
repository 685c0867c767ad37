//! The review loop's workers: the Assay Office (checks, then the principal engineer),
//! the Repair Shop (the fixer), the shipper, and the small jobs around them (resuming
//! sessions that asked, the watchman). Each worker does one step for one item under
//! that item's lease; the daemon schedules them, and `hall next` hands them to agents.
//!
//! Every step ends in a journal transaction that re-checks the item's state and SHA, so
//! a step that lost a race (a pull-back mid-review, a second daemon) records nothing
//! that contradicts the journal, and a repeated step never duplicates a verdict or a
//! hallmark.

pub mod budget;
pub mod checks;
pub mod fix;
pub mod lease;
pub mod resume;
pub mod review;
pub mod runner;
pub mod ship;
pub mod verdict;

use serde::Serialize;

use crate::commands::{Ctx, Hall};
use crate::error::Result;
use crate::item::{Item, ItemId, State, fold};

/// Who does a step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    Assayer,
    Fixer,
    Shipper,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Assayer => "assayer",
            Role::Fixer => "fixer",
            Role::Shipper => "shipper",
        }
    }

    pub fn parse(s: &str) -> Option<Role> {
        [Role::Assayer, Role::Fixer, Role::Shipper]
            .into_iter()
            .find(|r| r.as_str() == s)
    }
}

/// What a step did.
pub struct Step {
    pub did: String,
    pub after: Item,
}

/// The phase `[parallel]` counts for an item's next step, with the role that does it;
/// `None` when the loop has nothing to do (a person's turn, a hold, a terminal state).
pub fn work_for(item: &Item) -> Option<(Role, &'static str)> {
    if item.hold.is_some() {
        return None;
    }
    match item.state {
        State::Checks => Some((Role::Assayer, "checks")),
        State::Review => Some((Role::Assayer, "review")),
        State::Fixing => Some((Role::Fixer, "fix")),
        State::Hallmarked => Some((Role::Shipper, "ship")),
        _ => None,
    }
}

/// How many of `phase` may run at once in this repository.
pub fn limit(hall: &Hall, phase: &str) -> u32 {
    let p = &hall.config.parallel;
    match phase {
        "checks" => p.checks,
        "review" => p.review,
        "fix" => p.fix,
        _ => p.ship,
    }
}

/// The context a worker writes with: its role as the actor, the time now.
pub fn worker_ctx(hall: &Hall, role: Role) -> Result<Ctx> {
    let now = crate::clock::now();
    Ok(Ctx {
        cwd: hall.repo.main_root.clone(),
        stamp: crate::clock::stamp(now),
        now,
        actor: role.as_str().to_string(),
    })
}

/// Does one step for `id` (the caller holds its lease). `None` when the item has no
/// work for `role` any more.
pub fn step(hall: &Hall, id: ItemId, role: Role) -> Result<Option<Step>> {
    let item = fold(&hall.journal.read_item(id)?.events);
    let Some((want, phase)) = work_for(&item) else {
        return Ok(None);
    };
    if want != role {
        return Ok(None);
    }
    let ctx = worker_ctx(hall, role)?;
    let step = match phase {
        "checks" => checks::run(hall, &ctx, id, &item)?,
        "review" => review::run(hall, &ctx, id, &item)?,
        "fix" => fix::run(hall, &ctx, id, &item)?,
        _ => ship::run(hall, &ctx, id, &item)?,
    };
    Ok(Some(step))
}

/// Holds the item for a person (unless it already is), and returns it.
pub fn hold(
    hall: &Hall,
    ctx: &Ctx,
    id: ItemId,
    kind: crate::item::HoldKind,
    reason: &str,
) -> Result<Item> {
    let tx = hall.journal.transact(id, |now, _| {
        if now.hold.is_some() {
            return Ok(Vec::new());
        }
        let action = crate::item::Action::Hold {
            kind,
            reason: reason.to_string(),
        };
        let kinds =
            crate::item::decide(now, &action).map_err(|r| crate::commands::refused(id, r))?;
        Ok(kinds.into_iter().map(|k| ctx.event(Some(id), k)).collect())
    })?;
    Ok(tx.after)
}

/// Claims `id` for `role`'s `phase` with a lease, within the phase's `[parallel]`
/// limit. `pid` is the holding process, or 0 for an agent's lease (`hall next`).
pub fn claim(
    hall: &Hall,
    id: ItemId,
    (role, phase): (Role, &str),
    holder: &str,
    pid: u32,
) -> Result<lease::Claim> {
    let want = lease::Want {
        role: role.as_str(),
        phase,
        limit: limit(hall, phase),
    };
    lease::claim(hall.journal.root(), id, &want, holder, pid, lease::ttl())
}
