//! Judging: the merger room decides on the gathered facts. The room may ask for
//! merged-result checks first: of the PR next in line, on the tip, and of the PRs behind
//! it in the train, on the tip with the ones ahead merged in. They run now, side by side
//! up to `[parallel] checks`, and the room judges again with their results, so a green
//! one merges in this same pass. Bounded: one round a base.

use std::collections::BTreeMap;

use super::gather::Facts;
use super::{Passed, ci_name};
use crate::error::HallError;
use crate::hall::{Ctx, Hall};
use crate::item::ItemId;
use crate::office::delivery::WatchError;
use crate::office::merge_check::{Wanted, run_all};
use crate::rooms::Room;
use crate::rooms::types::{MergerInput, MergerPlan, PrHead};

/// The room's plan for `facts`, after the merge checks it asked for have run (their
/// results are added to `facts.input`).
pub(super) fn judge(
    hall: &Hall,
    office: &Ctx,
    room: &Room,
    facts: &mut Facts,
    out: &mut Passed,
) -> Result<MergerPlan, WatchError> {
    let input = &mut facts.input;
    let mut plan = ask(room, input)?;
    for _ in 0..input.bases.len() {
        let wanted = wanted(input, &plan, &facts.item_of);
        if wanted.is_empty() {
            break;
        }
        let results = run_all(hall, office, input, &wanted);
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
        plan = ask(room, input)?;
    }
    Ok(plan)
}

/// The room's judgement of `input`; a refusal is the room's fault, and stops the pass.
fn ask(room: &Room, input: &MergerInput) -> Result<MergerPlan, WatchError> {
    match room.judge_merges(input).map_err(HallError::from)? {
        Ok(plan) => Ok(plan),
        Err(failure) => Err(WatchError::Hall(HallError::internal(format!(
            "the merger room {} refused its input: {} ({})",
            room.info().name,
            failure.message,
            failure.problems.join("; ")
        )))),
    }
}

/// The merge checks `plan` asks for (`merge_check_missing`, `merge_check_rerun`), of
/// PRs the host knows, onto the PRs ahead of each.
fn wanted(
    input: &MergerInput,
    plan: &MergerPlan,
    item_of: &BTreeMap<u32, (ItemId, usize)>,
) -> Vec<Wanted> {
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
    wanted
}
