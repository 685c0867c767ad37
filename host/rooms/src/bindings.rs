//! The generated wasmtime bindings, one module per world and version line, and
//! the conversions between their types and the plain types in `types.rs`.
//!
//! Kept private so that nothing outside `rooms` depends on generated code. Each
//! line of the WIT package hall supports has a module here: `v0_8` is `wit/`,
//! `v0_7` is `wit/frozen/0.7.0/`, `v0_6` is `wit/frozen/0.6.0/`, `v0_5` is `wit/frozen/0.5.0/`, `v0_4` is `wit/frozen/0.4.0/`, `v0_3` is
//! `wit/frozen/0.3.0/`, `v0_2` is `wit/frozen/0.2.0/`, `v0_1` is
//! `wit/frozen/0.1.0/`. Their verdict and condense interfaces have the same
//! shape, so one set of conversions is stamped out for all. Check detection
//! (`gates` in 0.1, `checks` from 0.2, with CI files, setup and left-out commands
//! from 0.3) and the merger's input (given the merged-result facts from 0.4, the
//! merge train from 0.5) and plan (merge checks on predicted tips from 0.5) are
//! converted apart. The plan world exists from 0.6 on, with the same shape in
//! every line that has it; the tool-policy world from 0.7, with its guard from
//! 0.8 (its conversions are in `bindings/tool_policy.rs`).

use super::types as plain;

/// The worlds whose shape did not change between lines, bound from `$wit`.
macro_rules! unchanged_worlds {
    ($wit:literal) => {
        pub(crate) mod verdict {
            wasmtime::component::bindgen!({ path: $wit, world: "verdict-room" });
            pub(crate) use exports::hall::rooms::verdict as api;
        }

        pub(crate) mod merger {
            wasmtime::component::bindgen!({ path: $wit, world: "merger-room" });
            pub(crate) use exports::hall::rooms::merger as api;
        }

        pub(crate) mod condense {
            wasmtime::component::bindgen!({ path: $wit, world: "condense-room" });
            pub(crate) use exports::hall::rooms::condense as api;
        }
    };
}

/// `hall:rooms@0.8`, the current line: the others as in 0.7, and a
/// tool-policy room that states its guard.
pub(crate) mod v0_8 {
    pub(crate) mod checks {
        wasmtime::component::bindgen!({ path: "../../wit", world: "checks-room" });
        pub(crate) use exports::hall::rooms::checks as api;
    }
    unchanged_worlds!("../../wit");

    pub(crate) mod plan {
        wasmtime::component::bindgen!({ path: "../../wit", world: "plan-room" });
        pub(crate) use exports::hall::rooms::plan as api;
    }

    pub(crate) mod tool_policy {
        wasmtime::component::bindgen!({ path: "../../wit", world: "tool-policy-room" });
        pub(crate) use exports::hall::rooms::tool_policy as api;
    }
}

/// `hall:rooms@0.7`, frozen: the others as in 0.6, plus the tool-policy world
/// (without a guard: such a room is asked about every call).
pub(crate) mod v0_7 {
    pub(crate) mod checks {
        wasmtime::component::bindgen!({ path: "../../wit/frozen/0.7.0", world: "checks-room" });
        pub(crate) use exports::hall::rooms::checks as api;
    }
    unchanged_worlds!("../../wit/frozen/0.7.0");

    pub(crate) mod plan {
        wasmtime::component::bindgen!({ path: "../../wit/frozen/0.7.0", world: "plan-room" });
        pub(crate) use exports::hall::rooms::plan as api;
    }

    pub(crate) mod tool_policy {
        wasmtime::component::bindgen!({ path: "../../wit/frozen/0.7.0", world: "tool-policy-room" });
        pub(crate) use exports::hall::rooms::tool_policy as api;
    }
}

/// `hall:rooms@0.6`, frozen: the others as in 0.5, plus the plan world.
pub(crate) mod v0_6 {
    pub(crate) mod checks {
        wasmtime::component::bindgen!({ path: "../../wit/frozen/0.6.0", world: "checks-room" });
        pub(crate) use exports::hall::rooms::checks as api;
    }
    unchanged_worlds!("../../wit/frozen/0.6.0");

    pub(crate) mod plan {
        wasmtime::component::bindgen!({ path: "../../wit/frozen/0.6.0", world: "plan-room" });
        pub(crate) use exports::hall::rooms::plan as api;
    }
}

