//! The hooks under stress: any input, a damaged journal or config, a moved directory, unknown tools, the gate corpus and a deadline; they never break a session, and deny only what might do harm.

use super::*;

#[test]
fn hooks_fail_open_on_any_input_and_do_nothing_outside_an_initialized_repo() {
    let (sb, _id, wt) = setup();
    let good = bash(&wt, "git push").to_string();
    let mut inputs: Vec<Vec<u8>> = vec![
        b"".to_vec(),
        b"not json".to_vec(),
        b"{".to_vec(),
        good.as_bytes()[..good.len() / 2].to_vec(),
        b"[1,2,3]".to_vec(),
        b"{\"tool_name\": 7, \"tool_input\": \"git push\"}".to_vec(),
        b"{\"tool_name\": \"Bash\", \"tool_input\": {\"command\": 12}}".to_vec(),
        b"\xff\xfe\x00\x01".to_vec(),
        vec![b'{'; 100_000],
    ];
    let mut huge = b"{\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"".to_vec();
    huge.extend(std::iter::repeat_n(b'a', 17 * 1024 * 1024));
    huge.extend(b"\"}}");
    // Random bytes and random truncations of real inputs.
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for _ in 0..30 {
        let cut = (next() as usize) % good.len();
        inputs.push(good.as_bytes()[..cut].to_vec());
        inputs.push((0..(next() % 200)).map(|_| next() as u8).collect());
    }
    for input in &inputs {
        for event in [
            "pre-tool-use",
            "session-start",
            "stop",
            "post-tool-use",
            "user-prompt-submit",
            "notification",
        ] {
            let run = hook_raw(&sb, event, input, &[]);
            assert_eq!(run.code, 0, "{event}: {run:?}");
            if event == "pre-tool-use" {
                assert!(
                    !run.stdout.contains("\"deny\""),
                    "never a deny by accident: {}",
                    String::from_utf8_lossy(&input[..input.len().min(80)])
                );
            }
        }
    }
    // A call too large to read might be anything: it is refused, on purpose, with the
    // reason; every other event still just logs it.
    let (d, reason) = decision(&hook_raw(&sb, "pre-tool-use", &huge, &[]));
    assert_eq!(d, "deny");
    assert!(
        reason["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("larger than")),
        "{reason}"
    );
    for event in ["session-start", "stop", "post-tool-use"] {
        let run = hook_raw(&sb, event, &huge, &[]);
        assert_eq!((run.code, run.stdout.as_str()), (0, ""), "{event}");
    }
    let log = std::fs::read_to_string(sb.repo.join(".git/hallmark/hooks.log")).unwrap_or_default();
    assert!(
        log.contains("input is not hook JSON"),
        "errors are logged: {log}"
    );
    // Argument errors of `hall hook` itself are never exit 2.
    for args in [
        vec!["hook"],
        vec!["hook", "nope"],
        vec!["hook", "pre-tool-use", "--bogus", "x"],
    ] {
        let mut cmd = sb.hall_command(&sb.repo);
        let out = cmd.args(&args).stdin(Stdio::null()).output().expect("run");
        assert_eq!(out.status.code(), Some(0), "{args:?}");
    }
    // Outside an initialized repository: nothing at all.
    let outside = Sandbox::new();
    let run = hook(
        &outside,
        "pre-tool-use",
        &bash(&outside.repo, "git push"),
        &[],
    );
    assert_eq!((run.code, run.stdout.as_str()), (0, ""));
    let run = hook(
        &outside,
        "pre-tool-use",
        &write(&outside.repo, &outside.repo.join("a.rs")),
        &[],
    );
    assert_eq!((run.code, run.stdout.as_str()), (0, ""));
}

/// Every labelled command of the corpus, through the real `hall hook pre-tool-use`, in
/// both guard modes. Zero wrong answers.
#[test]
fn the_gate_corpus_through_the_real_hook() {
    let sb = Sandbox::initialized();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/gate");
    let context: Value = serde_json::from_str(
        &std::fs::read_to_string(fixtures.join("context.json")).expect("context"),
    )
    .expect("json");
    for (name, value) in context["aliases"].as_object().expect("aliases") {
        sb.git(
            &sb.repo,
            &[
                "config",
                &format!("alias.{name}"),
                value.as_str().expect("alias"),
            ],
        );
    }
    let base = std::fs::read_to_string(sb.repo.join(".hallmark.toml")).expect("config");
    let with_guard = |guard: &str| {
        let allow: Vec<String> = context["push_allow"]
            .as_array()
            .expect("allow")
            .iter()
            .map(|v| v.to_string())
            .collect();
        let free: Vec<String> = context["free"]
            .as_array()
            .expect("free")
            .iter()
            .map(|v| v.to_string())
            .collect();
        base.replace("# ship = ", "ship = \"rig submit\"\n# ship = ")
            .replace(
                "[capture]\n",
                &format!(
                    "[capture]\npush_guard = \"{guard}\"\npush_allow = [{}]\nfree = [{}]\n",
                    allow.join(", "),
                    free.join(", ")
                ),
            )
    };
    let id = sb.hall(&sb.repo, &["new", "--title", "Corpus"]).ok()["item"]
        .as_str()
        .expect("id")
        .to_string();
    let wt = sb.worktree(&id);
    for (path, text) in context["scripts"].as_object().expect("scripts") {
        let p = wt.join(path);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(p, text.as_str().expect("script")).expect("write");
    }
    for (path, text) in context["files"].as_object().expect("files") {
        let p = wt.join(path);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(p, text.as_str().expect("file")).expect("write");
    }
    for (name, rev) in context["revisions"].as_object().expect("revisions") {
        make_revision(&sb, &wt, name, rev);
    }
    std::fs::write(sb.repo.join("staged.rs"), "fn x() {}").expect("write");
    sb.git(&sb.repo, &["add", "staged.rs"]);
    let corpus = std::fs::read_to_string(fixtures.join("commands.jsonl")).expect("corpus");
    let entries: Vec<Value> = corpus
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("entry"))
        .collect();
    assert!(
        entries.len() >= 150,
        "the corpus has {} commands",
        entries.len()
    );
    let mut wrong = Vec::new();
    for guard in ["strict", "parse"] {
        commit_config(&sb, &with_guard(guard));
        for e in &entries {
            let cmd = e["cmd"].as_str().expect("cmd");
            let cwd = if e["where"] == "main" {
                sb.repo.clone()
            } else {
                wt.clone()
            };
            let actor = e["actor"]
                .as_str()
                .map(|a| vec![("HALL_ACTOR", a)])
                .unwrap_or_default();
            let (got, _) = decision(&hook(&sb, "pre-tool-use", &bash(&cwd, cmd), &actor));
            let expect_deny = match e["expect"].as_str().expect("expect") {
                "deny" => true,
                "deny-strict" => guard == "strict",
                _ => false,
            };
            if (got == "deny") != expect_deny {
                wrong.push(format!(
                    "[{guard}] {cmd:?}: got {got}, expected {} ({})",
                    if expect_deny { "deny" } else { "allow" },
                    e["why"]
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "{} wrong answers:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

#[test]
fn a_corrupt_journal_or_config_never_breaks_the_session() {
    let (sb, id, wt) = setup();
    let path = sb
        .repo
        .join(format!(".git/hallmark/items/{id}/events.jsonl"));
    let mut text = std::fs::read_to_string(&path).expect("read");
    text.push_str("garbage in the middle\n");
    text.push_str(&std::fs::read_to_string(&path).expect("read"));
    std::fs::write(&path, text).expect("write");
    for (event, input) in [
        ("pre-tool-use", write(&wt, &wt.join("a.rs"))),
        (
            "session-start",
            json!({"session_id": "s", "cwd": wt, "hook_event_name": "SessionStart"}),
        ),
        (
            "user-prompt-submit",
            json!({"session_id": "s", "cwd": wt, "hook_event_name": "UserPromptSubmit", "prompt": "hi"}),
        ),
        (
            "stop",
            json!({"session_id": "s", "cwd": wt, "hook_event_name": "Stop", "last_assistant_message": "done"}),
        ),
    ] {
        let run = hook(&sb, event, &input, &[]);
        assert_eq!(run.code, 0, "{event}: {run:?}");
        assert!(!run.stdout.contains("\"deny\""), "{event}: {run:?}");
    }
    // A broken config is logged, and the gates go on with the defaults: breaking the
    // config must not be a way around them.
    commit_config(&sb, "max_rejects = \"many\"\n");
    let run = hook(&sb, "pre-tool-use", &bash(&wt, "git status"), &[]);
    assert_eq!((run.code, run.stdout.as_str()), (0, ""));
    std::fs::write(
        &path,
        std::fs::read_to_string(&path)
            .expect("read")
            .replace("garbage in the middle\n", ""),
    )
    .expect("repair");
    let run = hook(&sb, "pre-tool-use", &bash(&wt, "git push"), &[]);
    let log = std::fs::read_to_string(sb.repo.join(".git/hallmark/hooks.log")).unwrap_or_default();
    assert_eq!(decision(&run).0, "deny", "{log}");
    let log = std::fs::read_to_string(sb.repo.join(".git/hallmark/hooks.log")).expect("log");
    assert!(log.contains("max_rejects"), "{log}");
}

fn tool(cwd: &Path, name: &str, input: Value) -> Value {
    json!({"session_id": "s-1", "cwd": cwd, "hook_event_name": "PreToolUse", "tool_name": name,
           "tool_input": input, "tool_use_id": "toolu_3"})
}

/// The gate that denied a PreToolUse answer, or `allow`.
fn verdict(run: &Run) -> String {
    let (d, reason) = decision(run);
    if d == "allow" {
        return d;
    }
    reason["error"]["check"].as_str().unwrap_or("?").to_string()
}

#[test]
fn a_session_stays_gated_for_its_repository_wherever_its_directory_goes() {
    let (sb, _id, wt) = setup();
    let outside = tempfile::tempdir().expect("tempdir");
    let outside = outside.path().canonicalize().expect("canonical");
    let push = format!(
        "git -C {} push -q origin HEAD:refs/heads/away",
        wt.display()
    );
    let call = |sid: &str, cwd: &Path, command: &str| {
        json!({"session_id": sid, "cwd": cwd, "hook_event_name": "PreToolUse",
               "tool_name": "Bash", "tool_input": {"command": command}})
    };
    // A session never seen in a repository, outside every repository: nothing to gate.
    let run = hook(&sb, "pre-tool-use", &call("s-free", &outside, &push), &[]);
    assert_eq!(verdict(&run), "allow");
    // A session that started in the worktree is bound to its repository, where no
    // session can write.
    let start = json!({"session_id": "s-bound", "cwd": wt, "hook_event_name": "SessionStart"});
    assert_eq!(hook(&sb, "session-start", &start, &[]).code, 0);
    let binding = sb.root.join("data/sessions/s-bound.json");
    assert!(binding.is_file(), "the binding is recorded");
    let (d, reason) = decision(&hook(&sb, "pre-tool-use", &write(&wt, &binding), &[]));
    assert_eq!(
        (d.as_str(), &reason["error"]["check"]),
        ("deny", &json!("protect"))
    );
    // From outside every repository, and from a directory that is gone.
    for cwd in [outside.clone(), outside.join("deleted")] {
        let run = hook(&sb, "pre-tool-use", &call("s-bound", &cwd, &push), &[]);
        assert_eq!(verdict(&run), "push", "{}", cwd.display());
        let note = format!(
            "git --git-dir={} notes --ref=hallmark add -m x HEAD",
            sb.repo.join(".git").display()
        );
        let run = hook(&sb, "pre-tool-use", &call("s-bound", &cwd, &note), &[]);
        assert_eq!(verdict(&run), "note", "{}", cwd.display());
    }
    // Claude Code's project directory anchors a session before it is bound (and a
    // directory that is gone is judged there, where Claude Code runs the command).
    let project = [("CLAUDE_PROJECT_DIR", wt.to_str().expect("utf8"))];
    let run = hook(
        &sb,
        "pre-tool-use",
        &call("s-new", &outside, &push),
        &project,
    );
    assert_eq!(verdict(&run), "push");
    let plain = "git push -q origin HEAD:refs/heads/away";
    let run = hook(
        &sb,
        "pre-tool-use",
        &call("", &outside.join("gone"), plain),
        &project,
    );
    assert_eq!(verdict(&run), "push");
    // A repository made inside the worktree doesn't hide the worktree: relative paths
    // resolve against the nested directory, git aimed at the worktree is judged for it,
    // and the nested repository itself is not Hallmark's to gate.
    sb.git(&wt, &["init", "-q", ".scratch"]);
    let nested = wt.join(".scratch");
    let judge = |v: &Value| verdict(&hook(&sb, "pre-tool-use", v, &[]));
    assert_eq!(
        judge(&bash(&nested, "git -C .. push -q origin HEAD:refs/heads/x")),
        "push"
    );
    assert_eq!(
        judge(&bash(&nested, "git -C .. notes add -m x HEAD")),
        "note"
    );
    assert_eq!(
        judge(&bash(&nested, "echo x > ../../repo/.git/hooks/pre-push")),
        "protect"
    );
    assert_eq!(
        judge(&write(&nested, &sb.repo.join(".git/hooks/pre-push"))),
        "protect"
    );
    assert_eq!(judge(&write(&nested, &wt.join("src/ok.rs"))), "allow");
    assert_eq!(judge(&write(&nested, &nested.join("own.txt"))), "allow");
    assert_eq!(
        judge(&bash(&nested, "git add -A && git commit -q -m 'its own'")),
        "allow"
    );
    assert!(!sb.repo.join(".git/hooks/pre-push").exists());
}

#[test]
fn tools_the_hook_does_not_know_are_judged_by_what_their_input_says() {
    let (sb, _id, wt) = setup();
    let common = sb.repo.join(".git");
    let judge = |name: &str, input: Value| {
        verdict(&hook(&sb, "pre-tool-use", &tool(&wt, name, input), &[]))
    };
    // Every string, however deep, is a path the tool may write.
    let deep = json!({"files": [{"target": {"path": common.join("config")}, "text": "x"}]});
    assert_eq!(judge("mcp__fs__write_many", deep), "protect");
    for path in [
        "../repo/.git/hooks/pre-push".to_string(),
        "~/.gitconfig".to_string(),
        format!("file://{}", common.join("hooks/post-commit").display()),
        ".git".to_string(),
    ] {
        let input = json!({"path": path, "content": "x"});
        assert_eq!(
            judge("mcp__filesystem__write_file", input),
            "protect",
            "{path}"
        );
    }
    let key = sb.config_dir().join("signing_ed25519");
    assert_eq!(judge("mcp__fs__read_file", json!({"path": key})), "protect");
    // Strings that land nowhere protected, and tools that write nothing a session chooses.
    let notes = json!({"path": wt.join("notes.md"), "content": "see .git/config", "n": 3});
    assert_eq!(judge("mcp__filesystem__write_file", notes), "allow");
    assert_eq!(
        judge("mcp__search__query", json!({"q": "git push", "limit": 5})),
        "allow"
    );
    let todos = json!({"todos": [{"content": ".git/config", "status": "pending"}]});
    assert_eq!(judge("TodoWrite", todos), "allow");
    // A name that says it pushes, and an input too big to read.
    assert_eq!(
        judge("mcp__github__push_files", json!({"branch": "x"})),
        "push"
    );
    let many: Vec<String> = (0..2000).map(|i| format!("f{i}")).collect();
    assert_eq!(
        judge("mcp__fs__touch", json!({"paths": many})),
        "unreadable"
    );
    // Input nested deeper than the hook's reader goes is refused, not let through.
    let mut deep = json!("x");
    for _ in 0..200 {
        deep = json!([deep]);
    }
    assert_eq!(judge("mcp__fs__write", json!({"path": deep})), "hook");
    // Shell text is judged as a Bash command.
    let push = json!({"command": "git push -q origin HEAD:refs/heads/x", "description": "d"});
    assert_eq!(judge("Monitor", push.clone()), "push");
    assert_eq!(judge("PowerShell", push), "push");
    let words = json!({"cmd": ["git", "notes", "--ref=hallmark", "add", "-m", "x", "HEAD"]});
    assert_eq!(judge("mcp__shell__run", words), "note");
    assert_eq!(
        judge(
            "PowerShell",
            json!({"command": "hall verdict --file v.json"})
        ),
        "hall"
    );
    // PowerShell: what the shell reading can't follow is refused in strict mode, and
    // its parameters' values are paths too.
    assert_eq!(
        judge("PowerShell", json!({"command": "Get-ChildItem -Path src"})),
        "allow"
    );
    assert_eq!(
        judge("PowerShell", json!({"command": "iex 'git status'"})),
        "unreadable"
    );
    let set = json!({"command": "Set-Content -Path:.git/hooks/post-commit -Value x"});
    assert_eq!(judge("PowerShell", set), "protect");
    // MultiEdit and NotebookEdit are judged like Edit.
    let multi = json!({"file_path": common.join("config"), "edits": []});
    assert_eq!(judge("MultiEdit", multi), "protect");
    let nb = json!({"notebook_path": common.join("hooks/x.ipynb"), "new_source": ""});
    assert_eq!(judge("NotebookEdit", nb), "protect");
    // From the main checkout, the edit gate: outside an item's worktree.
    let outside_item = json!({"file_path": sb.repo.join("src/a.rs"), "edits": []});
    let run = hook(
        &sb,
        "pre-tool-use",
        &tool(&sb.repo, "MultiEdit", outside_item),
        &[],
    );
    assert_eq!(verdict(&run), "edit");
    let mine = json!({"notebook_path": wt.join("a.ipynb"), "new_source": ""});
    assert_eq!(judge("NotebookEdit", mine), "allow");
}

#[test]
fn out_of_time_a_call_that_might_do_harm_is_denied_and_a_read_is_not() {
    let (sb, _id, wt) = setup();
    // The analysis is made to sleep past a short deadline.
    let slow = [
        ("HALL_HOOK_STALL_MS", "10000"),
        ("HALL_HOOK_DEADLINE_MS", "300"),
    ];
    let start = std::time::Instant::now();
    let run = hook(&sb, "pre-tool-use", &bash(&wt, "git status"), &slow);
    assert!(
        start.elapsed() < std::time::Duration::from_secs(5),
        "the watchdog answered in time: {:?}",
        start.elapsed()
    );
    let (d, reason) = decision(&run);
    assert_eq!(d, "deny");
    assert_eq!(reason["error"]["check"], "deadline");
    assert_eq!(reason["error"]["code"], "GATE_DENIED");
    assert!(
        reason["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("ran out of time")),
        "{reason}"
    );
    for input in [
        write(&wt, &wt.join("a.rs")),
        tool(&wt, "mcp__fs__write", json!({"path": "a.rs"})),
        tool(&wt, "PowerShell", json!({"command": "Get-ChildItem"})),
    ] {
        let run = hook(&sb, "pre-tool-use", &input, &slow);
        assert_eq!(verdict(&run), "deadline", "{input}");
    }
    // A read, a tool that writes nothing, and the other events fail open: exit 0, nothing
    // printed. A read of Hallmark's configuration (the signing key) does not.
    let read = |p: &Path| tool(&wt, "Read", json!({"file_path": p}));
    for (event, input) in [
        ("pre-tool-use", read(&wt.join("lib.rs"))),
        ("pre-tool-use", tool(&wt, "TodoWrite", json!({"todos": []}))),
        (
            "session-start",
            json!({"session_id": "s", "cwd": wt, "hook_event_name": "SessionStart"}),
        ),
    ] {
        let run = hook(&sb, event, &input, &slow);
        assert_eq!((run.code, run.stdout.as_str()), (0, ""), "{event} {input}");
    }
    let key = sb.config_dir().join("signing_ed25519");
    assert_eq!(
        verdict(&hook(&sb, "pre-tool-use", &read(&key), &slow)),
        "deadline"
    );
    // Without the stall the same calls are judged as usual.
    let run = hook(&sb, "pre-tool-use", &bash(&wt, "git status"), &[slow[1]]);
    assert_eq!(verdict(&run), "allow");
    let log = std::fs::read_to_string(sb.repo.join(".git/hallmark/hooks.log")).unwrap_or_default();
    assert!(log.contains("gave up"), "{log}");
}

#[test]
fn a_glob_that_would_backtrack_is_judged_in_time_and_the_push_after_it_too() {
    let (sb, _id, wt) = setup();
    std::fs::write(wt.join("a".repeat(200)), "").expect("write");
    let glob = format!("cat {}b", "*a".repeat(20));
    let start = std::time::Instant::now();
    let run = hook(
        &sb,
        "pre-tool-use",
        &bash(
            &wt,
            &format!("{glob} 2>/dev/null; git push -q origin HEAD:refs/heads/x"),
        ),
        &[],
    );
    assert!(
        start.elapsed() < std::time::Duration::from_secs(5),
        "judged in {:?}",
        start.elapsed()
    );
    assert_eq!(verdict(&run), "push");
    assert_eq!(
        verdict(&hook(&sb, "pre-tool-use", &bash(&wt, &glob), &[])),
        "allow"
    );
    // A chain of wrappers that once overflowed the hook's stack (a hook that dies lets
    // the call through) is judged, push and all.
    let chain = format!(
        "{}git push -q origin HEAD:refs/heads/x",
        "env ".repeat(5000)
    );
    assert_eq!(
        verdict(&hook(&sb, "pre-tool-use", &bash(&wt, &chain), &[])),
        "push"
    );
    // A glob wider than the hook lists in one call can't be checked, so it is refused.
    let many = wt.join("many");
    std::fs::create_dir_all(&many).expect("mkdir");
    for i in 0..2100 {
        std::fs::write(many.join(format!("f{i}")), "").expect("write");
    }
    let (d, reason) = decision(&hook(&sb, "pre-tool-use", &bash(&wt, "rm many/*"), &[]));
    assert_eq!(d, "deny");
    assert!(
        reason["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("more files than the hook checks")),
        "{reason}"
    );
    assert_eq!(
        verdict(&hook(&sb, "pre-tool-use", &bash(&wt, "rm many/f1*"), &[])),
        "allow"
    );
}

/// Makes branch `name` one commit on `wt`'s HEAD that adds the revision's files and
/// symbolic links, written with plumbing so no working tree changes.
fn make_revision(sb: &Sandbox, wt: &Path, name: &str, rev: &Value) {
    let mut script = String::from(
        "set -euo pipefail\nexport GIT_INDEX_FILE=\"$(git rev-parse --absolute-git-dir)/corpus-index\"\ngit read-tree HEAD\n",
    );
    let entries = [("files", "100644"), ("links", "120000")];
    for (key, mode) in entries {
        for (path, content) in rev[key].as_object().into_iter().flatten() {
            let content = content.as_str().expect("content");
            script.push_str(&format!(
                "git update-index --add --cacheinfo {mode},\"$(printf %s '{content}' | git hash-object -w --stdin)\",'{path}'\n"
            ));
        }
    }
    script.push_str(&format!(
        "git update-ref refs/heads/{name} \"$(git commit-tree -p HEAD -m {name} \"$(git write-tree)\")\"\nrm -f \"$GIT_INDEX_FILE\"\n"
    ));
    let run = sb.sh(wt, &script, &[]);
    assert_eq!(run.code, 0, "revision {name}: {}", run.stderr);
}
