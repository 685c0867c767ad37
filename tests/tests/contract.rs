//! The agent contract: JSON off a TTY, text on one, `next` everywhere, documented exit
//! codes, self-description, and clear errors for bad input that lose nothing.

use hallmark_tests::sandbox::Sandbox;
use insta::assert_snapshot;
use serde_json::Value;

#[test]
fn help_json_lists_every_command_with_its_arguments() {
    let sb = Sandbox::new();
    let v = sb.hall(&sb.repo, &["help", "--json"]).ok();
    let names: Vec<&str> = v["commands"]
        .as_array()
        .expect("commands")
        .iter()
        .map(|c| c["name"].as_str().expect("name"))
        .collect();
    for expected in [
        "init",
        "doctor",
        "new",
        "adopt",
        "status",
        "log",
        "inbox",
        "ready",
        "pull-back",
        "drop",
        "retry",
        "propose-ready",
        "ask",
        "answer",
        "usage",
        "reindex",
        "help",
        "schema",
    ] {
        assert!(
            names.contains(&expected),
            "{expected} missing from {names:?}"
        );
    }
    let drop = v["commands"]
        .as_array()
        .expect("c")
        .iter()
        .find(|c| c["name"] == "drop")
        .expect("drop");
    let reason = drop["args"]
        .as_array()
        .expect("args")
        .iter()
        .find(|a| a["name"] == "reason")
        .expect("--reason");
    assert_eq!(reason["required"], true);
    assert_eq!(reason["long"], "--reason");
    assert!(!v["next"].as_array().expect("next").is_empty());
}

/// `hall help --markdown` prints docs/reference.md, byte for byte, and `--json` beside it
/// still gives the JSON model (with each command's subcommands and long help).
#[test]
fn help_markdown_prints_docs_reference_md() {
    let sb = Sandbox::new();
    let run = sb.hall(&sb.repo, &["help", "--markdown"]);
    assert_eq!(run.code, 0, "{run:?}");
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/reference.md");
    let kept = std::fs::read_to_string(&path).expect("docs/reference.md");
    assert!(
        run.stdout == kept,
        "docs/reference.md is not what `hall help --markdown` prints: regenerate it with \
         `HALL_UPDATE_REFERENCE=1 cargo test -p hallmark-host --lib commands::help`"
    );
    let v = sb.hall(&sb.repo, &["help", "--markdown", "--json"]).ok();
    let daemon = v["commands"]
        .as_array()
        .expect("commands")
        .iter()
        .find(|c| c["name"] == "daemon")
        .expect("daemon");
    assert!(
        daemon["commands"]
            .as_array()
            .is_some_and(|s| s.iter().any(|c| c["name"] == "daemon run")),
        "{daemon}"
    );
    let one = sb.hall(&sb.repo, &["help", "daemon", "--markdown"]);
    assert!(one.stdout.contains("### `hall daemon run`"), "{one:?}");
    assert!(!one.stdout.contains("## Exit codes"), "{one:?}");
}

#[test]
fn every_command_and_error_event_and_config_has_a_schema() {
    let sb = Sandbox::new();
    let help = sb.hall(&sb.repo, &["help", "--json"]).ok();
    for c in help["commands"].as_array().expect("commands") {
        let name = c["name"].as_str().expect("name");
        let s = sb.hall(&sb.repo, &["schema", name]).ok();
        assert!(
            s.is_object()
                && (s.get("$schema").is_some()
                    || s.get("oneOf").is_some()
                    || s.get("type").is_some()),
            "{name}: {s}"
        );
    }
    let error = sb.hall(&sb.repo, &["schema", "error"]).ok();
    let codes = error["x-codes"].as_object().expect("codes");
    for (code, exit) in [
        ("INTERNAL", 1),
        ("USAGE", 2),
        ("INVALID_CONFIG", 2),
        ("NOT_A_REPO", 3),
        ("ITEM_NOT_FOUND", 3),
        ("NO_ITEM", 3),
        ("WRONG_STATE", 4),
        ("ITEM_IN_REVIEW", 4),
        ("DIRTY_WORKTREE", 4),
        ("ALREADY_ANSWERED", 4),
        ("GATE_DENIED", 5),
        ("CHECKS_FAILED", 6),
        ("CLAIMED", 7),
    ] {
        assert_eq!(codes[code]["exit"], exit, "{code}");
    }
    let event = sb.hall(&sb.repo, &["schema", "event"]).ok();
    let text = event.to_string();
    for kind in [
        "created",
        "ready",
        "pulled_back",
        "verdict",
        "hallmarked",
        "usage",
        "torn_line",
    ] {
        assert!(
            text.contains(&format!("\"{kind}\"")),
            "event schema lacks {kind}"
        );
    }
    let config = sb.hall(&sb.repo, &["schema", "config"]).ok();
    for key in [
        "base",
        "worktree",
        "gates",
        "capture",
        "merge",
        "budget",
        "max_rejects",
        "rooms",
    ] {
        assert!(
            config["properties"].get(key).is_some(),
            "config schema lacks {key}"
        );
    }
    sb.hall(&sb.repo, &["schema", "nonsense"]).err("USAGE", 2);
}

