//! The tool-policy world's conversions: its input and verdict have one shape in
//! every line that has the world (0.7 and on); the guard exists from 0.8.

use super::{plain, v0_7, v0_8};

/// The input and the verdict for the line whose `api` is `$api`.
macro_rules! decide_conversions {
    ($api:path) => {
        const _: () = {
            use $api as w;

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
        };
    };
}
decide_conversions!(v0_7::tool_policy::api);
decide_conversions!(v0_8::tool_policy::api);

impl From<v0_8::tool_policy::api::Trigger> for plain::PolicyTrigger {
    fn from(t: v0_8::tool_policy::api::Trigger) -> Self {
        use v0_8::tool_policy::api::Trigger as W;
        match t {
            W::Always => Self::Always,
            W::Recurs(r) => Self::Recurs(plain::Recurrence {
                times: r.times,
                last: r.last,
                reads_exempt: r.reads_exempt,
            }),
            W::ErrorStreak(n) => Self::ErrorStreak(n),
            W::ClaimsFix => Self::ClaimsFix,
        }
    }
}
