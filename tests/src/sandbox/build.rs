//! Building what the tests run: the real `hall` (never a stale one), the test doubles
//! of this package and the room components host/rooms/build.rs compiled.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// Whether building `hall` shows cargo's progress (the demo: a first build takes minutes,
/// and a newcomer should see it move). Tests build it quietly.
static LOUD_BUILD: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Makes [`hall_bin`] and [`test_double`] say what they build and show cargo's progress.
pub fn build_loudly() {
    LOUD_BUILD.store(true, std::sync::atomic::Ordering::Relaxed);
}

fn cargo_build(package: &str, bin: &str, release: bool) {
    let loud = LOUD_BUILD.load(std::sync::atomic::Ordering::Relaxed);
    let mut build = Command::new(env!("CARGO"));
    build.arg("build");
    if loud {
        eprintln!(
            "(building `{bin}` with cargo; the first build on a new machine takes several minutes)"
        );
    } else {
        build.arg("--quiet");
    }
    build
        .args(["-p", package, "--bin", bin])
        .current_dir(env!("CARGO_MANIFEST_DIR"));
    if release {
        build.arg("--release");
    }
    let status = build.status().expect("cargo runs");
    assert!(status.success(), "building {bin} failed");
}

/// The `hall` binary, built once per test process.
pub fn hall_bin() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        if let Some(p) = std::env::var_os("HALL_BIN") {
            return PathBuf::from(p);
        }
        // Build it: the tests live in another package, so cargo does not build `hall`
        // for them by itself, and a stale binary would test old code.
        let exe = std::env::current_exe().expect("test exe path");
        // target/<profile>/deps/<test> or target/<profile>/<bin> → target/<profile>/hall
        let mut dir = exe.parent().expect("exe dir").to_path_buf();
        if dir.file_name().is_some_and(|n| n == "deps") {
            dir.pop();
        }
        cargo_build(
            "hallmark",
            "hall",
            dir.file_name().is_some_and(|n| n == "release"),
        );
        let bin = dir.join(format!("hall{}", std::env::consts::EXE_SUFFIX));
        assert!(bin.is_file(), "no hall binary at {}", bin.display());
        bin
    })
}

/// One of this package's test doubles (`fake-claude`, `fake-tool`…), built for callers
/// that cargo didn't build it for (the demo).
pub fn test_double(name: &str) -> PathBuf {
    let dir = hall_bin().parent().expect("profile dir").to_path_buf();
    cargo_build(
        "hallmark-tests",
        name,
        dir.file_name().is_some_and(|n| n == "release"),
    );
    dir.join(format!("{name}{}", std::env::consts::EXE_SUFFIX))
}

/// A component built by `host/rooms/build.rs` (a built-in room or a fixture room), e.g.
/// `hall_fixture_panicky.wasm`: the newest copy under this profile's build directories.
pub fn built_wasm(file: &str) -> PathBuf {
    let profile_dir = hall_bin().parent().expect("profile dir").to_path_buf();
    let mut found: Vec<(std::time::SystemTime, PathBuf)> =
        std::fs::read_dir(profile_dir.join("build"))
            .expect("build dir")
            .flatten()
            .map(|e| {
                e.path()
                    .join("out/rooms-target/wasm32-wasip2/release")
                    .join(file)
            })
            .filter(|p| p.is_file())
            .filter_map(|p| Some((p.metadata().ok()?.modified().ok()?, p)))
            .collect();
    found.sort();
    found
        .pop()
        .map(|(_, p)| p)
        .unwrap_or_else(|| panic!("{file} was not built by host/rooms/build.rs"))
}
