//! `hall help`: every command, generated from the clap definition so it can't drift.

use clap::CommandFactory;
use serde::Serialize;

use super::Reply;
use crate::cli::Cli;
use crate::error::{Code, HallError, Result};

#[derive(Serialize, schemars::JsonSchema)]
pub struct HelpReply {
    pub commands: Vec<CommandHelp>,
    pub next: Vec<String>,
}

#[derive(Serialize, schemars::JsonSchema)]
pub struct CommandHelp {
    pub name: String,
    pub about: String,
    pub usage: String,
    pub args: Vec<ArgHelp>,
}

#[derive(Serialize, schemars::JsonSchema)]
pub struct ArgHelp {
    pub name: String,
    /// `--flag` form, absent for positional arguments.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub long: Option<String>,
    pub required: bool,
    /// Whether it takes a value (false for switches).
    pub takes_value: bool,
    pub help: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<String>,
}

pub fn commands() -> Vec<CommandHelp> {
    let mut root = Cli::command();
    root.build();
    root.get_subcommands()
        .map(|c| describe(c, c.get_name()))
        .collect()
}

/// One command's entry; `name` is its path below `hall` (`drop`, `daemon run`).
fn describe(c: &clap::Command, name: &str) -> CommandHelp {
    let mut c = c.clone();
    // Once the root is built, a subcommand's usage already starts with `hall …`.
    let usage = c.render_usage().to_string();
    let usage = usage.trim().trim_start_matches("Usage:").trim();
    CommandHelp {
        name: name.to_string(),
        about: c.get_about().map(|a| a.to_string()).unwrap_or_default(),
        usage: usage.to_string(),
        args: c
            .get_arguments()
            .filter(|a| !matches!(a.get_id().as_str(), "help" | "version" | "json"))
            .map(|a| ArgHelp {
                name: a.get_id().to_string(),
                long: a.get_long().map(|l| format!("--{l}")),
                required: a.is_required_set(),
                takes_value: a.get_action().takes_values(),
                help: a.get_help().map(|h| h.to_string()).unwrap_or_default(),
                values: a
                    .get_possible_values()
                    .iter()
                    .map(|v| v.get_name().to_string())
                    .collect(),
            })
            .collect(),
    }
}

/// `hall help`, or `hall help <command…>`: the command's usage, arguments and
/// subcommands.
pub fn run(path: &[String]) -> Result<Reply> {
    if path.is_empty() {
        let text = Cli::command().render_long_help().to_string();
        return Ok(Reply::new(
            &HelpReply {
                commands: commands(),
                next: vec!["hall help <command>".into(), "hall status".into()],
            },
            text,
        ));
    }
    let mut root = Cli::command();
    root.build();
    let mut cmd = &root;
    let mut names: Vec<&str> = Vec::new();
    for word in path {
        let Some(sub) = cmd.find_subcommand(word) else {
            let known: Vec<String> = cmd
                .get_subcommands()
                .map(|s| s.get_name().to_string())
                .collect();
            let mut err = HallError::new(
                Code::Usage,
                format!(
                    "`{}` has no command `{word}`{}",
                    ["hall"]
                        .iter()
                        .chain(&names)
                        .copied()
                        .collect::<Vec<_>>()
                        .join(" "),
                    nearest(word, &known)
                        .map(|n| format!("; did you mean `{n}`?"))
                        .unwrap_or_default()
                ),
            );
            if let Some(n) = nearest(word, &known) {
                let mut fixed = names.clone();
                fixed.push(n.as_str());
                err = err.hint(format!("hall help {}", fixed.join(" ")));
            }
            return Err(err.hint("hall help"));
        };
        names.push(sub.get_name());
        cmd = sub;
    }
    let name = names.join(" ");
    let mut entries = vec![describe(cmd, &name)];
    entries.extend(
        cmd.get_subcommands()
            .filter(|s| s.get_name() != "help")
            .map(|s| describe(s, &format!("{name} {}", s.get_name()))),
    );
    let text = cmd.clone().render_long_help().to_string();
    let mut next = Vec::new();
    if entries.len() > 1 {
        next.push(format!("hall help {name} <command>"));
    } else {
        next.push(format!(
            "hall schema {}",
            names.first().copied().unwrap_or("")
        ));
    }
    next.push("hall help".into());
    Ok(Reply::new(
        &HelpReply {
            commands: entries,
            next,
        },
        text.trim_end().to_string(),
    ))
}

