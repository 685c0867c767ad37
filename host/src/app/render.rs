//! Drawing a frame: a title bar with the views, the view, and a status bar that shows the
//! hall command the selected action runs. Only the rows that fit are built, however long
//! the list.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use super::data::Data;
use super::keymap;
use super::state::{App, Prompt, TABS, View};

/// Styles, or none at all under `NO_COLOR`.
#[derive(Clone, Copy, Debug)]
pub struct Paint {
    pub color: bool,
}

impl Paint {
    pub fn from_env() -> Paint {
        Paint {
            color: std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
        }
    }

    fn fg(self, c: Color) -> Style {
        if self.color {
            Style::default().fg(c)
        } else {
            Style::default()
        }
    }

    fn bold(self) -> Style {
        if self.color {
            Style::default().add_modifier(Modifier::BOLD)
        } else {
            Style::default()
        }
    }

    /// The selected row: reversed, which stays visible without colour too.
    fn selected(self) -> Style {
        Style::default().add_modifier(Modifier::REVERSED)
    }
}

pub fn draw(f: &mut Frame, app: &mut App, data: &Data, paint: Paint) {
    let [top, body, bottom] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(1),
        Constraint::Length(1),
    ])
    .areas(f.area());
    app.page = body.height.saturating_sub(1).max(1) as usize;
    f.render_widget(Paragraph::new(title_bar(app, data, paint)), top);
    match &app.view {
        View::Board => board(f, body, app, data, paint),
        View::Inbox => inbox(f, body, app, data, paint),
        _ => text(f, body, app, data, paint),
    }
    f.render_widget(Paragraph::new(status_bar(app, data, paint)), bottom);
    if app.help {
        help(f, f.area(), app.help_scroll, paint);
    }
}

fn title_bar(app: &App, data: &Data, paint: Paint) -> Line<'static> {
    let views = [
        (
            View::Board,
            format!(
                "1 Board {}",
                data.items.iter().filter(|r| !r.state.is_terminal()).count()
            ),
        ),
        (View::Inbox, format!("2 Office {}", data.entries.len())),
        (View::History, "3 History".to_string()),
        (View::Usage(0), "4 Usage".to_string()),
        (View::Repos, "5 Repos".to_string()),
    ];
    let mut spans = vec![Span::styled(
        format!(" hall · {} ", data.repo),
        paint.bold(),
    )];
    for (v, label) in views {
        let style = if std::mem::discriminant(&app.view) == std::mem::discriminant(&v) {
            paint.selected()
        } else {
            Style::default()
        };
        spans.push(Span::raw(" "));
        spans.push(Span::styled(label, style));
    }
    if !matches!(
        app.view,
        View::Board | View::Inbox | View::History | View::Usage(_) | View::Repos
    ) {
        spans.push(Span::raw("  │ "));
        spans.push(Span::styled(app.view.title(), paint.bold()));
    }
    Line::from(spans)
}

fn status_bar(app: &App, data: &Data, paint: Paint) -> Line<'static> {
    match &app.prompt {
        Some(Prompt::Filter(t)) => Line::from(format!("/{t}")),
        Some(Prompt::Command(t)) => Line::from(format!(":hall {t}")),
        Some(Prompt::Answer { qid, options, text }) => {
            let opts = options
                .iter()
                .enumerate()
                .map(|(i, o)| format!("{} {o}", i + 1))
                .collect::<Vec<_>>()
                .join(", ");
            let opts = if opts.is_empty() {
                String::new()
            } else {
                format!(" [{opts}]")
            };
            Line::from(format!("hall answer {qid}{opts}: {text}"))
        }
        Some(Prompt::Reason { verb, id, text }) => {
            Line::from(format!("hall {verb} {id} --reason: {text}"))
        }
        Some(Prompt::Confirm { question, args }) => Line::from(vec![
            Span::styled(format!("{question} (y/n) "), paint.fg(Color::Yellow)),
            Span::raw(format!("hall {}", args.join(" "))),
        ]),
        None if !app.message.is_empty() => {
            Line::from(Span::styled(app.message.clone(), paint.fg(Color::Cyan)))
        }
        None => {
            let filter = if app.filter.is_empty() {
                String::new()
            } else {
                format!("/{}  ", app.filter)
            };
            Line::from(Span::styled(
                format!("{filter}{}", app.hint(data)),
                paint.fg(Color::DarkGray),
            ))
        }
    }
}

/// The first row to show so that `cursor` is on screen in `height` rows.
fn window(cursor: usize, height: usize, len: usize) -> usize {
    if height == 0 || len <= height {
        return 0;
    }
    cursor.saturating_sub(height / 2).min(len - height)
}

