//! Everything that differs between macOS, Linux and Windows lives here, behind `cfg`.
//! The few differences the crates below the host need (the rooms runtime's) are in
//! `hallmark_core::platform`, re-exported here, so this is still the one module to read.

use std::path::{Path, PathBuf};
use std::process::Command;

pub use hallmark_core::platform::{UNWIND_INFO_REQUIRED, create_private_dir};

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

/// One process above this one, as the system's process table shows it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Ancestor {
    pub pid: u32,
    /// The name the system keeps for it: Linux's `comm` (the executable's file name as
    /// it was run, at most 15 bytes), elsewhere the executable's file name.
    pub name: String,
    /// Its executable, where the system says (an unreadable or deleted one is `None`).
    pub exe: Option<PathBuf>,
    /// Its command line, `argv[0]` first (split at spaces where the system joins them).
    pub args: Vec<String>,
}

/// This process's parent, grandparent and so on, nearest first, read from the system's
/// process table: at most `depth` of them, within `budget`. `Err` says why the table
/// could not be read (or not in time); the walk ends early, without an error, at the
/// first process, or at an ancestor that exited while it was read.
pub fn ancestors(depth: usize, budget: std::time::Duration) -> Result<Vec<Ancestor>, String> {
    let started = std::time::Instant::now();
    #[cfg(target_os = "linux")]
    {
        let mut out = Vec::new();
        let mut pid = std::os::unix::process::parent_id();
        while pid > 0 && out.len() < depth {
            if started.elapsed() > budget {
                return Err(format!(
                    "the process table took longer than {} ms to read",
                    budget.as_millis()
                ));
            }
            let stat = match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
                Ok(s) => s,
                Err(_) if !out.is_empty() => break,
                Err(e) => return Err(format!("/proc/{pid}/stat can't be read: {e}")),
            };
            let Some((name, ppid)) = parse_stat(&stat) else {
                return Err(format!("/proc/{pid}/stat is not what Linux writes"));
            };
            let args = std::fs::read(format!("/proc/{pid}/cmdline"))
                .map(|b| {
                    b.split(|c| *c == 0)
                        .filter(|a| !a.is_empty())
                        .map(|a| String::from_utf8_lossy(a).into_owned())
                        .collect()
                })
                .unwrap_or_default();
            let exe = std::fs::read_link(format!("/proc/{pid}/exe")).ok();
            out.push(Ancestor {
                pid,
                name,
                exe,
                args,
            });
            if pid == 1 {
                break;
            }
            pid = ppid;
        }
        Ok(out)
    }
    #[cfg(target_os = "macos")]
    {
        // Two reads of the whole table (the command lines, then the executables), each
        // bounded: `ps` is the system's own reader, and no call of ours needs `unsafe`.
        let args = output_within(
            Command::new("ps").args(["-axww", "-o", "pid=,ppid=,args="]),
            budget,
        )?;
        let comms = output_within(Command::new("ps").args(["-ax", "-o", "pid=,comm="]), budget)?;
        let table = parse_ps(&args, &comms);
        let _ = started;
        Ok(walk_table(
            &table,
            std::os::unix::process::parent_id(),
            depth,
        ))
    }
    #[cfg(windows)]
    {
        use sysinfo::{ProcessRefreshKind, ProcessesToUpdate, System, UpdateKind};
        let mut system = System::new().map_err(|e| e.to_string())?;
        system.refresh_processes_specifics(
            ProcessesToUpdate::All,
            true,
            ProcessRefreshKind::nothing()
                .with_exe(UpdateKind::Always)
                .with_cmd(UpdateKind::Always),
        );
        if started.elapsed() > budget {
            return Err(format!(
                "the process table took longer than {} ms to read",
                budget.as_millis()
            ));
        }
        let me = sysinfo::get_current_pid().map_err(|e| e.to_string())?;
        let mut out = Vec::new();
        let mut next = system.process(me).and_then(|p| p.parent());
        while let Some(pid) = next {
            if out.len() >= depth {
                break;
            }
            let Some(p) = system.process(pid) else { break };
            out.push(Ancestor {
                pid: pid.as_u32(),
                name: p.name().to_string_lossy().into_owned(),
                exe: p.exe().map(Path::to_path_buf),
                args: p
                    .cmd()
                    .iter()
                    .map(|a| a.to_string_lossy().into_owned())
                    .collect(),
            });
            // A parent id Windows reuses can point at a later process: stop at a loop.
            next = p
                .parent()
                .filter(|pp| !out.iter().any(|a| a.pid == pp.as_u32()));
        }
        Ok(out)
    }
    #[cfg(not(any(target_os = "linux", target_os = "macos", windows)))]
    {
        let _ = (depth, budget, started);
        Err("this system's process table is not read by hall".into())
    }
}

/// The name and parent of a Linux `/proc/<pid>/stat` line: the name is between the
/// first `(` and the last `)` (it may hold either), the parent is the second field
/// after it.
pub fn parse_stat(stat: &str) -> Option<(String, u32)> {
    let open = stat.find('(')?;
    let close = stat.rfind(')')?;
    let name = stat.get(open + 1..close)?.to_string();
    let ppid = stat
        .get(close + 1..)?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()?;
    Some((name, ppid))
}

/// A process table read whole (macOS): each process by pid, with its parent's pid.
pub type ProcessTable = std::collections::HashMap<u32, (u32, Ancestor)>;

