//! Walks the shell syntax tree the way the shell would run it.
//!
//! Every place that can run a command is visited: list items, pipeline stages, compound
//! commands, function bodies (at definition, since a call may be hidden), redirections
//! and the substitutions inside any word. Simple commands are handed to
//! [`super::classify`] once their words have been through quote removal.

use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};

use brush_parser::ast;
use brush_parser::{Parser, ParserOptions};

use super::place::Place;
use super::words::Arg;
use super::{Effect, Finding, GateContext, MAX_COMMAND_BYTES};

mod paths;

/// How deeply `sh -c`, `eval`, aliases and substitutions may nest before we give up.
const MAX_DEPTH: usize = 12;
/// How many simple commands one analysis may visit; bounds alias loops and huge input.
const MAX_STEPS: usize = 50_000;
/// Nesting of brackets beyond which the parser is not called (its recursion is unbounded).
const MAX_NESTING: usize = 96;

/// What a command reads on standard input, as far as the text shows.
#[derive(Debug, Clone)]
pub(super) enum Stdin {
    /// Whatever the caller's stdin is: nothing we can see.
    Inherit,
    /// Known text: a heredoc, a here-string, or `echo` output piped in.
    Text(String),
    /// Something that can't be known: a file, or a program's output.
    Unknown,
}

/// The analysis state for one hook call.
pub(super) struct Walker<'c> {
    pub(super) ctx: &'c dyn GateContext,
    findings: Vec<Finding>,
    parse_error: Option<String>,
    /// Shell variables assigned to literal values earlier in the command.
    pub(super) vars: HashMap<String, String>,
    /// Bash aliases defined earlier in the command.
    pub(super) aliases: HashMap<String, String>,
    /// `git config KEY VALUE` seen earlier in the command (keys lower-cased).
    pub(super) git_config: Vec<(String, String)>,
    /// Where the next command runs, after the `cd`s so far.
    pub(super) place: Place,
    /// Inside a branch the shell may or may not take (`&&`, `||`, `if`, loops, `case`):
    /// assignments and `cd`s there leave the value unknown afterwards.
    pub(super) cond_depth: usize,
    /// The positional parameters while a function call is followed (`None` outside).
    pub(super) positional: Option<Vec<Arg>>,
    /// `IFS` was assigned: unquoted expansions split where the guard can't follow.
    pub(super) ifs_changed: bool,
    /// Namerefs (`declare -n ref=target`): assigning one assigns its target.
    pub(super) namerefs: HashMap<String, String>,
    /// Functions defined earlier in the command, by name.
    pub(super) functions: HashMap<String, ast::FunctionBody>,
    /// Files this command writes, by path as written, with their text when known.
    pub(super) written: HashMap<String, Option<String>>,
    /// The files the current simple command's redirections write.
    last_writes: Vec<String>,
    pub(super) depth: usize,
    /// How many simple commands are being classified inside one another (a wrapper
    /// classifies the command it wraps): bounds the recursion of a wrapper chain.
    pub(super) wrapped: usize,
    steps: usize,
    gave_up: bool,
    /// The outermost command being followed, for [`Finding::within`].
    pub(super) outer: Option<String>,
    /// The simple command currently being classified, for findings.
    pub(super) current: String,
    pub(super) opts: ParserOptions,
    /// Every simple command classified, wrappers included, as its first few words:
    /// what [`super::kind`] reads to tell a read from a test, a build or a change.
    pub(super) programs: Vec<Vec<String>>,
}

impl<'c> Walker<'c> {
    pub(super) fn new(ctx: &'c dyn GateContext) -> Self {
        Walker {
            ctx,
            findings: Vec::new(),
            parse_error: None,
            vars: HashMap::new(),
            aliases: HashMap::new(),
            git_config: Vec::new(),
            place: Place::default(),
            cond_depth: 0,
            positional: None,
            ifs_changed: false,
            namerefs: HashMap::new(),
            functions: HashMap::new(),
            written: HashMap::new(),
            last_writes: Vec::new(),
            depth: 0,
            wrapped: 0,
            steps: 0,
            gave_up: false,
            outer: None,
            current: String::new(),
            opts: ParserOptions::default(),
            programs: Vec::new(),
        }
    }

