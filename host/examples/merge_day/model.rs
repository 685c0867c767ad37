//! A deterministic model of one working day of pull requests on one base, run
//! under several merge strategies with the same PRs, CI times and flake rate.
//!
//! Hallmark's strategy asks the real merger room for a plan every pass (through
//! the `judge` callback, which the caller wires to `hallmark::rooms`); the model
//! builds the room's input from its own state and acts on the plan. The other
//! strategies are plain Rust here. Time is in seconds, advanced in 20-second
//! passes.
//!
//! What a tree is: the set of PRs merged into it plus the semantic-conflict
//! fixes it carries. A tree fails the checks when it holds both PRs of a hidden
//! semantic pair without that pair's fix; any run also fails by a flake with
//! the flake rate (a flake passes on a re-run).

use std::collections::VecDeque;

use hallmark::rooms::types::{
    Action, BaseCommit, BaseQueue, CiState, MergeCheck, MergeSettings, MergeableState, MergerInput,
    MergerPlan, PathCount, PrFacts, PrHead, UpdateMode,
};

// Named by path: the tests include this file by path too (host/tests/merge_day.rs).
#[path = "model/strategies.rs"]
mod strategies;

pub use strategies::run_all;

const MIN: u64 = 60;
const HOUR: u64 = 3600;

/// The shape of the day.
#[derive(Debug, Clone)]
pub struct Params {
    pub seed: u64,
    /// PRs arriving over the working day.
    pub prs: usize,
    /// The working day, in seconds: arrivals are spread over it.
    pub day: u64,
    /// When the model stops; a PR not merged by then never merged.
    pub horizon: u64,
    /// Files in the repository, of which `hot` are picked often.
    pub files: usize,
    pub hot: usize,
    /// The chance that one file a PR touches is a hot one.
    pub hot_pick: f64,
    /// CI run time, uniform between these (seconds).
    pub ci_min: u64,
    pub ci_max: u64,
    /// The chance that any run fails by a flake.
    pub flake: f64,
    /// Hidden semantic pairs: textually clean, failing together.
    pub semantic_pairs: usize,
    /// The share of PRs that get a review comment to address.
    pub review_share: f64,
    /// PRs touching a lit path (a person approves them after a delay).
    pub lit_prs: usize,
    /// The chance that a base commit touching a file a PR touches conflicts with it.
    pub conflict: f64,
}

impl Params {
    /// The day the docs report: 200 PRs over 8 hours, followed to 24 hours.
    pub fn full(seed: u64) -> Self {
        Self {
            seed,
            prs: 200,
            day: 8 * HOUR,
            horizon: 24 * HOUR,
            files: 60,
            hot: 4,
            hot_pick: 0.3,
            ci_min: 10 * MIN,
            ci_max: 30 * MIN,
            flake: 0.05,
            semantic_pairs: 6,
            review_share: 0.15,
            lit_prs: 2,
            conflict: 0.3,
        }
    }
}

/// How PRs get merged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strategy {
    /// Hallmark's merger room, with these `[merge]` settings (`train` is how
    /// many PRs may have merge checks in line at once).
    Hallmark {
        pre_merge_check: bool,
        hot: bool,
        train: u32,
        update: UpdateMode,
    },
    /// Merge as soon as the PR's own CI is green (no freshness).
    WhenGreen,
    /// GitHub's "require branches to be up to date": merge only a PR holding the
    /// tip; a green PR that is behind is updated and its CI run again.
    AlwaysUpdate,
    /// A merge queue testing groups of up to `size` on the tip, bisecting a
    /// failed group.
    Batch { size: usize },
}

