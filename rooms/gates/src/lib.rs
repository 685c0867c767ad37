//! Hallmark's built-in gate-detection room: the SDK's standard rules, exported.

use hall_room_sdk::gates::{Failure, GateReport, GatesInput, GatesRoom, standard_detect};

struct Builtin;

impl GatesRoom for Builtin {
    fn detect(input: GatesInput) -> Result<GateReport, Failure> {
        standard_detect(&input)
    }
}

hall_room_sdk::export_gates!(Builtin);
