//! `hall help`: every command, generated from the clap definition so it can't drift.
//!
//! One model serves both readers: [`commands`] is what `hall help --json` replies with,
//! and [`markdown`] renders the same entries, with the exit and error codes of the
//! contract, as the reference `hall help --markdown` prints and `docs/reference.md`
//! holds. A test here fails when that file differs from what this build would print.

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
    /// One line on what the command does.
    pub about: String,
    /// The rest of its help, when there is more to say than `about`.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub details: String,
    pub usage: String,
    pub args: Vec<ArgHelp>,
    /// Its subcommands (`daemon run`, `web token create`…), each described the same way.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub commands: Vec<CommandHelp>,
}

#[derive(Serialize, schemars::JsonSchema)]
pub struct ArgHelp {
    pub name: String,
    /// `--flag` form, absent for positional arguments.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub long: Option<String>,
    /// Its value as the usage line writes it (`<REASON>`, `[ID]`), absent for switches.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    pub required: bool,
    /// Whether it takes a value (false for switches).
    pub takes_value: bool,
    pub help: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<String>,
    /// The value taken when it is not given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
}

pub fn commands() -> Vec<CommandHelp> {
    let mut root = Cli::command();
    root.build();
    root.get_subcommands()
        .map(|c| describe(c, c.get_name()))
        .collect()
}

/// One command's entry, with its subcommands; `name` is its path below `hall` (`drop`,
/// `daemon run`).
fn describe(c: &clap::Command, name: &str) -> CommandHelp {
    let mut c = c.clone();
    // Once the root is built, a subcommand's usage already starts with `hall …`.
    let usage = c.render_usage().to_string();
    let usage = usage.trim().trim_start_matches("Usage:").trim();
    let about = c.get_about().map(|a| a.to_string()).unwrap_or_default();
    // clap's long help is the whole doc comment, `about`'s paragraph first.
    let details = c
        .get_long_about()
        .map(|l| l.to_string())
        .and_then(|l| {
            l.split_once("\n\n")
                .map(|(_, rest)| rest.trim().to_string())
        })
        .unwrap_or_default();
    CommandHelp {
        name: name.to_string(),
        about,
        details,
        usage: usage.to_string(),
        args: c
            .get_arguments()
            .filter(|a| !matches!(a.get_id().as_str(), "help" | "version" | "json"))
            .map(|a| {
                let takes_value = a.get_action().takes_values();
                let value = takes_value.then(|| {
                    let shown = a
                        .get_value_names()
                        .and_then(|v| v.first())
                        .map(|v| v.to_string())
                        .unwrap_or_else(|| a.get_id().as_str().to_uppercase());
                    let many = matches!(a.get_num_args(), Some(n) if n.max_values() > 1);
                    let dots = if many { "..." } else { "" };
                    if a.is_positional() && !a.is_required_set() {
                        format!("[{shown}]{dots}")
                    } else {
                        format!("<{shown}>{dots}")
                    }
                });
                // A switch's default (`false`) says nothing.
                let default: Vec<String> = a
                    .get_default_values()
                    .iter()
                    .filter(|_| takes_value)
                    .map(|v| v.to_string_lossy().into_owned())
                    .collect();
                ArgHelp {
                    name: a.get_id().to_string(),
                    long: a.get_long().map(|l| format!("--{l}")),
                    value,
                    required: a.is_required_set(),
                    takes_value,
                    help: a.get_help().map(|h| h.to_string()).unwrap_or_default(),
                    values: a
                        .get_possible_values()
                        .iter()
                        .map(|v| v.get_name().to_string())
                        .collect(),
                    default: (!default.is_empty()).then(|| default.join(",")),
                }
            })
            .collect(),
        commands: c
            .get_subcommands()
            .filter(|s| s.get_name() != "help")
            .map(|s| describe(s, &format!("{name} {}", s.get_name())))
            .collect(),
    }
}