/// `hall:rooms@0.5`, frozen: every world but the plan world.
pub(crate) mod v0_5 {
    pub(crate) mod checks {
        wasmtime::component::bindgen!({ path: "../../wit/frozen/0.5.0", world: "checks-room" });
        pub(crate) use exports::hall::rooms::checks as api;
    }
    unchanged_worlds!("../../wit/frozen/0.5.0");
}

/// `hall:rooms@0.4`, frozen: a merger with one merge check per PR, on the tip.
pub(crate) mod v0_4 {
    pub(crate) mod checks {
        wasmtime::component::bindgen!({ path: "../../wit/frozen/0.4.0", world: "checks-room" });
        pub(crate) use exports::hall::rooms::checks as api;
    }
    unchanged_worlds!("../../wit/frozen/0.4.0");
}

/// `hall:rooms@0.3`, frozen: a merger without the merged-result facts.
pub(crate) mod v0_3 {
    pub(crate) mod checks {
        wasmtime::component::bindgen!({ path: "../../wit/frozen/0.3.0", world: "checks-room" });
        pub(crate) use exports::hall::rooms::checks as api;
    }
    unchanged_worlds!("../../wit/frozen/0.3.0");
}

/// `hall:rooms@0.2`, frozen: check detection without CI files, setup or left-out.
pub(crate) mod v0_2 {
    pub(crate) mod checks {
        wasmtime::component::bindgen!({ path: "../../wit/frozen/0.2.0", world: "checks-room" });
        pub(crate) use exports::hall::rooms::checks as api;
    }
    unchanged_worlds!("../../wit/frozen/0.2.0");
}

/// `hall:rooms@0.1`, frozen: rooms built before check detection was renamed.
pub(crate) mod v0_1 {
    pub(crate) mod gates {
        wasmtime::component::bindgen!({ path: "../../wit/frozen/0.1.0", world: "gates-room" });
        pub(crate) use exports::hall::rooms::gates as api;
    }
    unchanged_worlds!("../../wit/frozen/0.1.0");
}

macro_rules! failure_from {
    ($($line:ident::$module:ident),*) => {$(
        impl From<$line::$module::api::Failure> for plain::Failure {
            fn from(f: $line::$module::api::Failure) -> Self {
                Self { message: f.message, problems: f.problems }
            }
        }
    )*};
}
failure_from!(
    v0_1::gates,
    v0_1::verdict,
    v0_1::merger,
    v0_1::condense,
    v0_2::checks,
    v0_2::verdict,
    v0_2::merger,
    v0_2::condense,
    v0_3::checks,
    v0_3::verdict,
    v0_3::merger,
    v0_3::condense,
    v0_4::checks,
    v0_4::verdict,
    v0_4::merger,
    v0_4::condense,
    v0_5::checks,
    v0_5::verdict,
    v0_5::merger,
    v0_5::condense,
    v0_6::checks,
    v0_6::verdict,
    v0_6::merger,
    v0_6::condense,
    v0_6::plan,
    v0_7::checks,
    v0_7::verdict,
    v0_7::merger,
    v0_7::condense,
    v0_7::plan,
    v0_7::tool_policy,
    v0_8::checks,
    v0_8::verdict,
    v0_8::merger,
    v0_8::condense,
    v0_8::plan,
    v0_8::tool_policy
);

// ---------------------------------------------------------------- checks

fn manifests<M>(input: &plain::ChecksInput, make: impl Fn(String, String) -> M) -> Vec<M> {
    input
        .manifests
        .iter()
        .map(|m| make(m.path.clone(), m.content.clone()))
        .collect()
}

fn checks_from<C>(checks: Vec<C>, parts: impl Fn(C) -> (String, String)) -> Vec<plain::Check> {
    checks
        .into_iter()
        .map(|c| {
            let (command, source) = parts(c);
            plain::Check { command, source }
        })
        .collect()
}

