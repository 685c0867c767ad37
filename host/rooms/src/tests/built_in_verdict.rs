//! The built-in verdict room, table-driven through the real component.

use super::*;

const ALL_LENSES: &str = r#"["first_principles", "correctness", "security", "data", "evidence", "operability", "repo_rules"]"#;

#[test]
fn verdict_room_accepts_and_normalises() {
    let room = rooms().builtin(World::Verdict).expect("built-in verdict");
    let json = r#"{
            "verdict": "approve",
            "summary": "  Small and sound.  ",
            "lenses": ["Repo rules", "First principles", "Correctness", "Security & tenancy",
                       "Data & migrations", "Evidence", "Operability", "correctness"],
            "findings": [
                {"lens": "evidence", "severity": "nit", "file": "./src/b.rs", "line": 9, "scenario": "name"},
                {"lens": "correctness", "severity": "Minor", "file": "src/a.rs", "line": 3, "scenario": "off by one on empty input"},
                {"lens": "correctness", "severity": "minor", "file": "src/a.rs", "line": 3, "scenario": "off by one on empty input"}
            ],
            "learnings_used": ["L-1", "L-1", "L-2"]
        }"#;
    let v = room.validate_verdict(json).expect("call").expect("valid");
    assert!(v.approved);
    assert_eq!(v.summary, "Small and sound.");
    assert_eq!(v.lenses.len(), 7);
    assert_eq!(v.lenses[0], Lens::FirstPrinciples);
    assert_eq!(v.lenses[6], Lens::RepoRules);
    assert_eq!(v.findings.len(), 2, "duplicates merge");
    assert_eq!(v.findings[0].severity, Severity::Minor);
    assert_eq!(v.findings[1].file, "src/b.rs");
    assert_eq!((v.blockers, v.majors, v.minors, v.nits), (0, 0, 1, 1));
    assert_eq!(v.learnings_used, vec!["L-1".to_string(), "L-2".to_string()]);
}

#[test]
fn verdict_room_table() {
    // (name, findings JSON, verdict word, approved or the problems expected)
    type Expect = Result<(bool, u32, u32), &'static [&'static str]>;
    let cases: Vec<(&str, &str, Option<&str>, Expect)> = vec![
        ("no findings approves", "[]", None, Ok((true, 0, 0))),
        (
            "a blocker rejects",
            r#"[{"lens": "security", "severity": "blocker", "file": "a.rs", "line": 1, "scenario": "token logged"}]"#,
            None,
            Ok((false, 1, 0)),
        ),
        (
            "a major rejects",
            r#"[{"lens": "data", "severity": "major", "file": "m.sql", "line": 2, "scenario": "drops a column in use"}]"#,
            Some("reject"),
            Ok((false, 0, 1)),
        ),
        (
            "approve with a major contradicts itself",
            r#"[{"lens": "data", "severity": "major", "file": "m.sql", "line": 2, "scenario": "drops a column"}]"#,
            Some("approve"),
            Err(&["/verdict: says approve, but there are 0 blocker(s) and 1 major(s)"]),
        ),
        (
            "reject with nothing serious contradicts itself",
            r#"[{"lens": "data", "severity": "nit", "file": "m.sql", "line": 2, "scenario": "style"}]"#,
            Some("reject"),
            Err(&["/verdict: says reject"]),
        ),
        (
            "every problem in a finding is listed",
            r#"[{"lens": "vibes", "severity": "huge", "file": "/etc/x", "line": 0, "extra": 1}]"#,
            None,
            Err(&[
                "/findings/0/extra: unknown field",
                "/findings/0/lens: not a lens",
                "/findings/0/severity: must be blocker, major, minor or nit",
                "/findings/0/file: must be relative",
                "/findings/0/line: must be a positive integer",
                "/findings/0/scenario: missing",
            ]),
        ),
        (
            "findings must be a list",
            r#"{"a": 1}"#,
            None,
            Err(&["/findings: must be an array"]),
        ),
    ];
    let room = rooms().builtin(World::Verdict).expect("built-in verdict");
    for (name, findings, word, expect) in cases {
        let verdict = match word {
            Some(w) => format!(
                r#"{{"verdict": "{w}", "summary": "s", "lenses": {ALL_LENSES}, "findings": {findings}}}"#
            ),
            None => {
                format!(r#"{{"summary": "s", "lenses": {ALL_LENSES}, "findings": {findings}}}"#)
            }
        };
        let got = room.validate_verdict(&verdict).expect("call");
        match (got, expect) {
            (Ok(v), Ok((approved, blockers, majors))) => {
                assert_eq!(
                    (v.approved, v.blockers, v.majors),
                    (approved, blockers, majors),
                    "{name}"
                );
            }
            (Err(f), Err(expected)) => {
                for e in expected {
                    assert!(
                        f.problems.iter().any(|p| p.starts_with(e)),
                        "{name}: {e} not in {:?}",
                        f.problems
                    );
                }
                assert_eq!(f.problems.len(), expected.len(), "{name}: {:?}", f.problems);
            }
            (got, _) => panic!("{name}: unexpected {got:?}"),
        }
    }
}

#[test]
fn verdict_room_lists_every_top_level_problem() {
    let room = rooms().builtin(World::Verdict).expect("built-in verdict");
    let f = room
        .validate_verdict(r#"{"lenses": ["correctness"], "mood": "good"}"#)
        .expect("call")
        .expect_err("invalid");
    let expected = [
        "/mood: unknown field",
        "/summary: missing",
        "/lenses: every review applies all seven",
        "/findings: missing",
    ];
    for e in expected {
        assert!(
            f.problems.iter().any(|p| p.starts_with(e)),
            "{e} not in {:?}",
            f.problems
        );
    }
    // The missing lenses are named by the ids the schema and the journal use, from the
    // one definition of a lens (hallmark-core), in review order.
    let lenses = f
        .problems
        .iter()
        .find(|p| p.starts_with("/lenses:"))
        .expect("a lens problem");
    assert!(
        lenses.ends_with(
            "missing first-principles, security, data, evidence, operability, repo-rules"
        ),
        "{lenses}"
    );
    let f = room
        .validate_verdict("not json")
        .expect("call")
        .expect_err("invalid");
    assert!(
        f.problems[0].starts_with("/: not valid JSON"),
        "{:?}",
        f.problems
    );
}
