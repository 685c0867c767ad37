//! The commands CI runs, each traced to what it means: an action, an install or
//! preparation step, a script, a task-runner recipe or package script (checked
//! through its body), a tox or nox environment, or a tool called directly.

use super::super::sources::{CiCommand, Recipe, Runner, RunnerKind};
use super::judge::{clean, judge_line, judge_recipe, plain};
use super::{Answer, Kind, Refusal, Repo, runner_word};

pub(super) fn from_ci(repo: &Repo, ci: &CiCommand, answer: &mut Answer) {
    if let Some((uses, args)) = &ci.uses {
        from_action(repo, ci, uses, args, answer);
        return;
    }
    for (command, elsewhere) in clean(&ci.line) {
        from_ci_command(repo, ci, &command, elsewhere, answer);
    }
}

fn from_action(repo: &Repo, ci: &CiCommand, uses: &str, args: &str, answer: &mut Answer) {
    let name = uses.split('@').next().unwrap_or(uses);
    if name.ends_with("golangci-lint-action") {
        if args.contains("--issues-exit-code=0") {
            answer.leave(
                "golangci-lint run",
                &ci.source,
                &Refusal::ChecksNothing("--issues-exit-code=0"),
            );
            return;
        }
        // The repository's own recipe for the same tool speaks for it.
        if let Some((r, recipe)) = recipe_running(repo, "golangci-lint") {
            answer.check(
                Kind::Lint,
                &r.invoke(&recipe),
                &r.source,
                Some("golangci-lint".into()),
            );
        } else {
            answer.check(
                Kind::Lint,
                "golangci-lint run",
                &ci.source,
                Some("golangci-lint".into()),
            );
        }
    } else if name.ends_with("pre-commit/action") {
        answer.check(
            Kind::Lint,
            "pre-commit run --all-files",
            &ci.source,
            Some("pre-commit".into()),
        );
    } else if name.ends_with("/tox.yml") && repo.runner(|k| k == RunnerKind::Tox).is_some() {
        answer.check(Kind::Test, "tox -e py", &ci.source, Some("tox py".into()));
    }
}

/// A single-line recipe of any runner whose command is `tool`.
fn recipe_running<'r>(repo: &'r Repo, tool: &str) -> Option<(&'r Runner, String)> {
    repo.runners.iter().find_map(|r| {
        r.recipes
            .iter()
            .find(|x| {
                x.body.len() == 1
                    && x.body[0].split_whitespace().next() == Some(tool)
                    && judge_line(&x.body[0]).is_none()
            })
            .map(|x| (r, x.name.clone()))
    })
}

