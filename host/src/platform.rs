//! Everything that differs between macOS, Linux and Windows lives here, behind `cfg`.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A command that runs `script` through the platform shell (`sh -c`, or `cmd /C`).
pub fn shell(script: &str) -> Command {
    #[cfg(windows)]
    {
        // cmd reads the rest of its command line as it is: quoted by Rust's rules for
        // C programs (`\"`), the script's own quotes would reach it mangled.
        use std::os::windows::process::CommandExt;
        let mut c = Command::new("cmd");
        c.arg("/C").raw_arg(script);
        c
    }
    #[cfg(not(windows))]
    {
        let mut c = Command::new("sh");
        c.arg("-c").arg(script);
        c
    }
}

/// Whether [`shell`] is Windows' `cmd` (whose "not recognized" message names a missing
/// program) rather than `sh`.
pub const SHELL_IS_CMD: bool = cfg!(windows);

/// The file names a program `name` may have on `PATH`: `name.exe` and `name.cmd` too on
/// Windows.
pub fn program_files(name: &str) -> Vec<String> {
    #[cfg(windows)]
    {
        vec![
            format!("{name}.exe"),
            format!("{name}.cmd"),
            name.to_string(),
        ]
    }
    #[cfg(not(windows))]
    {
        vec![name.to_string()]
    }
}

/// Whether `path` is a file this user may run: an execute bit on Unix, any file
/// elsewhere (Windows runs by extension, which [`program_files`] names).
pub fn is_executable(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        path.is_file()
    }
}

/// Quotes one value for the platform shell, so a title with spaces or quotes stays one
/// argument when substituted into a template.
pub fn shell_quote(value: &str) -> String {
    let plain = !value.is_empty()
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./:=@+,".contains(&b));
    if plain {
        return value.to_string();
    }
    #[cfg(windows)]
    {
        format!("\"{}\"", value.replace('"', "\"\""))
    }
    #[cfg(not(windows))]
    {
        format!("'{}'", value.replace('\'', "'\\''"))
    }
}

/// Whether wasmtime must register unwind information for the code it compiles: Windows'
/// ABI needs it (wasmtime refuses to run without it there); elsewhere the rooms leave
/// it out, which makes loading a room cheaper.
pub const UNWIND_INFO_REQUIRED: bool = cfg!(windows);

/// `path` made absolute with every link resolved, written as people and git write it: on
/// Windows without the `\\?\` prefix the system's own call adds (kept only where the
/// path can't be written without it).
pub fn canonicalize(path: &Path) -> std::io::Result<PathBuf> {
    dunce::canonicalize(path)
}

/// Where `hall` keeps per-user data (the repo registry). `HALL_DATA_DIR` overrides it,
/// which the tests use to seal their environment.
pub fn data_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("HALL_DATA_DIR") {
        return Some(PathBuf::from(d));
    }
    dirs::data_dir().map(|d| d.join("hallmark"))
}

/// Where `hall` keeps per-user configuration (user-level rooms, notify settings).
pub fn config_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("HALL_CONFIG_DIR") {
        return Some(PathBuf::from(d));
    }
    dirs::config_dir().map(|d| d.join("hallmark"))
}

/// Where `hall` keeps caches it can rebuild (precompiled rooms).
pub fn cache_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("HALL_CACHE_DIR") {
        return Some(PathBuf::from(d));
    }
    dirs::cache_dir().map(|d| d.join("hallmark"))
}

/// Where the loop keeps its own checkouts of frozen commits: under the user cache
/// directory, outside every repository's folder tree, so nothing that walks up from a
/// checkout (node's module resolution, a tool looking for `.venv`) reaches the main
/// checkout's installed dependencies. `cache` is Hallmark's cache directory (usually
/// [`cache_dir`]); the system's temporary directory stands in when there is none.
pub fn checkouts_dir(cache: Option<PathBuf>) -> PathBuf {
    cache
        .unwrap_or_else(|| std::env::temp_dir().join("hallmark"))
        .join("checkouts")
}

/// Whether process `pid` on this machine is known to have exited. Only Linux can say
/// without a system call (`/proc`); elsewhere the answer is "not known", and a lease
/// waits out its expiry instead.
pub fn process_gone(pid: u32) -> bool {
    #[cfg(target_os = "linux")]
    {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            // A zombie (state `Z`) has exited; it only waits for its parent to reap it.
            Ok(stat) => stat
                .rsplit_once(')')
                .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
            Err(_) => true,
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = pid;
        false
    }
}

