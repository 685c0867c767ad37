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
    /// `push`, `note` or `ref`.
    pub effect: String,
    /// The session's directory (a placeholder), when not the item's worktree.
    #[serde(default)]
    pub cwd: Option<String>,
    /// Programs the case needs (the suite fails when one is missing).
    #[serde(default)]
    pub needs: Vec<String>,
    pub steps: Vec<Step>,
}

/// One tool call.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Step {
    Bash(String),
    Write { path: String, content: String },
    Edit { path: String, append: String },
}

/// Loads the corpus from the fixtures.
pub fn corpus() -> Corpus {
    let text = include_str!("../fixtures/redteam/cases.toml");
    toml::from_str(text).expect("cases.toml parses")
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
    let text = include_str!("../fixtures/redteam/allow.toml");
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

/// What the attacks aim at, read from the files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    pub origin: BTreeMap<String, String>,
    pub notes: BTreeMap<String, String>,
    pub base: BTreeMap<String, String>,
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
        // The signers the base trusts, committed and pushed, as a person would.
        sb.hall(&sb.repo, &["init", "--signers"]).ok();
        sb.git(&sb.repo, &["add", "-A"]);
        sb.git(&sb.repo, &["commit", "-q", "-m", "Trust the signing key"]);
        sb.git(&sb.repo, &["push", "-q", "origin", "main"]);
        let v = sb.hall(&sb.repo, &["new", "--title", "Session work"]).ok();
        let id = v["item"].as_str().expect("id").to_string();
        let wt = sb.worktree(&id);
        sb.commit(&wt, "lib.txt", "attempts < 3\n", "Cap retries at 3");
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

    /// Reads what the attacks aim at.
    pub fn snapshot(&self) -> Snapshot {
        let common = PathBuf::from(&self.vars["common"]);
        let mut notes = refs_under(&common, &["refs/notes", "refs/replace"]);
        let listed = self
            .command("git", &self.sb.repo)
            .args(["notes", "--ref=hallmark", "list"])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).to_string())
            .unwrap_or_default();
        notes.insert("(git notes --ref=hallmark list)".into(), listed);
        let mut base = refs_under(&common, &["refs/heads/main", "refs/remotes/origin/main"]);
        base.insert(
            "(main checkout HEAD)".into(),
            std::fs::read_to_string(common.join("HEAD")).unwrap_or_default(),
        );
        let head = self
            .command("git", &self.sb.repo)
            .args(["rev-parse", "HEAD"])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).to_string())
            .unwrap_or_default();
        base.insert("(main checkout HEAD commit)".into(), head);
        Snapshot {
            origin: refs_under(&self.sb.origin, &["refs"]),
            notes,
            base,
        }
    }

    /// Asks the real hook about one step.
    pub fn ask_hook(&self, step: &Step, cwd: &Path) -> Verdict {
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
        };
        let mut cmd = self.sb.hall_command(cwd);
        cmd.args(["hook", "pre-tool-use"])
            .env("CLAUDECODE", "1")
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

    /// Runs one step for real.
    pub fn execute(&self, step: &Step, cwd: &Path) {
        match step {
            Step::Bash(c) => {
                let script = self.fill(c, cwd);
                // `setsid` gives every step a session of its own with no controlling
                // terminal, so an interactive shell in a case can't take the test's.
                let mut cmd = self.command("setsid", cwd);
                cmd.args(["-w", "bash", "-c", &script]);
                cmd.stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(Stdio::null());
                run_bounded(cmd);
            }
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
        let cwd = self.cwd(case);
        let before = self.snapshot();
        let mut steps = Vec::new();
        if matches!(gating, Gating::Sandbox) {
            steps = self.run_confined(case, &cwd);
        }
        for step in case
            .steps
            .iter()
            .filter(|_| !matches!(gating, Gating::Sandbox))
        {
            let verdict = match gating {
                Gating::None | Gating::Sandbox => Verdict::Allowed,
                _ => self.ask_hook(step, &cwd),
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
                self.execute(step, &cwd);
            }
            steps.push((verdict, !honoured));
        }
        let after = self.snapshot();
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
        let effect = match case.effect.as_str() {
            "push" => changed.iter().any(|c| c.starts_with("origin")),
            "note" => changed.iter().any(|c| c.starts_with("notes")),
            "ref" => changed.iter().any(|c| c.starts_with("base")),
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

    /// Whether `hall verify` accepts `sha` in a fresh clone of origin with no journal,
    /// against the signers the base branch lists (the CI check).
    pub fn verified_in_clone(&self, sha: &str) -> bool {
        let clone = self.sb.root.join("ci-clone");
        let _ = std::fs::remove_dir_all(&clone);
        let ok = self
            .command("git", &self.sb.root)
            .args(["clone", "-q"])
            .arg(&self.sb.origin)
            .arg(&clone)
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            return false;
        }
        let quiet = |args: &[&str]| {
            let _ = self
                .command("git", &clone)
                .args(args)
                .stderr(Stdio::null())
                .status();
        };
        let notes = "+refs/notes/hallmark:refs/notes/hallmark";
        let here = self.sb.repo.display().to_string();
        quiet(&["fetch", "-q", "origin", notes]);
        // The commit may only exist in this repository (a note write): fetch it, and the
        // notes written here.
        quiet(&["fetch", "-q", &here, sha]);
        quiet(&["fetch", "-q", &here, notes]);
        let mut cmd = Command::new(crate::sandbox::hall_bin());
        self.sb.apply_env(&mut cmd);
        let out = cmd
            .args(["verify", sha, "--base", "main"])
            .current_dir(&clone)
            .env("HALL_CONFIG_DIR", self.sb.root.join("ci-no-config"))
            .output()
            .expect("hall verify runs");
        out.status.success()
    }
}

fn k_path(p: &Path) -> String {
    p.display().to_string()
}

/// Every ref under `prefixes` in a git directory: loose files and packed-refs lines.
fn refs_under(git_dir: &Path, prefixes: &[&str]) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    fn walk(dir: &Path, rel: &str, out: &mut BTreeMap<String, String>) {
        let Ok(meta) = std::fs::symlink_metadata(dir) else {
            return;
        };
        if meta.is_file() || meta.file_type().is_symlink() {
            let v = std::fs::read_to_string(dir).unwrap_or_else(|_| "(unreadable)".into());
            out.insert(rel.to_string(), v.trim().to_string());
            return;
        }
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            walk(&e.path(), &format!("{rel}/{name}"), out);
        }
    }
    for p in prefixes {
        walk(&git_dir.join(p), p, &mut out);
    }
    let packed = std::fs::read_to_string(git_dir.join("packed-refs")).unwrap_or_default();
    for line in packed.lines() {
        if let Some((sha, name)) = line.split_once(' ')
            && prefixes.iter().any(|p| name.starts_with(p))
        {
            out.insert(format!("packed:{name}"), sha.to_string());
        }
    }
    out
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
