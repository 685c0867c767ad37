//! Command templates from `.hallmark.toml` (`worktree`, `branch`, `ship`…): placeholder
//! substitution with shell quoting, and running them through the platform shell.

use std::path::Path;

use crate::error::{Code, HallError, Result};
use crate::platform::{shell, shell_quote};

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
    let out = shell(command).current_dir(dir).output().map_err(|e| {
        HallError::new(
            Code::CommandFailed,
            format!("could not run `{command}`: {e}"),
        )
    })?;
    if !out.status.success() {
        return Err(HallError::new(
            Code::CommandFailed,
            format!(
                "`{command}` exited with {}: {}",
                out.status
                    .code()
                    .map(|c| c.to_string())
                    .unwrap_or_else(|| "a signal".into()),
                String::from_utf8_lossy(&out.stderr).trim()
            ),
        )
        .hint("hall doctor"));
    }
    Ok(String::from_utf8_lossy(&out.stdout).to_string())
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
/// failure carries stderr.
pub fn run_logged(command: &str, dir: &Path, actor: &str) -> Result<String> {
    let out = shell(command)
        .current_dir(dir)
        .env("HALL_ACTOR", actor)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| {
            HallError::new(
                Code::CommandFailed,
                format!("could not run `{command}`: {e}"),
            )
        })?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(HallError::new(
            Code::CommandFailed,
            format!(
                "`{command}` exited with {}: {}",
                out.status
                    .code()
                    .map(|c| c.to_string())
                    .unwrap_or_else(|| "a signal".into()),
                err.trim().lines().last().unwrap_or("")
            ),
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
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
