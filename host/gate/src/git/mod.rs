//! Follows a `git` invocation the way git itself would.
//!
//! Global options are skipped, configuration given on the command line or in the
//! environment is collected (aliases, editors, hooks paths, fetch refspecs), aliases are
//! expanded, and the subcommand is judged: pushes, note writes, commits, and the commands
//! git runs on our behalf (`rebase -x`, `bisect run`, `submodule foreach`…).

use super::classify::split_words;
use super::place::Place;
use super::shell::{Stdin, Walker};
use super::words::Arg;
use super::{Effect, Pushed};

mod config;
mod options;
mod remotes;
mod subcommands;

use config::{COMMAND_ENV, CONFIG_FILE_ENV, split_kv, writes_notes_refspec};
use options::{branch_operands, fast_import_refs, is_listing, rebase_operands};

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

impl Walker<'_> {
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
        let mut place: Place = self.place.clone();
        if let Some(d) = self.env_value(env, "GIT_DIR") {
            place = place.with_git_dir(&d);
        }
        if let Some(d) = self.env_value(env, "GIT_WORK_TREE") {
            place = place.with_work_tree(&d);
        }
        for name in [
            "GIT_COMMON_DIR",
            "GIT_OBJECT_DIRECTORY",
            "GIT_INDEX_FILE",
            "GIT_NAMESPACE",
        ] {
            if let Some(v) = self.env_value(env, name) {
                place.dynamic = true;
                self.unfollowable(format!("{name}={} points git at other files", v.text));
            }
        }

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
            let (opt, inline) = match t.split_once('=') {
                Some((o, v)) if t.starts_with("--") => (o, Some(v)),
                _ => (t, None),
            };
            let value = |i: &mut usize| -> Option<Arg> {
                match inline {
                    Some(v) => Some(Arg {
                        text: v.to_owned(),
                        dynamic: a.dynamic,
                    }),
                    None => {
                        *i += 1;
                        args.get(*i - 1).cloned()
                    }
                }
            };
            match opt {
                "-C" => {
                    if let Some(d) = value(&mut i) {
                        place = place.enter(&d);
                    }
                }
                "-c" => {
                    if let Some(kv) = value(&mut i) {
                        live.push(split_kv(&kv));
                    }
                }
                "--config-env" => {
                    if let Some(kv) = value(&mut i) {
                        let pair = self.config_env(&kv, env);
                        live.push(pair);
                    }
                }
                "--git-dir" => {
                    if let Some(d) = value(&mut i) {
                        place = place.with_git_dir(&d);
                    }
                }
                "--work-tree" => {
                    if let Some(d) = value(&mut i) {
                        place = place.with_work_tree(&d);
                    }
                }
                "--namespace" | "--super-prefix" | "--attr-source" | "--list-cmds" => {
                    let _ = value(&mut i);
                }
                "--version" | "-v" | "--help" | "-h" | "--html-path" | "--man-path"
                | "--info-path" => return,
                "--exec-path" => {
                    if let Some(p) = inline {
                        self.unfollowable(format!(
                            "`--exec-path={p}` makes git run its commands from elsewhere"
                        ));
                    } else {
                        // `git --exec-path` alone prints the path.
                        return;
                    }
                }
                _ => {
                    if let Some(kv) = t
                        .strip_prefix("-C")
                        .filter(|d| !d.is_empty() && !t.starts_with("--"))
                    {
                        place = place.enter(&Arg {
                            text: kv.to_owned(),
                            dynamic: a.dynamic,
                        });
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
            if v.dynamic && (k.contains('$') || k.contains('`')) {
                self.unfollowable(format!(
                    "git is given config whose key is computed at run time (`{k}`)"
                ));
                continue;
            }
            self.command_config(k, v);
        }
        for name in COMMAND_ENV {
            if let Some(v) = self.env_value(env, name) {
                self.command_value(name, &v);
            }
        }
        for name in CONFIG_FILE_ENV {
            if let Some(v) = self.env_value(env, name)
                && (v.text != "/dev/null" || v.dynamic)
            {
                self.unfollowable(format!(
                    "{name}={} makes git read configuration from a file the guard can't see",
                    v.text
                ));
            }
        }
        if let Some(p) = self.env_value(env, "GIT_EXEC_PATH") {
            self.unfollowable(format!(
                "GIT_EXEC_PATH={} makes git run its commands from elsewhere",
                p.text
            ));
        }
        if let Some(p) = self.env_value(env, "GIT_TEMPLATE_DIR") {
            self.unfollowable(format!(
                "GIT_TEMPLATE_DIR={} copies hooks into the repository it makes",
                p.text
            ));
        }
        if let Some(p) = self.env_value(env, "GIT_NOTES_REWRITE_REF")
            && (p.dynamic || p.text.contains("notes"))
        {
            self.found(Effect::NoteWrite {
                how: format!("GIT_NOTES_REWRITE_REF={} copies notes", p.text),
            });
        }
        if let Some(p) = self.env_value(env, "GIT_ALLOW_PROTOCOL")
            && (p.dynamic || p.text.split(':').any(|x| x == "ext" || x == "fd"))
        {
            self.unfollowable(format!(
                "GIT_ALLOW_PROTOCOL={} allows remotes that run commands",
                p.text
            ));
        }
        cfg.extend(live);

        if sub.dynamic || sub.text.contains(['*', '?', '[']) {
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
        // Options that make git run a program, however they are spelled.
        self.program_options(name, rest, args);
        let saved = std::mem::replace(&mut self.place, place.clone());
        self.git_sub(name, rest, args, i, &cfg, env, stdin, alias_depth);
        self.place = saved;
    }

    /// Judges one subcommand, with `self.place` set to where it acts.
    #[allow(clippy::too_many_arguments)]
    fn git_sub(
        &mut self,
        name: &str,
        rest: &[Arg],
        args: &[Arg],
        i: usize,
        cfg: &[(String, Arg)],
        env: &[(String, Arg)],
        stdin: &Stdin,
        alias_depth: usize,
    ) {
        let place = self.place.clone();
        match name {
            "push" => self.git_push(rest, stdin),
            "send-pack" | "http-push" | "receive-pack" => self.found(Effect::Push {
                how: format!("git {name}"),
                place,
                pushed: Pushed::Unknown(format!("through `git {name}`")),
            }),
            "send-email" | "request-pull" if name == "send-email" => self.found(Effect::Push {
                how: "git send-email".to_owned(),
                place,
                pushed: Pushed::Unknown("as mail".to_owned()),
            }),
            "subtree" => {
                if rest.iter().any(|a| a.text == "push") {
                    self.found(Effect::Push {
                        how: "git subtree push".to_owned(),
                        place,
                        pushed: Pushed::Unknown("a split history".to_owned()),
                    });
                } else if rest
                    .iter()
                    .any(|a| matches!(a.text.as_str(), "add" | "merge" | "pull" | "split"))
                {
                    self.repo_write("runs git subtree", Vec::new());
                }
            }
            "svn" | "p4" | "lfs" => {
                let push = rest.iter().any(|a| {
                    matches!(a.text.as_str(), "dcommit" | "set-tree" | "submit")
                        || (name == "lfs" && a.text == "push")
                });
                if push {
                    self.found(Effect::Push {
                        how: format!("git {name}"),
                        place,
                        pushed: Pushed::Unknown(format!("through `git {name}`")),
                    });
                }
            }
            "commit" => self.git_commit(rest),
            "notes" => self.git_notes(rest),
            "update-ref" => self.git_update_ref(rest, stdin),
            "symbolic-ref" => self.git_symbolic_ref(rest),
            "replace" => {
                let list = rest.is_empty()
                    || rest
                        .iter()
                        .any(|a| matches!(a.text.as_str(), "-l" | "--list" | "--format"))
                        && !rest.iter().any(|a| a.text == "-d" || a.text == "--delete");
                if !list {
                    self.repo_write("replaces objects with", vec![Arg::lit("refs/replace/")]);
                }
            }
            "fast-import" => match stdin {
                Stdin::Text(t) if !t.contains("refs/notes") && !t.contains("refs/replace") => {
                    let refs = fast_import_refs(t);
                    self.repo_write("imports into", refs);
                }
                Stdin::Text(_) => self.found(Effect::NoteWrite {
                    how: "git fast-import into refs/notes or refs/replace".to_owned(),
                }),
                _ => self.unfollowable(
                    "`git fast-import` writes refs named by input the guard can't see",
                ),
            },
            "fetch" | "pull" => self.git_fetch(name, rest, cfg),
            "clone" | "ls-remote" | "archive" | "init" => self.git_remote_commands(name, rest),
            "config" => self.git_config_cmd(rest),
            "remote" => self.git_remote(rest),
            "rebase" => {
                self.git_rebase(rest);
                // `git rebase UPSTREAM BRANCH` checks BRANCH out and moves it; the
                // upstream is only read.
                let operands = rebase_operands(rest);
                self.repo_write("rebases", operands.into_iter().skip(1).collect());
            }
            "bisect" => {
                if rest.first().is_some_and(|a| a.text == "run") && rest.len() > 1 {
                    let origin = origin("git", args);
                    self.with_outer(&origin, |w| {
                        w.current = super::shell::join_args(&rest[1..]);
                        w.classify(rest[1..].to_vec(), env.to_vec(), Stdin::Inherit)
                    });
                }
                if !rest
                    .first()
                    .is_some_and(|a| matches!(a.text.as_str(), "log" | "visualize" | "view"))
                {
                    self.repo_write("bisects, moving HEAD", Vec::new());
                }
            }
            "submodule" => {
                self.git_submodule(rest, args);
                if rest
                    .first()
                    .is_some_and(|a| !matches!(a.text.as_str(), "status" | "summary" | "foreach"))
                {
                    self.repo_write("changes submodules", Vec::new());
                }
            }
            "filter-branch" | "filter-repo" => {
                let mut j = 0;
                while j < rest.len() {
                    let t = rest[j].text.as_str();
                    if t.ends_with("-filter") || t == "--setup" || t.ends_with("-callback") {
                        if let Some(c) = rest.get(j + 1) {
                            self.git_runs(c, args);
                        }
                        j += 1;
                    }
                    j += 1;
                }
                self.repo_write(
                    "rewrites history of",
                    vec![Arg::dynamic("(every ref it rewrites)")],
                );
            }
            "for-each-repo" => {
                // Runs the rest as a git command in each configured repository.
                self.unfollowable(
                    "`git for-each-repo` runs a git command in repositories named by config",
                );
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
            "merge" => {
                if rest
                    .iter()
                    .any(|a| a.text == "--abort" || a.text == "--quit")
                {
                    self.repo_write("aborts a merge", Vec::new());
                } else {
                    self.merge_strategy(rest);
                    self.repo_write("merges", Vec::new());
                    self.git_tree_writes("merge", rest);
                }
            }
            "cherry-pick" | "revert" | "am" | "reset" | "restore" | "stash" | "clean" | "rm"
            | "mv" | "apply" | "read-tree" | "checkout-index" | "update-index"
            | "sparse-checkout" | "gc" | "prune" | "repack" | "pack-refs" | "reflog"
            | "maintenance" | "rerere" | "replay" | "commit-graph" | "multi-pack-index"
            | "unpack-objects" | "index-pack" | "prune-packed" | "pack-redundant"
            | "quiltimport" | "cvsimport" | "archimport" | "mergetool" | "refs" => {
                let reads = match name {
                    "reflog" => rest.first().is_none_or(|a| a.text == "show"),
                    "stash" => rest
                        .first()
                        .is_some_and(|a| matches!(a.text.as_str(), "list" | "show")),
                    "apply" => !rest
                        .iter()
                        .any(|a| matches!(a.text.as_str(), "--index" | "--cached")),
                    _ => false,
                };
                if !reads {
                    if name == "replay" {
                        self.repo_write("replays commits onto", branch_operands(rest, 0));
                    } else {
                        self.repo_write(&format!("runs `git {name}`"), Vec::new());
                    }
                }
                if name == "apply" || name == "am" {
                    // Without --index it patches files: the patch names them.
                    self.unknown_patch(stdin, rest);
                }
                if name == "update-index" {
                    self.git_update_index(rest, stdin);
                }
                self.git_tree_writes(name, rest);
            }
            "add" => {
                // Staging in another checkout prepares a commit there; in ours it is harmless.
                if !place.is_here() {
                    self.repo_write("stages files", Vec::new());
                }
            }
            "checkout" | "switch" => self.git_checkout(name, rest),
            "branch" => self.git_branch(rest),
            "tag" => {
                if !is_listing(rest) {
                    self.repo_write("tags", Vec::new());
                }
            }
            "worktree" => {
                if rest.first().is_none_or(|a| a.text != "list") {
                    self.repo_write(
                        &format!(
                            "runs `git worktree {}`",
                            rest.first().map(|a| a.text.as_str()).unwrap_or("")
                        ),
                        branch_operands(rest, 1),
                    );
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
            "format-patch" | "bundle" | "diagnose" | "bugreport" => {
                // They write files: `-o DIR`, the bundle file.
                for (j, a) in rest.iter().enumerate() {
                    if matches!(
                        a.text.as_str(),
                        "-o" | "--output-directory" | "--output" | "create"
                    ) && let Some(p) = rest.get(j + 1)
                    {
                        self.write_to(p, "writes");
                    }
                }
                if name == "bundle" && rest.first().is_some_and(|a| a.text == "unbundle") {
                    self.repo_write("unbundles into", Vec::new());
                }
            }
            n if n.starts_with("remote-") => {
                self.found(Effect::Push {
                    how: format!("git {n} (a remote helper)"),
                    place,
                    pushed: Pushed::Unknown("through a remote helper".to_owned()),
                });
            }
            n if GIT_COMMANDS.contains(&n) => {}
            n => self.git_alias(n, &args[..i], rest, cfg, env, stdin, alias_depth),
        }
    }

    /// Records a write to the repository at the current place.
    pub(super) fn repo_write(&mut self, how: &str, refs: Vec<Arg>) {
        self.found(Effect::RepoWrite {
            place: self.place.clone(),
            how: how.to_owned(),
            refs,
        });
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
