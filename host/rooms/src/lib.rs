//! The rooms runtime: policy decisions made by WebAssembly components.
//!
//! Each room (check detection, verdict validation, the merger's judgement,
//! condensing, the intake plan check, the tool-call policy) is a component
//! behind a world of the `hall:rooms` WIT package, so a repository or an
//! extension can swap a rule without rebuilding `hall`. This crate is everything
//! `hall` needs to do that safely, and depends on nothing of the host but the core
//! (the host re-exports it as `hallmark::rooms`):
//!
//! - [`Rooms`] owns the wasmtime engine (with its epoch ticker) and hall's cache
//!   of compiled components;
//! - [`Rooms::load`] checks that a component implements the world, at a version
//!   this hall supports and with the right types, before any of it runs;
//!   [`Rooms::builtin`] loads the rooms embedded in the binary;
//! - [`Room`]'s typed calls ([`Room::detect_checks`], [`Room::validate_verdict`],
//!   [`Room::judge_merges`], [`Room::condense`], [`Room::judge_plan`],
//!   [`Room::decide_tool_policy`] with [`Room::guard_tool_policy`]) and
//!   [`Room::run_json`] run each call in a fresh sandbox bounded in time,
//!   memory, output and answer size, where time and randomness are constants
//!   (see `sandbox`);
//! - [`Rooms::check`] reports what a `.wasm` file implements and whether it
//!   runs;
//! - [`guard`] checks a tool call against the tool-policy room's stated guard
//!   and keeps that guard beside the compiled rooms, with no engine at all.
//!
//! The host sees only the plain types in [`types`] and [`RoomError`]; the
//! generated bindings stay in `bindings.rs`. A room's own refusal (a
//! malformed verdict, say) is the inner `Err(Failure)` of a call's result; a
//! room that traps, loops or bloats is the outer `Err(RoomError)`.

#![cfg_attr(test, allow(clippy::unwrap_used))]

/// Every line of the `hall:rooms` package this hall runs, oldest first: the module of
/// its bindings and conversions (`bindings/<module>.rs`, which names the directory of
/// its WIT), its variant of `Line`, and its `major.minor`.
///
/// This list is the one place a line is named. The binding modules, the `Line` enum and
/// [`SUPPORTED_VERSIONS`], and the dispatch of every call to the bindings of the room's
/// line are generated from it, so a new line is an entry here and its module: the
/// bindgen of its frozen WIT and the conversions of its types. Until the first release
/// there is one line (decision 0029).
///
/// `foreach_line!(m)` calls the macro `m` with `[]` and the list;
/// `foreach_line!(m: args…)` with `[args…]` and the list.
macro_rules! foreach_line {
    ($mac:ident $(: $($args:tt)*)?) => {
        $mac! {
            [$($($args)*)?]
            (v0_8, V0_8, 0, 8)
        }
    };
}

mod bindings;
mod builtin;
mod cache;
mod check;
mod error;
pub mod guard;
mod info;
mod sandbox;
pub mod types;
mod world;

#[cfg(test)]
mod tests;

use std::fmt;
use std::path::{Path, PathBuf};

use serde::Serialize;
use sha2::{Digest, Sha256};
use wasmtime::component::{Component, Instance, InstancePre, Linker};
use wasmtime::{Engine, Store};

pub use check::{CheckReport, Implemented};
pub use error::{FailureKind, RoomError};
pub use info::{RoomInfo, RoomSource};
pub use sandbox::{Limits, RANDOM_BYTES, WALL_CLOCK_SECONDS};
pub use types::Failure;

use info::room_name;
use sandbox::{Call, Ctx};
use world::Line;
pub use world::World;

/// The WIT package every room world belongs to.
pub const PACKAGE: &str = "hall:rooms";

/// The `major.minor` lines of the package this hall can run, oldest first, from
/// `foreach_line!`.
pub const SUPPORTED_VERSIONS: &[(u64, u64)] = {
    macro_rules! versions {
        ([] $(($module:ident, $line:ident, $major:literal, $minor:literal))*) => {
            &[$(($major, $minor)),*]
        };
    }
    foreach_line!(versions)
};

/// The package version hall's own rooms and the SDK are built against.
pub const CURRENT_VERSION: &str = "0.8.0";

