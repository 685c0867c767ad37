//! The generated wasmtime bindings, one module per world, and the conversions
//! between their types and the plain types in `types.rs`.
//!
//! Kept private so that nothing outside `rooms` depends on generated code: a new
//! WIT version adds a module here and conversions into the same plain types.

use super::types as plain;

pub(crate) mod gates {
    wasmtime::component::bindgen!({ path: "../wit", world: "gates-room" });
    pub(crate) use exports::hall::rooms::gates as api;
}

pub(crate) mod verdict {
    wasmtime::component::bindgen!({ path: "../wit", world: "verdict-room" });
    pub(crate) use exports::hall::rooms::verdict as api;
}

pub(crate) mod merger {
    wasmtime::component::bindgen!({ path: "../wit", world: "merger-room" });
    pub(crate) use exports::hall::rooms::merger as api;
}

pub(crate) mod condense {
    wasmtime::component::bindgen!({ path: "../wit", world: "condense-room" });
    pub(crate) use exports::hall::rooms::condense as api;
}

macro_rules! failure_from {
    ($($module:ident),*) => {$(
        impl From<$module::api::Failure> for plain::Failure {
            fn from(f: $module::api::Failure) -> Self {
                Self { message: f.message, problems: f.problems }
            }
        }
    )*};
}
failure_from!(gates, verdict, merger, condense);

// ---------------------------------------------------------------- gates

impl From<&plain::GatesInput> for gates::api::GatesInput {
    fn from(i: &plain::GatesInput) -> Self {
        Self {
            files: i.files.clone(),
            manifests: i
                .manifests
                .iter()
                .map(|m| gates::api::Manifest {
                    path: m.path.clone(),
                    content: m.content.clone(),
                })
                .collect(),
        }
    }
}

impl From<gates::api::GateReport> for plain::GateReport {
    fn from(r: gates::api::GateReport) -> Self {
        Self {
            gates: r
                .gates
                .into_iter()
                .map(|g| plain::Gate {
                    command: g.command,
                    source: g.source,
                })
                .collect(),
            notes: r.notes,
        }
    }
}

// ---------------------------------------------------------------- verdict

impl From<verdict::api::Lens> for plain::Lens {
    fn from(l: verdict::api::Lens) -> Self {
        use verdict::api::Lens as W;
        match l {
            W::FirstPrinciples => Self::FirstPrinciples,
            W::Correctness => Self::Correctness,
            W::Security => Self::Security,
            W::Data => Self::Data,
            W::Evidence => Self::Evidence,
            W::Operability => Self::Operability,
            W::RepoRules => Self::RepoRules,
        }
    }
}

impl From<verdict::api::Severity> for plain::Severity {
    fn from(s: verdict::api::Severity) -> Self {
        use verdict::api::Severity as W;
        match s {
            W::Blocker => Self::Blocker,
            W::Major => Self::Major,
            W::Minor => Self::Minor,
            W::Nit => Self::Nit,
        }
    }
}

impl From<verdict::api::CheckedVerdict> for plain::CheckedVerdict {
    fn from(v: verdict::api::CheckedVerdict) -> Self {
        Self {
            approved: v.approved,
            summary: v.summary,
            lenses: v.lenses.into_iter().map(Into::into).collect(),
            findings: v
                .findings
                .into_iter()
                .map(|f| plain::Finding {
                    lens: f.lens.into(),
                    severity: f.severity.into(),
                    file: f.file,
                    line: f.line,
                    scenario: f.scenario,
                })
                .collect(),
            learnings_used: v.learnings_used,
            blockers: v.blockers,
            majors: v.majors,
            minors: v.minors,
            nits: v.nits,
        }
    }
}

// ---------------------------------------------------------------- merger

impl From<plain::CiState> for merger::api::CiState {
    fn from(c: plain::CiState) -> Self {
        use plain::CiState as P;
        match c {
            P::Green => Self::Green,
            P::Red => Self::Red,
            P::Pending => Self::Pending,
            P::Missing => Self::Missing,
            P::Abandoned => Self::Abandoned,
        }
    }
}

impl From<plain::MergeableState> for merger::api::MergeableState {
    fn from(m: plain::MergeableState) -> Self {
        use plain::MergeableState as P;
        match m {
            P::Mergeable => Self::Mergeable,
            P::Conflicting => Self::Conflicting,
            P::Unknown => Self::Unknown,
        }
    }
}

impl From<&plain::PrFacts> for merger::api::PrFacts {
    fn from(p: &plain::PrFacts) -> Self {
        Self {
            number: p.number,
            head_sha: p.head_sha.clone(),
            hallmark_sha: p.hallmark_sha.clone(),
            mergeable: p.mergeable.into(),
            ci: p.ci.into(),
            changes_requested: p.changes_requested,
            review_requests: p.review_requests.clone(),
            body: p.body.clone(),
            stacked_on: p.stacked_on,
            files: p.files.clone(),
            base_commits: p
                .base_commits
                .iter()
                .map(|c| merger::api::BaseCommit {
                    sha: c.sha.clone(),
                    files: c.files.clone(),
                })
                .collect(),
            rebasing: p.rebasing,
            lit_cleared: p.lit_cleared,
        }
    }
}

impl From<&plain::MergerInput> for merger::api::MergerInput {
    fn from(i: &plain::MergerInput) -> Self {
        Self {
            settings: merger::api::MergeSettings {
                require_ci: i.settings.require_ci,
                update: match i.settings.update {
                    plain::UpdateMode::Files => merger::api::UpdateMode::Files,
                    plain::UpdateMode::Conflicts => merger::api::UpdateMode::Conflicts,
                },
                lit: i.settings.lit.clone(),
            },
            bases: i
                .bases
                .iter()
                .map(|b| merger::api::BaseQueue {
                    base: b.base.clone(),
                    tip_ci: b.tip_ci.into(),
                    merge_in_flight: b.merge_in_flight,
                    prs: b.prs.iter().map(Into::into).collect(),
                })
                .collect(),
            open_prs: i.open_prs.clone(),
        }
    }
}

impl From<merger::api::MergerPlan> for plain::MergerPlan {
    fn from(p: merger::api::MergerPlan) -> Self {
        Self {
            bases: p
                .bases
                .into_iter()
                .map(|b| plain::BasePlan {
                    base: b.base,
                    line_stopped: b.line_stopped,
                    decisions: b
                        .decisions
                        .into_iter()
                        .map(|d| plain::Decision {
                            number: d.number,
                            action: match d.action {
                                merger::api::Action::Merge => plain::Action::Merge,
                                merger::api::Action::Rebase => plain::Action::Rebase,
                                merger::api::Action::Wait => plain::Action::Wait,
                                merger::api::Action::Hold => plain::Action::Hold,
                            },
                            waits_for: d.waits_for,
                            reasons: d.reasons,
                        })
                        .collect(),
                })
                .collect(),
        }
    }
}

// ---------------------------------------------------------------- condense

impl From<&plain::CondenseInput> for condense::api::CondenseInput {
    fn from(i: &plain::CondenseInput) -> Self {
        Self {
            command: i.command.clone(),
            exit_code: i.exit_code,
            output: i.output.clone(),
            log: i.log.clone(),
        }
    }
}

impl From<condense::api::Condensed> for plain::Condensed {
    fn from(c: condense::api::Condensed) -> Self {
        Self {
            text: c.text,
            filter: c.filter,
            stats: plain::CondenseStats {
                bytes_in: c.stats.bytes_in,
                bytes_out: c.stats.bytes_out,
                lines_in: c.stats.lines_in,
                lines_out: c.stats.lines_out,
            },
        }
    }
}
