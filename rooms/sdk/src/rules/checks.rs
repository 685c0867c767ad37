//! The built-in check-detection rules, as a pure function over the checks world's
//! types (named only through `super::model`).
//!
//! What the repository's CI runs on a change is the strongest evidence of its checks,
//! so the rules start there: each command a workflow runs is traced to what it means
//! (a task-runner recipe with its body and dependencies, a package script, a tox or nox
//! environment, a tool called directly) and kept when it terminates, checks rather than
//! rewrites, and publishes nothing. A recipe CI calls that no file defines is reported,
//! never written. Kinds of check CI does not cover (format, lint, types, tests) are then
//! taken from the task runners by name, bodies read the same way, and last from the
//! language's defaults. Setup commands come from lockfiles and from CI's install steps.
//!
//! The answer is ordered the way the repository needs it: format, lint and type checks
//! first (cheap, likely to fail), then builds, then the tests that may need them.

use super::model::*;
use super::sources::{self, CiCommand, Recipe, Runner, RunnerKind};

/// What a check proves; also its place in the run order.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Kind {
    Format,
    Lint,
    Types,
    Build,
    Test,
}

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

/// Why a command is not a check.
#[derive(Clone, Debug, PartialEq)]
enum Refusal {
    Publishes,
    NeverEnds(&'static str),
    Rewrites,
    ChecksNothing(&'static str),
    Undefined(String, String),
    Placeholder,
}

impl Refusal {
    fn reason(&self) -> String {
        match self {
            Self::Publishes => "publishes or releases".into(),
            Self::NeverEnds(why) => format!("never terminates ({why})"),
            Self::Rewrites => "rewrites files instead of checking them".into(),
            Self::ChecksNothing(why) => format!("cannot fail ({why})"),
            Self::Undefined(what, file) => format!("calls `{what}`, which {file} does not define"),
            Self::Placeholder => "npm's placeholder test script, which always fails".into(),
        }
    }
}

/// Everything the rules read, parsed once.
struct Repo<'a> {
    input: &'a ChecksInput,
    runners: Vec<Runner>,
    /// The npm-compatible client.
    pm: &'static str,
    notes: Vec<String>,
}

impl Repo<'_> {
    fn has(&self, path: &str) -> bool {
        self.input.files.iter().any(|f| f == path)
    }

    fn runner(&self, kind: impl Fn(RunnerKind) -> bool) -> Option<&Runner> {
        self.runners.iter().find(|r| kind(r.kind))
    }

    fn manifest(&self, path: &str) -> Option<&str> {
        self.input
            .manifests
            .iter()
            .find(|m| m.path == path)
            .map(|m| m.content.as_str())
    }
}

/// The answer being built: proposals in discovery order, then sorted.
#[derive(Default)]
struct Answer {
    checks: Vec<(Kind, Check, Option<String>)>,
    setup: Vec<(String, Check)>,
    left_out: Vec<LeftOut>,
}

impl Answer {
    fn has_kind(&self, kind: Kind) -> bool {
        self.checks.iter().any(|(k, _, _)| *k == kind)
    }

    /// Adds a check unless one with the same `key` is there; `key` names what it runs
    /// (`make test`, `cargo test`) so that two spellings of one check stay one.
    fn check(&mut self, kind: Kind, command: &str, source: &str, key: Option<String>) {
        let key = key.unwrap_or_else(|| command.to_string());
        if self
            .checks
            .iter()
            .any(|(_, c, k)| c.command == command || k.as_deref() == Some(key.as_str()))
        {
            return;
        }
        self.checks.push((
            kind,
            Check {
                command: command.to_string(),
                source: source.to_string(),
            },
            Some(key),
        ));
    }

    fn setup(&mut self, family: &str, command: &str, source: &str) {
        if self
            .setup
            .iter()
            .any(|(f, c)| f == family || c.command == command)
        {
            return;
        }
        self.setup.push((
            family.to_string(),
            Check {
                command: command.to_string(),
                source: source.to_string(),
            },
        ));
    }

    fn leave(&mut self, command: &str, source: &str, why: &Refusal) {
        if self.left_out.iter().any(|l| l.command == command) {
            return;
        }
        self.left_out.push(LeftOut {
            command: command.to_string(),
            source: source.to_string(),
            reason: why.reason(),
        });
    }
}

