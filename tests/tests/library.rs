//! End to end: `hall library` on a real repository, its learnings brought in from the
//! old `.hallmark/knowledge/` layout (the librarian's `distill` is not part of these).

use std::path::Path;

use hallmark_tests::sandbox::Sandbox;
use insta::assert_snapshot;
use serde_json::{Value, json};

/// Writes the old layout's files under `.hallmark/knowledge/` of `repo`.
fn knowledge(repo: &Path, files: &[(&str, &str)]) {
    for (rel, text) in files {
        let path = repo.join(".hallmark/knowledge").join(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("dir");
        std::fs::write(&path, text).expect("write");
    }
}

fn ids(v: &Value, key: &str) -> Vec<String> {
    v[key]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|x| x["id"].as_str().or(x.as_str()).unwrap_or("").to_string())
                .collect()
        })
        .unwrap_or_default()
}

fn seeded() -> Sandbox {
    let sb = Sandbox::initialized();
    knowledge(
        &sb.repo,
        &[
            (
                "rules/retry.md",
                "+++\npaths = [\"src/http/**\"]\n+++\n# HttpClient::retry only retries idempotent requests\n\nA retried POST charged twice.\n",
            ),
            (
                "maps/config.md",
                "# What parse_config does\n\nReads tern.toml strictly.\n",
            ),
            (
                "false-positives/reset.md",
                "# connection reset by peer in the ws tests is expected\n\nThe tests kill the server.\n",
            ),
        ],
    );
    sb
}

