//! Rooms end to end: which room serves each world, read from the base branch only;
//! gate detection at `hall init`; a swapped room that fails is an error, never a
//! silent fallback; and the author's loop (`hall rooms check`, `hall rooms run`).

use hallmark_tests::sandbox::{Sandbox, built_wasm};
use serde_json::{Value, json};

fn serving(v: &Value, world: &str) -> Value {
    v["rooms"]
        .as_array()
        .expect("rooms")
        .iter()
        .find(|r| r["world"] == world)
        .cloned()
        .expect("world listed")
}

fn commit_rooms(sb: &Sandbox, dir: &std::path::Path, table: &str, files: &[(&str, &[u8])]) {
    let config = std::fs::read_to_string(dir.join(".hallmark.toml")).unwrap_or_default();
    std::fs::write(
        dir.join(".hallmark.toml"),
        format!("{config}\n[rooms]\n{table}\n"),
    )
    .expect("write");
    sb.git(dir, &["add", ".hallmark.toml"]);
    for (name, bytes) in files {
        std::fs::write(dir.join(name), bytes).expect("write");
        sb.git(dir, &["add", name]);
    }
    sb.git(dir, &["commit", "-q", "-m", "swap a room"]);
}

#[test]
fn init_detects_checks_with_the_checks_room_and_records_which_room_decided() {
    let sb = Sandbox::new();
    std::fs::write(sb.repo.join("go.mod"), "module example.com/x\n\ngo 1.22\n").expect("write");
    std::fs::write(
        sb.repo.join("package.json"),
        r#"{"name":"x","scripts":{"test":"vitest run","lint":"eslint .","dev":"vite"}}"#,
    )
    .expect("write");
    std::fs::write(sb.repo.join("pnpm-lock.yaml"), "lockfileVersion: '9.0'\n").expect("write");
    sb.git(&sb.repo, &["add", "-A"]);
    sb.git(&sb.repo, &["commit", "-q", "-m", "a project"]);
    let v = sb.hall(&sb.repo, &["init"]).ok();
    let checks: Vec<&str> = v["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .map(|g| g.as_str().expect("g"))
        .collect();
    for g in [
        "pnpm test",
        "pnpm run lint",
        "go test ./...",
        "go vet ./...",
    ] {
        assert!(checks.contains(&g), "{g} missing from {checks:?}");
    }
    assert!(
        !checks.iter().any(|g| g.contains("dev")),
        "a dev server is not a check: {checks:?}"
    );
    // The reply says where each came from, what setup it wrote and what it left out.
    let detection = &v["detection"];
    assert_eq!(
        detection["picked"].as_array().map(Vec::len),
        Some(checks.len())
    );
    assert_eq!(
        detection["setup"][0]["command"],
        "pnpm install --frozen-lockfile"
    );
    assert_eq!(detection["setup"][0]["source"], "pnpm-lock.yaml");
    let dev = detection["left_out"]
        .as_array()
        .expect("left_out")
        .iter()
        .find(|l| l["command"] == "pnpm run dev")
        .expect("the dev server is reported");
    assert!(
        dev["reason"]
            .as_str()
            .expect("reason")
            .contains("never terminates"),
        "{dev}"
    );
    let config = std::fs::read_to_string(sb.repo.join(".hallmark.toml")).expect("config");
    assert!(config.contains("\"go vet ./...\""), "{config}");
    assert!(
        config.contains("setup = [\"pnpm install --frozen-lockfile\"]"),
        "{config}"
    );
    let log = sb.hall(&sb.repo, &["log", "--kind", "room_used"]).ok();
    assert_eq!(log["events"].as_array().map(Vec::len), Some(1));
    let raw =
        std::fs::read_to_string(sb.repo.join(".git/hallmark/events.jsonl")).expect("repo events");
    let used: Value = serde_json::from_str(raw.lines().next().expect("a line")).expect("json");
    assert_eq!(used["world"], "checks");
    assert_eq!(used["room"], "builtin:checks");
    assert_eq!(used["source"], "built-in");
    assert_eq!(used["sha256"].as_str().map(str::len), Some(64));
}

#[test]
fn a_branch_cannot_swap_its_own_room_only_the_base_branch_can() {
    let sb = Sandbox::initialized();
    let before = sb.hall(&sb.repo, &["rooms", "list"]).ok();
    assert_eq!(
        serving(&before, "verdict")["room"]["source"]["kind"],
        "builtin"
    );
    let id = sb.hall(&sb.repo, &["new", "--title", "Sneaky"]).ok()["item"]
        .as_str()
        .expect("id")
        .to_string();
    let wt = sb.worktree(&id);
    // The item's branch commits a room that would wave every verdict through (here: one
    // that panics, so any use of it would show) and points [rooms] at it.
    let panicky = std::fs::read(built_wasm("hall_fixture_panicky.wasm")).expect("fixture");
    commit_rooms(&sb, &wt, "verdict = \"rooms/kind.wasm\"", &[]);
    std::fs::create_dir_all(wt.join("rooms")).expect("mkdir");
    std::fs::write(wt.join("rooms/kind.wasm"), &panicky).expect("write");
    sb.git(&wt, &["add", "rooms/kind.wasm"]);
    sb.git(&wt, &["commit", "-q", "-m", "kinder reviews"]);
    let inside = sb.hall(&wt, &["rooms", "list"]).ok();
    assert_eq!(
        serving(&inside, "verdict")["room"]["name"],
        "builtin:verdict",
        "the branch's [rooms] is ignored"
    );
    let verdict = sb
        .hall(&wt, &["rooms", "run", "verdict", "--input", "{}"])
        .ok();
    assert_eq!(verdict["room"]["name"], "builtin:verdict");
    assert!(
        verdict["output"]["failure"].is_object(),
        "the built-in room still judges: {verdict}"
    );
    assert_eq!(sb.hall(&wt, &["doctor"]).ok()["ok"], true);

    // The same change on the base branch does take effect, and its failure is an error
    // that names the room, not a quiet fall back to the built-in one.
    std::fs::create_dir_all(sb.repo.join("rooms")).expect("mkdir");
    commit_rooms(
        &sb,
        &sb.repo,
        "verdict = \"rooms/kind.wasm\"",
        &[("rooms/kind.wasm", &panicky)],
    );
    let after = sb.hall(&wt, &["rooms", "list"]).ok();
    let v = serving(&after, "verdict");
    assert_eq!(v["code"], "ROOM_INCOMPATIBLE", "{v}");
    let e = sb
        .hall(&wt, &["rooms", "run", "verdict", "--input", "{}"])
        .err("ROOM_INCOMPATIBLE", 2);
    assert!(
        e["error"]["message"]
            .as_str()
            .expect("m")
            .contains("rooms/kind.wasm"),
        "{e}"
    );
    let doctor = sb.hall(&sb.repo, &["doctor"]);
    assert_eq!(doctor.code, 1, "{doctor:?}");
    let doctor = doctor.json();
    assert_eq!(doctor["ok"], false);
    let rooms = doctor["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .find(|c| c["name"] == "rooms")
        .cloned()
        .expect("rooms");
    assert_eq!(rooms["fix"], "hall rooms list");
}

#[test]
fn a_swapped_room_that_panics_loops_or_is_missing_is_a_named_error() {
    let sb = Sandbox::initialized();
    std::fs::create_dir_all(sb.repo.join("rooms")).expect("mkdir");
    let looping = std::fs::read(built_wasm("hall_fixture_looping.wasm")).expect("fixture");
    let hungry = std::fs::read(built_wasm("hall_fixture_hungry.wasm")).expect("fixture");
    // `gates`, the checks world's name early in development, still configures it.
    commit_rooms(
        &sb,
        &sb.repo,
        "gates = \"rooms/looping.wasm\"\nmerger = \"rooms/missing.wasm\"",
        &[
            ("rooms/looping.wasm", &looping),
            ("rooms/hungry.wasm", &hungry),
        ],
    );
    let input = json!({"settings": {}, "bases": []}).to_string();
    let started = std::time::Instant::now();
    let e = sb.hall(&sb.repo, &["rooms", "run", "checks", "--input", "{}"]);
    let elapsed = started.elapsed();
    let v = e.json();
    assert_eq!(v["error"]["code"], "ROOM_FAILED", "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .expect("m")
            .contains("deadline"),
        "{v}"
    );
    assert!(
        elapsed < std::time::Duration::from_secs(10),
        "stopped within the deadline: {elapsed:?}"
    );
    let e = sb
        .hall(&sb.repo, &["rooms", "run", "merger", "--input", &input])
        .err("ROOM_NOT_FOUND", 3);
    assert!(
        e["error"]["message"]
            .as_str()
            .expect("m")
            .contains("rooms/missing.wasm")
    );
    // Run a file directly: the author's loop.
    let hungry_path = sb.repo.join("rooms/hungry.wasm");
    let e = sb
        .hall(
            &sb.repo,
            &[
                "rooms",
                "run",
                hungry_path.to_str().expect("utf8"),
                "--input",
                "{}",
            ],
        )
        .err("ROOM_FAILED", 1);
    assert!(
        e["error"]["message"]
            .as_str()
            .expect("m")
            .contains("memory"),
        "{e}"
    );
}

#[test]
fn rooms_check_and_run_work_outside_a_repository_too() {
    let sb = Sandbox::new();
    let merger = built_wasm("hall_room_merger.wasm");
    let report = sb
        .hall(
            &sb.home,
            &["rooms", "check", merger.to_str().expect("utf8")],
        )
        .ok();
    assert_eq!(report["runnable"], json!(["merger"]));
    assert!(
        report["imports"]
            .as_array()
            .expect("imports")
            .iter()
            .all(|i| i.as_str().expect("i").starts_with("wasi:"))
    );
    let wrong = built_wasm("hall_fixture_future_version.wasm");
    let e = sb
        .hall(&sb.home, &["rooms", "check", wrong.to_str().expect("utf8")])
        .err("ROOM_INCOMPATIBLE", 2);
    assert!(e["error"]["message"].to_string().contains("0.9.0"), "{e}");
    let verdict = json!({
        "summary": "Looks right.",
        "lenses": ["first_principles", "correctness", "security", "data", "evidence", "operability", "repo_rules"],
        "findings": [],
        "learnings_used": []
    });
    let v = sb.hall(
        &sb.home,
        &["rooms", "run", "verdict", "--input", &verdict.to_string()],
    );
    let v = v.json();
    assert!(
        v["output"]["ok"]["approved"] == true || v["output"]["failure"].is_object(),
        "{v}"
    );
    sb.hall(
        &sb.home,
        &["rooms", "run", "verdict", "--input", "not json"],
    )
    .err("ROOM_INPUT_INVALID", 2);
    sb.hall(&sb.home, &["rooms", "run", "nowhere.wasm", "--input", "{}"])
        .err("ROOM_NOT_FOUND", 3);
}

#[test]
fn a_user_level_room_serves_repositories_that_configure_none() {
    let sb = Sandbox::initialized();
    let rooms = sb.root.join("config/rooms");
    std::fs::create_dir_all(&rooms).expect("mkdir");
    std::fs::copy(
        built_wasm("hall_room_checks.wasm"),
        rooms.join("checks.wasm"),
    )
    .expect("copy");
    let v = sb.hall(&sb.repo, &["rooms", "list"]).ok();
    let checks = serving(&v, "checks");
    assert_eq!(checks["room"]["source"]["kind"], "user", "{checks}");
    assert_eq!(serving(&v, "merger")["room"]["source"]["kind"], "builtin");
    // A broken user room is an error too, not a fallback.
    std::fs::write(rooms.join("merger.wasm"), b"not a component").expect("write");
    let v = sb.hall(&sb.repo, &["rooms", "list"]).ok();
    assert!(
        serving(&v, "merger")["code"]
            .as_str()
            .is_some_and(|c| c.starts_with("ROOM_")),
        "{v}"
    );
    // The repository's own choice on its base branch wins over the user's.
    std::fs::create_dir_all(sb.repo.join("policy")).expect("mkdir");
    let checks_wasm = std::fs::read(built_wasm("hall_room_checks.wasm")).expect("read");
    commit_rooms(
        &sb,
        &sb.repo,
        "checks = \"policy/checks.wasm\"",
        &[("policy/checks.wasm", &checks_wasm)],
    );
    let v = sb.hall(&sb.repo, &["rooms", "list"]).ok();
    assert_eq!(serving(&v, "checks")["room"]["source"]["kind"], "repo");
}

#[test]
fn rooms_check_refuses_an_export_with_the_right_name_and_the_wrong_signature() {
    // The component exports hall:rooms/checks@0.8.0 with a `detect` that takes and
    // returns strings: every name matches, so only a typed lookup can tell.
    let sb = Sandbox::new();
    let wrong = built_wasm("hall_fixture_wrong_signature.wasm");
    let e = sb
        .hall(&sb.home, &["rooms", "check", wrong.to_str().expect("utf8")])
        .err("ROOM_INCOMPATIBLE", 2);
    let message = e["error"]["message"].as_str().expect("message");
    assert!(
        message.contains("its `detect` does not have the type hall's checks world gives it"),
        "{message}"
    );
    // Run anyway, it is refused the same way before any of it runs.
    let e = sb
        .hall(
            &sb.home,
            &[
                "rooms",
                "run",
                wrong.to_str().expect("utf8"),
                "--input",
                "{}",
            ],
        )
        .err("ROOM_INCOMPATIBLE", 2);
    assert!(
        e["error"]["message"]
            .as_str()
            .expect("message")
            .contains("`detect`"),
        "{e}"
    );
}

#[test]
fn a_room_that_sleeps_forever_is_stopped_at_its_deadline() {
    let sb = Sandbox::new();
    let sleepy = built_wasm("hall_fixture_sleepy.wasm");
    let started = std::time::Instant::now();
    let e = sb
        .hall(
            &sb.home,
            &[
                "rooms",
                "run",
                sleepy.to_str().expect("utf8"),
                "--input",
                r#"{"files": ["forever"]}"#,
            ],
        )
        .err("ROOM_FAILED", 1);
    let elapsed = started.elapsed();
    assert!(
        e["error"]["message"]
            .as_str()
            .expect("message")
            .contains("ran past its 1000 ms deadline"),
        "{e}"
    );
    assert!(
        elapsed < std::time::Duration::from_secs(5),
        "a 1 s deadline took {elapsed:?}"
    );
}
