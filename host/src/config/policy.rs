//! `[policy]`: the tool-call policy's settings as a file gives them. How the base
//! branch's and the user's files combine (the one may only relax, the other only
//! tighten) is `crate::hall::tool_policy`'s.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How `hall` treats what a tool-call policy detector decides, weakest first.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum PolicyMode {
    /// The detector does not run.
    Off,
    /// A block becomes a nudge to the agent, logged as a would-block.
    Observe,
    /// The detector's answer stands: it may deny a call or ask a person.
    Enforce,
}

/// The detectors of the built-in tool-policy room, with their default thresholds:
/// name, count to nudge at, count to block at.
pub const POLICY_DETECTORS: [(&str, u32, u32); 4] = [
    ("repetition", 3, 5),
    ("oscillation", 2, 3),
    ("error-streak", 4, 6),
    ("same-failure", 2, 3),
];

/// The most past calls a session's window may keep.
pub const POLICY_WINDOW_MAX: u32 = 200;

/// One detector's settings; a key left out keeps the value from below.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct DetectorConfig {
    /// `observe`, `enforce` or `off`.
    pub mode: Option<PolicyMode>,
    /// The count at which the detector nudges (at least 2).
    pub nudge_at: Option<u32>,
    /// The count at which it blocks (at least `nudge_at`).
    pub block_at: Option<u32>,
}

/// The tool-call policy. In `.hallmark.toml` (read from the base branch) it may only
/// relax the defaults; in the user's `config.toml` it may only tighten them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Policy {
    /// `observe` (a block becomes a nudge, logged), `enforce` or `off`, for every
    /// detector without a mode of its own. Unset in a file means "no change".
    pub mode: Option<PolicyMode>,
    /// How many of a session's past calls the detectors see (1 to 200).
    pub window: Option<u32>,
    /// Tools, besides the built-in list, that only read: repetition and oscillation
    /// leave them alone.
    pub read_only_tools: Vec<String>,
    /// Per detector (`repetition`, `oscillation`, `error-streak`, `same-failure`):
    /// `mode`, `nudge_at`, `block_at`.
    pub detectors: BTreeMap<String, DetectorConfig>,
}

impl Policy {
    /// Checks the values a file gave; `custom_room` allows detector names the built-in
    /// room doesn't have (a repository's own room may define more).
    pub fn validate(&self, custom_room: bool) -> std::result::Result<(), String> {
        if let Some(w) = self.window
            && !(1..=POLICY_WINDOW_MAX).contains(&w)
        {
            return Err(format!(
                "policy.window: {w} is not between 1 and {POLICY_WINDOW_MAX}"
            ));
        }
        for (name, d) in &self.detectors {
            let known = POLICY_DETECTORS.iter().any(|(n, _, _)| n == name);
            if !known && !custom_room {
                let names: Vec<&str> = POLICY_DETECTORS.iter().map(|(n, _, _)| *n).collect();
                return Err(format!(
                    "policy.detectors: `{name}` is not a detector ({})",
                    names.join(", ")
                ));
            }
            if d.nudge_at.is_some_and(|n| n < 2) {
                return Err(format!(
                    "policy.detectors.{name}.nudge_at: at least 2 (1 would nudge on every call)"
                ));
            }
            if let (Some(n), Some(b)) = (d.nudge_at, d.block_at)
                && b < n
            {
                return Err(format!(
                    "policy.detectors.{name}.block_at: {b} is below nudge_at ({n})"
                ));
            }
            if d.block_at.is_some_and(|b| b < 2) {
                return Err(format!("policy.detectors.{name}.block_at: at least 2"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::Config;
    use super::*;

    fn parse(text: &str) -> Result<Config, super::super::ConfigError> {
        Config::parse(text, std::path::Path::new("/r/.hallmark.toml"))
    }

    #[test]
    fn policy_keys_are_strict_and_name_what_is_wrong() {
        let c = parse(
            "[policy]\nmode = \"off\"\nwindow = 12\nread_only_tools = [\"mcp__docs__search\"]\n[policy.detectors.repetition]\nmode = \"enforce\"\nblock_at = 8\n",
        )
        .expect("parses");
        assert_eq!(c.policy.mode, Some(PolicyMode::Off));
        assert_eq!(c.policy.window, Some(12));
        assert_eq!(c.policy.detectors["repetition"].block_at, Some(8));
        for (text, needle) in [
            ("[policy]\nmode = \"loud\"", "line 2"),
            ("[policy]\nwindow = 0", "policy.window"),
            ("[policy]\nwindow = 201", "policy.window"),
            (
                "[policy.detectors.repitition]\nmode = \"off\"",
                "repitition",
            ),
            ("[policy.detectors.repetition]\nnudge_at = 1", "nudge_at"),
            (
                "[policy.detectors.repetition]\nnudge_at = 4\nblock_at = 3",
                "below nudge_at",
            ),
            ("[policy.detectors.repetition]\nblock = 3", "block"),
        ] {
            let err = parse(text).unwrap_err();
            assert!(err.message.contains(needle), "{text}: {}", err.message);
        }
        // A repository's own room may name detectors of its own.
        parse("[rooms]\ntool-policy = \"p.wasm\"\n[policy.detectors.churn]\nmode = \"enforce\"")
            .expect("a custom room's detector");
    }
}
