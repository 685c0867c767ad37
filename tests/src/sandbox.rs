//! A sealed environment for driving the real `hall` binary: a temp HOME, user dirs and
//! git config, a fixed clock (`HALL_NOW`), fixed git identities and dates (so commit
//! SHAs are the same on every run), a bare `origin`, and test doubles first on `PATH`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use hallmark_core::item::{Event, ItemId};
use hallmark_core::journal::Journal;
use serde_json::Value;

mod github;
mod processes;

/// The seven lenses' ids, in the core's order: what every scripted verdict lists.
pub fn lenses() -> [&'static str; 7] {
    hallmark_core::item::Lens::ALL.map(hallmark_core::item::Lens::id)
}

/// Who signs hallmarks in every sandbox (`[signing] principal` in its user config).
pub const PRINCIPAL: &str = "ada@example.com";

/// What an approval says, for [`Sandbox::signed_note`].
#[derive(Clone, Debug)]
pub struct Approval<'a> {
    pub round: u32,
    /// `assayer`, or `you` for a person's verdict.
    pub actor: &'a str,
    pub model: Option<&'a str>,
    /// Findings still open when it was approved.
    pub open: Vec<&'a str>,
    /// For an approval carried across a rebase: the commit approved.
    pub carried_from: Option<&'a str>,
    /// The commit the change was measured from: a version 3 note (none: version 2).
    pub base: Option<&'a str>,
}

impl Default for Approval<'_> {
    fn default() -> Self {
        Approval {
            round: 1,
            actor: "assayer",
            model: None,
            open: Vec::new(),
            carried_from: None,
            base: None,
        }
    }
}

/// The text a hallmark's signature covers, rebuilt from the note's JSON as
/// docs/guide.md documents it (one `name value` line each, an empty value for a
/// missing field). Written here from the documentation rather than taken from `hall`, so
/// that a drift between the two fails the tests.
pub fn statement(note: &Value) -> String {
    let text = |k: &str| note[k].as_str().unwrap_or("").to_string();
    let open: Vec<&str> = note["open_findings"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    // Version 3 names the base after the tree.
    let base = if note["v"].as_u64().unwrap_or(0) >= 3 {
        format!("base {}\n", text("base"))
    } else {
        String::new()
    };
    format!(
        "hallmark v{}\nitem {}\ncommit {}\ntree {}\n{base}round {}\nactor {}\nmodel {}\nopen {}\napproved {}\nsigner {}\n",
        note["v"],
        text("item"),
        text("sha"),
        text("tree"),
        note["round"],
        text("actor"),
        text("model"),
        open.join(","),
        text("approved_sha"),
        text("signer"),
    )
}

/// The fixed time every `hall` run sees.
pub const NOW: &str = "2026-11-02T09:00:00Z";
const GIT_DATE: &str = "2026-11-02T09:00:00+00:00";

/// Whether building `hall` shows cargo's progress (the demo: a first build takes minutes,
/// and a newcomer should see it move). Tests build it quietly.
static LOUD_BUILD: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Makes [`hall_bin`] and [`test_double`] say what they build and show cargo's progress.
pub fn build_loudly() {
    LOUD_BUILD.store(true, std::sync::atomic::Ordering::Relaxed);
}

fn cargo_build(package: &str, bin: &str, release: bool) {
    let loud = LOUD_BUILD.load(std::sync::atomic::Ordering::Relaxed);
    let mut build = Command::new(env!("CARGO"));
    build.arg("build");
    if loud {
        eprintln!(
            "(building `{bin}` with cargo; the first build on a new machine takes several minutes)"
        );
    } else {
        build.arg("--quiet");
    }
    build
        .args(["-p", package, "--bin", bin])
        .current_dir(env!("CARGO_MANIFEST_DIR"));
    if release {
        build.arg("--release");
    }
    let status = build.status().expect("cargo runs");
    assert!(status.success(), "building {bin} failed");
}

/// The `hall` binary, built once per test process.
pub fn hall_bin() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        if let Some(p) = std::env::var_os("HALL_BIN") {
            return PathBuf::from(p);
        }
        // Build it: the tests live in another package, so cargo does not build `hall`
        // for them by itself, and a stale binary would test old code.
        let exe = std::env::current_exe().expect("test exe path");
        // target/<profile>/deps/<test> or target/<profile>/<bin> → target/<profile>/hall
        let mut dir = exe.parent().expect("exe dir").to_path_buf();
        if dir.file_name().is_some_and(|n| n == "deps") {
            dir.pop();
        }
        cargo_build(
            "hallmark",
            "hall",
            dir.file_name().is_some_and(|n| n == "release"),
        );
        let bin = dir.join(format!("hall{}", std::env::consts::EXE_SUFFIX));
        assert!(bin.is_file(), "no hall binary at {}", bin.display());
        bin
    })
}

