//! What a git subcommand's own options and operands do: the options that run a program
//! in every spelling git accepts, what `git push` sends, and the refs other commands
//! name.

use super::super::shell::{Stdin, Walker};
use super::super::words::Arg;
use super::super::{Effect, Pushed};

impl Walker<'_> {
    /// `git merge -s STRATEGY` runs `git-merge-STRATEGY`, found on the exec path or PATH.
    pub(super) fn merge_strategy(&mut self, rest: &[Arg]) {
        for (j, a) in rest.iter().enumerate() {
            let t = a.text.as_str();
            let strategy = if t == "-s" || t == "--strategy" {
                rest.get(j + 1).cloned()
            } else {
                t.strip_prefix("--strategy=")
                    .or_else(|| t.strip_prefix("-s").filter(|v| !v.is_empty()))
                    .map(|v| Arg {
                        text: v.to_owned(),
                        dynamic: a.dynamic,
                    })
            };
            if let Some(s) = strategy
                && (s.dynamic
                    || !matches!(
                        s.text.as_str(),
                        "ort" | "recursive" | "resolve" | "octopus" | "ours" | "subtree"
                    ))
            {
                self.unfollowable(format!(
                    "the merge strategy `{}` runs a program named git-merge-{}",
                    s.text, s.text
                ));
            }
        }
    }

    /// `git apply` without `--index` patches the files its patch names.
    pub(super) fn unknown_patch(&mut self, stdin: &Stdin, rest: &[Arg]) {
        let files: Vec<&Arg> = rest.iter().filter(|a| !a.text.starts_with('-')).collect();
        let mut texts: Vec<Option<String>> = files.iter().map(|f| self.script_text(f)).collect();
        if files.is_empty() {
            texts.push(match stdin {
                Stdin::Text(t) => Some(t.clone()),
                _ => None,
            });
        }
        for t in texts {
            match t {
                Some(t) => {
                    if t.lines().any(|l| {
                        l.ends_with(" 120000") || l.starts_with("index ") && l.ends_with(" 120000")
                    }) {
                        self.unfollowable(
                            "the patch makes a symbolic link (mode 120000), whose target the guard doesn't follow",
                        );
                    }
                    for line in t.lines() {
                        if let Some(p) = line
                            .strip_prefix("+++ ")
                            .or_else(|| line.strip_prefix("--- "))
                            && p != "/dev/null"
                        {
                            let p = p.trim_start_matches("a/").trim_start_matches("b/");
                            self.write_to(&Arg::lit(p), "patches");
                        }
                        if let Some(p) = line.strip_prefix("diff --git ") {
                            for part in p.split_whitespace() {
                                let part = part.trim_start_matches("a/").trim_start_matches("b/");
                                self.write_to(&Arg::lit(part), "patches");
                            }
                        }
                    }
                }
                None => self
                    .unfollowable("`git apply` patches files named in a patch the guard can't see"),
            }
        }
    }

    /// Options that make git run a program, in any spelling git accepts: `--exec=cmd`,
    /// `--exec cmd`, an unambiguous prefix such as `--ex=cmd`, `-xcmd`, `-x cmd`.
    pub(super) fn program_options(&mut self, name: &str, rest: &[Arg], args: &[Arg]) {
        let (long, short): (&[&str], &str) = match name {
            "rebase" => (&["exec"], "x"),
            "clone" => (&["upload-pack", "template"], "u"),
            "ls-remote" => (&["upload-pack", "exec"], "u"),
            "fetch" | "pull" => (&["upload-pack"], ""),
            "push" | "send-pack" => (&["receive-pack", "exec"], ""),
            "archive" => (&["exec"], ""),
            "init" => (&["template"], ""),
            "grep" => (&["open-files-in-pager"], "O"),
            "difftool" => (&["extcmd"], "x"),
            "send-email" => (
                &[
                    "sendmail-cmd",
                    "to-cmd",
                    "cc-cmd",
                    "header-cmd",
                    "smtp-server",
                ],
                "",
            ),
            "daemon" => (&["access-hook"], ""),
            "instaweb" => (&["httpd", "browser"], ""),
            _ => return,
        };
        let mut i = 0;
        while let Some(a) = rest.get(i) {
            i += 1;
            let t = a.text.as_str();
            if t == "--" {
                break;
            }
            if let Some(body) = t.strip_prefix("--") {
                let (opt, inline) = match body.split_once('=') {
                    Some((o, v)) => (o, Some(v)),
                    None => (body, None),
                };
                if opt.is_empty() {
                    continue;
                }
                let Some(full) = long.iter().find(|l| l.starts_with(opt)) else {
                    continue;
                };
                let value = match inline {
                    Some(v) => Some(Arg {
                        text: v.to_owned(),
                        dynamic: a.dynamic,
                    }),
                    None => {
                        i += 1;
                        rest.get(i - 1).cloned()
                    }
                };
                let Some(v) = value else { continue };
                if *full == "template" {
                    self.unfollowable(format!(
                        "`--template={}` copies hooks into the repository",
                        v.text
                    ));
                } else if *full == "smtp-server" && !v.text.starts_with('/') {
                    // A host name, not a program.
                } else {
                    self.git_runs(&v, args);
                }
                continue;
            }
            if short.is_empty() || !t.starts_with('-') || t.len() < 2 || a.dynamic {
                continue;
            }
            for (k, c) in t[1..].char_indices() {
                if short.contains(c) {
                    let after = &t[1 + k + c.len_utf8()..];
                    let value = if after.is_empty() {
                        i += 1;
                        rest.get(i - 1).cloned()
                    } else {
                        Some(Arg {
                            text: after.to_owned(),
                            dynamic: a.dynamic,
                        })
                    };
                    if let Some(v) = value {
                        self.git_runs(&v, args);
                    }
                    break;
                }
            }
        }
    }

    /// `git push [options] [REMOTE [REFSPEC…]]`: what it sends, from where.
    pub(super) fn git_push(&mut self, rest: &[Arg], stdin: &Stdin) {
        const VALUE: &[&str] = &[
            "--repo",
            "--receive-pack",
            "--exec",
            "-o",
            "--push-option",
            "--signed",
            "--force-with-lease",
            "--recurse-submodules",
        ];
        let mut operands: Vec<Arg> = Vec::new();
        let mut unknown: Option<String> = None;
        let mut repo_opt = false;
        let mut i = 0;
        let mut only_operands = false;
        while let Some(a) = rest.get(i) {
            i += 1;
            let t = a.text.as_str();
            if only_operands || a.dynamic || !t.starts_with('-') {
                operands.push(a.clone());
                continue;
            }
            if t == "--" {
                only_operands = true;
                continue;
            }
            let opt = t.split_once('=').map_or(t, |(o, _)| o);
            match opt {
                "--all" | "--branches" | "--mirror" => unknown = Some("every branch".to_owned()),
                "--tags" => unknown = Some("every tag".to_owned()),
                "--prune" => unknown = Some("deletions of remote branches".to_owned()),
                "-d" | "--delete" => unknown = Some("deletions".to_owned()),
                "--stdin" => unknown = Some("refspecs read from its input".to_owned()),
                "--recurse-submodules" if t.ends_with("=on-demand") || t.ends_with("=only") => {
                    unknown = Some("submodule commits".to_owned())
                }
                "--repo" => repo_opt = true,
                _ => {}
            }
            if VALUE.contains(&opt)
                && !t.contains('=')
                && opt != "--force-with-lease"
                && opt != "--signed"
                && opt != "--recurse-submodules"
            {
                i += 1;
            }
            // A short cluster may end in -o, which takes a value.
            if !t.starts_with("--") && t.ends_with('o') {
                i += 1;
            }
        }
        let _ = stdin;
        let refspecs: Vec<Arg> = if repo_opt {
            operands
        } else {
            operands.into_iter().skip(1).collect()
        };
        let pushed = match unknown {
            Some(what) => Pushed::Unknown(what),
            None if refspecs.is_empty() => Pushed::Current,
            None => Pushed::Refspecs(refspecs),
        };
        self.found(Effect::Push {
            how: "git push".to_owned(),
            place: self.place.clone(),
            pushed,
        });
    }
}