impl Strategy {
    pub fn name(self) -> String {
        match self {
            Self::Hallmark {
                pre_merge_check,
                hot,
                train,
                update,
            } => {
                let mut parts = Vec::new();
                if matches!(update, UpdateMode::Conflicts) {
                    parts.push("update = conflicts".to_string());
                }
                parts.push(if pre_merge_check {
                    format!("train {train}")
                } else {
                    "pre-merge check off".to_string()
                });
                if !hot {
                    parts.push("hot files off".to_string());
                }
                let defaults =
                    pre_merge_check && hot && train == 4 && matches!(update, UpdateMode::Files);
                if defaults {
                    "Hallmark merger (defaults: update = files, pre-merge check on, train 4)".into()
                } else {
                    format!("Hallmark merger, {}", parts.join(", "))
                }
            }
            Self::WhenGreen => "merge when green".into(),
            Self::AlwaysUpdate => "always update before merge".into(),
            Self::Batch { size } => format!("batching queue (groups of {size}, bisect)"),
        }
    }
}

/// What one strategy did with the day.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    pub name: String,
    pub merged: usize,
    /// Minutes from ready to merged, over the merged PRs.
    pub median_min: f64,
    pub p90_min: f64,
    /// Every CI run: PR heads (re-runs too), merge checks, batches, the base.
    pub ci_runs: u64,
    /// Minutes the base's latest finished CI run was red.
    pub red_min: u64,
    /// Merges after which the base's tree fails its checks.
    pub broken: u32,
    /// PRs not merged by the horizon.
    pub never: usize,
    /// Room calls made (Hallmark only), and passes whose input was unchanged.
    pub room_calls: u64,
    /// Every merged PR's ready→merged time in seconds, shortest first.
    pub waits: Vec<u64>,
}

impl Report {
    /// The time by which the `k`-th fastest PR of the day had merged (minutes), so
    /// strategies that merged different numbers of PRs compare on the same count;
    /// `None` when fewer than `k` merged.
    pub fn kth_min(&self, k: usize) -> Option<f64> {
        let i = k.checked_sub(1)?;
        self.waits.get(i).map(|&w| w as f64 / 60.0)
    }

    pub fn ci_per_merged(&self) -> f64 {
        if self.merged == 0 {
            return f64::INFINITY;
        }
        self.ci_runs as f64 / self.merged as f64
    }
}

/// The judgement Hallmark's strategy asks for each pass.
pub type Judge<'a> = dyn FnMut(&MergerInput) -> MergerPlan + 'a;

// ---------------------------------------------------------------- randomness

/// SplitMix64: small, fixed, and good enough for a model.
#[derive(Clone)]
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        mix(self.0)
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn between(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi - lo + 1)
    }
}

fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A fixed coin for a pair of things: the same pair always lands the same way.
fn coin(seed: u64, a: u64, b: u64, p: f64) -> bool {
    let h = mix(seed ^ mix(a.wrapping_mul(0x1000_0001) ^ b));
    ((h >> 11) as f64 / (1u64 << 53) as f64) < p
}

// ---------------------------------------------------------------- the day's PRs

/// One PR as it arrives, the same for every strategy.
#[derive(Debug, Clone)]
struct Spec {
    arrive: u64,
    files: Vec<u16>,
    /// When a review comment arrives and how long addressing it takes.
    review: Option<(u64, u64)>,
    /// When a person clears its lit path.
    lit_clear: Option<u64>,
}

/// Everything drawn once from the seed.
#[derive(Debug, Clone)]
pub struct Day {
    p: Params,
    specs: Vec<Spec>,
    /// Hidden semantic pairs (PR indices), touching different files.
    pairs: Vec<(usize, usize)>,
    lit_file: u16,
}

