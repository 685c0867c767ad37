//! The CI definitions read as the commands they run on a change: GitHub workflows,
//! Travis and GitLab section lists, and the `run:`/`script:` values of the others,
//! with releases and steps that never run on a pull request left out.

use super::{indent, unquote};

/// One command a CI definition runs, with what the rules need to know about its place.
#[derive(Clone, Debug)]
pub struct CiCommand {
    /// The command line (continuations joined, quotes around the whole removed).
    pub line: String,
    /// The file it is in.
    pub source: String,
    /// The step exists to install or prepare, going by its name or section.
    pub prepares: bool,
    /// What the step uses instead of a command (`golangci/golangci-lint-action@v6`),
    /// with its `args:` when given.
    pub uses: Option<(String, String)>,
    /// RUSTFLAGS in the workflow make warnings errors.
    pub deny_warnings: bool,
}

/// A CI file's commands, or why none of it counts.
pub struct CiFile {
    pub commands: Vec<CiCommand>,
    pub skipped: Vec<(String, String)>,
}

pub fn ci(path: &str, content: &str) -> CiFile {
    if path.starts_with(".github/workflows/") {
        github(path, content)
    } else if path == ".travis.yml" {
        listed(
            path,
            content,
            &["install", "before_install", "before_script", "script"],
            false,
        )
    } else if path == ".gitlab-ci.yml" {
        listed(path, content, &["before_script", "script"], true)
    } else {
        generic(path, content)
    }
}

/// Words that make a workflow, job or step a release rather than a check.
pub fn releases(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    [
        "release", "publish", "deploy", "pages", "upload", "snap", "winget", "docker", "nightly",
    ]
    .iter()
    .any(|w| n.contains(w))
}

fn prepares(step: &str) -> bool {
    let n = step.to_ascii_lowercase();
    if ["check", "lint", "test", "verify", "audit"]
        .iter()
        .any(|w| n.contains(w))
    {
        return false;
    }
    [
        "install",
        "dependenc",
        "setup",
        "set up",
        "bootstrap",
        "configure",
        "prepare",
        "deps",
    ]
    .iter()
    .any(|w| n.contains(w))
}

fn deny_warnings(content: &str) -> bool {
    content.lines().any(|l| {
        let l = l.trim();
        l.starts_with("RUSTFLAGS")
            && (l.contains("-Dwarnings")
                || l.contains("-D warnings")
                || l.contains("deny warnings"))
    })
}

/// Block-scalar or plain value of a `key: value` at `lines[i]`, and the next index.
fn value(lines: &[&str], i: usize, v: &str) -> (String, usize) {
    let v = v.trim();
    let base = indent(lines[i]);
    if v.starts_with('|') || v.starts_with('>') {
        let mut out = Vec::new();
        let mut j = i + 1;
        while j < lines.len() && (lines[j].trim().is_empty() || indent(lines[j]) > base) {
            out.push(lines[j].trim());
            j += 1;
        }
        let folded = v.starts_with('>');
        return (out.join(if folded { " " } else { "\n" }), j);
    }
    (unquote(strip_comment(v)).to_string(), i + 1)
}

fn strip_comment(v: &str) -> &str {
    if v.starts_with(['"', '\'']) {
        return v;
    }
    v.split(" #").next().unwrap_or(v).trim()
}

/// Splits a run block into command lines: continuations joined, comments dropped.
pub fn command_lines(block: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut pending = String::new();
    for line in block.lines() {
        let t = line.trim();
        if t.starts_with('#') || (t.is_empty() && pending.is_empty()) {
            continue;
        }
        if let Some(head) = t.strip_suffix('\\') {
            pending.push_str(head.trim());
            pending.push(' ');
            continue;
        }
        pending.push_str(t);
        let done = std::mem::take(&mut pending);
        if !done.trim().is_empty() {
            out.push(done.trim().to_string());
        }
    }
    if !pending.trim().is_empty() {
        out.push(pending.trim().to_string());
    }
    out
}

