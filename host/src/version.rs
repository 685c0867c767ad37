//! `hall --version --json`: which build this is. The version, the commit it was built
//! from, the target, the WIT package its rooms speak, and the sha256 of each room it
//! embeds, so a person (or a release check) can tell two binaries apart without running
//! either's rooms.

use serde::Serialize;

use crate::rooms::{self, World};

/// What `hall --version --json` prints.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct VersionInfo {
    pub name: &'static str,
    pub version: &'static str,
    /// The commit built (`git rev-parse HEAD` at build time, or `HALL_BUILD_COMMIT` for
    /// builds from a tarball); `unknown` when neither was there.
    pub commit: &'static str,
    /// The target triple the binary was built for.
    pub target: &'static str,
    /// The WIT package and version the embedded rooms export (`hall:rooms@0.8.0`).
    pub wit: String,
    /// Each embedded room: its world, size and sha256.
    pub rooms: Vec<RoomBuild>,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct RoomBuild {
    pub world: World,
    pub bytes: usize,
    pub sha256: String,
}

/// What only the binary knows about its build. The `hall` package stamps it (its
/// build.rs watches git); the library leaves it to that package, so a new commit
/// recompiles the binary and nothing beneath it.
#[derive(Debug, Clone, Copy)]
pub struct Build {
    /// The commit built, or `unknown`.
    pub commit: &'static str,
    /// The target triple.
    pub target: &'static str,
}

pub fn info(build: Build) -> VersionInfo {
    VersionInfo {
        name: "hall",
        version: env!("CARGO_PKG_VERSION"),
        commit: build.commit,
        target: build.target,
        wit: format!("{}@{}", rooms::PACKAGE, rooms::CURRENT_VERSION),
        rooms: rooms::Rooms::builtin_infos()
            .into_iter()
            .map(|r| RoomBuild {
                world: r.world,
                bytes: rooms::builtin_bytes(r.world).map_or(0, <[u8]>::len),
                sha256: r.sha256,
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sha2::{Digest, Sha256};

    #[test]
    fn each_room_hash_is_the_hash_of_the_bytes_embedded() {
        let v = info(Build {
            commit: "unknown",
            target: "x86_64-unknown-linux-gnu",
        });
        assert_eq!(v.rooms.len(), World::ALL.len());
        for r in &v.rooms {
            let bytes = rooms::builtin_bytes(r.world).expect("embedded");
            let hex: String = Sha256::digest(bytes)
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            assert_eq!(r.sha256, hex, "{:?}", r.world);
            assert_eq!(r.bytes, bytes.len());
            assert!(bytes.starts_with(b"\0asm"), "a wasm component");
        }
        // The package the WIT files declare, not a copy of it.
        let wit = include_str!("../../wit/worlds.wit");
        assert!(wit.contains(&format!("package {};", v.wit)), "{}", v.wit);
    }
}
