//! The condensing world: turn command output into what an agent should read.
//!
//! No built-in rules yet; the built-in room arrives with its own issue.

wit_bindgen::generate!({
    path: "../../wit",
    world: "condense-room",
    pub_export_macro: true,
    export_macro_name: "__export_condense_room",
    default_bindings_module: "hall_room_sdk::condense",
});

pub use self::exports::hall::rooms::condense::{
    CondenseInput, CondenseStats, Condensed, Failure, Guest as CondenseRoom,
};
