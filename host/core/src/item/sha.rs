//! Commit names as the journal records them.

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A git object name: the full hexadecimal name git printed (40 digits, or 64 in a
/// SHA-256 repository). Lines written by hand or by older tools may hold an
/// abbreviation, so any text decodes and is kept as written; [`Sha::short`] is the one
/// place a name is abbreviated for people.
#[derive(
    Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(transparent)]
pub struct Sha(String);

impl Sha {
    pub fn new(name: impl Into<String>) -> Sha {
        Sha(name.into())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The first seven digits, as people read a commit name.
    pub fn short(&self) -> &str {
        short(&self.0)
    }

    /// Whether this is a whole object name (40 or 64 hexadecimal digits).
    pub fn is_full(&self) -> bool {
        is_full(&self.0)
    }

    pub fn into_string(self) -> String {
        self.0
    }
}

/// The first seven characters of any commit name.
pub fn short(name: &str) -> &str {
    let end = name
        .char_indices()
        .nth(7)
        .map(|(i, _)| i)
        .unwrap_or(name.len());
    &name[..end]
}

/// Whether `name` is a whole object name (40 or 64 hexadecimal digits).
pub fn is_full(name: &str) -> bool {
    (name.len() == 40 || name.len() == 64) && name.bytes().all(|b| b.is_ascii_hexdigit())
}

impl fmt::Display for Sha {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::ops::Deref for Sha {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for Sha {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl AsRef<std::ffi::OsStr> for Sha {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.0.as_ref()
    }
}

impl From<String> for Sha {
    fn from(s: String) -> Sha {
        Sha(s)
    }
}

impl From<&str> for Sha {
    fn from(s: &str) -> Sha {
        Sha(s.to_string())
    }
}

impl From<&String> for Sha {
    fn from(s: &String) -> Sha {
        Sha(s.clone())
    }
}

impl PartialEq<str> for Sha {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for Sha {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

impl PartialEq<String> for Sha {
    fn eq(&self, other: &String) -> bool {
        &self.0 == other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_is_seven_characters_and_full_names_are_hex() {
        let full = Sha::new("7c2d018a".repeat(5));
        assert_eq!(full.short(), "7c2d018");
        assert!(full.is_full());
        assert_eq!(Sha::new("abc").short(), "abc");
        assert!(!Sha::new("7c2d018").is_full());
        assert_eq!(serde_json::to_string(&full).unwrap(), format!("\"{full}\""));
    }
}
