//! The built-in checks room, table-driven through the real component.

use super::*;

fn manifest(path: &str, content: &str) -> Manifest {
    Manifest {
        path: path.into(),
        content: content.into(),
    }
}

const WORKFLOW: &str = "name: CI\non:\n  pull_request:\n  push:\n    branches: [main]\njobs:\n";

/// A GitHub workflow running `steps` (already indented step lines) on pull requests.
fn workflow(steps: &str) -> Manifest {
    manifest(
        ".github/workflows/ci.yml",
        &format!("{WORKFLOW}  test:\n    runs-on: ubuntu-latest\n    steps:\n{steps}"),
    )
}

#[test]
fn checks_room_table() {
    struct Case {
        name: &'static str,
        files: &'static [&'static str],
        manifests: Vec<Manifest>,
        ci: Vec<Manifest>,
        checks: &'static [&'static str],
        setup: &'static [&'static str],
        /// Text expected in a note or a left-out command's reason.
        said: Option<&'static str>,
    }
    let case = |name, files, manifests, ci, checks, setup, said| Case {
        name,
        files,
        manifests,
        ci,
        checks,
        setup,
        said,
    };
    let scripts =
        r#"{"scripts": {"build": "tsc", "test": "vitest run", "lint": "eslint .", "deploy": "x"}}"#;
    let cases = vec![
        case(
            "cargo without CI: format, clippy that can fail, tests",
            &["Cargo.toml", "src/main.rs"],
            vec![manifest("Cargo.toml", "[package]")],
            vec![],
            &[
                "cargo fmt --all --check",
                "cargo clippy --all-targets -- -D warnings",
                "cargo test",
            ],
            &[],
            None,
        ),
        case(
            "go without CI",
            &["go.mod", "main.go"],
            vec![manifest("go.mod", "module x")],
            vec![],
            &["go vet ./...", "go test ./..."],
            &[],
            None,
        ),
        case(
            "pnpm by lockfile, with its setup",
            &["package.json", "pnpm-lock.yaml"],
            vec![manifest("package.json", scripts)],
            vec![],
            &["pnpm run lint", "pnpm test"],
            &["pnpm install --frozen-lockfile"],
            Some("publishes"),
        ),
        case(
            "bun by lockfile",
            &["package.json", "bun.lockb"],
            vec![manifest(
                "package.json",
                r#"{"scripts": {"test": "bun test"}}"#,
            )],
            vec![],
            &["bun run test"],
            &["bun install --frozen-lockfile"],
            None,
        ),
        case(
            "packageManager field",
            &["package.json"],
            vec![manifest(
                "package.json",
                r#"{"packageManager": "yarn@4.1.0", "scripts": {"test": "jest"}}"#,
            )],
            vec![],
            &["yarn test"],
            &[],
            None,
        ),
        case(
            "npm placeholder test is left out",
            &["package.json", "package-lock.json"],
            vec![manifest(
                "package.json",
                r#"{"scripts": {"test": "echo \"Error: no test specified\" && exit 1"}}"#,
            )],
            vec![],
            &[],
            &["npm ci"],
            Some("placeholder"),
        ),
        case(
            "malformed package.json is a note",
            &["package.json"],
            vec![manifest("package.json", "{nope")],
            vec![],
            &[],
            &[],
            Some("not valid JSON"),
        ),
        case(
            "pytest from pyproject",
            &["pyproject.toml", "tests/test_a.py"],
            vec![manifest(
                "pyproject.toml",
                "[tool.pytest.ini_options]\naddopts = \"-q\"",
            )],
            vec![],
            &["pytest"],
            &[],
            None,
        ),
        case(
            "a test recipe that depends on a watcher is never a gate",
            &["justfile"],
            vec![manifest(
                "justfile",
                "test: watch\n    cargo test\nwatch:\n    cargo watch -x check\ndev:\n    npm run serve\n",
            )],
            vec![],
            &[],
            &[],
            Some("never terminates"),
        ),
        case(
            "Makefile recipes, plain clippy left out",
            &["Makefile", "Cargo.toml"],
            vec![
                manifest(
                    "Makefile",
                    "VERSION := 1\n.PHONY: test lint\ntest: build\n\tcargo test\nlint:\n\tcargo clippy\ndeploy:\n\t./ship\n%.o: %.c\n",
                ),
                manifest("Cargo.toml", "[package]"),
            ],
            vec![],
            &[
                "cargo fmt --all --check",
                "cargo clippy --all-targets -- -D warnings",
                "make test",
            ],
            &[],
            Some("exits 0 on warnings"),
        ),
        case(
            "CI is the evidence: its commands, its order, no language defaults it does not run",
            &["Cargo.toml", ".github/workflows/ci.yml"],
            vec![manifest("Cargo.toml", "[package]")],
            vec![workflow(
                "      - uses: actions/checkout@v4\n      - run: cargo test --workspace\n      - name: Format\n        run: cargo fmt --all --check\n",
            )],
            &["cargo fmt --all --check", "cargo test --workspace"],
            &[],
            None,
        ),
        case(
            "a recipe CI calls that no file defines is reported, not written",
            &["Makefile", ".github/workflows/ci.yml"],
            vec![manifest("Makefile", "test:\n\tgo test ./...\n")],
            vec![workflow("      - run: make lint\n      - run: make test\n")],
            &["make test"],
            &[],
            Some("which Makefile does not define"),
        ),
        case(
            "release workflows and publish steps are never gates",
            &[
                "package.json",
                "package-lock.json",
                ".github/workflows/ci.yml",
            ],
            vec![manifest(
                "package.json",
                r#"{"scripts": {"test": "jest", "release": "np"}}"#,
            )],
            vec![
                workflow("      - run: npm ci\n      - run: npm test\n      - run: npm publish\n"),
                manifest(
                    ".github/workflows/release.yml",
                    "name: release\non:\n  push:\n    tags: ['v*']\njobs:\n  r:\n    steps:\n      - run: npm run build\n",
                ),
            ],
            &["npm test"],
            &["npm ci"],
            Some("publishes"),
        ),
        case(
            "RUSTFLAGS denying warnings makes CI's clippy a gate that can fail",
            &["Cargo.toml", ".github/workflows/ci.yml"],
            vec![manifest("Cargo.toml", "[package]")],
            vec![manifest(
                ".github/workflows/ci.yml",
                &format!(
                    "{WORKFLOW}  all:\n    env:\n      RUSTFLAGS: --deny warnings\n    steps:\n      - run: cargo clippy --all-targets\n      - run: cargo test\n"
                ),
            )],
            &["cargo clippy --all-targets -- -D warnings", "cargo test"],
            &[],
            None,
        ),
        case(
            "autotools: configure before make check",
            &["configure.ac", "Makefile.am", ".github/workflows/ci.yml"],
            vec![],
            vec![workflow(
                "      - run: |\n          autoreconf -i\n          ./configure --disable-docs\n          make\n      - run: make check\n",
            )],
            &["make", "make check"],
            &["autoreconf -i", "./configure --disable-docs"],
            None,
        ),
        case(
            "tox envs in pyproject, pre-commit",
            &["pyproject.toml", ".pre-commit-config.yaml", "uv.lock"],
            vec![manifest(
                "pyproject.toml",
                "[tool.tox]\nenv_list = [\"py3.12\", \"typing\"]\n[tool.tox.env_run_base]\ncommands = [[\"pytest\"]]\n[tool.tox.env.typing]\ncommands = [[\"mypy\"]]\n",
            )],
            vec![],
            &["pre-commit run --all-files", "tox -e py"],
            &["uv sync --frozen"],
            None,
        ),
        case(
            "nothing found",
            &["README.md"],
            vec![],
            vec![],
            &[],
            &[],
            Some("no checks detected"),
        ),
    ];
    let room = rooms().builtin(World::Checks).expect("built-in checks");
    for case in cases {
        let input = ChecksInput {
            files: case.files.iter().map(|s| s.to_string()).collect(),
            manifests: case.manifests,
            ci: case.ci,
        };
        let report = room
            .detect_checks(&input)
            .expect("call")
            .unwrap_or_else(|f| panic!("{}: refused: {f:?}", case.name));
        let commands: Vec<&str> = report.checks.iter().map(|c| c.command.as_str()).collect();
        assert_eq!(commands, case.checks, "{}: {report:?}", case.name);
        let setup: Vec<&str> = report.setup.iter().map(|c| c.command.as_str()).collect();
        assert_eq!(setup, case.setup, "{}: {report:?}", case.name);
        if let Some(said) = case.said {
            assert!(
                report.notes.iter().any(|n| n.contains(said))
                    || report.left_out.iter().any(|l| l.reason.contains(said)),
                "{}: {report:?}",
                case.name,
            );
        }
    }
}
