//! What the hooks know about Claude Code's tools, and how they read a tool they don't
//! know.
//!
//! Claude Code sends every tool call to the PreToolUse hook (the plugin's matcher is
//! `*`): its own tools, MCP servers' tools (`mcp__server__tool`), and tools that come
//! with later versions (`PowerShell`, `Monitor`…). The hook knows Bash, the file-writing
//! tools (Write, Edit, MultiEdit, NotebookEdit), the reading tools, and a list of tools
//! that write nothing a session chooses. Any other tool is judged by what its input
//! says:
//!
//! - shell text it is given (a `command`, `cmd` or `script` field) is judged as a Bash
//!   command would be. PowerShell is read the same way, as shell words, and in strict
//!   mode the constructs that run code the words don't show (`Invoke-Expression`,
//!   `Start-Process`, `-EncodedCommand`, .NET calls…) are refused;
//! - every string in its input, however deep, is taken as a path (absolute, `~/…`,
//!   `file://…`, or relative to the working directory) that the tool may write, and the
//!   call is refused when one lands in a protected place;
//! - a name that says it pushes or merges (`mcp__github__push_files`) is a push the
//!   gate can't check for a hallmark.
//!
//! An input too large or too deep to read that way is refused: the hook can't vouch for
//! what it didn't read.

use serde_json::Value;

/// How the gates treat a tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolKind {
    /// The Bash tool: its command goes through the shell analysis.
    Bash,
    /// A tool that writes the file it names.
    Write,
    /// A tool that reads the path it names: only the secrets are refused.
    Read,
    /// A tool that writes nothing a session chooses and runs nothing.
    Inert,
    /// Anything else: judged by its input.
    Other,
}

/// Tools that write the file their input names.
const WRITE_TOOLS: &[&str] = &["Write", "Edit", "MultiEdit", "NotebookEdit"];

/// Tools that read the path their input names.
const READ_TOOLS: &[&str] = &["Read", "Grep", "Glob", "LS", "NotebookRead"];

/// Claude Code's tools that neither write a path the session chooses nor run a
/// command: their strings are prompts, questions, queries and URLs. A subagent's own
/// tool calls go through the hooks like any other.
const INERT_TOOLS: &[&str] = &[
    "WebFetch",
    "WebSearch",
    "TodoWrite",
    "TodoRead",
    "Task",
    "Agent",
    "AskUserQuestion",
    "ExitPlanMode",
    "EnterPlanMode",
    "BashOutput",
    "TaskOutput",
    "KillShell",
    "KillBash",
    "TaskStop",
    "ListMcpResourcesTool",
    "ReadMcpResourceTool",
    "ToolSearch",
];

/// The fields whose string is shell text a tool runs.
const SHELL_FIELDS: &[&str] = &["command", "cmd", "script", "shell_command"];

/// The most strings of one tool input the hook reads as paths.
pub const MAX_STRINGS: usize = 1024;
/// How deep in a tool input the hook looks.
pub const MAX_DEPTH: usize = 32;
/// A longer string is not a path (no platform takes one this long in a file call).
const MAX_PATH: usize = 4096;

/// How the gates treat `tool`.
pub fn kind(tool: &str) -> ToolKind {
    if tool == "Bash" {
        ToolKind::Bash
    } else if WRITE_TOOLS.contains(&tool) {
        ToolKind::Write
    } else if READ_TOOLS.contains(&tool) {
        ToolKind::Read
    } else if INERT_TOOLS.contains(&tool) {
        ToolKind::Inert
    } else {
        ToolKind::Other
    }
}

/// Whether a PreToolUse call might push, write a protected place or act as a person,
/// so that the hook denies it when it can't finish judging it (out of time, its own
/// error). A read fails open, except one naming Hallmark's configuration directory,
/// where the signing key lives.
pub fn may_harm(tool: &str, input: Option<&Value>) -> bool {
    match kind(tool) {
        ToolKind::Inert => false,
        ToolKind::Read => {
            let Some(config) = crate::platform::config_dir() else {
                return false;
            };
            let config = config.to_string_lossy().to_string();
            let mut found = false;
            if let Some(v) = input {
                walk(v, 0, &mut |s| found |= s.contains(config.as_str()));
            }
            found
        }
        ToolKind::Bash | ToolKind::Write | ToolKind::Other => true,
    }
}

/// Calls `f` on every string in `v` (object keys aside), to `MAX_DEPTH`.
fn walk<'a>(v: &'a Value, depth: usize, f: &mut dyn FnMut(&'a str)) {
    if depth > MAX_DEPTH {
        return;
    }
    match v {
        Value::String(s) => f(s),
        Value::Array(a) => a.iter().for_each(|x| walk(x, depth + 1, f)),
        Value::Object(o) => o.values().for_each(|x| walk(x, depth + 1, f)),
        _ => {}
    }
}

