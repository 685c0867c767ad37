//! `hall rooms`: which room serves each world, what a component implements, and the
//! author's test loop (`hall rooms run`).

use std::io::Read;
use std::path::PathBuf;

use serde::Serialize;

use super::{Ctx, Hall, Reply, next_text};
use crate::cli::RoomsCmd;
use crate::error::{Code, HallError, Result};
use crate::hall::policy;
use crate::rooms::{RoomInfo, RoomSource, World};

#[derive(Serialize, schemars::JsonSchema)]
pub struct ListReply {
    pub rooms: Vec<Serving>,
    pub next: Vec<String>,
}

/// The room serving one world, or why it can't.
#[derive(Serialize, schemars::JsonSchema)]
pub struct Serving {
    pub world: World,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub room: Option<RoomInfo>,
    /// Why the configured room can't be used (it is not replaced by the built-in one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
}

#[derive(Serialize, schemars::JsonSchema)]
pub struct RunReply {
    pub room: RoomInfo,
    /// `{"ok": …}` with the room's answer, or `{"failure": …}` when it refused the input.
    pub output: serde_json::Value,
    pub next: Vec<String>,
}

pub fn run(ctx: &Ctx, cmd: &RoomsCmd) -> Result<Reply> {
    match cmd {
        RoomsCmd::List => list(ctx),
        RoomsCmd::Check { file } => check(file),
        RoomsCmd::Run { room, input } => run_room(ctx, room, input),
    }
}

/// The initialized repository we are in, if any: rooms work outside one too (built-in
/// and user rooms), for authors.
pub(super) fn hall_here(ctx: &Ctx) -> Result<Option<Hall>> {
    match ctx.hall() {
        Ok(h) => Ok(Some(h)),
        Err(e) if matches!(e.code, Code::NotARepo | Code::NotInitialized) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Every world's serving room, with errors reported per world.
pub fn serving(hall: Option<&Hall>) -> Result<Vec<Serving>> {
    let rooms = policy::runtime()?;
    let mut out = Vec::new();
    for world in World::ALL {
        let entry = match policy::room(&rooms, hall, world) {
            Ok(room) => Serving {
                world,
                room: Some(room.info().clone()),
                error: None,
                code: None,
            },
            Err(e) => Serving {
                world,
                room: None,
                error: Some(e.message.clone()),
                code: Some(e.code.as_str()),
            },
        };
        out.push(entry);
    }
    Ok(out)
}

fn list(ctx: &Ctx) -> Result<Reply> {
    let hall = hall_here(ctx)?;
    let rooms = serving(hall.as_ref())?;
    let mut next = vec![
        "hall rooms check <file.wasm>".to_string(),
        "hall rooms run <world> --input <json>".to_string(),
    ];
    if rooms.iter().any(|r| r.code.is_some()) {
        next.insert(
            0,
            "edit [rooms] in .hallmark.toml on the base branch".to_string(),
        );
    }
    let text = rooms
        .iter()
        .map(|r| match (&r.room, &r.error) {
            (Some(info), _) => format!(
                "{:<9} {}  {}  sha256 {}",
                r.world,
                info.name,
                info.source,
                &info.sha256[..12]
            ),
            (None, Some(e)) => format!("{:<9} ERROR {e}", r.world),
            (None, None) => format!("{:<9} -", r.world),
        })
        .collect::<Vec<_>>()
        .join("\n");
    let text = format!("{text}\n{}", next_text(&next));
    Ok(Reply::new(&ListReply { rooms, next }, text))
}

/// `hall rooms check`: the report for a room this hall can run, else
/// `ROOM_INCOMPATIBLE` naming every problem.
fn check(file: &PathBuf) -> Result<Reply> {
    let bytes = std::fs::read(file).map_err(|e| {
        HallError::new(
            Code::RoomNotFound,
            format!("cannot read {}: {e}", file.display()),
        )
        .hint("hall rooms list")
    })?;
    let rooms = policy::runtime()?;
    let report = rooms.check(&bytes);
    if !report.problems.is_empty() {
        // A component that serves one world and fails another is refused too:
        // whatever it was configured as, something in it cannot run.
        return Err(HallError::new(
            Code::RoomIncompatible,
            format!(
                "{} cannot run in this hall: {}",
                file.display(),
                report.problems.join("; ")
            ),
        )
        .hint("docs/rooms.md"));
    }
    let text = serde_json::to_string_pretty(&report).unwrap_or_default();
    let mut json = serde_json::to_value(&report).map_err(HallError::internal)?;
    let next = vec![format!("hall rooms run {} --input <json>", file.display())];
    json["next"] = serde_json::json!(next);
    Ok(Reply::new(&json, text))
}

fn read_input(input: &str) -> Result<serde_json::Value> {
    let text = if input == "@-" || input == "-" {
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .map_err(|e| HallError::usage(format!("the input can't be read from stdin: {e}")))?;
        s
    } else if let Some(path) = input.strip_prefix('@') {
        std::fs::read_to_string(path)
            .map_err(|e| HallError::usage(format!("--input @{path}: {e}")))?
    } else {
        input.to_string()
    };
    serde_json::from_str(&text).map_err(|e| {
        HallError::new(Code::RoomInputInvalid, format!("--input is not JSON: {e}"))
            .hint("hall rooms run <world> --input '{…}'")
    })
}

fn run_room(ctx: &Ctx, room: &str, input: &str) -> Result<Reply> {
    let input = read_input(input)?;
    let rooms = policy::runtime()?;
    let loaded = match room.parse::<World>() {
        Ok(world) => {
            let hall = hall_here(ctx)?;
            policy::room(&rooms, hall.as_ref(), world)?
        }
        Err(_) => {
            let path = PathBuf::from(room);
            let bytes = std::fs::read(&path).map_err(|e| {
                HallError::new(
                    Code::RoomNotFound,
                    format!(
                        "`{room}` is neither a world ({}) nor a readable file: {e}",
                        World::list()
                    ),
                )
                .hint("hall rooms list")
            })?;
            rooms.load_detected(&bytes, RoomSource::File { path })?
        }
    };
    let output = loaded.run_json(input)?;
    let text = serde_json::to_string_pretty(&output).unwrap_or_default();
    let reply = RunReply {
        room: loaded.info().clone(),
        output,
        next: vec!["hall rooms list".into()],
    };
    Ok(Reply::new(&reply, text))
}
