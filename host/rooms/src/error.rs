//! The one error type of the rooms module, with the agent-contract code of each
//! case, so the CLI can classify a room problem without knowing wasmtime.

use std::fmt;
use std::time::Duration;

/// Why a room call did not produce an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// It ran past its deadline and was stopped.
    Timeout,
    /// It tried to grow its memory past the cap.
    Memory,
    /// It panicked; the message is in `stderr`.
    Panic,
    /// It reached an `unreachable` instruction with no panic message: an
    /// explicit abort.
    Abort,
    /// It ran out of call stack.
    StackOverflow,
    /// It called `wasi:cli/exit` instead of returning.
    Exit,
    /// It trapped for another reason (a bug in the room); the detail names it.
    Trap,
    /// It wrote more to stdout or stderr than hall keeps.
    Output,
    /// Its answer was larger than hall accepts.
    Answer,
    /// It could not be instantiated.
    Instantiate,
}

impl fmt::Display for FailureKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Timeout => "timeout",
            Self::Memory => "memory",
            Self::Panic => "panic",
            Self::Abort => "abort",
            Self::StackOverflow => "stack_overflow",
            Self::Exit => "exit",
            Self::Trap => "trap",
            Self::Output => "output",
            Self::Answer => "answer",
            Self::Instantiate => "instantiate",
        })
    }
}

/// An error from loading, checking or calling a room.
#[derive(Debug, thiserror::Error)]
pub enum RoomError {
    /// The room misbehaved during a call: it is a bug in the room, and hall is
    /// unharmed.
    #[error("{}", failed_message(room, *kind, detail, stderr, *limit))]
    Failed {
        /// The room's name (see `RoomInfo::name`).
        room: String,
        /// What went wrong.
        kind: FailureKind,
        /// The cause in a few words, such as `integer divide by zero` or
        /// `exited with status 1`.
        detail: String,
        /// What the room wrote to stderr (bounded), where a panic message lands.
        stderr: String,
        /// What the room wrote to stdout (bounded).
        stdout: String,
        /// The deadline, for timeouts.
        limit: Option<Duration>,
    },
    /// The component cannot serve the world it was configured for.
    #[error("{message}")]
    Incompatible {
        /// The room's name.
        room: String,
        /// What it implements and what this hall supports.
        message: String,
    },
    /// No room serves the world, or the component file is missing.
    #[error("{message}")]
    NotFound {
        /// The room or world asked for.
        room: String,
        /// What was looked for, and where.
        message: String,
    },
    /// The JSON given to `run_json` does not fit the world's input type.
    #[error("the input for room {room} does not fit its world: {message}")]
    Input {
        /// The room's name.
        room: String,
        /// serde's description.
        message: String,
    },
    /// hall could not set up the sandbox itself (not the room's fault).
    #[error("the room runtime failed: {0}")]
    Runtime(String),
}

impl RoomError {
    /// The agent-contract error code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Failed { .. } => "ROOM_FAILED",
            Self::Incompatible { .. } => "ROOM_INCOMPATIBLE",
            Self::NotFound { .. } => "ROOM_NOT_FOUND",
            Self::Input { .. } => "ROOM_INPUT_INVALID",
            Self::Runtime(_) => "INTERNAL",
        }
    }

    /// The human-readable message (the same as `Display`).
    pub fn message(&self) -> String {
        self.to_string()
    }

    /// For a failed call, what went wrong.
    pub fn failure_kind(&self) -> Option<FailureKind> {
        match self {
            Self::Failed { kind, .. } => Some(*kind),
            _ => None,
        }
    }
}

fn failed_message(
    room: &str,
    kind: FailureKind,
    detail: &str,
    stderr: &str,
    limit: Option<Duration>,
) -> String {
    let mut text = match kind {
        FailureKind::Timeout => match limit {
            Some(limit) => format!(
                "room {room} ran past its {} ms deadline and was stopped",
                limit.as_millis()
            ),
            None => format!("room {room} ran past its deadline and was stopped"),
        },
        FailureKind::Memory => format!("room {room} hit its memory cap: {detail}"),
        FailureKind::Panic => format!("room {room} panicked"),
        FailureKind::Abort => format!(
            "room {room} aborted: it executed a WebAssembly `unreachable` instruction, \
             which is what `std::process::abort` does"
        ),
        FailureKind::StackOverflow => format!(
            "room {room} overflowed its stack ({detail}); look for recursion without an end"
        ),
        FailureKind::Exit => format!("room {room} {detail} instead of returning an answer"),
        FailureKind::Trap => format!("room {room} trapped: {detail}"),
        FailureKind::Output => format!("room {room} wrote {detail}, more than hall keeps"),
        FailureKind::Answer => format!("room {room} returned {detail}"),
        FailureKind::Instantiate => format!("room {room} could not start: {detail}"),
    };
    // A flood of output is the failure itself, not an explanation of it.
    let stderr = stderr.trim();
    if kind != FailureKind::Output && !stderr.is_empty() {
        text.push_str(": ");
        text.push_str(&first_lines(stderr, 6, 400));
    }
    text
}

/// The first `n` lines of `text`, each cut to `width` characters, with a
/// marker where anything was cut.
fn first_lines(text: &str, n: usize, width: usize) -> String {
    let mut lines = text.lines();
    let kept: Vec<String> = lines
        .by_ref()
        .take(n)
        .map(|line| match line.char_indices().nth(width) {
            Some((cut, _)) => format!("{}…", &line[..cut]),
            None => line.to_string(),
        })
        .collect();
    let mut out = kept.join("\n");
    if lines.next().is_some() {
        out.push_str("\n…");
    }
    out
}
