//! The frame around every condensed output: verdict first, measurements last.
//!
//! The header states the exit code before anything a filter says, so no
//! parsing mistake can make a failing run read as green. The footer measures
//! the cut honestly (it counts itself) and tells the agent how to get back
//! anything that was left out.

use crate::{Body, Condensed, Family};

/// Keeps a condensed view well under the ~30 000 characters an agent harness
/// shows before it truncates from the tail, where failures usually are.
const BODY_BUDGET: usize = 24_000;
/// A single line longer than this (minified JSON, a base64 blob) is cut.
const LINE_BUDGET: usize = 2_000;

/// The verdict line. The exit code alone decides PASS or FAIL.
pub(crate) fn header(family: Family, exit_code: i32) -> String {
    let verdict = if exit_code == 0 { "PASS" } else { "FAIL" };
    let signal = match exit_code {
        129..=192 => format!(": killed by signal {}", exit_code - 128),
        i32::MIN..=-1 => format!(": killed by signal {}", -(exit_code as i64)),
        _ => String::new(),
    };
    format!("{family}: {verdict} (exit {exit_code}{signal})")
}

/// A result whose text is final, measured as it stands.
pub(crate) fn measured(
    family: Family,
    fell_back: bool,
    text: String,
    bytes_in: usize,
    lines_in: usize,
) -> Condensed {
    let bytes_out = text.len();
    let lines_out = text.lines().count();
    Condensed {
        text,
        family,
        fell_back,
        bytes_in,
        bytes_out,
        lines_in,
        lines_out,
        estimated_tokens_saved: bytes_in.saturating_sub(bytes_out) / 4,
    }
}

/// Small output, verbatim, with one line after it stating the exit code.
pub(crate) fn small(
    family: Family,
    exit_code: i32,
    output: &str,
    bytes_in: usize,
    lines_in: usize,
) -> Condensed {
    let mut text = output.to_string();
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(&format!(
        "[hall] {}; output shown in full\n",
        header(family, exit_code)
    ));
    measured(family, false, text, bytes_in, lines_in)
}

/// Header, notes, body and a self-measuring footer.
#[allow(clippy::too_many_arguments)]
pub(crate) fn condensed(
    family: Family,
    fell_back: bool,
    exit_code: i32,
    notes: &[String],
    body: Body,
    bytes_in: usize,
    lines_in: usize,
    log_name: &str,
) -> Condensed {
    let mut head = header(family, exit_code);
    head.push('\n');
    for n in notes {
        head.push_str(n);
        head.push('\n');
    }
    let mut lines = trim_blank_edges(body.lines);
    lines = lines.into_iter().map(cap_line).collect();
    lines = within_budget(lines);
    for l in &lines {
        head.push_str(l);
        head.push('\n');
    }
    let start = head;
    // The footer reports the size of the text that contains it, so iterate
    // until the numbers stop changing (they settle in two or three rounds).
    let (mut bytes_out, mut lines_out) = (start.len(), start.lines().count());
    let mut text = String::new();
    for _ in 0..6 {
        text = format!(
            "{start}{}",
            footer(bytes_in, lines_in, bytes_out, lines_out, log_name)
        );
        let (b, l) = (text.len(), text.lines().count());
        if (b, l) == (bytes_out, lines_out) {
            break;
        }
        bytes_out = b;
        lines_out = l;
    }
    measured(family, fell_back, text, bytes_in, lines_in)
}

fn footer(
    bytes_in: usize,
    lines_in: usize,
    bytes_out: usize,
    lines_out: usize,
    log: &str,
) -> String {
    let saved = bytes_in.saturating_sub(bytes_out) / 4;
    let pct = (bytes_in.saturating_sub(bytes_out) * 100)
        .checked_div(bytes_in)
        .unwrap_or(0);
    format!(
        "--\n[hall] {bytes_in} bytes / {lines_in} lines in, {bytes_out} bytes / {lines_out} lines out \
         ({pct}% fewer bytes; ~{saved} tokens saved, estimated as bytes/4)\n\
         [hall] full log: {log}; `hall run --show {log} --lines a-b` or `--grep <pattern>` shows any part\n"
    )
}