impl Day {
    pub fn new(p: Params) -> Self {
        let mut rng = Rng(p.seed);
        let mut arrivals: Vec<u64> = (0..p.prs).map(|_| rng.below(p.day)).collect();
        arrivals.sort_unstable();
        let lit_file = p.files as u16;
        let mut specs: Vec<Spec> = arrivals
            .into_iter()
            .map(|arrive| {
                let n = rng.between(1, 4) as usize;
                let mut files: Vec<u16> = Vec::new();
                while files.len() < n {
                    let f = if rng.unit() < p.hot_pick {
                        rng.below(p.hot as u64) as u16
                    } else {
                        (p.hot as u64 + rng.below((p.files - p.hot) as u64)) as u16
                    };
                    if !files.contains(&f) {
                        files.push(f);
                    }
                }
                files.sort_unstable();
                let review = (rng.unit() < p.review_share).then(|| {
                    (
                        arrive + rng.between(5 * MIN, 15 * MIN),
                        rng.between(20 * MIN, 60 * MIN),
                    )
                });
                Spec {
                    arrive,
                    files,
                    review,
                    lit_clear: None,
                }
            })
            .collect();
        for _ in 0..p.lit_prs {
            let i = rng.below(p.prs as u64) as usize;
            let s = &mut specs[i];
            if !s.files.contains(&lit_file) {
                s.files.push(lit_file);
            }
            s.lit_clear = Some(s.arrive + rng.between(30 * MIN, 90 * MIN));
        }
        let mut pairs: Vec<(usize, usize)> = Vec::new();
        while pairs.len() < p.semantic_pairs {
            let a = rng.below(p.prs as u64 - 20) as usize;
            let b = a + rng.between(1, 15) as usize;
            let disjoint = !specs[a].files.iter().any(|f| specs[b].files.contains(f));
            let taken = pairs
                .iter()
                .any(|&(x, y)| [x, y].contains(&a) || [x, y].contains(&b));
            if disjoint && !taken {
                pairs.push((a, b));
            }
        }
        Self {
            p,
            specs,
            pairs,
            lit_file,
        }
    }

    fn file_name(&self, f: u16) -> String {
        if f == self.lit_file {
            "deploy/prod.yml".into()
        } else if (f as usize) < self.p.hot {
            format!("src/core/hot{f}.rs")
        } else {
            format!("src/mod{}/file{f}.rs", f % 7)
        }
    }
}

// ---------------------------------------------------------------- trees

/// Which PRs a tree holds (a bit per PR) and which pairs it has fixed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Tree {
    merged: Vec<u64>,
    fixes: u64,
}

impl Tree {
    fn has(&self, pr: usize) -> bool {
        self.merged
            .get(pr / 64)
            .is_some_and(|w| w & (1 << (pr % 64)) != 0)
    }
    fn with(&self, pr: usize, fixes: u64) -> Tree {
        let mut t = self.clone();
        if t.merged.len() <= pr / 64 {
            t.merged.resize(pr / 64 + 1, 0);
        }
        t.merged[pr / 64] |= 1 << (pr % 64);
        t.fixes |= fixes;
        t
    }
    /// A stable name for the tree, as git's object id is for a real one.
    fn id(&self) -> String {
        let words: Vec<String> = self.merged.iter().map(|w| format!("{w:x}")).collect();
        format!("tree-{}-{:x}", words.join("."), self.fixes)
    }
    /// The semantic pairs this tree breaks on.
    fn broken(&self, pairs: &[(usize, usize)]) -> u64 {
        let mut out = 0;
        for (k, &(a, b)) in pairs.iter().enumerate() {
            if self.has(a) && self.has(b) && self.fixes & (1 << k) == 0 {
                out |= 1 << k;
            }
        }
        out
    }
}

// ---------------------------------------------------------------- state

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Busy {
    /// Rebasing onto the tip (a conflict takes a dev run).
    Rebase,
    /// Addressing a review comment.
    Review,
    /// Fixing a semantic conflict its CI met (rebased onto the tip meanwhile).
    Fix,
}

/// One CI run's outcome, fixed when it starts.
#[derive(Debug, Clone, Copy)]
struct Run {
    done: u64,
    red: bool,
    /// Red because the tree fails (not a flake).
    real: bool,
}

#[derive(Debug, Clone)]
struct Pr {
    open: bool,
    merged_at: Option<u64>,
    head: u32,
    /// The base version its branch is on.
    base_v: usize,
    fixes: u64,
    ci: Option<Run>,
    /// Red runs at this head so far.
    reds: u32,
    busy: Option<(u64, Busy)>,
    changes_requested: bool,
    review_done: bool,
    conflicting: bool,
    /// Base commits since `base_v` touching its files (version, the shared files).
    behind: Vec<(usize, Vec<u16>)>,
    /// The latest base version since `base_v` touching none of its files.
    other_behind: Option<usize>,
    /// Merge checks of this head, newest first: the tip version the chain
    /// started from, the PRs merged in ahead (with their heads), the tree, the run.
    merge_checks: Vec<Check>,
    /// Red because the base it sits on is broken: rebase once the base is fixed.
    inherited: bool,
}

