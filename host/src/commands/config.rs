//! `hall config show|set`: the settings as a person edits them, from a shell or from the
//! web app's form. `set` edits the file in place with `toml_edit`, so every comment, blank
//! line and key order stays; the new text is validated by the same code that reads it
//! (`Config::parse` for the repository's file, the `[policy]` and `[notify]` readers for
//! your own), and nothing is written when it fails.
//!
//! The repository's file is the main checkout's `.hallmark.toml`, never a branch's: an
//! item's worktree can't change the rules through this command. The loop reads the rules
//! from the base branch, so a change takes effect once it is committed there.

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use super::{Ctx, Reply};
use crate::cli::ConfigCmd;
use crate::config::{Config, ConfigError};
use crate::error::{Code, HallError, IoContext, Result};

#[derive(Serialize, schemars::JsonSchema)]
pub struct ConfigReply {
    /// The file shown or changed.
    pub path: PathBuf,
    /// `repo` (the main checkout's `.hallmark.toml`) or `user` (your `config.toml`).
    pub file: String,
    /// The file's text (after the change, for `set`).
    pub text: String,
    /// The file's values as JSON.
    #[schemars(with = "serde_json::Value")]
    pub values: Value,
    /// For `set`: the change as a line diff (`-` old, `+` new).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
    /// For `set`: whether the file was written (not with `--dry-run`, nor when unchanged).
    pub written: bool,
    pub next: Vec<String>,
}

pub fn run(ctx: &Ctx, cmd: &ConfigCmd) -> Result<Reply> {
    match cmd {
        ConfigCmd::Show { user } => {
            let (path, file) = target(ctx, *user)?;
            let text = read(&path)?;
            let values = values(&text, &path)?;
            let reply = ConfigReply {
                path: path.clone(),
                file,
                text: text.clone(),
                values,
                diff: None,
                written: false,
                next: vec![
                    "hall config set KEY=VALUE --dry-run".into(),
                    "hall schema config".into(),
                ],
            };
            let shown = if text.is_empty() {
                format!(
                    "{} does not exist yet: every key has its default",
                    path.display()
                )
            } else {
                text
            };
            Ok(Reply::new(&reply, shown))
        }
        ConfigCmd::Set {
            assignments,
            user,
            dry_run,
        } => {
            if !dry_run {
                // The settings decide what the gates allow and who is told what: a
                // person's to change, never a session's.
                ctx.person("config set", "changes the settings the gates read")?;
            }
            let (path, file) = target(ctx, *user)?;
            let old = read(&path)?;
            let mut doc: toml_edit::DocumentMut =
                old.parse().map_err(|e: toml_edit::TomlError| {
                    HallError::new(
                        Code::InvalidConfig,
                        format!("{} is not TOML: {}", path.display(), e.message()),
                    )
                    .hint(format!("edit {}", path.display()))
                })?;
            let schema = (!*user).then(|| super::schema::schema("config")).flatten();
            for a in assignments {
                let (key, raw) = a.split_once('=').ok_or_else(|| {
                    HallError::usage(format!("`{a}` is not KEY=VALUE"))
                        .hint("hall config set merge.mode=auto --dry-run")
                })?;
                set(&mut doc, key.trim(), raw.trim(), schema.as_ref())?;
            }
            let new = doc.to_string();
            validate(&new, &path, *user)?;
            let changed = new != old;
            let written = changed && !dry_run;
            if written {
                hallmark_core::journal::file::write_atomic(&path, new.as_bytes()).at(&path)?;
            }
            let diff = diff(&old, &new);
            let values = values(&new, &path)?;
            let mut next = Vec::new();
            if *dry_run && changed {
                next.push(format!("hall config set {}", assignments.join(" ")));
            }
            if written && !user {
                next.push(format!(
                    "git commit {} (the loop reads the base branch's)",
                    crate::config::FILE_NAME
                ));
            }
            next.push("hall config show".into());
            let text = if !changed {
                "no change".to_string()
            } else if written {
                format!("{}\nsaved {}", diff, path.display())
            } else {
                format!("{diff}\n(dry run: nothing written)")
            };
            let reply = ConfigReply {
                path,
                file,
                text: new,
                values,
                diff: Some(diff),
                written,
                next,
            };
            Ok(Reply::new(&reply, text))
        }
    }
}

/// The file `--user` names, and its kind.
fn target(ctx: &Ctx, user: bool) -> Result<(PathBuf, String)> {
    if user {
        let dir = crate::platform::config_dir().ok_or_else(|| {
            HallError::internal("there is no user config directory")
                .hint("HALL_CONFIG_DIR=<dir> hall config show --user")
        })?;
        return Ok((dir.join(crate::sign::USER_CONFIG), "user".into()));
    }
    let repo = ctx.repo()?;
    Ok((Config::path(&repo.main_root), "repo".into()))
}