/// When process `pid` started, as the system counts it (Linux: clock ticks since boot,
/// from `/proc`), to tell a process from a later one that got the same pid. `None`
/// where the system doesn't say cheaply; a caller then must not act on the pid.
pub fn process_start(pid: u32) -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // After the `(comm)` field: state is field 3, starttime field 22.
        let (_, rest) = stat.rsplit_once(')')?;
        rest.split_whitespace().nth(19)?.parse().ok()
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = pid;
        None
    }
}

/// Starts `cmd` as the leader of a process group of its own, so that it and everything
/// it starts can be stopped together ([`kill_process_group`]).
pub fn own_process_group(cmd: &mut Command) {
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
    }
    #[cfg(windows)]
    {
        use std::os::windows::process::CommandExt;
        const CREATE_NEW_PROCESS_GROUP: u32 = 0x0000_0200;
        cmd.creation_flags(CREATE_NEW_PROCESS_GROUP);
    }
}

/// Kills the process group led by `pid` (a process started with
/// [`own_process_group`]) and everything in it; on Windows, the process tree.
pub fn kill_process_group(pid: u32) {
    #[cfg(unix)]
    let mut cmd = {
        let mut c = Command::new("kill");
        c.args(["-KILL", "--", &format!("-{pid}")]);
        c
    };
    #[cfg(windows)]
    let mut cmd = {
        let mut c = Command::new("taskkill");
        c.args(["/T", "/F", "/PID", &pid.to_string()]);
        c
    };
    let quiet = |c: &mut Command| {
        c.stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
    };
    let done = quiet(&mut cmd).is_ok_and(|s| s.success());
    // A taskkill without `/T` (Wine's) refuses the tree: the process alone, then.
    #[cfg(windows)]
    if !done {
        let _ = quiet(Command::new("taskkill").args(["/F", "/PID", &pid.to_string()]));
    }
    #[cfg(not(windows))]
    let _ = done;
}

/// The most bytes one command-line argument may safely carry: Linux refuses a single
/// argument over 128 KiB, and Windows a whole command line over 32,767 characters.
pub fn max_arg_bytes() -> usize {
    #[cfg(windows)]
    {
        24 * 1024
    }
    #[cfg(not(windows))]
    {
        100 * 1024
    }
}

/// Starts `cmd` detached from this process's session and terminal, so it outlives the
/// shell that ran `hall daemon start`.
pub fn detach(cmd: &mut Command) {
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
    }
    #[cfg(windows)]
    {
        use std::os::windows::process::CommandExt;
        const DETACHED_PROCESS: u32 = 0x0000_0008;
        const CREATE_NEW_PROCESS_GROUP: u32 = 0x0000_0200;
        cmd.creation_flags(DETACHED_PROCESS | CREATE_NEW_PROCESS_GROUP);
    }
}

/// Creates `path` for writing, failing if it exists, readable by this user only where
/// the system has permissions (a private key).
pub fn create_private_file(path: &Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path)
}

/// Makes `dir` (and its parents), open to this user only where the system has
/// permissions.
pub fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

/// What identifies the file behind `meta`, to tell whether another process replaced it:
/// device and inode where there are such things, else size and modification time.
pub fn file_identity(meta: &std::fs::Metadata) -> Option<(u64, u64)> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        Some((meta.dev(), meta.ino()))
    }
    #[cfg(not(unix))]
    {
        let modified = meta.modified().ok()?;
        let nanos = modified
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0);
        Some((meta.len(), nanos))
    }
}

/// Shows `path` with the system's opener (`open` on macOS, `start` on Windows,
/// `xdg-open` elsewhere), or with the program `HALL_OPENER` names (the tests' stand-in),
/// which is given the path as its one argument. Waits for the opener, which returns
/// once it has handed the file on.
pub fn open_file(path: &Path) -> Result<(), String> {
    let (program, lead): (std::ffi::OsString, &[&str]) = match std::env::var_os("HALL_OPENER") {
        Some(p) if !p.is_empty() => (p, &[]),
        #[cfg(target_os = "macos")]
        _ => ("open".into(), &[]),
        #[cfg(windows)]
        _ => ("cmd".into(), &["/C", "start", ""]),
        #[cfg(not(any(target_os = "macos", windows)))]
        _ => ("xdg-open".into(), &[]),
    };
    let shown = program.to_string_lossy().to_string();
    let status = Command::new(&program)
        .args(lead)
        .arg(path)
        .status()
        .map_err(|e| format!("`{shown}` could not be started: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`{shown}` exited with {}", exit_code(&status)))
    }
}

