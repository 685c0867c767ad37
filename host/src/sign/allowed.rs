//! `allowed_signers`, the file that says which key may sign as whom, read the way
//! `ssh-keygen -Y verify` and git read it: one entry per line,
//! `principals [options] keytype base64 [comment]`.
//!
//! Principals are a comma-separated list of patterns (`*`, `?`, and `!` to exclude).
//! Of the options, `namespaces="…"` limits the namespaces a key may sign in, and
//! `valid-after`/`valid-before` limit when it may be used (read as UTC). A
//! `cert-authority` line names a CA, and hallmark signatures carry no certificates, so
//! such a line never matches; a line with an option this reader doesn't know is skipped
//! rather than trusted more widely than its author meant.

use ssh_key::PublicKey;
use ssh_key::public::KeyData;

/// One usable line.
#[derive(Clone, Debug, PartialEq)]
struct Entry {
    principals: String,
    namespaces: Option<String>,
    valid_after: Option<u64>,
    valid_before: Option<u64>,
    key: KeyData,
}

/// The parsed file.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AllowedSigners {
    entries: Vec<Entry>,
    /// Lines that were not used, with why (1-based line numbers).
    pub skipped: Vec<(usize, String)>,
}

impl AllowedSigners {
    pub fn parse(text: &str) -> AllowedSigners {
        let mut out = AllowedSigners::default();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            match parse_line(line) {
                Ok(Some(e)) => out.entries.push(e),
                Ok(None) => {}
                Err(why) => out.skipped.push((i + 1, why)),
            }
        }
        out
    }

    /// Trusts `key` for every principal, in Hallmark's namespace only.
    pub fn only(key: &PublicKey) -> AllowedSigners {
        AllowedSigners {
            entries: vec![Entry {
                principals: "*".into(),
                namespaces: Some(super::NAMESPACE.into()),
                valid_after: None,
                valid_before: None,
                key: key.key_data().clone(),
            }],
            skipped: Vec::new(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Whether `key` may sign as `principal` in `namespace` at `now` (Unix seconds).
    pub fn allows(&self, principal: &str, key: &KeyData, namespace: &str, now: u64) -> bool {
        self.entries.iter().any(|e| {
            e.key == *key
                && match_list(principal, &e.principals)
                && e.namespaces
                    .as_deref()
                    .is_none_or(|n| match_list(namespace, n))
                && e.valid_after.is_none_or(|t| now >= t)
                && e.valid_before.is_none_or(|t| now < t)
        })
    }

    /// Whether some line already lets `key` sign hallmarks as `principal`.
    pub fn lists(&self, principal: &str, key: &KeyData) -> bool {
        self.entries.iter().any(|e| {
            e.key == *key
                && match_list(principal, &e.principals)
                && e.namespaces
                    .as_deref()
                    .is_none_or(|n| match_list(super::NAMESPACE, n))
                && e.valid_before.is_none()
        })
    }
}

/// The line `hall init --signers` writes for a key.
pub fn line(principal: &str, key: &PublicKey) -> String {
    let principal = if principal
        .chars()
        .any(|c| c.is_whitespace() || c == '"' || c == ',')
    {
        format!("\"{}\"", principal.replace('"', ""))
    } else {
        principal.to_string()
    };
    let key = key
        .to_openssh()
        .unwrap_or_else(|_| String::from("(unencodable key)"));
    format!("{principal} namespaces=\"{}\" {key}", super::NAMESPACE)
}

/// Splits on whitespace outside double quotes.
fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    for c in line.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                cur.push(c);
            }
            c if c.is_whitespace() && !quoted => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
            c => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

fn unquote(s: &str) -> &str {
    s.strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .unwrap_or(s)
}

fn key_of(kind: &str, data: &str) -> Option<KeyData> {
    PublicKey::from_openssh(&format!("{kind} {data}"))
        .ok()
        .map(|k| k.key_data().clone())
}

/// One line: `Ok(None)` for a line that is valid but can never match (a CA).
fn parse_line(line: &str) -> Result<Option<Entry>, String> {
    let w = words(line);
    if w.len() < 3 {
        return Err("expected `principals [options] keytype base64`".into());
    }
    let principals = unquote(&w[0]).to_string();
    let (options, key) = match key_of(&w[1], &w[2]) {
        Some(k) => (None, k),
        None => {
            let key = w
                .get(3)
                .and_then(|d| key_of(&w[2], d))
                .ok_or_else(|| "no public key this reader understands".to_string())?;
            (Some(w[1].as_str()), key)
        }
    };
    let mut entry = Entry {
        principals,
        namespaces: None,
        valid_after: None,
        valid_before: None,
        key,
    };
    for opt in options.map(split_options).unwrap_or_default() {
        let (name, value) = match opt.split_once('=') {
            Some((n, v)) => (n.to_ascii_lowercase(), Some(unquote(v).to_string())),
            None => (opt.to_ascii_lowercase(), None),
        };
        match (name.as_str(), value) {
            ("cert-authority", None) => return Ok(None),
            ("namespaces", Some(v)) => entry.namespaces = Some(v),
            ("valid-after", Some(v)) => {
                entry.valid_after = Some(timestamp(&v).ok_or(format!("bad time {v}"))?)
            }
            ("valid-before", Some(v)) => {
                entry.valid_before = Some(timestamp(&v).ok_or(format!("bad time {v}"))?)
            }
            (other, _) => return Err(format!("unknown option `{other}`")),
        }
    }
    Ok(Some(entry))
}

/// Splits an options word on commas outside double quotes.
fn split_options(word: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    for c in word.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                cur.push(c);
            }
            ',' if !quoted => out.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    out.push(cur);
    out.into_iter().filter(|o| !o.is_empty()).collect()
}

