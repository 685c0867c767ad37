//! The intake plan world: may the Front Desk split a request into the parts the
//! intake model proposes?

wit_bindgen::generate!({
    path: "../../wit",
    world: "plan-room",
    pub_export_macro: true,
    export_macro_name: "__export_plan_room",
    default_bindings_module: "hall_room_sdk::plan",
});

pub use self::exports::hall::rooms::plan::{
    Failure, Guest as PlanRoom, Part, PlanInput, PlanJudgement,
};

/// The names the built-in rules read: `rules/plan.rs` names its types only
/// through this module, so it compiles natively too, against hall's plain types.
mod model {
    pub use super::exports::hall::rooms::plan::{Part, PlanInput, PlanJudgement};
}

#[path = "rules/plan.rs"]
mod rules;

pub use rules::{REASONS, judge as standard_judge, judge_with as standard_judge_with, overlap};
