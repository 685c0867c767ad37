//! Whether a person runs this process: the proof a person's verbs require.
//!
//! A verdict, an answer, a retry, a budget grant, the settings, a web token and the
//! daemon are a person's to give. The agent they are given against has Bash and the
//! user's rights, so nothing it can set or spell may stand in for the person: not an
//! environment variable (it can unset `CLAUDECODE`), not a flag, not a file in a
//! repository. What it can't change is what the operating system says about the process:
//!
//! - its ancestors in the process table: a process started, however indirectly, by an
//!   agent CLI (`claude`, `codex`, …, or node running one of their packages), by a
//!   sandbox (`bwrap`) or by the loop (`hall daemon run`) is not a person's;
//! - the person's private directory (the user config directory, with the signing key):
//!   every confined process has it hidden (Claude Code's sandbox mounts an empty tmpfs
//!   over it on Linux and refuses the read on macOS; the loop's own sandbox for checks
//!   does the same), so a process that can't read it is not a person's, whatever its
//!   ancestry looks like from inside.
//!
//! `HALL_ACTOR` (the loop's roles) and `CLAUDECODE` are checked too, but only ever to
//! refuse: their absence proves nothing. [`Person`] can only be made by [`check`], and
//! every command that acts as a person asks for one (see
//! docs/decisions/0023-a-person-is-proven-by-the-process-table.md).

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::platform::Ancestor;

/// Agent CLIs, by the file name of their executable or script (a `.exe`, `.cmd` or
/// `.js` suffix aside, case aside). One list: the process walk and its tests read it.
pub const AGENT_PROGRAMS: &[&str] = &[
    "claude",
    "codex",
    "gemini",
    "aider",
    "opencode",
    "cursor-agent",
    "goose",
];

/// The packages those CLIs are installed as, for an interpreter running one by path
/// (`node …/node_modules/@anthropic-ai/claude-code/cli.js`).
pub const AGENT_PACKAGES: &[&str] = &[
    "@anthropic-ai/claude-code",
    "@openai/codex",
    "@google/gemini-cli",
    "opencode-ai",
    "aider-chat",
];

/// Programs that confine what they run: a process below one is sandboxed.
pub const CONFINERS: &[&str] = &["bwrap"];

/// Interpreters whose script is the program that matters.
const INTERPRETERS: &[&str] = &[
    "node", "nodejs", "bun", "deno", "python", "python3", "pythonw", "py",
];

/// How many ancestors are read: more than any shell nesting a person types, and a
/// bound on the walk.
pub const MAX_DEPTH: usize = 64;

/// How long the walk may take before it counts as unreadable (a few file reads on
/// Linux; two `ps` runs on macOS).
pub const BUDGET: Duration = Duration::from_millis(1500);

/// Proof that a person runs this process. Only [`check`] makes one (and, in unit tests,
/// [`Person::for_tests`]).
#[derive(Clone, Debug)]
pub struct Person {
    _proven: (),
}

impl Person {
    /// A proof for unit tests of the commands that need one.
    #[cfg(test)]
    pub fn for_tests() -> Person {
        Person { _proven: () }
    }
}

/// Why this process is not shown to be a person's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NotAPerson {
    /// `HALL_ACTOR` names one of the loop's roles.
    Role(String),
    /// `CLAUDECODE` is set: Claude Code started it.
    ClaudeCode,
    /// An ancestor runs an agent CLI.
    Agent { program: String, pid: u32 },
    /// An ancestor confines it (a sandbox).
    Sandboxed { program: String, pid: u32 },
    /// An ancestor is the loop itself.
    Loop { pid: u32 },
    /// The person's private directory (or the key in it) can't be read from here.
    Hidden { path: PathBuf, why: String },
    /// The process table could not be read, so nothing is proven.
    Unknown(String),
}

impl std::fmt::Display for NotAPerson {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotAPerson::Role(r) => write!(f, "it runs as the loop's {r} (HALL_ACTOR)"),
            NotAPerson::ClaudeCode => write!(f, "it runs inside Claude Code (CLAUDECODE is set)"),
            NotAPerson::Agent { program, pid } => {
                write!(f, "it was started by an agent: `{program}` (pid {pid})")
            }
            NotAPerson::Sandboxed { program, pid } => {
                write!(f, "it runs in a sandbox: `{program}` (pid {pid})")
            }
            NotAPerson::Loop { pid } => {
                write!(
                    f,
                    "it was started by the loop: `hall daemon run` (pid {pid})"
                )
            }
            NotAPerson::Hidden { path, why } => write!(
                f,
                "your private directory {} can't be read from here ({why}), as in a sandbox",
                path.display()
            ),
            NotAPerson::Unknown(why) => write!(f, "its parent processes can't be read: {why}"),
        }
    }
}

