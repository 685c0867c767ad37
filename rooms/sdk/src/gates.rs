//! The gate-detection world: propose the commands that gate a change.

wit_bindgen::generate!({
    path: "../../wit",
    world: "gates-room",
    pub_export_macro: true,
    export_macro_name: "__export_gates_room",
    default_bindings_module: "hall_room_sdk::gates",
});

pub use self::exports::hall::rooms::gates::{
    Failure, Gate, GateReport, GatesInput, Guest as GatesRoom, Manifest,
};

/// The names the built-in rules read; `model` lets the same rules file compile
/// against the host's plain Rust types too.
mod model {
    pub use super::exports::hall::rooms::gates::{Failure, Gate, GateReport, GatesInput};
}

#[path = "rules/gates.rs"]
mod rules;

pub use rules::detect as standard_detect;
