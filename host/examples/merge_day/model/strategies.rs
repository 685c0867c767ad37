//! The strategies: each runs the day pass by pass; Hallmark's asks the merger room for
//! its plan and acts on it.

use super::*;

const PASS: u64 = 20;

/// Runs the day under `strategy`. `judge` is called for Hallmark's strategy only.
pub fn run(day: &Day, strategy: Strategy, judge: &mut Judge<'_>) -> Report {
    let mut sim = Sim::new(day, 1);
    let mut batches: VecDeque<Vec<usize>> = VecDeque::new();
    let mut queue: Vec<usize> = Vec::new();
    let mut running: Option<(Vec<usize>, Run)> = None;
    let mut last: Option<(MergerInput, MergerPlan)> = None;
    let mut room_calls = 0;
    while sim.t <= day.p.horizon {
        sim.events();
        match strategy {
            Strategy::Hallmark {
                pre_merge_check,
                hot,
                train,
                update,
            } => {
                let input = hallmark_input(&sim, (pre_merge_check, hot, train, update));
                let plan = match last.take() {
                    Some((prev, plan)) if prev == input => plan,
                    _ => {
                        room_calls += 1;
                        judge(&input)
                    }
                };
                hallmark_act(&mut sim, &plan);
                last = Some((input, plan));
            }
            Strategy::WhenGreen => plain_step(&mut sim, false),
            Strategy::AlwaysUpdate => plain_step(&mut sim, true),
            Strategy::Batch { size } => {
                batch_step(&mut sim, size, &mut queue, &mut batches, &mut running);
            }
        }
        if sim.last_base_red {
            sim.red_secs += PASS;
        }
        sim.t += PASS;
    }
    sim.report(strategy, room_calls)
}

/// One pass of GitHub's plain merge button: every ready PR that is green merges, one
/// with conflicts is rebased; with `up_to_date`, a green PR behind the tip is first
/// updated ("Update branch"), and its CI runs again.
fn plain_step(sim: &mut Sim<'_>, up_to_date: bool) {
    for i in 0..sim.prs.len() {
        if !sim.ready(i) {
            continue;
        }
        if sim.prs[i].conflicting {
            sim.start_busy(i, Busy::Rebase);
        } else if sim.green(i) && sim.lit_ok(i) {
            if up_to_date && sim.prs[i].base_v != sim.tip() {
                sim.start_busy(i, Busy::Rebase);
            } else {
                sim.merge(i, true);
            }
        }
    }
}

fn batch_step(
    sim: &mut Sim<'_>,
    size: usize,
    queue: &mut Vec<usize>,
    batches: &mut VecDeque<Vec<usize>>,
    running: &mut Option<(Vec<usize>, Run)>,
) {
    let in_batches = |i: usize, b: &VecDeque<Vec<usize>>, r: &Option<(Vec<usize>, Run)>| {
        b.iter().any(|g| g.contains(&i)) || r.as_ref().is_some_and(|(g, _)| g.contains(&i))
    };
    for i in 0..sim.prs.len() {
        if !sim.ready(i) || queue.contains(&i) || in_batches(i, batches, running) {
            continue;
        }
        if sim.prs[i].conflicting {
            sim.start_busy(i, Busy::Rebase);
        } else if sim.green(i) && sim.lit_ok(i) {
            queue.push(i);
        }
    }
    if let Some((group, run)) = running.clone()
        && run.done <= sim.t
    {
        *running = None;
        if !run.red {
            for &i in &group {
                sim.merge(i, false);
            }
            sim.start_base_ci();
        } else if group.len() == 1 {
            // Out of the queue: its author looks. A real failure is fixed on
            // the branch (rebased onto the tip); a flake goes back in line.
            let i = group[0];
            if run.real {
                sim.start_busy(i, Busy::Fix);
            } else {
                queue.insert(0, i);
            }
        } else {
            let half = group.len().div_ceil(2);
            batches.push_front(group[half..].to_vec());
            batches.push_front(group[..half].to_vec());
        }
    }
    if running.is_none() {
        let group = match batches.pop_front() {
            Some(g) => g,
            None => {
                let take = queue.len().min(size);
                queue.drain(..take).collect()
            }
        };
        // Build the group on the tip in order; a PR that conflicts with the tip
        // leaves the queue to be rebased, one that conflicts with a PR ahead of
        // it in the group waits for a later group.
        let mut kept: Vec<usize> = Vec::new();
        let mut files: Vec<u16> = Vec::new();
        for i in group {
            if !sim.prs[i].open || !sim.ready(i) {
                continue;
            }
            if sim.prs[i].conflicting {
                sim.start_busy(i, Busy::Rebase);
                continue;
            }
            let clashes = kept.iter().any(|&j| {
                sim.d.specs[i]
                    .files
                    .iter()
                    .any(|f| sim.d.specs[j].files.contains(f))
                    && coin(sim.d.p.seed, i as u64, j as u64, sim.d.p.conflict)
            });
            if clashes {
                queue.insert(0, i);
                continue;
            }
            files.extend(&sim.d.specs[i].files);
            kept.push(i);
        }
        if !kept.is_empty() {
            let mut tree = sim.base[sim.tip()].clone();
            for &i in &kept {
                tree = tree.with(i, sim.prs[i].fixes);
            }
            let run = sim.run(&tree);
            *running = Some((kept, run));
        }
    }
}

