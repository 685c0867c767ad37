//! One event per line: decoding (with the upgrade of older shapes), encoding, and the
//! cheap peek a reader uses to skip payloads it doesn't need.

use serde::Deserialize;

use super::event::{EVENT_VERSION, Event};
use super::id::ItemId;

/// Why a line could not be decoded.
#[derive(Debug, thiserror::Error)]
pub enum DecodeError {
    #[error("not JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error("written by a newer hall (v{0}); this build reads up to v{EVENT_VERSION}")]
    TooNew(u64),
}

/// Decodes one journal line, upgrading older shapes first.
pub fn decode(line: &str) -> Result<Event, DecodeError> {
    // Fast path: the line decodes in the current shape. An older line that does is
    // current in all but its `v`, since every change of shape renamed something the
    // current shape requires. Only a line that fails pays for a generic `Value` round
    // trip through [`upgrade`].
    match serde_json::from_str::<Event>(line) {
        Ok(mut e) if e.v <= EVENT_VERSION => {
            e.v = EVENT_VERSION;
            Ok(e)
        }
        Ok(e) => Err(DecodeError::TooNew(u64::from(e.v))),
        Err(err) => {
            let value: serde_json::Value = serde_json::from_str(line)?;
            match value.get("v").and_then(|v| v.as_u64()) {
                Some(v) if v != u64::from(EVENT_VERSION) => upgrade(value, v),
                _ => Err(err.into()),
            }
        }
    }
}

/// Upgrades an older shape to the current one, before serde sees it.
///
/// Version 1 to 2: a `check_run`'s `gate` becomes `check`, and a verdict's findings
/// spell their lens in kebab-case.
pub fn upgrade(mut value: serde_json::Value, v: u64) -> Result<Event, DecodeError> {
    if v > u64::from(EVENT_VERSION) {
        return Err(DecodeError::TooNew(v));
    }
    if v < 2
        && let Some(line) = value.as_object_mut()
    {
        match line.get("event").and_then(|e| e.as_str()) {
            Some("check_run") => {
                if let Some(gate) = line.remove("gate") {
                    line.entry("check").or_insert(gate);
                }
            }
            Some("verdict") => {
                let findings = line.get_mut("findings").and_then(|f| f.as_array_mut());
                for f in findings.into_iter().flatten() {
                    if let Some(lens) = f.get_mut("lens")
                        && let Some(text) = lens.as_str()
                    {
                        *lens = text.replace('_', "-").into();
                    }
                }
            }
            _ => {}
        }
    }
    let mut event: Event = serde_json::from_value(value)?;
    event.v = EVENT_VERSION;
    Ok(event)
}

/// The envelope of a line without its payload: enough for the index to record events
/// that don't change state, without the cost of decoding every field.
#[derive(Debug, Deserialize)]
pub struct Head<'a> {
    pub v: u32,
    #[serde(borrow)]
    pub t: std::borrow::Cow<'a, str>,
    #[serde(borrow)]
    pub actor: std::borrow::Cow<'a, str>,
    #[serde(borrow)]
    pub event: std::borrow::Cow<'a, str>,
    #[serde(default)]
    pub item: Option<ItemId>,
    /// Only on `torn_line` markers: the line they close.
    #[serde(default)]
    pub line: Option<u64>,
    /// The session of prompts (a prompt clears its session's "waiting" notice).
    #[serde(default, borrow)]
    pub session: Option<std::borrow::Cow<'a, str>>,
}

/// Kinds whose payload matters to the fold or the index's side tables; the others are
/// fully described by their [`Head`].
pub fn payload_matters(event: &str) -> bool {
    !matches!(
        event,
        "prompt"
            | "turn"
            | "commit"
            | "check_run"
            | "gate_denied"
            | "tool_policy"
            | "attached"
            | "torn_line"
    )
}

