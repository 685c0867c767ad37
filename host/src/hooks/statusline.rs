//! `hall statusline`: one line for Claude Code's status line.
//!
//! Claude Code runs the command after each message with the session's JSON on stdin and
//! shows the first line of stdout. It lives with the hooks because it keeps their
//! contract: it never fails (a line or nothing, exit 0, whatever goes wrong), and it
//! reads the session's binding (`sessions/<id>.json`) as they do. It reads the status
//! board (`crate::hall::statusline`), the item's `item.json` and its lease: a handful of
//! small files, never the journal, and the index only to rebuild a stale board.

use std::io::{IsTerminal, Read};
use std::path::PathBuf;

use serde::Deserialize;

use crate::git::Repo;
use crate::hall::statusline::{self, Board, Line, LineItem};
use crate::item::ItemId;
use crate::journal::Journal;

/// The most stdin read; the session JSON is a few hundred bytes.
const MAX_INPUT: u64 = 1024 * 1024;

/// The fields of Claude Code's status line input that matter here.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Input {
    session_id: Option<String>,
    cwd: Option<String>,
    workspace: Workspace,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Workspace {
    current_dir: Option<String>,
}

/// Prints the line (or nothing) and returns the exit code, which is always 0.
pub fn main(args: &[String]) -> u8 {
    let json = args.iter().any(|a| a == "--json");
    let colour = !json
        && std::io::stdout().is_terminal()
        && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let input = read_input();
    let line = std::panic::catch_unwind(|| line(&input)).ok().flatten();
    if let Some(line) = line {
        if json {
            println!("{}", serde_json::to_string(&line).unwrap_or_default());
        } else {
            println!("{}", statusline::render(&line, colour));
        }
    }
    0
}

/// The session JSON, or nothing when stdin is a terminal (a person trying it by hand)
/// or holds something else.
fn read_input() -> Input {
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        return Input::default();
    }
    let mut raw = Vec::new();
    if stdin.take(MAX_INPUT).read_to_end(&mut raw).is_err() {
        return Input::default();
    }
    serde_json::from_slice(&raw).unwrap_or_default()
}

/// The line for the session's directory: `None` outside an initialized repository.
fn line(input: &Input) -> Option<Line> {
    let cwd = input
        .workspace
        .current_dir
        .as_deref()
        .or(input.cwd.as_deref())
        .filter(|c| !c.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::current_dir().ok())?;
    let repo = Repo::discover(&cwd).ok()?;
    let journal = Journal::new(repo.hall_dir());
    if !journal.exists() {
        return None;
    }
    let (board, stale) = board(&repo, &journal);
    let Some(board) = board else {
        // A journal whose board can't be built (a broken index): say so briefly.
        return Some(Line {
            stale: true,
            ..Line::default()
        });
    };
    let branch = repo
        .is_linked_worktree()
        .then(|| std::fs::read_to_string(repo.git_dir.join("HEAD")).ok())
        .flatten()
        .and_then(|h| {
            h.trim()
                .strip_prefix("ref: refs/heads/")
                .map(str::to_string)
        });
    let here = board
        .item_at(&cwd, branch.as_deref())
        .or_else(|| board.item_at(&repo.toplevel, branch.as_deref()))
        .map(|i| i.id);
    let id = here.or_else(|| {
        let session = input.session_id.as_deref().filter(|s| !s.is_empty())?;
        super::session::load(&journal, session).item
    });
    Some(Line {
        item: id.and_then(|id| item_part(&journal, &board, id)),
        items: board.items.len(),
        inbox: board.inbox,
        stale,
    })
}

/// The board to show, and whether it is stale: a fresh one as it is, else one rebuilt
/// now, else the old one marked stale.
fn board(repo: &Repo, journal: &Journal) -> (Option<Board>, bool) {
    let old = statusline::read(journal);
    if let Some(b) = &old
        && !b.stale(journal, crate::clock::wall_secs())
    {
        return (old, false);
    }
    let rebuilt = crate::hall::Hall::open(repo.clone())
        .and_then(|hall| crate::commands::board::refresh(&hall))
        .ok();
    match rebuilt {
        Some(b) => (Some(b), false),
        None => (old, true),
    }
}

/// The item's part of the line: its state from `item.json` (rewritten by every
/// transition, so fresher than the board), what runs for it from its lease, and its
/// place in the merge queue when the merger is on.
fn item_part(journal: &Journal, board: &Board, id: ItemId) -> Option<LineItem> {
    let on_board = board.item(id);
    let cached = statusline::cached_item(journal, id);
    let (title, state, hold) = match (&cached, on_board) {
        (Some(i), _) => (
            i.title.clone(),
            i.state,
            i.hold.as_ref().map(|h| h.kind.as_str().to_string()),
        ),
        (None, Some(b)) => (b.title.clone(), b.state, b.hold.clone()),
        (None, None) => return None,
    };
    let running = crate::office::lease::current(journal.root(), id)
        .map(|l| format!("{} {}", l.role, l.phase));
    let queue = on_board
        .filter(|_| board.merger_on)
        .and_then(|b| b.queue.clone());
    Some(LineItem {
        id,
        title,
        state,
        hold,
        running,
        queue,
    })
}
