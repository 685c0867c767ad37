//! The channels a person is told things on: the desktop's notification service and
//! three phone services spoken to over HTTPS (ntfy, Telegram's Bot API, a Slack
//! incoming webhook). This adapter sends one [`Message`] and says how it went; what to
//! send, when, and what to record is the notify worker's (`crate::office::notify`).
//!
//! A message carries only what a person needs to act: the repository's name, the item,
//! what waits (a question and its options), and the command that answers. Never code,
//! a diff, a prompt or a path: [`Message`] has no field that could hold one.

mod desktop;
mod phone;

use std::time::Duration;

use crate::config::{Channel, Notify};

/// One notification.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    /// One line: `hall · repo: H-0003 asks`.
    pub title: String,
    /// What waits, in a sentence or two (a question and its options).
    pub body: String,
    /// The command that answers it (`hall answer Q-4 "…"`), or empty.
    pub answer: String,
    /// The same for every delivery of this message, so a receiver (or a person) can
    /// tell a repeat: the inbox entry's key, its stamp and the reminder's number.
    pub key: String,
}

impl Message {
    /// The message as plain text: title, body and the command.
    pub fn plain(&self) -> String {
        let mut out = format!("{}\n{}", self.title, self.body);
        if !self.answer.is_empty() {
            out.push_str(&format!("\n→ {}", self.answer));
        }
        out
    }
}

/// How one attempt went.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    Sent,
    /// The service said to slow down: try again after this long.
    RetryAfter(Duration),
    /// It failed; the reason, for the notice and `hall notify test`.
    Failed(String),
}

/// A channel with its settings resolved (secrets read from the environment).
#[derive(Clone, Debug)]
pub enum Target {
    Desktop,
    Ntfy {
        server: String,
        topic: String,
        token: Option<String>,
    },
    Telegram {
        api: String,
        token: String,
        chat_id: String,
    },
    Slack {
        webhook: String,
    },
}

impl Target {
    /// `channel`'s settings from `notify`, secrets from the environment they name. The
    /// ntfy topic must be set by now (the worker makes one on first use).
    pub fn resolve(notify: &Notify, channel: Channel) -> Result<Target, String> {
        let secret = |literal: &Option<String>, env: &Option<String>, what: &str| {
            if let Some(v) = literal {
                return Ok(Some(v.clone()));
            }
            match env {
                Some(name) => std::env::var(name)
                    .map(Some)
                    .map_err(|_| format!("{what}: the environment variable {name} is not set")),
                None => Ok(None),
            }
        };
        Ok(match channel {
            Channel::Desktop => Target::Desktop,
            Channel::Ntfy => Target::Ntfy {
                server: notify.ntfy.server.trim_end_matches('/').to_string(),
                topic: notify
                    .ntfy
                    .topic
                    .clone()
                    .ok_or("ntfy: no topic (run `hall notify test` to make one)")?,
                token: secret(&notify.ntfy.token, &notify.ntfy.token_env, "ntfy")?,
            },
            Channel::Telegram => Target::Telegram {
                api: notify.telegram.api.trim_end_matches('/').to_string(),
                token: secret(
                    &notify.telegram.token,
                    &notify.telegram.token_env,
                    "telegram",
                )?
                .ok_or("telegram: no bot token")?,
                chat_id: notify
                    .telegram
                    .chat_id
                    .clone()
                    .ok_or("telegram: no chat_id")?,
            },
            Channel::Slack => Target::Slack {
                webhook: secret(&notify.slack.webhook, &notify.slack.webhook_env, "slack")?
                    .ok_or("slack: no webhook")?,
            },
        })
    }

    pub fn channel(&self) -> Channel {
        match self {
            Target::Desktop => Channel::Desktop,
            Target::Ntfy { .. } => Channel::Ntfy,
            Target::Telegram { .. } => Channel::Telegram,
            Target::Slack { .. } => Channel::Slack,
        }
    }

    /// Where it goes, for a person, without secrets: `ntfy https://ntfy.sh/hall-…`.
    pub fn describe(&self) -> String {
        match self {
            Target::Desktop => "the desktop".into(),
            Target::Ntfy { server, topic, .. } => format!("{server}/{topic}"),
            Target::Telegram { chat_id, .. } => format!("Telegram chat {chat_id}"),
            Target::Slack { .. } => "the Slack webhook".into(),
        }
    }

    /// One attempt to deliver `msg`.
    pub fn send(&self, msg: &Message) -> Outcome {
        match self {
            Target::Desktop => desktop::show(msg),
            _ => phone::send(self, msg),
        }
    }
}

/// Sends `msg`, waiting out rate limits up to `patience` in all; returns the last
/// outcome (a `RetryAfter` when the wait asked for would exceed it).
pub fn deliver(target: &Target, msg: &Message, patience: Duration) -> Outcome {
    let mut waited = Duration::ZERO;
    loop {
        match target.send(msg) {
            Outcome::RetryAfter(d) if waited + d <= patience => {
                std::thread::sleep(d);
                waited += d;
            }
            other => return other,
        }
    }
}
