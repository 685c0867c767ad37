//! The terminal app: `hall` with no arguments on a terminal opens the building. A board
//! of the items by place, Your Office, history, usage, the repositories, the merge queue,
//! and each item's now block, journal, findings, usage and runs, with a run's trace
//! followed live.
//!
//! Every view but the board and the inbox is a hall command's own text, and every action
//! runs a hall command through the same dispatch as the command line; the status bar
//! shows which, so the app teaches the CLI. The keys live in one table
//! ([`keymap::KEYMAP`]) that also writes the help overlay and the guide's list.
//!
//! The terminal is always given back: on quitting, on Ctrl-C (a key in raw mode), on
//! SIGTERM (a flag the loop checks), and on a panic (a hook restores it before the
//! message is printed).

pub mod data;
pub mod keymap;
pub mod render;
pub mod state;

#[cfg(test)]
mod tests;

use std::collections::BTreeSet;
use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use clap::Parser;
use crossterm::event::{self, Event, KeyCode, KeyEventKind, KeyModifiers, MouseEventKind};

use crate::cli::Cli;
use crate::commands::{FrameReply, Reply};
use crate::error::{HallError, Result};
use crate::hall::Ctx;
use data::Data;
use keymap::Key;
use state::{App, Effect, View};

/// Runs `args` (a hall command without `hall`) as the command line would.
pub fn run_command(ctx: &Ctx, args: &[String]) -> Result<Reply> {
    let argv: Vec<String> = std::iter::once("hall".to_string())
        .chain(args.iter().cloned())
        .collect();
    let cli = Cli::try_parse_from(&argv).map_err(|e| crate::commands::usage_error(&e, &argv))?;
    crate::commands::dispatch(cli.command, ctx)
}

/// Splits a typed command into words: spaces separate, quotes group.
pub fn split_command(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut quote: Option<char> = None;
    let mut any = false;
    for c in s.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                any = true;
            }
            (None, c) if c.is_whitespace() => {
                if any || !word.is_empty() {
                    out.push(std::mem::take(&mut word));
                }
                any = false;
            }
            (None, c) => word.push(c),
        }
    }
    if any || !word.is_empty() {
        out.push(word);
    }
    out
}

/// Why a typed command can't run inside the app (it waits until stopped, or takes the
/// terminal), or `None`.
pub fn refused(command: &str) -> Option<String> {
    let words = split_command(command);
    let first = words.first().map(String::as_str).unwrap_or("");
    let waits = matches!(first, "watch" | "hook" | "statusline" | "claude" | "web")
        || (first == "daemon" && words.get(1).is_some_and(|w| w == "run"))
        || words.iter().any(|w| w == "--follow");
    waits.then(|| {
        format!("`hall {command}` runs until stopped; run it in a shell (q quits the app)")
    })
}

/// Keys from the terminal library's events.
fn key_of(ev: &Event) -> Option<Key> {
    match ev {
        Event::Key(k) if k.kind != KeyEventKind::Release => Some(match k.code {
            KeyCode::Char('c') if k.modifiers.contains(KeyModifiers::CONTROL) => Key::CtrlC,
            KeyCode::Char(c) => Key::Char(c),
            KeyCode::Enter => Key::Enter,
            KeyCode::Esc => Key::Esc,
            KeyCode::Up => Key::Up,
            KeyCode::Down => Key::Down,
            KeyCode::Left => Key::Left,
            KeyCode::Right => Key::Right,
            KeyCode::PageUp => Key::PageUp,
            KeyCode::PageDown => Key::PageDown,
            KeyCode::Home => Key::Home,
            KeyCode::End => Key::End,
            KeyCode::Backspace => Key::Backspace,
            KeyCode::Tab => Key::Tab,
            _ => return None,
        }),
        Event::Mouse(m) => match m.kind {
            MouseEventKind::ScrollUp => Some(Key::Up),
            MouseEventKind::ScrollDown => Some(Key::Down),
            _ => None,
        },
        _ => None,
    }
}

/// Whether the app holds the terminal; [`restore`] gives it back once.
static HELD: AtomicBool = AtomicBool::new(false);

