//! Identifiers that people and agents type: `H-0042` for items, `Q-12` for questions,
//! `L-0007` for the Library's learnings.
//!
//! Agents copy ids from JSON and people type them from memory, so parsing is lenient
//! (`42`, `H-42`, `h-0042`) while display is one canonical form.

use std::fmt;
use std::str::FromStr;

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// An item's number, shown as `H-0042`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ItemId(pub u32);

/// A question's number, shown as `Q-12`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct QuestionId(pub u32);

/// A learning's number in the Library, shown as `L-0007`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LearningId(pub u32);

/// Why an id did not parse.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("`{input}` is not {what} (expected {example})")]
pub struct BadId {
    pub input: String,
    pub what: &'static str,
    pub example: &'static str,
}

fn parse_number(
    s: &str,
    prefix: char,
    what: &'static str,
    example: &'static str,
) -> Result<u32, BadId> {
    let bad = || BadId {
        input: s.to_string(),
        what,
        example,
    };
    let t = s.trim();
    let digits = match t.chars().next() {
        Some(c) if c.eq_ignore_ascii_case(&prefix) => t[1..].strip_prefix('-').ok_or_else(bad)?,
        _ => t,
    };
    if digits.is_empty() || digits.len() > 9 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    match digits.parse::<u32>() {
        Ok(0) | Err(_) => Err(bad()),
        Ok(n) => Ok(n),
    }
}

impl FromStr for ItemId {
    type Err = BadId;
    fn from_str(s: &str) -> Result<Self, BadId> {
        parse_number(s, 'H', "an item id", "42, H-42 or H-0042").map(ItemId)
    }
}

impl FromStr for QuestionId {
    type Err = BadId;
    fn from_str(s: &str) -> Result<Self, BadId> {
        parse_number(s, 'Q', "a question id", "12 or Q-12").map(QuestionId)
    }
}

impl FromStr for LearningId {
    type Err = BadId;
    fn from_str(s: &str) -> Result<Self, BadId> {
        parse_number(s, 'L', "a learning id", "7, L-7 or L-0007").map(LearningId)
    }
}

impl fmt::Display for LearningId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "L-{:04}", self.0)
    }
}

impl fmt::Display for ItemId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "H-{:04}", self.0)
    }
}

impl fmt::Display for QuestionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Q-{}", self.0)
    }
}

macro_rules! string_serde {
    ($ty:ident, $pattern:literal, $desc:literal) => {
        impl Serialize for $ty {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(self)
            }
        }
        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
                s.parse().map_err(serde::de::Error::custom)
            }
        }
        impl JsonSchema for $ty {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                stringify!($ty).into()
            }
            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                schemars::json_schema!({ "type": "string", "pattern": $pattern, "description": $desc })
            }
        }
    };
}

string_serde!(ItemId, "^H-[0-9]{4,}$", "An item id such as H-0042.");
string_serde!(QuestionId, "^Q-[0-9]+$", "A question id such as Q-12.");
string_serde!(
    LearningId,
    "^L-[0-9]{4,}$",
    "A learning id in the Library such as L-0007."
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn item_ids_accept_every_documented_spelling() {
        for s in ["42", "H-42", "H-0042", "h-42", " H-0042 "] {
            assert_eq!(s.parse::<ItemId>(), Ok(ItemId(42)), "{s}");
        }
        assert_eq!(ItemId(42).to_string(), "H-0042");
        assert_eq!(ItemId(12345).to_string(), "H-12345");
    }

    #[test]
    fn item_ids_reject_garbage() {
        for s in [
            "",
            "H-",
            "H42x",
            "0",
            "H-0",
            "Q-4",
            "-4",
            "4.2",
            "99999999999",
        ] {
            assert!(s.parse::<ItemId>().is_err(), "{s}");
        }
    }

    #[test]
    fn learning_ids_round_trip_and_refuse_other_prefixes() {
        for s in ["7", "L-7", "l-0007", "L-0007"] {
            assert_eq!(s.parse::<LearningId>(), Ok(LearningId(7)), "{s}");
        }
        assert_eq!(LearningId(7).to_string(), "L-0007");
        assert!("H-7".parse::<LearningId>().is_err());
    }

    #[test]
    fn question_ids_round_trip() {
        assert_eq!("Q-12".parse::<QuestionId>(), Ok(QuestionId(12)));
        assert_eq!("12".parse::<QuestionId>(), Ok(QuestionId(12)));
        assert_eq!(QuestionId(12).to_string(), "Q-12");
    }
}