fn from_ci_command(
    repo: &Repo,
    ci: &CiCommand,
    command: &str,
    elsewhere: bool,
    answer: &mut Answer,
) {
    let words: Vec<&str> = command.split_whitespace().collect();
    let Some(&first) = words.first() else { return };
    let src = ci.source.as_str();
    let shown = plain(&words);

    if let Some(why) = judge_line(&shown) {
        if matches!(why, Refusal::ChecksNothing(_)) && ci.deny_warnings && first == "cargo" {
            // RUSTFLAGS makes clippy's warnings errors in CI; say so on the command line.
            let cmd = if shown.contains(" -- ") {
                format!("{shown} -D warnings")
            } else {
                format!("{shown} -- -D warnings")
            };
            answer.check(Kind::Lint, &cmd, src, Some("cargo clippy".into()));
            return;
        }
        if !matches!(why, Refusal::Rewrites) || is_tool(first) {
            answer.leave(&shown, src, &why);
        }
        return;
    }

    // Installs and preparation.
    if let Some((family, cmd)) = install(repo, ci, &words) {
        answer.setup(family, &cmd, src);
        return;
    }

    let script = first.strip_prefix("./").unwrap_or(first);
    let script = if (first == "bash" || first == "sh") && words.len() > 1 {
        words[1].strip_prefix("./").unwrap_or(words[1])
    } else {
        script
    };
    if script.starts_with("scripts/") {
        from_script(repo, ci, script, &shown, answer);
        return;
    }

    match first {
        "make" | "just" | "task" => {
            let kind = match first {
                "make" => RunnerKind::Make,
                "just" => RunnerKind::Just,
                _ => RunnerKind::Task,
            };
            let target = words[1..]
                .iter()
                .find(|w| !w.starts_with('-') && !w.contains('='));
            let Some(runner) = repo.runner(|k| k == kind) else {
                // A Makefile that configure writes: its targets are the conventional ones.
                let generated = repo.has("configure.ac")
                    || repo.has("configure.in")
                    || repo.has("Makefile.am")
                    || repo.has("CMakeLists.txt");
                if kind == RunnerKind::Make && generated {
                    match target.copied() {
                        None | Some("all") => {
                            answer.check(Kind::Build, &shown, src, Some("make all".into()))
                        }
                        Some(t @ ("check" | "distcheck" | "test")) => {
                            answer.check(Kind::Test, &shown, src, Some(format!("make {t}")))
                        }
                        _ => {}
                    }
                }
                return;
            };
            let name = target
                .map(|w| w.to_string())
                .or_else(|| runner.default.clone());
            let Some(name) = name else { return };
            recipe_check(repo, runner, &name, &shown, src, ci.prepares, answer);
        }
        "npm" | "pnpm" | "yarn" | "bun" => from_package_command(repo, ci, &words, answer),
        "tox" => {
            let Some(tox) = repo.runner(|k| k == RunnerKind::Tox) else {
                return;
            };
            let env = words
                .iter()
                .position(|w| *w == "-e")
                .and_then(|i| words.get(i + 1))
                .map(|e| e.trim_end_matches('\u{1}'));
            match env {
                None | Some("") => {
                    answer.check(Kind::Test, "tox -e py", src, Some("tox py".into()))
                }
                Some(e)
                    if e.starts_with("py")
                        || words.iter().any(|w| w.contains('\u{1}')) && e.is_empty() =>
                {
                    answer.check(Kind::Test, "tox -e py", src, Some("tox py".into()))
                }
                Some(e) => recipe_check(repo, tox, e, &format!("tox -e {e}"), src, false, answer),
            }
        }
        "nox" => {
            let Some(nox) = repo.runner(|k| k == RunnerKind::Nox) else {
                return;
            };
            let session = words
                .iter()
                .position(|w| *w == "-s" || *w == "--session" || *w == "--sessions")
                .and_then(|i| words.get(i + 1))
                .map(|s| {
                    s.trim_end_matches('\u{1}')
                        .trim_end_matches(['-', '_'])
                        .to_string()
                });
            match session {
                Some(s) if !s.is_empty() => {
                    recipe_check(repo, nox, &s, &format!("nox -s {s}"), src, false, answer)
                }
                _ => {}
            }
        }
        "pre-commit" if words.get(1) == Some(&"run") => answer.check(
            Kind::Lint,
            "pre-commit run --all-files",
            src,
            Some("pre-commit".into()),
        ),
        _ => direct_tool(&words, &shown, src, elsewhere, answer),
    }
}

fn is_tool(first: &str) -> bool {
    [
        "cargo",
        "go",
        "pytest",
        "mypy",
        "ruff",
        "black",
        "isort",
        "flake8",
        "golangci-lint",
        "prettier",
        "eslint",
        "tsc",
        "make",
        "just",
        "task",
        "npm",
        "pnpm",
        "yarn",
        "bun",
        "tox",
        "nox",
    ]
    .contains(&first)
}

