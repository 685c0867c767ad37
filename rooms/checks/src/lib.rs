//! Hallmark's built-in check-detection room: the SDK's standard rules, exported.

use hall_room_sdk::checks::{ChecksInput, ChecksRoom, Detection, Failure, standard_detect};

struct Builtin;

impl ChecksRoom for Builtin {
    fn detect(input: ChecksInput) -> Result<Detection, Failure> {
        standard_detect(&input)
    }
}

hall_room_sdk::export_checks!(Builtin);
