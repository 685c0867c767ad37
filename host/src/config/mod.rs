//! `.hallmark.toml`: every key, its default, and strict parsing.
//!
//! The file is read from the main checkout, never from an item's worktree, so an item
//! can't loosen its own rules by editing its copy. Unknown keys and wrong types are
//! errors that name the key, the file and the line.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub mod notify;
mod policy;

pub use notify::{Channel, NOTIFIED_KINDS, Notify};
pub use policy::{DetectorConfig, POLICY_DETECTORS, POLICY_WINDOW_MAX, Policy, PolicyMode};

pub const FILE_NAME: &str = ".hallmark.toml";

/// A configuration that can't be used: the file (or the commit it was read from) and
/// what is wrong with it, naming the key and the line.
#[derive(Debug, thiserror::Error)]
#[error("{}: {message}", path.display())]
pub struct ConfigError {
    pub path: PathBuf,
    pub message: String,
}

type Result<T, E = ConfigError> = std::result::Result<T, E>;

/// `claude` flags a repository may not add to headless runs: each would undo part of
/// their isolation (settings, plugins, agents, MCP) or their confinement (permissions,
/// extra directories, tools).
const LOOSENING: &[&str] = &[
    "--dangerously-skip-permissions",
    "--allow-dangerously-skip-permissions",
    "--permission-mode",
    "--settings",
    "--setting-sources",
    "--plugin-dir",
    "--agent",
    "--agents",
    "--mcp-config",
    "--strict-mcp-config",
    "--add-dir",
    "--allowedTools",
    "--allowed-tools",
    "--tools",
    "--bare",
    "--json-schema",
    "--max-budget-usd",
];

/// The whole configuration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// The branch items start from and ship to.
    pub base: String,
    /// How an item's worktree is made. Placeholders: {repo} {id} {branch} {slug} {title} {base}.
    pub worktree: String,
    /// The item's branch name.
    pub branch: String,
    /// How a hallmarked item ships.
    pub ship: String,
    /// How a reopened or adopted item updates the PR it already has.
    pub update: String,
    /// How each review is posted on the PR.
    pub review_comment: String,
    /// The repository's own checks (tests, lint, build), run before any review. The key
    /// keeps the design's name, `gates`; everywhere else they are checks.
    #[serde(rename = "gates")]
    pub checks: Vec<String>,
    /// Commands that prepare a fresh checkout before its checks run (`npm ci`, `uv sync
    /// --frozen`), in order, from the checkout's root.
    pub setup: Vec<String>,
    /// Checks the checks cache never serves (`gates_no_cache`).
    #[serde(rename = "gates_no_cache")]
    pub checks_no_cache: Vec<String>,
    /// What headless dev runs may run besides the checks.
    pub dev_commands: Vec<String>,
    /// The fix engine: `claude -p` or an external command.
    pub fixer: String,
    /// Extra arguments for every headless run.
    pub claude_args: Vec<String>,
    /// Rejected reviews before an item escalates.
    pub max_rejects: u32,
    /// Failed check runs in a row before a `checks` hold.
    pub max_check_failures: u32,
    /// An item with no event for this long is flagged as stuck.
    pub stuck_after: String,
    /// `all`, or a list of lens names.
    pub lenses: Lenses,
    /// Rule files the reviewer reads from the base branch.
    pub rules: Vec<String>,
    /// Whether `propose-ready` goes straight to checks when nothing is left to confirm.
    pub auto_ready: bool,
    pub capture: Capture,
    pub merge: Merge,
    pub delivery: Delivery,
    pub intake: Intake,
    pub budget: Budget,
    pub library: Library,
    pub parallel: Parallel,
    pub sandbox: Sandbox,
    /// The tool-call policy: detectors for an agent going in circles.
    pub policy: Policy,
    /// Skill packs by other authors, turned on per role.
    pub extensions: BTreeMap<String, Vec<String>>,
    /// Room components that replace a built-in room: world name → path of a `.wasm` in the base branch.
    pub rooms: BTreeMap<String, String>,
    /// Notification channels for people with none in their own config.toml (never a
    /// secret here: name environment variables instead).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notify: Option<Notify>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Lenses {
    /// `"all"`.
    Named(String),
    List(Vec<String>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CaptureMode {
    Gate,
    Ask,
    Off,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PushGuard {
    Strict,
    Parse,
}

/// The edit gate and the push gate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Capture {
    pub mode: CaptureMode,
    /// Paths that need no item.
    pub free: Vec<String>,
    pub push_guard: PushGuard,
    /// Commands the strict guard lets through.
    pub push_allow: Vec<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MergeMode {
    Off,
    Auto,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MergeUpdate {
    Files,
    Conflicts,
}

/// The merger.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Merge {
    pub mode: MergeMode,
    pub command: String,
    pub require_ci: bool,
    /// Paths a person merges.
    pub lit: Vec<String>,
    pub update: MergeUpdate,
    /// Check names that must be reported at a PR's head for its CI to count as
    /// green; a green check that ran no tests never counts.
    pub required_checks: Vec<String>,
    /// A PR whose base moved since its merge base merges only once the checks
    /// passed on it merged onto the base tip (`git merge-tree --write-tree`).
    pub pre_merge_check: bool,
    /// How many of the base's latest commits count towards hot paths (0: off).
    pub hot_window: u32,
    /// A path changed in at least this many of them is hot: a PR touching it is
    /// checked with the base tip in before it merges, whatever `update` says (0: off).
    pub hot_threshold: u32,
    /// How many PRs per base have merge checks in line at once, each on the tip
    /// with the PRs ahead of it merged in; 1 checks only the next PR, on the tip.
    pub train: u32,
}

/// The Delivery office: following shipped PRs until they merge.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Delivery {
    /// How often the watch asks GitHub about a repository's open shipped PRs (a
    /// duration: "60s", "5m"); never more often, whatever the daemon's tick.
    pub watch_every: String,
}

impl Default for Delivery {
    fn default() -> Self {
        Delivery {
            watch_every: "60s".into(),
        }
    }
}

/// The Front Desk.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Intake {
    /// `auto` or `off`.
    pub split: String,
    pub max_parts: u32,
    /// Seconds the intake run may take before `hall new` makes one item without it.
    pub timeout: u64,
}

