//! Commands that run another command given in their arguments: `env`, `sudo`,
//! `timeout` and the other wrappers of the table, `xargs`, `parallel`, `find -exec`,
//! `watch`, `nix develop --command` and `nix-shell --run`. Each is peeled to the
//! command it runs, which is classified in its turn.

use super::classify::split_words;
use super::shell::{Stdin, Walker};
use super::words::Arg;
use super::wrapper_table::WRAPPERS;

/// How a wrapper is read: which options take a value, and how many leading
/// operands come before the wrapped command.
pub(super) struct Wrapper {
    pub(super) name: &'static str,
    /// Short options that take a value (`-u root`, `-uroot`).
    pub(super) short_value: &'static str,
    /// Long options that take a value when written without `=`.
    pub(super) long_value: &'static [&'static str],
    /// Operands before the command (`timeout 10`, `direnv exec DIR`).
    pub(super) operands: usize,
}

impl Wrapper {
    /// The wrapper called `name`, if it is one.
    pub(super) fn named(name: &str) -> Option<&'static Wrapper> {
        WRAPPERS.iter().find(|w| w.name == name)
    }
}

impl Walker<'_> {
    /// A generic wrapper: skip its options and operands, classify the rest.
    pub(super) fn wrapper(
        &mut self,
        w: &Wrapper,
        argv: &[Arg],
        env: Vec<(String, Arg)>,
        stdin: Stdin,
    ) {
        let args = &argv[1..];
        let mut i = 0;
        let mut env = env;
        // `command -v git` and `command -V git` only look the name up.
        if w.name == "command"
            && args
                .iter()
                .take_while(|a| a.text.starts_with('-'))
                .any(|a| a.text.contains('v') || a.text.contains('V'))
        {
            return;
        }
        // `bundle exec`, `poetry run`, `uv run`, `pipenv run`, `dotenvx run` name a verb first.
        if matches!(w.name, "bundle" | "poetry" | "pipenv" | "uv" | "dotenvx") {
            let verb = if w.name == "bundle" { "exec" } else { "run" };
            match args.first() {
                Some(a) if a.text == verb => i = 1,
                _ => return,
            }
        }
        if (w.name == "flock" || w.name == "su")
            && let Some(pos) = args
                .iter()
                .position(|a| a.text == "-c" || a.text == "--command")
        {
            if let Some(c) = args.get(pos + 1) {
                self.shell_text(c, argv);
            }
            return;
        }
        while let Some(a) = args.get(i) {
            let t = a.text.as_str();
            if t == "--" {
                i += 1;
                break;
            }
            if a.dynamic || !t.starts_with('-') || t == "-" {
                break;
            }
            if let Some(long) = t.strip_prefix("--") {
                i += 1;
                if !long.contains('=') && w.long_value.contains(&t) {
                    i += 1;
                }
                continue;
            }
            // A short cluster: a value option takes the rest of the cluster, or the
            // next word if it ends the cluster.
            let body = &t[1..];
            i += 1;
            for (k, c) in body.char_indices() {
                if w.short_value.contains(c) {
                    if k + c.len_utf8() == body.len() {
                        i += 1;
                    }
                    break;
                }
            }
        }
        // sudo and doas accept NAME=VALUE before the command.
        if matches!(w.name, "sudo" | "doas") {
            while let Some(kv) = args.get(i).and_then(Arg::assignment) {
                env.push(kv);
                i += 1;
            }
        }
        i += w.operands;
        if i < args.len() {
            self.classify(args[i..].to_vec(), env, stdin);
        }
    }

    /// `env [-i] [-u NAME] [-C DIR] [-S STRING] [NAME=VALUE]… [COMMAND…]`.
    pub(super) fn env_wrapper(&mut self, args: &[Arg], mut env: Vec<(String, Arg)>, stdin: Stdin) {
        let mut i = 0;
        let mut rest: Vec<Arg> = Vec::new();
        while let Some(a) = args.get(i) {
            let t = a.text.as_str();
            if t == "--" {
                i += 1;
                break;
            }
            if let Some(s) = t.strip_prefix("--split-string=") {
                rest = split_words(s, a.dynamic);
                i += 1;
                break;
            }
            if t == "-S" || t == "--split-string" {
                // `env -S 'git push'` splits its argument into words, like a shebang line.
                if let Some(s) = args.get(i + 1) {
                    rest = split_words(&s.text, s.dynamic);
                }
                i += 2;
                break;
            }
            if t.starts_with("--") && !a.dynamic {
                let takes_value = matches!(
                    t,
                    "--unset"
                        | "--chdir"
                        | "--default-signal"
                        | "--ignore-signal"
                        | "--block-signal"
                ) && !t.contains('=');
                i += if takes_value { 2 } else { 1 };
                continue;
            }
            if t.starts_with('-') && t.len() > 1 && !a.dynamic {
                // A cluster such as `-vS 'git push'` or `-iuNAME`: `S` takes the rest of
                // the cluster or the next word as a command line; `u`, `C` and `P` take a
                // value the same way.
                let body = &t[1..];
                let mut consumed = 1;
                let mut split: Option<Arg> = None;
                for (k, c) in body.char_indices() {
                    let after = &body[k + c.len_utf8()..];
                    if matches!(c, 'S' | 'u' | 'C' | 'P') {
                        let value = if after.is_empty() {
                            consumed = 2;
                            args.get(i + 1).cloned()
                        } else {
                            Some(Arg {
                                text: after.to_owned(),
                                dynamic: a.dynamic,
                            })
                        };
                        if c == 'S' {
                            split = value;
                        } else if c == 'C'
                            && let Some(d) = value
                        {
                            self.place = self.place.enter(&d);
                        }
                        break;
                    }
                }
                i += consumed;
                if let Some(s) = split {
                    rest = split_words(&s.text, s.dynamic);
                    break;
                }
                continue;
            }
            match env_assignment(a) {
                Some(kv) => {
                    env.push(kv);
                    i += 1;
                }
                None => break,
            }
        }
        // After -S the split words may hold more assignments and the command, followed
        // by the remaining arguments.
        rest.extend(args.iter().skip(i).cloned());
        if rest.is_empty() {
            return;
        }
        let mut j = 0;
        while let Some(kv) = rest.get(j).and_then(env_assignment) {
            env.push(kv);
            j += 1;
        }
        if j < rest.len() {
            self.classify(rest[j..].to_vec(), env, stdin);
        }
    }

    /// `xargs [opts] cmd args…`: stdin words are appended, so they are unknown unless
    /// the pipe's text is.
    pub(super) fn xargs(&mut self, args: &[Arg], env: Vec<(String, Arg)>, stdin: Stdin) {
        const SHORT_VALUE: &str = "ILnPsdEaR";
        const LONG_VALUE: &[&str] = &[
            "--arg-file",
            "--delimiter",
            "--max-args",
            "--max-procs",
            "--max-lines",
            "--max-chars",
            "--process-slot-var",
        ];
        let mut i = 0;
        let mut replace: Option<String> = None;
        while let Some(a) = args.get(i) {
            let t = a.text.as_str();
            if t == "--" {
                i += 1;
                break;
            }
            if !t.starts_with('-') || t == "-" {
                break;
            }
            i += 1;
            if let Some(long) = t.strip_prefix("--") {
                if let Some(r) = long.strip_prefix("replace") {
                    replace = Some(r.strip_prefix('=').unwrap_or("{}").to_owned());
                } else if !long.contains('=') && LONG_VALUE.contains(&t) {
                    i += 1;
                }
                continue;
            }
            let body = &t[1..];
            if let Some(r) = body.strip_prefix('I') {
                if r.is_empty() {
                    replace = args.get(i).map(|a| a.text.clone());
                    i += 1;
                } else {
                    replace = Some(r.to_owned());
                }
                continue;
            }
            if let Some(r) = body.strip_prefix('i') {
                replace = Some(if r.is_empty() {
                    "{}".to_owned()
                } else {
                    r.to_owned()
                });
                continue;
            }
            for (k, c) in body.char_indices() {
                if SHORT_VALUE.contains(c) {
                    if k + c.len_utf8() == body.len() {
                        i += 1;
                    }
                    break;
                }
            }
        }
        let mut inner: Vec<Arg> = args.get(i..).unwrap_or_default().to_vec();
        if inner.is_empty() {
            // Plain `xargs` runs echo.
            return;
        }
        // With a replace string each input line is one argument; without, words are.
        let input: Vec<Arg> = match &stdin {
            Stdin::Text(t) if replace.is_some() => t
                .lines()
                .map(|l| Arg::lit(l.trim()))
                .filter(|a| !a.text.is_empty())
                .collect(),
            Stdin::Text(t) => t.split_whitespace().map(Arg::lit).collect(),
            _ => vec![Arg::dynamic("(input from the pipe)")],
        };
        match replace {
            Some(r) => {
                let known = matches!(stdin, Stdin::Text(_));
                for a in inner.iter_mut() {
                    if a.text.contains(&r) {
                        if known {
                            let first = input.first().map(|x| x.text.clone()).unwrap_or_default();
                            a.text = a.text.replace(&r, &first);
                        } else {
                            a.dynamic = true;
                        }
                    }
                }
            }
            None => inner.extend(input),
        }
        self.classify(inner, env, Stdin::Unknown);
    }

    /// `parallel [opts] cmd… ::: args…`: like xargs, the arguments come later.
    pub(super) fn parallel(&mut self, args: &[Arg], env: Vec<(String, Arg)>) {
        let mut i = 0;
        while let Some(a) = args.get(i) {
            let t = a.text.as_str();
            if !t.starts_with('-') || t == "-" {
                break;
            }
            i += 1;
            if matches!(
                t,
                "-j" | "--jobs"
                    | "-S"
                    | "--sshlogin"
                    | "-a"
                    | "--arg-file"
                    | "-d"
                    | "--delimiter"
                    | "-n"
                    | "--max-args"
                    | "-I"
                    | "--joblog"
                    | "--results"
                    | "--timeout"
                    | "--tag-string"
            ) {
                i += 1;
            }
        }
        let rest = args.get(i..).unwrap_or_default();
        let end = rest
            .iter()
            .position(|a| a.text.starts_with(":::"))
            .unwrap_or(rest.len());
        let inner: Vec<Arg> = rest[..end].to_vec();
        if inner.is_empty() {
            return;
        }
        // The values after `:::` are appended to the command (or put where `{}` is), one
        // job each; from a file (`::::`) or a pipe they are unknown.
        let values: Vec<Arg> = match rest.get(end) {
            Some(sep) if sep.text == ":::" => rest[end + 1..]
                .iter()
                .take_while(|a| !a.text.starts_with(":::"))
                .cloned()
                .collect(),
            _ => vec![Arg::dynamic("(arguments from parallel)")],
        };
        let mut origin = vec![Arg::lit("parallel")];
        origin.extend(args.iter().cloned());
        for value in values.iter().take(16) {
            if inner.len() == 1 {
                // A single word is a command line of its own: `parallel 'git {}' ::: push`.
                let line = &inner[0];
                let text = if line.text.contains("{}") {
                    line.text.replace("{}", &super::shell::quote(&value.text))
                } else {
                    format!("{} {}", line.text, super::shell::quote(&value.text))
                };
                let arg = Arg {
                    text,
                    dynamic: line.dynamic || value.dynamic,
                };
                self.shell_text(&arg, &origin);
            } else {
                let mut argv: Vec<Arg> = inner
                    .iter()
                    .map(|a| {
                        if a.text.contains("{}") {
                            Arg {
                                text: a.text.replace("{}", &value.text),
                                dynamic: a.dynamic || value.dynamic,
                            }
                        } else {
                            a.clone()
                        }
                    })
                    .collect();
                if !inner.iter().any(|a| a.text.contains("{}")) {
                    argv.push(value.clone());
                }
                self.with_outer(&origin, |w| {
                    w.current = super::shell::join_args(&argv);
                    w.classify(argv, env.clone(), Stdin::Unknown)
                });
            }
        }
    }

    /// `find … -exec cmd {} ;` (and `-execdir`, `-ok`, `-okdir`).
    pub(super) fn find(&mut self, args: &[Arg]) {
        // `-delete` removes what it finds under the start points; `-fprint FILE` and its
        // kin write FILE.
        let starts: Vec<&Arg> = args
            .iter()
            .take_while(|a| !a.text.starts_with('-') && !matches!(a.text.as_str(), "(" | "!"))
            .collect();
        if args.iter().any(|a| a.text == "-delete") {
            for s in &starts {
                self.write_to(s, "deletes under");
            }
        }
        for (k, a) in args.iter().enumerate() {
            if matches!(
                a.text.as_str(),
                "-fprint" | "-fprint0" | "-fprintf" | "-fls"
            ) && let Some(f) = args.get(k + 1)
            {
                self.write_to(f, "writes");
            }
        }
        let mut i = 0;
        while i < args.len() {
            if matches!(
                args[i].text.as_str(),
                "-exec" | "-execdir" | "-ok" | "-okdir"
            ) {
                let start = i + 1;
                let mut end = start;
                while end < args.len() && !matches!(args[end].text.as_str(), ";" | "+") {
                    end += 1;
                }
                let inner: Vec<Arg> = args
                    .get(start..end)
                    .unwrap_or_default()
                    .iter()
                    .map(|a| {
                        if a.text.contains("{}") {
                            Arg::dynamic(a.text.clone())
                        } else {
                            a.clone()
                        }
                    })
                    .collect();
                if !inner.is_empty() {
                    self.classify(inner, Vec::new(), Stdin::Inherit);
                }
                i = end;
            }
            i += 1;
        }
    }

    /// `watch [opts] cmd…` runs its words through `sh -c` (or directly with `-x`).
    pub(super) fn watch(&mut self, args: &[Arg]) {
        let mut i = 0;
        let mut exec = false;
        while let Some(a) = args.get(i) {
            let t = a.text.as_str();
            if !t.starts_with('-') {
                break;
            }
            i += 1;
            if matches!(t, "-n" | "--interval" | "-q" | "--equexit") {
                i += 1;
            }
            if t == "-x" || t == "--exec" {
                exec = true;
            }
        }
        if i >= args.len() {
            return;
        }
        if exec {
            self.classify(args[i..].to_vec(), Vec::new(), Stdin::Inherit);
            return;
        }
        let dynamic = args[i..].iter().any(|a| a.dynamic);
        let text: Vec<&str> = args[i..].iter().map(|a| a.text.as_str()).collect();
        let c = Arg {
            text: text.join(" "),
            dynamic,
        };
        let mut argv = vec![Arg::lit("watch")];
        argv.extend(args.iter().cloned());
        self.shell_text(&c, &argv);
    }

    /// `nix develop … --command cmd…`, `nix shell … -c cmd…`.
    pub(super) fn nix(&mut self, args: &[Arg], env: Vec<(String, Arg)>, stdin: Stdin) {
        if !args
            .first()
            .is_some_and(|a| matches!(a.text.as_str(), "develop" | "shell" | "run"))
        {
            return;
        }
        if let Some(i) = args
            .iter()
            .position(|a| a.text == "--command" || a.text == "-c")
            && i + 1 < args.len()
        {
            self.classify(args[i + 1..].to_vec(), env, stdin);
        }
    }

    /// `nix-shell --run 'cmd'` / `--command 'cmd'`.
    pub(super) fn nix_shell(&mut self, args: &[Arg]) {
        if let Some(i) = args
            .iter()
            .position(|a| a.text == "--run" || a.text == "--command")
            && let Some(c) = args.get(i + 1)
        {
            let mut argv = vec![Arg::lit("nix-shell")];
            argv.extend(args.iter().cloned());
            self.shell_text(c, &argv);
        }
    }
}

/// A `NAME=VALUE` word as `env` reads it: any name without a slash, not only a shell
/// variable name (`BASH_FUNC_f%%=() { …; }` exports a function).
fn env_assignment(a: &Arg) -> Option<(String, Arg)> {
    let (n, v) = a.text.split_once('=')?;
    (!n.is_empty() && !n.contains('/') && !n.starts_with('-')).then(|| {
        (
            n.to_owned(),
            Arg {
                text: v.to_owned(),
                dynamic: a.dynamic,
            },
        )
    })
}
