//! The transition check: given an item's folded state and an action, either the events
//! that record it or a refusal. Pure, like the fold: limits from the config, the HEAD
//! SHA and anything else from the outside world arrive as arguments.

use super::event::{Dispute, EventKind, Finding, FollowKind, HoldKind, Seal};
use super::id::ItemId;
use super::sha::Sha;
use super::state::{Item, State};

/// Something a person, an agent or the loop asks of an item.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// The agent says the work is done at `sha`.
    ProposeReady {
        sha: Sha,
        summary: String,
        why: Option<String>,
        how: Option<String>,
        ask: bool,
        auto_ready: bool,
        /// The caller checked that the branch contains its base and no rebase is
        /// half-done, which satisfies a standing rebase request.
        on_base: bool,
    },
    /// Freeze `sha` and queue it.
    Ready {
        sha: Sha,
        note: Option<String>,
        on_base: bool,
    },
    PullBack {
        reason: Option<String>,
    },
    Drop {
        reason: String,
    },
    Retry {
        reason: String,
        tokens: Option<u64>,
    },
    ChecksPassed {
        sha: Sha,
    },
    ChecksFailed {
        sha: Sha,
        failed: Vec<String>,
        max_check_failures: u32,
    },
    Verdict {
        sha: Sha,
        approved: bool,
        findings: Vec<Finding>,
        model: Option<String>,
        summary: Option<String>,
        by: Option<String>,
        /// The learnings the verdict relied on, as the reviewer named them.
        learnings: Vec<String>,
        max_rejects: u32,
        /// The signature an approval carries, made by the caller before it asks (the
        /// core holds no key). Ignored when the verdict rejects.
        seal: Option<Seal>,
    },
    /// A headless run for the item failed; the second in a row holds it.
    RunFailed {
        role: String,
        reason: String,
        run: Option<String>,
    },
    /// The shipper's rebase left the patch as approved: the hallmark moves to `sha`.
    /// Also a follow-through run's rebase of a reopened item that left the shipped
    /// change as it was (decision 0027): its approval carries with no review.
    Rebased {
        sha: Sha,
        /// The shipper's signature over the new commit's statement.
        seal: Option<Seal>,
    },
    FixSubmitted {
        sha: Sha,
        fixed: Vec<String>,
        disputed: Vec<Dispute>,
    },
    Shipped {
        pr: Option<String>,
    },
    /// The shipper's rebase conflicted or changed the patch.
    RebaseFailed {
        reason: String,
    },
    /// The Delivery office or the merger brings a closed item back.
    Reopen {
        reason: String,
        /// For red CI: the PR head it failed at.
        ci_at: Option<Sha>,
        /// A dev run due at once, with `reason` as its brief (a conflict, comments).
        follow: Option<FollowKind>,
    },
    /// Reopened for red CI, which passed on a re-run with nothing moved.
    Restore,
    /// A reply to review comment `comment` on the PR, to post once the answering change
    /// ships.
    DraftReply {
        comment: u64,
        body: String,
    },
    /// The shipper posted the reply to `comment`.
    PostReply {
        comment: u64,
    },
    /// The Delivery office asks for a headless dev run on a reopened item.
    FollowThrough {
        kind: FollowKind,
        brief: String,
    },
    RequestRebase {
        base: String,
    },
    /// The item's PR targets `base` now.
    Restack {
        base: String,
    },
    /// The item's PR merged or closed (the Delivery office saw it).
    Deliver {
        pr: String,
        merged: bool,
    },
    /// The sweeper removed the item's worktree.
    RemoveWorktree {
        path: String,
    },
    Hold {
        kind: HoldKind,
        reason: String,
        /// What the person can run about it (empty: the usual `hall retry`).
        next: Vec<String>,
    },
    /// `hall merge`: the part's branch at `sha` merged into its parent's branch `into`
    /// as `commit`; the part is done.
    Merge {
        into: String,
        sha: Sha,
        commit: Sha,
    },
}

