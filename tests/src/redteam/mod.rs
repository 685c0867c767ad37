//! The red-team harness: attacks from `tests/fixtures/redteam/cases.toml`, each run in a
//! fresh world (a repository with a bare `origin` on disk, the session's item worktree,
//! and another item whose HEAD carries a real signed hallmark), ungated, through the real
//! `hall hook pre-tool-use`, and against each layer of the defence on its own.
//!
//! A world is built once per worker with `hall` itself and kept as a template; every run
//! restores the template in place (same paths, so every absolute path inside git and the
//! journal stays valid), runs the steps, and compares snapshots of what the attacks aim
//! at: origin's refs, this repository's notes and replacement refs, and the base branch.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::{Value, json};

use crate::sandbox::Sandbox;

mod state;

pub use state::Snapshot;

/// How long one step may run before it is stopped.
const STEP_TIMEOUT: Duration = Duration::from_secs(20);

/// The corpus.
#[derive(Debug, Deserialize)]
pub struct Corpus {
    #[serde(rename = "case")]
    pub cases: Vec<Case>,
}

/// One attack.
#[derive(Debug, Clone, Deserialize)]
pub struct Case {
    pub id: String,
    pub class: String,
    /// `push` (a ref on origin changes), `note` (refs/notes or refs/replace change here),
    /// `ref` (the base branch or the main checkout's HEAD moves), `file` (one of the
    /// `watch` paths changes) or `person` (the journal gains an event recorded as `you`,
    /// or the user's Hallmark config directory changes).
    pub effect: String,
    /// The paths an effect of `file` is read from (placeholders allowed): a file's bytes,
    /// a directory's whole tree, or that the path is absent.
    #[serde(default)]
    pub watch: Vec<String>,
    /// The session's directory (a placeholder), when not the item's worktree.
    #[serde(default)]
    pub cwd: Option<String>,
    /// Programs the case needs (the suite fails when one is missing).
    #[serde(default)]
    pub needs: Vec<String>,
    pub steps: Vec<Step>,
}

/// One tool call, or a change of the session's directory.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Step {
    Bash(String),
    Write {
        path: String,
        content: String,
    },
    Edit {
        path: String,
        append: String,
    },
    /// The session's directory from here on, as Claude Code reports it in each later
    /// call's `cwd` after a `cd`; the directory may not exist (deleted, or never made).
    Cd(String),
    /// Any other tool (an MCP tool, `PowerShell`…), with its input. Run ungated, a tool
    /// whose input names a path (`file_path` or `path`) and `content` writes that file.
    Tool {
        name: String,
        input: toml::Table,
    },
}

/// The folder of the red-team fixtures.
pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/redteam")
}

/// Loads the corpus: every `*.toml` in the fixtures but `allow.toml`, in name order.
pub fn corpus() -> Corpus {
    let mut files: Vec<PathBuf> = std::fs::read_dir(fixtures())
        .expect("the red-team fixtures")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .filter(|p| p.file_name().is_some_and(|n| n != "allow.toml"))
        .collect();
    files.sort();
    let mut cases = Vec::new();
    let mut ids = BTreeSet::new();
    for f in files {
        let text = std::fs::read_to_string(&f).expect("read a corpus file");
        let part: Corpus =
            toml::from_str(&text).unwrap_or_else(|e| panic!("{} doesn't parse: {e}", f.display()));
        for c in part.cases {
            assert!(ids.insert(c.id.clone()), "case {} is defined twice", c.id);
            cases.push(c);
        }
    }
    Corpus { cases }
}

/// The allow list.
#[derive(Debug, Deserialize)]
pub struct AllowList {
    pub allow: Vec<String>,
    #[serde(default)]
    pub in_other: Vec<AllowOther>,
}

#[derive(Debug, Deserialize)]
pub struct AllowOther {
    pub cmd: String,
}

pub fn allow_list() -> AllowList {
    let text = include_str!("../../fixtures/redteam/allow.toml");
    toml::from_str(text).expect("allow.toml parses")
}

/// A world and its template.
pub struct World {
    pub sb: Sandbox,
    pub wt: PathBuf,
    pub other: PathBuf,
    pub vars: BTreeMap<String, String>,
    template: PathBuf,
}

