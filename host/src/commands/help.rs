//! `hall help`: every command, generated from the clap definition so it can't drift.

use clap::CommandFactory;
use serde::Serialize;

use super::Reply;
use crate::cli::Cli;
use crate::error::Result;

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
        .map(|c| {
            let mut c = c.clone();
            let usage = c.render_usage().to_string().replace("Usage: ", "hall ");
            CommandHelp {
                name: c.get_name().to_string(),
                about: c.get_about().map(|a| a.to_string()).unwrap_or_default(),
                usage: usage.trim().to_string(),
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
        })
        .collect()
}

pub fn run() -> Result<Reply> {
    let commands = commands();
    let text = Cli::command().render_long_help().to_string();
    Ok(Reply::new(
        &HelpReply {
            commands,
            next: vec!["hall schema <command>".into(), "hall status".into()],
        },
        text,
    ))
}