#[test]
fn usage_errors_are_json_with_exit_2_never_a_prompt() {
    let sb = Sandbox::initialized();
    let run = sb.hall(&sb.repo, &["frobnicate"]);
    assert_snapshot!(sb.snap(&run));
    run.err("USAGE", 2);
    sb.hall(&sb.repo, &["status", "--bogus"]).err("USAGE", 2);
    sb.hall(&sb.repo, &["drop", "1"]).err("USAGE", 2);
    // --help and --version are not errors.
    let help = sb.hall(&sb.repo, &["--help"]);
    assert_eq!(help.code, 0);
    assert!(help.stdout.contains("propose-ready"));
    // The binary knows the commit it was built from (this repository's HEAD when the
    // tests built it) and its target; the library it links does not need to.
    let v = sb.hall(&sb.repo, &["--version", "--json"]).ok();
    let commit = v["commit"].as_str().expect("commit");
    assert!(
        commit == "unknown"
            || (commit.len() == 40 && commit.chars().all(|c| c.is_ascii_hexdigit())),
        "{v}"
    );
    assert!(v["target"].as_str().is_some_and(|t| t.contains('-')), "{v}");
    assert_eq!(v["name"], "hall");
}

#[test]
fn invalid_config_names_key_file_and_line_and_loses_nothing() {
    let sb = Sandbox::initialized();
    let v = sb.hall(&sb.repo, &["new", "--title", "Before"]).ok();
    assert_eq!(v["item"], "H-0001");
    let config_path = sb.repo.join(".hallmark.toml");
    let good = std::fs::read_to_string(&config_path).expect("config");
    let bad = good.replace("[capture]\n", "[capture]\nmood = \"grumpy\"\n");
    std::fs::write(&config_path, &bad).expect("write");
    // An edit in the main checkout is not in effect until it is committed: everything
    // keeps working on the committed rules, and doctor names the broken edit.
    let v = sb.hall(&sb.repo, &["status"]).ok();
    assert_eq!(v["items"][0]["id"], "H-0001");
    let doctor = sb.hall(&sb.repo, &["doctor"]);
    assert_eq!(doctor.code, 1, "{doctor:?}");
    let checks = doctor.json()["checks"].to_string();
    assert!(
        checks.contains("mood"),
        "doctor names the bad key: {checks}"
    );
    assert!(checks.contains("not in effect until committed"), "{checks}");
    // Committed, it is the rules, and every command names the key, file and line.
    sb.git(&sb.repo, &["commit", "-qam", "A bad key"]);
    let run = sb.hall(&sb.repo, &["status"]);
    let e = run.err("INVALID_CONFIG", 2);
    let msg = e["error"]["message"].as_str().expect("message");
    assert!(
        msg.contains(".hallmark.toml") && msg.contains("mood") && msg.contains("refs/heads/main"),
        "{msg}"
    );
    std::fs::write(&config_path, format!("max_rejects = \"three\"\n{good}")).expect("write");
    sb.git(&sb.repo, &["commit", "-qam", "Another bad key"]);
    let e = sb.hall(&sb.repo, &["status"]).err("INVALID_CONFIG", 2);
    assert!(
        e["error"]["message"]
            .as_str()
            .expect("m")
            .contains("line 1 (`max_rejects = \"three\"`)"),
        "{e}"
    );
    let doctor = sb.hall(&sb.repo, &["doctor"]);
    assert_eq!(doctor.code, 1, "{doctor:?}");
    assert_eq!(doctor.json()["ok"], false);
    // Committing the fix brings everything back, and nothing was lost.
    std::fs::write(&config_path, good).expect("write");
    sb.git(&sb.repo, &["commit", "-qam", "Fix the config"]);
    let v = sb.hall(&sb.repo, &["status"]).ok();
    assert_eq!(v["items"][0]["id"], "H-0001");
}

