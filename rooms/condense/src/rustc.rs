//! Rust compiler diagnostics, shared by the cargo build and cargo test filters.
//!
//! A rustc diagnostic spends most of its lines on drawing: gutters, blank
//! `|` rows, lint URLs and "to override" advice. A fixer needs the message,
//! the `file:line:col`, the offending source line with its label, and any
//! note that explains the error. Diagnostics that differ only in a name
//! (twelve "cannot find function `f_N`") are shown once with a count and
//! every other location, so nothing that points at code is dropped.

use crate::Body;
use crate::text::{Line, message_shape, tick_spans};

/// At most this many extra locations are listed per group before `+N more`.
const MAX_LOCATIONS: usize = 60;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Level {
    Error,
    Warning,
}

/// One parsed diagnostic.
#[derive(Debug, Clone)]
pub(crate) struct Diag {
    pub level: Level,
    pub header: String,
    pub code: Option<String>,
    pub message: String,
    pub location: Option<String>,
    pub lint: Option<String>,
    /// Source, label and explanatory lines, already compacted.
    pub detail: Vec<String>,
}

/// Lines that are cargo's own progress: dropped.
pub(crate) fn is_cargo_status(line: &str) -> bool {
    const WORDS: &[&str] = &[
        "Compiling",
        "Checking",
        "Finished",
        "Downloaded",
        "Downloading",
        "Updating",
        "Locking",
        "Adding",
        "Blocking",
        "Fresh",
        "Documenting",
        "Building",
        "Fetching",
        "Packaging",
        "Verifying",
        "Archiving",
        "Installing",
        "Installed",
        "Replacing",
        "Removed",
        "Removing",
        "Unpacking",
        "Waiting",
        "Generated",
        "Scraping",
        "Running",
        "Doc-tests",
    ];
    if !line.starts_with(' ') {
        return false;
    }
    let t = line.trim_start();
    WORDS.iter().any(|w| {
        t.strip_prefix(w)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with(' '))
    })
}

/// Splits `error[E0425]: msg` into level, code and message.
pub(crate) fn parse_header(line: &str) -> Option<(Level, Option<String>, String)> {
    let (level, rest) = if let Some(r) = line.strip_prefix("error") {
        (Level::Error, r)
    } else if let Some(r) = line.strip_prefix("warning") {
        (Level::Warning, r)
    } else {
        return None;
    };
    let (code, rest) = match rest.strip_prefix('[') {
        Some(r) => {
            let end = r.find(']')?;
            (Some(r[..end].to_string()), &r[end + 1..])
        }
        None => (None, rest),
    };
    let msg = rest.strip_prefix(": ")?;
    Some((level, code, msg.to_string()))
}

/// Summary lines cargo prints after the diagnostics; kept once each.
pub(crate) fn is_summary(line: &str) -> bool {
    (line.starts_with("error: could not compile")
        || line.starts_with("error: aborting due to")
        || (line.starts_with("warning: `") && line.contains(" generated ")))
        && !line.contains("waiting for other jobs")
}

/// Lines that add nothing a fixer can use.
pub(crate) fn is_noise(line: &str) -> bool {
    line.starts_with("warning: build failed, waiting for other jobs")
        || line.starts_with("Some errors have detailed explanations")
        || line.starts_with("For more information about this error")
        || line.starts_with("For more information about an error")
}

/// Is `line` the start of a diagnostic (not a cargo summary)?
pub(crate) fn starts_diag(line: &str) -> bool {
    parse_header(line).is_some() && !is_summary(line) && !is_noise(line)
}

/// Parses the diagnostic that starts at `lines[i]`; returns it and the index
/// just past it.
pub(crate) fn parse_diag(lines: &[Line], i: usize) -> Option<(Diag, usize)> {
    let head = &lines.get(i)?.text;
    let (level, code, message) = parse_header(head)?;
    let mut j = i + 1;
    while j < lines.len() {
        let t = &lines[j].text;
        if t.is_empty() || starts_diag(t) || is_summary(t) || is_cargo_status(t) {
            break;
        }
        j += 1;
    }
    let raw: Vec<&str> = lines[i + 1..j].iter().map(|l| l.text.as_str()).collect();
    let mut d = Diag {
        level,
        header: head.clone(),
        code,
        message,
        location: None,
        lint: None,
        detail: Vec::new(),
    };
    compact(&raw, &mut d);
    Some((d, j))
}

