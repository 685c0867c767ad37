//! The platform module's tests: every function whose code differs by OS, and the
//! parsers behind the process table and the mount table.

use super::processes::*;
use super::*;

/// Each function above whose code differs on Windows or macOS: what differs, and the
/// tests that run that code there. A `cfg(windows)` test, and every test here, runs
/// under Wine in `.ci/windows`; macOS code only type-checks here (docs/portability.md).
/// An empty list names why nothing runs it.
const PATHS: &[(&str, &str, &[&str])] = &[
    (
        "shell",
        "Windows: `cmd /C`",
        &["a_template_runs_with_its_quoted_value_whole"],
    ),
    (
        "shell_quote",
        "Windows: cmd's double quotes",
        &["a_template_runs_with_its_quoted_value_whole"],
    ),
    (
        "program_files",
        "Windows: `.exe` and `.cmd`",
        &["a_program_is_found_by_its_platform_names"],
    ),
    (
        "is_executable",
        "not Unix: any file",
        &["a_program_is_found_by_its_platform_names"],
    ),
    (
        "process_gone",
        "not Linux: never known gone",
        &["a_live_process_is_not_gone"],
    ),
    (
        "process_start",
        "not Linux: unknown",
        &["a_live_process_is_not_gone"],
    ),
    (
        "ancestors",
        "Linux: /proc; macOS: `ps`; Windows: sysinfo; elsewhere: unread",
        &["a_process_knows_its_parents"],
    ),
    (
        "hidden_by_mount",
        "not Linux: nothing is known to be mounted over",
        &["a_mount_that_hides_a_path_is_seen"],
    ),
    (
        "own_process_group",
        "Windows: a new process group",
        &["a_process_group_is_stopped_whole"],
    ),
    (
        "kill_process_group",
        "Windows: `taskkill /T /F`",
        &["a_process_group_is_stopped_whole"],
    ),
    (
        "max_arg_bytes",
        "Windows: 24 KiB",
        &["an_argument_of_the_largest_size_is_passed"],
    ),
    ("detach", "Windows: a detached process", &[]),
    (
        "create_private_file",
        "not Unix: no mode bits",
        &["a_private_file_is_made_once"],
    ),
    (
        "create_private_dir",
        "not Unix: no mode bits",
        &["a_private_file_is_made_once"],
    ),
    (
        "file_identity",
        "not Unix: size and modification time",
        &["a_replaced_file_has_another_identity"],
    ),
    ("open_file", "macOS: `open`; Windows: `cmd /C start`", &[]),
    (
        "exit_code",
        "not Unix: the exit code alone",
        &["an_exit_code_is_the_shells"],
    ),
    (
        "sandbox_available",
        "macOS: Seatbelt; Windows: none",
        &["the_sandbox_is_known_per_platform"],
    ),
    ("on_terminate", "Windows: the console closing", &[]),
    (
        "loop_sandbox",
        "macOS: Seatbelt; Windows: none",
        &["the_loop_sandbox_is_known_per_platform"],
    ),
    (
        "no_git_hooks",
        "Windows: `NUL`",
        &["git_runs_no_hook_through_the_empty_hooks_path"],
    ),
];

/// Why each path with no test runs no test here.
const UNTESTED: &[(&str, &str)] = &[
    (
        "detach",
        "a detached process outlives the test; on Unix the daemon tests start one, under Wine nothing does",
    ),
    (
        "open_file",
        "it opens a window; the tests use `HALL_OPENER`, which takes the same path on every platform",
    ),
    (
        "on_terminate",
        "Wine has no console to close; SIGTERM is tested on Linux (tests/tests/app.rs)",
    ),
];