/// Proposes the checks and setup for a repository from its files, manifests and CI.
pub fn detect(input: &ChecksInput) -> Result<Detection, Failure> {
    let mut repo = read(input);
    let mut answer = Answer::default();

    let mut ci_seen = false;
    for file in &input.ci {
        let parsed = sources::ci(&file.path, &file.content);
        for (what, why) in parsed.skipped {
            repo.notes
                .push(format!("{what}: not read as checks ({why})"));
        }
        for command in parsed.commands {
            ci_seen = true;
            from_ci(&repo, &command, &mut answer);
        }
    }
    fallbacks(&repo, ci_seen, &mut answer);
    build_before_tests(&repo, &mut answer);
    explain_runners(&repo, &mut answer);
    lockfile_setup(&repo, &mut answer);

    answer.checks.sort_by_key(|(k, _, _)| *k);
    let checks: Vec<Check> = answer.checks.into_iter().map(|(_, c, _)| c).collect();
    let mut notes = repo.notes;
    if checks.is_empty() {
        notes.push("no checks detected; list them under `gates` in .hallmark.toml".to_string());
    }
    Ok(Detection {
        checks,
        setup: answer.setup.into_iter().map(|(_, c)| c).collect(),
        left_out: answer.left_out,
        notes,
    })
}

fn read(input: &ChecksInput) -> Repo<'_> {
    let mut repo = Repo {
        input,
        runners: Vec::new(),
        pm: "npm",
        notes: Vec::new(),
    };
    let content = |p: &str| {
        input
            .manifests
            .iter()
            .find(|m| m.path == p)
            .map(|m| m.content.as_str())
    };
    if let Some((p, c)) = ["justfile", "Justfile", ".justfile"]
        .iter()
        .find_map(|p| content(p).map(|c| (*p, c)))
    {
        repo.runners.push(sources::justfile(p, c));
    }
    if let Some((p, c)) = ["GNUmakefile", "makefile", "Makefile"]
        .iter()
        .find_map(|p| content(p).map(|c| (*p, c)))
    {
        repo.runners.push(sources::makefile(p, c));
    }
    if let Some((p, c)) = ["Taskfile.yml", "Taskfile.yaml"]
        .iter()
        .find_map(|p| content(p).map(|c| (*p, c)))
    {
        repo.runners.push(sources::taskfile(p, c));
    }
    if let Some(c) = content("package.json") {
        let pm = package_manager(&input.files, c);
        repo.pm = pm;
        match sources::package_scripts("package.json", c, pm) {
            Ok(r) => repo.runners.push(r),
            Err(problem) => repo.notes.push(format!(
                "package.json: {problem}; its scripts were not read"
            )),
        }
    }
    if let Some(r) = content("tox.ini")
        .and_then(|c| sources::tox("tox.ini", c))
        .or_else(|| content("pyproject.toml").and_then(|c| sources::tox("pyproject.toml", c)))
    {
        repo.runners.push(r);
    }
    if let Some(c) = content("noxfile.py") {
        repo.runners.push(sources::noxfile("noxfile.py", c));
    }
    repo
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

// ---------------------------------------------------------------- reading a command

/// Cleans one CI command: GitHub expressions, leading variable assignments, wrappers.
fn clean(line: &str) -> Vec<(String, bool)> {
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
fn plain(words: &[&str]) -> String {
    words
        .iter()
        .filter(|w| **w != "\u{1}")
        .map(|w| w.trim_end_matches('\u{1}'))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A body line or command judged on its own words: a refusal, or fine.
fn judge_line(line: &str) -> Option<Refusal> {
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
fn judge_recipe(
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
fn call<'r>(repo: &'r Repo, part: &str) -> Option<(&'r Runner, String)> {
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

// ---------------------------------------------------------------- CI

fn from_ci(repo: &Repo, ci: &CiCommand, answer: &mut Answer) {
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

fn runner_word(r: &Runner) -> &'static str {
    match r.kind {
        RunnerKind::Just => "just",
        RunnerKind::Make => "make",
        RunnerKind::Task => "task",
        RunnerKind::Scripts(pm) => pm,
        RunnerKind::Tox => "tox -e",
        RunnerKind::Nox => "nox -s",
    }
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

// ---------------------------------------------------------------- what CI did not cover

fn fallbacks(repo: &Repo, ci_seen: bool, answer: &mut Answer) {
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
fn explain_runners(repo: &Repo, answer: &mut Answer) {
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
fn build_before_tests(repo: &Repo, answer: &mut Answer) {
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
fn lockfile_setup(repo: &Repo, answer: &mut Answer) {
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
