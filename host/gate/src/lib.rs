//! What a Bash command line would do to the hallmark: the analysis behind the push gate,
//! the note gate and the commit half of the edit gate.
//!
//! `hall hook pre-tool-use` sees every Bash command Claude is about to run. A push, a PR
//! or a note write must not slip past the hallmark just because it was spelled
//! `bash -ec 'cd x && git -c alias.p=push p'`, so this module parses the command with a
//! real shell parser (brush-parser) and follows it the way the shell and git would:
//! lists, pipelines, subshells, functions, heredocs, substitutions, wrappers such as
//! `env -S` or `nix develop --command`, `sh -c`, `eval`, git aliases and the commands git
//! runs by itself (`rebase -x`, editors, hooks).
//!
//! What it can't see: aliases and functions the user's own shell defines (Claude Code's
//! Bash tool sources a snapshot of them, so `gp` for `git push` from a `.zshrc` is not
//! followed), variables set by earlier tool calls, and bash arrays. The last two are
//! computed words, which strict mode denies inside an item's worktree.
//!
//! It is pure and fast on purpose: the hook runs before every tool call, so nothing here
//! starts a process or touches the file system. What needs the outside world (git aliases
//! from config, the text of a script, `[capture]` settings) comes in through
//! [`GateContext`], asked lazily and only when the command needs it.
//!
//! The result has two steps. [`analyze`] lists every [`Effect`] found anywhere in the
//! command, with the part of the command it came from. [`decide`] turns that into the
//! gates that trigger, given the guard mode, where the command runs and who runs it.
//! Whether `HEAD` carries a hallmark, and whether committed paths are `[capture] free`,
//! is for the caller to check: this module only says that a hallmark or an item is needed.

mod awk_sed;
mod classify;
mod code;
mod gh;
mod git;
mod hall;
mod heredoc;
mod judge;
mod kind;
mod output;
mod place;
mod programs;
mod scan;
mod scripts;
mod shell;
mod words;
mod wrapper_table;
mod wrappers;

pub use hall::HallKind;
pub use judge::{Access, Denial, Gate, GuardMode, PlaceKind, Session, World, judge};
pub use kind::{CommandKind, Kinds, kinds};
pub use place::Place;
pub use words::Arg as Word;

#[cfg(test)]
mod tests;

use std::collections::HashMap;

/// The longest command line that is parsed at all; longer input is only scanned.
///
/// Bounds the parser's work and memory on pathological input; real commands are far
/// shorter.
pub const MAX_COMMAND_BYTES: usize = 64 * 1024;

/// What the host supplies about the world outside the command text.
///
/// Every method is called lazily, only when the command needs the answer, so a host
/// may run `git config` or read a file inside them without slowing ordinary commands.
pub trait GateContext {
    /// The value of git alias `name` from repo or global config (without `-c`), if any.
    ///
    /// Only asked for a git subcommand that is not one of git's own commands.
    fn git_alias(&self, name: &str) -> Option<String>;

    /// The text of the script at `path`, as written in the command, if it can be read.
    fn read_script(&self, path: &str) -> Option<String>;

    /// The leading words of the configured ship command (`ship` in `.hallmark.toml`).
    fn ship_command(&self) -> Option<&str>;

    /// `[capture] push_allow`: commands the strict guard lets through.
    fn push_allow(&self) -> &[String];

    /// A variable from the environment the command will run in, for `--config-env`.
    ///
    /// The default says nothing is known, which leaves such aliases unfollowable.
    fn env_var(&self, _name: &str) -> Option<String> {
        None
    }
}

/// A [`GateContext`] built from plain maps: for tests, and for callers that have
/// already resolved everything.
#[derive(Debug, Clone, Default)]
pub struct StaticContext {
    /// Git aliases by name, as `git config alias.NAME` would print them.
    pub aliases: HashMap<String, String>,
    /// Script texts by the path written in the command.
    pub scripts: HashMap<String, String>,
    /// The ship command's leading words.
    pub ship: Option<String>,
    /// `[capture] push_allow`.
    pub push_allow: Vec<String>,
    /// Environment variables visible to `--config-env`.
    pub env: HashMap<String, String>,
}

