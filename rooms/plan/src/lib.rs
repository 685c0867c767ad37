//! Hallmark's built-in intake plan room: the SDK's standard rules, exported.

use hall_room_sdk::plan::{Failure, PlanInput, PlanJudgement, PlanRoom, standard_judge};

struct Builtin;

impl PlanRoom for Builtin {
    fn judge(input: PlanInput) -> Result<PlanJudgement, Failure> {
        Ok(standard_judge(&input))
    }
}

hall_room_sdk::export_plan!(Builtin);
