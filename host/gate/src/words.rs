//! Turns raw shell words into what the command will see, as far as the text says.
//!
//! Quote removal and escapes are applied exactly as the shell would; variables assigned
//! to literals earlier in the line are substituted; anything else (`$HOME`, `$(…)`,
//! arithmetic) makes the word *dynamic*. Command substitutions are not just marked: the
//! command inside is analyzed too, since the shell runs it.

use brush_parser::ParserOptions;
use brush_parser::word::{self, ParameterExpr, WordPiece, WordPieceWithSource};

use super::shell::Walker;

/// One field of a command line after expansion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Arg {
    /// The text after quote removal; for dynamic parts, the source text stands in.
    pub text: String,
    /// Part of the text comes from something the shell computes at run time.
    pub dynamic: bool,
}

impl Arg {
    /// A literal word.
    pub fn lit(s: impl Into<String>) -> Arg {
        Arg {
            text: s.into(),
            dynamic: false,
        }
    }
    /// A word computed at run time; `s` is its source text.
    pub fn dynamic(s: impl Into<String>) -> Arg {
        Arg {
            text: s.into(),
            dynamic: true,
        }
    }

    /// `NAME=VALUE` as a variable name and its value (as dynamic as the word).
    pub(super) fn assignment(&self) -> Option<(String, Arg)> {
        let (n, v) = self.text.split_once('=')?;
        super::classify::is_name(n).then(|| {
            let value = Arg {
                text: v.to_owned(),
                dynamic: self.dynamic,
            };
            (n.to_owned(), value)
        })
    }
}

/// Builds fields from pieces, splitting only where an unquoted expansion would.
struct Fields {
    done: Vec<Arg>,
    cur: String,
    dynamic: bool,
    /// Whether anything (even an empty quoted string) started the current field.
    started: bool,
}

impl Fields {
    fn new() -> Self {
        Fields {
            done: Vec::new(),
            cur: String::new(),
            dynamic: false,
            started: false,
        }
    }
    fn push(&mut self, s: &str) {
        self.cur.push_str(s);
        self.started = true;
    }
    fn push_dynamic(&mut self, s: &str) {
        self.push(s);
        self.dynamic = true;
    }
    /// Appends an unquoted expansion's value, splitting it on blanks.
    fn push_split(&mut self, value: &str) {
        let mut parts = value.split([' ', '\t', '\n']).peekable();
        let leading_blank = value.starts_with([' ', '\t', '\n']);
        if leading_blank {
            self.end();
        }
        while let Some(p) = parts.next() {
            if !p.is_empty() {
                self.push(p);
            }
            if parts.peek().is_some() {
                self.end();
            }
        }
    }
    fn end(&mut self) {
        if self.started {
            self.done.push(Arg {
                text: std::mem::take(&mut self.cur),
                dynamic: self.dynamic,
            });
        }
        self.dynamic = false;
        self.started = false;
    }
    fn finish(mut self) -> Vec<Arg> {
        self.end();
        self.done
    }
}

