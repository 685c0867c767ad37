//! Hallmark: an agent-first development loop for any git repository.
//!
//! The binary `hall` is a thin shell over this library: [`item`] is the pure core (ids,
//! events, the fold and the transition check), [`journal`] and [`index`] own the files,
//! and [`commands`] runs each verb.

#![cfg_attr(test, allow(clippy::unwrap_used))]

pub mod cli;
pub mod clock;
pub mod commands;
pub mod committed;
pub mod config;
pub mod confine;
pub mod daemon;
pub mod error;
pub mod gate;
pub mod git;
pub mod hallmark;
pub mod hooks;
pub mod index;
pub mod item;
pub mod journal;
pub mod office;
pub mod platform;
pub mod policy;
pub mod pricing;
pub mod rooms;
pub mod sign;
pub mod template;
