//! A scripted stand-in for the Anthropic Messages API, and a runner for the real `claude` CLI.
//!
//! End-to-end tests drive the pinned Claude Code CLI (installed by `npm ci --prefix tests/claude`)
//! with no network: `ANTHROPIC_BASE_URL` points at a [`StubServer`] on 127.0.0.1, which plays a
//! fixed list of [`Turn`]s, one per main-loop request, and records every request body so a test
//! can check what reached the model (hook context, tool results, denial reasons).
//!
//! Only std and serde_json, no async runtime: one thread accepts, one short-lived thread serves
//! each connection, every socket has a timeout, and dropping the server stops it.
//!
//! ```ignore
//! let stub = StubServer::start([Turn::bash("git push origin HEAD"), Turn::text("Stopped.")])?;
//! let run = ClaudeCommand::new(&stub, home.path(), repo.path(), "push it")
//!     .plugin_dir(plugin_dir)
//!     .run()?;
//! assert!(run.succeeded(), "{}", run.describe());
//! let denied = stub.turn_requests()[1].tool_result_for("toolu_stub_0001_0").cloned();
//! ```
//!
//! Where the CLI puts things moves between models and versions: hook context arrives as a
//! `role: "system"` message for current models and as a `<system-reminder>` text block for older
//! ones, and tool results get reminders appended. Assert with [`RecordedRequest::mentions`] and
//! `contains`, not with fixed indexes or equality.

use std::collections::VecDeque;
use std::fmt;
use std::io::{self, Read};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::http;

mod cli;
mod server;

pub use cli::{ClaudeCommand, ClaudeRun, claude_binary};
pub use server::{SIDE_TEXT, StubServer, UNSCRIPTED_TEXT};

/// Model name the runner passes with `--model` unless a test picks another.
///
/// A current model: CLI 2.1.332 marks `claude-sonnet-4-5` as retired.
pub const DEFAULT_MODEL: &str = "claude-sonnet-5-5";

/// Environment variable that overrides where [`claude_binary`] looks for the CLI.
pub const CLAUDE_BIN_ENV: &str = "HALLMARK_TEST_CLAUDE";

/// Token counts the stub reports for one response.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Usage {
    /// `usage.input_tokens`.
    pub input_tokens: u64,
    /// `usage.output_tokens` (sent in `message_delta`; `message_start` carries 1).
    pub output_tokens: u64,
    /// `usage.cache_read_input_tokens`.
    pub cache_read_input_tokens: u64,
    /// `usage.cache_creation_input_tokens`.
    pub cache_creation_input_tokens: u64,
}

impl Default for Usage {
    fn default() -> Self {
        Self {
            input_tokens: 100,
            output_tokens: 20,
            cache_read_input_tokens: 0,
            cache_creation_input_tokens: 0,
        }
    }
}

/// One content block of a scripted response.
#[derive(Clone, Debug, PartialEq)]
pub enum Block {
    /// A text block.
    Text(String),
    /// A tool call; the stub assigns the `toolu_…` id.
    ToolUse {
        /// Tool name as the CLI lists it, e.g. `Bash`, `Edit`, `Write`, `Skill`.
        name: String,
        /// Tool input, e.g. `{"command": "git push origin HEAD"}`.
        input: Value,
    },
}

/// What one scripted turn answers: a message, or an HTTP error.
#[derive(Clone, Debug, PartialEq)]
enum Reply {
    Message {
        blocks: Vec<Block>,
        stop_reason: String,
        usage: Usage,
    },
    Error {
        status: u16,
        kind: String,
        message: String,
    },
}

/// One scripted model response, consumed by one main-loop request.
#[derive(Clone, Debug, PartialEq)]
pub struct Turn {
    reply: Reply,
    times: usize,
}

impl Turn {
    /// A text-only answer that ends the run (`stop_reason: end_turn`).
    pub fn text(text: impl Into<String>) -> Self {
        Self::message(vec![Block::Text(text.into())], "end_turn")
    }

    /// A call to `tool` with `input` (`stop_reason: tool_use`).
    pub fn tool_use(tool: impl Into<String>, input: Value) -> Self {
        Self::message(
            vec![Block::ToolUse {
                name: tool.into(),
                input,
            }],
            "tool_use",
        )
    }

    /// A Bash tool call running `command`.
    pub fn bash(command: impl Into<String>) -> Self {
        let command = command.into();
        Self::tool_use(
            "Bash",
            json!({ "command": command, "description": "Run a command" }),
        )
    }

    /// A Write tool call creating `file_path` (absolute) with `content`.
    pub fn write(file_path: impl AsRef<Path>, content: impl Into<String>) -> Self {
        let path = file_path.as_ref().display().to_string();
        Self::tool_use(
            "Write",
            json!({ "file_path": path, "content": content.into() }),
        )
    }

    /// An Edit tool call replacing `old` with `new` in `file_path` (absolute).
    pub fn edit(
        file_path: impl AsRef<Path>,
        old: impl Into<String>,
        new: impl Into<String>,
    ) -> Self {
        let path = file_path.as_ref().display().to_string();
        Self::tool_use(
            "Edit",
            json!({ "file_path": path, "old_string": old.into(), "new_string": new.into() }),
        )
    }

