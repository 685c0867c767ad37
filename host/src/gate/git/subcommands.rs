//! The git subcommands judged one by one: commits (and the hooks and editors they
//! run), note writes, `update-ref`, fetches with refspecs, remotes, `config`, and the
//! commands git runs for us in `rebase -x` and `submodule foreach`.

use super::*;
use crate::gate::shell::quote;

impl Walker<'_> {
    pub(super) fn git_commit(&mut self, rest: &[Arg], dir: Option<String>) {
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
            dir,
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
                Stdin::Text(t) if !t.contains("refs/notes") => {}
                Stdin::Text(_) => self.found(Effect::NoteWrite {
                    how: "git update-ref --stdin on refs/notes".to_owned(),
                }),
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
            if a.dynamic {
                self.unfollowable(format!(
                    "`git update-ref` is given a computed ref `{}`",
                    a.text
                ));
            } else if a.text.starts_with("refs/notes") || a.text.starts_with("notes/") {
                self.found(Effect::NoteWrite {
                    how: format!("git update-ref {}", a.text),
                });
            }
            // Only the first operand names the ref; the rest are object names.
            return;
        }
    }

    pub(super) fn git_fetch(&mut self, name: &str, rest: &[Arg], cfg: &[(String, Arg)]) {
        let mut positional = 0;
        let mut i = 0;
        while let Some(a) = rest.get(i) {
            i += 1;
            let t = a.text.as_str();
            if let Some(map) = t.strip_prefix("--refmap=") {
                if writes_notes_refspec(map) {
                    self.found(Effect::NoteWrite {
                        how: format!("git {name} --refmap={map}"),
                    });
                }
                continue;
            }
            if t == "--refmap" {
                if let Some(m) = rest.get(i)
                    && writes_notes_refspec(&m.text)
                {
                    self.found(Effect::NoteWrite {
                        how: format!("git {name} --refmap {}", m.text),
                    });
                }
                i += 1;
                continue;
            }
            if let Some(c) = t.strip_prefix("--upload-pack=") {
                let c = Arg {
                    text: c.to_owned(),
                    dynamic: a.dynamic,
                };
                self.git_runs(&c, rest);
                continue;
            }
            if t == "--upload-pack" {
                if let Some(c) = rest.get(i) {
                    self.git_runs(c, rest);
                }
                i += 1;
                continue;
            }
            if t.starts_with('-') && !a.dynamic {
                if matches!(
                    t,
                    "--depth"
                        | "--deepen"
                        | "--shallow-since"
                        | "--shallow-exclude"
                        | "-j"
                        | "--jobs"
                        | "-o"
                        | "--server-option"
                        | "--negotiation-tip"
                        | "--filter"
                        | "--recurse-submodules-default"
                        | "-s"
                        | "--strategy"
                        | "-X"
                        | "--strategy-option"
                ) {
                    i += 1;
                }
                continue;
            }
            positional += 1;
            if t.starts_with("ext::") {
                self.unfollowable(format!("the ext:: remote `{t}` runs a command"));
            }
            // The first operand names the remote; the rest are refspecs.
            if positional > 1 && writes_notes_refspec(t) {
                self.found(Effect::NoteWrite {
                    how: format!("git {name} {t}"),
                });
            }
        }
        for (k, v) in cfg {
            if k.starts_with("remote.") && k.ends_with(".fetch") && writes_notes_refspec(&v.text) {
                self.found(Effect::NoteWrite {
                    how: format!("git {name} with {k}={}", v.text),
                });
            }
        }
    }

    pub(super) fn git_remote_commands(&mut self, rest: &[Arg]) {
        let mut i = 0;
        while let Some(a) = rest.get(i) {
            i += 1;
            let t = a.text.as_str();
            if t.starts_with("ext::") {
                self.unfollowable(format!("the ext:: remote `{t}` runs a command"));
            }
            let value = t
                .strip_prefix("--upload-pack=")
                .or_else(|| t.strip_prefix("--exec="))
                .map(|c| Arg {
                    text: c.to_owned(),
                    dynamic: a.dynamic,
                });
            if let Some(c) = value {
                self.git_runs(&c, rest);
            } else if matches!(t, "--upload-pack" | "-u" | "--exec") {
                if let Some(c) = rest.get(i) {
                    self.git_runs(c, rest);
                }
                i += 1;
            }
        }
    }

    /// `git config [scope] KEY VALUE` / `git config set KEY VALUE`: remember it for the
    /// rest of the line, and judge settings that write notes.
    pub(super) fn git_config_cmd(&mut self, rest: &[Arg]) {
        let mut positional: Vec<&Arg> = Vec::new();
        let mut i = 0;
        let mut reads = false;
        while let Some(a) = rest.get(i) {
            i += 1;
            let t = a.text.as_str();
            if t.starts_with('-') && !a.dynamic {
                if matches!(
                    t,
                    "-f" | "--file" | "--blob" | "--type" | "--default" | "--comment" | "--value"
                ) {
                    i += 1;
                }
                if t.starts_with("--get")
                    || t.starts_with("--unset")
                    || matches!(
                        t,
                        "-l" | "--list" | "-e" | "--edit" | "--remove-section" | "--rename-section"
                    )
                {
                    reads = true;
                }
                continue;
            }
            positional.push(a);
        }
        if reads {
            return;
        }
        if positional.first().is_some_and(|a| a.text == "set") {
            positional.remove(0);
        } else if positional.first().is_some_and(|a| {
            matches!(
                a.text.as_str(),
                "get" | "list" | "unset" | "edit" | "rename-section" | "remove-section"
            )
        }) {
            return;
        }
        if positional.len() < 2 {
            return;
        }
        let key = positional[0].text.to_ascii_lowercase();
        let value = positional[1].clone();
        if key.ends_with(".fetch") && writes_notes_refspec(&value.text) {
            self.found(Effect::NoteWrite {
                how: format!("git config {key} {}", value.text),
            });
        }
        if !value.dynamic {
            self.git_config.push((key, value.text));
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
