//! The status board: `state/statusline.json`, a small summary of the repository that
//! `hall statusline` reads instead of the journal or the index.
//!
//! Claude Code runs the status line command after every message, so reading it must cost
//! about as much as starting a process. The board holds what is expensive to derive (which
//! item lives in which worktree, the inbox count, the merge queue) and is rebuilt from the
//! index by whoever changes the journal: a command when it is done, the daemon after a
//! pass. It records how long the journal's `changes` file was when it was built, so a
//! reader can tell a board the journal has moved past from a current one with one `stat`.
//! What must be current to the second (the item's state, a running lease) the reader takes
//! from the item's own small files (`item.json`, the lease) instead.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::item::{Item, ItemId, State};
use crate::journal::Journal;

/// The board's shape; a reader ignores a board of another version (and rebuilds it).
pub const VERSION: u32 = 1;

/// How long (seconds) a board the journal has moved past is still shown as it is: the
/// hooks append a line on every tool call without changing what the board shows, so
/// rebuilding on every change would put the index back on the status line's path.
pub const FRESH_FOR: u64 = 60;

/// The whole board.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Board {
    pub v: u32,
    /// When it was built (a journal stamp).
    pub at: String,
    /// The same, in seconds since the Unix epoch (the wall clock, for its age).
    pub at_unix: u64,
    /// The length of the journal's `changes` file it was built from.
    pub changes: u64,
    /// Entries waiting in `hall inbox`.
    pub inbox: usize,
    /// Whether the merger is on (`[merge] mode = "auto"`).
    pub merger_on: bool,
    /// The items still in the loop (not closed or dropped), in id order.
    pub items: Vec<BoardItem>,
}

/// One item as the board knows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BoardItem {
    pub id: ItemId,
    pub title: String,
    pub state: State,
    pub branch: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worktree: Option<String>,
    /// The hold's kind, when the item is held.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hold: Option<String>,
    /// Its place in the merge queue, as the merger's last pass judged it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<QueueSpot>,
}

/// A shipped PR's place in its base's merge queue.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct QueueSpot {
    pub base: String,
    /// 1 for the head of the queue.
    pub position: usize,
    /// How many PRs the queue holds.
    pub of: usize,
    /// What the merger means to do with it (`merge`, `rebase`, `wait`, `hold`).
    pub action: String,
}

/// Where the board lives.
pub fn path(journal: &Journal) -> PathBuf {
    journal.root().join("state").join("statusline.json")
}

/// The board, when there is a readable one of this version.
pub fn read(journal: &Journal) -> Option<Board> {
    let bytes = std::fs::read(path(journal)).ok()?;
    serde_json::from_slice::<Board>(&bytes)
        .ok()
        .filter(|b| b.v == VERSION)
}

/// Writes the board atomically, so a reader sees the old one or the new one.
pub fn write(journal: &Journal, board: &Board) -> std::io::Result<()> {
    let path = path(journal);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(crate::journal::file::at(dir))?;
    }
    let bytes = serde_json::to_vec(board).map_err(std::io::Error::other)?;
    crate::journal::file::write_atomic(&path, &bytes)
}

/// The length of the journal's `changes` file: it grows with every append.
pub fn changes_len(journal: &Journal) -> u64 {
    std::fs::metadata(journal.changes_file()).map_or(0, |m| m.len())
}

impl Board {
    /// Whether the journal changed since the board was built.
    pub fn moved(&self, journal: &Journal) -> bool {
        changes_len(journal) != self.changes
    }

    /// Whether the board should be rebuilt before it is shown: the journal moved on
    /// and the board is older than [`FRESH_FOR`].
    pub fn stale(&self, journal: &Journal, now_unix: u64) -> bool {
        self.moved(journal) && now_unix.saturating_sub(self.at_unix) > FRESH_FOR
    }

    pub fn item(&self, id: ItemId) -> Option<&BoardItem> {
        self.items.iter().find(|i| i.id == id)
    }

    /// The item whose worktree contains `dir` (the deepest, for nested worktrees), else
    /// the one on `branch` (the branch checked out in a linked worktree).
    pub fn item_at(&self, dir: &Path, branch: Option<&str>) -> Option<&BoardItem> {
        let by_place = self
            .items
            .iter()
            .filter_map(|i| {
                let w = Path::new(i.worktree.as_deref()?);
                dir.starts_with(w).then_some((w.components().count(), i))
            })
            .max_by_key(|(depth, _)| *depth)
            .map(|(_, i)| i);
        by_place.or_else(|| {
            let branch = branch?;
            self.items.iter().find(|i| i.branch == branch)
        })
    }
}

/// The item's `item.json`, the cache every transition rewrites: fresher than the board
/// between two rebuilds.
pub fn cached_item(journal: &Journal, id: ItemId) -> Option<Item> {
    let bytes = std::fs::read(journal.item_dir(id).join("item.json")).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// What one status line shows.
#[derive(Clone, Debug, Default, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Line {
    /// The item of the session, if it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub item: Option<LineItem>,
    /// How many items are in the loop (shown outside any item).
    pub items: usize,
    pub inbox: usize,
    /// The board was older than it should be and could not be rebuilt.
    pub stale: bool,
}

/// The item part of the line.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct LineItem {
    pub id: ItemId,
    pub title: String,
    pub state: State,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hold: Option<String>,
    /// What is running for it now: the lease's role and phase (`assayer checks`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub running: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue: Option<QueueSpot>,
}

/// The longest title shown; the line has to fit beside Claude Code's prompt.
const TITLE_MAX: usize = 32;

