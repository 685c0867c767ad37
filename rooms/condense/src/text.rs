//! Turning raw captured bytes into the lines a person would have seen.
//!
//! Tools write colour codes, `\r` progress redraws and cursor movements when
//! they think a terminal is watching. Matching on the raw bytes would make
//! every filter fragile, so all filters work on the *final screen*: escape
//! sequences are interpreted (cursor up, erase line, carriage return) or
//! dropped, and what is left is plain text. Each resulting line remembers the
//! raw log line it came from, so drill-down hints point into the real log.

/// One line of cleaned output and where it came from in the raw log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// The text with escapes and redraws resolved, trailing spaces trimmed.
    pub text: String,
    /// 1-based line number in the raw log where this line was first written.
    pub origin: usize,
}

/// Cleans raw output into lines.
pub fn clean(raw: &str) -> Vec<Line> {
    if !raw.contains('\x1b') && !raw.contains('\r') {
        // The common case when output went to a pipe: nothing to emulate.
        return raw
            .lines()
            .enumerate()
            .map(|(i, l)| Line {
                text: l.trim_end().to_string(),
                origin: i + 1,
            })
            .collect();
    }
    let mut screen = Screen::default();
    screen.feed(raw);
    screen.finish()
}

/// Removes escape sequences from one line without emulating cursor moves.
pub fn strip_ansi(s: &str) -> String {
    clean(s)
        .into_iter()
        .map(|l| l.text)
        .collect::<Vec<_>>()
        .join("\n")
}

/// A minimal terminal: enough to replay progress bars and status redraws.
#[derive(Default)]
struct Screen {
    rows: Vec<Vec<char>>,
    origins: Vec<usize>,
    row: usize,
    col: usize,
    raw_line: usize,
}

impl Screen {
    fn ensure_row(&mut self) {
        while self.rows.len() <= self.row {
            self.rows.push(Vec::new());
            self.origins.push(self.raw_line + 1);
        }
    }

    fn put(&mut self, c: char) {
        self.ensure_row();
        let line = &mut self.rows[self.row];
        if line.is_empty() {
            // A row rewritten after being erased should point at the raw
            // line that gave it its final content.
            self.origins[self.row] = self.raw_line + 1;
        }
        while line.len() < self.col {
            line.push(' ');
        }
        if self.col < line.len() {
            line[self.col] = c;
        } else {
            line.push(c);
        }
        self.col += 1;
    }

    fn feed(&mut self, raw: &str) {
        let mut chars = raw.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\n' => {
                    self.ensure_row();
                    self.row += 1;
                    self.col = 0;
                    self.raw_line += 1;
                }
                '\r' => self.col = 0,
                '\x08' => self.col = self.col.saturating_sub(1),
                '\t' => {
                    // Keep tabs as text: go test separates columns with them.
                    self.put('\t');
                }
                '\x1b' => match chars.next() {
                    Some('[') => {
                        let mut params = String::new();
                        let mut fin = None;
                        while let Some(&p) = chars.peek() {
                            if ('\x40'..='\x7e').contains(&p) {
                                fin = Some(p);
                                chars.next();
                                break;
                            }
                            if !('\x20'..='\x3f').contains(&p) {
                                // A sequence cut short (pytest truncates long
                                // coloured lines mid-escape): drop it and go
                                // on with the next character as text.
                                break;
                            }
                            params.push(p);
                            chars.next();
                        }
                        if let Some(f) = fin {
                            self.csi(&params, f);
                        }
                    }
                    Some(']') => {
                        // Operating system command (titles, hyperlinks): ends
                        // with BEL or ESC \.
                        while let Some(p) = chars.next() {
                            if p == '\x07' {
                                break;
                            }
                            if p == '\x1b' {
                                chars.next();
                                break;
                            }
                        }
                    }
                    Some('(') | Some(')') | Some('*') | Some('+') => {
                        // Character set selection (rustfmt writes `ESC ( B`).
                        chars.next();
                    }
                    _ => {}
                },
                c if c.is_control() => {}
                c => self.put(c),
            }
        }
    }

    fn csi(&mut self, params: &str, fin: char) {
        if params.starts_with('?') {
            // Private modes (cursor visibility, synchronized output).
            return;
        }
        let n = |default: usize| -> usize {
            params
                .split(';')
                .next()
                .and_then(|p| p.parse::<usize>().ok())
                .filter(|v| *v > 0)
                .unwrap_or(default)
        };
        match fin {
            'A' => self.row = self.row.saturating_sub(n(1)),
            'B' => self.row += n(1),
            'C' => self.col += n(1),
            'D' => self.col = self.col.saturating_sub(n(1)),
            'G' => self.col = n(1) - 1,
            'E' => {
                self.row += n(1);
                self.col = 0;
            }
            'F' => {
                self.row = self.row.saturating_sub(n(1));
                self.col = 0;
            }
            'K' => {
                self.ensure_row();
                let mode = params.parse::<usize>().unwrap_or(0);
                let line = &mut self.rows[self.row];
                match mode {
                    0 => line.truncate(self.col),
                    1 => {
                        for c in line.iter_mut().take(self.col + 1) {
                            *c = ' ';
                        }
                    }
                    _ => line.clear(),
                }
            }
            'J' => {
                let mode = params.parse::<usize>().unwrap_or(0);
                if mode == 0 {
                    self.ensure_row();
                    self.rows[self.row].truncate(self.col);
                    self.rows.truncate(self.row + 1);
                    self.origins.truncate(self.row + 1);
                } else if mode >= 2 {
                    self.rows.clear();
                    self.origins.clear();
                    self.row = 0;
                    self.col = 0;
                }
            }
            _ => {}
        }
    }

    fn finish(self) -> Vec<Line> {
        let mut out: Vec<Line> = self
            .rows
            .into_iter()
            .zip(self.origins)
            .map(|(r, o)| Line {
                text: r.into_iter().collect::<String>().trim_end().to_string(),
                origin: o,
            })
            .collect();
        // A redraw that erased the last rows leaves them empty at the end.
        while out.last().is_some_and(|l| l.text.is_empty()) {
            out.pop();
        }
        out
    }
}

