//! The git subcommands that reach another repository: `remote` (changing one is a
//! config write), `fetch` and `pull` with their refspecs and `--upload-pack`, and
//! `clone`, `ls-remote`, `archive` and `init`, whose URLs (`ext::`), a clone's own
//! configuration and an archive's output file matter to the gates.

use super::*;

impl Walker<'_> {
    /// `git remote`: adding a remote with a plain URL is harmless; changing or removing
    /// one (origin above all: the base may be read from it) is a config write.
    pub(super) fn git_remote(&mut self, rest: &[Arg]) {
        let operands: Vec<&Arg> = rest
            .iter()
            .filter(|a| !a.text.starts_with('-') || a.dynamic)
            .collect();
        let Some(verb) = operands.first() else {
            return;
        };
        match verb.text.as_str() {
            "show" | "get-url" => {}
            "add" => {
                let name = operands.get(1);
                let url = operands.get(2);
                if url.is_some_and(|u| {
                    u.dynamic || u.text.starts_with("ext::") || u.text.starts_with("fd::")
                }) {
                    self.unfollowable("`git remote add` names a remote that runs a command");
                }
                if name.is_some_and(|n| n.dynamic || n.text == "origin") {
                    self.found(Effect::ConfigWrite {
                        key: Arg::lit("remote.origin.url"),
                        how: "sets".to_owned(),
                    });
                }
            }
            other => {
                let name = operands.get(1).map(|n| n.text.clone()).unwrap_or_default();
                self.found(Effect::ConfigWrite {
                    key: Arg {
                        text: format!("remote.{name}.url"),
                        dynamic: verb.dynamic,
                    },
                    how: format!("`git remote {other}` changes"),
                });
            }
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
            if t.starts_with('-') && !a.dynamic && t != "--stdin" {
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
            if t == "--stdin" {
                self.unfollowable(format!(
                    "`git {name} --stdin` reads refspecs the guard can't see"
                ));
                continue;
            }
            if t.starts_with('-') && !a.dynamic {
                continue;
            }
            positional += 1;
            if t.starts_with("ext::") || t.starts_with("fd::") {
                self.unfollowable(format!("the remote `{t}` runs a command"));
            }
            // The first operand names the remote; the rest are refspecs.
            if positional > 1 {
                if writes_notes_refspec(t) {
                    self.found(Effect::NoteWrite {
                        how: format!("git {name} {t}"),
                    });
                }
                if a.dynamic {
                    self.repo_write("fetches into", vec![a.clone()]);
                } else if let Some((_, dst)) = t.trim_start_matches('+').split_once(':')
                    && !dst.is_empty()
                {
                    self.repo_write("fetches into", vec![Arg::lit(dst.trim_start_matches('+'))]);
                }
            } else if name == "pull" || a.dynamic {
                // `git pull REMOTE` merges into the current branch.
            }
        }
        if name == "pull" {
            self.merge_strategy(rest);
            self.repo_write("pulls into", Vec::new());
        }
        for (k, v) in cfg {
            if k.starts_with("remote.") && k.ends_with(".fetch") && writes_notes_refspec(&v.text) {
                self.found(Effect::NoteWrite {
                    how: format!("git {name} with {k}={}", v.text),
                });
            }
        }
    }

    pub(super) fn git_remote_commands(&mut self, name: &str, rest: &[Arg]) {
        let mut i = 0;
        while let Some(a) = rest.get(i) {
            i += 1;
            let t = a.text.as_str();
            if t.starts_with("ext::") || t.starts_with("fd::") {
                self.unfollowable(format!("the remote `{t}` runs a command"));
            }
            if name == "clone" && (t == "-c" || t == "--config") {
                // Config for the new repository: hooks and filters run during checkout.
                if let Some(kv) = rest.get(i) {
                    let (k, v) = super::split_kv(kv);
                    self.command_config(&k, &v);
                }
                i += 1;
            } else if name == "clone"
                && let Some(kv) = t.strip_prefix("--config=")
            {
                let (k, v) = super::split_kv(&Arg {
                    text: kv.to_owned(),
                    dynamic: a.dynamic,
                });
                self.command_config(&k, &v);
            }
        }
        if name == "archive" {
            for (j, a) in rest.iter().enumerate() {
                if (a.text == "-o" || a.text == "--output")
                    && let Some(p) = rest.get(j + 1)
                {
                    self.write_to(p, "writes");
                } else if let Some(p) = a.text.strip_prefix("--output=") {
                    self.write_to(
                        &Arg {
                            text: p.to_owned(),
                            dynamic: a.dynamic,
                        },
                        "writes",
                    );
                }
            }
        }
    }
}
