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

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::delivery::{WatchError, pr_number};
use super::merge_check::{Wanted, run_all};
use crate::config::MergeMode;
use crate::error::{HallError, Result};
use crate::gh;
use crate::git;
use crate::hall::{Ctx, Hall};
use crate::item::{Action, Event, EventKind, FollowKind, HoldKind, Item, ItemId, Sha, State};
use crate::rooms::World;
use crate::rooms::types::{
    Action as Judged, BaseCommit, BaseQueue, CheckFact, CiState, HotSettings, MergeSettings,
    MergeableState, MergerInput, MergerPlan, PathCount, PrFacts, PrHead, UpdateMode,
};

/// The least time between two passes over one repository.
pub const EVERY: std::time::Duration = std::time::Duration::from_secs(20);
/// A base tip with no check run yet counts as running this long (when the base has CI).
const NO_RUNS_GRACE: u64 = 5 * 60;
/// A base tip whose checks run longer than this is given up on.
const TIP_LIMIT: u64 = 6 * 60 * 60;

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

/// Whether a person's `hall retry` cleared the item's `lit` hold, for the head that
/// shipped since (nothing shipped or hallmarked after the retry).
fn lit_cleared(events: &[Event]) -> bool {
    let mut cleared = false;
    for e in events {
        match &e.kind {
            EventKind::Held {
                kind: HoldKind::Lit,
                ..
            } => cleared = false,
            EventKind::Retried {
                released: Some(HoldKind::Lit),
                ..
            } => cleared = true,
            EventKind::Shipped { .. } | EventKind::Hallmarked { .. } => cleared = false,
            _ => {}
        }
    }
    cleared
}

/// The open shipped items, and by branch the shipped head of every item whose PR
/// merged (what a PR stacked on that branch was reviewed on top of).
fn shipped_items(hall: &Hall) -> Result<(Vec<Shipped>, BTreeMap<String, Sha>)> {
    let index = hall.index()?;
    let mut out = Vec::new();
    let mut merged = BTreeMap::new();
    for row in index.items(true)? {
        if row.state == State::Dropped {
            continue;
        }
        let Some(number) = row.pr.as_deref().and_then(pr_number) else {
            continue;
        };
        // The index's cached fold first: most items with a PR are long delivered.
        let Some(item) = index.item(row.id)? else {
            continue;
        };
        if let (Some(d), Some(head)) = (&item.delivered, &item.shipped)
            && d.merged
        {
            merged.insert(item.branch.clone(), head.clone());
        }
        if item.delivered.is_some() || item.shipped.is_none() {
            continue;
        }
        let events = hall.events(row.id)?;
        out.push(Shipped {
            id: row.id,
            item,
            number,
            events,
        });
    }
    Ok((out, merged))
}

/// The item's hallmark, when it is one the merger may go by for a merge onto `tip`: its
/// note verifies (signature, trusted signer, the journal's own record), and the commit
/// its change was measured from is in `tip`. A PR pointed at the base before the branch
/// it was stacked on merged (`gh pr edit --base`) carries a hallmark for only part of
/// what it would bring in, and counts as not hallmarked. Once that branch's own PR has
/// merged (squashed, so its commits are not in the tip), a base inside the head it
/// merged is vouched for too, provided git shows that head adds nothing to the tip
/// (merging it changes no file): the rest was reviewed and merged as that PR, and the
/// room rebases this one at its turn. The journal only says where to look; a forged
/// "merged" there finds a head whose changes are not in the tip, and counts for
/// nothing.
fn vouched(
    hall: &Hall,
    trust: &crate::hall::hallmark::Trust,
    s: &Shipped,
    tip: &str,
    merged: &BTreeMap<String, Sha>,
) -> Option<String> {
    let sha = s.item.hallmark.as_ref()?;
    let dir = &hall.repo.main_root;
    let verified =
        crate::hall::hallmark::verify_commit(dir, sha.as_str(), trust, Some(&hall.journal)).ok()?;
    let in_tip = crate::hall::hallmark::check_base(dir, &verified, tip).is_ok();
    // The branches it was stacked on: its base now, and any it was moved off.
    let in_parent = || {
        let earlier = s.events.iter().filter_map(|e| match &e.kind {
            EventKind::Restacked { from, .. } => Some(from),
            _ => None,
        });
        let tip_tree = git::tree_of(dir, tip).ok();
        std::iter::once(&s.item.base).chain(earlier).any(|b| {
            merged.get(b).is_some_and(|parent| {
                crate::hall::hallmark::check_base(dir, &verified, parent.as_str()).is_ok()
                    && tip_tree.as_ref().is_some_and(|t| {
                        git::merge_tree(dir, tip, parent.as_str())
                            .flatten()
                            .as_deref()
                            == Some(t.as_str())
                    })
            })
        })
    };
    (in_tip || in_parent()).then(|| sha.to_string())
}