/// `YYYYMMDD` or `YYYYMMDDHHMM[SS]`, with an optional trailing `Z`, as Unix seconds.
fn timestamp(s: &str) -> Option<u64> {
    let s = s.strip_suffix(['Z', 'z']).unwrap_or(s);
    if !s.bytes().all(|b| b.is_ascii_digit()) || ![8, 12, 14].contains(&s.len()) {
        return None;
    }
    let n = |r: std::ops::Range<usize>| s.get(r).and_then(|p| p.parse::<u64>().ok());
    let (y, m, d) = (n(0..4)?, n(4..6)?, n(6..8)?);
    let (hh, mm, ss) = (
        n(8..10).unwrap_or(0),
        n(10..12).unwrap_or(0),
        n(12..14).unwrap_or(0),
    );
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) || hh > 23 || mm > 59 || ss > 60 {
        return None;
    }
    // Days from the civil date (Howard Hinnant's algorithm), for years from 1970.
    let y = if m <= 2 { y.checked_sub(1)? } else { y };
    let era = y / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = (era * 146_097 + doe).checked_sub(719_468)?;
    Some(days * 86_400 + hh * 3600 + mm * 60 + ss)
}

/// ssh's pattern lists: any `!pattern` that matches refuses; else any pattern that
/// matches accepts.
fn match_list(s: &str, list: &str) -> bool {
    let mut hit = false;
    for p in list.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        match p.strip_prefix('!') {
            Some(neg) if glob(s, neg) => return false,
            Some(_) => {}
            None => hit |= glob(s, p),
        }
    }
    hit
}

fn glob(s: &str, p: &str) -> bool {
    let (s, p): (Vec<char>, Vec<char>) = (s.chars().collect(), p.chars().collect());
    let (mut i, mut j) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while i < s.len() {
        if j < p.len() && (p[j] == '?' || p[j] == s[i]) {
            i += 1;
            j += 1;
        } else if j < p.len() && p[j] == '*' {
            star = Some((j, i));
            j += 1;
        } else if let Some((sj, si)) = star {
            j = sj + 1;
            i = si + 1;
            star = Some((sj, si + 1));
        } else {
            return false;
        }
    }
    p[j..].iter().all(|c| *c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    const K1: &str =
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAILM+rvN+ot98qgEN796jTiQfZfG1KaT0PtFDJ/XFSqti";

    fn key() -> KeyData {
        PublicKey::from_openssh(K1).unwrap().key_data().clone()
    }

    #[test]
    fn principals_patterns_and_namespaces_are_honoured() {
        let list = AllowedSigners::parse(&format!(
            "# who may sign\n\
             ada@example.com,*@ops.example.com,!eve@ops.example.com {K1} Ada\n\
             bob@example.com namespaces=\"git,file\" {K1}\n\
             \"carol smith\" namespaces=\"hallmark\",valid-before=\"20300101\" {K1}\n"
        ));
        assert!(list.skipped.is_empty(), "{:?}", list.skipped);
        let ok = |p: &str| list.allows(p, &key(), "hallmark", 1_800_000_000);
        assert!(ok("ada@example.com"));
        assert!(ok("dan@ops.example.com"));
        assert!(!ok("eve@ops.example.com"), "excluded by !");
        assert!(!ok("bob@example.com"), "bob's key is for git and file only");
        assert!(list.allows("bob@example.com", &key(), "git", 0));
        assert!(ok("carol smith"));
        assert!(
            !list.allows("carol smith", &key(), "hallmark", 1_900_000_000),
            "past valid-before"
        );
        assert!(!ok("mallory@example.com"));
    }

    #[test]
    fn another_key_is_not_allowed() {
        let list = AllowedSigners::parse(&format!("* {K1}\n"));
        let dir = tempfile::tempdir().unwrap();
        let other = crate::sign::Signer::load_in(dir.path(), None).unwrap();
        assert!(!list.allows("a@b", other.public_key().key_data(), "hallmark", 0));
        assert!(list.allows("a@b", &key(), "hallmark", 0));
    }

    #[test]
    fn cas_unknown_options_and_junk_never_match() {
        let list = AllowedSigners::parse(&format!(
            "ada@example.com cert-authority {K1}\n\
             ada@example.com no-touch-required {K1}\n\
             just words here\n"
        ));
        assert!(list.is_empty());
        assert_eq!(list.skipped.len(), 2, "{:?}", list.skipped);
    }

    #[test]
    fn the_written_line_reads_back() {
        let k = PublicKey::from_openssh(K1).unwrap();
        let l = line("ada@example.com", &k);
        assert!(l.starts_with("ada@example.com namespaces=\"hallmark\" ssh-ed25519 "));
        let list = AllowedSigners::parse(&l);
        assert!(list.lists("ada@example.com", &key()));
        assert!(!list.lists("bob@example.com", &key()));
    }

    #[test]
    fn times_are_read_as_utc() {
        assert_eq!(timestamp("19700101"), Some(0));
        assert_eq!(timestamp("20000301Z"), Some(951_868_800));
        assert_eq!(timestamp("202001011230"), Some(1_577_881_800));
        assert_eq!(timestamp("2020010112"), None);
        assert_eq!(timestamp("20201301"), None);
    }
}
