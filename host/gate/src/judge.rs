//! Turns what a command would do into the gates that deny it.
//!
//! The analysis says what the text does; deciding whether that is allowed needs the
//! world: which repository a place is, whether a path is protected, whether a commit
//! carries a hallmark. Those questions go through [`World`], so the rules here stay
//! testable with a world made of maps, and the hook answers them from the file system
//! and git.

use super::{Effect, Finding, HallKind, Place, Pushed, Word, short};

/// `[capture] push_guard`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GuardMode {
    /// Also deny what might push but can't be followed, and config the guard can't vouch
    /// for.
    #[default]
    Strict,
    /// Deny only what the parse shows.
    Parse,
}

/// Which gate a denial belongs to. Each maps to one layer of the defence, which is how
/// the red-team suite counts them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Gate {
    /// A person's `hall` verb (a verdict, a retry, the settings, the web app…), run by a
    /// session; or, for the fixer, a verb that decides the item's fate.
    Hall,
    /// A note write by anyone but the assayer or the shipper.
    Note,
    /// A push, PR or merge whose commits don't all carry a valid hallmark.
    Push,
    /// A write into git's internals, another checkout, a local remote or the user's
    /// configuration.
    Protect,
    /// A git command that changes another checkout or repository, or moves a ref a
    /// session may not move (the base branch, notes, replacements, remote-tracking refs).
    Repo,
    /// A persistent git configuration write the guard can't vouch for.
    Config,
    /// A commit outside an item's worktree.
    Commit,
    /// Strict mode: something that might push or write but can't be followed.
    Unreadable,
}

impl Gate {
    /// The name recorded in the journal and shown to the agent.
    pub fn name(self) -> &'static str {
        match self {
            Gate::Hall => "hall",
            Gate::Note => "note",
            Gate::Push => "push",
            Gate::Protect => "protect",
            Gate::Repo => "repo",
            Gate::Config => "config",
            Gate::Commit => "commit",
            Gate::Unreadable => "unreadable",
        }
    }
}

/// One gate that denies, with the reason to show the agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Denial {
    pub gate: Gate,
    /// One sentence naming the exact part of the command.
    pub reason: String,
    pub finding: Finding,
}

/// What kind of place a command acts in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlaceKind {
    /// The session's own checkout.
    Own,
    /// The worktree of an active item other than the session's.
    ItemWorktree,
    /// The main checkout, when the session is not in it.
    MainCheckout,
    /// Another worktree of this repository that no active item uses.
    OtherWorktree,
    /// A repository no session may write: a bare repository or a local remote (named).
    Protected(String),
    /// Another repository, or no repository: not Hallmark's to gate.
    Elsewhere,
    /// Can't be known (a computed directory).
    Unknown,
}

/// How a path is used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Written (a redirection, `cp` to it, `sed -i`).
    Write,
    /// Given to a program that may write it.
    Use,
    /// Given to a program known to only read it.
    Read,
}

/// What the gates ask of the world outside the command text.
pub trait World {
    /// The base branch's name.
    fn base(&self) -> &str;
    /// What kind of place `place` is.
    fn place(&self, place: &Place) -> PlaceKind;
    /// Why `path` (relative to `place`) may not be accessed this way, if it may not.
    fn protected(&self, place: &Place, path: &str, access: Access) -> Option<String>;
    /// Checks that every revision in `revs`, resolved at `place`, is a commit carrying a
    /// valid hallmark; the error names the first that isn't and why.
    fn verify_revs(&self, place: &Place, revs: &[String]) -> Result<(), String>;
    /// Checks that the head commit of pull request `pr` (the current branch's when
    /// `None`) carries a valid hallmark.
    fn verify_pr(&self, place: &Place, pr: Option<&str>) -> Result<(), String>;
    /// Whether a commit effect only commits `[capture] free` paths.
    fn commit_is_free(&self, effect: &Effect) -> bool;
    /// Why copying or moving the tree at `src` to `dest` (both relative to `place`) would
    /// create a protected path, or a link into one.
    fn protected_tree(&self, place: &Place, src: &str, dest: &str) -> Option<String>;
    /// Why files of unknown names written into `dir` (relative to `place`) could create a
    /// protected path: it is inside a checkout, or holds a protected place.
    fn open_dir(&self, place: &Place, dir: &str) -> Option<String>;
    /// Why writing the working tree at `place` from `rev` would write a protected path
    /// or a symbolic link into one (`Ok(Some)`); `Err` when that can't be known (the
    /// revision doesn't exist yet, or its links can't be read).
    fn checkout_writes(&self, place: &Place, rev: &str) -> Result<Option<String>, String>;
}

