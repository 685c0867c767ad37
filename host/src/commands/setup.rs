//! `hall setup claude`: installs the Claude Code plugin for this user.
//!
//! The plugin ships inside the binary. Setup writes it as a local marketplace under the
//! user data directory, with this binary's absolute path in the hooks (so hooks work
//! whatever the session's PATH), then asks the `claude` CLI to add the marketplace and
//! install the plugin at user scope. Both steps are idempotent. Setup also makes the
//! user's hallmark signing key when there is none (see `crate::sign`).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde::Serialize;

use super::{Reply, next_text};
use crate::error::{Code, HallError, Result};

pub const MARKETPLACE: &str = "hallmark-local";
pub const PLUGIN_ID: &str = "hallmark@hallmark-local";

/// The plugin's files, relative to its root.
const FILES: &[(&str, &str)] = &[
    (
        ".claude-plugin/plugin.json",
        include_str!("../../../plugin/.claude-plugin/plugin.json"),
    ),
    (
        "hooks/hooks.json",
        include_str!("../../../plugin/hooks/hooks.json"),
    ),
    (
        "skills/hallmark/SKILL.md",
        include_str!("../../../plugin/skills/hallmark/SKILL.md"),
    ),
    (
        "skills/principal-review/SKILL.md",
        include_str!("../../../plugin/skills/principal-review/SKILL.md"),
    ),
    (
        "agents/principal-engineer.md",
        include_str!("../../../plugin/agents/principal-engineer.md"),
    ),
    (
        "agents/fixer.md",
        include_str!("../../../plugin/agents/fixer.md"),
    ),
    (
        "schemas/verdict.json",
        include_str!("../../../plugin/schemas/verdict.json"),
    ),
    ("README.md", include_str!("../../../plugin/README.md")),
];

/// The text of one of the plugin's files, as this binary ships it.
pub fn plugin_file(rel: &str) -> Option<&'static str> {
    FILES.iter().find(|(r, _)| *r == rel).map(|(_, t)| *t)
}

/// The plugin's files with this binary's absolute path in the hooks.
fn plugin_files(plugin: &Path, hall: &Path) -> Vec<(PathBuf, String)> {
    FILES
        .iter()
        .map(|(rel, text)| {
            let text = if *rel == "hooks/hooks.json" {
                text.replace("\"hall hook ", &format!("\"{} hook ", quote_path(hall)))
            } else {
                text.to_string()
            };
            (plugin.join(rel), text)
        })
        .collect()
}

/// Writes the plugin where headless runs load it from (`--plugin-dir`), rewriting only
/// files that changed; returns its directory.
pub fn ensure_plugin() -> Result<PathBuf> {
    let root = marketplace_dir().ok_or_else(|| HallError::internal("no user data directory"))?;
    let plugin = root.join("hallmark");
    let hall = std::env::current_exe()?.canonicalize()?;
    for (path, text) in plugin_files(&plugin, &hall) {
        if std::fs::read_to_string(&path).is_ok_and(|old| old == text) {
            continue;
        }
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        crate::journal::file::write_atomic(&path, text.as_bytes())?;
    }
    Ok(plugin)
}

#[derive(Serialize, schemars::JsonSchema)]
pub struct SetupReply {
    pub dry_run: bool,
    /// The local marketplace directory.
    pub marketplace: String,
    /// The plugin directory the hooks run from.
    pub plugin: String,
    /// The `hall` the hooks call.
    pub hall: String,
    pub files: Vec<String>,
    /// The claude commands run (or that would run).
    pub commands: Vec<String>,
    /// The private key hallmarks are signed with (made when it was missing).
    pub signing_key: String,
    /// Whether `hall claude` starts sessions in Claude Code's sandbox.
    pub sessions: SessionsSetup,
    pub next: Vec<String>,
}

/// How sessions are confined (see docs/security.md).
#[derive(Serialize, schemars::JsonSchema)]
pub struct SessionsSetup {
    /// `hall claude` and `hall new --open` start sessions confined.
    pub confine: bool,
    /// Whether this machine can run the sandbox.
    pub available: bool,
    /// What is missing, when it can't.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub missing: Option<String>,
}

/// Records `[sessions] confine` in the user config, keeping what else is there.
fn record_confine(confine: bool) -> Result<()> {
    let dir = crate::platform::config_dir()
        .ok_or_else(|| HallError::internal("no user config directory"))?;
    std::fs::create_dir_all(&dir)?;
    let path = dir.join("config.toml");
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    let mut doc: toml_edit::DocumentMut = text.parse().map_err(|e| {
        HallError::new(Code::InvalidConfig, format!("{}: {e}", path.display()))
            .hint(format!("edit {}", path.display()))
    })?;
    if !doc.contains_table("sessions") {
        doc["sessions"] = toml_edit::table();
    }
    doc["sessions"]["confine"] = toml_edit::value(confine);
    crate::journal::file::write_atomic(&path, doc.to_string().as_bytes())?;
    Ok(())
}

fn quote_path(p: &Path) -> String {
    let s = p.display().to_string();
    if s.contains(' ') {
        format!("\\\"{s}\\\"")
    } else {
        s
    }
}

/// The marketplace root under the user data dir.
pub fn marketplace_dir() -> Option<PathBuf> {
    crate::platform::data_dir().map(|d| d.join("claude"))
}

