//! Replies that never leave a newcomer stuck: each reply a person meets on a first day
//! (a missing argument, a typo, a dirty worktree, a failed `hall new`…) as a snapshot,
//! and the way forward it names, followed with the real binary to show that it works.

#![allow(clippy::unwrap_used)] // a panic is how a test fails

use hallmark_tests::sandbox::{Run, Sandbox};
use serde_json::Value;

/// The `next` commands of a reply.
fn next_of(v: &Value) -> Vec<String> {
    v.get("error")
        .unwrap_or(v)
        .get("next")
        .and_then(Value::as_array)
        .map(|n| {
            n.iter()
                .filter_map(|c| c.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Runs a `next` command as a person would paste it, with `…` filled in, `hall` being
/// the binary under test.
fn follow(sb: &Sandbox, dir: &std::path::Path, command: &str) -> Run {
    let hall = hallmark_tests::sandbox::hall_bin();
    let line = command
        .replace('…', "done")
        .replace("hall ", &format!("{} ", hall.display()));
    sb.sh(dir, &line, &[])
}

#[test]
fn an_argument_error_names_what_is_missing_and_a_typo_its_nearest_command() {
    let sb = Sandbox::initialized();
    sb.hall(&sb.repo, &["new", "--title", "Typos"]).ok();

    let run = sb.hall(&sb.repo, &["drop", "1"]);
    insta::assert_snapshot!("drop_without_reason", sb.snap(&run));
    let e = run.err("USAGE", 2);
    let message = e["error"]["message"].as_str().unwrap();
    assert!(message.contains("--reason"), "{message}");
    // The example is the line as typed, with the missing argument filled in.
    let next = next_of(&e);
    assert_eq!(next[0], "hall drop 1 --reason \"…\"");
    let done = follow(&sb, &sb.repo, &next[0]);
    assert_eq!(done.code, 0, "{done:?}");
    assert_eq!(done.json()["state"], "dropped");

    let run = sb.hall(&sb.repo, &["stauts"]);
    insta::assert_snapshot!("typo", sb.snap(&run));
    let e = run.err("USAGE", 2);
    let next = next_of(&e);
    assert_eq!(next[0], "hall status");
    assert_eq!(follow(&sb, &sb.repo, &next[0]).code, 0);
    let e = sb.hall(&sb.repo, &["daemon", "rnu"]).err("USAGE", 2);
    assert_eq!(next_of(&e)[0], "hall daemon run");

    // `hall help <command>` shows one command; on a terminal, its long help.
    let run = sb.hall(&sb.repo, &["help", "drop"]);
    insta::assert_snapshot!("help_drop", sb.snap(&run));
    let v = run.ok();
    assert_eq!(v["commands"][0]["name"], "drop");
    let v = sb.hall(&sb.repo, &["help", "daemon", "run"]).ok();
    assert_eq!(v["commands"][0]["usage"], "hall daemon run [OPTIONS]");
    let e = sb.hall(&sb.repo, &["help", "stauts"]).err("USAGE", 2);
    assert_eq!(next_of(&e)[0], "hall help status");
    if let Some(text) = sb.on_a_terminal(&sb.repo, "hall help drop; hall drop 1") {
        assert!(text.contains("Usage: hall drop"), "{text}");
        assert!(text.contains("--reason <REASON>"), "{text}");
        assert!(
            text.contains("next: `hall drop 1 --reason \"…\"`"),
            "{text}"
        );
        assert!(!text.contains("{\""), "no JSON on a terminal: {text}");
    }
}

#[test]
fn help_json_prints_each_usage_once() {
    let sb = Sandbox::new();
    let v = sb.hall(&sb.repo, &["help", "--json"]).ok();
    let usages: Vec<String> = v["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let (name, usage) = (c["name"].as_str().unwrap(), c["usage"].as_str().unwrap());
            assert!(
                usage.starts_with(&format!("hall {name}")) && !usage.contains("hall hall"),
                "{usage}"
            );
            usage.to_string()
        })
        .collect();
    insta::assert_snapshot!("help_usages", usages.join("\n"));
}

#[test]
fn ready_refuses_an_empty_item_and_says_when_no_daemon_will_pick_it_up() {
    let sb = Sandbox::initialized();
    sb.hall(&sb.repo, &["new", "--title", "Empty"]).ok();
    let wt = sb.worktree("H-0001");
    let run = sb.hall(&wt, &["ready"]);
    insta::assert_snapshot!("ready_no_commits", sb.snap(&run));
    let e = run.err("WRONG_STATE", 4);
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no commits since its base main"),
        "{e}"
    );
    let status = sb.hall(&wt, &["status", "H-0001"]).ok();
    assert_eq!(status["item"]["state"], "development", "nothing was frozen");

    // Following the hint: commit, then ready again.
    std::fs::write(wt.join("work.txt"), "done\n").unwrap();
    let next = next_of(&e);
    assert_eq!(follow(&sb, &wt, &next[0]).code, 0);
    let run = sb.hall(&wt, &["ready"]);
    insta::assert_snapshot!("ready_no_daemon", sb.snap(&run));
    let v = run.ok();
    assert_eq!(v["state"], "checks");
    let warned = v["warnings"].to_string();
    assert!(warned.contains("no daemon is running"), "{v}");
    let next = next_of(&v);
    assert!(next.contains(&"hall daemon start".to_string()), "{v}");
    assert!(
        next.contains(&"hall daemon run --until-idle".to_string()),
        "{v}"
    );
    assert!(run.stderr.contains("no daemon is running"), "{run:?}");
}

#[test]
fn a_dirty_worktree_suggests_commands_that_work_with_untracked_files() {
    let sb = Sandbox::initialized();
    sb.hall(&sb.repo, &["new", "--title", "Dirty"]).ok();
    let wt = sb.worktree("H-0001");
    sb.commit(&wt, "lib.txt", "one\n", "One");
    std::fs::write(wt.join("new.txt"), "untracked\n").unwrap();
    std::fs::write(wt.join("lib.txt"), "two\n").unwrap();
    let run = sb.hall(&wt, &["ready"]);
    insta::assert_snapshot!("dirty_untracked", sb.snap(&run));
    let e = run.err("DIRTY_WORKTREE", 4);
    let next = next_of(&e);
    assert!(next.iter().all(|n| !n.ends_with(" commit")), "{next:?}");
    assert!(
        next[0].contains("add -A") && next[0].contains("commit -m"),
        "{next:?}"
    );
    assert!(next[1].ends_with("stash -u"), "{next:?}");

    // The stash takes the untracked file too, so ready then works; the commit form
    // (with -m, so no editor opens) works as well.
    let stash = follow(&sb, &wt, &next[1]);
    assert_eq!(stash.code, 0, "{stash:?}");
    assert!(!wt.join("new.txt").exists());
    sb.hall(&wt, &["ready"]).ok();
    sb.hall(&wt, &["pull-back"]).ok();
    sb.git(&wt, &["stash", "pop", "-q"]);
    sb.hall(&wt, &["ready"]).err("DIRTY_WORKTREE", 4);
    let commit = follow(&sb, &wt, &next[0]);
    assert_eq!(commit.code, 0, "{commit:?}");
    assert_eq!(sb.git(&wt, &["status", "--porcelain"]), "");
    assert_eq!(sb.hall(&wt, &["ready"]).ok()["state"], "checks");
}

#[test]
fn item_in_review_says_why_and_its_commands_print_something() {
    let sb = Sandbox::initialized();
    sb.hall(&sb.repo, &["new", "--title", "Moved"]).ok();
    let wt = sb.worktree("H-0001");
    sb.commit(&wt, "lib.txt", "one\n", "One");
    sb.hall(&wt, &["ready"]).ok();
    sb.commit(&wt, "lib.txt", "two\n", "Two");
    let run = sb.hall(&wt, &["ready"]);
    insta::assert_snapshot!("item_in_review", sb.snap(&run));
    let e = run.err("ITEM_IN_REVIEW", 4);
    let message = e["error"]["message"].as_str().unwrap();
    assert!(message.contains("HEAD has moved"), "{message}");
    for n in next_of(&e) {
        let r = follow(&sb, &wt, &n);
        assert_eq!(r.code, 0, "{n}: {r:?}");
        assert!(!r.stdout.trim().is_empty(), "{n} prints nothing");
    }
    // The second hint froze the new HEAD.
    let head = sb.git(&wt, &["rev-parse", "HEAD"]);
    assert_eq!(
        sb.hall(&wt, &["status", "H-0001"]).ok()["item"]["sha"],
        head
    );
}

#[test]
fn a_failed_new_leaves_nothing_behind() {
    let sb = Sandbox::initialized();
    let taken = sb.worktree("H-0001");
    std::fs::create_dir_all(&taken).unwrap();
    std::fs::write(taken.join("mine.txt"), "my own files\n").unwrap();
    let run = sb.hall(&sb.repo, &["new", "--title", "Blocked"]);
    insta::assert_snapshot!("new_path_exists", sb.snap(&run));
    let e = run.err("WRONG_STATE", 4);
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap()
            .contains("already exists"),
        "{e}"
    );
    let branches = sb.git(&sb.repo, &["branch", "--list", "hm/*"]);
    assert_eq!(branches, "", "no orphan branch");
    assert_eq!(
        sb.hall(&sb.repo, &["status", "--all"]).ok()["items"],
        serde_json::json!([])
    );
    // Moving the directory away (the hint) lets the same number be made.
    let moved = follow(&sb, &sb.repo, &next_of(&e)[1]);
    assert_eq!(moved.code, 0, "{moved:?}");
    let v = sb.hall(&sb.repo, &["new", "--title", "Blocked"]).ok();
    assert_eq!(v["item"], "H-0001", "the number was not burned");

    // A template that makes the branch and then fails: the branch goes again.
    let config = std::fs::read_to_string(sb.repo.join(".hallmark.toml")).unwrap();
    let broken = format!("worktree = \"git branch {{branch}} {{base}} && false\"\n{config}");
    std::fs::write(sb.repo.join(".hallmark.toml"), broken).unwrap();
    sb.git(
        &sb.repo,
        &["commit", "-qam", "A worktree template that fails"],
    );
    sb.hall(&sb.repo, &["new", "--title", "Half"])
        .err("COMMAND_FAILED", 1);
    let branches = sb.git(&sb.repo, &["branch", "--list", "hm/H-0002*"]);
    assert_eq!(branches, "", "the half-made branch was deleted");
    std::fs::write(sb.repo.join(".hallmark.toml"), config).unwrap();
    sb.git(&sb.repo, &["commit", "-qam", "Back to the default"]);
    let v = sb.hall(&sb.repo, &["new", "--title", "Whole"]).ok();
    assert_eq!(v["item"], "H-0002");
    assert!(sb.worktree("H-0002").is_dir());
}

#[test]
fn daemon_run_until_idle_reads_as_text_and_runs_registered_repos_from_anywhere() {
    let sb = Sandbox::initialized();
    let outside = sb.root.join("elsewhere");
    std::fs::create_dir_all(&outside).unwrap();
    // Outside any repository, a run until idle runs the registered ones.
    let run = sb.hall(
        &outside,
        &["daemon", "run", "--until-idle", "--tick", "0.05"],
    );
    assert_eq!(run.code, 0, "{run:?}");
    let help = sb.hall(&sb.repo, &["help", "daemon", "run"]).ok();
    let repo_help = help["commands"][0]["args"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "repo")
        .unwrap()["help"]
        .to_string();
    assert!(repo_help.contains("--until-idle"), "{repo_help}");

    let Some(idle) = sb.on_a_terminal(&sb.repo, "hall daemon run --until-idle --tick 0.05") else {
        eprintln!("skipped the terminal: util-linux `script` is not installed");
        return;
    };
    insta::assert_snapshot!("daemon_run_idle_text", idle);

    // A ready item gives the loop steps to print (the stand-in model has no script,
    // so its runs fail and the item is held: steps all the same, and no real model).
    sb.stand_ins(std::path::Path::new(env!("CARGO_BIN_EXE_fake-claude")));
    sb.hall(&sb.repo, &["new", "--title", "Loop"]).ok();
    let wt = sb.worktree("H-0001");
    sb.commit(&wt, "lib.txt", "one\n", "One");
    sb.hall(&wt, &["ready"]).ok();
    let text = sb
        .on_a_terminal(&sb.repo, "hall daemon run --until-idle --tick 0.05")
        .unwrap();
    assert!(!text.contains("{\""), "no JSON lines on a terminal: {text}");
    assert!(
        text.contains("H-0001  assayer"),
        "the steps, as text: {text}"
    );
    let last = text.lines().rev().find(|l| l.starts_with("Ran ")).unwrap();
    assert!(
        last.ends_with("now no item has work the loop can do."),
        "{text}"
    );
    // Off a terminal the reply is one JSON document.
    let run = sb.hall(
        &sb.repo,
        &["daemon", "run", "--until-idle", "--tick", "0.05"],
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.json()["running"].is_boolean(), "{run:?}");
}

#[test]
fn init_and_new_warn_while_hallmarks_files_are_not_committed() {
    let sb = Sandbox::new();
    let run = sb.hall(&sb.repo, &["init"]);
    insta::assert_snapshot!("init_uncommitted", sb.snap(&run));
    let v = run.ok();
    assert_eq!(
        v["uncommitted"],
        serde_json::json!([".hallmark.toml", ".hallmark/review.md", "CLAUDE.md"])
    );
    assert!(
        run.stderr.contains("new worktrees won't have them"),
        "{run:?}"
    );
    let run = sb.hall(&sb.repo, &["new", "--title", "Early"]);
    insta::assert_snapshot!("new_uncommitted", sb.snap(&run));
    let v = run.ok();
    assert!(v["warnings"].to_string().contains(".hallmark.toml"), "{v}");
    assert!(!sb.worktree("H-0001").join(".hallmark.toml").exists());
    // The commit command it names makes the warning go away.
    let commit = next_of(&v)
        .into_iter()
        .find(|n| n.contains("git add"))
        .unwrap();
    assert_eq!(follow(&sb, &sb.repo, &commit).code, 0);
    let run = sb.hall(&sb.repo, &["new", "--title", "Later"]);
    let v = run.ok();
    assert!(v.get("warnings").is_none(), "{v}");
    assert!(run.stderr.trim().is_empty(), "{run:?}");
    assert!(sb.worktree("H-0002").join(".hallmark.toml").exists());
    assert!(
        sb.hall(&sb.repo, &["init"])
            .ok()
            .get("uncommitted")
            .is_none()
    );
}

#[test]
fn doctor_fails_with_a_failed_check_and_its_counts_agree() {
    let sb = Sandbox::new();
    let run = sb.hall(&sb.repo, &["doctor"]);
    assert_eq!(run.code, 1, "a failed check fails the doctor: {run:?}");
    sb.hall(&sb.repo, &["init"]).ok();
    // A repository-level event (the gate room's use) is readable and indexed alike.
    sb.hall(&sb.repo, &["status"]).ok();
    let v = sb.hall(&sb.repo, &["doctor"]).ok();
    let detail = |name: &str| -> String {
        v["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == name)
            .unwrap()["detail"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let number = |text: &str, after: &str| -> String {
        text.split(after)
            .next()
            .unwrap()
            .rsplit(' ')
            .next()
            .unwrap()
            .to_string()
    };
    let (journal, index) = (detail("journal"), detail("index"));
    assert_eq!(
        number(&journal, " event"),
        number(&index, " event"),
        "{journal} / {index}"
    );
    insta::assert_snapshot!("doctor_counts", format!("{journal}\n{index}"));
    let Some(text) = sb.on_a_terminal(&sb.root, "hall doctor; echo exit=$?") else {
        return;
    };
    assert!(text.contains("exit=1"), "{text}");
    assert!(text.contains("required check failed"), "{text}");
    // No hint is wrapped in backticks around backticks.
    for line in text.lines() {
        assert!(!line.contains("``"), "{line}");
        assert!(!line.contains("→ `install gh"), "{line}");
        assert!(!line.contains("`hall init --signers, then"), "{line}");
    }
}

#[test]
fn doctor_fails_when_a_check_cannot_start_and_only_warns_with_no_checks() {
    let sb = Sandbox::new();
    sb.hall(&sb.repo, &["init"]).ok();
    // Doctor's entry for the repository's checks is named after their config key.
    let gates = |v: &Value| -> Value {
        v["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == "gates")
            .cloned()
            .unwrap()
    };
    // No checks: a warning, and doctor still passes.
    let v = sb.hall(&sb.repo, &["doctor"]).ok();
    assert_eq!(gates(&v)["ok"], false, "{v}");
    assert_eq!(gates(&v)["required"], false, "{v}");
    // A check whose program is nowhere: doctor fails and names it.
    sb.configure(
        "base = \"main\"\ngates = [\"no-such-linter --check\"]\n",
        "true\n",
        "Check with a missing tool",
    );
    let run = sb.hall(&sb.repo, &["doctor"]);
    assert_eq!(run.code, 1, "{run:?}");
    let v: Value = serde_json::from_str(run.stdout.trim()).unwrap();
    let g = gates(&v);
    assert_eq!(g["required"], true, "{g}");
    assert!(
        g["detail"].as_str().unwrap().contains("no-such-linter"),
        "{g}"
    );
}

#[test]
fn text_on_a_terminal_is_for_people() {
    let sb = Sandbox::initialized();
    sb.hall(&sb.repo, &["new", "--title", "People"]).ok();
    let wt = sb.worktree("H-0001");
    sb.commit(&wt, "lib.txt", "one\n", "One");
    sb.hall(
        &wt,
        &[
            "propose-ready",
            "--summary",
            "Caps retries at three",
            "--ask",
        ],
    )
    .ok();
    let inbox = sb.hall(&sb.repo, &["inbox"]).ok();
    assert!(
        inbox["entries"][0]["text"]
            .as_str()
            .unwrap()
            .contains("Caps retries at three"),
        "{inbox}"
    );
    let log = sb.hall(&sb.repo, &["log", "--limit", "2"]).ok();
    for e in log["events"].as_array().unwrap() {
        assert_eq!(e["item"], "H-0001", "{log}");
    }
    let Some(text) = sb.on_a_terminal(
        &sb.repo,
        "hall inbox; hall retry H-0001 --reason again; hall log H-0001 --kind verdict; hall log --kind verdict",
    ) else {
        eprintln!("skipped: util-linux `script` is not installed");
        return;
    };
    assert!(!text.contains("with no hold"), "{text}");
    assert!(!text.contains("{\""), "{text}");
    insta::assert_snapshot!(
        "text_for_people",
        hallmark_tests::snapshot::of_text(&sb, &text)
    );
}

/// Every decision the code and the docs cite has its record in `docs/decisions/`, and
/// nothing cites the design's own ADR numbers, whose document is not in the repository.
#[test]
fn every_decision_cited_has_its_record() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf();
    let records: Vec<String> = std::fs::read_dir(root.join("docs/decisions"))
        .unwrap()
        .flatten()
        .filter_map(|e| {
            e.file_name()
                .to_str()
                .map(|n| n.get(..4).unwrap_or("").to_string())
        })
        .collect();
    let mut files = Vec::new();
    let mut stack: Vec<std::path::PathBuf> = [
        "host",
        "docs",
        "plugin",
        "rooms",
        "wit",
        "tests/src",
        "tests/tests",
    ]
    .iter()
    .map(|d| root.join(d))
    .collect();
    files.push(root.join("README.md"));
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if p.is_dir() {
                if !["target", "node_modules", "snapshots", "fixtures"].contains(&name.as_str()) {
                    stack.push(p);
                }
            } else if name.ends_with(".rs") || name.ends_with(".md") || name.ends_with(".wit") {
                files.push(p);
            }
        }
    }
    assert!(
        files.len() > 100,
        "the tree was read: {} files",
        files.len()
    );
    let mut cited = 0;
    let mut wrong = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap_or_default();
        let words: Vec<&str> = text.split(|c: char| !c.is_ascii_alphanumeric()).collect();
        for pair in words.windows(2) {
            let number = pair[1].len() == 4 && pair[1].chars().all(|c| c.is_ascii_digit());
            if !number {
                continue;
            }
            match pair[0] {
                "decision" | "Decision" | "decisions" => {
                    cited += 1;
                    if !records.iter().any(|r| r == pair[1]) {
                        wrong.push(format!(
                            "{}: decision {} has no record",
                            f.display(),
                            pair[1]
                        ));
                    }
                }
                "ADR" => wrong.push(format!("{}: ADR {} cites the design", f.display(), pair[1])),
                _ => {}
            }
        }
    }
    assert!(cited > 20, "the citations were found: {cited}");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
