//! Reading the files check detection looks at: task runners' recipes with their bodies
//! and dependencies, and the commands CI workflows run.
//!
//! Every reader is a small line-based parser of the part of the format the rules need,
//! not a general YAML, TOML or Makefile parser: a construct it does not understand is
//! skipped, never an error, so an odd file costs a missed check rather than a refusal.

/// A runner that names commands a person runs by name.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum RunnerKind {
    Just,
    Make,
    Task,
    /// package.json scripts, run with the named client.
    Scripts(&'static str),
    Tox,
    Nox,
}

/// One named command of a runner.
#[derive(Clone, Debug, Default)]
pub struct Recipe {
    pub name: String,
    /// Recipes that run first.
    pub deps: Vec<String>,
    /// The command lines, as written.
    pub body: Vec<String>,
}

/// A runner file and its recipes.
#[derive(Clone, Debug)]
pub struct Runner {
    pub kind: RunnerKind,
    pub source: String,
    pub recipes: Vec<Recipe>,
    /// The recipe run with no name (`make` alone), when there is one.
    pub default: Option<String>,
    /// Names this file may define that the reader cannot see (an `include`, a catch-all
    /// pattern rule): an unknown name is then not reported as undefined.
    pub open: bool,
}

impl Runner {
    pub fn get(&self, name: &str) -> Option<&Recipe> {
        self.recipes.iter().find(|r| r.name == name)
    }

    /// The command line that runs recipe `name`.
    pub fn invoke(&self, name: &str) -> String {
        match self.kind {
            RunnerKind::Just => format!("just {name}"),
            RunnerKind::Make => format!("make {name}"),
            RunnerKind::Task => format!("task {name}"),
            RunnerKind::Scripts(pm) if name == "test" && pm != "bun" => format!("{pm} test"),
            RunnerKind::Scripts(pm) => format!("{pm} run {name}"),
            RunnerKind::Tox => format!("tox -e {name}"),
            RunnerKind::Nox => format!("nox -s {name}"),
        }
    }
}

// ---------------------------------------------------------------- justfile

pub fn justfile(source: &str, content: &str) -> Runner {
    let mut recipes: Vec<Recipe> = Vec::new();
    let mut open = false;
    let mut current: Option<Recipe> = None;
    for line in content.lines() {
        if line.starts_with([' ', '\t']) {
            if let Some(r) = current.as_mut() {
                let t = line.trim();
                if !t.is_empty() && !t.starts_with('#') {
                    r.body.push(t.trim_start_matches(['@', '-']).to_string());
                }
            }
            continue;
        }
        if let Some(r) = current.take() {
            recipes.push(r);
        }
        let t = line.trim_end();
        if t.is_empty() || t.starts_with('#') || t.starts_with('[') {
            continue;
        }
        let first = t.split_whitespace().next().unwrap_or("");
        if first == "import" || first == "mod" {
            open = true;
            continue;
        }
        if first == "alias" {
            // `alias t := test` is a recipe that runs another.
            if let Some((name, target)) = t["alias".len()..].split_once(":=") {
                recipes.push(Recipe {
                    name: name.trim().to_string(),
                    deps: vec![target.trim().to_string()],
                    body: Vec::new(),
                });
            }
            continue;
        }
        if ["set", "export"].contains(&first) {
            continue;
        }
        let t = t.trim_start_matches('@');
        let Some(colon) = t.find(':') else { continue };
        if t[colon + 1..].starts_with('=') {
            continue; // `x := y`
        }
        let head = &t[..colon];
        let Some(name) = head.split_whitespace().next() else {
            continue;
        };
        if !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            continue;
        }
        let deps = t[colon + 1..]
            .split_whitespace()
            .take_while(|w| *w != "&&")
            .filter(|w| !w.starts_with('#'))
            .map(|w| w.trim_matches(['(', ')']).to_string())
            .filter(|w| !w.is_empty())
            .collect();
        current = Some(Recipe {
            name: name.to_string(),
            deps,
            body: Vec::new(),
        });
    }
    if let Some(r) = current {
        recipes.push(r);
    }
    Runner {
        kind: RunnerKind::Just,
        source: source.to_string(),
        default: recipes.first().map(|r| r.name.clone()),
        recipes,
        open,
    }
}

