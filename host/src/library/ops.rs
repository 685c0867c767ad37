//! The changes a learning goes through: proposed (new, or as an update of an accepted
//! one), accepted or rejected, retired and restored. Each one takes the store's lock,
//! writes the file, bumps the generation and journals a repo-level event.

use super::learning::{Draft, Learning, Meta, check_paths};
use super::{Library, LibraryError, Result};
use crate::item::event::EVENT_VERSION;
use crate::item::{Event, EventKind, LearningId, LearningStatus};

/// Who makes a change, and when (an RFC 3339 time): passed in, so tests are exact.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stamp {
    pub t: String,
    pub actor: String,
}

impl Stamp {
    pub fn new(t: impl Into<String>, actor: impl Into<String>) -> Stamp {
        Stamp {
            t: t.into(),
            actor: actor.into(),
        }
    }

    fn event(&self, kind: EventKind) -> Event {
        Event {
            v: EVENT_VERSION,
            t: self.t.clone(),
            actor: self.actor.clone(),
            kind,
            item: None,
            via: None,
        }
    }
}

fn check_draft(draft: &Draft) -> Result<()> {
    if draft.title.trim().is_empty() {
        return Err(LibraryError::Invalid("a learning needs a title".into()));
    }
    if draft.title.contains('\n') {
        return Err(LibraryError::Invalid(
            "a learning's title is one line".into(),
        ));
    }
    check_paths(&draft.paths).map_err(LibraryError::Invalid)
}

/// The body as a file holds it: no trailing blank lines, one final newline.
fn normal_body(body: String) -> String {
    let mut body = body.trim_end().to_string();
    if !body.is_empty() {
        body.push('\n');
    }
    body
}

fn wrong(current: &Learning, message: impl Into<String>) -> LibraryError {
    LibraryError::WrongStatus {
        id: current.id(),
        status: current.meta.status,
        message: message.into(),
    }
}

/// The status a proposal (or an update) is written with: in force at once when its kind
/// is auto-accepted, otherwise waiting as `proposed`.
fn proposal_status(accepted: bool) -> LearningStatus {
    if accepted {
        LearningStatus::Accepted
    } else {
        LearningStatus::Proposed
    }
}

impl Library {
    fn auto_accepts(&self, draft: &Draft) -> bool {
        self.settings.auto_accept.contains(&draft.kind)
    }

    /// Writes a learning's current file and bumps the generation (under the lock).
    fn put(&self, learning: &Learning) -> Result<()> {
        self.write(&self.file_of(learning.id()), learning.render().as_bytes())?;
        self.bump_generation()?;
        Ok(())
    }

    /// A new learning: `proposed`, or `accepted` when its kind is in `auto_accept`.
    pub fn propose(&self, draft: Draft, stamp: &Stamp) -> Result<Learning> {
        check_draft(&draft)?;
        let accepted = self.auto_accepts(&draft);
        let _lock = self.lock()?;
        let id = self.next_id()?;
        let learning = Learning {
            meta: Meta {
                id,
                kind: draft.kind,
                title: draft.title.trim().to_string(),
                status: proposal_status(accepted),
                version: 1,
                paths: draft.paths,
                created: stamp.t.clone(),
                updated: stamp.t.clone(),
                replaces: None,
                used: 0,
                last_used: None,
                source: draft.source,
            },
            body: normal_body(draft.body),
        };
        self.put(&learning)?;
        self.journal
            .append_repo(&[stamp.event(EventKind::LearningProposed {
                learning: id,
                version: 1,
                kind: learning.meta.kind,
                title: learning.meta.title.clone(),
                replaces: None,
                accepted,
            })])?;
        Ok(learning)
    }

    /// A new version of accepted learning `id`. Unless its kind is auto-accepted, it
    /// waits as `proposed` and the accepted version stays in force (kept under
    /// `history/`) until it is accepted.
    pub fn propose_update(&self, id: LearningId, draft: Draft, stamp: &Stamp) -> Result<Learning> {
        check_draft(&draft)?;
        let accepted = self.auto_accepts(&draft);
        let _lock = self.lock()?;
        let current = self.read(id)?;
        if current.meta.status != LearningStatus::Accepted {
            let why = match current.meta.replaces {
                Some(_) => "an update already waits; accept or reject it first",
                None => "only an accepted learning takes an update",
            };
            return Err(wrong(&current, why));
        }
        let kept = self.history_versions(id)?;
        let version = kept.last().copied().unwrap_or(0).max(current.meta.version) + 1;
        self.archive(id, current.meta.version)?;
        let learning = Learning {
            meta: Meta {
                kind: draft.kind,
                title: draft.title.trim().to_string(),
                status: proposal_status(accepted),
                version,
                paths: draft.paths,
                updated: stamp.t.clone(),
                replaces: (!accepted).then_some(current.meta.version),
                source: draft.source,
                ..current.meta.clone()
            },
            body: normal_body(draft.body),
        };
        self.put(&learning)?;
        self.journal
            .append_repo(&[stamp.event(EventKind::LearningProposed {
                learning: id,
                version,
                kind: learning.meta.kind,
                title: learning.meta.title.clone(),
                replaces: Some(current.meta.version),
                accepted,
            })])?;
        Ok(learning)
    }