    pub(super) fn finish(self) -> (Vec<Finding>, Option<String>, Vec<Vec<String>>) {
        (self.findings, self.parse_error, self.programs)
    }

    /// Records an effect against the command being classified.
    pub(super) fn found(&mut self, effect: Effect) {
        let snippet = self.current.clone();
        let within = self.outer.clone().filter(|o| *o != snippet);
        let f = Finding {
            effect,
            snippet,
            within,
        };
        if !self.findings.contains(&f) {
            self.findings.push(f);
        }
    }

    /// How many findings there are so far.
    pub(super) fn findings_len(&self) -> usize {
        self.findings.len()
    }

    /// Drops the unfollowable findings added after the first `from`.
    pub(super) fn drop_unfollowable_since(&mut self, from: usize) {
        let mut i = 0;
        self.findings.retain(|f| {
            let keep = i < from || !matches!(f.effect, Effect::Unfollowable { .. });
            i += 1;
            keep
        });
    }

    pub(super) fn unfollowable(&mut self, reason: impl Into<String>) {
        self.found(Effect::Unfollowable {
            reason: reason.into(),
        });
    }

    /// Analyzes the whole command line the hook received.
    pub(super) fn analyze_top(&mut self, command: &str) {
        self.analyze_str(command);
        if self.gave_up {
            // The budget ran out part-way: scan the whole text so that a push after the
            // point where we stopped is still seen in parse mode. Nested text is not
            // followed during this scan.
            self.gave_up = false;
            self.steps = 0;
            self.depth = MAX_DEPTH + 1;
            self.scan_fallback(command);
            self.gave_up = true;
        }
    }

    /// Parses `src` as shell and walks it; on failure, scans it cautiously.
    pub(super) fn analyze_str(&mut self, src: &str) {
        if self.gave_up {
            return;
        }
        if self.depth >= MAX_DEPTH {
            self.unfollowable("it nests shells, evals or aliases too deeply to follow");
            // Still look for plain words once, so deep nesting can't hide a push in parse
            // mode; anything the scan would nest further stops here.
            if self.depth == MAX_DEPTH {
                self.depth += 1;
                self.scan_fallback(src);
                self.depth -= 1;
            }
            return;
        }
        self.depth += 1;
        match self.parse(src) {
            Ok(program) => self.walk_program(&program),
            Err(msg) => {
                if self.parse_error.is_none() {
                    self.parse_error = Some(msg.clone());
                }
                let saved = std::mem::replace(&mut self.current, short_line(src));
                self.unfollowable(format!("the shell text doesn't parse ({msg})"));
                self.current = saved;
                self.scan_fallback(src);
            }
        }
        self.depth -= 1;
    }

    /// Runs the cautious scan with the right bookkeeping.
    fn scan_fallback(&mut self, src: &str) {
        let ship = self
            .ctx
            .ship_command()
            .and_then(|s| s.split_whitespace().next())
            .map(str::to_owned);
        for argv in super::scan::segments(src, ship.as_deref()) {
            if !self.step() {
                return;
            }
            self.current = join_args(&argv);
            self.classify(argv, Vec::new(), Stdin::Inherit);
        }
    }

    /// Counts one unit of work; false once the budget is spent.
    pub(super) fn step(&mut self) -> bool {
        if self.gave_up {
            return false;
        }
        self.steps += 1;
        if self.steps > MAX_STEPS {
            self.gave_up = true;
            self.current = "(the whole command)".to_owned();
            self.unfollowable("it expands to more commands than the guard follows");
            return false;
        }
        true
    }

    fn parse(&self, src: &str) -> Result<ast::Program, String> {
        if src.len() > MAX_COMMAND_BYTES {
            return Err(format!("longer than {MAX_COMMAND_BYTES} bytes"));
        }
        if nesting(src) > MAX_NESTING {
            return Err("brackets nested too deeply".to_owned());
        }
        // Every tokenizer hang we know of involves a malformed heredoc; such text is
        // refused before the parser sees it. (A watchdog thread was tried and dropped:
        // spawning one costs far more than the whole analysis.)
        if src.contains("<<") && !super::heredoc::well_formed(src) {
            return Err("a heredoc has no usable delimiter or no end line".to_owned());
        }
        parse_now(src, &self.opts)
    }

