//! `[notify]`: where a person hears of the inbox's escalations. It usually lives in the
//! user's own `config.toml`; a repository's `.hallmark.toml` may carry one for people
//! with none of their own (channels, quiet hours, the digest, reminders, routes), but
//! never a channel's address or secrets, which are the person's alone.
//! How the worker uses it is `crate::office::notify`'s.

use std::collections::BTreeMap;
use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::ConfigError;

/// A way to reach a person.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Channel {
    /// The system's notification service (D-Bus, Notification Center, toasts).
    Desktop,
    /// An ntfy topic: the phone's default.
    Ntfy,
    /// A Telegram bot writing to one chat.
    Telegram,
    /// A Slack incoming webhook.
    Slack,
}

impl Channel {
    pub const ALL: [Channel; 4] = [
        Channel::Desktop,
        Channel::Ntfy,
        Channel::Telegram,
        Channel::Slack,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Channel::Desktop => "desktop",
            Channel::Ntfy => "ntfy",
            Channel::Telegram => "telegram",
            Channel::Slack => "slack",
        }
    }

    /// A phone channel: quiet hours hold it back, the digest gathers for it.
    pub fn phone(self) -> bool {
        self != Channel::Desktop
    }

    pub fn parse(s: &str) -> Option<Channel> {
        Channel::ALL.into_iter().find(|c| c.as_str() == s)
    }
}

/// The inbox kinds a person is told of: every escalation, never a notice.
pub const NOTIFIED_KINDS: &[&str] = &[
    "question",
    "escalated",
    "ready?",
    "budget",
    "run_failed",
    "checks",
    "ship_failed",
    "conflict",
    "feedback",
    "ci_failed",
    "merge_failed",
    "lit",
    "base_red",
    "ci_down",
    "session waiting",
    "daemon stopped",
];

/// `[notify]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Notify {
    /// The channels every kind goes to unless `[notify.route]` says otherwise:
    /// `desktop`, `ntfy`, `telegram`, `slack`.
    pub channels: Vec<Channel>,
    /// Hours the phone channels stay silent, local time (`"22:00-07:00"`); what comes
    /// then waits for the digest. The desktop still shows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quiet: Option<String>,
    /// When the morning digest goes out, local time (`"08:00"`): what quiet hours held
    /// back, and what still waits.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    /// How often an unanswered escalation is sent again (`"4h"`), or `"off"`.
    pub remind: String,
    pub ntfy: Ntfy,
    pub telegram: Telegram,
    pub slack: Slack,
    /// Inbox kind → the channels it goes to (`[]` silences it); kinds left out go to
    /// `channels`.
    pub route: BTreeMap<String, Vec<Channel>>,
    /// Whether the terminal app rings the bell on a new escalation.
    pub bell: bool,
}

impl Default for Notify {
    fn default() -> Self {
        Notify {
            channels: vec![Channel::Desktop],
            quiet: None,
            digest: None,
            remind: "off".into(),
            ntfy: Ntfy::default(),
            telegram: Telegram::default(),
            slack: Slack::default(),
            route: BTreeMap::new(),
            bell: true,
        }
    }
}

/// `[notify.ntfy]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Ntfy {
    /// The ntfy server (`https://ntfy.sh`, or your own).
    pub server: String,
    /// The topic; a random one is made and written here on first use.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub topic: Option<String>,
    /// An access token for a protected topic (user config only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    /// The environment variable holding the access token.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token_env: Option<String>,
}

impl Default for Ntfy {
    fn default() -> Self {
        Ntfy {
            server: "https://ntfy.sh".into(),
            topic: None,
            token: None,
            token_env: None,
        }
    }
}

/// `[notify.telegram]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Telegram {
    /// The bot's token (user config only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    /// The environment variable holding the bot's token.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token_env: Option<String>,
    /// The chat the bot writes to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chat_id: Option<String>,
    /// The Bot API's address (a local Bot API server, say).
    pub api: String,
}

impl Default for Telegram {
    fn default() -> Self {
        Telegram {
            token: None,
            token_env: None,
            chat_id: None,
            api: "https://api.telegram.org".into(),
        }
    }
}

/// `[notify.slack]`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Slack {
    /// The incoming webhook's URL (user config only: it is the secret).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub webhook: Option<String>,
    /// The environment variable holding the webhook's URL.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub webhook_env: Option<String>,
}

/// A time of day, in minutes after midnight.
pub fn parse_clock(s: &str) -> Result<u32, String> {
    let bad = || format!("`{s}` is not a time of day (HH:MM, e.g. 07:30)");
    let (h, m) = s.trim().split_once(':').ok_or_else(bad)?;
    let (h, m): (u32, u32) = (h.parse().map_err(|_| bad())?, m.parse().map_err(|_| bad())?);
    if h > 23 || m > 59 || s.trim().len() != 5 {
        return Err(bad());
    }
    Ok(h * 60 + m)
}

