//! An item's state, derived by folding its events. Nothing here touches a file, a
//! process or a clock: the fold is a pure function, so replaying a journal always gives
//! the same answer as the in-memory state that wrote it.

use std::collections::BTreeMap;
use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::event::{Event, EventKind, FollowKind, HoldKind, Source};
use super::id::{ItemId, QuestionId};
use super::sha::Sha;

/// Where an item is in the loop.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum State {
    #[default]
    Development,
    AwaitingYou,
    Checks,
    Review,
    Fixing,
    Escalated,
    Hallmarked,
    Closed,
    Dropped,
}

impl State {
    pub const ALL: [State; 9] = [
        State::Development,
        State::AwaitingYou,
        State::Checks,
        State::Review,
        State::Fixing,
        State::Escalated,
        State::Hallmarked,
        State::Closed,
        State::Dropped,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            State::Development => "development",
            State::AwaitingYou => "awaiting_you",
            State::Checks => "checks",
            State::Review => "review",
            State::Fixing => "fixing",
            State::Escalated => "escalated",
            State::Hallmarked => "hallmarked",
            State::Closed => "closed",
            State::Dropped => "dropped",
        }
    }

    pub fn parse(s: &str) -> Option<State> {
        State::ALL.into_iter().find(|st| st.as_str() == s)
    }

    /// Closed and dropped items never move again (a closed one only by reopening).
    pub fn is_terminal(self) -> bool {
        matches!(self, State::Closed | State::Dropped)
    }

    /// The states a script drives, where `ready` at the same SHA is a no-op.
    pub fn in_loop(self) -> bool {
        matches!(
            self,
            State::Checks | State::Review | State::Fixing | State::Hallmarked
        )
    }

    /// The station of the building that holds this state: where the docs and the apps
    /// show the item (the Workshop, the Assay Office…). Not a room: rooms are the
    /// WebAssembly components that hold the policies.
    pub fn station(self) -> &'static str {
        match self {
            State::Development => "Workshop",
            State::AwaitingYou | State::Escalated => "Your Office",
            State::Checks | State::Review => "Assay Office",
            State::Fixing => "Repair Shop",
            State::Hallmarked => "Stamping Office",
            State::Closed => "Dispatch Dock",
            State::Dropped => "Records",
        }
    }
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A hold: the loop waits for a person without changing state.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Hold {
    pub kind: HoldKind,
    pub reason: String,
    pub since: String,
    /// What the person can run about it, when the hold says (a missing tool).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub next: Vec<String>,
}

/// A question and, once given, its answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Question {
    pub qid: QuestionId,
    pub question: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_until: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    pub asked: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<String>,
    #[serde(default)]
    pub by_default: bool,
}

impl Question {
    /// The question an `asked` event puts, not yet answered; `None` for any other event.
    /// The item's fold and the index's questions table both take a question from here.
    pub fn asked(event: &Event) -> Option<Question> {
        let EventKind::Asked {
            qid,
            question,
            options,
            default,
            wait_until,
            session,
        } = &event.kind
        else {
            return None;
        };
        Some(Question {
            qid: *qid,
            question: question.clone(),
            options: options.clone(),
            default: default.clone(),
            wait_until: wait_until.clone(),
            session: session.clone(),
            asked: event.t.clone(),
            answer: None,
            by_default: false,
        })
    }
}

/// How a shipped item's PR ended.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Delivery {
    pub pr: String,
    /// Merged; false when it was closed without merging.
    pub merged: bool,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// A reply to a review comment on the item's PR.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Reply {
    pub comment: u64,
    pub body: String,
    /// Posted on the PR.
    pub posted: bool,
}

/// A follow-through dev run the Delivery office asked for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Follow {
    pub kind: FollowKind,
    pub brief: String,
}

/// One part of a split item (a child item), as its parent's journal lists it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Part {
    pub id: ItemId,
    pub title: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<String>,
}