#[test]
fn doctor_reports_each_check_with_its_fix() {
    let sb = Sandbox::new();
    let run = sb.hall(&sb.repo, &["doctor"]);
    assert_eq!(run.code, 1, "{run:?}");
    let v = run.json();
    assert_eq!(v["ok"], false, "not initialized yet");
    let journal = v["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .find(|c| c["name"] == "journal")
        .expect("journal");
    assert_eq!(journal["fix"], "hall init");
    sb.hall(&sb.repo, &["init"]).ok();
    let v = sb.hall(&sb.repo, &["doctor"]).ok();
    assert_eq!(v["ok"], true, "{v}");
    for c in v["checks"].as_array().expect("checks") {
        if c["ok"] == false {
            assert!(
                c["fix"].as_str().is_some_and(|f| !f.is_empty()),
                "a failed check names its fix: {c}"
            );
        }
    }
    let names: Vec<&str> = v["checks"]
        .as_array()
        .expect("c")
        .iter()
        .map(|c| c["name"].as_str().expect("n"))
        .collect();
    assert_eq!(
        names,
        [
            "git", "gh", "claude", "plugin", "daemon", "repo", "config", "edit", "journal",
            "rooms", "gates", "index", "signers", "sessions", "loop",
        ]
    );
}

#[test]
fn every_successful_reply_has_next() {
    let sb = Sandbox::initialized();
    let v = sb.hall(&sb.repo, &["new", "--title", "N"]).ok();
    let wt = sb.worktree("H-0001");
    let mut replies: Vec<Value> = vec![v];
    for args in [
        vec!["status"],
        vec!["status", "1"],
        vec!["log", "1"],
        vec!["log"],
        vec!["inbox"],
        vec!["inbox", "--notices"],
        vec!["usage"],
        vec!["reindex"],
        vec!["doctor"],
        vec!["init"],
        vec!["ask", "q?"],
        vec!["answer", "Q-1", "yes"],
    ] {
        replies.push(sb.hall(&sb.repo, &args).ok());
    }
    sb.commit(&wt, "a.txt", "a", "a");
    replies.push(
        sb.hall(&wt, &["propose-ready", "--summary", "s", "--ask"])
            .ok(),
    );
    replies.push(sb.hall(&wt, &["ready"]).ok());
    replies.push(sb.hall(&wt, &["pull-back"]).ok());
    replies.push(sb.hall(&sb.repo, &["drop", "1", "--reason", "r"]).ok());
    for r in replies {
        assert!(r["next"].is_array(), "no next in {r}");
    }
}

/// On a terminal the reply is text for a person, and errors go to stderr.
#[test]
fn text_on_a_tty() {
    let sb = Sandbox::initialized();
    sb.hall(&sb.repo, &["new", "--title", "Text mode"]).ok();
    let Some(text) = sb.on_a_terminal(&sb.repo, "hall status; hall ready 42") else {
        eprintln!("skipped: util-linux `script` is not installed");
        return;
    };
    assert!(text.contains("development (Workshop, 1)"), "{text}");
    assert!(text.contains("H-0001  Text mode"), "{text}");
    assert!(
        text.contains("error[ITEM_NOT_FOUND]: no item H-0042"),
        "{text}"
    );
    assert!(text.contains("next: `hall status --all`"), "{text}");
    assert!(!text.contains("{\""), "no JSON on a terminal: {text}");
}
