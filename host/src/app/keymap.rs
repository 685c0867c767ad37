//! The one keymap: it decides what a key does, fills the help overlay, and is printed
//! into the guide (`keymap_markdown`, held to docs/guide.md by a test).

/// A key as the app sees it, free of the terminal library's types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Key {
    Char(char),
    Enter,
    Esc,
    Up,
    Down,
    Left,
    Right,
    PageUp,
    PageDown,
    Home,
    End,
    Backspace,
    Tab,
    CtrlC,
}

/// Where a binding works.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    Everywhere,
    Board,
    Item,
    Inbox,
}

impl Scope {
    fn label(self) -> &'static str {
        match self {
            Scope::Everywhere => "everywhere",
            Scope::Board => "board",
            Scope::Item => "item",
            Scope::Inbox => "inbox",
        }
    }
}

/// What a key asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    Help,
    Filter,
    Command,
    Back,
    Quit,
    Up,
    Down,
    PageUp,
    PageDown,
    Top,
    Bottom,
    PrevTab,
    NextTab,
    Open,
    /// Switch to the numbered view (1 board … 5 repos).
    View(u8),
    Trace,
    /// The full log of a failing check the findings tab names.
    OpenLog,
    MergeQueue,
    Gazette,
    Answer,
    Dismiss,
    Clear,
    Ready,
    PullBack,
    Retry,
    Drop,
}

/// One line of the keymap.
pub struct Binding {
    pub keys: &'static [Key],
    /// How the keys are written in the help and the guide.
    pub label: &'static str,
    pub scope: Scope,
    pub action: Action,
    pub help: &'static str,
    /// The hall command the action runs, as the status bar shows it.
    pub command: Option<&'static str>,
}

use Action as A;
use Key as K;
use Scope as S;