    /// Puts a proposed learning (or update) in force.
    pub fn accept(&self, id: LearningId, stamp: &Stamp) -> Result<Learning> {
        self.set_status(
            id,
            LearningStatus::Proposed,
            LearningStatus::Accepted,
            stamp,
            |v| EventKind::LearningAccepted {
                learning: id,
                version: v,
            },
        )
    }

    /// Turns a proposal down. A rejected update gives way to the version it would have
    /// replaced, restored byte for byte; a rejected new learning leaves the store. Either
    /// way the rejected text is kept under `history/`. Returns what is current after.
    pub fn reject(&self, id: LearningId, stamp: &Stamp) -> Result<Option<Learning>> {
        let _lock = self.lock()?;
        let current = self.read(id)?;
        if current.meta.status != LearningStatus::Proposed {
            return Err(wrong(&current, "only a proposed learning can be rejected"));
        }
        let version = current.meta.version;
        let replaced = current.meta.replaces;
        let after = match replaced {
            Some(old) => {
                let kept = self.history_file(id, old);
                let bytes = std::fs::read(&kept).map_err(super::io(&kept))?;
                // Parse before anything moves, so a damaged history file changes nothing.
                let restored = Learning::parse(&String::from_utf8_lossy(&bytes), &kept)?;
                self.archive(id, version)?;
                self.write(&self.file_of(id), &bytes)?;
                Some(restored)
            }
            None => {
                self.archive(id, version)?;
                let file = self.file_of(id);
                std::fs::remove_file(&file).map_err(super::io(&file))?;
                None
            }
        };
        self.bump_generation()?;
        self.journal
            .append_repo(&[stamp.event(EventKind::LearningRejected {
                learning: id,
                version,
                restored: replaced,
            })])?;
        Ok(after)
    }

    /// Takes an accepted learning out of use; [`Library::restore`] undoes it.
    pub fn retire(
        &self,
        id: LearningId,
        reason: Option<String>,
        stamp: &Stamp,
    ) -> Result<Learning> {
        self.set_status(
            id,
            LearningStatus::Accepted,
            LearningStatus::Retired,
            stamp,
            |v| EventKind::LearningRetired {
                learning: id,
                version: v,
                reason,
            },
        )
    }

    /// Retires every accepted learning no review has used for `after` (counted from its
    /// last use, or from its last change when it was never used), each with a journaled
    /// reason; `hall library retire --undo` puts one back. Returns the ones retired.
    pub fn retire_stale(
        &self,
        now: std::time::SystemTime,
        after: std::time::Duration,
        label: &str,
        stamp: &Stamp,
    ) -> Result<Vec<LearningId>> {
        let mut retired = Vec::new();
        for entry in self.list()?.entries {
            let l = &entry.current;
            if l.meta.status != LearningStatus::Accepted {
                continue;
            }
            let since = l.meta.last_used.as_deref().unwrap_or(&l.meta.updated);
            let idle = crate::clock::parse(since)
                .and_then(|t| now.duration_since(t).ok())
                .is_some_and(|idle| idle > after);
            if !idle {
                continue;
            }
            let what = if l.meta.last_used.is_some() {
                "last used"
            } else {
                "never used since"
            };
            let reason = format!("{what} {since}: unused for more than retire_after ({label})");
            self.retire(l.id(), Some(reason), stamp)?;
            retired.push(l.id());
        }
        Ok(retired)
    }

    /// Puts a retired learning back in force.
    pub fn restore(&self, id: LearningId, stamp: &Stamp) -> Result<Learning> {
        self.set_status(
            id,
            LearningStatus::Retired,
            LearningStatus::Accepted,
            stamp,
            |v| EventKind::LearningRestored {
                learning: id,
                version: v,
            },
        )
    }

    fn set_status(
        &self,
        id: LearningId,
        from: LearningStatus,
        to: LearningStatus,
        stamp: &Stamp,
        event: impl FnOnce(u32) -> EventKind,
    ) -> Result<Learning> {
        let _lock = self.lock()?;
        let current = self.read(id)?;
        if current.meta.status != from {
            return Err(wrong(
                &current,
                format!("only a {from} learning can become {to}"),
            ));
        }
        let learning = Learning {
            meta: Meta {
                status: to,
                // The version an update would replace matters only while it is proposed.
                replaces: None,
                updated: stamp.t.clone(),
                ..current.meta.clone()
            },
            body: current.body.clone(),
        };
        self.put(&learning)?;
        self.journal
            .append_repo(&[stamp.event(event(learning.meta.version))])?;
        Ok(learning)
    }

    /// Counts a review's use of accepted learnings (`used`, `last_used`); ids that are
    /// not accepted are skipped and returned. Not journaled: the verdict names them.
    pub fn record_use(&self, ids: &[LearningId], t: &str) -> Result<Vec<LearningId>> {
        let _lock = self.lock()?;
        let mut skipped = Vec::new();
        let mut changed = false;
        for &id in ids {
            match self.read(id) {
                Ok(mut l) if l.meta.status == LearningStatus::Accepted => {
                    l.meta.used += 1;
                    l.meta.last_used = Some(t.to_string());
                    self.write(&self.file_of(id), l.render().as_bytes())?;
                    changed = true;
                }
                Ok(_) | Err(LibraryError::NotFound(_)) => skipped.push(id),
                Err(e) => return Err(e),
            }
        }
        if changed {
            self.bump_generation()?;
        }
        Ok(skipped)
    }
}
