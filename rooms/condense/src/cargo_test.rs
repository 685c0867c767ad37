//! `cargo test`: libtest output, preceded by a build that may fail.
//!
//! A fixer needs each failing test with its panic message and location, the
//! user-code frames of any backtrace, the per-target `test result:` line and
//! cargo's rerun hint. Passing tests, `running N tests`, standard-library
//! backtrace frames and timing go. A suite that fails to compile is reported
//! through the rustc diagnostics filter; a test binary killed by a signal is
//! reported as a crash, since libtest never gets to print a summary for it.

use crate::Body;
use crate::rustc::{self, Groups, Level};
use crate::text::{Line, looks_like_problem};

/// Lines kept from one failure's block before the rest is referred to the log.
const BLOCK_CAP: usize = 30;

pub(crate) fn filter(lines: &[Line]) -> Option<Body> {
    let recognised = lines.iter().any(|l| {
        let t = l.text.as_str();
        (t.starts_with("running ") && (t.ends_with(" test") || t.ends_with(" tests")))
            || t.starts_with("test result: ")
            || t.starts_with("error: test failed")
            || rustc::is_cargo_status(t)
            || rustc::starts_diag(t)
    });
    if !recognised {
        return None;
    }

    let mut body = Body::default();
    let mut diags = Vec::new();
    let mut tail: Vec<String> = Vec::new();
    let mut failed_names: Vec<String> = Vec::new();
    let mut empty_targets = 0usize;
    let mut tallies: Vec<String> = Vec::new();
    let mut target: Option<String> = None;
    let mut target_shown = false;
    let mut crashed = false;
    let mut blocks: Vec<String> = Vec::new();
    let mut other_failures = 0usize;

    let mut i = 0;
    while i < lines.len() {
        let t = lines[i].text.as_str();
        let trimmed = t.trim_start();

        let cargo_verdict = t.starts_with("error: test failed")
            || t.starts_with("error: doctest failed")
            || (t.starts_with("error: ") && t.contains(" targets failed"));
        if !cargo_verdict
            && rustc::starts_diag(t)
            && let Some((d, next)) = rustc::parse_diag(lines, i)
        {
            diags.push(d);
            i = next;
            continue;
        }
        // Cargo indents its status words; a test that prints "Running x"
        // at the start of a line is not a new target.
        let status = rustc::is_cargo_status(t);
        if status && let Some(name) = trimmed.strip_prefix("Running ") {
            target = Some(name.split(" (").next().unwrap_or(name).to_string());
            target_shown = false;
            i += 1;
            continue;
        }
        if status && let Some(name) = trimmed.strip_prefix("Doc-tests ") {
            target = Some(format!("doc-tests {name}"));
            target_shown = false;
            i += 1;
            continue;
        }
        if status || rustc::is_noise(t) {
            i += 1;
            continue;
        }
        let show_target = |blocks: &mut Vec<String>, target_shown: &mut bool| {
            if !*target_shown && let Some(tg) = &target {
                blocks.push(format!("[{tg}]"));
                *target_shown = true;
            }
        };
        if let Some(rest) = t.strip_prefix("test ")
            && let Some((name, outcome)) = rest.rsplit_once(" ... ")
        {
            if outcome.starts_with("FAILED") {
                let name = name.trim_end_matches(" - should panic").to_string();
                if !failed_names.contains(&name) {
                    failed_names.push(name);
                }
            }
            i += 1;
            continue;
        }
        if trimmed.starts_with("---- ") && trimmed.ends_with(" ----") {
            show_target(&mut blocks, &mut target_shown);
            let start = i;
            let mut j = i + 1;
            while j < lines.len() {
                let n = lines[j].text.as_str();
                if (n.starts_with("---- ") && n.ends_with(" ----")) || n == "failures:" {
                    break;
                }
                j += 1;
            }
            blocks.push(t.to_string());
            blocks.extend(compact_block(&lines[start + 1..j]));
            i = j;
            continue;
        }
        if t == "failures:" {
            // Either the details (followed by `----` blocks) or the name list.
            let mut j = i + 1;
            let mut names = Vec::new();
            while j < lines.len() && lines[j].text.starts_with("    ") {
                names.push(lines[j].text.trim().to_string());
                j += 1;
            }
            if !names.is_empty() {
                show_target(&mut blocks, &mut target_shown);
                blocks.push(format!("failures: {}", names.join(", ")));
                for n in names {
                    if !failed_names.contains(&n) {
                        failed_names.push(n);
                    }
                }
            }
            i = j.max(i + 1);
            continue;
        }
        if let Some(rest) = t.strip_prefix("test result: ") {
            if rest.starts_with("ok.") {
                // Targets with no tests print an empty tally; the ones that
                // ran something keep theirs, as the tool's summary.
                let n = count_before(rest, " passed") + count_before(rest, " ignored");
                if n == 0 {
                    empty_targets += 1;
                } else {
                    tallies.push(t.to_string());
                }
            } else {
                show_target(&mut blocks, &mut target_shown);
                blocks.push(t.to_string());
            }
            i += 1;
            continue;
        }
        if cargo_verdict {
            show_target(&mut blocks, &mut target_shown);
            tail.push(t.to_string());
            // `error: 3 targets failed:` lists them indented below.
            let mut j = i + 1;
            while j < lines.len() && lines[j].text.starts_with("    `") {
                tail.push(lines[j].text.clone());
                j += 1;
            }
            i = j;
            continue;
        }
        if t == "Caused by:" {
            let mut j = i + 1;
            tail.push(t.to_string());
            while j < lines.len() && lines[j].text.starts_with("  ") {
                let n = &lines[j].text;
                if n.contains("signal:") {
                    crashed = true;
                }
                tail.push(n.clone());
                j += 1;
            }
            i = j;
            continue;
        }
        if t.starts_with("running ") || t.starts_with("all doctests ran in") || t.trim().is_empty()
        {
            i += 1;
            continue;
        }
        if t.contains("panicked at") {
            // With --nocapture panics print inline, outside any block.
            show_target(&mut blocks, &mut target_shown);
            blocks.push(t.to_string());
            if let Some(next) = lines.get(i + 1) {
                blocks.push(next.text.clone());
            }
            other_failures += 1;
            i += 2;
            continue;
        }
        if looks_like_problem(t) {
            show_target(&mut blocks, &mut target_shown);
            blocks.push(t.to_string());
        }
        i += 1;
    }

    let groups = Groups::new(diags);
    let errors = groups.count(Level::Error);
    if errors > 0 || groups.count(Level::Warning) > 0 {
        groups.render(&mut body);
        if errors > 0 {
            body.push("the tests did not run: the build failed");
        }
    }
    body.lines.extend(blocks);
    body.lines.extend(tallies);
    if empty_targets > 0 {
        body.push(format!(
            "({empty_targets} test target(s) with no tests not shown)"
        ));
    }
    body.lines.extend(tail);
    if crashed {
        body.push(
            "hall: a test binary was killed by a signal before it could report; the crashing \
             test is not named in the output. Rerun that target with `-- --test-threads=1` to see \
             which test was running.",
        );
    }
    body.failures = errors + failed_names.len() + usize::from(crashed) + other_failures;
    Some(body)
}

