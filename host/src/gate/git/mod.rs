//! Follows a `git` invocation the way git itself would.
//!
//! Global options are skipped, configuration given on the command line or in the
//! environment is collected (aliases, editors, hooks paths, fetch refspecs), aliases are
//! expanded, and the subcommand is judged: pushes, note writes, commits, and the commands
//! git runs on our behalf (`rebase -x`, `bisect run`, `submodule foreach`…).

use super::Effect;
use super::classify::split_words;
use super::shell::{Stdin, Walker};
use super::words::Arg;

mod subcommands;

/// How many aliases may expand into each other before we call it a loop.
const MAX_ALIAS_DEPTH: usize = 8;

/// git's own commands. Aliases never override these, so an alias lookup happens only
/// for names outside this list.
const GIT_COMMANDS: &[&str] = &[
    "add",
    "am",
    "annotate",
    "apply",
    "archimport",
    "archive",
    "backfill",
    "bisect",
    "blame",
    "branch",
    "bugreport",
    "bundle",
    "cat-file",
    "check-attr",
    "check-ignore",
    "check-mailmap",
    "check-ref-format",
    "checkout",
    "checkout-index",
    "cherry",
    "cherry-pick",
    "citool",
    "clean",
    "clone",
    "column",
    "commit",
    "commit-graph",
    "commit-tree",
    "config",
    "count-objects",
    "credential",
    "credential-cache",
    "credential-store",
    "cvsexportcommit",
    "cvsimport",
    "cvsserver",
    "daemon",
    "describe",
    "diagnose",
    "diff",
    "diff-files",
    "diff-index",
    "diff-pairs",
    "diff-tree",
    "difftool",
    "fast-export",
    "fast-import",
    "fetch",
    "fetch-pack",
    "filter-branch",
    "fmt-merge-msg",
    "for-each-ref",
    "for-each-repo",
    "format-patch",
    "fsck",
    "fsck-objects",
    "fsmonitor--daemon",
    "gc",
    "get-tar-commit-id",
    "gitk",
    "gitweb",
    "grep",
    "gui",
    "hash-object",
    "help",
    "hook",
    "http-backend",
    "http-fetch",
    "http-push",
    "imap-send",
    "index-pack",
    "init",
    "init-db",
    "instaweb",
    "interpret-trailers",
    "last-modified",
    "log",
    "ls-files",
    "ls-remote",
    "ls-tree",
    "mailinfo",
    "mailsplit",
    "maintenance",
    "merge",
    "merge-base",
    "merge-file",
    "merge-index",
    "merge-one-file",
    "merge-tree",
    "mergetool",
    "mktag",
    "mktree",
    "multi-pack-index",
    "mv",
    "name-rev",
    "notes",
    "p4",
    "pack-objects",
    "pack-redundant",
    "pack-refs",
    "patch-id",
    "prune",
    "prune-packed",
    "pull",
    "push",
    "quiltimport",
    "range-diff",
    "read-tree",
    "rebase",
    "receive-pack",
    "reflog",
    "refs",
    "remote",
    "repack",
    "replace",
    "replay",
    "repo",
    "request-pull",
    "rerere",
    "reset",
    "restore",
    "rev-list",
    "rev-parse",
    "revert",
    "rm",
    "send-email",
    "send-pack",
    "sh-i18n",
    "sh-setup",
    "shortlog",
    "show",
    "show-branch",
    "show-index",
    "show-ref",
    "sparse-checkout",
    "stage",
    "stash",
    "status",
    "stripspace",
    "submodule",
    "subtree",
    "svn",
    "switch",
    "symbolic-ref",
    "tag",
    "unpack-file",
    "unpack-objects",
    "update-index",
    "update-ref",
    "update-server-info",
    "upload-archive",
    "upload-pack",
    "var",
    "verify-commit",
    "verify-pack",
    "verify-tag",
    "version",
    "whatchanged",
    "worktree",
    "write-tree",
    "lfs",
];

