//! Stamps the `hall` binary with the commit it was built from and its target, for
//! `hall --version --json`.
//!
//! This is the one build script that watches git: a commit reruns it and recompiles the
//! small `hallmark` package it belongs to, never the library beneath it.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let repo = match env::var_os("HALL_REPO_ROOT") {
        Some(root) => PathBuf::from(root),
        None => {
            let manifest = PathBuf::from(
                env::var_os("CARGO_MANIFEST_DIR")
                    .expect("cargo always sets CARGO_MANIFEST_DIR for build scripts"),
            );
            // host/hall → the repository.
            manifest
                .ancestors()
                .nth(2)
                .map_or(manifest.clone(), Path::to_path_buf)
        }
    };
    println!("cargo:rerun-if-env-changed=HALL_REPO_ROOT");
    stamp_build(&repo);
}

/// Announces `HALL_BUILD_COMMIT` (the commit built: `HALL_BUILD_COMMIT` from the
/// environment for builds without git, else `git rev-parse HEAD`, else `unknown`) and
/// `HALL_BUILD_TARGET`, for `hall --version --json`. A new commit reruns this script:
/// the files git moves on a commit are watched.
fn stamp_build(repo: &Path) {
    println!("cargo:rerun-if-env-changed=HALL_BUILD_COMMIT");
    println!(
        "cargo:rustc-env=HALL_BUILD_TARGET={}",
        env::var("TARGET").unwrap_or_default()
    );
    let git = |args: &[&str]| -> Option<String> {
        let out = Command::new("git")
            .args(args)
            .current_dir(repo)
            .output()
            .ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
            .filter(|s| !s.is_empty())
    };
    let commit = match env::var("HALL_BUILD_COMMIT") {
        Ok(c) if !c.trim().is_empty() => c.trim().to_string(),
        _ => {
            // Only this repository's own git: a source tree unpacked inside another
            // repository must not take that one's commit.
            let own = git(&["rev-parse", "--show-toplevel"])
                .and_then(|t| std::fs::canonicalize(t).ok())
                .zip(std::fs::canonicalize(repo).ok())
                .is_some_and(|(top, repo)| top == repo);
            let head = if own {
                git(&["rev-parse", "HEAD"])
            } else {
                None
            };
            if head.is_some() {
                let mut watched = vec!["HEAD".to_string(), "packed-refs".to_string()];
                if let Some(r) = git(&["symbolic-ref", "-q", "HEAD"]) {
                    watched.push(r);
                }
                for w in watched {
                    if let Some(p) = git(&["rev-parse", "--path-format=absolute", "--git-path", &w])
                        && Path::new(&p).exists()
                    {
                        println!("cargo:rerun-if-changed={p}");
                    }
                }
            }
            head.unwrap_or_else(|| "unknown".to_string())
        }
    };
    println!("cargo:rustc-env=HALL_BUILD_COMMIT={commit}");
}