/// Who runs the command, and where.
#[derive(Debug, Clone, Copy)]
pub struct Session<'a> {
    pub mode: GuardMode,
    /// `HALL_ACTOR` from the hook's own environment, never from the command text.
    pub actor: Option<&'a str>,
    /// Whether the session's own checkout is an active item's worktree.
    pub in_item: bool,
}

/// Config keys a session may set for good: they change how git shows things or who the
/// author is, never what git runs or where it sends commits.
const SAFE_CONFIG: &[&str] = &[
    "user.name",
    "user.email",
    "core.autocrlf",
    "core.eol",
    "core.quotepath",
    "core.filemode",
    "core.ignorecase",
    "core.whitespace",
    "core.abbrev",
    "init.defaultbranch",
    "pull.rebase",
    "pull.ff",
    "merge.ff",
    "merge.conflictstyle",
    "rerere.enabled",
    "rerere.autoupdate",
    "diff.renames",
    "diff.algorithm",
    "diff.colormoved",
    "diff.mnemonicprefix",
    "fetch.prune",
    "push.autosetupremote",
    "rebase.autosquash",
    "rebase.autostash",
    "commit.verbose",
    "status.short",
    "status.branch",
    "status.showuntrackedfiles",
    "log.date",
    "log.decorate",
    "blame.date",
];

/// Config key families that are always cosmetic.
const SAFE_CONFIG_PREFIXES: &[&str] = &["color.", "advice.", "column."];

/// Whether a config key only changes appearance or identity.
fn safe_config(key: &str) -> bool {
    SAFE_CONFIG.contains(&key) || SAFE_CONFIG_PREFIXES.iter().any(|p| key.starts_with(p))
}

/// Whether a config key makes git run a program, load other config, or change where or
/// what it pushes and fetches: denied in every mode.
pub(super) fn dangerous_config(key: &str) -> bool {
    let last = key.rsplit('.').next().unwrap_or(key);
    let first = key.split('.').next().unwrap_or(key);
    matches!(
        first,
        "include" | "includeif" | "alias" | "filter" | "url" | "remote" | "protocol" | "notes"
    ) || matches!(
        last,
        "editor"
            | "pager"
            | "hookspath"
            | "fsmonitor"
            | "sshcommand"
            | "askpass"
            | "gitproxy"
            | "external"
            | "textconv"
            | "command"
            | "cmd"
            | "program"
            | "driver"
            | "helper"
            | "process"
            | "clean"
            | "smudge"
            | "uploadpack"
            | "receivepack"
            | "insteadof"
            | "pushinsteadof"
            | "worktree"
            | "alternaterefscommand"
            | "defaultkeycommand"
            | "packobjectshook"
            | "smtpserver"
            | "sendmailcmd"
            | "tocmd"
            | "cccmd"
            | "notesref"
            | "rewriteref"
            | "browser"
            | "path"
            | "proxy"
            | "exec"
    ) || key.starts_with("core.")
        && matches!(
            last,
            "bare" | "repositoryformatversion" | "sharedrepository"
        )
        || key.starts_with("extensions.")
        || key.starts_with("gpg.")
        || key.starts_with("push.")
        || key.starts_with("submodule.")
        || key.starts_with("help.")
}

/// Applies the gates to everything the analysis found. Denials come in the order the
/// hook reports them: hall, note, push, protect, repo, config, commit, unreadable.
pub fn judge(findings: &[Finding], session: Session<'_>, world: &dyn World) -> Vec<Denial> {
    let mut out: Vec<Denial> = Vec::new();
    for f in findings {
        if let Some((gate, reason)) = judge_one(f, session, world) {
            out.push(Denial {
                gate,
                reason,
                finding: f.clone(),
            });
        }
    }
    out.sort_by_key(|d| d.gate);
    out
}

/// Where a finding sits in the command, for a reason.
fn where_in(f: &Finding) -> String {
    match &f.within {
        Some(w) => format!("`{}` (run by `{}`)", short(&f.snippet), short(w)),
        None => format!("`{}`", short(&f.snippet)),
    }
}

