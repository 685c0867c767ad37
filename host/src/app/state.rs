//! The app's state and what each key does to it: no terminal, no journal, so every key
//! is tested here as plain data (`app/tests.rs`).

use super::data::Data;
use super::keymap::{self, Action, Key, Scope};

/// The item view's tabs, each a hall command's text.
pub const TABS: [&str; 5] = ["now", "journal", "findings", "usage", "runs"];

/// The usage view's tabs: `hall usage --by` each.
pub const USAGE_BY: [&str; 5] = ["station", "item", "role", "model", "day"];

/// What is on screen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum View {
    Board,
    Inbox,
    History,
    /// Usage by [`USAGE_BY`]'s entry.
    Usage(usize),
    Repos,
    Queue,
    Item {
        id: String,
        tab: usize,
    },
    Trace {
        id: String,
    },
    Gazette {
        id: String,
    },
    /// A command's reply, run from `:`.
    Output {
        command: String,
    },
}

impl View {
    pub fn scope(&self) -> Scope {
        match self {
            View::Board => Scope::Board,
            View::Inbox => Scope::Inbox,
            View::Item { .. } => Scope::Item,
            _ => Scope::Everywhere,
        }
    }

    /// The hall command whose text a text view shows (none for the board and inbox,
    /// which are lists the app draws itself).
    pub fn command(&self) -> Option<Vec<String>> {
        let v = |a: &[&str]| Some(a.iter().map(|s| s.to_string()).collect());
        match self {
            View::Board | View::Inbox => None,
            View::History => v(&["history"]),
            View::Usage(by) => v(&["usage", "--by", USAGE_BY[*by % USAGE_BY.len()]]),
            View::Repos => v(&["daemon", "status"]),
            View::Queue => v(&["queue"]),
            View::Item { id, tab } => match TABS[*tab % TABS.len()] {
                "now" => v(&["status", id]),
                "journal" => v(&["log", id, "--limit", "500"]),
                "findings" => v(&["findings", id]),
                "usage" => v(&["usage", "--item", id]),
                _ => v(&["trace", id, "--list"]),
            },
            View::Trace { id } => v(&["trace", id]),
            View::Gazette { id } => v(&["gazette", id, "--text"]),
            View::Output { command } => Some(super::split_command(command)),
        }
    }

    /// The title bar's name for it.
    pub fn title(&self) -> String {
        match self {
            View::Board => "Board".into(),
            View::Inbox => "Your Office".into(),
            View::History => "History".into(),
            View::Usage(by) => format!("Usage by {}", USAGE_BY[*by % USAGE_BY.len()]),
            View::Repos => "Repositories".into(),
            View::Queue => "Merge queue".into(),
            View::Item { id, tab } => format!("{id} · {}", TABS[*tab % TABS.len()]),
            View::Trace { id } => format!("{id} · trace (live)"),
            View::Gazette { id } => format!("{id} · Gazette"),
            View::Output { command } => format!("hall {command}"),
        }
    }
}

/// A line being typed at the bottom.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Prompt {
    Filter(String),
    Command(String),
    /// An answer to a question, with its options (a digit picks one).
    Answer {
        qid: String,
        options: Vec<String>,
        text: String,
    },
    /// Why, for a command that takes `--reason`.
    Reason {
        verb: &'static str,
        id: String,
        text: String,
    },
    /// y to run `args`, anything else not to.
    Confirm {
        question: String,
        args: Vec<String>,
    },
}

/// What the loop should do after a key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Effect {
    None,
    Quit,
    /// The view changed: load what it shows.
    Load,
    /// Run this hall command (without `hall`), then reload.
    Run(Vec<String>),
}

#[derive(Clone, Debug)]
pub struct App {
    pub view: View,
    /// The views to go back to, each with its cursor.
    pub stack: Vec<(View, usize)>,
    /// The selected row of a list, or the first line shown of a text.
    pub cursor: usize,
    pub filter: String,
    pub prompt: Option<Prompt>,
    pub help: bool,
    /// The first help line shown.
    pub help_scroll: usize,
    /// The last command's outcome, shown in the status bar.
    pub message: String,
    /// Rows a page holds (the renderer sets it).
    pub page: usize,
}

