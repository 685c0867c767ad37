//! The built-in verdict rules, as a pure function over the verdict world's types
//! (named only through `super::model`, so the file also compiles natively).
//!
//! The verdict's JSON shape, as the principal engineer writes it:
//!
//! ```json
//! {
//!   "verdict": "approve",            // optional: "approve" or "reject"
//!   "summary": "…",
//!   "lenses": ["correctness", "…"],  // all seven, by id or by display name
//!   "findings": [{"lens": "evidence", "severity": "minor", "file": "src/a.rs",
//!                 "line": 12, "scenario": "…"}],
//!   "learnings_used": ["L-0007"]
//! }
//! ```
//!
//! Every problem is collected before refusing, so one round trip fixes them all.
//! A verdict that says `approve` with blockers or majors, or `reject` with none,
//! contradicts itself and is refused rather than guessed at.

use serde_json::{Map, Value};

use super::model::*;

const TOP_LEVEL: [&str; 5] = ["verdict", "summary", "lenses", "findings", "learnings_used"];
const FINDING_FIELDS: [&str; 5] = ["lens", "severity", "file", "line", "scenario"];

/// Validates the JSON text of a verdict, normalises it and decides approval.
pub fn validate(verdict_json: &str) -> Result<CheckedVerdict, Failure> {
    let value: Value = match serde_json::from_str(verdict_json) {
        Ok(v) => v,
        Err(e) => return Err(refuse(vec![format!("/: not valid JSON ({e})")])),
    };
    let Some(object) = value.as_object() else {
        return Err(refuse(vec!["/: must be an object".to_string()]));
    };
    let mut problems = Vec::new();
    for key in object.keys() {
        if !TOP_LEVEL.contains(&key.as_str()) {
            problems.push(format!("/{key}: unknown field"));
        }
    }

    let summary = match object.get("summary") {
        Some(Value::String(s)) if !s.trim().is_empty() => s.trim().to_string(),
        Some(Value::String(_)) => {
            problems.push("/summary: must not be empty".to_string());
            String::new()
        }
        Some(_) => {
            problems.push("/summary: must be a string".to_string());
            String::new()
        }
        None => {
            problems.push("/summary: missing".to_string());
            String::new()
        }
    };

    let mut lenses: Vec<Lens> = Vec::new();
    match object.get("lenses") {
        Some(Value::Array(items)) => {
            for (i, item) in items.iter().enumerate() {
                match item.as_str().and_then(parse_lens) {
                    Some(lens) => {
                        if !lenses.iter().any(|l| lens_rank(*l) == lens_rank(lens)) {
                            lenses.push(lens);
                        }
                    }
                    None => problems.push(format!("/lenses/{i}: not a lens ({})", compact(item))),
                }
            }
            let missing: Vec<&str> = hallmark_core::item::finding::Lens::ALL
                .iter()
                .filter(|l| !lenses.iter().any(|m| super::model::to_core(*m) == **l))
                .map(|l| l.id())
                .collect();
            if !missing.is_empty() {
                problems.push(format!(
                    "/lenses: every review applies all seven lenses; missing {}",
                    missing.join(", ")
                ));
            }
        }
        Some(_) => problems.push("/lenses: must be an array".to_string()),
        None => problems.push("/lenses: missing".to_string()),
    }
    lenses.sort_by_key(|l| lens_rank(*l));

    let mut findings: Vec<Finding> = Vec::new();
    match object.get("findings") {
        Some(Value::Array(items)) => {
            for (i, item) in items.iter().enumerate() {
                match item.as_object() {
                    Some(fields) => {
                        if let Some(f) = finding(i, fields, &mut problems) {
                            findings.push(f);
                        }
                    }
                    None => problems.push(format!("/findings/{i}: must be an object")),
                }
            }
        }
        Some(_) => problems.push("/findings: must be an array".to_string()),
        None => problems.push("/findings: missing".to_string()),
    }

    let mut learnings_used: Vec<String> = Vec::new();
    match object.get("learnings_used") {
        None => {}
        Some(Value::Array(items)) => {
            for (i, item) in items.iter().enumerate() {
                match item.as_str().map(str::trim) {
                    Some(id) if !id.is_empty() => {
                        if !learnings_used.iter().any(|l| l == id) {
                            learnings_used.push(id.to_string());
                        }
                    }
                    _ => problems.push(format!("/learnings_used/{i}: must be a non-empty string")),
                }
            }
        }
        Some(_) => problems.push("/learnings_used: must be an array of strings".to_string()),
    }

    let count = |rank: u8| {
        findings
            .iter()
            .filter(|f| severity_rank(f.severity) == rank)
            .count() as u32
    };
    let (blockers, majors) = (count(0), count(1));
    // Approval is no finding that blocks it, by the one definition the schema uses too.
    let approved = !findings
        .iter()
        .any(|f| super::model::severity_to_core(f.severity).blocks_approval());

    match object.get("verdict") {
        None => {}
        Some(Value::String(word)) => match word.trim().to_ascii_lowercase().as_str() {
            "approve" | "approved" => {
                if !approved {
                    problems.push(format!(
                        "/verdict: says approve, but there are {blockers} blocker(s) and {majors} major(s)"
                    ));
                }
            }
            "reject" | "rejected" | "changes_requested" => {
                if approved {
                    problems.push(
                        "/verdict: says reject, but no finding is a blocker or a major".to_string(),
                    );
                }
            }
            other => problems.push(format!(
                "/verdict: must be approve or reject, not `{other}`"
            )),
        },
        Some(_) => problems.push("/verdict: must be a string".to_string()),
    }
    for (i, f) in findings.iter().enumerate() {
        if !lenses.iter().any(|l| lens_rank(*l) == lens_rank(f.lens)) {
            problems.push(format!(
                "/findings/{i}/lens: not among the lenses the review applied"
            ));
        }
    }

    if !problems.is_empty() {
        return Err(refuse(problems));
    }

    findings.sort_by(|a, b| {
        (severity_rank(a.severity), &a.file, a.line).cmp(&(
            severity_rank(b.severity),
            &b.file,
            b.line,
        ))
    });
    // The same scenario at the same place twice is one finding.
    let mut unique: Vec<Finding> = Vec::with_capacity(findings.len());
    for f in findings {
        let duplicate = unique.iter().any(|u| {
            u.file == f.file
                && u.line == f.line
                && u.scenario == f.scenario
                && severity_rank(u.severity) == severity_rank(f.severity)
        });
        if !duplicate {
            unique.push(f);
        }
    }
    let count = |rank: u8| {
        unique
            .iter()
            .filter(|f| severity_rank(f.severity) == rank)
            .count() as u32
    };
    Ok(CheckedVerdict {
        approved,
        summary,
        lenses,
        blockers: count(0),
        majors: count(1),
        minors: count(2),
        nits: count(3),
        findings: unique,
        learnings_used,
    })
}

