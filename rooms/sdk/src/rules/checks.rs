//! The built-in check-detection rules, as a pure function over the checks world's
//! types (named only through `super::model`, so the file also compiles natively).
//!
//! Task runners speak for the repository: a `justfile` recipe or `Makefile`
//! target named like a check comes first, and a language default of the same
//! kind (tests, lint) is then left out, so tests never run twice. Only check-like
//! names are taken (`test`, `lint`, `check`...), never `deploy` or `clean`.

use super::model::*;

/// What a check proves, used to drop language defaults a task runner covers.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Test,
    Lint,
    Build,
}

/// Task-runner targets and package scripts taken as checks, in run order.
const CHECK_NAMES: [(&str, Kind); 7] = [
    ("lint", Kind::Lint),
    ("typecheck", Kind::Lint),
    ("type-check", Kind::Lint),
    ("vet", Kind::Lint),
    ("check", Kind::Test),
    ("test", Kind::Test),
    ("build", Kind::Build),
];

/// Proposes the checks for a repository from its file list and manifests.
pub fn detect(input: &ChecksInput) -> Result<Detection, Failure> {
    let mut checks: Vec<(Check, Kind)> = Vec::new();
    let mut notes: Vec<String> = Vec::new();
    let manifest = |name: &str| input.manifests.iter().find(|m| m.path == name);
    let has = |name: &str| input.files.iter().any(|f| f == name);

    // Task runners first.
    for name in ["justfile", "Justfile", ".justfile"] {
        if let Some(m) = manifest(name) {
            let found = runner_checks(&just_recipes(&m.content), "just", &m.path);
            if found.is_empty() {
                notes.push(format!("{}: no recipe named like a check", m.path));
            }
            checks.extend(found);
            break;
        }
    }
    for name in ["GNUmakefile", "makefile", "Makefile"] {
        if let Some(m) = manifest(name) {
            let found = runner_checks(&make_targets(&m.content), "make", &m.path);
            if found.is_empty() {
                notes.push(format!("{}: no target named like a check", m.path));
            }
            checks.extend(found);
            break;
        }
    }
    let runner_kinds: Vec<Kind> = checks.iter().map(|(_, k)| *k).collect();
    let mut language: Vec<(Check, Kind)> = Vec::new();

    if let Some(m) = manifest("package.json") {
        match package_scripts(&m.content) {
            Ok(scripts) => {
                let pm = package_manager(&input.files, &m.content);
                for (name, kind) in CHECK_NAMES {
                    let Some(body) = scripts.iter().find(|(n, _)| n == name).map(|(_, b)| b) else {
                        continue;
                    };
                    // `npm init` writes a test script that always fails.
                    if body.contains("no test specified") {
                        notes.push(format!(
                            "package.json: the `{name}` script is npm's placeholder; skipped"
                        ));
                        continue;
                    }
                    language.push((check(&format!("{pm} run {name}"), &m.path), kind));
                }
            }
            Err(problem) => notes.push(format!(
                "package.json: {problem}; its scripts were not read"
            )),
        }
    }
    if has("Cargo.toml") {
        language.push((check("cargo test", "Cargo.toml"), Kind::Test));
        language.push((check("cargo clippy", "Cargo.toml"), Kind::Lint));
    }
    if has("go.mod") {
        language.push((check("go test ./...", "go.mod"), Kind::Test));
        language.push((check("go vet ./...", "go.mod"), Kind::Lint));
    }
    if let Some(source) = pytest_source(input) {
        language.push((check("pytest", &source), Kind::Test));
    }

    for (g, kind) in language {
        if runner_kinds.contains(&kind) {
            notes.push(format!(
                "`{}` left out: a task runner already covers it",
                g.command
            ));
        } else {
            checks.push((g, kind));
        }
    }
    let mut out: Vec<Check> = Vec::new();
    for (g, _) in checks {
        if !out.iter().any(|o| o.command == g.command) {
            out.push(g);
        }
    }
    if out.is_empty() {
        notes.push("no checks detected; list them under `gates` in .hallmark.toml".to_string());
    }
    Ok(Detection {
        checks: out,
        setup: Vec::new(),
        left_out: Vec::new(),
        notes,
    })
}