// ---------------------------------------------------------------- Makefile

pub fn makefile(source: &str, content: &str) -> Runner {
    let mut recipes: Vec<Recipe> = Vec::new();
    let mut open = false;
    let mut default = None;
    let mut current: Vec<usize> = Vec::new();
    let mut continued = false;
    for line in content.lines() {
        if let Some(body) = line.strip_prefix('\t') {
            let t = body.trim();
            if !t.is_empty() && !t.starts_with('#') {
                let t = t.trim_start_matches(['@', '-', '+']).to_string();
                for &i in &current {
                    if continued {
                        if let Some(last) = recipes[i].body.last_mut() {
                            last.push(' ');
                            last.push_str(t.trim_end_matches('\\').trim());
                        }
                    } else {
                        recipes[i]
                            .body
                            .push(t.trim_end_matches('\\').trim().to_string());
                    }
                }
            }
            continued = t.ends_with('\\');
            continue;
        }
        continued = false;
        let t = line.trim_end();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let first = t.split_whitespace().next().unwrap_or("");
        if ["include", "-include", "sinclude"].contains(&first) {
            open = true;
            continue;
        }
        if line.starts_with(' ') {
            continue;
        }
        let Some(colon) = t.find(':') else {
            current.clear();
            continue;
        };
        let after = &t[colon + 1..];
        if after.starts_with('=') || after.starts_with(":=") || t[..colon].contains('=') {
            current.clear();
            continue; // an assignment
        }
        let (prereqs, inline) = match after.split_once(';') {
            Some((p, c)) => (p, Some(c.trim())),
            None => (after.trim_start_matches(':'), None),
        };
        let deps: Vec<String> = prereqs
            .split_whitespace()
            .take_while(|w| *w != "|")
            .filter(|w| !w.contains(['$', '%']))
            .map(str::to_string)
            .collect();
        current.clear();
        for name in t[..colon].split_whitespace() {
            if name.contains('%') {
                if name == "%" {
                    open = true; // a catch-all rule, often delegating elsewhere
                }
                continue;
            }
            if name.contains('$') || name.starts_with('.') {
                continue;
            }
            if default.is_none() {
                default = Some(name.to_string());
            }
            let i = match recipes.iter().position(|r| r.name == name) {
                Some(i) => i,
                None => {
                    recipes.push(Recipe {
                        name: name.to_string(),
                        ..Recipe::default()
                    });
                    recipes.len() - 1
                }
            };
            recipes[i].deps.extend(deps.iter().cloned());
            if let Some(c) = inline.filter(|c| !c.is_empty()) {
                recipes[i].body.push(c.to_string());
            }
            current.push(i);
        }
    }
    Runner {
        kind: RunnerKind::Make,
        source: source.to_string(),
        recipes,
        default,
        open,
    }
}

// ---------------------------------------------------------------- Taskfile

