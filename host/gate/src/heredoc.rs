//! A check that every heredoc in a command line is one the parser can take safely.
//!
//! brush-parser 0.4's tokenizer can loop forever, allocating without bound, on some
//! malformed heredocs: a missing or empty delimiter, or one holding `$(…)`, when the
//! input ends inside a substitution (`$( <<  `, `<<''>#`). Real commands never look like
//! that, so before parsing we walk the text with a small quote-aware scanner and hand
//! anything odd to the cautious path instead. A heredoc is accepted when its delimiter
//! is a plain or quoted word and a later line ends it.

/// Where the scanner is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ctx {
    /// Shell code; counts open `(` so the matching `)` of `$(` can be found.
    Code { parens: u32 },
    /// Inside double quotes.
    Double,
    /// Inside backticks.
    Tick,
}

/// Whether every heredoc in `src` has a well-formed delimiter and an end line.
pub(super) fn well_formed(src: &str) -> bool {
    if !src.contains("<<") {
        return true;
    }
    let b = src.as_bytes();
    let mut stack = vec![Ctx::Code { parens: 0 }];
    // Heredocs opened on the current line, whose bodies start at the next newline.
    let mut pending: Vec<(Vec<u8>, bool)> = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let top = stack.last().copied().unwrap_or(Ctx::Code { parens: 0 });
        if top == Ctx::Double {
            match c {
                b'\\' => i += 2,
                b'"' => {
                    stack.pop();
                    i += 1;
                }
                b'$' if b.get(i + 1) == Some(&b'(') => {
                    stack.push(Ctx::Code { parens: 0 });
                    i += 2;
                }
                b'`' => {
                    stack.push(Ctx::Tick);
                    i += 1;
                }
                _ => i += 1,
            }
            continue;
        }
        match c {
            b'\\' => i += 2,
            b'\'' => match find(b, i + 1, b'\'') {
                Some(end) => i = end + 1,
                None => return true, // The parser reports the open quote itself.
            },
            b'"' => {
                stack.push(Ctx::Double);
                i += 1;
            }
            b'`' => {
                if top == Ctx::Tick {
                    stack.pop();
                } else {
                    stack.push(Ctx::Tick);
                }
                i += 1;
            }
            b'$' if b.get(i + 1) == Some(&b'(') => {
                stack.push(Ctx::Code { parens: 0 });
                i += 2;
            }
            b'$' if b.get(i + 1) == Some(&b'\'') => {
                // $'…' with backslash escapes.
                let mut j = i + 2;
                while j < b.len() && b[j] != b'\'' {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                i = j + 1;
            }
            b'(' => {
                if let Some(Ctx::Code { parens }) = stack.last_mut() {
                    *parens += 1;
                }
                i += 1;
            }
            b')' => {
                let depth = stack.len();
                match stack.last_mut() {
                    Some(Ctx::Code { parens }) if *parens > 0 => *parens -= 1,
                    _ if depth > 1 => {
                        stack.pop();
                    }
                    _ => {}
                }
                i += 1;
            }
            b'#' if i == 0
                || matches!(b[i - 1], b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'(') =>
            {
                // A comment ends at the newline. brush-parser doesn't always agree that
                // `#` starts one (inside `$(`), so `<<` in a comment is refused too.
                let end = find(b, i, b'\n').unwrap_or(b.len());
                if b[i..end].windows(2).any(|w| w == b"<<") {
                    return false;
                }
                i = end;
            }
            b'<' if b.get(i + 1) == Some(&b'<') => {
                if b.get(i + 2) == Some(&b'<') {
                    i += 3;
                    continue;
                }
                let mut j = i + 2;
                let strip = b.get(j) == Some(&b'-');
                if strip {
                    j += 1;
                }
                while j < b.len() && matches!(b[j], b' ' | b'\t') {
                    j += 1;
                }
                let Some((delim, end)) = delimiter(b, j) else {
                    return false;
                };
                pending.push((delim, strip));
                i = end;
            }
            b'\n' => {
                i += 1;
                for (delim, strip) in std::mem::take(&mut pending) {
                    match body_end(b, i, &delim, strip) {
                        Some(next) => i = next,
                        None => return false,
                    }
                }
            }
            _ => i += 1,
        }
    }
    // A heredoc opened on the last line never ends.
    pending.is_empty()
}

/// Reads a heredoc delimiter at `j`: plain, quoted or escaped characters, no
/// expansions. Returns its text and where it ends.
fn delimiter(b: &[u8], mut j: usize) -> Option<(Vec<u8>, usize)> {
    let mut out = Vec::new();
    while j < b.len() {
        match b[j] {
            b'\'' => {
                let end = find(b, j + 1, b'\'')?;
                out.extend_from_slice(&b[j + 1..end]);
                j = end + 1;
            }
            b'"' => {
                let end = find(b, j + 1, b'"')?;
                let inner = &b[j + 1..end];
                if inner.iter().any(|c| matches!(c, b'$' | b'`' | b'\\')) {
                    return None;
                }
                out.extend_from_slice(inner);
                j = end + 1;
            }
            b'\\' => {
                out.push(*b.get(j + 1)?);
                j += 2;
            }
            b'$' | b'`' => return None,
            c if c.is_ascii_alphanumeric() || b"_-.+:@%^,/!?=~".contains(&c) => {
                out.push(c);
                j += 1;
            }
            _ => break,
        }
    }
    if out.is_empty() || out.contains(&b'\n') {
        return None;
    }
    Some((out, j))
}

/// Finds the line that ends a heredoc body starting at `from`; returns the index after it.
fn body_end(b: &[u8], from: usize, delim: &[u8], strip_tabs: bool) -> Option<usize> {
    let mut i = from;
    while i <= b.len() {
        let end = find(b, i, b'\n').unwrap_or(b.len());
        let mut line = &b[i..end];
        if strip_tabs {
            while let [b'\t', rest @ ..] = line {
                line = rest;
            }
        }
        // The end line may be followed by `)` when the heredoc closes a `$(…)`.
        if line == delim
            || (line.starts_with(delim)
                && line[delim.len()..].iter().all(|c| *c == b')' || *c == b' '))
        {
            return Some(if end < b.len() { end + 1 } else { end });
        }
        if end >= b.len() {
            return None;
        }
        i = end + 1;
    }
    None
}

fn find(b: &[u8], from: usize, c: u8) -> Option<usize> {
    b.get(from..)?
        .iter()
        .position(|x| *x == c)
        .map(|p| p + from)
}

#[cfg(test)]
mod tests {
    use super::well_formed;

    #[test]
    fn everyday_heredocs_pass() {
        assert!(well_formed("cat <<'EOF'\nIt's (fine) \"x\n$(y)\nEOF"));
        assert!(well_formed(
            "git commit -m \"$(cat <<'EOF'\nfix: a (b)\n\nIt's done\nEOF\n)\""
        ));
        assert!(well_formed("cat <<-EOF > f\n\tx\n\tEOF\necho done"));
        assert!(well_formed("cat <<A <<\"B\"\na\nA\nb\nB\n"));
        assert!(well_formed("bash <<< 'git push'"));
        assert!(well_formed("echo 'a << b' \"c << d\""));
        assert!(well_formed("x=$(cat <<EOF\n$HOME\nEOF\n); echo $x"));
    }

    #[test]
    fn inputs_that_hang_the_tokenizer_are_refused() {
        for bad in [
            "$( <<  ",
            "<< $((  ",
            "<<''>#",
            "``''<<''>#",
            "cat << ||",
            "cat <<EOF\nno end",
        ] {
            assert!(!well_formed(bad), "{bad:?}");
        }
    }
}
