//! Wildcards for the hooks: matching a name against a pattern, and listing what a glob
//! in a command line would expand to, both in bounded time.
//!
//! A pattern comes from the command the agent wrote, so it is the agent's to shape.
//! Matching by recursion, trying every way a `*` could split the name, takes time
//! exponential in the number of stars: `cat *a*a*a*a*a*a*a*a*a*a*a*a*b` against one long
//! name ran past the hooks' deadline. Here a match keeps a single backtrack point (the
//! last `*` seen), which is enough for `*`, `?` and one-character classes, so it costs at
//! most the pattern's length times the name's. Listing is bounded by a [`Budget`] shared
//! by every glob of one call; a glob that would take more is reported as such, and the
//! caller refuses what it can't check.

use std::path::{Path, PathBuf};

/// The most directory entries one hook call reads to expand globs.
pub const MAX_ENTRIES: usize = 20_000;
/// The most paths one hook call's globs may expand to.
pub const MAX_MATCHES: usize = 2_000;

/// One piece of a pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Piece {
    /// `*`: any run of characters, the empty one included.
    Star,
    /// `?`, or a bracket expression: any one character.
    One,
    /// A character that must be there.
    Byte(u8),
}

/// Splits a pattern into pieces. With `classes`, `[…]` (with `!` or `^` to negate and a
/// leading `]` taken literally, as the shell reads it) is one character, whichever one:
/// matching more names than the shell would is the safe side for a check that refuses
/// what a match lands on. An unclosed `[` is a literal.
fn pieces(pattern: &[u8], classes: bool) -> Vec<Piece> {
    let mut out = Vec::with_capacity(pattern.len());
    let mut i = 0;
    while i < pattern.len() {
        match pattern[i] {
            b'*' => {
                // `**` is `*` for one name, as the shell reads it without globstar.
                if out.last() != Some(&Piece::Star) {
                    out.push(Piece::Star);
                }
            }
            b'?' => out.push(Piece::One),
            b'[' if classes => match class_end(pattern, i) {
                Some(end) => {
                    out.push(Piece::One);
                    i = end;
                }
                None => out.push(Piece::Byte(b'[')),
            },
            b => out.push(Piece::Byte(b)),
        }
        i += 1;
    }
    out
}

/// The index of the `]` closing the bracket expression that opens at `open`.
fn class_end(p: &[u8], open: usize) -> Option<usize> {
    let mut i = open + 1;
    if matches!(p.get(i), Some(b'!' | b'^')) {
        i += 1;
    }
    if p.get(i) == Some(&b']') {
        i += 1;
    }
    p[i.min(p.len())..]
        .iter()
        .position(|&c| c == b']')
        .map(|k| i + k)
}

/// Whether `name` matches the pieces, with one backtrack point: when a piece fails, the
/// last `*` takes one more character and matching resumes after it. Earlier stars never
/// need to be revisited, because whatever they could absorb the last one can too.
fn matches(p: &[Piece], name: &[u8]) -> bool {
    let (mut pi, mut ni) = (0, 0);
    // Where to resume: the piece after the last `*`, and the name's position then.
    let mut resume: Option<(usize, usize)> = None;
    while ni < name.len() {
        match p.get(pi) {
            Some(Piece::Star) => {
                resume = Some((pi + 1, ni));
                pi += 1;
            }
            Some(Piece::One) => {
                pi += 1;
                ni += 1;
            }
            Some(Piece::Byte(b)) if *b == name[ni] => {
                pi += 1;
                ni += 1;
            }
            _ => match resume {
                Some((after, from)) => {
                    resume = Some((after, from + 1));
                    pi = after;
                    ni = from + 1;
                }
                None => return false,
            },
        }
    }
    p[pi.min(p.len())..].iter().all(|x| *x == Piece::Star)
}

/// Whether one file name matches a shell pattern (`*`, `?`, `[…]`), in time at most the
/// product of their lengths.
#[cfg(test)]
pub fn wildcard(pattern: &[u8], name: &[u8]) -> bool {
    matches(&pieces(pattern, true), name)
}

/// Whether a `/`-separated path matches a `[capture] free` pattern whose `*` and `?`
/// stay within one segment and whose other characters (`[` included) are literal.
pub fn segments_match(pattern: &str, path: &str) -> bool {
    let p: Vec<&str> = pattern.split('/').collect();
    let s: Vec<&str> = path.split('/').collect();
    p.len() == s.len()
        && p.iter()
            .zip(&s)
            .all(|(p, s)| matches(&pieces(p.as_bytes(), false), s.as_bytes()))
}

/// Whether a word has characters the shell expands as a pattern.
pub fn is_pattern(word: &str) -> bool {
    word.contains(['*', '?', '['])
}

