//! What the app shows, read from the index and from hall commands' replies: the open
//! items (never every event of every item), the inbox, and the text of the view on
//! screen.

use crate::hall::inbox::Entry;
use crate::hall::{Ctx, Hall};
use crate::index::ItemRow;
use crate::item::State;

/// The places of the building the board groups items into, in its order.
pub const PLACES: [&str; 6] = [
    "Your Office",
    "Workshop",
    "Assay Office",
    "Repair Shop",
    "Stamping Office",
    "Records",
];

/// How many closed or dropped items Records shows on the board (the newest).
const RECORDS: usize = 10;

/// One row of the board.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BoardRow {
    pub id: String,
    pub title: String,
    pub state: State,
    pub hold: Option<String>,
    pub round: u32,
    pub place: &'static str,
}

impl BoardRow {
    pub fn from_index(r: &ItemRow) -> BoardRow {
        let place = if r.hold.is_some() || matches!(r.state, State::AwaitingYou | State::Escalated)
        {
            PLACES[0]
        } else {
            match r.state {
                State::Development => PLACES[1],
                State::Checks | State::Review => PLACES[2],
                State::Fixing => PLACES[3],
                State::Hallmarked => PLACES[4],
                // Waiting for a person: caught above.
                State::AwaitingYou | State::Escalated => PLACES[0],
                State::Closed | State::Dropped => PLACES[5],
            }
        };
        BoardRow {
            id: r.id.to_string(),
            title: r.title.clone(),
            state: r.state,
            hold: r.hold.clone(),
            round: r.round,
            place,
        }
    }

    fn matches(&self, filter: &str) -> bool {
        let f = filter.to_lowercase();
        f.is_empty()
            || self.id.to_lowercase().contains(&f)
            || self.title.to_lowercase().contains(&f)
            || self.state.as_str().contains(&f)
            || self.hold.as_deref().is_some_and(|h| h.contains(&f))
    }
}

/// Everything one frame needs.
#[derive(Clone, Debug, Default)]
pub struct Data {
    pub repo: String,
    /// Open items, then the newest closed and dropped ones, in board order (by place,
    /// then id).
    pub items: Vec<BoardRow>,
    /// Inbox entries not dismissed, oldest first (their place is `hall inbox`'s number).
    pub entries: Vec<Entry>,
    /// Each open question's options, by `Q-n`.
    pub questions: Vec<(String, Vec<String>)>,
    /// The text view's lines.
    pub text: Vec<String>,
    /// What the text view's command said when it failed.
    pub text_error: Option<String>,
}

impl Data {
    /// Reads the board and the inbox.
    pub fn load(hall: &Hall) -> crate::error::Result<Data> {
        let index = hall.index()?;
        // The open items and the newest finished ones: never every finished item.
        let open = index.items(false)?;
        let done = index.recently_finished(RECORDS as u32)?;
        let mut items: Vec<BoardRow> = open
            .iter()
            .chain(done.iter())
            .map(BoardRow::from_index)
            .collect();
        // By place, then by number: a longer id is a larger one (H-10000 after H-9999).
        items.sort_by_key(|r| {
            (
                PLACES.iter().position(|p| *p == r.place),
                r.id.len(),
                r.id.clone(),
            )
        });
        let entries = crate::commands::inbox_entries(&index)?
            .into_iter()
            .filter(|e| !e.dismissed)
            .collect();
        let questions = index
            .questions(true)?
            .into_iter()
            .map(|q| (format!("Q-{}", q.qid), q.options))
            .collect();
        Ok(Data {
            repo: hall.repo.name(),
            items,
            entries,
            questions,
            text: Vec::new(),
            text_error: None,
        })
    }

    /// Runs `args` and keeps its text as the view's lines.
    pub fn load_text(&mut self, ctx: &Ctx, args: &[String]) {
        match super::run_command(ctx, args) {
            Ok(reply) => {
                self.text = reply.text.lines().map(str::to_string).collect();
                self.text_error = None;
            }
            Err(e) => {
                self.text = Vec::new();
                let mut lines = vec![format!("error[{}]: {}", e.code.as_str(), e.message)];
                lines.extend(e.next.iter().map(|n| format!("  next: {n}")));
                self.text_error = Some(lines.join("\n"));
            }
        }
    }

    pub fn board(&self, filter: &str) -> Vec<&BoardRow> {
        self.items.iter().filter(|r| r.matches(filter)).collect()
    }

    pub fn inbox(&self, filter: &str) -> Vec<&Entry> {
        let f = filter.to_lowercase();
        self.entries
            .iter()
            .filter(|e| f.is_empty() || e.text.to_lowercase().contains(&f) || e.kind.contains(&f))
            .collect()
    }

    /// `hall inbox`'s number for the `cursor`-th entry shown under `filter`.
    pub fn inbox_number(&self, filter: &str, cursor: usize) -> Option<usize> {
        let e = *self.inbox(filter).get(cursor)?;
        self.entries
            .iter()
            .position(|x| x.key == e.key)
            .map(|i| i + 1)
    }

    pub fn options(&self, qid: &str) -> Vec<String> {
        self.questions
            .iter()
            .find(|(q, _)| q == qid)
            .map(|(_, o)| o.clone())
            .unwrap_or_default()
    }

    pub fn lines(&self, filter: &str) -> Vec<&str> {
        let f = filter.to_lowercase();
        self.text
            .iter()
            .map(String::as_str)
            .filter(|l| f.is_empty() || l.to_lowercase().contains(&f))
            .collect()
    }
}
