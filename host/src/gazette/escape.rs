//! Escaping for the page: every string from a journal or a words file goes through
//! [`text`] before it reaches the HTML, whoever wrote it.

/// `s` as HTML text or a quoted attribute value: the five markup characters become
/// references, and characters that would be invisible or reorder the line (control
/// characters, bidirectional overrides) are shown as what they are.
pub fn text(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + s.len() / 8);
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\n' | '\t' => out.push(c),
            // C0 controls and DEL as their control pictures (U+2400…), visible and one
            // character wide; `\r` too, so a CR never hides what follows it.
            '\u{0}'..='\u{1f}' => out.push(char::from_u32(0x2400 + c as u32).unwrap_or('\u{fffd}')),
            '\u{7f}' => out.push('\u{2421}'),
            // C1 controls, bidirectional embeddings, overrides and isolates, and the
            // other invisible format characters: named by their code point.
            '\u{80}'..='\u{9f}'
            | '\u{200b}'..='\u{200f}'
            | '\u{202a}'..='\u{202e}'
            | '\u{2060}'..='\u{2069}'
            | '\u{feff}' => out.push_str(&format!("[U+{:04X}]", c as u32)),
            _ => out.push(c),
        }
    }
    out
}

/// At most `max` characters of `s`, with `…` when cut.
pub fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut cut: String = s.chars().take(max.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// Standard base64 with padding (RFC 4648), for `data:` URIs.
pub fn base64(bytes: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        let sextet = |i: u32| char::from(ABC[((n >> (18 - 6 * i)) & 63) as usize]);
        out.push(sextet(0));
        out.push(sextet(1));
        out.push(if chunk.len() > 1 { sextet(2) } else { '=' });
        out.push(if chunk.len() > 2 { sextet(3) } else { '=' });
    }
    out
}

/// A dollar amount as people read it; a value no journal should hold (negative, not a
/// number, astronomically large) is printed as what it is rather than trusted.
pub fn dollars(usd: f64) -> String {
    if !usd.is_finite() {
        return "an unreadable amount".to_string();
    }
    if usd.abs() >= 1e12 {
        return format!("${usd:e}");
    }
    format!("${usd:.2}")
}

/// The page as plain text for a terminal: the body's words with its blocks on their own
/// lines, list items as `- `, a fact as `Name: value`; the style, diagrams and images
/// left out. It reads only pages this renderer wrote, whose every tag is its own and
/// whose every text was escaped by [`text`].
pub fn plain(html: &str) -> String {
    // A heading's blank line, kept apart from the page's own line breaks (which are
    // layout): `text` shows a NUL as a control picture, so none is in the page.
    const BLANK: char = '\u{0}';
    let body = html
        .split_once("<body>")
        .map_or(html, |(_, b)| b.split("</body>").next().unwrap_or(b));
    let mut out = String::with_capacity(body.len() / 2);
    let mut rest = body;
    let mut term_at = 0;
    while let Some(open) = rest.find('<') {
        out.push_str(&rest[..open]);
        let Some(close) = rest[open..].find('>') else {
            break;
        };
        let tag = &rest[open + 1..open + close];
        rest = &rest[open + close + 1..];
        let name: String = tag
            .trim_start_matches('/')
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect();
        let closing = tag.starts_with('/');
        match (name.as_str(), closing) {
            // What a terminal can't show: skipped whole.
            ("svg" | "style" | "script", false) => {
                let end = format!("</{name}>");
                rest = rest.split_once(&end).map_or("", |(_, r)| r);
                if name == "svg" {
                    out.push_str("\n(a diagram: `hall gazette --open` shows it)\n");
                }
            }
            ("li", false) => out.push_str("\n- "),
            // A list item's later lines line up under its first.
            ("br", _) => out.push_str("\n  "),
            ("dt", false) => {
                out.push('\n');
                term_at = out.len();
            }
            // A fact without a name continues the one above it.
            ("dt", true) if out.len() == term_at => out.push_str("  "),
            ("dt", true) => out.push_str(": "),
            ("h1" | "h2" | "footer", false) | ("h1" | "h2", true) => {
                out.push('\n');
                out.push(BLANK);
                out.push('\n');
            }
            (
                "p" | "div" | "section" | "header" | "footer" | "article" | "dl" | "ol" | "ul"
                | "figure" | "figcaption" | "main",
                _,
            ) => out.push('\n'),
            _ => {}
        }
    }
    out.push_str(rest);
    let text = out
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&");
    let mut lines: Vec<&str> = Vec::new();
    for line in text.lines().map(str::trim_end) {
        let blank = line.trim() == BLANK.to_string();
        if line.trim().is_empty() {
            continue;
        }
        if blank {
            if lines.last().is_some_and(|l| !l.is_empty()) {
                lines.push("");
            }
            continue;
        }
        lines.push(line.trim_start_matches(BLANK).trim_end());
    }
    while lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_is_escaped_and_nothing_is_lost() {
        let hostile = "</style><script>alert('x')</script>\"&amp;";
        let e = text(hostile);
        assert_eq!(
            e,
            "&lt;/style&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&quot;&amp;amp;"
        );
        assert!(!e.contains('<') && !e.contains('>') && !e.contains('"'));
    }

    #[test]
    fn invisible_characters_are_shown() {
        assert_eq!(
            text("a\u{0}b\u{1b}[31m\rc\u{7f}"),
            "a\u{2400}b\u{241b}[31m\u{240d}c\u{2421}"
        );
        assert_eq!(text("x\u{202e}y\u{85}"), "x[U+202E]y[U+0085]");
        assert_eq!(text("line\n\ttab"), "line\n\ttab");
        assert_eq!(text("ünïcode ✓"), "ünïcode ✓");
    }

    #[test]
    fn base64_matches_the_rfc_vectors() {
        for (plain, coded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(plain.as_bytes()), coded, "{plain}");
        }
        assert_eq!(base64(&[0xff, 0xfe, 0xfd]), "//79");
    }

    #[test]
    fn amounts_and_clips() {
        assert_eq!(dollars(1.234), "$1.23");
        assert_eq!(dollars(f64::NAN), "an unreadable amount");
        assert_eq!(dollars(f64::INFINITY), "an unreadable amount");
        assert_eq!(dollars(1e300), "$1e300");
        assert_eq!(clip("abcdef", 4), "abc…");
        assert_eq!(clip("abc", 4), "abc");
    }
}
