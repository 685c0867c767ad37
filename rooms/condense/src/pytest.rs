//! pytest, in its default, `-q` and `-v` forms.
//!
//! pytest already separates what matters into sections (ERRORS, FAILURES,
//! short test summary) and closes with one summary line. The filter keeps
//! each failure's `>` line, its `E` lines and the `file:line` of each frame
//! in the project, and drops the echoed source around them, the progress
//! dots and the per-test warning lists. Collection errors and a crash
//! (`Fatal Python error`) count as failures: both have been reported as
//! "no tests collected" by other condensers.

use crate::Body;
use crate::text::{Line, block_shape, looks_like_problem};

/// `E` lines kept per failure before the rest is referred to the log.
const E_CAP: usize = 12;
/// Lines kept from one captured-output section.
const CAPTURED_CAP: usize = 5;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Section {
    Other,
    Failures,
    Warnings,
    Summary,
}

pub(crate) fn filter(lines: &[Line]) -> Option<Body> {
    let summary_at = lines.iter().rposition(|l| is_final_summary(&l.text));
    let recognised = summary_at.is_some()
        || lines.iter().any(|l| {
            section_title(&l.text).is_some_and(|t| {
                t.contains("test session starts")
                    || t == "FAILURES"
                    || t == "ERRORS"
                    || t.contains("short test summary")
            })
        });
    if !recognised {
        return None;
    }

    let mut body = Body::default();
    let mut section = Section::Other;
    let mut blocks = 0usize;
    let mut summary_items = 0usize;
    let mut crashed = false;
    let mut warnings: Vec<(String, usize)> = Vec::new();
    let mut warned_tests = 0usize;
    let mut seen: Vec<(Vec<String>, String)> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let t = lines[i].text.as_str();
        if Some(i) == summary_at {
            i += 1;
            continue;
        }
        if let Some(title) = section_title(t) {
            section = match title {
                "FAILURES" | "ERRORS" => Section::Failures,
                s if s.contains("warnings summary") => Section::Warnings,
                s if s.contains("short test summary") => {
                    body.push("short test summary:");
                    Section::Summary
                }
                _ => Section::Other,
            };
            if title.contains("Interrupted") {
                body.push(title.to_string());
            }
            i += 1;
            continue;
        }
        if t.contains("Fatal Python error") {
            crashed = true;
            i = crash(lines, i, &mut body);
            continue;
        }
        match section {
            Section::Failures => {
                if let Some(name) = block_title(t) {
                    blocks += 1;
                    let mut j = i + 1;
                    while j < lines.len()
                        && block_title(&lines[j].text).is_none()
                        && section_title(&lines[j].text).is_none()
                        && Some(j) != summary_at
                        && !lines[j].text.contains("Fatal Python error")
                    {
                        j += 1;
                    }
                    let compact = compact_block(&lines[i + 1..j]);
                    // Without its `E` lines: equal shapes mean the same code path failed.
                    let shape = block_shape(&compact, |l| l.starts_with('E'));
                    match seen.iter().find(|(s, _)| *s == shape) {
                        // Parametrized cases often fail the same way: show
                        // the first trace, then only what differs.
                        Some((_, first)) => {
                            body.push(format!("__ {name} __ (same frames as {first})"));
                            body.lines
                                .extend(compact.into_iter().filter(|l| l.starts_with('E')));
                        }
                        None => {
                            body.push(format!("__ {name} __"));
                            body.lines.extend(compact);
                            seen.push((shape, name.to_string()));
                        }
                    }
                    i = j;
                    continue;
                }
            }
            Section::Warnings => {
                if t.starts_with("  ") && !t.starts_with("    ") && t.contains("Warning") {
                    let w = t.trim().to_string();
                    match warnings.iter_mut().find(|(k, _)| *k == w) {
                        Some(e) => e.1 += warned_tests.max(1),
                        None => warnings.push((w, warned_tests.max(1))),
                    }
                    warned_tests = 0;
                } else if !t.starts_with(' ') && !t.is_empty() && !t.starts_with("-- Docs") {
                    warned_tests += 1;
                }
            }
            Section::Summary => {
                if !t.trim().is_empty() {
                    let item = t.starts_with("FAILED") || t.starts_with("ERROR");
                    if item {
                        summary_items += 1;
                    }
                    // pytest cuts the message to the terminal width; when the
                    // failure's own block was shown above, the node id is
                    // what this line adds.
                    match t.split_once(" - ") {
                        Some((id, _)) if item && blocks > 0 => body.push(id.to_string()),
                        _ => body.push(t.to_string()),
                    }
                }
            }
            Section::Other => {
                let keep = t.starts_with("collected ")
                    || (t.starts_with("collecting ") && t.contains("error"))
                    || t.contains("Interrupted:")
                    || (t.starts_with("ERROR") && t.contains("::"))
                    || (!is_progress(t) && looks_like_problem(t) && !t.starts_with(' '));
                if keep {
                    body.push(t.to_string());
                }
            }
        }
        i += 1;
    }
    if !warnings.is_empty() {
        body.push(format!("warnings ({} distinct):", warnings.len()));
        for (w, n) in &warnings {
            let count = if *n > 1 {
                format!(" [x{n}]")
            } else {
                String::new()
            };
            body.push(format!("  {w}{count}"));
        }
    }
    if let Some(s) = summary_at {
        body.push(
            lines[s]
                .text
                .trim_matches(|c| c == '=' || c == ' ')
                .to_string(),
        );
    }
    body.failures = blocks.max(summary_items) + usize::from(crashed);
    Some(body)
}