fn judge_one(f: &Finding, s: Session<'_>, world: &dyn World) -> Option<(Gate, String)> {
    let at = where_in(f);
    let strict = s.mode == GuardMode::Strict;
    match &f.effect {
        Effect::NoteWrite { how } => (!matches!(s.actor, Some("assayer" | "shipper"))).then(|| {
            (
                Gate::Note,
                format!(
                    "{at} writes git notes ({how}); only the assayer or the shipper may write notes, because the hallmark is a note"
                ),
            )
        }),
        Effect::Push { how, place, pushed } => {
            judge_push(how, place, pushed, world).map(|why| (Gate::Push, format!("{at} {why}")))
        }
        Effect::PrCreate { place, head } => {
            let revs = match head {
                None => vec!["HEAD".to_owned()],
                Some(h) if h.dynamic => {
                    return Some((
                        Gate::Push,
                        format!("{at} opens a pull request from a head computed at run time, which can't be checked for a hallmark"),
                    ));
                }
                Some(h) if h.text.contains(':') => {
                    return Some((
                        Gate::Push,
                        format!("{at} opens a pull request from another repository's branch `{}`, which can't be checked for a hallmark here", h.text),
                    ));
                }
                Some(h) => vec![format!("refs/heads/{}", h.text.trim_start_matches("refs/heads/"))],
            };
            if matches!(world.place(place), PlaceKind::Unknown) {
                return Some((Gate::Push, format!("{at} opens a pull request from a directory computed at run time")));
            }
            world.verify_revs(place, &revs).err().map(|why| {
                (Gate::Push, format!("{at} opens a pull request, and {why}"))
            })
        }
        Effect::PrMerge { place, pr } => {
            if pr.as_ref().is_some_and(|p| p.dynamic) {
                return Some((Gate::Push, format!("{at} merges a pull request named at run time, which can't be checked for a hallmark")));
            }
            world
                .verify_pr(place, pr.as_ref().map(|p| p.text.as_str()))
                .err()
                .map(|why| (Gate::Push, format!("{at} merges a pull request, and {why}")))
        }
        Effect::GhApiWrite { path, method } => Some((
            Gate::Push,
            format!(
                "{at} writes to GitHub through the API ({method} {path}); what it writes can't be checked for a hallmark, and Hallmark ships approved work itself"
            ),
        )),
        Effect::ShipCommand { place } => world
            .verify_revs(place, &["HEAD".to_owned()])
            .err()
            .map(|why| (Gate::Push, format!("{at} runs the configured ship command, and {why}"))),
        Effect::Commit { place, .. } => {
            let kind = world.place(place);
            let free = || world.commit_is_free(&f.effect);
            let denied = match kind {
                PlaceKind::Own => !s.in_item && !free(),
                PlaceKind::ItemWorktree | PlaceKind::Elsewhere => false,
                PlaceKind::MainCheckout | PlaceKind::OtherWorktree => !free(),
                PlaceKind::Protected(_) | PlaceKind::Unknown => true,
            };
            denied.then(|| {
                let which = match &kind {
                    PlaceKind::Protected(what) => format!(" ({what})"),
                    PlaceKind::Unknown => " (a directory computed at run time)".to_owned(),
                    _ => String::new(),
                };
                (Gate::Commit, format!("{at} commits outside an item's worktree{which}"))
            })
        }
        Effect::RepoWrite { place, how, refs } => judge_repo_write(&at, place, how, refs, s, world),
        Effect::FileWrite { path, place, how } => {
            if path.dynamic || place.dynamic {
                return strict.then(|| {
                    (
                        Gate::Unreadable,
                        format!("{at} {how} a path computed at run time (`{}`), which the strict guard can't check against git's internals, other checkouts and your configuration", short(&path.text)),
                    )
                });
            }
            world
                .protected(place, &path.text, Access::Write)
                .map(|why| (Gate::Protect, format!("{at} {how} {}: {why}", path.text)))
        }
        Effect::TreeWrite {
            src,
            dest,
            place,
            how,
        } => {
            if src.dynamic || dest.dynamic || place.dynamic {
                return strict.then(|| {
                    (
                        Gate::Unreadable,
                        format!("{at} {how} a tree whose paths are computed at run time (`{}` to `{}`), which the strict guard can't check for protected places", short(&src.text), short(&dest.text)),
                    )
                });
            }
            world
                .protected_tree(place, &src.text, &dest.text)
                .map(|why| (Gate::Protect, format!("{at} {how} {} to {}: {why}", src.text, dest.text)))
        }
        Effect::Extract {
            dir,
            place,
            how,
            anywhere,
        } => {
            if !strict {
                return None;
            }
            if dir.dynamic || place.dynamic {
                return Some((
                    Gate::Unreadable,
                    format!("{at} {how} a directory computed at run time (`{}`)", short(&dir.text)),
                ));
            }
            if *anywhere {
                return Some((
                    Gate::Unreadable,
                    format!("{at} {how} with member names that may be absolute or climb out with `..`, so it can write anywhere, git's directory and your configuration included"),
                ));
            }
            world.open_dir(place, &dir.text).map(|why| {
                (
                    Gate::Unreadable,
                    format!("{at} {how} {}, and the members aren't in the command: {why}. Extract into a new directory outside the checkout (under /tmp), look, then copy what you need", dir.text),
                )
            })
        }
        Effect::CheckoutTree { place, rev, how } => {
            if rev.dynamic || place.dynamic {
                return strict.then(|| {
                    (
                        Gate::Unreadable,
                        format!("{at} {how} `{}`, a revision computed at run time, whose files and links can't be checked for protected places", short(&rev.text)),
                    )
                });
            }
            match world.checkout_writes(place, &rev.text) {
                Ok(found) => found
                    .map(|why| (Gate::Protect, format!("{at} {how} `{}`, which {why}", rev.text))),
                Err(why) => strict.then(|| {
                    (
                        Gate::Unreadable,
                        format!("{at} {how} `{}`, and {why}", rev.text),
                    )
                }),
            }
        }
        Effect::PathUse {
            path,
            place,
            program,
            reader,
        } => {
            if path.dynamic || place.dynamic {
                return None;
            }
            let access = if *reader { Access::Read } else { Access::Use };
            world.protected(place, &path.text, access).map(|why| {
                (
                    Gate::Protect,
                    format!("{at} gives {} to `{program}`: {why}", path.text),
                )
            })
        }
        Effect::ConfigWrite { key, how } => {
            if key.dynamic {
                return strict.then(|| {
                    (Gate::Config, format!("{at} {how} a config key computed at run time"))
                });
            }
            let k = key.text.to_ascii_lowercase();
            if dangerous_config(&k) {
                Some((
                    Gate::Config,
                    format!("{at} {how} `{k}`, which can make git run a program, read other config, or change what and where it pushes"),
                ))
            } else if strict && !safe_config(&k) {
                Some((
                    Gate::Config,
                    format!("{at} {how} `{k}`, which the strict guard doesn't know to be harmless; a person can set it"),
                ))
            } else {
                None
            }
        }
        Effect::HallCall { verb, kind } => match kind {
            HallKind::Person => Some((
                Gate::Hall,
                format!(
                    "{at} runs `hall {verb}`, which is a person's call: it records a decision as you or changes what the gates read"
                ),
            )),
            HallKind::Fate => (s.actor == Some("fixer")).then(|| {
                (
                    Gate::Hall,
                    format!("{at} runs `hall {verb}`; the fixer fixes findings, and the item's fate is the loop's or a person's"),
                )
            }),
            HallKind::Unknown => strict.then(|| {
                (
                    Gate::Hall,
                    format!(
                        "{at} runs `hall` with a part computed at run time (`{verb}`), which could be a person's verb"
                    ),
                )
            }),
        },
        Effect::Unfollowable { reason } => strict.then(|| {
            (
                Gate::Unreadable,
                format!(
                    "{at} might push or write where a session may not, and the strict guard can't follow it: {reason}. Run the parts separately, or ask a person to add it to `[capture] push_allow` if it never pushes"
                ),
            )
        }),
    }
}

