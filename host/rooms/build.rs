//! Builds the room components in `rooms/` for wasm32-wasip2, so `hall` can embed
//! its built-in rooms and its tests can load the fixture rooms.
//!
//! The rooms are their own cargo workspace, built by a nested cargo with its own
//! target directory under OUT_DIR: sharing the outer target directory would
//! deadlock on cargo's build lock. Each `.wasm` is announced to the compiler as
//! `HALL_<CRATE>_WASM` (for example `HALL_ROOM_MERGER_WASM` for
//! `hall-room-merger`), for `include_bytes!(env!(…))`, and the directory that holds
//! them all as `HALL_ROOMS_BUILT_DIR`, for the host's tests that load a fixture room.
//!
//! The repository is found from `HALL_REPO_ROOT` when set, else two directories
//! above this crate's (`host/rooms/`).

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

const TARGET: &str = "wasm32-wasip2";

/// Variables of the outer build that must not reach the nested one: flags meant
/// for the host target (coverage, sanitizers), clippy's wrapper, and the outer
/// target directory.
const SCRUBBED: &[&str] = &[
    "RUSTFLAGS",
    "CARGO_ENCODED_RUSTFLAGS",
    "CARGO_BUILD_RUSTFLAGS",
    "RUSTC_WRAPPER",
    "RUSTC_WORKSPACE_WRAPPER",
    "CARGO_BUILD_TARGET",
    "CARGO_TARGET_DIR",
    "CARGO_BUILD_TARGET_DIR",
    "CARGO_LLVM_COV",
    "CARGO_LLVM_COV_TARGET_DIR",
];

fn main() {
    println!("cargo:rerun-if-env-changed=HALL_REPO_ROOT");
    println!("cargo:rerun-if-env-changed=HALL_ROOMS_PRETEND_TARGET_MISSING");
    let repo = repo_root();
    let rooms = repo.join("rooms");
    let wit = repo.join("wit");
    watch(&rooms, &wit);

    if !target_installed() {
        // The one setup step; say it exactly.
        println!("cargo::error=run `rustup target add {TARGET}`");
        return;
    }

    let out =
        PathBuf::from(env::var_os("OUT_DIR").expect("cargo always sets OUT_DIR for build scripts"));
    let target_dir = out.join("rooms-target");
    let cargo = env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    command
        .args([
            "build",
            "--release",
            "--workspace",
            "--target",
            TARGET,
            "--manifest-path",
        ])
        .arg(rooms.join("Cargo.toml"));
    for var in SCRUBBED {
        command.env_remove(var);
    }
    // Profile settings meant for the host (a packager's `CARGO_PROFILE_RELEASE_STRIP`, a
    // quick `CARGO_PROFILE_DIST_*`) must not change the rooms' bytes, which their
    // hashes pin.
    for (var, _) in env::vars_os() {
        if var.to_string_lossy().starts_with("CARGO_PROFILE_") {
            command.env_remove(var);
        }
    }
    command.env("CARGO_TARGET_DIR", &target_dir);
    let status = match command.status() {
        Ok(status) => status,
        Err(e) => {
            println!("cargo::error=cannot run cargo to build the rooms: {e}");
            return;
        }
    };
    if !status.success() {
        println!(
            "cargo::error=building the rooms in {} failed; see the output above",
            rooms.display()
        );
        return;
    }

    let built = target_dir.join(TARGET).join("release");
    println!("cargo:rustc-env=HALL_ROOMS_BUILT_DIR={}", built.display());
    let entries = match std::fs::read_dir(&built) {
        Ok(entries) => entries,
        Err(e) => {
            println!("cargo::error=cannot list {}: {e}", built.display());
            return;
        }
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().is_some_and(|e| e == "wasm")
            && let Some(stem) = path.file_stem().and_then(|s| s.to_str())
            && let Some(name) = stem.strip_prefix("hall_")
        {
            println!(
                "cargo:rustc-env=HALL_{}_WASM={}",
                name.to_ascii_uppercase(),
                path.display()
            );
            // The built-in rooms' hashes are known now; computing them on every hook
            // and room call would cost more than loading the room from the cache.
            if let Ok(bytes) = std::fs::read(&path) {
                use sha2::Digest;
                let hex: String = sha2::Sha256::digest(&bytes)
                    .iter()
                    .map(|b| format!("{b:02x}"))
                    .collect();
                println!(
                    "cargo:rustc-env=HALL_{}_SHA256={hex}",
                    name.to_ascii_uppercase()
                );
            }
        }
    }
}

fn repo_root() -> PathBuf {
    if let Some(root) = env::var_os("HALL_REPO_ROOT") {
        return PathBuf::from(root);
    }
    let manifest = PathBuf::from(
        env::var_os("CARGO_MANIFEST_DIR")
            .expect("cargo always sets CARGO_MANIFEST_DIR for build scripts"),
    );
    // host/rooms/ is two levels below the repository.
    manifest
        .ancestors()
        .nth(2)
        .map(Path::to_path_buf)
        .unwrap_or(manifest)
}

/// The parts of rooms/ that feed the build: the workspace files and its
/// members. Listed rather than scanned, so that build output or a crate being
/// developed beside them does not trigger rebuilds.
const WATCHED: &[&str] = &[
    "Cargo.toml",
    "Cargo.lock",
    "sdk",
    "checks",
    "verdict",
    "merger",
    "plan",
    "tool-policy",
    "condense-room",
    "condense/src",
    "condense/Cargo.toml",
    "fixtures",
];

/// Reruns when the rooms workspace or the WIT package changes.
fn watch(rooms: &Path, wit: &Path) {
    println!("cargo:rerun-if-changed={}", wit.display());
    // The SDK takes the review vocabulary (lenses) from the core crate.
    let core = rooms.with_file_name("host").join("core");
    for entry in ["src", "Cargo.toml"] {
        println!("cargo:rerun-if-changed={}", core.join(entry).display());
    }
    for entry in WATCHED {
        println!("cargo:rerun-if-changed={}", rooms.join(entry).display());
    }
}

/// Whether the standard library for the wasm target is installed.
fn target_installed() -> bool {
    if env::var_os("HALL_ROOMS_PRETEND_TARGET_MISSING").is_some() {
        return false;
    }
    let rustc = env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let output = Command::new(rustc)
        .args(["--print", "target-libdir", "--target", TARGET])
        .output();
    match output {
        Ok(output) if output.status.success() => {
            let dir = String::from_utf8_lossy(&output.stdout).trim().to_string();
            Path::new(&dir).is_dir()
        }
        _ => false,
    }
}
