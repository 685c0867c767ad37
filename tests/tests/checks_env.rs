//! Where the checks run: a tool that isn't installed holds the item for a person (no
//! fixer run spent on it), the repository's `setup` prepares the loop's checkout once
//! per lockfile, and that checkout borrows nothing from the main checkout's folder tree.

#![allow(clippy::unwrap_used)] // a panic is how a test fails

use std::path::Path;

use crate::common::*;

/// A loop whose `.hallmark.toml` is `config`, with `files` committed beside it (on main)
/// and one item with a commit; `check` is `check.sh`.
fn repo_with(config: &str, check: &str, files: &[(&str, &str)], script: Value) -> Loop {
    Loop::assemble(Sandbox::initialized(), config, check, files, script)
}

fn fixer_runs(l: &Loop) -> usize {
    l.claude_calls()
        .iter()
        .filter(|c| c["env"]["HALL_ACTOR"] == "fixer")
        .count()
}

/// The loop's checkout of the item, under the sandbox's cache directory.
fn loop_checkout(l: &Loop) -> std::path::PathBuf {
    l.sb.loop_checkout(&l.id)
}

fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn a_check_whose_tool_is_not_installed_holds_the_item_without_a_fixer_run() {
    let config = "base = \"main\"\ngates = [\"sh check.sh\", \"tidy-lint --strict .\"]\n";
    let l = repo_with(
        config,
        CHECK,
        &[],
        json!({"review": [approve()], "fix": [fix("attempts <= 3", "")]}),
    );
    l.make_ready();
    l.daemon();
    let status = l.status();
    assert_eq!(status["item"]["state"], "checks", "{status}");
    let hold = &status["item"]["hold"];
    assert_eq!(hold["kind"], "checks", "{status}");
    let reason = hold["reason"].as_str().unwrap();
    assert!(
        reason.contains("`tidy-lint` is not installed")
            && reason.contains("`tidy-lint --strict .`")
            && reason.contains("not found"),
        "{reason}"
    );
    let next: Vec<&str> = status["next"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert!(
        next.iter()
            .any(|n| n.contains("tidy-lint") && n.contains("setup")),
        "{next:?}"
    );
    let retry = format!("hall retry {} --reason", l.id);
    assert_eq!(
        next.iter().filter(|n| n.starts_with(&retry)).count(),
        1,
        "{next:?}"
    );
    // The hold's commands are in the journal, with it.
    let held = l.events_of(&l.id, "held");
    assert_eq!(held.len(), 1);
    assert!(
        held[0]["next"]
            .as_array()
            .is_some_and(|n| n.iter().any(|c| c.as_str().unwrap().starts_with(&retry))),
        "{}",
        held[0]
    );
    // It never reached the fixer, nor counted as a failed round.
    assert_eq!(fixer_runs(&l), 0);
    assert_eq!(l.kinds(), ["created", "ready", "held"]);
    // The loop's checkout, under the cache directory, is still another checkout to the
    // agent's gates: neither a write nor a command there is let through.
    let checkouts = l.sb.root.join("cache/checkouts");
    let repo_dir = std::fs::read_dir(&checkouts)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let loop_dir = repo_dir.join(&l.id);
    assert!(
        loop_dir.join("check.sh").is_file(),
        "{}",
        loop_dir.display()
    );
    for command in [
        format!("echo 'exit 0' > {}/check.sh", loop_dir.display()),
        format!("git -C {} commit --allow-empty -m x", loop_dir.display()),
    ] {
        let (out, _) = l.bash_hook("agent", &command);
        assert!(out.contains("\"deny\""), "{command}: {out}");
    }
    // Installed, retried: the same checks run again and the loop goes on.
    let tool = l.sb.bin.join("tidy-lint");
    std::fs::write(&tool, "#!/bin/sh\nexit 0\n").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    l.hall(
        &l.sb.repo,
        &["retry", &l.id, "--reason", "installed tidy-lint"],
    )
    .ok();
    l.daemon();
    let status = l.status();
    assert_eq!(status["item"]["state"], "closed", "{status}");
    assert_eq!(fixer_runs(&l), 0);
    assert_eq!(
        l.kinds()[..5],
        ["created", "ready", "held", "retried", "checks_passed"]
    );
}

#[test]
fn a_missing_node_package_is_a_hold_and_a_broken_relative_import_goes_to_the_fixer() {
    // A gate that reads like node's resolver: first a package, then the repo's own file.
    let check = "if grep -q '<=' lib.txt; then echo \"Error: Cannot find module 'left-pad'\"; echo 'Require stack:'; else echo \"Error: Cannot find module './limits'\"; fi; exit 1\n";
    let l = repo_with(
        "base = \"main\"\ngates = [\"sh check.sh\"]\n",
        check,
        &[],
        json!({"fix": [fix("attempts <= 3", "")]}),
    );
    l.sb.hall(&l.wt, &["ready"]).ok();
    l.daemon();
    // The relative import was the change's: a failed round, and the fixer ran once.
    // Its fix then hit the missing package: a hold naming it, no second fixer run.
    assert_eq!(fixer_runs(&l), 1);
    let status = l.status();
    let hold = &status["item"]["hold"];
    assert_eq!(status["item"]["state"], "checks", "{status}");
    assert_eq!(hold["kind"], "checks");
    assert!(
        hold["reason"]
            .as_str()
            .unwrap()
            .contains("the node package `left-pad` is not installed"),
        "{hold}"
    );
}

/// A setup that counts its runs in `runs` and installs `deps/installed`, which the check
/// needs; `deps/` is ignored, as installed dependencies are.
fn setup_repo(runs: &Path, script: Value) -> Loop {
    let config = format!(
        "base = \"main\"\nsetup = [\"sh setup.sh {}\"]\ngates = [\"sh check.sh\"]\n",
        runs.display()
    );
    let check = format!(
        "test -f deps/installed || {{ echo 'deps/installed is missing: setup did not run'; exit 1; }}\n{CHECK}"
    );
    repo_with(
        &config,
        &check,
        &[
            (".gitignore", "deps/\n"),
            ("package-lock.json", "{\"lockfileVersion\": 3}\n"),
            (
                "setup.sh",
                "mkdir -p deps && echo run >> \"$1\" && cp package-lock.json deps/installed\n",
            ),
        ],
        script,
    )
}

#[test]
fn setup_runs_once_before_the_checks_and_again_when_the_lockfile_changes() {
    // Setup counts its runs inside the loop's checkout, the only place it may write.
    let runs = Path::new("deps/setup-runs.log");
    // Round 1 fails its check (the fixer fixes lib.txt), round 2 is rejected (the fixer
    // changes the lockfile), round 3 is approved.
    let l = setup_repo(
        runs,
        json!({
            "review": [reject(), approve()],
            "fix": [
                fix("attempts <= 3", ""),
                {"sh": "printf '%s\\n' '{\"lockfileVersion\": 3, \"packages\": {}}' > package-lock.json && git commit -qam 'Lock the packages' && hall fixed F1"}
            ]
        }),
    );
    l.sb.hall(&l.wt, &["ready"]).ok();
    l.daemon();
    assert_eq!(l.status()["item"]["state"], "closed", "{}", l.status());
    let kinds: Vec<String> = l.kinds().into_iter().filter(|k| k != "setup_run").collect();
    assert_eq!(kinds, TWO_ROUNDS_TO_SHIP);
    // Three rounds of checks, two setups: the first checkout's, and the new lockfile's.
    let runs = loop_checkout(&l).join(runs);
    assert_eq!(lines(&runs).len(), 2, "{:?}", lines(&runs));
    let setups = l.events_of(&l.id, "setup_run");
    assert_eq!(setups.len(), 2);
    for s in &setups {
        assert_eq!(s["exit_code"], 0, "{s}");
        assert!(s["command"].as_str().unwrap().starts_with("sh setup.sh "));
    }
    // Each setup comes before the checks of its round.
    let events = l.events();
    let order: Vec<&str> = events
        .iter()
        .map(|e| e["event"].as_str().unwrap())
        .filter(|k| matches!(*k, "setup_run" | "check_run"))
        .collect();
    assert_eq!(
        order,
        [
            "setup_run",
            "check_run",
            "check_run",
            "setup_run",
            "check_run"
        ]
    );
}

#[test]
fn a_failing_setup_holds_the_item_with_its_output_and_no_fixer_run() {
    let l = repo_with(
        "base = \"main\"\nsetup = [\"sh setup.sh\"]\ngates = [\"sh check.sh\"]\n",
        CHECK,
        &[(
            "setup.sh",
            "echo 'resolving packages'\necho 'E404: left-pad@9.9.9 is not in the registry' >&2\nexit 1\n",
        )],
        json!({"fix": [fix("attempts <= 3", "")]}),
    );
    l.sb.hall(&l.wt, &["ready"]).ok();
    l.daemon();
    let status = l.status();
    assert_eq!(status["item"]["state"], "checks", "{status}");
    let hold = &status["item"]["hold"];
    assert_eq!(hold["kind"], "checks");
    let reason = hold["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("setup `sh setup.sh` failed with exit 1")
            && reason.contains("E404: left-pad@9.9.9 is not in the registry"),
        "{reason}"
    );
    assert_eq!(fixer_runs(&l), 0);
    // No check ran on an unprepared checkout; the setup's output is journalled and kept.
    assert!(l.events_of(&l.id, "check_run").is_empty());
    let setup = &l.events_of(&l.id, "setup_run")[0];
    assert_eq!(setup["exit_code"], 1);
    assert!(
        setup["output"].as_str().unwrap().contains("E404"),
        "{setup}"
    );
    let log = setup["log"].as_str().unwrap();
    let shown = l.sb.hall(&l.sb.repo, &["run", "--show", log]);
    assert_eq!(shown.code, 0, "{shown:?}");
    assert!(shown.stdout.contains("resolving packages"), "{shown:?}");
}

#[test]
fn the_loops_checkout_sees_nothing_the_main_checkout_installed() {
    // A gate that walks up from where it runs, as node's resolver and python tools do,
    // and fails if it finds an installed package there; it says where it ran.
    let root = tempfile::tempdir().unwrap();
    let ran_in = Path::new("ran-in.txt");
    let check = "pwd -P > \"$1\"\nd=$(pwd -P)\nwhile [ \"$d\" != / ]; do\n  if [ -d \"$d/node_modules/left-pad\" ] || [ -d \"$d/.venv\" ]; then echo \"borrowed $d\"; exit 1; fi\n  d=$(dirname \"$d\")\ndone\n";
    let config = format!(
        "base = \"main\"\ngates = [\"sh check.sh {}\"]\n",
        ran_in.display()
    );
    let l = repo_with(
        &config,
        check,
        &[(".gitignore", "node_modules/\n.venv/\nran-in.txt\n")],
        json!({"review": [approve()]}),
    );
    // The main checkout has its own dependencies installed.
    std::fs::create_dir_all(l.sb.repo.join("node_modules/left-pad")).unwrap();
    std::fs::create_dir_all(l.sb.repo.join(".venv/bin")).unwrap();
    // The gate can fail: anywhere inside the main checkout's tree, it finds them.
    let inside = l.sb.repo.join("sub");
    std::fs::create_dir_all(&inside).unwrap();
    let out = std::process::Command::new("sh")
        .arg(l.sb.repo.join("check.sh"))
        .arg(root.path().join("probe.txt"))
        .current_dir(&inside)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    l.sb.hall(&l.wt, &["ready"]).ok();
    l.daemon();
    assert_eq!(l.kinds()[..3], ["created", "ready", "checks_passed"]);
    // The gate wrote where it ran into the loop's checkout (it may write nowhere else).
    let dir = std::fs::read_to_string(loop_checkout(&l).join(ran_in)).unwrap();
    let dir = Path::new(dir.trim());
    let repo = l.sb.repo.canonicalize().unwrap();
    assert!(!dir.starts_with(&repo), "{}", dir.display());
    assert!(
        dir.starts_with(l.sb.root.join("cache/checkouts")),
        "the loop's checkouts are under the cache directory: {}",
        dir.display()
    );
    // Closed: the sweeper removes the loop's checkout with the worktree.
    assert_eq!(l.status()["item"]["state"], "closed");
    l.daemon();
    assert!(!dir.exists(), "{} is left behind", dir.display());
}