fn state_of(run: Option<Run>, t: u64) -> CiState {
    match run {
        None => CiState::Pending,
        Some(r) if r.done > t => CiState::Pending,
        Some(r) if r.red => CiState::Red,
        Some(_) => CiState::Green,
    }
}

/// The merger room's input, built from the model's state as the host would.
///
/// Base commits are given as the ones touching the PR's files plus, when there
/// are others, the latest of those with no files: the rules read only whether
/// the list is empty and which of the PR's files it touches, and the full list
/// would make each pass copy every commit of a day-old branch.
fn hallmark_input(
    sim: &Sim<'_>,
    (pre_merge_check, hot, train, update): (bool, bool, u32, UpdateMode),
) -> MergerInput {
    let t = sim.t;
    let tip = sim.tip();
    let sha = |v: usize| format!("v{v}");
    let mut prs = Vec::new();
    for (i, pr) in sim.prs.iter().enumerate() {
        if !pr.open {
            continue;
        }
        let head = format!("pr{i}-h{}", pr.head);
        let mut base_commits: Vec<BaseCommit> = pr
            .behind
            .iter()
            .map(|(v, files)| BaseCommit {
                sha: sha(*v),
                files: files.iter().map(|&f| sim.d.file_name(f)).collect(),
            })
            .collect();
        if let Some(v) = pr.other_behind {
            base_commits.push(BaseCommit {
                sha: sha(v),
                files: Vec::new(),
            });
        }
        let rebasing = matches!(pr.busy, Some((_, Busy::Rebase | Busy::Fix)));
        prs.push(PrFacts {
            number: i as u32 + 1,
            head_sha: head.clone(),
            hallmark_sha: Some(head),
            mergeable: if pr.conflicting {
                MergeableState::Conflicting
            } else {
                MergeableState::Mergeable
            },
            ci: if pr.inherited {
                CiState::Red
            } else {
                state_of(pr.ci, t)
            },
            checks: Vec::new(),
            merge_checks: pr
                .merge_checks
                .iter()
                .map(|c| MergeCheck {
                    state: state_of(Some(c.run), t),
                    onto: sha(c.onto),
                    ahead: c
                        .ahead
                        .iter()
                        .map(|&(a, h)| PrHead {
                            number: a as u32 + 1,
                            head: format!("pr{a}-h{h}"),
                        })
                        .collect(),
                    head: format!("pr{i}-h{}", pr.head),
                    tree: c.tree.as_ref().map(Tree::id),
                    skipped: None,
                })
                .collect(),
            merged_tree: (!pr.conflicting).then(|| sim.base[tip].with(i, pr.fixes).id()),
            changes_requested: pr.changes_requested,
            review_requests: Vec::new(),
            body: String::new(),
            stacked_on: None,
            files: sim.d.specs[i]
                .files
                .iter()
                .map(|&f| sim.d.file_name(f))
                .collect(),
            base_commits,
            rebasing,
            lit_cleared: sim.lit_ok(i),
        });
    }
    let window = 50;
    let from = sim.base_files.len().saturating_sub(window);
    let mut counts: Vec<(u16, u32)> = Vec::new();
    for files in &sim.base_files[from..] {
        for &f in files {
            match counts.iter_mut().find(|(g, _)| *g == f) {
                Some((_, n)) => *n += 1,
                None => counts.push((f, 1)),
            }
        }
    }
    counts.sort_unstable();
    let tip_ci = match sim.tip_run {
        Some((v, run)) if v == tip => state_of(Some(run), t),
        // The day's first tip was green before the day began.
        _ if tip == 0 => CiState::Green,
        _ => CiState::Pending,
    };
    let tip_tree = &sim.base[tip];
    let tip_checked = sim
        .checked
        .iter()
        .any(|(tree, run)| tree == tip_tree && run.done <= t && !run.red);
    MergerInput {
        settings: MergeSettings {
            require_ci: true,
            update,
            lit: vec!["deploy/".into()],
            required_checks: Vec::new(),
            pre_merge_check,
            hot: hallmark::rooms::types::HotSettings {
                window: window as u32,
                threshold: if hot { 5 } else { 0 },
            },
            train,
        },
        bases: vec![BaseQueue {
            base: "main".into(),
            tip_sha: sha(tip),
            tip_ci,
            tip_checked,
            recent: counts
                .into_iter()
                .map(|(f, commits)| PathCount {
                    path: sim.d.file_name(f),
                    commits,
                })
                .collect(),
            merge_in_flight: sim.merge_in_flight.map(|(i, _)| i as u32 + 1),
            prs,
        }],
        open_prs: Vec::new(),
    }
}

