//! Tests of the rooms runtime through real components: the sandbox against
//! misbehaving fixture rooms, the cache, version checks, and table-driven tests
//! of each built-in room (through wasm, not just the Rust rules natively).

use std::sync::LazyLock;
use std::time::{Duration, Instant};

use super::types::*;
use super::*;

const LOOPING: &[u8] = include_bytes!(env!("HALL_FIXTURE_LOOPING_WASM"));
const HUNGRY: &[u8] = include_bytes!(env!("HALL_FIXTURE_HUNGRY_WASM"));
const PANICKY: &[u8] = include_bytes!(env!("HALL_FIXTURE_PANICKY_WASM"));
const SNOOPY: &[u8] = include_bytes!(env!("HALL_FIXTURE_SNOOPY_WASM"));
const WRONG_WORLD: &[u8] = include_bytes!(env!("HALL_FIXTURE_WRONG_WORLD_WASM"));
const FUTURE_VERSION: &[u8] = include_bytes!(env!("HALL_FIXTURE_FUTURE_VERSION_WASM"));

/// One runtime for the whole test binary, with a cache in a temp directory, so
/// each component is compiled once.
static SHARED: LazyLock<(Rooms, tempfile::TempDir)> = LazyLock::new(|| {
    let dir = tempfile::tempdir().expect("temp dir");
    let rooms = Rooms::new(dir.path().join("cache")).expect("engine");
    (rooms, dir)
});

fn rooms() -> &'static Rooms {
    &SHARED.0
}

fn fixture(bytes: &[u8], name: &str) -> Room {
    rooms()
        .load(World::Gates, bytes, RoomSource::File { path: name.into() })
        .expect("fixture loads")
}

fn some_input() -> GatesInput {
    GatesInput {
        files: vec!["a".into(), "b".into(), "c".into()],
        manifests: Vec::new(),
    }
}

/// The host still works after a room misbehaved.
fn assert_host_unharmed() {
    let room = rooms().builtin(World::Gates).expect("built-in gates room");
    let report = room
        .detect_gates(&GatesInput {
            files: vec!["Cargo.toml".into()],
            manifests: Vec::new(),
        })
        .expect("call")
        .expect("answer");
    assert_eq!(report.gates.len(), 2);
}

fn failed(err: &RoomError) -> (FailureKind, String) {
    assert_eq!(err.code(), "ROOM_FAILED", "{err}");
    (
        err.failure_kind().expect("a failed call has a kind"),
        err.message(),
    )
}

// ---------------------------------------------------------------- sandbox

#[test]
fn a_looping_room_is_stopped_at_its_deadline_and_named() {
    let room = fixture(LOOPING, "looping.wasm");
    let start = Instant::now();
    let err = room
        .detect_gates(&some_input())
        .expect_err("it never returns");
    let took = start.elapsed();
    let (kind, message) = failed(&err);
    assert_eq!(kind, FailureKind::Timeout);
    assert!(
        message.contains("ran past its 1000 ms deadline"),
        "{message}"
    );
    assert!(took >= Duration::from_secs(1), "stopped early: {took:?}");
    // One epoch tick (25 ms) past the deadline, plus slack for a loaded CI box.
    assert!(took < Duration::from_secs(2), "stopped late: {took:?}");
    assert_host_unharmed();
}

#[test]
fn a_room_allocating_without_bound_hits_the_memory_cap() {
    let room = fixture(HUNGRY, "hungry.wasm");
    let start = Instant::now();
    let err = room
        .detect_gates(&some_input())
        .expect_err("it never returns");
    let (kind, message) = failed(&err);
    assert_eq!(kind, FailureKind::Memory);
    assert!(message.contains("memory cap"), "{message}");
    assert!(message.contains("the cap is 64 MiB"), "{message}");
    assert!(start.elapsed() < Duration::from_secs(2));
    assert_host_unharmed();
}

#[test]
fn a_panic_message_reaches_the_user() {
    let room = fixture(PANICKY, "panicky.wasm");
    let err = room.detect_gates(&some_input()).expect_err("it panics");
    let (kind, message) = failed(&err);
    assert_eq!(kind, FailureKind::Panic);
    assert!(
        message.contains("fixture panic: cannot judge 3 files"),
        "{message}"
    );
    assert_host_unharmed();
}

