//! The jail the loop runs an item's own code in (`setup`, the checks, a fix engine that
//! isn't Claude Code): the platform's sandbox with the secrets hidden and taken out of
//! the environment, the repository's own cache, and the network only where the base's
//! `[sandbox] network` allows it. Off only when the person says so in their own config.

use std::path::{Path, PathBuf};

use super::expand_home;
use super::secrets::{HOME_SECRETS, SECRET_ENV, SYSTEM_SECRETS, secret_name};

/// A part of the loop that runs an item's code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// `setup`: installs what the checks need.
    Setup,
    /// The checks, and the merge checks on a parent's branch.
    Checks,
    /// A fix engine that isn't Claude Code.
    Fixer,
}

impl Phase {
    /// Its name in `[sandbox] network`.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Setup => "setup",
            Phase::Checks => "checks",
            Phase::Fixer => "fixer",
        }
    }
}

/// Whether the base's committed `[sandbox] network` lets `command` (of `phase`) reach
/// the network: it names the phase, or the command itself.
pub fn network_allowed(config: &crate::config::Config, phase: Phase, command: &str) -> bool {
    config
        .sandbox
        .network
        .iter()
        .any(|n| n == phase.name() || n.trim() == command.trim())
}

/// Whether the person turned the loop's confinement off (`[loop] confine = false` in
/// their own `config.toml`, out of every session's reach); the default is on.
pub fn loop_confined_by_user(config_dir: Option<&Path>) -> bool {
    let Some(dir) = config_dir else {
        return true;
    };
    let Ok(text) = std::fs::read_to_string(dir.join(crate::sign::USER_CONFIG)) else {
        return true;
    };
    text.parse::<toml::Table>()
        .ok()
        .and_then(|t| {
            t.get("loop")
                .and_then(|s| s.get("confine"))
                .and_then(|v| v.as_bool())
        })
        .unwrap_or(true)
}

/// How the loop runs an item's code in one repository: inside the platform's sandbox,
/// or (only when the person said so) without one.
#[derive(Clone, Debug)]
pub struct Jail {
    /// `None` when the person opted out.
    sandbox: Option<crate::sandbox::Sandbox>,
    /// The repository's own cache for what runs download and build (npm's, pip's,
    /// uv's…): shared by this repository's confined runs only, never with the user's
    /// own tools, so nothing a run leaves there reaches an unconfined program.
    cache: Option<PathBuf>,
    hidden: Vec<PathBuf>,
    visible: Vec<PathBuf>,
    remove_env: Vec<String>,
}

/// A command the loop will run on an item's code, and whether it is confined.
pub struct JailedCommand {
    pub command: std::process::Command,
    pub confined: bool,
    /// The sandbox, for messages (`None` when unconfined).
    pub sandbox: Option<&'static str>,
}

impl Jail {
    /// The jail for `hall`'s repository: the sandbox this machine has, or an error that
    /// names what to install; no sandbox at all when the person turned confinement off.
    pub fn new(hall: &crate::hall::Hall) -> Result<Jail, crate::sandbox::Unavailable> {
        let config_dir = hall.user_config_dir();
        let sandbox = if loop_confined_by_user(config_dir.as_deref()) {
            Some(crate::sandbox::find()?)
        } else {
            None
        };
        let mut hidden: Vec<PathBuf> = Vec::new();
        for dir in [
            config_dir.clone(),
            crate::platform::config_dir(),
            crate::platform::data_dir(),
            hall.user_cache_dir(),
            crate::platform::cache_dir(),
        ]
        .into_iter()
        .flatten()
        {
            hidden.push(dir);
        }
        if let Some(dir) = &config_dir {
            hidden.push(crate::sign::key_path(dir).0);
        }
        hidden.push(hall.journal.root().to_path_buf());
        if let Some(home) = dirs::home_dir() {
            hidden.extend(HOME_SECRETS.iter().map(|s| home.join(s)));
        }
        hidden.extend(SYSTEM_SECRETS.iter().map(PathBuf::from));
        if let Some(sock) = std::env::var_os("SSH_AUTH_SOCK") {
            hidden.push(PathBuf::from(sock));
        }
        for p in &hall.config.sandbox.deny_read {
            hidden.push(PathBuf::from(
                expand_home(p).trim_start_matches("//").to_string(),
            ));
        }
        let mut visible = vec![hall.repo.common_dir.clone()];
        if let Some(home) = dirs::home_dir() {
            visible.push(home);
        }
        if let Some(path) = std::env::var_os("PATH") {
            visible.extend(std::env::split_paths(&path));
        }
        for var in ["CARGO_HOME", "RUSTUP_HOME"] {
            if let Some(v) = std::env::var_os(var) {
                visible.push(PathBuf::from(v));
            }
        }
        let canon = |v: Vec<PathBuf>| -> Vec<PathBuf> {
            v.into_iter()
                .map(|p| crate::platform::canonicalize(&p).unwrap_or(p))
                .collect()
        };
        let mut remove_env: Vec<String> = SECRET_ENV.iter().map(|s| s.to_string()).collect();
        remove_env.extend(hall.config.sandbox.remove_env.iter().cloned());
        remove_env.extend(
            std::env::vars_os()
                .filter_map(|(k, _)| k.into_string().ok())
                .filter(|k| secret_name(k)),
        );
        let cache = hall.user_cache_dir().map(|c| {
            c.join("sandbox")
                .join(crate::hall::worktree::repo_key(hall))
        });
        let cache = cache.filter(|c| std::fs::create_dir_all(c).is_ok());
        Ok(Jail {
            sandbox,
            cache: cache.map(|c| crate::platform::canonicalize(&c).unwrap_or(c)),
            hidden: canon(hidden),
            visible: canon(visible),
            remove_env,
        })
    }

