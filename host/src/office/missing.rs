//! Telling a check that failed for want of a tool from one that failed on the change.
//!
//! A check whose program is not installed (the shell's exit 127, "command not found")
//! or whose dependencies were never installed (node's `Cannot find module`, python's
//! `No module named`) says nothing about the commit. Sending it to the fixer would spend
//! a model run on something only a person (or a `setup` step) can put right, so the
//! checks step holds the item instead, naming what is missing. This module only reads
//! the exit code and the output; it touches nothing.

/// What kind of thing a check could not find.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Needs {
    /// A program the shell could not find on `PATH`.
    Program,
    /// A node package that `require` or `import` could not resolve.
    NodePackage,
    /// A python module that `import` could not find.
    PythonModule,
    /// A cargo subcommand that is not installed (`cargo nextest`).
    CargoCommand,
}

/// A failure that names something missing where the check ran.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Missing {
    /// The program, package or module, as the message names it (a package's root:
    /// `@scope/pkg` for `@scope/pkg/lib/x`, `yaml` for `yaml.parser`).
    pub what: String,
    pub needs: Needs,
    /// The line of output that said so (empty when only the exit code did).
    pub line: String,
}

/// The exit code a POSIX shell gives a command it could not find.
pub const NOT_FOUND_EXIT: i32 = 127;

/// Whether a failed run of `command` (exit `exit_code`, printing `output`) failed for
/// want of a tool or a dependency, and which.
pub fn classify(command: &str, exit_code: i32, output: &str) -> Option<Missing> {
    if exit_code == 0 {
        return None;
    }
    for raw in output.lines() {
        let line = raw.trim();
        let found = shell_not_found(line)
            .map(|w| (w, Needs::Program))
            .or_else(|| {
                crate::platform::SHELL_IS_CMD
                    .then(|| cmd_not_recognized(line))
                    .flatten()
                    .map(|w| (w, Needs::Program))
            })
            .or_else(|| node_missing(line).map(|w| (w, Needs::NodePackage)))
            .or_else(|| python_missing(line).map(|w| (w, Needs::PythonModule)))
            .or_else(|| cargo_missing(line).map(|w| (w, Needs::CargoCommand)));
        if let Some((what, needs)) = found
            && plausible(&what)
        {
            return Some(Missing {
                what,
                needs,
                line: line.to_string(),
            });
        }
    }
    // Exit 127 with nothing recognisable said: the shell could not run the command's
    // own program.
    if exit_code == NOT_FOUND_EXIT {
        let what = first_program(command).filter(|w| plausible(w))?;
        return Some(Missing {
            what,
            needs: Needs::Program,
            line: String::new(),
        });
    }
    None
}

/// What a person can run about `missing` for item `id`: install it, add a `setup` step,
/// then `hall retry`.
pub fn next(missing: &Missing, id: &str) -> Vec<String> {
    let what = &missing.what;
    // Shown between backticks, one each: plain words, no backticks of their own.
    let mut next = match missing.needs {
        Needs::Program => vec![
            format!("install {what} on the PATH hall daemon runs with"),
            format!(
                "edit .hallmark.toml: setup = [\"…\"] (a command that installs {what}), committed on the base branch"
            ),
        ],
        Needs::NodePackage => vec![
            "edit .hallmark.toml: setup = [\"npm ci\"] (or your package manager's install), committed on the base branch".to_string(),
            format!("add {what} to package.json's dependencies"),
        ],
        Needs::PythonModule => vec![
            "edit .hallmark.toml: setup = [\"uv sync --frozen\"] (or pip install -r requirements.txt), committed on the base branch".to_string(),
            format!("python3 -m pip install {what}"),
        ],
        Needs::CargoCommand => vec![format!("cargo install cargo-{what}")],
    };
    next.push(format!("hall retry {id} --reason \"installed {what}\""));
    next
}

