//! `hall:rooms@0.8`, the current line, bound from `wit/`: its worlds, and the
//! conversions between their types and the plain ones. The one line until the first
//! release (decision 0029); a release freezes it in `wit/frozen/0.8.0/` and points this
//! file there.

use crate::types as plain;

bind_worlds!("../../wit");

// ---------------------------------------------------------------- checks

mod checks_conversions {
    use super::checks::api as w;
    use super::plain;

    fn manifests(files: &[plain::Manifest]) -> Vec<w::Manifest> {
        files
            .iter()
            .map(|m| w::Manifest {
                path: m.path.clone(),
                content: m.content.clone(),
            })
            .collect()
    }

    fn checks(checks: Vec<w::Check>) -> Vec<plain::Check> {
        checks
            .into_iter()
            .map(|c| plain::Check {
                command: c.command,
                source: c.source,
            })
            .collect()
    }

    impl From<&plain::ChecksInput> for w::ChecksInput {
        fn from(i: &plain::ChecksInput) -> Self {
            Self {
                files: i.files.clone(),
                manifests: manifests(&i.manifests),
                ci: manifests(&i.ci),
            }
        }
    }

    impl From<w::Detection> for plain::Detection {
        fn from(r: w::Detection) -> Self {
            Self {
                checks: checks(r.checks),
                setup: checks(r.setup),
                left_out: r
                    .left_out
                    .into_iter()
                    .map(|l| plain::LeftOut {
                        command: l.command,
                        source: l.source,
                        reason: l.reason,
                    })
                    .collect(),
                notes: r.notes,
            }
        }
    }
}

// ---------------------------------------------------------------- verdict

mod verdict_conversions {
    use super::plain;
    use super::verdict::api as w;

    impl From<w::Lens> for plain::Lens {
        fn from(l: w::Lens) -> Self {
            match l {
                w::Lens::FirstPrinciples => Self::FirstPrinciples,
                w::Lens::Correctness => Self::Correctness,
                w::Lens::Security => Self::Security,
                w::Lens::Data => Self::Data,
                w::Lens::Evidence => Self::Evidence,
                w::Lens::Operability => Self::Operability,
                w::Lens::RepoRules => Self::RepoRules,
            }
        }
    }

    impl From<w::Severity> for plain::Severity {
        fn from(s: w::Severity) -> Self {
            match s {
                w::Severity::Blocker => Self::Blocker,
                w::Severity::Major => Self::Major,
                w::Severity::Minor => Self::Minor,
                w::Severity::Nit => Self::Nit,
            }
        }
    }

    impl From<w::CheckedVerdict> for plain::CheckedVerdict {
        fn from(v: w::CheckedVerdict) -> Self {
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
}

// ---------------------------------------------------------------- merger

mod merger_conversions {
    use super::merger::api as w;
    use super::plain;

    fn ci(c: plain::CiState) -> w::CiState {
        match c {
            plain::CiState::Green => w::CiState::Green,
            plain::CiState::Red => w::CiState::Red,
            plain::CiState::Pending => w::CiState::Pending,
            plain::CiState::Missing => w::CiState::Missing,
            plain::CiState::Abandoned => w::CiState::Abandoned,
        }
    }

    fn mergeable(m: plain::MergeableState) -> w::MergeableState {
        match m {
            plain::MergeableState::Mergeable => w::MergeableState::Mergeable,
            plain::MergeableState::Conflicting => w::MergeableState::Conflicting,
            plain::MergeableState::Unknown => w::MergeableState::Unknown,
        }
    }

    fn update(u: plain::UpdateMode) -> w::UpdateMode {
        match u {
            plain::UpdateMode::Files => w::UpdateMode::Files,
            plain::UpdateMode::Conflicts => w::UpdateMode::Conflicts,
        }
    }

    fn merge_check(m: &plain::MergeCheck) -> w::MergeCheck {
        w::MergeCheck {
            state: ci(m.state),
            onto: m.onto.clone(),
            ahead: m
                .ahead
                .iter()
                .map(|a| w::PrHead {
                    number: a.number,
                    head: a.head.clone(),
                })
                .collect(),
            head: m.head.clone(),
            tree: m.tree.clone(),
            skipped: m.skipped.clone(),
        }
    }