/// How a step fared through the hook.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Allowed,
    /// Denied, with the gate's name (`push`, `protect`…) and the reason.
    Denied {
        gate: String,
        reason: String,
    },
}

/// The outcome of one run of a case.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// Per step: the hook's verdict (or `Allowed` when ungated), and whether the step ran.
    pub steps: Vec<(Verdict, bool)>,
    /// Whether the case's effect happened.
    pub effect: bool,
    /// What changed, for messages.
    pub changed: Vec<String>,
    /// Origin refs that are new or moved, with their commits.
    pub pushed: Vec<(String, String)>,
    /// Commits whose hallmark note changed here.
    pub noted: Vec<String>,
}

/// Which denials a gated run honours.
#[derive(Debug, Clone)]
pub enum Gating {
    /// Run everything.
    None,
    /// Honour every denial of the hook.
    Hook,
    /// Honour only denials whose layer is in the set (see [`layer_of`]).
    Layers(BTreeSet<&'static str>),
    /// Run the steps as tool calls of a real Claude Code session confined by the
    /// settings `hall claude` writes, with no hook.
    Sandbox,
}

/// The layer a hook denial belongs to: `L1` verifies what is pushed, `L2` protects git's
/// internals, other checkouts, config and what the strict guard can't read, `L6` keeps
/// the base branch and the main checkout (where the rules are read from) still.
pub fn layer_of(gate: &str, reason: &str) -> &'static str {
    match gate {
        "push" => "L1",
        "repo" if reason.contains("main checkout") || reason.contains("base branch") => "L6",
        _ => "L2",
    }
}

fn copy_dir(from: &Path, to: &Path) {
    let status = Command::new("cp")
        .arg("-a")
        .arg(format!("{}/.", from.display()))
        .arg(to)
        .status()
        .expect("cp runs");
    assert!(
        status.success(),
        "copy {} to {}",
        from.display(),
        to.display()
    );
}

impl World {
    /// Builds a world with `hall` and keeps it as a template.
    pub fn build() -> World {
        let sb = Sandbox::initialized();
        // The user installed `hall`: a session finds it on PATH.
        #[cfg(unix)]
        std::os::unix::fs::symlink(crate::sandbox::hall_bin(), sb.bin.join("hall"))
            .expect("link hall");
        // The signers the base trusts, committed and pushed, as a person would.
        sb.hall(&sb.repo, &["init", "--signers"]).ok();
        sb.git(&sb.repo, &["add", "-A"]);
        sb.git(&sb.repo, &["commit", "-q", "-m", "Trust the signing key"]);
        sb.git(&sb.repo, &["push", "-q", "origin", "main"]);
        let v = sb.hall(&sb.repo, &["new", "--title", "Session work"]).ok();
        let id = v["item"].as_str().expect("id").to_string();
        let wt = sb.worktree(&id);
        sb.commit(&wt, "lib.txt", "attempts < 3\n", "Cap retries at 3");
        // A question waiting for a person: the inbox has an entry to answer or dismiss.
        let asked = sb
            .hall(&wt, &["ask", "Which base should this target?"])
            .ok();
        let question = asked["question"].as_str().expect("question").to_string();
        let v = sb.hall(&sb.repo, &["new", "--title", "Approved work"]).ok();
        let id2 = v["item"].as_str().expect("id").to_string();
        let other = sb.worktree(&id2);
        let other_sha = sb.commit(&other, "done.txt", "done\n", "Finish the work");
        sb.strike(&id2, &other, &other_sha, 1);
        let branch = sb.git(&wt, &["rev-parse", "--abbrev-ref", "HEAD"]);
        let other_branch = sb.git(&other, &["rev-parse", "--abbrev-ref", "HEAD"]);
        let common = sb.repo.join(".git");
        let mut vars = BTreeMap::new();
        for (k, v) in [
            ("main", sb.repo.clone()),
            ("common", common.clone()),
            ("journal", common.join("hallmark")),
            ("origin", sb.origin.clone()),
            ("wt", wt.clone()),
            ("other", other.clone()),
            ("home", sb.home.clone()),
            ("key", sb.config_dir().join("signing_ed25519")),
        ] {
            vars.insert(k.to_string(), k_path(&v));
        }
        vars.insert("branch".into(), branch);
        vars.insert("other_branch".into(), other_branch);
        vars.insert("other_sha".into(), other_sha);
        vars.insert("item".into(), id.clone());
        vars.insert("question".into(), question);
        // The confined session's settings for each worktree, as `hall claude` writes them.
        for (dir, id) in [(&wt, vars["item"].clone()), (&other, id2.clone())] {
            let printed = sb.hall(dir, &["claude", &id, "--print-settings"]).ok();
            let path = printed["settings"].as_str().expect("settings").to_string();
            vars.insert(format!("settings:{}", dir.display()), path);
        }
        let template = sb.root.with_extension("template");
        std::fs::create_dir_all(&template).expect("mkdir");
        copy_dir(&sb.root, &template);
        World {
            sb,
            wt,
            other,
            vars,
            template,
        }
    }