impl Walker<'_> {
    /// Expands one raw word into fields, analyzing any command it substitutes. Brace
    /// expansion comes first, as in bash: `{git,push}` is two words.
    pub(super) fn resolve(&mut self, raw: &str) -> Vec<Arg> {
        if raw.contains('{') {
            match brace_expand(raw) {
                Braces::None => {}
                Braces::Words(words) => {
                    return words.iter().flat_map(|w| self.resolve_one(w)).collect();
                }
                Braces::TooMany => {
                    self.resolve_one(raw);
                    return vec![Arg::dynamic(raw)];
                }
            }
        }
        self.resolve_one(raw)
    }

    fn resolve_one(&mut self, raw: &str) -> Vec<Arg> {
        let pieces = match parse_word(raw, &self.opts) {
            Some(p) => p,
            None => {
                // Unparseable word: keep its text, treat it as computed, and look inside
                // for commands the cautious way.
                if raw.contains("$(") || raw.contains('`') {
                    self.analyze_str(raw);
                }
                return vec![Arg::dynamic(raw)];
            }
        };
        let mut f = Fields::new();
        self.pieces(raw, &pieces, false, &mut f);
        f.finish()
    }

    /// Expands a word where no field splitting happens (assignments, redirections).
    pub(super) fn resolve_joined(&mut self, raw: &str) -> Arg {
        let fields = self.resolve(raw);
        let dynamic = fields.iter().any(|a| a.dynamic);
        let text: Vec<String> = fields.into_iter().map(|a| a.text).collect();
        Arg {
            text: text.join(" "),
            dynamic,
        }
    }

    /// Expands a heredoc body with an unquoted delimiter: its substitutions run.
    pub(super) fn resolve_heredoc(&mut self, raw: &str) -> String {
        if !raw.contains('$') && !raw.contains('`') {
            return raw.to_owned();
        }
        let pieces = match catch(|| word::parse_heredoc(raw, &self.opts).ok()) {
            Some(p) => p,
            None => return raw.to_owned(),
        };
        let mut f = Fields::new();
        self.pieces(raw, &pieces, true, &mut f);
        let text: Vec<String> = f.finish().into_iter().map(|a| a.text).collect();
        text.join("")
    }

    fn pieces(&mut self, raw: &str, pieces: &[WordPieceWithSource], quoted: bool, f: &mut Fields) {
        for p in pieces {
            let src = raw.get(p.start_index..p.end_index).unwrap_or("");
            match &p.piece {
                WordPiece::Text(t) => f.push(t),
                WordPiece::SingleQuotedText(t) => f.push(t),
                WordPiece::AnsiCQuotedText(t) => f.push(&ansi_c(t)),
                WordPiece::DoubleQuotedSequence(inner)
                | WordPiece::GettextDoubleQuotedSequence(inner) => {
                    f.push("");
                    self.pieces(raw, inner, true, f);
                }
                WordPiece::TildeExpansion(_) => f.push(src),
                WordPiece::EscapeSequence(e) => f.push(&unescape(e, quoted)),
                WordPiece::CommandSubstitution(c) => {
                    self.analyze_str(c);
                    match self.substitution_value(c) {
                        Some(v) if quoted => f.push(&v),
                        Some(v) if self.ifs_changed => f.push_dynamic(&v),
                        Some(v) => f.push_split(&v),
                        None => f.push_dynamic(src),
                    }
                }
                WordPiece::BackquotedCommandSubstitution(c) => {
                    let c = c.replace("\\\\", "\\").replace("\\$", "$");
                    self.analyze_str(&c);
                    match self.substitution_value(&c) {
                        Some(v) if quoted => f.push(&v),
                        Some(v) => f.push_split(&v),
                        None => f.push_dynamic(src),
                    }
                }
                WordPiece::ArithmeticExpression(e) => {
                    if e.value.contains("$(") || e.value.contains('`') {
                        self.resolve(&e.value);
                    }
                    f.push_dynamic(src);
                }
                WordPiece::ParameterExpansion(pe) => {
                    // Default and alternative values are words too, and may run commands.
                    for inner in param_words(pe) {
                        self.resolve(inner);
                    }
                    if let Some(all) = self.all_positional(pe) {
                        // `"$@"` is one field per parameter, even in quotes.
                        for (k, a) in all.iter().enumerate() {
                            if k > 0 {
                                f.end();
                            }
                            if a.dynamic {
                                f.push_dynamic(&a.text);
                            } else {
                                f.push(&a.text);
                            }
                        }
                        continue;
                    }
                    match self.param_value(pe) {
                        Some(v) if quoted => f.push(&v),
                        // A changed IFS splits where the guard can't follow.
                        Some(v) if self.ifs_changed => f.push_dynamic(&v),
                        Some(v) => f.push_split(&v),
                        None => f.push_dynamic(src),
                    }
                }
            }
        }
    }

    /// The value of `$NAME`/`${NAME}` when an earlier literal assignment fixed it.
    fn param_value(&self, pe: &ParameterExpr) -> Option<String> {
        match pe {
            ParameterExpr::Parameter {
                parameter: word::Parameter::Named(n),
                indirect: false,
            } => self.vars.get(n).cloned().or_else(|| {
                // The few variables whose value the hook's own environment shares with
                // the session's shell.
                matches!(n.as_str(), "HOME" | "USER" | "TMPDIR")
                    .then(|| self.ctx.env_var(n))
                    .flatten()
            }),
            ParameterExpr::Parameter {
                parameter: word::Parameter::Positional(n),
                indirect: false,
            } => {
                let args = self.positional.as_ref()?;
                let a = args.get((*n as usize).checked_sub(1)?)?;
                (!a.dynamic).then(|| a.text.clone())
            }
            _ => None,
        }
    }

    /// The positional parameters for `$@`/`$*`, when a function call made them known.
    fn all_positional(&self, pe: &ParameterExpr) -> Option<Vec<Arg>> {
        match pe {
            ParameterExpr::Parameter {
                parameter:
                    word::Parameter::Special(word::SpecialParameter::AllPositionalParameters {
                        concatenate: false,
                    }),
                indirect: false,
            } => self.positional.clone(),
            _ => None,
        }
    }

    /// The output of a command substitution when it is fixed by the text: `which git`,
    /// `echo word`, `cat` of a quoted heredoc.
    fn substitution_value(&mut self, cmd: &str) -> Option<String> {
        let t = cmd.trim();
        for prefix in ["which ", "command -v "] {
            if let Some(rest) = t.strip_prefix(prefix) {
                let name = rest.trim();
                if !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '-') {
                    return Some(name.to_owned());
                }
            }
        }
        if let Some(rest) = t.strip_prefix("echo ")
            && !rest.contains(['|', ';', '&', '<', '>', '(', ')', '`', '$', '\n'])
        {
            let words: Option<Vec<String>> = rest
                .split_whitespace()
                .map(|w| literal_text(w, &self.opts))
                .collect();
            return words.map(|w| w.join(" "));
        }
        if let Some(body) = quoted_cat_heredoc(t) {
            return Some(body.trim_end_matches('\n').to_owned());
        }
        None
    }
}