/// One of this package's test doubles (`fake-claude`, `fake-tool`…), built for callers
/// that cargo didn't build it for (the demo).
pub fn test_double(name: &str) -> PathBuf {
    let dir = hall_bin().parent().expect("profile dir").to_path_buf();
    cargo_build(
        "hallmark-tests",
        name,
        dir.file_name().is_some_and(|n| n == "release"),
    );
    dir.join(format!("{name}{}", std::env::consts::EXE_SUFFIX))
}

/// A component built by `host/rooms/build.rs` (a built-in room or a fixture room), e.g.
/// `hall_fixture_panicky.wasm`: the newest copy under this profile's build directories.
pub fn built_wasm(file: &str) -> PathBuf {
    let profile_dir = hall_bin().parent().expect("profile dir").to_path_buf();
    let mut found: Vec<(std::time::SystemTime, PathBuf)> =
        std::fs::read_dir(profile_dir.join("build"))
            .expect("build dir")
            .flatten()
            .map(|e| {
                e.path()
                    .join("out/rooms-target/wasm32-wasip2/release")
                    .join(file)
            })
            .filter(|p| p.is_file())
            .filter_map(|p| Some((p.metadata().ok()?.modified().ok()?, p)))
            .collect();
    found.sort();
    found
        .pop()
        .map(|(_, p)| p)
        .unwrap_or_else(|| panic!("{file} was not built by host/rooms/build.rs"))
}

/// One run of a command.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    fn from(out: Output) -> Run {
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).to_string(),
            stderr: String::from_utf8_lossy(&out.stderr).to_string(),
        }
    }

    /// stdout as JSON (every `hall` reply off a TTY is one JSON document).
    pub fn json(&self) -> Value {
        serde_json::from_str(self.stdout.trim())
            .unwrap_or_else(|e| panic!("not JSON ({e}): {self:?}"))
    }

    /// Asserts exit 0 and returns the JSON reply.
    pub fn ok(&self) -> Value {
        assert_eq!(self.code, 0, "expected success: {self:?}");
        self.json()
    }

    /// Asserts an error reply with `code` and `exit`, and returns it.
    pub fn err(&self, code: &str, exit: i32) -> Value {
        let v = self.json();
        assert_eq!(v["error"]["code"], code, "{self:?}");
        assert_eq!(self.code, exit, "{self:?}");
        assert!(
            v["error"]["next"].as_array().is_some_and(|n| !n.is_empty()),
            "every error names its next commands: {self:?}"
        );
        assert!(
            v["error"]["message"]
                .as_str()
                .is_some_and(|m| !m.is_empty())
        );
        v
    }
}

/// A throwaway world: HOME, a repository with a bare `origin`, and fake tools.
///
/// Dropping it ends what it started: a daemon `hall daemon start` left running (named by
/// the sandbox's daemon state file) is stopped, and any other process still running with
/// the sandbox's data directory in its environment is killed, which fails the test: a
/// process that outlives its sandbox is a bug in the test or in `hall`.
pub struct Sandbox {
    _root: tempfile::TempDir,
    /// What [`Sandbox::spawn`] started, ended first when the sandbox is dropped.
    children: std::sync::Mutex<Vec<std::process::Child>>,
    /// The GitHub simulator, once [`Sandbox::github`] started it.
    github: OnceLock<crate::github::GitHub>,
    pub root: PathBuf,
    pub home: PathBuf,
    pub repo: PathBuf,
    pub origin: PathBuf,
    pub bin: PathBuf,
    pub now: String,
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        let survivors = self.end_processes();
        if !survivors.is_empty() && !std::thread::panicking() {
            panic!(
                "processes outlived their sandbox {} and were killed: {}",
                self.root.display(),
                survivors.join("; ")
            );
        }
    }
}

