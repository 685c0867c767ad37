//! What a snapshot shows of a run, and what it filters: the one place every snapshot
//! test takes its text from, so a new source of noise is filtered once for all of them.
//!
//! Shown: the exit code, the reply (JSON pretty-printed), and stderr when there is any.
//! Filtered, each to a placeholder that says what it was: the sandbox's root
//! (`[ROOT]`), the `hall` under test (`[HALL]`), the rooms host/rooms/build.rs built
//! (`[BUILT]`), a `hall run` log's name (`[LOG]`), times and durations the wall clock
//! decides (`[WALL]`), and object names and content hashes (`[SHA]` for a commit's 40 or
//! 7 hex characters, `[HEX64]` for a sha256), which change with any byte of a fixture
//! or a built-in room.

use serde_json::Value;

use crate::sandbox::{Run, Sandbox, built_wasm, hall_bin};

/// Keys whose values the wall clock decides (a lease's times, a run's length).
const WALL_KEYS: [&str; 3] = ["\"taken\": ", "\"expires\": ", "\"millis\": "];

/// Fixture rooms whose paths a reply may name.
const FIXTURES: [&str; 2] = ["hall_fixture_panicky.wasm", "hall_fixture_wrong_world.wasm"];

/// A run as a stable snapshot.
pub fn of_run(sb: &Sandbox, run: &Run) -> String {
    let reply = serde_json::from_str::<Value>(run.stdout.trim()).ok();
    let body = match &reply {
        Some(v) => serde_json::to_string_pretty(v).expect("json"),
        None => run.stdout.clone(),
    };
    let mut text = format!("exit: {}\n{body}", run.code);
    if let Some(log) = reply.as_ref().and_then(|v| v["log"].as_str()) {
        text = text.replace(log, "[LOG]");
    }
    if !run.stderr.trim().is_empty() {
        text.push_str(&format!("\n--- stderr\n{}", run.stderr.trim()));
    }
    of_text(sb, &text)
}

/// Any text `hall` printed (a terminal's view, a file it wrote), filtered the same way.
pub fn of_text(sb: &Sandbox, text: &str) -> String {
    let mut text = text.to_string();
    for fixture in FIXTURES {
        if let Some(dir) = built_wasm(fixture).parent() {
            text = text.replace(dir.to_str().expect("utf8"), "[BUILT]");
        }
    }
    text = text.replace(hall_bin().to_str().expect("utf8"), "[HALL]");
    text = sb.redact(&text);
    let lines: Vec<String> = text.lines().map(wall).collect();
    hashes(&lines.join("\n"))
}

/// A line whose key is one of [`WALL_KEYS`], with its value replaced.
fn wall(line: &str) -> String {
    let key = line.trim_start();
    if WALL_KEYS.iter().any(|k| key.starts_with(k)) {
        let (name, _) = line.split_once(": ").unwrap_or((line, ""));
        let comma = if line.ends_with(',') { "," } else { "" };
        format!("{name}: [WALL]{comma}")
    } else {
        line.to_string()
    }
}

/// Words of lowercase hex that name objects: 64 characters (a sha256), 40 (a commit or
/// tree), or the 7 of a short commit name when it has both a digit and a letter (so a
/// word like `decade` stays, a count like `4000000`, and `ed25519`, a key's file name).
fn hashes(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        let hex = !word.is_empty() && word.chars().all(|c| matches!(c, '0'..='9' | 'a'..='f'));
        let short = word.len() == 7
            && word.chars().any(|c| c.is_ascii_digit())
            && word.chars().any(|c| c.is_ascii_lowercase())
            && word != "ed25519";
        match word.len() {
            64 if hex => out.push_str("[HEX64]"),
            40 if hex => out.push_str("[SHA]"),
            _ if hex && short => out.push_str("[SHA]"),
            _ => out.push_str(word),
        }
        word.clear();
    };
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::hashes;

    #[test]
    fn object_names_are_filtered_and_words_are_not() {
        let sha = format!("0a1b2c3{}", "d4".repeat(16)) + "e";
        let sum = "ab".repeat(32);
        assert_eq!(
            hashes(&format!("at {sha} ({}) sum {sum}", &sha[..7])),
            "at [SHA] ([SHA]) sum [HEX64]"
        );
        for word in [
            "decade", "ed25519", "facade1x", "H-0001", "abcdefa", "4000000",
        ] {
            assert_eq!(hashes(word), word, "{word}");
        }
    }
}