/// One role's caps (`[budget.review]`, `[budget.fix]`…).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct RoleBudget {
    /// Dollars per run, or `"none"`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_usd: Option<Money>,
    /// Tokens per day, e.g. `"2M"`, or `"none"`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub daily: Option<String>,
    /// How long one run may take before it is stopped, e.g. `"20m"`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Money {
    Usd(f64),
    /// `"none"`.
    Word(String),
}

/// Budgets.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Budget {
    /// Tokens per day for the whole loop, e.g. `"4M"`, or `"none"`.
    pub daily: String,
    /// Tokens per item, e.g. `"800k"`, or `"none"`.
    pub per_item: String,
    pub review_model: String,
    pub fix_model: String,
    pub intake_model: String,
    pub librarian_model: String,
    pub review: RoleBudget,
    pub fix: RoleBudget,
    pub intake: RoleBudget,
    pub librarian: RoleBudget,
}

/// Which engine searches the Library.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SearchBackend {
    /// SQLite FTS5 in process.
    #[default]
    Builtin,
    /// tobi/qmd, which must be on `PATH`.
    Qmd,
}

/// Whether the daemon runs the librarian over closed items on its own.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Distill {
    /// Each item closed or dropped in the last week, once.
    #[default]
    Auto,
    /// Only `hall library distill`.
    Off,
}

/// The Library.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Library {
    /// `builtin` or `qmd`.
    pub search: SearchBackend,
    /// The most tokens a review's briefing may take, e.g. `"6k"`.
    pub briefing_limit: String,
    /// Learning kinds accepted as they are proposed (`rule`, `false-positive`, `map`,
    /// `decision`); the others wait for `hall library review`.
    pub auto_accept: Vec<crate::item::LearningKind>,
    /// A learning no review used for this long is retired, e.g. `"90d"`.
    pub retire_after: String,
    /// `auto`: the daemon distils closed items; `off`: only `hall library distill`.
    pub distill: Distill,
}

