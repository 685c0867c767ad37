//! The tool-policy room as the PreToolUse hook asks it: chosen at once, which tells
//! which component it is, and loaded only when the call meets the room's guard.

use super::Hook;
use crate::hall::policy::{self, Chosen};
use crate::rooms::guard::GuardCache;
use crate::rooms::types::{DetectorSetting, PolicyInput, PolicyTrigger, PolicyVerdict};
use crate::rooms::{Room, World};

/// The repository's tool-policy room (from the base branch, the user's, or the
/// built-in one): chosen at once, which tells which component it is, and loaded only
/// when it must be asked. Each call to it is bounded like every room call.
pub(super) struct PolicyRoom<'h> {
    hook: &'h Hook,
    chosen: Chosen,
    /// The room once loaded, or why it could not be; loaded at most once.
    room: Option<Result<Room, String>>,
}

impl<'h> PolicyRoom<'h> {
    pub(super) fn choose(hook: &'h Hook) -> Result<Self, String> {
        let chosen = policy::choose_fresh(&hook.hall, World::ToolPolicy).map_err(|e| e.message)?;
        Ok(Self {
            hook,
            chosen,
            room: None,
        })
    }

    /// The room, loaded on first use.
    pub(super) fn loaded(&mut self) -> Result<&Room, String> {
        let (hall, chosen) = (&self.hook.hall, &self.chosen);
        self.room
            .get_or_insert_with(|| {
                let rooms = policy::runtime_for(Some(hall)).map_err(|e| e.message)?;
                chosen.load(&rooms).map_err(|e| e.message)
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// The room's guard for these settings: the one kept from an earlier call, else the
    /// room's answer (then kept). Whatever keeps the guard from being known makes it
    /// `[always]`, so the room is asked about the call as it was before guards: a room
    /// that can't be identified or has no cache directory, or one that refuses or fails
    /// to state a guard.
    pub(super) fn guard(&mut self, settings: &[DetectorSetting]) -> Vec<PolicyTrigger> {
        let always = vec![PolicyTrigger::Always];
        let (Some(sha256), Some(dir)) = (
            self.chosen.sha256(),
            policy::rooms_cache_dir(Some(&self.hook.hall)),
        ) else {
            return always;
        };
        let cache = GuardCache::new(dir);
        if let Some(kept) = cache.read(&sha256, settings) {
            return kept;
        }
        let Ok(room) = self.loaded() else {
            return always;
        };
        let triggers = match room.guard_tool_policy(settings) {
            Ok(Ok(triggers)) => triggers,
            // A refusal is the room's answer for these settings: kept as `[always]`.
            Ok(Err(failure)) => {
                super::log_anywhere(&format!(
                    "tool policy: the room refused to state its guard ({}); it is asked about every call",
                    failure.message
                ));
                always
            }
            // A trap or a timeout may not happen again: nothing is kept.
            Err(e) => {
                super::log_anywhere(&format!(
                    "tool policy: the room failed to state its guard ({e}); it is asked about this call"
                ));
                return always;
            }
        };
        if let Err(e) = cache.write(&sha256, settings, &triggers) {
            super::log_anywhere(&format!("tool policy: the room's guard was not kept: {e}"));
        }
        triggers
    }
}

/// Asks the room about one call.
pub(super) fn decide(room: &Room, input: &PolicyInput) -> Result<PolicyVerdict, String> {
    match room.decide_tool_policy(input) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(failure)) => Err(format!("the room refused: {}", failure.message)),
        Err(e) => Err(e.to_string()),
    }
}
