//! Leases: one worker per item, and no more workers per phase than `[parallel]` allows.
//!
//! A lease is a small file under `leases/`, written and read under one lock. It names
//! its holder, the holder's process and an expiry on the wall clock
//! ([`crate::clock::wall_secs`], never `HALL_NOW`, which tests freeze). A lease whose time ran out, or whose process is known to have
//! exited, is free again, so a daemon killed mid-pass loses nothing: the work is taken
//! up by the next one, and the journal's transition checks keep it from being done twice.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{Phase, Role};
use crate::error::{HallError, IoContext, Result};
use crate::item::ItemId;

/// How long a lease lasts without renewal (`HALL_LEASE_TTL` overrides, e.g. `5s`).
pub fn ttl() -> Duration {
    std::env::var("HALL_LEASE_TTL")
        .ok()
        .and_then(|v| crate::clock::parse_duration(&v).ok())
        .unwrap_or(Duration::from_secs(120))
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Lease {
    pub item: ItemId,
    /// Who does the step.
    pub role: Role,
    /// What `[parallel]` counts.
    pub phase: Phase,
    pub holder: String,
    /// The holding process, or 0 for an agent's lease from `hall next`, which outlives
    /// the command that took it and ends only by expiry or release.
    pub pid: u32,
    /// Seconds since the Unix epoch.
    pub taken: u64,
    pub expires: u64,
}

impl Lease {
    /// Unexpired, and its process (when it names one; `hall next` leases don't) lives.
    pub fn live(&self, now: u64) -> bool {
        self.expires > now && (self.pid == 0 || !crate::platform::process_gone(self.pid))
    }
}

/// What a claim found.
#[derive(Debug)]
pub enum Claim {
    Taken(Lease),
    /// Someone else holds the item.
    Held(Lease),
    /// The phase is at its `[parallel]` limit.
    Full {
        phase: Phase,
        limit: u32,
    },
}

/// A repository-wide worker's lease (the merger's, the notify worker's): an exclusive
/// lock on `leases/<name>.lock`, held while the returned file lives. The system drops it
/// when the process ends, however it ends, so a killed daemon leaves nothing to expire.
/// `None` while another process holds it.
pub fn exclusive(root: &Path, name: &str) -> Result<Option<std::fs::File>> {
    crate::hall::lock::try_now(&dir(root).join(format!("{name}.lock")))
}

/// Seconds since the epoch on the wall clock, which leases expire by.
pub fn unix_now() -> u64 {
    crate::clock::wall_secs()
}

fn dir(root: &Path) -> PathBuf {
    root.join("leases")
}

fn file(root: &Path, id: ItemId) -> PathBuf {
    dir(root).join(format!("{id}.json"))
}

fn locked(root: &Path) -> Result<std::fs::File> {
    crate::hall::lock::wait(&dir(root).join(".lock"))
}

fn read(path: &Path) -> Option<Lease> {
    std::fs::read(path)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
}

/// Every lease still live.
pub fn live(root: &Path) -> Vec<Lease> {
    let now = unix_now();
    let Ok(entries) = std::fs::read_dir(dir(root)) else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok())
        .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
        .filter_map(|e| read(&e.path()))
        .filter(|l| l.live(now))
        .collect()
}

/// The item's live lease, if any.
pub fn current(root: &Path, id: ItemId) -> Option<Lease> {
    read(&file(root, id)).filter(|l| l.live(unix_now()))
}

/// What a claim asks for: the phase `[parallel]` counts, and its limit.
pub struct Want {
    pub phase: Phase,
    pub limit: u32,
}

