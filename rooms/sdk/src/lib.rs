//! The SDK for Hallmark rooms.
//!
//! A room is a WebAssembly component that `hall` runs in a sandbox to make one
//! policy decision. This crate carries the generated bindings for every world in
//! the `hall:rooms` WIT package (so authors never run a binding generator), the
//! types re-exported under short names, one export macro per world, and the
//! rules of Hallmark's built-in rooms, so a custom room can adjust the standard
//! answer instead of rewriting it.
//!
//! A merger room that holds every PR touching `migrations/` for a person:
//!
//! ```ignore
//! use hall_room_sdk::merger::*;
//!
//! struct Careful;
//!
//! impl MergerRoom for Careful {
//!     fn judge(input: MergerInput) -> Result<MergerPlan, Failure> {
//!         let mut plan = standard_judge(&input)?;
//!         // ... change `plan` ...
//!         Ok(plan)
//!     }
//! }
//!
//! hall_room_sdk::export_merger!(Careful);
//! ```
//!
//! Panics are fine to leave in: the default panic hook writes the message to
//! stderr, which `hall` captures and shows when the room fails.
//!
//! A room is a function of its input: `hall` gives it a wall clock that never
//! moves, a monotonic clock that moves only when it sleeps (and every sleep is
//! over at once), randomness from a fixed pattern, and no files, sockets or
//! environment. `docs/rooms.md` lists every limit.

pub mod checks;
pub mod condense;
pub mod merger;
pub mod plan;
pub mod tool_policy;
pub mod verdict;

/// Exports a type implementing [`checks::ChecksRoom`] as this component's checks room.
#[macro_export]
macro_rules! export_checks {
    ($room:ident) => {
        // The generated glue declares exported symbols, which is unsafe code by
        // nature; it is wit-bindgen's, not the author's.
        #[allow(unsafe_code)]
        const _: () = {
            $crate::checks::__export_checks_room!($room);
        };
    };
}

/// Exports a type implementing [`verdict::VerdictRoom`] as this component's verdict room.
#[macro_export]
macro_rules! export_verdict {
    ($room:ident) => {
        #[allow(unsafe_code)]
        const _: () = {
            $crate::verdict::__export_verdict_room!($room);
        };
    };
}

/// Exports a type implementing [`merger::MergerRoom`] as this component's merger room.
#[macro_export]
macro_rules! export_merger {
    ($room:ident) => {
        #[allow(unsafe_code)]
        const _: () = {
            $crate::merger::__export_merger_room!($room);
        };
    };
}

/// Exports a type implementing [`condense::CondenseRoom`] as this component's condense room.
#[macro_export]
macro_rules! export_condense {
    ($room:ident) => {
        #[allow(unsafe_code)]
        const _: () = {
            $crate::condense::__export_condense_room!($room);
        };
    };
}

/// Exports a type implementing [`plan::PlanRoom`] as this component's plan room.
#[macro_export]
macro_rules! export_plan {
    ($room:ident) => {
        #[allow(unsafe_code)]
        const _: () = {
            $crate::plan::__export_plan_room!($room);
        };
    };
}

/// Exports a type implementing [`tool_policy::ToolPolicyRoom`] as this
/// component's tool-policy room.
#[macro_export]
macro_rules! export_tool_policy {
    ($room:ident) => {
        #[allow(unsafe_code)]
        const _: () = {
            $crate::tool_policy::__export_tool_policy_room!($room);
        };
    };
}
