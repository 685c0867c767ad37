//! The Assay Office's test bench: the repository's own checks (`gates` in
//! `.hallmark.toml`), run on the frozen SHA.
//!
//! Checks run in a checkout the loop owns (a detached worktree moved to the frozen
//! commit, under the user cache directory and outside the repository's folder tree),
//! never in the item's worktree, which the agent may still be changing. The
//! repository's `setup` commands prepare it first (see [`super::setup`]).
//!
//! Every run is recorded with its exit code and duration; a failing check's whole output
//! is kept under `runs/logs` and its condensed view goes into the journal, where
//! `hall findings` and the fixer read it. A check that fails because a tool or a
//! dependency is missing (see [`super::missing`]) goes to no fixer: it holds the item.
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
use super::missing::{Missing, Needs};
use super::setup::SetupFailed;
use crate::error::{Code, HallError, IoContext, Result};
use crate::git;
use crate::hall::confine::{Jail, Phase};
use crate::hall::{Ctx, Hall};
use crate::item::{Action, EventKind, HoldKind, Item, ItemId, Sha, State};
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
pub(super) fn cached_pass(hall: &Hall, key: &str) -> bool {
    std::fs::read_to_string(cache_file(hall, key)).is_ok_and(|text| {
        text.lines().any(|l| {
            serde_json::from_str::<serde_json::Value>(l)
                .ok()
                .and_then(|v| v.get("exit_code").and_then(|c| c.as_i64()))
                == Some(0)
        })
    })
}

/// Appends one run of `check` (at `sha`, for item `id`) to the checks cache under `key`;
/// a pass there is served to any later run on the same tree.
pub(super) fn record_run(
    hall: &Hall,
    ctx: &Ctx,
    key: &str,
    sha: &Sha,
    id: ItemId,
    check: &str,
    (exit_code, duration_ms): (i32, u64),
) -> Result<()> {
    let cache = hall.journal.root().join("checks-cache");
    std::fs::create_dir_all(&cache).at(&cache)?;
    let line = json!({ "t": ctx.stamp, "sha": sha, "item": id, "check": check, "exit_code": exit_code, "duration_ms": duration_ms });
    crate::journal::file::append_raw(&cache_file(hall, key), &format!("{line}\n"))?;
    Ok(())
}

/// One run of a check or setup command.
pub(super) struct Ran {
    pub exit_code: i32,
    pub duration_ms: u64,
    pub output: String,
}

/// Runs `command` through the platform shell in `dir` (the loop's checkout), as the
/// assayer for item `id`, confined by `jail` (see [`crate::hall::confine::Jail`]): the
/// checkout is all it may write, the key, the journal and the user's credentials are
/// not there, and it reaches the network only when the base's `[sandbox] network` lets
/// `phase` (or this command) have it. stdout and stderr come back as one stream.
pub(super) fn run_command(
    jail: &Jail,
    hall: &Hall,
    phase: Phase,
    command: &str,
    dir: &Path,
    id: ItemId,
) -> Result<Ran> {
    let failed = |e: std::io::Error| {
        HallError::new(
            Code::CommandFailed,
            format!("could not run `{command}`: {e}"),
        )
    };
    let network = crate::hall::confine::network_allowed(&hall.config, phase, command);
    // The checkout's `.git` file says where git's data is for the loop's own later
    // commands there, so the run may not rewrite it.
    let policy = jail.policy(network, dir, &[], &[dir.join(".git")]);
    let (mut reader, writer) = std::io::pipe().map_err(failed)?;
    let mut jailed = jail.shell(&policy, command);
    let cmd = &mut jailed.command;
    cmd.stdin(Stdio::null())
        .stdout(writer.try_clone().map_err(failed)?)
        .stderr(writer)
        .env("HALL_ACTOR", "assayer")
        .env("HALL_ITEM", id.to_string());
    let started = Instant::now();
    let mut child = cmd.spawn().map_err(failed)?;
    drop(jailed);
    let mut out = Vec::new();
    reader.read_to_end(&mut out).map_err(failed)?;
    let status = child.wait().map_err(failed)?;
    let mut output = String::from_utf8_lossy(&out).into_owned();
    if !jail.confined() {
        output = format!(
            "hall: this ran UNCONFINED, with your files and the network in reach ([loop] confine = false in your config)\n{output}"
        );
    }
    Ok(Ran {
        exit_code: status.code().unwrap_or(-1),
        duration_ms: started.elapsed().as_millis() as u64,
        output,
    })
}

