//! Claude Code's user settings (`~/.claude/settings.json`), with Hallmark's entries
//! merged in and the user's own left as they are.
//!
//! Every session of the user reads this file, however it was started, so it is where
//! confinement by default lives ([`super::confine::user_settings`]). Claude Code merges
//! the arrays of its settings scopes and lets the most specific scope win for a single
//! value; this file follows the same rule: Hallmark's array entries are added beside the
//! user's, and the few values it needs (`sandbox.enabled`…) are set, with what was there
//! before kept in a record in the user config directory (out of every session's reach),
//! so that a later run replaces only Hallmark's own entries and `--no-confine` puts the
//! user's values back. The file's top-level keys keep their order.

use std::path::{Path, PathBuf};

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{Code, HallError, IoContext, Result};

/// The record of what Hallmark put into the settings file, in the user config directory.
pub const RECORD: &str = "claude-settings.json";

/// Claude Code's user settings file: in `CLAUDE_CONFIG_DIR` when that is set, else
/// `~/.claude/settings.json`.
pub fn path() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir).join("settings.json"));
    }
    dirs::home_dir().map(|h| h.join(".claude").join("settings.json"))
}

/// What Hallmark added, by dotted key: the array entries it added, and the values it set
/// with the value each replaced (`null` for none).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// The settings file this record is about.
    pub settings: String,
    #[serde(default)]
    pub added: std::collections::BTreeMap<String, Vec<Value>>,
    #[serde(default)]
    pub set: std::collections::BTreeMap<String, Option<Value>>,
}

/// What a merge did.
#[derive(Clone, Debug, Default, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Merged {
    /// The settings file.
    pub settings: String,
    /// `written`, `would write` (a dry run), `unchanged`, or `removed` (Hallmark's
    /// entries taken out again).
    pub outcome: String,
    /// Array entries added and taken out, and values set.
    pub added: usize,
    pub removed: usize,
    /// The user's own values Hallmark replaced, by key (restored by `--no-confine`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub replaced: Vec<String>,
}

type Object = IndexMap<String, Value>;

/// The value at `dotted` in `obj`, made (as objects) where missing; `None` when a step
/// on the way is something other than an object.
fn slot<'a>(obj: &'a mut Object, dotted: &str) -> Option<&'a mut Value> {
    let mut parts = dotted.split('.');
    let first = parts.next()?;
    let mut at = obj
        .entry(first.to_string())
        .or_insert(Value::Object(serde_json::Map::new()));
    for part in parts {
        let map = at.as_object_mut()?;
        at = map
            .entry(part.to_string())
            .or_insert(Value::Object(serde_json::Map::new()));
    }
    Some(at)
}

/// The leaves of `ours`: each array and each value that is not an object, by dotted key.
fn leaves(v: &Value, prefix: &str, out: &mut Vec<(String, Value)>) {
    match v {
        Value::Object(map) => {
            for (k, v) in map {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                leaves(v, &key, out);
            }
        }
        other => out.push((prefix.to_string(), other.clone())),
    }
}

/// Removes the empty objects `dotted`'s steps leave behind (after taking Hallmark's
/// entries out), so a file Hallmark only added to is as it was.
fn prune(obj: &mut Object, dotted: &str) {
    let parts: Vec<&str> = dotted.split('.').collect();
    for depth in (1..parts.len()).rev() {
        let (parent, name) = (&parts[..depth], parts[depth]);
        let Some(Value::Object(map)) = slot_existing(obj, parent) else {
            return;
        };
        let empty = match map.get(name) {
            Some(Value::Object(m)) => m.is_empty(),
            Some(Value::Array(a)) => a.is_empty(),
            _ => false,
        };
        if empty {
            map.remove(name);
        }
    }
    if let Some(first) = parts.first() {
        let empty = match obj.get(*first) {
            Some(Value::Object(m)) => m.is_empty(),
            Some(Value::Array(a)) => a.is_empty(),
            _ => false,
        };
        if empty {
            obj.shift_remove(*first);
        }
    }
}