/// Where the build put every component it built: the built-in rooms and the fixture
/// rooms (`hall_fixture_two_part_plan.wasm`…). For the host's tests, which load
/// fixture rooms; `hall` itself runs only the bytes embedded in it.
#[doc(hidden)]
pub const BUILT_DIR: &str = env!("HALL_ROOMS_BUILT_DIR");

/// The embedded `.wasm` of the built-in room for `world`.
pub fn builtin_bytes(world: World) -> Option<&'static [u8]> {
    builtin::bytes(world)
}

/// The sha256 of the built-in room for `world`, known when `hall` was built: its
/// identity, without touching its bytes or the room runtime.
pub fn builtin_sha256(world: World) -> Option<&'static str> {
    builtin::sha256(world)
}

/// Calls one export of a room's world in a fresh sandbox (`$room.call`): looks up
/// `$exports`, calls `$interface().$call(store, $input)` and converts the answer into
/// the plain types. The input is converted inside, into the line's own type.
macro_rules! invoke {
    ($room:expr, $exports:expr, $interface:ident . $call:ident ($input:expr)) => {
        $room.call(
            |store, instance| $exports.load(store, instance),
            |store, room| room.$interface().$call(store, $input),
            |r| r.map(Into::into).map_err(Into::into),
        )
    };
}

/// Runs `$body` with `$e` bound to the exports of the room's line, whichever line of
/// `foreach_line!` that is: the lines' generated types differ, the code that uses
/// them does not.
macro_rules! on_line {
    ($exports:expr, $e:ident => $body:expr) => {
        foreach_line!(on_line_arms: $exports, $e => $body)
    };
}

macro_rules! on_line_arms {
    ([$exports:expr, $e:ident => $body:expr]
        $(($module:ident, $line:ident, $major:literal, $minor:literal))*) => {
        match $exports {
            $(Exports::$line($e) => $body,)*
        }
    };
}

/// A room's result: the room's answer, or its expected refusal.
pub type Outcome<T> = Result<T, Failure>;

/// The room runtime: one engine, one cache, shared by every room it loads.
pub struct Rooms {
    engine: Engine,
    linker: Linker<Ctx>,
    cache: cache::Cache,
    limits: Limits,
}

