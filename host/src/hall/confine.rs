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
    crate::git::local_remotes(&repo.main_root)
        .into_iter()
        .map(|(_, path)| path)
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

/// Who a headless run is, as far as its confinement goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunKind {
    /// The principal engineer: read-only, no hooks, isolated from the checkout's settings.
    Review,
    /// The fixer: edits its worktree, with Hallmark's hooks.
    Fix,
    /// A resumed session that asked a question.
    Resume,
}

/// `--settings` for a headless run: its file tools read only inside `dirs` and never the
/// credential paths in `deny_read`; its commands run in Claude Code's sandbox, writing
/// only `write` and reaching only the repo's `domains` and `unix_sockets`; web tools are
/// off. The reviewer also runs without hooks. With a `scope`, the run gets the same
/// denials as a confined session ([`settings`]): git's internals beyond what a commit
/// needs, the journal, local remotes, other checkouts and the signing key.
pub fn run_settings(
    config: &crate::config::Config,
    kind: RunKind,
    dirs: &[PathBuf],
    write: &[PathBuf],
    scope: Option<&Scope<'_>>,
) -> Value {
    let abs = |p: &Path| format!("/{}", p.display());
    let mut allow: Vec<String> = Vec::new();
    for d in dirs {
        allow.push(format!("Read({}/**)", abs(d)));
        allow.push(format!("Grep({}/**)", abs(d)));
        allow.push(format!("Glob({}/**)", abs(d)));
    }
    if kind == RunKind::Fix {
        for d in write {
            allow.push(format!("Edit({}/**)", abs(d)));
        }
    }
    let mut deny: Vec<String> = vec!["WebFetch".into(), "WebSearch".into()];
    for p in &config.sandbox.deny_read {
        let p = expand_home(p);
        deny.push(format!("Read({p})"));
        deny.push(format!("Read({p}/**)"));
    }
    if kind == RunKind::Review {
        deny.push("Edit".into());
        deny.push("Write".into());
        deny.push("NotebookEdit".into());
    }
    let mut deny_write: Vec<String> = Vec::new();
    let mut deny_read: Vec<String> = Vec::new();
    if let Some(scope) = scope {
        let session = settings(scope, write);
        for rule in session["permissions"]["deny"]
            .as_array()
            .into_iter()
            .flatten()
        {
            if let Some(r) = rule.as_str()
                && !deny.iter().any(|d| d == r)
            {
                deny.push(r.to_string());
            }
        }
        let list = |v: &Value| -> Vec<String> {
            v.as_array()
                .into_iter()
                .flatten()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect()
        };
        deny_write = list(&session["sandbox"]["filesystem"]["denyWrite"]);
        deny_read = list(&session["sandbox"]["filesystem"]["denyRead"]);
    }
    json!({
        "disableAllHooks": kind == RunKind::Review,
        "permissions": { "allow": allow, "deny": deny, "defaultMode": if kind == RunKind::Fix { "acceptEdits" } else { "default" } },
        "sandbox": {
            "enabled": true,
            "allowUnsandboxedCommands": false,
            "autoAllowBashIfSandboxed": false,
            "filesystem": {
                "allowWrite": write.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
                "denyWrite": deny_write,
                "denyRead": deny_read,
            },
            "network": {
                "allowedDomains": config.sandbox.domains,
                "allowUnixSockets": config.sandbox.unix_sockets,
                "strictAllowlist": true,
            },
        },
    })
}

fn expand_home(p: &str) -> String {
    match (p.strip_prefix("~/"), dirs::home_dir()) {
        (Some(rest), Some(home)) => format!("/{}", home.join(rest).display()),
        _ if p.starts_with('/') => format!("/{p}"),
        _ => p.to_string(),
    }
}