fn tip_state(dir: &Path, tip: &str, checks: Option<&Vec<gh::CheckContext>>, now: u64) -> CiState {
    let age = git::commit_time(dir, tip).map_or(0, |t| now.saturating_sub(t));
    // A run waiting on a person (an environment's approval) is not running.
    let live: Vec<gh::CheckContext> = checks
        .map(|list| {
            list.iter()
                .filter(|c| !matches!(c.status.as_str(), "WAITING" | "PENDING" | "REQUESTED"))
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    let rollup = gh::PullRequest {
        status_check_rollup: live,
        ..gh::PullRequest::default()
    };
    match rollup.ci() {
        gh::Ci::Green => CiState::Green,
        gh::Ci::Red { .. } => CiState::Red,
        gh::Ci::Pending | gh::Ci::NeverStarted(_) if age >= TIP_LIMIT => CiState::Abandoned,
        gh::Ci::Pending | gh::Ci::NeverStarted(_) => CiState::Pending,
        gh::Ci::Silent => {
            let has_ci = git::has_files_under(dir, tip, ".github/workflows");
            if has_ci && age < NO_RUNS_GRACE {
                CiState::Pending
            } else {
                CiState::Missing
            }
        }
    }
}

fn pr_ci(pr: &gh::PullRequest) -> CiState {
    match pr.ci() {
        gh::Ci::Green => CiState::Green,
        gh::Ci::Red { .. } => CiState::Red,
        gh::Ci::Pending | gh::Ci::NeverStarted(_) => CiState::Pending,
        gh::Ci::Silent => CiState::Missing,
    }
}

fn ci_name(ci: CiState) -> &'static str {
    match ci {
        CiState::Green => "green",
        CiState::Red => "red",
        CiState::Pending => "pending",
        CiState::Missing => "missing",
        CiState::Abandoned => "abandoned",
    }
}

fn action_name(a: Judged) -> &'static str {
    match a {
        Judged::Merge => "merge",
        Judged::Rebase => "rebase",
        Judged::Wait => "wait",
        Judged::Hold => "hold",
    }
}

