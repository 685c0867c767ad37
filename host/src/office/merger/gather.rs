//! Gathering: everything a pass knows before the room judges. The journal gives the
//! shipped items and how their merges stand; GitHub gives the open PRs and the checks at
//! every base tip, one call each; git gives, after one fetch, each PR's files, the
//! base's commits since it forked, and whether it merges cleanly.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::{HeldPr, Passed, Shipped, TipSeen, merge_record};
use crate::error::{HallError, Result};
use crate::gh;
use crate::git;
use crate::hall::{Ctx, Hall};
use crate::item::{Event, EventKind, HoldKind, ItemId, Sha, State};
use crate::office::delivery::{WatchError, pr_number};
use crate::office::merge_check::Records;
use crate::office::test_counts::Reports;
use crate::rooms::types::{
    BaseCommit, BaseQueue, CheckFact, CiState, MergeSettings, MergeableState, MergerInput,
    PathCount, PrFacts,
};

/// A base tip with no check run yet counts as running this long (when the base has CI).
const NO_RUNS_GRACE: u64 = 5 * 60;
/// A base tip whose checks run longer than this is given up on.
const TIP_LIMIT: u64 = 6 * 60 * 60;

/// What the journal says before GitHub is asked anything.
pub(super) struct Stock {
    /// The open shipped items.
    pub(super) shipped: Vec<Shipped>,
    /// By branch, the shipped head of every item whose PR merged.
    merged_heads: BTreeMap<String, Sha>,
    /// Every item's PR by its branch, delivered ones too (a stacked PR's parent).
    branch_prs: BTreeMap<String, u64>,
}

/// The items the merger follows, read from the index and the journal.
pub(super) fn stock(hall: &Hall) -> Result<Stock> {
    let (shipped, merged_heads) = shipped_items(hall)?;
    let branch_prs: BTreeMap<String, u64> = hall
        .index()?
        .items(true)
        .map_err(HallError::from)?
        .into_iter()
        .filter_map(|row| Some((row.branch.clone(), pr_number(row.pr.as_deref()?)?)))
        .collect();
    Ok(Stock {
        shipped,
        merged_heads,
        branch_prs,
    })
}

/// The bases a pass looks at whether or not a PR waits on them.
pub(super) struct Watch {
    pub(super) bases: Vec<String>,
    /// Whether the repository has an `origin` to fetch from.
    has_origin: bool,
}

/// The bases watched with or without PRs: a stopped line until it is green, and a tip
/// (after a merge, say) whose checks have not settled. A base that can no longer be
/// fetched (a stacked branch deleted on merge) is dropped from `tips`.
pub(super) fn watched(hall: &Hall, tips: &mut BTreeMap<String, TipSeen>) -> Result<Watch> {
    let dir = &hall.repo.main_root;
    let mut watch: Vec<String> = red_bases(hall)?;
    let has_origin = git::has_remote(dir, "origin");
    for (base, seen_tip) in tips.clone() {
        if watch.contains(&base) {
            continue;
        }
        let refspec = format!("+refs/heads/{base}:refs/remotes/origin/{base}");
        if !has_origin || git::fetch_all(dir, "origin", &[refspec]).is_err() {
            // Gone (a stacked branch deleted on merge): no longer watched.
            tips.remove(&base);
            continue;
        }
        let now_tip = git::commit(dir, &format!("origin/{base}")).map(|t| t.to_string());
        let settled = now_tip.as_deref() == Some(seen_tip.tip.as_str())
            && matches!(seen_tip.ci.as_str(), "green" | "missing" | "abandoned");
        if !settled {
            watch.push(base);
        }
    }
    Ok(Watch {
        bases: watch,
        has_origin,
    })
}