/// The proof, checked against this process: `HALL_ACTOR`, `CLAUDECODE`, its ancestors
/// in the process table and the user config directory.
pub fn check() -> Result<Person, NotAPerson> {
    if let Some(role) = std::env::var("HALL_ACTOR")
        .ok()
        .map(|a| a.trim().to_string())
        .filter(|a| !a.is_empty())
    {
        return Err(NotAPerson::Role(role));
    }
    if std::env::var_os("CLAUDECODE").is_some() {
        return Err(NotAPerson::ClaudeCode);
    }
    let ancestors = crate::platform::ancestors(MAX_DEPTH, BUDGET).map_err(NotAPerson::Unknown)?;
    if let Some(why) = ancestors.iter().find_map(not_a_persons) {
        return Err(why);
    }
    let dir = crate::platform::config_dir().ok_or_else(|| NotAPerson::Hidden {
        path: PathBuf::from("~/.config/hallmark"),
        why: "there is no user config directory".into(),
    })?;
    readable(&dir)?;
    Ok(Person { _proven: () })
}

/// Why `a` disqualifies the processes below it, if it does.
pub fn not_a_persons(a: &Ancestor) -> Option<NotAPerson> {
    let names = names(a);
    let is = |list: &[&str]| names.iter().find(|n| list.contains(&n.as_str())).cloned();
    if let Some(program) = is(AGENT_PROGRAMS) {
        return Some(NotAPerson::Agent {
            program,
            pid: a.pid,
        });
    }
    let interpreted = names.iter().any(|n| INTERPRETERS.contains(&n.as_str()))
        || names.iter().any(|n| n.starts_with("python3."));
    if interpreted {
        // The script it runs: the first argument that is not an option, and any
        // argument naming an agent's package.
        let script = a.args.iter().skip(1).find(|x| !x.starts_with('-'));
        if let Some(program) = script
            .map(|s| normalized(s))
            .filter(|s| AGENT_PROGRAMS.contains(&s.as_str()))
        {
            return Some(NotAPerson::Agent {
                program,
                pid: a.pid,
            });
        }
        if let Some(package) = AGENT_PACKAGES.iter().find(|p| {
            a.args
                .iter()
                .any(|x| x.replace('\\', "/").contains(&format!("{p}/")))
        }) {
            return Some(NotAPerson::Agent {
                program: package.to_string(),
                pid: a.pid,
            });
        }
    }
    if let Some(program) = is(CONFINERS) {
        return Some(NotAPerson::Sandboxed {
            program,
            pid: a.pid,
        });
    }
    let hall = names.iter().any(|n| n == "hall");
    let daemon = a.args.windows(2).any(|w| w[0] == "daemon" && w[1] == "run");
    if hall && daemon {
        return Some(NotAPerson::Loop { pid: a.pid });
    }
    None
}

/// The names a process goes by: the system's, its executable's and `argv[0]`'s file
/// names, each [`normalized`].
fn names(a: &Ancestor) -> Vec<String> {
    let mut out = vec![normalized(&a.name)];
    if let Some(exe) = &a.exe {
        out.push(normalized(&exe.to_string_lossy()));
    }
    if let Some(first) = a.args.first() {
        out.push(normalized(first));
    }
    out.retain(|n| !n.is_empty());
    out.dedup();
    out
}

/// A program's file name, lowercased, without its directory or a Windows or script
/// suffix, and without Linux's ` (deleted)` mark for a replaced executable.
fn normalized(path: &str) -> String {
    let path = path.strip_suffix(" (deleted)").unwrap_or(path);
    let name = path
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or(path)
        .to_lowercase();
    let mut name = name.as_str();
    for suffix in [".exe", ".cmd", ".bat", ".ps1", ".cjs", ".mjs", ".js"] {
        if let Some(stem) = name.strip_suffix(suffix) {
            name = stem;
            break;
        }
    }
    name.to_string()
}

