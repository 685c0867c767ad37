//! Decides what one simple command does, once its words are known.
//!
//! Wrappers (`env`, `sudo`, `timeout`, `xargs`, `nix develop --command`…) are peeled off
//! until the real program shows; shells given `-c` or fed a heredoc, `eval`, `trap` and
//! `watch` have their command text analyzed again; scripts are read through the
//! context. `git` and `gh` have their own modules.

use super::Effect;
use super::shell::{Stdin, Walker, quote};
use super::words::Arg;
use super::wrappers::Wrapper;

/// Programs that run the shell text they are given (`-c`) or read from stdin.
const SHELLS: &[&str] = &[
    "sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "yash", "fish",
];

/// Interpreters whose code can call git in ways the shell parser can't see.
const INTERPRETERS: &[&str] = &[
    "python",
    "python3",
    "python2",
    "node",
    "deno",
    "bun",
    "perl",
    "ruby",
    "php",
    "lua",
    "osascript",
];

/// Task runners whose targets are named, not shown: strict mode judges them by name.
const RUNNERS: &[&str] = &[
    "make",
    "gmake",
    "just",
    "npm",
    "pnpm",
    "yarn",
    "bun",
    "cargo",
    "rake",
    "task",
    "mise",
    "gradle",
    "./gradlew",
    "mvn",
    "invoke",
    "nox",
    "tox",
    "poe",
    "hatch",
    "earthly",
];

/// Programs that can change a file given as an argument.
const FILE_WRITERS: &[&str] = &[
    "rm", "mv", "cp", "tee", "ln", "truncate", "dd", "install", "rsync", "sed", "perl", "touch",
    "shred", "unlink",
];

