//! Headless model runs: the command line, confinement, the run's stream on disk, and
//! what the stream's last `result` line says.
//!
//! A run streams into `runs/<stamp>-<role>.jsonl` as it happens, one line of Claude's
//! stream-json at a time, and ends with one `hall_run_end` line written after the process
//! has exited. While it runs, a `.lock` file beside it names the process, so the `now`
//! block can tell a live run from one whose daemon died. Failure is read from the result
//! line's `is_error` (never its `subtype`), and a run that should answer with
//! `structured_output` and doesn't is a failed run.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{Value, json};

use crate::config::Config;
use crate::error::{Code, HallError, Result};
use crate::item::event::Usage;

/// What to run.
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
}

/// The directory an item's runs stream into.
pub fn runs_dir(item_dir: &Path) -> PathBuf {
    item_dir.join("runs")
}

/// A file name that no earlier run took, from `stamp` and `role`.
fn fresh_name(dir: &Path, stamp: &str, role: &str) -> Result<(String, std::fs::File)> {
    let compact: String = stamp
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .collect();
    for n in 1..10_000u32 {
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
            Err(e) => return Err(e.into()),
        }
    }
    Err(HallError::internal("no free run file name"))
}

/// Runs `spec`, streaming into `dir`, and reads its result.
pub fn run(dir: &Path, stamp: &str, spec: &RunSpec) -> Result<RunOutcome> {
    std::fs::create_dir_all(dir)?;
    let (name, mut stream) = fresh_name(dir, stamp, &spec.role)?;
    std::fs::write(dir.join(format!("{name}.prompt.md")), &spec.prompt)?;
    let lock = dir.join(format!("{name}.lock"));
    std::fs::write(
        &lock,
        json!({ "pid": std::process::id(), "role": spec.role }).to_string(),
    )?;
    let stderr_path = dir.join(format!("{name}.stderr"));
    let stderr = std::fs::File::create(&stderr_path)?;
    let mut cmd = Command::new(&spec.program);
    cmd.args(&spec.args)
        .current_dir(&spec.cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(stderr);
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
            end(&mut stream, &outcome)?;
            let _ = std::fs::remove_file(&lock);
            return Ok(outcome);
        }
    };
    let Some(stdout) = child.stdout.take() else {
        return Err(HallError::internal("the run's stdout was not piped"));
    };
    // The reader copies each line to disk as it arrives, so `hall trace --follow`
    // sees the run live; it keeps the last `result` line and the session id.
    let mut copy = stream.try_clone()?;
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
        if let Some(status) = child.try_wait()? {
            break Some(status);
        }
        if started.elapsed() > spec.timeout {
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
    end(&mut stream, &outcome)?;
    if std::fs::metadata(&stderr_path).is_ok_and(|m| m.len() == 0) {
        let _ = std::fs::remove_file(&stderr_path);
    }
    let _ = std::fs::remove_file(&lock);
    Ok(outcome)
}

/// Appends the runner's own last line.
fn end(stream: &mut std::fs::File, o: &RunOutcome) -> Result<()> {
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
pub fn run_with_fallback(dir: &Path, stamp: &str, spec: &RunSpec) -> Result<Vec<RunOutcome>> {
    let first = run(dir, stamp, spec)?;
    let model_at = spec.args.iter().position(|a| a == "--model").map(|i| i + 1);
    let fallback = model_at
        .and_then(|i| spec.args.get(i))
        .and_then(|m| fallback_model(m));
    match (first.overloaded, model_at, fallback) {
        (true, Some(i), Some(model)) => {
            let mut again = RunSpec {
                args: spec.args.clone(),
                role: spec.role.clone(),
                program: spec.program.clone(),
                cwd: spec.cwd.clone(),
                env: spec.env.clone(),
                remove_env: spec.remove_env.clone(),
                timeout: spec.timeout,
                structured: spec.structured,
                stream_json: spec.stream_json,
                prompt: spec.prompt.clone(),
            };
            again.args[i] = model;
            let second = run(dir, stamp, &again)?;
            Ok(vec![first, second])
        }
        _ => Ok(vec![first]),
    }
}

/// Who a headless run is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// The principal engineer: read-only, no hooks, isolated from the checkout's settings.
    Review,
    /// The fixer: edits its worktree, with Hallmark's hooks.
    Fix,
    /// A resumed session that asked a question.
    Resume,
}