pub fn claude(dry_run: bool, no_confine: bool) -> Result<Reply> {
    let root = marketplace_dir().ok_or_else(|| HallError::internal("no user data directory"))?;
    let plugin = root.join("hallmark");
    let hall = std::env::current_exe()?.canonicalize()?;
    let version = env!("CARGO_PKG_VERSION");
    let mut files = plugin_files(&plugin, &hall);
    let market = serde_json::json!({
        "name": MARKETPLACE,
        "owner": { "name": "Hallmark" },
        "description": "The Hallmark plugin, installed by `hall setup claude`.",
        "plugins": [{ "name": "hallmark", "source": "./hallmark", "description": "Hallmark's skill and hooks", "version": version }]
    });
    files.push((
        root.join(".claude-plugin/marketplace.json"),
        serde_json::to_string_pretty(&market).unwrap_or_default(),
    ));
    let commands = vec![
        format!("claude plugin marketplace add {}", root.display()),
        format!("claude plugin install {PLUGIN_ID}"),
    ];
    let mut warnings = Vec::new();
    let signing_key = if dry_run {
        crate::platform::config_dir()
            .map(|d| crate::sign::key_path(&d).0.display().to_string())
            .unwrap_or_default()
    } else {
        match crate::sign::ensure_key() {
            Ok(k) => k.path.display().to_string(),
            Err(e) => {
                warnings.push(format!("no signing key yet: {e}"));
                String::new()
            }
        }
    };
    if !dry_run {
        for (path, text) in &files {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir)?;
            }
            crate::journal::file::write_atomic(path, text.as_bytes())?;
        }
        for args in [
            vec![
                "plugin".to_string(),
                "marketplace".into(),
                "add".into(),
                root.display().to_string(),
            ],
            vec!["plugin".into(), "install".into(), PLUGIN_ID.into()],
        ] {
            let out = Command::new("claude").args(&args).output().map_err(|_| {
                HallError::new(
                    Code::CommandFailed,
                    "the claude CLI is not on PATH; the plugin files are written but not installed",
                )
                .hint("npm install -g @anthropic-ai/claude-code")
                .hint("hall setup claude")
            })?;
            if !out.status.success() {
                return Err(HallError::new(
                    Code::CommandFailed,
                    format!(
                        "claude {} failed: {}",
                        args.join(" "),
                        String::from_utf8_lossy(&out.stderr).trim()
                    ),
                )
                .hint("hall doctor"));
            }
        }
    }
    if !dry_run {
        record_confine(!no_confine)?;
    }
    let missing = crate::confine::available().err();
    let sessions = SessionsSetup {
        confine: !no_confine,
        available: missing.is_none(),
        missing: missing.clone(),
    };
    if let (false, Some(m)) = (no_confine, &missing) {
        warnings.push(format!(
            "{m}; until then `hall claude` refuses to start a session unconfined unless told `--unconfined`"
        ));
    }
    let next = if dry_run {
        vec!["hall setup claude".to_string()]
    } else {
        vec!["hall doctor".to_string(), "hall claude".to_string()]
    };
    let reply = SetupReply {
        dry_run,
        marketplace: root.display().to_string(),
        plugin: plugin.display().to_string(),
        hall: hall.display().to_string(),
        files: files.iter().map(|(p, _)| p.display().to_string()).collect(),
        commands,
        signing_key,
        sessions,
        next,
    };
    let text = format!(
        "{} the Hallmark plugin in {} (hooks call {}).\n{}\n{}",
        if dry_run {
            "Would install"
        } else {
            "Installed"
        },
        reply.plugin,
        reply.hall,
        reply
            .commands
            .iter()
            .map(|c| format!("  $ {c}"))
            .collect::<Vec<_>>()
            .join("\n"),
        next_text(&reply.next)
    );
    Ok(Reply::new(&reply, text).warn(warnings))
}

/// Whether Claude Code has the plugin enabled for this user, with hooks that call an
/// existing `hall`. `Err` says what is wrong.
pub fn installed() -> std::result::Result<String, String> {
    let home = dirs::home_dir().ok_or("no home directory")?;
    let settings = std::fs::read_to_string(home.join(".claude/settings.json"))
        .map_err(|_| "Claude Code has no user settings yet".to_string())?;
    let v: serde_json::Value = serde_json::from_str(&settings)
        .map_err(|e| format!("~/.claude/settings.json is not JSON: {e}"))?;
    if v["enabledPlugins"][PLUGIN_ID] != true {
        return Err("the Hallmark plugin is not installed for Claude Code".into());
    }
    let dir = v["extraKnownMarketplaces"][MARKETPLACE]["source"]["path"]
        .as_str()
        .ok_or("the hallmark-local marketplace is not known to Claude Code")?;
    let hooks = std::fs::read_to_string(Path::new(dir).join("hallmark/hooks/hooks.json"))
        .map_err(|_| format!("the plugin's hooks are missing from {dir}"))?;
    let hall = hooks
        .split("\"command\": \"")
        .nth(1)
        .and_then(|rest| rest.split(" hook ").next())
        .map(|s| s.trim_matches(|c| c == '\\' || c == '"').to_string())
        .unwrap_or_default();
    if !Path::new(&hall).is_file() {
        return Err(format!(
            "the plugin's hooks call {hall}, which does not exist"
        ));
    }
    Ok(format!("{PLUGIN_ID} is enabled; its hooks call {hall}"))
}