/// Everything the fold knows about one item.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Item {
    pub id: Option<ItemId>,
    pub title: String,
    pub branch: String,
    pub base: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worktree: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<Source>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issue: Option<u64>,
    pub state: State,
    /// The frozen commit under review (set by `ready`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha: Option<Sha>,
    /// Review rounds started.
    pub round: u32,
    /// Rejecting verdicts so far.
    pub rejects: u32,
    /// Extra rounds a person granted with `retry` after an escalation.
    pub extra_rounds: u32,
    /// Failed check runs in a row.
    pub check_failures: u32,
    /// Failed headless runs in a row.
    #[serde(default)]
    pub run_failures: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hold: Option<Hold>,
    /// A standing rebase request from the Delivery office (its base).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rebase_requested: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hallmark: Option<Sha>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pr: Option<String>,
    /// The commit last shipped (what the PR carries until an update).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shipped: Option<Sha>,
    /// A headless dev run due on a reopened item.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub follow: Option<Follow>,
    /// Replies to the PR's review comments, drafted and posted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replies: Vec<Reply>,
    /// Follow-through runs for red CI so far: CI still red after one of them is a
    /// `ci_failed` hold for a person, not another run.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub ci_fixes: u32,
    /// The item this one is a part of (a child of a split request).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<ItemId>,
    /// This item's parts, in the order they were added.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<Part>,
    /// `hall merge` merged this part into its parent's branch: the merge commit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged: Option<Sha>,
    /// The PR whose feedback this item follows up on (`hall new --follow-up`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub follow_up: Option<String>,
    /// How the PR ended, once the Delivery office saw it merge or close.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delivered: Option<Delivery>,
    /// Reopened for red CI at this PR head, until it is restored or frozen again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci_reopened_at: Option<Sha>,
    /// The sweeper removed the worktree (the path stays in `worktree`, for the record).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub worktree_removed: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// Extra tokens granted by `retry --tokens` on budget holds.
    pub tokens_granted: u64,
    pub questions: BTreeMap<u32, Question>,
    pub created: String,
    pub updated: String,
    /// When the item entered its current state.
    pub since: String,
    /// Events folded so far.
    pub events: u64,
}

impl Item {
    /// Questions without an answer, oldest first.
    pub fn open_questions(&self) -> impl Iterator<Item = &Question> {
        self.questions.values().filter(|q| q.answer.is_none())
    }

    fn enter(&mut self, state: State, t: &str) {
        if self.state != state {
            self.state = state;
            self.since = t.to_string();
        }
    }

    /// What every event does, whatever its kind: count it and move `updated`. Readers
    /// that skip the payload of kinds that don't change state call only this.
    pub fn note(&mut self, t: &str, item: Option<ItemId>) {
        if self.events == 0 {
            self.created = t.to_string();
            self.since = t.to_string();
        }
        self.events += 1;
        // Once per line of a reindex: reuse the string rather than allocate anew.
        self.updated.clear();
        self.updated.push_str(t);
        if self.id.is_none() {
            self.id = item;
        }
    }

