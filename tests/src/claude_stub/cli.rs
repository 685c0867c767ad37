//! Finding and running the pinned `claude` CLI against the stub, with a deadline and
//! the whole process group killed on timeout.

use super::*;

/// The `claude` executable the tests drive.
///
/// `$HALLMARK_TEST_CLAUDE` wins; otherwise `tests/claude/node_modules/.bin/claude`, which
/// `npm ci --prefix tests/claude` installs. When npm skipped the package's postinstall (which
/// copies the native binary over a small placeholder script), the platform package's binary is
/// used directly.
pub fn claude_binary() -> PathBuf {
    if let Some(path) = std::env::var_os(CLAUDE_BIN_ENV).filter(|p| !p.is_empty()) {
        return PathBuf::from(path);
    }
    let modules = Path::new(env!("CARGO_MANIFEST_DIR")).join("claude/node_modules");
    let wrapper = modules.join(".bin/claude");
    let is_placeholder = std::fs::metadata(&wrapper).is_ok_and(|m| m.len() < 1 << 20);
    let platform = match (std::env::consts::OS, std::env::consts::ARCH) {
        ("linux", "x86_64") => Some("linux-x64"),
        ("linux", "aarch64") => Some("linux-arm64"),
        ("macos", "x86_64") => Some("darwin-x64"),
        ("macos", "aarch64") => Some("darwin-arm64"),
        _ => None,
    };
    if is_placeholder && let Some(platform) = platform {
        let native = modules.join(format!("@anthropic-ai/claude-code-{platform}/claude"));
        if native.is_file() {
            return native;
        }
    }
    wrapper
}

/// A headless `claude -p` invocation against a [`StubServer`].
///
/// The child gets a cleared environment: `PATH` from the test process (override with
/// [`env`](Self::env)), the given `HOME`, the stub's base URL, a dummy key, and the switches that
/// keep the CLI from reaching the network, updating itself or prompting.
#[derive(Clone, Debug)]
pub struct ClaudeCommand {
    binary: PathBuf,
    prompt: String,
    home: PathBuf,
    cwd: PathBuf,
    model: String,
    permission_mode: Option<String>,
    plugin_dirs: Vec<PathBuf>,
    args: Vec<String>,
    env: Vec<(String, String)>,
    timeout: Duration,
}

impl ClaudeCommand {
    /// `claude -p <prompt>` run in `cwd` with `HOME=home` (created if missing), talking to `stub`.
    pub fn new(
        stub: &StubServer,
        home: impl Into<PathBuf>,
        cwd: impl Into<PathBuf>,
        prompt: impl Into<String>,
    ) -> Self {
        let proxy = "http://127.0.0.1:9".to_owned();
        let env = [
            ("ANTHROPIC_BASE_URL", stub.base_url()),
            ("ANTHROPIC_API_KEY", "dummy".to_owned()),
            // Without this the CLI tries api.anthropic.com directly and stalls offline.
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".to_owned()),
            ("DISABLE_AUTOUPDATER", "1".to_owned()),
            ("DISABLE_TELEMETRY", "1".to_owned()),
            ("DISABLE_ERROR_REPORTING", "1".to_owned()),
            ("CLAUDE_CODE_MAX_RETRIES", "1".to_owned()),
            // Anything that still tries to leave the machine fails at once on a dead local port.
            ("HTTPS_PROXY", proxy.clone()),
            ("HTTP_PROXY", proxy),
            ("NO_PROXY", "127.0.0.1,localhost".to_owned()),
            // bypassPermissions is refused to root unless the CLI is told it is sandboxed.
            ("IS_SANDBOX", "1".to_owned()),
            ("SHELL", "/bin/bash".to_owned()),
            ("LANG", "C.UTF-8".to_owned()),
            ("TERM", "dumb".to_owned()),
            ("NO_COLOR", "1".to_owned()),
            (
                "PATH",
                std::env::var("PATH").unwrap_or_else(|_| "/usr/local/bin:/usr/bin:/bin".to_owned()),
            ),
        ];
        Self {
            binary: claude_binary(),
            prompt: prompt.into(),
            home: home.into(),
            cwd: cwd.into(),
            model: DEFAULT_MODEL.to_owned(),
            permission_mode: Some("bypassPermissions".to_owned()),
            plugin_dirs: Vec::new(),
            args: Vec::new(),
            env: env.into_iter().map(|(k, v)| (k.to_owned(), v)).collect(),
            timeout: Duration::from_secs(120),
        }
    }

