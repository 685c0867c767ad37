//! What programs do with the paths they are given, and which programs run others.
//!
//! The gates protect git's internals, other checkouts, local remotes and the user's
//! configuration from writes. A write can come from a redirection, from a program that
//! writes its arguments (`cp`, `tee`, `sed -i`), or from a program that may do anything
//! with a path (an interpreter, a tool the guard doesn't know). This module sorts the
//! arguments of a simple command into those, and spots programs the guard doesn't know
//! that run another command given in their arguments (unknown wrappers). Copiers and
//! archivers, whose options decide what they write, have a module each.

use super::classify::basename;
use super::shell::Walker;
use super::words::Arg;

mod archives;
mod copies;

/// Programs that only read the files they are given.
pub(super) const READERS: &[&str] = &[
    "cat",
    "less",
    "more",
    "head",
    "tail",
    "grep",
    "egrep",
    "fgrep",
    "rg",
    "ag",
    "ack",
    "ls",
    "stat",
    "file",
    "wc",
    "diff",
    "cmp",
    "comm",
    "cut",
    "nl",
    "od",
    "hexdump",
    "strings",
    "md5sum",
    "sha1sum",
    "sha256sum",
    "sha512sum",
    "b2sum",
    "cksum",
    "readlink",
    "realpath",
    "basename",
    "dirname",
    "du",
    "df",
    "tree",
    "jq",
    "column",
    "fold",
    "fmt",
    "expand",
    "rev",
    "tac",
    "paste",
    "join",
    "look",
    "test",
    "[",
    "echo",
    "printf",
    "pwd",
    "which",
    "type",
    "man",
    "info",
    "whatis",
    "apropos",
    "tldr",
    "help",
    "hash",
    "command-v",
    "true",
    "false",
    "bat",
    "delta",
    "wdiff",
    "colordiff",
    "zcat",
    "zless",
    "bzcat",
    "xzcat",
    "lsof",
    "namei",
    "getfacl",
    "lsattr",
    "sleep",
    "date",
    "id",
    "whoami",
    "uname",
    "hostname",
    "cargo-nextest",
    "tokei",
    "cloc",
    "sum",
];

/// Programs whose every argument (and option value) may be a file they write.
const WRITE_ALL: &[&str] = &[
    "rm",
    "rmdir",
    "touch",
    "truncate",
    "shred",
    "unlink",
    "chmod",
    "chown",
    "chgrp",
    "mkdir",
    "mkfifo",
    "mknod",
    "chattr",
    "setfacl",
    "tee",
    "sponge",
    "split",
    "csplit",
    "ssh-keygen",
    "mktemp",
    "git-lfs",
    "fallocate",
    "chcon",
    "restorecon",
    "wipe",
    "srm",
];

/// Programs that copy or move: the last operand (or `-t DIR`) is written, the rest read.
const COPIERS: &[&str] = &[
    "cp", "mv", "ln", "install", "rsync", "scp", "rclone", "gcp", "gmv", "ditto", "link",
];

/// Editors and debuggers: run with commands (`-c`, `+cmd`, `-ex`, `--eval`, a script,
/// or commands on their input) they can run programs and write any file.
const EDITORS: &[&str] = &[
    "vi",
    "vim",
    "nvim",
    "view",
    "vimdiff",
    "ex",
    "ed",
    "red",
    "emacs",
    "emacsclient",
    "nano",
    "pico",
    "joe",
    "kak",
    "hx",
    "mcedit",
    "micro",
    "gdb",
    "lldb",
];

/// The options that hand an editor or debugger commands to run.
const EDITOR_COMMANDS: &[&str] = &[
    "-c",
    "--cmd",
    "-S",
    "-s",
    "-e",
    "-E",
    "-es",
    "-Es",
    "-u",
    "--batch",
    "--eval",
    "-l",
    "--load",
    "-f",
    "--funcall",
    "-x",
    "--script",
    "-ex",
    "-batch",
    "-eval-command",
    "--eval-command",
    "-o",
    "--command",
    "-init-eval-command",
    "--init-eval-command",
];

/// Programs that run commands they are handed (a terminal multiplexer, a scheduler, a
/// socket relay): refused unless only listing.
const COMMAND_TOOLS: &[&str] = &[
    "tmux",
    "screen",
    "dtach",
    "abduco",
    "crontab",
    "at",
    "batch",
    "run-parts",
    "dbus-launch",
    "fc",
];

/// Database shells, whose dot or backslash commands reach the system.
const DB_SHELLS: &[&str] = &["sqlite3", "duckdb", "psql", "mysql", "mariadb"];