/// What git says about one PR against its base tip.
fn git_facts(
    dir: &Path,
    tip: &str,
    head: &str,
    github_says: &str,
) -> (Vec<String>, Vec<BaseCommit>, MergeableState, Option<String>) {
    let from_github = match github_says {
        "MERGEABLE" => MergeableState::Mergeable,
        "CONFLICTING" => MergeableState::Conflicting,
        _ => MergeableState::Unknown,
    };
    if git::commit(dir, head).is_none() {
        return (Vec::new(), Vec::new(), from_github, None);
    }
    let Ok(fork) = git::merge_base(dir, tip, head) else {
        return (Vec::new(), Vec::new(), from_github, None);
    };
    let files = git::files_between(dir, fork.as_str(), head).unwrap_or_default();
    let base_commits = git::commits_with_files(dir, fork.as_str(), tip)
        .unwrap_or_default()
        .into_iter()
        .map(|(sha, files)| BaseCommit {
            sha: sha.to_string(),
            files,
        })
        .collect();
    let merged = git::merge_tree(dir, tip, head);
    let mergeable = match merged {
        Some(Some(_)) => MergeableState::Mergeable,
        Some(None) => MergeableState::Conflicting,
        None => from_github,
    };
    (files, base_commits, mergeable, merged.flatten())
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
    let dir = hall.repo.main_root.clone();
    let (shipped, merged_heads) = shipped_items(hall)?;
    // Every item's PR by its branch, delivered ones too (a stacked PR's parent).
    let branch_prs: BTreeMap<String, u64> = hall
        .index()?
        .items(true)
        .map_err(HallError::from)?
        .into_iter()
        .filter_map(|row| Some((row.branch.clone(), pr_number(row.pr.as_deref()?)?)))
        .collect();
    let rooms = crate::hall::policy::runtime_for(Some(hall))?;
    let room = crate::hall::policy::room(&rooms, Some(hall), World::Merger)?;
    let info = room.info().clone();
    let seen = RoomSeen {
        name: info.name.clone(),
        source: info.source.to_string(),
        sha256: info.sha256.clone(),
    };
    let previous = read_plan(hall);
    let mut last_green = previous
        .as_ref()
        .map(|p| p.last_green.clone())
        .unwrap_or_default();
    let mut tips_seen = previous
        .as_ref()
        .map(|p| p.tips.clone())
        .unwrap_or_default();
    // Bases watched with or without PRs: a stopped line until it is green, and a tip
    // (after a merge, say) whose checks have not settled.
    let red = red_bases(hall)?;
    let mut watch: Vec<String> = red.clone();
    let has_origin = git::has_remote(&dir, "origin");
    for (base, seen_tip) in tips_seen.clone() {
        if watch.contains(&base) {
            continue;
        }
        let refspec = format!("+refs/heads/{base}:refs/remotes/origin/{base}");
        if !has_origin || git::fetch_all(&dir, "origin", &[refspec]).is_err() {
            // Gone (a stacked branch deleted on merge): no longer watched.
            tips_seen.remove(&base);
            continue;
        }
        let now_tip = git::commit(&dir, &format!("origin/{base}")).map(|t| t.to_string());
        let settled = now_tip.as_deref() == Some(seen_tip.tip.as_str())
            && matches!(seen_tip.ci.as_str(), "green" | "missing" | "abandoned");
        if !settled {
            watch.push(base);
        }
    }
    if shipped.is_empty() && watch.is_empty() {
        write_plan(
            hall,
            &Plan {
                at: ctx.clock.stamp(),
                room: seen,
                calls: 0,
                bases: Vec::new(),
                held: Vec::new(),
                last_green,
                tips: tips_seen,
            },
        )?;
        return Ok(out);
    }

    let open = gh::open_pull_requests_for_merger(&dir)?;
    out.calls += 1;
    let by_number: BTreeMap<u64, &gh::PullRequest> = open.iter().map(|p| (p.number, p)).collect();

    // A merge cut short: the open list says whether it happened.
    for s in &shipped {
        let record = merge_record(&s.events);
        if let (Some(head), true) = (&record.unresolved, by_number.contains_key(&s.number)) {
            let message = format!(
                "a merge of PR #{} at {} was cut short before it was recorded; the PR is still open, so it is judged again",
                s.number,
                head.short()
            );
            hall.journal
                .append_item(
                    s.id,
                    &[office.event(
                        Some(s.id),
                        EventKind::Notification {
                            kind: "merge_interrupted".into(),
                            message: message.clone(),
                            session: None,
                        },
                    )],
                )
                .map_err(HallError::from)?;
            out.did.push(format!("{}: {message}", s.id));
        }
    }

    // One fetch for every base and every shipped head.
    let mut bases: BTreeSet<String> = BTreeSet::new();
    let mut refspecs: Vec<String> = Vec::new();
    for s in &shipped {
        if let Some(pr) = by_number.get(&s.number) {
            bases.insert(pr.base_ref_name.clone());
            refspecs.push(format!(
                "+refs/heads/{0}:refs/remotes/origin/{0}",
                pr.head_ref_name
            ));
        } else {
            bases.insert(s.item.base.clone());
        }
    }
    bases.extend(watch.iter().cloned());
    for b in &bases {
        refspecs.push(format!("+refs/heads/{b}:refs/remotes/origin/{b}"));
    }
    refspecs.sort();
    refspecs.dedup();
    // One fetch; should one ref be gone, each of the others alone.
    let fetched = has_origin
        && (git::fetch_all(&dir, "origin", &refspecs).is_ok()
            || refspecs
                .iter()
                .filter(|r| git::fetch_all(&dir, "origin", std::slice::from_ref(*r)).is_ok())
                .count()
                > 0);
    let tip_of = |base: &str| -> Option<Sha> {
        let remote = format!("origin/{base}");
        fetched
            .then(|| git::commit(&dir, &remote))
            .flatten()
            .or_else(|| git::commit(&dir, base))
    };
    let tips: BTreeMap<String, Sha> = bases
        .iter()
        .filter_map(|b| tip_of(b).map(|t| (b.clone(), t)))
        .collect();
    // The same call reads the test counts of green PR heads not read before.
    let mut reports = super::test_counts::Reports::load(hall);
    let unread: Vec<String> = shipped
        .iter()
        .filter_map(|s| by_number.get(&s.number))
        .filter(|pr| matches!(pr.ci(), gh::Ci::Green) && !reports.has(&pr.head_ref_oid))
        .map(|pr| pr.head_ref_oid.clone())
        .collect();
    let mut shas: Vec<String> = tips.values().map(|t| t.to_string()).collect();
    shas.extend(unread.iter().cloned());
    shas.sort();
    shas.dedup();
    let checks = gh::commit_checks(&dir, &shas)?;
    out.calls += 1;
    for head in &unread {
        if let Some(list) = checks.get(head) {
            reports.keep(head, list)?;
        }
    }
    let now = ctx
        .clock
        .now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());

    // Who may sign the hallmarks the merger goes by: the configured base's signers.
    let trust = crate::hall::hallmark::Trust::for_repo(&dir, &hall.config.base);
    let settings = merge_settings(&hall.config.merge);
    let window = settings.hot.window;
    let records = super::merge_check::Records::load(hall);
    // PR numbers the queue's items have, and every other open PR.
    let ours: BTreeSet<u64> = shipped.iter().map(|s| s.number).collect();
    let mut open_prs: Vec<u32> = open
        .iter()
        .filter(|p| !ours.contains(&p.number))
        .map(|p| p.number as u32)
        .collect();
    let mut queues: BTreeMap<String, BaseQueue> = BTreeMap::new();
    let mut held: Vec<HeldPr> = Vec::new();
    let mut item_of: BTreeMap<u32, (ItemId, usize)> = BTreeMap::new();
    let mut heads: BTreeMap<u32, String> = BTreeMap::new();
    // Oldest first: by PR number, which GitHub gives in the order PRs were opened.
    let mut order: Vec<usize> = (0..shipped.len()).collect();
    order.sort_by_key(|i| shipped[*i].number);
    for i in order {
        let s = &shipped[i];
        let record = merge_record(&s.events);
        let Some(pr) = by_number.get(&s.number) else {
            // Merged or closed, not yet delivered: a merge in flight when we merged it.
            if record.started || record.merged {
                let q = queue_for(
                    &mut queues,
                    (&tips, &checks),
                    &dir,
                    (now, window),
                    &s.item.base,
                );
                q.merge_in_flight.get_or_insert(s.number as u32);
            }
            continue;
        };
        let base = pr.base_ref_name.clone();
        if record.merged {
            // Recorded as merged, and GitHub still lists it open (it lags): in flight.
            let q = queue_for(&mut queues, (&tips, &checks), &dir, (now, window), &base);
            q.merge_in_flight.get_or_insert(s.number as u32);
            continue;
        }
        let number = s.number as u32;
        if let (State::Closed, Some(hold)) = (s.item.state, &s.item.hold) {
            held.push(HeldPr {
                number,
                item: s.id,
                hold: hold.kind.as_str().to_string(),
            });
            open_prs.push(number);
            continue;
        }
        let Some(tip) = tips.get(&base) else {
            continue;
        };
        let (files, base_commits, mergeable, merged_tree) =
            git_facts(&dir, tip.as_str(), &pr.head_ref_oid, &pr.mergeable);
        // Stacked: based on another branch than the configured base. The PR of that
        // branch goes first; once it merged, this one waits for GitHub to retarget it
        // onto the base (its parent then counts as open), never merging into a branch
        // that is done.
        let stacked_on = if base != hall.config.base {
            let parent = open
                .iter()
                .find(|p| p.head_ref_name == base)
                .map(|p| p.number)
                .or_else(|| branch_prs.get(&base).copied());
            if let Some(p) = parent
                && !by_number.contains_key(&p)
            {
                open_prs.push(p as u32);
            }
            parent.map(|p| p as u32)
        } else {
            None
        };
        let facts = PrFacts {
            number,
            head_sha: pr.head_ref_oid.clone(),
            hallmark_sha: vouched(hall, &trust, s, tip.as_str(), &merged_heads),
            mergeable,
            ci: pr_ci(pr),
            changes_requested: pr.review_decision == "CHANGES_REQUESTED",
            review_requests: pr.review_requests.iter().map(|r| r.who()).collect(),
            body: pr.body.clone(),
            stacked_on,
            files,
            base_commits,
            rebasing: s.item.state != State::Closed,
            lit_cleared: lit_cleared(&s.events),
            checks: check_facts(pr, &reports),
            merge_checks: records.for_head(&pr.head_ref_oid),
            merged_tree,
        };
        item_of.insert(number, (s.id, i));
        heads.insert(number, pr.head_ref_oid.clone());
        queue_for(&mut queues, (&tips, &checks), &dir, (now, window), &base)
            .prs
            .push(facts);
    }
    for base in &watch {
        queue_for(&mut queues, (&tips, &checks), &dir, (now, window), base);
    }
    open_prs.sort_unstable();
    open_prs.dedup();
    let mut input = MergerInput {
        settings,
        bases: queues.into_values().collect(),
        open_prs,
    };
    // A tip whose tree passed a merge check (of the PR whose merge made it).
    for q in &mut input.bases {
        q.tip_checked = !q.tip_sha.is_empty()
            && git::tree_of(&dir, &q.tip_sha).is_ok_and(|t| records.passed(t.as_str()));
    }
    let judge = |input: &MergerInput| -> std::result::Result<MergerPlan, WatchError> {
        match room.judge_merges(input).map_err(HallError::from)? {
            Ok(plan) => Ok(plan),
            Err(failure) => Err(WatchError::Hall(HallError::internal(format!(
                "the merger room {} refused its input: {} ({})",
                info.name,
                failure.message,
                failure.problems.join("; ")
            )))),
        }
    };
    let mut plan = judge(&input)?;
    // The room asks for merged-result checks: of the PR next in line, on the tip, and
    // of the PRs behind it in the train, on the tip with the ones ahead merged in. They
    // run now, side by side up to `[parallel] checks`, and the room judges again with
    // their results, so a green one merges in this same pass. Bounded: one round a base.
    for _ in 0..input.bases.len() {
        let mut wanted: Vec<Wanted> = Vec::new();
        for (b, (q, base_plan)) in input.bases.iter().zip(&plan.bases).enumerate() {
            for d in &base_plan.decisions {
                if !d
                    .reasons
                    .iter()
                    .any(|r| r == "merge_check_missing" || r == "merge_check_rerun")
                {
                    continue;
                }
                let (Some((id, _)), Some(facts)) = (
                    item_of.get(&d.number),
                    q.prs.iter().find(|p| p.number == d.number),
                ) else {
                    continue;
                };
                let ahead: Option<Vec<PrHead>> = d
                    .check_onto
                    .iter()
                    .map(|n| {
                        let head = q.prs.iter().find(|p| p.number == *n)?.head_sha.clone();
                        Some(PrHead { number: *n, head })
                    })
                    .collect();
                // A PR ahead the host does not know is a room mistake; skip the check.
                if let Some(ahead) = ahead {
                    wanted.push(Wanted {
                        base: b,
                        number: d.number,
                        id: *id,
                        ahead,
                        head: facts.head_sha.clone(),
                    });
                }
            }
        }
        if wanted.is_empty() {
            break;
        }
        let results = run_all(hall, &office, &input, &wanted);
        for (w, result) in wanted.into_iter().zip(results) {
            let (q, number) = (&mut input.bases[w.base], w.number);
            // One check the host could not run (git, the loop checkout) costs that
            // PR this pass only: the room asks again on the next.
            let (check, failed) = match result {
                Ok(r) => r,
                Err(e) => {
                    out.did.push(format!(
                        "PR #{number}: its merge check could not run ({}); the next pass tries again",
                        e.message
                    ));
                    continue;
                }
            };
            let onto = w
                .ahead
                .iter()
                .map(|a| format!(" + #{}", a.number))
                .collect::<String>();
            out.did.push(format!(
                "PR #{number}: merged onto {}{onto}, its checks are {}{}",
                crate::item::sha::short(&q.tip_sha),
                ci_name(check.state),
                if failed.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", failed.join(", "))
                }
            ));
            if let Some(facts) = q.prs.iter_mut().find(|p| p.number == number) {
                facts.merge_checks.insert(0, check);
            }
        }
        plan = judge(&input)?;
    }
    let input = input;

    // The plan, whole, before anything is done about it.
    let mut planned = Vec::new();
    for (queue, base_plan) in input.bases.iter().zip(&plan.bases) {
        let tip = tips
            .get(&queue.base)
            .map(|t| t.to_string())
            .unwrap_or_default();
        if queue.tip_ci == CiState::Green {
            last_green.insert(queue.base.clone(), tip.clone());
        }
        if !tip.is_empty() {
            tips_seen.insert(
                queue.base.clone(),
                TipSeen {
                    tip: tip.clone(),
                    ci: ci_name(queue.tip_ci).to_string(),
                },
            );
        }
        planned.push(PlannedBase {
            base: queue.base.clone(),
            tip,
            tip_ci: ci_name(queue.tip_ci).to_string(),
            line_stopped: base_plan.line_stopped,
            merge_in_flight: queue.merge_in_flight,
            prs: base_plan
                .decisions
                .iter()
                .filter_map(|d| {
                    let (item, _) = item_of.get(&d.number)?;
                    Some(PlannedPr {
                        number: d.number,
                        item: *item,
                        action: action_name(d.action).to_string(),
                        waits_for: d.waits_for.clone(),
                        reasons: d.reasons.clone(),
                        head: heads.get(&d.number).cloned().unwrap_or_default(),
                    })
                })
                .collect(),
        });
    }
    write_plan(
        hall,
        &Plan {
            at: ctx.clock.stamp(),
            room: seen,
            calls: out.calls,
            bases: planned.clone(),
            held,
            last_green: last_green.clone(),
            tips: tips_seen,
        },
    )?;

    // The line: a red tip is said once, with its suspects; green again, once.
    for (queue, base) in input.bases.iter().zip(&planned) {
        if let Some(said) = line(hall, &office, &shipped, queue, base, &last_green)? {
            out.did.push(said);
        }
    }

    for base in &planned {
        for pr in &base.prs {
            let Some((id, i)) = item_of.get(&pr.number) else {
                continue;
            };
            let s = &shipped[*i];
            let did = match pr.action.as_str() {
                "merge" => merge(hall, &office, &info, s, pr, &base.tip, &base.base)?,
                "rebase" => rebase(hall, &office, &info, *id, pr, (&base.base, &records))?,
                "hold" if pr.reasons.first().map(String::as_str) == Some("lit") => {
                    lit(hall, &office, &info, *id, pr, &s.item)?
                }
                _ => None,
            };
            out.did.extend(did);
        }
    }
    Ok(out)
}