fn refuse(problems: Vec<String>) -> Failure {
    Failure {
        message: format!("the verdict is invalid: {} problem(s)", problems.len()),
        problems,
    }
}

fn finding(i: usize, fields: &Map<String, Value>, problems: &mut Vec<String>) -> Option<Finding> {
    let before = problems.len();
    for key in fields.keys() {
        if !FINDING_FIELDS.contains(&key.as_str()) {
            problems.push(format!("/findings/{i}/{key}: unknown field"));
        }
    }
    let text = |key: &str, problems: &mut Vec<String>| -> String {
        match fields.get(key) {
            Some(Value::String(s)) if !s.trim().is_empty() => s.trim().to_string(),
            Some(Value::String(_)) => {
                problems.push(format!("/findings/{i}/{key}: must not be empty"));
                String::new()
            }
            Some(_) => {
                problems.push(format!("/findings/{i}/{key}: must be a string"));
                String::new()
            }
            None => {
                problems.push(format!("/findings/{i}/{key}: missing"));
                String::new()
            }
        }
    };
    let lens_text = text("lens", problems);
    let lens = parse_lens(&lens_text);
    if lens.is_none() && !lens_text.is_empty() {
        problems.push(format!("/findings/{i}/lens: not a lens (`{lens_text}`)"));
    }
    let severity_text = text("severity", problems);
    let severity = parse_severity(&severity_text);
    if severity.is_none() && !severity_text.is_empty() {
        problems.push(format!(
            "/findings/{i}/severity: must be blocker, major, minor or nit, not `{severity_text}`"
        ));
    }
    let mut file = text("file", problems);
    while let Some(rest) = file.strip_prefix("./") {
        file = rest.to_string();
    }
    if file.starts_with('/') || file.split('/').any(|part| part == "..") {
        problems.push(format!(
            "/findings/{i}/file: must be relative to the repository root"
        ));
    }
    let line = match fields.get("line") {
        Some(v) => match v.as_u64() {
            Some(n) if n >= 1 && n <= u64::from(u32::MAX) => n as u32,
            _ => {
                problems.push(format!("/findings/{i}/line: must be a positive integer"));
                0
            }
        },
        None => {
            problems.push(format!("/findings/{i}/line: missing"));
            0
        }
    };
    let scenario = text("scenario", problems);
    if problems.len() > before {
        return None;
    }
    Some(Finding {
        lens: lens?,
        severity: severity?,
        file,
        line,
        scenario,
    })
}

/// Accepts a lens by id (`repo-rules`, `repo_rules`) or by display name (`Security &
/// tenancy`, `data and migrations`): the host's one reading of a lens.
fn parse_lens(text: &str) -> Option<Lens> {
    hallmark_core::item::finding::Lens::from_text(text).map(super::model::from_core)
}

/// A lens's place in the order a review lists them.
fn lens_rank(lens: Lens) -> usize {
    let core = super::model::to_core(lens);
    hallmark_core::item::finding::Lens::ALL
        .iter()
        .position(|l| *l == core)
        .unwrap_or(usize::MAX)
}

/// Reads a severity in any case: the host's one reading of a severity.
fn parse_severity(text: &str) -> Option<Severity> {
    hallmark_core::item::finding::Severity::from_text(text).map(super::model::severity_from_core)
}

fn severity_rank(severity: Severity) -> u8 {
    match severity {
        Severity::Blocker => 0,
        Severity::Major => 1,
        Severity::Minor => 2,
        Severity::Nit => 3,
    }
}

/// A JSON value shortened for a problem message.
fn compact(value: &Value) -> String {
    let text = value.to_string();
    if text.len() > 40 {
        let cut = (0..=40)
            .rev()
            .find(|i| text.is_char_boundary(*i))
            .unwrap_or(0);
        format!("{}…", &text[..cut])
    } else {
        text
    }
}
