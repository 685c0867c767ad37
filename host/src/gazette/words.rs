//! The words file: what the librarian's run writes for an item's Gazette. Words only:
//! a headline, a story, findings retold in plain sentences and a diagram's outline.
//! Every fact on the page (dates, rounds, commits, costs) comes from the journal, so
//! nothing here can put one there.

use std::collections::BTreeMap;
use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The name of the words file in an item's journal directory.
pub const WORDS_FILE: &str = "gazette-words.json";

/// A words file larger than this is not read (the page says so).
const MAX_WORDS_BYTES: u64 = 1024 * 1024;

/// What the librarian writes for an item's Gazette: `items/<id>/gazette-words.json`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GazetteWords {
    /// The page's headline: what the change does for the people who use it.
    pub headline: String,
    /// The story, in paragraphs separated by blank lines: why the change was made, what
    /// it does and what the review found. No dates, commits or costs: Hallmark prints
    /// those from the journal.
    #[serde(default)]
    pub story: String,
    /// Each finding retold in one plain sentence, by its id (`F1`).
    #[serde(default)]
    pub findings: BTreeMap<String, String>,
    /// A diagram of the change's flow, when it has one worth drawing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diagram: Option<Outline>,
}

/// A diagram as boxes and arrows; Hallmark lays it out itself.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Outline {
    pub nodes: Vec<Node>,
    #[serde(default)]
    pub edges: Vec<Edge>,
}

/// One box of a diagram.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Node {
    /// What edges call it.
    pub id: String,
    /// What the box says.
    pub label: String,
}

/// One arrow of a diagram, from node `from` to node `to`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Edge {
    pub from: String,
    pub to: String,
    /// What the arrow says, if anything.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
}

/// The words file as the renderer found it.
#[derive(Clone, Debug, PartialEq)]
pub enum Words {
    /// No words file: the librarian has not written one.
    Absent,
    /// A words file that could not be used, and why (the page's footer says so).
    Invalid(String),
    Found(GazetteWords),
}

impl Words {
    /// Reads the words file at `path`; never fails.
    pub fn read(path: &Path) -> Words {
        match std::fs::metadata(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Words::Absent,
            Err(e) => return Words::Invalid(format!("it can't be read: {e}")),
            Ok(m) if m.len() > MAX_WORDS_BYTES => {
                return Words::Invalid(format!(
                    "it is {} bytes, more than the {MAX_WORDS_BYTES} read",
                    m.len()
                ));
            }
            Ok(_) => {}
        }
        match std::fs::read(path) {
            Ok(bytes) => Words::parse(&bytes),
            Err(e) => Words::Invalid(format!("it can't be read: {e}")),
        }
    }

    /// Parses the bytes of a words file; never fails.
    pub fn parse(bytes: &[u8]) -> Words {
        if bytes.len() as u64 > MAX_WORDS_BYTES {
            return Words::Invalid(format!(
                "it is {} bytes, more than the {MAX_WORDS_BYTES} read",
                bytes.len()
            ));
        }
        match serde_json::from_slice::<GazetteWords>(bytes) {
            Ok(w) if w.headline.trim().is_empty() => {
                Words::Invalid("its headline is empty".to_string())
            }
            Ok(w) => Words::Found(w),
            Err(e) => Words::Invalid(format!("it is not a words file: {e}")),
        }
    }

    pub fn found(&self) -> Option<&GazetteWords> {
        match self {
            Words::Found(w) => Some(w),
            _ => None,
        }
    }
}

/// The JSON Schema of the words file (`hall schema gazette-words`).
pub fn schema() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(GazetteWords)).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_words_file_reads_and_a_broken_one_says_why() {
        let w = Words::parse(
            br#"{"headline":"Retries stop at three","story":"s","findings":{"F1":"x"}}"#,
        );
        let found = w.found().expect("found");
        assert_eq!(found.headline, "Retries stop at three");
        assert_eq!(found.findings["F1"], "x");
        for (bytes, says) in [
            (&b"{"[..], "not a words file"),
            (br#"{"headline":"  "}"#, "headline is empty"),
            (br#"{"headline":"h","sha":"abc"}"#, "unknown field"),
        ] {
            match Words::parse(bytes) {
                Words::Invalid(why) => assert!(why.contains(says), "{why}"),
                other => panic!("{other:?}"),
            }
        }
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(Words::read(&dir.path().join(WORDS_FILE)), Words::Absent);
    }

    #[test]
    fn the_schema_names_every_field() {
        let s = schema().to_string();
        for field in ["headline", "story", "findings", "diagram", "nodes", "edges"] {
            assert!(s.contains(&format!("\"{field}\"")), "{field}: {s}");
        }
    }
}