#[test]
fn a_room_cannot_open_files_or_read_the_environment() {
    let room = fixture(SNOOPY, "snoopy.wasm");
    let err = room
        .detect_gates(&some_input())
        .expect_err("the open is refused");
    let (kind, message) = failed(&err);
    assert_eq!(kind, FailureKind::Panic);
    assert!(message.contains("could not open /etc/passwd"), "{message}");
    assert!(message.contains("HOME=<unset>"), "{message}");
    assert_host_unharmed();
}

#[test]
fn a_component_exporting_another_world_is_refused_with_its_exports() {
    let err = rooms()
        .load(
            World::Merger,
            WRONG_WORLD,
            RoomSource::File {
                path: "thing.wasm".into(),
            },
        )
        .expect_err("not a room");
    assert_eq!(err.code(), "ROOM_INCOMPATIBLE");
    let message = err.message();
    assert!(message.contains("is not a hall:rooms room"), "{message}");
    assert!(message.contains("exports run"), "{message}");
}

#[test]
fn a_room_for_another_world_is_refused() {
    let gates = builtin::bytes(World::Gates).expect("built-in gates");
    let err = rooms()
        .load(
            World::Merger,
            gates,
            RoomSource::Repo {
                path: "rooms/merger.wasm".into(),
                rev: None,
            },
        )
        .expect_err("a gates room is not a merger");
    assert_eq!(err.code(), "ROOM_INCOMPATIBLE");
    let message = err.message();
    assert!(
        message.contains(
            "room repo:rooms/merger.wasm implements hall:rooms/gates@0.1.0, not the merger world"
        ),
        "{message}"
    );
}

#[test]
fn an_unsupported_version_is_explained() {
    let err = rooms()
        .load(
            World::Merger,
            FUTURE_VERSION,
            RoomSource::File {
                path: "future.wasm".into(),
            },
        )
        .expect_err("version 0.3 is not supported");
    assert_eq!(err.code(), "ROOM_INCOMPATIBLE");
    assert_eq!(
        err.message(),
        "room future.wasm exports hall:rooms/merger@0.3.0; this hall supports hall:rooms/merger 0.1"
    );
}

#[test]
fn precompiled_artifacts_and_junk_are_refused() {
    let elf = b"\x7fELF\x02\x01\x01\0rest-of-an-artifact";
    let err = rooms()
        .load(
            World::Merger,
            elf,
            RoomSource::File {
                path: "evil.cwasm".into(),
            },
        )
        .expect_err("never deserialize outside bytes");
    assert_eq!(err.code(), "ROOM_INCOMPATIBLE");
    assert!(
        err.message().contains("precompiled artifact"),
        "{}",
        err.message()
    );

    let err = rooms()
        .load(
            World::Merger,
            b"hello",
            RoomSource::File {
                path: "junk".into(),
            },
        )
        .expect_err("not wasm");
    assert!(
        err.message().contains("not a WebAssembly file"),
        "{}",
        err.message()
    );
}

#[test]
fn a_typed_call_for_another_world_is_refused() {
    let room = rooms().builtin(World::Gates).expect("built-in gates");
    let err = room
        .judge_merges(&MergerInput::default())
        .expect_err("wrong world");
    assert_eq!(err.code(), "ROOM_INCOMPATIBLE");
}

#[test]
fn the_built_in_condense_room_keeps_failures_and_states_the_exit_code() {
    let room = rooms().builtin(World::Condense).expect("built in");
    let mut output = String::new();
    for n in 0..400 {
        output.push_str(&format!("test tests::case_{n} ... ok\n"));
    }
    output
        .push_str("test tests::broken ... FAILED\n\nfailures:\n\n---- tests::broken stdout ----\n");
    output.push_str("thread 'tests::broken' panicked at src/lib.rs:42:9:\nboom\n\n");
    output.push_str("test result: FAILED. 400 passed; 1 failed; 0 ignored\n");
    let input = CondenseInput {
        command: "cargo test".into(),
        exit_code: 101,
        output: output.clone(),
        log: "run.log".into(),
    };
    let c = room.condense(&input).expect("runs").expect("condenses");
    assert!(c.filter.starts_with("cargo test"), "{}", c.filter);
    for signal in ["tests::broken", "src/lib.rs:42:9", "boom", "101", "run.log"] {
        assert!(
            c.text.contains(signal),
            "{signal} missing from:\n{}",
            c.text
        );
    }
    assert!(c.stats.bytes_out < c.stats.bytes_in / 2, "{:?}", c.stats);
}

