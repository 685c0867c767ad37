//! What a command is for, in four words: does it only read, run tests, build, or change
//! something? The tool-call policy needs this to tell a test loop (normal) from the
//! same write repeated (flailing); the gates themselves never read it.
//!
//! It is read from the simple commands the shell analysis met ([`Analysis::programs`]),
//! wrappers peeled, plus the effects the gates found: any write the gates see makes the
//! command `mutating`, whatever the program is called.

use super::classify::SHELLS;
use super::programs::READERS;
use super::wrappers::Wrapper;
use super::{Analysis, Effect};

/// The most program words kept for a command.
const MAX_WORDS: usize = 32;

/// What a command does, from weakest to strongest.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum CommandKind {
    /// Only reads.
    ReadOnly,
    /// Runs tests.
    Test,
    /// Builds, checks or lints.
    Build,
    /// The analysis can't tell.
    Unknown,
    /// Changes files, a repository or anything else.
    Mutating,
}

/// The kind of a whole command, with the words it was read from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Kinds {
    /// The strongest kind among its simple commands.
    pub kind: CommandKind,
    /// Each simple command's program and subcommand (`git commit`, `cargo test`).
    pub words: Vec<String>,
    /// It makes a commit.
    pub commits: bool,
    /// It tells Hallmark what a commit fixed (`hall fixed`).
    pub reports_fix: bool,
}

/// More programs that only read or print, besides the gates'
/// own list of readers ([`super::programs::READERS`]).
const QUIET: &[&str] = &[
    "sort", "uniq", "tr", "yq", "xxd", "cd", "pushd", "popd", "fd", "exa", "eza", "locate", "env",
    "printenv", "command",
];

/// Subcommands of git that only read.
const GIT_READS: &[&str] = &[
    "status",
    "log",
    "diff",
    "show",
    "blame",
    "rev-parse",
    "ls-files",
    "grep",
    "describe",
    "shortlog",
    "reflog",
    "cat-file",
    "ls-tree",
    "rev-list",
    "merge-base",
    "name-rev",
    "for-each-ref",
    "show-ref",
    "whatchanged",
    "cherry",
    "count-objects",
];

/// `hall` verbs that only read.
const HALL_READS: &[&str] = &[
    "status", "log", "findings", "inbox", "trace", "history", "export", "usage", "help", "queue",
    "schema", "doctor", "verify", "gazette", "rooms", "policy",
];

/// Test runners, by program.
const TEST_PROGRAMS: &[&str] = &[
    "pytest", "py.test", "jest", "vitest", "mocha", "rspec", "phpunit", "ctest", "tox", "nox",
    "ava", "tap", "karma", "busted", "prove",
];

/// Build, check and lint tools, by program.
const BUILD_PROGRAMS: &[&str] = &[
    "tsc",
    "mypy",
    "pyright",
    "eslint",
    "ruff",
    "flake8",
    "pylint",
    "golangci-lint",
    "cmake",
    "ninja",
    "javac",
    "gcc",
    "cc",
    "clang",
    "g++",
    "rustc",
    "bazel",
    "buck",
    "meson",
    "shellcheck",
    "hadolint",
    "tflint",
    "biome",
];

/// Package runners whose script or subcommand name says what it does.
const RUNNERS: &[&str] = &[
    "cargo",
    "npm",
    "pnpm",
    "yarn",
    "bun",
    "deno",
    "go",
    "make",
    "gmake",
    "just",
    "mvn",
    "gradle",
    "./gradlew",
    "dotnet",
    "swift",
    "mix",
    "poetry",
    "uv",
    "hatch",
    "task",
    "npx",
    "bunx",
    "pnpx",
];

/// The kind of `analysis`'s command.
pub fn kinds(analysis: &Analysis) -> Kinds {
    let mut kind = None::<CommandKind>;
    let mut words = Vec::new();
    let mut commits = false;
    let mut reports_fix = false;
    let mut raise = |k: CommandKind| kind = Some(kind.map_or(k, |old| old.max(k)));
    for f in &analysis.findings {
        match &f.effect {
            Effect::Commit { .. } => {
                commits = true;
                raise(CommandKind::Mutating);
            }
            Effect::Unfollowable { .. } | Effect::PathUse { .. } => {}
            _ => raise(CommandKind::Mutating),
        }
    }
    for argv in &analysis.programs {
        let Some(first) = argv.first() else { continue };
        let name = first.rsplit('/').next().unwrap_or(first);
        // Wrappers and shells are met again as the command they run.
        if SHELLS.contains(&name) || Wrapper::named(name).is_some() && name != "env" {
            continue;
        }
        let sub = subcommand(&argv[1..]);
        if words.len() < MAX_WORDS {
            words.push(match sub {
                Some(s) if has_subcommands(name) => format!("{name} {s}"),
                _ => name.to_string(),
            });
        }
        if name == "hall" && sub == Some("fixed") {
            reports_fix = true;
        }
        if name == "git" && sub == Some("commit") {
            commits = true;
        }
        raise(of(name, sub, &argv[1..]));
    }
    Kinds {
        kind: kind.unwrap_or(CommandKind::Unknown),
        words,
        commits,
        reports_fix,
    }
}

