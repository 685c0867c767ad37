//! The room worlds hall knows, and the lines of the WIT package it has bindings for.

use std::fmt;
use std::str::FromStr;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{PACKAGE, RoomError};

/// A supported line of the WIT package: which binding module serves a room.
/// Ordered oldest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Line {
    /// `0.1.x`, frozen in `wit/frozen/0.1.0/`; check detection is `gates` there.
    V0_1,
    /// `0.2.x`, frozen in `wit/frozen/0.2.0/`.
    V0_2,
    /// `0.3.x`, frozen in `wit/frozen/0.3.0/`.
    V0_3,
    /// `0.4.x`, frozen in `wit/frozen/0.4.0/`.
    V0_4,
    /// `0.5.x`, frozen in `wit/frozen/0.5.0/`.
    V0_5,
    /// `0.6.x`, frozen in `wit/frozen/0.6.0/`; the plan world starts here.
    V0_6,
    /// `0.7.x`, frozen in `wit/frozen/0.7.0/`; the tool-policy world starts here.
    V0_7,
    /// `0.8.x`, the current `wit/`; a tool-policy room states its guard.
    V0_8,
}

impl Line {
    /// The line a version such as `0.1.3` belongs to, if this hall supports it.
    pub(crate) fn of(version: &str) -> Option<Line> {
        let mut parts = version.split('.').map(|p| p.parse::<u64>().ok());
        match (parts.next().flatten(), parts.next().flatten()) {
            (Some(0), Some(1)) => Some(Line::V0_1),
            (Some(0), Some(2)) => Some(Line::V0_2),
            (Some(0), Some(3)) => Some(Line::V0_3),
            (Some(0), Some(4)) => Some(Line::V0_4),
            (Some(0), Some(5)) => Some(Line::V0_5),
            (Some(0), Some(6)) => Some(Line::V0_6),
            (Some(0), Some(7)) => Some(Line::V0_7),
            (Some(0), Some(8)) => Some(Line::V0_8),
            _ => None,
        }
    }
}

/// The six kinds of decision a room can make.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum World {
    /// Check detection (`hall init`): the repository's own commands. Read as `gates`
    /// too, its name before `hall:rooms@0.2.0`.
    #[serde(alias = "gates")]
    Checks,
    /// Verdict validation (the reviewer's answer).
    Verdict,
    /// The merger's judgement.
    Merger,
    /// Condensing command output.
    Condense,
    /// Checking the intake model's split of a request (from `hall:rooms@0.6.0`).
    Plan,
    /// Deciding, before each tool call, whether the agent is going in circles
    /// (from `hall:rooms@0.7.0`). Named with a hyphen everywhere, like its
    /// WIT interface.
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
    /// its name, then the one it had before (check detection was `gates` until
    /// `hall:rooms@0.2.0`).
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

    /// The interface a room of this world exports at the current version,
    /// without version (`hall:rooms/merger`).
    pub fn interface(self) -> String {
        format!("{PACKAGE}/{}", self.name())
    }

    /// The interface a room of this world exports at `version`
    /// (`hall:rooms/gates` for check detection in 0.1).
    pub fn interface_at(self, version: &str) -> String {
        match (self, Line::of(version)) {
            (Self::Checks, Some(Line::V0_1)) => format!("{PACKAGE}/gates"),
            _ => self.interface(),
        }
    }

    /// The world an exported interface name serves at `version`, if hall knows it:
    /// `gates` is check detection in 0.1 only.
    pub fn of_export(interface: &str, version: &str) -> Option<World> {
        if interface == "gates" {
            return (Line::of(version) == Some(Line::V0_1)).then_some(World::Checks);
        }
        if interface == "checks" && Line::of(version) == Some(Line::V0_1) {
            return None;
        }
        World::ALL.into_iter().find(|w| w.name() == interface)
    }

    /// The first line of the package that has this world.
    pub(crate) fn since(self) -> Line {
        match self {
            Self::Plan => Line::V0_6,
            Self::ToolPolicy => Line::V0_7,
            _ => Line::V0_1,
        }
    }

    /// Whether a room of this world built against `version` can run here: the
    /// line is supported and has the world.
    pub(crate) fn runs_at(self, version: &str) -> bool {
        Line::of(version).is_some_and(|line| line >= self.since())
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
