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
    // A reviewer or fixer reads the item's code, which may be written to steer it: it
    // gets the credential stores the loop's jail hides, for its file tools and for its
    // commands. Claude Code's own directory and file stay readable to its commands,
    // which source their shell snapshot from there; its sandbox mounts over each denied
    // path, so only the paths that exist are listed.
    for p in run_secrets() {
        for rule in read_rules(std::slice::from_ref(&p)) {
            if !deny.contains(&rule) {
                deny.push(rule);
            }
        }
        let shown = p.display().to_string();
        if p.exists() && !deny_read.contains(&shown) {
            deny_read.push(shown);
        }
    }
    json!({
        "disableAllHooks": kind == RunKind::Review,
        "permissions": { "allow": allow, "deny": deny, "defaultMode": if kind == RunKind::Fix { "acceptEdits" } else { "default" } },
        "sandbox": {
            "enabled": true,
            // Without bubblewrap and socat Claude Code would run the commands unsandboxed,
            // with a warning nobody reads in a headless run: refuse to start instead.
            "failIfUnavailable": true,
            "allowUnsandboxedCommands": false,
            // A fixer runs the checks and commits its fix: its commands, inside the
            // sandbox and past the plugin's hooks, need no one to approve them (a
            // headless run has no one to ask). Other runs' commands still need a rule.
            "autoAllowBashIfSandboxed": kind == RunKind::Fix,
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

/// Files and directories under the home directory that hold credentials or talk to
/// something that does: no run of an item's code may see them.
const HOME_SECRETS: &[&str] = &[
    ".ssh",
    ".gnupg",
    ".claude",
    ".claude.json",
    ".config/gh",
    ".config/hub",
    ".config/gcloud",
    ".config/chromium",
    ".config/google-chrome",
    ".mozilla",
    ".local/share/keyrings",
    ".password-store",
    ".git-credentials",
    ".netrc",
    ".npmrc",
    ".pypirc",
    ".gem/credentials",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".docker/config.json",
    ".aws",
    ".azure",
    ".kube",
    ".vault-token",
    ".terraform.d/credentials.tfrc.json",
    "Library/Keychains",
    "Library/Application Support/Google/Chrome",
    "Library/Application Support/Firefox",
];

/// What a headless Claude Code run may not read: [`HOME_SECRETS`] but Claude Code's own
/// directory and file, which the run itself reads and its commands source.
fn run_secrets() -> Vec<PathBuf> {
    let Some(home) = dirs::home_dir() else {
        return Vec::new();
    };
    HOME_SECRETS
        .iter()
        .filter(|s| !s.starts_with(".claude"))
        .map(|s| home.join(s))
        .collect()
}

/// Sockets and runtime directories outside the home through which a run could act as
/// the user elsewhere (agents, buses, a container engine).
const SYSTEM_SECRETS: &[&str] = &[
    "/run/user",
    "/run/docker.sock",
    "/var/run/docker.sock",
    "/run/podman",
];

/// Environment variables no run of an item's code gets, besides any whose name says it
/// holds a secret ([`secret_name`]).
const SECRET_ENV: &[&str] = &[
    "SSH_AUTH_SOCK",
    "SSH_AGENT_PID",
    "GPG_AGENT_INFO",
    "DBUS_SESSION_BUS_ADDRESS",
    "XDG_RUNTIME_DIR",
    "GH_TOKEN",
    "GITHUB_TOKEN",
    "ANTHROPIC_API_KEY",
    "HALL_CONFIG_DIR",
    "HALL_DATA_DIR",
    "HALL_CACHE_DIR",
];

/// Whether an environment variable's name says it holds a secret.
fn secret_name(name: &str) -> bool {
    let n = name.to_ascii_uppercase();
    [
        "TOKEN",
        "SECRET",
        "PASSWORD",
        "PASSWD",
        "API_KEY",
        "APIKEY",
        "CREDENTIAL",
        "PRIVATE_KEY",
    ]
    .iter()
    .any(|s| n.contains(s))
}

/// A part of the loop that runs an item's code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// `setup`: installs what the checks need.
    Setup,
    /// The checks, and the merge checks on a parent's branch.
    Checks,
    /// A fix engine that isn't Claude Code.
    Fixer,
}

impl Phase {
    /// Its name in `[sandbox] network`.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Setup => "setup",
            Phase::Checks => "checks",
            Phase::Fixer => "fixer",
        }
    }
}

/// Whether the base's committed `[sandbox] network` lets `command` (of `phase`) reach
/// the network: it names the phase, or the command itself.
pub fn network_allowed(config: &crate::config::Config, phase: Phase, command: &str) -> bool {
    config
        .sandbox
        .network
        .iter()
        .any(|n| n == phase.name() || n.trim() == command.trim())
}

/// Whether the person turned the loop's confinement off (`[loop] confine = false` in
/// their own `config.toml`, out of every session's reach); the default is on.
pub fn loop_confined_by_user(config_dir: Option<&Path>) -> bool {
    let Some(dir) = config_dir else {
        return true;
    };
    let Ok(text) = std::fs::read_to_string(dir.join(crate::sign::USER_CONFIG)) else {
        return true;
    };
    text.parse::<toml::Table>()
        .ok()
        .and_then(|t| {
            t.get("loop")
                .and_then(|s| s.get("confine"))
                .and_then(|v| v.as_bool())
        })
        .unwrap_or(true)
}

