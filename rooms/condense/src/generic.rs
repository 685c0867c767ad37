//! The filter for output no family filter understands, and the safety net
//! under the ones that do.
//!
//! It keeps the head (where tools print what they are about to do) and a
//! longer tail (where they print failures and summaries), folds repeated
//! lines as `[xN]`, and rescues problem-looking lines from the part it cuts,
//! each with its line number in the full log. A tail-only or head-only view
//! is exactly how other condensers hid failures, so neither is used.

use crate::text::{
    Line, fold_repeats, fold_similar, looks_like_problem, looks_like_warning, message_shape,
};

/// How much of the output to show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Window {
    /// The design's window: the first 20 and last 40 lines.
    Normal,
    /// For a failing run a filter could not explain: show more, not less.
    Wide,
}

impl Window {
    fn sizes(self) -> (usize, usize, usize) {
        match self {
            Window::Normal => (20, 40, 30),
            Window::Wide => (40, 100, 60),
        }
    }
}

/// Head, rescued middle lines, tail.
pub(crate) fn view(lines: &[Line], window: Window) -> Vec<String> {
    let (head_n, tail_n, rescue_n) = window.sizes();
    let folded = fold_similar(&fold_repeats(lines));
    let mut out = Vec::new();
    if folded.len() <= head_n + tail_n {
        out.extend(folded.iter().map(|l| l.text.clone()));
        return out;
    }
    let head = &folded[..head_n];
    let middle = &folded[head_n..folded.len() - tail_n];
    let tail = &folded[folded.len() - tail_n..];
    out.extend(head.iter().map(|l| l.text.clone()));
    let first = middle.first().map_or(0, |l| l.origin);
    // The omitted part ends where the tail begins.
    let last = tail.first().map_or(0, |l| l.origin.saturating_sub(1));
    out.push(format!("[… lines {first}-{last} of the log omitted]"));
    out.extend(rescue(middle, rescue_n));
    if middle.iter().any(|l| looks_like_problem(&l.text)) {
        out.push("[… end of lines rescued from the omitted part]".to_string());
    }
    out.extend(tail.iter().map(|l| l.text.clone()));
    out
}

/// Problem-looking lines from the omitted part: errors each with their line
/// number, warnings once each with a count.
pub(crate) fn rescue(middle: &[Line], cap: usize) -> Vec<String> {
    let mut out = Vec::new();
    // (shape, count, first line); the first occurrence's text is shown.
    let mut warnings: Vec<(String, usize, usize)> = Vec::new();
    let mut first_text: Vec<String> = Vec::new();
    let mut shown = 0;
    let mut more = 0;
    for l in middle {
        if !looks_like_problem(&l.text) {
            continue;
        }
        if looks_like_warning(&l.text) {
            // Warnings that differ only in a name or number are one warning.
            let key = message_shape(l.text.trim());
            match warnings.iter_mut().find(|(k, _, _)| *k == key) {
                Some(w) => w.1 += 1,
                None => {
                    warnings.push((key, 1, l.origin));
                    first_text.push(l.text.trim().to_string());
                }
            }
            continue;
        }
        if shown < cap {
            out.push(format!("[line {}] {}", l.origin, l.text));
            shown += 1;
        } else {
            more += 1;
        }
    }
    if more > 0 {
        out.push(format!(
            "[… {more} more problem lines in the omitted part; search the log]"
        ));
    }
    let distinct = warnings.len();
    for ((_, n, origin), w) in warnings.into_iter().zip(first_text).take(cap / 2) {
        let count = if n > 1 {
            format!(" [x{n}]")
        } else {
            String::new()
        };
        out.push(format!("[line {origin}] {w}{count}"));
    }
    if distinct > cap / 2 {
        out.push(format!(
            "[… {} more distinct warnings in the omitted part]",
            distinct - cap / 2
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::clean;

    #[test]
    fn keeps_head_tail_and_middle_errors() {
        let mut raw = String::new();
        for i in 0..200 {
            // Varying words, so that the lines do not fold as similar.
            raw.push_str(&format!("step {i} {}\n", "x".repeat(i % 5 + 1)));
            if i == 100 {
                raw.push_str("error: disk full at step 100\n");
            }
        }
        let v = view(&clean(&raw), Window::Normal);
        assert_eq!(v[0], "step 0 x");
        assert!(
            v.iter()
                .any(|l| l == "[line 102] error: disk full at step 100")
        );
        assert_eq!(v.last().map(String::as_str), Some("step 199 xxxxx"));
        assert!(v.len() < 70);
    }

    #[test]
    fn short_output_is_kept_whole() {
        let v = view(&clean("a\nb\nc\n"), Window::Normal);
        assert_eq!(v, ["a", "b", "c"]);
    }
}