/// Programs whose first word after the options names what they do.
fn has_subcommands(name: &str) -> bool {
    matches!(
        name,
        "git" | "hall" | "gh" | "docker" | "kubectl" | "pip" | "pip3" | "python" | "python3"
    ) || RUNNERS.contains(&name)
}

/// The first argument that isn't an option: a subcommand, script or target name.
fn subcommand(args: &[String]) -> Option<&str> {
    let mut i = 0;
    while let Some(a) = args.get(i) {
        // `git -C dir`, `cargo +nightly`, `npm --prefix dir`: skip options and their
        // values where the value is a separate word the option is known to take.
        if a.starts_with('-') || a.starts_with('+') {
            i += if matches!(a.as_str(), "-C" | "-c" | "--prefix" | "--manifest-path") {
                2
            } else {
                1
            };
            continue;
        }
        return Some(a.as_str());
    }
    None
}

/// One simple command's kind.
fn of(name: &str, sub: Option<&str>, args: &[String]) -> CommandKind {
    use CommandKind::*;
    let has = |flag: &str| args.iter().any(|a| a == flag);
    match name {
        "git" => match sub {
            Some(s) if GIT_READS.contains(&s) => ReadOnly,
            // `git branch`, `git remote` and `git tag` with no further words only list;
            // a bare `git stash` stashes, `git stash list` lists.
            Some("branch" | "remote" | "tag") if args.len() <= 1 => ReadOnly,
            Some("stash") if args.get(1).is_some_and(|a| a == "list" || a == "show") => ReadOnly,
            Some("branch" | "remote") if has("-v") || has("-a") || has("--list") => ReadOnly,
            _ => Mutating,
        },
        "hall" => match sub {
            Some(s) if HALL_READS.contains(&s) => ReadOnly,
            _ => Mutating,
        },
        "gh" => match sub {
            Some("pr" | "issue" | "run" | "repo" | "release")
                if args.get(1).is_some_and(|a| {
                    matches!(
                        a.as_str(),
                        "view" | "list" | "status" | "checks" | "diff" | "watch"
                    )
                }) =>
            {
                ReadOnly
            }
            _ => Unknown,
        },
        "find" => {
            if args.iter().any(|a| {
                matches!(
                    a.as_str(),
                    "-exec" | "-execdir" | "-delete" | "-ok" | "-okdir" | "-fprint" | "-fls"
                )
            }) {
                Unknown
            } else {
                ReadOnly
            }
        }
        "sed" | "awk" | "gawk" | "perl" => {
            // In-place edits are effects the gates report; without one these print.
            if has("-i") || args.iter().any(|a| a.starts_with("-i")) {
                Mutating
            } else if name == "sed" {
                ReadOnly
            } else {
                Unknown
            }
        }
        "python" | "python3" | "node" | "ruby" => match (sub, args.first().map(String::as_str)) {
            (_, Some("-m")) => match args.get(1).map(String::as_str) {
                Some("pytest" | "unittest" | "nose2") => Test,
                Some("mypy" | "pyflakes" | "compileall" | "ruff" | "flake8" | "pylint") => Build,
                _ => Unknown,
            },
            _ => Unknown,
        },
        n if READERS.contains(&n) || QUIET.contains(&n) => ReadOnly,
        n if TEST_PROGRAMS.contains(&n) => Test,
        n if BUILD_PROGRAMS.contains(&n) => {
            if has("--fix") || has("--write") || has("-w") {
                Mutating
            } else {
                Build
            }
        }
        "prettier" | "black" | "rustfmt" | "gofmt" | "isort" => {
            if has("--check") || has("-l") || has("--list-different") || has("--diff") {
                Build
            } else {
                Mutating
            }
        }
        n if RUNNERS.contains(&n) => runner(n, sub, args),
        "rm" | "mv" | "cp" | "mkdir" | "rmdir" | "touch" | "chmod" | "chown" | "ln" | "tee"
        | "patch" | "install" | "dd" | "truncate" | "pip" | "pip3" | "apt" | "apt-get" | "brew"
        | "curl" | "wget" => Mutating,
        _ => Unknown,
    }
}

