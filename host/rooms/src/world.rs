//! The room worlds hall knows, and the lines of the WIT package it has bindings for.

use std::fmt;
use std::str::FromStr;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{PACKAGE, RoomError};

macro_rules! line_enum {
    ([] $(($module:ident, $line:ident, $major:literal, $minor:literal))*) => {
        /// A supported line of the WIT package: which binding module serves a room
        /// (one variant per entry of `foreach_line!`). Ordered oldest first.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
        pub(crate) enum Line {
            $(
                #[doc = concat!("`", $major, ".", $minor, ".x`, bound in `bindings/", stringify!($module), ".rs`.")]
                $line,
            )*
        }

        impl Line {
            /// The line a version such as `0.8.3` belongs to, if this hall supports it.
            pub(crate) fn of(version: &str) -> Option<Line> {
                let mut parts = version.split('.').map(|p| p.parse::<u64>().ok());
                match (parts.next().flatten(), parts.next().flatten()) {
                    $((Some($major), Some($minor)) => Some(Line::$line),)*
                    _ => None,
                }
            }
        }
    };
}
foreach_line!(line_enum);

/// The six kinds of decision a room can make.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum World {
    /// Check detection (`hall init`): the repository's own commands. Read as `gates`
    /// too, the name it had early in development, in `[rooms]`.
    #[serde(alias = "gates")]
    Checks,
    /// Verdict validation (the reviewer's answer).
    Verdict,
    /// The merger's judgement.
    Merger,
    /// Condensing command output.
    Condense,
    /// Checking the intake model's split of a request.
    Plan,
    /// Deciding, before each tool call, whether the agent is going in circles.
    /// Named with a hyphen everywhere, like its WIT interface.
    #[serde(rename = "tool-policy")]
    ToolPolicy,
}

impl World {
    /// Every world, in a stable order.
    pub const ALL: [World; 6] = [
        World::Checks,
        World::Verdict,
        World::Merger,
        World::Condense,
        World::Plan,
        World::ToolPolicy,
    ];

    /// The short name used in config and on the command line (`merger`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Checks => "checks",
            Self::Verdict => "verdict",
            Self::Merger => "merger",
            Self::Condense => "condense",
            Self::Plan => "plan",
            Self::ToolPolicy => "tool-policy",
        }
    }

    /// Every world's name, for messages: `checks, verdict, merger, condense, plan,
    /// tool-policy`.
    pub fn list() -> String {
        Self::ALL.map(World::name).join(", ")
    }

    /// Every name `[rooms]` and the user's rooms directory accept for this world:
    /// its name, then the one it had before (check detection was `gates` early in
    /// development).
    pub fn names(self) -> &'static [&'static str] {
        match self {
            Self::Checks => &["checks", "gates"],
            Self::Verdict => &["verdict"],
            Self::Merger => &["merger"],
            Self::Condense => &["condense"],
            Self::Plan => &["plan"],
            Self::ToolPolicy => &["tool-policy"],
        }
    }

    /// The interface a room of this world exports, without its version
    /// (`hall:rooms/merger`).
    pub fn interface(self) -> String {
        format!("{PACKAGE}/{}", self.name())
    }

    /// The world an exported interface name serves, if hall knows it (`merger`).
    pub fn of_export(interface: &str) -> Option<World> {
        World::ALL.into_iter().find(|w| w.name() == interface)
    }

    /// The WIT world's name (`merger-room`).
    pub fn wit_world(self) -> String {
        format!("{}-room", self.name())
    }

    /// The one function a room of this world exports (`judge`).
    pub fn function(self) -> &'static str {
        match self {
            Self::Checks => "detect",
            Self::Verdict => "validate",
            Self::Merger | Self::Plan => "judge",
            Self::Condense => "condense",
            Self::ToolPolicy => "decide",
        }
    }
}

impl fmt::Display for World {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for World {
    type Err = RoomError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        World::ALL
            .into_iter()
            .find(|w| w.names().contains(&s))
            .ok_or_else(|| RoomError::NotFound {
                room: s.to_string(),
                message: format!(
                    "there is no room world named `{s}`; the worlds are {}",
                    World::list()
                ),
            })
    }
}