#[derive(Debug, Clone)]
struct Check {
    onto: usize,
    ahead: Vec<(usize, u32)>,
    /// `None` when the chain did not merge cleanly.
    tree: Option<Tree>,
    run: Run,
}

struct Sim<'d> {
    d: &'d Day,
    t: u64,
    rng: Rng,
    prs: Vec<Pr>,
    /// Base versions; the last is the tip.
    base: Vec<Tree>,
    /// Files each base version changed.
    base_files: Vec<Vec<u16>>,
    /// The base's CI runs not yet seen finishing: the version each ran on.
    base_runs: Vec<(usize, Run)>,
    /// The latest run of each version (for the tip's state).
    tip_run: Option<(usize, Run)>,
    /// Red base runs finished in a row.
    base_reds: u32,
    last_base_red: bool,
    base_rerun_at: Option<(usize, u64)>,
    base_fix_due: Option<u64>,
    merge_in_flight: Option<(usize, u64)>,
    ci_runs: u64,
    red_secs: u64,
    broken: u32,
    /// Every merge check's tree and run (for `tip_checked`).
    checked: Vec<(Tree, Run)>,
}

impl<'d> Sim<'d> {
    fn new(d: &'d Day, stream: u64) -> Self {
        Self {
            d,
            t: 0,
            rng: Rng(d.p.seed ^ mix(stream)),
            prs: Vec::new(),
            base: vec![Tree::default()],
            base_files: vec![Vec::new()],
            base_runs: Vec::new(),
            tip_run: None,
            base_reds: 0,
            last_base_red: false,
            base_rerun_at: None,
            base_fix_due: None,
            merge_in_flight: None,
            ci_runs: 0,
            red_secs: 0,
            broken: 0,
            checked: Vec::new(),
        }
    }

    fn tip(&self) -> usize {
        self.base.len() - 1
    }

    /// Starts a CI run on `tree`.
    fn run(&mut self, tree: &Tree) -> Run {
        self.ci_runs += 1;
        let done = self.t + self.rng.between(self.d.p.ci_min, self.d.p.ci_max);
        let real = tree.broken(&self.d.pairs) != 0;
        let flake = self.rng.unit() < self.d.p.flake;
        Run {
            done,
            red: real || flake,
            real,
        }
    }

    fn pr_tree(&self, i: usize) -> Tree {
        self.base[self.prs[i].base_v].with(i, self.prs[i].fixes)
    }

    fn new_head(&mut self, i: usize) {
        let tree = self.pr_tree(i);
        let run = self.run(&tree);
        let pr = &mut self.prs[i];
        pr.head += 1;
        pr.ci = Some(run);
        pr.reds = 0;
        pr.merge_checks.clear();
    }

    fn ready(&self, i: usize) -> bool {
        let pr = &self.prs[i];
        pr.open && pr.busy.is_none() && !pr.changes_requested
    }

    fn green(&self, i: usize) -> bool {
        self.prs[i].ci.is_some_and(|r| r.done <= self.t && !r.red)
    }

    fn lit_ok(&self, i: usize) -> bool {
        self.d.specs[i].lit_clear.is_none_or(|at| self.t >= at)
    }

    fn start_busy(&mut self, i: usize, kind: Busy) {
        let t = self.t;
        let took = match kind {
            Busy::Rebase if self.prs[i].conflicting => self.rng.between(15 * MIN, 30 * MIN),
            Busy::Rebase => 2 * MIN,
            Busy::Review => self.d.specs[i].review.map_or(30 * MIN, |r| r.1),
            Busy::Fix => self.rng.between(20 * MIN, 45 * MIN),
        };
        let pr = &mut self.prs[i];
        pr.busy = Some((t + took, kind));
        pr.ci = None;
        pr.merge_checks.clear();
    }