/// The known name closest to `word` by edit distance, when it is close enough to be a
/// typo (at most a third of the word's letters, and at least one, differ).
fn nearest(word: &str, known: &[String]) -> Option<String> {
    let limit = (word.chars().count() / 3).max(1);
    known
        .iter()
        .map(|k| (distance(word, k), k))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k.clone())
}

/// Levenshtein distance with transpositions counted as one edit (`stauts` → `status`).
fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = best;
        }
    }
    d[a.len()][b.len()]
}

/// A clap parse failure as the contract's `USAGE` error: what is missing or unknown,
/// in a sentence, and `next` commands that would work (the same line with the missing
/// argument filled in, the nearest command for a typo, the command's help).
pub fn usage_error(e: &clap::Error, args: &[String]) -> HallError {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    let strings = |kind: ContextKind| -> Vec<String> {
        match e.get(kind) {
            Some(ContextValue::String(s)) => vec![s.clone()],
            Some(ContextValue::Strings(v)) => v.clone(),
            _ => Vec::new(),
        }
    };
    let path = command_path(args);
    let named = ["hall".to_string()]
        .into_iter()
        .chain(path.iter().cloned())
        .collect::<Vec<_>>()
        .join(" ");
    let help = if path.is_empty() {
        "hall help".to_string()
    } else {
        format!("hall help {}", path.join(" "))
    };
    let given: Vec<String> = args.iter().skip(1).map(|a| quote(a)).collect();
    let first_line = || {
        e.render()
            .to_string()
            .lines()
            .next()
            .unwrap_or("bad arguments")
            .trim_start_matches("error: ")
            .to_string()
    };
    match e.kind() {
        ErrorKind::MissingRequiredArgument => {
            let missing = strings(ContextKind::InvalidArg);
            let described: Vec<String> = missing
                .iter()
                .map(|m| match arg_help(&path, m) {
                    Some(h) if !h.is_empty() => format!("{m}: {}", lowercase_first(&h)),
                    _ => m.clone(),
                })
                .collect();
            let mut example = given.clone();
            for m in &missing {
                match m.split_once(' ') {
                    Some((flag, _)) if flag.starts_with("--") => {
                        example.push(format!("{flag} \"…\""));
                    }
                    _ if m.starts_with("--") => example.push(m.clone()),
                    _ => example.push("\"…\"".to_string()),
                }
            }
            HallError::new(
                Code::Usage,
                format!("`{named}` needs {}", described.join("; ")),
            )
            .hint(format!("hall {}", example.join(" ")))
            .hint(help)
        }
        ErrorKind::InvalidSubcommand => {
            let word = strings(ContextKind::InvalidSubcommand)
                .into_iter()
                .next()
                .unwrap_or_default();
            // A typo is a letter or two away; clap's similarity also suggests names
            // that merely share letters (`stauts` → `setup`), so it comes second.
            let suggested = nearest(&word, &subcommands(&path))
                .or_else(|| strings(ContextKind::SuggestedSubcommand).into_iter().next());
            match suggested {
                Some(s) => {
                    let fixed: Vec<String> = given
                        .iter()
                        .map(|a| if *a == word { s.clone() } else { a.clone() })
                        .collect();
                    HallError::new(
                        Code::Usage,
                        format!("`{named}` has no command `{word}`; did you mean `{s}`?"),
                    )
                    .hint(format!("hall {}", fixed.join(" ")))
                    .hint(help)
                }
                None => HallError::new(Code::Usage, format!("`{named}` has no command `{word}`"))
                    .hint(help)
                    .hint("hall help --json"),
            }
        }
        ErrorKind::UnknownArgument => {
            let word = strings(ContextKind::InvalidArg)
                .into_iter()
                .next()
                .unwrap_or_default();
            let mut err =
                HallError::new(Code::Usage, format!("`{named}` has no argument `{word}`"));
            if let Some(s) = strings(ContextKind::SuggestedArg).into_iter().next() {
                err.message.push_str(&format!("; did you mean `{s}`?"));
                let fixed: Vec<String> = given
                    .iter()
                    .map(|a| if *a == word { s.clone() } else { a.clone() })
                    .collect();
                err = err.hint(format!("hall {}", fixed.join(" ")));
            }
            err.hint(help)
        }
        ErrorKind::InvalidValue => {
            let valid = strings(ContextKind::ValidValue);
            let mut message = first_line();
            if !valid.is_empty() {
                message.push_str(&format!("; one of: {}", valid.join(", ")));
            }
            HallError::new(Code::Usage, message).hint(help)
        }
        ErrorKind::MissingSubcommand | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let known = subcommands(&path);
            HallError::new(
                Code::Usage,
                format!("`{named}` needs a command: {}", known.join(", ")),
            )
            .hint(help)
        }
        _ => HallError::new(Code::Usage, first_line()).hint(help),
    }
}

