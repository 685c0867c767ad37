//! Which room serves each world for a repository, read from the base branch.
//!
//! Both the `[rooms]` table and the component bytes come from the base branch as
//! committed (read through the commit and its trees, every object re-hashed: see
//! `git::Committed`), never from a worktree, so an item can't swap in a kinder rule for
//! itself.
//! A repository's choice wins over a user-level extension
//! (`<config dir>/hallmark/rooms/<world>.wasm`), which wins over the built-in room. A
//! configured room that fails to load is an error, never a silent fallback.

use std::path::PathBuf;

use super::{Ctx, Hall};
use crate::config::FILE_NAME;
use crate::error::{Code, HallError, Result};
use crate::item::sha::short;
use crate::item::{EventKind, ItemId};
use crate::rooms::{Room, RoomInfo, RoomSource, Rooms, World};

/// The room runtime with hall's own cache of compiled components.
pub fn runtime() -> Result<Rooms> {
    runtime_for(None)
}

/// The room runtime for `hall`, with the compiled components cached in its cache
/// directory ([`Hall::user_cache_dir`]; the user's own outside a repository).
pub fn runtime_for(hall: Option<&Hall>) -> Result<Rooms> {
    match rooms_cache_dir(hall) {
        Some(dir) => Ok(Rooms::new(dir)?),
        None => Ok(Rooms::without_cache()?),
    }
}

/// Where `hall` keeps what it derives from rooms: their compiled artifacts, and the
/// tool-policy room's guard. Inside Hallmark's cache directory, which the hooks keep
/// every session from writing.
pub fn rooms_cache_dir(hall: Option<&Hall>) -> Option<PathBuf> {
    hall.map_or_else(crate::platform::cache_dir, Hall::user_cache_dir)
        .map(|dir| dir.join("rooms"))
}

/// Where the room for `world` comes from, before loading it.
#[derive(Debug, Clone)]
pub enum Choice {
    /// `[rooms]` on the base branch names a path; `bytes` is `None` when the file is
    /// missing there.
    Repo {
        path: String,
        rev: String,
        bytes: Option<Vec<u8>>,
    },
    User {
        path: PathBuf,
    },
    Builtin,
}

/// The base branch's `[rooms]` table (empty when the file or the table is absent), with
/// the commit it was read from, so the table and the component come from one commit.
pub fn repo_rooms(
    hall: &Hall,
) -> Result<(Option<String>, std::collections::BTreeMap<String, String>)> {
    let rules = super::rules::rules(&hall.repo)?;
    let sha = rules.tip.map(|t| t.sha);
    for world in rules.config.rooms.keys() {
        if world.parse::<World>().is_err() {
            return Err(HallError::new(
                Code::InvalidConfig,
                format!(
                    "{FILE_NAME} on {}: [rooms] has `{world}`, which is not a world ({})",
                    hall.config.base,
                    World::list()
                ),
            )
            .hint("hall rooms list"));
        }
    }
    Ok((sha, rules.config.rooms))
}

/// Decides where `world`'s room comes from for this repository.
pub fn choose(hall: Option<&Hall>, world: World) -> Result<Choice> {
    if let Some(hall) = hall {
        let (rev, rooms) = repo_rooms(hall)?;
        let keys: Vec<&str> = world
            .names()
            .iter()
            .copied()
            .filter(|k| rooms.contains_key(*k))
            .collect();
        if let [first, second, ..] = keys.as_slice() {
            return Err(HallError::new(
                Code::InvalidConfig,
                format!(
                    "{FILE_NAME} on {}: [rooms] names the {world} room twice, as `{first}` and `{second}`; keep `{world}`",
                    hall.config.base
                ),
            )
            .hint("hall rooms list"));
        }
        if let Some(path) = keys.first().and_then(|k| rooms.get(*k)) {
            // The component is read as the table was: through the commit and its
            // trees, every object re-hashed against its name.
            let bytes = match &rev {
                Some(rev) => super::rules::file_at(&hall.repo, rev, path)?,
                None => None,
            };
            let rev = rev.unwrap_or_default();
            return Ok(Choice::Repo {
                path: path.clone(),
                rev,
                bytes,
            });
        }
    }
    Ok(user_or_builtin(hall, world))
}