/// A package runner's kind, from its subcommand or script name.
fn runner(name: &str, sub: Option<&str>, args: &[String]) -> CommandKind {
    use CommandKind::*;
    // `npm run test:unit`, `yarn test`, `npx vitest run`, `make check`.
    let target = match (name, sub) {
        ("npm" | "pnpm" | "yarn" | "bun", Some("run" | "run-script")) => {
            subcommand(args.get(1..).unwrap_or_default())
        }
        _ => sub,
    };
    let Some(t) = target else {
        return if matches!(name, "make" | "gmake" | "just" | "task") {
            Build
        } else {
            Unknown
        };
    };
    let head = t.split([':', '-', '.']).next().unwrap_or(t);
    if matches!(name, "npx" | "bunx" | "pnpx") {
        return of(t, subcommand(args.get(1..).unwrap_or_default()), &args[1..]);
    }
    match head {
        "test" | "tests" | "nextest" | "spec" | "e2e" | "bench" => Test,
        "check" if !matches!(name, "make" | "gmake") => Build,
        "check" => Test,
        "build" | "clippy" | "lint" | "vet" | "typecheck" | "tsc" | "compile" | "doc" | "tidy"
        | "verify" | "package" => Build,
        "fmt" | "format" if args.iter().any(|a| a == "--check") => Build,
        "install" | "ci" | "i" | "add" | "remove" | "uninstall" | "update" | "upgrade" | "fmt"
        | "format" | "publish" | "init" | "new" | "fix" | "get" | "sync" | "lock" => Mutating,
        "run" | "exec" | "start" | "dev" | "serve" | "watch" => Unknown,
        _ if matches!(name, "make" | "gmake" | "just" | "task") => Build,
        _ => Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{StaticContext, analyze};

    fn kind(cmd: &str) -> Kinds {
        kinds(&analyze(cmd, &StaticContext::default()))
    }

    #[test]
    fn each_command_has_the_kind_a_person_would_give_it() {
        use CommandKind::*;
        for (cmd, want) in [
            ("ls -la src", ReadOnly),
            ("cat src/lib.rs | grep -n parse | head -5", ReadOnly),
            ("git status", ReadOnly),
            ("git -C ../other log --oneline -5", ReadOnly),
            ("git diff HEAD~1 -- src/", ReadOnly),
            ("git stash", Mutating),
            ("git stash list", ReadOnly),
            ("git branch", ReadOnly),
            ("git branch -D old", Mutating),
            ("find . -name '*.rs'", ReadOnly),
            ("find . -name '*.tmp' -delete", Mutating),
            ("hall status --json", ReadOnly),
            ("gh pr checks 12", ReadOnly),
            ("cargo test", Test),
            ("cargo test -p hallmark --lib parse", Test),
            ("timeout 60 cargo nextest run", Test),
            ("python -m pytest -x tests/test_api.py", Test),
            ("pytest -q", Test),
            ("npm test", Test),
            ("npm run test:unit", Test),
            ("npx vitest run", Test),
            ("go test ./...", Test),
            ("make test", Test),
            ("cargo build --release", Build),
            ("cargo clippy --all-targets -- -D warnings", Build),
            ("cd host && cargo check 2>&1 | tail -20", Build),
            ("npm run build", Build),
            ("tsc --noEmit", Build),
            ("make", Build),
            ("cargo fmt --all --check", Build),
            ("cargo fmt", Mutating),
            ("echo hi > notes.txt", Mutating),
            ("sed -i 's/a/b/' src/lib.rs", Mutating),
            ("git add -A && git commit -m wip", Mutating),
            ("rm -rf target", Mutating),
            ("npm install", Mutating),
            ("hall fixed F1", Mutating),
            ("./scripts/deploy.sh", Unknown),
            ("python script.py", Unknown),
            ("cargo test && ./run-me", Unknown),
            ("cargo build && cargo test", Build),
        ] {
            assert_eq!(kind(cmd).kind, want, "{cmd}");
        }
    }

    #[test]
    fn commits_and_fix_reports_are_named_through_wrappers() {
        let k = kind("git add -A && git commit -m 'fix parser'");
        assert!(k.commits);
        assert!(!k.reports_fix);
        assert_eq!(k.words, ["git add", "git commit"]);
        let k = kind("cd /w/x && hall --json fixed F1 F2");
        assert!(k.reports_fix && !k.commits);
        assert_eq!(k.words, ["cd", "hall fixed"]);
        let k = kind("sh -c 'git commit -am wip'");
        assert!(k.commits, "{k:?}");
        assert!(!kind("git log --grep commit").commits);
    }
}