/// Encodes one event as a journal line without the trailing newline.
pub fn encode(event: &Event) -> String {
    serde_json::to_string(event).expect("events serialize: all fields are plain data")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::item::event::EventKind;
    use crate::item::id::LearningId;
    use crate::item::learning::LearningKind;

    #[test]
    fn the_documented_line_decodes() {
        let line = r#"{"v":2,"t":"2026-10-09T10:04:12Z","actor":"you","event":"ready","item":"H-0042","sha":"7c2d018","round":1,"note":"cap at 6 attempts done"}"#;
        let e = decode(line).expect("decodes");
        assert_eq!(e.item, Some(ItemId(42)));
        assert_eq!(
            e.kind,
            EventKind::Ready {
                sha: "7c2d018".into(),
                round: 1,
                note: Some("cap at 6 attempts done".into())
            }
        );
        let again = decode(&encode(&e)).expect("round trip");
        assert_eq!(again, e);
    }

    #[test]
    fn unknown_kinds_are_kept_as_other() {
        let e = decode(r#"{"v":1,"t":"x","actor":"you","event":"teleported","where":"mars"}"#)
            .expect("decodes");
        assert_eq!(e.kind, EventKind::Other);
    }

    #[test]
    fn newer_versions_are_named() {
        let err = decode(r#"{"v":9,"t":"x","actor":"you","event":"ready","sha":"a","round":1}"#)
            .unwrap_err();
        assert!(err.to_string().contains("v9"), "{err}");
    }

    #[test]
    fn light_kinds_change_nothing_but_the_counters() {
        use crate::item::state::Item;
        let lines = [
            r#"{"v":1,"t":"2026-01-01T00:00:01Z","actor":"you","event":"prompt","text":"hi","session":"s","item":"H-0001"}"#,
            r#"{"v":1,"t":"2026-01-01T00:00:02Z","actor":"agent","event":"turn","summary":"did","item":"H-0001"}"#,
            r#"{"v":1,"t":"2026-01-01T00:00:03Z","actor":"agent","event":"commit","sha":"a","subject":"s","item":"H-0001"}"#,
            r#"{"v":1,"t":"2026-01-01T00:00:04Z","actor":"assayer","event":"check_run","sha":"a","gate":"g","exit_code":1,"duration_ms":3,"item":"H-0001"}"#,
            r#"{"v":1,"t":"2026-01-01T00:00:05Z","actor":"hook","event":"gate_denied","gate":"push","command":"git push","reason":"r","item":"H-0001"}"#,
            r#"{"v":1,"t":"2026-01-01T00:00:06Z","actor":"hall","event":"torn_line","line":3,"bytes":9,"item":"H-0001"}"#,
            r#"{"v":2,"t":"2026-01-01T00:00:07Z","actor":"agent","event":"attached","file":"1-a.png","bytes":9,"from":"a.png","item":"H-0001"}"#,
        ];
        let (mut full, mut light) = (Item::default(), Item::default());
        for line in lines {
            let head: Head<'_> = serde_json::from_str(line).expect("head");
            assert!(!payload_matters(&head.event), "{}", head.event);
            full.apply(&decode(line).expect("decodes"));
            light.note(&head.t, head.item);
        }
        assert_eq!(full, light);
    }

    #[test]
    fn version_1_lines_are_upgraded() {
        let run = decode(r#"{"v":1,"t":"2026-01-01T00:00:04Z","actor":"assayer","event":"check_run","sha":"a","gate":"cargo test","exit_code":0,"duration_ms":3,"item":"H-0001"}"#)
            .expect("decodes");
        assert_eq!(run.v, EVENT_VERSION);
        assert!(matches!(run.kind, EventKind::CheckRun { ref check, .. } if check == "cargo test"));
        let verdict = decode(r#"{"v":1,"t":"x","actor":"assayer","event":"verdict","sha":"a","round":1,"approved":false,"findings":[{"id":"F1","lens":"first_principles","severity":"major","file":"a","line":1,"scenario":"s"},{"id":"F2","lens":"repo_rules","severity":"nit","file":"a","scenario":"s"}]}"#)
            .expect("decodes");
        let EventKind::Verdict { findings, .. } = verdict.kind else {
            panic!("a verdict")
        };
        let lenses: Vec<_> = findings.iter().map(|f| f.lens).collect();
        assert_eq!(
            lenses,
            [
                crate::item::Lens::FirstPrinciples,
                crate::item::Lens::RepoRules
            ]
        );
        // Lines of kinds whose shape did not change take the fast path.
        let ready = decode(r#"{"v":1,"t":"x","actor":"you","event":"ready","sha":"a","round":1}"#)
            .expect("decodes");
        assert_eq!(ready.v, EVENT_VERSION);
    }

    #[test]
    fn learning_events_round_trip_and_fill_their_defaults() {
        let e = decode(
            r#"{"v":2,"t":"x","actor":"you","event":"learning_accepted","learning":"L-0003"}"#,
        )
        .expect("decodes");
        assert_eq!(
            e.kind,
            EventKind::LearningAccepted {
                learning: LearningId(3),
                version: 1
            }
        );
        let proposed = Event {
            v: EVENT_VERSION,
            t: "x".into(),
            actor: "librarian".into(),
            kind: EventKind::LearningProposed {
                learning: LearningId(4),
                version: 2,
                kind: LearningKind::FalsePositive,
                title: "t".into(),
                replaces: Some(1),
                accepted: false,
            },
            item: None,
            via: None,
        };
        let line = encode(&proposed);
        assert!(line.contains("\"kind\":\"false-positive\""), "{line}");
        assert_eq!(decode(&line).expect("round trip"), proposed);
        assert!(EventKind::KINDS.contains(&proposed.kind.name()));
    }

    #[test]
    fn garbage_is_an_error() {
        assert!(decode("{\"v\":1,\"t\":").is_err());
        assert!(decode("hello").is_err());
    }
}