/// The whole reference as Markdown: every command (subcommands after their parent) with
/// its usage and options, then the exit codes and the error codes. `docs/reference.md`
/// is this text.
pub fn markdown() -> String {
    let root = Cli::command();
    let mut out = String::new();
    out.push_str("# `hall` command reference\n\n");
    out.push_str(
        "<!-- Generated: `hall help --markdown > docs/reference.md`, or \
         `HALL_UPDATE_REFERENCE=1 cargo test -p hallmark-host --lib commands::help`. \
         Change the doc comments in host/src/cli.rs, not this file. -->\n\n",
    );
    let intro = root
        .get_long_about()
        .or(root.get_about())
        .map(|a| a.to_string())
        .unwrap_or_default();
    out.push_str(&format!("{}\n\n", prose(intro.trim())));
    out.push_str(
        "An ID may be written `42`, `H-42` or `H-0042`; inside an item's worktree it may be \
         left out. Every command takes `--json`. The same description, as JSON, is \
         `hall help --json`; the shape of each reply is `hall schema <command>`.\n\n",
    );
    let all = commands();
    let mut flat = Vec::new();
    fn walk<'a>(c: &'a CommandHelp, into: &mut Vec<&'a CommandHelp>) {
        into.push(c);
        for s in &c.commands {
            walk(s, into);
        }
    }
    for c in &all {
        walk(c, &mut flat);
    }
    out.push_str("## Commands\n\n| Command | What it does |\n| --- | --- |\n");
    for c in &flat {
        out.push_str(&format!(
            "| [`hall {}`](#{}) | {} |\n",
            c.name,
            anchor(&c.name),
            cell(&c.about)
        ));
    }
    for c in &flat {
        out.push_str(&section(c));
    }
    out.push_str("\n## Exit codes\n\n| Exit | Meaning | Codes |\n| --- | --- | --- |\n");
    for (exit, meaning) in Code::EXITS {
        let codes: Vec<String> = Code::ALL
            .iter()
            .filter(|c| c.exit() == exit)
            .map(|c| format!("`{}`", c.as_str()))
            .collect();
        out.push_str(&format!("| {exit} | {meaning} | {} |\n", codes.join(", ")));
    }
    out.push_str(
        "\n## Error codes\n\n\
         A failure prints `{\"error\": {\"code\", \"message\", \"next\"}}` (on a terminal, \
         `error[CODE]: message` and its `next` commands on stderr) and exits with its code's \
         exit; `hall schema error` lists the same codes.\n\n\
         | Code | Exit | When |\n| --- | --- | --- |\n",
    );
    let mut codes = Code::ALL;
    codes.sort_by_key(|c| c.exit());
    for c in codes {
        out.push_str(&format!(
            "| `{}` | {} | {} |\n",
            c.as_str(),
            c.exit(),
            cell(c.meaning())
        ));
    }
    out
}

/// One command's section: its heading, what it does, its usage and its arguments.
fn section(c: &CommandHelp) -> String {
    let about = prose(c.about.trim_end_matches('.'));
    let mut out = format!("\n### `hall {}`\n\n{about}.\n", c.name);
    if !c.details.is_empty() {
        out.push_str(&format!("\n{}\n", prose(&c.details)));
    }
    out.push_str(&format!("\n```text\n{}\n```\n", c.usage));
    if !c.commands.is_empty() {
        let subs: Vec<String> = c
            .commands
            .iter()
            .map(|s| format!("[`hall {}`](#{})", s.name, anchor(&s.name)))
            .collect();
        out.push_str(&format!("\nIts commands: {}.\n", subs.join(", ")));
    }
    if !c.args.is_empty() {
        out.push_str("\n| Argument | Required | What it is |\n| --- | --- | --- |\n");
        for a in &c.args {
            let shown = match (&a.long, &a.value) {
                (Some(l), Some(v)) => format!("{l} {v}"),
                (Some(l), None) => l.clone(),
                (None, Some(v)) => v.clone(),
                (None, None) => a.name.clone(),
            };
            let mut what = a.help.trim().to_string();
            // clap drops a one-sentence help's full stop; more text follows here.
            if !what.is_empty() && !what.ends_with('.') {
                what.push('.');
            }
            if !a.values.is_empty() {
                let values: Vec<String> = a.values.iter().map(|v| format!("`{v}`")).collect();
                what.push_str(&format!(" One of {}.", values.join(", ")));
            }
            if let Some(d) = &a.default {
                what.push_str(&format!(" Default: `{d}`."));
            }
            out.push_str(&format!(
                "| `{shown}` | {} | {} |\n",
                if a.required { "yes" } else { "" },
                cell(what.trim())
            ));
        }
    }
    out
}

/// The anchor GitHub gives the heading of `hall <name>`.
fn anchor(name: &str) -> String {
    format!("hall-{}", name.replace(' ', "-"))
}