/// The number just before `word` in a libtest summary, e.g. `300 passed`.
fn count_before(s: &str, word: &str) -> usize {
    s.find(word)
        .and_then(|end| {
            s[..end]
                .rsplit(|c: char| !c.is_ascii_digit())
                .next()
                .and_then(|n| n.parse().ok())
        })
        .unwrap_or(0)
}

/// One failing test's captured output: the message stays, the standard
/// library's frames and libtest's advice go.
fn compact_block(block: &[Line]) -> Vec<String> {
    let mut out = Vec::new();
    let mut k = 0;
    while k < block.len() {
        let t = block[k].text.as_str();
        if t.starts_with("note: run with `RUST_BACKTRACE=1`")
            || t.starts_with("note: Some details are omitted")
            || t.trim().is_empty()
        {
            k += 1;
            continue;
        }
        if t == "stack backtrace:" {
            let mut frames = 0;
            let mut kept_frames = 0;
            let mut kept = Vec::new();
            k += 1;
            while k < block.len() {
                let f = block[k].text.as_str();
                let ft = f.trim_start();
                let is_frame = ft
                    .split_once(": ")
                    .is_some_and(|(n, _)| n.chars().all(|c| c.is_ascii_digit()));
                if !is_frame {
                    break;
                }
                frames += 1;
                let at = block
                    .get(k + 1)
                    .map(|l| l.text.trim_start())
                    .filter(|l| l.starts_with("at "));
                let dup_closure = ft
                    .split_once(": ")
                    .and_then(|(_, f)| f.strip_suffix("::{{closure}}"))
                    .is_some_and(|f| kept.iter().any(|k: &String| k.ends_with(f)));
                if is_user_frame(ft, at) && !dup_closure {
                    kept_frames += 1;
                    kept.push(f.to_string());
                    if let Some(a) = at {
                        kept.push(format!("             {a}"));
                    }
                }
                k += if at.is_some() { 2 } else { 1 };
            }
            out.push(format!(
                "stack backtrace ({kept_frames} of {frames} frames shown: the project's own):"
            ));
            out.extend(kept);
            continue;
        }
        out.push(t.to_string());
        k += 1;
    }
    if out.len() > BLOCK_CAP {
        let first = block.first().map_or(0, |l| l.origin);
        let last = block.last().map_or(0, |l| l.origin);
        let more = out.len() - BLOCK_CAP;
        out.truncate(BLOCK_CAP);
        out.push(format!(
            "[… {more} more lines of this failure; it spans log lines {first}-{last}]"
        ));
    }
    out
}

fn is_user_frame(frame: &str, at: Option<&str>) -> bool {
    let func = frame.split_once(": ").map_or(frame, |(_, f)| f);
    const LIBS: &[&str] = &[
        "core::",
        "std::",
        "alloc::",
        "test::",
        "__rustc",
        "<fn(",
        "<core::",
        "<std::",
        "<alloc::",
        "rust_begin_unwind",
    ];
    if LIBS.iter().any(|p| func.starts_with(p)) {
        return false;
    }
    match at {
        Some(a) => {
            !(a.contains("/rustc/") || a.contains("/.cargo/registry/") || a.contains("/rustlib/"))
        }
        None => false,
    }
}