/// Whether a refspec side names the base branch.
fn names_base(name: &str, base: &str) -> bool {
    let n = name.trim_start_matches('+');
    n == base || n == format!("refs/heads/{base}") || n == format!("heads/{base}")
}

fn judge_push(how: &str, place: &Place, pushed: &Pushed, world: &dyn World) -> Option<String> {
    if matches!(world.place(place), PlaceKind::Unknown) {
        return Some(format!(
            "pushes ({how}) from a directory computed at run time, so what it sends can't be checked for a hallmark"
        ));
    }
    let revs: Vec<String> = match pushed {
        Pushed::Unknown(what) => {
            return Some(format!(
                "pushes ({how}) {what}, which can't all be checked for a hallmark; Hallmark ships approved work itself"
            ));
        }
        Pushed::Current => vec!["HEAD".to_owned()],
        Pushed::Refspecs(specs) => {
            let mut revs = Vec::new();
            for spec in specs {
                if spec.dynamic {
                    return Some(format!(
                        "pushes ({how}) the refspec `{}`, computed at run time, which can't be checked for a hallmark",
                        spec.text
                    ));
                }
                let t = spec.text.trim_start_matches('+');
                if t.starts_with('^') {
                    continue; // A negative refspec only excludes.
                }
                let (src, dst) = match t.split_once(':') {
                    Some((a, b)) => (a, Some(b)),
                    None => (t, None),
                };
                if src.is_empty() {
                    return Some(format!(
                        "deletes `{}` on the remote ({how}); a person deletes remote branches",
                        dst.unwrap_or("")
                    ));
                }
                if src.contains('*') {
                    return Some(format!(
                        "pushes ({how}) every ref matching `{src}`, which can't all be checked for a hallmark"
                    ));
                }
                let target = dst.unwrap_or(src);
                if names_base(target, world.base()) {
                    return Some(format!(
                        "pushes ({how}) to the base branch `{}`; approved work reaches it through a pull request that a person or the merger merges",
                        world.base()
                    ));
                }
                revs.push(src.to_owned());
            }
            if revs.is_empty() {
                return None;
            }
            revs
        }
    };
    world
        .verify_revs(place, &revs)
        .err()
        .map(|why| format!("pushes ({how}), and {why}"))
}