/// Quiet hours as (start, end) minutes after midnight; the end may come before the
/// start (over midnight).
pub fn parse_quiet(s: &str) -> Result<(u32, u32), String> {
    let (a, b) = s
        .split_once('-')
        .ok_or_else(|| format!("`{s}` is not a span of hours (e.g. 22:00-07:00)"))?;
    let (a, b) = (parse_clock(a)?, parse_clock(b)?);
    if a == b {
        return Err(format!("`{s}` starts and ends at the same time"));
    }
    Ok((a, b))
}

impl Notify {
    /// The channels `kind` goes to.
    pub fn routed(&self, kind: &str) -> &[Channel] {
        self.route.get(kind).unwrap_or(&self.channels)
    }

    /// How often to remind, or `None` for never.
    pub fn remind_every(&self) -> Option<std::time::Duration> {
        (self.remind != "off")
            .then(|| crate::clock::parse_duration(&self.remind).ok())
            .flatten()
    }

    /// Checks what deserialising can't; `repo_file` refuses secrets written into a
    /// committed file. Errors name the key.
    pub fn validate(&self, repo_file: bool) -> Result<(), (String, String)> {
        let err = |key: &str, msg: String| (key.to_string(), msg);
        if let Some(q) = &self.quiet {
            parse_quiet(q).map_err(|e| err("quiet", format!("notify.quiet: {e}")))?;
        }
        if let Some(d) = &self.digest {
            parse_clock(d).map_err(|e| err("digest", format!("notify.digest: {e}")))?;
        }
        if self.remind != "off" {
            match crate::clock::parse_duration(&self.remind) {
                Ok(d) if d.as_secs() >= 60 => {}
                Ok(_) => return Err(err("remind", "notify.remind: at least 1m".into())),
                Err(e) => return Err(err("remind", format!("notify.remind: {e} (or \"off\")"))),
            }
        }
        for (kind, to) in &self.route {
            if !NOTIFIED_KINDS.contains(&kind.as_str()) {
                return Err(err(
                    kind,
                    format!(
                        "notify.route: `{kind}` is not an inbox kind a person is told of ({})",
                        NOTIFIED_KINDS.join(", ")
                    ),
                ));
            }
            if let Some(c) = to.iter().find(|c| !self.channels.contains(c)) {
                return Err(err(
                    kind,
                    format!(
                        "notify.route.{kind}: `{}` is not in notify.channels, so it has no settings in force; add it there",
                        c.as_str()
                    ),
                ));
            }
        }
        let secrets = [
            (
                "token",
                "ntfy",
                self.ntfy.token.is_some(),
                self.ntfy.token_env.is_some(),
            ),
            (
                "token",
                "telegram",
                self.telegram.token.is_some(),
                self.telegram.token_env.is_some(),
            ),
            (
                "webhook",
                "slack",
                self.slack.webhook.is_some(),
                self.slack.webhook_env.is_some(),
            ),
        ];
        for (key, table, literal, env) in secrets {
            if literal && env {
                return Err(err(
                    key,
                    format!("notify.{table}: `{key}` and `{key}_env` both given; keep one"),
                ));
            }
        }
        // Where messages go, and what reaches it, are the person's: a repository's file
        // that named a server and an environment variable could send that variable's
        // value (in Telegram's URL, say) to anyone, from every clone's daemon.
        if repo_file {
            let set = [
                ("ntfy", self.ntfy != Ntfy::default()),
                ("telegram", self.telegram != Telegram::default()),
                ("slack", self.slack != Slack::default()),
            ];
            if let Some((table, _)) = set.iter().find(|(_, s)| *s) {
                return Err(err(
                    table,
                    format!(
                        "notify.{table}: where messages go and the secrets to reach it belong in your own config.toml, never a repository's file (it could send them, or an environment variable it names, anywhere)"
                    ),
                ));
            }
        }
        if !self.ntfy.server.starts_with("https://") && !self.ntfy.server.starts_with("http://") {
            return Err(err(
                "server",
                "notify.ntfy.server: not an http(s) URL".into(),
            ));
        }
        if let Some(t) = &self.ntfy.topic
            && (t.is_empty()
                || t.len() > 64
                || !t
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'))
        {
            return Err(err(
                "topic",
                format!("notify.ntfy.topic: `{t}` (1 to 64 letters, digits, - or _)"),
            ));
        }
        // A repository's file names channels whose addresses the person's own file gives;
        // the settings in force (the two merged) must be complete.
        if !repo_file && self.channels.contains(&Channel::Telegram) {
            if self.telegram.chat_id.is_none() {
                return Err(err(
                    "telegram",
                    "notify.telegram.chat_id: needed for the telegram channel".into(),
                ));
            }
            if self.telegram.token.is_none() && self.telegram.token_env.is_none() {
                return Err(err(
                    "telegram",
                    "notify.telegram: needs `token_env` or `token` (in your own config.toml)"
                        .into(),
                ));
            }
        }
        if !repo_file
            && self.channels.contains(&Channel::Slack)
            && self.slack.webhook.is_none()
            && self.slack.webhook_env.is_none()
        {
            return Err(err(
                "slack",
                "notify.slack: needs `webhook_env` or `webhook` (in your own config.toml)".into(),
            ));
        }
        Ok(())
    }
}

/// The line of `key` inside the `[notify…]` tables of `text`, for errors that come after
/// parsing (1 when it isn't found).
fn line_of(text: &str, key: &str) -> usize {
    let mut in_notify = false;
    for (n, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.starts_with('[') {
            in_notify = t.trim_start_matches('[').starts_with("notify");
            if in_notify && t.trim_end_matches(']').ends_with(&format!(".{key}")) {
                return n + 1;
            }
            continue;
        }
        let k = t.split('=').next().unwrap_or("").trim().trim_matches('"');
        if in_notify && k == key {
            return n + 1;
        }
    }
    1
}

/// Reads `[notify]` from a whole file's text (`repo_file`: a `.hallmark.toml`), naming the
/// file, the key and the line in errors. `None` when the file has no such table.
pub fn from_text(text: &str, path: &Path, repo_file: bool) -> Result<Option<Notify>, ConfigError> {
    #[derive(Deserialize)]
    struct File {
        notify: Option<Notify>,
    }
    let invalid = |message: String| ConfigError {
        path: path.to_path_buf(),
        message,
    };
    let file: File = toml::from_str(text).map_err(|e| {
        let msg = e.message().trim().to_string();
        invalid(match e.span() {
            Some(span) => {
                let line = text[..span.start.min(text.len())].matches('\n').count() + 1;
                let src = text.lines().nth(line - 1).unwrap_or("").trim();
                format!("line {line} (`{src}`): {msg}")
            }
            None => msg,
        })
    })?;
    let Some(notify) = file.notify else {
        return Ok(None);
    };
    notify.validate(repo_file).map_err(|(key, msg)| {
        let line = line_of(text, &key);
        let src = text.lines().nth(line - 1).unwrap_or("").trim();
        invalid(format!("line {line} (`{src}`): {msg}"))
    })?;
    Ok(Some(notify))
}

/// `[notify]` of the user's `config.toml` in `config_dir`: `None` when the file or the
/// table is absent.
pub fn user(config_dir: &Path) -> Result<Option<Notify>, ConfigError> {
    let path = config_dir.join("config.toml");
    match std::fs::read_to_string(&path) {
        Ok(text) => from_text(&text, &path, false),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(ConfigError {
            path,
            message: e.to_string(),
        }),
    }
}

/// The user's `[notify]` as written (for merging over a repository's), checked as
/// [`user`] checks it, with the file's path.
pub fn user_table(
    config_dir: &Path,
) -> Result<Option<(toml::Table, std::path::PathBuf)>, ConfigError> {
    let path = config_dir.join("config.toml");
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(ConfigError {
                path,
                message: e.to_string(),
            });
        }
    };
    if from_text(&text, &path, false)?.is_none() {
        return Ok(None);
    }
    let table: toml::Table = text.parse().map_err(|e: toml::de::Error| ConfigError {
        path: path.clone(),
        message: e.message().to_string(),
    })?;
    Ok(match table.get("notify") {
        Some(toml::Value::Table(t)) => Some((t.clone(), path)),
        _ => None,
    })
}

