//! `go test`, plain and `-v`.
//!
//! A fixer needs each `--- FAIL` with the test's own log lines (which carry
//! `file_test.go:NN`), build errors under their `# package` line, panics with
//! the project's frames, and the per-package `FAIL` lines. Passing tests,
//! `=== RUN` chatter, `ok` packages and the Go runtime's own stack frames go.
//! With `-v` a test's log lines are printed before its verdict, so they are
//! held per test and shown only if the test fails. `go test -json` is turned
//! back into the text it wraps, package by package; lines that are not JSON
//! (build errors, a crash of the test binary) are kept as they are, since
//! dropping them is how other condensers lost compile errors and panics.

use crate::Body;
use crate::text::{Line, looks_like_problem};

/// Log lines of one failing test shown from its start and its end.
const LOG_HEAD: usize = 2;
const LOG_TAIL: usize = 5;

pub(crate) fn filter(lines: &[Line]) -> Option<Body> {
    let decoded;
    let lines = if is_json_stream(lines) {
        decoded = decode_json(lines);
        decoded.as_slice()
    } else {
        lines
    };
    let recognised = lines.iter().any(|l| {
        let t = l.text.as_str();
        t.starts_with("=== RUN")
            || t.trim_start().starts_with("--- FAIL")
            || t.trim_start().starts_with("--- PASS")
            || t.starts_with("ok  \t")
            || t.starts_with("FAIL\t")
            || t.starts_with("?   \t")
            || t.starts_with("panic: ")
    });
    if !recognised {
        return None;
    }
    let mut body = Body::default();
    let mut failures = 0usize;
    let mut ok_pkgs = 0usize;
    // Logs printed under `=== RUN name` (-v), held until the verdict.
    let mut held: Vec<(String, Vec<Line>)> = Vec::new();
    let mut running: Option<String> = None;
    // Logs printed after a `--- FAIL` line (without -v).
    let mut after_fail: Option<Vec<Line>> = None;

    let mut i = 0;
    while i < lines.len() {
        let l = &lines[i];
        let t = l.text.as_str();
        let tt = t.trim_start();
        let indented = t.starts_with("    ") || t.starts_with('\t');

        if indented && !tt.starts_with("--- ") {
            if let Some(buf) = after_fail.as_mut() {
                buf.push(l.clone());
            } else if let Some(name) = &running {
                match held.iter_mut().find(|(n, _)| n == name) {
                    Some((_, v)) => v.push(l.clone()),
                    None => held.push((name.clone(), vec![l.clone()])),
                }
            } else if looks_like_problem(t) {
                body.push(t.to_string());
            }
            i += 1;
            continue;
        }
        if let Some(buf) = after_fail.take() {
            body.lines.extend(capped(&buf));
        }
        if let Some(rest) = t.strip_prefix("=== ") {
            // RUN, CONT, NAME, PAUSE: the test whose output follows.
            let mut w = rest.split_whitespace();
            let verb = w.next().unwrap_or("");
            if matches!(verb, "RUN" | "CONT" | "NAME") {
                running = w.next().map(str::to_string);
            }
            i += 1;
            continue;
        }
        if let Some(rest) = tt.strip_prefix("--- FAIL: ") {
            failures += 1;
            body.push(t.to_string());
            let name = rest.split(" (").next().unwrap_or(rest);
            if let Some(pos) = held.iter().position(|(n, _)| n == name) {
                let (_, logs) = held.remove(pos);
                body.lines.extend(capped(&logs));
            }
            after_fail = Some(Vec::new());
            running = None;
            i += 1;
            continue;
        }
        if tt.starts_with("--- PASS: ") || tt.starts_with("--- SKIP: ") {
            let name = tt[10..].split(" (").next().unwrap_or("");
            held.retain(|(n, _)| n != name);
            running = None;
            i += 1;
            continue;
        }
        if t.starts_with("ok  \t") || t.starts_with("?   \t") {
            ok_pkgs += usize::from(t.starts_with("ok"));
            i += 1;
            continue;
        }
        if t == "PASS"
            || t == "FAIL"
            || t.starts_with("exit status ")
            || t.starts_with("testing: warning: no tests")
        {
            i += 1;
            continue;
        }
        if t.starts_with("FAIL\t") {
            if t.ends_with("[build failed]") || t.ends_with("[setup failed]") {
                failures += 1;
            }
            body.push(t.to_string());
            i += 1;
            continue;
        }
        if t.starts_with("# ") {
            // Build or vet errors for one package follow, one per line.
            body.push(t.to_string());
            let mut j = i + 1;
            while j < lines.len() && is_compiler_line(&lines[j].text) {
                body.push(lines[j].text.clone());
                failures += 1;
                j += 1;
            }
            i = j;
            continue;
        }
        if t.starts_with("panic: ") || t.starts_with("fatal error: ") || t == "WARNING: DATA RACE" {
            failures += 1;
            i = stack(lines, i, &mut body);
            continue;
        }
        if looks_like_problem(t) {
            body.push(t.to_string());
        }
        i += 1;
    }
    if let Some(buf) = after_fail.take() {
        body.lines.extend(capped(&buf));
    }
    if ok_pkgs > 0 {
        body.push(format!("({ok_pkgs} passing package(s) not shown)"));
    }
    body.failures = failures;
    Some(body)
}

