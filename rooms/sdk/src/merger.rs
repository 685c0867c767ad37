//! The merger world: decide what happens next to each shipped pull request.

wit_bindgen::generate!({
    path: "../../wit",
    world: "merger-room",
    pub_export_macro: true,
    export_macro_name: "__export_merger_room",
    default_bindings_module: "hall_room_sdk::merger",
});

pub use self::exports::hall::rooms::merger::{
    Action, BaseCommit, BasePlan, BaseQueue, CheckFact, CiState, Decision, Failure,
    Guest as MergerRoom, HotSettings, MergeCheck, MergeSettings, MergeableState, MergerInput,
    MergerPlan, PathCount, PrFacts, PrHead, UpdateMode,
};

/// The names the built-in rules read; see `gates::model`.
mod model {
    pub use super::exports::hall::rooms::merger::{
        Action, BasePlan, BaseQueue, CheckFact, CiState, Decision, Failure, MergeCheck,
        MergeSettings, MergeableState, MergerInput, MergerPlan, PathCount, PrFacts, UpdateMode,
    };
}

#[path = "rules/merger.rs"]
mod rules;

pub use rules::{
    dependencies as body_dependencies, judge as standard_judge, judge_with as standard_judge_with,
    lit_match,
};
