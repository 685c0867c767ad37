//! vitest (`vitest run`), default reporter.
//!
//! vitest prints a per-file list while running and then, after a `⎯` rule,
//! one block per failed suite and per failed test. The blocks carry what a
//! fixer needs (error, diff, `❯ file:line:col`, the failing source line), so
//! the running list is reduced to its failed files and the blocks are
//! compacted. "Failed Suites" (a file that failed to import or parse) and
//! "Unhandled Errors" count as failures even when no test failed.

use crate::Body;
use crate::text::{Line, block_shape, looks_like_problem, nonblank};

const DIFF_CAP: usize = 10;

pub(crate) fn filter(lines: &[Line]) -> Option<Body> {
    let recognised = lines.iter().any(|l| {
        let t = l.text.trim_start();
        t.starts_with("RUN  v") || t.starts_with("Test Files ") || file_line(&l.text).is_some()
    });
    if !recognised {
        return None;
    }
    let has_details = lines.iter().any(|l| rule_title(&l.text).is_some());
    let mut body = Body::default();
    let mut passed_files = 0usize;
    let mut blocks = 0usize;
    let mut listed_failures = 0usize;
    let mut errors = 0usize;
    let mut summary = Vec::new();
    let mut seen: Vec<(Vec<String>, ())> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let t = lines[i].text.as_str();
        let tt = t.trim_start();
        if let Some(ok) = file_line(t) {
            if ok {
                passed_files += 1;
            } else if !body.lines.iter().any(|l| l == t.trim_end()) {
                body.push(t.trim_end().to_string());
            }
            i += 1;
            continue;
        }
        if tt.starts_with("× ") || tt.starts_with("→ ") {
            if tt.starts_with("× ") {
                listed_failures += 1;
            }
            if !has_details {
                body.push(t.to_string());
            }
            i += 1;
            continue;
        }
        if tt.starts_with("stdout | ") || tt.starts_with("stderr | ") {
            // Console output of a test; the log keeps it.
            i += 1;
            while i < lines.len() && !lines[i].text.trim().is_empty() {
                i += 1;
            }
            continue;
        }
        if let Some(title) = rule_title(t) {
            if !title.is_empty() {
                body.push(format!("{title}:"));
            }
            i += 1;
            continue;
        }
        if tt.starts_with("FAIL ") {
            let mut j = i + 1;
            while j < lines.len()
                && !lines[j].text.trim_start().starts_with("FAIL ")
                && rule_title(&lines[j].text).is_none()
                && !is_tally(&lines[j].text)
            {
                j += 1;
            }
            blocks += 1;
            let header = t.trim().to_string();
            let compact = compact_block(&lines[i + 1..j]);
            let shape = block_shape(&compact, is_value_line);
            match seen.iter().find(|(s, _)| *s == shape) {
                // `each` tables fail the same check with other values: the
                // first is shown in full, the rest by their message only.
                Some(_) => {
                    body.push(format!("{header} (same check as above, other values)"));
                    body.lines
                        .extend(compact.into_iter().filter(|l| is_value_line(l)));
                }
                None => {
                    body.push(header);
                    body.lines.extend(compact);
                    seen.push((shape, ()));
                }
            }
            i = j;
            continue;
        }
        if !is_tally(t) && looks_like_problem(t) && !body.lines.iter().any(|l| l == t.trim()) {
            // Outside any block (a worker crash, an unhandled rejection's
            // first line): kept, since it may be the only failure.
            body.push(t.trim().to_string());
        }
        if is_tally(t) {
            if tt.starts_with("Errors") {
                errors = 1;
            }
            if !tt.starts_with("Start at") && !tt.starts_with("Duration") {
                // In a terminal the tally is redrawn as the run goes; only
                // the last one of each kind is the result.
                let kind = tt.split("  ").next().unwrap_or(tt).to_string();
                summary.retain(|(k, _): &(String, String)| *k != kind);
                summary.push((kind, t.trim().to_string()));
            }
        }
        i += 1;
    }
    if passed_files > 0 {
        body.push(format!("({passed_files} passing test file(s) not shown)"));
    }
    body.lines.extend(summary.into_iter().map(|(_, l)| l));
    body.failures = blocks.max(listed_failures) + errors;
    Some(body)
}

