//! Who is running: this process's ancestors as the system's process table shows them,
//! and whether a path is hidden by a mount. The person proof reads both
//! (docs/decisions/0025-paths-a-command-creates-and-a-persons-verbs.md).

use std::path::{Path, PathBuf};
#[cfg(target_os = "macos")]
use std::process::Command;

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
pub(super) fn file_name(path: &str) -> String {
    path.rsplit(['/', '\\']).next().unwrap_or(path).to_string()
}

/// What `cmd` printed, if it succeeded within `budget`; it is killed when it runs over.
#[cfg(target_os = "macos")]
pub(super) fn output_within(
    cmd: &mut Command,
    budget: std::time::Duration,
) -> Result<String, String> {
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
pub(super) fn unescape_mount(field: &str) -> String {
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