/// Every string in a tool's input that could be a path, or why the input is too big to
/// read: more than [`MAX_STRINGS`] strings or nested deeper than [`MAX_DEPTH`].
pub fn strings(input: &Value) -> Result<Vec<&str>, String> {
    let mut out = Vec::new();
    let mut deep = false;
    let mut count = 0usize;
    fn go<'a>(v: &'a Value, depth: usize, out: &mut Vec<&'a str>, n: &mut usize, deep: &mut bool) {
        if depth > MAX_DEPTH {
            *deep = true;
            return;
        }
        match v {
            Value::String(s) => {
                *n += 1;
                if *n <= MAX_STRINGS && !s.is_empty() && s.len() <= MAX_PATH {
                    out.push(s);
                }
            }
            Value::Array(a) => a.iter().for_each(|x| go(x, depth + 1, out, n, deep)),
            Value::Object(o) => o.values().for_each(|x| go(x, depth + 1, out, n, deep)),
            _ => {}
        }
    }
    go(input, 0, &mut out, &mut count, &mut deep);
    if deep {
        return Err(format!(
            "its input is nested more than {MAX_DEPTH} levels deep"
        ));
    }
    if count > MAX_STRINGS {
        return Err(format!(
            "its input holds {count} strings, more than the {MAX_STRINGS} the hook reads"
        ));
    }
    Ok(out)
}

/// The ways a string may name a path: itself, and without a `file://` scheme.
pub fn as_paths(s: &str) -> impl Iterator<Item = &str> {
    let bare = s.strip_prefix("file://");
    std::iter::once(s).chain(bare)
}

/// The shell text a tool is given in one of [`SHELL_FIELDS`]: a string, or a list of
/// words (quoted, so they read as the words they are).
pub fn shell_text(input: &Value) -> Option<String> {
    for field in SHELL_FIELDS {
        match input.get(*field) {
            Some(Value::String(s)) => return Some(s.clone()),
            Some(Value::Array(words)) => {
                let words: Vec<String> = words
                    .iter()
                    .map(|w| match w {
                        Value::String(s) => quote(s),
                        other => quote(&other.to_string()),
                    })
                    .collect();
                return Some(words.join(" "));
            }
            _ => {}
        }
    }
    None
}

fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// Whether a tool runs PowerShell.
pub fn is_powershell(tool: &str) -> bool {
    let t = tool.to_ascii_lowercase();
    t == "powershell" || t == "pwsh" || t.ends_with("__powershell") || t.ends_with("__pwsh")
}

/// PowerShell that runs code its words don't show, or writes through .NET: refused in
/// strict mode, because reading the command as shell words can't follow it.
const POWERSHELL_HIDDEN: &[&str] = &[
    "invoke-expression",
    "iex",
    "invoke-command",
    "icm",
    "start-process",
    "saps",
    "start-job",
    "sajb",
    "start-threadjob",
    "invoke-item",
    "ii",
    "add-type",
    "new-object",
    "set-alias",
    "sal",
    "new-alias",
    "nal",
    "-encodedcommand",
    "-enc",
    "-ec",
    "pwsh",
    "pwsh.exe",
    "powershell",
    "powershell.exe",
];

/// What in a PowerShell command the shell reading can't follow, if anything.
pub fn powershell_hidden(command: &str) -> Option<String> {
    let lower = command.to_ascii_lowercase();
    for marker in [
        "::",
        "[scriptblock]",
        "frombase64string",
        "$executioncontext",
    ] {
        if lower.contains(marker) {
            return Some(format!(
                "`{marker}` calls into .NET or builds code at run time"
            ));
        }
    }
    powershell_words(&lower)
        .find(|w| POWERSHELL_HIDDEN.contains(w))
        .map(|w| format!("`{w}` runs code or writes files in ways the words don't show"))
}

/// The words of a PowerShell command, split on its punctuation; a parameter written
/// with its value (`-Path:x`) gives the value too.
pub fn powershell_words(command: &str) -> impl Iterator<Item = &str> {
    command
        .split(|c: char| c.is_whitespace() || "'\"`();|{}=,<>&".contains(c))
        .filter(|w| !w.is_empty())
        .flat_map(|w| {
            let value = w
                .strip_prefix('-')
                .and_then(|p| p.split_once(':'))
                .map(|(_, v)| v)
                .filter(|v| !v.is_empty());
            std::iter::once(w).chain(value)
        })
}

