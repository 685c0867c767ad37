//! `--settings` for a headless Claude Code run (the reviewer, the fixer, a resumed
//! session): which files its tools may read and write, what its commands may reach in
//! Claude Code's sandbox, and, with a [`Scope`], the denials a confined session gets.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::secrets::HOME_SECRETS;
use super::{Scope, expand_home, read_rules, settings};

/// Who a headless run is, as far as its confinement goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunKind {
    /// The principal engineer: read-only, no hooks, isolated from the checkout's settings.
    Review,
    /// The fixer: edits its worktree, with Hallmark's hooks.
    Fix,
    /// A resumed session that asked a question.
    Resume,
}

/// `--settings` for a headless run: its file tools read only inside `dirs` and never the
/// credential paths in `deny_read`; its commands run in Claude Code's sandbox, writing
/// only `write` and reaching only the repo's `domains` and `unix_sockets`; web tools are
/// off. The reviewer also runs without hooks. With a `scope`, the run gets the same
/// denials as a confined session ([`settings`]): git's internals beyond what a commit
/// needs, the journal, local remotes, other checkouts and the signing key.
pub fn run_settings(
    config: &crate::config::Config,
    kind: RunKind,
    dirs: &[PathBuf],
    write: &[PathBuf],
    scope: Option<&Scope<'_>>,
) -> Value {
    let abs = |p: &Path| format!("/{}", p.display());
    let mut allow: Vec<String> = Vec::new();
    for d in dirs {
        allow.push(format!("Read({}/**)", abs(d)));
        allow.push(format!("Grep({}/**)", abs(d)));
        allow.push(format!("Glob({}/**)", abs(d)));
    }
    if kind == RunKind::Fix {
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
    if kind == RunKind::Review {
        deny.push("Edit".into());
        deny.push("Write".into());
        deny.push("NotebookEdit".into());
    }
    let mut deny_write: Vec<String> = Vec::new();
    let mut deny_read: Vec<String> = Vec::new();
    if let Some(scope) = scope {
        let session = settings(scope, write);
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
    // A reviewer or fixer reads the item's code, which may be written to steer it: it
    // gets the credential stores the loop's jail hides, for its file tools and for its
    // commands. Claude Code's own directory and file stay readable to its commands,
    // which source their shell snapshot from there; its sandbox mounts over each denied
    // path, so only the paths that exist are listed.
    for p in run_secrets() {
        for rule in read_rules(std::slice::from_ref(&p)) {
            if !deny.contains(&rule) {
                deny.push(rule);
            }
        }
        let shown = p.display().to_string();
        if p.exists() && !deny_read.contains(&shown) {
            deny_read.push(shown);
        }
    }
    json!({
        "disableAllHooks": kind == RunKind::Review,
        "permissions": { "allow": allow, "deny": deny, "defaultMode": if kind == RunKind::Fix { "acceptEdits" } else { "default" } },
        "sandbox": {
            "enabled": true,
            // Without bubblewrap and socat Claude Code would run the commands unsandboxed,
            // with a warning nobody reads in a headless run: refuse to start instead.
            "failIfUnavailable": true,
            "allowUnsandboxedCommands": false,
            // A fixer runs the checks and commits its fix: its commands, inside the
            // sandbox and past the plugin's hooks, need no one to approve them (a
            // headless run has no one to ask). Other runs' commands still need a rule.
            "autoAllowBashIfSandboxed": kind == RunKind::Fix,
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

/// What a headless Claude Code run may not read: [`HOME_SECRETS`] but Claude Code's own
/// directory and file, which the run itself reads and its commands source.
fn run_secrets() -> Vec<PathBuf> {
    let Some(home) = dirs::home_dir() else {
        return Vec::new();
    };
    HOME_SECRETS
        .iter()
        .filter(|s| !s.starts_with(".claude"))
        .map(|s| home.join(s))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_headless_run_reads_no_credential_store_but_its_own_directory() {
        let config = crate::config::Config::default();
        let home = dirs::home_dir().unwrap();
        let v = run_settings(&config, RunKind::Fix, &[], &[], None);
        let deny: Vec<&str> = v["permissions"]["deny"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|r| r.as_str())
            .collect();
        for secret in [
            ".ssh",
            ".aws",
            ".config/gh",
            ".netrc",
            ".docker/config.json",
        ] {
            let rule = format!("Read(/{}/**)", home.join(secret).display());
            assert!(deny.contains(&rule.as_str()), "{rule} in {deny:?}");
        }
        assert!(
            !deny.iter().any(|r| r.contains("/.claude")),
            "the run reads its own settings: {deny:?}"
        );
        for p in v["sandbox"]["filesystem"]["denyRead"].as_array().unwrap() {
            let p = Path::new(p.as_str().unwrap());
            assert!(
                p.exists(),
                "only what exists is mounted over: {}",
                p.display()
            );
            assert!(!p.to_string_lossy().contains("/.claude"));
        }
    }
}