/// `==== TITLE ====` (or `!!!! Interrupted … !!!!`), returns the title.
fn section_title(t: &str) -> Option<&str> {
    for c in ['=', '!'] {
        if t.starts_with(&format!("{c}{c}{c}")) && t.ends_with(&format!("{c}{c}{c}")) {
            let inner = t.trim_matches(c).trim();
            if !inner.is_empty() && !is_final_summary(t) {
                return Some(inner);
            }
        }
    }
    None
}

/// `____ test_name ____` opens one failure or error.
fn block_title(t: &str) -> Option<&str> {
    if t.starts_with("___") && t.ends_with("___") {
        let inner = t.trim_matches('_').trim();
        (!inner.is_empty()).then_some(inner)
    } else {
        None
    }
}

/// The closing tally, e.g. `4 failed, 428 passed, 1 error in 0.46s`, bare
/// (`-q`) or framed in `=`. Anchored on the whole line so a traceback that
/// mentions "failed … in" is not mistaken for it.
fn is_final_summary(t: &str) -> bool {
    let inner = t.trim_matches(|c| c == '=' || c == ' ');
    let Some((counts, time)) = inner.rsplit_once(" in ") else {
        return false;
    };
    let time = time.split_whitespace().next().unwrap_or("");
    let time_ok = time.ends_with('s')
        && time[..time.len() - 1]
            .chars()
            .all(|c| c.is_ascii_digit() || c == '.');
    const WORDS: &[&str] = &[
        "passed",
        "failed",
        "error",
        "errors",
        "skipped",
        "xfailed",
        "xpassed",
        "deselected",
        "warning",
        "warnings",
        "rerun",
    ];
    let counts_ok = counts == "no tests ran"
        || counts.split(", ").all(|part| {
            let mut w = part.split_whitespace();
            matches!((w.next(), w.next(), w.next()),
                (Some(n), Some(word), None) if n.chars().all(|c| c.is_ascii_digit()) && WORDS.contains(&word))
        });
    time_ok && counts_ok
}

/// Progress lines: `tests/x.py ....F.. [ 40%]` or `-v`'s `::test PASSED`.
fn is_progress(t: &str) -> bool {
    let t = t.trim_end();
    t.ends_with("%]")
        || t.contains(" PASSED")
        || t.contains(" SKIPPED")
        || t.contains(" XFAIL")
        || t.chars().all(|c| ".FEsxX".contains(c))
}

/// A location line: `path.py:12: ValueError` or `path.py:12: in func`.
fn location(t: &str) -> Option<&str> {
    if t.starts_with(' ') || t.starts_with('E') && t.get(1..2) == Some(" ") {
        return None;
    }
    let (head, _) = t
        .split_once(": ")
        .or_else(|| t.strip_suffix(':').map(|h| (h, "")))?;
    let (path, line) = head.rsplit_once(':')?;
    (path.ends_with(".py") && !line.is_empty() && line.chars().all(|c| c.is_ascii_digit()))
        .then_some(path)
}

