//! Everything that differs between macOS, Linux and Windows lives here, behind `cfg`.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A command that runs `script` through the platform shell (`sh -c`, or `cmd /C`).
pub fn shell(script: &str) -> Command {
    #[cfg(windows)]
    {
        let mut c = Command::new("cmd");
        c.arg("/C").arg(script);
        c
    }
    #[cfg(not(windows))]
    {
        let mut c = Command::new("sh");
        c.arg("-c").arg(script);
        c
    }
}

/// Quotes one value for the platform shell, so a title with spaces or quotes stays one
/// argument when substituted into a template.
pub fn shell_quote(value: &str) -> String {
    #[cfg(windows)]
    {
        format!("\"{}\"", value.replace('"', "\"\""))
    }
    #[cfg(not(windows))]
    {
        if !value.is_empty()
            && value
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_./:=@+,".contains(&b))
        {
            value.to_string()
        } else {
            format!("'{}'", value.replace('\'', "'\\''"))
        }
    }
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
    let _ = cmd
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status();
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
}
