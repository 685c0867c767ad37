//! Hallmark's built-in verdict-validation room: the SDK's standard rules, exported.

use hall_room_sdk::verdict::{CheckedVerdict, Failure, VerdictRoom, standard_validate};

struct Builtin;

impl VerdictRoom for Builtin {
    fn validate(verdict_json: String) -> Result<CheckedVerdict, Failure> {
        standard_validate(&verdict_json)
    }
}

hall_room_sdk::export_verdict!(Builtin);
