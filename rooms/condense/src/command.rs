//! Picking a filter family from the command line an agent ran.
//!
//! Agents rarely type the bare tool: they write `cd crate && cargo test`,
//! `RUST_BACKTRACE=1 cargo +nightly test`, `npx vitest run` or
//! `python -m pytest -x`. The parser looks through those wrappers to the
//! program that produced the output. Evidence commands are checked in every
//! part of a compound command, because one `git diff` anywhere means the
//! output contains a diff that must not be cut.

use crate::Family;

/// `git` subcommands whose output is evidence and is never condensed. This
/// list is hard-wired and may only grow.
pub const EVIDENCE_GIT_SUBCOMMANDS: &[&str] = &["diff", "show", "log"];

/// Picks the family whose filter understands `command`'s output.
pub fn family_for(command: &str) -> Family {
    let words = split_words(command);
    let segments = split_segments(&words);
    if segments.iter().any(|s| is_evidence(s)) {
        return Family::Passthrough;
    }
    // The last segment that runs a program decides: earlier ones are
    // usually `cd`, `export` or a build step whose output is the same kind.
    let mut family = Family::Generic;
    for seg in &segments {
        let prog = program(seg);
        if prog.is_empty() {
            continue;
        }
        let f = classify(prog);
        if let Some(f) = f {
            family = f;
        } else if !is_setup(prog) {
            family = Family::Generic;
        }
    }
    family
}

/// Shell-ish word splitting: quotes group, operators become their own words.
fn split_words(command: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut chars = command.chars().peekable();
    while let Some(c) = chars.next() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => cur.push(c),
            None => match c {
                '\'' | '"' => quote = Some(c),
                '\\' => {
                    if let Some(n) = chars.next() {
                        cur.push(n);
                    }
                }
                c if c.is_whitespace() => {
                    if !cur.is_empty() {
                        words.push(std::mem::take(&mut cur));
                    }
                }
                // `2>&1` and `>&2` are redirections, not a background `&`.
                '&' if cur.ends_with('>') || cur.ends_with('<') => cur.push(c),
                ';' | '&' | '|' | '(' | ')' => {
                    if !cur.is_empty() {
                        words.push(std::mem::take(&mut cur));
                    }
                    let mut op = c.to_string();
                    if let Some(&n) = chars.peek()
                        && (n == c || (c == '|' && n == '&') || (c == '&' && n == '>'))
                    {
                        op.push(n);
                        chars.next();
                    }
                    words.push(op);
                }
                c => cur.push(c),
            },
        }
    }
    if !cur.is_empty() {
        words.push(cur);
    }
    words
}

fn split_segments(words: &[String]) -> Vec<Vec<&str>> {
    let mut segs: Vec<Vec<&str>> = vec![Vec::new()];
    let mut in_pipe_tail = false;
    for w in words {
        match w.as_str() {
            "&&" | "||" | ";" | "&" | "(" | ")" => {
                segs.push(Vec::new());
                in_pipe_tail = false;
            }
            // After a pipe the output is whatever the first stage printed,
            // filtered; `tee`, `head`, `grep` and friends don't change its kind.
            "|" | "|&" => in_pipe_tail = true,
            _ if in_pipe_tail => {}
            _ => {
                if let Some(last) = segs.last_mut() {
                    last.push(w);
                }
            }
        }
    }
    segs.retain(|s| !s.is_empty());
    segs
}

