//! The verdict-validation world: check a reviewer's verdict and decide approval.

wit_bindgen::generate!({
    path: "../../wit",
    world: "verdict-room",
    pub_export_macro: true,
    export_macro_name: "__export_verdict_room",
    default_bindings_module: "hall_room_sdk::verdict",
});

pub use self::exports::hall::rooms::verdict::{
    CheckedVerdict, Failure, Finding, Guest as VerdictRoom, Lens, Severity,
};

/// The names the built-in rules read; see `gates::model`.
mod model {
    pub use super::exports::hall::rooms::verdict::{
        CheckedVerdict, Failure, Finding, Lens, Severity,
    };
}

#[path = "rules/verdict.rs"]
mod rules;

pub use rules::validate as standard_validate;