pub fn taskfile(source: &str, content: &str) -> Runner {
    let lines: Vec<(usize, &str)> = content
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .map(|l| (indent(l), l.trim()))
        .collect();
    // Version 3 keeps tasks under `tasks:`; older files put them at the top level.
    let (start, depth) = match lines.iter().position(|(i, l)| *i == 0 && *l == "tasks:") {
        Some(p) => (p + 1, lines.get(p + 1).map(|(i, _)| *i).unwrap_or(2)),
        None => (0, 0),
    };
    let mut recipes: Vec<Recipe> = Vec::new();
    let mut key = "";
    let mut key_indent = 0;
    for &(ind, line) in &lines[start..] {
        if ind < depth || (depth > 0 && ind == 0) {
            break;
        }
        if ind == depth {
            let Some(name) = line.strip_suffix(':') else {
                continue;
            };
            if depth == 0
                && ["version", "vars", "env", "includes", "output", "silent"].contains(&name)
            {
                continue;
            }
            recipes.push(Recipe {
                name: unquote(name).to_string(),
                ..Recipe::default()
            });
            key = "";
            continue;
        }
        let Some(r) = recipes.last_mut() else {
            continue;
        };
        if let Some((k, v)) = line.split_once(':').filter(|_| !line.starts_with('-'))
            && (ind <= key_indent || key.is_empty() || !["cmds", "deps"].contains(&key))
        {
            key_indent = ind;
            key = match k.trim() {
                "cmds" => "cmds",
                "deps" => "deps",
                _ => "other",
            };
            let v = v.trim();
            if let Some(inner) = v.strip_prefix('[').and_then(|v| v.strip_suffix(']')) {
                let items = inner.split(',').map(|s| unquote(s.trim()).to_string());
                match key {
                    "deps" => r.deps.extend(items),
                    "cmds" => r.body.extend(items),
                    _ => {}
                }
            }
            continue;
        }
        let Some(item) = line.strip_prefix("- ").or(line.strip_prefix('-')) else {
            // `cmd: x` or `task: x` inside a list item written over several lines.
            if key == "cmds" {
                push_task_item(r, line);
            }
            continue;
        };
        match key {
            "deps" => r.deps.push(unquote(item.trim()).to_string()),
            "cmds" => push_task_item(r, item.trim()),
            _ => {}
        }
    }
    Runner {
        kind: RunnerKind::Task,
        source: source.to_string(),
        default: recipes
            .iter()
            .find(|r| r.name == "default")
            .map(|r| r.name.clone()),
        recipes,
        open: content.contains("includes:"),
    }
}

fn push_task_item(r: &mut Recipe, item: &str) {
    if let Some(t) = item.strip_prefix("task:") {
        r.body.push(format!("task {}", unquote(t.trim())));
    } else if let Some(c) = item.strip_prefix("cmd:") {
        r.body.push(unquote(c.trim()).to_string());
    } else if (!item.contains(':') || item.starts_with(['\'', '"']) || item.contains(' '))
        && !item.starts_with("vars:")
        && !item.starts_with("platforms:")
    {
        r.body.push(unquote(item).to_string());
    }
}

// ---------------------------------------------------------------- package.json

/// The `scripts` of a package.json as a runner, or the reason they could not be read.
pub fn package_scripts(source: &str, content: &str, pm: &'static str) -> Result<Runner, String> {
    let value: serde_json::Value =
        serde_json::from_str(content).map_err(|e| format!("not valid JSON ({e})"))?;
    let mut recipes = Vec::new();
    if let Some(scripts) = value.get("scripts") {
        let scripts = scripts
            .as_object()
            .ok_or_else(|| "`scripts` is not an object".to_string())?;
        for (name, body) in scripts {
            let Some(body) = body.as_str() else { continue };
            recipes.push(Recipe {
                name: name.clone(),
                deps: Vec::new(),
                body: vec![body.to_string()],
            });
        }
    }
    Ok(Runner {
        kind: RunnerKind::Scripts(pm),
        source: source.to_string(),
        recipes,
        default: None,
        open: false,
    })
}

// ---------------------------------------------------------------- tox