    /// Puts the world back as it was built: same paths, fresh contents.
    pub fn restore(&self) {
        for entry in std::fs::read_dir(&self.sb.root)
            .expect("read root")
            .flatten()
        {
            let p = entry.path();
            if p.file_name().is_some_and(|n| n == "cache") {
                continue;
            }
            let meta = std::fs::symlink_metadata(&p).expect("stat");
            if meta.is_dir() {
                std::fs::remove_dir_all(&p).expect("rm");
            } else {
                std::fs::remove_file(&p).expect("rm");
            }
        }
        copy_dir(&self.template, &self.sb.root);
        for scratch in ["/tmp/rt-note-commit", "/tmp/rt-nc"] {
            let _ = std::fs::remove_file(scratch);
        }
    }

    /// Replaces `{name}` placeholders (and `{head}`, `{journal_events}`, `{file:PATH}`).
    pub fn fill(&self, text: &str, cwd: &Path) -> String {
        let mut out = text.to_string();
        for (k, v) in &self.vars {
            out = out.replace(&format!("{{{k}}}"), v);
        }
        if out.contains("{head}") {
            let head = self.sb.git(cwd, &["rev-parse", "HEAD"]);
            out = out.replace("{head}", &head);
        }
        if out.contains("{journal_events}") {
            let path = PathBuf::from(&self.vars["journal"])
                .join("items")
                .join(&self.vars["item"])
                .join("events.jsonl");
            let events = std::fs::read_to_string(path).unwrap_or_default();
            out = out.replace("{journal_events}", &events);
        }
        while let Some(start) = out.find("{file:") {
            let Some(end) = out[start..].find('}') else {
                break;
            };
            let path = &out[start + 6..start + end];
            let body = std::fs::read_to_string(path).unwrap_or_default();
            out = format!(
                "{}{}{}",
                &out[..start],
                body.trim(),
                &out[start + end + 1..]
            );
        }
        out
    }

    /// The session's directory for `case`.
    pub fn cwd(&self, case: &Case) -> PathBuf {
        match &case.cwd {
            Some(c) => PathBuf::from(self.fill(c, &self.wt)),
            None => self.wt.clone(),
        }
    }

    /// A command with the world's environment, as a session's tool would run it: the
    /// user's own `~/.gitconfig` is read (it is in the sandbox's home).
    fn command(&self, program: &str, cwd: &Path) -> Command {
        let mut cmd = Command::new(program);
        self.sb.apply_env(&mut cmd);
        cmd.env_remove("GIT_CONFIG_GLOBAL").current_dir(cwd);
        cmd
    }

    /// Asks the real hook about one step of a session that started in `cwd`.
    pub fn ask_hook(&self, step: &Step, cwd: &Path) -> Verdict {
        self.ask_hook_from(step, cwd, cwd)
    }