/// Does what the plan says: the merge, the rebases, the merge checks asked for.
fn hallmark_act(sim: &mut Sim<'_>, plan: &MergerPlan) {
    let Some(base) = plan.bases.first() else {
        return;
    };
    let tip = sim.tip();
    let mut merged = false;
    for d in &base.decisions {
        let i = d.number as usize - 1;
        if !sim.prs[i].open {
            continue;
        }
        match d.action {
            Action::Merge if !merged && sim.ready(i) && !sim.prs[i].conflicting => {
                sim.merge(i, true);
                merged = true;
            }
            Action::Rebase if sim.prs[i].busy.is_none() => sim.start_busy(i, Busy::Rebase),
            Action::Wait
                if matches!(
                    d.reasons.first().map(String::as_str),
                    Some("merge_check_missing" | "merge_check_rerun")
                ) && sim.busy_free(i) =>
            {
                let mut tree = sim.base[tip].clone();
                let mut ahead = Vec::new();
                let mut clash = false;
                for &n in &d.check_onto {
                    let a = n as usize - 1;
                    tree = tree.with(a, sim.prs[a].fixes);
                    ahead.push((a, sim.prs[a].head));
                    // The same textual conflict the base would meet once `a` merged.
                    clash |= sim.d.specs[i]
                        .files
                        .iter()
                        .any(|f| sim.d.specs[a].files.contains(f))
                        && coin(sim.d.p.seed, i as u64, a as u64, sim.d.p.conflict);
                }
                let tree = tree.with(i, sim.prs[i].fixes);
                let run = if clash {
                    // `git merge-tree` refuses the chain at once: red, no tree, no run.
                    Run {
                        done: sim.t,
                        red: true,
                        real: true,
                    }
                } else {
                    let run = sim.run(&tree);
                    sim.checked.push((tree.clone(), run));
                    run
                };
                let checks = &mut sim.prs[i].merge_checks;
                checks.insert(
                    0,
                    Check {
                        onto: tip,
                        ahead,
                        tree: (!clash).then_some(tree),
                        run,
                    },
                );
                checks.truncate(8);
            }
            _ => {}
        }
    }
}

impl Sim<'_> {
    fn busy_free(&self, i: usize) -> bool {
        self.prs[i].busy.is_none()
    }
}

/// Runs the day under every strategy, Hallmark's through `room` (the built-in
/// merger or any other merger room). A room that refuses or fails stops the run.
pub fn run_all(
    day: &Day,
    strategies: &[Strategy],
    room: &hallmark::rooms::Room,
) -> Result<Vec<Report>, String> {
    let mut error: Option<String> = None;
    let reports = strategies
        .iter()
        .map(|&s| {
            let mut judge = |input: &MergerInput| match room.judge_merges(input) {
                Ok(Ok(plan)) => plan,
                Ok(Err(f)) => {
                    error.get_or_insert(format!("the room refused: {}", f.message));
                    MergerPlan { bases: Vec::new() }
                }
                Err(e) => {
                    error.get_or_insert(e.to_string());
                    MergerPlan { bases: Vec::new() }
                }
            };
            run(day, s, &mut judge)
        })
        .collect();
    match error {
        Some(e) => Err(e),
        None => Ok(reports),
    }
}