    /// Whether runs are confined (false only when the person opted out).
    pub fn confined(&self) -> bool {
        self.sandbox.is_some()
    }

    /// The policy for a run of `phase` in `dir`, writing `writable` (with `dir`), with
    /// `read_only` kept so inside them.
    pub fn policy(
        &self,
        network: bool,
        dir: &Path,
        writable: &[PathBuf],
        read_only: &[PathBuf],
    ) -> crate::sandbox::Policy {
        let canon = |p: &Path| crate::platform::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        let mut w = vec![canon(dir)];
        w.extend(writable.iter().map(|p| canon(p)));
        w.extend(self.cache.clone());
        crate::sandbox::Policy {
            workdir: canon(dir),
            writable: w,
            read_only: read_only.iter().map(|p| canon(p)).collect(),
            hidden: self.hidden.clone(),
            visible: self.visible.clone(),
            network,
            temp: std::env::temp_dir(),
        }
    }

    /// `script` through the platform shell under `policy`, with the secrets taken out of
    /// its environment.
    pub fn shell(&self, policy: &crate::sandbox::Policy, script: &str) -> JailedCommand {
        let (program, args) = self.argv(policy, script);
        let mut command = crate::sandbox::command(&program, &args);
        command.current_dir(&policy.workdir);
        for k in &self.remove_env {
            command.env_remove(k);
        }
        for (k, v) in self.cache_env() {
            command.env(k, v);
        }
        JailedCommand {
            command,
            confined: self.confined(),
            sandbox: self.sandbox.as_ref().map(|s| s.name()),
        }
    }

    /// The program and arguments that run `script` through the platform shell under
    /// `policy` (for runners that take an argument list).
    pub fn argv(&self, policy: &crate::sandbox::Policy, script: &str) -> (String, Vec<String>) {
        let shell = crate::platform::shell(script);
        let program = shell.get_program().to_string_lossy().into_owned();
        let args: Vec<String> = shell
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        match &self.sandbox {
            Some(s) => s.argv(policy, &program, &args),
            None => (program, args),
        }
    }

    /// Where the package managers and build tools a run may use keep their caches: the
    /// repository's own cache (the user's, read-only, would make them fail, and a
    /// writable one could be poisoned for the user's own later builds).
    pub fn cache_env(&self) -> Vec<(String, String)> {
        let Some(c) = &self.cache else {
            return Vec::new();
        };
        [
            ("XDG_CACHE_HOME", "xdg"),
            ("npm_config_cache", "npm"),
            ("YARN_CACHE_FOLDER", "yarn"),
            ("BUN_INSTALL_CACHE_DIR", "bun"),
            ("PIP_CACHE_DIR", "pip"),
            ("UV_CACHE_DIR", "uv"),
            ("POETRY_CACHE_DIR", "poetry"),
            ("PRE_COMMIT_HOME", "pre-commit"),
            ("GOCACHE", "go-build"),
        ]
        .iter()
        .map(|(k, d)| (k.to_string(), c.join(d).display().to_string()))
        .collect()
    }

    /// The environment variables a run of an item's code goes without.
    pub fn removed_env(&self) -> &[String] {
        &self.remove_env
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_network_is_off_unless_the_base_names_the_phase_or_the_command() {
        let mut config = crate::config::Config::default();
        assert!(!network_allowed(&config, Phase::Setup, "npm ci"));
        config.sandbox.network = vec!["setup".into(), "pytest -m online".into()];
        assert!(network_allowed(&config, Phase::Setup, "npm ci"));
        assert!(!network_allowed(&config, Phase::Checks, "pytest"));
        assert!(network_allowed(&config, Phase::Checks, " pytest -m online"));
        assert!(!network_allowed(&config, Phase::Fixer, "ralph run"));
    }

    #[test]
    fn only_the_persons_own_file_turns_the_loops_confinement_off() {
        let dir = tempfile::tempdir().unwrap();
        assert!(loop_confined_by_user(None));
        assert!(loop_confined_by_user(Some(dir.path())), "no file: confined");
        let file = dir.path().join(crate::sign::USER_CONFIG);
        std::fs::write(&file, "[loop]\nconfine = \"no\"\n").unwrap();
        assert!(
            loop_confined_by_user(Some(dir.path())),
            "not a boolean: confined"
        );
        std::fs::write(
            &file,
            "[signing]\nprincipal = \"a@b\"\n[loop]\nconfine = false\n",
        )
        .unwrap();
        assert!(!loop_confined_by_user(Some(dir.path())));
    }
}