fn cap_line(line: String) -> String {
    if line.len() <= LINE_BUDGET {
        return line;
    }
    let mut end = LINE_BUDGET;
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    format!(
        "{} [… {} more bytes on this line]",
        &line[..end],
        line.len() - end
    )
}

fn trim_blank_edges(mut lines: Vec<String>) -> Vec<String> {
    while lines.last().is_some_and(|l| l.trim().is_empty()) {
        lines.pop();
    }
    let lead = lines.iter().take_while(|l| l.trim().is_empty()).count();
    lines.drain(..lead);
    // Blank runs inside the body carry no information.
    let mut out: Vec<String> = Vec::with_capacity(lines.len());
    for l in lines {
        if l.trim().is_empty() && out.last().is_some_and(|p| p.trim().is_empty()) {
            continue;
        }
        out.push(l);
    }
    out
}

/// Cuts the middle of an oversized body, keeping more of the tail, where
/// tools print their summaries.
fn within_budget(lines: Vec<String>) -> Vec<String> {
    let total: usize = lines.iter().map(|l| l.len() + 1).sum();
    if total <= BODY_BUDGET {
        return lines;
    }
    let head_budget = BODY_BUDGET * 2 / 5;
    let tail_budget = BODY_BUDGET - head_budget;
    let mut head_end = 0;
    let mut used = 0;
    while head_end < lines.len() && used + lines[head_end].len() < head_budget {
        used += lines[head_end].len() + 1;
        head_end += 1;
    }
    let mut tail_start = lines.len();
    used = 0;
    while tail_start > head_end && used + lines[tail_start - 1].len() < tail_budget {
        used += lines[tail_start - 1].len() + 1;
        tail_start -= 1;
    }
    let cut = tail_start - head_end;
    let mut out: Vec<String> = lines[..head_end].to_vec();
    out.push(format!(
        "[hall: the condensed view was still too long; {cut} of its lines are cut here, search the full log]"
    ));
    out.extend_from_slice(&lines[tail_start..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_never_says_pass_on_nonzero_exit() {
        assert_eq!(header(Family::Pytest, 0), "pytest: PASS (exit 0)");
        assert_eq!(header(Family::Pytest, 1), "pytest: FAIL (exit 1)");
        assert_eq!(
            header(Family::Pytest, 139),
            "pytest: FAIL (exit 139: killed by signal 11)"
        );
    }

    #[test]
    fn footer_counts_itself() {
        let body = Body {
            lines: vec!["x".into(); 3],
            failures: 1,
        };
        let c = condensed(
            Family::Generic,
            false,
            1,
            &[],
            body,
            10_000,
            500,
            "run-1.log",
        );
        assert_eq!(c.bytes_out, c.text.len());
        assert_eq!(c.lines_out, c.text.lines().count());
        assert!(c.text.contains(&format!(
            "{} bytes / {} lines out",
            c.bytes_out, c.lines_out
        )));
    }

    #[test]
    fn a_huge_line_is_cut_at_a_char_boundary() {
        let line = "é".repeat(3_000);
        let cut = cap_line(line);
        assert!(cut.len() < LINE_BUDGET + 100);
        assert!(
            cut.ends_with("[… 4000 more bytes on this line]"),
            "{}",
            &cut[cut.len() - 40..]
        );
    }

    #[test]
    fn oversized_body_is_cut_with_a_marker() {
        let lines: Vec<String> = (0..3000)
            .map(|i| format!("line {i:05} ............"))
            .collect();
        let out = within_budget(lines);
        let total: usize = out.iter().map(|l| l.len() + 1).sum();
        assert!(total <= BODY_BUDGET + 200);
        assert!(out.iter().any(|l| l.contains("still too long")));
        assert_eq!(
            out.last().map(String::as_str),
            Some("line 02999 ............")
        );
    }
}