impl fmt::Debug for Rooms {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Rooms")
            .field("cache", &self.cache)
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl Rooms {
    /// A runtime whose compiled components are cached in `cache_dir` (hall uses
    /// `<user cache dir>/hallmark/rooms`). The directory is created on first write.
    pub fn new(cache_dir: impl Into<PathBuf>) -> Result<Self, RoomError> {
        Self::build(Some(cache_dir.into()))
    }

    /// A runtime that compiles every component in memory and keeps nothing.
    pub fn without_cache() -> Result<Self, RoomError> {
        Self::build(None)
    }

    fn build(cache_dir: Option<PathBuf>) -> Result<Self, RoomError> {
        let engine = sandbox::engine()?;
        // Only the WASI interfaces a Rust room imports, and the per-call
        // context grants none of them anything (see `sandbox`).
        let linker = sandbox::linker(&engine)
            .map_err(|e| RoomError::Runtime(format!("cannot link WASI: {e}")))?;
        let cache = cache::Cache::new(cache_dir, &engine);
        Ok(Self {
            engine,
            linker,
            cache,
            limits: Limits::default(),
        })
    }

    /// Replaces the per-call bounds for rooms loaded from now on.
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// The per-call bounds.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Where the compiled artifact of a component with this sha256 is cached.
    pub fn artifact_path(&self, sha256: &str) -> Option<PathBuf> {
        self.cache.artifact_path(sha256)
    }

    /// The room embedded in `hall` for `world`.
    pub fn builtin(&self, world: World) -> Result<Room, RoomError> {
        let bytes = builtin::bytes(world).ok_or_else(|| RoomError::NotFound {
            room: format!("builtin:{world}"),
            message: format!(
                "this hall has no built-in {world} room yet; configure one under [rooms] in .hallmark.toml"
            ),
        })?;
        let sha256 = builtin::sha256(world)
            .map(str::to_string)
            .unwrap_or_else(|| sha256_hex(bytes));
        // Built with this hall and verified by its tests (`every_built_in_room_verifies`).
        self.load_hashed(world, bytes, RoomSource::Builtin, sha256, false)
    }

    /// What `hall rooms list` shows for the built-in rooms, without compiling them.
    pub fn builtin_infos() -> Vec<RoomInfo> {
        World::ALL
            .into_iter()
            .filter_map(|world| {
                builtin::bytes(world).map(|bytes| RoomInfo {
                    name: room_name(world, &RoomSource::Builtin),
                    world,
                    version: CURRENT_VERSION.to_string(),
                    source: RoomSource::Builtin,
                    sha256: builtin::sha256(world)
                        .map(str::to_string)
                        .unwrap_or_else(|| sha256_hex(bytes)),
                })
            })
            .collect()
    }

    /// Loads a component as a room for `world`, after checking that it
    /// implements that world at a supported version, imports nothing hall
    /// does not provide, and exports the world's function with the type hall
    /// calls it with ([`Room::verify`]). `bytes` must be a `.wasm` component:
    /// precompiled artifacts from outside are refused.
    pub fn load(&self, world: World, bytes: &[u8], source: RoomSource) -> Result<Room, RoomError> {
        self.load_hashed(world, bytes, source, sha256_hex(bytes), true)
    }

    /// [`Rooms::load`] with the bytes' sha256 already known (the built-in rooms'), and
    /// whether to type-check the exports by instantiating the room once.
    fn load_hashed(
        &self,
        world: World,
        bytes: &[u8],
        source: RoomSource,
        sha256: String,
        verify: bool,
    ) -> Result<Room, RoomError> {
        let name = room_name(world, &source);
        let component = self.compile(&name, bytes, &sha256)?;
        let version = check::served_version(&self.engine, &component.0, world, &name)?;
        let pre = self
            .linker
            .instantiate_pre(&component.0)
            .map_err(|e| RoomError::Incompatible {
                room: name.clone(),
                message: format!(
                    "room {name} imports something hall does not provide (rooms get no host access): {}",
                    first_line(&e)
                ),
            })?;
        let shape = |detail: String| RoomError::Incompatible {
            room: name.clone(),
            message: format!(
                "room {name} exports {}@{version} with a shape that differs from hall's: {detail}",
                world.interface(),
            ),
        };
        // `served_version` only answers with a supported version.
        let line = Line::of(&version).ok_or_else(|| shape("no binding for that version".into()))?;
        let typed = TypedPre::new(world, line, pre).map_err(|e| shape(first_line(&e)))?;
        let room = Room {
            info: RoomInfo {
                name,
                world,
                version,
                source,
                sha256,
            },
            engine: self.engine.clone(),
            limits: self.limits,
            pre: typed,
            compiled: component.1,
        };
        // Names match; now the types. Instantiating costs microseconds, so
        // every load from outside pays it and a mistyped room is refused
        // wherever it is loaded (`hall rooms list`, `hall doctor`), not at its
        // first call. A built-in room was built with this hall and is verified
        // by its tests; skipping the extra instantiation keeps it off the
        // hooks' path, where the tool-policy room is loaded on every tool call.
        // Its calls still type-check the export they look up.
        if verify {
            room.verify()?;
        }
        Ok(room)
    }

    /// Loads a component as the one room world it implements, for
    /// `hall rooms run <file.wasm>` where no world is named.
    pub fn load_detected(&self, bytes: &[u8], source: RoomSource) -> Result<Room, RoomError> {
        let name = source.to_string();
        let sha256 = sha256_hex(bytes);
        let (component, _) = self.compile(&name, bytes, &sha256)?;
        let mut worlds: Vec<World> = check::room_exports(&self.engine, &component)
            .into_iter()
            .filter_map(|i| i.world)
            .collect();
        worlds.sort();
        worlds.dedup();
        match worlds.as_slice() {
            [world] => self.load(*world, bytes, source),
            [] => Err(RoomError::Incompatible {
                room: name.clone(),
                message: format!("{name} exports no {PACKAGE} interface, so it is not a room"),
            }),
            several => Err(RoomError::Incompatible {
                room: name.clone(),
                message: format!(
                    "{name} implements several room worlds ({}); name the one to run",
                    several
                        .iter()
                        .map(|w| w.name())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            }),
        }
    }

    /// Reads a `.wasm` file and loads it as a room for `world`.
    pub fn load_file(
        &self,
        world: World,
        path: &Path,
        source: RoomSource,
    ) -> Result<Room, RoomError> {
        let bytes = read_wasm(path)?;
        self.load(world, &bytes, source)
    }

    /// What a component implements, what it imports, and whether this hall can
    /// run it (for `hall rooms check`). Never fails: problems are in the report.
    pub fn check(&self, bytes: &[u8]) -> CheckReport {
        check::check(self, bytes)
    }

    /// Compiles (or fetches from the cache) a component from outside bytes.
    fn compile(
        &self,
        name: &str,
        bytes: &[u8],
        sha256: &str,
    ) -> Result<(Component, bool), RoomError> {
        if !bytes.starts_with(b"\0asm") {
            let what = if bytes.starts_with(b"\x7fELF") {
                "a precompiled artifact; hall only accepts .wasm components and compiles them itself"
            } else {
                "not a WebAssembly file"
            };
            return Err(RoomError::Incompatible {
                room: name.to_string(),
                message: format!("room {name} is {what}"),
            });
        }
        self.cache
            .component(&self.engine, bytes, sha256)
            .map_err(|e| RoomError::Incompatible {
                room: name.to_string(),
                message: format!(
                    "room {name} is not a component hall can compile (build it for wasm32-wasip2): {}",
                    first_line(&e)
                ),
            })
    }
}

/// A loaded room ready to instantiate, with the indices of its world's
/// exports.
///
/// Instantiating and type-checking the exports are two steps, so that a trap
/// while starting is a room failure and an export of the wrong type is an
/// incompatible room.
struct TypedPre {
    pre: InstancePre<Ctx>,
    exports: Exports,
}

/// A room's export indices, one variant per line, each the line's own (one variant per
/// world: `bindings::<line>::Exports`).
macro_rules! exports_of_lines {
    ([] $(($module:ident, $line:ident, $major:literal, $minor:literal))*) => {
        enum Exports {
            $($line(bindings::$module::Exports),)*
        }

        impl Exports {
            /// Finds the world's exports by name in the bindings of `line`.
            fn new(world: World, line: Line, pre: &InstancePre<Ctx>) -> wasmtime::Result<Self> {
                Ok(match line {
                    $(Line::$line => Self::$line(bindings::$module::Exports::new(world, pre)?),)*
                })
            }
        }
    };
}
foreach_line!(exports_of_lines);

impl TypedPre {
    /// Finds the world's exports by name, in the binding of the room's line;
    /// their types are checked on instantiation.
    fn new(world: World, line: Line, pre: InstancePre<Ctx>) -> wasmtime::Result<Self> {
        let exports = Exports::new(world, line, &pre)?;
        Ok(Self { pre, exports })
    }
}

impl Exports {
    /// Looks up every export of the world in `instance` with its Rust type:
    /// the check that a function of the right name has the right signature.
    fn type_check(&self, store: &mut Store<Ctx>, instance: &Instance) -> wasmtime::Result<()> {
        on_line!(self, e => e.type_check(store, instance))
    }
}

/// A loaded room, ready to be called any number of times; each call runs in a
/// fresh sandbox.
pub struct Room {
    info: RoomInfo,
    engine: Engine,
    limits: Limits,
    pre: TypedPre,
    compiled: bool,
}

impl fmt::Debug for Room {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Room")
            .field("info", &self.info)
            .field("limits", &self.limits)
            .field("compiled", &self.compiled)
            .finish_non_exhaustive()
    }
}

impl Room {
    /// Who this room is, for the journal.
    pub fn info(&self) -> &RoomInfo {
        &self.info
    }

