//! The task runners' files read as recipes with their bodies and dependencies:
//! justfile, Makefile, Taskfile, package.json scripts, tox and nox.

use super::{Recipe, Runner, RunnerKind, indent, unquote};

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
