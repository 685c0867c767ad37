//! Acting on the room's plan. The plan is written whole to `merger.json` before anything
//! is done about it; then each base's line is said (a red tip once, with its suspects;
//! green again, once), and each PR's action is carried out: a merge through `[merge]
//! command`, a reopen with a rebase request, or a `lit` hold for a person.

use std::collections::BTreeMap;

use super::gather::Facts;
use super::{
    Memory, Passed, Plan, PlannedBase, PlannedPr, RoomSeen, Shipped, TipSeen, ci_name,
    merge_record, write_plan,
};
use crate::error::{HallError, Result};
use crate::git;
use crate::hall::{Ctx, Hall};
use crate::item::{Action, EventKind, FollowKind, HoldKind, Item, ItemId, Sha, State};
use crate::office::merge_check::Records;
use crate::rooms::RoomInfo;
use crate::rooms::types::{Action as Judged, BaseQueue, CiState, MergerPlan};

/// Writes the pass's plan to `merger.json` (with what the next pass remembers, updated
/// in `memory`), and returns its bases as planned.
pub(super) fn record(
    hall: &Hall,
    ctx: &Ctx,
    room: RoomSeen,
    facts: &Facts,
    plan: &MergerPlan,
    memory: &mut Memory,
    calls: usize,
) -> Result<Vec<PlannedBase>> {
    let mut planned = Vec::new();
    for (queue, base_plan) in facts.input.bases.iter().zip(&plan.bases) {
        let tip = facts
            .tips
            .get(&queue.base)
            .map(|t| t.to_string())
            .unwrap_or_default();
        if queue.tip_ci == CiState::Green {
            memory.last_green.insert(queue.base.clone(), tip.clone());
        }
        if !tip.is_empty() {
            memory.tips.insert(
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
                    let (item, _) = facts.item_of.get(&d.number)?;
                    Some(PlannedPr {
                        number: d.number,
                        item: *item,
                        action: action_name(d.action).to_string(),
                        waits_for: d.waits_for.clone(),
                        reasons: d.reasons.clone(),
                        head: facts.heads.get(&d.number).cloned().unwrap_or_default(),
                    })
                })
                .collect(),
        });
    }
    write_plan(
        hall,
        &Plan {
            at: ctx.clock.stamp(),
            room,
            calls,
            bases: planned.clone(),
            held: facts.held.clone(),
            last_green: memory.last_green.clone(),
            tips: memory.tips.clone(),
        },
    )?;
    Ok(planned)
}

/// Says each base's line, then does what the plan says of each PR: `merge`, `rebase`,
/// or a `hold` for a `lit` path. A `wait` does nothing.
pub(super) fn carry_out(
    hall: &Hall,
    office: &Ctx,
    info: &RoomInfo,
    facts: &Facts,
    planned: &[PlannedBase],
    last_green: &BTreeMap<String, String>,
    out: &mut Passed,
) -> Result<()> {
    for (queue, base) in facts.input.bases.iter().zip(planned) {
        if let Some(said) = line(hall, office, &facts.shipped, queue, base, last_green)? {
            out.did.push(said);
        }
    }
    for base in planned {
        for pr in &base.prs {
            let Some((id, i)) = facts.item_of.get(&pr.number) else {
                continue;
            };
            let s = &facts.shipped[*i];
            let records = &facts.records;
            let did = match pr.action.as_str() {
                "merge" => merge(hall, office, info, s, pr, &base.tip, &base.base)?,
                "rebase" => rebase(hall, office, info, *id, pr, (&base.base, records))?,
                "hold" if pr.reasons.first().map(String::as_str) == Some("lit") => {
                    lit(hall, office, info, *id, pr, &s.item)?
                }
                _ => None,
            };
            out.did.extend(did);
        }
    }
    Ok(())
}

fn action_name(a: Judged) -> &'static str {
    match a {
        Judged::Merge => "merge",
        Judged::Rebase => "rebase",
        Judged::Wait => "wait",
        Judged::Hold => "hold",
    }
}

/// Runs `[merge] command` for one PR, recording the intent first.
fn merge(
    hall: &Hall,
    office: &Ctx,
    info: &RoomInfo,
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
    info: &RoomInfo,
    id: ItemId,
    pr: &PlannedPr,
    (base, records): (&str, &Records),
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
    info: &RoomInfo,
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
    let said = crate::office::delivery::say_once(hall, office, (kind, &message), |events| {
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