/// The processes of `ps -o pid=,ppid=,args=` and `ps -o pid=,comm=` output.
pub fn parse_ps(args: &str, comms: &str) -> ProcessTable {
    let mut table = ProcessTable::new();
    for line in args.lines() {
        let mut words = line.split_whitespace();
        let (Some(pid), Some(ppid)) = (
            words.next().and_then(|w| w.parse::<u32>().ok()),
            words.next().and_then(|w| w.parse::<u32>().ok()),
        ) else {
            continue;
        };
        let args: Vec<String> = words.map(str::to_string).collect();
        let name = args.first().map(|a| file_name(a)).unwrap_or_default();
        table.insert(
            pid,
            (
                ppid,
                Ancestor {
                    pid,
                    name,
                    exe: None,
                    args,
                },
            ),
        );
    }
    for line in comms.lines() {
        let line = line.trim_start();
        let Some((pid, comm)) = line.split_once(char::is_whitespace) else {
            continue;
        };
        let (Ok(pid), comm) = (pid.parse::<u32>(), comm.trim()) else {
            continue;
        };
        if let Some((_, a)) = table.get_mut(&pid)
            && !comm.is_empty()
        {
            a.name = file_name(comm);
            a.exe = comm.starts_with('/').then(|| PathBuf::from(comm));
        }
    }
    table
}

/// The ancestors of a process whose parent is `parent`, from a table [`parse_ps`] read.
pub fn walk_table(table: &ProcessTable, parent: u32, depth: usize) -> Vec<Ancestor> {
    let mut out: Vec<Ancestor> = Vec::new();
    let mut pid = parent;
    while pid > 0 && out.len() < depth && !out.iter().any(|a| a.pid == pid) {
        let Some((ppid, a)) = table.get(&pid) else {
            break;
        };
        out.push(a.clone());
        if pid == 1 {
            break;
        }
        pid = *ppid;
    }
    out
}

/// The last component of a `/`- or `\`-separated path.
fn file_name(path: &str) -> String {
    path.rsplit(['/', '\\']).next().unwrap_or(path).to_string()
}

/// What `cmd` printed, if it succeeded within `budget`; it is killed when it runs over.
#[cfg(target_os = "macos")]
fn output_within(cmd: &mut Command, budget: std::time::Duration) -> Result<String, String> {
    use std::io::Read;
    let mut child = cmd
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map_err(|e| format!("`ps` could not be started: {e}"))?;
    let mut stdout = child.stdout.take();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        if let Some(out) = stdout.as_mut() {
            let _ = out.read_to_string(&mut text);
        }
        text
    });
    let deadline = std::time::Instant::now() + budget;
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => break,
            Ok(Some(status)) => return Err(format!("`ps` exited with {status}")),
            Ok(None) if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("`ps` took longer than {} ms", budget.as_millis()));
            }
            Err(e) => return Err(format!("`ps` could not be waited for: {e}")),
        }
    }
    reader
        .join()
        .map_err(|_| "`ps`'s output could not be read".to_string())
}

/// Whether something is mounted over `path` that hides what is there: a tmpfs (or
/// ramfs) mounted on a directory, or a device node bound over a file, as a sandbox does
/// to keep a process from reading it (Claude Code's bubblewrap does both). Only Linux
/// says, through `/proc/self/mountinfo`; elsewhere nothing is known to be mounted over
/// (macOS's sandbox refuses the read itself, which the caller sees as an error).
pub fn hidden_by_mount(path: &Path) -> bool {
    #[cfg(target_os = "linux")]
    {
        // Something mounted on `path` gives it another device than its parent's: only
        // then is the mount table read.
        use std::os::unix::fs::MetadataExt;
        let device = |p: &Path| std::fs::metadata(p).map(|m| m.dev()).ok();
        if let Some(parent) = path.parent()
            && device(path).is_some()
            && device(path) == device(parent)
        {
            return false;
        }
        std::fs::read_to_string("/proc/self/mountinfo")
            .is_ok_and(|table| mounted_over(&table, path))
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = path;
        false
    }
}

/// Whether the Linux mount table `table` (`/proc/self/mountinfo`'s text) has a hiding
/// mount at `path` (see [`hidden_by_mount`]).
pub fn mounted_over(table: &str, path: &Path) -> bool {
    let wanted = path.to_string_lossy();
    table.lines().any(|line| {
        // id parent major:minor root mount-point options [optional…] - type source …
        let Some((left, right)) = line.split_once(" - ") else {
            return false;
        };
        let fields: Vec<&str> = left.split(' ').collect();
        let (Some(root), Some(point)) = (fields.get(3), fields.get(4)) else {
            return false;
        };
        let fstype = right.split(' ').next().unwrap_or("");
        let hides = matches!(fstype, "tmpfs" | "ramfs") || (fstype == "devtmpfs" && *root != "/");
        hides && unescape_mount(point) == wanted
    })
}

/// A mount point as mountinfo writes it: space, tab, newline and backslash as `\ooo`.
fn unescape_mount(field: &str) -> String {
    let mut out = String::new();
    let mut chars = field.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            let code: String = chars.clone().take(3).collect();
            if code.len() == 3
                && let Ok(n) = u8::from_str_radix(&code, 8)
            {
                out.push(n as char);
                for _ in 0..3 {
                    chars.next();
                }
                continue;
            }
        }
        out.push(c);
    }
    out
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
        // Every function here, or in the core's part re-exported here, with a Windows or
        // macOS branch is listed.
        let here = production(&root.join("src/platform.rs"), include_str!("platform.rs"))
            + &production(
                &root.join("core/src/platform.rs"),
                include_str!("../core/src/platform.rs"),
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
}
