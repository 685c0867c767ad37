//! `hall`: parse, dispatch, print, and map errors to the documented exit codes.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use clap::Parser;
use hallmark::cli::Cli;
use hallmark::commands::{self, Ctx, Reply};
use hallmark::error::{Code, HallError};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    // Hooks bypass argument parsing: whatever Claude Code passes, `hall hook` must
    // never exit 2 (a block) by accident.
    if args.get(1).map(String::as_str) == Some("hook") {
        return ExitCode::from(hallmark::hooks::main(&args[2..]));
    }
    // So does the status line: Claude Code shows whatever it prints, so it must print a
    // line or nothing and exit 0, never a usage error.
    if args.get(1).map(String::as_str) == Some("statusline") {
        return ExitCode::from(hallmark::hooks::statusline::main(&args[2..]));
    }
    let force_json = args.iter().any(|a| a == "--json");
    let json = force_json || !std::io::stdout().is_terminal();
    // `hall --version --json`: the build, its commit and its rooms' hashes.
    if force_json && args.len() == 3 && args[1..].iter().any(|a| a == "--version" || a == "-V") {
        let build = hallmark::version::Build {
            commit: env!("HALL_BUILD_COMMIT"),
            target: env!("HALL_BUILD_TARGET"),
        };
        let info = serde_json::to_string(&hallmark::version::info(build)).unwrap_or_default();
        println!("{info}");
        return ExitCode::SUCCESS;
    }
    let cli = match Cli::try_parse_from(&args) {
        Ok(c) => c,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
                let _ = e.print();
                return ExitCode::SUCCESS;
            }
            return finish(Err(commands::usage_error(&e, &args)), json, force_json);
        }
    };
    // `hall` alone on a terminal opens the app; anywhere else it prints the status.
    if cli.command.is_none()
        && !force_json
        && std::io::stdout().is_terminal()
        && std::io::stdin().is_terminal()
    {
        let opened =
            std::panic::catch_unwind(|| Ctx::from_env().and_then(|ctx| hallmark::app::main(&ctx)))
                .unwrap_or_else(|_| {
                    Err(HallError::internal("hall panicked; this is a bug").hint("hall doctor"))
                });
        return match opened {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => finish(Err(e), false, false),
        };
    }
    let result = std::panic::catch_unwind(|| {
        Ctx::from_env().and_then(|ctx| match cli.command {
            Some(hallmark::cli::Cmd::Frame(a)) => hallmark::app::frame(&ctx, &a),
            Some(hallmark::cli::Cmd::Web(a)) if a.token.is_none() => hallmark::web::main(&ctx, &a),
            command => commands::dispatch(command, &ctx),
        })
    })
    .unwrap_or_else(|_| {
        Err(HallError::internal("hall panicked; this is a bug").hint("hall doctor"))
    });
    finish(result, json, force_json)
}

fn finish(result: Result<Reply, HallError>, json: bool, force_json: bool) -> ExitCode {
    let mut out = std::io::stdout().lock();
    match result {
        Ok(reply) => {
            for w in &reply.warnings {
                eprintln!("warning: {w}");
            }
            let _ = if json && (force_json || !reply.text_first) {
                writeln!(out, "{}", reply.json)
            } else {
                writeln!(out, "{}", reply.text)
            };
            ExitCode::from(reply.exit)
        }
        Err(mut err) => {
            // The contract promises every error a way forward.
            if err.next.is_empty() {
                err.next.push("hall doctor".to_string());
            }
            if json {
                let _ = writeln!(
                    out,
                    "{}",
                    serde_json::to_string(&err.reply()).unwrap_or_default()
                );
            } else {
                eprintln!("error[{}]: {}", err.code.as_str(), err.message);
                for n in &err.next {
                    eprintln!("  next: {}", hallmark::error::as_command(n));
                }
            }
            ExitCode::from(if err.code == Code::Internal {
                1
            } else {
                err.code.exit()
            })
        }
    }
}