fn slot_existing<'a>(obj: &'a mut Object, parts: &[&str]) -> Option<&'a mut Value> {
    let (first, rest) = parts.split_first()?;
    let mut at = obj.get_mut(*first)?;
    for part in rest {
        at = at.as_object_mut()?.get_mut(*part)?;
    }
    Some(at)
}

/// Confines every later session of this user (`confine`), or stops doing so: merges
/// [`super::confine::user_settings`] for every registered repository into Claude Code's
/// user settings, or takes Hallmark's entries out again, for the person `_you`. Each
/// repository is made ready for the sandbox first ([`super::confine::prepare`]).
pub fn confine_sessions(
    _you: &super::person::Person,
    confine: bool,
    dry_run: bool,
) -> Result<Merged> {
    let settings = path().ok_or_else(|| {
        HallError::internal("no home directory, so Claude Code's settings can't be found")
            .hint("hall setup claude")
    })?;
    let record = crate::platform::config_dir()
        .ok_or_else(|| HallError::internal("no user config directory"))?
        .join(RECORD);
    if !confine {
        return merge(&settings, &record, None, dry_run);
    }
    let mut repos = Vec::new();
    for root in super::registry::registered() {
        let Ok(repo) = crate::git::Repo::discover(&root) else {
            continue;
        };
        let base = super::rules::base_name(&repo);
        if !dry_run {
            let scope = super::confine::Scope {
                repo: &repo,
                checkout: &repo.main_root,
                base: &base,
                domains: &[],
            };
            super::confine::prepare(&scope).map_err(|e| {
                HallError::internal(format!(
                    "could not get {} ready for confined sessions: {e}",
                    repo.common_dir.display()
                ))
            })?;
        }
        repos.push((repo, base));
    }
    merge(
        &settings,
        &record,
        Some(&super::confine::user_settings(&repos)),
        dry_run,
    )
}

/// Whether Hallmark's confinement is in the user settings (a record of it exists).
pub fn confining() -> bool {
    crate::platform::config_dir().is_some_and(|d| d.join(RECORD).is_file())
}

