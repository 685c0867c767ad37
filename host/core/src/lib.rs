//! Hallmark's core, shared by the `hall` binary, the end-to-end tests and the room SDK.
//!
//! [`item`] is pure: ids, events, states, the fold and the transition check, with no
//! file, process or clock below it. [`journal`] (the default `journal` feature) is the
//! journal's files: whole-line appends under a lock, the torn-line rule, the directory
//! layout and the one locked step every state change takes. Both are kept out of the
//! `hallmark` crate so that what only needs them (tests, room components) does not link
//! wasmtime, tokio or SQLite. [`platform`] holds the few platform differences that the
//! crates below the host need (the rooms runtime's), re-exported by the host's own.

#![cfg_attr(test, allow(clippy::unwrap_used))]

pub mod item;
#[cfg(feature = "journal")]
pub mod journal;
pub mod platform;
