//! `hall setup claude`: installs the Claude Code plugin for this user.
//!
//! The plugin ships inside the binary (`hall::plugin`). Setup writes it as a local
//! marketplace under the user data directory, with this binary's absolute path in the
//! hooks (so hooks work whatever the session's PATH), then asks the `claude` CLI to add
//! the marketplace and install the plugin at user scope. Both steps are idempotent.
//! Setup also makes the user's hallmark signing key when there is none (see
//! `crate::sign`). With `--statusline` it also makes `hall statusline` Claude Code's
//! status line, in the user's `~/.claude/settings.json`, unless one is set already.
//!
//! Unless told `--no-confine`, setup also confines every later session of the user,
//! however it is started (plain `claude` too): Claude Code's user settings get the
//! sandbox, strict, with the signing key, the journals and git's internals of every
//! registered repository out of reach (`hall::claude_settings`). `hall init` adds a
//! newly registered repository's paths there.

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
    /// Whether sessions run in Claude Code's sandbox.
    pub sessions: SessionsSetup,
    /// What was merged into Claude Code's user settings (or taken out again).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub claude_settings: Option<crate::hall::claude_settings::Merged>,
    /// The status line, when `--statusline` asked for it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub statusline: Option<StatuslineSetup>,
    pub next: Vec<String>,
}

/// What `--statusline` did to Claude Code's user settings.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct StatuslineSetup {
    /// The settings file.
    pub settings: String,
    /// The command Claude Code runs for its status line.
    pub command: String,
    /// `written`, `would write` (a dry run), `already set` (to this command), or `kept`
    /// (another status line is set, and is left as it is).
    pub outcome: String,
    /// The status line command found in the settings, when it is not ours.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub existing: Option<String>,
}

/// Sets `statusLine` in Claude Code's settings file `path` to run `command`, unless a
/// status line is set already. The key is inserted into the file's text, so the rest
/// of the user's file keeps its order and layout.
pub fn set_statusline(
    path: &std::path::Path,
    command: &str,
    dry_run: bool,
) -> Result<StatuslineSetup> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e).at(path),
    };
    let unreadable = |why: String| {
        HallError::new(
            Code::InvalidConfig,
            format!("{}: {why}; the status line was not set", path.display()),
        )
        .hint(format!("edit {}", path.display()))
        .hint("hall setup claude --statusline")
    };
    let settings: serde_json::Value = if text.trim().is_empty() {
        serde_json::json!({})
    } else {
        serde_json::from_str(&text).map_err(|e| unreadable(format!("not JSON: {e}")))?
    };
    let Some(object) = settings.as_object() else {
        return Err(unreadable("not a JSON object".into()));
    };
    let mut setup = StatuslineSetup {
        settings: path.display().to_string(),
        command: command.to_string(),
        outcome: String::new(),
        existing: None,
    };
    if let Some(existing) = object.get("statusLine") {
        let theirs = existing["command"]
            .as_str()
            .map(str::to_string)
            .unwrap_or_else(|| existing.to_string());
        setup.outcome = if theirs == command {
            "already set"
        } else {
            "kept"
        }
        .into();
        if theirs != command {
            setup.existing = Some(theirs);
        }
        return Ok(setup);
    }
    if dry_run {
        setup.outcome = "would write".into();
        return Ok(setup);
    }
    let entry = serde_json::json!({ "type": "command", "command": command });
    let open = text.find('{').unwrap_or(0);
    let new = if object.is_empty() {
        format!("{{\n  \"statusLine\": {entry}\n}}\n")
    } else {
        format!(
            "{}{{\n  \"statusLine\": {entry},{}",
            &text[..open],
            &text[open + 1..]
        )
    };
    // The edit must leave the same settings plus the status line, or nothing is written.
    let check: Option<serde_json::Value> = serde_json::from_str(&new).ok();
    let mut expected = settings.clone();
    expected["statusLine"] = entry;
    if check.as_ref() != Some(&expected) {
        return Err(HallError::internal(format!(
            "{}: adding the status line would change the file's other settings; nothing was written",
            path.display()
        ))
        .hint(format!("edit {}", path.display())));
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).at(dir)?;
    }
    crate::journal::file::write_atomic(path, new.as_bytes()).at(path)?;
    setup.outcome = "written".into();
    Ok(setup)
}

