//! The end-to-end tests, in one test binary: each file beside this one is a module
//! here, so cargo links the suite once instead of once per file (`autotests = false` in
//! tests/Cargo.toml). Run one file's tests with `cargo test -p hallmark-tests --test e2e
//! <file>::`, or one test by a part of its name.

#![allow(clippy::unwrap_used)] // a panic is how a test fails

mod common;

mod app;
mod briefing;
mod budgets;
mod checks_env;
mod claude;
mod confined;
mod contract;
mod daemon;
mod delivery;
mod detect;
mod follow_up;
mod front_desk;
mod gazette;
mod hooks;
mod index_heal;
mod journal;
mod librarian;
mod library;
mod lifecycle;
mod loop_confined;
mod merger;
mod newcomer;
mod notify;
mod person;
mod record;
mod redteam;
mod replies;
mod review_loop;
mod rooms;
mod rules;
mod run;
mod statusline;
mod tool_policy;
mod verify;
mod web;
mod web_browser;

/// Every test file is compiled: with `autotests = false`, a file that isn't a module
/// here (or of its folder's `mod.rs`) would silently never run.
#[test]
fn every_test_file_is_a_module_of_the_suite() {
    fn declared(root: &std::path::Path, dir: &std::path::Path, missing: &mut Vec<String>) {
        let text = std::fs::read_to_string(root).unwrap();
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = if path.is_dir() {
                if !path.join("mod.rs").is_file() {
                    continue; // snapshots and other data
                }
                declared(&path.join("mod.rs"), &path, missing);
                path.file_name().unwrap().to_string_lossy().into_owned()
            } else if path.extension().is_some_and(|e| e == "rs") && path != root {
                path.file_stem().unwrap().to_string_lossy().into_owned()
            } else {
                continue;
            };
            if !text.lines().any(|l| l == format!("mod {name};")) {
                missing.push(path.display().to_string());
            }
        }
    }
    let here = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut missing = Vec::new();
    declared(&here.join("e2e.rs"), &here, &mut missing);
    assert!(
        missing.is_empty(),
        "not in the suite, so never run: {missing:?}; declare each with `mod <name>;` in \
         tests/tests/e2e.rs or its folder's mod.rs"
    );
}
