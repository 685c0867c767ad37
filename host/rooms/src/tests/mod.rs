//! Tests of the rooms runtime through real components: the sandbox against
//! misbehaving fixture rooms, the cache, version checks, and table-driven tests
//! of each built-in room (through wasm, not just the Rust rules natively).

use std::sync::LazyLock;
use std::time::{Duration, Instant};

use super::types::*;
use super::*;

mod authoring_guide;
mod built_in_checks;
mod built_in_merger;
mod built_in_plan;
mod built_in_tool_policy;
mod built_in_verdict;
mod tool_policy_guard;

const LOOPING: &[u8] = include_bytes!(env!("HALL_FIXTURE_LOOPING_WASM"));
const HUNGRY: &[u8] = include_bytes!(env!("HALL_FIXTURE_HUNGRY_WASM"));
const PANICKY: &[u8] = include_bytes!(env!("HALL_FIXTURE_PANICKY_WASM"));
const SNOOPY: &[u8] = include_bytes!(env!("HALL_FIXTURE_SNOOPY_WASM"));
const WRONG_WORLD: &[u8] = include_bytes!(env!("HALL_FIXTURE_WRONG_WORLD_WASM"));
const FUTURE_VERSION: &[u8] = include_bytes!(env!("HALL_FIXTURE_FUTURE_VERSION_WASM"));
const SLEEPY: &[u8] = include_bytes!(env!("HALL_FIXTURE_SLEEPY_WASM"));
const SENSES: &[u8] = include_bytes!(env!("HALL_FIXTURE_SENSES_WASM"));
const WRONG_SIGNATURE: &[u8] = include_bytes!(env!("HALL_FIXTURE_WRONG_SIGNATURE_WASM"));
const TRAPPING: &[u8] = include_bytes!(env!("HALL_FIXTURE_TRAPPING_WASM"));
const NOISY: &[u8] = include_bytes!(env!("HALL_FIXTURE_NOISY_WASM"));

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
        .load(World::Checks, bytes, RoomSource::File { path: name.into() })
        .expect("fixture loads")
}

fn some_input() -> ChecksInput {
    ChecksInput {
        files: vec!["a".into(), "b".into(), "c".into()],
        manifests: Vec::new(),
        ci: Vec::new(),
    }
}

/// The input that tells a fixture which way to misbehave.
fn asking(mode: &str) -> ChecksInput {
    ChecksInput {
        files: vec![mode.into()],
        manifests: Vec::new(),
        ci: Vec::new(),
    }
}

/// Runs `call` on its own thread and fails the test if it takes longer than
/// `limit`, so a room that blocks the host fails instead of hanging the suite.
fn within<R: Send + 'static>(limit: Duration, call: impl FnOnce() -> R + Send + 'static) -> R {
    let (send, receive) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = send.send(call());
    });
    receive
        .recv_timeout(limit)
        .unwrap_or_else(|_| panic!("the call did not return within {limit:?}"))
}

/// The notes of a checks answer, which is where the fixtures report.
fn notes(room: &Room, mode: &str) -> Vec<String> {
    room.detect_checks(&asking(mode))
        .unwrap_or_else(|e| panic!("{mode}: {e}"))
        .unwrap_or_else(|f| panic!("{mode}: refused: {}", f.message))
        .notes
}

/// The host still works after a room misbehaved.
fn assert_host_unharmed() {
    let room = rooms()
        .builtin(World::Checks)
        .expect("built-in checks room");
    let report = room
        .detect_checks(&ChecksInput {
            files: vec!["Cargo.toml".into()],
            ..ChecksInput::default()
        })
        .expect("call")
        .expect("answer");
    // Rust's defaults with no CI: format, clippy, tests.
    assert_eq!(report.checks.len(), 3, "{report:?}");
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
        .detect_checks(&some_input())
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
        .detect_checks(&some_input())
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
    let err = room.detect_checks(&some_input()).expect_err("it panics");
    let (kind, message) = failed(&err);
    assert_eq!(kind, FailureKind::Panic);
    assert!(
        message.contains("fixture panic: cannot judge 3 files"),
        "{message}"
    );
    assert_host_unharmed();
}

#[test]
fn a_room_that_imports_the_filesystem_is_refused_when_loaded() {
    let err = rooms()
        .load(
            World::Checks,
            SNOOPY,
            RoomSource::File {
                path: "snoopy.wasm".into(),
            },
        )
        .expect_err("hall links no filesystem");
    assert_eq!(err.code(), "ROOM_INCOMPATIBLE");
    let message = err.message();
    assert!(
        message.contains("imports something hall does not provide"),
        "{message}"
    );
    assert!(message.contains("wasi:filesystem/"), "{message}");
}

// ---------------------------------------------------------------- time, chance, blocking

