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

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::git::Repo;

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
    "hall inbox",
    "hall inbox *",
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
    let Ok(out) = crate::git::run(
        &repo.main_root,
        &["config", "--get-regexp", r"^remote\..*\.(url|pushurl)$"],
    ) else {
        return Vec::new();
    };
    out.lines()
        .filter_map(|l| l.split_once(' ').map(|(_, u)| u.to_string()))
        .filter_map(|u| {
            let p = u.strip_prefix("file://").unwrap_or(&u).to_string();
            let local = p.starts_with('/') || p.starts_with('.') || !p.contains(':');
            local.then(|| crate::git::normalize(&repo.main_root.join(&p)))
        })
        .collect()
}

/// The paths a confined session may not write, as absolute paths.
pub fn denied_writes(scope: &Scope<'_>) -> Vec<PathBuf> {
    let common = &scope.repo.common_dir;
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
    deny.push(common.join("refs/heads").join(scope.base));
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
    for dir in [
        crate::platform::config_dir(),
        crate::platform::data_dir(),
        crate::platform::cache_dir(),
    ]
    .into_iter()
    .flatten()
    {
        deny.push(dir);
    }
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

/// The sandbox and permission settings for a session or run in `scope`. `extra_write`
/// adds writable places (a headless run's temp and run directories).
pub fn settings(scope: &Scope<'_>, extra_write: &[PathBuf]) -> Value {
    let denied = denied_writes(scope);
    let reads = denied_reads();
    let mut deny_rules: Vec<String> = Vec::new();
    for p in &denied {
        deny_rules.push(format!("Edit({})", rule_path(p)));
        deny_rules.push(format!("Edit({}/**)", rule_path(p)));
    }
    for p in [scope.checkout.join(".git"), scope.checkout.join(".claude")] {
        deny_rules.push(format!("Edit({})", rule_path(&p)));
        deny_rules.push(format!("Edit({}/**)", rule_path(&p)));
    }
    if let Some(home) = dirs::home_dir() {
        for f in [
            ".claude",
            ".claude.json",
            ".gitconfig",
            ".config/git",
            ".ssh",
            ".bashrc",
            ".profile",
            ".zshrc",
        ] {
            let p = home.join(f);
            deny_rules.push(format!("Edit({})", rule_path(&p)));
            deny_rules.push(format!("Edit({}/**)", rule_path(&p)));
        }
    }
    if let Ok(exe) = std::env::current_exe()
        && let Some(dir) = exe.parent()
    {
        deny_rules.push(format!("Edit({}/**)", rule_path(dir)));
    }
    for p in &reads {
        deny_rules.push(format!("Read({})", rule_path(p)));
        deny_rules.push(format!("Read({}/**)", rule_path(p)));
    }
    deny_rules.push("WebFetch".into());
    deny_rules.push("WebSearch".into());
    let allow_rules: Vec<String> = HALL_VERBS.iter().map(|v| format!("Bash({v})")).collect();
    let show = |v: &[PathBuf]| {
        v.iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
    };
    json!({
        "sandbox": {
            "enabled": true,
            "failIfUnavailable": true,
            "allowUnsandboxedCommands": false,
            "autoAllowBashIfSandboxed": true,
            "excludedCommands": HALL_VERBS,
            "filesystem": {
                "allowWrite": show(extra_write),
                "denyWrite": show(&denied),
                "denyRead": show(&reads),
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

/// Gets the repository ready for a confined session, from outside the sandbox: the
/// sandbox mounts an empty file over a denied path that doesn't exist, so the base
/// branch must be a loose ref (a packed one would vanish inside), the refs directories
/// it denies must exist, and the placeholder names must be ignored by `git add -A`.
pub fn prepare(scope: &Scope<'_>) -> std::io::Result<()> {
    let common = &scope.repo.common_dir;
    let base_ref = format!("refs/heads/{}", scope.base);
    if !common.join(&base_ref).is_file()
        && let Some(sha) = crate::committed::read_ref(common, &base_ref)
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

/// Whether this machine can run Claude Code's sandbox: bubblewrap and socat on Linux,
/// Seatbelt on macOS; not on Windows (outside WSL2).
pub fn available() -> Result<(), String> {
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