fn read(path: &Path) -> Result<String> {
    match std::fs::read_to_string(path) {
        Ok(t) => Ok(t),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
        Err(e) => Err(e).at(path),
    }
}

fn values(text: &str, path: &Path) -> Result<Value> {
    let table: toml::Table = text.parse().map_err(|e: toml::de::Error| {
        HallError::from(ConfigError {
            path: path.to_path_buf(),
            message: e.message().to_string(),
        })
    })?;
    Ok(serde_json::to_value(table).unwrap_or(Value::Null))
}

/// Reads the new text as `hall` will: the repository's file whole, your file's tables
/// that `hall` reads strictly.
fn validate(text: &str, path: &Path, user: bool) -> Result<()> {
    if !user {
        Config::parse(text, path)?;
        return Ok(());
    }
    let invalid = |message: String| {
        HallError::from(ConfigError {
            path: path.to_path_buf(),
            message,
        })
    };
    let table: toml::Table = text
        .parse()
        .map_err(|e: toml::de::Error| invalid(e.message().to_string()))?;
    if let Some(policy) = table.get("policy") {
        let policy: crate::config::Policy = policy
            .clone()
            .try_into()
            .map_err(|e: toml::de::Error| invalid(format!("[policy]: {}", e.message())))?;
        policy.validate(true).map_err(invalid)?;
    }
    crate::config::notify::from_text(text, path, false)?;
    Ok(())
}

/// The JSON Schema type of `key` in the config's schema (following `$ref`s), if known.
fn schema_type(schema: &Value, key: &str) -> Option<String> {
    fn resolve<'a>(schema: &'a Value, mut node: &'a Value) -> Option<&'a Value> {
        for _ in 0..8 {
            let Some(r) = node.get("$ref").and_then(Value::as_str) else {
                break;
            };
            node = schema.get("$defs")?.get(r.rsplit('/').next()?)?;
        }
        Some(node)
    }
    let mut node = resolve(schema, schema)?;
    for part in key.split('.') {
        let next = node
            .get("properties")
            .and_then(|p| p.get(part))
            .or_else(|| {
                // An optional table: `anyOf: [{$ref}, {type: null}]`.
                node.get("anyOf")?
                    .as_array()?
                    .iter()
                    .find_map(|alt| resolve(schema, alt)?.get("properties")?.get(part))
            })?;
        node = resolve(schema, next)?;
    }
    let types: Vec<String> = match node.get("type") {
        Some(Value::String(t)) => vec![t.clone()],
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(|t| t.as_str().map(str::to_string))
            .collect(),
        _ if node.get("enum").is_some() => vec!["string".into()],
        _ => node
            .get("anyOf")
            .or_else(|| node.get("oneOf"))
            .and_then(Value::as_array)
            .map(|alts| {
                alts.iter()
                    .filter_map(|a| {
                        resolve(schema, a)?
                            .get("type")?
                            .as_str()
                            .map(str::to_string)
                    })
                    .collect()
            })
            .unwrap_or_default(),
    };
    types.into_iter().find(|t| t != "null")
}

/// `raw` as a TOML value of the type the schema or the file says `key` has.
fn parse_value(raw: &str, kind: Option<&str>) -> Result<toml_edit::Value> {
    let as_toml = || {
        format!("v = {raw}")
            .parse::<toml_edit::DocumentMut>()
            .ok()
            .and_then(|d| d.get("v")?.as_value().cloned())
    };
    let unquoted = raw.trim_matches('"');
    let bad =
        |what: &str| HallError::usage(format!("`{raw}` is not {what}")).hint("hall schema config");
    Ok(match kind {
        Some("string") => toml_edit::Value::from(unquoted),
        Some("integer") => {
            toml_edit::Value::from(unquoted.parse::<i64>().map_err(|_| bad("a whole number"))?)
        }
        Some("number") => {
            toml_edit::Value::from(unquoted.parse::<f64>().map_err(|_| bad("a number"))?)
        }
        Some("boolean") => {
            toml_edit::Value::from(unquoted.parse::<bool>().map_err(|_| bad("true or false"))?)
        }
        Some("array") => as_toml()
            .filter(toml_edit::Value::is_array)
            .unwrap_or_else(|| {
                let items: toml_edit::Array = unquoted
                    .split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(toml_edit::Value::from)
                    .collect();
                toml_edit::Value::Array(items)
            }),
        _ => as_toml().unwrap_or_else(|| toml_edit::Value::from(unquoted)),
    })
}

