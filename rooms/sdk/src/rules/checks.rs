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
//!
//! `judge` reads one command or recipe on its own, `ci` traces what CI runs, and
//! `uncovered` fills in what CI leaves out; this file holds what they share.

use super::model::*;
use super::sources::{self, Runner, RunnerKind};

// This file is included by path from the SDK, so its modules are found by path too.
#[path = "checks/ci.rs"]
mod ci;
#[path = "checks/judge.rs"]
mod judge;
#[path = "checks/uncovered.rs"]
mod uncovered;

use ci::from_ci;
use uncovered::{build_before_tests, explain_runners, fallbacks, lockfile_setup};

/// What a check proves; also its place in the run order.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Kind {
    Format,
    Lint,
    Types,
    Build,
    Test,
}

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

/// The words that start a command line running one of this runner's recipes.
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