/// What brace expansion makes of a word.
enum Braces {
    /// The word has no unquoted brace expansion.
    None,
    /// The words it expands to, in order.
    Words(Vec<String>),
    /// More words than the guard follows.
    TooMany,
}

/// The most words one brace expansion may produce before the word counts as computed.
const MAX_BRACE_WORDS: usize = 64;

/// Expands the first unquoted `{a,b}` or `{x..y}` in `raw` (source text), recursively.
fn brace_expand(raw: &str) -> Braces {
    let Some((open, close, parts)) = first_brace(raw) else {
        return Braces::None;
    };
    let (pre, post) = (&raw[..open], &raw[close + 1..]);
    let mut out: Vec<String> = Vec::new();
    for p in parts {
        let word = format!("{pre}{p}{post}");
        match brace_expand(&word) {
            Braces::None => out.push(word),
            Braces::Words(w) => out.extend(w),
            Braces::TooMany => return Braces::TooMany,
        }
        if out.len() > MAX_BRACE_WORDS {
            return Braces::TooMany;
        }
    }
    Braces::Words(out)
}

/// The first unquoted brace expression: its byte range and its alternatives.
fn first_brace(raw: &str) -> Option<(usize, usize, Vec<String>)> {
    let b = raw.as_bytes();
    let mut i = 0;
    let mut quote: Option<u8> = None;
    while i < b.len() {
        let c = b[i];
        match (quote, c) {
            (_, b'\\') => i += 1,
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, b'\'' | b'"') => quote = Some(c),
            (None, b'$') if b.get(i + 1) == Some(&b'{') || b.get(i + 1) == Some(&b'(') => {
                // Skip `${…}` and `$(…)`: not brace expansion.
                let (o, cl) = if b[i + 1] == b'{' {
                    (b'{', b'}')
                } else {
                    (b'(', b')')
                };
                let mut depth = 0;
                let mut j = i + 1;
                while j < b.len() {
                    if b[j] == o {
                        depth += 1;
                    } else if b[j] == cl {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    j += 1;
                }
                i = j;
            }
            (None, b'{') => {
                // Find the matching close and the top-level commas.
                let mut depth = 0;
                let mut j = i;
                let mut commas = Vec::new();
                let mut q2: Option<u8> = None;
                while j < b.len() {
                    let d = b[j];
                    match (q2, d) {
                        (_, b'\\') => j += 1,
                        (Some(q), d) if d == q => q2 = None,
                        (Some(_), _) => {}
                        (None, b'\'' | b'"') => q2 = Some(d),
                        (None, b'{') => depth += 1,
                        (None, b'}') => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        (None, b',') if depth == 1 => commas.push(j),
                        _ => {}
                    }
                    j += 1;
                }
                if j >= b.len() {
                    return None;
                }
                let inner = &raw[i + 1..j];
                if !commas.is_empty() {
                    let mut parts = Vec::new();
                    let mut start = i + 1;
                    for c in commas {
                        parts.push(raw[start..c].to_owned());
                        start = c + 1;
                    }
                    parts.push(raw[start..j].to_owned());
                    return Some((i, j, parts));
                }
                if let Some(seq) = sequence(inner) {
                    return Some((i, j, seq));
                }
                i = j;
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// `{1..3}`, `{a..e}` (a step, if any, is honoured).
fn sequence(inner: &str) -> Option<Vec<String>> {
    let parts: Vec<&str> = inner.split("..").collect();
    if !(2..=3).contains(&parts.len()) {
        return None;
    }
    let step: i64 = match parts.get(2) {
        Some(s) => s.parse().ok()?,
        None => 1,
    };
    let step = step.unsigned_abs().max(1) as usize;
    if let (Ok(a), Ok(b)) = (parts[0].parse::<i64>(), parts[1].parse::<i64>()) {
        let (lo, hi) = (a.min(b), a.max(b));
        if (hi - lo) as usize / step > MAX_BRACE_WORDS {
            return Some(vec!["…".to_owned(); MAX_BRACE_WORDS + 1]);
        }
        let mut v: Vec<String> = (lo..=hi).step_by(step).map(|n| n.to_string()).collect();
        if a > b {
            v.reverse();
        }
        return Some(v);
    }
    let (a, b) = (parts[0], parts[1]);
    if a.chars().count() == 1 && b.chars().count() == 1 {
        let (a, b) = (a.chars().next()? as u32, b.chars().next()? as u32);
        let (lo, hi) = (a.min(b), a.max(b));
        let mut v: Vec<String> = (lo..=hi)
            .step_by(step)
            .filter_map(char::from_u32)
            .map(|c| c.to_string())
            .collect();
        if a > b {
            v.reverse();
        }
        return Some(v);
    }
    None
}

/// The literal text of a word with no expansions, after quote removal.
pub(super) fn literal_text(raw: &str, opts: &ParserOptions) -> Option<String> {
    let pieces = parse_word(raw, opts)?;
    let mut out = String::new();
    if lit_pieces(&pieces, false, &mut out) {
        Some(out)
    } else {
        None
    }
}

fn lit_pieces(pieces: &[WordPieceWithSource], quoted: bool, out: &mut String) -> bool {
    for p in pieces {
        match &p.piece {
            WordPiece::Text(t) | WordPiece::SingleQuotedText(t) => out.push_str(t),
            WordPiece::AnsiCQuotedText(t) => out.push_str(&ansi_c(t)),
            WordPiece::EscapeSequence(e) => out.push_str(&unescape(e, quoted)),
            WordPiece::DoubleQuotedSequence(i) | WordPiece::GettextDoubleQuotedSequence(i) => {
                if !lit_pieces(i, true, out) {
                    return false;
                }
            }
            _ => return false,
        }
    }
    true
}

/// `cat <<'EOF' … EOF` (quoted delimiter): its output is the body, verbatim.
fn quoted_cat_heredoc(t: &str) -> Option<&str> {
    let rest = t.strip_prefix("cat")?.trim_start();
    let rest = rest.strip_prefix("<<")?;
    let rest = rest.strip_prefix('-').unwrap_or(rest).trim_start();
    let (delim, after) = if let Some(r) = rest.strip_prefix('\'') {
        let end = r.find('\'')?;
        (&r[..end], &r[end + 1..])
    } else if let Some(r) = rest.strip_prefix('"') {
        let end = r.find('"')?;
        (&r[..end], &r[end + 1..])
    } else {
        return None;
    };
    let body_start = after.find('\n')? + 1;
    if !after[..body_start].trim().is_empty() {
        return None;
    }
    let body = &after[body_start..];
    let mut offset = 0;
    for line in body.split_inclusive('\n') {
        if line.trim_end_matches('\n') == delim {
            return Some(&body[..offset]);
        }
        offset += line.len();
    }
    None
}

/// Parses a word into pieces, turning a parser panic into "can't say".
fn parse_word(raw: &str, opts: &ParserOptions) -> Option<Vec<WordPieceWithSource>> {
    catch(|| word::parse(raw, opts).ok())
}

fn catch<T>(f: impl FnOnce() -> Option<T>) -> Option<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))
        .ok()
        .flatten()
}

/// The words inside a parameter expansion that the shell may expand (and run).
fn param_words(pe: &ParameterExpr) -> Vec<&str> {
    let w = match pe {
        ParameterExpr::UseDefaultValues { default_value, .. }
        | ParameterExpr::AssignDefaultValues { default_value, .. } => default_value.as_deref(),
        ParameterExpr::IndicateErrorIfNullOrUnset { error_message, .. } => error_message.as_deref(),
        ParameterExpr::UseAlternativeValue {
            alternative_value, ..
        } => alternative_value.as_deref(),
        ParameterExpr::ReplaceSubstring { replacement, .. } => replacement.as_deref(),
        _ => None,
    };
    w.into_iter()
        .filter(|s| s.contains("$(") || s.contains('`'))
        .collect()
}

/// What a backslash escape leaves after quote removal.
fn unescape(e: &str, quoted: bool) -> String {
    let mut chars = e.chars();
    if chars.next() != Some('\\') {
        return e.to_owned();
    }
    match chars.next() {
        None => String::new(),
        Some('\n') => String::new(),
        Some(c) if !quoted => c.to_string(),
        Some(c @ ('$' | '`' | '"' | '\\')) => c.to_string(),
        Some(c) => format!("\\{c}"),
    }
}

/// Which escape dialect to decode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Escapes {
    /// `$'…'`: `\nnn` is up to three octal digits.
    AnsiC,
    /// `echo -e` and printf's `%b`: `\0nnn` is octal after a zero.
    Echo,
    /// A printf format: `\nnn`, up to three octal digits.
    Printf,
}

