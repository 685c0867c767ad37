//! `hall run`: the command's whole output kept on disk, the condensed view printed
//! through the real condense room, the command's exit code passed on, and the
//! drill-down with `--show`.

use std::path::Path;

use hallmark_tests::sandbox::Sandbox;
use serde_json::Value;

fn fixture(name: &str) -> (std::path::PathBuf, Value) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/output");
    let meta: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join(format!("{name}.json"))).expect("meta"),
    )
    .expect("json");
    (dir.join(format!("{name}.txt")), meta)
}

#[test]
fn hall_run_condenses_real_cargo_output_keeps_every_signal_and_passes_the_exit_code_on() {
    let sb = Sandbox::initialized();
    sb.fake("cargo", Path::new(env!("CARGO_BIN_EXE_fake-tool")));
    for name in [
        "cargo_test/many_failures",
        "cargo_test/crash_sigabrt_large",
        "cargo_build/check_errors",
        "cargo_test/compile_errors_large",
    ] {
        let (out, meta) = fixture(name);
        let exit = meta["exit_code"].as_i64().expect("exit").to_string();
        let words: Vec<String> = meta["command"]
            .as_str()
            .expect("command")
            .split_whitespace()
            .map(str::to_string)
            .collect();
        let mut args = vec!["run".to_string(), "--".to_string()];
        args.extend(words);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let run = sb.hall_env(
            &sb.repo,
            &args,
            &[
                ("FAKE_TOOL_OUTPUT", out.to_str().expect("utf8")),
                ("FAKE_TOOL_EXIT", &exit),
            ],
        );
        assert_eq!(
            run.code.to_string(),
            exit,
            "{name}: the command's exit code"
        );
        let raw = std::fs::read_to_string(&out).expect("fixture");
        assert!(
            run.stdout.len() < raw.len() / 2,
            "{name}: condensed ({} of {} bytes)",
            run.stdout.len(),
            raw.len()
        );
        for signal in meta["signals"].as_array().expect("signals") {
            let s = signal.as_str().expect("signal");
            assert!(
                run.stdout.contains(s),
                "{name}: `{s}` was hidden:\n{}",
                run.stdout
            );
        }
        // The footer names the kept log; the drill-down finds any part of it.
        let log = run
            .stdout
            .lines()
            .find_map(|l| l.strip_prefix("[hall] full log: "))
            .and_then(|l| l.split(';').next())
            .expect("footer");
        let kept = sb.repo.join(".git/hallmark/runs/logs").join(log);
        assert_eq!(
            std::fs::read_to_string(&kept).expect("kept"),
            raw,
            "{name}: lossless on disk"
        );
        let first = meta["signals"][0].as_str().expect("signal");
        let grep = sb.hall(&sb.repo, &["run", "--show", log, "--grep", first]);
        assert_eq!(grep.code, 0);
        assert!(grep.stdout.contains(first), "{}", grep.stdout);
        let lines = sb.hall(&sb.repo, &["run", "--show", log, "--lines", "1-3"]);
        assert_eq!(lines.stdout.lines().count(), 3, "{}", lines.stdout);
    }
}

#[test]
fn evidence_passes_untouched_and_json_is_there_when_asked() {
    let sb = Sandbox::initialized();
    for n in 0..200 {
        sb.commit(
            &sb.repo,
            "f.txt",
            &format!("line {n}\n"),
            &format!("change {n}"),
        );
    }
    let direct = sb.git(&sb.repo, &["log", "--oneline"]);
    let run = sb.hall(&sb.repo, &["run", "--", "git", "log", "--oneline"]);
    assert_eq!(run.code, 0);
    assert!(
        run.stdout.starts_with(&direct),
        "git log passes through untouched"
    );
    let v = sb
        .hall(
            &sb.repo,
            &["--json", "run", "--", "git", "log", "--oneline"],
        )
        .ok();
    assert_eq!(v["exit_code"], 0);
    assert!(v["log"].as_str().is_some_and(|l| l.ends_with(".log")));
    sb.hall(&sb.repo, &["run"]).err("USAGE", 2);
    sb.hall(&sb.repo, &["run", "--", "no-such-program-here"])
        .err("COMMAND_FAILED", 1);
    sb.hall(&sb.repo, &["run", "--show", "nothing.log"])
        .err("USAGE", 2);
}

