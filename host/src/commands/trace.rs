//! `hall trace <id> [--follow] [--run <name>]`: what a headless run did, step by step,
//! read from its stream under the item's `runs/`.

use std::io::{BufRead, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use super::{Ctx, Reply, next_text};
use crate::cli::TraceArgs;
use crate::error::{HallError, IoContext, Result};
use crate::item::ItemId;

#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct RunInfo {
    pub run: String,
    pub role: String,
    /// The runner wrote its end line.
    pub ended: bool,
    /// A `.lock` beside the stream names a live process.
    pub live: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_step: Option<String>,
}

#[derive(Serialize, schemars::JsonSchema)]
pub struct TraceReply {
    pub item: ItemId,
    /// The run shown (with `--list`, the newest).
    pub run: RunInfo,
    pub steps: Vec<String>,
    /// With `--list`: every run of the item, oldest first, with how many steps it took.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runs: Option<Vec<RunLine>>,
    pub next: Vec<String>,
}

/// One run in `hall trace --list`.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct RunLine {
    #[serde(flatten)]
    pub info: RunInfo,
    pub steps: usize,
}

/// The item's runs, oldest first: by the stamp their names start with, then by the
/// number the runner gave runs started in the same second (`…-review`, `…-fix-2`).
pub fn runs(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<(String, u32, PathBuf)> = std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
                .map(|p| {
                    let name = p
                        .file_stem()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_default();
                    let mut parts = name.split('-');
                    let stamp = parts.next().unwrap_or_default().to_string();
                    let seq = parts.nth(1).and_then(|n| n.parse().ok()).unwrap_or(1);
                    (stamp, seq, p)
                })
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v.into_iter().map(|(_, _, p)| p).collect()
}

/// One line of a stream, as the steps a person can read: what the model said, each
/// tool it called and what came back, the result and the end. Empty for noise.
pub fn steps_of(v: &Value) -> Vec<String> {
    let blocks = || {
        v.pointer("/message/content")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
    };
    match v.get("type").and_then(Value::as_str) {
        Some("system") if v.get("subtype").and_then(Value::as_str) == Some("init") => {
            vec![format!(
                "started: model {}, session {}",
                v.get("model").and_then(Value::as_str).unwrap_or("?"),
                v.get("session_id").and_then(Value::as_str).unwrap_or("?")
            )]
        }
        Some("assistant") => blocks()
            .filter_map(|block| match block.get("type").and_then(Value::as_str)? {
                "text" => Some(format!("says: {}", clip(block.get("text")?.as_str()?))),
                "tool_use" => Some(format!(
                    "{}: {}",
                    block.get("name")?.as_str()?,
                    clip(
                        &block
                            .get("input")
                            .map(|i| i.to_string())
                            .unwrap_or_default()
                    )
                )),
                _ => None,
            })
            .collect(),
        // What a tool gave back arrives as the user's turn.
        Some("user") => blocks()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
            .map(|b| {
                let text = match b.get("content") {
                    Some(Value::String(s)) => s.clone(),
                    Some(Value::Array(parts)) => parts
                        .iter()
                        .filter_map(|p| p.get("text").and_then(Value::as_str))
                        .collect::<Vec<_>>()
                        .join(" "),
                    _ => String::new(),
                };
                let error = b.get("is_error").and_then(Value::as_bool) == Some(true);
                format!(
                    "{}: {}",
                    if error { "tool error" } else { "tool result" },
                    clip(&text)
                )
            })
            .collect(),
        Some("result") => vec![format!(
            "result: {}{}",
            if v.get("is_error").and_then(Value::as_bool).unwrap_or(false) {
                "error"
            } else {
                "ok"
            },
            v.get("total_cost_usd")
                .and_then(Value::as_f64)
                .map(|c| format!(", ${c:.4}"))
                .unwrap_or_default()
        )],
        Some("hall_run_end") => vec![format!(
            "ended: exit {}, {} ms{}",
            v.get("exit_code")
                .map(|c| c.to_string())
                .unwrap_or_default(),
            v.get("duration_ms").and_then(Value::as_u64).unwrap_or(0),
            v.get("failure")
                .and_then(Value::as_str)
                .map(|f| format!(", failed: {f}"))
                .unwrap_or_default()
        )],
        _ => Vec::new(),
    }
}

fn clip(s: &str) -> String {
    let one: String = s.lines().next().unwrap_or("").chars().take(120).collect();
    if s.len() > one.len() {
        format!("{one}…")
    } else {
        one
    }
}