/// `file.go:12:5: message`, as the compiler and vet print them.
fn is_compiler_line(t: &str) -> bool {
    let Some((path, rest)) = t.split_once(':') else {
        return false;
    };
    (path.ends_with(".go") && rest.chars().next().is_some_and(|c| c.is_ascii_digit()))
        || t.starts_with("\t")
        || t.starts_with("too many errors")
        || t.starts_with("vet: ")
}

/// A test's log lines: the first few and the last ones, which usually hold
/// the failing check; the middle is referred to the log.
fn capped(logs: &[Line]) -> Vec<String> {
    if logs.len() <= LOG_HEAD + LOG_TAIL + 1 {
        return logs.iter().map(|l| l.text.clone()).collect();
    }
    let mut out: Vec<String> = logs[..LOG_HEAD].iter().map(|l| l.text.clone()).collect();
    let cut = &logs[LOG_HEAD..logs.len() - LOG_TAIL];
    out.push(format!(
        "        [… {} log lines omitted: log lines {}-{}]",
        cut.len(),
        cut.first().map_or(0, |l| l.origin),
        cut.last().map_or(0, |l| l.origin)
    ));
    out.extend(logs[logs.len() - LOG_TAIL..].iter().map(|l| l.text.clone()));
    out
}

/// A panic or race report: the message lines, each goroutine header that has
/// project frames, and those frames; runtime and testing frames go.
fn stack(lines: &[Line], start: usize, body: &mut Body) -> usize {
    let mut j = start;
    let mut frames = 0;
    let mut shown = 0;
    let mut goroutine: Option<String> = None;
    while j < lines.len() {
        let t = lines[j].text.as_str();
        if t.starts_with("FAIL\t")
            || t == "FAIL"
            || t.starts_with("ok  \t")
            || t.starts_with("exit status ")
            || t.starts_with("=== ")
            || t.trim_start().starts_with("--- ")
        {
            break;
        }
        if t.starts_with("goroutine ") {
            goroutine = Some(t.to_string());
            j += 1;
            continue;
        }
        let next = lines.get(j + 1).map(|l| l.text.as_str());
        let is_frame = !t.starts_with('\t')
            && next
                .is_some_and(|n| n.starts_with('\t') && (n.contains(".go:") || n.contains(".s:")));
        if is_frame {
            frames += 1;
            let path = next.unwrap_or("").trim();
            if !is_runtime(t, path) {
                if let Some(g) = goroutine.take() {
                    body.push(g);
                }
                body.push(t.to_string());
                body.push(format!("\t{path}"));
                shown += 1;
            }
            j += 2;
            continue;
        }
        if !t.trim().is_empty() && !t.starts_with('\t') {
            body.push(t.to_string());
        }
        j += 1;
    }
    body.push(format!(
        "[{shown} of {frames} stack frames shown: the project's own]"
    ));
    j
}

fn is_runtime(func: &str, path: &str) -> bool {
    const FUNCS: &[&str] = &[
        "runtime.",
        "testing.",
        "panic(",
        "created by testing.",
        "created by runtime.",
    ];
    const PATHS: &[&str] = &[
        "/usr/lib/go",
        "/usr/local/go",
        "/src/runtime/",
        "/src/testing/",
        "/pkg/mod/golang.org/toolchain",
    ];
    FUNCS.iter().any(|f| func.starts_with(f)) || PATHS.iter().any(|p| path.contains(p))
}