    impl From<&plain::PrFacts> for w::PrFacts {
        fn from(p: &plain::PrFacts) -> Self {
            Self {
                number: p.number,
                head_sha: p.head_sha.clone(),
                hallmark_sha: p.hallmark_sha.clone(),
                mergeable: mergeable(p.mergeable),
                ci: ci(p.ci),
                checks: p
                    .checks
                    .iter()
                    .map(|c| w::CheckFact {
                        name: c.name.clone(),
                        state: ci(c.state),
                        tests: c.tests,
                    })
                    .collect(),
                merge_checks: p.merge_checks.iter().map(merge_check).collect(),
                merged_tree: p.merged_tree.clone(),
                changes_requested: p.changes_requested,
                review_requests: p.review_requests.clone(),
                body: p.body.clone(),
                stacked_on: p.stacked_on,
                files: p.files.clone(),
                base_commits: p
                    .base_commits
                    .iter()
                    .map(|c| w::BaseCommit {
                        sha: c.sha.clone(),
                        files: c.files.clone(),
                    })
                    .collect(),
                rebasing: p.rebasing,
                lit_cleared: p.lit_cleared,
            }
        }
    }

    impl From<&plain::MergerInput> for w::MergerInput {
        fn from(i: &plain::MergerInput) -> Self {
            let s = &i.settings;
            Self {
                settings: w::MergeSettings {
                    require_ci: s.require_ci,
                    update: update(s.update),
                    lit: s.lit.clone(),
                    required_checks: s.required_checks.clone(),
                    pre_merge_check: s.pre_merge_check,
                    hot: w::HotSettings {
                        window: s.hot.window,
                        threshold: s.hot.threshold,
                    },
                    train: s.train,
                },
                bases: i
                    .bases
                    .iter()
                    .map(|b| w::BaseQueue {
                        base: b.base.clone(),
                        tip_sha: b.tip_sha.clone(),
                        tip_ci: ci(b.tip_ci),
                        tip_checked: b.tip_checked,
                        recent: b
                            .recent
                            .iter()
                            .map(|r| w::PathCount {
                                path: r.path.clone(),
                                commits: r.commits,
                            })
                            .collect(),
                        merge_in_flight: b.merge_in_flight,
                        prs: b.prs.iter().map(Into::into).collect(),
                    })
                    .collect(),
                open_prs: i.open_prs.clone(),
            }
        }
    }

    impl From<w::MergerPlan> for plain::MergerPlan {
        fn from(p: w::MergerPlan) -> Self {
            let decision = |d: w::Decision| plain::Decision {
                number: d.number,
                action: match d.action {
                    w::Action::Merge => plain::Action::Merge,
                    w::Action::Rebase => plain::Action::Rebase,
                    w::Action::Wait => plain::Action::Wait,
                    w::Action::Hold => plain::Action::Hold,
                },
                waits_for: d.waits_for,
                check_onto: d.check_onto,
                reasons: d.reasons,
            };
            Self {
                bases: p
                    .bases
                    .into_iter()
                    .map(|b| plain::BasePlan {
                        base: b.base,
                        line_stopped: b.line_stopped,
                        decisions: b.decisions.into_iter().map(decision).collect(),
                    })
                    .collect(),
            }
        }
    }
}

// ---------------------------------------------------------------- condense

mod condense_conversions {
    use super::condense::api as w;
    use super::plain;

    impl From<&plain::CondenseInput> for w::CondenseInput {
        fn from(i: &plain::CondenseInput) -> Self {
            Self {
                command: i.command.clone(),
                exit_code: i.exit_code,
                output: i.output.clone(),
                log: i.log.clone(),
            }
        }
    }

    impl From<w::Condensed> for plain::Condensed {
        fn from(c: w::Condensed) -> Self {
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
}

// ---------------------------------------------------------------- plan

mod plan_conversions {
    use super::plain;
    use super::plan::api as w;