impl Default for Sandbox {
    fn default() -> Self {
        Sandbox::new()
    }
}

impl Sandbox {
    /// A repository `repo` on branch `main` with one commit, pushed to a bare `origin`.
    pub fn new() -> Sandbox {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().canonicalize().expect("canonical tempdir");
        let sb = Sandbox {
            home: root.join("home"),
            repo: root.join("repo"),
            origin: root.join("origin.git"),
            bin: root.join("bin"),
            now: NOW.to_string(),
            root,
            _root: dir,
            children: std::sync::Mutex::new(Vec::new()),
            github: OnceLock::new(),
        };
        for d in [&sb.home, &sb.bin, &sb.config_dir()] {
            std::fs::create_dir_all(d).expect("mkdir");
        }
        // Hallmarks are signed as Ada: the hall binary and the test's own signing
        // (`strike`) read the same user config.
        std::fs::write(
            sb.config_dir().join("config.toml"),
            format!("[signing]\nprincipal = \"{PRINCIPAL}\"\n"),
        )
        .expect("user config");
        sb.git(
            &sb.root,
            &["init", "-q", "--bare", "-b", "main", "origin.git"],
        );
        sb.git(&sb.root, &["init", "-q", "-b", "main", "repo"]);
        std::fs::write(sb.repo.join("README.md"), "# demo\n").expect("write");
        sb.git(&sb.repo, &["add", "README.md"]);
        sb.git(&sb.repo, &["commit", "-q", "-m", "initial"]);
        sb.git(
            &sb.repo,
            &["remote", "add", "origin", sb.origin.to_str().expect("utf8")],
        );
        sb.git(&sb.repo, &["push", "-q", "-u", "origin", "main"]);
        sb.git(&sb.repo, &["remote", "set-head", "origin", "main"]);
        sb
    }

    /// A sandbox after `hall init`, with the setup committed on `main`.
    pub fn initialized() -> Sandbox {
        let sb = Sandbox::new();
        sb.hall(&sb.repo, &["init"]).ok();
        sb.git(&sb.repo, &["add", "-A"]);
        sb.git(&sb.repo, &["commit", "-q", "-m", "Set up Hallmark"]);
        sb
    }

    fn env(&self, cmd: &mut Command) {
        let path = format!(
            "{}:{}",
            self.bin.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        cmd.env_clear()
            .env("PATH", path)
            .env("HOME", &self.home)
            .env("LANG", "C.UTF-8")
            .env("HALL_NOW", &self.now)
            .env("HALL_DATA_DIR", self.root.join("data"))
            .env("HALL_CONFIG_DIR", self.config_dir())
            .env("HALL_CACHE_DIR", self.root.join("cache"))
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "Ada")
            .env("GIT_AUTHOR_EMAIL", "ada@example.com")
            .env("GIT_COMMITTER_NAME", "Ada")
            .env("GIT_COMMITTER_EMAIL", "ada@example.com")
            .env("GIT_AUTHOR_DATE", GIT_DATE)
            .env("GIT_COMMITTER_DATE", GIT_DATE)
            .env("FAKE_GH_STATE", self.root.join("gh"));
        if let Some(github) = self.github.get() {
            cmd.envs(github.env());
        }
    }

    /// Gives `cmd` this sandbox's sealed environment, for tests that run other programs
    /// the way `hall` runs here.
    pub fn apply_env(&self, cmd: &mut Command) {
        self.env(cmd);
    }

    /// Runs `hall args…` in `dir`.
    pub fn hall(&self, dir: &Path, args: &[&str]) -> Run {
        self.hall_env(dir, args, &[])
    }

