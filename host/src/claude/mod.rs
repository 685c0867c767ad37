//! The adapter over headless `claude -p` runs: the command line, the process, the
//! run's stream on disk, and what the stream's last `result` line says.
//!
//! A run streams into `runs/<stamp>-<role>.jsonl` as it happens, one line of Claude's
//! stream-json at a time, and ends with one `hall_run_end` line written after the process
//! has exited. While it runs, a `.lock` file beside it names the process, so the `now`
//! block can tell a live run from one whose daemon died. Failure is read from the result
//! line's `is_error` (never its `subtype`), and a run that should answer with
//! `structured_output` and doesn't is a failed run.
//!
//! What a run may touch (its `--settings`) and what it costs are the loop's choices,
//! made in `office/runs.rs` and `hall/confine.rs`; this module only carries them out.
//! The loop runs through a [`Runner`], so its steps can be tested with a double.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{Value, json};

use crate::item::event::Usage;

/// Why a run could not be made at all (a run that starts and fails is a [`RunOutcome`]
/// with a `failure`, not an error).
#[derive(Debug, thiserror::Error)]
pub enum ClaudeError {
    /// The program is not installed.
    #[error("`{program}` is not on PATH, so the loop can't run models: {source}")]
    NotInstalled {
        program: String,
        #[source]
        source: std::io::Error,
    },
    /// `claude` ran and refused (a plugin command): `stderr` is its own words.
    #[error("claude {args} failed: {stderr}")]
    Failed { args: String, stderr: String },
    /// The run's files (its stream, prompt, lock) could not be written.
    #[error("{}: {source}", path.display())]
    Files {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

pub type Result<T, E = ClaudeError> = std::result::Result<T, E>;

fn files(path: &Path) -> impl Fn(std::io::Error) -> ClaudeError + '_ {
    move |source| ClaudeError::Files {
        path: path.to_path_buf(),
        source,
    }
}

/// The command line of a headless `claude -p` run. Every role's run is built here, so
/// the flags they share are spelled once.
#[derive(Clone, Debug, Default)]
pub struct Headless<'a> {
    /// Words before the flags (a configured `fixer = "claude -p --foo"`), the program
    /// excluded.
    pub lead: Vec<String>,
    /// `--resume <session>`: continue a session instead of starting an agent.
    pub resume: Option<&'a str>,
    /// `--plugin-dir`, where the agent below is defined.
    pub plugin_dir: Option<&'a Path>,
    /// `--agent`, always namespaced (`hallmark:fixer`) so a branch's own agents can't
    /// stand in for it.
    pub agent: Option<&'a str>,
    /// `--json-schema`: the run must answer with `structured_output` of this shape.
    pub json_schema: Option<&'a str>,
    pub model: Option<&'a str>,
    /// `--permission-mode`.
    pub permission_mode: Option<&'a str>,
    /// `--setting-sources`.
    pub setting_sources: Option<&'a str>,
    /// `--strict-mcp-config`: no MCP server the checkout configures.
    pub strict_mcp: bool,
    /// `--settings`: what the run may touch.
    pub settings: Option<&'a Value>,
    /// `--max-budget-usd`.
    pub max_budget_usd: Option<f64>,
    /// The repository's `claude_args`, already checked not to loosen anything.
    pub extra: &'a [String],
    pub prompt: &'a str,
}

impl<'a> Headless<'a> {
    /// A run of one of the plugin's agents (`hallmark:<agent>`): no MCP server the
    /// checkout configures, `settings` for what it may touch, the repository's
    /// `claude_args`, then `prompt`. The role's own flags go on top.
    pub fn agent(
        plugin: &'a Path,
        agent: &'a str,
        settings: &'a Value,
        extra: &'a [String],
        prompt: &'a str,
    ) -> Self {
        Headless {
            plugin_dir: Some(plugin),
            agent: Some(agent),
            strict_mcp: true,
            settings: Some(settings),
            extra,
            prompt,
            ..Headless::default()
        }
    }

