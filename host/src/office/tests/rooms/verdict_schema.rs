//! The verdict schema the reviewer is given, held against the built-in verdict room
//! rule by rule: a schema-valid answer that the room refuses wastes a paid run.

use std::time::Instant;

use super::rooms;
use crate::item::{Lens, Severity};
use crate::rooms::World;

/// Every rule the built-in verdict room enforces that JSON Schema can say is in the
/// schema handed to the reviewer: each answer below is refused by both, so Claude Code
/// asks again instead of a paid run ending in a refusal.
#[test]
fn the_verdict_schema_refuses_what_the_room_refuses() {
    use serde_json::{Value, json};
    let schema = crate::office::verdict::schema();
    let validator = jsonschema::validator_for(&schema).expect("the schema compiles");
    let room = rooms().builtin(World::Verdict).expect("built-in verdict");
    let lenses = json!([
        "first-principles",
        "correctness",
        "security",
        "data",
        "evidence",
        "operability",
        "repo-rules"
    ]);
    let good = json!({
        "verdict": "approve",
        "summary": "Small and sound.",
        "lenses": lenses,
        "findings": [
            {"lens": "evidence", "severity": "minor", "file": "src/a.rs", "line": 3, "scenario": "a second example would help"}
        ],
        "learnings_used": ["L-1"]
    });
    let room_accepts = |v: &Value| {
        room.validate_verdict(&v.to_string())
            .expect("the room runs")
            .is_ok()
    };
    assert!(
        validator.is_valid(&good),
        "{:?}",
        validator.validate(&good).err()
    );
    assert!(room_accepts(&good));
    let with = |path: &str, value: Value| {
        let mut v = good.clone();
        *v.pointer_mut(path).expect("a path in the good verdict") = value;
        v
    };
    let without = |key: &str| {
        let mut v = good.clone();
        v.as_object_mut().expect("object").remove(key);
        v
    };
    let cases: Vec<(&str, Value)> = vec![
        ("an unknown field", {
            let mut v = good.clone();
            v["mood"] = json!("good");
            v
        }),
        ("no summary", without("summary")),
        ("an empty summary", with("/summary", json!(""))),
        ("a blank summary", with("/summary", json!("   "))),
        ("a summary that isn't text", with("/summary", json!(3))),
        ("no lenses", without("lenses")),
        (
            "six lenses",
            with(
                "/lenses",
                json!([
                    "first-principles",
                    "correctness",
                    "security",
                    "data",
                    "evidence",
                    "operability"
                ]),
            ),
        ),
        ("a made-up lens", with("/lenses/0", json!("style"))),
        ("no findings", without("findings")),
        ("findings that aren't a list", with("/findings", json!({}))),
        (
            "a finding that isn't an object",
            with("/findings/0", json!("bad")),
        ),
        ("an unknown finding field", {
            let mut v = good.clone();
            v["findings"][0]["why"] = json!("x");
            v
        }),
        (
            "a made-up lens on a finding",
            with("/findings/0/lens", json!("style")),
        ),
        (
            "a made-up severity",
            with("/findings/0/severity", json!("critical")),
        ),
        ("an empty file", with("/findings/0/file", json!(""))),
        (
            "an absolute file",
            with("/findings/0/file", json!("/etc/passwd")),
        ),
        (
            "a file that climbs out",
            with("/findings/0/file", json!("src/../../x")),
        ),
        ("line 0", with("/findings/0/line", json!(0))),
        (
            "a line that isn't a number",
            with("/findings/0/line", json!("3")),
        ),
        ("a blank scenario", with("/findings/0/scenario", json!(" "))),
        ("a blank learning id", with("/learnings_used/0", json!(""))),
        (
            "learnings that aren't a list",
            with("/learnings_used", json!("L-1")),
        ),
        (
            "approve with a major",
            with("/findings/0/severity", json!("major")),
        ),
        (
            "reject with nothing blocking",
            with("/verdict", json!("reject")),
        ),
        (
            "a verdict that is neither",
            with("/verdict", json!("maybe")),
        ),
    ];
    let mut wrong = Vec::new();
    for (what, v) in &cases {
        let schema_ok = validator.is_valid(v);
        let room_ok = room_accepts(v);
        if schema_ok || room_ok {
            wrong.push(format!(
                "{what}: schema accepts {schema_ok}, room accepts {room_ok}"
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The seven lens ids, from the one definition.
fn lens_ids() -> Vec<&'static str> {
    Lens::ALL.iter().map(|l| l.id()).collect()
}

/// The exact answer that was held after two paid runs (`lenses: []`), and every other
/// lens list short of all seven, in order, reversed or padded to seven with a repeat:
/// the schema refuses each, as the room does.
#[test]
fn the_verdict_schema_refuses_every_lens_list_short_of_all_seven() {
    use serde_json::json;
    let schema = crate::office::verdict::schema();
    let validator = jsonschema::validator_for(&schema).expect("the schema compiles");
    let room = rooms().builtin(World::Verdict).expect("built-in verdict");
    let answer =
        |lenses: &[&str]| json!({"summary": "Small and sound.", "lenses": lenses, "findings": []});
    let held = answer(&[]);
    assert!(
        !validator.is_valid(&held),
        "the schema accepts the held answer: {held}"
    );
    let ids = lens_ids();
    let mut lists: Vec<Vec<&str>> = Vec::new();
    for mask in 0u32..(1 << ids.len()) - 1 {
        let some: Vec<&str> = (0..ids.len())
            .filter(|i| mask & (1 << i) != 0)
            .map(|i| ids[i])
            .collect();
        let mut reversed = some.clone();
        reversed.reverse();
        if let Some(first) = some.first() {
            let mut padded = some.clone();
            padded.resize(ids.len(), first);
            lists.push(padded);
        }
        lists.push(reversed);
        lists.push(some);
    }
    assert!(lists.len() > 300, "{}", lists.len());
    for lenses in &lists {
        let v = answer(lenses);
        assert!(!validator.is_valid(&v), "the schema accepts {lenses:?}");
        let f = room
            .validate_verdict(&v.to_string())
            .expect("the room runs")
            .expect_err("the room refuses");
        assert!(
            f.problems
                .iter()
                .any(|p| p.starts_with("/lenses: every review applies all seven lenses")),
            "{lenses:?}: {:?}",
            f.problems
        );
    }
    // All seven, in any order, is what both accept.
    let mut all = ids.clone();
    all.reverse();
    assert!(validator.is_valid(&answer(&all)));
    let v = answer(&all).to_string();
    assert!(room.validate_verdict(&v).expect("the room runs").is_ok());
}

/// Each rule the schema's description lists as beyond JSON Schema is real: an answer
/// that breaks it is refused by the room with the listed problem, and the first is
/// accepted by the schema (the second can't even be read as JSON by Rust).
#[test]
fn the_rules_the_schema_cannot_state_are_the_rooms() {
    use crate::office::verdict::UNSTATED;
    let schema = crate::office::verdict::schema();
    let validator = jsonschema::validator_for(&schema).expect("the schema compiles");
    let room = rooms().builtin(World::Verdict).expect("built-in verdict");
    let lenses = serde_json::to_string(&lens_ids()).expect("json");
    let with_line = |line: &str| {
        format!(
            r#"{{"summary": "s", "lenses": {lenses}, "findings": [{{"lens": "data", "severity": "nit", "file": "a.rs", "line": {line}, "scenario": "s"}}]}}"#
        )
    };
    for line in ["12.0", "1.2e1", "1e0"] {
        let text = with_line(line);
        let value: serde_json::Value = serde_json::from_str(&text).expect("json");
        assert!(validator.is_valid(&value), "{line}");
        let f = room
            .validate_verdict(&text)
            .expect("the room runs")
            .expect_err(line);
        assert_eq!(
            f.problems,
            [format!("/findings/0/line: {}", UNSTATED[0].problem)],
            "{line}"
        );
    }
    let text = format!(r#"{{"summary": "\ud800", "lenses": {lenses}, "findings": []}}"#);
    assert!(serde_json::from_str::<serde_json::Value>(&text).is_err());
    let f = room
        .validate_verdict(&text)
        .expect("the room runs")
        .expect_err("a lone surrogate");
    assert!(
        f.problems[0].starts_with(&format!("/: {}", UNSTATED[1].problem)),
        "{:?}",
        f.problems
    );
    let description = schema["description"].as_str().expect("a description");
    for u in UNSTATED {
        assert!(description.contains(u.rule), "{description}");
    }
}

/// How many answers the property test generates (about a quarter pass the schema).
const GENERATED: usize = 10_000;

/// The property: every answer a real JSON Schema validator accepts for the generated
/// schema is accepted by the built-in verdict room (through wasm), or refused only with
/// a problem the schema's description lists as beyond JSON Schema, by an answer that
/// does break that rule. Answers are generated near the schema's edges: every kind of
/// whitespace (the engines disagree on U+0085 and U+FEFF), path pieces (`./`, `..`, `/`),
/// lens lists of any length, spellings the room accepts and the schema doesn't, numbers
/// written as 12.0, missing and unknown fields, and verdicts that agree or don't.
#[test]
fn every_answer_the_schema_accepts_the_verdict_room_accepts() {
    use proptest::strategy::{Strategy, ValueTree};
    use proptest::test_runner::TestRunner;
    use serde_json::Value;

    use crate::office::verdict::UNSTATED;

    let schema = crate::office::verdict::schema();
    let validator = jsonschema::validator_for(&schema).expect("the schema compiles");
    let room = rooms().builtin(World::Verdict).expect("built-in verdict");
    // Each listed rule with the test's side of it: whether an answer breaks it at a
    // path, and the answer with that mended (a table as long as the list).
    type Breaks = fn(&Value, &str) -> bool;
    type Mend = fn(&mut Value);
    let rules: [(Breaks, Mend); UNSTATED.len()] = [
        (
            |v, path| {
                v.pointer(path)
                    .is_some_and(|n| n.is_f64() && n.as_f64().is_some_and(|f| f.fract() == 0.0))
            },
            |v| {
                for f in v["findings"].as_array_mut().into_iter().flatten() {
                    if let Some(n) = f["line"].as_f64().filter(|_| f["line"].is_f64()) {
                        f["line"] = Value::from(n as u64);
                    }
                }
            },
        ),
        // Generated answers are serde_json values: whole Unicode, nothing to mend.
        (|_, _| false, |_| {}),
    ];
    // A refusal is explained when some problem is a listed rule that the answer breaks,
    // and the answer with those rules mended is accepted by both (so the other
    // problems were knock-on effects: a finding dropped for its line no longer makes a
    // `reject` agree).
    let explained = |v: &Value, problems: &[String]| -> std::result::Result<(), String> {
        let mut mended = v.clone();
        let mut any = false;
        for p in problems {
            let Some((path, what)) = p.split_once(": ") else {
                continue;
            };
            for (u, (breaks, mend)) in UNSTATED.iter().zip(rules) {
                if what.starts_with(u.problem) && breaks(v, path) {
                    mend(&mut mended);
                    any = true;
                }
            }
        }
        if !any {
            return Err(format!("no listed rule: {problems:?}"));
        }
        if !validator.is_valid(&mended) {
            return Err(format!("mended, the schema refuses it: {mended}"));
        }
        match room
            .validate_verdict(&mended.to_string())
            .expect("the room runs")
        {
            Ok(_) => Ok(()),
            Err(f) => Err(format!("mended, still refused: {:?}", f.problems)),
        }
    };

    let strategy = answers();
    let mut runner = TestRunner::default();
    let started = Instant::now();
    let (mut valid, mut approved, mut rejected, mut refused) = (0, 0, 0, 0);
    let mut wrong = Vec::new();
    for _ in 0..GENERATED {
        let v = strategy.new_tree(&mut runner).expect("an answer").current();
        if !validator.is_valid(&v) {
            continue;
        }
        valid += 1;
        match room
            .validate_verdict(&v.to_string())
            .expect("the room runs")
        {
            Ok(checked) => {
                assert_eq!(checked.lenses.len(), Lens::ALL.len(), "{v}");
                if checked.approved {
                    approved += 1;
                } else {
                    rejected += 1;
                }
            }
            Err(f) => {
                refused += 1;
                if let Err(why) = explained(&v, &f.problems) {
                    wrong.push(format!("{v}\n  {why}"));
                }
            }
        }
    }
    let took = started.elapsed();
    eprintln!(
        "{GENERATED} answers generated, {valid} schema-valid: {approved} approved, \
         {rejected} rejected, {refused} refused for a listed rule; {took:?}"
    );
    assert!(
        wrong.is_empty(),
        "{} schema-valid answer(s) refused for a rule the schema doesn't list:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
    // The generator reaches every outcome, so the property is not vacuous.
    assert!(valid >= GENERATED / 6, "only {valid} schema-valid answers");
    assert!(
        approved > 0 && rejected > 0 && refused > 0,
        "{approved} {rejected} {refused}"
    );
}

/// Answers near the verdict schema's edges (see the property test).
fn answers() -> impl proptest::strategy::Strategy<Value = serde_json::Value> {
    use proptest::prelude::*;
    use proptest::sample::select;
    use serde_json::{Map, Value, json};

    // Text: a word, or pieces including every whitespace the regex engines read
    // differently and the parts of paths the room refuses.
    let pieces = vec![
        "", "x", "src", "a.rs", "é", "0", " ", "\t", "\n", "\r", "\u{b}", "\u{85}", "\u{a0}",
        "\u{feff}", "\u{200b}", "\u{2028}", "\u{3000}", "/", "./", ".", "..", "\\", "-",
    ];
    let text = prop_oneof![
        8 => "[a-zA-Z][a-zA-Z ./]{0,12}",
        2 => prop::collection::vec(select(pieces), 0..6).prop_map(|p| p.concat()),
    ];
    let mut words = lens_ids();
    words.extend([
        "first_principles",
        "Repo rules",
        "Security & tenancy",
        "style",
        "",
    ]);
    let lens_word = prop_oneof![15 => select(lens_ids()), 1 => select(words)];
    let lenses = prop_oneof![
        6 => Just(lens_ids()).prop_shuffle(),
        1 => prop::collection::vec(lens_word.clone(), 0..9),
    ]
    .prop_map(|l| json!(l));
    let severity = prop_oneof![
        15 => select(Severity::ALL.map(Severity::id).to_vec()),
        1 => select(vec!["Minor", "critical", ""]),
    ];
    let line = prop_oneof![
        20 => (1u32..=2000).prop_map(|n| json!(n)),
        1 => Just(json!(u32::MAX)),
        2 => select(vec![
            json!(0),
            json!(-1),
            json!(3.0),
            json!(1e1),
            json!(2.5),
            json!(u64::from(u32::MAX) + 1),
            json!("3"),
            Value::Null,
        ]),
    ];
    let gaps = prop::collection::vec(prop::bool::weighted(0.01), 6);
    let finding = (lens_word, severity, text.clone(), line, text.clone(), gaps).prop_map(
        |(lens, severity, file, line, scenario, gaps)| {
            let mut f = Map::new();
            let fields = [
                ("lens", json!(lens)),
                ("severity", json!(severity)),
                ("file", json!(file)),
                ("line", line),
                ("scenario", json!(scenario)),
                ("why", json!("an unknown field")),
            ];
            for (i, (key, value)) in fields.into_iter().enumerate() {
                // The first five are left out now and then; the last is put in now and then.
                if gaps[i] == (i < 5) {
                    continue;
                }
                f.insert(key.to_string(), value);
            }
            Value::Object(f)
        },
    );
    let verdict = select(vec![
        "absent", "absent", "agree", "agree", "agree", "approve", "reject", "null", "Approve",
        "maybe",
    ]);
    let learnings = prop::option::of(prop::collection::vec(text.clone(), 0..3));
    let gaps = prop::collection::vec(prop::bool::weighted(0.02), 4);
    (
        verdict,
        text,
        lenses,
        prop::collection::vec(finding, 0..5),
        learnings,
        gaps,
    )
        .prop_map(|(verdict, summary, lenses, findings, learnings, gaps)| {
            let blocking = findings.iter().any(|f| {
                f["severity"]
                    .as_str()
                    .and_then(Severity::from_text)
                    .is_some_and(Severity::blocks_approval)
            });
            let stated = match verdict {
                "absent" => None,
                "agree" => Some(json!(if blocking { "reject" } else { "approve" })),
                "null" => Some(Value::Null),
                word => Some(json!(word)),
            };
            let mut v = Map::new();
            let fields = [
                ("summary", Some(json!(summary))),
                ("lenses", Some(lenses)),
                ("findings", Some(json!(findings))),
                ("mood", Some(json!("an unknown field"))),
            ];
            for (i, (key, value)) in fields.into_iter().enumerate() {
                if gaps[i] == (i < 3) {
                    continue;
                }
                if let Some(value) = value {
                    v.insert(key.to_string(), value);
                }
            }
            if let Some(stated) = stated {
                v.insert("verdict".into(), stated);
            }
            if let Some(l) = learnings {
                v.insert("learnings_used".into(), json!(l));
            }
            Value::Object(v)
        })
}