/// Folds runs of identical consecutive lines into one line with `[xN]`.
pub fn fold_repeats(lines: &[Line]) -> Vec<Line> {
    let mut out: Vec<Line> = Vec::with_capacity(lines.len());
    let mut i = 0;
    while i < lines.len() {
        let mut j = i + 1;
        while j < lines.len() && lines[j].text == lines[i].text {
            j += 1;
        }
        let count = j - i;
        if count > 1 && !lines[i].text.trim().is_empty() {
            out.push(Line {
                text: format!("{} [x{count}]", lines[i].text),
                origin: lines[i].origin,
            });
        } else {
            // A single line, or a run of blank lines collapsed to one.
            out.push(lines[i].clone());
        }
        i = j;
    }
    out
}

/// Folds runs of at least four consecutive lines that differ only in their
/// numbers (`batch 17 loaded`, `compiling unit42.c`) into the first line, a
/// count and the last line. Problem-looking lines are never folded this way:
/// two errors that differ only in a line number are two errors.
pub fn fold_similar(lines: &[Line]) -> Vec<Line> {
    let shape = |s: &str| -> String {
        let mut out = String::with_capacity(s.len());
        for c in s.chars() {
            push_blanking_numbers(&mut out, c);
        }
        out
    };
    let mut out: Vec<Line> = Vec::with_capacity(lines.len());
    let mut i = 0;
    while i < lines.len() {
        let s = shape(&lines[i].text);
        let mut j = i + 1;
        if !looks_like_problem(&lines[i].text) && !lines[i].text.trim().is_empty() {
            while j < lines.len() && shape(&lines[j].text) == s {
                j += 1;
            }
        }
        if j - i >= 4 {
            out.push(lines[i].clone());
            out.push(Line {
                text: format!("[… {} similar lines]", j - i - 2),
                origin: lines[i + 1].origin,
            });
            out.push(lines[j - 1].clone());
        } else {
            out.extend(lines[i..j].iter().cloned());
        }
        i = j;
    }
    out
}

/// Pushes `c` onto `out`, writing a run of digits as one `#`: lines that differ only in
/// their numbers come out the same.
fn push_blanking_numbers(out: &mut String, c: char) {
    if c.is_ascii_digit() {
        if !out.ends_with('#') {
            out.push('#');
        }
    } else {
        out.push(c);
    }
}

/// Does this line look like it reports a problem? Used to rescue lines from
/// the elided middle of output no family filter understands.
pub fn looks_like_problem(line: &str) -> bool {
    const NEEDLES: &[&str] = &[
        "error",
        "Error",
        "ERROR",
        "FAIL",
        "Failed",
        "failed",
        "panic",
        "Panic",
        "PANIC",
        "Traceback",
        "fatal",
        "Fatal",
        "FATAL",
        "Exception",
        "exception",
        "Segmentation fault",
        "SIGSEGV",
        "SIGABRT",
        "Aborted",
        "core dumped",
        "undefined reference",
        "warning:",
        "Warning:",
        "WARNING",
    ];
    NEEDLES.iter().any(|n| line.contains(n))
}