/// Decodes the common escapes of `$'…'` text.
fn ansi_c(t: &str) -> String {
    decode_escapes(t, Escapes::AnsiC)
}

/// Decodes backslash escapes the way `style` does.
pub(super) fn decode_escapes(t: &str, style: Escapes) -> String {
    let mut out = String::new();
    let mut chars = t.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('e' | 'E') => out.push('\u{1b}'),
            Some('a') => out.push('\u{7}'),
            Some('c') if style == Escapes::Echo => break,
            Some(k @ ('x' | 'u' | 'U')) => {
                let max = match k {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let mut v = 0u32;
                let mut n = 0;
                while n < max {
                    match chars.peek().and_then(|c| c.to_digit(16)) {
                        Some(d) => {
                            v = v * 16 + d;
                            chars.next();
                            n += 1;
                        }
                        None => break,
                    }
                }
                if let Some(ch) = char::from_u32(v) {
                    out.push(ch);
                }
            }
            Some(d @ '0'..='7') => {
                let (mut v, mut n, max) = if style == Escapes::Echo && d == '0' {
                    (0, 0, 3)
                } else {
                    (d.to_digit(8).unwrap_or(0), 1, 3)
                };
                while n < max {
                    match chars.peek().and_then(|c| c.to_digit(8)) {
                        Some(d) => {
                            v = v * 8 + d;
                            chars.next();
                            n += 1;
                        }
                        None => break,
                    }
                }
                if let Some(ch) = char::from_u32(v) {
                    out.push(ch);
                }
            }
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    out
}
