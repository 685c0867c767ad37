//! Decides what one simple command does, once its words are known.
//!
//! Wrappers (`env`, `sudo`, `timeout`, `xargs`, `nix develop --command`…) are peeled off
//! until the real program shows; shells given `-c` or fed a heredoc, `eval`, `trap` and
//! `watch` have their command text analyzed again; scripts are read through the
//! context. `git` and `gh` have their own modules.

use super::Effect;
use super::place::Place;
use super::shell::{Stdin, Walker, quote};
use super::words::Arg;
use super::wrappers::Wrapper;

/// Programs that run the shell text they are given (`-c`) or read from stdin.
pub(super) const SHELLS: &[&str] = &[
    "sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "yash", "fish",
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

/// How many commands may be classified inside one another (wrappers, aliases, nested
/// shells together) before the rest is unfollowable.
const MAX_WRAPPED: usize = 64;

impl Walker<'_> {
    /// Keeps the first words of a simple command for [`super::kind`].
    fn note_program(&mut self, argv: &[Arg]) {
        /// Enough to see a program, its subcommand and its flags.
        const WORDS: usize = 12;
        /// A pathological command can't make the list grow without end.
        const PROGRAMS: usize = 64;
        if self.programs.len() < PROGRAMS {
            let words = argv
                .iter()
                .take(WORDS)
                .map(|a| {
                    if a.dynamic {
                        "$?".to_string()
                    } else {
                        a.text.clone()
                    }
                })
                .collect();
            self.programs.push(words);
        }
    }

    /// Classifies one simple command. `env` holds its prefix assignments.
    ///
    /// Wrappers classify the command they wrap, so a chain of them (`env env env … git
    /// push`) recurses; past [`MAX_WRAPPED`] the chain is unfollowable, and what it ends
    /// in is still classified from its last `git`, `gh` or `hub` word, so parse mode sees
    /// a push there. Unbounded, a long chain overflowed the stack, and a hook that dies
    /// lets the call through.
    pub(super) fn classify(&mut self, argv: Vec<Arg>, env: Vec<(String, Arg)>, stdin: Stdin) {
        if self.wrapped >= MAX_WRAPPED {
            self.unfollowable(format!(
                "it nests commands in wrappers more than {MAX_WRAPPED} deep, more than the guard follows"
            ));
            let tail = argv.iter().rposition(|a| {
                let name = basename(&a.text);
                matches!(name, "git" | "gh" | "hub") || name.starts_with("git-")
            });
            if self.wrapped == MAX_WRAPPED
                && let Some(i) = tail.filter(|&i| i > 0)
            {
                self.wrapped += 1;
                self.classify_one(argv[i..].to_vec(), env, stdin);
                self.wrapped -= 1;
            }
            return;
        }
        self.wrapped += 1;
        self.classify_one(argv, env, stdin);
        self.wrapped -= 1;
    }

    fn classify_one(&mut self, argv: Vec<Arg>, env: Vec<(String, Arg)>, stdin: Stdin) {
        let Some(first) = argv.first() else {
            return;
        };
        self.check_ship(&argv);
        self.note_program(&argv);
        if first.dynamic || first.text.contains(['*', '?', '[']) {
            let reason = format!("its command word `{}` is computed at run time", first.text);
            self.unfollowable(reason);
            // `$(which hall) retry`: a computed word that names hall is judged as hall.
            if first.text.contains("hall") {
                let env = env.clone();
                self.hall(&argv, &env);
            }
            return;
        }
        self.risky_env(&env);
        let path = first.text.clone();
        let name = basename(&path).to_owned();
        let args = &argv[1..];

        match name.as_str() {
            "git" | "hub" => {
                if name == "hub" && args.first().is_some_and(|a| a.text == "pull-request") {
                    self.found(Effect::PrCreate {
                        place: self.place.clone(),
                        head: None,
                    });
                    return;
                }
                self.git(args, &env, &stdin, 0);
                return;
            }
            "gh" => {
                self.gh(args);
                return;
            }
            n if super::hall::is_hall(n) => {
                self.hall(&argv, &env);
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
            self.shell(&argv, &env, stdin);
            return;
        }
        match name.as_str() {
            "env" => self.env_wrapper(args, env, stdin),
            "eval" => self.eval(args),
            "source" | "." => {
                if let Some(p) = args.first() {
                    self.source(p, &argv)
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
                // `declare -n ref=var` makes a name that follows another: unknown.
                let nameref = args
                    .iter()
                    .take_while(|a| a.text.starts_with('-'))
                    .any(|a| a.text.contains('n') && !a.text.starts_with("--"));
                for a in args {
                    if let Some((n, v)) = a.text.split_once('=') {
                        let n = n.trim_end_matches('+');
                        if nameref {
                            self.forget_var(n);
                            self.forget_var(v);
                            self.namerefs.insert(n.to_owned(), v.to_owned());
                            continue;
                        }
                        let value = Arg {
                            text: v.to_owned(),
                            dynamic: a.dynamic,
                        };
                        self.set_var(n, &value);
                    } else if nameref && is_name(&a.text) {
                        self.forget_var(&a.text);
                        self.namerefs.insert(a.text.clone(), String::new());
                    }
                }
            }
            "read" | "mapfile" | "readarray" | "getopts" | "let" => {
                // Each assigns names from input or arithmetic the guard doesn't see.
                for a in args {
                    let n = a.text.split('=').next().unwrap_or("");
                    if is_name(n) {
                        self.forget_var(n);
                    }
                }
                if name == "read" || name == "mapfile" || name == "readarray" {
                    self.forget_var("REPLY");
                    self.forget_var("MAPFILE");
                }
            }
            "printf" => {
                // `printf -v NAME …` assigns NAME.
                if let Some(i) = args.iter().position(|a| a.text == "-v")
                    && let Some(n) = args.get(i + 1)
                {
                    self.forget_var(&n.text);
                }
                self.file_args("printf", args, None);
            }
            "unset" => {
                for a in args {
                    self.vars.remove(&a.text);
                }
            }
            "cd" | "pushd" | "popd" | "chdir" => self.cd(&name, args),
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
            "su" | "script" | "sg" => {
                if let Some(c) = command_option(args) {
                    self.shell_text(&c, &argv);
                } else if name == "su" || name == "sg" {
                    // A login shell reads commands from its input.
                    self.unfollowable(format!(
                        "`{name}` starts a shell that reads commands the guard can't see"
                    ));
                }
            }
            "ssh" | "mosh" => {
                // A command given to ssh runs on another machine: not this repo's push.
            }
            "make" | "gmake" | "bmake" => self.make(&argv, &stdin),
            n if let Some(why) =
                super::programs::runs_own_commands(n, args, matches!(stdin, Stdin::Inherit)) =>
            {
                self.unfollowable(why)
            }
            n if super::programs::is_db_shell(n) => self.db_shell(n, args, &stdin),
            n if n == "bun" && is_runner_call(args) => self.runner(&argv),
            n if super::code::Lang::of(n).is_some() => self.interpreter(&argv, &stdin),
            n if RUNNERS.contains(&n) => self.runner(&argv),
            _ => {
                if let Some(w) = Wrapper::named(&name) {
                    self.wrapper(w, &argv, env, stdin);
                    return;
                }
                let stdin_text = match &stdin {
                    Stdin::Text(t) => Some(t.clone()),
                    _ => None,
                };
                if self.file_args(&name, args, stdin_text.as_deref()) {
                    return;
                }
                if path.contains('/') {
                    self.script(&argv[0], &argv);
                }
                // A program the guard doesn't know: judge the paths it is given, and
                // follow a command hidden in its arguments.
                for a in args.iter().filter(|a| super::programs::looks_like_path(a)) {
                    self.use_path(a, &name, false);
                }
                self.unknown_wrapper(&argv);
            }
        }
    }

    /// Environment that changes what any program runs: a preloaded library, or a
    /// shell startup file.
    fn risky_env(&mut self, env: &[(String, Arg)]) {
        for (k, v) in env {
            if k.starts_with("BASH_FUNC_") {
                // An exported function: bash defines it from the environment.
                let body = v.text.trim_start().trim_start_matches("()").to_owned();
                self.analyze_str(&body);
                self.unfollowable(format!(
                    "{k} hands bash a function it defines from the environment"
                ));
                continue;
            }
            if matches!(
                k.as_str(),
                "LD_PRELOAD"
                    | "LD_LIBRARY_PATH"
                    | "LD_AUDIT"
                    | "DYLD_INSERT_LIBRARIES"
                    | "DYLD_LIBRARY_PATH"
            ) {
                self.unfollowable(format!("{k}={} loads code into the program", v.text));
            }
        }
    }

    /// `cd DIR`, `pushd DIR`, `popd`: where later commands run.
    fn cd(&mut self, name: &str, args: &[Arg]) {
        let dir = args.iter().find(|a| !a.text.starts_with('-') || a.dynamic);
        let mut next = match (name, dir) {
            ("popd", _) => Place::unknown(),
            (_, Some(d)) if d.text == "-" => Place::unknown(),
            (_, Some(d)) => self.place.enter(d),
            (_, None) if args.iter().any(|a| a.text == "-") => Place::unknown(),
            (_, None) => self.place.enter(&Arg::lit("~")),
        };
        if self.cond_depth > 0 {
            // A `cd` the shell may skip leaves the directory unknown.
            next.dynamic = true;
        }
        self.place = next;
    }

    /// `source FILE` runs FILE in this shell: its assignments last.
    fn source(&mut self, path: &Arg, argv: &[Arg]) {
        match self.script_text(path) {
            Some(text) => self.with_outer(argv, |w| w.analyze_str(&text)),
            None => {
                // Whatever it set is unknown from here on.
                self.vars.clear();
                self.script(path, argv);
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
        // A ship command that starts with git or gh is judged precisely by what it runs.
        if want.first().is_some_and(|w| matches!(*w, "git" | "gh")) {
            return;
        }
        if want.is_empty() || argv.len() < want.len() {
            return;
        }
        if argv
            .iter()
            .zip(&want)
            .all(|(a, w)| !a.dynamic && a.text == *w)
        {
            self.found(Effect::ShipCommand {
                place: self.place.clone(),
            });
        }
    }

    /// `sh`, `bash -ec '…'`, `bash script.sh`, `bash <<EOF`, `… | sh`.
    fn shell(&mut self, argv: &[Arg], env: &[(String, Arg)], stdin: Stdin) {
        let args = &argv[1..];
        // A startup file named in the environment runs before anything else.
        for (k, v) in env {
            if matches!(
                k.as_str(),
                "BASH_ENV" | "ENV" | "ZDOTDIR" | "PROMPT_COMMAND"
            ) && !matches!(v.text.as_str(), "" | "/dev/null")
            {
                self.unfollowable(format!("{k}={} makes the shell run a file first", v.text));
            }
        }
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
                reads_stdin |= t == "-";
                break;
            }
            if let Some(long) = t.strip_prefix("--") {
                i += 1;
                if matches!(long, "rcfile" | "init-file") {
                    if let Some(f) = args.get(i) {
                        self.script(f, argv);
                    }
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

    /// `make release`, `npm run push`, `just release`: a target can't be followed, so
    /// strict mode judges it by name.
    pub(super) fn runner(&mut self, argv: &[Arg]) {
        let name = basename(&argv[0].text);
        let targets: Vec<&Arg> = argv[1..]
            .iter()
            .filter(|a| !a.text.starts_with('-') && !a.text.contains('='))
            .collect();
        // For cargo and the package managers only the verb and script name matter;
        // `cargo build --release` is not a release.
        let considered: Vec<&Arg> = match name {
            // `cargo test push` filters tests by name; only the subcommand runs things.
            "cargo" => targets.into_iter().take(1).collect(),
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

/// The command text given to `su -c`, `script -c`/`--command=`, `sg GROUP -c`.
fn command_option(args: &[Arg]) -> Option<Arg> {
    for (i, a) in args.iter().enumerate() {
        let t = a.text.as_str();
        if t == "-c" || t == "--command" || t == "--session-command" {
            return args.get(i + 1).cloned();
        }
        if let Some(c) = t
            .strip_prefix("--command=")
            .or_else(|| t.strip_prefix("--session-command="))
        {
            return Some(Arg {
                text: c.to_owned(),
                dynamic: a.dynamic,
            });
        }
        // A short cluster holding `c` (`-qc'cmd'`, `-lc cmd`): the rest of the cluster,
        // else the next word, is the command.
        if !t.starts_with("--")
            && t.len() > 1
            && t.starts_with('-')
            && let Some(pos) = t[1..].find('c')
        {
            let rest = &t[1 + pos + 1..];
            return if rest.is_empty() {
                args.get(i + 1).cloned()
            } else {
                Some(Arg {
                    text: rest.to_owned(),
                    dynamic: a.dynamic,
                })
            };
        }
    }
    // `sg GROUP COMMAND`: the command is the second operand.
    None
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

#[cfg(test)]
mod bound_tests {
    use super::super::{Effect, StaticContext, analyze};

    fn pushes(command: &str) -> (bool, bool) {
        let a = analyze(command, &StaticContext::default());
        let push = a
            .findings
            .iter()
            .any(|f| matches!(f.effect, Effect::Push { .. }));
        let unfollowable = a
            .findings
            .iter()
            .any(|f| matches!(f.effect, Effect::Unfollowable { .. }));
        (push, unfollowable)
    }

    #[test]
    fn a_long_chain_of_wrappers_is_bounded_and_the_push_at_its_end_still_seen() {
        for wrapper in ["env", "xargs", "nice", "nohup", "time", "exec"] {
            let command = format!(
                "{}git push origin HEAD:x",
                format!("{wrapper} ").repeat(3000)
            );
            assert_eq!(pushes(&command), (true, true), "{wrapper}");
        }
        assert_eq!(pushes("env nice git push origin HEAD:x"), (true, false));
    }

    #[test]
    fn compound_commands_nested_past_the_bound_are_not_parsed_but_scanned() {
        let tail = "git push origin HEAD:x";
        for (open, close) in [
            ("if true; then ", "; fi"),
            ("while true; do ", "; done"),
            ("case x in x) ", " ;; esac"),
        ] {
            let command = format!("{}{tail}{}", open.repeat(2000), close.repeat(2000));
            let a = analyze(&command, &StaticContext::default());
            assert!(a.parse_error.is_some(), "{open}");
            assert!(
                a.findings
                    .iter()
                    .any(|f| matches!(f.effect, Effect::Push { .. })),
                "{open}"
            );
        }
        let shallow = format!("{}{tail}{}", "if true; then ".repeat(20), "; fi".repeat(20));
        assert!(
            analyze(&shallow, &StaticContext::default())
                .parse_error
                .is_none()
        );
    }
}