/// The checks at a PR's head, one by one, with the test count each reported (read
/// once a head, see `test_counts`).
/// The merger room's settings from the `[merge]` section read from the base branch.
fn merge_settings(merge: &crate::config::Merge) -> MergeSettings {
    MergeSettings {
        require_ci: merge.require_ci,
        update: match merge.update {
            crate::config::MergeUpdate::Files => UpdateMode::Files,
            crate::config::MergeUpdate::Conflicts => UpdateMode::Conflicts,
        },
        lit: merge.lit.clone(),
        required_checks: merge.required_checks.clone(),
        pre_merge_check: merge.pre_merge_check,
        hot: HotSettings {
            window: merge.hot_window,
            threshold: merge.hot_threshold,
        },
        train: merge.train,
    }
}

fn check_facts(pr: &gh::PullRequest, reports: &super::test_counts::Reports) -> Vec<CheckFact> {
    pr.status_check_rollup
        .iter()
        .map(|c| {
            let one = gh::PullRequest {
                status_check_rollup: vec![c.clone()],
                ..gh::PullRequest::default()
            };
            CheckFact {
                name: if c.name.is_empty() {
                    c.context.clone()
                } else {
                    c.name.clone()
                },
                state: pr_ci(&one),
                tests: reports.tests(&pr.head_ref_oid, &c.name),
            }
        })
        .collect()
}

