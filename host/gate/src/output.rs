//! What a pipeline stage prints when the text alone says so (`echo`, `printf`, `cat` of a
//! heredoc), so that `echo 'git push' | sh` and its escaped spellings are followed.

use brush_parser::ast;

use super::shell::Walker;
use super::words::Arg;

impl Walker<'_> {
    /// What a pipeline stage prints, when the text alone says so: `echo`/`printf` of
    /// literal words, or `cat` of a heredoc. Lets `echo 'git push' | sh` be followed.
    pub(super) fn static_output(&mut self, cmd: &ast::Command) -> Option<String> {
        let ast::Command::Simple(s) = cmd else {
            return None;
        };
        self.static_output_simple(s)
    }

    /// What a simple command prints, when the text alone says so.
    pub(super) fn static_output_simple(&mut self, s: &ast::SimpleCommand) -> Option<String> {
        let name = s.word_or_name.as_ref()?;
        let mut words = Vec::new();
        let mut heredoc = None;
        for item in s.suffix.iter().flat_map(|x| x.0.iter()) {
            match item {
                ast::CommandPrefixOrSuffixItem::Word(w) => words.push(w.value.as_str()),
                ast::CommandPrefixOrSuffixItem::IoRedirect(ast::IoRedirect::HereDocument(_, d))
                    if !d.requires_expansion =>
                {
                    heredoc = Some(d.doc.value.clone())
                }
                ast::CommandPrefixOrSuffixItem::IoRedirect(ast::IoRedirect::File(..)) => {}
                _ => return None,
            }
        }
        let name = self.resolve_joined(&name.value);
        if name.dynamic {
            return None;
        }
        let mut args: Vec<Arg> = Vec::new();
        for w in words {
            args.extend(self.resolve(w));
        }
        if args.iter().any(|a| a.dynamic) {
            return None;
        }
        let args: Vec<String> = args.into_iter().map(|a| a.text).collect();
        match super::classify::basename(&name.text) {
            "echo" => {
                let mut i = 0;
                let mut escapes = false;
                while let Some(a) = args.get(i) {
                    let flags = a.strip_prefix('-').filter(|f| {
                        !f.is_empty() && f.chars().all(|c| matches!(c, 'n' | 'e' | 'E'))
                    });
                    let Some(flags) = flags else { break };
                    escapes |= flags.contains('e');
                    i += 1;
                }
                let text = args[i..].join(" ");
                Some(both_ways(&text, escapes))
            }
            "printf" => {
                let mut rest = args.as_slice();
                if rest.first().is_some_and(|a| a == "--") {
                    rest = &rest[1..];
                }
                let (fmt, vals) = rest.split_first()?;
                Some(printf(fmt, vals))
            }
            "cat" if args.is_empty() => heredoc,
            _ => None,
        }
    }
}

/// Text as a shell would print it through `echo`: decoded when `-e` asks for it, and
/// both ways when it has backslashes but no `-e` (zsh's and dash's echo decode them,
/// bash's doesn't), so a pipe into a shell is followed whichever shell runs it.
pub(super) fn both_ways(text: &str, escapes: bool) -> String {
    use super::words::{Escapes, decode_escapes};
    if escapes {
        decode_escapes(text, Escapes::Echo)
    } else if text.contains('\\') {
        format!("{text}\n{}", decode_escapes(text, Escapes::Echo))
    } else {
        text.to_owned()
    }
}

/// What `printf FORMAT ARGS…` prints: the format is reused until the arguments run out,
/// `%s`, `%b`, `%c`, `%d` and `%%` are understood, escapes are decoded.
pub(super) fn printf(fmt: &str, vals: &[String]) -> String {
    use super::words::{Escapes, decode_escapes};
    let fmt = decode_escapes(fmt, Escapes::Printf);
    let mut out = String::new();
    let mut next = 0;
    loop {
        let mut used = false;
        let mut chars = fmt.chars().peekable();
        while let Some(c) = chars.next() {
            if c != '%' {
                out.push(c);
                continue;
            }
            // Skip flags, width and precision.
            while chars
                .peek()
                .is_some_and(|c| c.is_ascii_digit() || matches!(c, '-' | '+' | ' ' | '#' | '.'))
            {
                chars.next();
            }
            let Some(conv) = chars.next() else { break };
            if conv == '%' {
                out.push('%');
                continue;
            }
            let v = vals.get(next).cloned().unwrap_or_default();
            next += 1;
            used = true;
            match conv {
                'b' => out.push_str(&decode_escapes(&v, Escapes::Echo)),
                'c' => out.extend(v.chars().next()),
                _ => out.push_str(&v),
            }
        }
        if !used || next >= vals.len() {
            break;
        }
    }
    out
}
