//! The `[merge] lit` path patterns: the files that put a PR to a person.

/// True when `path` matches one of the `[merge] lit` patterns.
///
/// A pattern ending in `/` matches everything under that directory; `**`
/// matches across directories, `*` and `?` within one. A pattern with no `/`
/// matches a file name at any depth, as in `.gitignore`.
pub fn lit_match(patterns: &[String], path: &str) -> bool {
    patterns.iter().any(|pattern| {
        let pattern = pattern.trim_start_matches("./");
        if let Some(dir) = pattern.strip_suffix('/') {
            return path.starts_with(pattern) || path == dir;
        }
        if pattern.contains('/') {
            glob(pattern.as_bytes(), path.as_bytes())
        } else {
            let name = path.rsplit('/').next().unwrap_or(path);
            glob(pattern.as_bytes(), name.as_bytes())
        }
    })
}

fn glob(pattern: &[u8], text: &[u8]) -> bool {
    match pattern.split_first() {
        None => text.is_empty(),
        Some((b'*', rest)) if rest.first() == Some(&b'*') => {
            let after = &rest[1..];
            if after.is_empty() {
                return true;
            }
            let rest = after.strip_prefix(b"/").unwrap_or(after);
            // `**` stands for whole directories, so it resumes only at a boundary.
            (0..=text.len()).any(|i| (i == 0 || text[i - 1] == b'/') && glob(rest, &text[i..]))
        }
        Some((b'*', rest)) => {
            let segment = text.iter().position(|&c| c == b'/').unwrap_or(text.len());
            (0..=segment).any(|i| glob(rest, &text[i..]))
        }
        Some((b'?', rest)) => {
            matches!(text.first(), Some(&c) if c != b'/') && glob(rest, &text[1..])
        }
        Some((c, rest)) => text.first() == Some(c) && glob(rest, &text[1..]),
    }
}