/// How the loop runs an item's code in one repository: inside the platform's sandbox,
/// or (only when the person said so) without one.
#[derive(Clone, Debug)]
pub struct Jail {
    /// `None` when the person opted out.
    sandbox: Option<crate::sandbox::Sandbox>,
    /// The repository's own cache for what runs download and build (npm's, pip's,
    /// uv's…): shared by this repository's confined runs only, never with the user's
    /// own tools, so nothing a run leaves there reaches an unconfined program.
    cache: Option<PathBuf>,
    hidden: Vec<PathBuf>,
    visible: Vec<PathBuf>,
    remove_env: Vec<String>,
}

/// A command the loop will run on an item's code, and whether it is confined.
pub struct JailedCommand {
    pub command: std::process::Command,
    pub confined: bool,
    /// The sandbox, for messages (`None` when unconfined).
    pub sandbox: Option<&'static str>,
}

impl Jail {
    /// The jail for `hall`'s repository: the sandbox this machine has, or an error that
    /// names what to install; no sandbox at all when the person turned confinement off.
    pub fn new(hall: &crate::hall::Hall) -> Result<Jail, crate::sandbox::Unavailable> {
        let config_dir = hall.user_config_dir();
        let sandbox = if loop_confined_by_user(config_dir.as_deref()) {
            Some(crate::sandbox::find()?)
        } else {
            None
        };
        let mut hidden: Vec<PathBuf> = Vec::new();
        for dir in [
            config_dir.clone(),
            crate::platform::config_dir(),
            crate::platform::data_dir(),
            hall.user_cache_dir(),
            crate::platform::cache_dir(),
        ]
        .into_iter()
        .flatten()
        {
            hidden.push(dir);
        }
        if let Some(dir) = &config_dir {
            hidden.push(crate::sign::key_path(dir).0);
        }
        hidden.push(hall.journal.root().to_path_buf());
        if let Some(home) = dirs::home_dir() {
            hidden.extend(HOME_SECRETS.iter().map(|s| home.join(s)));
        }
        hidden.extend(SYSTEM_SECRETS.iter().map(PathBuf::from));
        if let Some(sock) = std::env::var_os("SSH_AUTH_SOCK") {
            hidden.push(PathBuf::from(sock));
        }
        for p in &hall.config.sandbox.deny_read {
            hidden.push(PathBuf::from(
                expand_home(p).trim_start_matches("//").to_string(),
            ));
        }
        let mut visible = vec![hall.repo.common_dir.clone()];
        if let Some(home) = dirs::home_dir() {
            visible.push(home);
        }
        if let Some(path) = std::env::var_os("PATH") {
            visible.extend(std::env::split_paths(&path));
        }
        for var in ["CARGO_HOME", "RUSTUP_HOME"] {
            if let Some(v) = std::env::var_os(var) {
                visible.push(PathBuf::from(v));
            }
        }
        let canon = |v: Vec<PathBuf>| -> Vec<PathBuf> {
            v.into_iter()
                .map(|p| crate::platform::canonicalize(&p).unwrap_or(p))
                .collect()
        };
        let mut remove_env: Vec<String> = SECRET_ENV.iter().map(|s| s.to_string()).collect();
        remove_env.extend(hall.config.sandbox.remove_env.iter().cloned());
        remove_env.extend(
            std::env::vars_os()
                .filter_map(|(k, _)| k.into_string().ok())
                .filter(|k| secret_name(k)),
        );
        let cache = hall.user_cache_dir().map(|c| {
            c.join("sandbox")
                .join(crate::hall::worktree::repo_key(hall))
        });
        let cache = cache.filter(|c| std::fs::create_dir_all(c).is_ok());
        Ok(Jail {
            sandbox,
            cache: cache.map(|c| crate::platform::canonicalize(&c).unwrap_or(c)),
            hidden: canon(hidden),
            visible: canon(visible),
            remove_env,
        })
    }

    /// Whether runs are confined (false only when the person opted out).
    pub fn confined(&self) -> bool {
        self.sandbox.is_some()
    }

    /// The policy for a run of `phase` in `dir`, writing `writable` (with `dir`), with
    /// `read_only` kept so inside them.
    pub fn policy(
        &self,
        network: bool,
        dir: &Path,
        writable: &[PathBuf],
        read_only: &[PathBuf],
    ) -> crate::sandbox::Policy {
        let canon = |p: &Path| crate::platform::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        let mut w = vec![canon(dir)];
        w.extend(writable.iter().map(|p| canon(p)));
        w.extend(self.cache.clone());
        crate::sandbox::Policy {
            workdir: canon(dir),
            writable: w,
            read_only: read_only.iter().map(|p| canon(p)).collect(),
            hidden: self.hidden.clone(),
            visible: self.visible.clone(),
            network,
            temp: std::env::temp_dir(),
        }
    }