impl Default for App {
    fn default() -> Self {
        App {
            view: View::Board,
            stack: Vec::new(),
            cursor: 0,
            filter: String::new(),
            prompt: None,
            help: false,
            help_scroll: 0,
            message: String::new(),
            page: 10,
        }
    }
}

impl App {
    fn go(&mut self, view: View) -> Effect {
        // The numbered views and the merge queue are side by side: going to one starts
        // the way back afresh. An item, its trace or a command's output goes on top.
        let top = matches!(
            view,
            View::Board | View::Inbox | View::History | View::Usage(_) | View::Repos | View::Queue
        );
        if top {
            self.stack.clear();
            self.view = view;
        } else if self.view != view {
            let old = std::mem::replace(&mut self.view, view);
            self.stack.push((old, self.cursor));
        }
        self.cursor = 0;
        self.filter.clear();
        Effect::Load
    }

    fn back(&mut self) -> Effect {
        if !self.filter.is_empty() {
            self.filter.clear();
            self.cursor = 0;
            return Effect::None;
        }
        match self.stack.pop() {
            Some((v, cursor)) => {
                self.view = v;
                self.cursor = cursor;
                Effect::Load
            }
            None if self.view == View::Board => Effect::Quit,
            None => {
                self.view = View::Board;
                self.cursor = 0;
                Effect::Load
            }
        }
    }

    /// How many rows the current view has, as `data` shows them.
    fn rows(&self, data: &Data) -> usize {
        match self.view {
            View::Board => data.board(&self.filter).len(),
            View::Inbox => data.inbox(&self.filter).len(),
            _ => data.lines(&self.filter).len(),
        }
    }

    /// The item the cursor is on, or the item view's own.
    pub fn selected_item(&self, data: &Data) -> Option<String> {
        match &self.view {
            View::Board => data
                .board(&self.filter)
                .get(self.cursor)
                .map(|r| r.id.clone()),
            View::Item { id, .. } | View::Trace { id } | View::Gazette { id } => Some(id.clone()),
            View::Inbox => data
                .inbox(&self.filter)
                .get(self.cursor)
                .and_then(|e| e.item.map(|i| i.to_string())),
            _ => None,
        }
    }