/// Gives the terminal back: cooked mode, the main screen, the cursor. Only once: leaving
/// the alternate screen twice would move the cursor back over what was printed between.
fn restore() {
    if !HELD.swap(false, Ordering::SeqCst) {
        return;
    }
    let _ = crossterm::terminal::disable_raw_mode();
    let _ = crossterm::execute!(
        std::io::stdout(),
        crossterm::event::DisableMouseCapture,
        crossterm::terminal::LeaveAlternateScreen,
        crossterm::cursor::Show
    );
}

/// The app's hold on the terminal, given back when dropped.
struct Screen;

impl Screen {
    fn take() -> std::io::Result<Screen> {
        crossterm::terminal::enable_raw_mode()?;
        HELD.store(true, Ordering::SeqCst);
        let screen = Screen;
        crossterm::execute!(
            std::io::stdout(),
            crossterm::terminal::EnterAlternateScreen,
            crossterm::event::EnableMouseCapture
        )?;
        Ok(screen)
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        restore();
    }
}

/// Whether the bell rings on a new escalation: `[notify] bell`, on unless set off.
fn bell_on(hall: &crate::hall::Hall) -> bool {
    !matches!(crate::office::notify::settings(hall), Ok(Some(n)) if !n.bell)
}

/// `hall frame`: one frame of the app drawn as text, for scripts, docs and bug reports.
pub fn frame(ctx: &Ctx, args: &crate::cli::FrameArgs) -> Result<Reply> {
    let (w, h) = args
        .size
        .split_once('x')
        .and_then(|(w, h)| Some((w.parse::<u16>().ok()?, h.parse::<u16>().ok()?)))
        .filter(|(w, h)| (40..=500).contains(w) && (10..=200).contains(h))
        .ok_or_else(|| {
            HallError::usage(format!(
                "--size `{}` is not COLUMNSxROWS (40x10 to 500x200)",
                args.size
            ))
            .hint("hall frame --size 100x30")
        })?;
    let (view, help) = frame_view(&args.view)?;
    let hall = ctx.hall()?;
    let mut data = Data::load(&hall)?;
    if let Some(args) = view.command() {
        data.load_text(ctx, &args);
    }
    let mut app = App {
        view,
        help,
        ..App::default()
    };
    let rows = render::to_text(&mut app, &data, w, h);
    let text = rows.join("\n");
    Ok(Reply::new(&FrameReply { rows }, text))
}

/// `hall frame`'s view name as a view, and whether the help overlay is over it.
fn frame_view(name: &str) -> Result<(View, bool)> {
    let bad = || {
        HallError::usage(format!("`{name}` is not a view of the app"))
            .hint("hall frame board")
            .hint("hall frame H-0001:journal")
            .hint("hall help frame")
    };
    let by = |b: &str| state::USAGE_BY.iter().position(|x| *x == b);
    let view = match name.split_once(':') {
        None => match name {
            "board" => View::Board,
            "help" => return Ok((View::Board, true)),
            "inbox" => View::Inbox,
            "history" => View::History,
            "usage" => View::Usage(0),
            "repos" => View::Repos,
            "queue" => View::Queue,
            id if id.parse::<crate::item::ItemId>().is_ok() => View::Item {
                id: id.to_string(),
                tab: 0,
            },
            _ => return Err(bad()),
        },
        Some(("usage", b)) => View::Usage(by(b).ok_or_else(bad)?),
        Some((id, rest)) if id.parse::<crate::item::ItemId>().is_ok() => match rest {
            "trace" => View::Trace { id: id.to_string() },
            "gazette" => View::Gazette { id: id.to_string() },
            tab => View::Item {
                id: id.to_string(),
                tab: state::TABS.iter().position(|t| *t == tab).ok_or_else(bad)?,
            },
        },
        Some(_) => return Err(bad()),
    };
    Ok((view, false))
}