fn compact(raw: &[&str], d: &mut Diag) {
    let has_arrow = raw.iter().any(|l| l.trim_start().starts_with("--> "));
    let mut snippet = 0;
    let mut notes = 0;
    let mut helps = 0;
    let mut in_primary = true;
    for l in raw {
        let t = l.trim_start();
        if d.lint.is_none() {
            d.lint = lint_name(t);
        }
        if let Some(loc) = t.strip_prefix("--> ") {
            if d.location.is_none() {
                d.location = Some(loc.trim().to_string());
            }
            continue;
        }
        if !has_arrow {
            // Not a source diagnostic (a failed build script, a manifest
            // error): its lines are the message, keep them.
            if d.detail.len() < 15 {
                d.detail.push(l.to_string());
            }
            continue;
        }
        if is_boilerplate(t) {
            continue;
        }
        if t.starts_with("::: ") {
            continue;
        }
        if t.starts_with("= note:") || t.starts_with("= help:") {
            // Notes under a `help:` sub-diagnostic elaborate the help, not
            // the error.
            if notes < 2 && in_primary {
                d.detail.push(format!("   {t}"));
                notes += 1;
            }
            continue;
        }
        if t.starts_with("help:") || t.starts_with("note:") {
            in_primary = false;
            if helps < 1 {
                d.detail.push(t.to_string());
                helps += 1;
            }
            continue;
        }
        if in_primary && is_source_or_label(l) && snippet < 4 {
            d.detail.push(l.to_string());
            snippet += 1;
        }
    }
}

/// A numbered source line, or a gutter line that carries a label.
fn is_source_or_label(l: &str) -> bool {
    let t = l.trim_start();
    let digits = t.chars().take_while(|c| c.is_ascii_digit()).count();
    if digits > 0 && t[digits..].trim_start().starts_with('|') {
        return true;
    }
    if let Some(rest) = t.strip_prefix('|') {
        let r = rest.trim();
        return !r.is_empty() && r.chars().any(|c| matches!(c, '^' | '-' | '~' | '+'));
    }
    false
}

fn is_boilerplate(t: &str) -> bool {
    t.contains("for further information visit")
        || t.contains("` implied by `")
        || t.contains("to override `-D warnings`")
        || t.contains("` on by default")
        || t == "|"
        || t == "..."
}

