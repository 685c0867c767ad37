//! `hall setup claude`: installs the Claude Code plugin for this user.
//!
//! The plugin ships inside the binary (`hall::plugin`). Setup writes it as a local
//! marketplace under the user data directory, with this binary's absolute path in the
//! hooks (so hooks work whatever the session's PATH), then asks the `claude` CLI to add
//! the marketplace and install the plugin at user scope. Both steps are idempotent.
//! Setup also makes the user's hallmark signing key when there is none (see
//! `crate::sign`).

use serde::Serialize;

use super::{Reply, next_text};
use crate::error::{Code, HallError, IoContext, Result};
use crate::hall::plugin::{MARKETPLACE, PLUGIN_ID, marketplace_dir, plugin_files, this_hall};

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
    std::fs::create_dir_all(&dir).at(&dir)?;
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
    crate::journal::file::write_atomic(&path, doc.to_string().as_bytes()).at(&path)
}

pub fn claude(dry_run: bool, no_confine: bool) -> Result<Reply> {
    let root = marketplace_dir().ok_or_else(|| HallError::internal("no user data directory"))?;
    let plugin = root.join("hallmark");
    let hall = this_hall()?;
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
            crate::hall::plugin::write(path, text)?;
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
            match crate::claude::cli(&args) {
                Ok(()) => {}
                Err(crate::claude::ClaudeError::NotInstalled { .. }) => {
                    return Err(HallError::new(
                        Code::CommandFailed,
                        "the claude CLI is not on PATH; the plugin files are written but not installed",
                    )
                    .hint("npm install -g @anthropic-ai/claude-code")
                    .hint("hall setup claude"));
                }
                Err(e) => return Err(e.into()),
            }
        }
    }
    if !dry_run {
        record_confine(!no_confine)?;
    }
    let missing = crate::hall::confine::available().err();
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