fn check(command: &str, source: &str) -> Check {
    Check {
        command: command.to_string(),
        source: source.to_string(),
    }
}

fn runner_checks(names: &[String], runner: &str, source: &str) -> Vec<(Check, Kind)> {
    CHECK_NAMES
        .iter()
        .filter(|(name, _)| names.iter().any(|n| n == name))
        .map(|(name, kind)| (check(&format!("{runner} {name}"), source), *kind))
        .collect()
}

/// The npm-compatible client chosen by lockfile, then by `packageManager`.
fn package_manager(files: &[String], package_json: &str) -> &'static str {
    let has = |name: &str| files.iter().any(|f| f == name);
    if has("pnpm-lock.yaml") {
        "pnpm"
    } else if has("yarn.lock") {
        "yarn"
    } else if has("bun.lockb") || has("bun.lock") {
        "bun"
    } else if has("package-lock.json") || has("npm-shrinkwrap.json") {
        "npm"
    } else {
        let declared = serde_json::from_str::<serde_json::Value>(package_json)
            .ok()
            .and_then(|v| v.get("packageManager")?.as_str().map(str::to_owned))
            .unwrap_or_default();
        ["pnpm", "yarn", "bun"]
            .into_iter()
            .find(|pm| declared.starts_with(&format!("{pm}@")))
            .unwrap_or("npm")
    }
}

/// The `scripts` of a package.json, in file order.
fn package_scripts(content: &str) -> Result<Vec<(String, String)>, String> {
    let value: serde_json::Value =
        serde_json::from_str(content).map_err(|e| format!("not valid JSON ({e})"))?;
    let Some(scripts) = value.get("scripts") else {
        return Ok(Vec::new());
    };
    let scripts = scripts
        .as_object()
        .ok_or_else(|| "`scripts` is not an object".to_string())?;
    Ok(scripts
        .iter()
        .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
        .collect())
}

/// The explicit targets of a Makefile (no patterns, no special `.TARGETS`).
fn make_targets(content: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in content.lines() {
        if line.starts_with(['\t', ' ', '#', '.']) {
            continue;
        }
        let Some(colon) = line.find(':') else {
            continue;
        };
        let after = &line[colon + 1..];
        // `x := y` and `x ::= y` are assignments, not rules.
        if after.starts_with('=') || after.starts_with(":=") || line[..colon].contains('=') {
            continue;
        }
        for name in line[..colon].split_whitespace() {
            if !name.contains(['%', '$']) {
                out.push(name.to_string());
            }
        }
    }
    out
}

/// The recipe names of a justfile.
fn just_recipes(content: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in content.lines() {
        if line.starts_with([' ', '\t', '#', '[']) {
            continue;
        }
        let line = line.trim_start_matches('@');
        let Some(colon) = line.find(':') else {
            continue;
        };
        if line[colon + 1..].starts_with('=') {
            continue; // `x := y`
        }
        let head = &line[..colon];
        let Some(name) = head.split_whitespace().next() else {
            continue;
        };
        if ["set", "alias", "export", "import", "mod"].contains(&name) {
            continue;
        }
        if name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            out.push(name.to_string());
        }
    }
    out
}

/// The file that shows the repository uses pytest, if any.
fn pytest_source(input: &ChecksInput) -> Option<String> {
    let content = |name: &str| {
        input
            .manifests
            .iter()
            .find(|m| m.path == name)
            .map(|m| m.content.as_str())
    };
    if input.files.iter().any(|f| f == "pytest.ini") {
        return Some("pytest.ini".to_string());
    }
    if content("pyproject.toml").is_some_and(|c| c.contains("[tool.pytest")) {
        return Some("pyproject.toml".to_string());
    }
    if content("setup.cfg").is_some_and(|c| c.contains("[tool:pytest]")) {
        return Some("setup.cfg".to_string());
    }
    if content("tox.ini").is_some_and(|c| c.contains("[pytest]")) {
        return Some("tox.ini".to_string());
    }
    input
        .files
        .iter()
        .find(|f| f.rsplit('/').next() == Some("conftest.py"))
        .cloned()
}
