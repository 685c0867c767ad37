//! `cargo build`, `cargo check` and `cargo clippy`.
//!
//! The output is cargo's progress plus rustc diagnostics. Progress goes;
//! every error stays with its location and source line; warnings are shown
//! once per kind with a count and every location.

use crate::Body;
use crate::rustc::{self, Groups, Level};
use crate::text::{Line, looks_like_problem};

pub(crate) fn filter(lines: &[Line]) -> Option<Body> {
    let (diags, rest) = rustc::collect(lines);
    let recognised = !diags.is_empty()
        || lines
            .iter()
            .any(|l| rustc::is_cargo_status(&l.text) || rustc::is_summary(&l.text));
    if !recognised {
        return None;
    }
    let mut body = Body::default();
    let groups = Groups::new(diags);
    let errors = groups.count(Level::Error);
    groups.render(&mut body);
    let mut summaries: Vec<&str> = Vec::new();
    let mut other = 0;
    for &i in &rest {
        let t = lines[i].text.as_str();
        if t.trim().is_empty() || rustc::is_cargo_status(t) || rustc::is_noise(t) {
            continue;
        }
        if rustc::is_summary(t) {
            if !summaries.contains(&t) {
                summaries.push(t);
            }
        } else if looks_like_problem(t) {
            // Linker errors and build-script output arrive outside rustc's
            // diagnostic shape; they may be the only clue.
            body.push(t.to_string());
            other += 1;
        }
    }
    for s in &summaries {
        body.push(s.to_string());
    }
    let could_not = summaries
        .iter()
        .filter(|s| s.starts_with("error: could not compile"))
        .count();
    body.failures = errors + if errors == 0 { could_not + other } else { 0 };
    Some(body)
}