/// Programs that matter to the gates wherever they appear in another program's
/// arguments: an unknown program followed by one of these is taken to run it.
const SENSITIVE: &[&str] = &[
    "git",
    "gh",
    "hub",
    "sh",
    "bash",
    "zsh",
    "dash",
    "ksh",
    "mksh",
    "ash",
    "yash",
    "fish",
    "env",
    "sudo",
    "xargs",
    "eval",
    "exec",
    "python",
    "python3",
    "python2",
    "perl",
    "node",
    "ruby",
    "php",
    "lua",
    "tclsh",
    "awk",
    "gawk",
    "sed",
    "make",
    "nohup",
    "timeout",
    "nice",
    "setsid",
    "busybox",
    "su",
    "runuser",
    "doas",
    "pkexec",
    "chroot",
    "unshare",
    "setpriv",
    "fakeroot",
    "script",
    "parallel",
    "find",
    "watch",
    "ssh-agent",
    "sg",
    "logsave",
    "setarch",
    "run-parts",
    "deno",
    "bun",
    "osascript",
    "pwsh",
    "hall",
];

/// Whether `name` (a basename) is one the gates care about when another program runs it.
pub(super) fn sensitive(name: &str) -> bool {
    SENSITIVE.contains(&name) || name.starts_with("git-") || name.starts_with("python")
}

/// Whether a program is a database shell.
pub(super) fn is_db_shell(name: &str) -> bool {
    DB_SHELLS.contains(&name)
}

/// Why a program that runs commands of its own can't be followed, if it can't.
pub(super) fn runs_own_commands(name: &str, args: &[Arg], stdin_known: bool) -> Option<String> {
    let listing = |a: &Arg| {
        matches!(
            a.text.as_str(),
            "--version"
                | "--help"
                | "-V"
                | "-h"
                | "-l"
                | "-ls"
                | "list-sessions"
                | "ls"
                | "has-session"
                | "has"
                | "capture-pane"
                | "--test"
                | "--list"
        )
    };
    if EDITORS.contains(&name) {
        let commands = args.iter().any(|a| {
            a.dynamic
                || a.text.starts_with('+')
                || EDITOR_COMMANDS.contains(&a.text.as_str())
                || a.text.starts_with("--eval=")
                || a.text.starts_with("-c") && a.text.len() > 2 && !a.text.starts_with("--")
        });
        let reads_stdin = matches!(name, "ed" | "red" | "ex") && !stdin_known
            || args.iter().any(|a| a.text == "-");
        return (commands || reads_stdin).then(|| {
            format!(
                "`{name}` is handed commands of its own, which can run programs and write any file"
            )
        });
    }
    if COMMAND_TOOLS.contains(&name) {
        return (!args.iter().any(listing))
            .then(|| format!("`{name}` runs commands it is handed, which the guard can't follow"));
    }
    match name {
        "nc" | "ncat" | "netcat" => args
            .iter()
            .any(|a| {
                matches!(
                    a.text.as_str(),
                    "-e" | "-c" | "--exec" | "--sh-exec" | "--lua-exec"
                ) || a.text.starts_with("--sh-exec=")
            })
            .then(|| format!("`{name}` runs a program for each connection")),
        "socat" => args
            .iter()
            .any(|a| {
                let u = a.text.to_ascii_uppercase();
                a.dynamic
                    || u.starts_with("EXEC:")
                    || u.starts_with("SYSTEM:")
                    || u.contains(",EXEC")
                    || u.starts_with("OPEN:")
                    || u.starts_with("CREATE:")
            })
            .then(|| "`socat` runs a program or writes a file".to_owned()),
        "cmake" => args
            .iter()
            .any(|a| a.text == "-P" || a.text == "-E" || a.text.starts_with("-P"))
            .then(|| "`cmake -P`/`-E` runs a script or file commands".to_owned()),
        _ => None,
    }
}

/// Whether an argument looks like a path rather than a word: it has a slash, or starts
/// with a dot or a tilde.
pub(super) fn looks_like_path(a: &Arg) -> bool {
    let t = a.text.as_str();
    t.contains('/') || t.starts_with('.') || t.starts_with('~')
}