/// Whether the person's private directory `dir` and the signing key it names can be
/// read from here. A directory that doesn't exist yet is made (a sandbox can't).
pub fn readable(dir: &Path) -> Result<(), NotAPerson> {
    let hidden = |path: &Path, why: String| NotAPerson::Hidden {
        path: path.to_path_buf(),
        why,
    };
    if !dir.exists() {
        crate::platform::create_private_dir(dir)
            .map_err(|e| hidden(dir, format!("it doesn't exist and can't be made: {e}")))?;
    }
    std::fs::read_dir(dir).map_err(|e| hidden(dir, e.to_string()))?;
    let real = crate::platform::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    if crate::platform::hidden_by_mount(&real) {
        return Err(hidden(
            dir,
            "an empty file system is mounted over it".into(),
        ));
    }
    let (key, _) = crate::sign::key_path(dir);
    match std::fs::metadata(&key) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(hidden(&key, e.to_string())),
        Ok(m) if !m.is_file() => Err(hidden(&key, "it is not a file here".into())),
        Ok(_) => {
            std::fs::File::open(&key).map_err(|e| hidden(&key, e.to_string()))?;
            let real = crate::platform::canonicalize(&key).unwrap_or(key.clone());
            if crate::platform::hidden_by_mount(&real) {
                return Err(hidden(&key, "something is mounted over it".into()));
            }
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn process(name: &str, exe: Option<&str>, args: &[&str]) -> Ancestor {
        Ancestor {
            pid: 42,
            name: name.into(),
            exe: exe.map(PathBuf::from),
            args: args.iter().map(|a| a.to_string()).collect(),
        }
    }

    #[test]
    fn an_agent_cli_is_known_by_any_of_its_names() {
        let cases = [
            // The native Claude Code binary, as npm installs it (`bin/claude.exe`).
            process(
                "claude",
                Some("/usr/lib/node_modules/@anthropic-ai/claude-code/bin/claude.exe"),
                &["claude", "-p", "x"],
            ),
            // A copy renamed on disk still runs under the name it was started by.
            process(
                "claude",
                Some("/tmp/x/sh"),
                &["claude", "-c", "hall verdict"],
            ),
            process(
                "node",
                Some("/usr/bin/node"),
                &[
                    "node",
                    "--no-warnings",
                    "/home/a/.npm/node_modules/@anthropic-ai/claude-code/cli.js",
                ],
            ),
            process(
                "node",
                Some("/usr/bin/node"),
                &["node", "/usr/local/bin/codex"],
            ),
            process(
                "python3.12",
                Some("/usr/bin/python3.12"),
                &["python3", "/home/a/.local/bin/aider", "--yes"],
            ),
            process("Gemini.exe", None, &["C:\\tools\\gemini.exe"]),
            process("cursor-agent", None, &["cursor-agent"]),
            process("goose", None, &[]),
            process("bun", None, &["bun", "x", "opencode-ai/bin/opencode"]),
        ];
        for a in &cases {
            assert!(
                matches!(not_a_persons(a), Some(NotAPerson::Agent { pid: 42, .. })),
                "{a:?}"
            );
        }
    }

    #[test]
    fn a_sandbox_and_the_loop_disqualify_what_they_start() {
        assert!(matches!(
            not_a_persons(&process("bwrap", None, &["bwrap", "--new-session"])),
            Some(NotAPerson::Sandboxed { .. })
        ));
        assert!(matches!(
            not_a_persons(&process(
                "hall",
                Some("/home/a/.cargo/bin/hall"),
                &["hall", "daemon", "run"]
            )),
            Some(NotAPerson::Loop { pid: 42 })
        ));
    }

    #[test]
    fn a_persons_own_processes_pass() {
        for a in [
            process("bash", Some("/usr/bin/bash"), &["-bash"]),
            process("zsh", Some("/bin/zsh"), &["zsh"]),
            process("tmux: server", Some("/usr/bin/tmux"), &["tmux"]),
            process("node", Some("/usr/bin/node"), &["node", "server.js"]),
            process("python3", None, &["python3", "-m", "http.server"]),
            process("hall", None, &["hall", "daemon", "start"]),
            process("hall", None, &["hall", "web"]),
            process("systemd", Some("/usr/lib/systemd/systemd"), &["/sbin/init"]),
            // A program whose name only contains an agent's.
            process("claudette", None, &["claudette"]),
            process("sshd", None, &["sshd: ada@pts/0"]),
        ] {
            assert_eq!(not_a_persons(&a), None, "{a:?}");
        }
    }

    #[test]
    fn a_hidden_private_directory_is_no_persons() {
        let dir = tempfile::tempdir().expect("tempdir");
        let config = dir.path().join("hallmark");
        // Missing: made, then readable.
        assert_eq!(readable(&config), Ok(()));
        assert!(config.is_dir());
        // A key that can be read.
        std::fs::write(config.join(crate::sign::KEY_FILE), "key").expect("key");
        assert_eq!(readable(&config), Ok(()));
        // A key that is not a file (a sandbox binds /dev/null over it).
        std::fs::remove_file(config.join(crate::sign::KEY_FILE)).expect("rm");
        std::fs::create_dir(config.join(crate::sign::KEY_FILE)).expect("mkdir");
        assert!(matches!(readable(&config), Err(NotAPerson::Hidden { .. })));
        // A directory that can't be made (its parent is a file).
        let blocked = dir.path().join("file");
        std::fs::write(&blocked, "").expect("file");
        assert!(matches!(
            readable(&blocked.join("hallmark")),
            Err(NotAPerson::Hidden { .. })
        ));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_walk_reads_this_test_s_own_parents() {
        let a = crate::platform::ancestors(MAX_DEPTH, BUDGET).expect("the table reads");
        assert!(!a.is_empty(), "the test runner has a parent");
        assert_eq!(a[0].pid, std::os::unix::process::parent_id());
        assert!(!a[0].name.is_empty());
    }
}