    impl From<&plain::PlanInput> for w::PlanInput {
        fn from(i: &plain::PlanInput) -> Self {
            Self {
                request: i.request.clone(),
                split: i.split,
                reason: i.reason.clone(),
                parts: i
                    .parts
                    .iter()
                    .map(|p| w::Part {
                        title: p.title.clone(),
                        paths: p.paths.clone(),
                        acceptance: p.acceptance.clone(),
                    })
                    .collect(),
                max_parts: i.max_parts,
            }
        }
    }

    impl From<w::PlanJudgement> for plain::PlanJudgement {
        fn from(j: w::PlanJudgement) -> Self {
            Self {
                split: j.split,
                reasons: j.reasons,
                problems: j.problems,
            }
        }
    }
}

// ---------------------------------------------------------------- tool policy

mod tool_policy_conversions {
    use super::plain;
    use super::tool_policy::api as w;

    fn call(c: &plain::ToolCall) -> w::ToolCall {
        w::ToolCall {
            tool: c.tool.clone(),
            key: c.key.clone(),
            preview: c.preview.clone(),
            read_only: c.read_only,
            command: c.command.as_ref().map(|s| w::Command {
                kind: match s.kind {
                    plain::CommandKind::ReadOnly => w::CommandKind::ReadOnly,
                    plain::CommandKind::Test => w::CommandKind::Test,
                    plain::CommandKind::Build => w::CommandKind::Build,
                    plain::CommandKind::Mutating => w::CommandKind::Mutating,
                    plain::CommandKind::Unknown => w::CommandKind::Unknown,
                },
                words: s.words.clone(),
                commits: s.commits,
                reports_fix: s.reports_fix,
            }),
        }
    }

    impl From<&plain::DetectorSetting> for w::DetectorSetting {
        fn from(s: &plain::DetectorSetting) -> Self {
            Self {
                name: s.name.clone(),
                mode: match s.mode {
                    plain::PolicyMode::Off => w::Mode::Off,
                    plain::PolicyMode::Observe => w::Mode::Observe,
                    plain::PolicyMode::Enforce => w::Mode::Enforce,
                },
                nudge_at: s.nudge_at,
                block_at: s.block_at,
            }
        }
    }

    impl From<&plain::PolicyInput> for w::PolicyInput {
        fn from(i: &plain::PolicyInput) -> Self {
            Self {
                call: call(&i.call),
                item: i.item.as_ref().map(|item| w::ItemFacts {
                    id: item.id.clone(),
                    state: item.state.clone(),
                    failing_checks: item
                        .failing_checks
                        .iter()
                        .map(|f| w::FailingCheck {
                            check: f.check.clone(),
                            same_output_runs: f.same_output_runs,
                        })
                        .collect(),
                }),
                window: i
                    .window
                    .iter()
                    .map(|p| w::PastCall {
                        call: call(&p.call),
                        outcome: match p.outcome {
                            plain::CallOutcome::Success => w::Outcome::Success,
                            plain::CallOutcome::Error => w::Outcome::Error,
                            plain::CallOutcome::Blocked => w::Outcome::Blocked,
                        },
                        output_hash: p.output_hash.clone(),
                        detector: p.detector.clone(),
                    })
                    .collect(),
                settings: i.settings.iter().map(Into::into).collect(),
            }
        }
    }

    impl From<w::PolicyVerdict> for plain::PolicyVerdict {
        fn from(v: w::PolicyVerdict) -> Self {
            Self {
                action: match v.action {
                    w::Action::Allow => plain::PolicyAction::Allow,
                    w::Action::Nudge => plain::PolicyAction::Nudge,
                    w::Action::Ask => plain::PolicyAction::Ask,
                    w::Action::Deny => plain::PolicyAction::Deny,
                },
                detector: v.detector,
                reason: v.reason,
            }
        }
    }

    impl From<w::Trigger> for plain::PolicyTrigger {
        fn from(t: w::Trigger) -> Self {
            match t {
                w::Trigger::Always => Self::Always,
                w::Trigger::Recurs(r) => Self::Recurs(plain::Recurrence {
                    times: r.times,
                    last: r.last,
                    reads_exempt: r.reads_exempt,
                }),
                w::Trigger::ErrorStreak(n) => Self::ErrorStreak(n),
                w::Trigger::ClaimsFix => Self::ClaimsFix,
            }
        }
    }
}