#[test]
fn import_review_search_show_retire() {
    let sb = seeded();
    let imported = sb.hall(&sb.repo, &["library", "import"]);
    assert_snapshot!(sb.snap(&imported));
    // Imported in path order: false-positives/, maps/, rules/.
    let listed = sb.hall(&sb.repo, &["library", "review"]).ok();
    assert_eq!(ids(&listed, "proposed"), ["L-0001", "L-0002", "L-0003"]);
    // Nothing is in force yet: a search finds only with --all.
    let none = sb
        .hall(&sb.repo, &["library", "search", "parse_config"])
        .ok();
    assert_eq!(none["hits"], json!([]));
    assert!(
        none["next"][0]
            .as_str()
            .is_some_and(|n| n.ends_with("--all")),
        "{none}"
    );
    let all = sb
        .hall(&sb.repo, &["library", "search", "parse_config", "--all"])
        .ok();
    assert_eq!(ids(&all, "hits"), ["L-0002"]);

    let settled = sb.hall(
        &sb.repo,
        &[
            "library", "review", "--accept", "L-0003", "2", "--reject", "L-0001",
        ],
    );
    assert_snapshot!(sb.snap(&settled));
    let found = sb
        .hall(&sb.repo, &["library", "search", "HttpClient::retry"])
        .ok();
    assert_eq!(ids(&found, "hits"), ["L-0003"]);
    assert_eq!(found["hits"][0]["matched"], json!(["words", "trigram"]));
    let shown = sb.hall(&sb.repo, &["library", "show", "L-0001"]);
    shown.err("LEARNING_NOT_FOUND", 3);

    let retired = sb
        .hall(
            &sb.repo,
            &["library", "retire", "L-0003", "--reason", "contradicted"],
        )
        .ok();
    assert_eq!(retired["learning"]["status"], "retired");
    let gone = sb
        .hall(&sb.repo, &["library", "search", "HttpClient::retry"])
        .ok();
    assert_eq!(gone["hits"], json!([]));
    let back = sb
        .hall(&sb.repo, &["library", "retire", "L-0003", "--undo"])
        .ok();
    assert_eq!(back["learning"]["status"], "accepted");
    let show = sb.hall(&sb.repo, &["library", "show", "3"]);
    assert_snapshot!(sb.snap(&show));

    let log = sb
        .hall(&sb.repo, &["log", "--kind", "learning_retired"])
        .ok();
    let kinds: Vec<&str> = log["events"]
        .as_array()
        .map(|a| a.iter().filter_map(|e| e["event"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(kinds, ["learning_retired"], "{log}");
}

#[test]
fn bad_ids_and_wrong_states_change_nothing() {
    let sb = seeded();
    sb.hall(&sb.repo, &["library", "import"]).ok();
    let before = std::fs::read_to_string(sb.repo.join(".git/hallmark/library/learnings/L-0001.md"))
        .expect("read");
    let typo = sb.hall(
        &sb.repo,
        &["library", "review", "--accept", "L-0001", "L-x"],
    );
    assert_snapshot!(sb.snap(&typo));
    let missing = sb.hall(
        &sb.repo,
        &["library", "review", "--accept", "L-0001", "L-0042"],
    );
    missing.err("LEARNING_NOT_FOUND", 3);
    let after = std::fs::read_to_string(sb.repo.join(".git/hallmark/library/learnings/L-0001.md"))
        .expect("read");
    assert_eq!(
        before, after,
        "the good id in the same command was not accepted"
    );
    let proposed = sb.hall(&sb.repo, &["library", "retire", "L-0001"]);
    let v = proposed.err("WRONG_STATE", 4);
    assert_eq!(v["error"]["next"][0], "hall library review --accept L-0001");
    sb.hall(&sb.repo, &["library", "search"]).err("USAGE", 2);
    // A broken file is named in the warnings and hides nothing else.
    std::fs::write(
        sb.repo.join(".git/hallmark/library/learnings/L-0009.md"),
        "oops\n",
    )
    .expect("write");
    let listed = sb.hall(&sb.repo, &["library", "review"]);
    let v = listed.ok();
    assert_eq!(ids(&v, "proposed").len(), 3);
    assert!(listed.stderr.contains("L-0009.md"), "{}", listed.stderr);
    assert!(
        v["problems"][0]["message"]
            .as_str()
            .is_some_and(|m| m.contains("+++")),
        "{v}"
    );
}

#[test]
fn export_and_import_round_trip_between_repositories() {
    let sb = seeded();
    sb.hall(&sb.repo, &["library", "import"]).ok();
    sb.hall(&sb.repo, &["library", "review", "--accept", "1", "2"])
        .ok();
    let out = sb.root.join("library.jsonl");
    let exported = sb
        .hall(
            &sb.repo,
            &["library", "export", "--out", out.to_str().expect("utf8")],
        )
        .ok();
    assert_eq!(exported["learnings"], 3);
    let stdout = sb.hall(&sb.repo, &["library", "export"]);
    assert_eq!(stdout.code, 0);
    let document = std::fs::read_to_string(&out).expect("export");
    assert_eq!(stdout.stdout, document, "stdout carries the same document");

    let other = Sandbox::initialized();
    let imported = other
        .hall(
            &other.repo,
            &["library", "import", out.to_str().expect("utf8")],
        )
        .ok();
    assert_eq!(imported["from"], "export");
    assert_eq!(imported["learnings"], json!(["L-0001", "L-0002", "L-0003"]));
    let again = other.hall(&other.repo, &["library", "export"]);
    assert_eq!(again.stdout, document);
    for id in ["L-0001", "L-0002", "L-0003"] {
        let rel = format!(".git/hallmark/library/learnings/{id}.md");
        assert_eq!(
            std::fs::read(sb.repo.join(&rel)).expect("source"),
            std::fs::read(other.repo.join(&rel)).expect("copy"),
            "{id}"
        );
    }
    let twice = other.hall(
        &other.repo,
        &["library", "import", out.to_str().expect("utf8")],
    );
    twice.err("WRONG_STATE", 4);
}

#[test]
fn qmd_search_without_qmd_says_what_to_do() {
    let sb = Sandbox::initialized();
    let config = std::fs::read_to_string(sb.repo.join(".hallmark.toml")).expect("config");
    sb.configure(
        &format!("{config}\n[library]\nsearch = \"qmd\"\n"),
        "#!/bin/sh\n",
        "search the library with qmd",
    );
    // A PATH with git (the config is read from the base branch) and no qmd.
    let only_git = sb.root.join("only-git");
    std::fs::create_dir_all(&only_git).expect("dir");
    let git = std::env::split_paths(&std::env::var_os("PATH").expect("PATH"))
        .map(|d| d.join("git"))
        .find(|g| g.is_file())
        .expect("git on PATH");
    std::os::unix::fs::symlink(git, only_git.join("git")).expect("link");
    let path = only_git.to_str().expect("utf8").to_string();
    let run = sb.hall_env(
        &sb.repo,
        &["library", "search", "retry"],
        &[("PATH", &path)],
    );
    assert_snapshot!(sb.snap(&run));
    run.err("SEARCH_UNAVAILABLE", 1);
    let bad = format!("{config}\n[library]\nsearch = \"grep\"\n");
    sb.configure(&bad, "#!/bin/sh\n", "a backend that does not exist");
    let run = sb.hall(&sb.repo, &["library", "search", "retry"]);
    let v = run.err("INVALID_CONFIG", 2);
    assert!(
        v["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("grep") && m.contains("line")),
        "{v}"
    );
}

/// What the Library teaches every later review is a person's call: inside a Claude Code
/// session (or as one of the loop's roles) accepting, rejecting, retiring and importing
/// are refused and change nothing; reading is allowed.
#[test]
fn a_session_cannot_settle_retire_or_import_learnings() {
    let sb = seeded();
    sb.hall(&sb.repo, &["library", "import"]).ok();
    let file = sb.repo.join(".git/hallmark/library/learnings/L-0001.md");
    let before = std::fs::read_to_string(&file).expect("read");
    let session = [("CLAUDECODE", "1")];
    for args in [
        &["library", "review", "--accept", "L-0001"][..],
        &["library", "review", "--reject", "L-0001"],
        &["library", "retire", "L-0001"],
        &["library", "import"],
    ] {
        let run = sb.hall_env(&sb.repo, args, &session);
        run.err("GATE_DENIED", 5);
    }
    assert_eq!(std::fs::read_to_string(&file).expect("read"), before);
    let listed = sb.hall_env(&sb.repo, &["library", "review"], &session).ok();
    assert_eq!(ids(&listed, "proposed"), ["L-0001", "L-0002", "L-0003"]);
    sb.hall_env(&sb.repo, &["library", "show", "L-0001"], &session)
        .ok();
    // A person outside a session still can.
    sb.hall(&sb.repo, &["library", "review", "--accept", "L-0001"])
        .ok();
}