/// Strips the wrappers in front of the real program: env assignments,
/// `env`, `time`, `nice`, `timeout N`, package-runner prefixes.
fn program<'a>(seg: &'a [&'a str]) -> &'a [&'a str] {
    let mut s = seg;
    loop {
        let Some(&first) = s.first() else { return s };
        let base = basename(first);
        if is_assignment(first) {
            s = &s[1..];
        } else if base == "env" {
            s = &s[1..];
            while let Some(&w) = s.first() {
                if w.starts_with('-') || is_assignment(w) {
                    s = &s[1..];
                } else {
                    break;
                }
            }
        } else if matches!(
            base,
            "time" | "nice" | "command" | "exec" | "nohup" | "sudo"
        ) {
            s = &s[1..];
            while s.first().is_some_and(|w| w.starts_with('-')) {
                s = &s[1..];
            }
        } else if base == "timeout" {
            s = &s[1..];
            while s.first().is_some_and(|w| w.starts_with('-')) {
                s = &s[1..];
            }
            s = s.get(1..).unwrap_or(&[]);
        } else if matches!(base, "npx" | "bunx" | "pnpx") {
            s = &s[1..];
            while s.first().is_some_and(|w| w.starts_with('-')) {
                s = &s[1..];
            }
        } else if matches!(base, "pnpm" | "yarn" | "npm" | "bun")
            && s.get(1).is_some_and(|w| matches!(*w, "exec" | "dlx" | "x"))
        {
            s = &s[2..];
            while s.first().is_some_and(|w| w.starts_with('-')) {
                s = &s[1..];
            }
        } else if matches!(base, "uv" | "poetry" | "pipenv" | "pdm" | "hatch" | "rye")
            && s.get(1) == Some(&"run")
        {
            s = &s[2..];
            while s.first().is_some_and(|w| w.starts_with('-')) {
                s = &s[1..];
            }
        } else if base == "rustup" && s.get(1) == Some(&"run") {
            s = s.get(3..).unwrap_or(&[]);
        } else {
            return s;
        }
    }
}

fn classify(prog: &[&str]) -> Option<Family> {
    let first = prog.first().map(|w| basename(w))?;
    match first {
        "cargo" => cargo_family(&prog[1..]),
        "pytest" | "py.test" => Some(Family::Pytest),
        "jest" => Some(Family::Jest),
        "vitest" => Some(Family::Vitest),
        "go" => {
            let sub = prog[1..].iter().find(|w| !w.starts_with('-'))?;
            (*sub == "test").then_some(Family::GoTest)
        }
        p if p.starts_with("python") => {
            let m = prog.iter().position(|w| *w == "-m")?;
            match prog.get(m + 1).copied() {
                Some("pytest") | Some("py.test") => Some(Family::Pytest),
                _ => None,
            }
        }
        _ => None,
    }
}

fn cargo_family(args: &[&str]) -> Option<Family> {
    let mut i = 0;
    while let Some(&w) = args.get(i) {
        if w.starts_with('+') {
            i += 1;
        } else if matches!(w, "--color" | "--config" | "-Z" | "-C" | "--manifest-path") {
            i += 2;
        } else if w.starts_with('-') {
            i += 1;
        } else {
            break;
        }
    }
    let sub = *args.get(i)?;
    let rest = &args[i + 1..];
    match sub {
        "test" | "t" => Some(Family::CargoTest),
        "build" | "b" | "check" | "c" | "clippy" | "rustc" => Some(Family::CargoBuild),
        "fmt" if rest.contains(&"--check") => Some(Family::CargoFmt),
        _ => None,
    }
}

fn is_evidence(seg: &[&str]) -> bool {
    let prog = program(seg);
    if prog.first().map(|w| basename(w)) != Some("git") {
        return false;
    }
    let mut i = 1;
    while let Some(&w) = prog.get(i) {
        if matches!(w, "-C" | "-c" | "--git-dir" | "--work-tree" | "--namespace") {
            i += 2;
        } else if w.starts_with('-') {
            i += 1;
        } else {
            return EVIDENCE_GIT_SUBCOMMANDS.contains(&w);
        }
    }
    false
}

/// Commands that prepare a shell rather than produce the output.
fn is_setup(prog: &[&str]) -> bool {
    prog.first().is_some_and(|w| {
        matches!(
            basename(w),
            "cd" | "pushd" | "popd" | "export" | "set" | "source" | "." | "unset" | "true" | "echo"
        )
    })
}

fn is_assignment(w: &str) -> bool {
    match w.split_once('=') {
        Some((name, _)) => {
            !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !name.starts_with(|c: char| c.is_ascii_digit())
        }
        None => false,
    }
}

fn basename(w: &str) -> &str {
    w.rsplit('/').next().unwrap_or(w)
}

#[cfg(test)]
mod tests {
    use super::*;
    use Family::*;

    #[test]
    fn families_from_plain_and_wrapped_commands() {
        let cases: &[(&str, Family)] = &[
            ("cargo test", CargoTest),
            ("cargo +nightly test --workspace", CargoTest),
            ("RUST_BACKTRACE=1 cargo test -- --nocapture", CargoTest),
            ("cd crates/x && cargo test", CargoTest),
            ("cargo --color always clippy -- -D warnings", CargoBuild),
            ("cargo check --all-targets", CargoBuild),
            ("cargo build --release 2>&1 | tail -50", CargoBuild),
            ("cargo fmt --check", CargoFmt),
            ("cargo fmt --all -- --check", CargoFmt),
            ("cargo fmt", Generic),
            ("pytest -x tests/", Pytest),
            ("python -m pytest -q", Pytest),
            ("python3.12 -m pytest", Pytest),
            ("uv run pytest", Pytest),
            ("cd py && . .venv/bin/activate && pytest", Pytest),
            ("npx jest --ci", Jest),
            ("pnpm exec jest", Jest),
            ("./node_modules/.bin/jest", Jest),
            ("npx vitest run", Vitest),
            ("CI=1 pnpm exec vitest run src", Vitest),
            ("go test ./...", GoTest),
            ("go test -v -run TestX ./pkg/...", GoTest),
            ("timeout 60 go test ./...", GoTest),
            ("env -i PATH=/bin go test", GoTest),
            ("go build ./...", Generic),
            ("make test", Generic),
            ("npm test", Generic),
            ("python script.py", Generic),
            ("cargo test && ./deploy.sh", Generic),
        ];
        for (cmd, want) in cases {
            assert_eq!(family_for(cmd), *want, "{cmd}");
        }
    }

    #[test]
    fn evidence_anywhere_passes_through() {
        for cmd in [
            "git diff",
            "git show HEAD~1",
            "git log -p -n 3",
            "git -C repo --no-pager diff --stat",
            "git -c core.pager=cat log",
            "cargo test && git diff",
            "cd x; git show abc123 | head -100",
        ] {
            assert_eq!(family_for(cmd), Passthrough, "{cmd}");
        }
        assert_eq!(family_for("git status"), Generic);
        assert_eq!(family_for("git diff-tree"), Generic);
    }
}
