//! Confinement at the operating system: what a Claude Code session (or a headless run)
//! may write, read and reach, expressed as Claude Code settings.
//!
//! The hooks judge commands by their text, which a determined agent can hide. Claude
//! Code's sandbox (bubblewrap on Linux, Seatbelt on macOS) runs every Bash command in a
//! namespace where writes outside the allowed places fail at the operating system,
//! whatever the spelling. These settings make that sandbox keep a session off
//! everything the hallmark depends on:
//!
//! - git's own files that a commit doesn't need: hooks and config (the sandbox protects
//!   those itself), notes, replacement and remote-tracking refs, `packed-refs`, the base
//!   branch, the main checkout's HEAD and index, `info/`, submodules, other worktrees'
//!   administrative directories, and the journal;
//! - every local remote's directory (the main checkout is not writable to begin with:
//!   only the session's own directory is);
//! - Hallmark's own directories, whose signing key can't even be read;
//! - the network, except the repository's `[sandbox] domains`.
//!
//! The same paths are denied to the file tools as `Edit(//…)` rules, which hold even in
//! `bypassPermissions` mode. The `hall` verbs a session needs run outside the sandbox
//! (they write the journal), and only those verbs: none of them runs code the agent
//! chooses. The settings must be given with `--settings` (or managed settings): only
//! there does `allowUnsandboxedCommands: false` make Claude Code ignore the looser
//! sandbox settings a project or local file could add. See docs/security.md for what
//! was measured against Claude Code 2.1.332.
//!
//! Three submodules hold the rest: `run` gives a headless Claude Code run its
//! `--settings`, `jail` runs an item's own code (setup, the checks, another fix engine)
//! in the platform's sandbox, and `secrets` lists what neither may see.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::git::Repo;

mod jail;
mod run;
mod secrets;

pub use jail::{Jail, JailedCommand, Phase, loop_confined_by_user, network_allowed};
pub use run::{RunKind, run_settings};

/// The `hall` verbs a confined session runs outside the sandbox. Each only records what
/// the agent says or reads the journal; none starts a program the agent chooses.
pub const HALL_VERBS: &[&str] = &[
    "hall propose-ready *",
    "hall ask *",
    "hall fixed",
    "hall fixed *",
    "hall status",
    "hall status *",
    "hall log",
    "hall log *",
    // Not `hall inbox *`, which would let `hall inbox 1 --dismiss` run unsandboxed.
    "hall inbox",
    "hall inbox --all",
    "hall inbox --notices",
    "hall findings",
    "hall findings *",
    "hall usage",
    "hall usage *",
    "hall pull-back",
    "hall pull-back *",
    "hall help *",
    "hall schema *",
];

/// Names the sandbox mounts over with empty placeholders when they don't exist in the
/// session's directory; `git add -A` must not pick those up.
const PLACEHOLDERS: &[&str] = &[
    ".bashrc",
    ".bash_profile",
    ".zshrc",
    ".zprofile",
    ".profile",
    ".gitconfig",
    ".gitmodules",
    ".ripgreprc",
    ".mcp.json",
    ".vscode",
    ".idea",
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".claude/commands",
    ".claude/agents",
];

/// Where a confined session or run works.
pub struct Scope<'a> {
    pub repo: &'a Repo,
    /// The checkout it runs in (an item's worktree, a loop checkout, the main checkout).
    pub checkout: &'a Path,
    /// The base branch.
    pub base: &'a str,
    /// Network domains it may reach (`[sandbox] domains`).
    pub domains: &'a [String],
}

/// Every local path the repository's remotes name (a bare `origin` on disk).
pub fn local_remotes(repo: &Repo) -> Vec<PathBuf> {
    crate::git::local_remotes(&repo.main_root)
        .into_iter()
        .map(|(_, path)| path)
        .collect()
}

/// The paths of `repo` no confined session may write, wherever it runs: the git common
/// directory's journal, refs a commit doesn't need, the base branch, the main checkout's
/// HEAD and index, hooks and config, and every local remote.
pub fn repo_denied_writes(repo: &Repo, base: &str) -> Vec<PathBuf> {
    let common = &repo.common_dir;
    let mut deny: Vec<PathBuf> = [
        "hallmark",
        "refs/notes",
        "refs/replace",
        "refs/remotes",
        "packed-refs",
        "HEAD",
        "index",
        "info",
        "modules",
        "shallow",
        "hooks",
        "config",
    ]
    .iter()
    .map(|p| common.join(p))
    .collect();
    deny.push(common.join("refs/heads").join(base));
    deny
}

