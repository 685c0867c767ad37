//! What a page may ask `hall` to do: every request names a hall command as its argv,
//! which runs through the command line's own parse and dispatch, as `you`, `via: web`.
//!
//! Every command of the CLI is in [`TABLE`] (a test walks clap's tree to hold it so):
//! a read runs on GET or POST, an action only on POST (behind the CSRF check), and a
//! refused command never runs from a page, with the reason the page shows.

use crate::commands::Reply;
use crate::error::{HallError, Result};
use crate::hall::Ctx;

/// How a command may be used from a page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Only reads: a view.
    Read,
    /// Changes something: a person's action.
    Act,
    /// Never from a page, for this reason.
    Refused(&'static str),
}

/// Every command by its path (a verb, or a verb and its subcommand), with its kind.
/// Flags can make a read an action (`inbox --dismiss`) or refuse it (`--follow`):
/// see [`kind_of`].
pub const TABLE: &[(&str, Kind)] = &[
    ("config show", Kind::Read),
    ("config set", Kind::Act),
    (
        "init",
        Kind::Refused("sets a repository up; run it in a shell in that repository"),
    ),
    ("doctor", Kind::Read),
    (
        "setup claude",
        Kind::Refused("changes Claude Code's settings; run it in a shell"),
    ),
    ("new", Kind::Act),
    (
        "claude",
        Kind::Refused("starts Claude Code, which needs a terminal"),
    ),
    (
        "adopt",
        Kind::Refused("adopts the branch of the directory it runs in; run it there"),
    ),
    ("status", Kind::Read),
    ("log", Kind::Read),
    ("inbox", Kind::Read),
    ("queue", Kind::Read),
    ("ready", Kind::Act),
    ("pull-back", Kind::Act),
    ("drop", Kind::Act),
    ("merge", Kind::Act),
    ("retry", Kind::Act),
    (
        "propose-ready",
        Kind::Refused("is the agent's word that its work is done"),
    ),
    ("ask", Kind::Refused("is how an agent asks a person")),
    ("answer", Kind::Act),
    ("usage", Kind::Read),
    ("history", Kind::Read),
    ("export", Kind::Read),
    ("reindex", Kind::Act),
    (
        "run",
        Kind::Refused("runs a program: an agent's tool (`run --show` reads a kept log)"),
    ),
    ("daemon start", Kind::Act),
    ("daemon stop", Kind::Act),
    ("daemon status", Kind::Read),
    ("daemon run", Kind::Refused("is the daemon's own loop")),
    ("next", Kind::Refused("is how the loop claims work")),
    ("findings", Kind::Read),
    ("fixed", Kind::Refused("is the fixer's report")),
    (
        "reply",
        Kind::Refused("is the fixer's draft of a reply to a review comment"),
    ),
    (
        "verdict",
        Kind::Refused("reads a verdict file from disk; run it in a shell"),
    ),
    ("verify", Kind::Read),
    ("budget", Kind::Read),
    ("trace", Kind::Read),
    ("attach", Kind::Act),
    (
        "watch",
        Kind::Refused("runs until stopped; the pages follow the journal themselves"),
    ),
    ("frame", Kind::Read),
    (
        "statusline",
        Kind::Refused("reads Claude Code's session on stdin"),
    ),
    ("gazette", Kind::Read),
    ("rooms list", Kind::Read),
    ("rooms check", Kind::Read),
    ("rooms run", Kind::Read),
    ("library search", Kind::Read),
    ("library review", Kind::Act),
    ("library retire", Kind::Act),
    ("library show", Kind::Read),
    ("library export", Kind::Read),
    ("library import", Kind::Act),
    ("library distill", Kind::Act),
    ("policy report", Kind::Read),
    ("notify test", Kind::Act),
    ("notify now", Kind::Act),
    ("web", Kind::Refused("is this app")),
    (
        "web token create",
        Kind::Refused("makes a credential; run it in a shell"),
    ),
    ("web token list", Kind::Read),
    (
        "web token revoke",
        Kind::Refused("changes credentials; run it in a shell"),
    ),
    ("help", Kind::Read),
    ("schema", Kind::Read),
    ("hook", Kind::Refused("is Claude Code's entry point")),
];

/// The path of `argv` in [`TABLE`]: the longest entry its first words spell.
fn path_of(argv: &[String]) -> Option<(&'static str, Kind)> {
    let words: Vec<&str> = argv
        .iter()
        .map(String::as_str)
        .filter(|w| !w.starts_with('-'))
        .take(3)
        .collect();
    (1..=words.len())
        .rev()
        .find_map(|n| {
            let path = words[..n].join(" ");
            TABLE.iter().find(|(p, _)| *p == path)
        })
        .copied()
}

/// What `argv` is from a page, flags considered.
pub fn kind_of(argv: &[String]) -> (String, Kind) {
    let Some((path, kind)) = path_of(argv) else {
        let shown = argv.first().cloned().unwrap_or_default();
        return (shown, Kind::Refused("is not a hall command"));
    };
    let has = |flag: &str| {
        argv.iter()
            .any(|a| a == flag || a.starts_with(&format!("{flag}=")))
    };
    let kind = match path {
        _ if has("--follow") => {
            Kind::Refused("runs until stopped; the page follows the run itself")
        }
        "gazette" if has("--open") => Kind::Refused("opens a browser on the server's desktop"),
        "new" if has("--claude") => Kind::Refused("starts Claude Code, which needs a terminal"),
        "run" if has("--show") => Kind::Read,
        "config set" if has("--dry-run") => Kind::Read,
        // Writing a file where the page says is a change, not a view.
        "export" | "library export" if has("--out") => Kind::Act,
        "inbox" if has("--dismiss") || has("--clear") => Kind::Act,
        "budget" if argv.len() > 1 => Kind::Act,
        _ => kind,
    };
    (path.to_string(), kind)
}