fn is_library(path: &str) -> bool {
    path.contains("/site-packages/")
        || path.contains("/lib/python")
        || path.starts_with('<')
        || !path.ends_with(".py")
}

/// One failure: `>` lines, `E` lines, project frame locations, a little of
/// any captured output.
fn compact_block(block: &[Line]) -> Vec<String> {
    let mut out = Vec::new();
    let mut pending: Vec<String> = Vec::new();
    let mut e_lines = 0usize;
    let mut e_dropped = 0usize;
    let mut k = 0;
    let last_loc = block.iter().rposition(|l| location(&l.text).is_some());
    while k < block.len() {
        let t = block[k].text.as_str();
        if t.starts_with("---") && t.contains("Captured") {
            out.append(&mut pending);
            out.push(t.trim_matches(|c| c == '-' || c == ' ').to_string() + ":");
            let mut j = k + 1;
            let mut n = 0;
            while j < block.len()
                && !(block[j].text.starts_with("---") && block[j].text.contains("Captured"))
            {
                if n < CAPTURED_CAP {
                    out.push(format!("  {}", block[j].text));
                }
                n += 1;
                j += 1;
            }
            if n > CAPTURED_CAP {
                out.push(format!("  [… {} more captured lines]", n - CAPTURED_CAP));
            }
            k = j;
            continue;
        }
        if t.starts_with("E ") || t == "E" {
            if t.trim() != "E" {
                if e_lines < E_CAP {
                    pending.push(t.to_string());
                } else {
                    e_dropped += 1;
                }
                e_lines += 1;
            }
        } else if t.starts_with('>') {
            pending.push(t.to_string());
        } else if let Some(path) = location(t) {
            if !is_library(path)
                || Some(k) == last_loc
                || pending.iter().any(|p| p.starts_with('E'))
            {
                out.append(&mut pending);
                out.push(t.to_string());
            } else {
                pending.clear();
            }
        } else if t.starts_with("ImportError while importing")
            || t.starts_with("Error while importing")
            || t.starts_with("fixture '")
        {
            out.push(t.to_string());
        }
        k += 1;
    }
    out.append(&mut pending);
    if e_dropped > 0 {
        let first = block.first().map_or(0, |l| l.origin);
        let last = block.last().map_or(0, |l| l.origin);
        out.push(format!(
            "[… {e_dropped} more E lines; this failure spans log lines {first}-{last}]"
        ));
    }
    out
}

/// `Fatal Python error`: the message, the thread line and the project's own
/// frames from faulthandler's dump.
fn crash(lines: &[Line], start: usize, body: &mut Body) -> usize {
    body.push(lines[start].text.clone());
    let mut j = start + 1;
    let mut frames = 0;
    let mut kept = Vec::new();
    while j < lines.len() {
        let t = lines[j].text.as_str();
        if t.trim_start().starts_with("File \"") {
            frames += 1;
            let path = t.split('"').nth(1).unwrap_or("");
            if !is_library(path) {
                kept.push(t.to_string());
            }
        } else if t.starts_with("Current thread") || t.starts_with("Thread ") {
            kept.push(t.to_string());
        } else if t.starts_with("Extension modules") || t.trim().is_empty() {
            // faulthandler's module list says nothing about the crash.
        } else if section_title(t).is_some() || is_final_summary(t) {
            break;
        } else {
            kept.push(t.to_string());
        }
        j += 1;
    }
    body.lines.extend(kept);
    body.push(format!(
        "[{frames} frames in the dump; library frames not shown]"
    ));
    j
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_line_is_anchored() {
        assert!(is_final_summary(
            "==== 4 failed, 428 passed, 1 error in 0.46s ===="
        ));
        assert!(is_final_summary("4 failed, 428 passed in 0.46s"));
        assert!(is_final_summary("=== no tests ran in 0.01s ==="));
        assert!(!is_final_summary(
            "E   AssertionError: 2 failed to load in 3s"
        ));
        assert!(!is_final_summary("the job failed in 3s"));
    }

    #[test]
    fn locations_are_recognised() {
        assert_eq!(
            location("tests/test_x.py:12: AssertionError"),
            Some("tests/test_x.py")
        );
        assert_eq!(location("tests/test_x.py:12: "), Some("tests/test_x.py"));
        assert_eq!(location("E   tests/test_x.py:12: x"), None);
        assert_eq!(location("    x = 1"), None);
    }
}