    /// What `key` does.
    pub fn on_key(&mut self, key: Key, data: &Data) -> Effect {
        if let Some(prompt) = self.prompt.take() {
            return self.on_prompt_key(prompt, key, data);
        }
        if self.help {
            match key {
                Key::Up | Key::Char('k') => self.help_scroll = self.help_scroll.saturating_sub(1),
                Key::Down | Key::Char('j') => {
                    self.help_scroll =
                        (self.help_scroll + 1).min(keymap::KEYMAP.len().saturating_sub(1))
                }
                _ => {
                    self.help = false;
                    self.help_scroll = 0;
                }
            }
            return Effect::None;
        }
        let Some(binding) = keymap::lookup(key, self.view.scope()) else {
            return Effect::None;
        };
        let rows = self.rows(data);
        let last = rows.saturating_sub(1);
        match binding.action {
            Action::Help => {
                self.help = true;
                Effect::None
            }
            Action::Filter => {
                self.prompt = Some(Prompt::Filter(self.filter.clone()));
                Effect::None
            }
            Action::Command => {
                self.prompt = Some(Prompt::Command(String::new()));
                Effect::None
            }
            Action::Back => self.back(),
            Action::Quit => Effect::Quit,
            Action::Up => {
                self.cursor = self.cursor.saturating_sub(1);
                Effect::None
            }
            Action::Down => {
                self.cursor = (self.cursor + 1).min(last);
                Effect::None
            }
            Action::PageUp => {
                self.cursor = self.cursor.saturating_sub(self.page.max(1));
                Effect::None
            }
            Action::PageDown => {
                self.cursor = (self.cursor + self.page.max(1)).min(last);
                Effect::None
            }
            Action::Top => {
                self.cursor = 0;
                Effect::None
            }
            Action::Bottom => {
                self.cursor = last;
                Effect::None
            }
            Action::View(n) => self.go(match n {
                1 => View::Board,
                2 => View::Inbox,
                3 => View::History,
                4 => View::Usage(0),
                _ => View::Repos,
            }),
            Action::MergeQueue => self.go(View::Queue),
            Action::Open => match self.selected_item(data) {
                Some(id) => self.go(View::Item { id, tab: 0 }),
                None => Effect::None,
            },
            Action::PrevTab | Action::NextTab => {
                let tabs = match &mut self.view {
                    View::Item { tab, .. } => Some((tab, TABS.len())),
                    View::Usage(by) => Some((by, USAGE_BY.len())),
                    _ => None,
                };
                if let Some((tab, n)) = tabs {
                    *tab = if binding.action == Action::NextTab {
                        (*tab + 1) % n
                    } else {
                        (*tab + n - 1) % n
                    };
                    self.cursor = 0;
                    self.filter.clear();
                    return Effect::Load;
                }
                Effect::None
            }
            Action::Trace => match self.selected_item(data) {
                Some(id) => self.go(View::Trace { id }),
                None => Effect::None,
            },
            Action::OpenLog => {
                // `hall findings` names each failing check's log in a `next` line.
                let lines = data.lines(&self.filter);
                let log = lines
                    .iter()
                    .skip(self.cursor)
                    .chain(lines.iter())
                    .find_map(|l| {
                        let at = l.find("hall run --show ")?;
                        l[at + "hall run --show ".len()..]
                            .split_whitespace()
                            .next()
                            .map(str::to_string)
                    });
                match log {
                    Some(log) => self.go(View::Output {
                        command: format!("run --show {log}"),
                    }),
                    None => {
                        self.message =
                            "No failing check's log here (the findings tab lists them).".into();
                        Effect::None
                    }
                }
            }
            Action::Gazette => match self.selected_item(data) {
                Some(id) => self.go(View::Gazette { id }),
                None => Effect::None,
            },
            Action::Ready => match self.selected_item(data) {
                Some(id) => Effect::Run(vec!["ready".into(), id]),
                None => Effect::None,
            },
            Action::PullBack | Action::Retry | Action::Drop => {
                let verb = match binding.action {
                    Action::PullBack => "pull-back",
                    Action::Retry => "retry",
                    _ => "drop",
                };
                if let Some(id) = self.selected_item(data) {
                    self.prompt = Some(Prompt::Reason {
                        verb,
                        id,
                        text: String::new(),
                    });
                }
                Effect::None
            }
            Action::Answer => {
                let entries = data.inbox(&self.filter);
                let Some(e) = entries.get(self.cursor) else {
                    return Effect::None;
                };
                if e.kind != "question" {
                    self.message = format!(
                        "{} is not a question; its commands: {}",
                        e.key,
                        e.next.join(", ")
                    );
                    return Effect::None;
                }
                let qid = e.key.trim_start_matches("question:").to_string();
                self.prompt = Some(Prompt::Answer {
                    options: data.options(&qid),
                    qid,
                    text: String::new(),
                });
                Effect::None
            }
            Action::Dismiss => {
                let n = data.inbox_number(&self.filter, self.cursor);
                match n {
                    Some(n) => Effect::Run(vec!["inbox".into(), n.to_string(), "--dismiss".into()]),
                    None => Effect::None,
                }
            }
            Action::Clear => {
                if rows == 0 {
                    return Effect::None;
                }
                self.prompt = Some(Prompt::Confirm {
                    question: format!("Dismiss all {rows} entries?"),
                    args: vec!["inbox".into(), "--clear".into()],
                });
                Effect::None
            }
        }
    }