/// Check detection with CI files, setup and left-out commands (0.3 and on).
macro_rules! checks_from_0_3 {
    ($line:ident) => {
        impl From<&plain::ChecksInput> for $line::checks::api::ChecksInput {
            fn from(i: &plain::ChecksInput) -> Self {
                let make = |m: &plain::Manifest| $line::checks::api::Manifest {
                    path: m.path.clone(),
                    content: m.content.clone(),
                };
                Self {
                    files: i.files.clone(),
                    manifests: i.manifests.iter().map(make).collect(),
                    ci: i.ci.iter().map(make).collect(),
                }
            }
        }

        impl From<$line::checks::api::Detection> for plain::Detection {
            fn from(r: $line::checks::api::Detection) -> Self {
                Self {
                    checks: checks_from(r.checks, |c| (c.command, c.source)),
                    setup: checks_from(r.setup, |c| (c.command, c.source)),
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
    };
}
checks_from_0_3!(v0_3);
checks_from_0_3!(v0_4);
checks_from_0_3!(v0_5);
checks_from_0_3!(v0_6);
checks_from_0_3!(v0_7);
checks_from_0_3!(v0_8);

impl From<&plain::ChecksInput> for v0_2::checks::api::ChecksInput {
    fn from(i: &plain::ChecksInput) -> Self {
        let i = i.before_0_3();
        Self {
            files: i.files.clone(),
            manifests: manifests(&i, |path, content| v0_2::checks::api::Manifest {
                path,
                content,
            }),
        }
    }
}

impl From<v0_2::checks::api::Detection> for plain::Detection {
    fn from(r: v0_2::checks::api::Detection) -> Self {
        Self {
            checks: checks_from(r.checks, |c| (c.command, c.source)),
            setup: Vec::new(),
            left_out: Vec::new(),
            notes: r.notes,
        }
    }
}

impl From<&plain::ChecksInput> for v0_1::gates::api::GatesInput {
    fn from(i: &plain::ChecksInput) -> Self {
        let i = i.before_0_3();
        Self {
            files: i.files.clone(),
            manifests: manifests(&i, |path, content| v0_1::gates::api::Manifest {
                path,
                content,
            }),
        }
    }
}

impl From<v0_1::gates::api::GateReport> for plain::Detection {
    fn from(r: v0_1::gates::api::GateReport) -> Self {
        Self {
            checks: checks_from(r.gates, |g| (g.command, g.source)),
            setup: Vec::new(),
            left_out: Vec::new(),
            notes: r.notes,
        }
    }
}

/// The conversions of the worlds whose shape every line shares (the merger's
/// enums and plan too; its input is converted below).
macro_rules! unchanged_conversions {
    ($line:ident) => {
        const _: () = {
            use $line::{condense, merger, verdict};

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
        };
    };
}
unchanged_conversions!(v0_1);
unchanged_conversions!(v0_2);
unchanged_conversions!(v0_3);
unchanged_conversions!(v0_4);
unchanged_conversions!(v0_5);
unchanged_conversions!(v0_6);
unchanged_conversions!(v0_7);
unchanged_conversions!(v0_8);

/// The merger's plan, read back from any line (`$check_onto` reads what only
/// 0.5 and on decide: the PRs to merge in ahead for a merge check).
macro_rules! merger_plan {
    ($line:ident, $check_onto:expr) => {
        const _: () = {
            use $line::merger;

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
                                        check_onto: $check_onto(&d),
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
        };
    };
}
merger_plan!(v0_1, |_: &merger::api::Decision| Vec::new());
merger_plan!(v0_2, |_: &merger::api::Decision| Vec::new());
merger_plan!(v0_3, |_: &merger::api::Decision| Vec::new());
merger_plan!(v0_4, |_: &merger::api::Decision| Vec::new());
merger_plan!(v0_5, |d: &merger::api::Decision| d.check_onto.clone());
merger_plan!(v0_6, |d: &merger::api::Decision| d.check_onto.clone());
merger_plan!(v0_7, |d: &merger::api::Decision| d.check_onto.clone());
merger_plan!(v0_8, |d: &merger::api::Decision| d.check_onto.clone());

/// The merger's input as rooms before 0.4 take it: without the merged-result
/// facts, which such a room never reads (it judges by the older rules).
macro_rules! merger_input_before_0_4 {
    ($line:ident) => {
        const _: () = {
            use $line::merger;

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
        };
    };
}
merger_input_before_0_4!(v0_1);
merger_input_before_0_4!(v0_2);
merger_input_before_0_4!(v0_3);

/// The conversions the merger lines from 0.4 share, for the generated types of
/// the line whose `api` is in scope as `w` (with `plain`).
macro_rules! merger_shared_parts {
    () => {
        fn ci(c: plain::CiState) -> w::CiState {
            c.into()
        }

        fn checks(p: &plain::PrFacts) -> Vec<w::CheckFact> {
            p.checks
                .iter()
                .map(|c| w::CheckFact {
                    name: c.name.clone(),
                    state: ci(c.state),
                    tests: c.tests,
                })
                .collect()
        }

        fn base_commits(p: &plain::PrFacts) -> Vec<w::BaseCommit> {
            p.base_commits
                .iter()
                .map(|c| w::BaseCommit {
                    sha: c.sha.clone(),
                    files: c.files.clone(),
                })
                .collect()
        }

        fn update(u: plain::UpdateMode) -> w::UpdateMode {
            match u {
                plain::UpdateMode::Files => w::UpdateMode::Files,
                plain::UpdateMode::Conflicts => w::UpdateMode::Conflicts,
            }
        }

        fn hot(s: &plain::MergeSettings) -> w::HotSettings {
            w::HotSettings {
                window: s.hot.window,
                threshold: s.hot.threshold,
            }
        }

        fn recent(b: &plain::BaseQueue) -> Vec<w::PathCount> {
            b.recent
                .iter()
                .map(|r| w::PathCount {
                    path: r.path.clone(),
                    commits: r.commits,
                })
                .collect()
        }
    };
}

mod merger_0_4 {
    use super::{plain, v0_4::merger::api as w};

    merger_shared_parts!();

    impl From<&plain::PrFacts> for w::PrFacts {
        fn from(p: &plain::PrFacts) -> Self {
            Self {
                number: p.number,
                head_sha: p.head_sha.clone(),
                hallmark_sha: p.hallmark_sha.clone(),
                mergeable: p.mergeable.into(),
                ci: ci(p.ci),
                checks: checks(p),
                // A 0.4 room knows one check per PR, on the tip itself: the
                // newest one with nothing merged in ahead.
                merge_check: p.merge_checks.iter().find(|m| m.ahead.is_empty()).map(|m| {
                    w::MergeCheck {
                        state: ci(m.state),
                        onto: m.onto.clone(),
                        head: m.head.clone(),
                        tree: m.tree.clone(),
                        skipped: m.skipped.clone(),
                    }
                }),
                changes_requested: p.changes_requested,
                review_requests: p.review_requests.clone(),
                body: p.body.clone(),
                stacked_on: p.stacked_on,
                files: p.files.clone(),
                base_commits: base_commits(p),
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
                    hot: hot(s),
                },
                bases: i
                    .bases
                    .iter()
                    .map(|b| w::BaseQueue {
                        base: b.base.clone(),
                        tip_sha: b.tip_sha.clone(),
                        tip_ci: ci(b.tip_ci),
                        recent: recent(b),
                        merge_in_flight: b.merge_in_flight,
                        prs: b.prs.iter().map(Into::into).collect(),
                    })
                    .collect(),
                open_prs: i.open_prs.clone(),
            }
        }
    }
}

/// The merger's input from 0.5 on (the merge train), for the line `$line`;
/// invoked inside a module of its own.
macro_rules! merger_input_from_0_5 {
    ($line:ident) => {
        use super::{plain, $line::merger::api as w};

        merger_shared_parts!();

        impl From<&plain::PrFacts> for w::PrFacts {
            fn from(p: &plain::PrFacts) -> Self {
                Self {
                    number: p.number,
                    head_sha: p.head_sha.clone(),
                    hallmark_sha: p.hallmark_sha.clone(),
                    mergeable: p.mergeable.into(),
                    ci: ci(p.ci),
                    checks: checks(p),
                    merge_checks: p
                        .merge_checks
                        .iter()
                        .map(|m| w::MergeCheck {
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
                        })
                        .collect(),
                    merged_tree: p.merged_tree.clone(),
                    changes_requested: p.changes_requested,
                    review_requests: p.review_requests.clone(),
                    body: p.body.clone(),
                    stacked_on: p.stacked_on,
                    files: p.files.clone(),
                    base_commits: base_commits(p),
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
                        hot: hot(s),
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
                            recent: recent(b),
                            merge_in_flight: b.merge_in_flight,
                            prs: b.prs.iter().map(Into::into).collect(),
                        })
                        .collect(),
                    open_prs: i.open_prs.clone(),
                }
            }
        }
    };
}

mod merger_0_5 {
    merger_input_from_0_5!(v0_5);
}

mod merger_0_6 {
    merger_input_from_0_5!(v0_6);
}

mod merger_0_7 {
    merger_input_from_0_5!(v0_7);
}

mod merger_0_8 {
    merger_input_from_0_5!(v0_8);
}

// ---------------------------------------------------------------- plan

/// The plan world's conversions for the line `$line` (0.6 and on: one shape).
macro_rules! plan_conversions {
    ($line:ident) => {
        const _: () = {
            use $line::plan::api as w;

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
        };
    };
}
plan_conversions!(v0_6);
plan_conversions!(v0_7);
plan_conversions!(v0_8);

// ---------------------------------------------------------------- tool policy

mod tool_policy;