/// How many items may be in each phase at once.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Parallel {
    pub checks: u32,
    pub review: u32,
    pub fix: u32,
    pub ship: u32,
}

/// Confinement of headless runs.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Sandbox {
    /// Network domains runs may reach.
    pub domains: Vec<String>,
    pub unix_sockets: Vec<String>,
    /// Paths no run may read.
    pub deny_read: Vec<String>,
    /// Environment variables removed from every run.
    pub remove_env: Vec<String>,
    /// Which of the loop's runs of the item's code may reach the network beyond
    /// loopback: `"setup"`, `"checks"`, `"fixer"` (a fix engine that isn't Claude
    /// Code), or one command exactly as it is listed. Empty (the default): none.
    pub network: Vec<String>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            base: "main".into(),
            worktree: "git worktree add ../{repo}-{id} -b {branch} {base}".into(),
            branch: "hm/{id}-{slug}".into(),
            ship: "git push -u origin {branch} && gh pr create --base {base} --head {branch} --title {title} --body-file {body_file}".into(),
            update: "git push --force-with-lease origin {branch}".into(),
            review_comment: "gh pr comment {pr} --body-file {review_file}".into(),
            checks: Vec::new(),
            setup: Vec::new(),
            checks_no_cache: Vec::new(),
            dev_commands: Vec::new(),
            fixer: "claude -p".into(),
            claude_args: Vec::new(),
            max_rejects: 3,
            max_check_failures: 3,
            stuck_after: "30m".into(),
            lenses: Lenses::Named("all".into()),
            rules: vec!["CLAUDE.md".into(), "AGENTS.md".into()],
            auto_ready: true,
            capture: Capture::default(),
            merge: Merge::default(),
            delivery: Delivery::default(),
            intake: Intake::default(),
            budget: Budget::default(),
            library: Library::default(),
            parallel: Parallel::default(),
            sandbox: Sandbox::default(),
            policy: Policy::default(),
            extensions: BTreeMap::new(),
            rooms: BTreeMap::new(),
            notify: None,
        }
    }
}

impl Default for Capture {
    fn default() -> Self {
        Capture {
            mode: CaptureMode::Gate,
            free: vec!["docs/".into(), "*.md".into()],
            push_guard: PushGuard::Strict,
            push_allow: Vec::new(),
        }
    }
}

impl Default for Merge {
    fn default() -> Self {
        Merge {
            mode: MergeMode::Off,
            command: "gh pr merge {pr} --squash --match-head-commit {pr_head}".into(),
            require_ci: true,
            lit: Vec::new(),
            update: MergeUpdate::Files,
            required_checks: Vec::new(),
            pre_merge_check: true,
            hot_window: 50,
            hot_threshold: 5,
            train: 4,
        }
    }
}

impl Default for Intake {
    fn default() -> Self {
        Intake {
            split: "auto".into(),
            max_parts: 4,
            timeout: 60,
        }
    }
}

impl Default for Budget {
    fn default() -> Self {
        Budget {
            daily: "4M".into(),
            per_item: "800k".into(),
            review_model: "opus".into(),
            fix_model: "sonnet".into(),
            intake_model: "haiku".into(),
            librarian_model: "haiku".into(),
            review: RoleBudget::default(),
            fix: RoleBudget::default(),
            intake: RoleBudget::default(),
            librarian: RoleBudget::default(),
        }
    }
}

impl Default for Library {
    fn default() -> Self {
        Library {
            search: SearchBackend::Builtin,
            briefing_limit: "6k".into(),
            auto_accept: Vec::new(),
            retire_after: "90d".into(),
            distill: Distill::Auto,
        }
    }
}

impl Default for Parallel {
    fn default() -> Self {
        Parallel {
            checks: 2,
            review: 1,
            fix: 1,
            ship: 1,
        }
    }
}

