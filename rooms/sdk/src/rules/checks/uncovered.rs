//! What CI did not cover: checks taken from the task runners by name and from the
//! language's defaults, a build the chosen tests need first, setup from lockfiles,
//! and why the runners' other check-like recipes were left out.

use super::super::model::*;
use super::super::sources::{Runner, RunnerKind};
use super::judge::{call, judge_recipe};
use super::{Answer, Kind, Refusal, Repo, runner_word};

/// Recipe names taken as checks when CI shows nothing of their kind, in preference order.
const FALLBACK: &[(Kind, &[&str])] = &[
    (
        Kind::Format,
        &[
            "fmt-check",
            "format-check",
            "format:check",
            "check-format",
            "fmt:check",
            "check-fmt",
            "lint:format",
        ],
    ),
    (Kind::Lint, &["lint", "vet", "clippy", "lint:check"]),
    (
        Kind::Types,
        &[
            "typecheck",
            "type-check",
            "types",
            "check-types",
            "typecheck:ci",
        ],
    ),
    (Kind::Test, &["test", "tests", "check"]),
];

pub(super) fn fallbacks(repo: &Repo, ci_seen: bool, answer: &mut Answer) {
    for (kind, names) in FALLBACK {
        if answer.has_kind(*kind) {
            continue;
        }
        'runners: for runner in &repo.runners {
            if matches!(runner.kind, RunnerKind::Tox) {
                continue;
            }
            for name in *names {
                let found = match runner.kind {
                    RunnerKind::Nox => runner
                        .get(name)
                        .or_else(|| runner.get(&name.replace('-', "_"))),
                    _ => runner.get(name),
                };
                let Some(recipe) = found else { continue };
                if *name == "check" && runner.kind != RunnerKind::Make {
                    continue; // `just check` is usually `cargo check`, a build
                }
                let command = runner.invoke(&recipe.name);
                if let Some(why) = judge_recipe(repo, runner, recipe, &mut Vec::new()) {
                    answer.leave(&command, &runner.source, &why);
                    continue;
                }
                if answer.checks.iter().any(|(_, c, _)| c.command == command) {
                    continue;
                }
                answer.check(*kind, &command, &runner.source, None);
                break 'runners;
            }
        }
    }

    // Language defaults, for what neither CI nor a runner covers.
    // package.json scripts speak for the JavaScript side only: a Go or Rust module
    // next to them still gets its own defaults.
    let covered = |answer: &Answer, kind: Kind| {
        answer
            .checks
            .iter()
            .any(|(k, c, _)| *k == kind && c.source != "package.json")
    };
    let has = |p: &str| repo.has(p);
    if !covered(answer, Kind::Test) {
        if has("Cargo.toml") {
            answer.check(
                Kind::Test,
                "cargo test",
                "Cargo.toml",
                Some("cargo test".into()),
            );
        }
        if has("go.mod") {
            answer.check(
                Kind::Test,
                "go test ./...",
                "go.mod",
                Some("go test".into()),
            );
        }
        if let Some(tox) = repo.runner(|k| k == RunnerKind::Tox) {
            answer.check(Kind::Test, "tox -e py", &tox.source, Some("tox py".into()));
        } else if let Some(source) = pytest_source(repo) {
            answer.check(Kind::Test, "pytest", &source, Some("pytest".into()));
        }
    }
    if !ci_seen {
        if has("Cargo.toml") {
            if !covered(answer, Kind::Format) {
                answer.check(Kind::Format, "cargo fmt --all --check", "Cargo.toml", None);
            }
            if !covered(answer, Kind::Lint) {
                answer.check(
                    Kind::Lint,
                    "cargo clippy --all-targets -- -D warnings",
                    "Cargo.toml",
                    None,
                );
            }
        }
        if has("go.mod") && !covered(answer, Kind::Lint) {
            answer.check(Kind::Lint, "go vet ./...", "go.mod", None);
        }
        // A Makefile whose default target builds, in a repository with no other
        // language manifest: `make` is the build.
        if let Some(make) = repo.runner(|k| k == RunnerKind::Make) {
            let lang = [
                "Cargo.toml",
                "go.mod",
                "package.json",
                "pyproject.toml",
                "setup.py",
            ]
            .iter()
            .any(|p| has(p));
            if !lang
                && make
                    .default
                    .as_deref()
                    .is_some_and(|d| ["all", "build", "default"].contains(&d))
            {
                answer.check(
                    Kind::Build,
                    "make",
                    &make.source,
                    Some(format!("make {}", make.default.as_deref().unwrap_or(""))),
                );
            }
        }
        if has("configure.ac") {
            let boot = if has("autogen.sh") {
                "./autogen.sh"
            } else {
                "autoreconf -i"
            };
            answer.setup("bootstrap", boot, "configure.ac");
            answer.setup("configure", "./configure", "configure.ac");
        }
    }
    if has(".pre-commit-config.yaml") {
        answer.check(
            Kind::Lint,
            "pre-commit run --all-files",
            ".pre-commit-config.yaml",
            Some("pre-commit".into()),
        );
    }
}

/// Says why the runners' recipes that look like checks, releases or servers were not
/// written, so a person reading `hall init` need not wonder.
pub(super) fn explain_runners(repo: &Repo, answer: &mut Answer) {
    for runner in &repo.runners {
        if matches!(runner.kind, RunnerKind::Tox | RunnerKind::Nox) {
            continue;
        }
        for recipe in &runner.recipes {
            let command = runner.invoke(&recipe.name);
            if answer.checks.iter().any(|(_, c, _)| c.command == command) {
                continue;
            }
            let check_like = FALLBACK
                .iter()
                .any(|(_, names)| names.contains(&recipe.name.as_str()));
            match judge_recipe(repo, runner, recipe, &mut Vec::new()) {
                Some(
                    why @ (Refusal::Publishes
                    | Refusal::NeverEnds(_)
                    | Refusal::Undefined(..)
                    | Refusal::Placeholder),
                ) => answer.leave(&command, &runner.source, &why),
                Some(why) if check_like => answer.leave(&command, &runner.source, &why),
                _ => {}
            }
        }
    }
}

