//! The error half of the agent contract: every failure has a code, an exit code, a
//! message and the `next` commands that would fix it.
//!
//! Adapters fail with errors of their own (`GitError`, `GhError`, `JournalError`,
//! `IndexError`, `RoomError`, `SignError`, `ClaudeError`, `TemplateError`,
//! `ConfigError`), which say what happened and keep their cause. This module is where
//! each becomes a [`HallError`]: it picks the code and adds the commands that help, and
//! the adapter's error stays reachable as the [`std::error::Error::source`] of the
//! result, so nothing below the service layer knows about `hall` commands.

use std::fmt;
use std::path::Path;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Serialize;

use crate::claude::ClaudeError;
use crate::config::ConfigError;
use crate::gh::GhError;
use crate::git::GitError;
use crate::index::IndexError;
use crate::journal::JournalError;
use crate::library::LibraryError;
use crate::rooms::RoomError;
use crate::sign::SignError;
use crate::template::TemplateError;

/// Every error code `hall` can return. The exit code is derived from the code, so the
/// table in the docs and `hall schema error` can't drift from the binary.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, JsonSchema)]
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
    LearningNotFound,
    LearningInvalid,
    SearchUnavailable,
}

impl Code {
    pub const ALL: [Code; 32] = [
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
        Code::LearningNotFound,
        Code::LearningInvalid,
        Code::SearchUnavailable,
    ];

    /// The process exit code for this error.
    pub fn exit(self) -> u8 {
        use Code::*;
        match self {
            Internal | CommandFailed | GhUnavailable | RunFailed | JournalCorrupt | RoomFailed
            | SearchUnavailable => 1,
            Usage | InvalidVerdict | InvalidConfig | RoomIncompatible | RoomInputInvalid
            | LearningInvalid => 2,
            NotARepo | NotInitialized | ItemNotFound | NoItem | QuestionNotFound | RoomNotFound
            | NoAllowedSigners | LearningNotFound => 3,
            WrongState | ItemInReview | DirtyWorktree | AlreadyAnswered | ChildrenOpen
            | MergeConflict | BudgetExceeded => 4,
            GateDenied | NotHallmarked => 5,
            ChecksFailed => 6,
            Claimed => 7,
        }
    }

    /// What each exit code means, in order; every code's [`Code::exit`] is one of them.
    pub const EXITS: [(u8, &'static str); 8] = [
        (0, "done"),
        (1, "internal"),
        (2, "bad arguments"),
        (3, "not found"),
        (4, "wrong state"),
        (5, "gate denied"),
        (6, "checks failed"),
        (7, "claimed"),
    ];

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
                "the commit carries no valid signed hallmark; `check` names the step of the verification that failed"
            }
            NoAllowedSigners => {
                "the base branch has no .hallmark/allowed_signers to verify hallmarks against"
            }
            LearningNotFound => "the Library has no learning with that id",
            LearningInvalid => {
                "a learning file, a proposed learning or a Library export does not parse"
            }
            SearchUnavailable => "the configured Library search backend can't be used",
        }
    }
}

/// The cause an error keeps: an adapter's error, or an I/O error with its path.
type Cause = Arc<dyn std::error::Error + Send + Sync + 'static>;

/// A failure with its code, message and the commands that make sense next.
#[derive(Clone, Debug)]
pub struct HallError {
    pub code: Code,
    pub message: String,
    pub next: Vec<String>,
    /// For `NOT_HALLMARKED`: the machine-readable name of the check that failed.
    pub check: Option<String>,
    cause: Option<Cause>,
}

impl PartialEq for HallError {
    fn eq(&self, other: &Self) -> bool {
        (self.code, &self.message, &self.next, &self.check)
            == (other.code, &other.message, &other.next, &other.check)
    }
}

impl HallError {
    pub fn new(code: Code, message: impl Into<String>) -> Self {
        HallError {
            code,
            message: message.into(),
            next: Vec::new(),
            check: None,
            cause: None,
        }
    }