/// Parses a token count such as `4M`, `800k` or `12000`; `none` is no cap.
pub fn parse_tokens(s: &str) -> std::result::Result<Option<u64>, String> {
    let t = s.trim();
    if t.eq_ignore_ascii_case("none") {
        return Ok(None);
    }
    let (digits, mult) = match t.char_indices().last() {
        Some((i, 'k' | 'K')) => (&t[..i], 1_000.0),
        Some((i, 'm' | 'M')) => (&t[..i], 1_000_000.0),
        _ => (t, 1.0),
    };
    digits
        .parse::<f64>()
        .ok()
        .filter(|n| n.is_finite() && *n >= 0.0)
        .map(|n| Some((n * mult).round() as u64))
        .ok_or_else(|| format!("`{s}` is not a token count (e.g. 4M, 800k, 12000 or none)"))
}

impl Config {
    /// The config file of the repository whose main checkout is `main_root`.
    pub fn path(main_root: &Path) -> PathBuf {
        main_root.join(FILE_NAME)
    }

    /// Reads the config from the main checkout; a missing file means every default.
    pub fn load(main_root: &Path) -> Result<Config> {
        let path = Config::path(main_root);
        match std::fs::read_to_string(&path) {
            Ok(text) => Config::parse(&text, &path),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Config::default()),
            Err(e) => Err(ConfigError {
                path,
                message: e.to_string(),
            }),
        }
    }

    /// Parses and validates `text`, naming `path` in errors.
    pub fn parse(text: &str, path: &Path) -> Result<Config> {
        let invalid = |message: String| ConfigError {
            path: path.to_path_buf(),
            message,
        };
        let config: Config = toml::from_str(text).map_err(|e| {
            let msg = e.message().trim().to_string();
            invalid(match e.span() {
                Some(span) => {
                    let start = span.start.min(text.len());
                    let line = text[..start].matches('\n').count() + 1;
                    let src = text.lines().nth(line - 1).unwrap_or("").trim();
                    format!("line {line} (`{src}`): {msg}")
                }
                None => msg,
            })
        })?;
        config.validate().map_err(invalid)?;
        if config.notify.is_some() {
            notify::from_text(text, path, true)?;
        }
        Ok(config)
    }

    fn validate(&self) -> std::result::Result<(), String> {
        crate::clock::parse_duration(&self.stuck_after).map_err(|e| format!("stuck_after: {e}"))?;
        crate::clock::parse_duration(&self.delivery.watch_every)
            .map_err(|e| format!("delivery.watch_every: {e}"))?;
        crate::clock::parse_duration(&self.library.retire_after)
            .map_err(|e| format!("library.retire_after: {e}"))?;
        parse_tokens(&self.budget.daily).map_err(|e| format!("budget.daily: {e}"))?;
        parse_tokens(&self.budget.per_item).map_err(|e| format!("budget.per_item: {e}"))?;
        if parse_tokens(&self.library.briefing_limit)
            .map_err(|e| format!("library.briefing_limit: {e}"))?
            .is_none()
        {
            return Err("library.briefing_limit: a briefing needs a cap; `none` is not one".into());
        }
        for (name, role) in [
            ("review", &self.budget.review),
            ("fix", &self.budget.fix),
            ("intake", &self.budget.intake),
            ("librarian", &self.budget.librarian),
        ] {
            if let Some(d) = &role.daily {
                parse_tokens(d).map_err(|e| format!("budget.{name}.daily: {e}"))?;
            }
            if let Some(t) = &role.timeout {
                crate::clock::parse_duration(t)
                    .map_err(|e| format!("budget.{name}.timeout: {e}"))?;
            }
            if let Some(Money::Word(w)) = &role.max_usd
                && !w.eq_ignore_ascii_case("none")
            {
                return Err(format!(
                    "budget.{name}.max_usd: `{w}` is not a dollar amount or \"none\""
                ));
            }
        }
        if let Lenses::Named(n) = &self.lenses
            && n != "all"
        {
            return Err(format!(
                "lenses: `{n}` is not \"all\" or a list of lens names"
            ));
        }
        if !matches!(self.intake.split.as_str(), "auto" | "off") {
            return Err(format!(
                "intake.split: `{}` is not \"auto\" or \"off\"",
                self.intake.split
            ));
        }
        for arg in &self.claude_args {
            let flag = arg.split('=').next().unwrap_or(arg);
            if LOOSENING.contains(&flag) || arg == "bypassPermissions" {
                return Err(format!(
                    "claude_args: `{arg}` would loosen the isolation or confinement of headless runs; Hallmark sets those itself"
                ));
            }
        }
        self.policy
            .validate(self.rooms.contains_key("tool-policy"))?;
        if self.max_rejects == 0 || self.max_check_failures == 0 {
            return Err("max_rejects and max_check_failures must be at least 1".into());
        }
        for (key, template) in [("worktree", &self.worktree), ("branch", &self.branch)] {
            if template.trim().is_empty() {
                return Err(format!("{key}: the template is empty"));
            }
        }
        Ok(())
    }

    /// The text `hall init` writes: every key with its default, commented where it is
    /// the default, so the file documents itself.
    pub fn template(base: &str, gates: &[String], setup: &[String]) -> String {
        let d = Config::default();
        let list = |items: &[String]| {
            toml::Value::Array(
                items
                    .iter()
                    .map(|g| toml::Value::String(g.clone()))
                    .collect(),
            )
        };
        let gates_toml = list(gates);
        let setup_line = if setup.is_empty() {
            "# setup = []".to_string()
        } else {
            format!("setup = {}", list(setup))
        };
        // The loop runs the item's code offline unless this says otherwise; setup
        // usually downloads what it installs.
        let network_line = if setup.is_empty() {
            "# network = []             # \"setup\", \"checks\", \"fixer\" or a command".to_string()
        } else {
            "network = [\"setup\"]       # setup downloads; the checks run offline".to_string()
        };
        format!(
            "# Hallmark configuration. Every key is optional; `hall schema config` describes them.\n\
             base = {base}\n\
             gates = {gates_toml}\n\
             {setup_line}\n\
             # worktree = {worktree}\n\
             # branch = {branch}\n\
             # ship = {ship}\n\
             # update = {update}\n\
             # review_comment = {review_comment}\n\
             # gates_no_cache = []\n\
             # dev_commands = []\n\
             # fixer = \"claude -p\"\n\
             # claude_args = []\n\
             # max_rejects = 3\n\
             # max_check_failures = 3\n\
             # stuck_after = \"30m\"\n\
             # lenses = \"all\"\n\
             # rules = [\"CLAUDE.md\", \"AGENTS.md\"]\n\
             # auto_ready = true\n\
             \n[capture]\n\
             # mode = \"gate\"            # gate | ask | off\n\
             # free = [\"docs/\", \"*.md\"]\n\
             # push_guard = \"strict\"    # strict | parse\n\
             # push_allow = []\n\
             \n[merge]\n\
             # mode = \"off\"             # off | auto\n\
             # command = {merge_cmd}\n\
             # require_ci = true\n\
             # lit = []\n\
             \n[budget]\n\
             # daily = \"4M\"\n\
             # per_item = \"800k\"\n\
             # review_model = \"opus\"\n\
             # fix_model = \"sonnet\"\n\
             \n[sandbox]\n\
             {network_line}\n",
            base = toml::Value::String(base.to_string()),
            worktree = toml::Value::String(d.worktree),
            branch = toml::Value::String(d.branch),
            ship = toml::Value::String(d.ship),
            update = toml::Value::String(d.update),
            review_comment = toml::Value::String(d.review_comment),
            merge_cmd = toml::Value::String(d.merge.command),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Config> {
        Config::parse(text, Path::new("/r/.hallmark.toml"))
    }

    #[test]
    fn an_empty_file_is_every_default() {
        assert_eq!(parse("").expect("parses"), Config::default());
    }

    #[test]
    fn the_merged_result_keys_have_defaults_and_parse() {
        let d = Merge::default();
        assert!(d.required_checks.is_empty());
        assert!(d.pre_merge_check);
        assert_eq!((d.hot_window, d.hot_threshold, d.train), (50, 5, 4));
        let c = parse(
            "[merge]\nrequired_checks = [\"test\", \"lint\"]\npre_merge_check = false\nhot_window = 20\nhot_threshold = 3\ntrain = 1\n",
        )
        .expect("parses");
        assert_eq!(c.merge.train, 1);
        assert_eq!(c.merge.required_checks, ["test", "lint"]);
        assert!(!c.merge.pre_merge_check);
        assert_eq!((c.merge.hot_window, c.merge.hot_threshold), (20, 3));
        assert!(parse("[merge]\nhot_window = -1\n").is_err());
    }

    #[test]
    fn the_init_template_parses_to_the_defaults_plus_base_and_gates() {
        let c = parse(&Config::template(
            "trunk",
            &["cargo test".into()],
            &["npm ci".into()],
        ))
        .expect("parses");
        assert_eq!(c.base, "trunk");
        assert_eq!(c.checks, ["cargo test"]);
        assert_eq!(c.setup, ["npm ci"]);
        // Setup usually downloads: the template lets it reach the network, and only it.
        assert_eq!(c.sandbox.network, ["setup"]);
        assert_eq!(
            Config {
                base: "main".into(),
                checks: vec![],
                setup: vec![],
                sandbox: Sandbox::default(),
                ..c
            },
            Config::default()
        );
        let none = parse(&Config::template("main", &[], &[])).expect("parses");
        assert!(none.sandbox.network.is_empty(), "no setup, no network");
    }

    #[test]
    fn unknown_keys_name_the_key_file_and_line() {
        let err: crate::error::HallError = parse("base = \"main\"\n[capture]\nmood = \"gate\"\n")
            .unwrap_err()
            .into();
        assert_eq!(err.code, crate::error::Code::InvalidConfig);
        assert!(
            err.message.contains("/r/.hallmark.toml: line 3"),
            "{}",
            err.message
        );
        assert!(err.message.contains("mood"), "{}", err.message);
        assert!(!err.next.is_empty());
    }

    #[test]
    fn wrong_types_and_values_are_named() {
        for (text, needle) in [
            ("max_rejects = \"three\"", "max_rejects"),
            ("[capture]\nmode = \"sometimes\"", "sometimes"),
            ("stuck_after = \"soon\"", "stuck_after"),
            ("[budget]\ndaily = \"lots\"", "budget.daily"),
            (
                "[budget.review]\nmax_usd = \"plenty\"",
                "budget.review.max_usd",
            ),
        ] {
            let err = parse(text).unwrap_err();
            assert!(err.message.contains(needle), "{text}: {}", err.message);
        }
    }

    #[test]
    fn library_keys_are_strict() {
        let c = parse(
            "[library]\nsearch = \"qmd\"\nbriefing_limit = \"4k\"\nauto_accept = [\"map\", \"false-positive\"]\nretire_after = \"30d\"\n",
        )
        .expect("parses");
        assert_eq!(c.library.search, SearchBackend::Qmd);
        assert_eq!(
            c.library.auto_accept,
            [
                crate::item::LearningKind::Map,
                crate::item::LearningKind::FalsePositive
            ]
        );
        for (text, needle) in [
            ("[library]\nsearch = \"grep\"", "line 2"),
            ("[library]\nauto_accept = [\"rules\"]", "rules"),
            (
                "[library]\nbriefing_limit = \"lots\"",
                "library.briefing_limit",
            ),
            (
                "[library]\nbriefing_limit = \"none\"",
                "library.briefing_limit",
            ),
            (
                "[library]\nretire_after = \"never\"",
                "library.retire_after",
            ),
            ("[library]\nsearches = \"qmd\"", "searches"),
        ] {
            let err = parse(text).unwrap_err();
            assert!(err.message.contains(needle), "{text}: {}", err.message);
            assert_eq!(err.path, Path::new("/r/.hallmark.toml"));
        }
    }

    #[test]
    fn token_counts() {
        assert_eq!(parse_tokens("4M"), Ok(Some(4_000_000)));
        assert_eq!(parse_tokens("800k"), Ok(Some(800_000)));
        assert_eq!(parse_tokens("none"), Ok(None));
        assert!(parse_tokens("x").is_err());
    }
}