    /// `script` through the platform shell under `policy`, with the secrets taken out of
    /// its environment.
    pub fn shell(&self, policy: &crate::sandbox::Policy, script: &str) -> JailedCommand {
        let (program, args) = self.argv(policy, script);
        let mut command = crate::sandbox::command(&program, &args);
        command.current_dir(&policy.workdir);
        for k in &self.remove_env {
            command.env_remove(k);
        }
        for (k, v) in self.cache_env() {
            command.env(k, v);
        }
        JailedCommand {
            command,
            confined: self.confined(),
            sandbox: self.sandbox.as_ref().map(|s| s.name()),
        }
    }

    /// The program and arguments that run `script` through the platform shell under
    /// `policy` (for runners that take an argument list).
    pub fn argv(&self, policy: &crate::sandbox::Policy, script: &str) -> (String, Vec<String>) {
        let shell = crate::platform::shell(script);
        let program = shell.get_program().to_string_lossy().into_owned();
        let args: Vec<String> = shell
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        match &self.sandbox {
            Some(s) => s.argv(policy, &program, &args),
            None => (program, args),
        }
    }

    /// Where the package managers and build tools a run may use keep their caches: the
    /// repository's own cache (the user's, read-only, would make them fail, and a
    /// writable one could be poisoned for the user's own later builds).
    pub fn cache_env(&self) -> Vec<(String, String)> {
        let Some(c) = &self.cache else {
            return Vec::new();
        };
        [
            ("XDG_CACHE_HOME", "xdg"),
            ("npm_config_cache", "npm"),
            ("YARN_CACHE_FOLDER", "yarn"),
            ("BUN_INSTALL_CACHE_DIR", "bun"),
            ("PIP_CACHE_DIR", "pip"),
            ("UV_CACHE_DIR", "uv"),
            ("POETRY_CACHE_DIR", "poetry"),
            ("PRE_COMMIT_HOME", "pre-commit"),
            ("GOCACHE", "go-build"),
        ]
        .iter()
        .map(|(k, d)| (k.to_string(), c.join(d).display().to_string()))
        .collect()
    }

    /// The environment variables a run of an item's code goes without.
    pub fn removed_env(&self) -> &[String] {
        &self.remove_env
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_network_is_off_unless_the_base_names_the_phase_or_the_command() {
        let mut config = crate::config::Config::default();
        assert!(!network_allowed(&config, Phase::Setup, "npm ci"));
        config.sandbox.network = vec!["setup".into(), "pytest -m online".into()];
        assert!(network_allowed(&config, Phase::Setup, "npm ci"));
        assert!(!network_allowed(&config, Phase::Checks, "pytest"));
        assert!(network_allowed(&config, Phase::Checks, " pytest -m online"));
        assert!(!network_allowed(&config, Phase::Fixer, "ralph run"));
    }

    #[test]
    fn only_the_persons_own_file_turns_the_loops_confinement_off() {
        let dir = tempfile::tempdir().unwrap();
        assert!(loop_confined_by_user(None));
        assert!(loop_confined_by_user(Some(dir.path())), "no file: confined");
        let file = dir.path().join(crate::sign::USER_CONFIG);
        std::fs::write(&file, "[loop]\nconfine = \"no\"\n").unwrap();
        assert!(
            loop_confined_by_user(Some(dir.path())),
            "not a boolean: confined"
        );
        std::fs::write(
            &file,
            "[signing]\nprincipal = \"a@b\"\n[loop]\nconfine = false\n",
        )
        .unwrap();
        assert!(!loop_confined_by_user(Some(dir.path())));
    }

    #[test]
    fn a_headless_run_reads_no_credential_store_but_its_own_directory() {
        let config = crate::config::Config::default();
        let home = dirs::home_dir().unwrap();
        let v = run_settings(&config, RunKind::Fix, &[], &[], None);
        let deny: Vec<&str> = v["permissions"]["deny"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|r| r.as_str())
            .collect();
        for secret in [
            ".ssh",
            ".aws",
            ".config/gh",
            ".netrc",
            ".docker/config.json",
        ] {
            let rule = format!("Read(/{}/**)", home.join(secret).display());
            assert!(deny.contains(&rule.as_str()), "{rule} in {deny:?}");
        }
        assert!(
            !deny.iter().any(|r| r.contains("/.claude")),
            "the run reads its own settings: {deny:?}"
        );
        for p in v["sandbox"]["filesystem"]["denyRead"].as_array().unwrap() {
            let p = Path::new(p.as_str().unwrap());
            assert!(
                p.exists(),
                "only what exists is mounted over: {}",
                p.display()
            );
            assert!(!p.to_string_lossy().contains("/.claude"));
        }
    }

    #[test]
    fn a_secret_is_known_by_its_name() {
        for n in [
            "GH_TOKEN",
            "npm_token",
            "AWS_SECRET_ACCESS_KEY",
            "DB_PASSWORD",
            "OPENAI_API_KEY",
        ] {
            assert!(secret_name(n), "{n}");
        }
        for n in ["PATH", "HOME", "CARGO_HOME", "LANG", "CI"] {
            assert!(!secret_name(n), "{n}");
        }
    }
}
