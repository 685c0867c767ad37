//! Hallmark's built-in tool-policy room: the SDK's standard detectors, exported.

use hall_room_sdk::tool_policy::{
    Failure, PolicyInput, PolicyVerdict, ToolPolicyRoom, standard_decide,
};

struct Builtin;

impl ToolPolicyRoom for Builtin {
    fn decide(input: PolicyInput) -> Result<PolicyVerdict, Failure> {
        Ok(standard_decide(&input))
    }
}

hall_room_sdk::export_tool_policy!(Builtin);
