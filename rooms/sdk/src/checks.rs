//! The check-detection world: propose the repository's own commands that must
//! pass before a change is reviewed.

wit_bindgen::generate!({
    path: "../../wit",
    world: "checks-room",
    pub_export_macro: true,
    export_macro_name: "__export_checks_room",
    default_bindings_module: "hall_room_sdk::checks",
});

pub use self::exports::hall::rooms::checks::{
    Check, ChecksInput, Detection, Failure, Guest as ChecksRoom, LeftOut, Manifest,
};

/// The names the built-in rules read; `model` lets the same rules file compile
/// against the host's plain Rust types too.
mod model {
    pub use super::exports::hall::rooms::checks::{
        Check, ChecksInput, Detection, Failure, LeftOut,
    };
}

#[path = "rules/checks.rs"]
mod rules;

#[path = "rules/checks_sources.rs"]
mod sources;

pub use rules::detect as standard_detect;