/// Is the line a warning rather than an error? Warnings are counted, errors
/// are listed.
pub fn looks_like_warning(line: &str) -> bool {
    let l = line.to_ascii_lowercase();
    l.contains("warning") && !l.contains("error") && !l.contains("fail")
}

/// Replaces the contents of backtick and quote spans with `…`, so that
/// messages differing only in a name group together.
pub fn message_shape(msg: &str) -> String {
    let mut out = String::with_capacity(msg.len());
    let mut in_tick = false;
    for c in msg.chars() {
        if c == '`' {
            if in_tick {
                out.push('…');
            }
            in_tick = !in_tick;
            out.push(c);
            continue;
        }
        if !in_tick {
            push_blanking_numbers(&mut out, c);
        }
    }
    out
}

/// The backtick spans of a message, joined, for telling grouped items apart.
pub fn tick_spans(msg: &str) -> Vec<&str> {
    msg.split('`').skip(1).step_by(2).collect()
}

/// The lines of `block` that are not blank, trimmed, each with its index in `block`.
pub fn nonblank(block: &[Line]) -> impl Iterator<Item = (usize, &str)> {
    block
        .iter()
        .enumerate()
        .map(|(i, l)| (i, l.text.trim()))
        .filter(|(_, t)| !t.is_empty())
}

/// A compacted failure block without the lines `is_value` picks out and with its
/// numbers blanked: two failures of one shape are the same check failing, only with
/// other values.
pub fn block_shape(block: &[String], is_value: impl Fn(&str) -> bool) -> Vec<String> {
    block
        .iter()
        .filter(|l| !is_value(l.as_str()))
        .map(|l| {
            l.chars()
                .map(|c| if c.is_ascii_digit() { '#' } else { c })
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(lines: &[Line]) -> Vec<&str> {
        lines.iter().map(|l| l.text.as_str()).collect()
    }

    #[test]
    fn plain_text_keeps_lines_and_origins() {
        let l = clean("a\nb  \nc");
        assert_eq!(l.len(), 3);
        assert_eq!(l[1].text, "b");
        assert_eq!(l[2].origin, 3);
    }

    #[test]
    fn carriage_return_redraw_keeps_final_state() {
        let l = clean("progress 10%\rprogress 50%\rprogress 100%\ndone\n");
        assert_eq!(l[0].text, "progress 100%");
        assert_eq!(l[1].text, "done");
    }

    #[test]
    fn crlf_is_a_plain_newline() {
        let l = clean("one\r\ntwo\r\n");
        assert_eq!(texts(&l), ["one", "two"]);
    }

    #[test]
    fn colours_and_charset_switches_are_removed() {
        let l = clean("\x1b[1m\x1b[31merror\x1b[0m: x\x1b(B\x1b[m\n");
        assert_eq!(l[0].text, "error: x");
    }

    #[test]
    fn cursor_up_and_erase_overwrite_status_lines() {
        let l = clean("RUNS a.test.js\n\x1b[1A\x1b[KPASS a.test.js\nsummary\n");
        assert_eq!(texts(&l), ["PASS a.test.js", "summary"]);
    }

    #[test]
    fn truncated_escape_does_not_swallow_the_next_one() {
        let l = clean("'low\x1b[39;49;0...\x1b[0m\nnext\n");
        assert_eq!(l[0].text, "'low");
        assert_eq!(l[1].text, "next");
    }

    #[test]
    fn osc_hyperlinks_are_removed() {
        let l = clean("see \x1b]8;;http://x\x07link\x1b]8;;\x07 here\n");
        assert_eq!(l[0].text, "see link here");
    }

    #[test]
    fn repeats_fold_with_count() {
        let lines = clean("a\nx\nx\nx\nb\n");
        let f = fold_repeats(&lines);
        assert_eq!(texts(&f), ["a", "x [x3]", "b"]);
    }

    #[test]
    fn shapes_group_names_and_numbers() {
        assert_eq!(
            message_shape("cannot find function `f_1` in this scope"),
            message_shape("cannot find function `g_22` in this scope")
        );
        assert_eq!(tick_spans("a `x` b `y`"), ["x", "y"]);
    }
}