/// The subcommands the arguments name, as far as they are known (`["daemon", "run"]`).
fn command_path(args: &[String]) -> Vec<String> {
    let root = Cli::command();
    let mut cmd = &root;
    let mut path = Vec::new();
    // Only `--json`, a switch, can come before a subcommand.
    for a in args.iter().skip(1).filter(|a| !a.starts_with('-')) {
        match cmd.find_subcommand(a) {
            Some(sub) => {
                path.push(sub.get_name().to_string());
                cmd = sub;
            }
            None => break,
        }
    }
    path
}

/// The names of the subcommands below `path`.
fn subcommands(path: &[String]) -> Vec<String> {
    let root = Cli::command();
    let mut cmd = &root;
    for p in path {
        match cmd.find_subcommand(p) {
            Some(sub) => cmd = sub,
            None => return Vec::new(),
        }
    }
    cmd.get_subcommands()
        .map(|s| s.get_name().to_string())
        .filter(|n| n != "hook")
        .collect()
}

/// The help line of the argument `shown` (`--reason <REASON>`, `<QID>`) of `path`.
fn arg_help(path: &[String], shown: &str) -> Option<String> {
    let root = Cli::command();
    let mut cmd = &root;
    for p in path {
        cmd = cmd.find_subcommand(p)?;
    }
    let word = shown.split_whitespace().next()?;
    cmd.get_arguments()
        .find(|a| match word.strip_prefix("--") {
            Some(long) => a.get_long() == Some(long),
            None => {
                a.get_value_names()
                    .and_then(|v| v.first())
                    .is_some_and(|v| format!("<{v}>") == word)
                    || format!("<{}>", a.get_id().as_str().to_uppercase()) == word
            }
        })
        .and_then(|a| a.get_help().map(|h| h.to_string()))
}

/// An argument as it would be typed again in a shell.
fn quote(a: &str) -> String {
    if !a.is_empty()
        && a.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:@,+".contains(c))
    {
        a.to_string()
    } else {
        format!("'{}'", a.replace('\'', "'\\''"))
    }
}

/// `Why it is…` → `why it is…`, for a help line quoted inside a sentence.
fn lowercase_first(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) => c.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[test]
    fn a_typo_finds_its_command_and_a_stranger_finds_none() {
        let known: Vec<String> = ["status", "setup", "ready", "retry"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(nearest("stauts", &known).as_deref(), Some("status"));
        assert_eq!(nearest("reday", &known).as_deref(), Some("ready"));
        assert_eq!(nearest("frobnicate", &known), None);
        assert_eq!(distance("stauts", "status"), 1);
    }

    #[test]
    fn a_missing_argument_is_named_with_an_example() {
        let args: Vec<String> = ["hall", "drop", "1"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let e = Cli::try_parse_from(&args).expect_err("--reason is required");
        let err = usage_error(&e, &args);
        assert_eq!(err.code, Code::Usage);
        assert!(err.message.contains("--reason"), "{}", err.message);
        assert_eq!(err.next[0], "hall drop 1 --reason \"…\"");
        assert_eq!(err.next[1], "hall help drop");
    }
}