/// Whether `git tag` only lists: no operands, or a listing option.
pub(super) fn is_listing(rest: &[Arg]) -> bool {
    rest.is_empty()
        || rest.iter().any(|a| {
            matches!(
                a.text.as_str(),
                "-l" | "--list"
                    | "-n"
                    | "--contains"
                    | "--no-contains"
                    | "--points-at"
                    | "--merged"
                    | "--no-merged"
                    | "--sort"
                    | "--format"
                    | "-v"
                    | "--verify"
            ) || a.text.starts_with("--sort=")
                || a.text.starts_with("--format=")
                || a.text.starts_with("--contains=")
        }) && !rest.iter().any(|a| {
            matches!(
                a.text.as_str(),
                "-d" | "--delete" | "-f" | "--force" | "-a" | "-s" | "-m" | "-F"
            )
        })
}

/// The operands of a command after skipping `skip` of them (the verb of `git worktree`).
pub(super) fn branch_operands(rest: &[Arg], skip: usize) -> Vec<Arg> {
    let mut out: Vec<Arg> = Vec::new();
    let mut seen = 0;
    let mut i = 0;
    while let Some(a) = rest.get(i) {
        i += 1;
        let t = a.text.as_str();
        if matches!(
            t,
            "-b" | "-B" | "--onto" | "--branch" | "--contained" | "--ref"
        ) {
            if let Some(v) = rest.get(i) {
                out.push(v.clone());
            }
            i += 1;
            continue;
        }
        if t.starts_with('-') && !a.dynamic {
            continue;
        }
        if seen >= skip {
            out.push(a.clone());
        }
        seen += 1;
    }
    out
}

/// `git rebase`'s operands, skipping the values of options that take one.
pub(super) fn rebase_operands(rest: &[Arg]) -> Vec<Arg> {
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(a) = rest.get(i) {
        i += 1;
        let t = a.text.as_str();
        if matches!(
            t,
            "-x" | "--exec"
                | "-s"
                | "--strategy"
                | "-X"
                | "--strategy-option"
                | "--onto"
                | "-C"
                | "--empty"
                | "--whitespace"
        ) {
            i += 1;
            continue;
        }
        if t.starts_with('-') && !a.dynamic {
            continue;
        }
        out.push(a.clone());
    }
    out
}

/// The refs a fast-import stream writes (`commit REF`, `reset REF`, `tag NAME`).
pub(super) fn fast_import_refs(text: &str) -> Vec<Arg> {
    text.lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            match w.next()? {
                "commit" | "reset" => w.next().map(Arg::lit),
                "tag" => w.next().map(|t| Arg::lit(format!("refs/tags/{t}"))),
                _ => None,
            }
        })
        .collect()
}
