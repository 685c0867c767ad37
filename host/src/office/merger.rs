//! The merger (`[merge] mode = "auto"`, decision 0028): it merges each ready
//! shipped PR, one at a time per base, and brings a PR up to date only at its turn.
//!
//! One pass gathers the facts of every open shipped PR, asks the merger room (from the
//! base branch) for the judgement, writes the whole plan to `merger.json`, and acts on
//! it: a merge through `[merge] command`, a reopen with a rebase request, or a `lit`
//! hold. The room decides; the host only acts. GitHub is asked twice a pass, whatever
//! the number of PRs: one paged list of the open PRs, and one query for the checks at
//! every base tip. Everything else comes from git, after one fetch.
//!
//! A merge is written down before its command runs (`merging`, with the head), and
//! again after (`pr_merged`). A process killed between the two leaves a `merging` with
//! nothing after it: the next pass reads the PR's state off the open list before
//! anything else, so nothing merges twice, and the base counts a merge in flight until
//! the delivery watch records `delivered`.
//!
//! A pass is three steps, one submodule each: `gather` reads the state (the journal's
//! shipped items, GitHub's open PRs and base checks, git's view of each PR), `judge`
//! asks the room and runs the merged-result checks it wants, and `act` records the
//! plan and carries it out. This module holds what they share: the plan file's shape,
//! the journal's record of an item's merges, and the pass that runs the three in order.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::delivery::WatchError;
use crate::config::MergeMode;
use crate::error::{HallError, Result};
use crate::hall::{Ctx, Hall};
use crate::item::{Event, EventKind, Item, ItemId, Sha};
use crate::rooms::World;
use crate::rooms::types::CiState;

mod act;
mod gather;
mod judge;

/// The least time between two passes over one repository.
pub const EVERY: std::time::Duration = std::time::Duration::from_secs(20);

/// The file each pass writes its plan to, under the journal's directory.
pub const PLAN_FILE: &str = "merger.json";

/// What one pass did.
#[derive(Debug, Default)]
pub struct Passed {
    /// A line for each thing done.
    pub did: Vec<String>,
    /// gh calls made (the merge commands not counted).
    pub calls: usize,
}

/// The room that judged a pass.
#[derive(Clone, Debug, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RoomSeen {
    pub name: String,
    pub source: String,
    pub sha256: String,
}

/// One PR's line in the plan.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PlannedPr {
    pub number: u32,
    /// The item that shipped it.
    pub item: ItemId,
    /// `merge`, `rebase`, `wait` or `hold`.
    pub action: String,
    pub waits_for: Vec<u32>,
    /// Reason codes, most important first.
    pub reasons: Vec<String>,
    /// The head judged.
    pub head: String,
}

/// One base's plan.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PlannedBase {
    pub base: String,
    /// The tip judged against.
    pub tip: String,
    /// `green`, `red`, `pending`, `missing` or `abandoned`.
    pub tip_ci: String,
    pub line_stopped: bool,
    /// A PR merged whose delivery is not recorded yet: nothing else merges meanwhile.
    pub merge_in_flight: Option<u32>,
    pub prs: Vec<PlannedPr>,
}

/// A shipped PR the merger leaves alone while its item is held for a person.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HeldPr {
    pub number: u32,
    pub item: ItemId,
    /// The hold's kind (`merge_failed`, `lit`…).
    pub hold: String,
}

/// `merger.json`: the last pass's whole plan. Readers (`hall queue`, the terminal
/// app) read this and never call GitHub.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Plan {
    /// When the pass ran.
    pub at: String,
    pub room: RoomSeen,
    /// gh calls the pass made to gather its facts.
    pub calls: usize,
    pub bases: Vec<PlannedBase>,
    pub held: Vec<HeldPr>,
    /// The last tip seen green, per base (the suspects of a red tip merged after it).
    #[serde(default)]
    pub last_green: BTreeMap<String, String>,
    /// Each base's tip as last judged, and its checks then: a base is watched with
    /// nothing queued until its tip's checks settle.
    #[serde(default)]
    pub tips: BTreeMap<String, TipSeen>,
}

/// A base tip and what its checks said.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TipSeen {
    pub tip: String,
    /// `green`, `red`, `pending`, `missing` or `abandoned`.
    pub ci: String,
}

/// The plan file of `hall`'s repository.
pub fn plan_path(hall: &Hall) -> std::path::PathBuf {
    hall.journal.root().join(PLAN_FILE)
}

/// The last pass's plan, when there was one.
pub fn read_plan(hall: &Hall) -> Option<Plan> {
    let bytes = std::fs::read(plan_path(hall)).ok()?;
    serde_json::from_slice(&bytes).ok()
}

fn write_plan(hall: &Hall, plan: &Plan) -> Result<()> {
    let path = plan_path(hall);
    let bytes = serde_json::to_vec_pretty(plan).map_err(HallError::internal)?;
    crate::journal::file::write_atomic(&path, &bytes)
        .map_err(|e| HallError::internal(format!("{}: {e}", path.display())))
}

/// What a pass carries over from the last one's plan, and hands on to the next.
#[derive(Default)]
struct Memory {
    /// The last tip seen green, per base.
    last_green: BTreeMap<String, String>,
    /// Each base's tip as last judged, and its checks then.
    tips: BTreeMap<String, TipSeen>,
}