/// A process's exit code as a shell reports it: 128 + the signal for one a signal
/// killed, where there are signals.
pub fn exit_code(status: &std::process::ExitStatus) -> i32 {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        status
            .code()
            .or_else(|| status.signal().map(|s| 128 + s))
            .unwrap_or(1)
    }
    #[cfg(not(unix))]
    {
        status.code().unwrap_or(1)
    }
}

/// Whether this machine can run Claude Code's sandbox: bubblewrap and socat on Linux,
/// Seatbelt on macOS; not on Windows (outside WSL2).
pub fn sandbox_available() -> Result<(), String> {
    #[cfg(target_os = "linux")]
    {
        let on_path = |p: &str| {
            std::env::var_os("PATH")
                .map(|path| std::env::split_paths(&path).any(|d| d.join(p).is_file()))
                .unwrap_or(false)
        };
        let missing: Vec<&str> = ["bwrap", "socat"]
            .into_iter()
            .filter(|p| !on_path(p))
            .collect();
        if missing.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "Claude Code's sandbox needs {} on Linux (Debian/Ubuntu: `apt install bubblewrap socat`)",
                missing.join(" and ")
            ))
        }
    }
    #[cfg(target_os = "macos")]
    {
        if Path::new("/usr/bin/sandbox-exec").is_file() {
            Ok(())
        } else {
            Err("Claude Code's sandbox needs /usr/bin/sandbox-exec (Seatbelt)".into())
        }
    }
    #[cfg(not(any(target_os = "linux", target_os = "macos")))]
    {
        Err("Claude Code's sandbox runs on Linux, WSL2 and macOS, not on this system".into())
    }
}

/// The first line a program printed, trimmed, when it succeeded: what `--version`
/// answers.
pub fn first_line(out: &std::process::Output) -> Option<String> {
    out.status.success().then(|| {
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .next()
            .unwrap_or("")
            .trim()
            .to_string()
    })
}

/// Sets `flag` when the process is asked to end (SIGTERM on Unix; the console closing on
/// Windows), so a loop that owns the terminal can give it back before it goes.
pub fn on_terminate(flag: std::sync::Arc<std::sync::atomic::AtomicBool>) {
    let _ = std::thread::Builder::new()
        .name("hall-terminate".into())
        .spawn(move || {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            rt.block_on(async move {
                #[cfg(unix)]
                let asked =
                    match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
                    {
                        Ok(mut s) => s.recv().await.is_some(),
                        Err(_) => false,
                    };
                #[cfg(windows)]
                let asked = match tokio::signal::windows::ctrl_close() {
                    Ok(mut s) => s.recv().await.is_some(),
                    Err(_) => false,
                };
                #[cfg(not(any(unix, windows)))]
                let asked = false;
                if asked {
                    flag.store(true, std::sync::atomic::Ordering::Relaxed);
                }
            });
        });
}

#[cfg(test)]
mod tests {
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
        let mut outside = Vec::new();
        let mut all_tests = String::new();
        for f in &files {
            let text = std::fs::read_to_string(f).expect("source");
            all_tests.push_str(&text);
            if f.ends_with("src/platform.rs") {
                continue;
            }
            let prod = production(f, &text);
            for (n, line) in prod.lines().enumerate() {
                // Canonical paths too: the system's own call writes `\\?\` on Windows.
                let canonical =
                    line.contains("fs::canonicalize") || line.contains(".canonicalize()");
                if canonical || PLATFORM_CFG.iter().any(|c| line.contains(c)) {
                    outside.push(format!("{}:{}: {}", f.display(), n + 1, line.trim()));
                }
            }
        }
        assert!(
            outside.is_empty(),
            "platform code outside platform.rs:\n{}",
            outside.join("\n")
        );
        // Every function here with a Windows or macOS branch is listed.
        let here = production(&root.join("src/platform.rs"), include_str!("platform.rs"));
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
    fn the_sandbox_is_known_per_platform() {
        let r = sandbox_available();
        if cfg!(windows) {
            assert!(r.unwrap_err().contains("not on this system"));
        } else if let Err(why) = r {
            assert!(why.contains("sandbox"), "{why}");
        }
    }
}