/// What a run file says about itself.
pub fn info(path: &Path) -> (RunInfo, Vec<String>) {
    let name = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let role = name.split('-').nth(1).unwrap_or("").to_string();
    let mut r = RunInfo {
        run: name.clone(),
        role,
        ended: false,
        live: false,
        failure: None,
        session: None,
        last_step: None,
    };
    let mut steps = Vec::new();
    if let Ok(f) = std::fs::File::open(path) {
        for line in std::io::BufReader::new(f).lines().map_while(|l| l.ok()) {
            let Ok(v) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            if r.session.is_none() {
                r.session = v
                    .get("session_id")
                    .and_then(Value::as_str)
                    .map(str::to_string);
            }
            if v.get("type").and_then(Value::as_str) == Some("hall_run_end") {
                r.ended = true;
                r.failure = v.get("failure").and_then(Value::as_str).map(str::to_string);
            }
            steps.extend(steps_of(&v));
        }
    }
    let lock = path.with_extension("lock");
    r.live = !r.ended
        && std::fs::read(&lock)
            .ok()
            .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
            .and_then(|v| v.get("pid").and_then(Value::as_u64))
            .is_some_and(|pid| !crate::platform::process_gone(pid as u32));
    r.last_step = steps.last().cloned();
    (r, steps)
}

pub fn run(ctx: &Ctx, args: &TraceArgs) -> Result<Reply> {
    let hall = ctx.hall()?;
    let id = hall.resolve(args.id.as_deref())?;
    let dir = hall.journal.item_dir(id).join("runs");
    let all = runs(&dir);
    let path = match &args.run {
        Some(name) => all
            .iter()
            .find(|p| {
                p.file_stem()
                    .is_some_and(|s| s.to_string_lossy() == name.trim_end_matches(".jsonl"))
            })
            .cloned(),
        None => all.last().cloned(),
    }
    .ok_or_else(|| {
        HallError::usage(format!("{id} has no headless runs yet")).hint(format!("hall status {id}"))
    })?;
    if args.list {
        return list(id, &all);
    }
    if args.follow {
        follow(&path)?;
    }
    let (info, steps) = info(&path);
    let mut next = vec![format!("hall status {id}")];
    if info.live {
        next.insert(0, format!("hall trace {id} --follow"));
    } else if let Some(s) = &info.session {
        next.push(format!("claude --resume {s}"));
    }
    let text = format!(
        "{id} run {} ({}){}:\n{}\n{}",
        info.run,
        info.role,
        if info.live {
            ", live"
        } else if info.ended {
            ""
        } else {
            ", ended without its end line"
        },
        steps
            .iter()
            .map(|s| format!("  {s}"))
            .collect::<Vec<_>>()
            .join("\n"),
        next_text(&next)
    );
    Ok(Reply::new(
        &TraceReply {
            item: id,
            run: info,
            steps,
            runs: None,
            next,
        },
        text,
    ))
}

/// `--list`: every run, oldest first, one line each.
fn list(id: ItemId, all: &[PathBuf]) -> Result<Reply> {
    let read: Vec<(RunInfo, Vec<String>)> = all.iter().map(|p| info(p)).collect();
    let Some((newest, newest_steps)) = read.last().cloned() else {
        return Err(HallError::usage(format!("{id} has no headless runs yet"))
            .hint(format!("hall status {id}")));
    };
    let runs: Vec<RunLine> = read
        .into_iter()
        .map(|(info, steps)| RunLine {
            info,
            steps: steps.len(),
        })
        .collect();
    let mut next = vec![format!("hall trace {id} --run {}", newest.run)];
    if newest.live {
        next.insert(0, format!("hall trace {id} --follow"));
    }
    let lines: Vec<String> = runs
        .iter()
        .rev()
        .map(|r| {
            let how = if r.info.live {
                "live".to_string()
            } else if let Some(f) = &r.info.failure {
                format!("failed: {f}")
            } else if r.info.ended {
                "ended".to_string()
            } else {
                "ended without its end line".to_string()
            };
            format!(
                "  {:<8} {} · {} step{} · {how}",
                r.info.role,
                r.info.run,
                r.steps,
                if r.steps == 1 { "" } else { "s" }
            )
        })
        .collect();
    let text = format!(
        "{id}'s runs, newest first:\n{}\n{}",
        lines.join("\n"),
        next_text(&next)
    );
    Ok(Reply::new(
        &TraceReply {
            item: id,
            run: newest,
            steps: newest_steps,
            runs: Some(runs),
            next,
        },
        text,
    ))
}

/// Prints steps as they are written, until the end line or the run's process is gone.
fn follow(path: &Path) -> Result<()> {
    let mut f = std::fs::File::open(path).at(path)?;
    let mut pos = 0u64;
    let mut partial = String::new();
    loop {
        f.seek(SeekFrom::Start(pos)).at(path)?;
        let mut reader = std::io::BufReader::new(&f);
        let mut line = String::new();
        let mut ended = false;
        while reader.read_line(&mut line).at(path)? > 0 {
            pos += line.len() as u64;
            if !line.ends_with('\n') {
                partial.push_str(&line);
                line.clear();
                continue;
            }
            let whole = std::mem::take(&mut partial) + &line;
            if let Ok(v) = serde_json::from_str::<Value>(&whole) {
                for s in steps_of(&v) {
                    eprintln!("{s}");
                }
                ended |= v.get("type").and_then(Value::as_str) == Some("hall_run_end");
            }
            line.clear();
        }
        let (info, _) = info(path);
        if ended || !info.live {
            return Ok(());
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}