    /// The arguments, in the order `claude` is given them.
    pub fn args(&self) -> Vec<String> {
        let mut args: Vec<String> = self.lead.clone();
        if !args.iter().any(|a| a == "-p" || a == "--print") {
            args.push("-p".into());
        }
        let flags: [(&str, Option<String>); 10] = [
            ("--resume", self.resume.map(str::to_string)),
            (
                "--plugin-dir",
                self.plugin_dir.map(|p| p.display().to_string()),
            ),
            ("--agent", self.agent.map(str::to_string)),
            ("--json-schema", self.json_schema.map(str::to_string)),
            ("--output-format", Some("stream-json".into())),
            ("--model", self.model.map(str::to_string)),
            (
                "--permission-mode",
                self.permission_mode.map(str::to_string),
            ),
            (
                "--setting-sources",
                self.setting_sources.map(str::to_string),
            ),
            ("--settings", self.settings.map(Value::to_string)),
            (
                "--max-budget-usd",
                self.max_budget_usd.map(|usd| format!("{usd:.2}")),
            ),
        ];
        for (name, value) in flags {
            if let Some(v) = value {
                args.push(name.to_string());
                args.push(v);
            }
            // stream-json is only printed with --verbose.
            if name == "--output-format" {
                args.push("--verbose".into());
            }
        }
        if self.strict_mcp {
            args.push("--strict-mcp-config".into());
        }
        args.extend(self.extra.iter().cloned());
        args.push(self.prompt.to_string());
        args
    }
}