fn queue_for<'a>(
    queues: &'a mut BTreeMap<String, BaseQueue>,
    (tips, checks): (
        &BTreeMap<String, Sha>,
        &BTreeMap<String, Vec<gh::CheckContext>>,
    ),
    dir: &Path,
    (now, window): (u64, u32),
    base: &str,
) -> &'a mut BaseQueue {
    queues.entry(base.to_string()).or_insert_with(|| {
        let tip = tips.get(base);
        let tip_ci = tip.map_or(CiState::Pending, |tip| {
            tip_state(dir, tip.as_str(), checks.get(tip.as_str()), now)
        });
        let recent = tip
            .and_then(|t| git::recent_path_counts(dir, t.as_str(), window).ok())
            .unwrap_or_default()
            .into_iter()
            .map(|(path, commits)| PathCount { path, commits })
            .collect();
        BaseQueue {
            base: base.to_string(),
            tip_sha: tip.map(|t| t.to_string()).unwrap_or_default(),
            tip_ci,
            // Filled in once every queue is known (it reads the merge checks).
            tip_checked: false,
            recent,
            merge_in_flight: None,
            prs: Vec::new(),
        }
    })
}

/// Runs `[merge] command` for one PR, recording the intent first.
fn merge(
    hall: &Hall,
    office: &Ctx,
    info: &crate::rooms::RoomInfo,
    s: &Shipped,
    pr: &PlannedPr,
    tip: &str,
    base: &str,
) -> Result<Option<String>> {
    let id = s.id;
    let head = Sha::new(&*pr.head);
    let onto = Sha::new(tip);
    let n = u64::from(pr.number);
    let intent = office.event(
        Some(id),
        EventKind::Merging {
            pr: n,
            head: head.clone(),
            onto: onto.clone(),
        },
    );
    let used = crate::hall::policy::used(office, Some(id), info);
    let written = hall.journal.append_checked(Some(id), |events| {
        let item = crate::item::fold(events);
        // Another merger got here first, or the item moved since the facts were read.
        let due = merge_record(events).unresolved.is_none()
            && item.state == State::Closed
            && item.hold.is_none()
            && item.delivered.is_none();
        Ok::<_, HallError>(if due {
            vec![used.clone(), intent.clone()]
        } else {
            Vec::new()
        })
    })?;
    if written.is_empty() {
        return Ok(None);
    }
    let number = n.to_string();
    let url = s.item.pr.clone().unwrap_or_default();
    let command = crate::template::render(
        &hall.config.merge.command,
        &[
            ("pr", number.as_str()),
            ("pr_head", head.as_str()),
            ("pr_url", url.as_str()),
            ("base", base),
            ("branch", s.item.branch.as_str()),
            ("id", id.to_string().as_str()),
        ],
        true,
    );
    match crate::template::run_logged(&command, &hall.repo.main_root, "merger") {
        Ok(_) => {
            hall.journal.append_item(
                id,
                &[office.event(
                    Some(id),
                    EventKind::PrMerged {
                        pr: n,
                        head: head.clone(),
                        onto,
                    },
                )],
            )?;
            Ok(Some(format!(
                "{id}: merged PR #{n} at {} into {base}",
                head.short()
            )))
        }
        Err(e) => {
            let reason = format!(
                "the merge command failed for PR #{n} at {}: {e}",
                head.short()
            );
            hall.change(office, id).apply(Action::Hold {
                kind: HoldKind::MergeFailed,
                reason: reason.clone(),
                next: vec![
                    format!("gh pr view {n}"),
                    format!("hall retry {id} --reason \"merge again\""),
                ],
            })?;
            Ok(Some(format!("{id} held: {reason}")))
        }
    }
}

