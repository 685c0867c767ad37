//! The simulated day at a fixed seed, smaller than the one in
//! docs/performance.md so it runs in seconds in a debug build: the merger room's
//! goals against the other strategies, through the real built-in room.

#[path = "../examples/merge_day/model.rs"]
#[allow(dead_code)]
mod model;

use std::sync::LazyLock;

use hallmark::rooms::types::UpdateMode;
use hallmark::rooms::{Rooms, World};
use model::{Day, Params, Report, Strategy};

const HALLMARK: Strategy = Strategy::Hallmark {
    pre_merge_check: true,
    hot: true,
    train: 4,
    update: UpdateMode::Files,
};
/// The merge checks one at a time, on the tip as it is (`train = 1`).
const HALLMARK_TRAIN_1: Strategy = Strategy::Hallmark {
    pre_merge_check: true,
    hot: true,
    train: 1,
    update: UpdateMode::Files,
};
const HALLMARK_CONFLICTS: Strategy = Strategy::Hallmark {
    pre_merge_check: true,
    hot: true,
    train: 4,
    update: UpdateMode::Conflicts,
};
const HALLMARK_0_3: Strategy = Strategy::Hallmark {
    pre_merge_check: false,
    hot: false,
    train: 4,
    update: UpdateMode::Files,
};

/// 60 PRs over the working day, seed 1: enough load that the strategies differ,
/// with hidden semantic pairs that do reach a base merged without checks.
fn day() -> Day {
    let mut p = Params::full(1);
    p.prs = 60;
    Day::new(p)
}

static REPORTS: LazyLock<Vec<Report>> = LazyLock::new(|| {
    let rooms = Rooms::without_cache().expect("engine");
    let room = rooms.builtin(World::Merger).expect("built-in merger");
    model::run_all(
        &day(),
        &[
            HALLMARK,
            HALLMARK_TRAIN_1,
            HALLMARK_CONFLICTS,
            HALLMARK_0_3,
            Strategy::WhenGreen,
            Strategy::AlwaysUpdate,
            Strategy::Batch { size: 5 },
        ],
        &room,
    )
    .expect("the room answers every pass")
});

fn report(s: Strategy) -> &'static Report {
    let name = s.name();
    REPORTS
        .iter()
        .find(|r| r.name == name)
        .expect("strategy was run")
}

#[test]
fn the_merger_puts_no_broken_merge_on_the_base_and_the_fewest_of_all() {
    let hallmark = report(HALLMARK);
    assert_eq!(hallmark.broken, 0, "{hallmark:?}");
    for r in REPORTS.iter() {
        assert!(hallmark.broken <= r.broken, "{hallmark:?} vs {r:?}");
    }
    // The day does hold merges that break the base when nothing checks the
    // merged result, so the zero above is earned, not empty.
    assert!(report(Strategy::WhenGreen).broken > 0, "{REPORTS:?}");
    assert!(report(HALLMARK_0_3).broken > 0, "{REPORTS:?}");
    assert!(
        hallmark.merged > 0 && hallmark.room_calls > 0,
        "{hallmark:?}"
    );
}

#[test]
fn the_merger_uses_at_most_half_the_ci_runs_of_always_update() {
    let hallmark = report(HALLMARK).ci_per_merged();
    let always = report(Strategy::AlwaysUpdate).ci_per_merged();
    assert!(
        hallmark <= always / 2.0,
        "CI runs per merged PR: merger {hallmark:.2}, always update {always:.2}"
    );
}

/// Merge checks in a train (several at once, each on the tip with the PRs
/// ahead merged in) against one at a time on the tip as it is.
#[test]
fn the_train_beats_one_merge_check_at_a_time() {
    let train = report(HALLMARK);
    let one = report(HALLMARK_TRAIN_1);
    assert!(
        train.merged >= one.merged && train.p90_min < one.p90_min,
        "train of 4 {train:?}\ntrain of 1 {one:?}"
    );
}

/// The third goal under `update = "conflicts"`, where the merge check stands in
/// for freshness: over ten seeds of the 60-PR day, the merger's mean p90 is no
/// worse than the batching queue's (one seed alone is too chaotic to judge by:
/// at seed 1 batching is far ahead, at others far behind). Every PR merges in
/// both, so the p90s are over the same count.
#[test]
fn with_update_conflicts_the_merger_mean_p90_is_no_worse_than_batching() {
    let rooms = Rooms::without_cache().expect("engine");
    let room = rooms.builtin(World::Merger).expect("built-in merger");
    let strategies = [HALLMARK_CONFLICTS, Strategy::Batch { size: 5 }];
    let mut sums = [0.0f64; 2];
    for seed in 1..=10 {
        let mut p = Params::full(seed);
        p.prs = 60;
        let reports = model::run_all(&Day::new(p), &strategies, &room).expect("runs");
        for (sum, r) in sums.iter_mut().zip(&reports) {
            assert_eq!(r.never, 0, "seed {seed}: {r:?}");
            *sum += r.p90_min;
        }
    }
    let [merger, batch] = sums.map(|s| s / 10.0);
    assert!(
        merger <= batch,
        "mean p90 over seeds 1-10: merger {merger:.0} min, batching {batch:.0} min"
    );
}

/// The third goal under the defaults, not met: file claims keep PRs on a hot
/// file in one line, each rebased after the one ahead of it merged, so under
/// this load the merger's slowest PRs wait longer than a batching queue's. See
/// the numbers in docs/performance.md.
#[test]
#[ignore = "goal not met under the defaults (update = files): the merger's p90 is worse than the batching queue's"]
fn the_merger_p90_is_no_worse_than_the_batching_queue() {
    let hallmark = report(HALLMARK);
    let batch = report(Strategy::Batch { size: 5 });
    assert!(
        hallmark.never <= batch.never && hallmark.p90_min <= batch.p90_min,
        "merger {hallmark:?}\nbatching {batch:?}"
    );
}

#[test]
fn the_day_is_the_same_for_the_same_seed() {
    let rooms = Rooms::without_cache().expect("engine");
    let room = rooms.builtin(World::Merger).expect("built-in merger");
    let strategies = [HALLMARK, Strategy::Batch { size: 5 }];
    let again = model::run_all(&day(), &strategies, &room).expect("runs");
    assert_eq!(&again[0], report(HALLMARK));
    assert_eq!(&again[1], report(Strategy::Batch { size: 5 }));
    let mut other = Params::full(2);
    other.prs = 60;
    let different = model::run_all(&Day::new(other), &strategies[1..], &room).expect("runs");
    assert_ne!(different[0], again[1], "the seed changes the day");
}
