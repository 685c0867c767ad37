//! The Assay Office's gates: the repo's own checks, run on the frozen SHA.
//!
//! Gates run in a checkout the loop owns (`checkouts/<id>`, a detached worktree moved
//! to the frozen commit), never in the item's worktree, which the agent may still be
//! changing. Every run is recorded with its exit code and duration; a failing gate's
//! whole output is kept under `runs/logs` and its condensed view goes into the journal,
//! where `hall findings` and the fixer read it.
//!
//! The checks cache (`checks-cache/<key>.jsonl`, keyed by tree, command, the whole gate
//! list and the OS) keeps every run. A pass there is served instead of a rerun, and the
//! journal says `cached`; `gates_no_cache` gates always run.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Instant;

use serde_json::json;
use sha2::{Digest, Sha256};

use super::Step;
use crate::commands::{Ctx, Hall, sync_queue};
use crate::error::{Code, HallError, Result};
use crate::git;
use crate::item::{Action, EventKind, Item, ItemId, decide};
use crate::rooms::types::CondenseInput;

/// The loop's checkout of `sha` for item `id`: created once, then moved.
pub fn checkout(hall: &Hall, id: ItemId, sha: &str) -> Result<PathBuf> {
    let dir = hall.journal.root().join("checkouts").join(id.to_string());
    let root = &hall.repo.main_root;
    if dir.join(".git").exists() {
        git::run(&dir, &["checkout", "--quiet", "--force", "--detach", sha])?;
        git::run(&dir, &["clean", "-ffdq"])?;
    } else {
        if dir.exists() {
            std::fs::remove_dir_all(&dir)?;
        }
        let _ = git::run(root, &["worktree", "prune"]);
        std::fs::create_dir_all(dir.parent().unwrap_or(root))?;
        let d = dir.display().to_string();
        git::run(root, &["worktree", "add", "--quiet", "--detach", &d, sha])?;
    }
    Ok(dir)
}

/// The cache key of one gate on one tree.
pub fn cache_key(tree: &str, gate: &str, gates: &[String]) -> String {
    let mut h = Sha256::new();
    for part in [tree, gate, &gates.join("\n"), std::env::consts::OS] {
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

struct GateRun {
    exit_code: i32,
    duration_ms: u64,
    output: String,
}

fn run_gate(gate: &str, dir: &Path, id: ItemId) -> Result<GateRun> {
    let (mut reader, writer) = std::io::pipe()?;
    let mut cmd = crate::platform::shell(gate);
    cmd.current_dir(dir)
        .stdin(Stdio::null())
        .stdout(writer.try_clone()?)
        .stderr(writer)
        .env("HALL_ACTOR", "assayer")
        .env("HALL_ITEM", id.to_string());
    let started = Instant::now();
    let mut child = cmd
        .spawn()
        .map_err(|e| HallError::new(Code::CommandFailed, format!("could not run `{gate}`: {e}")))?;
    drop(cmd);
    let mut out = Vec::new();
    reader.read_to_end(&mut out)?;
    let status = child.wait()?;
    Ok(GateRun {
        exit_code: status.code().unwrap_or(-1),
        duration_ms: started.elapsed().as_millis() as u64,
        output: String::from_utf8_lossy(&out).into_owned(),
    })
}

/// Runs the gates for an item in `checks` and records the result.
pub fn run(hall: &Hall, ctx: &Ctx, id: ItemId, item: &Item) -> Result<Step> {
    let sha = item
        .sha
        .clone()
        .ok_or_else(|| HallError::internal("an item in checks has no frozen SHA"))?;
    let config = &hall.config;
    let gates = config.gates.clone();
    let mut events = Vec::new();
    let mut failed = Vec::new();
    if !gates.is_empty() {
        let dir = checkout(hall, id, &sha)?;
        let tree = git::run(&dir, &["rev-parse", &format!("{sha}^{{tree}}")])?;
        let logs = hall.journal.root().join("runs").join("logs");
        std::fs::create_dir_all(&logs)?;
        std::fs::create_dir_all(hall.journal.root().join("checks-cache"))?;
        for gate in &gates {
            let key = cache_key(&tree, gate, &gates);
            let no_cache = config.gates_no_cache.contains(gate);
            if !no_cache && cached_pass(hall, &key) {
                events.push(ctx.event(
                    Some(id),
                    EventKind::CheckRun {
                        sha: sha.clone(),
                        gate: gate.clone(),
                        exit_code: 0,
                        duration_ms: 0,
                        cached: true,
                        output: None,
                        log: None,
                    },
                ));
                continue;
            }
            let r = run_gate(gate, &dir, id)?;
            let line = json!({ "t": ctx.stamp, "sha": sha, "item": id, "gate": gate, "exit_code": r.exit_code, "duration_ms": r.duration_ms });
            crate::journal::file::append_raw(&cache_file(hall, &key), &line.to_string())?;
            let (output, log) = if r.exit_code == 0 {
                (None, None)
            } else {
                failed.push(gate.clone());
                let compact: String = ctx
                    .stamp
                    .chars()
                    .filter(|c| c.is_ascii_alphanumeric())
                    .collect();
                let name = unique_log(
                    &logs,
                    &format!("{compact}-{id}-{}", crate::template::slug(gate)),
                );
                crate::journal::file::write_atomic(&logs.join(&name), r.output.as_bytes())?;
                let input = CondenseInput {
                    command: gate.clone(),
                    exit_code: r.exit_code,
                    output: r.output.clone(),
                    log: name.clone(),
                };
                let (text, _, _, _) = crate::commands::run::condense(Some(hall), &input);
                (Some(text), Some(name))
            };
            events.push(ctx.event(
                Some(id),
                EventKind::CheckRun {
                    sha: sha.clone(),
                    gate: gate.clone(),
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
    let tx = hall.journal.transact(id, |now, _| {
        // The item may have been pulled back while the gates ran: record nothing then.
        if now.state != crate::item::State::Checks || now.sha.as_deref() != Some(&sha) {
            return Ok(Vec::new());
        }
        let action = if failed.is_empty() {
            Action::ChecksPassed { sha: sha.clone() }
        } else {
            Action::ChecksFailed {
                sha: sha.clone(),
                failed: failed.clone(),
                max_check_failures: max,
            }
        };
        let kinds = decide(now, &action).map_err(|r| crate::commands::refused(id, r))?;
        let mut out = events.clone();
        out.extend(kinds.into_iter().map(|k| ctx.event(Some(id), k)));
        Ok(out)
    })?;
    sync_queue(hall, &tx.after)?;
    let did = if tx.appended.is_empty() {
        "checks finished after the item moved; nothing recorded".to_string()
    } else if failed.is_empty() {
        format!(
            "{} green at {}",
            count(gates.len(), "gate", "gates"),
            crate::commands::short(&sha)
        )
    } else {
        format!("failed: {}", failed.join(", "))
    };
    Ok(Step {
        did,
        after: tx.after,
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

/// `1 gate`, `2 gates`.
pub fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}