/// ` ✓ file (3 tests) 4ms` (true) or ` ❯ file (8 tests | 8 failed)` (false).
fn file_line(t: &str) -> Option<bool> {
    let tt = t.trim_start();
    let indent = t.len() - tt.len();
    if indent > 1 {
        return None;
    }
    let rest = tt
        .strip_prefix("✓ ")
        .map(|r| (true, r))
        .or_else(|| tt.strip_prefix("❯ ").map(|r| (false, r)))
        .or_else(|| tt.strip_prefix("× ").map(|r| (false, r)));
    let (ok, r) = rest?;
    (r.contains(" test") && r.contains('(')).then_some(ok)
}

/// `⎯⎯⎯ Failed Tests 12 ⎯⎯⎯` gives its title; a bare `⎯⎯⎯[3/14]⎯` rule gives "".
fn rule_title(t: &str) -> Option<String> {
    let t = t.trim();
    if !t.starts_with('⎯') {
        return None;
    }
    let inner: String = t.trim_matches('⎯').trim().to_string();
    if inner.starts_with('[') && inner.ends_with(']') {
        return Some(String::new());
    }
    Some(inner)
}

fn is_tally(t: &str) -> bool {
    let tt = t.trim_start();
    ["Test Files ", "Tests ", "Errors ", "Start at ", "Duration "]
        .iter()
        .any(|p| tt.starts_with(p))
        && t.len() - tt.len() >= 1
}

fn compact_block(block: &[Line]) -> Vec<String> {
    let mut out = Vec::new();
    let mut diff = 0;
    let mut loc_kept = false;
    let mut first_message = true;
    for (k, t) in nonblank(block) {
        if let Some(loc) = t.strip_prefix("❯ ") {
            if !loc_kept && !loc.contains("node_modules") && !loc.contains("node:") {
                out.push(format!("  ❯ {loc}"));
                loc_kept = true;
                // The source line the caret points at sits just above it.
                let next = k + 1;
                let mut m = next;
                while m < block.len() {
                    let f = block[m].text.trim();
                    if f.starts_with('|') && f.contains('^') {
                        // The caret itself is dropped: the location above
                        // already carries the column.
                        if m > next {
                            out.push(format!("  {}", block[m - 1].text.trim()));
                        }
                        break;
                    }
                    if !is_frame_line(f) {
                        break;
                    }
                    m += 1;
                }
            }
            continue;
        }
        if is_frame_line(t) {
            continue;
        }
        if t == "- Expected" || t == "+ Received" {
            // The diff's legend; the `-`/`+` lines below speak for themselves.
            diff += 1;
            continue;
        }
        if (t.starts_with("- ") || t.starts_with("+ ") || t == "-" || t == "+") && diff > 0 {
            if diff < DIFF_CAP {
                out.push(format!("  {t}"));
            }
            diff += 1;
            continue;
        }
        if first_message
            || t.starts_with("Caused by:")
            || t.starts_with("At file:")
            || t.starts_with("File:")
            || t.contains("Error:")
        {
            out.push(format!("  {t}"));
            first_message = false;
        }
    }
    if diff > DIFF_CAP {
        out.push(format!("  [… {} more diff lines]", diff - DIFF_CAP));
    }
    drop_redundant_diff(out)
}

/// A two-line diff of plain values repeats the `expected X to be Y` message.
fn drop_redundant_diff(out: Vec<String>) -> Vec<String> {
    let diffs: Vec<&String> = out
        .iter()
        .filter(|l| l.starts_with("  - ") || l.starts_with("  + "))
        .collect();
    let Some(message) = out.iter().find(|l| l.contains("Error: expected ")) else {
        return out;
    };
    if diffs.len() == 2
        && diffs
            .iter()
            .all(|d| message.contains(d[4..].trim().trim_start_matches('+')))
    {
        return out
            .iter()
            .filter(|l| !(l.starts_with("  - ") || l.starts_with("  + ")))
            .cloned()
            .collect();
    }
    out
}

/// Lines that hold the values of a failed check, as opposed to its shape.
fn is_value_line(l: &str) -> bool {
    let t = l.trim_start();
    t.starts_with("- ") || t.starts_with("+ ") || t.contains("Error:") || t.starts_with('[')
}

/// vitest code frames: `  7|     expect(…)` and `   |     ^`.
fn is_frame_line(t: &str) -> bool {
    let digits = t.chars().take_while(|c| c.is_ascii_digit()).count();
    (digits > 0 && t[digits..].trim_start().starts_with('|')) || t.starts_with('|')
}
