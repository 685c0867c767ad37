//! The git subcommands judged one by one: commits (and the hooks and editors they
//! run), note writes, `update-ref`, branches, checkouts and other working-tree writes,
//! `config`, and the commands git runs for us in `rebase -x` and `submodule foreach`.
//! The subcommands that reach another repository are in `remotes`.

use super::*;
use crate::shell::quote;

impl Walker<'_> {
    pub(super) fn git_commit(&mut self, rest: &[Arg]) {
        const SHORT_VALUE: &str = "mFCct";
        const LONG_VALUE: &[&str] = &[
            "--message",
            "--file",
            "--reuse-message",
            "--reedit-message",
            "--author",
            "--date",
            "--template",
            "--fixup",
            "--squash",
            "--cleanup",
            "--trailer",
        ];
        let mut pathspecs = Vec::new();
        let mut all = false;
        let mut unknown = false;
        let mut i = 0;
        let mut only_paths = false;
        while let Some(a) = rest.get(i) {
            i += 1;
            let t = a.text.as_str();
            if only_paths || a.dynamic || !t.starts_with('-') || t == "-" {
                if a.dynamic {
                    unknown = true;
                } else {
                    pathspecs.push(t.to_owned());
                }
                continue;
            }
            if t == "--" {
                only_paths = true;
                continue;
            }
            if let Some(long) = t.strip_prefix("--") {
                if long == "dry-run" {
                    return;
                }
                if long == "all" {
                    all = true;
                }
                if long.starts_with("pathspec-from-file") {
                    unknown = true;
                }
                if !long.contains('=') && (LONG_VALUE.contains(&t) || t == "--pathspec-from-file") {
                    i += 1;
                }
                continue;
            }
            for (k, c) in t[1..].char_indices() {
                if c == 'a' {
                    all = true;
                }
                if SHORT_VALUE.contains(c) {
                    if k + 2 == t.len() {
                        i += 1;
                    }
                    break;
                }
            }
        }
        self.found(Effect::Commit {
            pathspecs,
            all,
            paths_unknown: unknown,
            place: self.place.clone(),
        });
    }

    pub(super) fn git_notes(&mut self, rest: &[Arg]) {
        let mut i = 0;
        while let Some(a) = rest.get(i) {
            if a.text == "--ref" {
                i += 2;
            } else if a.text.starts_with("--ref=") || a.text.starts_with('-') && !a.dynamic {
                i += 1;
            } else {
                break;
            }
        }
        let Some(sub) = rest.get(i) else {
            return; // `git notes` lists.
        };
        if sub.dynamic {
            self.found(Effect::NoteWrite {
                how: format!("git notes {} (computed)", sub.text),
            });
            return;
        }
        match sub.text.as_str() {
            "list" | "show" | "get-ref" => {}
            other => self.found(Effect::NoteWrite {
                how: format!("git notes {other}"),
            }),
        }
    }

    pub(super) fn git_update_ref(&mut self, rest: &[Arg], stdin: &Stdin) {
        if rest.iter().any(|a| a.text == "--stdin") {
            match stdin {
                Stdin::Text(t) => {
                    let refs: Vec<Arg> = t
                        .lines()
                        .filter_map(|l| {
                            let mut w = l.split_whitespace();
                            let verb = w.next()?;
                            matches!(
                                verb,
                                "update"
                                    | "create"
                                    | "delete"
                                    | "verify"
                                    | "symref-update"
                                    | "symref-create"
                                    | "symref-delete"
                            )
                            .then(|| w.next().map(Arg::lit))
                            .flatten()
                        })
                        .collect();
                    if t.contains("refs/notes") {
                        self.found(Effect::NoteWrite {
                            how: "git update-ref --stdin on refs/notes".to_owned(),
                        });
                    }
                    self.repo_write("updates", refs);
                }
                _ => self.unfollowable(
                    "`git update-ref --stdin` changes refs named by input the guard can't see",
                ),
            }
            return;
        }
        let mut i = 0;
        while let Some(a) = rest.get(i) {
            i += 1;
            if a.text == "-m" {
                i += 1;
                continue;
            }
            if a.text.starts_with('-') && !a.dynamic {
                continue;
            }
            if !a.dynamic && (a.text.starts_with("refs/notes") || a.text.starts_with("notes/")) {
                self.found(Effect::NoteWrite {
                    how: format!("git update-ref {}", a.text),
                });
            }
            // Only the first operand names the ref; the rest are object names.
            self.repo_write("updates", vec![a.clone()]);
            return;
        }
    }

    /// `git symbolic-ref NAME` reads; `git symbolic-ref NAME REF` and `-d NAME` write.
    pub(super) fn git_symbolic_ref(&mut self, rest: &[Arg]) {
        let mut delete = false;
        let mut operands: Vec<Arg> = Vec::new();
        let mut i = 0;
        while let Some(a) = rest.get(i) {
            i += 1;
            match a.text.as_str() {
                "-m" => i += 1,
                "-d" | "--delete" => delete = true,
                t if t.starts_with('-') && !a.dynamic => {}
                _ => operands.push(a.clone()),
            }
        }
        if delete || operands.len() >= 2 {
            if operands.iter().any(|o| o.text.contains("refs/notes")) {
                self.found(Effect::NoteWrite {
                    how: "git symbolic-ref on refs/notes".to_owned(),
                });
            }
            self.repo_write("points a symbolic ref at", operands);
        }
    }

    /// `git checkout`/`git switch`: moves HEAD (to a branch it names, or creates) or
    /// restores files.
    pub(super) fn git_checkout(&mut self, name: &str, rest: &[Arg]) {
        let mut refs: Vec<Arg> = Vec::new();
        let mut i = 0;
        let mut after_dashes = false;
        let mut first_operand = true;
        while let Some(a) = rest.get(i) {
            i += 1;
            let t = a.text.as_str();
            if after_dashes {
                continue;
            }
            if t == "--" {
                after_dashes = true;
                continue;
            }
            if matches!(
                t,
                "-b" | "-B" | "-c" | "-C" | "--orphan" | "--create" | "--force-create"
            ) {
                if let Some(b) = rest.get(i) {
                    refs.push(b.clone());
                }
                i += 1;
                continue;
            }
            if let Some(v) = t
                .strip_prefix("--orphan=")
                .or_else(|| t.strip_prefix("--create="))
            {
                refs.push(Arg {
                    text: v.to_owned(),
                    dynamic: a.dynamic,
                });
                continue;
            }
            if matches!(t, "--conflict" | "--pathspec-from-file") {
                i += 1;
                continue;
            }
            if t.starts_with('-') && !a.dynamic {
                continue;
            }
            // Git refuses to check out a branch another worktree has checked out, unless
            // told to ignore that; then the branch named is the one later commits move.
            if first_operand && rest.iter().any(|a| a.text == "--ignore-other-worktrees") {
                refs.push(a.clone());
            }
            if first_operand {
                // The revision whose files are written (a path here just fails to resolve).
                self.found(Effect::CheckoutTree {
                    place: self.place.clone(),
                    rev: a.clone(),
                    how: format!("`git {name}` writes the working tree from"),
                });
            }
            first_operand = false;
        }
        self.repo_write("checks out", refs);
    }

    /// Commands that write the working tree from a revision other than HEAD: `reset
    /// --hard REV`, `restore --source REV`, `stash apply|pop`, `merge`, `cherry-pick`,
    /// `revert`, `read-tree -u`. Each revision is judged by what its tree would write.
    pub(super) fn git_tree_writes(&mut self, name: &str, rest: &[Arg]) {
        const VALUED: &[&str] = &[
            "-m",
            "-F",
            "--message",
            "--file",
            "-s",
            "--strategy",
            "-X",
            "--strategy-option",
            "--mainline",
            "--prefix",
            "--index-output",
            "--cleanup",
            "--into-name",
        ];
        let mut operands: Vec<Arg> = Vec::new();
        let mut source: Option<Arg> = None;
        let mut i = 0;
        while let Some(a) = rest.get(i) {
            i += 1;
            let t = a.text.as_str();
            if t == "--" {
                break;
            }
            if matches!(t, "-s" | "--source") && name == "restore" {
                source = rest.get(i).cloned();
                i += 1;
            } else if let Some(v) = t.strip_prefix("--source=") {
                source = Some(Arg {
                    text: v.to_owned(),
                    dynamic: a.dynamic,
                });
            } else if VALUED.contains(&t) && name != "read-tree" {
                i += 1;
            } else if a.dynamic || !t.starts_with('-') {
                operands.push(a.clone());
            }
        }
        let has = |f: &[&str]| rest.iter().any(|a| f.contains(&a.text.as_str()));
        let revs: Vec<Arg> = match name {
            "reset" if has(&["--hard", "--merge", "--keep"]) => {
                operands.into_iter().take(1).collect()
            }
            "restore" => source.into_iter().collect(),
            "stash" => match operands.first().map(|a| a.text.as_str()) {
                Some("apply" | "pop") => vec![
                    operands
                        .get(1)
                        .cloned()
                        .unwrap_or_else(|| Arg::lit("stash@{0}")),
                ],
                Some("branch") => vec![
                    operands
                        .get(2)
                        .cloned()
                        .unwrap_or_else(|| Arg::lit("stash@{0}")),
                ],
                _ => Vec::new(),
            },
            "merge" | "cherry-pick" => operands,
            "revert" => operands
                .into_iter()
                .map(|a| Arg {
                    text: format!("{}^", a.text),
                    dynamic: a.dynamic,
                })
                .collect(),
            "read-tree" if has(&["-u"]) => operands,
            _ => Vec::new(),
        };
        for rev in revs {
            self.found(Effect::CheckoutTree {
                place: self.place.clone(),
                rev,
                how: format!("`git {name}` writes the working tree from"),
            });
        }
    }

    /// `git update-index --cacheinfo 120000,SHA,PATH` (or `--index-info`): a symbolic
    /// link staged by hand, which a later checkout writes with a target the text
    /// doesn't show.
    pub(super) fn git_update_index(&mut self, rest: &[Arg], stdin: &Stdin) {
        for (i, a) in rest.iter().enumerate() {
            let t = a.text.as_str();
            let mode = if t == "--cacheinfo" {
                rest.get(i + 1).map(|m| {
                    let text = m.text.split(',').next().unwrap_or("").to_owned();
                    Arg {
                        text,
                        dynamic: m.dynamic,
                    }
                })
            } else {
                t.strip_prefix("--cacheinfo=").map(|v| Arg {
                    text: v.split(',').next().unwrap_or("").to_owned(),
                    dynamic: a.dynamic,
                })
            };
            if let Some(m) = mode
                && (m.dynamic || m.text == "120000")
            {
                self.unfollowable(
                    "`git update-index --cacheinfo 120000` stages a symbolic link by hand, whose target a later checkout writes without showing it",
                );
            }
            if t == "--index-info" {
                match stdin {
                    Stdin::Text(text) if !text.contains("120000") => {}
                    _ => self.unfollowable(
                        "`git update-index --index-info` stages entries (symbolic links among them) from input the guard can't check",
                    ),
                }
            }
        }
    }

    /// `git branch`: listing reads; creating, moving, renaming, copying or deleting
    /// branches writes the branches it names.
    pub(super) fn git_branch(&mut self, rest: &[Arg]) {
        let listing_flags = [
            "-l",
            "--list",
            "-a",
            "--all",
            "-r",
            "--remotes",
            "-v",
            "-vv",
            "--verbose",
            "--show-current",
            "--no-color",
            "--color",
            "--column",
            "--no-column",
        ];
        let mut operands: Vec<Arg> = Vec::new();
        let mut writes = false;
        let mut i = 0;
        while let Some(a) = rest.get(i) {
            i += 1;
            let t = a.text.as_str();
            if matches!(
                t,
                "--contains"
                    | "--no-contains"
                    | "--merged"
                    | "--no-merged"
                    | "--points-at"
                    | "--sort"
                    | "--format"
            ) {
                i += 1;
                continue;
            }
            if t.starts_with("--contains=")
                || t.starts_with("--merged=")
                || t.starts_with("--sort=")
                || t.starts_with("--format=")
                || t.starts_with("--no-merged=")
                || t.starts_with("--points-at=")
                || t.starts_with("--color=")
            {
                continue;
            }
            if listing_flags.contains(&t) {
                continue;
            }
            if matches!(t, "-u" | "--set-upstream-to") {
                writes = true;
                i += 1;
                continue;
            }
            if t.starts_with('-') && !a.dynamic {
                writes = true;
                continue;
            }
            operands.push(a.clone());
        }
        let list = rest.iter().any(|a| a.text == "-l" || a.text == "--list");
        if (writes || !operands.is_empty()) && !list {
            self.repo_write("changes branches", operands);
        }
    }

    /// `git config [scope] KEY VALUE` / `git config set KEY VALUE`: a persistent
    /// configuration write the gates judge by key; remembered for the rest of the line.
    pub(super) fn git_config_cmd(&mut self, rest: &[Arg]) {
        let mut positional: Vec<&Arg> = Vec::new();
        let mut i = 0;
        let mut reads = false;
        let mut edit = false;
        let mut rename = false;
        while let Some(a) = rest.get(i) {
            i += 1;
            let t = a.text.as_str();
            if t.starts_with('-') && !a.dynamic {
                if matches!(t, "-f" | "--file") {
                    if let Some(f) = rest.get(i) {
                        self.write_to(f, "writes git configuration to");
                    }
                    i += 1;
                    continue;
                }
                if let Some(f) = t.strip_prefix("--file=") {
                    self.write_to(
                        &Arg {
                            text: f.to_owned(),
                            dynamic: a.dynamic,
                        },
                        "writes git configuration to",
                    );
                    continue;
                }
                if matches!(
                    t,
                    "--blob" | "--type" | "--default" | "--comment" | "--value"
                ) {
                    i += 1;
                }
                if t.starts_with("--get")
                    || t.starts_with("--unset")
                    || matches!(
                        t,
                        "-l" | "--list"
                            | "--remove-section"
                            | "--show-origin"
                            | "--show-scope"
                            | "--name-only"
                    )
                {
                    reads = true;
                }
                if matches!(t, "-e" | "--edit") {
                    edit = true;
                }
                if t == "--rename-section" {
                    rename = true;
                }
                continue;
            }
            positional.push(a);
        }
        match positional.first().map(|a| a.text.as_str()) {
            Some("set") => {
                positional.remove(0);
            }
            Some("edit") => edit = true,
            Some("rename-section") => {
                rename = true;
                positional.remove(0);
            }
            Some("get" | "list" | "unset" | "remove-section" | "get-color" | "get-colorbool") => {
                return;
            }
            _ => {}
        }
        if edit {
            self.unfollowable("`git config --edit` opens an editor on git's configuration");
            return;
        }
        if rename {
            if let Some(new) = positional.get(1) {
                self.found(Effect::ConfigWrite {
                    key: (*new).clone(),
                    how: "renames a section to".to_owned(),
                });
            }
            return;
        }
        if reads || positional.len() < 2 {
            return;
        }
        let key = Arg {
            text: positional[0].text.to_ascii_lowercase(),
            dynamic: positional[0].dynamic,
        };
        let value = positional[1].clone();
        if key.text.ends_with(".fetch") && writes_notes_refspec(&value.text) {
            self.found(Effect::NoteWrite {
                how: format!("git config {} {}", key.text, value.text),
            });
        }
        self.found(Effect::ConfigWrite {
            key: key.clone(),
            how: "sets".to_owned(),
        });
        if !value.dynamic && !key.dynamic {
            self.git_config.push((key.text, value.text));
        }
    }

    pub(super) fn git_rebase(&mut self, rest: &[Arg]) {
        let mut i = 0;
        while let Some(a) = rest.get(i) {
            i += 1;
            let t = a.text.as_str();
            if let Some(c) = t.strip_prefix("--exec=") {
                let c = Arg {
                    text: c.to_owned(),
                    dynamic: a.dynamic,
                };
                self.git_runs(&c, rest);
                continue;
            }
            if t == "--exec" {
                if let Some(c) = rest.get(i) {
                    self.git_runs(c, rest);
                }
                i += 1;
                continue;
            }
            if t.starts_with('-') && !t.starts_with("--") {
                for (k, c) in t[1..].char_indices() {
                    let after = &t[1 + k + 1..];
                    if c == 'x' {
                        if after.is_empty() {
                            if let Some(cmd) = rest.get(i) {
                                self.git_runs(cmd, rest);
                            }
                            i += 1;
                        } else {
                            let cmd = Arg {
                                text: after.to_owned(),
                                dynamic: a.dynamic,
                            };
                            self.git_runs(&cmd, rest);
                        }
                        break;
                    }
                    if matches!(c, 's' | 'X' | 'C') {
                        if after.is_empty() {
                            i += 1;
                        }
                        break;
                    }
                }
            }
        }
    }

    pub(super) fn git_submodule(&mut self, rest: &[Arg], args: &[Arg]) {
        let Some(pos) = rest.iter().position(|a| a.text == "foreach") else {
            return;
        };
        let cmd: Vec<&Arg> = rest[pos + 1..]
            .iter()
            .skip_while(|a| a.text.starts_with('-'))
            .collect();
        if cmd.is_empty() {
            return;
        }
        let dynamic = cmd.iter().any(|a| a.dynamic);
        let text = if cmd.len() == 1 {
            cmd[0].text.clone()
        } else {
            let words: Vec<String> = cmd.iter().map(|a| quote(&a.text)).collect();
            words.join(" ")
        };
        self.git_runs(&Arg { text, dynamic }, args);
    }
}
