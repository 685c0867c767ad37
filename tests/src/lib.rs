//! Test support for Hallmark's end-to-end tests: a sealed sandbox that drives the real
//! `hall` binary on real git repositories, test doubles for what can't run here (`gh`),
//! and the scripted Messages API stub for the real Claude Code CLI.

pub mod claude_stub;
pub mod github;
pub mod http;
pub mod redteam;
pub mod sandbox;
pub mod snapshot;
pub mod web;