// ---------------------------------------------------------------- cache

#[test]
fn a_second_load_reads_the_cache_instead_of_compiling() {
    let dir = tempfile::tempdir().expect("temp dir");
    let first = Rooms::new(dir.path()).expect("engine");
    let room = first.builtin(World::Merger).expect("compiles");
    assert!(room.was_compiled());
    let artifact = first
        .artifact_path(&room.info().sha256)
        .expect("a cache dir is set");
    assert!(artifact.is_file());
    let name = artifact
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default()
        .to_string();
    assert!(name.starts_with(&room.info().sha256), "{name}");
    assert!(name.ends_with(".cwasm"), "{name}");

    // A new runtime, as in the next `hall` process.
    let second = Rooms::new(dir.path()).expect("engine");
    let room = second.builtin(World::Merger).expect("loads");
    assert!(!room.was_compiled(), "the artifact should have been reused");
    let plan = room
        .judge_merges(&MergerInput::default())
        .expect("call")
        .expect("answer");
    assert!(plan.bases.is_empty());

    // No temp files are left behind by the atomic write.
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .expect("list")
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty());
}

#[test]
fn a_damaged_artifact_is_replaced_not_trusted() {
    let dir = tempfile::tempdir().expect("temp dir");
    let rooms = Rooms::new(dir.path()).expect("engine");
    let sha = sha256_hex(builtin::bytes(World::Verdict).expect("built-in verdict"));
    let artifact = rooms.artifact_path(&sha).expect("a cache dir is set");
    std::fs::write(&artifact, b"\x7fELF garbage").expect("write");
    let room = rooms.builtin(World::Verdict).expect("recompiles");
    assert!(room.was_compiled());
    let again = Rooms::new(dir.path())
        .expect("engine")
        .builtin(World::Verdict)
        .expect("loads");
    assert!(!again.was_compiled());
}

#[test]
fn rooms_work_without_a_cache() {
    let rooms = Rooms::without_cache().expect("engine");
    let room = rooms.builtin(World::Gates).expect("compiles");
    assert!(room.was_compiled());
    assert!(rooms.artifact_path("x").is_none());
}

// ---------------------------------------------------------------- check and info

#[test]
fn check_reports_worlds_imports_and_runnability() {
    let report = rooms().check(builtin::bytes(World::Merger).expect("built-in merger"));
    assert!(report.component);
    assert_eq!(report.runnable, vec![World::Merger]);
    assert_eq!(report.implements.len(), 1);
    assert_eq!(report.implements[0].export, "hall:rooms/merger@0.1.0");
    assert!(
        report.imports.iter().all(|i| i.starts_with("wasi:")),
        "{:?}",
        report.imports
    );
    assert!(report.problems.is_empty(), "{:?}", report.problems);

    let report = rooms().check(FUTURE_VERSION);
    assert!(report.runnable.is_empty());
    assert!(!report.implements[0].supported);
    assert!(
        report.problems[0].contains("merger@0.3.0"),
        "{:?}",
        report.problems
    );

    let report = rooms().check(WRONG_WORLD);
    assert!(report.implements.is_empty());
    assert_eq!(report.exports, vec!["run".to_string()]);

    let report = rooms().check(b"nope");
    assert!(!report.component);
}

#[test]
fn builtin_infos_name_every_embedded_room() {
    let infos = Rooms::builtin_infos();
    let worlds: Vec<World> = infos.iter().map(|i| i.world).collect();
    assert_eq!(
        worlds,
        World::ALL.to_vec(),
        "every world has a built-in room"
    );
    for info in &infos {
        assert_eq!(info.sha256.len(), 64);
        assert_eq!(info.source, RoomSource::Builtin);
        assert_eq!(info.name, format!("builtin:{}", info.world));
    }
    let loaded = rooms().builtin(World::Merger).expect("loads");
    assert_eq!(loaded.info(), &infos[2]);
    let json = serde_json::to_value(loaded.info()).expect("serialize");
    assert_eq!(json["source"]["kind"], "builtin");
    assert_eq!(json["world"], "merger");
}