/// What one hook call may still spend on expanding globs.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    entries: usize,
    matches: usize,
}

impl Default for Budget {
    fn default() -> Self {
        Budget {
            entries: MAX_ENTRIES,
            matches: MAX_MATCHES,
        }
    }
}

/// A glob that would take more than the budget to expand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooWide;

/// Every existing path an absolute `pattern` matches, one name at a time, as the shell
/// would expand it (hidden names included, which only errs toward checking more).
/// A pattern that would read more entries or yield more paths than `budget` has left is
/// [`TooWide`]: the caller can't vouch for what it didn't list.
pub fn expand(pattern: &Path, budget: &mut Budget) -> Result<Vec<PathBuf>, TooWide> {
    let mut current = vec![PathBuf::from("/")];
    for comp in pattern.components().skip(1) {
        let part = comp.as_os_str().to_string_lossy().to_string();
        let mut next = Vec::new();
        if is_pattern(&part) {
            let want = pieces(part.as_bytes(), true);
            for dir in &current {
                let Ok(entries) = std::fs::read_dir(dir) else {
                    continue;
                };
                for e in entries.flatten() {
                    budget.entries = budget.entries.checked_sub(1).ok_or(TooWide)?;
                    let name = e.file_name();
                    if matches(&want, name.to_string_lossy().as_bytes()) {
                        budget.matches = budget.matches.checked_sub(1).ok_or(TooWide)?;
                        next.push(dir.join(name));
                    }
                }
            }
        } else {
            next = current.iter().map(|d| d.join(&part)).collect();
        }
        current = next;
    }
    Ok(current)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn names_match_as_the_shell_reads_them() {
        assert!(wildcard(b"hoo*", b"hooks"));
        assert!(wildcard(b"p?st-commit", b"post-commit"));
        assert!(wildcard(b"[h]ooks", b"hooks"));
        assert!(wildcard(b"[!x]ooks", b"hooks"));
        assert!(
            wildcard(b"[]h]ooks", b"hooks"),
            "a leading ] is in the class"
        );
        assert!(wildcard(b"*", b""));
        assert!(wildcard(b"*.rs", b"main.rs"));
        assert!(wildcard(b"a*b*c", b"aXbYbZc"));
        assert!(wildcard(b"[unclosed", b"[unclosed"));
        assert!(!wildcard(b"hoo", b"hooks"));
        assert!(!wildcard(b"*.rs", b"main.rsx"));
        assert!(!wildcard(b"a*b*c", b"aXbYbZ"));
        assert!(!wildcard(b"?", b""));
    }

    #[test]
    fn many_stars_against_a_long_name_take_no_time() {
        // The pattern that ran the recursive matcher past the watchdog.
        let pattern = b"*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b";
        let name = vec![b'a'; 4096];
        let start = Instant::now();
        assert!(!wildcard(pattern, &name));
        let mut yes = name.clone();
        yes.push(b'b');
        assert!(wildcard(pattern, &yes));
        assert!(
            start.elapsed() < Duration::from_millis(200),
            "took {:?}",
            start.elapsed()
        );
    }

    #[test]
    fn free_patterns_stay_within_a_segment_and_take_brackets_literally() {
        assert!(segments_match("notes/*.txt", "notes/a.txt"));
        assert!(!segments_match("notes/*.txt", "notes/deep/a.txt"));
        assert!(!segments_match("*", "a/b"));
        assert!(segments_match("a?c/*", "abc/x"));
        assert!(!segments_match("[ab]", "a"), "no classes in free paths");
        assert!(segments_match("[ab]", "[ab]"));
        let long = "a".repeat(4096);
        let start = Instant::now();
        assert!(!segments_match(&format!("{}b", "*a".repeat(30)), &long));
        assert!(start.elapsed() < Duration::from_millis(200));
    }

    #[test]
    fn globs_expand_within_their_budget_or_say_they_are_too_wide() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        for n in ["a1", "a2", "b1"] {
            std::fs::create_dir_all(root.join(n).join("x")).unwrap();
        }
        let mut budget = Budget::default();
        let mut got = expand(&root.join("a*/x"), &mut budget).unwrap();
        got.sort();
        assert_eq!(got, vec![root.join("a1/x"), root.join("a2/x")]);
        let mut small = Budget {
            entries: 2,
            matches: 10,
        };
        assert_eq!(expand(&root.join("*"), &mut small), Err(TooWide));
        let mut few = Budget {
            entries: 10,
            matches: 1,
        };
        assert_eq!(expand(&root.join("*"), &mut few), Err(TooWide));
        assert!(
            expand(&root.join("nothing/*"), &mut Budget::default())
                .unwrap()
                .is_empty()
        );
    }
}