    fn walk_program(&mut self, p: &ast::Program) {
        for list in &p.complete_commands {
            self.walk_list(list);
        }
    }

    pub(super) fn walk_list(&mut self, l: &ast::CompoundList) {
        for item in &l.0 {
            self.walk_and_or(&item.0);
        }
    }

    fn walk_and_or(&mut self, a: &ast::AndOrList) {
        self.walk_pipeline(&a.first);
        for next in &a.additional {
            match next {
                ast::AndOr::And(p) | ast::AndOr::Or(p) => {
                    self.conditionally(|w| w.walk_pipeline(p))
                }
            }
        }
    }

    /// Walks a part the shell may skip: what it assigns is unknown afterwards.
    pub(super) fn conditionally(&mut self, f: impl FnOnce(&mut Self)) {
        self.cond_depth += 1;
        f(self);
        self.cond_depth -= 1;
    }

    /// Walks a part that runs in a subshell: its `cd`s and variables don't last.
    fn in_subshell(&mut self, f: impl FnOnce(&mut Self)) {
        let place = self.place.clone();
        let vars = self.vars.clone();
        f(self);
        self.place = place;
        self.vars = vars;
    }

    fn walk_pipeline(&mut self, p: &ast::Pipeline) {
        let mut prev: Option<Option<String>> = None;
        let piped = p.seq.len() > 1;
        for cmd in &p.seq {
            let stdin = match prev.take() {
                None => Stdin::Inherit,
                Some(Some(text)) => Stdin::Text(text),
                Some(None) => Stdin::Unknown,
            };
            let out = self.static_output(cmd);
            if piped {
                // Each stage of a pipeline runs in a subshell of its own.
                self.in_subshell(|w| w.walk_command(cmd, stdin));
            } else {
                self.walk_command(cmd, stdin);
            }
            prev = Some(out);
        }
    }

    fn walk_command(&mut self, cmd: &ast::Command, stdin: Stdin) {
        match cmd {
            ast::Command::Simple(s) => self.walk_simple(s, stdin),
            ast::Command::Compound(c, redirects) => {
                if let Some(r) = redirects {
                    for io in &r.0 {
                        self.walk_redirect(io);
                    }
                }
                self.walk_compound(c);
            }
            ast::Command::Function(f) => {
                // A function may be called in ways we can't see (from a trap, from a
                // computed word), so its body counts where it is written, with its
                // arguments unknown; a call we can see is followed again with them.
                self.functions.insert(f.fname.value.clone(), f.body.clone());
                let saved = self.positional.take();
                self.in_subshell(|w| {
                    w.conditionally(|w| {
                        if let Some(r) = &f.body.1 {
                            for io in &r.0 {
                                w.walk_redirect(io);
                            }
                        }
                        w.walk_compound(&f.body.0);
                    })
                });
                self.positional = saved;
            }
            ast::Command::ExtendedTest(t, redirects) => {
                if let Some(r) = redirects {
                    for io in &r.0 {
                        self.walk_redirect(io);
                    }
                }
                self.walk_test(&t.expr);
            }
        }
    }

    fn walk_test(&mut self, e: &ast::ExtendedTestExpr) {
        match e {
            ast::ExtendedTestExpr::And(a, b) | ast::ExtendedTestExpr::Or(a, b) => {
                self.walk_test(a);
                self.walk_test(b);
            }
            ast::ExtendedTestExpr::Not(a) | ast::ExtendedTestExpr::Parenthesized(a) => {
                self.walk_test(a)
            }
            ast::ExtendedTestExpr::UnaryTest(_, w) => {
                self.resolve(&w.value);
            }
            ast::ExtendedTestExpr::BinaryTest(_, a, b) => {
                self.resolve(&a.value);
                self.resolve(&b.value);
            }
        }
    }