#[test]
fn a_file_is_loaded_as_the_world_it_implements() {
    let source = || RoomSource::File {
        path: "verdict.wasm".into(),
    };
    let verdict = builtin::bytes(World::Verdict).expect("built-in verdict");
    let room = rooms().load_detected(verdict, source()).expect("one world");
    assert_eq!(room.world(), World::Verdict);
    let err = rooms()
        .load_detected(WRONG_WORLD, source())
        .expect_err("no world");
    assert_eq!(err.code(), "ROOM_INCOMPATIBLE");
    assert!(
        err.message().contains("exports no hall:rooms interface"),
        "{}",
        err.message()
    );
}

#[test]
fn world_names_round_trip() {
    for world in World::ALL {
        assert_eq!(world.name().parse::<World>().expect("parses"), world);
    }
    assert_eq!(
        "nope".parse::<World>().expect_err("unknown").code(),
        "ROOM_NOT_FOUND"
    );
}

// ---------------------------------------------------------------- run_json

#[test]
fn run_json_speaks_each_worlds_json() {
    let merger = rooms().builtin(World::Merger).expect("merger");
    let out = merger
        .run_json(serde_json::json!({
            "bases": [{"base": "main", "tip_ci": "green", "prs": [
                {"number": 7, "head_sha": "abc", "hallmark_sha": "abc",
                 "mergeable": "mergeable", "ci": "green", "files": ["a.rs"]}
            ]}]
        }))
        .expect("runs");
    assert_eq!(out["ok"]["bases"][0]["decisions"][0]["action"], "merge");

    let verdict = rooms().builtin(World::Verdict).expect("verdict");
    let out = verdict
        .run_json(serde_json::json!({"summary": 3}))
        .expect("runs");
    assert!(
        out["failure"]["problems"]
            .as_array()
            .is_some_and(|p| p.len() >= 3),
        "{out}"
    );

    let err = merger
        .run_json(serde_json::json!({"bases": "not a list"}))
        .expect_err("bad input");
    assert_eq!(err.code(), "ROOM_INPUT_INVALID");
}

// ---------------------------------------------------------------- gates room

fn manifest(path: &str, content: &str) -> Manifest {
    Manifest {
        path: path.into(),
        content: content.into(),
    }
}