fn lint_name(t: &str) -> Option<String> {
    for (open, close) in [("#[warn(", ")]"), ("#[deny(", ")]")] {
        if let Some(start) = t.find(open) {
            let rest = &t[start + open.len()..];
            if let Some(end) = rest.find(close) {
                return Some(rest[..end].to_string());
            }
        }
    }
    if let Some(start) = t.find("index.html#") {
        let name: String = t[start + 11..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if !name.is_empty() {
            return Some(format!("clippy::{name}"));
        }
    }
    None
}

/// Diagnostics grouped by level, code and message shape, in first-seen order.
pub(crate) struct Groups {
    groups: Vec<Vec<Diag>>,
}

impl Groups {
    pub(crate) fn new(diags: Vec<Diag>) -> Groups {
        let mut groups: Vec<Vec<Diag>> = Vec::new();
        for d in diags {
            let key = group_key(&d);
            match groups.iter_mut().find(|g| group_key(&g[0]) == key) {
                Some(g) => g.push(d),
                None => groups.push(vec![d]),
            }
        }
        Groups { groups }
    }

    pub(crate) fn count(&self, level: Level) -> usize {
        self.groups
            .iter()
            .filter(|g| g[0].level == level)
            .map(Vec::len)
            .sum()
    }

    /// Renders errors with their source lines, then warnings: in full when
    /// the build has no errors, as one line per kind with locations when it
    /// does (the errors are what stop the build).
    pub(crate) fn render(&self, out: &mut Body) {
        let errors = self.count(Level::Error);
        let warnings = self.count(Level::Warning);
        let distinct = |level| self.groups.iter().filter(|g| g[0].level == level).count();
        if errors > 0 {
            out.push(format!(
                "{errors} error(s), {} distinct:",
                distinct(Level::Error)
            ));
            for g in self.groups.iter().filter(|g| g[0].level == Level::Error) {
                render_group(g, true, out);
            }
        }
        if warnings > 0 {
            out.push(format!(
                "{warnings} warning(s), {} distinct:",
                distinct(Level::Warning)
            ));
            for g in self.groups.iter().filter(|g| g[0].level == Level::Warning) {
                render_group(g, errors == 0, out);
            }
        }
    }
}

fn group_key(d: &Diag) -> (bool, Option<String>, String, Option<String>) {
    (
        d.level == Level::Error,
        d.code.clone(),
        message_shape(&d.message),
        d.lint.clone(),
    )
}

fn render_group(g: &[Diag], full: bool, out: &mut Body) {
    let first = &g[0];
    let mut head = first.header.clone();
    if let Some(l) = &first.lint
        && !head.contains(l.as_str())
    {
        head.push_str(&format!(" [{l}]"));
    }
    if g.len() > 1 {
        head.push_str(&format!(" [x{}]", g.len()));
    }
    out.push(head);
    if let Some(loc) = &first.location {
        out.push(format!("  --> {loc}"));
    }
    if full || first.location.is_none() {
        out.lines.extend(first.detail.iter().cloned());
    }
    if g.len() > 1 {
        let first_spans = tick_spans(&first.message);
        let mut locs: Vec<String> = Vec::new();
        for d in &g[1..] {
            let loc = d.location.clone().unwrap_or_else(|| "?".to_string());
            let spans = tick_spans(&d.message);
            if spans != first_spans && !spans.is_empty() {
                locs.push(format!("{loc} (`{}`)", spans.join("`, `")));
            } else {
                locs.push(loc);
            }
        }
        let more = locs.len().saturating_sub(MAX_LOCATIONS);
        locs.truncate(MAX_LOCATIONS);
        let mut line = format!("  also at: {}", locs.join(", "));
        if more > 0 {
            line.push_str(&format!(", +{more} more (search the log)"));
        }
        out.push(line);
    }
}

/// Parses every diagnostic in `lines`, returning them and the indices of
/// lines that were not part of any diagnostic.
pub(crate) fn collect(lines: &[Line]) -> (Vec<Diag>, Vec<usize>) {
    let mut diags = Vec::new();
    let mut rest = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if starts_diag(&lines[i].text)
            && let Some((d, next)) = parse_diag(lines, i)
        {
            diags.push(d);
            i = next;
            continue;
        }
        rest.push(i);
        i += 1;
    }
    (diags, rest)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::clean;

    const TWO: &str = "error[E0425]: cannot find function `f_1` in this scope
 --> src/lib.rs:3:5
  |
3 |     f_1(x)
  |     ^^^ not found in this scope

error[E0425]: cannot find function `f_2` in this scope
 --> src/lib.rs:8:5
  |
8 |     f_2(x)
  |     ^^^ not found in this scope

error: could not compile `x` (lib) due to 2 previous errors
";

    #[test]
    fn groups_same_shape_and_lists_every_location() {
        let (diags, rest) = collect(&clean(TWO));
        assert_eq!(diags.len(), 2);
        assert_eq!(diags[0].location.as_deref(), Some("src/lib.rs:3:5"));
        let mut body = Body::default();
        Groups::new(diags).render(&mut body);
        let text = body.lines.join("\n");
        assert!(text.contains("[x2]"), "{text}");
        assert!(text.contains("src/lib.rs:8:5 (`f_2`)"), "{text}");
        assert!(text.contains("3 |     f_1(x)"), "{text}");
        assert!(
            rest.iter()
                .any(|&i| clean(TWO)[i].text.starts_with("error: could not"))
        );
    }

    #[test]
    fn status_lines_are_recognised() {
        assert!(is_cargo_status("   Compiling foo v0.1.0"));
        assert!(is_cargo_status("    Finished `test` profile"));
        assert!(!is_cargo_status("Compiling is not indented"));
        assert!(!is_cargo_status("    Compilingx"));
    }
}
