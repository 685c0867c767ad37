//! Keeps the status board (`crate::hall::statusline`) current: rebuilt from the index
//! after a command that changed the journal, after a daemon pass that did, and by
//! `hall statusline` itself when it finds the board stale.

use std::collections::BTreeMap;

use crate::config::MergeMode;
use crate::error::Result;
use crate::hall::statusline::{self, Board, BoardItem, QueueSpot};
use crate::item::ItemId;

use super::{Ctx, Hall};

/// Builds the board from the index, the inbox and the merger's last plan, and writes it.
pub fn refresh(hall: &Hall) -> Result<Board> {
    // Measured first: whatever is appended while the board is built makes it moved.
    let changes = statusline::changes_len(&hall.journal);
    let index = hall.index()?;
    let rows = index.items(false)?;
    let inbox = super::inbox::count(&index)?;
    let mut queue = queue_spots(hall);
    let now = crate::clock::now();
    let board = Board {
        v: statusline::VERSION,
        at: crate::clock::stamp(now),
        at_unix: crate::clock::wall_secs(),
        changes,
        inbox,
        merger_on: hall.config.merge.mode == MergeMode::Auto,
        items: rows
            .into_iter()
            .map(|r| BoardItem {
                queue: queue.remove(&r.id),
                id: r.id,
                title: r.title,
                state: r.state,
                branch: r.branch,
                worktree: r.worktree,
                hold: r.hold,
            })
            .collect(),
    };
    statusline::write(&hall.journal, &board).map_err(crate::error::HallError::internal)?;
    Ok(board)
}

/// Each shipped PR's place in its base's queue, by item, from the merger's last plan.
pub fn queue_spots(hall: &Hall) -> BTreeMap<ItemId, QueueSpot> {
    let mut spots = BTreeMap::new();
    for b in crate::office::merger::read_plan(hall)
        .map(|p| p.bases)
        .unwrap_or_default()
    {
        let of = b.prs.len();
        for (i, pr) in b.prs.into_iter().enumerate() {
            spots.insert(
                pr.item,
                QueueSpot {
                    base: b.base.clone(),
                    position: i + 1,
                    of,
                    action: pr.action,
                },
            );
        }
    }
    spots
}

/// Rebuilds the board when there is none or the journal moved past it.
pub fn refresh_if_moved(hall: &Hall) {
    let moved = statusline::read(&hall.journal).is_none_or(|b| b.moved(&hall.journal));
    if moved {
        let _ = refresh(hall);
    }
}

/// After a command: rebuilds the board of the command's repository when the journal
/// moved past it. Costs a directory walk and a `stat` when nothing changed; never fails
/// the command (the next reader rebuilds a board this misses).
pub fn after_command(ctx: &Ctx) {
    let Ok(repo) = ctx.repo() else {
        return;
    };
    let journal = crate::journal::Journal::new(repo.hall_dir());
    if !journal.exists() {
        return;
    }
    if statusline::read(&journal).is_some_and(|b| !b.moved(&journal)) {
        return;
    }
    if let Ok(hall) = Hall::open(repo) {
        let _ = refresh(&hall);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hall::change::tests::world;
    use crate::item::{Action, Sha, State};

    #[test]
    fn the_board_follows_the_journal_and_is_rebuilt_only_when_it_moved() {
        let (dir, hall, ctx, id) = world();
        refresh_if_moved(&hall);
        let board = statusline::read(&hall.journal).expect("a board");
        assert_eq!(board.items.len(), 1);
        assert_eq!(board.items[0].state, State::Development);
        assert_eq!(board.inbox, 0);
        assert!(!board.moved(&hall.journal));
        let here = board
            .item_at(&dir.path().join("wt/src"), None)
            .map(|i| i.id);
        assert_eq!(here, Some(id));

        // Nothing changed: the board is left as it is (same bytes, same stamp).
        let before = std::fs::read(statusline::path(&hall.journal)).unwrap();
        refresh_if_moved(&hall);
        assert_eq!(
            std::fs::read(statusline::path(&hall.journal)).unwrap(),
            before
        );

        // A transition moves the journal; the next refresh sees the new state.
        hall.change(&ctx, id)
            .apply(Action::Ready {
                sha: Sha::new("a".repeat(40)),
                note: None,
                on_base: true,
            })
            .unwrap();
        assert!(board.moved(&hall.journal));
        refresh_if_moved(&hall);
        let board = statusline::read(&hall.journal).expect("a board");
        assert_eq!(board.items[0].state, State::Checks);
        assert!(!board.moved(&hall.journal));
    }
}