/// Reopens the item with a rebase request, as the delivery watch does for a conflict.
fn rebase(
    hall: &Hall,
    office: &Ctx,
    info: &crate::rooms::RoomInfo,
    id: ItemId,
    pr: &PlannedPr,
    (base, records): (&str, &super::merge_check::Records),
) -> Result<Option<String>> {
    let n = pr.number;
    let reason = if pr.reasons.iter().any(|r| r == "conflicting") {
        format!(
            "PR #{n} conflicts with {base}, and its turn in the merge queue has come: rebase it onto {base}"
        )
    } else if pr.reasons.iter().any(|r| r == "merge_check_red") {
        let failed = records.failed_for(&pr.head);
        let gates = if failed.is_empty() {
            String::new()
        } else {
            format!(" ({})", failed.join(", "))
        };
        format!(
            "PR #{n} merged onto {base} fails the repository's checks{gates}, twice on the same tree: rebase it onto {base} and make them pass"
        )
    } else {
        format!(
            "PR #{n} is behind {base} on its own files, and its turn in the merge queue has come: rebase it onto {base}"
        )
    };
    let applied = hall
        .change(office, id)
        .grounded_on([
            crate::hall::policy::used(office, Some(id), info),
            office.event(
                Some(id),
                EventKind::RebaseRequested {
                    base: base.to_string(),
                },
            ),
        ])
        .apply_with(|item| {
            (item.state == State::Closed).then(|| Action::Reopen {
                reason: reason.clone(),
                ci_at: None,
                follow: Some(FollowKind::Conflict),
            })
        })?;
    Ok(applied
        .changed()
        .then(|| format!("{id} reopened: {reason}")))
}