/// A user-level room for `world` when there is one, else the built-in room.
fn user_or_builtin(hall: Option<&Hall>, world: World) -> Choice {
    if let Some(dir) = hall.map_or_else(crate::platform::config_dir, Hall::user_config_dir) {
        for name in world.names() {
            let path = dir.join("rooms").join(format!("{name}.wasm"));
            if path.is_file() {
                return Choice::User { path };
            }
        }
    }
    Choice::Builtin
}

/// The room that serves `world`, chosen and read but not loaded: what a hook needs to
/// know which room it is (its sha256) without starting the room runtime.
#[derive(Debug, Clone)]
pub struct Chosen {
    world: World,
    choice: Choice,
    /// A user room's bytes, read once for both its identity and its loading.
    user_bytes: Option<Vec<u8>>,
}

impl Chosen {
    /// The component's sha256; `None` when its bytes are missing or unreadable (then
    /// [`Chosen::load`] says why).
    pub fn sha256(&self) -> Option<String> {
        match &self.choice {
            Choice::Builtin => crate::rooms::builtin_sha256(self.world).map(str::to_string),
            Choice::Repo { bytes, .. } => bytes.as_deref().map(crate::rooms::sha256_hex),
            Choice::User { .. } => self.user_bytes.as_deref().map(crate::rooms::sha256_hex),
        }
    }

    /// Loads the room, validated against the world and version.
    pub fn load(&self, rooms: &Rooms) -> Result<Room> {
        match (&self.choice, &self.user_bytes) {
            (Choice::User { path }, Some(bytes)) => {
                Ok(rooms.load(self.world, bytes, RoomSource::User { path: path.clone() })?)
            }
            (choice, _) => load(rooms, choice, self.world),
        }
    }
}

/// Chooses the room for `world` like [`choose`], for a caller whose `hall.config` was
/// read from the base branch in this process (a hook): when that config names no room
/// for `world`, the base branch is not read again. A hook runs on every tool call, and
/// reading the rules twice was a measurable part of its time. Nothing is loaded (see
/// [`Chosen`]).
pub fn choose_fresh(hall: &Hall, world: World) -> Result<Chosen> {
    let choice = if world
        .names()
        .iter()
        .any(|k| hall.config.rooms.contains_key(*k))
    {
        choose(Some(hall), world)?
    } else {
        user_or_builtin(Some(hall), world)
    };
    let user_bytes = match &choice {
        Choice::User { path } => std::fs::read(path).ok(),
        _ => None,
    };
    Ok(Chosen {
        world,
        choice,
        user_bytes,
    })
}

/// Loads the room that serves `world`, validated against the world and version.
pub fn room(rooms: &Rooms, hall: Option<&Hall>, world: World) -> Result<Room> {
    load(rooms, &choose(hall, world)?, world)
}

/// Loads the room a [`Choice`] names.
fn load(rooms: &Rooms, choice: &Choice, world: World) -> Result<Room> {
    match choice {
        Choice::Builtin => Ok(rooms.builtin(world)?),
        Choice::User { path } => {
            Ok(rooms.load_file(world, path, RoomSource::User { path: path.clone() })?)
        }
        Choice::Repo {
            path,
            rev,
            bytes: None,
        } => Err(HallError::new(
            Code::RoomNotFound,
            format!(
                "[rooms] {world} = \"{path}\", but {path} is not on the base branch ({})",
                short(rev)
            ),
        )
        .hint(format!("git add {path} && git commit, on the base branch"))
        .hint("hall rooms list")),
        Choice::Repo {
            path,
            rev,
            bytes: Some(bytes),
        } => Ok(rooms.load(
            world,
            bytes,
            RoomSource::Repo {
                path: path.clone(),
                rev: Some(short(rev).to_string()),
            },
        )?),
    }
}

/// The journal line that says which room made a decision.
pub fn used(ctx: &Ctx, item: Option<ItemId>, info: &RoomInfo) -> crate::item::Event {
    ctx.event(
        item,
        EventKind::RoomUsed {
            world: info.world.name().to_string(),
            room: info.name.clone(),
            sha256: info.sha256.clone(),
            source: info.source.to_string(),
        },
    )
}
