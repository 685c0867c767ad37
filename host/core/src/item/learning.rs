//! The Library's vocabulary: what kind a learning is and where it stands. Pure data,
//! shared by the learning files, the journal's `learning_*` events and the config's
//! `[library] auto_accept`.

use std::fmt;
use std::str::FromStr;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What a learning teaches a review.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum LearningKind {
    /// From a finding that turned out right.
    Rule,
    /// What not to flag, and why.
    FalsePositive,
    /// What a module does.
    Map,
    /// A person's ruling on an escalation.
    Decision,
}

impl LearningKind {
    pub const ALL: [LearningKind; 4] = [
        LearningKind::Rule,
        LearningKind::FalsePositive,
        LearningKind::Map,
        LearningKind::Decision,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            LearningKind::Rule => "rule",
            LearningKind::FalsePositive => "false-positive",
            LearningKind::Map => "map",
            LearningKind::Decision => "decision",
        }
    }
}

impl fmt::Display for LearningKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for LearningKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        LearningKind::ALL
            .into_iter()
            .find(|k| k.as_str() == s)
            .ok_or_else(|| {
                format!("`{s}` is not a learning kind (rule, false-positive, map or decision)")
            })
    }
}

/// Where a learning stands: waiting for a person, in force, or out of use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LearningStatus {
    Proposed,
    Accepted,
    Retired,
}

impl LearningStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            LearningStatus::Proposed => "proposed",
            LearningStatus::Accepted => "accepted",
            LearningStatus::Retired => "retired",
        }
    }
}

impl fmt::Display for LearningStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_spell_the_same_in_text_and_serde() {
        for kind in LearningKind::ALL {
            let json = serde_json::to_string(&kind).expect("serializes");
            assert_eq!(json, format!("\"{kind}\""));
            assert_eq!(kind.as_str().parse::<LearningKind>(), Ok(kind));
        }
        assert!("rules".parse::<LearningKind>().is_err());
    }
}
