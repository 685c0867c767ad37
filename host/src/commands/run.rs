//! `hall run -- <command…>`: runs a command, keeps its whole output on disk, and prints
//! what an agent should read, condensed by the condense room. It exits with the
//! command's own exit code. `hall run --show <log>` is the drill-down.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde::Serialize;

use super::{Ctx, Reply};
use crate::error::{Code, HallError, IoContext, Result};
use crate::rooms::types::CondenseInput;

/// The most lines `--show --grep` prints.
const MAX_MATCHES: usize = 500;

#[derive(Serialize, schemars::JsonSchema)]
pub struct RunReply {
    pub command: String,
    pub exit_code: i32,
    /// The full output, kept on disk.
    pub log: String,
    /// The filter that condensed it (or `none` when the room failed and the full output is shown).
    pub filter: String,
    pub bytes_in: u64,
    pub bytes_out: u64,
    /// What the agent reads.
    pub text: String,
    pub next: Vec<String>,
}

/// Where logs go: the journal's `runs/logs` in an initialized repository, else the cache.
fn logs_dir(ctx: &Ctx) -> Result<PathBuf> {
    if let Ok(hall) = ctx.hall() {
        return Ok(hall.journal.root().join("runs").join("logs"));
    }
    crate::platform::cache_dir()
        .map(|d| d.join("runs"))
        .ok_or_else(|| HallError::internal("no cache directory for the log"))
}

/// The directory for a new log: [`logs_dir`], or the temp directory when that can't be
/// written (a confined session sees the journal read-only).
fn writable_logs_dir(ctx: &Ctx) -> Result<PathBuf> {
    let dir = logs_dir(ctx)?;
    let probe = dir.join(format!(".probe-{}", std::process::id()));
    if std::fs::create_dir_all(&dir).is_ok() && std::fs::write(&probe, b"").is_ok() {
        let _ = std::fs::remove_file(&probe);
        return Ok(dir);
    }
    let fallback = fallback_logs_dir();
    std::fs::create_dir_all(&fallback).map_err(|e| {
        HallError::internal(format!(
            "neither {} nor {} can take the log: {e}",
            dir.display(),
            fallback.display()
        ))
    })?;
    Ok(fallback)
}

/// Where logs go when the journal can't take them.
fn fallback_logs_dir() -> PathBuf {
    std::env::temp_dir().join("hallmark-runs")
}

pub fn run(ctx: &Ctx, args: &crate::cli::RunArgs) -> Result<Reply> {
    if let Some(log) = &args.show {
        return show(ctx, log, args.lines.as_deref(), args.grep.as_deref());
    }
    let Some((program, rest)) = args.command.split_first() else {
        return Err(HallError::usage("name a command to run").hint("hall run -- cargo test"));
    };
    let line = args
        .command
        .iter()
        .map(|a| crate::platform::shell_quote(a))
        .collect::<Vec<_>>()
        .join(" ");
    // stdout and stderr share one pipe, so the log keeps their real order.
    let failed = |e: std::io::Error| {
        HallError::new(
            Code::CommandFailed,
            format!("could not run `{program}`: {e}"),
        )
        .hint("hall doctor")
    };
    let (mut reader, writer) = std::io::pipe().map_err(failed)?;
    let mut cmd = Command::new(program);
    cmd.args(rest)
        .current_dir(&ctx.cwd)
        .stdin(std::process::Stdio::null())
        .stdout(writer.try_clone().map_err(failed)?)
        .stderr(writer);
    let mut child = cmd.spawn().map_err(failed)?;
    drop(cmd);
    let mut output = Vec::new();
    reader.read_to_end(&mut output).map_err(failed)?;
    let status = child.wait().map_err(failed)?;
    let exit_code = crate::platform::exit_code(&status);

    let dir = writable_logs_dir(ctx)?;
    std::fs::create_dir_all(&dir).at(&dir)?;
    let stamp = ctx.stamp.replace([':', '-'], "");
    let name = format!(
        "{stamp}-{}-{}.log",
        std::process::id(),
        crate::template::slug(&line)
    );
    let path = dir.join(&name);
    crate::journal::file::write_atomic(&path, &output).at(&path)?;
    let text_in = String::from_utf8_lossy(&output).into_owned();

    let input = CondenseInput {
        command: line.clone(),
        exit_code,
        output: text_in.clone(),
        log: name.clone(),
    };
    let hall = ctx.hall().ok();
    let view = crate::hall::condense::condense(hall.as_ref(), &input);
    let (text, warnings) = (view.text, view.warnings);
    let reply = RunReply {
        command: line,
        exit_code,
        log: name.clone(),
        filter: view.filter,
        bytes_in: output.len() as u64,
        bytes_out: view.bytes_out,
        text: text.clone(),
        next: vec![
            format!("hall run --show {name} --grep <text>"),
            format!("hall run --show {name} --lines 1-80"),
        ],
    };
    let mut r = Reply::new(&reply, text.trim_end().to_string()).warn(warnings);
    r.exit = u8::try_from(exit_code).unwrap_or(1);
    r.text_first = true;
    Ok(r)
}

fn show(ctx: &Ctx, log: &str, lines: Option<&str>, grep: Option<&str>) -> Result<Reply> {
    let direct = Path::new(log);
    let path = if direct.is_file() {
        direct.to_path_buf()
    } else {
        let primary = logs_dir(ctx)?.join(log);
        let fallback = fallback_logs_dir().join(log);
        if !primary.is_file() && fallback.is_file() {
            fallback
        } else {
            primary
        }
    };
    let bytes = std::fs::read(&path).map_err(|e| {
        HallError::new(Code::Usage, format!("no log {log}: {e}")).hint("hall run -- <command>")
    })?;
    let text = String::from_utf8_lossy(&bytes);
    let all: Vec<&str> = text.lines().collect();
    let range = match lines {
        Some(spec) => {
            let (a, b) = spec.split_once('-').unwrap_or((spec, spec));
            let parse = |s: &str| s.trim().parse::<usize>().ok().filter(|n| *n >= 1);
            match (parse(a), parse(b)) {
                (Some(a), Some(b)) if a <= b => (a, b.min(all.len())),
                _ => {
                    return Err(HallError::usage(format!(
                        "--lines takes A-B, such as 120-180, not `{spec}`"
                    )));
                }
            }
        }
        None => (1, all.len()),
    };
    let mut out: Vec<String> = Vec::new();
    for (i, l) in all
        .iter()
        .enumerate()
        .skip(range.0 - 1)
        .take(range.1.saturating_sub(range.0 - 1))
    {
        if grep.is_none_or(|g| l.contains(g)) {
            out.push(format!("{:>6}  {l}", i + 1));
            if grep.is_some() && out.len() >= MAX_MATCHES {
                out.push(format!(
                    "… more than {MAX_MATCHES} matches; narrow the search"
                ));
                break;
            }
        }
    }
    let body = out.join("\n");
    let json = serde_json::json!({ "log": path.display().to_string(), "lines": all.len(), "shown": body, "next": ["hall run --show <log> --lines A-B"] });
    Ok(Reply {
        text_first: true,
        ..Reply::new(&json, body)
    })
}
