//! Hallmark: an agent-first development loop for any git repository.
//!
//! The binary `hall` is a thin shell over this library, which is built in layers. Each
//! layer uses only the ones below it, and nothing starts a subprocess outside its
//! adapter (`layers.rs`, a test, keeps it so):
//!
//! ```text
//! hooks app web             Claude Code's hooks; the terminal app; the web app
//! commands                  one file per verb: parse, call the service, render the reply
//! daemon                    the scheduler that runs the loop for every registered repo
//! office                    the loop's workers: checks, review, fix, ship, resume, watchman
//! hall, error               the service layer: an initialized repository (`Hall`), the one
//!                           transition path, the rules in effect, hallmarks, confinement
//! journal index library     adapters: every file format, database and subprocess,
//! git gh claude rooms sign  each with its own typed errors (`sandbox`: the operating
//! sandbox template gazette  system's sandbox for the item's code the loop runs)
//! channels
//! config                    `.hallmark.toml`: every key, its default, strict parsing
//! item gate clock cli       the pure core (`hallmark-core`, `hallmark-gate`) and leaves
//! platform pricing
//! ```
//!
//! `item`, `journal`, `gate` and `rooms` are crates of their own below this one
//! (`hallmark-core`, `hallmark-gate`, `hallmark-rooms`), re-exported under those names.

#![cfg_attr(test, allow(clippy::unwrap_used))]

pub use hallmark_core::item;
pub use hallmark_core::journal;

pub mod app;
pub mod channels;
pub mod claude;
pub mod cli;
pub mod clock;
pub mod commands;
pub mod config;
pub mod daemon;
pub mod error;
pub use hallmark_gate as gate;
pub mod gazette;
pub mod gh;
pub mod git;
pub mod hall;
pub mod hooks;
pub mod index;
#[cfg(test)]
mod layers;
pub mod library;
pub mod office;
pub mod platform;
pub mod pricing;
pub mod record;
pub use hallmark_rooms as rooms;
pub mod sandbox;
pub mod sign;
pub mod template;
pub mod version;
pub mod web;
