//! The one place that reads the time.
//!
//! Two readings, for two purposes:
//! - [`Clock::now`] is the time events are stamped with. `HALL_NOW` pins it
//!   (RFC 3339), so tests and snapshots are deterministic; a long-running process (the
//!   daemon) keeps one [`Clock`] and asks it at every pass.
//! - [`wall_secs`] is the real clock, for what must expire while a test holds
//!   `HALL_NOW` still: leases and the daemon's heartbeat. It is never written into an
//!   event.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The time events are stamped with: the system clock, or a pinned instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Clock {
    pinned: Option<SystemTime>,
}

impl Clock {
    /// The system clock, pinned when `HALL_NOW` is set.
    pub fn from_env() -> Clock {
        Clock {
            pinned: std::env::var("HALL_NOW")
                .ok()
                .and_then(|s| humantime::parse_rfc3339_weak(&s).ok()),
        }
    }

    /// A clock that always says `at` (tests).
    pub fn fixed(at: SystemTime) -> Clock {
        Clock { pinned: Some(at) }
    }

    pub fn now(&self) -> SystemTime {
        self.pinned.unwrap_or_else(SystemTime::now)
    }

    /// [`Clock::now`] in the journal's format.
    pub fn stamp(&self) -> String {
        stamp(self.now())
    }
}

/// The current time, or `HALL_NOW` when set.
pub fn now() -> SystemTime {
    Clock::from_env().now()
}

/// Seconds since the Unix epoch on the real clock (leases, heartbeats).
pub fn wall_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// RFC 3339 in UTC with seconds, the journal's time format.
pub fn stamp(t: SystemTime) -> String {
    humantime::format_rfc3339_seconds(t).to_string()
}

/// Parses a journal time.
pub fn parse(s: &str) -> Option<SystemTime> {
    humantime::parse_rfc3339_weak(s).ok()
}

/// Parses a duration such as `30m`, `4h` or `90d`.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    humantime::parse_duration(s)
        .map_err(|e| format!("`{s}` is not a duration ({e}); use e.g. 30m, 4h, 2d"))
}