/// Claims `id` for `holder` in `phase`, unless another live holder has it or the
/// phase is full. Claiming again as the same holder renews the lease.
pub fn claim(
    root: &Path,
    id: ItemId,
    want: &Want,
    holder: &str,
    pid: u32,
    ttl: Duration,
) -> Result<Claim> {
    let Want { phase, limit } = *want;
    let _lock = locked(root)?;
    let now = unix_now();
    if let Some(l) = read(&file(root, id))
        && l.live(now)
        && l.holder != holder
    {
        return Ok(Claim::Held(l));
    }
    let busy = live(root)
        .iter()
        .filter(|l| l.phase == phase && l.item != id)
        .count() as u32;
    if busy >= limit.max(1) {
        return Ok(Claim::Full {
            phase,
            limit: limit.max(1),
        });
    }
    let lease = Lease {
        item: id,
        role: phase.role(),
        phase,
        holder: holder.to_string(),
        pid,
        taken: now,
        expires: now + ttl.as_secs().max(1),
    };
    let bytes = serde_json::to_vec(&lease).map_err(HallError::internal)?;
    let path = file(root, id);
    crate::journal::file::write_atomic(&path, &bytes).at(&path)?;
    Ok(Claim::Taken(lease))
}

/// Gives the item back, if `holder` still has it.
pub fn release(root: &Path, id: ItemId, holder: &str) -> Result<()> {
    let _lock = locked(root)?;
    let path = file(root, id);
    if read(&path).is_some_and(|l| l.holder == holder) {
        match std::fs::remove_file(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(HallError::io(&path, e)),
        }
    }
    Ok(())
}

/// Pushes back the expiry of every lease `holder` has.
pub fn renew(root: &Path, holder: &str, ttl: Duration) -> Result<()> {
    let _lock = locked(root)?;
    let now = unix_now();
    for mut l in live(root).into_iter().filter(|l| l.holder == holder) {
        l.expires = now + ttl.as_secs().max(1);
        let bytes = serde_json::to_vec(&l).map_err(HallError::internal)?;
        let path = file(root, l.item);
        crate::journal::file::write_atomic(&path, &bytes).at(&path)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_holder_per_item_and_phases_are_capped() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let ttl = Duration::from_secs(60);
        assert!(matches!(
            claim(
                root,
                ItemId(1),
                &Want {
                    phase: Phase::Review,
                    limit: 1
                },
                "a",
                std::process::id(),
                ttl
            )
            .unwrap(),
            Claim::Taken(_)
        ));
        assert!(matches!(
            claim(root, ItemId(1), &Want { phase: Phase::Review, limit: 1 }, "b", std::process::id(), ttl).unwrap(),
            Claim::Held(l) if l.holder == "a"
        ));
        assert!(matches!(
            claim(
                root,
                ItemId(2),
                &Want {
                    phase: Phase::Review,
                    limit: 1
                },
                "b",
                std::process::id(),
                ttl
            )
            .unwrap(),
            Claim::Full { limit: 1, .. }
        ));
        assert!(matches!(
            claim(
                root,
                ItemId(2),
                &Want {
                    phase: Phase::Checks,
                    limit: 1
                },
                "b",
                std::process::id(),
                ttl
            )
            .unwrap(),
            Claim::Taken(_)
        ));
        release(root, ItemId(1), "b").unwrap();
        assert!(
            current(root, ItemId(1)).is_some(),
            "only the holder releases"
        );
        release(root, ItemId(1), "a").unwrap();
        assert!(current(root, ItemId(1)).is_none());
    }

    #[test]
    fn a_lease_of_a_dead_process_is_free() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        let lease = Lease {
            item: ItemId(3),
            role: Role::Assayer,
            phase: Phase::Review,
            holder: "dead".into(),
            pid,
            taken: unix_now(),
            expires: unix_now() + 600,
        };
        std::fs::create_dir_all(root.join("leases")).unwrap();
        std::fs::write(file(root, ItemId(3)), serde_json::to_vec(&lease).unwrap()).unwrap();
        assert!(matches!(
            claim(
                root,
                ItemId(3),
                &Want {
                    phase: Phase::Review,
                    limit: 1
                },
                "alive",
                std::process::id(),
                Duration::from_secs(60)
            )
            .unwrap(),
            Claim::Taken(_)
        ));
    }
}