/// A name a message could really mean: one word, not a path inside the checkout (a
/// script the change deleted is the change's problem, not a missing tool).
fn plausible(what: &str) -> bool {
    !what.is_empty()
        && what.len() <= 200
        && !what.chars().any(char::is_whitespace)
        && !what.starts_with('.')
        && (what.starts_with('/') || !what.contains('/') || what.starts_with('@'))
}

/// The shells' "not found" lines: dash `sh: 1: jest: not found`, busybox
/// `sh: jest: not found`, bash `bash: line 1: jest: command not found`, zsh
/// `zsh: command not found: jest`, fish `fish: Unknown command: jest`, and `env`'s
/// `env: 'node': No such file or directory` for a script's `#!/usr/bin/env node`.
fn shell_not_found(line: &str) -> Option<String> {
    // zsh and fish put the name last.
    for marker in ["command not found: ", "Unknown command: "] {
        if let Some((head, name)) = line.split_once(marker)
            && head.ends_with(": ")
            && is_word(head.trim_end_matches(": "))
        {
            return Some(unquote(name.trim()).to_string());
        }
    }
    for suffix in [": command not found", ": not found"] {
        if let Some(rest) = line.strip_suffix(suffix) {
            let parts: Vec<&str> = rest.split(": ").collect();
            // `prog: name`, or `prog: <line>: name`.
            let ok = match parts.as_slice() {
                [prog, _] => is_word(prog),
                [prog, at, _] => is_word(prog) && is_line_number(at),
                _ => false,
            };
            if ok {
                return parts.last().map(|n| unquote(n).to_string());
            }
        }
    }
    if let Some(rest) = line.strip_suffix(": No such file or directory") {
        let (prog, name) = rest.split_once(": ")?;
        let prog = prog.rsplit('/').next().unwrap_or(prog);
        if prog == "env" {
            return Some(unquote(name).to_string());
        }
    }
    None
}

/// Windows `cmd`'s `'jest' is not recognized as an internal or external command,`.
fn cmd_not_recognized(line: &str) -> Option<String> {
    let (name, _) = line.split_once(" is not recognized as an internal or external command")?;
    Some(unquote(name.trim()).to_string())
}

/// Node's `Error: Cannot find module 'jest'` (CommonJS), `Cannot find package 'vitest'
/// imported from …` (ES modules), and jest's `Cannot find module 'x' from 'y.test.js'`.
/// A relative or absolute path is the code's own file, not a dependency.
fn node_missing(line: &str) -> Option<String> {
    // TypeScript's TS2307 is a type error the change can cause and fix.
    if line.contains("TS2307") {
        return None;
    }
    let rest = ["Cannot find module ", "Cannot find package "]
        .iter()
        .find_map(|m| line.split_once(m).map(|(_, r)| r))?;
    let quote = rest
        .chars()
        .next()
        .filter(|c| matches!(c, '\'' | '"' | '`'))?;
    let name = rest[1..].split(quote).next()?;
    if name.starts_with('.') || name.starts_with('/') || name.contains(':') || name.contains('\\') {
        return None;
    }
    let mut segments = name.split('/');
    let first = segments.next()?;
    Some(if first.starts_with('@') {
        match segments.next() {
            Some(second) => format!("{first}/{second}"),
            None => first.to_string(),
        }
    } else {
        first.to_string()
    })
}

/// Python's `ModuleNotFoundError: No module named 'yaml'`, and `python -m pytest`'s
/// `/usr/bin/python3: No module named pytest`; the top-level package is what is missing.
fn python_missing(line: &str) -> Option<String> {
    let (_, rest) = line.split_once("No module named ")?;
    let rest = rest.trim();
    let name = match rest.chars().next() {
        Some(q @ ('\'' | '"')) => rest[1..].split(q).next()?,
        _ => rest,
    };
    let root = name.split('.').next()?;
    (!root.is_empty() && root.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
        .then(|| root.to_string())
}

/// Cargo's ``error: no such command: `nextest` ``.
fn cargo_missing(line: &str) -> Option<String> {
    let rest = line.strip_prefix("error: no such command: ")?;
    Some(unquote(rest.trim()).to_string())
}

/// The program a shell line starts with, past `VAR=value` assignments.
fn first_program(command: &str) -> Option<String> {
    command
        .split_whitespace()
        .find(|w| !w.contains('=') || w.starts_with('='))
        .map(str::to_string)
}

/// One token without spaces: a program or script name (`sh`, `./check.sh`,
/// `check.sh:3` from zsh).
fn is_word(s: &str) -> bool {
    !s.is_empty() && !s.chars().any(char::is_whitespace)
}

/// `1` (dash) or `line 1` (bash).
fn is_line_number(s: &str) -> bool {
    let digits = s.strip_prefix("line ").unwrap_or(s);
    !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit())
}