impl GateContext for StaticContext {
    fn git_alias(&self, name: &str) -> Option<String> {
        self.aliases.get(name).cloned()
    }
    fn read_script(&self, path: &str) -> Option<String> {
        self.scripts.get(path).cloned()
    }
    fn ship_command(&self) -> Option<&str> {
        self.ship.as_deref()
    }
    fn push_allow(&self) -> &[String] {
        &self.push_allow
    }
    fn env_var(&self, name: &str) -> Option<String> {
        self.env.get(name).cloned()
    }
}

/// Something a command would do that one of the gates cares about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// Sends commits somewhere: `git push`, `send-pack`, `subtree push`, `gh repo sync`…
    Push {
        /// The command that pushes, such as `git push` or `git svn dcommit`.
        how: String,
        /// The repository it pushes from.
        place: Place,
        /// What it sends.
        pushed: Pushed,
    },
    /// Opens a pull request (`gh pr create`, `hub pull-request`).
    PrCreate {
        /// Where it runs (the current branch is the head unless `head` names one).
        place: Place,
        /// `--head`, as written.
        head: Option<Word>,
    },
    /// Merges a pull request (`gh pr merge`).
    PrMerge {
        /// Where it runs.
        place: Place,
        /// The PR number, URL or branch, as written; `None` is the current branch's PR.
        pr: Option<Word>,
    },
    /// A `gh api` call that writes a PR, a ref, a merge or contents, or a GraphQL mutation
    /// that does.
    GhApiWrite {
        /// The endpoint, as written (`repos/{owner}/{repo}/pulls`, `graphql`).
        path: String,
        /// The HTTP method, or `mutation NAME` for GraphQL.
        method: String,
    },
    /// The configured ship command.
    ShipCommand {
        /// Where it runs.
        place: Place,
    },
    /// Writes git notes: `git notes add`, `update-ref refs/notes/…`, a fetch into
    /// `refs/notes/*`, a file write under `refs/notes`.
    NoteWrite {
        /// What writes the note.
        how: String,
    },
    /// `git commit`, for the edit gate outside an item's worktree.
    Commit {
        /// Pathspecs given on the command line, after quote removal.
        pathspecs: Vec<String>,
        /// `-a`/`--all`: every tracked change is committed.
        all: bool,
        /// Some paths can't be known from the text (`$(…)`, `--pathspec-from-file`).
        paths_unknown: bool,
        /// The repository it commits in.
        place: Place,
    },
    /// A git command that changes a repository's refs, HEAD, index or working tree
    /// (checkout, reset, branch, update-ref, fetch into a branch…).
    RepoWrite {
        /// The repository it changes.
        place: Place,
        /// The command, in words for the agent.
        how: String,
        /// The refs it names as targets (branch names as written, or full ref names).
        refs: Vec<Word>,
    },
    /// A file the command writes: a redirection, or an argument of a program that writes
    /// the files it is given (`cp`, `tee`, `sed -i`…).
    FileWrite {
        /// The path as written.
        path: Word,
        /// The directory it is relative to.
        place: Place,
        /// What writes it.
        how: String,
    },
    /// A recursive copy or a move (`cp -r`, `cp -a`, `rsync -a`, `ditto`, `mv`): every
    /// path it creates under `dest`, from what `src` holds.
    TreeWrite {
        /// The source, as written.
        src: Word,
        /// The destination, as written.
        dest: Word,
        /// The directory both are relative to.
        place: Place,
        /// What copies, in words for the agent.
        how: String,
    },
    /// An archive extracted into `dir` (`tar -x`, `unzip`, `cpio -i`, `7z x`): its
    /// members are not in the text.
    Extract {
        /// The directory it extracts into, as written.
        dir: Word,
        /// The directory `dir` is relative to.
        place: Place,
        /// What extracts, in words for the agent.
        how: String,
        /// Members may name absolute paths or climb out with `..` (`tar -P`, `cpio -i`
        /// without `--no-absolute-filenames`).
        anywhere: bool,
    },
    /// A git command that writes the working tree from a revision (`checkout REV`,
    /// `switch`, `reset --hard`, `stash pop`, `merge`, `cherry-pick`, `read-tree -u`):
    /// judged by the paths and symbolic links that revision would write.
    CheckoutTree {
        /// The repository it runs in.
        place: Place,
        /// The revision whose tree is written, as written.
        rev: Word,
        /// The command, in words for the agent.
        how: String,
    },
    /// A path given to a program that may read or write it (an interpreter, a tool the
    /// guard doesn't know): judged by what the path is.
    PathUse {
        /// The path as written.
        path: Word,
        /// The directory it is relative to.
        place: Place,
        /// The program it is given to.
        program: String,
        /// The program is known to only read its arguments (`cat`, `grep`…).
        reader: bool,
    },
    /// A persistent git configuration write (`git config KEY VALUE`, `git remote set-url`…).
    ConfigWrite {
        /// The key, lower-cased.
        key: Word,
        /// The command, in words for the agent.
        how: String,
    },
    /// A `hall` call that is a person's, decides an item's fate, or can't be read.
    HallCall {
        /// The verb (and the option that matters), as the reason names it.
        verb: String,
        /// What kind of call it is.
        kind: HallKind,
    },
    /// Something that might push but can't be followed; denied only in strict mode.
    Unfollowable {
        /// Why it can't be followed, in words for the agent.
        reason: String,
    },
}