/// Runs `claude <args>` to the end with no terminal (`hall setup claude`'s plugin
/// commands).
pub fn cli(args: &[String]) -> Result<()> {
    let out = crate::platform::program("claude")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|source| ClaudeError::NotInstalled {
            program: "claude".into(),
            source,
        })?;
    if !out.status.success() {
        return Err(ClaudeError::Failed {
            args: args.join(" "),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    Ok(())
}

/// Starts an interactive Claude Code session in `dir`, on this terminal, with
/// `--settings <file>` when one is given, and waits for it; returns its exit code.
pub fn session(
    dir: &Path,
    settings: Option<&Path>,
    env: &[(&str, &Path)],
    args: &[String],
) -> Result<Option<i32>> {
    let mut cmd = crate::platform::program("claude");
    cmd.current_dir(dir);
    if let Some(file) = settings {
        cmd.arg("--settings").arg(file);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.args(args);
    let status = cmd.status().map_err(|source| ClaudeError::NotInstalled {
        program: "claude".into(),
        source,
    })?;
    Ok(status.code())
}

/// `claude --version`'s first line, when claude runs.
pub fn version() -> Option<String> {
    let out = crate::platform::program("claude")
        .arg("--version")
        .output()
        .ok()?;
    crate::platform::first_line(&out)
}

/// Runs headless runs: the real process, or a double in tests of the loop's steps.
pub trait Runner: Send + Sync {
    /// Runs `spec`, streaming into `dir`, and reads its result.
    fn run(&self, dir: &Path, stamp: &str, spec: &RunSpec) -> Result<RunOutcome>;
}

/// The real thing: a child process per run.
#[derive(Clone, Copy, Debug, Default)]
pub struct Process;

impl Runner for Process {
    fn run(&self, dir: &Path, stamp: &str, spec: &RunSpec) -> Result<RunOutcome> {
        run(dir, stamp, spec)
    }
}

/// What to run.
#[derive(Clone, Debug)]
pub struct RunSpec {
    /// `review`, `fix`, `resume`.
    pub role: String,
    pub program: String,
    pub args: Vec<String>,
    pub cwd: PathBuf,
    pub env: Vec<(String, String)>,
    /// Variables taken out of the run's environment (`[sandbox] remove_env`).
    pub remove_env: Vec<String>,
    pub timeout: Duration,
    /// The run must end with `structured_output` (a verdict).
    pub structured: bool,
    /// The output is Claude's stream-json (false for an external fix engine).
    pub stream_json: bool,
    /// The prompt, kept beside the stream for the record.
    pub prompt: String,
}

/// How a run went.
#[derive(Clone, Debug, Default, Serialize)]
pub struct RunOutcome {
    /// The stream's file name under the item's `runs/`.
    pub run: String,
    pub exit_code: Option<i32>,
    pub duration_ms: u64,
    pub timed_out: bool,
    /// Why the run counts as failed; `None` when it succeeded.
    pub failure: Option<String>,
    pub session_id: Option<String>,
    pub structured: Option<Value>,
    pub usage: Vec<Usage>,
    pub num_turns: Option<u64>,
    /// The API said it is overloaded (status 529): a fallback model may get through.
    pub overloaded: bool,
    /// The plan's rate limit stopped the run (status 429): the loop waits, nobody failed.
    pub rate_limited: bool,
    /// The program could not be found at all (no model is reachable from here).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub not_installed: bool,
}

/// The directory an item's runs stream into.
pub fn runs_dir(item_dir: &Path) -> PathBuf {
    item_dir.join("runs")
}

/// A file name that no earlier run took, from `stamp` and `role`. Runs started in the
/// same second are numbered in the order they started, whatever their role
/// (`…-review`, `…-fix-2`, `…-review-3`), so their order reads from their names.
fn fresh_name(dir: &Path, stamp: &str, role: &str) -> Result<(String, std::fs::File)> {
    let compact: String = stamp
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .collect();
    let prefix = format!("{compact}-");
    let taken = std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .filter(|e| {
                    let n = e.file_name();
                    let n = n.to_string_lossy();
                    n.starts_with(&prefix) && n.ends_with(".jsonl")
                })
                .count() as u32
        })
        .unwrap_or(0);
    for n in taken + 1..taken + 10_000 {
        let name = if n == 1 {
            format!("{compact}-{role}")
        } else {
            format!("{compact}-{role}-{n}")
        };
        match std::fs::OpenOptions::new()
            .create_new(true)
            .append(true)
            .open(dir.join(format!("{name}.jsonl")))
        {
            Ok(f) => return Ok((name, f)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(files(dir)(e)),
        }
    }
    Err(files(dir)(std::io::Error::other("no free run file name")))
}

/// Stops the runs in `dir` whose daemon has died (its pid is gone) while they ran on,
/// and removes their locks. A run is stopped only when its pid is still the process
/// the lock names (the same start time), never a later process that reused the pid;
/// where the system can't tell, the run is left alone.
pub fn reap_orphans(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().and_then(|e| e.to_str()) != Some("lock") {
            continue;
        }
        let Some(lock) = std::fs::read_to_string(&path)
            .ok()
            .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        else {
            continue;
        };
        let pid = lock["pid"].as_u64().unwrap_or(0) as u32;
        if pid == 0 || pid == std::process::id() || !crate::platform::process_gone(pid) {
            continue;
        }
        if let (Some(child), Some(start)) = (lock["child"].as_u64(), lock["child_start"].as_u64()) {
            let child = child as u32;
            if crate::platform::process_start(child) == Some(start)
                && !crate::platform::process_gone(child)
            {
                crate::platform::kill_process_group(child);
            }
        }
        let _ = std::fs::remove_file(&path);
    }
}

/// Runs `spec`, streaming into `dir`, and reads its result.
pub fn run(dir: &Path, stamp: &str, spec: &RunSpec) -> Result<RunOutcome> {
    std::fs::create_dir_all(dir).map_err(files(dir))?;
    let (name, mut stream) = fresh_name(dir, stamp, &spec.role)?;
    let stream_path = dir.join(format!("{name}.jsonl"));
    let prompt = dir.join(format!("{name}.prompt.md"));
    std::fs::write(&prompt, &spec.prompt).map_err(files(&prompt))?;
    // A run whose daemon was killed may still be running in the same worktree: it is
    // stopped before another run starts, so the two never commit over each other.
    reap_orphans(dir);
    let lock = dir.join(format!("{name}.lock"));
    std::fs::write(
        &lock,
        json!({ "pid": std::process::id(), "role": spec.role }).to_string(),
    )
    .map_err(files(&lock))?;
    let stderr_path = dir.join(format!("{name}.stderr"));
    let stderr = std::fs::File::create(&stderr_path).map_err(files(&stderr_path))?;
    let mut cmd = crate::platform::program(&spec.program);
    cmd.args(&spec.args)
        .current_dir(&spec.cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(stderr);
    crate::platform::own_process_group(&mut cmd);
    for k in &spec.remove_env {
        cmd.env_remove(k);
    }
    for (k, v) in &spec.env {
        cmd.env(k, v);
    }
    let started = Instant::now();
    let mut outcome = RunOutcome {
        run: name.clone(),
        ..RunOutcome::default()
    };
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            outcome.failure = Some(format!("could not start `{}`: {e}", spec.program));
            outcome.not_installed = e.kind() == std::io::ErrorKind::NotFound;
            end(&mut stream, &outcome).map_err(files(&stream_path))?;
            let _ = std::fs::remove_file(&lock);
            return Ok(outcome);
        }
    };
    // The lock names the run's process too, so a later run can stop it if this one's
    // daemon dies first.
    let child_start = crate::platform::process_start(child.id());
    let _ = std::fs::write(
        &lock,
        json!({ "pid": std::process::id(), "role": spec.role, "child": child.id(), "child_start": child_start })
            .to_string(),
    );
    let Some(stdout) = child.stdout.take() else {
        let not_piped = std::io::Error::other("the run's stdout was not piped");
        return Err(files(&stream_path)(not_piped));
    };
    // The reader copies each line to disk as it arrives, so `hall trace --follow`
    // sees the run live; it keeps the last `result` line and the session id.
    let mut copy = stream.try_clone().map_err(files(&stream_path))?;
    let reader = std::thread::spawn(move || {
        let mut last_result: Option<Value> = None;
        let mut session: Option<String> = None;
        let mut lines = 0u64;
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            lines += 1;
            let _ = writeln!(copy, "{line}");
            if let Ok(v) = serde_json::from_str::<Value>(&line) {
                if session.is_none()
                    && let Some(s) = v.get("session_id").and_then(Value::as_str)
                {
                    session = Some(s.to_string());
                }
                if v.get("type").and_then(Value::as_str) == Some("result") {
                    last_result = Some(v);
                }
            }
        }
        (last_result, session, lines)
    });
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) => {}
            // The child can't be waited for; stop it rather than wait forever.
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
        }
        if started.elapsed() > spec.timeout {
            crate::platform::kill_process_group(child.id());
            let _ = child.kill();
            let _ = child.wait();
            outcome.timed_out = true;
            break None;
        }
        std::thread::sleep(Duration::from_millis(25));
    };
    let (result, session, lines) = reader.join().unwrap_or((None, None, 0));
    outcome.duration_ms = started.elapsed().as_millis() as u64;
    outcome.exit_code = status.and_then(|s| s.code());
    outcome.session_id = session;
    if spec.stream_json {
        read_result(&mut outcome, result.as_ref(), spec.structured);
    } else if outcome.exit_code != Some(0) {
        outcome.failure = Some(format!(
            "the fix engine exited with {}",
            outcome
                .exit_code
                .map_or("a signal".to_string(), |c| c.to_string())
        ));
    }
    if outcome.timed_out {
        outcome.failure = Some(format!(
            "timed out after {} s and was stopped",
            spec.timeout.as_secs()
        ));
    } else if outcome.failure.is_none() && spec.stream_json && lines == 0 {
        outcome.failure = Some("the run printed nothing".into());
    }
    end(&mut stream, &outcome).map_err(files(&stream_path))?;
    if std::fs::metadata(&stderr_path).is_ok_and(|m| m.len() == 0) {
        let _ = std::fs::remove_file(&stderr_path);
    }
    let _ = std::fs::remove_file(&lock);
    Ok(outcome)
}

