//! jest, in its default and `--verbose` forms.
//!
//! jest reports each failure as a `●` block: the message, an expected and
//! received diff, a code frame around the failing line and a stack. The
//! filter keeps the message, the diff, the `>` line of the code frame and the
//! first stack frame outside `node_modules` (which carries `file:line:col`).
//! "Test suite failed to run" blocks are failures too: a suite that does not
//! compile or cannot import reports no failing test at all.

use crate::Body;
use crate::text::{Line, block_shape, looks_like_problem, nonblank};

/// Diff lines kept per failure.
const DIFF_CAP: usize = 10;
/// Plain message lines kept per failure (error lines are kept regardless).
const MESSAGE_CAP: usize = 2;

pub(crate) fn filter(lines: &[Line]) -> Option<Body> {
    let recognised = lines.iter().any(|l| {
        let t = l.text.as_str();
        suite_line(t).is_some() || t.starts_with("Test Suites:")
    });
    if !recognised {
        return None;
    }
    let mut body = Body::default();
    let mut passed_suites = 0usize;
    let mut failed_suites = 0usize;
    let mut blocks = 0usize;
    let mut summary: Vec<String> = Vec::new();
    let mut seen: Vec<(Vec<String>, ())> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let t = lines[i].text.as_str();
        if t.starts_with("Summary of all failing tests") {
            // A repeat of the blocks already shown; skip to the tally.
            while i < lines.len() && !lines[i].text.starts_with("Test Suites:") {
                i += 1;
            }
            continue;
        }
        if let Some((pass, _)) = suite_line(t) {
            if pass {
                passed_suites += 1;
            } else {
                failed_suites += 1;
                body.push(t.to_string());
            }
            i += 1;
            continue;
        }
        if let Some(title) = bullet(t) {
            let mut j = i + 1;
            while j < lines.len() && !ends_block(&lines[j].text) {
                j += 1;
            }
            if title != "Console" {
                blocks += 1;
                let compact = compact_block(&lines[i + 1..j]);
                let shape = block_shape(&compact, is_value_line);
                match seen.iter().find(|(s, _)| *s == shape) {
                    // `each` tables fail the same check with other values:
                    // show the first in full, then only the values.
                    Some(_) => {
                        body.push(format!("  ● {title} (same check as above, other values)"));
                        body.lines
                            .extend(compact.into_iter().filter(|l| is_value_line(l)));
                    }
                    None => {
                        body.push(format!("  ● {title}"));
                        body.lines.extend(compact);
                        seen.push((shape, ()));
                    }
                }
            }
            i = j;
            continue;
        }
        if is_tally(t) {
            if !(t.starts_with("Snapshots:") && !t.contains("failed") && !t.contains("obsolete")) {
                summary.push(t.to_string());
            }
        } else if (looks_like_problem(t) || t.starts_with("Jest: "))
            && !t.starts_with("Ran all test suites")
            && !body.lines.iter().any(|l| l == t)
        {
            // Outside any block: coverage thresholds, a worker that failed
            // to exit, open handles. They can explain a non-zero exit when
            // every test passed, so they stay.
            body.push(t.to_string());
        }
        i += 1;
    }
    if passed_suites > 0 {
        body.push(format!("({passed_suites} passing suite(s) not shown)"));
    }
    body.lines.extend(summary);
    body.failures = blocks.max(failed_suites);
    Some(body)
}

/// `PASS path` or `FAIL path`, possibly after a status glyph redraw.
fn suite_line(t: &str) -> Option<(bool, &str)> {
    let t = t.trim_start();
    if let Some(p) = t.strip_prefix("PASS ") {
        return Some((true, p));
    }
    t.strip_prefix("FAIL ").map(|p| (false, p))
}

fn bullet(t: &str) -> Option<&str> {
    t.strip_prefix("  ● ").map(str::trim)
}

fn is_tally(t: &str) -> bool {
    ["Test Suites:", "Tests:", "Snapshots:"]
        .iter()
        .any(|p| t.starts_with(p))
}

fn ends_block(t: &str) -> bool {
    bullet(t).is_some()
        || suite_line(t).is_some()
        || is_tally(t)
        || t.starts_with("Summary of all failing tests")
}

fn compact_block(block: &[Line]) -> Vec<String> {
    let mut out = Vec::new();
    let mut messages = 0;
    let mut diff = 0;
    let mut errors = 0;
    let mut frame_kept = false;
    let mut at_kept = false;
    for (_, t) in nonblank(block) {
        if let Some(at) = t.strip_prefix("at ") {
            if !at_kept && !at.contains("node_modules") && !at.contains("node:") && at.contains(':')
            {
                out.push(format!("    {t}"));
                at_kept = true;
            }
            continue;
        }
        if t.starts_with('>') && t.contains('|') {
            if !frame_kept {
                // The caret line is dropped: the `at` frame carries the column.
                out.push(format!("    {t}"));
                frame_kept = true;
            }
            continue;
        }
        if is_frame_line(t) {
            continue;
        }
        if t.starts_with("Expected")
            || t.starts_with("Received")
            || t.starts_with("- Expected")
            || t.starts_with("+ Received")
            || ((t.starts_with("- ") || t.starts_with("+ ")) && diff > 0)
        {
            if diff < DIFF_CAP {
                out.push(format!("    {t}"));
            }
            diff += 1;
            continue;
        }
        let is_error = t.contains("Error:")
            || t.contains("Error [")
            || t.starts_with("Cannot find module")
            || t.starts_with("thrown:");
        if is_error {
            if errors < 3 {
                out.push(format!("    {t}"));
            }
            errors += 1;
            continue;
        }
        if messages < MESSAGE_CAP && diff == 0 && !frame_kept && !is_boilerplate(t) {
            out.push(format!("    {t}"));
            messages += 1;
        }
    }
    if diff > DIFF_CAP {
        out.push(format!("    [… {} more diff lines]", diff - DIFF_CAP));
    }
    out
}

/// Lines that hold the values of a failed check, as opposed to its shape.
fn is_value_line(l: &str) -> bool {
    let t = l.trim_start();
    t.starts_with("Expected")
        || t.starts_with("Received")
        || t.starts_with("- ")
        || t.starts_with("+ ")
        || t.contains("Error:")
        || t.starts_with("thrown:")
}

/// jest's generic advice in "Test suite failed to run" blocks.
fn is_boilerplate(t: &str) -> bool {
    const STARTS: &[&str] = &[
        "Jest failed to parse a file",
        "Out of the box Jest supports",
        "By default \"node_modules\"",
        "Here's what you can do",
        "•",
        "You'll find more details",
        "For information about custom transformations",
        "https://jestjs.io/docs",
        "Details:",
    ];
    STARTS.iter().any(|s| t.starts_with(s))
}

/// Code-frame context: `  12 | code` or the caret gutter `     |   ^`.
fn is_frame_line(t: &str) -> bool {
    let digits = t.chars().take_while(|c| c.is_ascii_digit()).count();
    (digits > 0 && t[digits..].trim_start().starts_with('|')) || t.starts_with('|')
}