/// Every binding, in the order the help lists them.
pub const KEYMAP: &[Binding] = &[
    Binding {
        keys: &[K::Char('?')],
        label: "?",
        scope: S::Everywhere,
        action: A::Help,
        help: "this help (↑ ↓ scroll it, any other key closes it)",
        command: None,
    },
    Binding {
        keys: &[K::Char('/')],
        label: "/",
        scope: S::Everywhere,
        action: A::Filter,
        help: "filter the list or the text",
        command: None,
    },
    Binding {
        keys: &[K::Char(':')],
        label: ":",
        scope: S::Everywhere,
        action: A::Command,
        help: "run a hall command",
        command: None,
    },
    Binding {
        keys: &[K::Esc, K::Char('q')],
        label: "Esc q",
        scope: S::Everywhere,
        action: A::Back,
        help: "back; quit from the board",
        command: None,
    },
    Binding {
        keys: &[K::CtrlC],
        label: "Ctrl-C",
        scope: S::Everywhere,
        action: A::Quit,
        help: "quit",
        command: None,
    },
    Binding {
        keys: &[K::Up, K::Char('k')],
        label: "↑ k",
        scope: S::Everywhere,
        action: A::Up,
        help: "up",
        command: None,
    },
    Binding {
        keys: &[K::Down, K::Char('j')],
        label: "↓ j",
        scope: S::Everywhere,
        action: A::Down,
        help: "down",
        command: None,
    },
    Binding {
        keys: &[K::PageUp],
        label: "PgUp",
        scope: S::Everywhere,
        action: A::PageUp,
        help: "a page up",
        command: None,
    },
    Binding {
        keys: &[K::PageDown],
        label: "PgDn",
        scope: S::Everywhere,
        action: A::PageDown,
        help: "a page down",
        command: None,
    },
    Binding {
        keys: &[K::Home, K::Char('g')],
        label: "Home g",
        scope: S::Everywhere,
        action: A::Top,
        help: "first line",
        command: None,
    },
    Binding {
        keys: &[K::End, K::Char('G')],
        label: "End G",
        scope: S::Everywhere,
        action: A::Bottom,
        help: "last line",
        command: None,
    },
    Binding {
        keys: &[K::Char('1')],
        label: "1",
        scope: S::Everywhere,
        action: A::View(1),
        help: "the board",
        command: Some("hall status"),
    },
    Binding {
        keys: &[K::Char('2')],
        label: "2",
        scope: S::Everywhere,
        action: A::View(2),
        help: "Your Office (the inbox)",
        command: Some("hall inbox"),
    },
    Binding {
        keys: &[K::Char('3')],
        label: "3",
        scope: S::Everywhere,
        action: A::View(3),
        help: "history",
        command: Some("hall history"),
    },
    Binding {
        keys: &[K::Char('4')],
        label: "4",
        scope: S::Everywhere,
        action: A::View(4),
        help: "usage (by station; ← → for item, role, model, day)",
        command: Some("hall usage --by station"),
    },
    Binding {
        keys: &[K::Char('5')],
        label: "5",
        scope: S::Everywhere,
        action: A::View(5),
        help: "repositories and the daemon",
        command: Some("hall daemon status"),
    },
    Binding {
        keys: &[K::Char('m')],
        label: "m",
        scope: S::Everywhere,
        action: A::MergeQueue,
        help: "the merge queue",
        command: Some("hall queue"),
    },
    Binding {
        keys: &[K::Enter],
        label: "Enter",
        scope: S::Board,
        action: A::Open,
        help: "open the item",
        command: Some("hall status <id>"),
    },
    Binding {
        keys: &[K::Left, K::Char('h')],
        label: "← h",
        scope: S::Everywhere,
        action: A::PrevTab,
        help: "previous tab (an item's now, journal, findings, usage, runs; usage's)",
        command: None,
    },
    Binding {
        keys: &[K::Right, K::Char('l'), K::Tab],
        label: "→ l Tab",
        scope: S::Everywhere,
        action: A::NextTab,
        help: "next tab",
        command: None,
    },
    Binding {
        keys: &[K::Char('t')],
        label: "t",
        scope: S::Everywhere,
        action: A::Trace,
        help: "the selected item's run, its trace followed live",
        command: Some("hall trace <id>"),
    },
    Binding {
        keys: &[K::Char('o')],
        label: "o",
        scope: S::Item,
        action: A::OpenLog,
        help: "the full log of the failing check at or below the cursor (findings tab)",
        command: Some("hall run --show <log>"),
    },
    Binding {
        keys: &[K::Char('n')],
        label: "n",
        scope: S::Everywhere,
        action: A::Gazette,
        help: "the selected item's Gazette",
        command: Some("hall gazette <id> --text"),
    },
    Binding {
        keys: &[K::Char('r')],
        label: "r",
        scope: S::Item,
        action: A::Ready,
        help: "ready: freeze and queue for the checks",
        command: Some("hall ready <id>"),
    },
    Binding {
        keys: &[K::Char('p')],
        label: "p",
        scope: S::Item,
        action: A::PullBack,
        help: "pull back to development (asks why)",
        command: Some("hall pull-back <id> --reason …"),
    },
    Binding {
        keys: &[K::Char('y')],
        label: "y",
        scope: S::Item,
        action: A::Retry,
        help: "retry a held or escalated item (asks why)",
        command: Some("hall retry <id> --reason …"),
    },
    Binding {
        keys: &[K::Char('x')],
        label: "x",
        scope: S::Item,
        action: A::Drop,
        help: "drop the item (asks why, then to confirm)",
        command: Some("hall drop <id> --reason …"),
    },
    Binding {
        keys: &[K::Char('a'), K::Enter],
        label: "a Enter",
        scope: S::Inbox,
        action: A::Answer,
        help: "answer the question (its options by number)",
        command: Some("hall answer <Q> …"),
    },
    Binding {
        keys: &[K::Char('d')],
        label: "d",
        scope: S::Inbox,
        action: A::Dismiss,
        help: "dismiss until it changes",
        command: Some("hall inbox <n> --dismiss"),
    },
    Binding {
        keys: &[K::Char('c')],
        label: "c",
        scope: S::Inbox,
        action: A::Clear,
        help: "dismiss every entry (asks to confirm)",
        command: Some("hall inbox --clear"),
    },
];

/// What `key` does in `scope`: a binding of that scope first, then one for everywhere.
pub fn lookup(key: Key, scope: Scope) -> Option<&'static Binding> {
    KEYMAP
        .iter()
        .find(|b| b.scope == scope && b.keys.contains(&key))
        .or_else(|| {
            KEYMAP
                .iter()
                .find(|b| b.scope == Scope::Everywhere && b.keys.contains(&key))
        })
}

/// The help overlay's lines.
pub fn help_lines() -> Vec<String> {
    KEYMAP
        .iter()
        .map(|b| {
            let cmd = b.command.map(|c| format!("  ({c})")).unwrap_or_default();
            format!("{:<9} {:<10} {}{cmd}", b.label, b.scope.label(), b.help)
        })
        .collect()
}

/// The keymap as the guide prints it.
pub fn keymap_markdown() -> String {
    let mut out = String::from("| Keys | Where | What | Runs |\n| --- | --- | --- | --- |\n");
    for b in KEYMAP {
        out.push_str(&format!(
            "| {} | {} | {} | {} |\n",
            b.label.replace('|', "\\|"),
            b.scope.label(),
            b.help,
            b.command.map(|c| format!("`{c}`")).unwrap_or_default()
        ));
    }
    out
}
