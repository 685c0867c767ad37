//! The Assay Office's test bench: the repository's own checks (`gates` in
//! `.hallmark.toml`), run on the frozen SHA.
//!
//! Checks run in a checkout the loop owns (`checkouts/<id>`, a detached worktree moved
//! to the frozen commit), never in the item's worktree, which the agent may still be
//! changing. Every run is recorded with its exit code and duration; a failing check's
//! whole output is kept under `runs/logs` and its condensed view goes into the journal,
//! where `hall findings` and the fixer read it.
//!
//! The checks cache (`checks-cache/<key>.jsonl`, keyed by tree, command, the whole
//! check list and the OS) keeps every run. A pass there is served instead of a rerun,
//! and the journal says `cached`; `gates_no_cache` checks always run.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Instant;

use serde_json::json;
use sha2::{Digest, Sha256};

use super::Step;
use crate::error::{Code, HallError, IoContext, Result};
use crate::git;
use crate::hall::{Ctx, Hall};
use crate::item::{Action, EventKind, Item, ItemId, State};
use crate::rooms::types::CondenseInput;

/// The cache key of one check on one tree.
pub fn cache_key(tree: &str, check: &str, checks: &[String]) -> String {
    let mut h = Sha256::new();
    for part in [tree, check, &checks.join("\n"), std::env::consts::OS] {
        h.update(part.as_bytes());
        h.update([0]);
    }
    h.finalize()
        .iter()
        .take(16)
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn cache_file(hall: &Hall, key: &str) -> PathBuf {
    hall.journal
        .root()
        .join("checks-cache")
        .join(format!("{key}.jsonl"))
}

/// Whether the cache holds a pass for `key`.
fn cached_pass(hall: &Hall, key: &str) -> bool {
    std::fs::read_to_string(cache_file(hall, key)).is_ok_and(|text| {
        text.lines().any(|l| {
            serde_json::from_str::<serde_json::Value>(l)
                .ok()
                .and_then(|v| v.get("exit_code").and_then(|c| c.as_i64()))
                == Some(0)
        })
    })
}

struct CheckRun {
    exit_code: i32,
    duration_ms: u64,
    output: String,
}

fn run_check(check: &str, dir: &Path, id: ItemId) -> Result<CheckRun> {
    let failed = |e: std::io::Error| {
        HallError::new(Code::CommandFailed, format!("could not run `{check}`: {e}"))
    };
    let (mut reader, writer) = std::io::pipe().map_err(failed)?;
    let mut cmd = crate::platform::shell(check);
    cmd.current_dir(dir)
        .stdin(Stdio::null())
        .stdout(writer.try_clone().map_err(failed)?)
        .stderr(writer)
        .env("HALL_ACTOR", "assayer")
        .env("HALL_ITEM", id.to_string());
    let started = Instant::now();
    let mut child = cmd.spawn().map_err(failed)?;
    drop(cmd);
    let mut out = Vec::new();
    reader.read_to_end(&mut out).map_err(failed)?;
    let status = child.wait().map_err(failed)?;
    Ok(CheckRun {
        exit_code: status.code().unwrap_or(-1),
        duration_ms: started.elapsed().as_millis() as u64,
        output: String::from_utf8_lossy(&out).into_owned(),
    })
}

/// Runs the checks for an item in `checks` and records the result.
pub fn run(hall: &Hall, ctx: &Ctx, id: ItemId, item: &Item) -> Result<Step> {
    let sha = item
        .sha
        .clone()
        .ok_or_else(|| HallError::internal("an item in checks has no frozen SHA"))?;
    let config = &hall.config;
    let checks = config.checks.clone();
    let mut events = Vec::new();
    let mut failed = Vec::new();
    if !checks.is_empty() {
        let dir = crate::hall::worktree::loop_checkout(hall, id, &sha)?;
        let tree = git::tree_of(&dir, &sha)?;
        let logs = hall.journal.root().join("runs").join("logs");
        std::fs::create_dir_all(&logs).at(&logs)?;
        let cache = hall.journal.root().join("checks-cache");
        std::fs::create_dir_all(&cache).at(&cache)?;
        for check in &checks {
            let key = cache_key(&tree, check, &checks);
            let no_cache = config.checks_no_cache.contains(check);
            if !no_cache && cached_pass(hall, &key) {
                events.push(ctx.event(
                    Some(id),
                    EventKind::CheckRun {
                        sha: sha.clone(),
                        check: check.clone(),
                        exit_code: 0,
                        duration_ms: 0,
                        cached: true,
                        output: None,
                        log: None,
                    },
                ));
                continue;
            }
            let r = run_check(check, &dir, id)?;
            let line = json!({ "t": ctx.stamp, "sha": sha, "item": id, "check": check, "exit_code": r.exit_code, "duration_ms": r.duration_ms });
            let cache_path = cache_file(hall, &key);
            crate::journal::file::append_raw(&cache_path, &line.to_string())?;
            let (output, log) = if r.exit_code == 0 {
                (None, None)
            } else {
                failed.push(check.clone());
                let compact: String = ctx
                    .stamp
                    .chars()
                    .filter(|c| c.is_ascii_alphanumeric())
                    .collect();
                let name = unique_log(
                    &logs,
                    &format!("{compact}-{id}-{}", crate::template::slug(check)),
                );
                let log_path = logs.join(&name);
                crate::journal::file::write_atomic(&log_path, r.output.as_bytes()).at(&log_path)?;
                let input = CondenseInput {
                    command: check.clone(),
                    exit_code: r.exit_code,
                    output: r.output.clone(),
                    log: name.clone(),
                };
                let view = crate::hall::condense::condense(Some(hall), &input);
                (Some(view.text), Some(name))
            };
            events.push(ctx.event(
                Some(id),
                EventKind::CheckRun {
                    sha: sha.clone(),
                    check: check.clone(),
                    exit_code: r.exit_code,
                    duration_ms: r.duration_ms,
                    cached: false,
                    output,
                    log,
                },
            ));
        }
    }
    let max = config.max_check_failures;
    let applied = hall.change(ctx, id).grounded_on(events).apply_with(|now| {
        // The item may have been pulled back while the checks ran: record nothing then.
        if now.state != State::Checks || now.sha.as_ref() != Some(&sha) {
            return None;
        }
        Some(if failed.is_empty() {
            Action::ChecksPassed { sha: sha.clone() }
        } else {
            Action::ChecksFailed {
                sha: sha.clone(),
                failed: failed.clone(),
                max_check_failures: max,
            }
        })
    })?;
    let did = if !applied.changed() {
        "checks finished after the item moved; nothing recorded".to_string()
    } else if failed.is_empty() {
        format!(
            "{} green at {}",
            count(checks.len(), "check", "checks"),
            sha.short()
        )
    } else {
        format!("failed: {}", failed.join(", "))
    };
    Ok(Step {
        did,
        after: applied.after,
    })
}

fn unique_log(dir: &Path, stem: &str) -> String {
    let mut name = format!("{stem}.log");
    let mut n = 2;
    while dir.join(&name).exists() {
        name = format!("{stem}-{n}.log");
        n += 1;
    }
    name
}

/// `1 check`, `2 checks`.
pub fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}