const PLATFORM_CFG: [&str; 8] = [
    "cfg(windows)",
    "cfg(not(windows))",
    "cfg(unix)",
    "cfg(not(unix))",
    "target_os",
    "cfg!(windows)",
    "cfg!(unix)",
    "cfg(any(unix",
];

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("source dir").flatten() {
        let path = entry.path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The part of a source file that isn't tests: everything before its test module
/// (tests come last, as clippy requires), and nothing of a file under `tests/`.
fn production(path: &Path, text: &str) -> String {
    let in_tests = path
        .components()
        .any(|c| c.as_os_str() == "tests" || c.as_os_str() == "benches")
        || path.file_name().is_some_and(|n| n == "tests.rs");
    if in_tests {
        return String::new();
    }
    text.split("#[cfg(test)]").next().unwrap_or("").to_string()
}

#[test]
fn every_platform_difference_is_here_and_each_is_covered_or_says_why_not() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    sources(&root.join("src"), &mut files);
    sources(&root.join("core/src"), &mut files);
    sources(&root.join("rooms/src"), &mut files);
    let mut outside = Vec::new();
    let mut all_tests = String::new();
    for f in &files {
        let text = std::fs::read_to_string(f).expect("source");
        all_tests.push_str(&text);
        if f.ends_with("src/platform.rs") || f.starts_with(root.join("src/platform")) {
            continue;
        }
        let prod = production(f, &text);
        for (n, line) in prod.lines().enumerate() {
            // Canonical paths too: the system's own call writes `\\?\` on Windows.
            let canonical = line.contains("fs::canonicalize") || line.contains(".canonicalize()");
            if canonical || PLATFORM_CFG.iter().any(|c| line.contains(c)) {
                outside.push(format!("{}:{}: {}", f.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(
        outside.is_empty(),
        "platform code outside the platform module:\n{}",
        outside.join("\n")
    );
    // Every function here, or in the core's part re-exported here, with a Windows or
    // macOS branch is listed.
    let here = production(&root.join("src/platform/mod.rs"), include_str!("mod.rs"))
        + &production(
            &root.join("src/platform/processes.rs"),
            include_str!("processes.rs"),
        )
        + &production(
            &root.join("core/src/platform.rs"),
            include_str!("../../core/src/platform.rs"),
        );
    let mut listed_fns = Vec::new();
    for chunk in here.split("\npub fn ").skip(1) {
        let name: String = chunk
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let body = chunk.split("\n}\n").next().unwrap_or("");
        let differs = ["windows", "macos", "unix", "target_os"]
            .iter()
            .any(|p| body.contains(p));
        if differs {
            listed_fns.push(name);
        }
    }
    for name in &listed_fns {
        assert!(
            PATHS.iter().any(|(f, _, _)| f == name),
            "{name} differs by platform but is not in PATHS"
        );
    }
    for (f, what, tests) in PATHS {
        assert!(
            listed_fns.contains(&f.to_string()),
            "{f} ({what}) is not a platform path here"
        );
        if tests.is_empty() {
            assert!(
                UNTESTED.iter().any(|(u, _)| u == f),
                "{f}: no test and no reason"
            );
        }
        for t in *tests {
            assert!(all_tests.contains(&format!("fn {t}()")), "{f}: no test {t}");
        }
    }
}

#[test]
fn a_template_runs_with_its_quoted_value_whole() {
    for v in ["plain", "two words", "it's", "a&b", "100%"] {
        let out = shell(&format!("echo {}", shell_quote(v)))
            .output()
            .expect("the shell runs");
        assert!(out.status.success());
        let said = String::from_utf8_lossy(&out.stdout).trim().to_string();
        // `sh` removes the quotes; `cmd`'s echo prints them, so the value stayed one
        // argument between them. A plain value needs none.
        let expected = if SHELL_IS_CMD && v != "plain" {
            format!("\"{v}\"")
        } else {
            v.to_string()
        };
        assert_eq!(said, expected);
    }
}

#[cfg(not(windows))]
#[test]
fn quoting_survives_the_shell() {
    for v in ["plain", "two words", "it's", "$(rm -rf /)", "a\"b", ""] {
        let out = shell(&format!("printf %s {}", shell_quote(v)))
            .output()
            .expect("sh runs");
        assert_eq!(String::from_utf8_lossy(&out.stdout), v);
    }
}

#[test]
fn a_program_is_found_by_its_platform_names() {
    let dir = tempfile::tempdir().expect("tempdir");
    let names = program_files("qmd");
    assert_eq!(names.last().map(String::as_str), Some("qmd"));
    let file = dir.path().join(&names[0]);
    std::fs::write(&file, "x").expect("write");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert!(!is_executable(&file), "no execute bit yet");
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    assert!(is_executable(&file));
    assert!(!is_executable(dir.path()), "a directory is not a program");
    if cfg!(windows) {
        assert_eq!(names[0], "qmd.exe");
    }
}

#[test]
fn a_live_process_is_not_gone() {
    assert!(!process_gone(std::process::id()));
    if cfg!(target_os = "linux") {
        assert!(process_start(std::process::id()).is_some());
    } else {
        assert_eq!(
            process_start(std::process::id()),
            None,
            "unknown, never guessed"
        );
    }
}

#[test]
fn a_process_knows_its_parents() {
    let found = ancestors(16, std::time::Duration::from_secs(10)).expect("the table reads");
    assert!(found.iter().all(|a| a.pid != std::process::id()));
    #[cfg(unix)]
    {
        assert_eq!(
            found.first().map(|a| a.pid),
            Some(std::os::unix::process::parent_id())
        );
        assert!(found.iter().all(|a| !a.name.is_empty()), "{found:?}");
    }
    assert!(
        ancestors(0, std::time::Duration::from_secs(10))
            .expect("reads")
            .is_empty()
    );
}

#[test]
fn the_process_table_s_lines_are_read_whatever_a_name_holds() {
    assert_eq!(
        parse_stat("4242 (tmux: server) S 1 4242 4242 0 -1"),
        Some(("tmux: server".to_string(), 1))
    );
    assert_eq!(
        parse_stat("7 (a) b) (c) R 3 7 7"),
        Some(("a) b) (c".to_string(), 3))
    );
    assert_eq!(parse_stat("garbage"), None);
    let args = "  300   200 /bin/zsh -l\n  400   300 node /usr/lib/node_modules/@anthropic-ai/claude-code/cli.js -p\n  500   400 hall verdict\n";
    let comms = "  300 /bin/zsh\n  400 /usr/local/bin/node\n  500 /Users/a/.cargo/bin/hall\n";
    let table = parse_ps(args, comms);
    let walk = walk_table(&table, 400, 8);
    assert_eq!(walk.iter().map(|a| a.pid).collect::<Vec<_>>(), [400, 300]);
    assert_eq!(walk[0].name, "node");
    assert_eq!(
        walk[0].exe.as_deref(),
        Some(Path::new("/usr/local/bin/node"))
    );
    assert_eq!(
        walk[0].args[1],
        "/usr/lib/node_modules/@anthropic-ai/claude-code/cli.js"
    );
    assert_eq!(
        walk_table(&table, 500, 1).len(),
        1,
        "the depth bounds the walk"
    );
}

#[test]
fn a_mount_that_hides_a_path_is_seen() {
    let table = "22 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n\
        233 47 0:43 / /home/a/.config/hallmark rw,nosuid - tmpfs tmpfs rw,mode=755\n\
        240 47 0:6 /null /home/a/.ssh/id_ed25519 ro - devtmpfs devtmpfs rw\n\
        241 47 254:0 /persist/home/a/.config/other /home/a/.config/other rw - ext4 /dev/vda rw\n\
        242 47 0:44 / /home/a/with\\040space rw - tmpfs tmpfs rw\n";
    assert!(mounted_over(table, Path::new("/home/a/.config/hallmark")));
    assert!(mounted_over(table, Path::new("/home/a/.ssh/id_ed25519")));
    assert!(mounted_over(table, Path::new("/home/a/with space")));
    // A bind mount of a real directory hides nothing; nor does the root file system.
    assert!(!mounted_over(table, Path::new("/home/a/.config/other")));
    assert!(!mounted_over(table, Path::new("/")));
    assert!(!mounted_over(table, Path::new("/home/a/.config")));
    let dir = tempfile::tempdir().expect("tempdir");
    assert!(
        !hidden_by_mount(dir.path()),
        "a test's own directory is its own"
    );
}

#[test]
fn a_process_group_is_stopped_whole() {
    // A shell that waits for a line on its input, which never comes.
    let script = if SHELL_IS_CMD { "set /p x=" } else { "read x" };
    let mut cmd = shell(script);
    cmd.stdin(std::process::Stdio::piped());
    own_process_group(&mut cmd);
    let mut child = cmd.spawn().expect("spawn");
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(child.try_wait().expect("wait").is_none(), "still waiting");
    kill_process_group(child.id());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        if child.try_wait().expect("wait").is_some() {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the group was not stopped"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

#[test]
fn an_argument_of_the_largest_size_is_passed() {
    // This test binary again, filtering for a test name nobody has: the system took
    // the whole argument if the harness ran and found nothing.
    let long = format!("no-such-test-{}", "x".repeat(max_arg_bytes() - 20));
    let out = Command::new(std::env::current_exe().expect("exe"))
        .args(["--exact", &long])
        .output()
        .expect("the argument fits");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("0 passed"));
}

#[test]
fn a_private_file_is_made_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    let sub = dir.path().join("keys/inner");
    create_private_dir(&sub).expect("dir");
    let file = sub.join("key");
    create_private_file(&file).expect("first");
    assert!(
        create_private_file(&file).is_err(),
        "never over an existing file"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&file).expect("meta").permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let mode = std::fs::metadata(&sub).expect("meta").permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
    }
}

#[test]
fn a_replaced_file_has_another_identity() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("f");
    std::fs::write(&path, "one").expect("write");
    let first = file_identity(&std::fs::metadata(&path).expect("meta"));
    assert_eq!(
        first,
        file_identity(&std::fs::metadata(&path).expect("meta"))
    );
    let other = dir.path().join("g");
    std::fs::write(&other, "a longer one").expect("write");
    std::fs::rename(&other, &path).expect("replace");
    assert_ne!(
        first,
        file_identity(&std::fs::metadata(&path).expect("meta"))
    );
}

#[test]
fn an_exit_code_is_the_shells() {
    let status = shell("exit 3").status().expect("the shell runs");
    assert_eq!(exit_code(&status), 3);
    #[cfg(unix)]
    {
        let status = shell("kill -TERM $$").status().expect("sh runs");
        assert_eq!(exit_code(&status), 128 + 15);
    }
}

#[test]
fn the_loop_sandbox_is_known_per_platform() {
    let (kind, program) = loop_sandbox();
    if cfg!(target_os = "linux") {
        assert_eq!((kind, program), (LoopSandbox::Bubblewrap, "bwrap"));
    } else if cfg!(target_os = "macos") {
        assert_eq!(kind, LoopSandbox::Seatbelt);
    } else {
        assert_eq!(kind, LoopSandbox::None);
    }
}

#[test]
fn git_runs_no_hook_through_the_empty_hooks_path() {
    let dir = tempfile::tempdir().unwrap();
    let git = |args: &[&str]| crate::office::tests::git_maybe(dir.path(), args);
    assert!(git(&["init", "-q"]).is_some());
    let hooks = dir.path().join(".git").join("hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    let hook = hooks.join("pre-commit");
    std::fs::write(&hook, "#!/bin/sh\nexit 1\n").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let off = format!("core.hooksPath={}", no_git_hooks());
    let with_hook = git(&["commit", "-q", "--allow-empty", "-m", "a"]);
    let without = git(&["-c", &off, "commit", "-q", "--allow-empty", "-m", "b"]);
    if cfg!(unix) {
        assert!(with_hook.is_none(), "the hook runs by default");
    }
    assert!(without.is_some(), "the empty hooks path runs none");
}

#[test]
fn the_sandbox_is_known_per_platform() {
    let r = sandbox_available();
    if cfg!(windows) {
        assert!(r.unwrap_err().contains("not on this system"));
    } else if let Err(why) = r {
        assert!(why.contains("sandbox"), "{why}");
    }
}