fn judge_repo_write(
    at: &str,
    place: &Place,
    how: &str,
    refs: &[Word],
    s: Session<'_>,
    world: &dyn World,
) -> Option<(Gate, String)> {
    let strict = s.mode == GuardMode::Strict;
    match world.place(place) {
        PlaceKind::Own | PlaceKind::ItemWorktree => {
            for r in refs {
                if r.dynamic {
                    if strict {
                        return Some((
                            Gate::Unreadable,
                            format!("{at} {how} `{}`, a ref computed at run time", r.text),
                        ));
                    }
                    continue;
                }
                let t = r.text.trim_start_matches('+');
                if names_base(t, world.base()) {
                    return Some((
                        Gate::Repo,
                        format!(
                            "{at} {how} the base branch `{}`; the rules and the rooms are read from it, so only a person moves it",
                            world.base()
                        ),
                    ));
                }
                if t.starts_with("refs/notes") || t.starts_with("notes/") {
                    if matches!(s.actor, Some("assayer" | "shipper")) {
                        continue;
                    }
                    return Some((
                        Gate::Note,
                        format!("{at} {how} `{t}`; only the assayer or the shipper writes notes"),
                    ));
                }
                for (prefix, what) in [
                    ("refs/replace", "replacement refs change what every git command sees"),
                    ("refs/remotes", "remote-tracking refs are written by fetch, and the base may be read from them"),
                    ("refs/", "only refs under refs/heads and refs/tags are a session's to move"),
                ] {
                    if t.starts_with(prefix)
                        && !t.starts_with("refs/heads/")
                        && !t.starts_with("refs/tags/")
                    {
                        return Some((Gate::Repo, format!("{at} {how} `{t}`: {what}")));
                    }
                }
                if t == "HEAD" {
                    return Some((
                        Gate::Repo,
                        format!("{at} {how} HEAD itself, which would make later commits move another branch"),
                    ));
                }
            }
            None
        }
        PlaceKind::MainCheckout => Some((
            Gate::Repo,
            format!(
                "{at} {how} in the main checkout; sessions don't move refs or check out there, because the rules are read from it"
            ),
        )),
        PlaceKind::OtherWorktree => Some((
            Gate::Repo,
            format!("{at} {how} in another worktree of this repository that no active item uses"),
        )),
        PlaceKind::Protected(what) => Some((
            Gate::Repo,
            format!("{at} {how} in {what}; a session never writes another repository that commits travel through"),
        )),
        PlaceKind::Elsewhere => None,
        PlaceKind::Unknown => strict.then(|| {
            (
                Gate::Unreadable,
                format!("{at} {how} in a directory computed at run time, which the strict guard can't place"),
            )
        }),
    }
}
