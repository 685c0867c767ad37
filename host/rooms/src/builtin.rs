//! The built-in rooms, compiled from `rooms/*` by `build.rs` and embedded, so a
//! fresh `hall` works with no files beside it.

use super::World;

/// The embedded `.wasm` of the built-in room for `world`, if there is one.
pub(crate) fn bytes(world: World) -> Option<&'static [u8]> {
    match world {
        World::Checks => Some(include_bytes!(env!("HALL_ROOM_CHECKS_WASM"))),
        World::Verdict => Some(include_bytes!(env!("HALL_ROOM_VERDICT_WASM"))),
        World::Merger => Some(include_bytes!(env!("HALL_ROOM_MERGER_WASM"))),
        World::Condense => Some(include_bytes!(env!("HALL_ROOM_CONDENSE_WASM"))),
        World::Plan => Some(include_bytes!(env!("HALL_ROOM_PLAN_WASM"))),
        World::ToolPolicy => Some(include_bytes!(env!("HALL_ROOM_TOOL_POLICY_WASM"))),
    }
}

/// The sha256 of [`bytes`], computed by `build.rs`.
pub(crate) fn sha256(world: World) -> Option<&'static str> {
    match world {
        World::Checks => Some(env!("HALL_ROOM_CHECKS_SHA256")),
        World::Verdict => Some(env!("HALL_ROOM_VERDICT_SHA256")),
        World::Merger => Some(env!("HALL_ROOM_MERGER_SHA256")),
        World::Condense => Some(env!("HALL_ROOM_CONDENSE_SHA256")),
        World::Plan => Some(env!("HALL_ROOM_PLAN_SHA256")),
        World::ToolPolicy => Some(env!("HALL_ROOM_TOOL_POLICY_SHA256")),
    }
}