/// What a push sends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pushed {
    /// No refspec: the current branch, as git's default push configuration sends it.
    Current,
    /// Refspecs as written (`HEAD`, `main`, `src:dst`, `+x:y`, `:gone`).
    Refspecs(Vec<Word>),
    /// Many refs at once, or a set the text doesn't show (`--all`, `--mirror`, `--tags`,
    /// `--stdin`, a computed refspec, another remote protocol).
    Unknown(String),
}

/// One effect and where it was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// What the command would do.
    pub effect: Effect,
    /// The simple command it came from, words after quote removal.
    pub snippet: String,
    /// The outermost command that led there (`bash -c '…'`, an alias, a script), when it
    /// differs from `snippet`.
    pub within: Option<String>,
}

/// Everything [`analyze`] found in one command line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Analysis {
    /// Effects in the order they were found, without duplicates.
    pub findings: Vec<Finding>,
    /// The parser's complaint when the command (or a part run by a shell) didn't parse.
    pub parse_error: Option<String>,
    /// Every simple command met, wrappers and shells included, as its first words
    /// (program, then up to eleven arguments; a computed word reads `$?`).
    pub programs: Vec<Vec<String>>,
}

impl Analysis {
    /// Whether nothing of interest to any gate was found.
    pub fn is_empty(&self) -> bool {
        self.findings.is_empty()
    }
}

/// Finds every push, PR, note write, commit and unfollowable part of `command`.
///
/// Never panics and never blocks: input that can't be parsed is reported in
/// [`Analysis::parse_error`], with an [`Effect::Unfollowable`] for strict mode, plus
/// whatever a cautious word scan finds for parse mode.
pub fn analyze(command: &str, ctx: &dyn GateContext) -> Analysis {
    let mut walker = shell::Walker::new(ctx);
    walker.analyze_top(command);
    let (mut findings, parse_error, programs) = walker.finish();
    let allow = ctx.push_allow();
    if !allow.is_empty() {
        findings.retain(|f| {
            !matches!(f.effect, Effect::Unfollowable { .. }) || !is_push_allowed(f, allow)
        });
    }
    Analysis {
        findings,
        parse_error,
        programs,
    }
}

/// Whether a `push_allow` entry covers an unfollowable finding: the entry's words are
/// a prefix of the finding's words, or of the command that led to it.
fn is_push_allowed(f: &Finding, allow: &[String]) -> bool {
    let candidates = std::iter::once(f.snippet.as_str()).chain(f.within.as_deref());
    for text in candidates {
        let words: Vec<&str> = text.split_whitespace().collect();
        for entry in allow {
            let want: Vec<&str> = entry.split_whitespace().collect();
            if !want.is_empty() && words.len() >= want.len() && words[..want.len()] == want[..] {
                return true;
            }
        }
    }
    false
}

/// Cuts a snippet to a length that reads well in a one-line reason.
pub(crate) fn short(s: &str) -> String {
    const MAX: usize = 120;
    if s.chars().count() <= MAX {
        return s.to_owned();
    }
    let cut: String = s.chars().take(MAX).collect();
    format!("{cut}…")
}
