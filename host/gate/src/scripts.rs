//! Code the shell hands to something else: script files (followed when they are shell,
//! judged by what they can do and name when they are not), interpreters given inline
//! code, makefiles, and database shells.

use super::classify::{SHELLS, basename, mentions_push};
use super::shell::{Stdin, Walker};
use super::words::Arg;

impl Walker<'_> {
    /// The text of a script: a file this command wrote (when its text is known), else
    /// the file on disk. Devices and descriptors (`/dev/stdin`, `/proc/self/fd/0`) have
    /// no text the guard can read.
    pub(super) fn script_text(&self, path: &Arg) -> Option<String> {
        if path.dynamic {
            return None;
        }
        let p = path.text.as_str();
        if p.starts_with("/dev/") || p.starts_with("/proc/") {
            return None;
        }
        let key = self.written_key(p);
        if let Some(known) = self.written.get(&key) {
            return known.clone();
        }
        let at = super::place::join(self.place.dir.as_deref(), p);
        if self.place.dynamic {
            return None;
        }
        self.ctx.read_script(&at)
    }

    /// Runs a script file: follow it when it can be read, and in strict mode distrust
    /// one that can't be read, or one that mentions push or release.
    pub(super) fn script(&mut self, path: &Arg, argv: &[Arg]) {
        if path.dynamic {
            let reason = format!(
                "it runs `{}`, a script path computed at run time",
                path.text
            );
            self.unfollowable(reason);
            return;
        }
        let written_here = self.written.contains_key(&self.written_key(&path.text));
        match self.script_text(path) {
            Some(text) => {
                if mentions_push(&text) {
                    let reason = format!("the script {} mentions push or release", path.text);
                    self.unfollowable(reason);
                }
                if looks_like_shell(&path.text, &text) {
                    // The script runs in a new shell: its variables and aliases are its own.
                    let vars = std::mem::take(&mut self.vars);
                    let aliases = std::mem::take(&mut self.aliases);
                    let functions = std::mem::take(&mut self.functions);
                    self.with_outer(argv, |w| w.analyze_str(&text));
                    self.vars = vars;
                    self.aliases = aliases;
                    self.functions = functions;
                } else if let Some(lang) = shebang_lang(&text) {
                    self.hall_in_code(&text);
                    if let Some(why) = super::code::script_unreadable(lang, &text) {
                        self.unfollowable(format!("{}: {why}", path.text));
                    }
                }
            }
            None if written_here => {
                self.unfollowable(format!(
                    "it runs {}, which this command writes with text the guard can't see",
                    path.text
                ));
            }
            None if path.text.starts_with("/dev/") || path.text.starts_with("/proc/") => {
                self.unfollowable(format!(
                    "it runs {}, which reads commands from a descriptor the guard can't see",
                    path.text
                ));
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

    /// `python -c '…'`, `node script.js`, `python3 - <<EOF`, `perl -e`, `awk '…'`,
    /// `sed -e '…'`: inline code must be readable (see [`super::code`]), and a script
    /// file is judged by what it can do and what it names.
    pub(super) fn interpreter(&mut self, argv: &[Arg], stdin: &Stdin) {
        use super::code::{Lang, inline_unreadable, script_unreadable};
        let name = basename(&argv[0].text).to_owned();
        let Some(lang) = Lang::of(&name) else {
            return;
        };
        let args = &argv[1..];
        let unreadable = |w: &mut Self, what: &str, why: Option<String>| {
            if let Some(why) = why {
                w.unfollowable(format!(
                    "{name} runs {what} that the guard can't vouch for: {why}"
                ));
            }
        };
        if matches!(lang, Lang::Awk | Lang::Sed) {
            // The program is the first operand, or `-e`/`-f` values; then files.
            let mut i = 0;
            let mut program: Option<Arg> = None;
            let mut files: Vec<Arg> = Vec::new();
            while let Some(a) = args.get(i) {
                i += 1;
                let t = a.text.as_str();
                if matches!(t, "-e" | "--expression" | "--source") {
                    program = args.get(i).cloned();
                    i += 1;
                } else if matches!(t, "-f" | "--file") {
                    if let Some(f) = args.get(i) {
                        program = self
                            .script_text(f)
                            .map(Arg::lit)
                            .or(Some(Arg::dynamic(&f.text)));
                    }
                    i += 1;
                } else if lang == Lang::Sed
                    && (t == "-i" || t.starts_with("-i") || t.starts_with("--in-place"))
                {
                    // Editing in place writes every file operand.
                    for f in args.iter().filter(|a| !a.text.starts_with('-')) {
                        self.write_to(f, "edits in place");
                    }
                } else if lang == Lang::Awk && matches!(t, "-v" | "-F") {
                    i += 1;
                } else if t.starts_with('-') && !a.dynamic {
                } else if program.is_none() {
                    program = Some(a.clone());
                } else {
                    files.push(a.clone());
                }
            }
            for f in &files {
                self.use_path(f, &name, true);
            }
            match program {
                Some(p) if p.dynamic => {
                    unreadable(self, "a program", Some("it is computed at run time".into()))
                }
                Some(p) => {
                    self.hall_in_code(&p.text);
                    unreadable(self, "a program", inline_unreadable(lang, &p.text))
                }
                None => {}
            }
            return;
        }
        let mut i = 0;
        // Perl's `-i` (alone or in a cluster such as `-pi`) edits its file operands.
        let mut in_place = false;
        while let Some(a) = args.get(i) {
            let t = a.text.as_str();
            if lang == Lang::Perl && t.starts_with('-') && !t.starts_with("--") && t.contains('i') {
                in_place = true;
            }
            let inline = matches!(
                t,
                "-c" | "-e" | "-E" | "--eval" | "-p" | "--print" | "-r" | "-n"
            ) && !(lang == Lang::Perl && matches!(t, "-n" | "-p"));
            if inline
                || (lang == Lang::Perl
                    && t.starts_with('-')
                    && !t.starts_with("--")
                    && t.ends_with('e'))
            {
                match args.get(i + 1) {
                    Some(code) if code.dynamic => unreadable(
                        self,
                        "inline code",
                        Some("it is computed at run time".into()),
                    ),
                    Some(code) => {
                        self.hall_in_code(&code.text);
                        unreadable(self, "inline code", inline_unreadable(lang, &code.text))
                    }
                    None => {}
                }
                if lang == Lang::Perl && in_place {
                    for f in args[i + 2..].iter().filter(|a| !a.text.starts_with('-')) {
                        self.write_to(f, "edits in place");
                    }
                }
                return;
            }
            if lang == Lang::Perl && (t.starts_with("-i") || t.starts_with("-pi")) {
                i += 1;
                continue;
            }
            if t == "-" {
                break;
            }
            if t == "-m" {
                // A module: judged by its name.
                if let Some(m) = args.get(i + 1)
                    && (m.dynamic || mentions_push(&m.text))
                {
                    self.unfollowable(format!("the module {} can't be followed", m.text));
                }
                return;
            }
            if !t.starts_with('-') || a.dynamic {
                for extra in &args[i + 1..] {
                    if super::programs::looks_like_path(extra) {
                        self.use_path(extra, &name, false);
                    }
                }
                match self.script_text(a) {
                    Some(text) => {
                        self.hall_in_code(&text);
                        unreadable(self, "a script", script_unreadable(lang, &text))
                    }
                    None => self.script(a, argv),
                }
                return;
            }
            i += 1;
        }
        match stdin {
            Stdin::Text(t) => {
                self.hall_in_code(t);
                unreadable(self, "code from its input", inline_unreadable(lang, t))
            }
            Stdin::Unknown => unreadable(
                self,
                "code from its input",
                Some("the input can't be seen".into()),
            ),
            Stdin::Inherit => {}
        }
    }

    /// `make`, with a makefile from input (`-f -`), text from `--eval`, or another file:
    /// their recipes are shell commands. Named targets of the repository's own makefile
    /// are judged by name, as other runners are.
    pub(super) fn make(&mut self, argv: &[Arg], stdin: &Stdin) {
        let args = &argv[1..];
        let mut i = 0;
        let mut texts: Vec<Option<String>> = Vec::new();
        while let Some(a) = args.get(i) {
            i += 1;
            let t = a.text.as_str();
            let file = if t == "-f" || t == "--file" || t == "--makefile" {
                i += 1;
                args.get(i - 1).cloned()
            } else if let Some(f) = t
                .strip_prefix("--file=")
                .or_else(|| t.strip_prefix("--makefile="))
            {
                Some(Arg {
                    text: f.to_owned(),
                    dynamic: a.dynamic,
                })
            } else {
                t.strip_prefix("-f")
                    .filter(|f| !f.is_empty() && !t.starts_with("--"))
                    .map(|f| Arg {
                        text: f.to_owned(),
                        dynamic: a.dynamic,
                    })
            };
            if let Some(f) = file {
                if f.text == "-" || f.text == "/dev/stdin" {
                    texts.push(match stdin {
                        Stdin::Text(t) => Some(t.clone()),
                        _ => None,
                    });
                } else {
                    texts.push(self.script_text(&f));
                }
                continue;
            }
            let eval = if t == "--eval" || t == "-E" {
                i += 1;
                args.get(i - 1).cloned()
            } else {
                t.strip_prefix("--eval=").map(|e| Arg {
                    text: e.to_owned(),
                    dynamic: a.dynamic,
                })
            };
            if let Some(e) = eval {
                texts.push((!e.dynamic).then_some(e.text));
                continue;
            }
            if t.starts_with("SHELL=") || t.starts_with(".SHELLFLAGS=") {
                self.unfollowable(format!("`{t}` changes the shell make runs recipes with"));
            }
        }
        if texts.is_empty() {
            // The default makefile: one this command wrote is read in full; the one on
            // disk is the repository's, whose targets are judged by name and whose
            // recipes count only for what they definitely do.
            for name in ["GNUmakefile", "makefile", "Makefile"] {
                let key = self.written_key(name);
                if let Some(known) = self.written.get(&key).cloned() {
                    match known {
                        Some(t) => self.make_recipes(&t, argv, false),
                        None => self.unfollowable(
                            "make reads a makefile this command writes with text the guard can't see",
                        ),
                    }
                    return;
                }
            }
            self.runner(argv);
            if let Some(t) = ["GNUmakefile", "makefile", "Makefile"]
                .iter()
                .find_map(|n| self.script_text(&Arg::lit(*n)))
            {
                self.make_recipes(&t, argv, true);
            }
            return;
        }
        for text in texts {
            match text {
                Some(t) => self.make_recipes(&t, argv, false),
                None => self.unfollowable("make reads a makefile whose text the guard can't see"),
            }
        }
    }

    /// Analyzes a makefile's recipes as shell. With `definite_only`, what can't be
    /// followed (make's own variables, mostly) is dropped and only definite effects stay.
    pub(super) fn make_recipes(&mut self, text: &str, argv: &[Arg], definite_only: bool) {
        let recipes = makefile_recipes(text);
        let saved = std::mem::take(&mut self.vars);
        let before = self.findings_len();
        self.with_outer(argv, |w| w.analyze_str(&recipes));
        if definite_only {
            self.drop_unfollowable_since(before);
        }
        self.vars = saved;
    }

    /// Database shells whose dot or backslash commands run programs or write files.
    pub(super) fn db_shell(&mut self, name: &str, args: &[Arg], stdin: &Stdin) {
        let risky = |t: &str| {
            let l = t.to_ascii_lowercase();
            l.contains(".shell")
                || l.contains(".system")
                || l.contains(".output")
                || l.contains(".once")
                || l.contains(".save")
                || l.contains(".backup")
                || l.contains(".import")
                || l.contains(".load")
                || t.contains("\\!")
                || l.contains("\\o")
                || l.contains("\\copy")
                || l.contains("\\w")
                || l.contains("copy ")
                || l.contains("program")
                || l.contains("lo_export")
                || l.contains("attach")
                || l.contains("vacuum into")
                || l.contains("into outfile")
                || l.contains("into dumpfile")
        };
        for a in args {
            if a.dynamic || risky(&a.text) {
                self.unfollowable(format!(
                    "`{name}` is given a command that can reach the system or write files"
                ));
                return;
            }
            if super::programs::looks_like_path(a) {
                self.use_path(a, name, false);
            }
        }
        match stdin {
            Stdin::Text(t) if risky(t) => self.unfollowable(format!(
                "`{name}` reads commands that can reach the system or write files"
            )),
            Stdin::Unknown => {
                self.unfollowable(format!("`{name}` reads commands the guard can't see"))
            }
            _ => {}
        }
    }
}

/// The language a script's `#!` line names, for scripts that aren't shell.
pub(super) fn shebang_lang(text: &str) -> Option<super::code::Lang> {
    let first = text.lines().next()?.strip_prefix("#!")?;
    first
        .split(|c: char| c == '/' || c.is_whitespace())
        .filter(|w| !w.is_empty() && *w != "env" && !w.starts_with('-'))
        .find_map(super::code::Lang::of)
}

/// A makefile's recipe lines (those starting with a tab) and its `$(shell …)` calls,
/// as shell text; make's own `@`, `-` and `+` prefixes are dropped.
pub(super) fn makefile_recipes(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        if let Some(r) = line.strip_prefix('\t') {
            out.push_str(r.trim_start_matches(['@', '-', '+']));
            out.push('\n');
        } else if let Some((rule, recipe)) = line.split_once(';')
            && rule.contains(':')
            && !rule.contains('=')
        {
            // `target: deps ; recipe`, the one-line form.
            out.push_str(recipe.trim().trim_start_matches(['@', '-', '+']));
            out.push('\n');
        }
        let mut rest = line;
        while let Some(p) = rest.find("$(shell ") {
            let body = &rest[p + 8..];
            let end = body.find(')').unwrap_or(body.len());
            out.push_str(&body[..end]);
            out.push('\n');
            rest = &body[end..];
        }
    }
    // make writes `$$` for a shell `$`.
    out.replace("$$", "$")
}

/// Whether a script should be parsed as shell: by extension or shebang.
pub(super) fn looks_like_shell(path: &str, text: &str) -> bool {
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