    /// The world it serves.
    pub fn world(&self) -> World {
        self.info.world
    }

    /// True when loading it compiled the component (a cache miss).
    pub fn was_compiled(&self) -> bool {
        self.compiled
    }

    /// Proposes the checks for a repository.
    pub fn detect_checks(
        &self,
        input: &types::ChecksInput,
    ) -> Result<Outcome<types::Detection>, RoomError> {
        on_line!(&self.pre.exports, line => match line.checks() {
            Some(e) => invoke!(self, e, hall_rooms_checks.call_detect(&input.into())),
            None => Err(self.wrong_world(World::Checks)),
        })
    }

    /// Validates the JSON text of a reviewer's verdict and decides approval.
    pub fn validate_verdict(
        &self,
        verdict_json: &str,
    ) -> Result<Outcome<types::CheckedVerdict>, RoomError> {
        on_line!(&self.pre.exports, line => match line.verdict() {
            Some(e) => invoke!(self, e, hall_rooms_verdict.call_validate(verdict_json)),
            None => Err(self.wrong_world(World::Verdict)),
        })
    }

    /// Judges every merge queue.
    pub fn judge_merges(
        &self,
        input: &types::MergerInput,
    ) -> Result<Outcome<types::MergerPlan>, RoomError> {
        on_line!(&self.pre.exports, line => match line.merger() {
            Some(e) => invoke!(self, e, hall_rooms_merger.call_judge(&input.into())),
            None => Err(self.wrong_world(World::Merger)),
        })
    }