/// Merges `ours` (Hallmark's part; `None` to take it out again) into the settings file
/// at `settings`, with the record at `record` saying what Hallmark added last time.
/// A file that is not a JSON object, or a key Hallmark needs that holds something of
/// another shape, is the user's to fix: nothing is written then.
pub fn merge(
    settings: &Path,
    record: &Path,
    ours: Option<&Value>,
    dry_run: bool,
) -> Result<Merged> {
    let unreadable = |why: String| {
        HallError::new(
            Code::InvalidConfig,
            format!(
                "{}: {why}; Claude Code's settings were not changed",
                settings.display()
            ),
        )
        .hint(format!("edit {}", settings.display()))
        .hint("hall setup claude")
    };
    let text = match std::fs::read_to_string(settings) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e).at(settings),
    };
    let mut obj: Object = if text.trim().is_empty() {
        Object::new()
    } else {
        serde_json::from_str(&text).map_err(|e| unreadable(format!("not a JSON object: {e}")))?
    };
    let before = obj.clone();
    let mut rec: Record = std::fs::read(record)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .filter(|r: &Record| r.settings == settings.display().to_string())
        .unwrap_or_default();
    let mut merged = Merged {
        settings: settings.display().to_string(),
        ..Merged::default()
    };
    let mut wanted: Vec<(String, Value)> = Vec::new();
    if let Some(ours) = ours {
        leaves(ours, "", &mut wanted);
    }
    // First take out what Hallmark added last time and no longer wants.
    for (key, entries) in std::mem::take(&mut rec.added) {
        let keep: Vec<Value> = match wanted.iter().find(|(k, _)| *k == key) {
            Some((_, Value::Array(now))) => entries
                .iter()
                .filter(|e| now.contains(e))
                .cloned()
                .collect(),
            _ => Vec::new(),
        };
        if let Some(Value::Array(list)) =
            slot_existing(&mut obj, &key.split('.').collect::<Vec<_>>())
        {
            let n = list.len();
            list.retain(|e| !entries.contains(e) || keep.contains(e));
            merged.removed += n - list.len();
        }
        prune(&mut obj, &key);
        if !keep.is_empty() {
            rec.added.insert(key, keep);
        }
    }
    for (key, was) in std::mem::take(&mut rec.set) {
        if wanted.iter().any(|(k, v)| *k == key && !v.is_array()) {
            rec.set.insert(key, was);
            continue;
        }
        // Put the user's value back, or take the key out if there was none.
        match was {
            Some(v) => {
                if let Some(s) = slot(&mut obj, &key) {
                    *s = v;
                }
            }
            None => {
                let parts: Vec<&str> = key.split('.').collect();
                if let Some((last, parent)) = parts.split_last() {
                    if parent.is_empty() {
                        obj.shift_remove(*last);
                    } else if let Some(Value::Object(m)) = slot_existing(&mut obj, parent) {
                        m.remove(*last);
                    }
                }
                prune(&mut obj, &key);
            }
        }
        merged.removed += 1;
    }
    // Then add what is wanted now.
    for (key, value) in &wanted {
        let Some(at) = slot(&mut obj, key) else {
            return Err(unreadable(format!(
                "`{key}` is inside something that is not an object"
            )));
        };
        match value {
            Value::Array(entries) => {
                if at.is_object() && at.as_object().is_some_and(|m| m.is_empty()) {
                    *at = Value::Array(Vec::new());
                }
                let Some(list) = at.as_array_mut() else {
                    return Err(unreadable(format!("`{key}` is not a list")));
                };
                for e in entries {
                    if !list.contains(e) {
                        list.push(e.clone());
                        merged.added += 1;
                        rec.added.entry(key.clone()).or_default().push(e.clone());
                    }
                }
            }
            v => {
                let fresh = at.is_object() && at.as_object().is_some_and(|m| m.is_empty());
                if *at != *v {
                    if !rec.set.contains_key(key) {
                        rec.set.insert(key.clone(), (!fresh).then(|| at.clone()));
                        if !fresh {
                            merged.replaced.push(format!("{key} (was {at})"));
                        }
                    }
                    *at = v.clone();
                    merged.added += 1;
                }
            }
        }
    }
    let changed = obj != before;
    merged.outcome = match (changed, dry_run, ours.is_some()) {
        (false, _, _) => "unchanged",
        (true, true, _) => "would write",
        (true, false, true) => "written",
        (true, false, false) => "removed",
    }
    .into();
    if dry_run || !changed {
        return Ok(merged);
    }
    let mut out = serde_json::to_string_pretty(&obj).map_err(HallError::internal)?;
    out.push('\n');
    if let Some(dir) = settings.parent() {
        std::fs::create_dir_all(dir).at(dir)?;
    }
    crate::journal::file::write_atomic(settings, out.as_bytes()).at(settings)?;
    rec.settings = settings.display().to_string();
    if rec.added.is_empty() && rec.set.is_empty() {
        let _ = std::fs::remove_file(record);
    } else {
        if let Some(dir) = record.parent() {
            crate::platform::create_private_dir(dir).at(dir)?;
        }
        let bytes = serde_json::to_vec_pretty(&rec).map_err(HallError::internal)?;
        crate::journal::file::write_atomic(record, &bytes).at(record)?;
    }
    Ok(merged)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(p: &Path) -> Value {
        serde_json::from_str(&std::fs::read_to_string(p).expect("file")).expect("json")
    }

    #[test]
    fn hallmark_s_entries_go_beside_the_user_s_and_come_out_again() {
        let dir = tempfile::tempdir().expect("tempdir");
        let settings = dir.path().join(".claude/settings.json");
        let record = dir.path().join("config/claude-settings.json");
        let theirs = "{\n  \"model\": \"opus\",\n  \"env\": {\"A\": \"1\"},\n  \"sandbox\": {\"enabled\": false, \"excludedCommands\": [\"docker *\"]},\n  \"permissions\": {\"deny\": [\"Read(./.env)\"]}\n}\n";
        std::fs::create_dir_all(settings.parent().expect("parent")).expect("mkdir");
        std::fs::write(&settings, theirs).expect("write");
        let ours = json!({
            "sandbox": {"enabled": true, "excludedCommands": ["hall status", "docker *"],
                        "filesystem": {"denyWrite": ["/a", "/b"]}},
            "permissions": {"deny": ["Edit(//a)"]},
        });
        let dry = merge(&settings, &record, Some(&ours), true).expect("dry run");
        assert_eq!(dry.outcome, "would write");
        assert_eq!(std::fs::read_to_string(&settings).expect("file"), theirs);
        let m = merge(&settings, &record, Some(&ours), false).expect("merge");
        assert_eq!(m.outcome, "written");
        assert_eq!(m.replaced, vec!["sandbox.enabled (was false)".to_string()]);
        let v = read(&settings);
        assert_eq!(v["model"], "opus");
        assert_eq!(v["env"]["A"], "1");
        assert_eq!(v["sandbox"]["enabled"], true);
        assert_eq!(
            v["sandbox"]["excludedCommands"],
            json!(["docker *", "hall status"])
        );
        assert_eq!(v["sandbox"]["filesystem"]["denyWrite"], json!(["/a", "/b"]));
        assert_eq!(
            v["permissions"]["deny"],
            json!(["Read(./.env)", "Edit(//a)"])
        );
        // The top-level keys keep the user's order.
        let text = std::fs::read_to_string(&settings).expect("file");
        assert!(text.find("\"model\"") < text.find("\"env\""), "{text}");
        assert!(text.find("\"env\"") < text.find("\"sandbox\""), "{text}");
        // Again: nothing to do.
        assert_eq!(
            merge(&settings, &record, Some(&ours), false)
                .expect("again")
                .outcome,
            "unchanged"
        );
        // A path Hallmark no longer needs goes; one the user adds meanwhile stays.
        let mut v = read(&settings);
        v["sandbox"]["filesystem"]["denyWrite"]
            .as_array_mut()
            .expect("list")
            .push(json!("/mine"));
        std::fs::write(&settings, v.to_string()).expect("write");
        let fewer = json!({
            "sandbox": {"enabled": true, "excludedCommands": ["hall status", "docker *"],
                        "filesystem": {"denyWrite": ["/a"]}},
            "permissions": {"deny": ["Edit(//a)"]},
        });
        merge(&settings, &record, Some(&fewer), false).expect("update");
        assert_eq!(
            read(&settings)["sandbox"]["filesystem"]["denyWrite"],
            json!(["/a", "/mine"])
        );
        // Taken out: the user's file as it was, and what they added since.
        let m = merge(&settings, &record, None, false).expect("remove");
        assert_eq!(m.outcome, "removed");
        let v = read(&settings);
        assert_eq!(v["sandbox"]["enabled"], false, "the user's value is back");
        assert_eq!(v["sandbox"]["excludedCommands"], json!(["docker *"]));
        assert_eq!(v["sandbox"]["filesystem"]["denyWrite"], json!(["/mine"]));
        assert_eq!(v["permissions"]["deny"], json!(["Read(./.env)"]));
        assert!(!record.exists(), "nothing of Hallmark's is left to record");
    }

    #[test]
    fn a_new_file_is_made_and_emptied_again_and_a_broken_one_is_left_alone() {
        let dir = tempfile::tempdir().expect("tempdir");
        let settings = dir.path().join("settings.json");
        let record = dir.path().join("record.json");
        let ours = json!({"sandbox": {"enabled": true, "filesystem": {"denyRead": ["/k"]}}});
        merge(&settings, &record, Some(&ours), false).expect("merge");
        assert_eq!(read(&settings), ours);
        merge(&settings, &record, None, false).expect("remove");
        assert_eq!(read(&settings), json!({}));
        std::fs::write(&settings, "{ nope").expect("write");
        let e = merge(&settings, &record, Some(&ours), false).expect_err("not JSON");
        assert_eq!(e.code, Code::InvalidConfig);
        assert_eq!(std::fs::read_to_string(&settings).expect("file"), "{ nope");
        std::fs::write(&settings, "{\"sandbox\": true}").expect("write");
        let e = merge(&settings, &record, Some(&ours), false).expect_err("wrong shape");
        assert_eq!(e.code, Code::InvalidConfig);
    }
}
