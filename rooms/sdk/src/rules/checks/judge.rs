//! One command or recipe judged on its own: a CI line cleaned into the commands it
//! runs, the refusals a command earns (it publishes, never ends, rewrites files or
//! cannot fail), a recipe judged through everything it runs, and the recipe a line
//! calls.

use super::super::sources::{self, Recipe, Runner, RunnerKind};
use super::{Refusal, Repo};

/// Cleans one CI command: GitHub expressions, leading variable assignments, wrappers.
pub(super) fn clean(line: &str) -> Vec<(String, bool)> {
    let line = sources::unquote(line).replace("${{ env.CARGO }}", "cargo");
    // Each `&&`/`;` part separately; a `cd` marks what follows as run elsewhere.
    let mut out = Vec::new();
    let mut elsewhere = false;
    for part in line.split("&&").flat_map(|p| p.split(';')) {
        let mut words: Vec<String> = Vec::new();
        let mut rest = part.split_whitespace().peekable();
        // Leading `VAR=value` assignments.
        while rest.peek().is_some_and(|w| {
            w.contains('=')
                && !w.starts_with('-')
                && w.split('=')
                    .next()
                    .is_some_and(|n| n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
        }) {
            rest.next();
        }
        let mut expr = false;
        for w in rest {
            if w.contains("${{") {
                expr = !w.contains("}}");
                let kept = w.split("${{").next().unwrap_or("");
                let kept = kept.trim_matches(['"', '\'']).trim_end_matches(['-', '_']);
                if !kept.is_empty() {
                    words.push(format!("{kept}\u{1}"));
                } else {
                    words.push("\u{1}".into());
                }
                continue;
            }
            if expr {
                expr = !w.contains("}}");
                continue;
            }
            words.push(sources::unquote(w).to_string());
        }
        // `vp exec pnpm run x` runs `pnpm run x`.
        if words.len() > 2 && words[0] == "vp" && words[1] == "exec" {
            words.drain(..2);
        }
        if words.first().is_some_and(|w| w == "cd") {
            elsewhere = true;
            continue;
        }
        if words.last().is_some_and(|w| w == "true") && words.iter().any(|w| w == "||") {
            continue; // `x || true` cannot fail
        }
        if !words.is_empty() {
            out.push((words.join(" "), elsewhere));
        }
    }
    out
}

/// Removes the expression markers `clean` left, and the words that were only one.
pub(super) fn plain(words: &[&str]) -> String {
    words
        .iter()
        .filter(|w| **w != "\u{1}")
        .map(|w| w.trim_end_matches('\u{1}'))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A body line or command judged on its own words: a refusal, or fine.
pub(super) fn judge_line(line: &str) -> Option<Refusal> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let has = |w: &str| words.contains(&w);
    let first = words.first().copied().unwrap_or("");
    let tool = first.rsplit('/').next().unwrap_or(first);
    let lower = line.to_ascii_lowercase();
    for w in &words {
        let w = w.trim_matches(|c: char| !c.is_ascii_alphanumeric() && c != '-');
        if ["publish", "upload", "deploy"].contains(&w) {
            return Some(Refusal::Publishes);
        }
    }
    if lower.contains("git push")
        || lower.contains("gh release")
        || lower.contains("git tag")
        || lower.contains("docker push")
        || lower.contains("gh pr create")
        || tool == "np"
        || (tool == "goreleaser" && !has("--snapshot") && !has("check"))
    {
        return Some(Refusal::Publishes);
    }
    if has("--watch") || has("-w") && ["tsc", "webpack", "rollup", "esbuild"].contains(&tool) {
        return Some(Refusal::NeverEnds("watches for changes"));
    }
    if words.windows(2).any(|p| p == ["tail", "-f"]) {
        return Some(Refusal::NeverEnds("follows a file"));
    }
    if (tool == "cargo" && words.get(1) == Some(&"watch"))
        || [
            "nodemon",
            "sphinx-autobuild",
            "serve",
            "http-server",
            "live-server",
        ]
        .contains(&tool)
        || (tool == "vite" && !has("build"))
        || (tool == "mkdocs" && has("serve"))
        || (tool == "next" && has("dev"))
        || (tool == "webpack" && has("serve"))
        || (tool == "docker" && has("run") && words.iter().any(|w| *w == "-it" || *w == "-ti"))
    {
        return Some(Refusal::NeverEnds("serves or runs until stopped"));
    }
    if tool == "bun" && has("--watch") {
        return Some(Refusal::NeverEnds("watches for changes"));
    }
    if rewrites(tool, &words) {
        return Some(Refusal::Rewrites);
    }
    if tool == "cargo" && words.get(1) == Some(&"clippy") && !denies_warnings(line) {
        return Some(Refusal::ChecksNothing(
            "plain `cargo clippy` exits 0 on warnings; add `-- -D warnings`",
        ));
    }
    if tool == "golangci-lint" && line.contains("--issues-exit-code=0") {
        return Some(Refusal::ChecksNothing("--issues-exit-code=0"));
    }
    None
}

fn denies_warnings(line: &str) -> bool {
    let l = line.replace(' ', "");
    l.contains("-Dwarnings")
        || l.contains("--deny=warnings")
        || l.contains("--denywarnings")
        || l.contains("-Dclippy::")
}

/// A formatter or fixer run to change files rather than to report.
fn rewrites(tool: &str, words: &[&str]) -> bool {
    let has = |w: &str| words.contains(&w);
    let checking = has("--check")
        || has("--check-only")
        || has("--diff")
        || has("-c")
        || has("--list-different")
        || has("-l") && tool != "gofumpt" && tool != "gofmt";
    match tool {
        "black" | "isort" | "ruff" if words.get(1) != Some(&"check") || has("--fix") => {
            !checking && (tool != "ruff" || words.get(1) == Some(&"format") || has("--fix"))
        }
        "prettier" | "oxfmt" | "biome" => {
            has("--write") || has("-w") || !checking && tool != "biome"
        }
        "gofmt" | "gofumpt" | "goimports" => has("-w"),
        "autoflake" | "autopep8" => has("--in-place") || has("-i"),
        "eslint" | "oxlint" | "xo" => has("--fix"),
        "cargo" => {
            (words.get(1) == Some(&"fmt") && !has("--check"))
                || (words.get(1) == Some(&"clippy") && has("--fix"))
                || words.get(1) == Some(&"update")
        }
        "go" => words.get(1) == Some(&"mod") && words.get(2) == Some(&"tidy"),
        _ => has("--fix") || has("--write") || has("--in-place"),
    }
}

/// Whether a recipe, with everything it runs, is a check; the refusal when not.
pub(super) fn judge_recipe(
    repo: &Repo,
    runner: &Runner,
    recipe: &Recipe,
    seen: &mut Vec<String>,
) -> Option<Refusal> {
    let name = recipe.name.to_ascii_lowercase();
    let base = name.rsplit([':', '-']).next().unwrap_or(&name);
    if ["publish", "release", "deploy", "upload"].contains(&base)
        || name.starts_with("release")
        || name.starts_with("publish")
    {
        return Some(Refusal::Publishes);
    }
    if [
        "dev", "serve", "start", "watch", "tail", "log", "logs", "live",
    ]
    .contains(&base)
        || name.starts_with("dev")
        || name.contains("watch")
        || name.ends_with("-live")
        || name.ends_with("-serve")
    {
        return Some(Refusal::NeverEnds("a server or watcher by its name"));
    }
    if seen.contains(&recipe.name) || seen.len() > 12 {
        return None;
    }
    seen.push(recipe.name.clone());
    if recipe.body.iter().any(|l| l.contains("no test specified")) {
        return Some(Refusal::Placeholder);
    }
    for dep in &recipe.deps {
        if let Some(r) = runner.get(dep)
            && let Some(why) = judge_recipe(repo, runner, r, seen)
        {
            return Some(why);
        }
    }
    for line in &recipe.body {
        for part in line
            .split("&&")
            .flat_map(|p| p.split(';'))
            .flat_map(|p| p.split(" || "))
        {
            let part = part.trim();
            if let Some(why) = judge_line(part) {
                return Some(why);
            }
            // vitest without `run` watches on a terminal.
            let words: Vec<&str> = part.split_whitespace().collect();
            if words.first() == Some(&"vitest")
                && !words.contains(&"run")
                && !words.contains(&"--run")
                && !words.contains(&"bench")
            {
                return Some(Refusal::NeverEnds("vitest watches unless given `run`"));
            }
            if words.first() == Some(&"jest") && words.iter().any(|w| w.starts_with("--watch")) {
                return Some(Refusal::NeverEnds("watches for changes"));
            }
            if let Some((r2, name2)) = call(repo, part) {
                match r2.get(&name2) {
                    Some(inner) => {
                        if let Some(why) = judge_recipe(repo, r2, inner, seen) {
                            return Some(why);
                        }
                    }
                    None if !r2.open => {
                        return Some(Refusal::Undefined(r2.invoke(&name2), r2.source.clone()));
                    }
                    None => {}
                }
            }
        }
    }
    None
}

/// The recipe a body line runs, when it calls one of the repository's runners.
pub(super) fn call<'r>(repo: &'r Repo, part: &str) -> Option<(&'r Runner, String)> {
    let words: Vec<&str> = part.split_whitespace().collect();
    let first = *words.first()?;
    let second = words.get(1).copied();
    let arg = |i: usize| words.get(i).map(|w| w.to_string());
    match first {
        "just" => Some((repo.runner(|k| k == RunnerKind::Just)?, arg(1)?)),
        "make" | "$(MAKE)" => {
            let name = words[1..]
                .iter()
                .find(|w| !w.starts_with('-') && !w.contains('='))?;
            if name.contains('$') {
                return None;
            }
            Some((repo.runner(|k| k == RunnerKind::Make)?, name.to_string()))
        }
        "task" => Some((repo.runner(|k| k == RunnerKind::Task)?, arg(1)?)),
        "npm" | "pnpm" | "yarn" | "bun" => {
            let scripts = repo.runner(|k| matches!(k, RunnerKind::Scripts(_)))?;
            // `bun run ./x.ts` runs a file, not a script.
            if words
                .get(2)
                .is_some_and(|w| w.contains('/') || w.ends_with(".ts") || w.ends_with(".js"))
            {
                return None;
            }
            let name = match second? {
                "run" | "run-script" => arg(2)?,
                "test" if first != "bun" => "test".into(),
                other if first != "npm" && first != "bun" && scripts.get(other).is_some() => {
                    other.to_string()
                }
                _ => return None,
            };
            Some((scripts, name))
        }
        _ => None,
    }
}
