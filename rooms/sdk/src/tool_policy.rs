//! The tool-policy world: is the agent going in circles? Asked before every
//! tool call, with the call, the item and a window of recent calls; and once per
//! set of settings for its guard, the conditions under which it may object.

wit_bindgen::generate!({
    path: "../../wit",
    world: "tool-policy-room",
    pub_export_macro: true,
    export_macro_name: "__export_tool_policy_room",
    default_bindings_module: "hall_room_sdk::tool_policy",
});

pub use self::exports::hall::rooms::tool_policy::{
    Action, Command, CommandKind, DetectorSetting, FailingCheck, Failure, Guest as ToolPolicyRoom,
    ItemFacts, Mode, Outcome, PastCall, PolicyInput, PolicyVerdict, Recurrence, ToolCall, Trigger,
};

/// The names the built-in rules read: `rules/tool_policy.rs` names its types
/// only through this module, so it compiles natively too, against hall's plain
/// types.
mod model {
    pub use super::exports::hall::rooms::tool_policy::*;
}

#[path = "rules/tool_policy.rs"]
mod rules;

pub use rules::{DEFAULTS, decide as standard_decide, guard as standard_guard};
