//! The facts the page prints, read from the item's journal and nowhere else: dates,
//! commits, the rounds with their checks and verdicts, the findings, the costs and the
//! plates. Pure: events in, facts out.

use std::collections::BTreeMap;

use crate::item::outcome::{Told, outcomes};
use crate::item::{Event, EventKind, Item, fold};

/// Tokens and cost spent by one role.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Spend {
    pub input: u64,
    pub output: u64,
    pub cache: u64,
    pub cost_usd: f64,
    pub runs: u64,
}

/// One check as a round ran it.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckLine {
    pub check: String,
    pub passed: bool,
}

/// A verdict as a round recorded it.
#[derive(Clone, Debug, PartialEq)]
pub struct VerdictLine {
    pub approved: bool,
    pub findings: usize,
    /// `you` for a person's override, `carried` across a rebase.
    pub by: Option<String>,
}

/// One review round: what was frozen, what the checks and the reviewer said, and the
/// commit that answered it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Round {
    pub n: u32,
    pub sha: String,
    pub checks: Vec<CheckLine>,
    /// The checks' outcome at this round's commit, when recorded.
    pub checks_passed: Option<bool>,
    pub verdict: Option<VerdictLine>,
    /// The fix submitted in answer to this round (it starts the next).
    pub fix: Option<String>,
}

/// A plate: a file copied into `plates/`, or a link.
#[derive(Clone, Debug, PartialEq)]
pub struct Plate {
    pub file: Option<String>,
    pub url: Option<String>,
    pub caption: Option<String>,
    pub bytes: u64,
    pub from: String,
}

/// Everything the page prints from the journal.
#[derive(Clone, Debug, Default)]
pub struct Facts {
    pub item: Item,
    pub created: String,
    pub hallmarked: Option<(String, String)>,
    pub shipped: Option<String>,
    /// When the PR (or, for a part, the branch) merged.
    pub merged: Option<String>,
    /// Closed without merging, when.
    pub closed_unmerged: Option<String>,
    pub rounds: Vec<Round>,
    /// Every finding the reviews raised, once, with what became of it.
    pub findings: Vec<Told>,
    pub spend: BTreeMap<String, Spend>,
    pub plates: Vec<Plate>,
}

impl Facts {
    /// Reads the facts from an item's events, oldest first.
    pub fn of(events: &[Event]) -> Facts {
        let mut f = Facts {
            item: fold(events),
            ..Facts::default()
        };
        f.created = f.item.created.clone();
        for e in events {
            let t = &e.t;
            match &e.kind {
                EventKind::Ready { sha, round, .. } => f.rounds.push(Round {
                    n: *round,
                    sha: sha.as_str().to_string(),
                    ..Round::default()
                }),
                EventKind::FixSubmitted { sha, .. } => {
                    let n = match f.rounds.last_mut() {
                        Some(r) => {
                            r.fix = Some(sha.as_str().to_string());
                            r.n.saturating_add(1)
                        }
                        None => 1,
                    };
                    f.rounds.push(Round {
                        n,
                        sha: sha.as_str().to_string(),
                        ..Round::default()
                    });
                }
                EventKind::CheckRun {
                    check, exit_code, ..
                } => {
                    if let Some(r) = f.rounds.last_mut() {
                        let passed = *exit_code == 0;
                        // A check run twice in a round (a retry) keeps its last outcome.
                        match r.checks.iter_mut().find(|c| c.check == *check) {
                            Some(c) => c.passed = passed,
                            None => r.checks.push(CheckLine {
                                check: check.clone(),
                                passed,
                            }),
                        }
                    }
                }
                EventKind::ChecksPassed { .. } => {
                    if let Some(r) = f.rounds.last_mut() {
                        r.checks_passed = Some(true);
                    }
                }
                EventKind::ChecksFailed { failed, .. } => {
                    if let Some(r) = f.rounds.last_mut() {
                        r.checks_passed = Some(false);
                        for check in failed {
                            if !r.checks.iter().any(|c| c.check == *check) {
                                r.checks.push(CheckLine {
                                    check: check.clone(),
                                    passed: false,
                                });
                            }
                        }
                    }
                }
                EventKind::Verdict {
                    approved,
                    findings,
                    by,
                    ..
                } => {
                    if let Some(r) = f.rounds.last_mut() {
                        r.verdict = Some(VerdictLine {
                            approved: *approved,
                            findings: findings.len(),
                            by: by.clone(),
                        });
                    }
                }
                EventKind::Hallmarked { sha, .. } => {
                    f.hallmarked = Some((t.clone(), sha.as_str().to_string()));
                }
                EventKind::Shipped { .. } => f.shipped = Some(t.clone()),
                EventKind::Delivered { merged: true, .. } | EventKind::Merged { .. } => {
                    f.merged = Some(t.clone());
                }
                EventKind::PrMerged { .. } => {
                    f.merged.get_or_insert_with(|| t.clone());
                }
                EventKind::Delivered { merged: false, .. } => f.closed_unmerged = Some(t.clone()),
                EventKind::Usage(u) => {
                    let s = f.spend.entry(u.role.clone()).or_default();
                    s.input = s.input.saturating_add(u.input);
                    s.output = s.output.saturating_add(u.output);
                    s.cache = s
                        .cache
                        .saturating_add(u.cache_read)
                        .saturating_add(u.cache_write);
                    s.cost_usd += u.cost_usd;
                    s.runs += 1;
                }
                EventKind::Attached {
                    file,
                    url,
                    caption,
                    bytes,
                    from,
                } => f.plates.push(Plate {
                    file: file.clone(),
                    url: url.clone(),
                    caption: caption.clone(),
                    bytes: *bytes,
                    from: from.clone(),
                }),
                _ => {}
            }
        }
        f.findings = outcomes(events);
        f
    }

    /// The whole spend: tokens (input, output and cache) and dollars.
    pub fn total(&self) -> (u64, f64) {
        self.spend.values().fold((0u64, 0.0), |(tokens, usd), s| {
            (
                tokens
                    .saturating_add(s.input)
                    .saturating_add(s.output)
                    .saturating_add(s.cache),
                usd + s.cost_usd,
            )
        })
    }
}