    /// Condenses one command's output.
    pub fn condense(
        &self,
        input: &types::CondenseInput,
    ) -> Result<Outcome<types::Condensed>, RoomError> {
        on_line!(&self.pre.exports, line => match line.condense() {
            Some(e) => invoke!(self, e, hall_rooms_condense.call_condense(&input.into())),
            None => Err(self.wrong_world(World::Condense)),
        })
    }

    /// Judges whether the intake model's split of a request may be used as parts.
    pub fn judge_plan(
        &self,
        input: &types::PlanInput,
    ) -> Result<Outcome<types::PlanJudgement>, RoomError> {
        on_line!(&self.pre.exports, line => match line.plan() {
            Some(e) => invoke!(self, e, hall_rooms_plan.call_judge(&input.into())),
            None => Err(self.wrong_world(World::Plan)),
        })
    }

    /// Decides whether one tool call runs, given the session's recent calls.
    /// Called from a hook on every tool call, so it goes through the same
    /// bounded call as the others and nothing more.
    pub fn decide_tool_policy(
        &self,
        input: &types::PolicyInput,
    ) -> Result<Outcome<types::PolicyVerdict>, RoomError> {
        on_line!(&self.pre.exports, line => match line.tool_policy() {
            Some(e) => invoke!(self, e, hall_rooms_tool_policy.call_decide(&input.into())),
            None => Err(self.wrong_world(World::ToolPolicy)),
        })
    }

    /// The conditions under which the tool-policy room may answer anything but
    /// `allow`, for these detector settings (its guard).
    pub fn guard_tool_policy(
        &self,
        settings: &[types::DetectorSetting],
    ) -> Result<Outcome<Vec<types::PolicyTrigger>>, RoomError> {
        on_line!(&self.pre.exports, line => match line.tool_policy() {
            Some(e) => {
                let settings: Vec<_> = settings.iter().map(Into::into).collect();
                self.call(
                    |store, instance| e.load(store, instance),
                    |store, room| room.hall_rooms_tool_policy().call_guard(store, &settings),
                    |r| {
                        r.map(|triggers| triggers.into_iter().map(Into::into).collect())
                            .map_err(Into::into)
                    },
                )
            }
            None => Err(self.wrong_world(World::ToolPolicy)),
        })
    }

    /// Evaluates the room on JSON input and returns JSON output: the author's
    /// test loop behind `hall rooms run`.
    ///
    /// The input is the world's input type as JSON (for the verdict world, the
    /// verdict itself, or a JSON string holding its text; for the tool-policy
    /// world, `{"guard": [settings…]}` asks for the room's guard). The output is
    /// `{"ok": <answer>}` or `{"failure": {"message", "problems"}}`.
    pub fn run_json(&self, input: serde_json::Value) -> Result<serde_json::Value, RoomError> {
        fn wrap<T: Serialize>(outcome: Outcome<T>) -> Result<serde_json::Value, RoomError> {
            let value = match outcome {
                Ok(answer) => serde_json::json!({ "ok": answer }),
                Err(failure) => serde_json::json!({ "failure": failure }),
            };
            Ok(value)
        }
        let parse_error = |e: serde_json::Error| RoomError::Input {
            room: self.info.name.clone(),
            message: e.to_string(),
        };
        match self.info.world {
            World::Checks => {
                wrap(self.detect_checks(&serde_json::from_value(input).map_err(parse_error)?)?)
            }
            World::Merger => {
                wrap(self.judge_merges(&serde_json::from_value(input).map_err(parse_error)?)?)
            }
            World::Condense => {
                wrap(self.condense(&serde_json::from_value(input).map_err(parse_error)?)?)
            }
            World::Plan => {
                wrap(self.judge_plan(&serde_json::from_value(input).map_err(parse_error)?)?)
            }
            World::ToolPolicy => match guard_settings(&input) {
                // `{"guard": [settings…]}` asks for the room's guard instead.
                Some(settings) => wrap(
                    self.guard_tool_policy(
                        &serde_json::from_value::<Vec<types::DetectorSetting>>(settings.clone())
                            .map_err(parse_error)?,
                    )?,
                ),
                None => wrap(
                    self.decide_tool_policy(&serde_json::from_value(input).map_err(parse_error)?)?,
                ),
            },
            World::Verdict => {
                let text = match input {
                    serde_json::Value::String(text) => text,
                    other => other.to_string(),
                };
                wrap(self.validate_verdict(&text)?)
            }
        }
    }