impl Memory {
    fn of(previous: Option<Plan>) -> Memory {
        previous.map_or_else(Memory::default, |p| Memory {
            last_green: p.last_green,
            tips: p.tips,
        })
    }
}

/// A shipped item whose PR the merger follows.
struct Shipped {
    id: ItemId,
    item: Item,
    number: u64,
    events: Vec<Event>,
}

/// How the item's merges stand, from its journal.
#[derive(Debug, Default, PartialEq)]
struct MergeRecord {
    /// The last `merging` that nothing answered yet (no `pr_merged`, hold or notice
    /// after it).
    unresolved: Option<Sha>,
    /// Any merge was started or done.
    started: bool,
    /// `pr_merged` was recorded.
    merged: bool,
}

/// Reads an item's merges off its events.
fn merge_record(events: &[Event]) -> MergeRecord {
    let mut r = MergeRecord::default();
    for e in events {
        match &e.kind {
            EventKind::Merging { head, .. } => {
                r.started = true;
                r.unresolved = Some(head.clone());
            }
            EventKind::PrMerged { .. } => {
                r.merged = true;
                r.unresolved = None;
            }
            EventKind::Held { .. } => r.unresolved = None,
            EventKind::Notification { kind, .. } if kind == "merge_interrupted" => {
                r.unresolved = None
            }
            _ => {}
        }
    }
    r
}

/// A CI state as the plan file and the pass's messages name it.
fn ci_name(ci: CiState) -> &'static str {
    match ci {
        CiState::Green => "green",
        CiState::Red => "red",
        CiState::Pending => "pending",
        CiState::Missing => "missing",
        CiState::Abandoned => "abandoned",
    }
}

/// The merger's lease on a repository, held for one pass.
fn lease(hall: &Hall) -> Result<Option<std::fs::File>> {
    super::lease::exclusive(hall.journal.root(), "merger")
}

/// One pass of the merger over the repository. Off unless `[merge] mode = "auto"`;
/// skipped (nothing done) while another process's merger holds the repository.
pub fn pass(hall: &Hall, ctx: &Ctx) -> std::result::Result<Passed, WatchError> {
    let mut out = Passed::default();
    if hall.config.merge.mode != MergeMode::Auto {
        return Ok(out);
    }
    let Some(_lease) = lease(hall)? else {
        out.did
            .push("another merger is judging this repository; this pass is skipped".into());
        return Ok(out);
    };
    let office = ctx.acting_as("merger");
    let stock = gather::stock(hall)?;
    let rooms = crate::hall::policy::runtime_for(Some(hall))?;
    let room = crate::hall::policy::room(&rooms, Some(hall), World::Merger)?;
    let info = room.info().clone();
    let seen = RoomSeen {
        name: info.name.clone(),
        source: info.source.to_string(),
        sha256: info.sha256.clone(),
    };
    let mut memory = Memory::of(read_plan(hall));
    let watch = gather::watched(hall, &mut memory.tips)?;
    // Nothing shipped and no base to watch: GitHub is not asked.
    if stock.shipped.is_empty() && watch.bases.is_empty() {
        write_plan(
            hall,
            &Plan {
                at: ctx.clock.stamp(),
                room: seen,
                calls: 0,
                bases: Vec::new(),
                held: Vec::new(),
                last_green: memory.last_green,
                tips: memory.tips,
            },
        )?;
        return Ok(out);
    }
    let mut facts = gather::facts(hall, ctx, &office, stock, &watch, &mut out)?;
    let plan = judge::judge(hall, &office, &room, &mut facts, &mut out)?;
    let planned = act::record(hall, ctx, seen, &facts, &plan, &mut memory, out.calls)?;
    act::carry_out(
        hall,
        &office,
        &info,
        &facts,
        &planned,
        &memory.last_green,
        &mut out,
    )?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An event of item 1, as the tests here and in the submodules build them.
    pub(super) fn at(kind: EventKind) -> Event {
        Ctx::at(
            std::path::PathBuf::from("."),
            crate::clock::Clock::from_env(),
            "t",
        )
        .event(Some(ItemId(1)), kind)
    }

    #[test]
    fn a_merge_started_and_not_recorded_is_unresolved_until_something_answers_it() {
        let head = Sha::new("a".repeat(40));
        let onto = Sha::new("b".repeat(40));
        let merging = at(EventKind::Merging {
            pr: 3,
            head: head.clone(),
            onto: onto.clone(),
        });
        let r = merge_record(std::slice::from_ref(&merging));
        assert_eq!(r.unresolved, Some(head.clone()));
        assert!(r.started && !r.merged);
        let merged = at(EventKind::PrMerged {
            pr: 3,
            head: head.clone(),
            onto,
        });
        let r = merge_record(&[merging.clone(), merged]);
        assert_eq!(r.unresolved, None);
        assert!(r.merged);
        let notice = at(EventKind::Notification {
            kind: "merge_interrupted".into(),
            message: String::new(),
            session: None,
        });
        assert_eq!(merge_record(&[merging, notice]).unresolved, None);
    }
}
