//! Who a room is: where its component came from and what it serves, recorded with
//! every decision it makes.

use std::fmt;
use std::path::PathBuf;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::World;

/// Where a room's component came from; recorded with every decision it makes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RoomSource {
    /// Embedded in the `hall` binary.
    Builtin,
    /// Configured in `.hallmark.toml` `[rooms]`, read from the base branch.
    Repo {
        /// Path inside the repository.
        path: String,
        /// The base-branch commit it was read from, when known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rev: Option<String>,
    },
    /// An extension from the user's config directory.
    User {
        /// Absolute path of the `.wasm` file.
        path: PathBuf,
    },
    /// A file named on the command line (`hall rooms run`, `hall rooms check`).
    File {
        /// The path as given.
        path: PathBuf,
    },
}

impl fmt::Display for RoomSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Builtin => f.write_str("built-in"),
            Self::Repo {
                path,
                rev: Some(rev),
            } => write!(f, "repo:{path}@{rev}"),
            Self::Repo { path, rev: None } => write!(f, "repo:{path}"),
            Self::User { path } => write!(f, "user:{}", path.display()),
            Self::File { path } => write!(f, "file:{}", path.display()),
        }
    }
}

/// Which room made a decision: enough for the journal and `hall rooms list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RoomInfo {
    /// A short name for messages (`builtin:merger`, `repo:rooms/careful.wasm`).
    pub name: String,
    /// The world it serves.
    pub world: World,
    /// The interface version it exports (`0.8.0`).
    pub version: String,
    /// Where it came from.
    pub source: RoomSource,
    /// sha256 of the `.wasm` bytes, lowercase hex.
    pub sha256: String,
}

/// A short name for messages (`builtin:merger`, `repo:rooms/careful.wasm`).
pub(crate) fn room_name(world: World, source: &RoomSource) -> String {
    match source {
        RoomSource::Builtin => format!("builtin:{world}"),
        RoomSource::Repo { path, .. } => format!("repo:{path}"),
        RoomSource::User { path } => format!("user:{}", path.display()),
        RoomSource::File { path } => path.display().to_string(),
    }
}
