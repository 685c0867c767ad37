//! Hallmark's built-in tool-policy room: the SDK's standard detectors and their
//! guard, exported.

use hall_room_sdk::tool_policy::{
    DetectorSetting, Failure, PolicyInput, PolicyVerdict, ToolPolicyRoom, Trigger, standard_decide,
    standard_guard,
};

struct Builtin;

impl ToolPolicyRoom for Builtin {
    fn decide(input: PolicyInput) -> Result<PolicyVerdict, Failure> {
        Ok(standard_decide(&input))
    }

    fn guard(settings: Vec<DetectorSetting>) -> Result<Vec<Trigger>, Failure> {
        Ok(standard_guard(&settings))
    }
}

hall_room_sdk::export_tool_policy!(Builtin);
