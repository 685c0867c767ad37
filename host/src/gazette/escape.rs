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
