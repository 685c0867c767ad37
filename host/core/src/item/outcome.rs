//! What became of each finding a review raised, read from the item's events: fixed,
//! dropped after a dispute, raised again, or still open. `hall history` shows it, and
//! the librarian learns from it (a fixed finding was right; a dispute that stood was a
//! false positive).
//!
//! A finding is settled by the next verdict. If that verdict names it again (the same
//! id, or the same lens on the same file), it stands; otherwise the fixer's word on it
//! says how it went: fixed, disputed, or neither (the reviewer dropped it unasked).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::event::{Event, EventKind, Finding};
use super::sha::Sha;

/// How one finding ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case", tag = "outcome")]
pub enum Outcome {
    /// The fixer fixed it and the next review did not raise it again.
    Fixed { sha: Sha },
    /// The fixer disputed it and the next review let it go.
    DisputeUpheld { reason: String },
    /// The fixer disputed it and the next review raised it again.
    DisputeRejected { reason: String },
    /// The next review did not raise it, though nobody claimed it.
    Dropped,
    /// No later review has settled it (the item is still open, or ended without one).
    Open,
}

/// A finding with the round that raised it first, the rounds that raised it, how it
/// ended, and its words as the last verdict that named it put them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Told {
    pub round: u32,
    /// Every round whose verdict named it.
    pub raised: Vec<u32>,
    /// The id each of those verdicts gave it (reviewers number each verdict afresh).
    pub ids: Vec<String>,
    pub finding: Finding,
    #[serde(flatten)]
    pub outcome: Outcome,
}

/// The fixer's word on a finding since the verdict that raised it.
#[derive(Clone, Default)]
struct Claim {
    fixed: Option<Sha>,
    disputed: Option<String>,
}

/// Every finding the item's reviews raised, oldest first, each once.
pub fn outcomes(events: &[Event]) -> Vec<Told> {
    let mut told: Vec<Told> = Vec::new();
    // Indexes into `told` of the last verdict's findings, with the fixer's claims on
    // them (which name the ids that verdict gave).
    let mut open: Vec<(usize, Claim)> = Vec::new();
    for e in events {
        match &e.kind {
            EventKind::FixSubmitted {
                sha,
                fixed,
                disputed,
            } => {
                for (i, claim) in &mut open {
                    let id = &told[*i].finding.id;
                    // `finding` is the latest verdict's version, so its id is current.
                    if fixed.contains(id) {
                        claim.fixed = Some(sha.clone());
                    }
                    if let Some(d) = disputed.iter().find(|d| &d.finding == id) {
                        claim.disputed = Some(d.reason.clone());
                    }
                }
            }
            EventKind::Verdict {
                round, findings, ..
            } => {
                let earlier: Vec<&Finding> = open.iter().map(|(i, _)| &told[*i].finding).collect();
                let again = pair(findings, &earlier);
                let mut next = Vec::new();
                for (j, (i, claim)) in open.drain(..).enumerate() {
                    let raised = again.contains(&Some(j));
                    told[i].outcome = match (raised, claim.fixed, claim.disputed) {
                        (true, _, Some(reason)) => Outcome::DisputeRejected { reason },
                        (true, _, None) => Outcome::Open,
                        (false, _, Some(reason)) => Outcome::DisputeUpheld { reason },
                        (false, Some(sha), None) => Outcome::Fixed { sha },
                        (false, None, None) => Outcome::Dropped,
                    };
                    if let Some(k) = again.iter().position(|p| *p == Some(j)) {
                        told[i].raised.push(*round);
                        told[i].ids.push(findings[k].id.clone());
                        told[i].finding = findings[k].clone();
                        next.push((i, Claim::default()));
                    }
                }
                for (f, pair) in findings.iter().zip(&again) {
                    if pair.is_some() {
                        continue;
                    }
                    told.push(Told {
                        round: *round,
                        raised: vec![*round],
                        ids: vec![f.id.clone()],
                        finding: f.clone(),
                        outcome: Outcome::Open,
                    });
                    next.push((told.len() - 1, Claim::default()));
                }
                open = next;
            }
            _ => {}
        }
    }
    told
}