    /// Any blocks with an explicit stop reason (`end_turn`, `tool_use`, `max_tokens`, …).
    pub fn message(blocks: Vec<Block>, stop_reason: impl Into<String>) -> Self {
        Self {
            reply: Reply::Message {
                blocks,
                stop_reason: stop_reason.into(),
                usage: Usage::default(),
            },
            times: 1,
        }
    }

    /// An API error: `status` with body `{"type":"error","error":{"type":kind,"message":…}}`.
    ///
    /// Each attempt the CLI makes consumes one turn, and how often it tries depends on the
    /// status and the CLI version (2.1.332: 403 once; 401, 404, 500 twice with
    /// `CLAUDE_CODE_MAX_RETRIES=1`; 400 six times, dropping beta headers one by one). Use
    /// [`times`](Self::times) with a generous count when the error should end the run.
    pub fn error(status: u16, kind: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            reply: Reply::Error {
                status,
                kind: kind.into(),
                message: message.into(),
            },
            times: 1,
        }
    }

    /// Serves this turn for the next `n` main-loop requests instead of one (at least one).
    #[must_use]
    pub fn times(mut self, n: usize) -> Self {
        self.times = n.max(1);
        self
    }

    /// Puts a text block before the existing blocks ("I'll push now.").
    #[must_use]
    pub fn with_preamble(mut self, text: impl Into<String>) -> Self {
        if let Reply::Message { blocks, .. } = &mut self.reply {
            blocks.insert(0, Block::Text(text.into()));
        }
        self
    }

    /// Sets the usage this response reports.
    #[must_use]
    pub fn with_usage(mut self, new_usage: Usage) -> Self {
        if let Reply::Message { usage, .. } = &mut self.reply {
            *usage = new_usage;
        }
        self
    }
}

/// What the stub did with a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RequestKind {
    /// A main-loop `POST /v1/messages` answered with the script's `n`th response (0-based;
    /// a turn repeated with [`Turn::times`] takes several numbers).
    Turn(usize),
    /// A main-loop request that arrived after the script ran out; answered with a fixed text.
    Unscripted,
    /// A `POST /v1/messages` without tools (title, summary, quota probe…); answered, not scripted.
    Side,
    /// `POST /v1/messages/count_tokens`.
    CountTokens,
    /// Anything else; answered `200 {}`.
    Other,
}

/// One request as the stub received it.
#[derive(Clone, Debug)]
pub struct RecordedRequest {
    /// HTTP method.
    pub method: String,
    /// Path including the query string, e.g. `/v1/messages?beta=true`.
    pub path: String,
    /// Headers, names lower-cased, in arrival order.
    pub headers: Vec<(String, String)>,
    /// The body as text (lossy UTF-8).
    pub raw_body: String,
    /// The body parsed as JSON, or `Null` when it isn't JSON.
    pub body: Value,
    /// How the stub classified and answered it.
    pub kind: RequestKind,
}

impl RecordedRequest {
    /// The first header called `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.as_str())
    }

    /// `body.model`.
    pub fn model(&self) -> Option<&str> {
        self.body.get("model").and_then(Value::as_str)
    }

    /// `body.messages`, or an empty slice.
    pub fn messages(&self) -> &[Value] {
        self.body
            .get("messages")
            .and_then(Value::as_array)
            .map_or(&[], Vec::as_slice)
    }

    /// The last message with `role: "user"`.
    pub fn last_user_message(&self) -> Option<&Value> {
        self.messages()
            .iter()
            .rev()
            .find(|m| m.get("role").and_then(Value::as_str) == Some("user"))
    }

    /// Names of the tools offered to the model.
    pub fn tool_names(&self) -> Vec<&str> {
        self.body
            .get("tools")
            .and_then(Value::as_array)
            .map(|tools| {
                tools
                    .iter()
                    .filter_map(|t| t.get("name").and_then(Value::as_str))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Every `tool_result` block in `messages`, oldest first.
    pub fn tool_results(&self) -> Vec<&Value> {
        self.messages()
            .iter()
            .filter_map(|m| m.get("content").and_then(Value::as_array))
            .flatten()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
            .collect()
    }

    /// The `tool_result` block answering `tool_use_id`.
    pub fn tool_result_for(&self, tool_use_id: &str) -> Option<&Value> {
        self.tool_results()
            .into_iter()
            .find(|b| b.get("tool_use_id").and_then(Value::as_str) == Some(tool_use_id))
    }

    /// Every text the request carries: `system` blocks and message text, including text nested
    /// in `tool_result` content, in order.
    pub fn texts(&self) -> Vec<&str> {
        let mut out = Vec::new();
        if let Some(system) = self.body.get("system") {
            collect_texts(system, &mut out);
        }
        for message in self.messages() {
            if let Some(content) = message.get("content") {
                collect_texts(content, &mut out);
            }
        }
        out
    }

    /// Whether any text in [`texts`](Self::texts) contains `needle`.
    pub fn mentions(&self, needle: &str) -> bool {
        self.texts().iter().any(|t| t.contains(needle))
    }
}

/// Gathers string content and `text` fields from a message content value.
fn collect_texts<'a>(value: &'a Value, out: &mut Vec<&'a str>) {
    match value {
        Value::String(s) => out.push(s),
        Value::Array(items) => items.iter().for_each(|item| collect_texts(item, out)),
        Value::Object(map) => {
            if let Some(Value::String(text)) = map.get("text") {
                out.push(text);
            }
            if let Some(content) = map.get("content") {
                collect_texts(content, out);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests;
