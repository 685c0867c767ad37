//! `hall notify test` and `hall notify now`: the notify worker's channels tried by hand,
//! and its pass run on demand.

use serde::Serialize;

use super::{Ctx, Reply, next_text};
use crate::cli::NotifyCmd;
use crate::config::Channel;
use crate::error::{Code, HallError, Result};

#[derive(Serialize, schemars::JsonSchema)]
pub struct ChannelResult {
    pub channel: String,
    pub ok: bool,
    /// Where it went, or why it failed.
    pub said: String,
}

#[derive(Serialize, schemars::JsonSchema)]
pub struct NotifyReply {
    /// `hall notify test`: one row per channel tried.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub channels: Vec<ChannelResult>,
    /// `hall notify now`: what the pass did, a line each.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub did: Vec<String>,
    pub next: Vec<String>,
}

/// Where a person's `[notify]` goes, for the error that says there is none.
fn config_hint() -> String {
    crate::platform::config_dir()
        .map(|d| format!("edit {}", d.join("config.toml").display()))
        .unwrap_or_else(|| "hall schema config".into())
}

/// Whether a stopped daemon waits in the inbox, notifications are set up, and no
/// channel was told of it yet: the daemon can't say it stopped, so a session starting
/// says it for it (through `hall notify now`, started in the background).
pub fn stopped_daemon_untold(hall: &crate::hall::Hall) -> bool {
    let Some(entry) = super::inbox::daemon_stopped() else {
        return false;
    };
    if !matches!(crate::office::notify::settings(hall), Ok(Some(_))) {
        return false;
    }
    hall.index()
        .and_then(|i| Ok(i.notified()?))
        .is_ok_and(|rows| {
            !rows
                .iter()
                .any(|r| r.key == entry.key && r.stamp == entry.since)
        })
}

pub fn run(ctx: &Ctx, cmd: &NotifyCmd) -> Result<Reply> {
    let hall = ctx.hall()?;
    match cmd {
        NotifyCmd::Test { channel } => {
            let only = channel.as_deref().and_then(Channel::parse);
            let results = crate::office::notify::test(&hall, only)?;
            if results.is_empty() {
                return Err(HallError::new(
                    Code::InvalidConfig,
                    match only {
                        Some(c) => format!("`{}` is not in notify.channels", c.as_str()),
                        None => "no [notify] in your config.toml or the repository's .hallmark.toml: nothing would be sent".into(),
                    },
                )
                .hint(config_hint())
                .hint("hall help notify test"));
            }
            let rows: Vec<ChannelResult> = results
                .into_iter()
                .map(|(c, r)| ChannelResult {
                    channel: c.as_str().into(),
                    ok: r.is_ok(),
                    said: r.unwrap_or_else(|e| e),
                })
                .collect();
            let failed: Vec<&ChannelResult> = rows.iter().filter(|r| !r.ok).collect();
            if !failed.is_empty() {
                let what: Vec<String> = rows
                    .iter()
                    .map(|r| format!("{}: {}", r.channel, r.said))
                    .collect();
                let mut err = HallError::new(
                    Code::CommandFailed,
                    format!(
                        "{} of {} channels failed: {}",
                        failed.len(),
                        rows.len(),
                        what.join("; ")
                    ),
                )
                .hint(config_hint());
                for f in failed {
                    err = err.hint(format!("hall notify test --channel {}", f.channel));
                }
                return Err(err);
            }
            let next = vec!["hall inbox".to_string()];
            let text = rows
                .iter()
                .map(|r| format!("{}: {}", r.channel, r.said))
                .chain(std::iter::once(next_text(&next)))
                .collect::<Vec<_>>()
                .join("\n");
            Ok(Reply::new(
                &NotifyReply {
                    channels: rows,
                    did: Vec::new(),
                    next,
                },
                text,
            ))
        }
        NotifyCmd::Now => {
            let extra = super::inbox::daemon_stopped().into_iter().collect();
            let did = crate::office::notify::pass(&hall, ctx, extra, true)?;
            let next = vec!["hall inbox".to_string(), "hall log --kind notified".into()];
            let text = if did.is_empty() {
                "Nothing to tell.".to_string()
            } else {
                did.join("\n")
            };
            Ok(Reply::new(
                &NotifyReply {
                    channels: Vec::new(),
                    did,
                    next: next.clone(),
                },
                format!("{text}\n{}", next_text(&next)),
            ))
        }
    }
}