/// tox environments from tox.ini, or from `[tool.tox]` in pyproject.toml.
pub fn tox(source: &str, content: &str) -> Option<Runner> {
    let pyproject = source.ends_with("pyproject.toml");
    let mut recipes: Vec<Recipe> = Vec::new();
    let mut env_list: Vec<String> = Vec::new();
    let mut section = String::new();
    let mut found = false;
    let mut in_list = false;
    for line in content.lines() {
        let t = line.trim();
        if t.starts_with('[') && !t.starts_with("[[") && t.ends_with(']') {
            section = t.trim_matches(['[', ']']).to_string();
            in_list = false;
            let env = if pyproject {
                if section == "tool.tox" || section == "tool.tox.env_run_base" {
                    found = true;
                }
                section.strip_prefix("tool.tox.env.").map(str::to_string)
            } else {
                if section == "tox" {
                    found = true;
                }
                section.strip_prefix("testenv:").map(str::to_string)
            };
            let base = if pyproject {
                "tool.tox.env_run_base"
            } else {
                "testenv"
            };
            if section == base {
                recipes.push(Recipe {
                    name: "py".into(),
                    ..Recipe::default()
                });
            }
            if let Some(env) = env {
                recipes.push(Recipe {
                    name: unquote(&env).to_string(),
                    ..Recipe::default()
                });
            }
            continue;
        }
        let in_tox = if pyproject {
            section.starts_with("tool.tox")
        } else {
            section == "tox" || section.starts_with("testenv")
        };
        if !in_tox {
            continue;
        }
        if t.starts_with("envlist") || t.starts_with("env_list") {
            in_list = true;
            if let Some((_, v)) = t.split_once('=') {
                env_list.extend(tox_names(v));
            }
            continue;
        }
        if in_list && (line.starts_with([' ', '\t']) || t.starts_with('"')) && !t.contains('=') {
            env_list.extend(tox_names(t));
            continue;
        }
        in_list = false;
        let is_env = section.starts_with("testenv") || section.starts_with("tool.tox.env");
        if is_env
            && !t.is_empty()
            && !t.starts_with('#')
            && let Some(r) = recipes.last_mut()
        {
            r.body.push(t.to_string());
        }
    }
    if !found && recipes.is_empty() {
        return None;
    }
    for e in env_list {
        if !recipes.iter().any(|r| r.name == e) {
            recipes.push(Recipe {
                name: e,
                ..Recipe::default()
            });
        }
    }
    Some(Runner {
        kind: RunnerKind::Tox,
        source: source.to_string(),
        recipes,
        default: Some("py".into()),
        open: true, // factor expressions such as py{38,39}-lowest name more than is written
    })
}

fn tox_names(v: &str) -> Vec<String> {
    v.split([',', ' '])
        .map(|s| s.trim().trim_matches(['[', ']', '"', '\'']))
        .filter(|s| !s.is_empty() && !s.contains('{'))
        .map(str::to_string)
        .collect()
}

// ---------------------------------------------------------------- noxfile

pub fn noxfile(source: &str, content: &str) -> Runner {
    let mut recipes: Vec<Recipe> = Vec::new();
    let mut decorated = false;
    let mut in_body = false;
    for line in content.lines() {
        let t = line.trim();
        if t.starts_with("@nox.session") {
            decorated = true;
            in_body = false;
            continue;
        }
        if !line.starts_with([' ', '\t']) && !t.is_empty() {
            in_body = false;
        }
        if let Some(rest) = t.strip_prefix("def ") {
            if decorated && !line.starts_with([' ', '\t']) {
                let name = rest.split('(').next().unwrap_or("").trim();
                recipes.push(Recipe {
                    name: name.to_string(),
                    ..Recipe::default()
                });
                in_body = true;
            }
            decorated = false;
            continue;
        }
        if in_body
            && !t.is_empty()
            && !t.starts_with('#')
            && let Some(r) = recipes.last_mut()
        {
            r.body.push(t.to_string());
        }
    }
    Runner {
        kind: RunnerKind::Nox,
        source: source.to_string(),
        recipes,
        default: None,
        open: false,
    }
}

// ---------------------------------------------------------------- CI

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

fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

pub fn unquote(s: &str) -> &str {
    let s = s.trim();
    for q in ['"', '\''] {
        if s.len() >= 2 && s.starts_with(q) && s.ends_with(q) {
            return &s[1..s.len() - 1];
        }
    }
    s
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
