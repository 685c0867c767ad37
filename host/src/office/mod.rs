//! The review loop's workers: the Assay Office (checks, then the reviewer),
//! the Repair Shop (the fixer), the shipper, and the small jobs around them (resuming
//! sessions that asked, the watchman). Each worker does one step for one item under
//! that item's lease; the daemon schedules them, and `hall next` hands them to agents.
//!
//! Every step ends in one change through the service layer's transition path
//! (`Hall::change`), which re-checks the item's state and SHA under the lock, so a step
//! that lost a race (a pull-back mid-review, a second daemon) records nothing that
//! contradicts the journal, and a repeated step never duplicates a verdict or a
//! hallmark.

pub mod budget;
pub mod checks;
pub mod delivery;
pub mod develop;
pub mod fence;
pub mod fix;
pub mod intake;
pub mod lease;
pub mod librarian;
pub mod merge_check;
pub mod merger;
pub mod missing;
pub mod notify;
pub mod resume;
pub mod review;
pub mod runs;
pub mod setup;
pub mod ship;
pub mod test_counts;
pub mod verdict;
pub mod watchman;

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::hall::{Ctx, Hall};
use crate::item::{Action, HoldKind, Item, ItemId, State};

/// Who does a step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    Assayer,
    Fixer,
    Shipper,
}

impl Role {
    pub const ALL: [Role; 3] = [Role::Assayer, Role::Fixer, Role::Shipper];

    pub fn as_str(self) -> &'static str {
        match self {
            Role::Assayer => "assayer",
            Role::Fixer => "fixer",
            Role::Shipper => "shipper",
        }
    }

    pub fn parse(s: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|r| r.as_str() == s)
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A kind of step, as `[parallel]` counts them: how many of each may run at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// The repository's checks on the frozen commit.
    Checks,
    /// The reviewer's run.
    Review,
    /// The fixer's run.
    Fix,
    /// A Delivery office dev run on a reopened item (a conflict, comments, red CI).
    Develop,
    /// Rebase, ship and close.
    Ship,
}

impl Phase {
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Checks => "checks",
            Phase::Review => "review",
            Phase::Fix => "fix",
            Phase::Develop => "develop",
            Phase::Ship => "ship",
        }
    }

    /// Who does steps of this phase.
    pub fn role(self) -> Role {
        match self {
            Phase::Checks | Phase::Review => Role::Assayer,
            Phase::Fix | Phase::Develop => Role::Fixer,
            Phase::Ship => Role::Shipper,
        }
    }

    /// Whether the phase runs a model (and so waits out a pause of the model workers).
    pub fn runs_a_model(self) -> bool {
        matches!(self, Phase::Review | Phase::Fix | Phase::Develop)
    }

    /// How many steps of this phase may run at once in the repository.
    pub fn limit(self, hall: &Hall) -> u32 {
        let p = &hall.config.parallel;
        match self {
            Phase::Checks => p.checks,
            Phase::Review => p.review,
            Phase::Fix | Phase::Develop => p.fix,
            Phase::Ship => p.ship,
        }
    }
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a step did.
pub struct Step {
    pub did: String,
    pub after: Item,
}

/// The phase of an item's next step; `None` when the loop has nothing to do (a
/// person's turn, a hold, a terminal state).
pub fn work_for(item: &Item) -> Option<Phase> {
    // A part is never the loop's: it merges into its parent, which is reviewed whole.
    if item.hold.is_some() || item.parent.is_some() {
        return None;
    }
    match item.state {
        State::Checks => Some(Phase::Checks),
        State::Review => Some(Phase::Review),
        State::Fixing => Some(Phase::Fix),
        State::Hallmarked => Some(Phase::Ship),
        State::Development if item.follow.is_some() => Some(Phase::Develop),
        _ => None,
    }
}

/// The context a worker writes with: its role as the actor, `ctx`'s clock and place.
pub fn worker_ctx(hall: &Hall, clock: crate::clock::Clock, role: Role) -> Ctx {
    Ctx::at(hall.repo.main_root.clone(), clock, role.as_str())
}

/// Does one step for `id` (the caller holds its lease). `None` when the item has no
/// work for `role` any more.
pub fn step(
    hall: &Hall,
    clock: crate::clock::Clock,
    id: ItemId,
    role: Role,
) -> Result<Option<Step>> {
    let item = hall.item(id)?;
    let Some(phase) = work_for(&item) else {
        return Ok(None);
    };
    if phase.role() != role {
        return Ok(None);
    }
    let ctx = worker_ctx(hall, clock, role);
    let step = match phase {
        Phase::Checks => checks::run(hall, &ctx, id, &item)?,
        Phase::Review => review::run(hall, &ctx, id, &item)?,
        Phase::Fix => fix::run(hall, &ctx, id, &item)?,
        Phase::Develop => develop::run(hall, &ctx, id, &item)?,
        Phase::Ship => ship::run(hall, &ctx, id, &item)?,
    };
    Ok(Some(step))
}

/// Holds the item for a person (unless it already is), and returns it.
pub fn hold(hall: &Hall, ctx: &Ctx, id: ItemId, kind: HoldKind, reason: &str) -> Result<Item> {
    let applied = hall.change(ctx, id).apply_with(|now| {
        now.hold.is_none().then(|| Action::Hold {
            kind,
            reason: reason.to_string(),
            next: Vec::new(),
        })
    })?;
    Ok(applied.after)
}

/// Holds the item and says so as the step's result.
pub fn held(hall: &Hall, ctx: &Ctx, id: ItemId, kind: HoldKind, reason: String) -> Result<Step> {
    let after = hold(hall, ctx, id, kind, &reason)?;
    Ok(Step { did: reason, after })
}

/// Claims `id` for `phase` with a lease, within the phase's `[parallel]` limit. `pid`
/// is the holding process, or 0 for an agent's lease (`hall next`).
pub fn claim(
    hall: &Hall,
    id: ItemId,
    phase: Phase,
    holder: &str,
    pid: u32,
) -> Result<lease::Claim> {
    let want = lease::Want {
        phase,
        limit: phase.limit(hall),
    };
    lease::claim(hall.journal.root(), id, &want, holder, pid, lease::ttl())
}

#[cfg(test)]
pub(crate) mod tests;