/// `text` (a user's `config.toml`) with `topic` as `[notify.ntfy] topic`, the rest of
/// the file kept as it was.
pub fn with_topic(text: &str, topic: &str) -> Result<String, String> {
    let mut doc: toml_edit::DocumentMut = text
        .parse()
        .map_err(|e: toml_edit::TomlError| e.to_string())?;
    let notify = doc
        .entry("notify")
        .or_insert_with(|| {
            let mut t = toml_edit::Table::new();
            t.set_implicit(true);
            toml_edit::Item::Table(t)
        })
        .as_table_mut()
        .ok_or("notify is not a table")?;
    let ntfy = notify
        .entry("ntfy")
        .or_insert_with(|| toml_edit::Item::Table(toml_edit::Table::new()))
        .as_table_mut()
        .ok_or("notify.ntfy is not a table")?;
    ntfy["topic"] = toml_edit::value(topic);
    Ok(doc.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str, repo: bool) -> Result<Option<Notify>, ConfigError> {
        from_text(text, Path::new("/u/config.toml"), repo)
    }

    #[test]
    fn a_full_table_parses_and_routes() {
        let n = parse(
            "[signing]\nkey = 1\n[notify]\nchannels = [\"desktop\", \"ntfy\", \"telegram\"]\nquiet = \"22:00-07:00\"\ndigest = \"08:00\"\nremind = \"4h\"\n[notify.ntfy]\ntopic = \"hall-abc\"\n[notify.telegram]\ntoken_env = \"TG\"\nchat_id = \"42\"\n[notify.route]\n\"ready?\" = [\"desktop\"]\nlit = []\n",
            false,
        )
        .expect("parses")
        .expect("has [notify]");
        assert_eq!(n.routed("ready?"), &[Channel::Desktop]);
        assert!(n.routed("lit").is_empty());
        assert_eq!(n.routed("question").len(), 3);
        assert_eq!(
            n.remind_every(),
            Some(std::time::Duration::from_secs(4 * 3600))
        );
        assert_eq!(
            parse_quiet(n.quiet.as_deref().unwrap_or_default()),
            Ok((1320, 420))
        );
        assert!(
            parse("[policy]\nmode = \"off\"\n", false)
                .expect("parses")
                .is_none()
        );
    }

    #[test]
    fn mistakes_name_the_key_the_file_and_the_line() {
        for (text, repo, needles) in [
            (
                "[notify]\nchanels = [\"desktop\"]",
                false,
                vec!["line 2", "chanels"],
            ),
            (
                "[notify]\nchannels = [\"pager\"]",
                false,
                vec!["line 2", "pager"],
            ),
            (
                "[notify]\nquiet = \"22-7\"",
                false,
                vec!["line 2", "notify.quiet"],
            ),
            (
                "[notify]\n\ndigest = \"8:00\"",
                false,
                vec!["line 3", "notify.digest"],
            ),
            (
                "[notify]\nremind = \"soon\"",
                false,
                vec!["line 2", "notify.remind"],
            ),
            (
                "[notify]\nremind = \"10s\"",
                false,
                vec!["line 2", "at least 1m"],
            ),
            (
                "[notify.route]\nquestions = []",
                false,
                vec!["line 2", "not an inbox kind"],
            ),
            (
                "[notify]\nchannels = [\"desktop\"]\n[notify.route]\nlit = [\"slack\"]",
                false,
                vec!["line 4", "not in notify.channels"],
            ),
            (
                "[notify]\nchannels = [\"slack\"]\n[notify.slack]\nwebhook = \"https://hooks.example/x\"",
                true,
                vec!["line 3", "notify.slack", "your own config.toml"],
            ),
            (
                "[notify]\nchannels = [\"telegram\"]\n[notify.telegram]\napi = \"https://evil.example\"\ntoken_env = \"AWS_SECRET_ACCESS_KEY\"\nchat_id = \"1\"",
                true,
                vec!["line 3", "notify.telegram", "never a repository's file"],
            ),
            (
                "[notify.telegram]\ntoken = \"1:A\"\ntoken_env = \"TG\"",
                false,
                vec!["line 2", "both given"],
            ),
            (
                "[notify]\nchannels = [\"telegram\"]\n[notify.telegram]\ntoken_env = \"TG\"",
                false,
                vec!["line 3", "chat_id"],
            ),
            (
                "[notify.ntfy]\ntopic = \"a b\"",
                false,
                vec!["line 2", "notify.ntfy.topic"],
            ),
        ] {
            let e = parse(text, repo).expect_err(text);
            assert!(e.to_string().starts_with("/u/config.toml: "), "{e}");
            for n in needles {
                assert!(e.message.contains(n), "{text}: `{n}` not in {}", e.message);
            }
        }
    }

    #[test]
    fn a_repository_names_channels_and_the_person_gives_their_addresses() {
        let repo = parse(
            "[notify]\nchannels = [\"desktop\", \"telegram\"]\nquiet = \"22:00-07:00\"\n",
            true,
        )
        .expect("a repository may name the channel")
        .expect("has [notify]");
        assert_eq!(repo.channels, [Channel::Desktop, Channel::Telegram]);
        // The same alone in a person's file is incomplete.
        let e = parse("[notify]\nchannels = [\"telegram\"]\n", false).expect_err("no chat");
        assert!(e.message.contains("chat_id"), "{}", e.message);
    }

    #[test]
    fn clock_times_are_strict() {
        assert_eq!(parse_clock("07:30"), Ok(450));
        for bad in ["7:30", "24:00", "07:60", "0730", "07:3x"] {
            assert!(parse_clock(bad).is_err(), "{bad}");
        }
        assert!(parse_quiet("08:00-08:00").is_err());
    }
}
