//! The review's vocabulary: the seven lenses, the four severities and a finding.
//!
//! Defined once, here. The verdict schema the reviewer answers with is generated from
//! these types, the journal records them, the host converts them to and from the
//! verdict world's WIT types at one boundary (`rooms/bindings.rs`), and the room SDK's
//! rules read their ids and names from here too.

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

// The id is kebab-case (`first-principles`), as the verdict schema and the WIT spell
// it; journals written before the ids were unified hold `first_principles` and
// `repo_rules`, which still decode. The doc comments here are the schema's
// descriptions, which the reviewer reads.
/// A way of looking at a change; every review applies all seven.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Lens {
    /// Is this the simplest change, in the right layer?
    #[serde(alias = "first_principles")]
    FirstPrinciples,
    /// Edge cases, errors, concurrency, idempotency, retries.
    Correctness,
    /// Authorization, isolation, secrets, injection.
    Security,
    /// Reversible and safe on live data?
    Data,
    /// Do the tests prove it? Did the test count drop?
    Evidence,
    /// Can someone on call see it fail and recover?
    Operability,
    /// CLAUDE.md, AGENTS.md and the rule files they list.
    #[serde(alias = "repo_rules")]
    RepoRules,
}

impl Lens {
    /// Every lens, in the order a review lists them.
    pub const ALL: [Lens; 7] = [
        Lens::FirstPrinciples,
        Lens::Correctness,
        Lens::Security,
        Lens::Data,
        Lens::Evidence,
        Lens::Operability,
        Lens::RepoRules,
    ];

    /// The id the schema, the journal and the WIT use (`repo-rules`).
    pub fn id(self) -> &'static str {
        match self {
            Lens::FirstPrinciples => "first-principles",
            Lens::Correctness => "correctness",
            Lens::Security => "security",
            Lens::Data => "data",
            Lens::Evidence => "evidence",
            Lens::Operability => "operability",
            Lens::RepoRules => "repo-rules",
        }
    }

    /// The name people read (`Security & tenancy`).
    pub fn title(self) -> &'static str {
        match self {
            Lens::FirstPrinciples => "First principles",
            Lens::Correctness => "Correctness",
            Lens::Security => "Security & tenancy",
            Lens::Data => "Data & migrations",
            Lens::Evidence => "Evidence",
            Lens::Operability => "Operability",
            Lens::RepoRules => "Repo rules",
        }
    }

    /// Reads a lens written by a person or a model: its id in any case, with `-`, `_`
    /// or spaces between the words, or its title (`Security & tenancy`, `data and
    /// migrations`).
    pub fn from_text(text: &str) -> Option<Lens> {
        let words: Vec<String> = text
            .to_ascii_lowercase()
            .split(|c: char| !c.is_ascii_alphanumeric())
            .filter(|w| !w.is_empty() && *w != "and")
            .map(str::to_string)
            .collect();
        let words: Vec<&str> = words.iter().map(String::as_str).collect();
        Some(match words.as_slice() {
            ["first", "principles"] => Lens::FirstPrinciples,
            ["correctness"] => Lens::Correctness,
            ["security"] | ["security", "tenancy"] => Lens::Security,
            ["data"] | ["data", "migrations"] => Lens::Data,
            ["evidence"] => Lens::Evidence,
            ["operability"] => Lens::Operability,
            ["repo", "rules"] => Lens::RepoRules,
            _ => return None,
        })
    }
}

impl fmt::Display for Lens {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

/// How much a finding matters. Approval means no blocker and no major.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Must not merge: wrong, unsafe or data-losing.
    Blocker,
    /// Must be fixed before approval.
    Major,
    /// Worth fixing; does not block approval.
    Minor,
    /// Taste; never blocks.
    Nit,
}

impl Severity {
    /// Every severity, most serious first.
    pub const ALL: [Severity; 4] = [
        Severity::Blocker,
        Severity::Major,
        Severity::Minor,
        Severity::Nit,
    ];

    pub fn id(self) -> &'static str {
        match self {
            Severity::Blocker => "blocker",
            Severity::Major => "major",
            Severity::Minor => "minor",
            Severity::Nit => "nit",
        }
    }

    /// Whether a finding of this severity stands in the way of approval.
    pub fn blocks_approval(self) -> bool {
        matches!(self, Severity::Blocker | Severity::Major)
    }

    /// Reads a severity in any case.
    pub fn from_text(text: &str) -> Option<Severity> {
        let t = text.trim().to_ascii_lowercase();
        Severity::ALL.into_iter().find(|s| s.id() == t)
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

/// A reviewer's finding, as recorded in a verdict: numbered per item (`F1`, `F2`…).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Finding {
    pub id: String,
    pub lens: Lens,
    pub severity: Severity,
    pub file: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    pub scenario: String,
}

impl Finding {
    /// `file:line`, or the file alone when the finding has no line.
    pub fn location(&self) -> String {
        match self.line {
            Some(l) => format!("{}:{l}", self.file),
            None => self.file.clone(),
        }
    }
}

/// One line for an agent or a person: `F1 [major, correctness] src/a.rs:3: scenario`.
impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} [{}, {}] {}: {}",
            self.id,
            self.severity,
            self.lens,
            self.location(),
            self.scenario
        )
    }
}

/// A fixer's dispute of a finding.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Dispute {
    pub finding: String,
    pub reason: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_lens_reads_back_from_its_id_its_title_and_the_old_spelling() {
        for lens in Lens::ALL {
            assert_eq!(Lens::from_text(lens.id()), Some(lens));
            assert_eq!(Lens::from_text(lens.title()), Some(lens));
            assert_eq!(Lens::from_text(&lens.id().replace('-', "_")), Some(lens));
            let json = serde_json::to_string(&lens).unwrap();
            assert_eq!(json, format!("\"{}\"", lens.id()));
            let old = format!("\"{}\"", lens.id().replace('-', "_"));
            assert_eq!(serde_json::from_str::<Lens>(&old).unwrap(), lens);
        }
        assert_eq!(Lens::from_text("data and migrations"), Some(Lens::Data));
        assert_eq!(Lens::from_text("style"), None);
    }

    #[test]
    fn only_blockers_and_majors_block() {
        let blocking: Vec<Severity> = Severity::ALL
            .into_iter()
            .filter(|s| s.blocks_approval())
            .collect();
        assert_eq!(blocking, [Severity::Blocker, Severity::Major]);
        assert_eq!(Severity::from_text(" Major "), Some(Severity::Major));
    }
}