    /// Runs this executable instead of [`claude_binary`].
    #[must_use]
    pub fn binary(mut self, path: impl Into<PathBuf>) -> Self {
        self.binary = path.into();
        self
    }

    /// The `--model` value (default [`DEFAULT_MODEL`]).
    #[must_use]
    pub fn model(mut self, model: impl Into<String>) -> Self {
        self.model = model.into();
        self
    }

    /// `--permission-mode <mode>`, or none at all (`-p` default: edits are denied) with `None`.
    #[must_use]
    pub fn permission_mode(mut self, mode: Option<&str>) -> Self {
        self.permission_mode = mode.map(str::to_owned);
        self
    }

    /// Adds `--plugin-dir <dir>`.
    #[must_use]
    pub fn plugin_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.plugin_dirs.push(dir.into());
        self
    }

    /// Adds an argument after the defaults (`--max-turns`, `--session-id`, `--resume`, …).
    #[must_use]
    pub fn arg(mut self, arg: impl Into<String>) -> Self {
        self.args.push(arg.into());
        self
    }

    /// Sets an environment variable for the CLI and, through it, its hooks.
    #[must_use]
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        let key = key.into();
        self.env.retain(|(k, _)| *k != key);
        self.env.push((key, value.into()));
        self
    }

    /// Kills the run (and its process group) after `timeout` (default 120 s).
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The full argument list, for logging.
    pub fn argv(&self) -> Vec<String> {
        // The prompt goes straight after -p: variadic flags such as --allowedTools would
        // otherwise swallow it.
        let mut argv = vec![
            "-p".to_owned(),
            self.prompt.clone(),
            "--model".to_owned(),
            self.model.clone(),
            "--output-format".to_owned(),
            "stream-json".to_owned(),
            "--verbose".to_owned(),
        ];
        if let Some(mode) = &self.permission_mode {
            argv.push("--permission-mode".to_owned());
            argv.push(mode.clone());
        }
        for dir in &self.plugin_dirs {
            argv.push("--plugin-dir".to_owned());
            argv.push(dir.display().to_string());
        }
        argv.extend(self.args.iter().cloned());
        argv
    }

    /// Runs the CLI to completion or until the timeout.
    pub fn run(&self) -> io::Result<ClaudeRun> {
        std::fs::create_dir_all(&self.home)?;
        let mut command = Command::new(&self.binary);
        command
            .args(self.argv())
            .current_dir(&self.cwd)
            .env_clear()
            .envs(self.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .env("HOME", &self.home)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        #[cfg(unix)]
        {
            use std::os::unix::process::CommandExt;
            // Its own group, so a timeout can kill hooks and tool processes too.
            command.process_group(0);
        }
        let started = Instant::now();
        let mut child = command.spawn().map_err(|e| {
            io::Error::new(
                e.kind(),
                format!(
                    "cannot run {}: {e} (run `npm ci --prefix tests/claude`)",
                    self.binary.display()
                ),
            )
        })?;
        let stdout = drain(child.stdout.take());
        let stderr = drain(child.stderr.take());
        let (status, timed_out) = wait_with_deadline(&mut child, started + self.timeout)?;
        let elapsed = started.elapsed();
        Ok(ClaudeRun {
            status: status.and_then(|s| s.code()),
            stdout: collect(stdout),
            stderr: collect(stderr),
            timed_out,
            elapsed,
            home: self.home.clone(),
        })
    }
}

/// Reads a pipe to its end on a thread, handing the bytes back over a channel.
fn drain(pipe: Option<impl Read + Send + 'static>) -> std::sync::mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = std::sync::mpsc::channel();
    if let Some(mut pipe) = pipe {
        let _ = thread::Builder::new()
            .name("claude-stub-pipe".into())
            .spawn(move || {
                let mut buf = Vec::new();
                let _ = pipe.read_to_end(&mut buf);
                let _ = tx.send(buf);
            });
    }
    rx
}

/// Waits briefly for a pipe reader: a leftover grandchild may hold the pipe open.
fn collect(rx: std::sync::mpsc::Receiver<Vec<u8>>) -> String {
    let bytes = rx.recv_timeout(Duration::from_secs(5)).unwrap_or_default();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Polls the child until it exits or the deadline passes; on the deadline, kills its group.
fn wait_with_deadline(
    child: &mut Child,
    deadline: Instant,
) -> io::Result<(Option<ExitStatus>, bool)> {
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok((Some(status), false));
        }
        if Instant::now() >= deadline {
            kill_group(child);
            let status = child.wait().ok();
            return Ok((status, true));
        }
        thread::sleep(Duration::from_millis(20));
    }
}

