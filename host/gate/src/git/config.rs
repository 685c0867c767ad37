//! The configuration a git command is given for itself (`-c`, `--config-env`,
//! `GIT_CONFIG_*`, the environment variables git obeys): what it makes git run, and
//! what can't be followed.

use super::super::Effect;
use super::super::shell::Walker;
use super::super::words::Arg;

/// Environment variables that make git read configuration from a file.
pub(super) const CONFIG_FILE_ENV: &[&str] =
    &["GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG"];

/// Environment variables whose value git runs as a command.
pub(super) const COMMAND_ENV: &[&str] = &[
    "GIT_PROXY_COMMAND",
    "SSH_ASKPASS",
    "GIT_EDITOR",
    "GIT_SEQUENCE_EDITOR",
    "GIT_PAGER",
    "GIT_SSH_COMMAND",
    "GIT_EXTERNAL_DIFF",
    "GIT_ASKPASS",
    "GIT_SSH",
    "EDITOR",
    "VISUAL",
    "PAGER",
];

impl Walker<'_> {
    /// The value of a variable in a command's environment: its own assignments first,
    /// then literal assignments seen earlier in the line.
    pub(super) fn env_value(&self, env: &[(String, Arg)], name: &str) -> Option<Arg> {
        env.iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, a)| a.clone())
            .or_else(|| self.vars.get(name).map(|v| Arg::lit(v.clone())))
    }

    /// Config that reaches git through the environment (`GIT_CONFIG_PARAMETERS`,
    /// `GIT_CONFIG_KEY_n`/`GIT_CONFIG_VALUE_n`).
    pub(super) fn env_config(&self, env: &[(String, Arg)]) -> Vec<(String, Arg)> {
        let mut out = Vec::new();
        if let Some(p) = self.env_value(env, "GIT_CONFIG_PARAMETERS") {
            for (k, v) in parse_config_parameters(&p.text) {
                out.push((
                    k,
                    Arg {
                        text: v,
                        dynamic: p.dynamic,
                    },
                ));
            }
        }
        let mut names: Vec<String> = env.iter().map(|(n, _)| n.clone()).collect();
        names.extend(self.vars.keys().cloned());
        names.sort();
        names.dedup();
        for n in names {
            if let Some(idx) = n.strip_prefix("GIT_CONFIG_KEY_") {
                let key = self.env_value(env, &n);
                let value = self.env_value(env, &format!("GIT_CONFIG_VALUE_{idx}"));
                if let (Some(k), Some(v)) = (key, value) {
                    out.push((k.text.to_ascii_lowercase(), v));
                }
            }
        }
        out
    }

    /// `--config-env=KEY=ENVVAR`: the value comes from the named variable.
    pub(super) fn config_env(&self, kv: &Arg, env: &[(String, Arg)]) -> (String, Arg) {
        let (k, var) = kv.text.split_once('=').unwrap_or((kv.text.as_str(), ""));
        let value = self
            .env_value(env, var)
            .or_else(|| self.ctx.env_var(var).map(Arg::lit))
            .unwrap_or_else(|| Arg::dynamic(format!("${var}")));
        (k.to_ascii_lowercase(), value)
    }

    /// Config given for one command (`-c`, `--config-env`, `GIT_CONFIG_*`): values git
    /// runs as commands are followed; other keys that change what git runs, loads or
    /// where it sends things can't be.
    pub(super) fn command_config(&mut self, key: &str, value: &Arg) {
        if key == "core.hookspath" {
            let v = value.text.trim_end_matches('/');
            if value.dynamic || !(v.is_empty() || v == "/dev/null") {
                let reason = format!(
                    "core.hooksPath={} makes git run hooks the guard can't see",
                    value.text
                );
                self.unfollowable(reason);
            }
            return;
        }
        if key.ends_with(".fetch") && !value.dynamic && writes_notes_refspec(&value.text) {
            self.found(Effect::NoteWrite {
                how: format!("{key}={}", value.text),
            });
        }
        if key.starts_with("notes.") && (value.dynamic || value.text.contains("notes")) {
            self.found(Effect::NoteWrite {
                how: format!("{key}={} copies or writes notes", value.text),
            });
            return;
        }
        let last = key.rsplit('.').next().unwrap_or(key);
        let runs = matches!(
            last,
            "editor"
                | "pager"
                | "sshcommand"
                | "external"
                | "askpass"
                | "program"
                | "alternaterefscommand"
                | "textconv"
                | "command"
                | "cmd"
                | "driver"
                | "clean"
                | "smudge"
                | "process"
                | "gitproxy"
                | "uploadpack"
                | "receivepack"
                | "defaultkeycommand"
                | "packobjectshook"
                | "sendmailcmd"
                | "tocmd"
                | "cccmd"
                | "headercmd"
        ) || key.starts_with("pager.")
            || (key == "core.fsmonitor" && !matches!(value.text.as_str(), "true" | "false"));
        let helper = last == "helper" && (value.text.starts_with('!') || value.text.contains('/'));
        if runs || helper {
            let text = value.text.strip_prefix('!').unwrap_or(&value.text);
            self.command_value(
                key,
                &Arg {
                    text: text.to_owned(),
                    dynamic: value.dynamic,
                },
            );
            return;
        }
        let benign = key.starts_with("alias.")
            || key.starts_with("pager.")
            || last == "helper"
            || (key.starts_with("protocol.")
                && key.ends_with(".allow")
                && matches!(
                    key.split('.').nth(1),
                    Some("file" | "http" | "https" | "ssh" | "git")
                ))
            || key == "core.fsmonitor"
            || key == "push.default"
                && matches!(
                    value.text.as_str(),
                    "current" | "simple" | "upstream" | "nothing"
                );
        if !benign && super::super::judge::dangerous_config(key) {
            self.unfollowable(format!(
                "`-c {key}={}` changes what git runs, loads, or where it sends commits",
                value.text
            ));
        }
    }

    /// A value git will run through the shell: follow it.
    pub(super) fn command_value(&mut self, what: &str, value: &Arg) {
        if value.dynamic {
            self.unfollowable(format!("{what} is set to a command computed at run time"));
            return;
        }
        let text = value.text.clone();
        let saved = self.current.clone();
        self.with_outer(&[Arg::lit(saved.clone())], |w| w.analyze_str(&text));
        self.current = saved;
    }
}

