//! awk programs and sed scripts: what in them runs a command or writes a file.

use super::code::identifiers;

/// awk programs run commands with `system()`, pipes and `getline` from a command, and
/// write files with `print >`. A `>` elsewhere is a comparison.
pub(super) fn awk_unreadable(code: &str) -> Option<String> {
    let words = identifiers(code, '#');
    if words.iter().any(|w| w == "system") {
        return Some("it calls `system()`".to_owned());
    }
    // Outside strings: a lone `|` pipes to or from a command (awk has no bitwise or),
    // and a `>` inside a print statement redirects its output.
    let chars: Vec<char> = code.chars().collect();
    let mut quote = false;
    let mut in_print = false;
    let mut word = String::new();
    for (i, &c) in chars.iter().enumerate() {
        let prev = if i > 0 { chars[i - 1] } else { ' ' };
        if quote {
            if c == '"' && prev != '\\' {
                quote = false;
            }
            continue;
        }
        if c == '"' {
            quote = true;
            continue;
        }
        if c.is_alphanumeric() || c == '_' {
            word.push(c);
            continue;
        }
        if word == "print" || word == "printf" {
            in_print = true;
        }
        word.clear();
        match c {
            '|' if prev != '|' && chars.get(i + 1) != Some(&'|') => {
                return Some("it pipes to or from a command".to_owned());
            }
            '>' if in_print => {
                return Some("it redirects printed output to a file or a command".to_owned());
            }
            ';' | '}' | '{' | '\n' => in_print = false,
            _ => {}
        }
    }
    None
}

/// sed runs commands with `e` (and the `e` flag of `s`), and writes files with `w`,
/// `W` and the `w` flag.
pub(super) fn sed_unreadable(script: &str) -> Option<String> {
    let chars: Vec<char> = script.chars().collect();
    let mut i = 0;
    // At the start of a command: skip addresses, then look at the command letter.
    while i < chars.len() {
        // Skip blanks, separators and addresses (numbers, $, /re/, ranges, !).
        while i < chars.len()
            && (chars[i].is_whitespace()
                || matches!(chars[i], ';' | '{' | '}' | '!' | ',' | '$' | '~' | '+'))
            || chars.get(i).is_some_and(|c| c.is_ascii_digit())
        {
            i += 1;
        }
        if i >= chars.len() {
            break;
        }
        if chars[i] == '/' || chars[i] == '\\' {
            let delim = if chars[i] == '\\' {
                i += 1;
                chars.get(i).copied().unwrap_or('/')
            } else {
                '/'
            };
            i += 1;
            while i < chars.len() && chars[i] != delim {
                if chars[i] == '\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
            continue;
        }
        let cmd = chars[i];
        i += 1;
        match cmd {
            'e' => return Some("its `e` command runs a shell command".to_owned()),
            'w' | 'W' => return Some("its `w` command writes a file".to_owned()),
            'r' | 'R' => {
                // Reads a file into the output: harmless, skip its name.
                while i < chars.len() && chars[i] != '\n' && chars[i] != ';' {
                    i += 1;
                }
            }
            's' | 'y' => {
                let Some(&delim) = chars.get(i) else { break };
                i += 1;
                let parts = 2;
                let mut seen = 0;
                while i < chars.len() && seen < parts {
                    if chars[i] == '\\' {
                        i += 2;
                        continue;
                    }
                    if chars[i] == delim {
                        seen += 1;
                    }
                    i += 1;
                }
                if cmd == 's' {
                    let flags: String = chars[i..]
                        .iter()
                        .take_while(|c| !matches!(c, ';' | '\n' | '}'))
                        .collect();
                    if flags.contains('e') {
                        return Some("its `s///e` flag runs a shell command".to_owned());
                    }
                    if flags.contains('w') {
                        return Some("its `s///w` flag writes a file".to_owned());
                    }
                    i += flags.len();
                }
            }
            'a' | 'i' | 'c' => {
                // Text to the end of the line.
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            'b' | 't' | 'T' | ':' => {
                while i < chars.len() && !matches!(chars[i], '\n' | ';') {
                    i += 1;
                }
            }
            _ => {}
        }
    }
    None
}