    /// Asks the real hook about one step, as Claude Code does for a session that started
    /// in `start` and now stands in `cwd`: `CLAUDE_PROJECT_DIR` is `start`, and the hook
    /// runs in `cwd`, or in `start` when `cwd` is gone.
    pub fn ask_hook_from(&self, step: &Step, cwd: &Path, start: &Path) -> Verdict {
        let input = match step {
            Step::Bash(c) => {
                json!({"session_id": "rt", "cwd": cwd, "hook_event_name": "PreToolUse",
                "tool_name": "Bash", "tool_input": {"command": self.fill(c, cwd)}})
            }
            Step::Write { path, content } => {
                json!({"session_id": "rt", "cwd": cwd, "hook_event_name": "PreToolUse",
                "tool_name": "Write", "tool_input": {"file_path": self.fill(path, cwd), "content": self.fill(content, cwd)}})
            }
            Step::Edit { path, append } => {
                json!({"session_id": "rt", "cwd": cwd, "hook_event_name": "PreToolUse",
                "tool_name": "Edit", "tool_input": {"file_path": self.fill(path, cwd), "old_string": "", "new_string": self.fill(append, cwd)}})
            }
            Step::Tool { name, input } => {
                json!({"session_id": "rt", "cwd": cwd, "hook_event_name": "PreToolUse",
                "tool_name": name, "tool_input": self.fill_value(&toml_to_json(input), cwd)})
            }
            Step::Cd(_) => return Verdict::Allowed,
        };
        let mut cmd = self.sb.hall_command(live_dir(cwd, start));
        cmd.args(["hook", "pre-tool-use"])
            .env("CLAUDECODE", "1")
            .env("CLAUDE_PROJECT_DIR", start)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("hook runs");
        {
            use std::io::Write;
            let mut stdin = child.stdin.take().expect("stdin");
            let _ = stdin.write_all(input.to_string().as_bytes());
        }
        let out = child.wait_with_output().expect("hook ends");
        assert_eq!(out.status.code(), Some(0), "the hook always exits 0");
        let text = String::from_utf8_lossy(&out.stdout);
        if text.trim().is_empty() {
            return Verdict::Allowed;
        }
        let v: Value = serde_json::from_str(text.trim()).unwrap_or_else(|e| {
            panic!(
                "the hook printed something that isn't its JSON ({e}):\n{text}\nstderr: {}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
        let o = &v["hookSpecificOutput"];
        if o["permissionDecision"] != "deny" {
            return Verdict::Allowed;
        }
        let reason: Value =
            serde_json::from_str(o["permissionDecisionReason"].as_str().unwrap_or("{}"))
                .unwrap_or(Value::Null);
        Verdict::Denied {
            gate: reason["error"]["check"].as_str().unwrap_or("?").to_string(),
            reason: reason["error"]["message"]
                .as_str()
                .unwrap_or("")
                .to_string(),
        }
    }

    /// Runs one step for real, in a session that started in `cwd`.
    pub fn execute(&self, step: &Step, cwd: &Path) {
        self.execute_from(step, cwd, cwd)
    }

    /// Runs one step for real, as Claude Code would in a session that started in
    /// `start`: a command whose directory is gone runs in `start` instead.
    pub fn execute_from(&self, step: &Step, cwd: &Path, start: &Path) {
        match step {
            Step::Bash(c) => self.run_shell(&self.fill(c, cwd), live_dir(cwd, start)),
            Step::Write { path, content } => {
                let p = PathBuf::from(self.fill(path, cwd));
                let content = self.fill(content, cwd);
                if let Some(parent) = p.parent() {
                    let _ = std::fs::create_dir_all(parent);
                }
                let _ = std::fs::write(&p, content);
            }
            Step::Edit { path, append } => {
                use std::io::Write;
                let p = PathBuf::from(self.fill(path, cwd));
                let append = self.fill(append, cwd);
                if let Ok(mut f) = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(&p)
                {
                    let _ = f.write_all(append.as_bytes());
                }
            }
            Step::Tool { input, .. } => {
                let input = self.fill_value(&toml_to_json(input), cwd);
                let path = input["file_path"].as_str().or(input["path"].as_str());
                if let (Some(path), Some(content)) = (path, input["content"].as_str()) {
                    let p = cwd.join(path);
                    if let Some(parent) = p.parent() {
                        let _ = std::fs::create_dir_all(parent);
                    }
                    let _ = std::fs::write(&p, content);
                } else if let Some(command) = input["command"].as_str() {
                    // A shell-like tool (`PowerShell`, `Monitor`): bash stands in for its
                    // shell, so a case's command must read alike in both.
                    self.run_shell(command, live_dir(cwd, start));
                }
            }
            Step::Cd(_) => {}
        }
    }

    /// Runs shell text in `dir`, bounded in time.
    fn run_shell(&self, script: &str, dir: &Path) {
        // `setsid` gives every step a session of its own with no controlling terminal,
        // so an interactive shell in a case can't take the test's.
        let mut cmd = self.command("setsid", dir);
        cmd.args(["-w", "bash", "-c", script]);
        cmd.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        run_bounded(cmd);
    }

    /// [`World::fill`] on every string inside a JSON value.
    pub fn fill_value(&self, v: &Value, cwd: &Path) -> Value {
        match v {
            Value::String(s) => Value::String(self.fill(s, cwd)),
            Value::Array(a) => Value::Array(a.iter().map(|x| self.fill_value(x, cwd)).collect()),
            Value::Object(o) => Value::Object(
                o.iter()
                    .map(|(k, x)| (k.clone(), self.fill_value(x, cwd)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }

    /// Runs every step of `case` as tool calls of one real Claude Code session (the
    /// pinned CLI against the scripted stub), confined by the settings `hall claude`
    /// writes, in `bypassPermissions` mode and with no Hallmark hooks: the sandbox and
    /// the settings' permission rules on their own.
    fn run_confined(&self, case: &Case, cwd: &Path) -> Vec<(Verdict, bool)> {
        use crate::claude_stub::{ClaudeCommand, StubServer, Turn};
        let settings = self.vars[&format!("settings:{}", cwd.display())].clone();
        let mut turns = Vec::new();
        for step in &case.steps {
            turns.push(match step {
                Step::Bash(c) => Turn::bash(self.fill(c, cwd)),
                Step::Write { path, content } => {
                    Turn::write(self.fill(path, cwd), self.fill(content, cwd))
                }
                Step::Edit { path, append } => {
                    let p = self.fill(path, cwd);
                    let old = std::fs::read_to_string(&p).unwrap_or_default();
                    Turn::write(p, format!("{old}{}", self.fill(append, cwd)))
                }
                // Claude Code's Bash tool keeps the directory a `cd` leaves it in.
                Step::Cd(dir) => Turn::bash(format!("cd {}", self.fill(dir, cwd))),
                // A tool the stub's session doesn't have: the sandbox is judged on what
                // the tool would write, through the Write tool.
                Step::Tool { input, .. } => {
                    let input = self.fill_value(&toml_to_json(input), cwd);
                    let path = input["file_path"].as_str().or(input["path"].as_str());
                    match (path, input["content"].as_str(), input["command"].as_str()) {
                        (Some(p), Some(c), _) => {
                            Turn::write(cwd.join(p).display().to_string(), c.to_string())
                        }
                        (_, _, Some(command)) => Turn::bash(command),
                        _ => Turn::bash("true"),
                    }
                }
            });
        }
        turns.push(Turn::text("Done."));
        let stub = StubServer::start(turns).expect("stub");
        let home = self.sb.root.join("claude-bare-home");
        let mut cmd = ClaudeCommand::new(&stub, &home, cwd, "work")
            .arg("--settings")
            .arg(settings)
            .timeout(Duration::from_secs(120));
        for (k, v) in self.session_env() {
            cmd = cmd.env(k, v);
        }
        let run = cmd.run().expect("claude runs");
        assert!(
            run.init().is_some_and(|i| i["sandbox_enabled"] == true),
            "{}: the session ran unsandboxed\n{}",
            case.id,
            run.describe()
        );
        case.steps
            .iter()
            .map(|_| (Verdict::Allowed, true))
            .collect()
    }

    /// The environment a session's tools see here (the sandbox's own, for git and hall).
    fn session_env(&self) -> Vec<(String, String)> {
        let mut cmd = Command::new("env");
        self.sb.apply_env(&mut cmd);
        cmd.env_remove("GIT_CONFIG_GLOBAL");
        cmd.get_envs()
            .filter_map(|(k, v)| Some((k.to_str()?.to_string(), v?.to_str()?.to_string())))
            .filter(|(k, _)| k != "HOME")
            .collect()
    }

    /// Runs `case` once, fresh, under `gating`.
    pub fn run(&self, case: &Case, gating: &Gating) -> Outcome {
        self.restore();
        let start = self.cwd(case);
        let mut cwd = start.clone();
        let before = self.snapshot(case);
        let mut steps = Vec::new();
        if matches!(gating, Gating::Sandbox) {
            steps = self.run_confined(case, &cwd);
        }
        for step in case
            .steps
            .iter()
            .filter(|_| !matches!(gating, Gating::Sandbox))
        {
            if let Step::Cd(dir) = step {
                cwd = PathBuf::from(self.fill(dir, &cwd));
                steps.push((Verdict::Allowed, true));
                continue;
            }
            let verdict = match gating {
                Gating::None | Gating::Sandbox => Verdict::Allowed,
                _ => self.ask_hook_from(step, &cwd, &start),
            };
            let honoured = match (&verdict, gating) {
                (Verdict::Allowed, _) => false,
                (Verdict::Denied { .. }, Gating::Hook) => true,
                (Verdict::Denied { gate, reason }, Gating::Layers(set)) => {
                    set.contains(layer_of(gate, reason))
                }
                _ => false,
            };
            if !honoured {
                self.execute_from(step, &cwd, &start);
            }
            steps.push((verdict, !honoured));
        }
        let after = self.snapshot(case);
        let mut changed = Vec::new();
        let mut pushed = Vec::new();
        for (k, v) in &after.origin {
            if before.origin.get(k) != Some(v) {
                changed.push(format!("origin {k}"));
                pushed.push((k.clone(), v.clone()));
            }
        }
        for k in before.origin.keys() {
            if !after.origin.contains_key(k) {
                changed.push(format!("origin {k} deleted"));
            }
        }
        let mut noted = Vec::new();
        for (k, v) in &after.notes {
            if before.notes.get(k) != Some(v) {
                changed.push(format!("notes {k}"));
                if k.starts_with('(') {
                    let old: BTreeSet<&str> = before
                        .notes
                        .get(k)
                        .map(|s| s.lines().collect())
                        .unwrap_or_default();
                    for line in v.lines().filter(|l| !old.contains(l)) {
                        if let Some((_, commit)) = line.split_once(' ') {
                            noted.push(commit.to_string());
                        }
                    }
                }
            }
        }
        for k in before.notes.keys() {
            if !after.notes.contains_key(k) {
                changed.push(format!("notes {k} deleted"));
            }
        }
        for (k, v) in &after.base {
            if before.base.get(k) != Some(v) {
                changed.push(format!("base {k}"));
            }
        }
        for (label, b, a) in [
            ("file", &before.files, &after.files),
            ("person", &before.person, &after.person),
        ] {
            for k in a.keys().chain(b.keys()).collect::<BTreeSet<_>>() {
                if a.get(k) != b.get(k) {
                    changed.push(format!("{label} {k}"));
                }
            }
        }
        let effect = match case.effect.as_str() {
            "push" => changed.iter().any(|c| c.starts_with("origin")),
            "note" => changed.iter().any(|c| c.starts_with("notes")),
            "ref" => changed.iter().any(|c| c.starts_with("base")),
            "file" => changed.iter().any(|c| c.starts_with("file ")),
            "person" => changed.iter().any(|c| c.starts_with("person ")),
            other => panic!("{}: unknown effect {other}", case.id),
        };
        Outcome {
            steps,
            effect,
            changed,
            pushed,
            noted,
        }
    }
}

/// Where Claude Code runs a hook or a command for a session in `cwd`: there, or where
/// the session started when `cwd` is gone.
fn live_dir<'a>(cwd: &'a Path, start: &'a Path) -> &'a Path {
    if cwd.is_dir() { cwd } else { start }
}

fn k_path(p: &Path) -> String {
    p.display().to_string()
}

fn toml_to_json(t: &toml::Table) -> Value {
    serde_json::to_value(t).expect("a TOML table is JSON")
}

/// Runs a command with the step timeout, killing it (and its group) when it overruns.
fn run_bounded(mut cmd: Command) {
    let Ok(mut child) = cmd.spawn() else {
        return;
    };
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => return,
            Ok(None) if start.elapsed() > STEP_TIMEOUT => {
                // `setsid` made the step's process group leader the child itself.
                let _ = Command::new("kill")
                    .args(["-9", "--", &format!("-{}", child.id())])
                    .status();
                let _ = child.kill();
                let _ = child.wait();
                return;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(_) => return,
        }
    }
}

/// Whether `program` is on PATH.
pub fn installed(program: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {program} >/dev/null 2>&1")])
        .status()
        .is_ok_and(|s| s.success())
}
