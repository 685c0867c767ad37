//! The built-in checks room, table-driven through the real component.

use super::*;

fn manifest(path: &str, content: &str) -> Manifest {
    Manifest {
        path: path.into(),
        content: content.into(),
    }
}

#[test]
fn checks_room_table() {
    struct Case {
        name: &'static str,
        files: &'static [&'static str],
        manifests: Vec<Manifest>,
        checks: &'static [&'static str],
        note: Option<&'static str>,
    }
    let scripts =
        r#"{"scripts": {"build": "tsc", "test": "vitest run", "lint": "eslint .", "deploy": "x"}}"#;
    let cases = vec![
        Case {
            name: "cargo",
            files: &["Cargo.toml", "src/main.rs"],
            manifests: vec![manifest("Cargo.toml", "[package]")],
            checks: &["cargo test", "cargo clippy"],
            note: None,
        },
        Case {
            name: "go",
            files: &["go.mod", "main.go"],
            manifests: vec![manifest("go.mod", "module x")],
            checks: &["go test ./...", "go vet ./..."],
            note: None,
        },
        Case {
            name: "pnpm by lockfile",
            files: &["package.json", "pnpm-lock.yaml"],
            manifests: vec![manifest("package.json", scripts)],
            checks: &["pnpm run lint", "pnpm run test", "pnpm run build"],
            note: None,
        },
        Case {
            name: "yarn by lockfile",
            files: &["package.json", "yarn.lock"],
            manifests: vec![manifest("package.json", r#"{"scripts": {"test": "jest"}}"#)],
            checks: &["yarn run test"],
            note: None,
        },
        Case {
            name: "bun by lockfile",
            files: &["package.json", "bun.lockb"],
            manifests: vec![manifest(
                "package.json",
                r#"{"scripts": {"test": "bun test"}}"#,
            )],
            checks: &["bun run test"],
            note: None,
        },
        Case {
            name: "npm without a lockfile",
            files: &["package.json"],
            manifests: vec![manifest(
                "package.json",
                r#"{"scripts": {"lint": "eslint"}}"#,
            )],
            checks: &["npm run lint"],
            note: None,
        },
        Case {
            name: "packageManager field",
            files: &["package.json"],
            manifests: vec![manifest(
                "package.json",
                r#"{"packageManager": "yarn@4.1.0", "scripts": {"test": "jest"}}"#,
            )],
            checks: &["yarn run test"],
            note: None,
        },
        Case {
            name: "npm placeholder test is skipped",
            files: &["package.json", "package-lock.json"],
            manifests: vec![manifest(
                "package.json",
                r#"{"scripts": {"test": "echo \"Error: no test specified\" && exit 1"}}"#,
            )],
            checks: &[],
            note: Some("placeholder"),
        },
        Case {
            name: "malformed package.json is a note",
            files: &["package.json"],
            manifests: vec![manifest("package.json", "{nope")],
            checks: &[],
            note: Some("not valid JSON"),
        },
        Case {
            name: "pytest from pyproject",
            files: &["pyproject.toml", "tests/test_a.py"],
            manifests: vec![manifest(
                "pyproject.toml",
                "[tool.pytest.ini_options]\naddopts = \"-q\"",
            )],
            checks: &["pytest"],
            note: None,
        },
        Case {
            name: "pytest from conftest",
            files: &["tests/conftest.py"],
            manifests: vec![],
            checks: &["pytest"],
            note: None,
        },
        Case {
            name: "Makefile targets cover the language defaults",
            files: &["Makefile", "Cargo.toml"],
            manifests: vec![
                manifest(
                    "Makefile",
                    "VERSION := 1\n.PHONY: test lint\ntest: build\n\tcargo test\nlint:\n\tcargo clippy\ndeploy:\n\t./ship\n%.o: %.c\n",
                ),
                manifest("Cargo.toml", "[package]"),
            ],
            checks: &["make lint", "make test"],
            note: Some("task runner already covers"),
        },
        Case {
            name: "justfile recipes",
            files: &["justfile"],
            manifests: vec![manifest(
                "justfile",
                "set shell := [\"bash\", \"-c\"]\nalias t := test\n\ntest:\n    cargo test\n@lint:\n    cargo clippy\nbuild target='x':\n    cargo build\nrelease:\n    ./ship\n",
            )],
            checks: &["just lint", "just test", "just build"],
            note: None,
        },
        Case {
            name: "nothing found",
            files: &["README.md"],
            manifests: vec![],
            checks: &[],
            note: Some("no checks detected"),
        },
    ];
    let room = rooms().builtin(World::Checks).expect("built-in checks");
    for case in cases {
        let input = ChecksInput {
            files: case.files.iter().map(|s| s.to_string()).collect(),
            manifests: case.manifests,
            ci: Vec::new(),
        };
        let report = room
            .detect_checks(&input)
            .expect("call")
            .unwrap_or_else(|f| panic!("{}: refused: {f:?}", case.name));
        let commands: Vec<&str> = report.checks.iter().map(|c| c.command.as_str()).collect();
        assert_eq!(commands, case.checks, "{}", case.name);
        if let Some(note) = case.note {
            assert!(
                report.notes.iter().any(|n| n.contains(note)),
                "{}: notes {:?}",
                case.name,
                report.notes
            );
        }
    }
}
