//! The room authoring guide's example, built and run as a reader would.

use super::built_in_merger::{pr, queue};
use super::*;

/// The repository root, for files outside the crate.
fn repo_root() -> std::path::PathBuf {
    match option_env!("HALL_REPO_ROOT") {
        Some(root) => root.into(),
        None => std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."),
    }
}

/// The `<!-- example: PATH -->` code blocks of a Markdown file.
fn guide_examples(markdown: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut lines = markdown.lines();
    while let Some(line) = lines.next() {
        let Some(path) = line
            .strip_prefix("<!-- example: ")
            .and_then(|rest| rest.strip_suffix(" -->"))
        else {
            continue;
        };
        let _fence = lines.next();
        let body: Vec<&str> = lines
            .by_ref()
            .take_while(|l| !l.starts_with("```"))
            .collect();
        out.push((path.to_string(), body.join("\n") + "\n"));
    }
    out
}

#[test]
fn the_authoring_guide_example_builds_and_changes_the_merger() {
    let repo = repo_root();
    let guide = std::fs::read_to_string(repo.join("docs/rooms.md")).expect("docs/rooms.md");
    let examples = guide_examples(&guide);
    assert_eq!(examples.len(), 2, "the guide has Cargo.toml and src/lib.rs");
    let dir = tempfile::tempdir().expect("temp dir");
    let project = dir.path().join("careful-merger");
    std::fs::create_dir_all(project.join("src")).expect("mkdir");
    for (path, body) in &examples {
        if path == "src/lib.rs" {
            assert!(body.lines().count() <= 20, "the rule is meant to be short");
        }
        let sdk = repo.join("rooms/sdk").display().to_string();
        let body = body.replace("../hallmark/rooms/sdk", &sdk);
        std::fs::write(project.join(path), body).expect("write example");
    }

    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = std::process::Command::new(cargo)
        .args(["build", "--release", "--target", "wasm32-wasip2"])
        .current_dir(&project)
        .env(
            "CARGO_TARGET_DIR",
            std::env::temp_dir().join("hall-rooms-guide-target"),
        )
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .status()
        .expect("run cargo");
    assert!(status.success(), "the guide's example does not build");
    let wasm = std::env::temp_dir()
        .join("hall-rooms-guide-target/wasm32-wasip2/release/careful_merger.wasm");
    let bytes = std::fs::read(&wasm).expect("built component");

    let report = rooms().check(&bytes);
    assert_eq!(
        report.runnable,
        vec![World::Merger],
        "{:?}",
        report.problems
    );
    let room = rooms()
        .load(
            World::Merger,
            &bytes,
            RoomSource::Repo {
                path: "rooms/careful_merger.wasm".into(),
                rev: None,
            },
        )
        .expect("loads as a merger room");
    let input = queue(vec![
        pr(4, &["migrations/0007_users.sql"]),
        pr(5, &["src/app.rs"]),
    ]);
    let plan = room.judge_merges(&input).expect("call").expect("answer");
    let decisions = &plan.bases[0].decisions;
    assert_eq!(decisions[0].action, Action::Hold);
    assert_eq!(decisions[0].reasons[0], "migration_needs_a_person");
    assert_eq!(decisions[1].action, Action::Merge);

    // The built-in room, for contrast, would merge the migration first.
    let builtin = rooms().builtin(World::Merger).expect("built-in merger");
    let plan = builtin.judge_merges(&input).expect("call").expect("answer");
    assert_eq!(plan.bases[0].decisions[0].action, Action::Merge);
}