    fn rebase_done(&mut self, i: usize) {
        let tip = self.tip();
        let pr = &mut self.prs[i];
        pr.base_v = tip;
        pr.conflicting = false;
        pr.behind.clear();
        pr.other_behind = None;
        pr.inherited = false;
    }

    /// Adds a base commit: a merged PR (`Some`) or a person's fix.
    fn commit(&mut self, tree: Tree, by: Option<usize>, run_ci: bool) {
        let files = by.map_or_else(Vec::new, |i| self.d.specs[i].files.clone());
        let v = self.base.len();
        self.base.push(tree);
        self.base_files.push(files.clone());
        for x in 0..self.prs.len() {
            if !self.prs[x].open {
                continue;
            }
            let shared: Vec<u16> = self.d.specs[x]
                .files
                .iter()
                .copied()
                .filter(|f| files.contains(f))
                .collect();
            let pr = &mut self.prs[x];
            if shared.is_empty() {
                pr.other_behind = Some(v);
            } else {
                if let Some(y) = by
                    && coin(self.d.p.seed, x as u64, y as u64, self.d.p.conflict)
                {
                    pr.conflicting = true;
                }
                pr.behind.push((v, shared));
            }
        }
        if run_ci {
            self.start_base_ci();
        }
    }

    fn start_base_ci(&mut self) {
        let tip = self.tip();
        let tree = self.base[tip].clone();
        let run = self.run(&tree);
        self.base_runs.push((tip, run));
        self.tip_run = Some((tip, run));
    }

    fn merge(&mut self, i: usize, run_ci: bool) {
        let tree = self.base[self.tip()].with(i, self.prs[i].fixes);
        if tree.broken(&self.d.pairs) & !self.base[self.tip()].broken(&self.d.pairs) != 0 {
            self.broken += 1;
        }
        let pr = &mut self.prs[i];
        pr.open = false;
        pr.merged_at = Some(self.t);
        pr.ci = None;
        self.commit(tree, Some(i), run_ci);
        self.merge_in_flight = Some((i, self.t + MIN));
    }

