//! The one transition path. Every state change of an item, whoever asks for it (a
//! command, a worker of the loop), is made by [`Change::apply`]: lock the item's
//! journal, fold it, let the state machine decide, stamp the events, sign a hallmark the
//! decision strikes, append everything in one write, and refresh the caches the journal
//! keeps. Nothing else calls `Journal::transact` or `item::decide`.
//!
//! A worker's step often has records to keep whatever happens to the item (a run's
//! usage): [`Change::recording`] writes them in the same write as the transition.
//! [`Change::grounded_on`] writes what a decision rests on (the checks that ran, the
//! room that judged a verdict) only when the decision is recorded. A step that took a while re-reads the item
//! under the lock with [`Change::apply_with`], and records only those when the item
//! has moved on since (a pull-back mid-review, a second daemon), so it never writes
//! anything that contradicts the journal.

use super::{Ctx, Hall};
use crate::error::{Code, HallError, Result};
use crate::item::{Action, Event, EventKind, Item, ItemId, Refusal, Sha, decide};
use crate::journal::Torn;
use crate::sign::Signer;

/// A change to one item, being put together.
pub struct Change<'a> {
    hall: &'a Hall,
    ctx: &'a Ctx,
    id: ItemId,
    /// Written whatever is decided.
    records: Vec<Event>,
    /// Written only with a decision, ahead of its events (what the decision rests on).
    grounds: Vec<Event>,
    signer: Option<&'a Signer>,
}

/// What a change did.
#[derive(Debug)]
pub struct Applied {
    pub before: Item,
    pub after: Item,
    /// Every line written: the records, then the transition's events.
    pub appended: Vec<Event>,
    /// How many of those the state machine decided (0 for a repeat, or when the item
    /// had moved on and only the records were kept).
    pub decided: usize,
    /// Torn lines the write found and closed.
    pub torn: Vec<Torn>,
}

impl Applied {
    /// Whether the action changed anything (false for an idempotent repeat).
    pub fn changed(&self) -> bool {
        self.decided > 0
    }
}

impl Hall {
    /// Starts a change of item `id` on behalf of `ctx`'s actor.
    pub fn change<'a>(&'a self, ctx: &'a Ctx, id: ItemId) -> Change<'a> {
        Change {
            hall: self,
            ctx,
            id,
            records: Vec::new(),
            grounds: Vec::new(),
            signer: None,
        }
    }
}

impl<'a> Change<'a> {
    /// Events to write with the change, whatever is decided.
    pub fn recording(mut self, events: impl IntoIterator<Item = Event>) -> Self {
        self.records.extend(events);
        self
    }

    /// Events to write only when the action is decided, ahead of its events: what the
    /// decision rests on (the checks that ran, the room that judged the verdict).
    pub fn grounded_on(mut self, events: impl IntoIterator<Item = Event>) -> Self {
        self.grounds.extend(events);
        self
    }

    /// The key that signs the hallmark, for an action that may strike one (an
    /// approving verdict, a rebase that carries an approval).
    pub fn signed_by(mut self, signer: &'a Signer) -> Self {
        self.signer = Some(signer);
        self
    }

    /// Decides `action` against the item as it is under the lock.
    pub fn apply(self, action: Action) -> Result<Applied> {
        self.apply_with(|_| Some(action))
    }

    /// Lets `choose` pick the action from the item as it is under the lock. `None`
    /// means the item has moved on: only the records are written.
    pub fn apply_with(self, choose: impl FnOnce(&Item) -> Option<Action>) -> Result<Applied> {
        let Change {
            hall,
            ctx,
            id,
            records,
            grounds,
            signer,
        } = self;
        let mut decided = 0;
        let tx = hall
            .journal
            .transact(id, |now, events| -> Result<Vec<Event>> {
                let mut out = records;
                if let Some(action) = choose(now) {
                    let new = decide_stamped(hall, ctx, id, (now, events), action, signer)?;
                    decided = new.len();
                    if decided > 0 {
                        out.extend(grounds);
                    }
                    out.extend(new);
                }
                Ok(out)
            })?;
        Ok(Applied {
            before: tx.before,
            after: tx.after,
            appended: tx.appended,
            decided,
            torn: tx.torn,
        })
    }
}

/// The hallmark a decision strikes, if it strikes one.
fn strikes(kinds: &[EventKind]) -> Option<(Sha, u32)> {
    kinds.iter().find_map(|k| match k {
        EventKind::Hallmarked { sha, round, .. } => Some((sha.clone(), *round)),
        _ => None,
    })
}

/// Decides `action` and stamps its events. A decision that strikes a hallmark is made
/// twice: once to learn what the journal will say, so the note it describes can be
/// signed, and again with the signature in the action. The core never sees a key, and
/// what is signed is exactly what is recorded.
fn decide_stamped(
    hall: &Hall,
    ctx: &Ctx,
    id: ItemId,
    (now, events): (&Item, &[Event]),
    mut action: Action,
    signer: Option<&Signer>,
) -> Result<Vec<Event>> {
    let stamp = |kinds: Vec<EventKind>| -> Vec<Event> {
        kinds.into_iter().map(|k| ctx.event(Some(id), k)).collect()
    };
    let kinds = decide(now, &action).map_err(|r| refused(id, r))?;
    let Some((sha, round)) = strikes(&kinds) else {
        return Ok(stamp(kinds));
    };
    let signer = signer.ok_or_else(|| {
        HallError::internal(format!(
            "{id}: the {} would strike a hallmark, but no key was given to sign it",
            action.name()
        ))
    })?;
    let mut after: Vec<Event> = events.to_vec();
    after.extend(stamp(kinds));
    let mut note = super::hallmark::approval_note(&after, id, &sha, round);
    note.tree = Some(crate::git::tree_of(&hall.repo.main_root, &sha)?.into_string());
    let seal = super::hallmark::sign_note(signer, &note)?;
    match &mut action {
        Action::Verdict { seal: s, .. } | Action::Rebased { seal: s, .. } => *s = Some(seal),
        _ => return Err(HallError::internal("only an approval or a carry is signed")),
    }
    let kinds = decide(now, &action).map_err(|r| refused(id, r))?;
    Ok(stamp(kinds))
}

/// Turns a refusal of the state machine into the agent contract's error.
pub fn refused(id: ItemId, r: Refusal) -> HallError {
    match r {
        Refusal::WrongState { state, action } => {
            HallError::new(Code::WrongState, format!("{id} is {state}; `{action}` is not allowed there"))
                .hint(format!("hall status {id}"))
        }
        Refusal::InReview { state, round, sha } => HallError::new(
            Code::ItemInReview,
            format!("{id} is in {state}, round {round}, at {}.", sha.short()),
        )
        .hint(format!("hall pull-back {id}"))
        .hint(format!("hall log {id} --kind verdict")),
        Refusal::RebasePending { base } => HallError::new(
            Code::WrongState,
            format!("{id} has a standing request to rebase onto {base}, and its branch isn't on {base} yet"),
        )
        .hint(format!("git rebase {base}"))
        .hint(format!("hall ready {id}")),
        Refusal::NothingToRetry { state } => {
            HallError::new(Code::WrongState, format!("{id} is {state} with no hold; there is nothing to retry"))
                .hint(format!("hall status {id}"))
        }
    }
}
