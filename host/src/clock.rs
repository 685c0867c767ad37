//! The one place that reads the clock. `HALL_NOW` pins it (RFC 3339), so tests and
//! snapshots are deterministic.

use std::time::{Duration, SystemTime};

/// The current time, or `HALL_NOW` when set.
pub fn now() -> SystemTime {
    std::env::var("HALL_NOW")
        .ok()
        .and_then(|s| humantime::parse_rfc3339_weak(&s).ok())
        .unwrap_or_else(SystemTime::now)
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
