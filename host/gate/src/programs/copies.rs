//! What copying, moving and linking programs (`cp`, `mv`, `ln`, `rsync`…) write: the
//! destination, each source's name inside it, and the sources a hard link exposes.

use crate::Effect;
use crate::shell::Walker;
use crate::words::Arg;

impl Walker<'_> {
    /// `cp SRC… DST`, `cp -t DIR SRC…`: the destination is written, and so is each
    /// source's name inside it (`mv d/.claude .` creates `./.claude`); the sources are
    /// read. A hard link's source is written too, since a later write through the link
    /// changes it; a symbolic link's target is a way to reach it later. A recursive copy
    /// or a move is judged by every path it creates ([`Effect::TreeWrite`]).
    pub(super) fn copy_args(&mut self, name: &str, args: &[Arg]) {
        let mut operands: Vec<&Arg> = Vec::new();
        let mut target: Option<Arg> = None;
        let mut i = 0;
        let mut only_operands = false;
        let copier = name.trim_start_matches('g');
        // `ln` makes hard links unless told `-s`; `link` only makes hard links.
        let mut hard = matches!(name, "ln" | "link");
        let mut symbolic = false;
        // A move renames whole directories; `ditto` always copies trees.
        let mut tree = matches!(copier, "mv" | "ditto");
        while let Some(a) = args.get(i) {
            i += 1;
            let t = a.text.as_str();
            if only_operands || a.dynamic || !t.starts_with('-') || t == "-" {
                operands.push(a);
                continue;
            }
            if t == "--" {
                only_operands = true;
            } else if t == "-t" || t == "--target-directory" {
                target = args.get(i).cloned();
                i += 1;
            } else if let Some(d) = t.strip_prefix("--target-directory=") {
                target = Some(Arg {
                    text: d.to_owned(),
                    dynamic: a.dynamic,
                });
            } else if let Some(d) = t
                .strip_prefix("-t")
                .filter(|d| !d.is_empty() && !t.starts_with("--") && name != "rsync")
            {
                target = Some(Arg {
                    text: d.to_owned(),
                    dynamic: a.dynamic,
                });
            } else if matches!(t, "--link-dest" | "--copy-dest" | "--compare-dest") {
                // rsync hard-links unchanged files from this directory.
                if let Some(d) = args.get(i) {
                    self.write_to(d, &format!("`{name}` hard-links from"));
                }
                i += 1;
            } else if matches!(
                t,
                "-S" | "--suffix"
                    | "-m"
                    | "--mode"
                    | "-o"
                    | "--owner"
                    | "-g"
                    | "--group"
                    | "-e"
                    | "--rsh"
            ) {
                i += 1;
            } else if let Some((k, v)) = t.split_once('=') {
                // An option value that is a path (`--backup-dir=…`, `--link-dest=…`).
                if v.contains('/') || k.ends_with("-dest") {
                    let how = if k.ends_with("-dest") {
                        format!("`{name}` hard-links from")
                    } else {
                        format!("`{name}` writes")
                    };
                    self.write_to(
                        &Arg {
                            text: v.to_owned(),
                            dynamic: a.dynamic,
                        },
                        &how,
                    );
                }
            } else if let Some(long) = t.strip_prefix("--") {
                match long {
                    "link" => hard = true,
                    "symbolic" | "symbolic-link" => {
                        symbolic = true;
                        hard = false;
                    }
                    "recursive" | "archive" => tree = true,
                    _ => {}
                }
            } else {
                // A cluster of short options: `-al`, `-rl`, `-sf`, `-av`.
                for c in t[1..].chars() {
                    match (copier, c) {
                        ("cp", 'l') => hard = true,
                        ("cp" | "ln", 's') => {
                            symbolic = true;
                            hard = false;
                        }
                        ("cp" | "scp" | "rclone", 'r' | 'R' | 'a') => tree = true,
                        ("rsync", 'r' | 'a') => tree = true,
                        _ => {}
                    }
                }
            }
        }
        let (dest, sources) = match target {
            Some(t) => (Some(t), operands.as_slice()),
            None => match operands.split_last() {
                Some((last, rest)) if !rest.is_empty() || name == "ln" => {
                    (Some((*last).clone()), rest)
                }
                _ => (None, operands.as_slice()),
            },
        };
        for s in sources {
            if symbolic {
                self.write_to(s, "links to");
            } else if hard {
                self.write_to(
                    s,
                    &format!("`{name}` hard-links (a later write through the link changes it)"),
                );
            } else {
                self.use_path(s, name, true);
            }
        }
        let Some(d) = dest else {
            return;
        };
        self.write_to(&d, &format!("`{name}` writes"));
        for s in sources {
            let base = s
                .text
                .trim_end_matches('/')
                .rsplit('/')
                .next()
                .unwrap_or("");
            if !matches!(base, "" | "." | "..") {
                let inside = Arg {
                    text: format!("{}/{base}", d.text.trim_end_matches('/')),
                    dynamic: d.dynamic || s.dynamic,
                };
                self.write_to(&inside, &format!("`{name}` writes"));
            }
            if tree {
                self.found(Effect::TreeWrite {
                    src: (*s).clone(),
                    dest: d.clone(),
                    place: self.place.clone(),
                    how: format!("`{name}` copies or moves"),
                });
            }
        }
    }
}