#[test]
fn a_room_sleeping_forever_is_stopped_at_its_deadline() {
    // Each sleep is for u64::MAX nanoseconds. Were any of them real, the call
    // would never return: the deadline cannot interrupt a host call.
    let room = fixture(SLEEPY, "sleepy.wasm");
    let start = Instant::now();
    let err = within(Duration::from_secs(3), move || {
        room.detect_checks(&asking("forever"))
    })
    .expect_err("it never returns");
    let took = start.elapsed();
    let (kind, message) = failed(&err);
    assert_eq!(kind, FailureKind::Timeout, "{message}");
    assert!(
        message.contains("ran past its 1000 ms deadline"),
        "{message}"
    );
    assert!(took >= Duration::from_secs(1), "stopped early: {took:?}");
    assert!(took < Duration::from_secs(3), "stopped late: {took:?}");
    assert_host_unharmed();
}

#[test]
fn a_sleep_is_over_at_once_and_moves_only_the_rooms_clock() {
    let room = fixture(SLEEPY, "sleepy.wasm");
    let start = Instant::now();
    let (once, poll) = within(Duration::from_secs(3), move || {
        // Ten seconds of the room's time in 10,000 naps, none of them real.
        (notes(&room, "once"), notes(&room, "poll"))
    });
    let took = start.elapsed();
    assert_eq!(once, vec![format!("slept {} ns", u64::MAX)]);
    assert_eq!(poll, vec!["waited 10 s in 10000 naps"]);
    assert!(took < Duration::from_millis(900), "sleeps took {took:?}");
}

#[test]
fn clocks_randomness_environment_and_stdin_are_the_same_on_every_call() {
    let room = fixture(SENSES, "senses.wasm");
    let first = notes(&room, "look");
    // A second call a little later, and one in another runtime, as in the
    // next `hall` process.
    std::thread::sleep(Duration::from_millis(20));
    let second = notes(&room, "look");
    let elsewhere = Rooms::without_cache()
        .expect("engine")
        .load(World::Checks, SENSES, RoomSource::Builtin)
        .expect("loads");
    let third = notes(&elsewhere, "look");
    assert_eq!(first, second);
    assert_eq!(first, third);
    assert_eq!(first[0], format!("wall {WALL_CLOCK_SECONDS}.000000000"));
    assert_eq!(first[1], "monotonic Instant { tv_sec: 0, tv_nsec: 0 }");
    assert!(first[2].starts_with("elapsed 0 ns"), "{}", first[2]);
    // The hashes come from the fixed randomness: no host entropy reaches them.
    let hashes = &first[3];
    assert!(hashes.starts_with("hashes "), "{hashes}");
    // wasi-libc's own default directory, not the host's.
    assert_eq!(first[4], "env 0 vars, 0 args, cwd /", "{first:?}");
    assert_eq!(first[5], "stdin 0 bytes (ok)");
}

// ---------------------------------------------------------------- traps name their cause

#[test]
fn each_way_a_room_dies_is_named() {
    let room = fixture(TRAPPING, "trapping.wasm");
    let cases = [
        (
            "stack-overflow",
            FailureKind::StackOverflow,
            "overflowed its stack (call stack exhausted)",
        ),
        (
            "exit-3",
            FailureKind::Exit,
            "exited with status 1 instead of returning an answer",
        ),
        ("panic", FailureKind::Panic, "panicked: "),
        ("abort", FailureKind::Abort, "aborted: it executed"),
        (
            "divide-by-zero",
            FailureKind::Trap,
            "trapped: integer divide by zero",
        ),
        (
            "out-of-bounds",
            FailureKind::Trap,
            "trapped: out-of-bounds memory access",
        ),
    ];
    for (mode, kind, words) in cases {
        let err = room
            .detect_checks(&asking(mode))
            .expect_err("the room dies");
        let (got, message) = failed(&err);
        assert_eq!(got, kind, "{mode}: {message}");
        assert!(
            message.starts_with(&format!("room trapping.wasm {words}")),
            "{mode}: {message}"
        );
    }
    // The panic's own words, from stderr, are in the message.
    let err = room.detect_checks(&asking("panic")).expect_err("panics");
    assert!(
        err.message().contains("fixture gave up on 1 files"),
        "{}",
        err.message()
    );
    assert_host_unharmed();
}

// ---------------------------------------------------------------- output and answer caps

#[test]
fn writing_past_the_output_cap_fails_the_call_and_names_the_stream() {
    let room = fixture(NOISY, "noisy.wasm");
    for stream in ["stdout", "stderr"] {
        let start = Instant::now();
        // The room ignores every failed write and answers anyway.
        let err = room
            .detect_checks(&asking(stream))
            .expect_err("100 MB is past the cap");
        let (kind, message) = failed(&err);
        assert_eq!(kind, FailureKind::Output, "{message}");
        assert_eq!(
            message,
            format!("room noisy.wasm wrote more than 64 KiB to {stream}, more than hall keeps")
        );
        assert!(start.elapsed() < Duration::from_secs(2));
    }
    // A little output is fine.
    assert_eq!(notes(&room, "some"), vec!["said a little"]);
    assert_host_unharmed();
}