/// Environment variables whose value git runs as a command.
const COMMAND_ENV: &[&str] = &[
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
    fn env_value(&self, env: &[(String, Arg)], name: &str) -> Option<Arg> {
        env.iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, a)| a.clone())
            .or_else(|| self.vars.get(name).map(|v| Arg::lit(v.clone())))
    }

    /// Config that reaches git through the environment (`GIT_CONFIG_PARAMETERS`,
    /// `GIT_CONFIG_KEY_n`/`GIT_CONFIG_VALUE_n`).
    fn env_config(&self, env: &[(String, Arg)]) -> Vec<(String, Arg)> {
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

    /// Analyzes one `git` invocation; `args` excludes the word `git` itself.
    pub(super) fn git(
        &mut self,
        args: &[Arg],
        env: &[(String, Arg)],
        stdin: &Stdin,
        alias_depth: usize,
    ) {
        let mut cfg: Vec<(String, Arg)> = self
            .git_config
            .iter()
            .map(|(k, v)| (k.clone(), Arg::lit(v.clone())))
            .collect();
        let mut live: Vec<(String, Arg)> = self.env_config(env);
        let mut dir: Option<String> = self.cwd.clone();

        // Global options come before the subcommand.
        let mut i = 0;
        let sub = loop {
            let Some(a) = args.get(i) else {
                // `git`, `git --version`, `git -C x`: nothing runs.
                return;
            };
            let t = a.text.as_str();
            if a.dynamic && t.starts_with('-') {
                self.unfollowable(format!("git is given a computed option `{t}`"));
                return;
            }
            if a.dynamic || !t.starts_with('-') {
                break a.clone();
            }
            i += 1;
            match t {
                "-C" => {
                    if let Some(d) = args.get(i) {
                        dir = Some(match dir {
                            Some(prev) if !d.text.starts_with('/') => format!("{prev}/{}", d.text),
                            _ => d.text.clone(),
                        });
                    }
                    i += 1;
                }
                "-c" => {
                    if let Some(kv) = args.get(i) {
                        live.push(split_kv(kv));
                    }
                    i += 1;
                }
                "--config-env" => {
                    if let Some(kv) = args.get(i) {
                        let pair = self.config_env(kv, env);
                        live.push(pair);
                    }
                    i += 1;
                }
                "--git-dir" | "--work-tree" | "--namespace" | "--super-prefix"
                | "--attr-source" => i += 1,
                "--version" | "-v" | "--help" | "-h" | "--exec-path" | "--html-path"
                | "--man-path" | "--info-path" => return,
                _ => {
                    if let Some(kv) = t.strip_prefix("--config-env=") {
                        let pair = self.config_env(
                            &Arg {
                                text: kv.to_owned(),
                                dynamic: a.dynamic,
                            },
                            env,
                        );
                        live.push(pair);
                    } else if let Some(path) = t.strip_prefix("--exec-path=") {
                        let reason = format!(
                            "`--exec-path={path}` makes git run its commands from elsewhere"
                        );
                        self.unfollowable(reason);
                    } else if t.starts_with("--list-cmds") {
                        return;
                    } else if let Some(kv) = t.strip_prefix("-c")
                        && !kv.is_empty()
                        && !t.starts_with("--")
                    {
                        live.push(split_kv(&Arg {
                            text: kv.to_owned(),
                            dynamic: a.dynamic,
                        }));
                    }
                }
            }
        };
        let rest = &args[i + 1..];

        // Configuration git will act on by running commands.
        for (k, v) in &live {
            self.command_config(k, v);
        }
        for name in COMMAND_ENV {
            if let Some(v) = self.env_value(env, name) {
                self.command_value(name, &v);
            }
        }
        if let Some(p) = self.env_value(env, "GIT_EXEC_PATH") {
            self.unfollowable(format!(
                "GIT_EXEC_PATH={} makes git run its commands from elsewhere",
                p.text
            ));
        }
        cfg.extend(live);

        if sub.dynamic {
            self.unfollowable(format!(
                "the git subcommand `{}` is computed at run time",
                sub.text
            ));
            return;
        }
        let name = sub.text.as_str();
        // `git push --help` is rewritten by git to `git help push`: it only shows a page.
        if rest
            .first()
            .is_some_and(|a| a.text == "--help" || a.text == "-h")
        {
            return;
        }
        match name {
            "push" | "send-pack" | "http-push" => {
                self.found(Effect::Push {
                    how: format!("git {name}"),
                });
            }
            "send-email" => self.found(Effect::Push {
                how: "git send-email".to_owned(),
            }),
            "subtree" => {
                if rest.iter().any(|a| a.text == "push") {
                    self.found(Effect::Push {
                        how: "git subtree push".to_owned(),
                    });
                }
            }
            "svn" => {
                if rest
                    .iter()
                    .any(|a| a.text == "dcommit" || a.text == "set-tree")
                {
                    self.found(Effect::Push {
                        how: "git svn dcommit".to_owned(),
                    });
                }
            }
            "p4" => {
                if rest.iter().any(|a| a.text == "submit") {
                    self.found(Effect::Push {
                        how: "git p4 submit".to_owned(),
                    });
                }
            }
            "lfs" => {
                if rest.first().is_some_and(|a| a.text == "push") {
                    self.found(Effect::Push {
                        how: "git lfs push".to_owned(),
                    });
                }
            }
            "commit" => self.git_commit(rest, dir),
            "notes" => self.git_notes(rest),
            "update-ref" => self.git_update_ref(rest, stdin),
            "fast-import" => {
                if let Stdin::Text(t) = stdin
                    && t.contains("refs/notes")
                {
                    self.found(Effect::NoteWrite {
                        how: "git fast-import into refs/notes".to_owned(),
                    });
                }
            }
            "fetch" | "pull" => self.git_fetch(name, rest, &cfg),
            "clone" | "ls-remote" | "archive" => self.git_remote_commands(rest),
            "config" => self.git_config_cmd(rest),
            "rebase" => self.git_rebase(rest),
            "bisect" => {
                if rest.first().is_some_and(|a| a.text == "run") && rest.len() > 1 {
                    let origin = origin("git", args);
                    self.with_outer(&origin, |w| {
                        w.current = super::shell::join_args(&rest[1..]);
                        w.classify(rest[1..].to_vec(), env.to_vec(), Stdin::Inherit)
                    });
                }
            }
            "submodule" => self.git_submodule(rest, args),
            "filter-branch" => {
                let mut j = 0;
                while j < rest.len() {
                    let t = rest[j].text.as_str();
                    if t.ends_with("-filter") || t == "--setup" {
                        if let Some(c) = rest.get(j + 1) {
                            self.git_runs(c, args);
                        }
                        j += 1;
                    }
                    j += 1;
                }
            }
            "difftool" => {
                for (j, a) in rest.iter().enumerate() {
                    if let Some(c) = a.text.strip_prefix("--extcmd=") {
                        let c = Arg {
                            text: c.to_owned(),
                            dynamic: a.dynamic,
                        };
                        self.git_runs(&c, args);
                    } else if (a.text == "-x" || a.text == "--extcmd")
                        && let Some(c) = rest.get(j + 1)
                    {
                        self.git_runs(c, args);
                    }
                }
            }
            "grep" => {
                for a in rest {
                    let cmd = a
                        .text
                        .strip_prefix("--open-files-in-pager=")
                        .or_else(|| a.text.strip_prefix("-O").filter(|c| !c.is_empty()));
                    if let Some(c) = cmd {
                        let c = Arg {
                            text: c.to_owned(),
                            dynamic: a.dynamic,
                        };
                        self.git_runs(&c, args);
                    }
                }
            }
            "for-each-repo" => {
                // Runs the rest as a git command in each configured repository.
                let skip = rest
                    .iter()
                    .take_while(|a| a.text.starts_with("--config"))
                    .count();
                self.git(&rest[skip..], env, stdin, alias_depth + 1);
            }
            "hook" => {
                if rest.first().is_some_and(|a| a.text == "run") {
                    let hook = rest.get(1).map(|a| a.text.clone()).unwrap_or_default();
                    self.unfollowable(format!("`git hook run {hook}` runs a repository hook"));
                }
            }
            n if n.starts_with("remote-") => {
                self.found(Effect::Push {
                    how: format!("git {n} (a remote helper)"),
                });
            }
            n if GIT_COMMANDS.contains(&n) => {}
            n => self.git_alias(n, &args[..i], rest, &cfg, env, stdin, alias_depth),
        }
    }

    /// Resolves a non-builtin subcommand through aliases, or reports it unfollowable.
    #[allow(clippy::too_many_arguments)]
    fn git_alias(
        &mut self,
        name: &str,
        globals: &[Arg],
        rest: &[Arg],
        cfg: &[(String, Arg)],
        env: &[(String, Arg)],
        stdin: &Stdin,
        alias_depth: usize,
    ) {
        let key = format!("alias.{}", name.to_ascii_lowercase());
        let value = match cfg.iter().rev().find(|(k, _)| *k == key) {
            Some((_, v)) => Some(v.clone()),
            None => self.ctx.git_alias(name).map(Arg::lit),
        };
        let Some(value) = value else {
            self.unfollowable(format!(
                "`git {name}` is not a git command the guard knows, nor an alias"
            ));
            return;
        };
        if value.dynamic {
            self.unfollowable(format!(
                "the alias `{name}` comes from a value computed at run time"
            ));
            return;
        }
        if alias_depth >= MAX_ALIAS_DEPTH {
            self.unfollowable(format!("the alias `{name}` expands into too many aliases"));
            return;
        }
        let mut origin = vec![Arg::lit("git")];
        origin.extend(globals.iter().cloned());
        origin.push(Arg::lit(name));
        origin.extend(rest.iter().cloned());
        if let Some(shell) = value.text.strip_prefix('!') {
            // git runs a `!` alias through the shell, with the arguments appended.
            self.run_text_with_args(shell, rest, &origin);
            return;
        }
        let mut expanded: Vec<Arg> = globals.to_vec();
        expanded.extend(split_words(&value.text, false));
        expanded.extend(rest.iter().cloned());
        self.with_outer(&origin, |w| {
            let mut cur = vec![Arg::lit("git")];
            cur.extend(expanded.iter().cloned());
            w.current = super::shell::join_args(&cur);
            w.git(&expanded, env, stdin, alias_depth + 1)
        });
    }

    /// `--config-env=KEY=ENVVAR`: the value comes from the named variable.
    fn config_env(&self, kv: &Arg, env: &[(String, Arg)]) -> (String, Arg) {
        let (k, var) = kv.text.split_once('=').unwrap_or((kv.text.as_str(), ""));
        let value = self
            .env_value(env, var)
            .or_else(|| self.ctx.env_var(var).map(Arg::lit))
            .unwrap_or_else(|| Arg::dynamic(format!("${var}")));
        (k.to_ascii_lowercase(), value)
    }

    /// Config keys whose value git runs as a command, or that point git at commands.
    fn command_config(&mut self, key: &str, value: &Arg) {
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
        let runs = matches!(
            key,
            "core.editor"
                | "sequence.editor"
                | "core.pager"
                | "core.sshcommand"
                | "diff.external"
                | "core.askpass"
                | "gpg.program"
                | "core.alternaterefscommand"
        ) || key.starts_with("pager.")
            || (key.starts_with("diff.")
                && (key.ends_with(".textconv") || key.ends_with(".command")))
            || (key.starts_with("filter.")
                && (key.ends_with(".clean")
                    || key.ends_with(".smudge")
                    || key.ends_with(".process")))
            || (key.starts_with("merge.") && key.ends_with(".driver"))
            || (key.starts_with("gpg.") && key.ends_with(".program"))
            || (key == "core.fsmonitor" && !matches!(value.text.as_str(), "true" | "false"));
        let helper = (key == "credential.helper"
            || (key.starts_with("credential.") && key.ends_with(".helper")))
            && (value.text.starts_with('!') || value.text.contains('/'));
        if runs || helper {
            let text = value.text.strip_prefix('!').unwrap_or(&value.text);
            self.command_value(
                key,
                &Arg {
                    text: text.to_owned(),
                    dynamic: value.dynamic,
                },
            );
        }
    }

    /// A value git will run through the shell: follow it.
    fn command_value(&mut self, what: &str, value: &Arg) {
        if value.dynamic {
            self.unfollowable(format!("{what} is set to a command computed at run time"));
            return;
        }
        let text = value.text.clone();
        let saved = self.current.clone();
        self.with_outer(&[Arg::lit(saved.clone())], |w| w.analyze_str(&text));
        self.current = saved;
    }

    /// A command git runs for us (`rebase -x`, `filter-branch --tree-filter`…).
    fn git_runs(&mut self, c: &Arg, args: &[Arg]) {
        if c.dynamic {
            self.unfollowable(format!(
                "git is told to run `{}`, computed at run time",
                c.text
            ));
            return;
        }
        let text = c.text.clone();
        let origin = origin("git", args);
        self.with_outer(&origin, |w| w.analyze_str(&text));
    }
}

/// `git ARGS…` as an argv, for [`super::Finding::within`].
fn origin(cmd: &str, args: &[Arg]) -> Vec<Arg> {
    let mut v = vec![Arg::lit(cmd)];
    v.extend(args.iter().cloned());
    v
}

/// `-c key=value` (a key alone means `true`).
fn split_kv(a: &Arg) -> (String, Arg) {
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
fn writes_notes_refspec(spec: &str) -> bool {
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
fn parse_config_parameters(s: &str) -> Vec<(String, String)> {
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