#[test]
fn gates_room_table() {
    struct Case {
        name: &'static str,
        files: &'static [&'static str],
        manifests: Vec<Manifest>,
        gates: &'static [&'static str],
        note: Option<&'static str>,
    }
    let scripts =
        r#"{"scripts": {"build": "tsc", "test": "vitest run", "lint": "eslint .", "deploy": "x"}}"#;
    let cases = vec![
        Case {
            name: "cargo",
            files: &["Cargo.toml", "src/main.rs"],
            manifests: vec![manifest("Cargo.toml", "[package]")],
            gates: &["cargo test", "cargo clippy"],
            note: None,
        },
        Case {
            name: "go",
            files: &["go.mod", "main.go"],
            manifests: vec![manifest("go.mod", "module x")],
            gates: &["go test ./...", "go vet ./..."],
            note: None,
        },
        Case {
            name: "pnpm by lockfile",
            files: &["package.json", "pnpm-lock.yaml"],
            manifests: vec![manifest("package.json", scripts)],
            gates: &["pnpm run lint", "pnpm run test", "pnpm run build"],
            note: None,
        },
        Case {
            name: "yarn by lockfile",
            files: &["package.json", "yarn.lock"],
            manifests: vec![manifest("package.json", r#"{"scripts": {"test": "jest"}}"#)],
            gates: &["yarn run test"],
            note: None,
        },
        Case {
            name: "bun by lockfile",
            files: &["package.json", "bun.lockb"],
            manifests: vec![manifest(
                "package.json",
                r#"{"scripts": {"test": "bun test"}}"#,
            )],
            gates: &["bun run test"],
            note: None,
        },
        Case {
            name: "npm without a lockfile",
            files: &["package.json"],
            manifests: vec![manifest(
                "package.json",
                r#"{"scripts": {"lint": "eslint"}}"#,
            )],
            gates: &["npm run lint"],
            note: None,
        },
        Case {
            name: "packageManager field",
            files: &["package.json"],
            manifests: vec![manifest(
                "package.json",
                r#"{"packageManager": "yarn@4.1.0", "scripts": {"test": "jest"}}"#,
            )],
            gates: &["yarn run test"],
            note: None,
        },
        Case {
            name: "npm placeholder test is skipped",
            files: &["package.json", "package-lock.json"],
            manifests: vec![manifest(
                "package.json",
                r#"{"scripts": {"test": "echo \"Error: no test specified\" && exit 1"}}"#,
            )],
            gates: &[],
            note: Some("placeholder"),
        },
        Case {
            name: "malformed package.json is a note",
            files: &["package.json"],
            manifests: vec![manifest("package.json", "{nope")],
            gates: &[],
            note: Some("not valid JSON"),
        },
        Case {
            name: "pytest from pyproject",
            files: &["pyproject.toml", "tests/test_a.py"],
            manifests: vec![manifest(
                "pyproject.toml",
                "[tool.pytest.ini_options]\naddopts = \"-q\"",
            )],
            gates: &["pytest"],
            note: None,
        },
        Case {
            name: "pytest from conftest",
            files: &["tests/conftest.py"],
            manifests: vec![],
            gates: &["pytest"],
            note: None,
        },
        Case {
            name: "Makefile targets cover the language defaults",
            files: &["Makefile", "Cargo.toml"],
            manifests: vec![
                manifest(
                    "Makefile",
                    "VERSION := 1\n.PHONY: test lint\ntest: build\n\tcargo test\nlint:\n\tcargo clippy\ndeploy:\n\t./ship\n%.o: %.c\n",
                ),
                manifest("Cargo.toml", "[package]"),
            ],
            gates: &["make lint", "make test"],
            note: Some("task runner already covers"),
        },
        Case {
            name: "justfile recipes",
            files: &["justfile"],
            manifests: vec![manifest(
                "justfile",
                "set shell := [\"bash\", \"-c\"]\nalias t := test\n\ntest:\n    cargo test\n@lint:\n    cargo clippy\nbuild target='x':\n    cargo build\nrelease:\n    ./ship\n",
            )],
            gates: &["just lint", "just test", "just build"],
            note: None,
        },
        Case {
            name: "nothing found",
            files: &["README.md"],
            manifests: vec![],
            gates: &[],
            note: Some("no gates detected"),
        },
    ];
    let room = rooms().builtin(World::Gates).expect("built-in gates");
    for case in cases {
        let input = GatesInput {
            files: case.files.iter().map(|s| s.to_string()).collect(),
            manifests: case.manifests,
        };
        let report = room
            .detect_gates(&input)
            .expect("call")
            .unwrap_or_else(|f| panic!("{}: refused: {f:?}", case.name));
        let commands: Vec<&str> = report.gates.iter().map(|g| g.command.as_str()).collect();
        assert_eq!(commands, case.gates, "{}", case.name);
        if let Some(note) = case.note {
            assert!(
                report.notes.iter().any(|n| n.contains(note)),
                "{}: notes {:?}",
                case.name,
                report.notes
            );
        }
    }
}

// ---------------------------------------------------------------- verdict room

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

// ---------------------------------------------------------------- merger room

fn pr(number: u32, files: &[&str]) -> PrFacts {
    let sha = format!("sha{number}");
    PrFacts {
        number,
        head_sha: sha.clone(),
        hallmark_sha: Some(sha),
        mergeable: MergeableState::Mergeable,
        ci: CiState::Green,
        changes_requested: false,
        review_requests: Vec::new(),
        body: String::new(),
        stacked_on: None,
        files: files.iter().map(|f| f.to_string()).collect(),
        base_commits: Vec::new(),
        rebasing: false,
        lit_cleared: false,
    }
}

fn queue(prs: Vec<PrFacts>) -> MergerInput {
    MergerInput {
        settings: MergeSettings::default(),
        bases: vec![BaseQueue {
            base: "main".into(),
            tip_ci: CiState::Green,
            merge_in_flight: None,
            prs,
        }],
        open_prs: Vec::new(),
    }
}

fn with<T>(mut value: T, f: impl FnOnce(&mut T)) -> T {
    f(&mut value);
    value
}

#[test]
fn merger_room_table() {
    use Action::*;
    // (name, input, expected per PR: (number, action, first reason, waits_for))
    type Row = (u32, Action, &'static str, &'static [u32]);
    let behind = |p: PrFacts| {
        with(p, |p| {
            p.base_commits = vec![BaseCommit {
                sha: "b1".into(),
                files: vec!["a.rs".into()],
            }]
        })
    };
    let cases: Vec<(&str, MergerInput, Vec<Row>)> = vec![
        (
            "one ready PR merges",
            queue(vec![pr(1, &["a.rs"])]),
            vec![(1, Merge, "ready", &[])],
        ),
        (
            "one merge at a time per base",
            queue(vec![pr(1, &["a.rs"]), pr(2, &["b.rs"])]),
            vec![
                (1, Merge, "ready", &[]),
                (2, Wait, "one_merge_at_a_time", &[1]),
            ],
        ),
        (
            "a claimed file makes a newer PR wait",
            queue(vec![
                with(pr(1, &["a.rs"]), |p| p.ci = CiState::Pending),
                pr(2, &["a.rs", "c.rs"]),
            ]),
            vec![
                (1, Wait, "ci_pending", &[]),
                (2, Wait, "claimed_files", &[1]),
            ],
        ),
        (
            "disjoint files move in parallel lanes",
            queue(vec![
                with(pr(1, &["a.rs"]), |p| p.ci = CiState::Pending),
                behind(pr(2, &["b.rs", "a2.rs"])),
                with(behind(pr(3, &["a.rs"])), |p| p.files = vec!["a.rs".into()]),
                with(pr(4, &["d.rs"]), |p| {
                    p.mergeable = MergeableState::Conflicting
                }),
            ]),
            vec![
                (1, Wait, "ci_pending", &[]),
                (2, Merge, "ready", &[]),
                (3, Wait, "claimed_files", &[1]),
                (4, Rebase, "conflicting", &[]),
            ],
        ),
        (
            "behind on its own files is rebased at its turn",
            queue(vec![behind(pr(1, &["a.rs"]))]),
            vec![(1, Rebase, "behind_on_files", &[])],
        ),
        (
            "with update = conflicts, mergeable is enough",
            with(queue(vec![behind(pr(1, &["a.rs"]))]), |i| {
                i.settings.update = UpdateMode::Conflicts
            }),
            vec![(1, Merge, "ready", &[])],
        ),
        (
            "a red base tip stops the line",
            with(
                queue(vec![
                    pr(1, &["a.rs"]),
                    with(pr(2, &["b.rs"]), |p| {
                        p.mergeable = MergeableState::Conflicting
                    }),
                ]),
                |i| i.bases[0].tip_ci = CiState::Red,
            ),
            vec![(1, Wait, "base_red", &[]), (2, Wait, "base_red", &[])],
        ),
        (
            "a pending base tip makes merges wait but not rebases",
            with(
                queue(vec![
                    pr(1, &["a.rs"]),
                    with(pr(2, &["b.rs"]), |p| {
                        p.mergeable = MergeableState::Conflicting
                    }),
                ]),
                |i| i.bases[0].tip_ci = CiState::Pending,
            ),
            vec![
                (1, Wait, "base_ci_pending", &[]),
                (2, Rebase, "conflicting", &[]),
            ],
        ),
        (
            "nothing merges while a merge is being delivered",
            with(queue(vec![pr(1, &["a.rs"])]), |i| {
                i.bases[0].merge_in_flight = Some(9)
            }),
            vec![(1, Wait, "merge_in_flight", &[9])],
        ),
        (
            "no hallmark on the head holds and claims nothing",
            queue(vec![
                with(pr(1, &["a.rs"]), |p| p.head_sha = "new".into()),
                pr(2, &["a.rs"]),
            ]),
            vec![(1, Hold, "not_hallmarked", &[]), (2, Merge, "ready", &[])],
        ),
        (
            "requests for changes and reviews hold",
            queue(vec![
                with(pr(1, &["a.rs"]), |p| p.changes_requested = true),
                with(pr(2, &["b.rs"]), |p| p.review_requests = vec!["ana".into()]),
                with(pr(3, &["c.rs"]), |p| p.ci = CiState::Abandoned),
            ]),
            vec![
                (1, Hold, "changes_requested", &[]),
                (2, Hold, "review_requested", &[]),
                (3, Hold, "ci_abandoned", &[]),
            ],
        ),
        (
            "dependency lines in the body, in every spelling",
            with(
                queue(vec![with(pr(10, &["z.rs"]), |p| {
                    p.body = "Fixes #1\n\nDepends on #3\n- Blocked by #4, #8\nAfter: https://github.com/o/r/pull/5\nDepends-On: #6\nAftermath #7\n".into()
                })]),
                |i| i.open_prs = vec![1, 3, 4, 5, 6, 7],
            ),
            vec![(10, Wait, "depends_on_open", &[3, 4, 5, 6])],
        ),
        (
            "a dependency that is no longer open is ignored",
            queue(vec![with(pr(2, &["b.rs"]), |p| {
                p.body = "Depends on #1".into()
            })]),
            vec![(2, Merge, "ready", &[])],
        ),
        (
            "a stacked PR waits for the PR below it",
            queue(vec![
                with(pr(1, &["a.rs"]), |p| p.ci = CiState::Pending),
                with(pr(2, &["b.rs"]), |p| p.stacked_on = Some(1)),
            ]),
            vec![
                (1, Wait, "ci_pending", &[]),
                (2, Wait, "depends_on_open", &[1]),
            ],
        ),
        (
            "waiting on a held PR claims nothing",
            queue(vec![
                with(pr(1, &["a.rs"]), |p| p.changes_requested = true),
                with(pr(2, &["b.rs"]), |p| p.body = "After #1".into()),
                pr(3, &["b.rs"]),
            ]),
            vec![
                (1, Hold, "changes_requested", &[]),
                (2, Wait, "depends_on_held", &[1]),
                (3, Merge, "ready", &[]),
            ],
        ),
        (
            "a dependency cycle is put to a person",
            queue(vec![
                with(pr(1, &["a.rs"]), |p| p.body = "Depends on #2".into()),
                with(pr(2, &["b.rs"]), |p| p.body = "Depends on #1".into()),
            ]),
            vec![
                (1, Hold, "dependency_cycle", &[]),
                (2, Hold, "dependency_cycle", &[]),
            ],
        ),
        (
            "a lit path is held only once nothing claims its files",
            with(
                queue(vec![
                    with(pr(1, &["x.rs"]), |p| p.ci = CiState::Pending),
                    pr(2, &[".github/workflows/ci.yml", "x.rs"]),
                    pr(3, &["release.toml"]),
                    with(pr(4, &["deploy/prod.yml"]), |p| p.lit_cleared = true),
                ]),
                |i| {
                    i.settings.lit = vec![".github/".into(), "release.*".into(), "deploy/**".into()]
                },
            ),
            vec![
                (1, Wait, "ci_pending", &[]),
                (2, Wait, "claimed_files", &[1]),
                (3, Hold, "lit", &[]),
                (4, Merge, "ready", &[]),
            ],
        ),
        (
            "a rebase under way claims its files",
            queue(vec![
                with(pr(1, &["a.rs"]), |p| p.rebasing = true),
                pr(2, &["a.rs"]),
            ]),
            vec![(1, Wait, "rebasing", &[]), (2, Wait, "claimed_files", &[1])],
        ),
        (
            "require_ci = false merges on pending CI",
            with(
                queue(vec![with(pr(1, &["a.rs"]), |p| p.ci = CiState::Pending)]),
                |i| i.settings.require_ci = false,
            ),
            vec![(1, Merge, "ready", &[])],
        ),
        (
            "unknown mergeability waits",
            queue(vec![with(pr(1, &["a.rs"]), |p| {
                p.mergeable = MergeableState::Unknown
            })]),
            vec![(1, Wait, "mergeable_unknown", &[])],
        ),
    ];
    let room = rooms().builtin(World::Merger).expect("built-in merger");
    for (name, input, rows) in cases {
        let plan = room
            .judge_merges(&input)
            .expect("call")
            .unwrap_or_else(|f| panic!("{name}: refused: {f:?}"));
        let decisions = &plan.bases[0].decisions;
        assert_eq!(decisions.len(), rows.len(), "{name}");
        for (d, (number, action, reason, waits_for)) in decisions.iter().zip(rows) {
            assert_eq!(d.number, number, "{name}");
            assert_eq!(d.action, action, "{name}: PR #{number}: {d:?}");
            assert_eq!(
                d.reasons.first().map(String::as_str),
                Some(reason),
                "{name}: PR #{number}: {d:?}"
            );
            assert_eq!(d.waits_for, waits_for, "{name}: PR #{number}: {d:?}");
        }
    }
}

#[test]
fn merger_room_refuses_contradictory_input() {
    let room = rooms().builtin(World::Merger).expect("built-in merger");
    let mut input = queue(vec![
        pr(1, &["a.rs"]),
        with(pr(1, &["b.rs"]), |p| p.head_sha = String::new()),
    ]);
    input.bases.push(BaseQueue {
        base: "main".into(),
        tip_ci: CiState::Green,
        merge_in_flight: None,
        prs: Vec::new(),
    });
    let f = room
        .judge_merges(&input)
        .expect("call")
        .expect_err("refused");
    assert_eq!(f.problems.len(), 3, "{:?}", f.problems);
}

#[test]
fn merger_room_line_stopped_is_per_base() {
    let room = rooms().builtin(World::Merger).expect("built-in merger");
    let mut input = queue(vec![pr(1, &["a.rs"])]);
    input.bases.push(BaseQueue {
        base: "release".into(),
        tip_ci: CiState::Red,
        merge_in_flight: None,
        prs: vec![pr(2, &["a.rs"])],
    });
    let plan = room.judge_merges(&input).expect("call").expect("answer");
    assert!(!plan.bases[0].line_stopped);
    assert_eq!(plan.bases[0].decisions[0].action, Action::Merge);
    assert!(plan.bases[1].line_stopped);
    assert_eq!(plan.bases[1].decisions[0].action, Action::Wait);
}

// ---------------------------------------------------------------- the authoring guide

/// The repository root, for files outside the crate.
fn repo_root() -> std::path::PathBuf {
    match option_env!("HALL_REPO_ROOT") {
        Some(root) => root.into(),
        None => std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(".."),
    }
}

/// The `<!-- example: PATH -->` code blocks of a Markdown file.
fn guide_examples(markdown: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut lines = markdown.lines();
    while let Some(line) = lines.next() {
        let Some(path) = line
            .strip_prefix("<!-- example: ")
            .and_then(|rest| rest.strip_suffix(" -->"))
        else {
            continue;
        };
        let _fence = lines.next();
        let body: Vec<&str> = lines
            .by_ref()
            .take_while(|l| !l.starts_with("```"))
            .collect();
        out.push((path.to_string(), body.join("\n") + "\n"));
    }
    out
}

#[test]
fn the_authoring_guide_example_builds_and_changes_the_merger() {
    let repo = repo_root();
    let guide = std::fs::read_to_string(repo.join("docs/rooms.md")).expect("docs/rooms.md");
    let examples = guide_examples(&guide);
    assert_eq!(examples.len(), 2, "the guide has Cargo.toml and src/lib.rs");
    let dir = tempfile::tempdir().expect("temp dir");
    let project = dir.path().join("careful-merger");
    std::fs::create_dir_all(project.join("src")).expect("mkdir");
    for (path, body) in &examples {
        if path == "src/lib.rs" {
            assert!(body.lines().count() <= 20, "the rule is meant to be short");
        }
        let sdk = repo.join("rooms/sdk").display().to_string();
        let body = body.replace("../hallmark/rooms/sdk", &sdk);
        std::fs::write(project.join(path), body).expect("write example");
    }

    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = std::process::Command::new(cargo)
        .args(["build", "--release", "--target", "wasm32-wasip2"])
        .current_dir(&project)
        .env(
            "CARGO_TARGET_DIR",
            std::env::temp_dir().join("hall-rooms-guide-target"),
        )
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .status()
        .expect("run cargo");
    assert!(status.success(), "the guide's example does not build");
    let wasm = std::env::temp_dir()
        .join("hall-rooms-guide-target/wasm32-wasip2/release/careful_merger.wasm");
    let bytes = std::fs::read(&wasm).expect("built component");

    let report = rooms().check(&bytes);
    assert_eq!(
        report.runnable,
        vec![World::Merger],
        "{:?}",
        report.problems
    );
    let room = rooms()
        .load(
            World::Merger,
            &bytes,
            RoomSource::Repo {
                path: "rooms/careful_merger.wasm".into(),
                rev: None,
            },
        )
        .expect("loads as a merger room");
    let input = queue(vec![
        pr(4, &["migrations/0007_users.sql"]),
        pr(5, &["src/app.rs"]),
    ]);
    let plan = room.judge_merges(&input).expect("call").expect("answer");
    let decisions = &plan.bases[0].decisions;
    assert_eq!(decisions[0].action, Action::Hold);
    assert_eq!(decisions[0].reasons[0], "migration_needs_a_person");
    assert_eq!(decisions[1].action, Action::Merge);

    // The built-in room, for contrast, would merge the migration first.
    let builtin = rooms().builtin(World::Merger).expect("built-in merger");
    let plan = builtin.judge_merges(&input).expect("call").expect("answer");
    assert_eq!(plan.bases[0].decisions[0].action, Action::Merge);
}