/// Appends the runner's own last line.
fn end(stream: &mut std::fs::File, o: &RunOutcome) -> std::io::Result<()> {
    let line = json!({
        "type": "hall_run_end",
        "duration_ms": o.duration_ms,
        "exit_code": o.exit_code,
        "timed_out": o.timed_out,
        "failure": o.failure,
    });
    writeln!(stream, "{line}")?;
    stream.sync_data()?;
    Ok(())
}

/// Reads the last `result` line: failure, structured output, usage.
pub fn read_result(outcome: &mut RunOutcome, result: Option<&Value>, structured: bool) {
    let Some(r) = result else {
        outcome.failure = Some(format!(
            "no result line (exit {})",
            outcome
                .exit_code
                .map_or("by a signal".to_string(), |c| c.to_string())
        ));
        return;
    };
    if let Some(s) = r.get("session_id").and_then(Value::as_str) {
        outcome.session_id = Some(s.to_string());
    }
    outcome.num_turns = r.get("num_turns").and_then(Value::as_u64);
    outcome.usage = model_usage(r);
    if r.get("is_error").and_then(Value::as_bool).unwrap_or(false) {
        outcome.rate_limited = r.get("api_error_status").and_then(Value::as_u64) == Some(429)
            || r.get("result")
                .and_then(Value::as_str)
                .is_some_and(|t| t.to_ascii_lowercase().contains("rate_limit"));
        outcome.overloaded = r.get("api_error_status").and_then(Value::as_u64) == Some(529)
            || r.get("result")
                .and_then(Value::as_str)
                .is_some_and(|t| t.to_ascii_lowercase().contains("overloaded"));
        let why = r
            .get("errors")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>()
                    .join("; ")
            })
            .filter(|s| !s.is_empty())
            .or_else(|| r.get("result").and_then(Value::as_str).map(str::to_string))
            .unwrap_or_else(|| {
                r.get("subtype")
                    .and_then(Value::as_str)
                    .unwrap_or("error")
                    .to_string()
            });
        outcome.failure = Some(why);
        return;
    }
    if structured {
        match r.get("structured_output") {
            Some(v) if v.is_object() => outcome.structured = Some(v.clone()),
            _ => outcome.failure = Some("the run ended without structured_output".into()),
        }
    }
}