impl Action {
    /// The command (or worker step) behind the action, for messages.
    pub fn name(&self) -> &'static str {
        match self {
            Action::ProposeReady { .. } => "propose-ready",
            Action::Ready { .. } => "ready",
            Action::PullBack { .. } => "pull-back",
            Action::Drop { .. } => "drop",
            Action::Retry { .. } => "retry",
            Action::ChecksPassed { .. } => "checks passed",
            Action::ChecksFailed { .. } => "checks failed",
            Action::Verdict { .. } => "verdict",
            Action::RunFailed { .. } => "run failed",
            Action::Rebased { .. } => "rebased",
            Action::FixSubmitted { .. } => "fixed",
            Action::Shipped { .. } => "ship",
            Action::RebaseFailed { .. } => "rebase failed",
            Action::Reopen { .. } => "reopen",
            Action::Restore => "restore",
            Action::FollowThrough { .. } => "follow through",
            Action::DraftReply { .. } => "reply",
            Action::PostReply { .. } => "post reply",
            Action::RequestRebase { .. } => "request rebase",
            Action::Restack { .. } => "restack",
            Action::Deliver { .. } => "deliver",
            Action::RemoveWorktree { .. } => "remove worktree",
            Action::Hold { .. } => "hold",
            Action::Merge { .. } => "merge",
        }
    }
}

/// Why an action was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The action is not allowed from this state.
    WrongState { state: State, action: &'static str },
    /// `ready` at a SHA other than the one in the loop.
    InReview { state: State, round: u32, sha: Sha },
    /// A rebase request stands and the branch isn't on its base yet.
    RebasePending { base: String },
    /// `retry` on an item that is neither escalated nor held.
    NothingToRetry { state: State },
    /// A part of `parent` is never frozen or reviewed on its own: it merges into its
    /// parent, which is reviewed once, whole.
    Part { parent: ItemId },
    /// `hall merge` of an item that is no part of anything.
    NotAPart,
}

