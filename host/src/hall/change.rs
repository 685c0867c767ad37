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
    /// The commit the approved change was measured from, for the hallmark it may strike.
    measured_from: Option<Sha>,
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
            measured_from: None,
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

    /// The commit the change being approved was measured from (what the reviewer's diff
    /// started at, or the base a carried rebase landed on). Without it, the hallmark
    /// names the newest fork point of the commit with the item's base.
    pub fn measured_from(mut self, base: Sha) -> Self {
        self.measured_from = Some(base);
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
            measured_from,
        } = self;
        let mut decided = 0;
        let tx = hall
            .journal
            .transact(id, |now, events| -> Result<Vec<Event>> {
                let mut out = records;
                if let Some(action) = choose(now) {
                    let sign = signer.map(|s| (s, measured_from.clone()));
                    let new = decide_stamped(hall, ctx, id, (now, events), action, sign)?;
                    decided = new.len();
                    if decided > 0 {
                        out.extend(grounds);
                    }
                    out.extend(new);
                }
                Ok(out)
            })?;
        if decided > 0 && tx.appended.iter().any(|e| moves_the_page(&e.kind)) {
            crate::gazette::refresh(&hall.journal, id);
        }
        Ok(Applied {
            before: tx.before,
            after: tx.after,
            appended: tx.appended,
            decided,
            torn: tx.torn,
        })
    }
}

/// Whether an event is news for the item's Gazette: hallmarked, shipped, merged, CI
/// reported (red reopens the item, green restores it), dropped. The page is printed
/// again from code, with no model run, whoever made the change (decision 0015).
fn moves_the_page(kind: &EventKind) -> bool {
    matches!(
        kind,
        EventKind::Hallmarked { .. }
            | EventKind::Shipped { .. }
            | EventKind::Delivered { .. }
            | EventKind::Merged { .. }
            | EventKind::Reopened { .. }
            | EventKind::Restored {}
            | EventKind::Dropped { .. }
    )
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
    signer: Option<(&Signer, Option<Sha>)>,
) -> Result<Vec<Event>> {
    let stamp = |kinds: Vec<EventKind>| -> Vec<Event> {
        kinds.into_iter().map(|k| ctx.event(Some(id), k)).collect()
    };
    let kinds = decide(now, &action).map_err(|r| refused(id, r))?;
    let Some((sha, round)) = strikes(&kinds) else {
        return Ok(stamp(kinds));
    };
    let (signer, measured_from) = signer.ok_or_else(|| {
        HallError::internal(format!(
            "{id}: the {} would strike a hallmark, but no key was given to sign it",
            action.name()
        ))
    })?;
    let mut after: Vec<Event> = events.to_vec();
    after.extend(stamp(kinds));
    let mut note = super::hallmark::approval_note(&after, id, &sha, round);
    note.tree = Some(crate::git::tree_of(&hall.repo.main_root, &sha)?.into_string());
    note.base = measured_from.or_else(|| newest_fork(hall, now, &sha));
    let seal = super::hallmark::sign_note(signer, &note)?;
    match &mut action {
        Action::Verdict { seal: s, .. } | Action::Rebased { seal: s, .. } => *s = Some(seal),
        _ => return Err(HallError::internal("only an approval or a carry is signed")),
    }
    let kinds = decide(now, &action).map_err(|r| refused(id, r))?;
    Ok(stamp(kinds))
}

/// The newest commit `sha` shares with the item's base, as this clone has the base
/// (its own branch and origin's copy): the latest point the change can have been
/// measured from. A later claimed base only asks more of the branch the hallmark is
/// checked against, never less.
fn newest_fork(hall: &Hall, item: &Item, sha: &Sha) -> Option<Sha> {
    let root = &hall.repo.main_root;
    let forks: Vec<Sha> = [
        format!("refs/remotes/origin/{}", item.base),
        format!("refs/heads/{}", item.base),
    ]
    .iter()
    .filter(|r| crate::git::commit(root, r).is_some())
    .filter_map(|r| crate::git::merge_base(root, r, sha.as_str()).ok())
    .collect();
    forks.iter().fold(None, |best: Option<Sha>, f| match best {
        Some(b) if crate::git::is_ancestor(root, f.as_str(), b.as_str()) => Some(b),
        _ => Some(f.clone()),
    })
}