/// Holds a ready PR that touches a `[merge] lit` path for a person.
fn lit(
    hall: &Hall,
    office: &Ctx,
    info: &crate::rooms::RoomInfo,
    id: ItemId,
    pr: &PlannedPr,
    item: &Item,
) -> Result<Option<String>> {
    let n = pr.number;
    let head = Sha::new(&*pr.head);
    let lit = &hall.config.merge.lit;
    let reason = format!(
        "PR #{n} at {} touches a [merge] lit path ({}): a person merges it, or `hall retry` lets this head merge",
        head.short(),
        lit.join(", ")
    );
    if item.hold.is_some() {
        return Ok(None);
    }
    let applied = hall
        .change(office, id)
        .grounded_on([crate::hall::policy::used(office, Some(id), info)])
        .apply_with(|item| {
            (item.state == State::Closed && item.hold.is_none()).then(|| Action::Hold {
                kind: HoldKind::Lit,
                reason: reason.clone(),
                next: vec![
                    format!("gh pr view {n}"),
                    format!("hall retry {id} --reason \"merge this head\""),
                ],
            })
        })?;
    Ok(applied.changed().then(|| format!("{id} held: {reason}")))
}

/// Says `base_red` once for a red tip, naming the suspects (the PRs merged into the
/// base since its last green tip), and `base_green` once it is green again. Both are
/// repository notifications, so the inbox derives `base_red` from the journal.
fn line(
    hall: &Hall,
    office: &Ctx,
    shipped: &[Shipped],
    queue: &BaseQueue,
    base: &PlannedBase,
    last_green: &BTreeMap<String, String>,
) -> Result<Option<String>> {
    let name = &queue.base;
    let (kind, message) = match queue.tip_ci {
        CiState::Red => {
            let suspects = suspects(hall, shipped, name, &base.tip, last_green.get(name))?;
            let named = if suspects.is_empty() {
                "no PR the merger merged".to_string()
            } else {
                suspects
                    .iter()
                    .map(|n| format!("#{n}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            (
                "base_red",
                format!(
                    "{name}: a check failed on its tip {}; nothing merges into {name} until it is green. Suspects: {named}",
                    Sha::new(&*base.tip).short()
                ),
            )
        }
        CiState::Green => ("base_green", format!("{name}: its tip is green again")),
        _ => return Ok(None),
    };
    let prefix = format!("{name}: ");
    let tip = base.tip.clone();
    let said = super::delivery::say_once(hall, office, (kind, &message), |events| {
        let last = events.iter().rev().find_map(|e| match &e.kind {
            EventKind::Notification { kind, message, .. }
                if (kind == "base_red" || kind == "base_green") && message.starts_with(&prefix) =>
            {
                Some((kind.as_str(), message.as_str()))
            }
            _ => None,
        });
        match kind {
            // Once per red tip.
            "base_red" => {
                last.is_none_or(|(k, m)| k != "base_red" || !m.contains(&tip[..tip.len().min(7)]))
            }
            _ => last.is_some_and(|(k, _)| k == "base_red"),
        }
    })?;
    Ok(said.then_some(message))
}

/// The bases whose latest line notice is `base_red`: their line stays stopped, and
/// watched, until a green tip says `base_green`.
fn red_bases(hall: &Hall) -> Result<Vec<String>> {
    let mut seen: Vec<String> = Vec::new();
    let mut red = Vec::new();
    for n in hall.index()?.notices()?.iter().rev() {
        if n.item.is_some() || (n.kind != "base_red" && n.kind != "base_green") {
            continue;
        }
        let base = n.message.split(": ").next().unwrap_or_default().to_string();
        if seen.contains(&base) {
            continue;
        }
        seen.push(base.clone());
        if n.kind == "base_red" {
            red.push(base);
        }
    }
    Ok(red)
}

/// The PRs the merger merged into `base` since its last green tip: each `pr_merged`
/// onto the last green tip or a commit after it, up to `tip`. With no green tip seen,
/// the last one merged.
fn suspects(
    hall: &Hall,
    shipped: &[Shipped],
    base: &str,
    tip: &str,
    green: Option<&String>,
) -> Result<Vec<u64>> {
    let dir = &hall.repo.main_root;
    let mut merged: Vec<(u64, Sha)> = Vec::new();
    let index = hall.index()?;
    for row in index.items(true)? {
        let events = match shipped.iter().find(|s| s.id == row.id) {
            Some(s) => s.events.clone(),
            None => hall.events(row.id)?,
        };
        for e in &events {
            if let EventKind::PrMerged { pr, onto, .. } = &e.kind
                && row.base == base
            {
                merged.push((*pr, onto.clone()));
            }
        }
    }
    let Some(green) = green else {
        return Ok(merged.last().map(|(n, _)| *n).into_iter().collect());
    };
    let mut out: Vec<u64> = merged
        .into_iter()
        .filter(|(_, onto)| {
            git::is_ancestor(dir, green, onto.as_str()) && git::is_ancestor(dir, onto.as_str(), tip)
        })
        .map(|(n, _)| n)
        .collect();
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(kind: EventKind) -> Event {
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

    #[test]
    fn a_retry_clears_a_lit_hold_only_until_the_next_ship() {
        let held = at(EventKind::Held {
            kind: HoldKind::Lit,
            reason: String::new(),
            next: Vec::new(),
        });
        let retried = at(EventKind::Retried {
            reason: "merge this head".into(),
            tokens: None,
            released: Some(HoldKind::Lit),
        });
        let shipped = at(EventKind::Shipped {
            sha: Sha::new("c".repeat(40)),
            pr: None,
        });
        assert!(!lit_cleared(std::slice::from_ref(&held)));
        assert!(lit_cleared(&[held.clone(), retried.clone()]));
        assert!(!lit_cleared(&[held, retried, shipped]));
    }

    /// The room's settings come from `[merge]`, and an empty `[merge]` gives the
    /// room's own defaults (the train's length among them).
    #[test]
    fn merge_settings_follow_the_config() {
        let mut merge = crate::config::Merge::default();
        assert_eq!(merge_settings(&merge), MergeSettings::default());
        assert_eq!(merge.train, crate::rooms::types::DEFAULT_TRAIN);
        merge.required_checks = vec!["test".into()];
        merge.pre_merge_check = false;
        merge.hot_window = 20;
        merge.hot_threshold = 3;
        merge.update = crate::config::MergeUpdate::Conflicts;
        let s = merge_settings(&merge);
        assert_eq!(s.required_checks, ["test"]);
        assert!(!s.pre_merge_check);
        assert_eq!(
            s.hot,
            HotSettings {
                window: 20,
                threshold: 3
            }
        );
        assert_eq!(s.update, UpdateMode::Conflicts);
    }
}