/// The loop's jail for `hall`'s repository, or the hold that says why the item's code
/// can't run here: no sandbox, and the person didn't opt out.
pub(super) fn jail(hall: &Hall, id: ItemId) -> std::result::Result<Jail, (String, Vec<String>)> {
    Jail::new(hall).map_err(|e| {
        let mut next = e.next.clone();
        next.push(format!(
            "hall retry {id} --reason \"the sandbox is installed\""
        ));
        (
            format!("the item's checks can't run confined: {}", e.reason),
            next,
        )
    })
}

/// Keeps a failed run's whole output under `runs/logs`; returns the log's name (what
/// `hall run --show` takes).
pub(super) fn write_log(hall: &Hall, ctx: &Ctx, id: ItemId, what: &str, r: &Ran) -> Result<String> {
    let logs = hall.journal.root().join("runs").join("logs");
    std::fs::create_dir_all(&logs).at(&logs)?;
    let compact: String = ctx
        .stamp
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .collect();
    let name = unique_log(
        &logs,
        &format!("{compact}-{id}-{}", crate::template::slug(what)),
    );
    let log_path = logs.join(&name);
    crate::journal::file::write_atomic(&log_path, r.output.as_bytes()).at(&log_path)?;
    Ok(name)
}

/// Whether a python module a check could not import is the repository's own (a module
/// the change broke or moved), which is the fixer's to mend.
fn own_module(dir: &Path, m: &Missing) -> bool {
    m.needs == Needs::PythonModule
        && [dir.to_path_buf(), dir.join("src")]
            .iter()
            .any(|d| d.join(&m.what).is_dir() || d.join(format!("{}.py", m.what)).is_file())
}

/// What a missing tool is called in a hold's reason.
fn describe(m: &Missing) -> String {
    let what = &m.what;
    match m.needs {
        Needs::Program => format!("`{what}` is not installed where the checks run"),
        Needs::NodePackage => {
            format!("the node package `{what}` is not installed in the loop's checkout")
        }
        Needs::PythonModule => {
            format!("the python module `{what}` is not installed where the checks run")
        }
        Needs::CargoCommand => format!("the cargo command `{what}` is not installed"),
    }
}

/// The hold for checks that could not run: the reason and the commands that help.
pub(super) fn missing_hold(id: ItemId, missing: &[(String, Missing)]) -> (String, Vec<String>) {
    let reason = missing
        .iter()
        .map(|(check, m)| {
            let said = if m.line.is_empty() {
                format!("exit {}", super::missing::NOT_FOUND_EXIT)
            } else {
                format!("`{}`", m.line)
            };
            format!("{} (`{check}`: {said})", describe(m))
        })
        .collect::<Vec<_>>()
        .join("; ");
    let mut next: Vec<String> = Vec::new();
    for (_, m) in missing {
        for n in super::missing::next(m, &id.to_string()) {
            if !next.contains(&n) && !n.starts_with("hall retry") {
                next.push(n);
            }
        }
    }
    next.push(format!(
        "hall retry {id} --reason \"installed what the checks need\""
    ));
    (reason, next)
}