    /// What happens on its own this pass: arrivals, runs finishing, people.
    fn events(&mut self) {
        let t = self.t;
        while self.prs.len() < self.d.specs.len() && self.d.specs[self.prs.len()].arrive <= t {
            let tip = self.tip();
            self.prs.push(Pr {
                open: true,
                merged_at: None,
                head: 0,
                base_v: tip,
                fixes: 0,
                ci: None,
                reds: 0,
                busy: None,
                changes_requested: false,
                review_done: false,
                conflicting: false,
                behind: Vec::new(),
                other_behind: None,
                merge_checks: Vec::new(),
                inherited: false,
            });
            let i = self.prs.len() - 1;
            self.new_head(i);
        }
        if self.merge_in_flight.is_some_and(|(_, until)| until <= t) {
            self.merge_in_flight = None;
        }
        // The base's CI, for every strategy alike: a red run on the tip is
        // re-run after five minutes; two reds in a row on a broken tree, and a
        // person lands a fix half an hour to an hour later.
        let mut finished: Vec<(usize, Run)> = self
            .base_runs
            .iter()
            .copied()
            .filter(|(_, r)| r.done <= t)
            .collect();
        self.base_runs.retain(|(_, r)| r.done > t);
        finished.sort_by_key(|(_, r)| r.done);
        for (v, run) in finished {
            self.last_base_red = run.red;
            if !run.red {
                self.base_reds = 0;
                continue;
            }
            self.base_reds += 1;
            let tip_broken = self.base[self.tip()].broken(&self.d.pairs) != 0;
            if self.base_reds >= 2 && tip_broken {
                if self.base_fix_due.is_none() {
                    self.base_fix_due = Some(t + self.rng.between(30 * MIN, 60 * MIN));
                }
            } else if v == self.tip() {
                self.base_rerun_at = Some((v, t + 5 * MIN));
            }
        }
        if let Some((v, at)) = self.base_rerun_at
            && at <= t
        {
            self.base_rerun_at = None;
            if v == self.tip() {
                let tree = self.base[v].clone();
                let rerun = self.run(&tree);
                self.base_runs.push((v, rerun));
                self.tip_run = Some((v, rerun));
            }
        }
        if self.base_fix_due.is_some_and(|at| at <= t) {
            self.base_fix_due = None;
            let tip = self.base[self.tip()].clone();
            let broken = tip.broken(&self.d.pairs);
            let fixed = Tree {
                fixes: tip.fixes | broken,
                ..tip
            };
            self.commit(fixed, None, true);
        }
        for i in 0..self.prs.len() {
            if !self.prs[i].open {
                continue;
            }
            if let Some((at, kind)) = self.prs[i].busy
                && at <= t
            {
                self.prs[i].busy = None;
                match kind {
                    Busy::Rebase => self.rebase_done(i),
                    Busy::Review => {
                        self.prs[i].changes_requested = false;
                    }
                    Busy::Fix => {
                        self.rebase_done(i);
                        let broken = self.base[self.prs[i].base_v]
                            .with(i, self.prs[i].fixes)
                            .broken(&self.d.pairs);
                        self.prs[i].fixes |= broken & self.pairs_of(i);
                    }
                }
                self.new_head(i);
            }
            if let Some((at, _)) = self.d.specs[i].review
                && at <= t
                && !self.prs[i].review_done
            {
                self.prs[i].review_done = true;
                self.prs[i].changes_requested = true;
            }
            if self.prs[i].changes_requested && self.prs[i].busy.is_none() {
                self.start_busy(i, Busy::Review);
            }
            // Red CI at the head, the same for every strategy: re-run the failed
            // jobs once; red again and real, fix it (the PR's own pair) or wait
            // for the base to be fixed and rebase (an inherited failure).
            if let Some(run) = self.prs[i].ci
                && run.done <= t
                && run.red
                && self.prs[i].busy.is_none()
            {
                self.prs[i].reds += 1;
                let own = self.pr_tree(i).broken(&self.d.pairs) & self.pairs_of(i) != 0;
                if self.prs[i].reds >= 2 && run.real {
                    if own {
                        self.start_busy(i, Busy::Fix);
                    } else {
                        self.prs[i].inherited = true;
                        self.prs[i].ci = None;
                    }
                } else {
                    let tree = self.pr_tree(i);
                    let rerun = self.run(&tree);
                    self.prs[i].ci = Some(rerun);
                }
            }
            if self.prs[i].inherited
                && self.prs[i].busy.is_none()
                && self.base[self.tip()].broken(&self.d.pairs) == 0
            {
                self.start_busy(i, Busy::Rebase);
            }
        }
    }

    fn pairs_of(&self, i: usize) -> u64 {
        let mut out = 0;
        for (k, &(a, b)) in self.d.pairs.iter().enumerate() {
            if a == i || b == i {
                out |= 1 << k;
            }
        }
        out
    }

    fn report(&self, strategy: Strategy, room_calls: u64) -> Report {
        let mut waits: Vec<u64> = self
            .prs
            .iter()
            .enumerate()
            .filter_map(|(i, p)| p.merged_at.map(|m| m - self.d.specs[i].arrive))
            .collect();
        waits.sort_unstable();
        let pct = |q: f64| {
            if waits.is_empty() {
                return f64::NAN;
            }
            let k = ((waits.len() as f64 - 1.0) * q).round() as usize;
            waits[k] as f64 / 60.0
        };
        Report {
            name: strategy.name(),
            merged: waits.len(),
            median_min: pct(0.5),
            p90_min: pct(0.9),
            ci_runs: self.ci_runs,
            red_min: self.red_secs / 60,
            broken: self.broken,
            never: self.d.specs.len() - waits.len(),
            room_calls,
            waits,
        }
    }
}