/// Opens the app on this terminal until `q`, Ctrl-C or SIGTERM.
pub fn main(ctx: &Ctx) -> Result<()> {
    let hall = ctx.hall()?;
    let paint = render::Paint::from_env();
    let bell = bell_on(&hall);
    let stop = Arc::new(AtomicBool::new(false));
    crate::platform::on_terminate(Arc::clone(&stop));
    // The journal's root changes with every event (its `changes` file): a change wakes
    // the loop to reload.
    let dirty = Arc::new(AtomicBool::new(true));
    let _watcher = {
        use notify::Watcher;
        let d = Arc::clone(&dirty);
        let mut w = notify::recommended_watcher(move |_res: notify::Result<notify::Event>| {
            d.store(true, Ordering::Relaxed);
        })
        .ok();
        if let Some(w) = &mut w {
            let _ = w.watch(hall.journal.root(), notify::RecursiveMode::NonRecursive);
        }
        w
    };
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        restore();
        previous(info);
    }));
    let screen = Screen::take().map_err(|e| HallError::internal(format!("the terminal: {e}")))?;
    let backend = ratatui::backend::CrosstermBackend::new(std::io::stdout());
    let mut terminal = ratatui::Terminal::new(backend)
        .map_err(|e| HallError::internal(format!("the terminal: {e}")))?;
    let mut app = App::default();
    let mut data = Data::default();
    let mut seen: Option<BTreeSet<String>> = None;
    let mut loaded_text = false;
    let mut last_live = Instant::now();
    let panic_after = std::env::var("HALL_APP_PANIC_AFTER_FRAMES")
        .ok()
        .and_then(|v| v.parse::<u32>().ok());
    let mut frames = 0u32;
    loop {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        // A trace followed live reloads on its own clock too: a run's log grows outside
        // the journal's root.
        let live = matches!(app.view, View::Trace { .. })
            && last_live.elapsed() > Duration::from_millis(500);
        if dirty.swap(false, Ordering::Relaxed) || !loaded_text || live {
            let text = std::mem::take(&mut data.text);
            let text_error = data.text_error.take();
            data = Data::load(&hall).unwrap_or_else(|e| Data {
                repo: hall.repo.name(),
                text_error: Some(e.message),
                ..Data::default()
            });
            data.text = text;
            data.text_error = text_error;
            if let Some(args) = app.view.command() {
                data.load_text(ctx, &args);
            }
            loaded_text = true;
            last_live = Instant::now();
            let keys: BTreeSet<String> = data
                .entries
                .iter()
                .map(|e| format!("{}@{}", e.key, e.since))
                .collect();
            if let Some(before) = &seen
                && bell
                && keys.iter().any(|k| !before.contains(k))
            {
                let _ = std::io::stdout().write_all(b"\x07");
                let _ = std::io::stdout().flush();
            }
            seen = Some(keys);
        }
        terminal
            .draw(|f| render::draw(f, &mut app, &data, paint))
            .map_err(|e| HallError::internal(format!("the terminal: {e}")))?;
        frames += 1;
        if panic_after.is_some_and(|n| frames >= n) {
            panic!("HALL_APP_PANIC_AFTER_FRAMES: a panic for the test of the terminal's restore");
        }
        if !event::poll(Duration::from_millis(200)).unwrap_or(false) {
            continue;
        }
        let Ok(ev) = event::read() else { continue };
        if matches!(ev, Event::Resize(..)) {
            continue;
        }
        let Some(key) = key_of(&ev) else { continue };
        app.message.clear();
        match app.on_key(key, &data) {
            Effect::None => {}
            Effect::Quit => break,
            Effect::Load => loaded_text = false,
            Effect::Run(args) => {
                app.message = match run_command(ctx, &args) {
                    Ok(reply) => {
                        let first = reply.text.lines().next().unwrap_or("done").to_string();
                        format!("hall {}: {first}", args.join(" "))
                    }
                    Err(e) => format!(
                        "hall {}: error[{}] {}",
                        args.join(" "),
                        e.code.as_str(),
                        e.message
                    ),
                };
                dirty.store(true, Ordering::Relaxed);
            }
        }
    }
    drop(terminal);
    drop(screen);
    Ok(())
}