/// What the room is asked, and what the host keeps to act on its answer.
pub(super) struct Facts {
    pub(super) shipped: Vec<Shipped>,
    /// The room's input, one queue a base.
    pub(super) input: MergerInput,
    /// Each base's tip, as fetched.
    pub(super) tips: BTreeMap<String, Sha>,
    /// The item of each PR the room judges, with its place in `shipped`.
    pub(super) item_of: BTreeMap<u32, (ItemId, usize)>,
    /// The head each judged PR was at.
    pub(super) heads: BTreeMap<u32, String>,
    /// The shipped PRs left alone while their items are held.
    pub(super) held: Vec<HeldPr>,
    /// The merge checks recorded so far.
    pub(super) records: Records,
}

/// Asks GitHub for the open PRs and the checks at every tip, fetches every base and
/// shipped head, and builds the room's input: a queue for each base, oldest PR first.
pub(super) fn facts(
    hall: &Hall,
    ctx: &Ctx,
    office: &Ctx,
    stock: Stock,
    watch: &Watch,
    out: &mut Passed,
) -> std::result::Result<Facts, WatchError> {
    let dir = &hall.repo.main_root;
    let open = gh::open_pull_requests_for_merger(dir)?;
    out.calls += 1;
    let by_number: BTreeMap<u64, &gh::PullRequest> = open.iter().map(|p| (p.number, p)).collect();
    cut_short(hall, office, &stock.shipped, &by_number, out)?;
    let tips = fetch(dir, watch, &stock.shipped, &by_number);
    let (checks, reports) = checks(hall, &stock.shipped, &by_number, &tips, out)?;
    let now = ctx
        .clock
        .now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());

    // Who may sign the hallmarks the merger goes by: the configured base's signers.
    let trust = crate::hall::hallmark::Trust::for_repo(dir, &hall.config.base);
    let settings = merge_settings(&hall.config.merge);
    let board = Board {
        dir,
        tips,
        checks,
        now,
        window: settings.hot.window,
    };
    let records = Records::load(hall);
    // PR numbers the queue's items have, and every other open PR.
    let ours: BTreeSet<u64> = stock.shipped.iter().map(|s| s.number).collect();
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
    let mut order: Vec<usize> = (0..stock.shipped.len()).collect();
    order.sort_by_key(|i| stock.shipped[*i].number);
    for i in order {
        let s = &stock.shipped[i];
        let record = merge_record(&s.events);
        let Some(pr) = by_number.get(&s.number) else {
            // Merged or closed, not yet delivered: a merge in flight when we merged it.
            if record.started || record.merged {
                let q = board.queue(&mut queues, &s.item.base);
                q.merge_in_flight.get_or_insert(s.number as u32);
            }
            continue;
        };
        let base = pr.base_ref_name.clone();
        if record.merged {
            // Recorded as merged, and GitHub still lists it open (it lags): in flight.
            let q = board.queue(&mut queues, &base);
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
        let Some(tip) = board.tips.get(&base) else {
            continue;
        };
        let (files, base_commits, mergeable, merged_tree) =
            git_facts(dir, tip.as_str(), &pr.head_ref_oid, &pr.mergeable);
        // Stacked: based on another branch than the configured base. The PR of that
        // branch goes first; once it merged, this one waits for GitHub to retarget it
        // onto the base (its parent then counts as open), never merging into a branch
        // that is done.
        let stacked_on = if base != hall.config.base {
            let parent = open
                .iter()
                .find(|p| p.head_ref_name == base)
                .map(|p| p.number)
                .or_else(|| stock.branch_prs.get(&base).copied());
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
            hallmark_sha: vouched(hall, &trust, s, tip.as_str(), &stock.merged_heads),
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
        board.queue(&mut queues, &base).prs.push(facts);
    }
    for base in &watch.bases {
        board.queue(&mut queues, base);
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
            && git::tree_of(dir, &q.tip_sha).is_ok_and(|t| records.passed(t.as_str()));
    }
    Ok(Facts {
        shipped: stock.shipped,
        input,
        tips: board.tips,
        item_of,
        heads,
        held,
        records,
    })
}

/// A merge cut short: the open list says whether it happened. One whose PR is still
/// open is noted (`merge_interrupted`), which answers its `merging`, and judged again.
fn cut_short(
    hall: &Hall,
    office: &Ctx,
    shipped: &[Shipped],
    by_number: &BTreeMap<u64, &gh::PullRequest>,
    out: &mut Passed,
) -> Result<()> {
    for s in shipped {
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
    Ok(())
}

/// One fetch for every base and every shipped head, and each base's tip after it (the
/// local branch when there is nothing to fetch from).
fn fetch(
    dir: &Path,
    watch: &Watch,
    shipped: &[Shipped],
    by_number: &BTreeMap<u64, &gh::PullRequest>,
) -> BTreeMap<String, Sha> {
    let mut bases: BTreeSet<String> = BTreeSet::new();
    let mut refspecs: Vec<String> = Vec::new();
    for s in shipped {
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
    bases.extend(watch.bases.iter().cloned());
    for b in &bases {
        refspecs.push(format!("+refs/heads/{b}:refs/remotes/origin/{b}"));
    }
    refspecs.sort();
    refspecs.dedup();
    // One fetch; should one ref be gone, each of the others alone.
    let fetched = watch.has_origin
        && (git::fetch_all(dir, "origin", &refspecs).is_ok()
            || refspecs
                .iter()
                .filter(|r| git::fetch_all(dir, "origin", std::slice::from_ref(*r)).is_ok())
                .count()
                > 0);
    let tip_of = |base: &str| -> Option<Sha> {
        let remote = format!("origin/{base}");
        fetched
            .then(|| git::commit(dir, &remote))
            .flatten()
            .or_else(|| git::commit(dir, base))
    };
    bases
        .iter()
        .filter_map(|b| tip_of(b).map(|t| (b.clone(), t)))
        .collect()
}

/// The checks at every base tip, in one call, which also reads the test counts of green
/// PR heads not read before (kept in `Reports`).
fn checks(
    hall: &Hall,
    shipped: &[Shipped],
    by_number: &BTreeMap<u64, &gh::PullRequest>,
    tips: &BTreeMap<String, Sha>,
    out: &mut Passed,
) -> std::result::Result<(BTreeMap<String, Vec<gh::CheckContext>>, Reports), WatchError> {
    let mut reports = Reports::load(hall);
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
    let checks = gh::commit_checks(&hall.repo.main_root, &shas)?;
    out.calls += 1;
    for head in &unread {
        if let Some(list) = checks.get(head) {
            reports.keep(head, list)?;
        }
    }
    Ok((checks, reports))
}

/// Each base's tip and the checks GitHub reported on it: what a base's queue starts from.
struct Board<'a> {
    dir: &'a Path,
    tips: BTreeMap<String, Sha>,
    checks: BTreeMap<String, Vec<gh::CheckContext>>,
    now: u64,
    /// `[merge.hot] window`: how many recent base commits count a path as hot.
    window: u32,
}

impl Board<'_> {
    /// The queue of `base`, made the first time it is asked for: its tip, how the tip's
    /// checks stand, and the paths its recent commits changed.
    fn queue<'q>(
        &self,
        queues: &'q mut BTreeMap<String, BaseQueue>,
        base: &str,
    ) -> &'q mut BaseQueue {
        let dir = self.dir;
        queues.entry(base.to_string()).or_insert_with(|| {
            let tip = self.tips.get(base);
            let tip_ci = tip.map_or(CiState::Pending, |tip| {
                tip_state(dir, tip.as_str(), self.checks.get(tip.as_str()), self.now)
            });
            let recent = tip
                .and_then(|t| git::recent_path_counts(dir, t.as_str(), self.window).ok())
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

/// The checks at a PR's head, one by one, with the test count each reported (read
/// once a head, see `test_counts`).
fn check_facts(pr: &gh::PullRequest, reports: &Reports) -> Vec<CheckFact> {
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

/// The merger room's settings from the `[merge]` section read from the base branch.
fn merge_settings(merge: &crate::config::Merge) -> MergeSettings {
    use crate::rooms::types::{HotSettings, UpdateMode};
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::office::merger::tests::at;

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
        use crate::rooms::types::{HotSettings, MergeSettings, UpdateMode};
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
