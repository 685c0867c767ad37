//! Everything that differs between macOS, Linux and Windows lives here, behind `cfg`.
//! The few differences the crates below the host need (the rooms runtime's) are in
//! `hallmark_core::platform`, re-exported here, so this is still the one module to read.

use std::path::{Path, PathBuf};
use std::process::Command;

pub use hallmark_core::platform::{UNWIND_INFO_REQUIRED, create_private_dir};

mod processes;

pub use processes::*;

/// A command that runs `script` through the platform shell (`sh -c`, or `cmd /C`).
pub fn shell(script: &str) -> Command {
    #[cfg(windows)]
    {
        // cmd reads the rest of its command line as it is: quoted by Rust's rules for
        // C programs (`\"`), the script's own quotes would reach it mangled.
        use std::os::windows::process::CommandExt;
        let mut c = program("cmd");
        c.arg("/C").raw_arg(script);
        c
    }
    #[cfg(not(windows))]
    {
        let mut c = program("sh");
        c.arg("-c").arg(script);
        c
    }
}

/// The programs this process starts, pinned to absolute paths, and the `PATH` every
/// program it starts gets: set once, by the daemon at its start (see
/// `daemon::environment`), so that no later pass resolves a program through a `PATH`
/// or a directory an agent could have changed since.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Pinned {
    /// `PATH` for every child.
    pub path: std::ffi::OsString,
    /// Program name (`git`, `claude`…) to its absolute path.
    pub programs: std::collections::BTreeMap<String, PathBuf>,
}

static PINNED: std::sync::OnceLock<Pinned> = std::sync::OnceLock::new();

/// Pins this process's programs and `PATH` (the first call wins; later ones are
/// refused, so nothing can re-point them once the loop runs).
pub fn pin(pinned: Pinned) -> Result<(), Pinned> {
    PINNED.set(pinned)
}

/// What [`pin`] set, if anything.
pub fn pinned() -> Option<&'static Pinned> {
    PINNED.get()
}

/// A command for the program `name`: its pinned absolute path with the pinned `PATH`
/// when [`pin`] was called, else `name` as it is (found on `PATH` when it runs).
pub fn program(name: &str) -> Command {
    match PINNED.get() {
        Some(p) => {
            let mut cmd = Command::new(
                p.programs
                    .get(name)
                    .map_or_else(|| name.into(), |exe| exe.as_os_str().to_owned()),
            );
            cmd.env("PATH", &p.path);
            cmd
        }
        None => Command::new(name),
    }
}

/// The first file on `path` that runs as `name` (see [`program_files`]).
pub fn find_program(name: &str, path: &std::ffi::OsStr) -> Option<PathBuf> {
    if Path::new(name).is_absolute() {
        return is_executable(Path::new(name)).then(|| PathBuf::from(name));
    }
    std::env::split_paths(path).find_map(|dir| {
        program_files(name)
            .into_iter()
            .map(|f| dir.join(f))
            .find(|f| is_executable(f))
    })
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

/// The sandbox that confines what the loop runs on an item's code (its checks, setup,
/// merge checks, a fix engine): bubblewrap on Linux, Seatbelt on macOS, none elsewhere.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoopSandbox {
    Bubblewrap,
    Seatbelt,
    /// No sandbox the loop can drive on this system (Windows).
    None,
}

/// Which [`LoopSandbox`] this platform has, and where its program usually lives.
pub fn loop_sandbox() -> (LoopSandbox, &'static str) {
    #[cfg(target_os = "linux")]
    {
        (LoopSandbox::Bubblewrap, "bwrap")
    }
    #[cfg(target_os = "macos")]
    {
        (LoopSandbox::Seatbelt, "/usr/bin/sandbox-exec")
    }
    #[cfg(not(any(target_os = "linux", target_os = "macos")))]
    {
        (LoopSandbox::None, "")
    }
}

/// A `core.hooksPath` that holds no hooks, so a git command the loop runs never runs a
/// hook (one an item's branch could have written, through a relative `core.hooksPath`).
pub fn no_git_hooks() -> &'static str {
    #[cfg(windows)]
    {
        "NUL"
    }
    #[cfg(not(windows))]
    {
        "/dev/null"
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
mod tests;