/// A tool CI calls directly: the check it is, or nothing when it is not one.
fn direct_tool(words: &[&str], shown: &str, src: &str, elsewhere: bool, answer: &mut Answer) {
    let first = words[0];
    let second = words.get(1).copied().unwrap_or("");
    match first {
        "cargo" => {
            let kind = match second {
                "fmt" => Kind::Format,
                "clippy" | "deny" => Kind::Lint,
                "build" => Kind::Build,
                "check" => {
                    if answer.has_kind(Kind::Test)
                        || answer
                            .checks
                            .iter()
                            .any(|(_, c, _)| c.command.starts_with("cargo check"))
                    {
                        return;
                    }
                    Kind::Build
                }
                "test" | "hack" | "nextest" => Kind::Test,
                _ => return,
            };
            let cmd = if elsewhere {
                format!("cargo {second}")
            } else {
                shown
                    .split_whitespace()
                    .filter(|w| *w != "--verbose")
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            answer.check(kind, &cmd, src, Some(format!("cargo {second}")));
        }
        "go" => {
            let kind = match second {
                "test" => Kind::Test,
                "vet" => Kind::Lint,
                "build" => Kind::Build,
                _ => return,
            };
            answer.check(kind, shown, src, Some(format!("go {second}")));
        }
        "pytest" | "py.test" => answer.check(Kind::Test, shown, src, Some("pytest".into())),
        "python" | "python3" if second == "-m" => {
            if let Some(m) = words.get(2) {
                if ["pytest", "mypy"].contains(m) {
                    let rest: Vec<&str> = words[2..].to_vec();
                    direct_tool(&rest, &rest.join(" "), src, elsewhere, answer);
                } else if *m == "tox" {
                    answer.check(Kind::Test, "tox -e py", src, Some("tox py".into()));
                }
            }
        }
        "mypy" | "pyright" => answer.check(Kind::Types, shown, src, Some(first.into())),
        "ruff" | "flake8" | "eslint" | "oxlint" => {
            answer.check(Kind::Lint, shown, src, Some(first.into()))
        }
        "black" | "isort" | "prettier" => {
            answer.check(Kind::Format, shown, src, Some(first.into()))
        }
        "tsc" => answer.check(Kind::Types, shown, src, Some("tsc".into())),
        "golangci-lint" => answer.check(Kind::Lint, shown, src, Some("golangci-lint".into())),
        _ => {}
    }
}

/// A dependency install or preparation step: its family and the command to record.
fn install(repo: &Repo, ci: &CiCommand, words: &[&str]) -> Option<(&'static str, String)> {
    let first = words[0];
    let second = words.get(1).copied().unwrap_or("");
    let shown = plain(words);
    let rest_plain = words.len() <= 2 || words[2..].iter().all(|w| w.starts_with('-'));
    match first {
        "npm" if second == "ci" => Some(("node", shown)),
        "npm" if (second == "install" || second == "i") && rest_plain => Some(("node", shown)),
        "pnpm" | "bun" if second == "install" || second == "i" => Some(("node", shown)),
        "yarn" if words.len() == 1 || second == "install" => Some(("node", shown)),
        "pip" | "pip3" | "uv" | "python" | "python3" => {
            let at = words.iter().position(|w| *w == "install")?;
            if words.get(at.wrapping_sub(1)) == Some(&"pip") || first.starts_with("pip") {
                let args = &words[at + 1..];
                let project = args.iter().any(|a| {
                    *a == "."
                        || *a == "-r"
                        || *a == "-e"
                        || a.starts_with("-e.")
                        || a.starts_with(".[")
                });
                return project.then_some(("python", shown));
            }
            if first == "uv" && second == "sync" {
                return Some(("python", shown));
            }
            None
        }
        "poetry" if second == "install" => Some(("python", shown)),
        "pipenv" if second == "install" || second == "sync" => Some(("python", shown)),
        "bundle" if second == "install" => Some(("ruby", shown)),
        "go" if second == "mod" && words.get(2) == Some(&"download") => Some(("go", shown)),
        "./autogen.sh" | "autogen.sh" | "./bootstrap" | "autoreconf" => Some(("bootstrap", shown)),
        "./configure" => Some(("configure", shown)),
        "make" | "task" | "just" => {
            let kind = match first {
                "make" => RunnerKind::Make,
                "task" => RunnerKind::Task,
                _ => RunnerKind::Just,
            };
            let runner = repo.runner(|k| k == kind)?;
            let name = words[1..]
                .iter()
                .find(|w| !w.starts_with('-') && !w.contains('='))
                .map(|w| w.to_string())
                .or_else(|| runner.default.clone())?;
            let prep = [
                "init",
                "install",
                "setup",
                "deps",
                "bootstrap",
                "prepare",
                "install-deps",
            ]
            .contains(&name.as_str());
            (prep && (ci.prepares || name != "install")).then_some(("runner", shown))
        }
        _ => {
            let script = first.strip_prefix("./").unwrap_or(first);
            let stem = script.strip_prefix("scripts/")?.trim_end_matches(".sh");
            ["install", "setup", "bootstrap"]
                .contains(&stem)
                .then_some(("runner", shown))
        }
    }
}

fn from_script(repo: &Repo, ci: &CiCommand, script: &str, shown: &str, answer: &mut Answer) {
    let stem = script["scripts/".len()..].trim_end_matches(".sh");
    let kind = match stem {
        "check" | "lint" => Kind::Lint,
        "typecheck" | "type-check" => Kind::Types,
        "build" => Kind::Build,
        "test" | "tests" | "coverage" => Kind::Test,
        "format-check" | "fmt-check" | "check-format" => Kind::Format,
        _ => return,
    };
    if !repo.has(script) {
        answer.leave(
            shown,
            &ci.source,
            &Refusal::Undefined(script.to_string(), "the repository".into()),
        );
        return;
    }
    if let Some(body) = repo.manifest(script) {
        for line in body.lines().filter(|l| !l.trim_start().starts_with('#')) {
            if let Some(why) = judge_line(line.trim().trim_start_matches("${PREFIX}")) {
                answer.leave(shown, &ci.source, &why);
                return;
            }
        }
    }
    answer.check(kind, shown, &ci.source, Some(script.to_string()));
}

fn from_package_command(repo: &Repo, ci: &CiCommand, words: &[&str], answer: &mut Answer) {
    let Some(scripts) = repo.runner(|k| matches!(k, RunnerKind::Scripts(_))) else {
        return;
    };
    let first = words[0];
    let second = words.get(1).copied().unwrap_or("");
    let name = match second {
        "run" | "run-script" => words.get(2).map(|w| w.to_string()),
        "test" if first != "bun" => Some("test".to_string()),
        "test" => return, // bun's own test runner
        "exec" | "dlx" | "x" | "add" | "remove" | "pack" | "ci" | "install" | "config" | "rm"
        | "ls" | "list" | "why" | "dedupe" | "version" => return,
        other if first != "npm" => Some(other.to_string()),
        _ => return,
    };
    let Some(name) = name else { return };
    if scripts.get(&name).is_none() && first != "npm" && second != "run" && !name.contains(':') {
        // `yarn prettier …` runs an installed binary, not a script.
        return;
    }
    let cmd = plain(&words[..if second == "run" { 3 } else { 2 }.min(words.len())]);
    recipe_check(repo, scripts, &name, &cmd, &ci.source, ci.prepares, answer);
}

/// A runner recipe CI calls: checked through its body, reported when it is missing.
fn recipe_check(
    repo: &Repo,
    runner: &Runner,
    name: &str,
    shown: &str,
    src: &str,
    prepares: bool,
    answer: &mut Answer,
) {
    let Some(recipe) = runner.get(name) else {
        if !runner.open {
            answer.leave(
                shown,
                src,
                &Refusal::Undefined(runner.invoke(name), runner.source.clone()),
            );
        }
        return;
    };
    let lower = name.to_ascii_lowercase();
    if prepares
        || [
            "init",
            "install",
            "setup",
            "deps",
            "bootstrap",
            "prepare",
            "clean",
        ]
        .contains(&lower.as_str())
    {
        if !["clean", "install"].contains(&lower.as_str()) || prepares {
            answer.setup("runner", shown, src);
        }
        return;
    }
    if let Some(why) = judge_recipe(repo, runner, recipe, &mut Vec::new()) {
        // CI runs it, so it ends there: vitest in CI runs once.
        if !matches!(why, Refusal::NeverEnds("vitest watches unless given `run`")) {
            answer.leave(shown, src, &why);
            return;
        }
    }
    // A recipe another chosen recipe already runs adds nothing.
    for (_, c, _) in &answer.checks {
        if let Some(other) = c.command.strip_prefix(&format!("{} ", runner_word(runner)))
            && let Some(o) = runner.get(other.trim())
            && runs(runner, o, name, &mut Vec::new())
        {
            return;
        }
    }
    let kind = kind_of(runner, recipe);
    answer.check(kind, shown, src, Some(runner.invoke(name)));
}

/// True when `recipe` runs `target` as a dependency or from its body.
fn runs(runner: &Runner, recipe: &Recipe, target: &str, seen: &mut Vec<String>) -> bool {
    if seen.contains(&recipe.name) {
        return false;
    }
    seen.push(recipe.name.clone());
    recipe
        .deps
        .iter()
        .any(|d| d == target || runner.get(d).is_some_and(|r| runs(runner, r, target, seen)))
}

/// The kind of check a recipe is, from its name first and then its body.
fn kind_of(runner: &Runner, recipe: &Recipe) -> Kind {
    let name = recipe.name.to_ascii_lowercase();
    let body = recipe.body.join(" ").to_ascii_lowercase();
    let named = |ws: &[&str]| ws.iter().any(|w| name.contains(w));
    if named(&["fmt", "format", "prettier"]) {
        Kind::Format
    } else if named(&[
        "lint",
        "vet",
        "clippy",
        "style",
        "eslint",
        "spell",
        "deps",
        "changelog",
    ]) {
        Kind::Lint
    } else if named(&["type", "mypy"])
        || (name == "check" && (body.starts_with("tsc") || body.contains("mypy")))
    {
        Kind::Types
    } else if named(&["build", "compile"])
        || name == "all"
        || (runner.kind == RunnerKind::Make
            && runner.default.as_deref() == Some(&recipe.name)
            && !named(&["test", "check"]))
    {
        Kind::Build
    } else {
        Kind::Test
    }
}