/// The events that record `action`, or why it can't happen. An empty list means the
/// action already holds (idempotent repeat).
pub fn decide(item: &Item, action: &Action) -> Result<Vec<EventKind>, Refusal> {
    use State::*;
    let state = item.state;
    let wrong = || Refusal::WrongState {
        state,
        action: action.name(),
    };
    let in_loop_at = |sha: &Sha| -> Result<Vec<EventKind>, Refusal> {
        if item.sha.as_ref() == Some(sha) {
            Ok(Vec::new())
        } else {
            Err(Refusal::InReview {
                state,
                round: item.round,
                sha: item.sha.clone().unwrap_or_default(),
            })
        }
    };
    if let (Some(parent), Action::Ready { .. }) = (item.parent, action) {
        return Err(Refusal::Part { parent });
    }
    match action {
        Action::Merge { into, sha, commit } => match (item.parent, state) {
            (None, _) => Err(Refusal::NotAPart),
            (Some(_), Development | AwaitingYou) => Ok(vec![EventKind::Merged {
                into: into.clone(),
                sha: sha.clone(),
                commit: commit.clone(),
            }]),
            (Some(_), Closed) if item.merged.as_ref() == Some(commit) => Ok(Vec::new()),
            (Some(_), _) => Err(wrong()),
        },
        Action::ProposeReady {
            sha,
            summary,
            why,
            how,
            ask,
            auto_ready,
            on_base,
        } => match state {
            Development => {
                rebase_clear(item, *on_base)?;
                let proposed = EventKind::ProposedReady {
                    sha: sha.clone(),
                    summary: summary.clone(),
                    why: why.clone(),
                    how: how.clone(),
                    ask: *ask,
                };
                // A part is never frozen on its own: it waits for `hall merge`.
                let to_confirm = *ask
                    || !*auto_ready
                    || item.parent.is_some()
                    || item.open_questions().next().is_some();
                if to_confirm {
                    Ok(vec![proposed])
                } else {
                    Ok(vec![proposed, ready_event(item, sha, None)])
                }
            }
            AwaitingYou => rebase_clear(item, *on_base).map(|()| Vec::new()),
            s if s.in_loop() => in_loop_at(sha),
            _ => Err(wrong()),
        },
        Action::Ready { sha, note, on_base } => match state {
            Development | AwaitingYou => {
                rebase_clear(item, *on_base)?;
                Ok(vec![ready_event(item, sha, note.clone())])
            }
            s if s.in_loop() => in_loop_at(sha),
            _ => Err(wrong()),
        },
        Action::PullBack { reason } => match state {
            Development => Ok(Vec::new()),
            AwaitingYou | Checks | Review | Fixing | Escalated | Hallmarked => {
                Ok(vec![EventKind::PulledBack {
                    from: state,
                    reason: reason.clone(),
                }])
            }
            Closed | Dropped => Err(wrong()),
        },
        Action::Drop { reason } => match state {
            Dropped => Ok(Vec::new()),
            Closed => Err(wrong()),
            _ => Ok(vec![EventKind::Dropped {
                reason: reason.clone(),
            }]),
        },
        Action::Retry { reason, tokens } => {
            if let Some(hold) = &item.hold {
                Ok(vec![EventKind::Retried {
                    reason: reason.clone(),
                    tokens: *tokens,
                    released: Some(hold.kind),
                }])
            } else if state == Escalated {
                Ok(vec![EventKind::Retried {
                    reason: reason.clone(),
                    tokens: *tokens,
                    released: None,
                }])
            } else {
                Err(Refusal::NothingToRetry { state })
            }
        }
        Action::ChecksPassed { sha } => match state {
            Checks => Ok(vec![EventKind::ChecksPassed { sha: sha.clone() }]),
            _ => Err(wrong()),
        },
        Action::ChecksFailed {
            sha,
            failed,
            max_check_failures,
        } => match state {
            // Checks in `hallmarked`: the shipper ran the checks of the base it rebased
            // onto, whose rules gate differently, and they failed at the rebased commit.
            Checks | Hallmarked => {
                let mut events = vec![EventKind::ChecksFailed {
                    sha: sha.clone(),
                    failed: failed.clone(),
                }];
                if item.check_failures + 1 >= *max_check_failures {
                    events.push(EventKind::Held {
                        kind: HoldKind::Checks,
                        reason: format!("checks failed {} times in a row", item.check_failures + 1),
                        next: Vec::new(),
                    });
                }
                Ok(events)
            }
            _ => Err(wrong()),
        },
        Action::Verdict {
            sha,
            approved,
            findings,
            model,
            summary,
            by,
            learnings,
            max_rejects,
            seal,
        } => match state {
            Review => {
                if item.sha.as_deref() != Some(sha.as_str()) {
                    return Err(Refusal::InReview {
                        state,
                        round: item.round,
                        sha: item.sha.clone().unwrap_or_default(),
                    });
                }
                let verdict = EventKind::Verdict {
                    sha: sha.clone(),
                    round: item.round,
                    approved: *approved,
                    findings: findings.clone(),
                    model: model.clone(),
                    summary: summary.clone(),
                    by: by.clone(),
                    learnings: learnings.clone(),
                };
                if *approved {
                    Ok(vec![
                        verdict,
                        EventKind::Hallmarked {
                            sha: sha.clone(),
                            round: item.round,
                            seal: seal.clone(),
                        },
                    ])
                } else if item.rejects + 1 >= max_rejects.saturating_add(item.extra_rounds) {
                    let reason = format!("{} rejected reviews", item.rejects + 1);
                    Ok(vec![verdict, EventKind::Escalated { reason }])
                } else {
                    Ok(vec![verdict])
                }
            }
            _ => Err(wrong()),
        },
        Action::RunFailed { role, reason, run } => match state {
            Checks | Review | Fixing | Hallmarked => run_failed(item, role, reason, run),
            // A follow-through dev run failed.
            Development if item.follow.is_some() => run_failed(item, role, reason, run),
            _ => Err(wrong()),
        },
        Action::Rebased { sha, seal } => {
            let from = match state {
                Hallmarked => item.hallmark.clone().unwrap_or_default(),
                Development
                    if item.follow.as_ref().map(|f| f.kind) == Some(FollowKind::Conflict)
                        && item.shipped.is_some() =>
                {
                    item.shipped.clone().unwrap_or_default()
                }
                _ => return Err(wrong()),
            };
            if from == *sha {
                return Ok(Vec::new());
            }
            Ok(vec![
                EventKind::Rebased {
                    from: from.clone(),
                    sha: sha.clone(),
                    carried: true,
                },
                // The approval carries with no review run: a verdict by `carried`.
                EventKind::Verdict {
                    sha: sha.clone(),
                    round: item.round,
                    approved: true,
                    findings: Vec::new(),
                    model: None,
                    summary: Some(format!(
                        "the rebase left the patch approved at {} unchanged",
                        from.short()
                    )),
                    by: Some("carried".into()),
                    learnings: Vec::new(),
                },
                EventKind::Hallmarked {
                    sha: sha.clone(),
                    round: item.round,
                    seal: seal.clone(),
                },
            ])
        }
        Action::FixSubmitted {
            sha,
            fixed,
            disputed,
        } => match state {
            Fixing => Ok(vec![EventKind::FixSubmitted {
                sha: sha.clone(),
                fixed: fixed.clone(),
                disputed: disputed.clone(),
            }]),
            _ => Err(wrong()),
        },
        Action::Shipped { pr } => match state {
            Hallmarked => Ok(vec![EventKind::Shipped {
                sha: item.hallmark.clone().unwrap_or_default(),
                pr: pr.clone(),
            }]),
            Closed => Ok(Vec::new()),
            _ => Err(wrong()),
        },
        Action::RebaseFailed { reason } => match state {
            Hallmarked => Ok(vec![EventKind::PulledBack {
                from: state,
                reason: Some(reason.clone()),
            }]),
            _ => Err(wrong()),
        },
        Action::Reopen {
            reason,
            ci_at,
            follow,
        } => match state {
            Closed => {
                let mut events = vec![EventKind::Reopened {
                    reason: reason.clone(),
                    ci_at: ci_at.clone(),
                }];
                if let (Some(kind), Some(_)) = (follow, &item.pr) {
                    events.push(EventKind::FollowThrough {
                        kind: *kind,
                        brief: reason.clone(),
                    });
                }
                Ok(events)
            }
            _ => Err(wrong()),
        },
        Action::DraftReply { comment, body } => match state {
            _ if item.pr.is_none() => Err(wrong()),
            Development => {
                let same = item
                    .replies
                    .iter()
                    .any(|r| r.comment == *comment && !r.posted && r.body == *body);
                Ok(if same {
                    Vec::new()
                } else {
                    vec![EventKind::ReplyDrafted {
                        comment: *comment,
                        body: body.clone(),
                    }]
                })
            }
            _ => Err(wrong()),
        },
        Action::PostReply { comment } => {
            match item.replies.iter().find(|r| r.comment == *comment) {
                Some(r) if r.posted => Ok(Vec::new()),
                Some(_) if state != Dropped => {
                    Ok(vec![EventKind::ReplyPosted { comment: *comment }])
                }
                _ => Err(wrong()),
            }
        }
        Action::FollowThrough { kind, brief } => match state {
            Development if item.follow.as_ref().map(|f| f.kind) == Some(*kind) => Ok(Vec::new()),
            Development if item.pr.is_some() => Ok(vec![EventKind::FollowThrough {
                kind: *kind,
                brief: brief.clone(),
            }]),
            _ => Err(wrong()),
        },
        Action::Restore => match state {
            Development if item.pr.is_some() => Ok(vec![EventKind::Restored {}]),
            _ => Err(wrong()),
        },
        Action::RequestRebase { base } => match state {
            Dropped => Err(wrong()),
            _ => Ok(vec![EventKind::RebaseRequested { base: base.clone() }]),
        },
        Action::Restack { base } => match state {
            Dropped => Err(wrong()),
            _ if base.trim().is_empty() || *base == item.base => Ok(Vec::new()),
            _ => Ok(vec![EventKind::Restacked {
                from: item.base.clone(),
                to: base.clone(),
            }]),
        },
        Action::Deliver { pr, merged } => match state {
            Closed if item.delivered.is_some() => Ok(Vec::new()),
            Closed => Ok(vec![EventKind::Delivered {
                pr: pr.clone(),
                merged: *merged,
            }]),
            _ => Err(wrong()),
        },
        Action::RemoveWorktree { path } => match state {
            _ if item.worktree_removed => Ok(Vec::new()),
            Closed | Dropped => Ok(vec![EventKind::WorktreeRemoved { path: path.clone() }]),
            _ => Err(wrong()),
        },
        Action::Hold { kind, reason, next } => match state {
            s if s.is_terminal()
                && !matches!(
                    kind,
                    HoldKind::MergeFailed | HoldKind::Lit | HoldKind::CiFailed
                ) =>
            {
                Err(wrong())
            }
            Dropped => Err(wrong()),
            _ => Ok(vec![EventKind::Held {
                kind: *kind,
                reason: reason.clone(),
                next: next.clone(),
            }]),
        },
    }
}