/// Most lines are test2json events.
fn is_json_stream(lines: &[Line]) -> bool {
    let json = lines
        .iter()
        .filter(|l| l.text.starts_with("{\"Time\":") || l.text.starts_with("{\"Action\":"))
        .count();
    json > 0 && json * 2 >= lines.len()
}

/// Rebuilds the plain `go test -v` text from `-json` events, grouping each
/// package's output together (packages run in parallel and interleave).
fn decode_json(lines: &[Line]) -> Vec<Line> {
    // (package, text so far without a newline, finished lines)
    let mut groups: Vec<(String, String, Vec<Line>)> = Vec::new();
    let mut loose = 0usize;
    for l in lines {
        let t = l.text.as_str();
        if !t.starts_with('{') {
            // A line outside the JSON stream: its own group, in place.
            loose += 1;
            groups.push((format!("\u{0}{loose}"), String::new(), vec![l.clone()]));
            continue;
        }
        let (Some(output), package) = (json_field(t, "Output"), json_field(t, "Package")) else {
            continue;
        };
        let package = package.unwrap_or_default();
        let idx = match groups.iter().position(|(p, _, _)| *p == package) {
            Some(i) => i,
            None => {
                groups.push((package.clone(), String::new(), Vec::new()));
                groups.len() - 1
            }
        };
        let (_, partial, done) = &mut groups[idx];
        partial.push_str(&output);
        while let Some(nl) = partial.find('\n') {
            let text: String = partial.drain(..=nl).collect();
            done.push(Line {
                text: text.trim_end().to_string(),
                origin: l.origin,
            });
        }
    }
    let mut out = Vec::new();
    for (_, partial, done) in groups {
        let origin = done.last().map_or(0, |l| l.origin);
        out.extend(done);
        if !partial.is_empty() {
            out.push(Line {
                text: partial.trim_end().to_string(),
                origin,
            });
        }
    }
    out
}

/// The string value of `"name":"…"` in one JSON object line, unescaped.
fn json_field(line: &str, name: &str) -> Option<String> {
    let key = format!("\"{name}\":\"");
    let start = line.find(&key)? + key.len();
    let mut out = String::new();
    let mut chars = line[start..].chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => return Some(out),
            '\\' => match chars.next()? {
                'n' => out.push('\n'),
                't' => out.push('\t'),
                'r' => out.push('\r'),
                'b' => out.push('\u{8}'),
                'f' => out.push('\u{c}'),
                'u' => {
                    let hex: String = chars.by_ref().take(4).collect();
                    let code = u32::from_str_radix(&hex, 16).ok()?;
                    out.push(char::from_u32(code).unwrap_or('\u{fffd}'));
                }
                other => out.push(other),
            },
            c => out.push(c),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::clean;

    #[test]
    fn json_fields_are_unescaped() {
        let l = r#"{"Action":"output","Package":"p","Output":"\tx_test.go:3: \"a\"\u003e b\n"}"#;
        assert_eq!(
            json_field(l, "Output").as_deref(),
            Some("\tx_test.go:3: \"a\"> b\n")
        );
        assert_eq!(json_field(l, "Package").as_deref(), Some("p"));
        assert_eq!(json_field(l, "Test"), None);
    }

    #[test]
    fn json_stream_keeps_lines_that_are_not_json() {
        let raw = "# p\np/x.go:1:1: undefined: y\n{\"Action\":\"output\",\"Package\":\"q\",\"Output\":\"--- FAIL: TestQ (0.00s)\\n\"}\n{\"Action\":\"output\",\"Package\":\"q\",\"Output\":\"FAIL\\tq\\t0.1s\\n\"}\n";
        let body = filter(&clean(raw)).expect("recognised");
        let text = body.lines.join("\n");
        assert!(text.contains("p/x.go:1:1: undefined: y"), "{text}");
        assert!(text.contains("--- FAIL: TestQ"), "{text}");
        assert_eq!(body.failures, 2);
    }
}