    /// An error whose message is `cause`'s own, kept as its source.
    pub fn from_cause(code: Code, cause: impl std::error::Error + Send + Sync + 'static) -> Self {
        HallError {
            message: cause.to_string(),
            cause: Some(Arc::new(cause)),
            ..HallError::new(code, "")
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

    /// Says what was being done when the error happened, in front of its message; the
    /// code, the hints and the cause stay.
    pub fn context(mut self, doing: impl fmt::Display) -> Self {
        self.message = format!("{doing}: {}", self.message);
        self
    }

    pub fn internal(message: impl fmt::Display) -> Self {
        HallError::new(Code::Internal, message.to_string())
    }

    pub fn usage(message: impl Into<String>) -> Self {
        HallError::new(Code::Usage, message).hint("hall help --json")
    }

    /// A file error, naming the path, with what to check.
    pub fn io(path: &Path, source: std::io::Error) -> Self {
        JournalError::Io {
            path: path.to_path_buf(),
            source,
        }
        .into()
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

impl std::error::Error for HallError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.cause
            .as_deref()
            .map(|c| c as &(dyn std::error::Error + 'static))
    }
}

/// Gives an I/O result the path it was about: `std::fs::write(&p, b).at(&p)?`.
pub trait IoContext<T> {
    fn at(self, path: &Path) -> Result<T>;
}

impl<T> IoContext<T> for std::io::Result<T> {
    fn at(self, path: &Path) -> Result<T> {
        self.map_err(|e| HallError::io(path, e))
    }
}

/// The `next` steps for a file error in `dir`.
fn file_fix(err: HallError, kind: std::io::ErrorKind, dir: &Path) -> HallError {
    let err = if matches!(
        kind,
        std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::ReadOnlyFilesystem
    ) {
        err.hint(format!("check the permissions of {}", dir.display()))
    } else {
        err
    };
    err.hint("hall doctor")
}

impl From<JournalError> for HallError {
    fn from(e: JournalError) -> Self {
        match &e {
            JournalError::Corrupt { path, line, .. } => {
                let fix = format!(
                    "inspect line {line} of {}; fix or delete that line by hand",
                    path.display()
                );
                HallError::from_cause(Code::JournalCorrupt, e)
                    .hint(fix)
                    .hint("hall reindex")
            }
            JournalError::Io { path, source } => {
                let dir = if path.is_dir() {
                    path.clone()
                } else {
                    path.parent().unwrap_or(path).to_path_buf()
                };
                let kind = source.kind();
                file_fix(HallError::from_cause(Code::Internal, e), kind, &dir)
            }
            JournalError::NoItem(_) => {
                HallError::from_cause(Code::ItemNotFound, e).hint("hall status --all")
            }
        }
    }
}

impl From<crate::gazette::GazetteError> for HallError {
    fn from(e: crate::gazette::GazetteError) -> Self {
        use crate::gazette::GazetteError;
        let io = match &e {
            GazetteError::Io { path, source } => {
                Some((path.parent().unwrap_or(path).to_path_buf(), source.kind()))
            }
            GazetteError::Journal(_) => None,
        };
        match (e, io) {
            (GazetteError::Journal(j), _) => j.into(),
            (e, Some((dir, kind))) => {
                file_fix(HallError::from_cause(Code::Internal, e), kind, &dir)
            }
            (e, None) => HallError::from_cause(Code::Internal, e),
        }
    }
}

impl From<GitError> for HallError {
    fn from(e: GitError) -> Self {
        match &e {
            GitError::NotARepo { .. } => HallError::from_cause(Code::NotARepo, e)
                .hint("git init")
                .hint("cd <your repository>"),
            GitError::Spawn { .. } => {
                HallError::from_cause(Code::CommandFailed, e).hint("hall doctor")
            }
            GitError::Failed { .. } | GitError::Unexpected { .. } => {
                HallError::from_cause(Code::CommandFailed, e).hint("hall doctor")
            }
            // What the base branch committed can't be read as committed: a person finds
            // out why (an object rewritten in place, a damaged pack) before anything is
            // gated on it.
            GitError::Unverified { .. } => HallError::from_cause(Code::InvalidConfig, e)
                .hint("git fsck --full")
                .hint("hall doctor"),
        }
    }
}

impl From<GhError> for HallError {
    fn from(e: GhError) -> Self {
        let err = HallError::from_cause(Code::GhUnavailable, e);
        match err
            .cause
            .as_deref()
            .and_then(|c| c.downcast_ref::<GhError>())
        {
            Some(GhError::NotInstalled { .. }) => {
                err.hint("install gh from https://cli.github.com, then `gh auth login`")
            }
            _ => err.hint("gh auth status"),
        }
    }
}

impl From<RoomError> for HallError {
    fn from(e: RoomError) -> Self {
        let code = match &e {
            RoomError::Failed { .. } => Code::RoomFailed,
            RoomError::Incompatible { .. } => Code::RoomIncompatible,
            RoomError::NotFound { .. } => Code::RoomNotFound,
            RoomError::Input { .. } => Code::RoomInputInvalid,
            RoomError::Runtime(_) => Code::Internal,
        };
        HallError::from_cause(code, e)
            .hint("hall rooms list")
            .hint("hall doctor")
    }
}

impl From<SignError> for HallError {
    fn from(e: SignError) -> Self {
        match &e {
            SignError::Key { path, .. } => {
                let config = crate::sign::user_config_path().unwrap_or_default();
                let fix = format!(
                    "fix or move away {}, or name another key under [signing] in {}",
                    path.display(),
                    config.display()
                );
                HallError::from_cause(Code::InvalidConfig, e)
                    .hint(fix)
                    .hint("hall doctor")
            }
            _ => HallError::from_cause(Code::Internal, e).hint("hall doctor"),
        }
    }
}

impl From<IndexError> for HallError {
    fn from(e: IndexError) -> Self {
        match e {
            // The journal's own error, with its own hints.
            IndexError::Journal(j) => j.into(),
            IndexError::Query(q) => HallError::usage(q),
            other => {
                let fix = other.fix();
                // Damage a rebuild did not cure is a question for doctor first.
                let still = matches!(other, IndexError::StillDamaged { .. });
                let err = HallError::from_cause(Code::Internal, other);
                match (fix, still) {
                    (Some(fix), true) => err.hint("hall doctor").hint(fix),
                    (Some(fix), false) => err.hint(fix).hint("hall doctor"),
                    (None, _) => err.hint("hall reindex").hint("hall doctor"),
                }
            }
        }
    }
}

impl From<LibraryError> for HallError {
    fn from(e: LibraryError) -> Self {
        let e = match e {
            LibraryError::Journal(j) => return j.into(),
            other => other,
        };
        match &e {
            LibraryError::Journal(_) => HallError::from_cause(Code::Internal, e),
            LibraryError::Io { path, source } => {
                let dir = path.parent().unwrap_or(path).to_path_buf();
                let kind = source.kind();
                file_fix(HallError::from_cause(Code::Internal, e), kind, &dir)
            }
            LibraryError::Malformed { path, .. } => {
                let fix = format!("fix or move away {}", path.display());
                HallError::from_cause(Code::LearningInvalid, e).hint(fix)
            }
            LibraryError::Invalid(_) => {
                HallError::from_cause(Code::LearningInvalid, e).hint("hall help library")
            }
            LibraryError::NotFound(_) => HallError::from_cause(Code::LearningNotFound, e)
                .hint("hall library review")
                .hint("hall library search <words> --all"),
            LibraryError::WrongStatus { id, status, .. } => {
                let next = match status {
                    crate::item::LearningStatus::Proposed => {
                        format!("hall library review --accept {id}")
                    }
                    crate::item::LearningStatus::Accepted => format!("hall library retire {id}"),
                    crate::item::LearningStatus::Retired => {
                        format!("hall library retire {id} --undo")
                    }
                };
                let show = format!("hall library show {id}");
                HallError::from_cause(Code::WrongState, e)
                    .hint(next)
                    .hint(show)
            }
            LibraryError::NotEmpty { .. } => HallError::from_cause(Code::WrongState, e)
                .hint("hall library export --out <file>")
                .hint("hall library import (without a file: .hallmark/knowledge/)"),
            LibraryError::Database { .. } => {
                HallError::from_cause(Code::Internal, e).hint("hall doctor")
            }
            LibraryError::QmdMissing => HallError::from_cause(Code::SearchUnavailable, e)
                .hint("install tobi/qmd and put `qmd` on PATH")
                .hint("set `search = \"builtin\"` under [library] in .hallmark.toml"),
        }
    }
}

impl From<ClaudeError> for HallError {
    fn from(e: ClaudeError) -> Self {
        match &e {
            ClaudeError::NotInstalled { .. } => HallError::from_cause(Code::CommandFailed, e)
                .hint("npm install -g @anthropic-ai/claude-code")
                .hint("hall doctor"),
            ClaudeError::Failed { .. } | ClaudeError::Files { .. } => {
                HallError::from_cause(Code::Internal, e).hint("hall doctor")
            }
        }
    }
}

impl From<TemplateError> for HallError {
    fn from(e: TemplateError) -> Self {
        HallError::from_cause(Code::CommandFailed, e).hint("hall doctor")
    }
}

impl From<ConfigError> for HallError {
    fn from(e: ConfigError) -> Self {
        let edit = format!("edit {}", e.path.display());
        HallError::from_cause(Code::InvalidConfig, e)
            .hint(edit)
            .hint("hall schema config")
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

/// A `next` entry as text shows it: a command in backticks; a sentence that already
/// marks its commands (`install gh…, then `gh auth login``) as it is, never nested.
pub fn as_command(next: &str) -> String {
    if next.contains('`') {
        next.to_string()
    } else {
        format!("`{next}`")
    }
}