    /// Instantiates the room in a fresh sandbox and type-checks every export
    /// of its world with wasmtime's typed lookup, running none of them.
    /// [`Rooms::load`] does this for every room; calls check again, since the
    /// lookup is how they find the function.
    pub fn verify(&self) -> Result<(), RoomError> {
        let mut call = Call::new(&self.engine, self.limits, &self.info.name);
        let instance = self
            .pre
            .pre
            .instantiate(&mut call.store)
            .map_err(|e| call.failure(&e, true))?;
        self.pre
            .exports
            .type_check(&mut call.store, &instance)
            .map_err(|e| self.mismatch(&e))
    }

    /// Runs one call in a fresh sandbox, converts its answer, and names any
    /// failure: a trap, output past its cap, or an answer past its cap.
    fn call<I, R, T: Serialize>(
        &self,
        load: impl FnOnce(&mut Store<Ctx>, &Instance) -> wasmtime::Result<I>,
        run: impl FnOnce(&mut Store<Ctx>, I) -> wasmtime::Result<R>,
        convert: impl FnOnce(R) -> T,
    ) -> Result<T, RoomError> {
        let mut call = Call::new(&self.engine, self.limits, &self.info.name);
        let instance = self
            .pre
            .pre
            .instantiate(&mut call.store)
            .map_err(|e| call.failure(&e, true))?;
        let room = load(&mut call.store, &instance).map_err(|e| self.mismatch(&e))?;
        let raw = run(&mut call.store, room).map_err(|e| call.failure(&e, false))?;
        if let Some(overflow) = call.overflow() {
            return Err(overflow);
        }
        let answer = convert(raw);
        let bytes = json_size(&answer);
        if bytes > self.limits.answer_bytes {
            return Err(call.oversized(bytes));
        }
        Ok(answer)
    }

    /// An export whose type differs from the world's.
    fn mismatch(&self, error: &wasmtime::Error) -> RoomError {
        let name = &self.info.name;
        let world = self.info.world;
        RoomError::Incompatible {
            room: name.clone(),
            message: format!(
                "room {name} exports {}@{}, but its `{}` does not have the type hall's {world} world gives it: {}",
                world.interface(),
                self.info.version,
                world.function(),
                error_chain(error)
            ),
        }
    }

    fn wrong_world(&self, wanted: World) -> RoomError {
        RoomError::Incompatible {
            room: self.info.name.clone(),
            message: format!(
                "room {} serves the {} world, not {wanted}",
                self.info.name, self.info.world
            ),
        }
    }
}

/// The settings of a `hall rooms run tool-policy` input that asks for the guard:
/// an object whose one key is `guard`.
fn guard_settings(input: &serde_json::Value) -> Option<&serde_json::Value> {
    input
        .as_object()
        .filter(|o| o.len() == 1)
        .and_then(|o| o.get("guard"))
}

/// Lowercase hex sha256 of `bytes`: the identity of a component.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut out = String::with_capacity(64);
    for byte in digest {
        out.push_str(&format!("{byte:02x}"));
    }
    out
}

fn read_wasm(path: &Path) -> Result<Vec<u8>, RoomError> {
    std::fs::read(path).map_err(|e| RoomError::NotFound {
        room: path.display().to_string(),
        message: format!("cannot read room component {}: {e}", path.display()),
    })
}

/// The length of `value` as compact JSON, without building the text.
fn json_size(value: &impl Serialize) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 += bytes.len();
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    // Serialising the plain answer types cannot fail: they are strings,
    // numbers, lists and records with no maps keyed by anything but strings.
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

/// An error and its causes on one line, such as "failed to convert function
/// to given type: type mismatch with parameters: expected `record` found
/// `string`".
fn error_chain(e: &wasmtime::Error) -> String {
    e.chain()
        .map(|c| c.to_string())
        .collect::<Vec<_>>()
        .join(": ")
}

fn first_line(e: &impl fmt::Display) -> String {
    e.to_string().lines().next().unwrap_or_default().to_string()
}