/// Usage per model from `modelUsage` (the top-level `usage` covers only the main loop);
/// cost from the list-price table, else the run's own figure for unknown models.
fn model_usage(r: &Value) -> Vec<Usage> {
    let Some(map) = r.get("modelUsage").and_then(Value::as_object) else {
        return Vec::new();
    };
    map.iter()
        .map(|(model, u)| {
            let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
            let (input, output, cache_read, cache_write) = (
                n("inputTokens"),
                n("outputTokens"),
                n("cacheReadInputTokens"),
                n("cacheCreationInputTokens"),
            );
            let base = model.split('[').next().unwrap_or(model);
            let cost = if crate::pricing::price(base).is_some() {
                crate::pricing::cost(base, input, output, cache_write, cache_read)
            } else {
                u.get("costUSD").and_then(Value::as_f64).unwrap_or(0.0)
            };
            Usage {
                model: base.to_string(),
                role: String::new(),
                input,
                output,
                cache_read,
                cache_write,
                cost_usd: cost,
                session: r
                    .get("session_id")
                    .and_then(Value::as_str)
                    .map(str::to_string),
                request_id: None,
            }
        })
        .collect()
}

/// The model a run falls back to when its own is overloaded: the next smaller one.
pub fn fallback_model(model: &str) -> Option<String> {
    let m = model.to_ascii_lowercase();
    if m.contains("opus") {
        Some("sonnet".into())
    } else if m.contains("sonnet") {
        Some("haiku".into())
    } else {
        None
    }
}