impl Walker<'_> {
    /// Records what a program does with its path arguments. Returns `true` when the
    /// program is one whose arguments this module fully accounts for.
    pub(super) fn file_args(&mut self, name: &str, args: &[Arg], stdin_text: Option<&str>) -> bool {
        if READERS.contains(&name) {
            // `sort -o`, `uniq in out`, `xxd -r in out` write; the rest only read.
            for a in args
                .iter()
                .filter(|a| !a.text.starts_with('-') || a.dynamic)
            {
                self.use_path(a, name, true);
            }
            return true;
        }
        match name {
            "sort" => {
                let mut i = 0;
                while let Some(a) = args.get(i) {
                    if a.text == "-o" || a.text == "--output" {
                        if let Some(p) = args.get(i + 1) {
                            self.write_to(p, "sorts into");
                        }
                        i += 1;
                    } else if let Some(p) = a.text.strip_prefix("--output=").or_else(|| {
                        a.text
                            .strip_prefix("-o")
                            .filter(|p| !p.is_empty() && !a.text.starts_with("--"))
                    }) {
                        self.write_to(
                            &Arg {
                                text: p.to_owned(),
                                dynamic: a.dynamic,
                            },
                            "sorts into",
                        );
                    } else if !a.text.starts_with('-') {
                        self.use_path(a, name, true);
                    }
                    i += 1;
                }
                return true;
            }
            "uniq" | "xxd" | "iconv" => {
                let operands: Vec<&Arg> =
                    args.iter().filter(|a| !a.text.starts_with('-')).collect();
                for (k, a) in operands.iter().enumerate() {
                    if k == 1 && name != "iconv" {
                        self.write_to(a, "writes");
                    } else {
                        self.use_path(a, name, true);
                    }
                }
                if name == "iconv" {
                    for (k, a) in args.iter().enumerate() {
                        if a.text == "-o"
                            && let Some(p) = args.get(k + 1)
                        {
                            self.write_to(p, "writes");
                        }
                    }
                }
                return true;
            }
            "dd" => {
                for a in args {
                    if let Some(p) = a.text.strip_prefix("of=") {
                        self.write_to(
                            &Arg {
                                text: p.to_owned(),
                                dynamic: a.dynamic,
                            },
                            "writes",
                        );
                    } else if let Some(p) = a.text.strip_prefix("if=") {
                        self.use_path(
                            &Arg {
                                text: p.to_owned(),
                                dynamic: a.dynamic,
                            },
                            name,
                            true,
                        );
                    }
                }
                return true;
            }
            "curl" | "wget" => {
                self.download_args(name, args);
                return true;
            }
            "tar" | "bsdtar" | "unzip" | "7z" | "7za" | "cpio" | "ar" | "gunzip" | "gzip"
            | "bzip2" | "bunzip2" | "xz" | "unxz" | "zstd" | "unzstd" | "zip" | "pax" => {
                self.archive_args(name, args);
                return true;
            }
            _ => {}
        }
        if WRITE_ALL.contains(&name) {
            for a in args {
                if a.text.starts_with('-') && !a.dynamic {
                    if let Some((_, v)) = a.text.split_once('=') {
                        self.write_to(
                            &Arg {
                                text: v.to_owned(),
                                dynamic: a.dynamic,
                            },
                            &format!("`{name}` writes"),
                        );
                    }
                    continue;
                }
                self.write_to(a, &format!("`{name}` writes"));
            }
            if name == "tee"
                && let Some(text) = stdin_text
            {
                for a in args
                    .iter()
                    .filter(|a| !a.text.starts_with('-') && !a.dynamic)
                {
                    let key = self.written_key(&a.text);
                    self.written.insert(key, Some(text.to_owned()));
                }
            }
            return true;
        }
        if COPIERS.contains(&name) {
            self.copy_args(name, args);
            return true;
        }
        false
    }

    /// `curl -o FILE`, `wget -O FILE -P DIR`: what a download writes.
    fn download_args(&mut self, name: &str, args: &[Arg]) {
        let value_opts: &[&str] = if name == "curl" {
            &[
                "-o",
                "--output",
                "--output-dir",
                "-c",
                "--cookie-jar",
                "-D",
                "--dump-header",
                "--trace",
                "--trace-ascii",
                "--stderr",
            ]
        } else {
            &[
                "-O",
                "--output-document",
                "-P",
                "--directory-prefix",
                "-o",
                "--output-file",
                "-a",
                "--append-output",
            ]
        };
        let mut i = 0;
        while let Some(a) = args.get(i) {
            i += 1;
            let t = a.text.as_str();
            if value_opts.contains(&t) {
                if let Some(p) = args.get(i) {
                    self.write_to(p, &format!("`{name}` writes"));
                }
                i += 1;
            } else if let Some((k, v)) = t.split_once('=')
                && value_opts.contains(&k)
            {
                self.write_to(
                    &Arg {
                        text: v.to_owned(),
                        dynamic: a.dynamic,
                    },
                    &format!("`{name}` writes"),
                );
            } else if name == "curl" && (t == "-O" || t == "--remote-name" || t == "-J") {
                self.write_to(&Arg::lit("."), "`curl` writes into");
            }
        }
    }

    /// An unknown program given a command in its arguments: `logsave /dev/null git push`,
    /// `setpriv --reuid=0 git push`, `sg grp -c 'git push'`, `tool --exec='git push'`.
    /// Its tail from the first sensitive word is classified as a command, and any
    /// argument that reads as shell text naming a sensitive program is analyzed as such.
    pub(super) fn unknown_wrapper(&mut self, argv: &[Arg]) {
        let args = &argv[1..];
        for (i, a) in args.iter().enumerate() {
            if a.dynamic {
                continue;
            }
            let value = match a.text.split_once('=') {
                Some((k, v)) if k.starts_with('-') => v,
                _ => a.text.as_str(),
            };
            if sensitive(basename(value)) && !value.contains(' ') {
                let mut tail = vec![Arg::lit(value)];
                tail.extend(args[i + 1..].iter().cloned());
                self.with_outer(argv, |w| {
                    w.current = super::shell::join_args(&tail);
                    w.classify(tail, Vec::new(), super::shell::Stdin::Unknown)
                });
                return;
            }
            if value.contains(char::is_whitespace)
                && value
                    .split(|c: char| c.is_whitespace() || ";&|()`$'\"".contains(c))
                    .any(|w| sensitive(basename(w)))
            {
                let text = value.to_owned();
                self.with_outer(argv, |w| w.analyze_str(&text));
            }
        }
    }
}
