//! The error half of the agent contract: every failure has a code, an exit code, a
//! message and the `next` commands that would fix it.

use std::fmt;

use schemars::JsonSchema;
use serde::Serialize;

/// Every error code `hall` can return. The exit code is derived from the code, so the
/// table in the docs and `hall schema error` can't drift from the binary.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Code {
    Internal,
    CommandFailed,
    GhUnavailable,
    RunFailed,
    JournalCorrupt,
    Usage,
    InvalidVerdict,
    InvalidConfig,
    NotARepo,
    NotInitialized,
    ItemNotFound,
    NoItem,
    QuestionNotFound,
    WrongState,
    ItemInReview,
    DirtyWorktree,
    AlreadyAnswered,
    ChildrenOpen,
    MergeConflict,
    BudgetExceeded,
    GateDenied,
    ChecksFailed,
    Claimed,
    RoomFailed,
    RoomIncompatible,
    RoomNotFound,
    RoomInputInvalid,
    NotHallmarked,
    NoAllowedSigners,
}

impl Code {
    pub const ALL: [Code; 29] = [
        Code::Internal,
        Code::CommandFailed,
        Code::GhUnavailable,
        Code::RunFailed,
        Code::JournalCorrupt,
        Code::Usage,
        Code::InvalidVerdict,
        Code::InvalidConfig,
        Code::NotARepo,
        Code::NotInitialized,
        Code::ItemNotFound,
        Code::NoItem,
        Code::QuestionNotFound,
        Code::WrongState,
        Code::ItemInReview,
        Code::DirtyWorktree,
        Code::AlreadyAnswered,
        Code::ChildrenOpen,
        Code::MergeConflict,
        Code::BudgetExceeded,
        Code::GateDenied,
        Code::ChecksFailed,
        Code::Claimed,
        Code::RoomFailed,
        Code::RoomIncompatible,
        Code::RoomNotFound,
        Code::RoomInputInvalid,
        Code::NotHallmarked,
        Code::NoAllowedSigners,
    ];

    /// The process exit code for this error.
    pub fn exit(self) -> u8 {
        use Code::*;
        match self {
            Internal | CommandFailed | GhUnavailable | RunFailed | JournalCorrupt | RoomFailed => 1,
            Usage | InvalidVerdict | InvalidConfig | RoomIncompatible | RoomInputInvalid => 2,
            NotARepo | NotInitialized | ItemNotFound | NoItem | QuestionNotFound | RoomNotFound
            | NoAllowedSigners => 3,
            WrongState | ItemInReview | DirtyWorktree | AlreadyAnswered | ChildrenOpen
            | MergeConflict | BudgetExceeded => 4,
            GateDenied | NotHallmarked => 5,
            ChecksFailed => 6,
            Claimed => 7,
        }
    }

    pub fn as_str(self) -> String {
        serde_json::to_value(self)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default()
    }

    /// One line on when the code is returned, for `hall schema error` and the docs.
    pub fn meaning(self) -> &'static str {
        use Code::*;
        match self {
            Internal => "hall itself failed; the message says where",
            CommandFailed => "a git command or template command failed",
            GhUnavailable => "the GitHub CLI is missing or not logged in",
            RunFailed => "a headless model run failed",
            JournalCorrupt => "a journal line in the middle of a file does not decode",
            Usage => "bad arguments",
            InvalidVerdict => "a verdict does not match the verdict schema",
            InvalidConfig => ".hallmark.toml has an unknown key or a wrong type",
            NotARepo => "not inside a git repository",
            NotInitialized => "the repository has no journal yet",
            ItemNotFound => "no item has that id",
            NoItem => "no item was named and the current directory is not an item's worktree",
            QuestionNotFound => "no question has that id",
            WrongState => "the item's state does not allow the action",
            ItemInReview => "the item is in the review loop at another commit",
            DirtyWorktree => "the worktree has uncommitted changes",
            AlreadyAnswered => "the question already has a different answer",
            ChildrenOpen => "a parallel part of the item is still open",
            MergeConflict => "a merge or rebase conflicted",
            BudgetExceeded => "a budget cap was reached",
            GateDenied => "a gate refused the action",
            ChecksFailed => "the repository's checks failed",
            Claimed => "another agent holds the lease",
            RoomFailed => {
                "a room trapped, panicked, looped past its deadline or hit its memory cap"
            }
            RoomIncompatible => {
                "a configured room does not implement its world at a version this hall supports"
            }
            RoomNotFound => {
                "no room by that name, or its component is missing from the base branch"
            }
            RoomInputInvalid => "the input given to a room does not match its world's types",
            NotHallmarked => {
                "the commit carries no valid signed hallmark; `check` names the failed check"
            }
            NoAllowedSigners => {
                "the base branch has no .hallmark/allowed_signers to verify hallmarks against"
            }
        }
    }
}

/// A failure with its code, message and the commands that make sense next.
#[derive(Clone, Debug, PartialEq)]
pub struct HallError {
    pub code: Code,
    pub message: String,
    pub next: Vec<String>,
    /// For `NOT_HALLMARKED`: the machine-readable name of the check that failed.
    pub check: Option<String>,
}

impl HallError {
    pub fn new(code: Code, message: impl Into<String>) -> Self {
        HallError {
            code,
            message: message.into(),
            next: Vec::new(),
            check: None,
        }
    }

    /// Names the failed check (`NOT_HALLMARKED` replies carry it as `check`).
    pub fn with_check(mut self, check: impl Into<String>) -> Self {
        self.check = Some(check.into());
        self
    }

    /// Adds a command to `next`.
    pub fn hint(mut self, command: impl Into<String>) -> Self {
        self.next.push(command.into());
        self
    }

    pub fn internal(message: impl fmt::Display) -> Self {
        HallError::new(Code::Internal, message.to_string())
    }

    pub fn usage(message: impl Into<String>) -> Self {
        HallError::new(Code::Usage, message).hint("hall help --json")
    }

    pub fn reply(&self) -> ErrorReply {
        ErrorReply {
            error: ErrorBody {
                code: self.code,
                message: self.message.clone(),
                next: self.next.clone(),
                check: self.check.clone(),
            },
        }
    }
}

impl fmt::Display for HallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code.as_str(), self.message)
    }
}

impl std::error::Error for HallError {}

impl From<std::io::Error> for HallError {
    fn from(e: std::io::Error) -> Self {
        HallError::internal(e)
    }
}

/// `{"error":{…}}`, the shape every failure is printed in.
#[derive(Serialize, JsonSchema)]
pub struct ErrorReply {
    pub error: ErrorBody,
}

/// The body of an error reply.
#[derive(Serialize, JsonSchema)]
pub struct ErrorBody {
    pub code: Code,
    pub message: String,
    /// Commands that make sense now.
    pub next: Vec<String>,
    /// The failed check, on `NOT_HALLMARKED` (`no_note`, `unsigned`, `bad_signature`…).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub check: Option<String>,
}

pub type Result<T, E = HallError> = std::result::Result<T, E>;