    /// Runs `hall` with extra environment variables.
    pub fn hall_env(&self, dir: &Path, args: &[&str], vars: &[(&str, &str)]) -> Run {
        let mut cmd = Command::new(hall_bin());
        self.env(&mut cmd);
        cmd.args(args).current_dir(dir);
        for (k, v) in vars {
            cmd.env(k, v);
        }
        Run::from(cmd.output().expect("hall runs"))
    }

    /// A `Command` for `hall` in this sandbox, for tests that spawn it themselves.
    pub fn hall_command(&self, dir: &Path) -> Command {
        let mut cmd = Command::new(hall_bin());
        self.env(&mut cmd);
        cmd.current_dir(dir);
        cmd
    }

    /// Puts the review loop's stand-in `claude` (a scripted model that prints real
    /// stream-json, given as a built binary) first on `PATH`, and `hall` itself, for the
    /// fixer's `hall fixed`. GitHub is the caller's: [`Sandbox::github`], or a stand-in
    /// `gh` through [`Sandbox::fake`].
    pub fn stand_ins(&self, claude: &Path) {
        self.fake("claude", claude);
        #[cfg(unix)]
        std::os::unix::fs::symlink(hall_bin(), self.bin.join("hall")).expect("link hall");
    }

    /// Commits the loop's setup on `main` and pushes it: `.hallmark.toml` as `config`
    /// and `check.sh`, the check it names, as `check`.
    pub fn configure(&self, config: &str, check: &str, message: &str) {
        std::fs::write(self.repo.join(".hallmark.toml"), config).expect("config");
        std::fs::write(self.repo.join("check.sh"), check).expect("check");
        self.git(&self.repo, &["add", "-A"]);
        self.git(&self.repo, &["commit", "-q", "-m", message]);
        self.git(&self.repo, &["push", "-q", "origin", "main"]);
    }

    /// Writes the scripted model's answers (`{"review": […], "fix": […]}`) for the
    /// stand-in `claude`; returns the file to pass as `FAKE_CLAUDE_SCRIPT`.
    pub fn script_model(&self, script: &Value) -> PathBuf {
        let path = self.root.join("script.json");
        std::fs::write(&path, script.to_string()).expect("script");
        path
    }

    /// The variables that point the stand-in `claude` at `script` and at the log of its
    /// calls.
    pub fn model_env(&self, script: &Path) -> Vec<(String, String)> {
        vec![
            ("FAKE_CLAUDE_SCRIPT".into(), script.display().to_string()),
            (
                "FAKE_CLAUDE_LOG".into(),
                self.root.join("claude").display().to_string(),
            ),
        ]
    }

    /// `hall daemon run --until-idle` in the main checkout with the scripted model, plus
    /// `extra` variables (a later `HALL_NOW`…).
    pub fn run_loop(&self, script: &Path, extra: &[(&str, &str)]) -> Run {
        let model = self.model_env(script);
        let mut vars: Vec<(&str, &str)> = model
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        vars.extend_from_slice(extra);
        self.hall_env(
            &self.repo,
            &["daemon", "run", "--until-idle", "--tick", "0.05"],
            &vars,
        )
    }

    /// Runs the shell line `line` on a terminal (util-linux `script`), with this sandbox's
    /// environment, in `dir`; `hall` in the line is the binary under test. The terminal's
    /// output with Unix line ends, or `None` where `script` is not installed.
    pub fn on_a_terminal(&self, dir: &Path, line: &str) -> Option<String> {
        Command::new("script").arg("--version").output().ok()?;
        let hall = hall_bin();
        let line = line.replace("hall ", &format!("{} ", hall.display()));
        let mut script = Command::new("script");
        script.args(["-qec", &line, "/dev/null"]).current_dir(dir);
        self.env(&mut script);
        let out = script.output().expect("script runs");
        Some(String::from_utf8_lossy(&out.stdout).replace("\r\n", "\n"))
    }

