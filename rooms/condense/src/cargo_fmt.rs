//! `cargo fmt --check`: which files and lines need formatting.
//!
//! The fix is always `cargo fmt`, so the agent needs the places, not every
//! changed line: one line per hunk with its location and size, and the first
//! hunk in full so the kind of change is visible. Errors from rustfmt itself
//! (a file it cannot parse) are kept whole.

use crate::Body;
use crate::text::{Line, looks_like_problem};

/// Hunks listed one per line before the rest are counted.
const MAX_HUNKS: usize = 60;
/// Lines of the first hunk shown as an example.
const EXAMPLE_LINES: usize = 16;

pub(crate) fn filter(lines: &[Line]) -> Option<Body> {
    let mut hunks: Vec<(String, usize, usize)> = Vec::new();
    let mut example: Vec<String> = Vec::new();
    let mut problems: Vec<String> = Vec::new();
    for l in lines {
        let t = l.text.as_str();
        if t.starts_with("Diff in ") && t.ends_with(':') {
            hunks.push((t.trim_end_matches(':').to_string(), 0, 0));
            continue;
        }
        if let Some(h) = hunks.last_mut() {
            if t.starts_with('+') {
                h.1 += 1;
            } else if t.starts_with('-') {
                h.2 += 1;
            }
            if hunks.len() == 1 && example.len() < EXAMPLE_LINES {
                example.push(t.to_string());
            }
            if !(t.starts_with('+') || t.starts_with('-') || t.starts_with(' ') || t.is_empty())
                && looks_like_problem(t)
            {
                problems.push(t.to_string());
            }
        } else if looks_like_problem(t) {
            problems.push(t.to_string());
        }
    }
    if hunks.is_empty() && problems.is_empty() {
        return None;
    }
    let mut body = Body::default();
    body.lines.extend(problems.iter().cloned());
    if !hunks.is_empty() {
        let mut files: Vec<&str> = Vec::new();
        for (h, _, _) in &hunks {
            let file = h
                .trim_start_matches("Diff in ")
                .rsplit_once(':')
                .map_or(h.as_str(), |(f, _)| f);
            if !files.contains(&file) {
                files.push(file);
            }
        }
        body.push(format!(
            "{} file(s) not formatted, {} hunk(s); `cargo fmt` fixes them all:",
            files.len(),
            hunks.len()
        ));
        for (h, plus, minus) in hunks.iter().take(MAX_HUNKS) {
            body.push(format!("{h} (+{plus} -{minus})"));
        }
        if hunks.len() > MAX_HUNKS {
            body.push(format!(
                "[… {} more hunks; search the log for `Diff in`]",
                hunks.len() - MAX_HUNKS
            ));
        }
        body.push("first hunk:".to_string());
        body.push(hunks[0].0.clone() + ":");
        body.lines.extend(example);
    }
    body.failures = hunks.len() + problems.len();
    Some(body)
}