    fn walk_compound(&mut self, c: &ast::CompoundCommand) {
        match c {
            ast::CompoundCommand::Arithmetic(a) => self.walk_arith(&a.expr.value),
            ast::CompoundCommand::ArithmeticForClause(f) => {
                for e in [&f.initializer, &f.condition, &f.updater]
                    .into_iter()
                    .flatten()
                {
                    self.walk_arith(&e.value);
                }
                self.walk_list(&f.body.list);
            }
            ast::CompoundCommand::BraceGroup(b) => self.walk_list(&b.list),
            ast::CompoundCommand::Subshell(s) => self.in_subshell(|w| w.walk_list(&s.list)),
            ast::CompoundCommand::ForClause(f) => {
                for w in f.values.iter().flatten() {
                    self.resolve(&w.value);
                }
                // The loop variable takes values the guard doesn't track.
                self.vars.remove(&f.variable_name);
                self.conditionally(|w| w.walk_list(&f.body.list));
            }
            ast::CompoundCommand::CaseClause(c) => {
                self.resolve(&c.value.value);
                for item in &c.cases {
                    for p in &item.patterns {
                        self.resolve(&p.value);
                    }
                    if let Some(l) = &item.cmd {
                        self.conditionally(|w| w.walk_list(l));
                    }
                }
            }
            ast::CompoundCommand::IfClause(i) => {
                self.walk_list(&i.condition);
                self.conditionally(|w| {
                    w.walk_list(&i.then);
                    for e in i.elses.iter().flatten() {
                        if let Some(c) = &e.condition {
                            w.walk_list(c);
                        }
                        w.walk_list(&e.body);
                    }
                });
            }
            ast::CompoundCommand::WhileClause(w) | ast::CompoundCommand::UntilClause(w) => {
                self.conditionally(|s| {
                    s.walk_list(&w.0);
                    s.walk_list(&w.1.list);
                });
            }
            ast::CompoundCommand::Coprocess(c) => self.walk_command(&c.body, Stdin::Unknown),
        }
    }

    /// Arithmetic text can hold `$(…)`; parsing it as a word finds those. Names it
    /// assigns (`x=1`, `x++`) are unknown afterwards.
    fn walk_arith(&mut self, text: &str) {
        if text.contains("$(") || text.contains('`') {
            self.resolve(text);
        }
        if text.contains('=') || text.contains("++") || text.contains("--") {
            let names: Vec<String> = text
                .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .filter(|w| super::classify::is_name(w))
                .map(str::to_owned)
                .collect();
            for n in names {
                self.forget_var(&n);
            }
        }
    }

    /// Resolves a redirection's words (running their substitutions) and returns what it
    /// feeds to standard input, if anything.
    fn walk_redirect(&mut self, io: &ast::IoRedirect) -> Option<Stdin> {
        match io {
            ast::IoRedirect::File(fd, kind, target) => {
                let reads = matches!(
                    kind,
                    ast::IoFileRedirectKind::Read
                        | ast::IoFileRedirectKind::ReadAndWrite
                        | ast::IoFileRedirectKind::DuplicateInput
                );
                let writes = !matches!(
                    kind,
                    ast::IoFileRedirectKind::Read
                        | ast::IoFileRedirectKind::DuplicateInput
                        | ast::IoFileRedirectKind::DuplicateOutput
                );
                match target {
                    ast::IoFileRedirectTarget::Filename(w) => {
                        let path = self.resolve_joined(&w.value);
                        if writes {
                            self.write_to(&path, "writes");
                        } else {
                            self.use_path(&path, "cat", true);
                        }
                    }
                    ast::IoFileRedirectTarget::Duplicate(w) => {
                        // `>&file` writes a file unless the word is a descriptor.
                        let path = self.resolve_joined(&w.value);
                        if writes
                            || (matches!(kind, ast::IoFileRedirectKind::DuplicateOutput)
                                && (path.dynamic
                                    || !path.text.chars().all(|c| c.is_ascii_digit() || c == '-')))
                        {
                            self.write_to(&path, "writes");
                        }
                    }
                    ast::IoFileRedirectTarget::ProcessSubstitution(_, sub) => {
                        self.in_subshell(|w| w.walk_list(&sub.list))
                    }
                    ast::IoFileRedirectTarget::Fd(_) => {}
                }
                (reads && fd.unwrap_or(0) == 0).then_some(Stdin::Unknown)
            }
            ast::IoRedirect::HereDocument(fd, doc) => {
                let text = if doc.requires_expansion {
                    self.resolve_heredoc(&doc.doc.value)
                } else {
                    doc.doc.value.clone()
                };
                (fd.unwrap_or(0) == 0).then_some(Stdin::Text(text))
            }
            ast::IoRedirect::HereString(fd, w) => {
                let a = self.resolve_joined(&w.value);
                let stdin = if a.dynamic {
                    Stdin::Unknown
                } else {
                    Stdin::Text(a.text)
                };
                (fd.unwrap_or(0) == 0).then_some(stdin)
            }
            ast::IoRedirect::OutputAndError(w, _) => {
                let path = self.resolve_joined(&w.value);
                self.write_to(&path, "writes");
                None
            }
        }
    }