    /// Applies one event. Events that don't concern the state only bump counters.
    pub fn apply(&mut self, event: &Event) {
        let t = event.t.as_str();
        self.note(t, event.item);
        match &event.kind {
            EventKind::Created {
                title,
                branch,
                base,
                worktree,
                source,
                issue,
                pr,
                ..
            } => {
                self.title = title.clone();
                self.branch = branch.clone();
                self.base = base.clone();
                self.worktree = worktree.clone();
                self.source = Some(*source);
                self.issue = *issue;
                if pr.is_some() {
                    self.pr = pr.clone();
                }
                self.state = State::Development;
            }
            EventKind::ProposedReady { summary, .. } => {
                self.summary = Some(summary.clone());
                // A proposal waits for you unless a `ready` follows it in the same write.
                self.enter(State::AwaitingYou, t);
            }
            EventKind::Ready { sha, round, .. } => {
                self.ci_reopened_at = None;
                self.follow = None;
                self.sha = Some(sha.clone());
                self.round = *round;
                self.rebase_requested = None;
                self.hallmark = None;
                self.enter(State::Checks, t);
            }
            EventKind::PulledBack { .. } => {
                self.hold = None;
                self.follow = None;
                self.run_failures = 0;
                self.hallmark = None;
                self.enter(State::Development, t);
            }
            EventKind::Dropped { .. } => {
                self.hold = None;
                self.follow = None;
                self.enter(State::Dropped, t);
            }
            EventKind::Retried {
                tokens, released, ..
            } => {
                if let Some(n) = tokens {
                    self.tokens_granted += n;
                }
                self.run_failures = 0;
                if released.is_some() {
                    self.hold = None;
                } else if self.state == State::Escalated {
                    self.extra_rounds += 1;
                    self.enter(State::Fixing, t);
                }
            }
            EventKind::ChecksPassed { .. } => {
                self.check_failures = 0;
                self.run_failures = 0;
                self.enter(State::Review, t);
            }
            EventKind::ChecksFailed { sha, .. } => {
                self.check_failures += 1;
                self.run_failures = 0;
                // The shipper's checks of a rebased commit failed: the fix starts there,
                // and the approval it had is gone.
                self.sha = Some(sha.clone());
                self.hallmark = None;
                self.enter(State::Fixing, t);
            }
            EventKind::Verdict { approved, .. } => {
                self.run_failures = 0;
                if !approved {
                    self.rejects += 1;
                    self.enter(State::Fixing, t);
                }
            }
            EventKind::Escalated { .. } => self.enter(State::Escalated, t),
            EventKind::Hallmarked { sha, .. } => {
                // A carried rebase answers the follow-through and the rebase request.
                self.follow = None;
                self.rebase_requested = None;
                self.hallmark = Some(sha.clone());
                self.sha = Some(sha.clone());
                self.enter(State::Hallmarked, t);
            }
            EventKind::FixSubmitted { sha, .. } => {
                self.run_failures = 0;
                self.sha = Some(sha.clone());
                self.round += 1;
                self.enter(State::Checks, t);
            }
            EventKind::Shipped { pr, sha } => {
                self.shipped = Some(sha.clone());
                if pr.is_some() {
                    self.pr = pr.clone();
                }
                self.enter(State::Closed, t);
            }
            EventKind::Reopened { ci_at, .. } => {
                self.hallmark = None;
                self.ci_reopened_at = ci_at.clone();
                self.enter(State::Development, t);
            }
            EventKind::Restored {} => {
                self.ci_reopened_at = None;
                self.follow = None;
                // A `ci_failed` hold clears when the PR's checks pass on a re-run.
                self.hold = None;
                self.enter(State::Closed, t);
            }
            EventKind::Rebased { sha, carried, .. } => {
                if *carried {
                    self.sha = Some(sha.clone());
                }
            }
            EventKind::RunFailed { .. } => self.run_failures += 1,
            EventKind::RebaseRequested { base } => self.rebase_requested = Some(base.clone()),
            EventKind::Restacked { to, .. } => self.base = to.clone(),
            EventKind::FollowUpOf { pr, .. } => self.follow_up = Some(pr.clone()),
            EventKind::IssueOf { number, .. } => self.issue = Some(*number),
            EventKind::PartOf { parent } => self.parent = Some(*parent),
            EventKind::PartAdded {
                child,
                title,
                paths,
            } => {
                if !self.parts.iter().any(|p| p.id == *child) {
                    self.parts.push(Part {
                        id: *child,
                        title: title.clone(),
                        paths: paths.clone(),
                    });
                }
            }
            EventKind::Merged { commit, .. } => {
                self.merged = Some(commit.clone());
                self.state = State::Closed;
            }
            EventKind::ReplyDrafted { comment, body } => {
                self.replies.retain(|r| r.comment != *comment || r.posted);
                self.replies.push(Reply {
                    comment: *comment,
                    body: body.clone(),
                    posted: false,
                });
            }
            EventKind::ReplyPosted { comment } => {
                for r in self.replies.iter_mut().filter(|r| r.comment == *comment) {
                    r.posted = true;
                }
            }
            EventKind::FollowThrough { kind, brief } => {
                if *kind == FollowKind::Ci {
                    self.ci_fixes += 1;
                }
                self.follow = Some(Follow {
                    kind: *kind,
                    brief: brief.clone(),
                });
            }
            EventKind::Delivered { pr, merged } => {
                self.delivered = Some(Delivery {
                    pr: pr.clone(),
                    merged: *merged,
                });
                // The merger's holds are about merging this PR: once it merged or
                // closed, there is nothing left to hold.
                if self
                    .hold
                    .as_ref()
                    .is_some_and(|h| matches!(h.kind, HoldKind::MergeFailed | HoldKind::Lit))
                {
                    self.hold = None;
                }
            }
            EventKind::WorktreeRemoved { .. } => self.worktree_removed = true,
            EventKind::Held { kind, reason, next } => {
                self.hold = Some(Hold {
                    kind: *kind,
                    reason: reason.clone(),
                    since: t.to_string(),
                    next: next.clone(),
                });
            }
            EventKind::Asked { .. } => {
                if let Some(q) = Question::asked(event) {
                    self.questions.insert(q.qid.0, q);
                }
            }
            EventKind::Answered {
                qid,
                answer,
                by_default,
            } => {
                if let Some(q) = self.questions.get_mut(&qid.0) {
                    q.answer = Some(answer.clone());
                    q.by_default = *by_default;
                }
            }
            EventKind::CheckRun { .. }
            | EventKind::SetupRun { .. }
            | EventKind::Prompt { .. }
            | EventKind::Turn { .. }
            | EventKind::Commit { .. }
            | EventKind::Usage(_)
            | EventKind::Notification { .. }
            | EventKind::GateDenied { .. }
            | EventKind::ToolPolicy { .. }
            | EventKind::RoomUsed { .. }
            | EventKind::RulesUsed { .. }
            | EventKind::InboxDismissed { .. }
            | EventKind::Notified { .. }
            | EventKind::Attached { .. }
            | EventKind::Distilled { .. }
            | EventKind::Resumed { .. }
            | EventKind::Paused { .. }
            | EventKind::BudgetGranted { .. }
            | EventKind::TornLine { .. }
            | EventKind::Merging { .. }
            | EventKind::PrMerged { .. }
            | EventKind::Intake { .. }
            | EventKind::LearningProposed { .. }
            | EventKind::LearningAccepted { .. }
            | EventKind::LearningRejected { .. }
            | EventKind::LearningRetired { .. }
            | EventKind::LearningRestored { .. }
            | EventKind::Other => {}
        }
    }
}

/// Folds a whole journal.
pub fn fold<'a>(events: impl IntoIterator<Item = &'a Event>) -> Item {
    let mut item = Item::default();
    for e in events {
        item.apply(e);
    }
    item
}