/// Kills the CLI, its process group, and every process below it.
///
/// The CLI starts each hook in a process group of its own, so killing the CLI's group alone
/// would leave a hanging hook behind.
fn kill_group(child: &mut Child) {
    #[cfg(unix)]
    {
        let root = child.id();
        let mut targets = vec![format!("-{root}")];
        for pid in descendants(root) {
            targets.push(pid.to_string());
            targets.push(format!("-{pid}"));
        }
        let _ = Command::new("kill")
            .arg("-KILL")
            .arg("--")
            .args(&targets)
            .stderr(Stdio::null())
            .status();
    }
    let _ = child.kill();
}

/// Every process whose chain of parents leads to `root` (Linux `/proc`; empty elsewhere).
fn descendants(root: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut parents = Vec::new();
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // The command name may hold spaces and parentheses; the fields after the last ')'
        // are fixed: state, then the parent pid.
        let ppid = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|s| s.parse::<u32>().ok());
        if let Some(ppid) = ppid {
            parents.push((pid, ppid));
        }
    }
    let mut found = vec![root];
    let mut next = 0;
    while next < found.len() {
        let parent = found[next];
        for &(pid, ppid) in &parents {
            if ppid == parent && !found.contains(&pid) {
                found.push(pid);
            }
        }
        next += 1;
    }
    found.split_off(1)
}

/// What a `claude -p` run left behind.
#[derive(Clone, Debug)]
pub struct ClaudeRun {
    /// Exit code; `None` when killed by a signal (e.g. on timeout).
    pub status: Option<i32>,
    /// The stream-json lines.
    pub stdout: String,
    /// Diagnostics.
    pub stderr: String,
    /// Whether the runner had to kill the CLI.
    pub timed_out: bool,
    /// Wall time of the run.
    pub elapsed: Duration,
    /// The `HOME` the run used (transcripts live under `<home>/.claude/projects/`).
    pub home: PathBuf,
}

impl ClaudeRun {
    /// Every stdout line that parses as JSON.
    pub fn events(&self) -> Vec<Value> {
        self.stdout
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// The `system`/`init` event.
    pub fn init(&self) -> Option<Value> {
        self.events().into_iter().find(|e| {
            e.get("type").and_then(Value::as_str) == Some("system")
                && e.get("subtype").and_then(Value::as_str) == Some("init")
        })
    }

    /// The last `result` event (a run may emit several when background agents finish late).
    pub fn result(&self) -> Option<Value> {
        self.events()
            .into_iter()
            .rev()
            .find(|e| e.get("type").and_then(Value::as_str) == Some("result"))
    }

    /// Exit 0 and a final result with `is_error: false`.
    pub fn succeeded(&self) -> bool {
        self.status == Some(0)
            && self
                .result()
                .and_then(|r| r.get("is_error").and_then(Value::as_bool))
                == Some(false)
    }

    /// The session id from the result or init event.
    pub fn session_id(&self) -> Option<String> {
        self.result().or_else(|| self.init()).and_then(|e| {
            e.get("session_id")
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
    }

    /// The session transcript, found by session id under `<home>/.claude/projects/*/`.
    pub fn transcript_path(&self) -> Option<PathBuf> {
        let file = format!("{}.jsonl", self.session_id()?);
        let projects = self.home.join(".claude").join("projects");
        std::fs::read_dir(projects)
            .ok()?
            .filter_map(Result::ok)
            .map(|entry| entry.path().join(&file))
            .find(|path| path.is_file())
    }

    /// The transcript's lines parsed as JSON (empty when there is none).
    pub fn transcript(&self) -> Vec<Value> {
        self.transcript_path()
            .and_then(|p| std::fs::read_to_string(p).ok())
            .map(|text| {
                text.lines()
                    .filter_map(|l| serde_json::from_str(l).ok())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// A one-paragraph summary for assertion messages.
    pub fn describe(&self) -> String {
        format!(
            "claude exited {:?} after {:?}{}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.status,
            self.elapsed,
            if self.timed_out {
                " (timed out, killed)"
            } else {
                ""
            },
            self.stdout,
            self.stderr
        )
    }
}