    fn on_prompt_key(&mut self, prompt: Prompt, key: Key, _data: &Data) -> Effect {
        if let Prompt::Confirm { args, .. } = &prompt {
            return match key {
                Key::Char('y') | Key::Char('Y') => Effect::Run(args.clone()),
                _ => {
                    self.message = "Not done.".into();
                    Effect::None
                }
            };
        }
        let mut prompt = prompt;
        let text = match &mut prompt {
            Prompt::Filter(t) | Prompt::Command(t) => t,
            Prompt::Answer { text, .. } | Prompt::Reason { text, .. } => text,
            Prompt::Confirm { .. } => unreachable!("handled above"),
        };
        match key {
            Key::Esc | Key::CtrlC => {
                if matches!(prompt, Prompt::Filter(_)) {
                    self.filter.clear();
                }
                return Effect::None;
            }
            Key::Backspace => {
                text.pop();
            }
            Key::Char(c) => text.push(c),
            Key::Enter => return self.submit(prompt),
            _ => {}
        }
        if let Prompt::Filter(t) = &prompt {
            // The filter applies as it is typed.
            self.filter = t.clone();
            self.cursor = 0;
        }
        self.prompt = Some(prompt);
        Effect::None
    }

    fn submit(&mut self, prompt: Prompt) -> Effect {
        match prompt {
            Prompt::Filter(t) => {
                self.filter = t;
                self.cursor = 0;
                Effect::None
            }
            Prompt::Command(t) => {
                let t = t.trim().trim_start_matches("hall ").trim().to_string();
                if t.is_empty() {
                    return Effect::None;
                }
                if let Some(why) = super::refused(&t) {
                    self.message = why;
                    return Effect::None;
                }
                self.go(View::Output { command: t })
            }
            Prompt::Answer { qid, options, text } => {
                let t = text.trim();
                if t.is_empty() {
                    return Effect::None;
                }
                // A number picks an option by its place, as `hall answer` reads it.
                let answer = t
                    .parse::<usize>()
                    .ok()
                    .and_then(|n| options.get(n.wrapping_sub(1)).cloned())
                    .unwrap_or_else(|| t.to_string());
                Effect::Run(vec!["answer".into(), qid, answer])
            }
            Prompt::Reason { verb, id, text } => {
                let reason = text.trim().to_string();
                if reason.is_empty() {
                    self.message = format!("{verb} needs a reason; nothing done");
                    return Effect::None;
                }
                let args = vec![verb.to_string(), id.clone(), "--reason".into(), reason];
                if verb == "drop" {
                    self.prompt = Some(Prompt::Confirm {
                        question: format!(
                            "Drop {id}? Its worktree stays; the item closes as dropped."
                        ),
                        args,
                    });
                    return Effect::None;
                }
                Effect::Run(args)
            }
            Prompt::Confirm { args, .. } => Effect::Run(args),
        }
    }

    /// What the status bar says the selected action runs.
    pub fn hint(&self, data: &Data) -> String {
        let id = self.selected_item(data).unwrap_or_else(|| "<id>".into());
        match &self.view {
            View::Board => format!("Enter: hall status {id}   ?: help   q: quit"),
            View::Inbox => match data.inbox(&self.filter).get(self.cursor) {
                Some(e) => {
                    let n = data.inbox_number(&self.filter, self.cursor).unwrap_or(0);
                    let first = e.next.first().cloned().unwrap_or_default();
                    format!("{first}   d: hall inbox {n} --dismiss   ?: help")
                }
                None => "Your Office is empty   ?: help".into(),
            },
            View::Item { .. } => format!(
                "r: hall ready {id}   p: hall pull-back {id}   t: hall trace {id}   ←→ tabs"
            ),
            v => v
                .command()
                .map(|c| format!("hall {}", c.join(" ")))
                .unwrap_or_default(),
        }
    }
}