/// Turns a refusal of the state machine into the agent contract's error.
pub fn refused(id: ItemId, r: Refusal) -> HallError {
    match r {
        Refusal::WrongState { state, action } => {
            HallError::new(
                Code::WrongState,
                format!(
                    "{id} is in {} ({}), where `{action}` can't be done",
                    state.as_str().replace('_', " "),
                    state.station()
                ),
            )
            .hint(format!("hall status {id}"))
        }
        Refusal::InReview { state, round, sha } => HallError::new(
            Code::ItemInReview,
            format!(
                "{id} is in {state} (round {round}) at {}, the commit frozen by `hall ready`; \
                 HEAD has moved since, and the loop reviews only the frozen commit. Wait for \
                 the round to end, or pull the item back and freeze the new HEAD",
                sha.short()
            ),
        )
        .hint(format!("hall pull-back {id} && hall ready {id}"))
        .hint(format!("hall status {id}")),
        Refusal::RebasePending { base } => HallError::new(
            Code::WrongState,
            format!("{id} has a standing request to rebase onto {base}, and its branch isn't on {base} yet"),
        )
        .hint(format!("git rebase {base}"))
        .hint(format!("hall ready {id}")),
        Refusal::Part { parent } => HallError::new(
            Code::WrongState,
            format!(
                "{id} is a part of {parent}: a part is not reviewed on its own. Merge it into \
                 {parent} with `hall merge {id}`; once every part is merged, `hall ready {parent}` \
                 has the whole change reviewed once"
            ),
        )
        .hint(format!("hall merge {id}"))
        .hint(format!("hall status {parent}")),
        Refusal::NotAPart => HallError::new(
            Code::WrongState,
            format!("{id} is not a part of another item, so there is nothing to merge it into"),
        )
        .hint(format!("hall ready {id}"))
        .hint(format!("hall status {id}")),
        Refusal::NothingToRetry { state } => {
            HallError::new(
                Code::WrongState,
                format!(
                    "{id} is in {} ({}) and nothing holds it, so there is nothing to retry: \
                     `hall retry` releases a hold or gives an escalated item another round",
                    state.as_str().replace('_', " "),
                    state.station()
                ),
            )
            .hint(format!("hall status {id}"))
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::clock::Clock;
    use crate::config::Config;
    use crate::git::Repo;
    use crate::item::{EventKind, Source, State};
    use crate::journal::Journal;

    /// A repository layout with a journal and one item in development, its worktree at
    /// `<root>/wt` (no git needed: nothing that uses it touches the repository).
    pub(crate) fn world() -> (tempfile::TempDir, Hall, Ctx, ItemId) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        let repo = Repo {
            toplevel: root.clone(),
            git_dir: root.join(".git"),
            common_dir: root.join(".git"),
            main_root: root.clone(),
        };
        let journal = Journal::new(root.join(".git/hallmark"));
        journal.init().unwrap();
        let hall = Hall::with(repo, journal, Config::default());
        let at = crate::clock::parse("2026-11-02T09:00:00Z").unwrap();
        let ctx = Ctx::at(root.clone(), Clock::fixed(at), "you");
        let (id, _) = hall
            .journal
            .create_item(|id| {
                Ok::<_, HallError>(vec![ctx.event(
                    Some(id),
                    EventKind::Created {
                        title: "t".into(),
                        request: None,
                        branch: "hm/t".into(),
                        base: "main".into(),
                        worktree: Some(root.join("wt").display().to_string()),
                        source: Source::New,
                        issue: None,
                        pr: None,
                    },
                )])
            })
            .unwrap();
        (dir, hall, ctx, id)
    }

    fn note(ctx: &Ctx, id: ItemId, text: &str) -> Event {
        ctx.event(
            Some(id),
            EventKind::Notification {
                kind: "test".into(),
                message: text.into(),
                session: None,
            },
        )
    }

    fn ready() -> Action {
        Action::Ready {
            sha: Sha::new("a".repeat(40)),
            note: None,
            on_base: true,
        }
    }

    #[test]
    fn a_change_decides_stamps_and_appends_records_first() {
        let (_dir, hall, ctx, id) = world();
        let applied = hall
            .change(&ctx, id)
            .recording([note(&ctx, id, "kept")])
            .grounded_on([note(&ctx, id, "grounds")])
            .apply(ready())
            .unwrap();
        assert!(applied.changed());
        assert_eq!(applied.after.state, State::Checks);
        let kinds: Vec<&str> = applied.appended.iter().map(|e| e.kind.name()).collect();
        assert_eq!(kinds, ["notification", "notification", "ready"]);
        assert!(
            applied
                .appended
                .iter()
                .all(|e| e.t == "2026-11-02T09:00:00Z")
        );
        assert_eq!(
            hall.item(id).unwrap(),
            applied.after,
            "what is returned is what is folded"
        );
        // A repeat at the same SHA decides nothing and writes nothing.
        let again = hall.change(&ctx, id).apply(ready()).unwrap();
        assert!(!again.changed());
        assert!(again.appended.is_empty());
    }

    #[test]
    fn an_item_that_moved_on_keeps_the_records_but_not_the_grounds() {
        let (_dir, hall, ctx, id) = world();
        let applied = hall
            .change(&ctx, id)
            .recording([note(&ctx, id, "usage")])
            .grounded_on([note(&ctx, id, "room used")])
            .apply_with(|_| None)
            .unwrap();
        assert!(!applied.changed());
        let messages: Vec<String> = hall
            .events(id)
            .unwrap()
            .iter()
            .filter_map(|e| match &e.kind {
                EventKind::Notification { message, .. } => Some(message.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(messages, ["usage"]);
    }

    #[test]
    fn a_refusal_is_the_contract_error_and_writes_nothing() {
        let (_dir, hall, ctx, id) = world();
        let before = hall.events(id).unwrap().len();
        let err = hall
            .change(&ctx, id)
            .recording([note(&ctx, id, "not written")])
            .apply(Action::ChecksPassed {
                sha: Sha::new("a".repeat(40)),
            })
            .unwrap_err();
        assert_eq!(err.code, Code::WrongState);
        assert_eq!(err.next, [format!("hall status {id}")]);
        assert_eq!(hall.events(id).unwrap().len(), before);
    }

    #[test]
    fn an_approval_without_a_key_is_refused_before_anything_is_written() {
        let (_dir, hall, ctx, id) = world();
        hall.change(&ctx, id).apply(ready()).unwrap();
        hall.change(&ctx, id)
            .apply(Action::ChecksPassed {
                sha: Sha::new("a".repeat(40)),
            })
            .unwrap();
        let before = hall.events(id).unwrap().len();
        let err = hall
            .change(&ctx, id)
            .apply(Action::Verdict {
                sha: Sha::new("a".repeat(40)),
                approved: true,
                findings: Vec::new(),
                model: None,
                summary: None,
                by: None,
                learnings: Vec::new(),
                max_rejects: 3,
                seal: None,
            })
            .unwrap_err();
        assert!(err.message.contains("no key was given to sign it"), "{err}");
        assert_eq!(hall.events(id).unwrap().len(), before);
        assert_eq!(hall.item(id).unwrap().state, State::Review);
    }
}