/// `-c key=value` (a key alone means `true`).
pub(super) fn split_kv(a: &Arg) -> (String, Arg) {
    match a.text.split_once('=') {
        Some((k, v)) => (
            k.to_ascii_lowercase(),
            Arg {
                text: v.to_owned(),
                dynamic: a.dynamic,
            },
        ),
        None => (
            a.text.to_ascii_lowercase(),
            Arg {
                text: "true".to_owned(),
                dynamic: a.dynamic,
            },
        ),
    }
}

/// Whether a refspec's destination is under `refs/notes/`.
pub(super) fn writes_notes_refspec(spec: &str) -> bool {
    let spec = spec.trim_start_matches('+');
    match spec.split_once(':') {
        Some((_, dst)) => {
            let dst = dst.trim_start_matches('+');
            dst.starts_with("refs/notes") || dst.starts_with("notes/")
        }
        None => false,
    }
}

/// Parses `GIT_CONFIG_PARAMETERS`: `'key'='value'` pairs (or older `'key=value'`),
/// single-quoted with `'\''` escapes, separated by spaces.
pub(super) fn parse_config_parameters(s: &str) -> Vec<(String, String)> {
    let mut tokens: Vec<(String, bool)> = Vec::new(); // (text, followed by '=')
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\'' {
            continue;
        }
        let mut cur = String::new();
        while let Some(c) = chars.next() {
            if c == '\'' {
                // `'\''` continues the same token with a literal quote.
                if chars.peek() == Some(&'\\') {
                    chars.next();
                    chars.next();
                    chars.next();
                    cur.push('\'');
                    continue;
                }
                break;
            }
            cur.push(c);
        }
        let eq = chars.peek() == Some(&'=');
        if eq {
            chars.next();
        }
        tokens.push((cur, eq));
    }
    let mut out = Vec::new();
    let mut it = tokens.into_iter();
    while let Some((t, eq)) = it.next() {
        if eq {
            let v = it.next().map(|x| x.0).unwrap_or_default();
            out.push((t.to_ascii_lowercase(), v));
        } else if let Some((k, v)) = t.split_once('=') {
            out.push((k.to_ascii_lowercase(), v.to_owned()));
        }
    }
    out
}