/// For each finding of a verdict, the earlier open finding it raises again, if any: the
/// same lens on the same file (reviewers number each verdict afresh, so an id alone
/// proves nothing), the one with the same id first when several match. Each earlier
/// finding is raised by at most one.
fn pair(later: &[Finding], earlier: &[&Finding]) -> Vec<Option<usize>> {
    let mut taken = vec![false; earlier.len()];
    later
        .iter()
        .map(|f| {
            let fits =
                |j: &usize| !taken[*j] && earlier[*j].lens == f.lens && earlier[*j].file == f.file;
            let pick = (0..earlier.len())
                .filter(fits)
                .find(|j| earlier[*j].id == f.id)
                .or_else(|| (0..earlier.len()).find(fits));
            if let Some(j) = pick {
                taken[j] = true;
            }
            pick
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::item::event::{Dispute, EVENT_VERSION};
    use crate::item::{ItemId, Lens, Severity};

    fn finding(id: &str, lens: Lens, file: &str) -> Finding {
        Finding {
            id: id.into(),
            lens,
            severity: Severity::Major,
            file: file.into(),
            line: Some(3),
            scenario: format!("{id} breaks {file}"),
        }
    }

    fn event(kind: EventKind) -> Event {
        Event {
            v: EVENT_VERSION,
            t: "2026-01-01T00:00:00Z".into(),
            actor: "assayer".into(),
            kind,
            item: Some(ItemId(1)),
            via: None,
        }
    }

    fn verdict(round: u32, findings: Vec<Finding>) -> Event {
        event(EventKind::Verdict {
            sha: Sha::new(format!("{round:040}")),
            round,
            approved: findings.is_empty(),
            findings,
            model: None,
            summary: None,
            by: None,
            learnings: Vec::new(),
        })
    }

    fn fix(sha: &str, fixed: &[&str], disputed: &[(&str, &str)]) -> Event {
        event(EventKind::FixSubmitted {
            sha: Sha::new(sha),
            fixed: fixed.iter().map(|s| s.to_string()).collect(),
            disputed: disputed
                .iter()
                .map(|(f, r)| Dispute {
                    finding: f.to_string(),
                    reason: r.to_string(),
                })
                .collect(),
        })
    }

    fn ends(told: &[Told]) -> Vec<(&str, &Outcome, Vec<u32>)> {
        told.iter()
            .map(|t| (t.finding.scenario.as_str(), &t.outcome, t.raised.clone()))
            .collect()
    }

    #[test]
    fn each_finding_ends_fixed_upheld_rejected_dropped_or_open() {
        use Lens::*;
        let events = vec![
            verdict(
                1,
                vec![
                    finding("F1", Correctness, "a.rs"),
                    finding("F2", Security, "b.rs"),
                    finding("F3", Evidence, "c.rs"),
                    finding("F4", Data, "d.rs"),
                ],
            ),
            fix(
                "f1",
                &["F1"],
                &[("F2", "b.rs checks the token"), ("F3", "tested")],
            ),
            // Round 2 numbers afresh: its F1 is round 1's F3 raised again.
            verdict(
                2,
                vec![
                    finding("F1", Evidence, "c.rs"),
                    finding("F2", Operability, "e.rs"),
                ],
            ),
            fix("f2", &[], &[("F1", "the test is in c_test.rs")]),
            verdict(3, vec![finding("F1", Operability, "e.rs")]),
        ];
        let told = outcomes(&events);
        let reason = |r: &str| r.to_string();
        assert_eq!(
            ends(&told),
            [
                (
                    "F1 breaks a.rs",
                    &Outcome::Fixed {
                        sha: Sha::new("f1")
                    },
                    vec![1]
                ),
                (
                    "F2 breaks b.rs",
                    &Outcome::DisputeUpheld {
                        reason: reason("b.rs checks the token")
                    },
                    vec![1]
                ),
                (
                    "F1 breaks c.rs",
                    &Outcome::DisputeUpheld {
                        reason: reason("the test is in c_test.rs")
                    },
                    vec![1, 2]
                ),
                ("F4 breaks d.rs", &Outcome::Dropped, vec![1]),
                ("F1 breaks e.rs", &Outcome::Open, vec![2, 3]),
            ]
        );
    }

    #[test]
    fn a_dispute_the_next_review_refuses_is_rejected_and_stays_open() {
        let events = vec![
            verdict(1, vec![finding("F1", Lens::Security, "auth.rs")]),
            fix("f1", &[], &[("F1", "not reachable")]),
            verdict(2, vec![finding("F7", Lens::Security, "auth.rs")]),
        ];
        let told = outcomes(&events);
        assert_eq!(told.len(), 1);
        assert_eq!(
            told[0].outcome,
            Outcome::DisputeRejected {
                reason: "not reachable".into()
            }
        );
        assert_eq!(told[0].raised, [1, 2]);
        assert_eq!(told[0].finding.id, "F7");
    }

    #[test]
    fn two_findings_on_one_file_are_told_apart_by_id() {
        let events = vec![
            verdict(
                1,
                vec![
                    finding("F1", Lens::Correctness, "a.rs"),
                    finding("F2", Lens::Correctness, "a.rs"),
                ],
            ),
            fix("f1", &["F1"], &[]),
            verdict(2, vec![finding("F2", Lens::Correctness, "a.rs")]),
        ];
        let told = outcomes(&events);
        assert_eq!(
            told[0].outcome,
            Outcome::Fixed {
                sha: Sha::new("f1")
            }
        );
        assert_eq!(told[1].outcome, Outcome::Open);
        assert_eq!(told[1].raised, [1, 2]);
    }
}