/// Words of a tool's name (`mcp__github__push_files`) that say it sends commits to a
/// remote or merges: such a tool is a push the gate can't check for a hallmark.
pub fn pushes_by_name(tool: &str) -> Option<String> {
    let lower = tool.to_ascii_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    if let Some(w) = words.iter().find(|w| matches!(**w, "push" | "merge")) {
        return Some(format!("its name says it does a {w}"));
    }
    for phrase in [
        "create_or_update_file",
        "delete_file",
        "create_pull_request",
        "update_pull_request_branch",
        "create_branch",
        "create_ref",
        "update_ref",
    ] {
        if lower.ends_with(phrase) {
            return Some(format!("its name says it writes to a remote ({phrase})"));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_tool_has_a_kind_and_unknown_ones_are_judged() {
        assert_eq!(kind("Bash"), ToolKind::Bash);
        for t in WRITE_TOOLS {
            assert_eq!(kind(t), ToolKind::Write, "{t}");
        }
        assert_eq!(kind("MultiEdit"), ToolKind::Write);
        assert_eq!(kind("NotebookEdit"), ToolKind::Write);
        assert_eq!(kind("Read"), ToolKind::Read);
        assert_eq!(kind("TodoWrite"), ToolKind::Inert);
        for t in [
            "mcp__filesystem__write_file",
            "PowerShell",
            "Monitor",
            "REPL",
        ] {
            assert_eq!(kind(t), ToolKind::Other, "{t}");
            assert!(may_harm(t, None), "{t} is denied when it can't be judged");
        }
        assert!(!may_harm("TodoWrite", None));
        assert!(!may_harm("Read", Some(&json!({"file_path": "/etc/hosts"}))));
    }

    #[test]
    fn strings_are_found_at_any_depth_and_bounded() {
        let v = json!({"a": "x", "b": [{"c": "/y"}, 3, null], "d": {"e": {"f": "file:///z"}}});
        let mut got = strings(&v).unwrap();
        got.sort();
        assert_eq!(got, vec!["/y", "file:///z", "x"]);
        assert_eq!(
            as_paths("file:///z").collect::<Vec<_>>(),
            ["file:///z", "/z"]
        );
        let many = Value::Array((0..=MAX_STRINGS).map(|i| json!(i.to_string())).collect());
        assert!(strings(&many).unwrap_err().contains("strings"));
        let mut deep = json!("p");
        for _ in 0..=MAX_DEPTH {
            deep = json!([deep]);
        }
        assert!(strings(&deep).unwrap_err().contains("deep"));
    }

    #[test]
    fn shell_fields_and_powershell() {
        assert_eq!(
            shell_text(&json!({"command": "git push"})).as_deref(),
            Some("git push")
        );
        assert_eq!(
            shell_text(&json!({"cmd": ["git", "push", "it's"]})).as_deref(),
            Some("'git' 'push' 'it'\\''s'")
        );
        assert_eq!(shell_text(&json!({"path": "x"})), None);
        assert!(is_powershell("PowerShell"));
        assert!(is_powershell("mcp__win__powershell"));
        for c in [
            "iex 'git push'",
            "Invoke-Expression $x",
            "[IO.File]::WriteAllText('a', 'b')",
            "pwsh -EncodedCommand ZwBpAHQA",
            "Start-Process git -ArgumentList push",
        ] {
            assert!(powershell_hidden(c).is_some(), "{c}");
        }
        for c in [
            "Get-ChildItem -Path src",
            "git status",
            "Get-Content a.txt | Select-String x",
        ] {
            assert_eq!(powershell_hidden(c), None, "{c}");
        }
        let words: Vec<&str> =
            powershell_words("Set-Content -Path:.git/hooks/x -Value 'y'").collect();
        assert!(words.contains(&".git/hooks/x"), "{words:?}");
    }

    #[test]
    fn the_plugin_sends_every_tool_to_the_hook_and_waits_past_its_deadline() {
        let text = crate::hall::plugin::plugin_file("hooks/hooks.json").unwrap();
        let hooks: Value = serde_json::from_str(text).unwrap();
        for (event, command) in [
            ("PreToolUse", "hall hook pre-tool-use"),
            ("PostToolUse", "hall hook post-tool-use"),
        ] {
            let entries = hooks["hooks"][event].as_array().unwrap();
            assert_eq!(entries.len(), 1, "{event}");
            let matcher = entries[0]["matcher"].as_str().unwrap_or("");
            assert!(matcher == "*" || matcher.is_empty(), "{event}: {matcher}");
            assert_eq!(entries[0]["hooks"][0]["command"], command);
        }
        // Claude Code lets a call through when the hook takes longer than this, so the
        // hook's own deadline must come well before it.
        let timeout = hooks["hooks"]["PreToolUse"][0]["hooks"][0]["timeout"]
            .as_u64()
            .unwrap();
        assert!(timeout >= 2 * super::super::DEADLINE.as_secs(), "{timeout}");
    }

    #[test]
    fn names_that_push() {
        assert!(pushes_by_name("mcp__github__push_files").is_some());
        assert!(pushes_by_name("mcp__github__merge_pull_request").is_some());
        assert!(pushes_by_name("mcp__github__create_or_update_file").is_some());
        assert!(pushes_by_name("mcp__github__list_commits").is_none());
        assert!(pushes_by_name("mcp__filesystem__write_file").is_none());
    }
}