/// The file that shows the repository uses pytest, if any.
fn pytest_source(repo: &Repo) -> Option<String> {
    if repo.has("pytest.ini") {
        return Some("pytest.ini".to_string());
    }
    if repo
        .manifest("pyproject.toml")
        .is_some_and(|c| c.contains("[tool.pytest"))
    {
        return Some("pyproject.toml".to_string());
    }
    if repo
        .manifest("setup.cfg")
        .is_some_and(|c| c.contains("[tool:pytest]"))
    {
        return Some("setup.cfg".to_string());
    }
    if repo
        .manifest("tox.ini")
        .is_some_and(|c| c.contains("[pytest]"))
    {
        return Some("tox.ini".to_string());
    }
    repo.input
        .files
        .iter()
        .find(|f| f.rsplit('/').next() == Some("conftest.py"))
        .cloned()
}

/// When a chosen test runs what a build writes (`dist/`) and does not build first,
/// the runner's build recipe runs before it.
pub(super) fn build_before_tests(repo: &Repo, answer: &mut Answer) {
    if answer.has_kind(Kind::Build) {
        return;
    }
    let mut add = None;
    for (kind, c, _) in &answer.checks {
        if *kind != Kind::Test {
            continue;
        }
        for runner in &repo.runners {
            let Some(name) = runner_recipe_of(runner, &c.command) else {
                continue;
            };
            let Some(build) = runner.get("build") else {
                continue;
            };
            let body = transitive_body(repo, runner, &name, &mut Vec::new());
            let uses_output = body
                .iter()
                .any(|l| l.contains("dist/") || l.contains("./build/"));
            let builds = body
                .iter()
                .any(|l| call(repo, l).is_some_and(|(_, n)| n == "build"))
                || body.iter().any(|l| {
                    l.split("&&")
                        .any(|p| call(repo, p.trim()).is_some_and(|(_, n)| n == "build"))
                });
            if uses_output
                && !builds
                && judge_recipe(repo, runner, build, &mut Vec::new()).is_none()
            {
                add = Some((runner.invoke("build"), runner.source.clone()));
            }
        }
    }
    if let Some((cmd, src)) = add {
        answer.check(Kind::Build, &cmd, &src, None);
    }
}

/// The recipe a command line of this runner runs.
fn runner_recipe_of(runner: &Runner, command: &str) -> Option<String> {
    runner
        .recipes
        .iter()
        .find(|r| {
            runner.invoke(&r.name) == command
                || command.split_whitespace().last() == Some(r.name.as_str())
                    && command.starts_with(runner_word(runner))
        })
        .map(|r| r.name.clone())
}

fn transitive_body(
    repo: &Repo,
    runner: &Runner,
    name: &str,
    seen: &mut Vec<String>,
) -> Vec<String> {
    let Some(r) = runner.get(name) else {
        return Vec::new();
    };
    if seen.contains(&r.name) || seen.len() > 12 {
        return Vec::new();
    }
    seen.push(r.name.clone());
    let mut out = Vec::new();
    for line in &r.body {
        out.push(line.clone());
        for part in line.split("&&") {
            if let Some((r2, n2)) = call(repo, part.trim())
                && std::ptr::eq(r2, runner)
            {
                out.extend(transitive_body(repo, runner, &n2, seen));
            }
        }
    }
    out
}

/// Setup commands a lockfile makes obvious, for families CI did not already install.
pub(super) fn lockfile_setup(repo: &Repo, answer: &mut Answer) {
    let has = |p: &str| repo.has(p);
    let node = if has("pnpm-lock.yaml") {
        Some(("pnpm install --frozen-lockfile", "pnpm-lock.yaml"))
    } else if has("yarn.lock") {
        Some(if has(".yarnrc.yml") {
            ("yarn install --immutable", "yarn.lock")
        } else {
            ("yarn install --frozen-lockfile", "yarn.lock")
        })
    } else if has("bun.lockb") || has("bun.lock") {
        Some((
            "bun install --frozen-lockfile",
            if has("bun.lock") {
                "bun.lock"
            } else {
                "bun.lockb"
            },
        ))
    } else if has("package-lock.json") {
        Some(("npm ci", "package-lock.json"))
    } else if has("npm-shrinkwrap.json") {
        Some(("npm ci", "npm-shrinkwrap.json"))
    } else {
        None
    };
    let python = if has("uv.lock") {
        Some(("uv sync --frozen", "uv.lock"))
    } else if has("poetry.lock") {
        Some(("poetry install", "poetry.lock"))
    } else if has("Pipfile.lock") {
        Some(("pipenv sync --dev", "Pipfile.lock"))
    } else {
        None
    };
    // A lockfile speaks louder than CI's own install line for its family.
    for (family, found) in [("node", node), ("python", python)] {
        let Some((cmd, src)) = found else { continue };
        if let Some(i) = answer.setup.iter().position(|(f, _)| f == family) {
            let ci = &answer.setup[i].1.command;
            if ["--frozen", "--immutable", "--locked", "npm ci"]
                .iter()
                .any(|w| ci.contains(w))
            {
                continue;
            }
            answer.setup[i].1 = Check {
                command: cmd.to_string(),
                source: src.to_string(),
            };
        } else {
            answer.setup.insert(
                0,
                (
                    family.to_string(),
                    Check {
                        command: cmd.to_string(),
                        source: src.to_string(),
                    },
                ),
            );
        }
    }
}