    /// Runs git and returns its trimmed stdout, panicking on failure.
    /// Git in `dir` with the sandbox's environment, whatever its exit: whether it
    /// succeeded, and its stdout.
    pub fn git_may_fail(&self, dir: &Path, args: &[&str]) -> (bool, String) {
        let mut cmd = Command::new("git");
        self.env(&mut cmd);
        let out = cmd.args(args).current_dir(dir).output().expect("git runs");
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    }

    pub fn git(&self, dir: &Path, args: &[&str]) -> String {
        let mut cmd = Command::new("git");
        self.env(&mut cmd);
        let out = cmd.args(args).current_dir(dir).output().expect("git runs");
        assert!(
            out.status.success(),
            "git {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// Runs `script` with bash in `dir`, in this sandbox's environment plus `vars`: for
    /// tests that act as a shell user would (a forger with Bash, a CI step).
    pub fn sh(&self, dir: &Path, script: &str, vars: &[(&str, &str)]) -> Run {
        let mut cmd = Command::new("bash");
        self.env(&mut cmd);
        cmd.arg("-c").arg(script).current_dir(dir);
        for (k, v) in vars {
            cmd.env(k, v);
        }
        Run::from(cmd.output().expect("bash runs"))
    }

    /// Writes `file` in `dir`, commits it, and returns the new HEAD.
    pub fn commit(&self, dir: &Path, file: &str, content: &str, message: &str) -> String {
        let path = dir.join(file);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("mkdir");
        }
        std::fs::write(&path, content).expect("write");
        self.git(dir, &["add", file]);
        self.git(dir, &["commit", "-q", "-m", message]);
        self.git(dir, &["rev-parse", "HEAD"])
    }

    /// The journal directory.
    pub fn journal(&self) -> Journal {
        Journal::new(self.repo.join(".git").join("hallmark"))
    }

    /// Appends an event to an item's journal as another writer (the assayer, the
    /// Delivery office) would, through the journal library: for states the Stage 1
    /// commands can't reach by themselves.
    pub fn record(&self, item: &str, actor: &str, event: Value) {
        let id: ItemId = item.parse().expect("item id");
        let mut line = event;
        line["v"] = 1.into();
        line["t"] = self.now.clone().into();
        line["actor"] = actor.into();
        line["item"] = id.to_string().into();
        let e: Event = serde_json::from_value(line).expect("a valid event");
        self.journal().append_item(id, &[e]).expect("append");
    }

    /// Records the assayer's approval of `sha` (checks passed, an approving verdict,
    /// the hallmark) in the item's journal: the Assay Office's events, for tests that
    /// need a hallmarked item. The `hallmarked` line carries no signature (like a line
    /// from before signing, or a forged one); [`Sandbox::strike`] makes a real one.
    pub fn approve(&self, item: &str, sha: &str, round: u32) {
        self.record(
            item,
            "assayer",
            serde_json::json!({"event": "checks_passed", "sha": sha}),
        );
        self.record(
            item,
            "assayer",
            serde_json::json!({"event": "verdict", "sha": sha, "round": round, "approved": true}),
        );
        self.record(
            item,
            "assayer",
            serde_json::json!({"event": "hallmarked", "sha": sha, "round": round}),
        );
    }

    /// The user config directory every `hall` here runs with (`HALL_CONFIG_DIR`), where
    /// the signing key lives.
    pub fn config_dir(&self) -> PathBuf {
        self.root.join("config")
    }

    /// The loop's checkout of item `id`, under this sandbox's cache directory.
    pub fn loop_checkout(&self, id: &str) -> PathBuf {
        let checkouts = self.root.join("cache/checkouts");
        let repo_dir = std::fs::read_dir(&checkouts)
            .expect("the loop's checkouts")
            .flatten()
            .find(|e| e.path().is_dir())
            .expect("a repository's checkouts")
            .path();
        repo_dir.join(id)
    }

    /// The private key `hall` signs with in this sandbox (`signing_ed25519` in its config
    /// directory), made with `ssh-keygen` when `hall` hasn't made it yet: the test signs
    /// with the same tools a person could, never with hall's own code.
    pub fn signing_key(&self) -> PathBuf {
        let key = self.config_dir().join("signing_ed25519");
        if !key.exists() {
            let out = Command::new("ssh-keygen")
                .args(["-q", "-t", "ed25519", "-N", "", "-C", "hallmark", "-f"])
                .arg(&key)
                .output()
                .expect("ssh-keygen runs");
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        key
    }

    /// The signing key's public half, as an OpenSSH line without its comment.
    pub fn public_key(&self) -> String {
        let out = Command::new("ssh-keygen")
            .arg("-y")
            .arg("-f")
            .arg(self.signing_key())
            .output()
            .expect("ssh-keygen runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let line = String::from_utf8_lossy(&out.stdout).trim().to_string();
        line.split_whitespace()
            .take(2)
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// The signing key's fingerprint, `SHA256:…`, as `ssh-keygen -l` prints it.
    pub fn fingerprint(&self) -> String {
        let key = self.signing_key();
        let out = Command::new("ssh-keygen")
            .args(["-l", "-E", "sha256", "-f"])
            .arg(&key)
            .output()
            .expect("ssh-keygen runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .nth(1)
            .expect("a fingerprint")
            .to_string()
    }

    /// The `allowed_signers` line that trusts this sandbox's signer.
    pub fn signers_line(&self) -> String {
        format!("{PRINCIPAL} namespaces=\"hallmark\" {}", self.public_key())
    }

    /// Signs `statement` with this sandbox's key in Hallmark's namespace, the way
    /// `ssh-keygen -Y sign` does; returns the armored signature.
    pub fn sign(&self, statement: &str) -> String {
        use std::io::Write;
        let mut child = Command::new("ssh-keygen")
            .args(["-Y", "sign", "-n", "hallmark", "-q", "-f"])
            .arg(self.signing_key())
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("ssh-keygen runs");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(statement.as_bytes())
            .expect("write");
        let out = child.wait_with_output().expect("ssh-keygen runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// A signed hallmark for `sha` of item `item` (tree `tree`), as the assayer makes
    /// one: the note's JSON, with its [`statement`] signed.
    pub fn signed_note(&self, item: &str, sha: &str, tree: &str, approval: &Approval) -> Value {
        let item = item.parse::<ItemId>().expect("item id").to_string();
        let mut note = serde_json::json!({
            "v": 2, "item": item, "sha": sha, "tree": tree, "round": approval.round,
            "open_findings": approval.open, "actor": approval.actor,
            "signer": PRINCIPAL, "key": self.fingerprint(),
        });
        if let Some(m) = approval.model {
            note["model"] = m.into();
        }
        if let Some(from) = approval.carried_from {
            note["approved_sha"] = from.into();
        }
        if let Some(base) = approval.base {
            note["v"] = 3.into();
            note["base"] = base.into();
        }
        note["sig"] = self.sign(&statement(&note)).into();
        note
    }

    /// Strikes a real hallmark the way the assayer does: the checks pass, the verdict
    /// approves, the note the journal describes is signed with this sandbox's key, the
    /// journal records `hallmarked` with that signature, and the note goes on `sha`
    /// (written from `dir` with `HALL_ACTOR=assayer`). Returns the note.
    pub fn strike(&self, item: &str, dir: &Path, sha: &str, round: u32) -> Value {
        self.strike_on(item, dir, sha, round, "main")
    }

    /// [`Sandbox::strike`] for an item whose base is `base` (a stacked item is measured
    /// from where it left that branch, as the reviewer's diff is).
    pub fn strike_on(&self, item: &str, dir: &Path, sha: &str, round: u32, base: &str) -> Value {
        self.record(
            item,
            "assayer",
            serde_json::json!({"event": "checks_passed", "sha": sha}),
        );
        self.record(
            item,
            "assayer",
            serde_json::json!({"event": "verdict", "sha": sha, "round": round, "approved": true, "model": "opus"}),
        );
        let tree = self.git(dir, &["rev-parse", &format!("{sha}^{{tree}}")]);
        // Measured from where the branch left its base, as the reviewer's diff is.
        let base = self.git(dir, &["merge-base", base, sha]);
        let approval = Approval {
            round,
            model: Some("opus"),
            base: Some(&base),
            ..Approval::default()
        };
        let note = self.signed_note(item, sha, &tree, &approval);
        let seal = serde_json::json!({"tree": tree, "signer": note["signer"], "key": note["key"], "sig": note["sig"], "base": note["base"]});
        self.record(
            item,
            "assayer",
            serde_json::json!({"event": "hallmarked", "sha": sha, "round": round, "seal": seal}),
        );
        self.note_on(dir, sha, &note);
        note
    }

    /// Writes `body` as the hallmark note on HEAD of `dir`, as a process with
    /// `HALL_ACTOR=assayer` would: for forged, copied or unsigned notes.
    pub fn note(&self, dir: &Path, body: &Value) {
        self.note_on(dir, "HEAD", body);
    }

    /// Writes `body` as the hallmark note on `rev`, from `dir`.
    pub fn note_on(&self, dir: &Path, rev: &str, body: &Value) {
        let mut cmd = Command::new("git");
        self.env(&mut cmd);
        let out = cmd
            .env("HALL_ACTOR", "assayer")
            .args([
                "notes",
                "--ref=hallmark",
                "add",
                "-f",
                "-m",
                &body.to_string(),
                rev,
            ])
            .current_dir(dir)
            .output()
            .expect("git runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Runs `hall hook pre-tool-use` in `dir` for a Bash `command`, as Claude Code would,
    /// with `HALL_ACTOR=actor`; returns the hook's stdout and exit code.
    pub fn bash_hook(&self, dir: &Path, actor: &str, command: &str) -> (String, Option<i32>) {
        let hook = serde_json::json!({"session_id": "s1", "transcript_path": "/dev/null", "cwd": dir,
            "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": command}});
        self.hook(dir, "pre-tool-use", &hook, &[("HALL_ACTOR", actor)])
    }

    /// Runs `hall hook <event>` in `dir` with `input` on stdin and extra variables;
    /// returns the hook's stdout and exit code.
    pub fn hook(
        &self,
        dir: &Path,
        event: &str,
        input: &Value,
        vars: &[(&str, &str)],
    ) -> (String, Option<i32>) {
        use std::io::Write;
        let mut cmd = self.hall_command(dir);
        cmd.args(["hook", event])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped());
        for (k, v) in vars {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("hook");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(input.to_string().as_bytes())
            .expect("write");
        let out = child.wait_with_output().expect("hook ends");
        (
            String::from_utf8_lossy(&out.stdout).into_owned(),
            out.status.code(),
        )
    }

    /// Installs a test double as `name` first on PATH (a copy of a binary of this package).
    pub fn fake(&self, name: &str, exe: &Path) {
        let dest = self
            .bin
            .join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
        std::fs::copy(exe, &dest).expect("copy fake");
    }

    /// Writes the fake gh's state: `issues/<n>.json` or `prs/<n>.json`.
    pub fn gh_state(&self, rel: &str, value: &Value) {
        let path = self.root.join("gh").join(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, serde_json::to_vec_pretty(value).expect("json")).expect("write");
    }

    /// The worktree path `hall new` makes for item `id` (the default template).
    pub fn worktree(&self, id: &str) -> PathBuf {
        self.root.join(format!("repo-{id}"))
    }

    /// Replaces the sandbox's paths so output can be snapshotted.
    pub fn redact(&self, text: &str) -> String {
        text.replace(self.root.to_str().expect("utf8"), "[ROOT]")
    }

    /// A run as a stable snapshot: exit code, then the JSON reply pretty-printed and redacted.
    pub fn snap(&self, run: &Run) -> String {
        let body = match serde_json::from_str::<Value>(run.stdout.trim()) {
            Ok(v) => serde_json::to_string_pretty(&v).expect("json"),
            Err(_) => run.stdout.clone(),
        };
        self.redact(&format!("exit: {}\n{body}", run.code))
    }
}