/// Why `argv` can't run from a page with this method, or `None`.
pub fn refusal(argv: &[String], post: bool) -> Option<String> {
    if argv.is_empty() {
        return Some("no command was given".into());
    }
    if argv
        .iter()
        .any(|a| a == "--json" || a == "--help" || a == "-h")
    {
        return Some("the page gets the JSON and the text; leave out --json and --help".into());
    }
    if argv.iter().any(|a| a == "-" || a == "@-") {
        return Some("a page has no standard input to read from: give the value itself".into());
    }
    let (path, kind) = kind_of(argv);
    match kind {
        Kind::Refused(why) => Some(format!("`hall {path}` {why}")),
        Kind::Act if !post => Some(format!(
            "`hall {path}` changes something: send it as a POST"
        )),
        _ => None,
    }
}

/// Runs `argv` as `you`, via the web, through the command line's parse and dispatch.
pub fn run(ctx: &Ctx, argv: &[String]) -> Result<Reply> {
    let mut ctx = ctx.acting_as("you");
    ctx.via = Some("web".into());
    crate::app::run_command(&ctx, argv)
}

/// A refusal as the error reply a page shows.
pub fn refused_error(why: String) -> HallError {
    HallError::new(crate::error::Code::GateDenied, why).hint("hall help --json")
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    fn argv(s: &str) -> Vec<String> {
        crate::app::split_command(s)
    }

    /// Every leaf of the command tree, as `verb` or `verb sub` or `verb sub sub`.
    fn leaves(cmd: &clap::Command, prefix: &str, out: &mut Vec<String>) {
        for sub in cmd.get_subcommands() {
            let path = if prefix.is_empty() {
                sub.get_name().to_string()
            } else {
                format!("{prefix} {}", sub.get_name())
            };
            out.push(path.clone());
            leaves(sub, &path, out);
        }
    }

    #[test]
    fn every_command_of_the_cli_is_classified_and_every_entry_is_a_command() {
        let mut all = Vec::new();
        leaves(&crate::cli::Cli::command(), "", &mut all);
        let table: Vec<&str> = TABLE.iter().map(|(p, _)| *p).collect();
        // A command with subcommands is classified by them, unless it runs alone too
        // (`hall web` serves, `hall web token …` manages tokens).
        let parents: Vec<String> = all
            .iter()
            .filter(|p| all.iter().any(|q| q.starts_with(&format!("{p} "))))
            .cloned()
            .collect();
        let missing: Vec<&String> = all
            .iter()
            .filter(|p| !table.contains(&p.as_str()) && !parents.contains(p))
            .collect();
        assert!(missing.is_empty(), "not in the web table: {missing:?}");
        let unknown: Vec<&&str> = table
            .iter()
            .filter(|p| !all.iter().any(|q| q == **p))
            .collect();
        assert!(unknown.is_empty(), "not hall commands: {unknown:?}");
    }

    #[test]
    fn flags_turn_a_read_into_an_action_or_refuse_it() {
        assert_eq!(kind_of(&argv("inbox")).1, Kind::Read);
        assert_eq!(kind_of(&argv("inbox 2 --dismiss")).1, Kind::Act);
        assert!(matches!(
            kind_of(&argv("trace H-0001 --follow")).1,
            Kind::Refused(_)
        ));
        assert_eq!(kind_of(&argv("run --show abc.log")).1, Kind::Read);
        assert!(matches!(
            kind_of(&argv("run -- rm -rf /")).1,
            Kind::Refused(_)
        ));
        assert_eq!(kind_of(&argv("daemon status")).1, Kind::Read);
        assert!(matches!(kind_of(&argv("daemon run")).1, Kind::Refused(_)));
        assert!(matches!(
            kind_of(&argv("hook pre-tool-use")).1,
            Kind::Refused(_)
        ));
        assert!(matches!(
            kind_of(&argv("next --role fixer")).1,
            Kind::Refused(_)
        ));
        assert!(matches!(kind_of(&argv("rm -rf /")).1, Kind::Refused(_)));
        assert_eq!(kind_of(&argv("answer Q-1 yes")).1, Kind::Act);
        assert!(
            refusal(&argv("answer Q-1 yes"), false).is_some(),
            "an action needs a POST"
        );
        assert_eq!(refusal(&argv("answer Q-1 yes"), true), None);
        assert_eq!(refusal(&argv("status"), false), None);
        assert!(refusal(&argv("status --json"), false).is_some());
        assert!(refusal(&[], true).is_some());
        assert_eq!(kind_of(&argv("export H-0001")).1, Kind::Read);
        assert_eq!(kind_of(&argv("export H-0001 --out x.md")).1, Kind::Act);
        assert!(refusal(&argv("rooms run verdict --input -"), true).is_some());
    }
}
