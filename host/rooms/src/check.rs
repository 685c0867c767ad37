//! Reading what a component implements, before running any of it.
//!
//! A room's world and version come from its export names
//! (`hall:rooms/merger@0.8.0`), so the check needs no custom section and no
//! agreement beyond the WIT package itself. A version outside
//! `SUPPORTED_VERSIONS` is refused with both sides named. A name is not a
//! signature, so `hall rooms check` also instantiates the component in the
//! sandbox and looks up every export with the Rust type hall calls it with;
//! none of the room's functions is called.

use schemars::JsonSchema;
use serde::Serialize;
use wasmtime::Engine;
use wasmtime::component::Component;

use super::{Line, PACKAGE, RoomError, RoomSource, Rooms, SUPPORTED_VERSIONS, World, sha256_hex};

/// One room interface a component exports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Implemented {
    /// The world, when the interface is one hall knows.
    pub world: Option<World>,
    /// The full export name (`hall:rooms/merger@0.8.0`).
    pub export: String,
    /// The version part (`0.8.0`).
    pub version: String,
    /// Whether this hall supports that version line.
    pub supported: bool,
}

/// What `hall rooms check` reports about a `.wasm` file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct CheckReport {
    /// sha256 of the bytes.
    pub sha256: String,
    /// Whether the bytes compiled as a component.
    pub component: bool,
    /// The `hall:rooms` interfaces it exports.
    pub implements: Vec<Implemented>,
    /// Every export name.
    pub exports: Vec<String>,
    /// Every import name (WASI interfaces for a Rust room).
    pub imports: Vec<String>,
    /// The worlds this hall can run it as.
    pub runnable: Vec<World>,
    /// Why it cannot run, per world tried, or why it is not a component.
    pub problems: Vec<String>,
    /// The versions this hall supports, such as `0.8`.
    pub supported_versions: Vec<String>,
}

pub(crate) fn check(rooms: &Rooms, bytes: &[u8]) -> CheckReport {
    let sha256 = sha256_hex(bytes);
    let mut report = CheckReport {
        sha256: sha256.clone(),
        component: false,
        implements: Vec::new(),
        exports: Vec::new(),
        imports: Vec::new(),
        runnable: Vec::new(),
        problems: Vec::new(),
        supported_versions: supported_text(),
    };
    let component = match rooms.compile("the file", bytes, &sha256) {
        Ok((component, _)) => component,
        Err(e) => {
            report.problems.push(e.to_string());
            return report;
        }
    };
    report.component = true;
    let ty = component.component_type();
    report.exports = ty
        .exports(&rooms.engine)
        .map(|(n, _)| n.to_string())
        .collect();
    report.imports = ty
        .imports(&rooms.engine)
        .map(|(n, _)| n.to_string())
        .collect();
    report.implements = room_exports(&rooms.engine, &component);
    if report.implements.is_empty() {
        report.problems.push(format!(
            "it exports no {PACKAGE} interface, so it is not a room"
        ));
    }
    for world in World::ALL {
        if !report.implements.iter().any(|i| i.world == Some(world)) {
            continue;
        }
        // Loading instantiates the component and type-checks its exports.
        match rooms.load(world, bytes, RoomSource::Builtin) {
            Ok(_) => report.runnable.push(world),
            Err(e) => report.problems.push(e.to_string().replace("builtin:", "")),
        }
    }
    report
}

/// The `hall:rooms` interfaces `component` exports.
pub(crate) fn room_exports(engine: &Engine, component: &Component) -> Vec<Implemented> {
    let prefix = format!("{PACKAGE}/");
    component
        .component_type()
        .exports(engine)
        .filter_map(|(name, _)| {
            let rest = name.strip_prefix(&prefix)?;
            let (interface, version) = rest.split_once('@').unwrap_or((rest, ""));
            Some(Implemented {
                world: World::of_export(interface),
                export: name.to_string(),
                version: version.to_string(),
                supported: supported(version),
            })
        })
        .collect()
}

/// The version of `world` the component serves, or why it cannot serve it.
pub(crate) fn served_version(
    engine: &Engine,
    component: &Component,
    world: World,
    name: &str,
) -> Result<String, RoomError> {
    let found = room_exports(engine, component);
    let supported_list = supported_text().join(", ");
    let mine: Vec<&Implemented> = found.iter().filter(|i| i.world == Some(world)).collect();
    if let Some(ok) = mine.iter().find(|i| i.supported) {
        return Ok(ok.version.clone());
    }
    let message = if let Some(other) = mine.first() {
        format!(
            "room {name} exports {}; this hall supports {} {supported_list}",
            other.export,
            world.interface()
        )
    } else if !found.is_empty() {
        let names: Vec<&str> = found.iter().map(|i| i.export.as_str()).collect();
        format!(
            "room {name} implements {}, not the {world} world ({}); configure it for the world it serves",
            names.join(", "),
            world.interface()
        )
    } else {
        let names: Vec<String> = component
            .component_type()
            .exports(engine)
            .map(|(n, _)| n.to_string())
            .collect();
        let exports = if names.is_empty() {
            "nothing".to_string()
        } else {
            names.join(", ")
        };
        format!(
            "room {name} is not a {PACKAGE} room: it exports {exports}, but hall needs {}@{supported_list}",
            world.interface()
        )
    };
    Err(RoomError::Incompatible {
        room: name.to_string(),
        message,
    })
}

fn supported(version: &str) -> bool {
    Line::of(version).is_some()
}

fn supported_text() -> Vec<String> {
    SUPPORTED_VERSIONS
        .iter()
        .map(|(major, minor)| format!("{major}.{minor}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{Line, SUPPORTED_VERSIONS, World, supported, supported_text};

    #[test]
    fn only_supported_minor_lines_pass() {
        assert!(supported("0.8.0"));
        assert!(supported("0.8.7"));
        // Lines folded into 0.8 before the first release, and lines not yet made.
        assert!(!supported("0.7.0"));
        assert!(!supported("0.1.0"));
        assert!(!supported("0.9.0"));
        assert!(!supported("1.0.0"));
        assert!(!supported(""));
        assert_eq!(supported_text(), ["0.8"]);
    }

    #[test]
    fn every_supported_line_has_a_binding() {
        for (major, minor) in SUPPORTED_VERSIONS {
            let version = format!("{major}.{minor}.0");
            assert!(Line::of(&version).is_some(), "{version} has no binding");
        }
        assert!(Line::of(super::super::CURRENT_VERSION).is_some());
    }

    #[test]
    fn every_world_is_known_by_its_export_name() {
        for world in World::ALL {
            assert_eq!(World::of_export(world.name()), Some(world));
        }
        assert_eq!(World::of_export("gates"), None);
        assert_eq!(World::of_export("nope"), None);
        assert_eq!("tool-policy".parse::<World>().ok(), Some(World::ToolPolicy));
    }
}