fn run_failed(
    item: &Item,
    role: &str,
    reason: &str,
    run: &Option<String>,
) -> Result<Vec<EventKind>, Refusal> {
    let mut events = vec![EventKind::RunFailed {
        role: role.to_string(),
        reason: reason.to_string(),
        run: run.clone(),
    }];
    if item.run_failures + 1 >= 2 && item.hold.is_none() {
        events.push(EventKind::Held {
            kind: HoldKind::RunFailed,
            reason: format!("two {role} runs failed in a row; the last: {reason}"),
            next: Vec::new(),
        });
    }
    Ok(events)
}

fn ready_event(item: &Item, sha: &Sha, note: Option<String>) -> EventKind {
    EventKind::Ready {
        sha: sha.clone(),
        round: item.round + 1,
        note,
    }
}

/// A standing rebase request blocks `ready` until the branch is on its base; the request
/// itself is kept (only the `ready` that follows a finished rebase clears it).
fn rebase_clear(item: &Item, on_base: bool) -> Result<(), Refusal> {
    match &item.rebase_requested {
        Some(base) if !on_base => Err(Refusal::RebasePending { base: base.clone() }),
        _ => Ok(()),
    }
}

/// Every move the design's tables allow, as (from, to).
pub const TRANSITIONS: &[(State, State)] = &[
    (State::Development, State::Checks),
    (State::Development, State::AwaitingYou),
    (State::AwaitingYou, State::Checks),
    (State::AwaitingYou, State::Development),
    (State::Checks, State::Review),
    (State::Checks, State::Fixing),
    (State::Review, State::Hallmarked),
    (State::Review, State::Fixing),
    (State::Review, State::Escalated),
    (State::Fixing, State::Checks),
    (State::Escalated, State::Fixing),
    (State::Checks, State::Development),
    (State::Review, State::Development),
    (State::Fixing, State::Development),
    (State::Escalated, State::Development),
    (State::Hallmarked, State::Development),
    // The checks of the base a carried approval would land on failed (decision 0026).
    (State::Hallmarked, State::Fixing),
    (State::Hallmarked, State::Closed),
    (State::Closed, State::Development),
    (State::Development, State::Closed),
    // A follow-through rebase that left the shipped change as it was (decision 0027).
    (State::Development, State::Hallmarked),
    (State::Development, State::Dropped),
    (State::AwaitingYou, State::Dropped),
    (State::Checks, State::Dropped),
    (State::Review, State::Dropped),
    (State::Fixing, State::Dropped),
    (State::Escalated, State::Dropped),
    (State::Hallmarked, State::Dropped),
];

/// Whether the tables allow moving from `from` to `to` (staying put is always allowed).
pub fn allowed(from: State, to: State) -> bool {
    from == to || TRANSITIONS.contains(&(from, to))
}