#[test]
fn a_repositorys_own_condense_room_replaces_the_family_filter() {
    let sb = Sandbox::initialized();
    sb.fake("cargo", Path::new(env!("CARGO_BIN_EXE_fake-tool")));
    let room = std::fs::read(hallmark_tests::sandbox::built_wasm(
        "hall_fixture_tail_only.wasm",
    ))
    .expect("fixture room");
    std::fs::create_dir_all(sb.repo.join("policy")).expect("mkdir");
    std::fs::write(sb.repo.join("policy/condense.wasm"), room).expect("write");
    let config = std::fs::read_to_string(sb.repo.join(".hallmark.toml")).expect("config");
    std::fs::write(
        sb.repo.join(".hallmark.toml"),
        format!("{config}\n[rooms]\ncondense = \"policy/condense.wasm\"\n"),
    )
    .expect("write");
    sb.git(&sb.repo, &["add", "-A"]);
    sb.git(&sb.repo, &["commit", "-q", "-m", "our own condense rule"]);
    let (out, _) = fixture("cargo_test/many_failures");
    let vars = [
        ("FAKE_TOOL_OUTPUT", out.to_str().expect("utf8")),
        ("FAKE_TOOL_EXIT", "101"),
    ];
    let run = sb.hall_env(&sb.repo, &["run", "--", "cargo", "test"], &vars);
    assert_eq!(run.code, 101);
    assert!(
        run.stdout.starts_with("tail-only filter (exit 101):"),
        "{}",
        run.stdout
    );
    let v = sb
        .hall_env(&sb.repo, &["--json", "run", "--", "cargo", "test"], &vars)
        .json();
    assert_eq!(v["filter"], "tail-only");
}

/// Every captured fixture through the real built-in condense component: each failure
/// signal survives and a failing run never reads as a pass.
#[test]
fn every_fixture_through_the_real_condense_component_keeps_its_signals() {
    let sb = Sandbox::new();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/output");
    let mut checked = 0;
    for family in std::fs::read_dir(&dir)
        .expect("fixtures")
        .flatten()
        .filter(|e| e.path().is_dir())
    {
        for entry in std::fs::read_dir(family.path()).expect("family").flatten() {
            let path = entry.path();
            if path.extension().is_none_or(|x| x != "json") {
                continue;
            }
            let meta: Value =
                serde_json::from_str(&std::fs::read_to_string(&path).expect("meta")).expect("json");
            let output = std::fs::read_to_string(path.with_extension("txt")).expect("capture");
            let input = serde_json::json!({"command": meta["command"], "exit_code": meta["exit_code"], "output": output, "log": "fixture.log"});
            let file = sb.root.join("input.json");
            std::fs::write(&file, input.to_string()).expect("write");
            let v = sb
                .hall(
                    &sb.home,
                    &[
                        "rooms",
                        "run",
                        "condense",
                        "--input",
                        &format!("@{}", file.display()),
                    ],
                )
                .ok();
            assert_eq!(v["room"]["name"], "builtin:condense");
            let text = v["output"]["ok"]["text"]
                .as_str()
                .unwrap_or_else(|| panic!("{}: {v}", path.display()));
            for signal in meta["signals"].as_array().expect("signals") {
                let s = signal.as_str().expect("signal");
                assert!(text.contains(s), "{}: `{s}` was hidden", path.display());
            }
            if meta["exit_code"] != 0 {
                assert!(
                    !text.contains("PASS (exit"),
                    "{}: a failing run read as a pass",
                    path.display()
                );
            }
            checked += 1;
        }
    }
    assert!(checked >= 40, "only {checked} fixtures");
}