#[test]
fn the_output_cap_is_exact() {
    // "a line on stdout\n" is 17 bytes.
    let limited = |output_bytes| {
        Rooms::new(SHARED.1.path().join("cache"))
            .expect("engine")
            .with_limits(Limits {
                output_bytes,
                ..Limits::default()
            })
            .load(World::Checks, NOISY, RoomSource::Builtin)
            .expect("loads")
    };
    assert_eq!(notes(&limited(17), "some"), vec!["said a little"]);
    let err = limited(16)
        .detect_checks(&asking("some"))
        .expect_err("one byte past the cap");
    let (kind, message) = failed(&err);
    assert_eq!(kind, FailureKind::Output);
    assert!(
        message.contains("more than 16 bytes to stdout"),
        "{message}"
    );
}

#[test]
fn an_answer_past_the_answer_cap_fails_the_call() {
    let room = fixture(NOISY, "noisy.wasm");
    let err = room
        .detect_checks(&asking("answer"))
        .expect_err("8 MiB is past the cap");
    let (kind, message) = failed(&err);
    assert_eq!(kind, FailureKind::Answer, "{message}");
    assert_eq!(
        message,
        "room noisy.wasm returned an answer of 8.0 MiB as JSON; the most hall accepts is 4 MiB"
    );
    let under = notes(&room, "answer-under");
    assert_eq!(under.len(), 3);
    assert!(under.iter().all(|n| n.len() == 1 << 20));
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
    let checks = builtin::bytes(World::Checks).expect("built-in checks");
    let err = rooms()
        .load(
            World::Merger,
            checks,
            RoomSource::Repo {
                path: "rooms/merger.wasm".into(),
                rev: None,
            },
        )
        .expect_err("a checks room is not a merger");
    assert_eq!(err.code(), "ROOM_INCOMPATIBLE");
    let message = err.message();
    assert!(
        message.contains(
            "room repo:rooms/merger.wasm implements hall:rooms/checks@0.8.0, not the merger world"
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
        .expect_err("version 0.9 is not supported");
    assert_eq!(err.code(), "ROOM_INCOMPATIBLE");
    assert_eq!(
        err.message(),
        "room future.wasm exports hall:rooms/merger@0.9.0; this hall supports hall:rooms/merger 0.8"
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
    let room = rooms().builtin(World::Checks).expect("built-in checks");
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
    let room = rooms.builtin(World::Checks).expect("compiles");
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
    assert_eq!(report.implements[0].export, "hall:rooms/merger@0.8.0");
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
        report.problems[0].contains("merger@0.9.0"),
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
fn check_refuses_an_export_with_the_right_name_and_the_wrong_signature() {
    let report = rooms().check(WRONG_SIGNATURE);
    assert!(report.component);
    assert_eq!(report.implements.len(), 1);
    assert_eq!(report.implements[0].export, "hall:rooms/checks@0.8.0");
    assert!(report.implements[0].supported);
    assert!(report.runnable.is_empty(), "{report:?}");
    assert_eq!(report.problems.len(), 1, "{:?}", report.problems);
    let problem = &report.problems[0];
    assert!(
        problem.contains(
            "exports hall:rooms/checks@0.8.0, but its `detect` does not have the type hall's checks world gives it"
        ),
        "{problem}"
    );
    assert!(
        problem.contains("expected `record` found `string`"),
        "{problem}"
    );

    // Loading it for use is refused the same way, before any of it runs.
    let err = rooms()
        .load(
            World::Checks,
            WRONG_SIGNATURE,
            RoomSource::File {
                path: "wrong-signature.wasm".into(),
            },
        )
        .expect_err("the types differ");
    assert_eq!(err.code(), "ROOM_INCOMPATIBLE", "{err}");
    assert!(
        err.message().starts_with(
            "room wrong-signature.wasm exports hall:rooms/checks@0.8.0, but its `detect`"
        ),
        "{err}"
    );

    // Every built-in room passes the same check.
    for world in World::ALL {
        let report = rooms().check(builtin::bytes(world).expect("built in"));
        assert_eq!(report.runnable, vec![world], "{:?}", report.problems);
    }
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
    // `[rooms] gates = …` from before check detection was renamed still works.
    assert_eq!("gates".parse::<World>().expect("old name"), World::Checks);
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

/// Loading a built-in room skips the instantiation that type-checks its exports (it
/// sits on every hook's path); this is where each built-in room is held to it instead.
#[test]
fn every_built_in_room_verifies() {
    let rooms = &SHARED.0;
    for world in World::ALL {
        if let Ok(room) = rooms.builtin(world) {
            room.verify()
                .unwrap_or_else(|e| panic!("built-in {world} room: {e}"));
        }
    }
    assert!(
        World::ALL.iter().all(|w| rooms.builtin(*w).is_ok()),
        "every world has a built-in room"
    );
}