/// Runs `spec`; when the API was overloaded, runs it once more with the fallback
/// model, as a run of its own (its own stream file). Returns every run, the last one
/// deciding.
pub fn run_with_fallback(
    runner: &dyn Runner,
    dir: &Path,
    stamp: &str,
    spec: &RunSpec,
) -> Result<Vec<RunOutcome>> {
    let first = runner.run(dir, stamp, spec)?;
    let model_at = spec.args.iter().position(|a| a == "--model").map(|i| i + 1);
    let fallback = model_at
        .and_then(|i| spec.args.get(i))
        .and_then(|m| fallback_model(m));
    match (first.overloaded, model_at, fallback) {
        (true, Some(i), Some(model)) => {
            let mut again = spec.clone();
            again.args[i] = model;
            let second = runner.run(dir, stamp, &again)?;
            Ok(vec![first, second])
        }
        _ => Ok(vec![first]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(line: &str, structured: bool) -> RunOutcome {
        let v: Value = serde_json::from_str(line).unwrap();
        let mut o = RunOutcome {
            exit_code: Some(0),
            ..RunOutcome::default()
        };
        read_result(&mut o, Some(&v), structured);
        o
    }

    #[test]
    fn is_error_decides_not_subtype() {
        let o = outcome(
            r#"{"type":"result","subtype":"success","is_error":true,"result":"API Error: 400 bad","modelUsage":{}}"#,
            false,
        );
        assert_eq!(o.failure.as_deref(), Some("API Error: 400 bad"));
        let o = outcome(
            r#"{"type":"result","subtype":"error_max_budget_usd","is_error":true,"errors":["Reached maximum budget ($0.02)"]}"#,
            false,
        );
        assert_eq!(o.failure.as_deref(), Some("Reached maximum budget ($0.02)"));
    }

    #[test]
    fn a_verdict_run_without_structured_output_failed() {
        let o = outcome(
            r#"{"type":"result","subtype":"success","is_error":false,"result":"looks good"}"#,
            true,
        );
        assert_eq!(
            o.failure.as_deref(),
            Some("the run ended without structured_output")
        );
        let o = outcome(
            r#"{"type":"result","subtype":"success","is_error":false,"structured_output":{"summary":"x"}}"#,
            true,
        );
        assert!(o.failure.is_none());
        assert_eq!(o.structured, Some(json!({"summary":"x"})));
    }

    #[test]
    fn usage_comes_from_model_usage() {
        let o = outcome(
            r#"{"type":"result","is_error":false,"session_id":"s1","usage":{"input_tokens":0},"modelUsage":{"claude-opus-4-8[1m]":{"inputTokens":2003,"outputTokens":63,"cacheReadInputTokens":1000,"cacheCreationInputTokens":400,"costUSD":0.5},"hall-fake-model":{"inputTokens":10,"outputTokens":1,"costUSD":0.25}}}"#,
            false,
        );
        assert_eq!(o.usage.len(), 2);
        let opus = o
            .usage
            .iter()
            .find(|u| u.model == "claude-opus-4-8")
            .unwrap();
        assert_eq!(
            (opus.input, opus.output, opus.cache_read, opus.cache_write),
            (2003, 63, 1000, 400)
        );
        assert!(
            opus.cost_usd > 0.0 && (opus.cost_usd - 0.5).abs() > 1e-9,
            "list price, not the run's figure"
        );
        let fake = o
            .usage
            .iter()
            .find(|u| u.model == "hall-fake-model")
            .unwrap();
        assert!(
            (fake.cost_usd - 0.25).abs() < 1e-9,
            "unknown models keep the run's own cost"
        );
        assert_eq!(o.session_id.as_deref(), Some("s1"));
    }
}