/// Help text as Markdown prose: outside code spans, `<` and `>` are escaped so that
/// `<n>` shows rather than being taken for HTML.
fn prose(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_code = false;
    for ch in text.chars() {
        match ch {
            '`' => {
                in_code = !in_code;
                out.push(ch);
            }
            '<' if !in_code => out.push_str("&lt;"),
            '>' if !in_code => out.push_str("&gt;"),
            _ => out.push(ch),
        }
    }
    out
}

/// Text made safe for one cell of a Markdown table.
fn cell(text: &str) -> String {
    prose(text).replace('|', "\\|").replace('\n', " ")
}

/// `hall help`, or `hall help <command…>`: the command's usage, arguments and
/// subcommands.
///
/// With `markdown`, the text is the Markdown reference (of the named command and its
/// subcommands, or of everything), printed even off a terminal unless `--json` is given.
pub fn run(path: &[String], markdown: bool) -> Result<Reply> {
    if path.is_empty() {
        // Printed with a line end of its own, so `> docs/reference.md` writes the file
        // exactly as `markdown()` renders it.
        let text = if markdown {
            self::markdown().trim_end().to_string()
        } else {
            Cli::command().render_long_help().to_string()
        };
        let mut reply = Reply::new(
            &HelpReply {
                commands: commands(),
                next: vec!["hall help <command>".into(), "hall status".into()],
            },
            text,
        );
        reply.text_first = markdown;
        return Ok(reply);
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
    let mut head = describe(cmd, &name);
    let text = if markdown {
        section(&head)
            + &head
                .commands
                .iter()
                .map(section)
                .collect::<Vec<_>>()
                .join("")
    } else {
        cmd.clone().render_long_help().to_string()
    };
    // The command first, then each subcommand as an entry of its own.
    let subs = std::mem::take(&mut head.commands);
    let mut entries = vec![head];
    entries.extend(subs);
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
    let mut reply = Reply::new(
        &HelpReply {
            commands: entries,
            next,
        },
        text.trim_end().to_string(),
    );
    reply.text_first = markdown;
    Ok(reply)
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

    /// docs/reference.md is what `hall help --markdown` prints; rewrite it with
    /// `HALL_UPDATE_REFERENCE=1` set.
    #[test]
    fn docs_reference_md_is_what_hall_help_markdown_prints() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/reference.md");
        let now = markdown();
        if std::env::var_os("HALL_UPDATE_REFERENCE").is_some() {
            std::fs::write(&path, &now).expect("write docs/reference.md");
            return;
        }
        let kept = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            kept == now,
            "docs/reference.md is stale (the commands' help changed): regenerate it with\n\n    \
             HALL_UPDATE_REFERENCE=1 cargo test -p hallmark-host --lib commands::help\n\n\
             (or `hall help --markdown > docs/reference.md`), and commit it"
        );
    }

    #[test]
    fn the_reference_has_every_command_every_code_and_every_exit() {
        let md = markdown();
        fn names(c: &CommandHelp, into: &mut Vec<String>) {
            into.push(c.name.clone());
            for s in &c.commands {
                names(s, into);
            }
        }
        let mut all = Vec::new();
        for c in commands() {
            names(&c, &mut all);
        }
        assert!(
            all.contains(&"daemon run".to_string())
                && all.contains(&"web token create".to_string())
        );
        for n in &all {
            assert!(
                md.contains(&format!("\n### `hall {n}`\n")),
                "no section for {n}"
            );
        }
        for c in Code::ALL {
            assert!(
                Code::EXITS.iter().any(|(e, _)| *e == c.exit()),
                "{c:?} exits with a code the table lacks"
            );
            assert!(md.contains(&format!("| `{}` |", c.as_str())), "{c:?}");
        }
        // A command's long help reaches `hall help --json` too.
        let new = commands()
            .into_iter()
            .find(|c| c.name == "new")
            .expect("new");
        assert!(new.details.contains("Front Desk"), "{}", new.details);
        assert!(!new.details.starts_with(&new.about), "details repeat about");
    }

    #[test]
    fn markdown_text_keeps_angle_brackets_and_pipes_visible() {
        assert_eq!(
            prose("entry <n>, `hall schema <command>`"),
            "entry &lt;n&gt;, `hall schema <command>`"
        );
        assert_eq!(cell("a|b\nc"), "a\\|b c");
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