/// Hallmark's own directories: the user config (with the signing key), data and cache
/// directories.
pub fn own_dirs() -> Vec<PathBuf> {
    [
        crate::platform::config_dir(),
        crate::platform::data_dir(),
        crate::platform::cache_dir(),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// The paths a confined session may not write, as absolute paths.
pub fn denied_writes(scope: &Scope<'_>) -> Vec<PathBuf> {
    let common = &scope.repo.common_dir;
    let mut deny = repo_denied_writes(scope.repo, scope.base);
    // Other worktrees' administrative directories: their HEAD and index.
    let own = std::fs::read_to_string(scope.checkout.join(".git"))
        .ok()
        .and_then(|t| {
            t.trim()
                .strip_prefix("gitdir:")
                .map(|g| PathBuf::from(g.trim()))
        });
    if let Ok(entries) = std::fs::read_dir(common.join("worktrees")) {
        for e in entries.flatten() {
            if own.as_deref() != Some(e.path().as_path()) {
                deny.push(e.path());
            }
        }
    }
    // The main checkout's files are outside the places the sandbox lets a session write
    // anyway; denying the directory would also deny its `.git`, which commits need.
    deny.extend(local_remotes(scope.repo));
    deny.extend(own_dirs());
    deny
}

/// The paths a confined session may not read: the signing key and where it lives.
pub fn denied_reads() -> Vec<PathBuf> {
    let mut v = Vec::new();
    if let Some(dir) = crate::platform::config_dir() {
        v.push(crate::sign::key_path(&dir).0);
        v.push(dir);
    }
    v
}

/// Claude Code's rule syntax for an absolute path: `//abs/path`.
fn rule_path(p: &Path) -> String {
    format!("/{}", p.display())
}

/// `Edit` rules for each path and everything under it.
fn edit_rules(paths: &[PathBuf]) -> Vec<String> {
    let mut rules = Vec::new();
    for p in paths {
        rules.push(format!("Edit({})", rule_path(p)));
        rules.push(format!("Edit({}/**)", rule_path(p)));
    }
    rules
}

/// The user's files no session's file tools may write: Claude Code's settings, git's and
/// the shell's configuration, SSH, and the directory of this `hall`.
fn home_rules() -> Vec<String> {
    let mut rules = Vec::new();
    if let Some(home) = dirs::home_dir() {
        let files: Vec<PathBuf> = [
            ".claude",
            ".claude.json",
            ".gitconfig",
            ".config/git",
            ".ssh",
            ".bashrc",
            ".profile",
            ".zshrc",
        ]
        .iter()
        .map(|f| home.join(f))
        .collect();
        rules.extend(edit_rules(&files));
    }
    if let Ok(exe) = std::env::current_exe()
        && let Some(dir) = exe.parent()
    {
        rules.push(format!("Edit({}/**)", rule_path(dir)));
    }
    rules
}

/// `Read` rules for the paths no session may read.
fn read_rules(reads: &[PathBuf]) -> Vec<String> {
    let mut rules = Vec::new();
    for p in reads {
        rules.push(format!("Read({})", rule_path(p)));
        rules.push(format!("Read({}/**)", rule_path(p)));
    }
    rules
}

fn shown(v: &[PathBuf]) -> Vec<String> {
    v.iter().map(|p| p.display().to_string()).collect()
}

/// The sandbox and permission settings for a session or run in `scope`. `extra_write`
/// adds writable places (a headless run's temp and run directories).
pub fn settings(scope: &Scope<'_>, extra_write: &[PathBuf]) -> Value {
    let denied = denied_writes(scope);
    let reads = denied_reads();
    let mut deny_rules = edit_rules(&denied);
    deny_rules.extend(edit_rules(&[
        scope.checkout.join(".git"),
        scope.checkout.join(".claude"),
    ]));
    deny_rules.extend(home_rules());
    deny_rules.extend(read_rules(&reads));
    deny_rules.push("WebFetch".into());
    deny_rules.push("WebSearch".into());
    let allow_rules: Vec<String> = HALL_VERBS.iter().map(|v| format!("Bash({v})")).collect();
    json!({
        // A project's `disableAllHooks` would switch the gates off; these settings
        // come with `--settings`, which outranks it.
        "disableAllHooks": false,
        "sandbox": {
            "enabled": true,
            "failIfUnavailable": true,
            "allowUnsandboxedCommands": false,
            "autoAllowBashIfSandboxed": true,
            "excludedCommands": HALL_VERBS,
            "filesystem": {
                "allowWrite": shown(extra_write),
                "denyWrite": shown(&denied),
                "denyRead": shown(&reads),
            },
            "network": {
                "allowedDomains": scope.domains,
                "strictAllowlist": true,
            },
        },
        "permissions": {
            "allow": allow_rules,
            "deny": deny_rules,
        },
    })
}

/// Hallmark's part of Claude Code's *user* settings (`hall setup claude`), which every
/// session of this user reads, however it was started: the sandbox on and strict, and
/// for every repository in `repos` (each with its base branch) what [`settings`] denies
/// a session wherever it runs ([`repo_denied_writes`], its local remotes), with
/// Hallmark's own directories and `~/.claude`. Arrays here are merged into the user's
/// own; the network and the web tools are left to the user, since these settings hold
/// in every repository.
pub fn user_settings(repos: &[(Repo, String)]) -> Value {
    let mut denied: Vec<PathBuf> = Vec::new();
    for (repo, base) in repos {
        denied.extend(repo_denied_writes(repo, base));
        denied.extend(local_remotes(repo));
    }
    denied.extend(own_dirs());
    if let Some(home) = dirs::home_dir() {
        denied.push(home.join(".claude"));
    }
    if let Some(dir) = std::env::var_os("CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty()) {
        denied.push(PathBuf::from(dir));
    }
    let mut seen = std::collections::HashSet::new();
    denied.retain(|p| seen.insert(p.clone()));
    let mut reads = denied_reads();
    reads.extend(crate::platform::data_dir());
    let mut deny_rules = edit_rules(&denied);
    deny_rules.extend(home_rules());
    deny_rules.extend(read_rules(&denied_reads()));
    // In whatever checkout a session runs: the settings Claude Code reads from it, its
    // MCP servers and git's own files (a worktree's `.git` names its git directory).
    for pattern in [
        "**/.claude/settings.json",
        "**/.claude/settings.local.json",
        "**/.mcp.json",
        "**/.git",
        "**/.git/**",
    ] {
        deny_rules.push(format!("Edit({pattern})"));
    }
    let mut seen = std::collections::HashSet::new();
    deny_rules.retain(|r| seen.insert(r.clone()));
    let allow_rules: Vec<String> = HALL_VERBS.iter().map(|v| format!("Bash({v})")).collect();
    json!({
        "sandbox": {
            "enabled": true,
            "failIfUnavailable": true,
            "allowUnsandboxedCommands": false,
            "excludedCommands": HALL_VERBS,
            "filesystem": {
                "denyWrite": shown(&denied),
                "denyRead": shown(&reads),
            },
        },
        "permissions": {
            "allow": allow_rules,
            "deny": deny_rules,
        },
    })
}

/// Gets the repository ready for a confined session, from outside the sandbox: the
/// sandbox mounts an empty file over a denied path that doesn't exist, so the base
/// branch must be a loose ref (a packed one would vanish inside), the refs directories
/// it denies must exist, and the placeholder names must be ignored by `git add -A`.
pub fn prepare(scope: &Scope<'_>) -> std::io::Result<()> {
    let common = &scope.repo.common_dir;
    let base_ref = format!("refs/heads/{}", scope.base);
    if !common.join(&base_ref).is_file()
        && let Some(sha) = crate::git::refs::read_ref(common, &base_ref)
    {
        if let Some(parent) = common.join(&base_ref).parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(common.join(&base_ref), format!("{sha}\n"))?;
    }
    for d in ["refs/notes", "refs/replace", "refs/remotes", "refs/tags"] {
        std::fs::create_dir_all(common.join(d))?;
    }
    // An unreadable placeholder stands in for a missing `packed-refs`, which git then
    // can't read: give it a real, empty one.
    let packed = common.join("packed-refs");
    if !packed.exists() {
        std::fs::write(&packed, "# pack-refs with: peeled fully-peeled sorted \n")?;
    }
    let exclude = common.join("info").join("exclude");
    std::fs::create_dir_all(common.join("info"))?;
    let current = std::fs::read_to_string(&exclude).unwrap_or_default();
    let missing: Vec<&str> = PLACEHOLDERS
        .iter()
        .filter(|p| !current.lines().any(|l| l.trim() == format!("/{p}")))
        .copied()
        .collect();
    if !missing.is_empty() {
        let mut text = current.clone();
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(
            "# Hallmark: placeholders the session sandbox mounts (see docs/security.md)\n",
        );
        for p in missing {
            text.push_str(&format!("/{p}\n"));
        }
        crate::journal::file::write_atomic(&exclude, text.as_bytes())?;
    }
    Ok(())
}

/// Whether this machine can run Claude Code's sandbox (see
/// [`crate::platform::sandbox_available`]).
pub fn available() -> Result<(), String> {
    crate::platform::sandbox_available()
}

/// A `[sandbox] deny_read` path as Claude Code's rules spell it: `~/` expanded, and an
/// absolute path with the rules' leading `/`.
fn expand_home(p: &str) -> String {
    match (p.strip_prefix("~/"), dirs::home_dir()) {
        (Some(rest), Some(home)) => format!("/{}", home.join(rest).display()),
        _ if p.starts_with('/') => format!("/{p}"),
        _ => p.to_string(),
    }
}