impl Walker<'_> {
    /// Classifies one simple command. `env` holds its prefix assignments.
    pub(super) fn classify(&mut self, argv: Vec<Arg>, env: Vec<(String, Arg)>, stdin: Stdin) {
        let Some(first) = argv.first() else {
            return;
        };
        self.check_ship(&argv);
        if first.dynamic {
            let reason = format!("its command word `{}` is computed at run time", first.text);
            self.unfollowable(reason);
            return;
        }
        let path = first.text.clone();
        let name = basename(&path).to_owned();
        let args = &argv[1..];

        match name.as_str() {
            "git" | "hub" => {
                if name == "hub" && args.first().is_some_and(|a| a.text == "pull-request") {
                    self.found(Effect::PrCreate);
                    return;
                }
                self.git(args, &env, &stdin, 0);
                return;
            }
            "gh" => {
                self.gh(args);
                return;
            }
            _ => {}
        }
        if let Some(sub) = name.strip_prefix("git-") {
            // The dashed form runs the subcommand directly (`git-push`, from the exec path).
            let mut v = vec![Arg::lit(sub)];
            v.extend(args.iter().cloned());
            self.git(&v, &env, &stdin, 0);
            return;
        }
        if SHELLS.contains(&name.as_str()) {
            self.shell(&argv, stdin);
            return;
        }
        match name.as_str() {
            "env" => self.env_wrapper(args, env, stdin),
            "eval" => self.eval(args),
            "source" | "." => {
                if let Some(p) = args.first() {
                    self.script(p, &argv);
                }
            }
            "trap" => self.trap(args),
            "alias" => {
                for a in args {
                    if let Some((n, v)) = a.text.split_once('=')
                        && !a.dynamic
                    {
                        self.aliases.insert(n.to_owned(), v.to_owned());
                    }
                }
            }
            "export" | "declare" | "typeset" | "local" | "readonly" => {
                for a in args {
                    if let Some((n, v)) = a.text.split_once('=') {
                        let n = n.trim_end_matches('+');
                        let value = Arg {
                            text: v.to_owned(),
                            dynamic: a.dynamic,
                        };
                        self.set_var(n, &value);
                    }
                }
            }
            "unset" => {
                for a in args {
                    self.vars.remove(&a.text);
                }
            }
            "cd" | "pushd" => {
                if let Some(dir) = args.iter().find(|a| !a.text.starts_with('-')) {
                    self.cwd = (!dir.dynamic).then(|| dir.text.clone());
                }
            }
            "xargs" => self.xargs(args, env, stdin),
            "parallel" => self.parallel(args, env),
            "find" => self.find(args),
            "watch" => self.watch(args),
            "nix" => self.nix(args, env, stdin),
            "nix-shell" => self.nix_shell(args),
            "direnv" => {
                if args.first().is_some_and(|a| a.text == "exec") && args.len() > 2 {
                    self.classify(args[2..].to_vec(), env, stdin);
                }
            }
            "su" => {
                if let Some(i) = args
                    .iter()
                    .position(|a| a.text == "-c" || a.text == "--command")
                    && let Some(c) = args.get(i + 1)
                {
                    self.shell_text(c, &argv);
                }
            }
            "script" => {
                if let Some(i) = args
                    .iter()
                    .position(|a| a.text == "-c" || a.text == "--command")
                    && let Some(c) = args.get(i + 1)
                {
                    self.shell_text(c, &argv);
                }
            }
            "ssh" | "mosh" => {
                // A command given to ssh runs on another machine: not this repo's push.
            }
            n if INTERPRETERS.contains(&n) && !(n == "bun" && is_runner_call(args)) => {
                self.interpreter(&argv, &stdin)
            }
            n if RUNNERS.contains(&n) => self.runner(&argv),
            _ => {
                if let Some(w) = Wrapper::named(&name) {
                    self.wrapper(w, &argv, env, stdin);
                    return;
                }
                if FILE_WRITERS.contains(&name.as_str())
                    && let Some(a) = args.iter().find(|a| a.text.contains("refs/notes"))
                {
                    let how = format!("{name} {}", a.text);
                    self.found(Effect::NoteWrite { how });
                }
                if path.contains('/') {
                    self.script(&argv[0], &argv);
                }
            }
        }
    }

    /// Flags the configured ship command, matched on its leading literal words.
    fn check_ship(&mut self, argv: &[Arg]) {
        let Some(ship) = self.ctx.ship_command() else {
            return;
        };
        let want: Vec<&str> = ship
            .split_whitespace()
            .take_while(|w| !w.contains('{') && !matches!(*w, "&&" | "||" | ";" | "|"))
            .collect();
        if want.is_empty() || argv.len() < want.len() {
            return;
        }
        if argv
            .iter()
            .zip(&want)
            .all(|(a, w)| !a.dynamic && a.text == *w)
        {
            self.found(Effect::ShipCommand);
        }
    }

    /// `sh`, `bash -ec '…'`, `bash script.sh`, `bash <<EOF`, `… | sh`.
    fn shell(&mut self, argv: &[Arg], stdin: Stdin) {
        let args = &argv[1..];
        let mut i = 0;
        let mut has_c = false;
        let mut reads_stdin = false;
        while let Some(a) = args.get(i) {
            let t = a.text.as_str();
            if a.dynamic {
                if !has_c {
                    self.unfollowable(format!("the shell is given a computed argument `{t}`"));
                    return;
                }
                break;
            }
            if t == "--" || t == "-" {
                i += 1;
                break;
            }
            if let Some(long) = t.strip_prefix("--") {
                i += 1;
                if matches!(long, "rcfile" | "init-file") {
                    i += 1;
                }
                if long == "command" {
                    has_c = true;
                }
                continue;
            }
            if (t.starts_with('-') || t.starts_with('+')) && t.len() > 1 {
                i += 1;
                for c in t[1..].chars() {
                    match c {
                        'c' => has_c = true,
                        's' => reads_stdin = true,
                        // -o/-O name a shell option in the next word.
                        'o' | 'O' => i += 1,
                        _ => {}
                    }
                }
                continue;
            }
            break;
        }
        if has_c {
            match args.get(i) {
                Some(c) => self.shell_text(c, argv),
                None => self.unfollowable("`-c` is given no command text we can see"),
            }
            return;
        }
        if !reads_stdin && let Some(script) = args.get(i) {
            self.script(script, argv);
            return;
        }
        match stdin {
            Stdin::Inherit => {}
            Stdin::Text(t) => {
                let t = t.clone();
                self.with_outer(argv, |w| w.analyze_str(&t));
            }
            Stdin::Unknown => {
                self.unfollowable("a shell reads commands from input the guard can't see")
            }
        }
    }

    /// Analyzes a command string handed to a shell (`sh -c`, `su -c`, `watch`…).
    pub(super) fn shell_text(&mut self, c: &Arg, argv: &[Arg]) {
        if c.dynamic {
            let reason = format!("the shell command `{}` is computed at run time", c.text);
            self.unfollowable(reason);
            return;
        }
        let text = c.text.clone();
        self.with_outer(argv, |w| w.analyze_str(&text));
    }

    fn eval(&mut self, args: &[Arg]) {
        if args.is_empty() {
            return;
        }
        if let Some(d) = args.iter().find(|a| a.dynamic) {
            let reason = format!("`eval` runs `{}`, which is computed at run time", d.text);
            self.unfollowable(reason);
            return;
        }
        let text: Vec<&str> = args.iter().map(|a| a.text.as_str()).collect();
        let text = text.join(" ");
        let mut argv = vec![Arg::lit("eval")];
        argv.extend(args.iter().cloned());
        self.with_outer(&argv, |w| w.analyze_str(&text));
    }

    /// `trap 'cmd' SIGNAL…` runs `cmd` later; it counts now.
    fn trap(&mut self, args: &[Arg]) {
        let mut i = 0;
        while args.get(i).is_some_and(|a| a.text.starts_with('-')) {
            if matches!(args[i].text.as_str(), "-p" | "-l") {
                return;
            }
            i += 1;
        }
        if let Some(c) = args.get(i)
            && args.len() > i + 1
        {
            let mut argv = vec![Arg::lit("trap")];
            argv.extend(args.iter().cloned());
            self.shell_text(c, &argv);
        }
    }

    /// Runs a script file: follow it when it can be read, and in strict mode distrust
    /// one that mentions push or release.
    pub(super) fn script(&mut self, path: &Arg, argv: &[Arg]) {
        if path.dynamic {
            let reason = format!(
                "it runs `{}`, a script path computed at run time",
                path.text
            );
            self.unfollowable(reason);
            return;
        }
        match self.ctx.read_script(&path.text) {
            Some(text) => {
                if mentions_push(&text) {
                    let reason = format!("the script {} mentions push or release", path.text);
                    self.unfollowable(reason);
                }
                if looks_like_shell(&path.text, &text) {
                    // The script runs in a new shell: its variables and aliases are its own.
                    let vars = std::mem::take(&mut self.vars);
                    let aliases = std::mem::take(&mut self.aliases);
                    self.with_outer(argv, |w| w.analyze_str(&text));
                    self.vars = vars;
                    self.aliases = aliases;
                }
            }
            None => {
                if mentions_push(&path.text) {
                    let reason = format!(
                        "the script {} can't be read and its name says push or release",
                        path.text
                    );
                    self.unfollowable(reason);
                }
            }
        }
    }

    /// `python -c '…'`, `node script.js`, `python3 - <<EOF`: judge the code by its words.
    fn interpreter(&mut self, argv: &[Arg], stdin: &Stdin) {
        let args = &argv[1..];
        let mut i = 0;
        while let Some(a) = args.get(i) {
            let t = a.text.as_str();
            if matches!(t, "-c" | "-e" | "--eval" | "-E" | "-p" | "--print" | "-r") {
                if let Some(code) = args.get(i + 1)
                    && (code.dynamic || mentions_push(&code.text))
                {
                    let reason = format!(
                        "{} runs inline code that the guard can't follow and that mentions push or release",
                        argv[0].text
                    );
                    self.unfollowable(reason);
                }
                return;
            }
            if t == "-" {
                break;
            }
            if t == "-m" {
                // A module: judge by its name.
                if let Some(m) = args.get(i + 1)
                    && mentions_push(&m.text)
                {
                    self.unfollowable(format!("the module {} mentions push or release", m.text));
                }
                return;
            }
            if !t.starts_with('-') {
                self.script(a, argv);
                return;
            }
            i += 1;
        }
        if let Stdin::Text(t) = stdin
            && mentions_push(t)
        {
            let reason = format!(
                "{} reads code from a heredoc that mentions push or release",
                argv[0].text
            );
            self.unfollowable(reason);
        }
    }

    /// `make release`, `npm run push`, `just release`: a target can't be followed, so
    /// strict mode judges it by name.
    fn runner(&mut self, argv: &[Arg]) {
        let name = basename(&argv[0].text);
        let targets: Vec<&Arg> = argv[1..]
            .iter()
            .filter(|a| !a.text.starts_with('-') && !a.text.contains('='))
            .collect();
        // For cargo and the package managers only the verb and script name matter;
        // `cargo build --release` is not a release.
        let considered: Vec<&Arg> = match name {
            "cargo" => targets.into_iter().take(2).collect(),
            "npm" | "pnpm" | "yarn" | "bun" => targets.into_iter().take(2).collect(),
            _ => targets,
        };
        if let Some(t) = considered
            .iter()
            .find(|a| a.dynamic || mentions_push(&a.text))
        {
            let reason = format!(
                "`{}` runs the target `{}`, which the guard can't follow",
                name, t.text
            );
            self.unfollowable(reason);
        }
    }

    /// Re-analyzes `text` followed by `args` as shell, recording `argv` as the origin.
    pub(super) fn run_text_with_args(&mut self, text: &str, args: &[Arg], origin: &[Arg]) {
        // Computed arguments only matter if the text runs them as commands, and the
        // analysis of the text shows that (they arrive as `$1`…, which are computed).
        let mut full = text.to_owned();
        for a in args {
            full.push(' ');
            full.push_str(&quote(&a.text));
        }
        self.with_outer(origin, |w| w.analyze_str(&full));
    }
}