/// Sets `key` (dotted) in `doc`, making its tables as needed, keeping the old value's
/// comments and spacing.
fn set(
    doc: &mut toml_edit::DocumentMut,
    key: &str,
    raw: &str,
    schema: Option<&Value>,
) -> Result<()> {
    let parts: Vec<&str> = key.split('.').map(str::trim).collect();
    if parts.iter().any(|p| p.is_empty()) {
        return Err(HallError::usage(format!("`{key}` is not a key")).hint("hall schema config"));
    }
    let (last, tables) = parts
        .split_last()
        .ok_or_else(|| HallError::usage("an empty key"))?;
    let mut table = doc.as_table_mut();
    for name in tables {
        let entry = table.entry(name).or_insert_with(toml_edit::table);
        table = entry.as_table_mut().ok_or_else(|| {
            HallError::usage(format!("`{name}` in `{key}` is a value, not a table"))
                .hint("hall config show")
        })?;
    }
    let existing = table.get(last).and_then(|i| i.as_value()).cloned();
    let kind = schema.and_then(|s| schema_type(s, key)).or_else(|| {
        existing.as_ref().map(|v| match v {
            toml_edit::Value::String(_) => "string".to_string(),
            toml_edit::Value::Integer(_) => "integer".to_string(),
            toml_edit::Value::Float(_) => "number".to_string(),
            toml_edit::Value::Boolean(_) => "boolean".to_string(),
            toml_edit::Value::Array(_) => "array".to_string(),
            _ => "other".to_string(),
        })
    });
    let mut value = parse_value(raw, kind.as_deref())?;
    if let Some(old) = existing {
        *value.decor_mut() = old.decor().clone();
    }
    // Replacing the item, not the entry, keeps the key with the comments above it.
    match table.get_mut(last) {
        Some(item) => *item = toml_edit::Item::Value(value),
        None => {
            table.insert(last, toml_edit::Item::Value(value));
        }
    }
    Ok(())
}

/// The change as lines: unchanged ones with two of context, `-` old, `+` new.
pub fn diff(old: &str, new: &str) -> String {
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    // The longest common subsequence, by the textbook table (settings files are small).
    let mut lcs = vec![vec![0u32; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let mut ops: Vec<(char, &str)> = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            ops.push((' ', a[i]));
            i += 1;
            j += 1;
        } else if j < b.len() && (i == a.len() || lcs[i][j + 1] >= lcs[i + 1][j]) {
            ops.push(('+', b[j]));
            j += 1;
        } else {
            ops.push(('-', a[i]));
            i += 1;
        }
    }
    let near = |k: usize| {
        ops[k.saturating_sub(2)..(k + 3).min(ops.len())]
            .iter()
            .any(|(c, _)| *c != ' ')
    };
    let mut out = Vec::new();
    let mut skipped = false;
    for (k, (c, line)) in ops.iter().enumerate() {
        if *c != ' ' || near(k) {
            if skipped {
                out.push("…".to_string());
                skipped = false;
            }
            out.push(format!("{c}{line}"));
        } else {
            skipped = true;
        }
    }
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "# Our rules.\nbase = \"main\"\n\n[merge]\n# who merges\nmode = \"off\"  # lit for now\n\n[budget]\ndaily = \"4M\"\n";

    fn doc() -> toml_edit::DocumentMut {
        FILE.parse().expect("toml")
    }

    #[test]
    fn a_set_keeps_comments_order_and_the_inline_comment() {
        let schema = super::super::schema::schema("config").expect("schema");
        let mut d = doc();
        set(&mut d, "merge.mode", "auto", Some(&schema)).expect("set");
        set(&mut d, "budget.daily", "12000", Some(&schema)).expect("set");
        let text = d.to_string();
        assert_eq!(
            text,
            "# Our rules.\nbase = \"main\"\n\n[merge]\n# who merges\nmode = \"auto\"  # lit for now\n\n[budget]\ndaily = \"12000\"\n"
        );
        // `budget.daily` is a string in the schema, so 12000 stays one and the file parses.
        Config::parse(&text, Path::new(".hallmark.toml")).expect("valid");
    }

    #[test]
    fn a_value_of_the_wrong_type_or_an_invalid_file_is_refused() {
        let schema = super::super::schema::schema("config").expect("schema");
        let mut d = doc();
        assert!(set(&mut d, "policy.window", "many", Some(&schema)).is_err());
        let mut d = doc();
        set(&mut d, "stuck_after", "soon", Some(&schema)).expect("a string");
        let err =
            validate(&d.to_string(), Path::new(".hallmark.toml"), false).expect_err("invalid");
        assert_eq!(err.code, Code::InvalidConfig);
        assert!(err.message.contains("stuck_after"), "{}", err.message);
    }

    #[test]
    fn new_tables_are_made_and_the_diff_shows_only_the_change() {
        let mut d = doc();
        set(&mut d, "policy.mode", "enforce", None).expect("set");
        let new = d.to_string();
        assert!(new.ends_with("[policy]\nmode = \"enforce\"\n"), "{new}");
        let change = diff(FILE, &new);
        assert!(
            change.contains("+[policy]") && change.contains("+mode = \"enforce\""),
            "{change}"
        );
        assert!(
            !change.contains("# Our rules."),
            "far context is left out: {change}"
        );
        assert_eq!(diff("a\nb\n", "a\nb\n"), "");
    }
}