/// A list's row, reversed whole when it is the selected one.
fn row_line(spans: Vec<Span<'static>>, selected: bool, paint: Paint) -> Line<'static> {
    if selected {
        Line::from(
            spans
                .into_iter()
                .map(|s| s.style(paint.selected()))
                .collect::<Vec<_>>(),
        )
    } else {
        Line::from(spans)
    }
}

fn state_color(state: crate::item::State) -> Color {
    use crate::item::State::*;
    match state {
        Development => Color::Blue,
        AwaitingYou | Escalated => Color::Yellow,
        Checks | Review => Color::Magenta,
        Fixing => Color::Red,
        Hallmarked => Color::Green,
        Closed | Dropped => Color::DarkGray,
    }
}

fn board(f: &mut Frame, area: Rect, app: &App, data: &Data, paint: Paint) {
    let rows = data.board(&app.filter);
    if rows.is_empty() {
        let msg = if app.filter.is_empty() {
            "No item is in the loop. Start one: hall new --title \"…\"".to_string()
        } else {
            format!("No item matches /{}", app.filter)
        };
        f.render_widget(Paragraph::new(msg), area);
        return;
    }
    // Display lines: a header before each place's first row; only the window's lines
    // are built.
    enum Shown {
        Place(&'static str),
        Row(usize),
    }
    let mut shown = Vec::with_capacity(rows.len() + super::data::PLACES.len());
    for (i, r) in rows.iter().enumerate() {
        if i == 0 || rows[i - 1].place != r.place {
            shown.push(Shown::Place(r.place));
        }
        shown.push(Shown::Row(i));
    }
    let cursor = app.cursor.min(rows.len() - 1);
    let at = shown
        .iter()
        .position(|s| matches!(s, Shown::Row(i) if *i == cursor))
        .unwrap_or(0);
    let height = area.height as usize;
    let first = window(at, height, shown.len());
    let lines: Vec<Line> = shown[first..]
        .iter()
        .take(height)
        .map(|s| match s {
            Shown::Place(place) => {
                let n = rows.iter().filter(|r| r.place == *place).count();
                Line::from(Span::styled(format!("{place} ({n})"), paint.bold()))
            }
            Shown::Row(i) => {
                let r = rows[*i];
                let hold = r
                    .hold
                    .as_deref()
                    .map(|h| format!(" [held: {h}]"))
                    .unwrap_or_default();
                let round = if r.round > 0 {
                    format!(" r{}", r.round)
                } else {
                    String::new()
                };
                let spans = vec![
                    Span::raw(format!("  {} ", r.id)),
                    Span::styled(
                        format!("{:<12}", r.state.as_str()),
                        paint.fg(state_color(r.state)),
                    ),
                    Span::raw(format!(" {}", r.title)),
                    Span::styled(format!("{hold}{round}"), paint.fg(Color::Yellow)),
                ];
                row_line(spans, *i == cursor, paint)
            }
        })
        .collect();
    f.render_widget(Paragraph::new(lines), area);
}

fn inbox(f: &mut Frame, area: Rect, app: &App, data: &Data, paint: Paint) {
    let entries = data.inbox(&app.filter);
    if entries.is_empty() {
        f.render_widget(Paragraph::new("Your Office is empty."), area);
        return;
    }
    let height = area.height as usize;
    let first = window(app.cursor, height, entries.len());
    let lines: Vec<Line> = entries
        .iter()
        .enumerate()
        .skip(first)
        .take(height)
        .map(|(i, e)| {
            let n = data.inbox_number(&app.filter, i).unwrap_or(0);
            let spans = vec![
                Span::raw(format!("{n:>3}. ")),
                Span::styled(format!("[{}]", e.kind), paint.fg(Color::Yellow)),
                Span::raw(format!(" {}", e.text)),
            ];
            row_line(spans, i == app.cursor, paint)
        })
        .collect();
    f.render_widget(Paragraph::new(lines), area);
}

fn text(f: &mut Frame, area: Rect, app: &App, data: &Data, paint: Paint) {
    let mut area = area;
    if let View::Item { tab, .. } = &app.view {
        let [tabs, rest] =
            Layout::vertical([Constraint::Length(1), Constraint::Min(0)]).areas(area);
        let spans: Vec<Span> = TABS
            .iter()
            .enumerate()
            .flat_map(|(i, t)| {
                let style = if i == *tab {
                    paint.selected()
                } else {
                    Style::default()
                };
                [Span::raw(" "), Span::styled(t.to_string(), style)]
            })
            .collect();
        f.render_widget(Paragraph::new(Line::from(spans)), tabs);
        area = rest;
    }
    if let Some(err) = &data.text_error {
        f.render_widget(
            Paragraph::new(err.clone()).style(paint.fg(Color::Red)),
            area,
        );
        return;
    }
    let lines = data.lines(&app.filter);
    let height = area.height as usize;
    let first = app.cursor.min(lines.len().saturating_sub(height));
    let shown: Vec<Line> = lines
        .iter()
        .skip(first)
        .take(height)
        .map(|l| Line::from(l.to_string()))
        .collect();
    f.render_widget(Paragraph::new(shown), area);
}

fn help(f: &mut Frame, area: Rect, scroll: usize, paint: Paint) {
    let lines: Vec<String> = keymap::help_lines().into_iter().skip(scroll).collect();
    let w = area.width.saturating_sub(4).min(100);
    let h = (lines.len() as u16 + 2).min(area.height.saturating_sub(2));
    let rect = Rect {
        x: area.x + (area.width.saturating_sub(w)) / 2,
        y: area.y + 1,
        width: w,
        height: h,
    };
    f.render_widget(Clear, rect);
    let block = Block::default()
        .borders(Borders::ALL)
        .title(Span::styled(" keys (any key closes) ", paint.bold()));
    f.render_widget(
        Paragraph::new(lines.into_iter().map(Line::from).collect::<Vec<_>>()).block(block),
        rect,
    );
}

/// A frame drawn off screen, as its rows of text (trailing spaces trimmed), without colour.
pub fn to_text(app: &mut App, data: &Data, w: u16, h: u16) -> Vec<String> {
    let mut t = match ratatui::Terminal::new(ratatui::backend::TestBackend::new(w, h)) {
        Ok(t) => t,
        Err(_) => return Vec::new(),
    };
    if t.draw(|f| draw(f, app, data, Paint { color: false }))
        .is_err()
    {
        return Vec::new();
    }
    let buf = t.backend().buffer();
    (0..h)
        .map(|y| {
            (0..w)
                .map(|x| buf[(x, y)].symbol().to_string())
                .collect::<String>()
                .trim_end()
                .to_string()
        })
        .collect()
}
