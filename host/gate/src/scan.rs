//! The cautious scan used when the shell text doesn't parse.
//!
//! In parse mode a syntax error must not turn into a free pass, so the text is cut at
//! every operator and substitution, quotes are dropped, and each piece is classified as
//! if it were a simple command. Quoted text is also offered as a piece of its own, since
//! an unbalanced quote may be hiding a `bash -c "git push`. It over-reports by design.

use super::words::Arg;

/// The most candidate commands one scan returns; bounds work on huge input.
const MAX_CANDIDATES: usize = 2048;

/// Splits `src` into candidate argvs: from every word that names git, gh, hub or the
/// ship command to the end of its piece, plus whole pieces that mention `refs/notes`.
/// Pieces that name none of these can't push or write notes, so they are dropped; that
/// keeps huge input cheap.
pub(super) fn segments(src: &str, ship: Option<&str>) -> Vec<Vec<Arg>> {
    let mut pieces: Vec<Vec<Arg>> = Vec::new();
    let mut quoted: Vec<String> = Vec::new();
    cut(src, &mut pieces, &mut quoted);
    // Quoted strings, read again as commands of their own.
    for q in quoted {
        let mut ignored = Vec::new();
        cut(&q, &mut pieces, &mut ignored);
    }
    let mut out = Vec::new();
    for piece in pieces {
        if piece.iter().any(|a| a.text.contains("refs/notes")) {
            out.push(piece.clone());
        }
        for (i, a) in piece.iter().enumerate() {
            let name = a.text.rsplit('/').next().unwrap_or("");
            let relevant = matches!(name, "git" | "gh" | "hub")
                || name.starts_with("git-")
                || ship.is_some_and(|s| s == a.text);
            if relevant {
                out.push(piece[i..].to_vec());
            }
        }
        if out.len() >= MAX_CANDIDATES {
            break;
        }
    }
    out.truncate(MAX_CANDIDATES);
    out
}

fn cut(src: &str, out: &mut Vec<Vec<Arg>>, quoted: &mut Vec<String>) {
    let mut words: Vec<Arg> = Vec::new();
    let mut cur = String::new();
    let mut in_quote: Option<char> = None;
    let mut qbuf = String::new();
    let mut chars = src.chars().peekable();
    let flush_word = |cur: &mut String, words: &mut Vec<Arg>| {
        if !cur.is_empty() {
            words.push(Arg::lit(std::mem::take(cur)));
        }
    };
    while let Some(c) = chars.next() {
        if let Some(q) = in_quote {
            if c == q {
                in_quote = None;
                quoted.push(std::mem::take(&mut qbuf));
            } else if c == '\\' && q == '"' {
                if let Some(n) = chars.next() {
                    cur.push(n);
                    qbuf.push(n);
                }
            } else {
                cur.push(c);
                qbuf.push(c);
            }
            continue;
        }
        match c {
            '\'' | '"' => in_quote = Some(c),
            '\\' => {
                if let Some(n) = chars.next()
                    && n != '\n'
                {
                    cur.push(n);
                }
            }
            ' ' | '\t' => flush_word(&mut cur, &mut words),
            ';' | '&' | '|' | '\n' | '(' | ')' | '{' | '}' | '`' | '<' | '>' => {
                flush_word(&mut cur, &mut words);
                if !words.is_empty() {
                    out.push(std::mem::take(&mut words));
                }
                if c == '<' || c == '>' {
                    // The redirection target is not a command word: drop it.
                    while chars
                        .peek()
                        .is_some_and(|c| matches!(c, '<' | '>' | '&' | ' '))
                    {
                        chars.next();
                    }
                    while chars.peek().is_some_and(|c| !c.is_whitespace()) {
                        chars.next();
                    }
                }
            }
            '$' if chars.peek() == Some(&'(') => {
                flush_word(&mut cur, &mut words);
                if !words.is_empty() {
                    out.push(std::mem::take(&mut words));
                }
            }
            _ => cur.push(c),
        }
    }
    if in_quote.is_some() && !qbuf.is_empty() {
        quoted.push(qbuf);
    }
    flush_word(&mut cur, &mut words);
    if !words.is_empty() {
        out.push(words);
    }
}