/// The hold for a setup command that failed.
pub(super) fn setup_hold(id: ItemId, f: &SetupFailed, offline: bool) -> (String, Vec<String>) {
    if let Some(m) = &f.missing {
        let mut next = super::missing::next(m, &id.to_string());
        next.insert(0, format!("hall run --show {}", f.log));
        return (
            format!("setup `{}` could not run: {}", f.command, describe(m)),
            next,
        );
    }
    let last: Vec<&str> = f.tail.lines().rev().take(5).collect();
    let last: Vec<&str> = last.into_iter().rev().collect();
    // Setup usually downloads: say when the sandbox kept it offline.
    let offline = if offline {
        "; it ran without the network (`[sandbox] network = [\"setup\"]` on the base gives it one)"
    } else {
        ""
    };
    (
        format!(
            "setup `{}` failed with exit {} in the loop's checkout: {}{offline}",
            f.command,
            f.exit_code,
            last.join(" | ")
        ),
        vec![
            format!("hall run --show {}", f.log),
            "edit .hallmark.toml: setup, committed on the base branch".to_string(),
            format!("hall retry {id} --reason \"setup fixed\""),
        ],
    )
}

/// A digest of what in `config` decides a check's outcome: the checks, `setup`,
/// `gates_no_cache` and `[sandbox]`. Two bases whose digests match gate a commit alike.
pub fn gating(config: &crate::config::Config) -> String {
    let parts = json!({
        "gates": config.checks,
        "setup": config.setup,
        "gates_no_cache": config.checks_no_cache,
        "sandbox": config.sandbox,
    });
    let mut h = Sha256::new();
    h.update(parts.to_string().as_bytes());
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// The rules an item's latest checks ran under, as its journal recorded them (`None`
/// for checks that ran before it did).
pub fn gated_by(events: &[crate::item::Event]) -> Option<String> {
    events.iter().rev().find_map(|e| match &e.kind {
        EventKind::RulesUsed { gating, .. } => Some(gating.clone()),
        _ => None,
    })
}

/// What one run of the checks at a commit found.
pub(super) struct Bench {
    /// The runs, to be written with the decision they ground.
    pub events: Vec<crate::item::Event>,
    /// The checks that failed.
    pub failed: Vec<String>,
    /// Checks that could not find a tool or a dependency.
    pub missing: Vec<(String, Missing)>,
    pub setup_failed: Option<SetupFailed>,
    /// Why the item's code could not run at all: no sandbox here (the reason and the
    /// commands that help).
    pub unconfinable: Option<(String, Vec<String>)>,
}

impl Bench {
    /// The hold a person must clear before these checks mean anything: no sandbox, a
    /// setup that failed, a tool that's missing; `None` when the checks ran.
    pub fn hold(
        &self,
        id: ItemId,
        config: &crate::config::Config,
    ) -> Option<(String, Vec<String>)> {
        if let Some(h) = &self.unconfinable {
            return Some(h.clone());
        }
        if let Some(f) = &self.setup_failed {
            let offline = !crate::hall::confine::network_allowed(config, Phase::Setup, &f.command);
            return Some(setup_hold(id, f, offline));
        }
        (!self.missing.is_empty()).then(|| missing_hold(id, &self.missing))
    }
}

/// Runs `hall.config`'s checks on `sha` for item `id`, in the loop's checkout moved
/// there, serving cached passes, and records which rules gated them (`rules_at`, the
/// commit `hall.config` was read from).
pub(super) fn bench(hall: &Hall, ctx: &Ctx, id: ItemId, sha: &Sha, rules_at: Sha) -> Result<Bench> {
    let config = &hall.config;
    let checks = config.checks.clone();
    let mut events = Vec::new();
    let mut failed = Vec::new();
    let mut missing: Vec<(String, Missing)> = Vec::new();
    let mut setup_failed: Option<SetupFailed> = None;
    let mut unconfinable: Option<(String, Vec<String>)> = None;
    let base = rules_at;
    events.push(ctx.event(
        Some(id),
        EventKind::RulesUsed {
            base,
            gating: gating(config),
        },
    ));
    let jail = if checks.is_empty() {
        None
    } else {
        match jail(hall, id) {
            Ok(j) => Some(j),
            Err(hold) => {
                unconfinable = Some(hold);
                None
            }
        }
    };
    if let Some(jail) = &jail {
        let dir = crate::hall::worktree::loop_checkout(hall, id, sha)?;
        let tree = git::tree_of(&dir, sha)?;
        let mut prepared = false;
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
            // Setup runs before the first check that really runs, not for cached ones.
            if !prepared {
                prepared = true;
                setup_failed = super::setup::prepare(jail, hall, ctx, id, sha, &dir, &mut events)?;
                if setup_failed.is_some() {
                    break;
                }
            }
            let r = run_command(jail, hall, Phase::Checks, check, &dir, id)?;
            record_run(
                hall,
                ctx,
                &key,
                sha,
                id,
                check,
                (r.exit_code, r.duration_ms),
            )?;
            let (output, log) = if r.exit_code == 0 {
                (None, None)
            } else {
                match super::missing::classify(check, r.exit_code, &r.output)
                    .filter(|m| !own_module(&dir, m))
                {
                    Some(m) => missing.push((check.clone(), m)),
                    None => failed.push(check.clone()),
                }
                let name = write_log(hall, ctx, id, check, &r)?;
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
    Ok(Bench {
        events,
        failed,
        missing,
        setup_failed,
        unconfinable,
    })
}

/// Runs the checks for an item in `checks` and records the result. A check that could
/// not find its tool, or a setup that failed, holds the item in `checks` for a person
/// (no fixer run); `hall retry` then runs the checks again.
pub fn run(hall: &Hall, ctx: &Ctx, id: ItemId, item: &Item) -> Result<Step> {
    let sha = item
        .sha
        .clone()
        .ok_or_else(|| HallError::internal("an item in checks has no frozen SHA"))?;
    let config = &hall.config;
    let checks = config.checks.clone();
    let rules_at = crate::hall::rules::base_tip_of(hall)
        .map(|t| Sha::new(t.sha))
        .unwrap_or_default();
    let bench = bench(hall, ctx, id, &sha, rules_at)?;
    let hold = bench.hold(id, config);
    let Bench { events, failed, .. } = bench;
    let max = config.max_check_failures;
    let applied = hall.change(ctx, id).grounded_on(events).apply_with(|now| {
        // The item may have been pulled back while the checks ran: record nothing then.
        if now.state != State::Checks || now.sha.as_ref() != Some(&sha) {
            return None;
        }
        if let Some((reason, next)) = &hold {
            // Nothing the fixer can change: the item waits in checks for a person.
            return now.hold.is_none().then(|| Action::Hold {
                kind: HoldKind::Checks,
                reason: reason.clone(),
                next: next.clone(),
            });
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
    } else if let Some((reason, _)) = &hold {
        format!("held: {reason}")
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

#[cfg(test)]
mod cache_tests {
    use std::sync::Arc;

    use super::{cache_file, cached_pass, record_run};
    use crate::item::{ItemId, Sha};
    use crate::office::tests::{Bench, NoRuns};

    #[test]
    fn two_passes_of_one_key_are_two_lines_and_still_a_pass() {
        let bench = Bench::new(Arc::new(NoRuns));
        let (hall, ctx) = (&bench.hall, &bench.ctx);
        let sha = Sha::new("0123456789abcdef0123456789abcdef01234567");
        let id = ItemId(1);
        assert!(!cached_pass(hall, "k"));
        for _ in 0..2 {
            record_run(hall, ctx, "k", &sha, id, "cargo test", (0, 5)).unwrap();
        }
        let text = std::fs::read_to_string(cache_file(hall, "k")).unwrap();
        assert_eq!(text.lines().count(), 2, "{text}");
        assert!(cached_pass(hall, "k"));
    }
}
