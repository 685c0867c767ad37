//! Command templates from `.hallmark.toml` (`worktree`, `branch`, `ship`…): placeholder
//! substitution with shell quoting, and running them through the platform shell. The
//! repository chooses these commands; this adapter runs them and reports how they
//! failed.

use std::path::Path;

use crate::platform::{shell, shell_quote};

/// Why a template command failed.
#[derive(Debug, thiserror::Error)]
pub enum TemplateError {
    #[error("could not run `{command}`: {source}")]
    Spawn {
        command: String,
        #[source]
        source: std::io::Error,
    },
    /// It ran and exited non-zero; `stderr` is what it said (its last line, for a
    /// worker's command).
    #[error("`{command}` exited with {status}: {stderr}")]
    Failed {
        command: String,
        status: String,
        stderr: String,
    },
}

type Result<T, E = TemplateError> = std::result::Result<T, E>;

fn status_text(status: &std::process::ExitStatus) -> String {
    status
        .code()
        .map(|c| c.to_string())
        .unwrap_or_else(|| "a signal".into())
}

/// Replaces `{name}` placeholders. Values are quoted for the shell when `quote` is set
/// (command templates) and inserted as they are otherwise (the branch-name template).
pub fn render(template: &str, values: &[(&str, &str)], quote: bool) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(start) = rest.find('{') {
        out.push_str(&rest[..start]);
        let after = &rest[start + 1..];
        match after.find('}') {
            Some(end) if values.iter().any(|(k, _)| *k == &after[..end]) => {
                let key = &after[..end];
                let value = values
                    .iter()
                    .find(|(k, _)| *k == key)
                    .map(|(_, v)| *v)
                    .unwrap_or_default();
                if quote {
                    out.push_str(&shell_quote(value));
                } else {
                    out.push_str(value);
                }
                rest = &after[end + 1..];
            }
            _ => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Runs a rendered command in `dir`; a failure carries the command's stderr.
pub fn run(command: &str, dir: &Path) -> Result<String> {
    output(command, shell(command).current_dir(dir), |err| err.trim())
}

/// Runs `cmd`, the shell set up to run `command`, and returns its stdout. A failure
/// carries the part of its stderr that `told` picks out.
fn output(
    command: &str,
    cmd: &mut std::process::Command,
    told: impl Fn(&str) -> &str,
) -> Result<String> {
    let out = cmd.output().map_err(|source| TemplateError::Spawn {
        command: command.to_string(),
        source,
    })?;
    if !out.status.success() {
        return Err(TemplateError::Failed {
            command: command.to_string(),
            status: status_text(&out.status),
            stderr: told(&String::from_utf8_lossy(&out.stderr)).to_string(),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// A branch-safe slug of a title: lowercase words joined by `-`, at most 40 characters.
pub fn slug(title: &str) -> String {
    let mut s = String::new();
    for c in title.chars() {
        if c.is_ascii_alphanumeric() {
            s.push(c.to_ascii_lowercase());
        } else if !s.ends_with('-') && !s.is_empty() {
            s.push('-');
        }
        if s.len() >= 40 {
            break;
        }
    }
    let s = s.trim_end_matches('-').to_string();
    if s.is_empty() { "work".to_string() } else { s }
}

/// Runs a rendered command for a loop worker (`HALL_ACTOR` set), returning stdout; a
/// failure carries stderr. No git hook runs inside it ([`crate::git::without_hooks`]).
pub fn run_logged(command: &str, dir: &Path, actor: &str) -> Result<String> {
    let mut cmd = shell(command);
    crate::git::without_hooks(&mut cmd);
    cmd.current_dir(dir)
        .env("HALL_ACTOR", actor)
        .stdin(std::process::Stdio::null());
    output(command, &mut cmd, |err| {
        err.trim().lines().last().unwrap_or("")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_substituted_and_quoted() {
        let r = render(
            "git worktree add ../{repo}-{id} -b {branch} {nope}",
            &[("repo", "r"), ("id", "H-0001"), ("branch", "hm/x")],
            true,
        );
        assert_eq!(r, "git worktree add ../r-H-0001 -b hm/x {nope}");
        #[cfg(not(windows))]
        assert_eq!(
            render("echo {title}", &[("title", "it's $HOME")], true),
            "echo 'it'\\''s $HOME'"
        );
    }

    #[test]
    fn slugs() {
        assert_eq!(slug("Fix the Login Bug!"), "fix-the-login-bug");
        assert_eq!(slug("!!!"), "work");
        assert!(slug(&"a".repeat(100)).len() <= 40);
    }
}