/// `--settings` for a run: its file tools read only inside `dirs` and never the
/// credential paths in `deny_read`; its commands run in Claude Code's sandbox, writing
/// only `write` and reaching only the repo's `domains` and `unix_sockets`; web tools are
/// off. The reviewer also runs without hooks. With a `scope`, the run gets the same
/// denials as a confined session ([`crate::confine`]): git's internals beyond what a
/// commit needs, the journal, local remotes, other checkouts and the signing key.
pub fn confinement(
    config: &Config,
    kind: Kind,
    dirs: &[PathBuf],
    write: &[PathBuf],
    scope: Option<&crate::confine::Scope<'_>>,
) -> Value {
    let abs = |p: &Path| format!("/{}", p.display());
    let mut allow: Vec<String> = Vec::new();
    for d in dirs {
        allow.push(format!("Read({}/**)", abs(d)));
        allow.push(format!("Grep({}/**)", abs(d)));
        allow.push(format!("Glob({}/**)", abs(d)));
    }
    if kind == Kind::Fix {
        for d in write {
            allow.push(format!("Edit({}/**)", abs(d)));
        }
    }
    let mut deny: Vec<String> = vec!["WebFetch".into(), "WebSearch".into()];
    for p in &config.sandbox.deny_read {
        let p = expand_home(p);
        deny.push(format!("Read({p})"));
        deny.push(format!("Read({p}/**)"));
    }
    if kind == Kind::Review {
        deny.push("Edit".into());
        deny.push("Write".into());
        deny.push("NotebookEdit".into());
    }
    let mut deny_write: Vec<String> = Vec::new();
    let mut deny_read: Vec<String> = Vec::new();
    if let Some(scope) = scope {
        let session = crate::confine::settings(scope, write);
        for rule in session["permissions"]["deny"]
            .as_array()
            .into_iter()
            .flatten()
        {
            if let Some(r) = rule.as_str()
                && !deny.iter().any(|d| d == r)
            {
                deny.push(r.to_string());
            }
        }
        let list = |v: &Value| -> Vec<String> {
            v.as_array()
                .into_iter()
                .flatten()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect()
        };
        deny_write = list(&session["sandbox"]["filesystem"]["denyWrite"]);
        deny_read = list(&session["sandbox"]["filesystem"]["denyRead"]);
    }
    json!({
        "disableAllHooks": kind == Kind::Review,
        "permissions": { "allow": allow, "deny": deny, "defaultMode": if kind == Kind::Fix { "acceptEdits" } else { "default" } },
        "sandbox": {
            "enabled": true,
            "allowUnsandboxedCommands": false,
            "autoAllowBashIfSandboxed": false,
            "filesystem": {
                "allowWrite": write.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
                "denyWrite": deny_write,
                "denyRead": deny_read,
            },
            "network": {
                "allowedDomains": config.sandbox.domains,
                "allowUnixSockets": config.sandbox.unix_sockets,
                "strictAllowlist": true,
            },
        },
    })
}

fn expand_home(p: &str) -> String {
    match (p.strip_prefix("~/"), dirs::home_dir()) {
        (Some(rest), Some(home)) => format!("/{}", home.join(rest).display()),
        _ if p.starts_with('/') => format!("/{p}"),
        _ => p.to_string(),
    }
}

/// Environment every headless run gets: its actor and item, and no CLAUDE.md from the
/// checkout for isolated roles.
pub fn base_env(kind: Kind, actor: &str, item: &str) -> Vec<(String, String)> {
    let mut env = vec![
        ("HALL_ACTOR".to_string(), actor.to_string()),
        ("HALL_ITEM".to_string(), item.to_string()),
    ];
    if kind == Kind::Review {
        env.push(("CLAUDE_CODE_DISABLE_CLAUDE_MDS".into(), "1".into()));
    }
    env
}

/// Credentials no run should see, plus the repo's own list.
pub fn removed_env(config: &Config) -> Vec<String> {
    let mut v: Vec<String> = [
        "GH_TOKEN",
        "GITHUB_TOKEN",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    v.extend(config.sandbox.remove_env.iter().cloned());
    v
}

/// Dollars for `--max-budget-usd`, or `None` for no cap.
pub fn max_usd(money: Option<&crate::config::Money>, default: f64) -> Option<f64> {
    match money {
        None => Some(default),
        Some(crate::config::Money::Usd(v)) => Some(*v),
        Some(crate::config::Money::Word(_)) => None,
    }
}

/// Ends a headless command line the same way for every role: the run's dollar cap,
/// the repository's `claude_args`, then the prompt.
pub fn finish_args(
    args: &mut Vec<String>,
    config: &Config,
    max: Option<&crate::config::Money>,
    default_usd: f64,
    prompt: &str,
) {
    if let Some(usd) = max_usd(max, default_usd) {
        args.push("--max-budget-usd".into());
        args.push(format!("{usd:.2}"));
    }
    args.extend(config.claude_args.iter().cloned());
    args.push(prompt.to_string());
}

/// Starting a run needs the program to exist; say how to get it when it doesn't.
pub fn missing_program(program: &str) -> HallError {
    HallError::new(
        Code::CommandFailed,
        format!("`{program}` is not on PATH, so the loop can't run models"),
    )
    .hint("npm install -g @anthropic-ai/claude-code")
    .hint("hall doctor")
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