/// `name` without one layer of quotes: '…', "…", `…`, or GNU's ‘…’.
fn unquote(s: &str) -> &str {
    for (open, close) in [('\'', '\''), ('"', '"'), ('`', '`'), ('‘', '’')] {
        if let Some(inner) = s.strip_prefix(open).and_then(|r| r.strip_suffix(close)) {
            return inner;
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn what(command: &str, exit: i32, output: &str) -> Option<(String, Needs)> {
        classify(command, exit, output).map(|m| (m.what, m.needs))
    }

    fn program(name: &str) -> Option<(String, Needs)> {
        Some((name.to_string(), Needs::Program))
    }

    #[test]
    fn the_shells_say_command_not_found_in_their_own_words() {
        // dash (Debian's sh), as `sh -c` and as a script.
        assert_eq!(
            what("jest", 127, "sh: 1: jest: not found\n"),
            program("jest")
        );
        assert_eq!(
            what("sh check.sh", 127, "check.sh: 3: eslint: not found\n"),
            program("eslint")
        );
        // busybox ash (Alpine).
        assert_eq!(what("jest", 127, "sh: jest: not found\n"), program("jest"));
        // bash, interactive-style and from `bash -c`.
        assert_eq!(
            what("tsc", 127, "bash: tsc: command not found\n"),
            program("tsc")
        );
        assert_eq!(
            what("x", 127, "bash: line 1: ruff: command not found\n"),
            program("ruff")
        );
        assert_eq!(
            what(
                "bash ci.sh",
                1,
                "ci.sh: line 12: golangci-lint: command not found\n"
            ),
            program("golangci-lint")
        );
        // zsh, from `zsh -c` and a script.
        assert_eq!(
            what("x", 127, "zsh: command not found: pnpm\n"),
            program("pnpm")
        );
        assert_eq!(
            what("zsh t.zsh", 127, "t.zsh:4: command not found: mypy\n"),
            program("mypy")
        );
        // fish.
        assert_eq!(
            what("x", 127, "fish: Unknown command: deno\n"),
            program("deno")
        );
        // A script's `#!/usr/bin/env node` with no node (GNU and BSD env).
        assert_eq!(
            what(
                "./node_modules/.bin/jest",
                127,
                "/usr/bin/env: ‘node’: No such file or directory\n"
            ),
            program("node")
        );
        assert_eq!(
            what("x", 127, "env: node: No such file or directory\n"),
            program("node")
        );
    }

    #[test]
    fn npm_scripts_report_the_missing_binary_inside_their_noise() {
        let out = "\n> demo@1.0.0 test\n> jest --ci\n\nsh: 1: jest: not found\nnpm error Lifecycle script `test` failed with error:\nnpm error code 127\n";
        assert_eq!(what("npm test", 127, out), program("jest"));
        // Older npm exits 1 but says the same.
        let old = "> jest\n\nsh: 1: jest: not found\nnpm ERR! code ELIFECYCLE\nnpm ERR! syscall spawn\nnpm ERR! errno 127\n";
        assert_eq!(what("npm test", 1, old), program("jest"));
    }

    #[test]
    fn exit_127_alone_names_the_commands_program() {
        assert_eq!(what("FOO=1 ninja -C build", 127, ""), program("ninja"));
        assert_eq!(what("make test", 127, "\n"), program("make"));
    }

    #[test]
    fn node_and_python_name_the_package_not_installed() {
        let node = "node:internal/modules/cjs/loader:1228\n  throw err;\n  ^\n\nError: Cannot find module 'lodash/fp'\nRequire stack:\n- /repo/src/index.js\n    at Module._resolveFilename (node:internal/modules/cjs/loader:1225:15) {\n  code: 'MODULE_NOT_FOUND',\n";
        assert_eq!(
            what("node src/index.js", 1, node),
            Some(("lodash".into(), Needs::NodePackage))
        );
        let esm = "node:internal/process/esm_loader:40\n      internalBinding('errors').triggerUncaughtException(\n\nError [ERR_MODULE_NOT_FOUND]: Cannot find package '@vitest/runner' imported from /repo/node_modules/vitest/dist/index.js\n";
        assert_eq!(
            what("npx vitest run", 1, esm),
            Some(("@vitest/runner".into(), Needs::NodePackage))
        );
        let py = "Traceback (most recent call last):\n  File \"/repo/app.py\", line 1, in <module>\n    import yaml.parser\nModuleNotFoundError: No module named 'yaml'\n";
        assert_eq!(
            what("python app.py", 1, py),
            Some(("yaml".into(), Needs::PythonModule))
        );
        assert_eq!(
            what(
                "python3 -m pytest",
                1,
                "/usr/bin/python3: No module named pytest\n"
            ),
            Some(("pytest".into(), Needs::PythonModule))
        );
        assert_eq!(
            what(
                "cargo nextest run",
                101,
                "error: no such command: `nextest`\n\n\tView all installed commands with `cargo --list`\n"
            ),
            Some(("nextest".into(), Needs::CargoCommand))
        );
    }

    #[test]
    fn failures_of_the_change_itself_are_not_missing_tools() {
        // A relative import the change broke.
        let rel = "Error: Cannot find module './limits'\nRequire stack:\n- /repo/src/index.js\n";
        assert_eq!(what("node src/index.js", 1, rel), None);
        // jest resolving a deleted file of the repo.
        let jest = "  ● Test suite failed to run\n\n    Cannot find module '../src/limit' from 'test/limit.test.js'\n";
        assert_eq!(what("npx jest", 1, jest), None);
        // A type error.
        let ts = "src/a.ts(1,20): error TS2307: Cannot find module 'zod' or its corresponding type declarations.\n";
        assert_eq!(what("npx tsc --noEmit", 2, ts), None);
        // A script of the repo that the change removed.
        assert_eq!(
            what(
                "./scripts/lint.sh",
                127,
                "sh: 1: ./scripts/lint.sh: not found\n"
            ),
            None
        );
        // Ordinary failures that mention "not found".
        let test = "test limit::third_attempt ... FAILED\nassertion failed: user not found\nError: file not found\nerror: 1 check failed\n";
        assert_eq!(what("cargo test", 101, test), None);
        assert_eq!(
            what(
                "sh check.sh",
                1,
                "lib.txt:1: expected <= in the limit check\n"
            ),
            None
        );
        // A pass is never a missing tool, whatever it prints.
        assert_eq!(what("jest", 0, "sh: 1: jest: not found\n"), None);
    }

    #[test]
    fn cmd_on_windows_says_not_recognized() {
        assert_eq!(
            cmd_not_recognized("'jest' is not recognized as an internal or external command,"),
            Some("jest".into())
        );
        assert_eq!(cmd_not_recognized("operable program or batch file."), None);
    }

    #[test]
    fn the_next_commands_end_in_a_retry_of_the_item() {
        let m = classify("npm test", 127, "sh: 1: jest: not found\n").expect("missing");
        let next = next(&m, "4");
        assert_eq!(next[0], "install jest on the PATH hall daemon runs with");
        assert!(
            next[1].contains("setup") && next[1].contains("jest"),
            "{next:?}"
        );
        assert!(next.iter().all(|n| !n.contains('`')), "{next:?}");
        assert_eq!(
            next.last().map(String::as_str),
            Some("hall retry 4 --reason \"installed jest\"")
        );
    }
}