/// How sessions are confined (see docs/security.md).
#[derive(Serialize, schemars::JsonSchema)]
pub struct SessionsSetup {
    /// Every session runs confined: `hall claude`'s and `hall new --open`'s by their own
    /// settings, any other by Claude Code's user settings.
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

pub fn claude(
    you: &crate::hall::person::Person,
    dry_run: bool,
    no_confine: bool,
    statusline: bool,
) -> Result<Reply> {
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
            "{m}; until then sessions are not confined by the user settings, and `hall claude` refuses to start one unconfined unless told `--unconfined` (run `hall setup claude` again once it is installed)"
        ));
    }
    // With the sandbox missing, `failIfUnavailable` would stop every session from
    // starting: the user settings get Hallmark's part only where it can run.
    let claude_settings = match (no_confine, &missing) {
        (false, Some(_)) => None,
        (confine_none, _) => Some(crate::hall::claude_settings::confine_sessions(
            you,
            !confine_none,
            dry_run,
        )?),
    };
    if let Some(m) = &claude_settings {
        for r in &m.replaced {
            warnings.push(format!(
                "{}: your {r} is replaced while sessions are confined (`hall setup claude --no-confine` puts it back)",
                m.settings
            ));
        }
    }
    let statusline = if statusline {
        let home = dirs::home_dir().ok_or_else(|| {
            HallError::internal("no home directory, so Claude Code's settings can't be found")
                .hint("hall setup claude")
        })?;
        let command = format!("{} statusline", crate::hall::plugin::shell_word(&hall));
        Some(set_statusline(
            &home.join(".claude").join("settings.json"),
            &command,
            dry_run,
        )?)
    } else {
        None
    };
    let mut next = if dry_run {
        vec![format!(
            "hall setup claude{}",
            if statusline.is_some() {
                " --statusline"
            } else {
                ""
            }
        )]
    } else {
        vec!["hall doctor".to_string(), "hall claude".to_string()]
    };
    if let Some(s) = statusline.as_ref().filter(|s| s.outcome == "kept") {
        warnings.push(format!(
            "{} already has a status line ({}); it is kept. To use Hallmark's, replace its `statusLine` with {{\"type\": \"command\", \"command\": \"{}\"}}",
            s.settings,
            s.existing.as_deref().unwrap_or(""),
            s.command.replace('"', "\\\"")
        ));
        next.insert(0, format!("edit {}", s.settings));
        next.push("hall statusline".to_string());
    }
    let reply = SetupReply {
        dry_run,
        marketplace: root.display().to_string(),
        plugin: plugin.display().to_string(),
        hall: hall.display().to_string(),
        files: files.iter().map(|(p, _)| p.display().to_string()).collect(),
        commands,
        signing_key,
        sessions,
        claude_settings,
        statusline,
        next,
    };
    let status_text = match &reply.statusline {
        Some(s) => match s.outcome.as_str() {
            "kept" => format!(
                "Kept the status line already set in {}: {}\n",
                s.settings,
                s.existing.as_deref().unwrap_or("")
            ),
            "already set" => format!(
                "The status line in {} already runs {}.\n",
                s.settings, s.command
            ),
            "would write" => format!(
                "Would set the status line in {} to {}.\n",
                s.settings, s.command
            ),
            _ => format!("Set the status line in {} to {}.\n", s.settings, s.command),
        },
        None => String::new(),
    };
    let confine_text = match &reply.claude_settings {
        Some(m) if !no_confine => format!(
            "{} sessions, however they are started, in Claude Code's sandbox: {} ({}).\n",
            if dry_run { "Would confine" } else { "Confines" },
            m.settings,
            m.outcome
        ),
        Some(m) => format!(
            "Sessions are not confined: Hallmark's entries are out of {} ({}).\n",
            m.settings, m.outcome
        ),
        None => String::new(),
    };
    let text = format!(
        "{} the Hallmark plugin in {} (hooks call {}).\n{}\n{confine_text}{status_text}{}",
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_status_line_is_added_to_the_settings_and_never_replaces_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".claude/settings.json");
        // No file yet: a dry run writes nothing, a real run makes the file.
        let s = set_statusline(&path, "/bin/hall statusline", true).unwrap();
        assert_eq!(s.outcome, "would write");
        assert!(!path.exists());
        let s = set_statusline(&path, "/bin/hall statusline", false).unwrap();
        assert_eq!(s.outcome, "written");
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"statusLine": {"type": "command", "command": "/bin/hall statusline"}})
        );
        assert_eq!(
            set_statusline(&path, "/bin/hall statusline", false)
                .unwrap()
                .outcome,
            "already set"
        );

        // The user's other settings keep their order and layout.
        let theirs = "{\n  \"model\": \"opus\",\n  \"env\": {\"A\": \"1\"}\n}\n";
        std::fs::write(&path, theirs).unwrap();
        set_statusline(&path, "/bin/hall statusline", false).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.ends_with("\n  \"model\": \"opus\",\n  \"env\": {\"A\": \"1\"}\n}\n"),
            "{text}"
        );
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["model"], "opus");
        assert_eq!(v["statusLine"]["command"], "/bin/hall statusline");

        // Someone else's status line is kept, and named.
        let mine = "{\"statusLine\": {\"type\": \"command\", \"command\": \"~/bin/line.sh\"}}";
        std::fs::write(&path, mine).unwrap();
        let s = set_statusline(&path, "/bin/hall statusline", false).unwrap();
        assert_eq!(s.outcome, "kept");
        assert_eq!(s.existing.as_deref(), Some("~/bin/line.sh"));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), mine);

        // A file that is not JSON is the user's to fix.
        std::fs::write(&path, "{ nope").unwrap();
        let e = set_statusline(&path, "/bin/hall statusline", false).unwrap_err();
        assert_eq!(e.code, Code::InvalidConfig);
        assert!(!e.next.is_empty());
    }
}
