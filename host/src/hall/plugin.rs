//! The Claude Code plugin Hallmark ships inside the binary: its files, where headless
//! runs load it from (`--plugin-dir`), and whether Claude Code has it installed.
//!
//! `hall setup claude` writes it as a local marketplace under the user data directory,
//! with this binary's absolute path in the hooks, so hooks work whatever the session's
//! `PATH` is.

use std::path::{Path, PathBuf};

use crate::error::{HallError, IoContext, Result};

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
        "agents/developer.md",
        include_str!("../../../plugin/agents/developer.md"),
    ),
    (
        "agents/intake.md",
        include_str!("../../../plugin/agents/intake.md"),
    ),
    (
        "agents/librarian.md",
        include_str!("../../../plugin/agents/librarian.md"),
    ),
    (
        "schemas/verdict.json",
        include_str!("../../../plugin/schemas/verdict.json"),
    ),
    (
        "schemas/plan.json",
        include_str!("../../../plugin/schemas/plan.json"),
    ),
    (
        "schemas/distillation.json",
        include_str!("../../../plugin/schemas/distillation.json"),
    ),
    ("README.md", include_str!("../../../plugin/README.md")),
];

/// The text of one of the plugin's files, as this binary ships it.
pub fn plugin_file(rel: &str) -> Option<&'static str> {
    FILES.iter().find(|(r, _)| *r == rel).map(|(_, t)| *t)
}

/// The plugin's files with this binary's absolute path in the hooks.
pub fn plugin_files(plugin: &Path, hall: &Path) -> Vec<(PathBuf, String)> {
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
    let hall = this_hall()?;
    for (path, text) in plugin_files(&plugin, &hall) {
        if std::fs::read_to_string(&path).is_ok_and(|old| old == text) {
            continue;
        }
        write(&path, &text)?;
    }
    Ok(plugin)
}

/// This `hall` binary's canonical path: what the hooks call.
pub fn this_hall() -> Result<PathBuf> {
    let exe = std::env::current_exe()
        .map_err(|e| HallError::internal(format!("this hall's path can't be read: {e}")))?;
    crate::platform::canonicalize(&exe).at(&exe)
}

/// Writes one file of the plugin (or of its marketplace), making its directory.
pub fn write(path: &Path, text: &str) -> Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).at(dir)?;
    }
    crate::journal::file::write_atomic(path, text.as_bytes()).at(path)
}

/// `p` as one word of a shell command line (Claude Code runs its status line command
/// through a shell): quoted when it has a character the shell would split or expand.
pub fn shell_word(p: &Path) -> String {
    let s = p.display().to_string();
    if s.chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+:@,=".contains(c))
    {
        s
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
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