fn github(path: &str, content: &str) -> CiFile {
    let lines: Vec<&str> = content.lines().collect();
    let deny = deny_warnings(content);
    let mut skipped = Vec::new();
    let file_name = path.rsplit('/').next().unwrap_or(path);
    let workflow_name = lines
        .iter()
        .find(|l| indent(l) == 0 && l.starts_with("name:"))
        .map(|l| unquote(&l["name:".len()..]).to_string())
        .unwrap_or_default();

    // Triggers: the words under `on:`.
    let mut triggers: Vec<String> = Vec::new();
    let mut tags_only_push = false;
    if let Some(p) = lines.iter().position(|l| {
        indent(l) == 0
            && (l.starts_with("on:") || l.starts_with("\"on\":") || l.starts_with("true:"))
    }) {
        let rest = lines[p].split_once(':').map(|(_, r)| r).unwrap_or("");
        triggers.extend(
            rest.split([',', '[', ']', ' '])
                .map(|w| w.trim().to_string())
                .filter(|w| !w.is_empty()),
        );
        let mut push_keys: Vec<String> = Vec::new();
        let mut child = None;
        let mut in_push = false;
        for l in &lines[p + 1..] {
            if l.trim().is_empty() || l.trim_start().starts_with('#') {
                continue;
            }
            if indent(l) == 0 {
                break;
            }
            let depth = *child.get_or_insert(indent(l));
            let t = l.trim().trim_start_matches("- ");
            let word = t.split(':').next().unwrap_or("").trim().to_string();
            if indent(l) == depth {
                in_push = word == "push";
                triggers.push(word);
            } else if in_push && !l.trim_start().starts_with('-') {
                push_keys.push(word);
            }
        }
        tags_only_push =
            push_keys.iter().any(|k| k == "tags") && !push_keys.iter().any(|k| k == "branches");
    }
    let on_change = triggers.iter().any(|t| {
        [
            "pull_request",
            "pull_request_target",
            "merge_group",
            "workflow_call",
        ]
        .contains(&t.as_str())
    }) || (triggers.iter().any(|t| t == "push") && !tags_only_push);
    if !on_change {
        skipped.push((
            path.to_string(),
            "runs only on releases, tags, schedules or by hand".into(),
        ));
        return CiFile {
            commands: Vec::new(),
            skipped,
        };
    }
    if releases(file_name) || releases(&workflow_name) {
        let pr = triggers.iter().any(|t| t.starts_with("pull_request"));
        if !pr {
            skipped.push((path.to_string(), "a release workflow".into()));
            return CiFile {
                commands: Vec::new(),
                skipped,
            };
        }
    }

    let mut commands = Vec::new();
    let Some(jobs_at) = lines
        .iter()
        .position(|l| indent(l) == 0 && l.trim_end() == "jobs:")
    else {
        return CiFile { commands, skipped };
    };
    let body: Vec<&str> = lines[jobs_at + 1..]
        .iter()
        .take_while(|l| l.trim().is_empty() || l.trim_start().starts_with('#') || indent(l) > 0)
        .copied()
        .collect();
    let job_indent = body
        .iter()
        .find(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .map(|l| indent(l))
        .unwrap_or(2);
    let mut starts: Vec<usize> = body
        .iter()
        .enumerate()
        .filter(|(_, l)| {
            indent(l) == job_indent && !l.trim().is_empty() && !l.trim_start().starts_with('#')
        })
        .map(|(i, _)| i)
        .collect();
    starts.push(body.len());
    for w in starts.windows(2) {
        let job = &body[w[0]..w[1]];
        let id = job[0].trim().trim_end_matches(':').to_string();
        let key_indent = job
            .iter()
            .skip(1)
            .find(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
            .map(|l| indent(l))
            .unwrap_or(job_indent + 2);
        let key = |k: &str| {
            job.iter()
                .find(|l| indent(l) == key_indent && l.trim_start().starts_with(&format!("{k}:")))
                .map(|l| l.trim()[k.len() + 1..].trim().to_string())
        };
        let name = key("name")
            .map(|n| unquote(&n).to_string())
            .unwrap_or_else(|| id.clone());
        if releases(&id) || releases(&name) {
            skipped.push((format!("{path} job {id}"), "a release job".into()));
            continue;
        }
        if let Some(cond) = key("if")
            && not_on_changes(&cond)
        {
            skipped.push((
                format!("{path} job {id}"),
                "runs only outside pull requests".into(),
            ));
            continue;
        }
        if let Some(uses) = key("uses") {
            let with = job.iter().map(|l| l.trim()).collect::<Vec<_>>().join(" ");
            commands.push(CiCommand {
                line: String::new(),
                source: path.to_string(),
                prepares: false,
                uses: Some((unquote(&uses).to_string(), with)),
                deny_warnings: deny,
            });
            continue;
        }
        let Some(steps_at) = job
            .iter()
            .position(|l| indent(l) == key_indent && l.trim() == "steps:")
        else {
            continue;
        };
        let steps = &job[steps_at + 1..];
        let mut i = 0;
        while i < steps.len() {
            let l = steps[i];
            let t = l.trim_start();
            if !t.starts_with("- ") && t != "-" {
                i += 1;
                continue;
            }
            let dash = indent(l);
            let mut end = i + 1;
            while end < steps.len()
                && (steps[end].trim().is_empty()
                    || indent(steps[end]) > dash
                    || steps[end].trim_start().starts_with('#'))
            {
                end += 1;
            }
            commands.extend(github_step(&steps[i..end], path, deny));
            i = end;
        }
    }
    CiFile { commands, skipped }
}

/// A job or step condition that keeps it off pull requests.
fn not_on_changes(cond: &str) -> bool {
    let c = cond.replace(' ', "");
    c.contains("event_name!='pull_request'")
        || c.contains("event_name!=\"pull_request\"")
        || c.contains("event_name=='push'")
        || c.contains("event_name=='schedule'")
        || c.contains("refs/tags")
        || c.contains("github.ref=='refs/heads/")
        || c.contains("failure()")
}

fn github_step(step: &[&str], path: &str, deny: bool) -> Vec<CiCommand> {
    // The first line is `- key: value`; the others are the step's further keys.
    let first = step[0].trim_start().trim_start_matches('-');
    let key_indent = indent(step[0]) + (step[0].trim_start().len() - first.trim_start().len());
    let mut lines: Vec<String> = vec![format!("{}{}", " ".repeat(key_indent), first.trim_start())];
    lines.extend(step[1..].iter().map(|s| s.to_string()));
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    let mut name = String::new();
    let mut run = None;
    let mut uses = None;
    let mut args = String::new();
    let mut skip = false;
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i];
        if indent(l) != key_indent {
            // `args:` under `with:`
            let t = l.trim();
            if let Some(a) = t.strip_prefix("args:") {
                args = unquote(a).to_string();
            }
            i += 1;
            continue;
        }
        let Some((k, v)) = l.trim().split_once(':') else {
            i += 1;
            continue;
        };
        match k.trim() {
            "name" => name = unquote(v).to_string(),
            "uses" => uses = Some(unquote(strip_comment(v.trim())).to_string()),
            "if" => skip |= not_on_changes(v),
            "continue-on-error" => skip |= v.trim() == "true",
            "working-directory" => {
                let d = unquote(v);
                skip |= !d.is_empty() && d != "." && d != "./";
            }
            "run" => {
                let (text, next) = value(&lines, i, v);
                run = Some(text);
                i = next;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    if skip {
        return Vec::new();
    }
    let prepares = prepares(&name);
    if let Some(u) = uses {
        return vec![CiCommand {
            line: String::new(),
            source: path.to_string(),
            prepares,
            uses: Some((u, args)),
            deny_warnings: deny,
        }];
    }
    run.map(|r| {
        command_lines(&r)
            .into_iter()
            .map(|line| CiCommand {
                line,
                source: path.to_string(),
                prepares,
                uses: None,
                deny_warnings: deny,
            })
            .collect()
    })
    .unwrap_or_default()
}

/// Travis and GitLab: commands listed under section keys.
fn listed(path: &str, content: &str, sections: &[&str], jobs: bool) -> CiFile {
    let lines: Vec<&str> = content.lines().collect();
    let deny = deny_warnings(content);
    let mut commands = Vec::new();
    let mut skipped = Vec::new();
    let mut job = String::new();
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i];
        let t = l.trim();
        if t.is_empty() || t.starts_with('#') {
            i += 1;
            continue;
        }
        if jobs && indent(l) == 0 {
            job = t.trim_end_matches(':').to_string();
        }
        let Some((k, v)) = t.split_once(':') else {
            i += 1;
            continue;
        };
        let k = k.trim();
        if !sections.contains(&k) || (!jobs && indent(l) != 0) {
            i += 1;
            continue;
        }
        if jobs && (releases(&job) || job.starts_with('.')) {
            skipped.push((format!("{path} job {job}"), "a release job".into()));
            i += 1;
            continue;
        }
        let base = indent(l);
        let mut items: Vec<String> = Vec::new();
        if !v.trim().is_empty() {
            items.push(unquote(v).to_string());
        }
        let mut j = i + 1;
        while j < lines.len()
            && (lines[j].trim().is_empty()
                || indent(lines[j]) > base
                || (indent(lines[j]) == base && lines[j].trim_start().starts_with("- ")))
        {
            if let Some(item) = lines[j].trim().strip_prefix("- ") {
                items.push(unquote(item).to_string());
            }
            j += 1;
        }
        let section_prepares = k.contains("install") || k == "before_script";
        for item in items {
            for line in command_lines(&item) {
                commands.push(CiCommand {
                    line,
                    source: path.to_string(),
                    prepares: section_prepares,
                    uses: None,
                    deny_warnings: deny,
                });
            }
        }
        i = j;
    }
    CiFile { commands, skipped }
}

/// CircleCI, Azure Pipelines: `run:`, `command:` and `script:` values.
fn generic(path: &str, content: &str) -> CiFile {
    let lines: Vec<&str> = content.lines().collect();
    let mut commands = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let t = lines[i].trim().trim_start_matches("- ");
        let hit = ["run:", "command:", "script:"]
            .iter()
            .find(|k| t.starts_with(**k));
        if let Some(k) = hit {
            let (text, next) = value(&lines, i, &t[k.len()..]);
            for line in command_lines(&text) {
                commands.push(CiCommand {
                    line,
                    source: path.to_string(),
                    prepares: false,
                    uses: None,
                    deny_warnings: false,
                });
            }
            i = next;
            continue;
        }
        i += 1;
    }
    CiFile {
        commands,
        skipped: Vec::new(),
    }
}