    fn walk_simple(&mut self, s: &ast::SimpleCommand, mut stdin: Stdin) {
        if !self.step() {
            return;
        }
        let mut env: Vec<(String, Arg)> = Vec::new();
        let mut argv: Vec<Arg> = Vec::new();
        let mut first_literal_unquoted = false;

        let mut items: Vec<&ast::CommandPrefixOrSuffixItem> = Vec::new();
        if let Some(p) = &s.prefix {
            items.extend(p.0.iter());
        }
        let prefix_len = items.len();
        if let Some(sfx) = &s.suffix {
            items.extend(sfx.0.iter());
        }
        let mut redirects: Vec<&ast::IoRedirect> = Vec::new();
        for (i, item) in items.iter().enumerate() {
            if i == prefix_len
                && let Some(w) = &s.word_or_name
            {
                first_literal_unquoted = is_plain_word(&w.value);
                argv.extend(self.resolve(&w.value));
            }
            match item {
                ast::CommandPrefixOrSuffixItem::IoRedirect(io) => redirects.push(io),
                _ => self.walk_item(item, i < prefix_len, &mut env, &mut argv),
            }
        }
        if items.len() == prefix_len
            && let Some(w) = &s.word_or_name
        {
            first_literal_unquoted = is_plain_word(&w.value);
            argv.extend(self.resolve(&w.value));
        }

        // Redirections belong to this command: findings name it.
        let snippet = if argv.is_empty() {
            "(redirection)".to_owned()
        } else {
            join_args(&argv)
        };
        self.last_writes.clear();
        for io in redirects {
            self.current = snippet.clone();
            if let Some(s) = self.walk_redirect(io) {
                stdin = s;
            }
        }
        if !self.last_writes.is_empty() {
            // `printf '…' > x.sh`: the file's text is known to a later `sh x.sh`.
            let text = self.static_output_simple(s);
            for k in std::mem::take(&mut self.last_writes) {
                self.written.insert(k, text.clone());
            }
        }

        if argv.is_empty() {
            // Bare assignments set shell variables for the rest of the line.
            for (name, value) in env {
                self.set_var(&name, &value);
            }
            return;
        }

        if first_literal_unquoted && let Some(expansion) = self.aliases.get(&argv[0].text).cloned()
        {
            let rest: Vec<String> = argv[1..].iter().map(|a| quote(&a.text)).collect();
            let text = format!("{expansion} {}", rest.join(" "));
            // The alias is hidden while its body is read, as bash does, so an alias
            // that names itself doesn't loop.
            let name = argv[0].text.clone();
            self.aliases.remove(&name);
            self.with_outer(&argv, |w| w.analyze_str(&text));
            self.aliases.insert(name, expansion);
            return;
        }

        if !argv[0].dynamic
            && let Some(body) = self.functions.get(&argv[0].text).cloned()
        {
            // A call to a function defined earlier: follow its body with these arguments.
            if self.depth >= MAX_DEPTH {
                self.current = snippet;
                self.unfollowable("it nests function calls too deeply to follow");
                return;
            }
            self.depth += 1;
            let saved = self.positional.replace(argv[1..].to_vec());
            self.with_outer(&argv, |w| {
                if let Some(r) = &body.1 {
                    for io in &r.0 {
                        w.walk_redirect(io);
                    }
                }
                w.walk_compound(&body.0)
            });
            self.positional = saved;
            self.depth -= 1;
            return;
        }

        self.current = snippet;
        self.classify(argv, env, stdin);
    }