/// The line as text, with ANSI colour on the state when `colour`.
pub fn render(line: &Line, colour: bool) -> String {
    let paint = |code: &str, s: String| {
        if colour {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s
        }
    };
    let mut parts = Vec::new();
    match &line.item {
        Some(i) => {
            let state = i.state.as_str().replace('_', " ");
            let code = match i.state {
                State::Escalated | State::AwaitingYou => "33",
                State::Hallmarked | State::Closed => "32",
                State::Dropped => "2",
                _ => "36",
            };
            let mut head = format!("{} {}", i.id, paint(code, state));
            if let Some(h) = &i.hold {
                head.push_str(&format!(" (held: {h})"));
            }
            parts.push(head);
            parts.push(format!("\"{}\"", shorten(&i.title, TITLE_MAX)));
            if let Some(r) = &i.running {
                parts.push(format!("now: {r}"));
            }
            if let Some(q) = &i.queue {
                parts.push(format!(
                    "queue {}/{} on {} ({})",
                    q.position, q.of, q.base, q.action
                ));
            }
        }
        None => parts.push(format!(
            "hall: {} item{} in the loop",
            line.items,
            if line.items == 1 { "" } else { "s" }
        )),
    }
    if line.inbox > 0 {
        parts.push(paint("33", format!("inbox {}", line.inbox)));
    }
    let mut out = parts.join(" · ");
    if line.stale {
        out.push_str(" (stale)");
    }
    out
}

/// `s` cut to `max` characters, with an ellipsis when cut.
fn shorten(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn board() -> Board {
        Board {
            v: VERSION,
            at: "2026-12-05T10:00:00Z".into(),
            at_unix: 1_000,
            changes: 0,
            inbox: 2,
            merger_on: true,
            items: vec![
                BoardItem {
                    id: ItemId(1),
                    title: "Fix the login page".into(),
                    state: State::Development,
                    branch: "hm/login".into(),
                    worktree: Some("/w/repo-H-0001".into()),
                    hold: None,
                    queue: None,
                },
                BoardItem {
                    id: ItemId(2),
                    title: "Nested".into(),
                    state: State::Checks,
                    branch: "hm/nested".into(),
                    worktree: Some("/w/repo-H-0001/sub".into()),
                    hold: None,
                    queue: None,
                },
            ],
        }
    }

    #[test]
    fn the_board_is_written_atomically_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let journal = Journal::new(dir.path().join("hallmark"));
        journal.init().unwrap();
        assert_eq!(read(&journal), None, "no board yet");
        let b = board();
        write(&journal, &b).unwrap();
        assert_eq!(read(&journal), Some(b.clone()));
        // Another version is not this reader's to show.
        write(&journal, &Board { v: 99, ..b.clone() }).unwrap();
        assert_eq!(read(&journal), None);
        // A torn or foreign file reads as no board, never as an error.
        std::fs::write(path(&journal), b"{\"v\":1,").unwrap();
        assert_eq!(read(&journal), None);
    }

    #[test]
    fn a_board_goes_stale_only_when_the_journal_moved_and_time_passed() {
        let dir = tempfile::tempdir().unwrap();
        let journal = Journal::new(dir.path().join("hallmark"));
        journal.init().unwrap();
        let mut b = board();
        b.changes = changes_len(&journal);
        assert!(!b.moved(&journal));
        assert!(!b.stale(&journal, b.at_unix + 10 * FRESH_FOR));
        crate::journal::file::append_raw(&journal.changes_file(), "H-0001\n").unwrap();
        assert!(b.moved(&journal));
        assert!(!b.stale(&journal, b.at_unix + 1), "moved, but still fresh");
        assert!(b.stale(&journal, b.at_unix + FRESH_FOR + 1));
    }

    #[test]
    fn the_deepest_worktree_wins_then_the_branch() {
        let b = board();
        let at = |d: &str, br: Option<&str>| b.item_at(Path::new(d), br).map(|i| i.id.0);
        assert_eq!(at("/w/repo-H-0001/src", None), Some(1));
        assert_eq!(at("/w/repo-H-0001/sub/x", None), Some(2));
        assert_eq!(
            at("/w/repo-H-0001-other", None),
            None,
            "a prefix is not a parent"
        );
        assert_eq!(at("/elsewhere", Some("hm/nested")), Some(2));
        assert_eq!(at("/elsewhere", None), None);
    }

    #[test]
    fn the_line_names_the_item_its_state_run_queue_and_inbox() {
        let mut line = Line {
            item: Some(LineItem {
                id: ItemId(7),
                title: "Make the status line fast enough for every message".into(),
                state: State::AwaitingYou,
                hold: None,
                running: Some("assayer checks".into()),
                queue: Some(QueueSpot {
                    base: "main".into(),
                    position: 2,
                    of: 3,
                    action: "wait".into(),
                }),
            }),
            items: 4,
            inbox: 1,
            stale: false,
        };
        assert_eq!(
            render(&line, false),
            "H-0007 awaiting you · \"Make the status line fast enoug…\" · now: assayer checks · queue 2/3 on main (wait) · inbox 1"
        );
        let coloured = render(&line, true);
        assert!(
            coloured.contains("\x1b[33mawaiting you\x1b[0m"),
            "{coloured}"
        );
        line.item = None;
        line.inbox = 0;
        line.stale = true;
        assert_eq!(render(&line, false), "hall: 4 items in the loop (stale)");
        line.items = 1;
        line.stale = false;
        assert_eq!(render(&line, false), "hall: 1 item in the loop");
    }
}