/// `bun run x` is the runner, `bun x.ts` the interpreter.
fn is_runner_call(args: &[Arg]) -> bool {
    args.first()
        .is_some_and(|a| matches!(a.text.as_str(), "run" | "x" | "install" | "test"))
}

/// The last path component of a command word.
pub(super) fn basename(p: &str) -> &str {
    p.rsplit('/').next().unwrap_or(p)
}

/// Whether `n` is a valid shell variable name.
pub(super) fn is_name(n: &str) -> bool {
    let mut chars = n.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Splits text into words the way `env -S` and git's alias splitting do: blanks
/// separate, single and double quotes group, backslash escapes.
pub(super) fn split_words(s: &str, dynamic: bool) -> Vec<Arg> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut started = false;
    let mut chars = s.chars();
    let mut quote: Option<char> = None;
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some('"'), '\\') | (None, '\\') => {
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            (Some(_), c) => cur.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                started = true;
            }
            (None, ' ' | '\t' | '\n') => {
                if started || !cur.is_empty() {
                    out.push(Arg {
                        text: std::mem::take(&mut cur),
                        dynamic,
                    });
                }
                started = false;
            }
            (None, c) => {
                cur.push(c);
                started = true;
            }
        }
    }
    if started || !cur.is_empty() {
        out.push(Arg { text: cur, dynamic });
    }
    out
}

/// Whether text mentions push or release as a word (`git-push`, `release.sh`, not
/// `pushd` or `prerelease`).
pub(super) fn mentions_push(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    for word in ["push", "release"] {
        let mut from = 0;
        while let Some(pos) = lower[from..].find(word) {
            let start = from + pos;
            let end = start + word.len();
            let before = lower[..start].chars().next_back();
            let after = lower[end..].chars().next();
            let boundary = |c: Option<char>| c.is_none_or(|c| !c.is_ascii_alphanumeric());
            if boundary(before) && boundary(after) {
                return true;
            }
            from = end;
        }
    }
    false
}

/// Whether a script should be parsed as shell: by extension or shebang.
fn looks_like_shell(path: &str, text: &str) -> bool {
    let first = text.lines().next().unwrap_or("");
    if let Some(shebang) = first.strip_prefix("#!") {
        return SHELLS.iter().any(|s| {
            shebang
                .split(|c: char| c == '/' || c.is_whitespace())
                .any(|w| w == *s)
        });
    }
    path.ends_with(".sh")
        || path.ends_with(".bash")
        || path.ends_with(".zsh")
        || !path.contains('.')
}