    fn walk_item(
        &mut self,
        item: &ast::CommandPrefixOrSuffixItem,
        in_prefix: bool,
        env: &mut Vec<(String, Arg)>,
        argv: &mut Vec<Arg>,
    ) {
        match item {
            ast::CommandPrefixOrSuffixItem::IoRedirect(_) => {}
            ast::CommandPrefixOrSuffixItem::Word(w) => {
                let fields = self.resolve(&w.value);
                argv.extend(fields);
            }
            ast::CommandPrefixOrSuffixItem::AssignmentWord(a, w) => {
                if in_prefix {
                    let name = match &a.name {
                        ast::AssignmentName::VariableName(n) => n.clone(),
                        ast::AssignmentName::ArrayElementName(n, _) => n.clone(),
                    };
                    let value = match &a.value {
                        ast::AssignmentValue::Scalar(v) => self.resolve_joined(&v.value),
                        ast::AssignmentValue::Array(elems) => {
                            for (k, v) in elems {
                                if let Some(k) = k {
                                    self.resolve(&k.value);
                                }
                                self.resolve(&v.value);
                            }
                            Arg::dynamic("(array)")
                        }
                    };
                    env.push((name, value));
                } else {
                    // `export X=1`, `local X=$(…)`: an ordinary argument to a builtin.
                    argv.extend(self.resolve(&w.value));
                }
            }
            ast::CommandPrefixOrSuffixItem::ProcessSubstitution(_, sub) => {
                self.in_subshell(|w| w.walk_list(&sub.list));
                argv.push(Arg::dynamic("/dev/fd/63"));
            }
        }
    }
}

/// Parses shell text, turning a parser panic into an error.
fn parse_now(src: &str, opts: &ParserOptions) -> Result<ast::Program, String> {
    // brush-parser documents unwraps inside; a panic there must not take the hook
    // down, so it becomes a parse error.
    let result = catch_unwind(AssertUnwindSafe(|| {
        let mut p = Parser::new(std::io::BufReader::new(src.as_bytes()), opts);
        p.parse_program()
    }));
    match result {
        Ok(Ok(p)) => Ok(p),
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err("the parser failed on this input".to_owned()),
    }
}

/// Whether a word is plain text that alias expansion would see (no quotes, no `$`).
fn is_plain_word(w: &str) -> bool {
    !w.is_empty()
        && w.chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '/' | '+' | ':' | '@'))
}

/// Quotes text for re-parsing as one shell word.
pub(super) fn quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars().all(|c| {
            c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '/' | '=' | ':' | '@' | ',')
        })
    {
        return s.to_owned();
    }
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// The argv as one readable line.
pub(super) fn join_args(argv: &[Arg]) -> String {
    let words: Vec<&str> = argv.iter().map(|a| a.text.as_str()).collect();
    short_line(&words.join(" ").replace('\n', " "))
}

/// Text trimmed and cut to a readable length.
fn short_line(s: &str) -> String {
    let line = s.trim();
    let mut out: String = line.chars().take(200).collect();
    if line.chars().count() > 200 {
        out.push('…');
    }
    out
}

/// The deepest nesting in `src` of brackets and of compound commands (`if`, `case`,
/// `while`, `until`, `for`, `select`, closed by `fi`, `esac`, `done`), ignoring quotes: a
/// cheap upper bound that keeps the recursive parser away from input that would exhaust
/// the stack. (A hook that overflows its stack dies, and Claude Code then lets the call
/// through.)
fn nesting(src: &str) -> usize {
    // Kept apart, so that a `case` pattern's lone `)` doesn't close a keyword.
    let (mut keywords, mut brackets): (usize, usize) = (0, 0);
    let mut max = 0;
    let mut word_start: Option<usize> = None;
    let bytes = src.as_bytes();
    for i in 0..=bytes.len() {
        let c = bytes.get(i).copied().unwrap_or(b' ');
        if c.is_ascii_alphanumeric() || c == b'_' {
            word_start.get_or_insert(i);
            continue;
        }
        if let Some(start) = word_start.take() {
            match &src[start..i] {
                "if" | "case" | "while" | "until" | "for" | "select" => keywords += 1,
                "fi" | "esac" | "done" => keywords = keywords.saturating_sub(1),
                _ => {}
            }
        }
        match c {
            b'(' | b'{' | b'[' => brackets += 1,
            b')' | b'}' | b']' => brackets = brackets.saturating_sub(1),
            _ => {}
        }
        max = max.max(keywords + brackets);
    }
    max
}
