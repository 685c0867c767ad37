//! The README's main job: the whole Hallmark loop on a throwaway
//! repository with the embedded defaults. Every step runs the real `hall` binary and
//! prints what it answered.
//!
//! `cargo run -p hallmark-tests --bin demo [-- --keep]`

use std::path::Path;

use hallmark_tests::sandbox::{Run, Sandbox, lenses, test_double};

fn show(sb: &Sandbox, dir: &Path, args: &[&str]) -> serde_json::Value {
    let where_ = sb.redact(&dir.display().to_string());
    println!(
        "\n$ cd {where_} && hall {}",
        args.iter()
            .map(|a| if a.contains(' ') {
                format!("\"{a}\"")
            } else {
                a.to_string()
            })
            .collect::<Vec<_>>()
            .join(" ")
    );
    let run: Run = sb.hall(dir, args);
    let body = serde_json::from_str::<serde_json::Value>(run.stdout.trim())
        .map(|v| serde_json::to_string_pretty(&v).unwrap_or_default())
        .unwrap_or_else(|_| run.stdout.clone());
    for line in sb.redact(&body).lines() {
        println!("  {line}");
    }
    if run.code != 0 {
        println!("  (exit {})", run.code);
    }
    run.json()
}

/// The daemon's log lines, one a step.
fn print_log(sb: &Sandbox, v: &serde_json::Value) {
    for l in v["log"].as_array().cloned().unwrap_or_default() {
        println!(
            "  {} {:<8} -> {:<10} {}",
            l["item"].as_str().unwrap_or(""),
            l["role"].as_str().unwrap_or(""),
            l["state"].as_str().unwrap_or(""),
            sb.redact(l["did"].as_str().unwrap_or(""))
        );
    }
}

fn main() {
    let keep = std::env::args().any(|a| a == "--keep");
    hallmark_tests::sandbox::build_loudly();
    let sb = Sandbox::new();
    println!(
        "Hallmark demo on a throwaway repository ([ROOT] = {}).",
        sb.root.display()
    );
    println!("It has one commit on main and a bare `origin`; hall runs with a fixed clock.");

    show(&sb, &sb.repo, &["init", "--signers"]);
    // One check, so the Assay Office has something to say: the limit must be inclusive.
    sb.configure(
        "base = \"main\"\ngates = [\"sh check.sh\"]\n",
        "grep -q '<=' limit.txt || { echo 'limit.txt:1: the limit must be inclusive (<=)'; exit 1; }\n",
        "Set up Hallmark",
    );
    println!(
        "\n(committed the setup on main: .hallmark.toml with one check, `sh check.sh`, and \
         .hallmark/allowed_signers, the key CI trusts)"
    );

    let v = show(
        &sb,
        &sb.repo,
        &[
            "new",
            "--title",
            "Cap retries",
            "--no-split",
            "Stop retrying after three attempts.",
        ],
    );
    println!(
        "\n(--no-split: one small change, so the Front Desk's intake run, which may split a \
         request into parts built side by side, is skipped)"
    );
    let id = v["item"].as_str().unwrap_or("H-0001").to_string();
    let wt = sb.worktree(&id);

    std::fs::write(wt.join("limit.txt"), "attempts < 3\n").unwrap_or_else(|e| panic!("write: {e}"));
    show(&sb, &wt, &["ready"]);
    println!("\n(refused: the work isn't committed yet; nothing was lost)");
    sb.commit(&wt, "limit.txt", "attempts < 3\n", "Cap retries at 3");
    println!("\n$ git commit -m \"Cap retries at 3\"   (in the worktree)");
    show(&sb, &wt, &["ready", "--note", "first version"]);

    // The model can't be reached from here, so its answers are scripted, and labelled as
    // such: the reviewer asks for a change once, the fixer makes it, then it approves.
    let lenses = lenses();
    let script = serde_json::json!({
        "review": [
            {"verdict": {"verdict": "reject", "summary": "The cap is checked with <, so the third attempt is refused.", "lenses": lenses,
                "findings": [{"lens": "correctness", "severity": "major", "file": "limit.txt", "line": 1,
                              "scenario": "max_attempts = 3: the third attempt is refused because the check is < 3."}]}},
            {"verdict": {"verdict": "approve", "summary": "The cap is inclusive now and the check proves it.", "lenses": lenses, "findings": []}}
        ],
        "fix": [
            {"sh": "printf 'attempts <= 3\\n' > limit.txt && git commit -qam 'Make the cap inclusive' && hall fixed"},
            {"sh": "printf 'attempts <= 3  # inclusive, see F1\\n' > limit.txt && git commit -qam 'Say why the cap is inclusive' && hall fixed F1"}
        ],
        "develop": [
            {"sh": "printf 'log once when the cap is hit\\n' > LOGGING.md && git add LOGGING.md && git commit -qm 'Log when the cap is hit'"}
        ],
        // Once the item closes, the librarian distils it: a rule from the finding that
        // proved right, and the words of its Gazette.
        "librarian": [
            {"verdict": {"learnings": [{"kind": "rule", "title": "Retry caps are inclusive",
                "body": "A cap of N allows the Nth attempt: check it with <=, and say so where the cap is set.",
                "paths": ["limit.txt"], "round": 2, "finding": "F1"}],
             "contradicted": [],
             "gazette": {"headline": "The third retry runs again",
                "story": "A retry cap of three refused the third attempt. The review caught it, the fix made the cap inclusive, and the second review approved.",
                "findings": {"F1": "The cap refused the very attempt it was meant to allow."}}}}
        ]
    });
    let script_path = sb.script_model(&script);
    sb.stand_ins(&test_double("fake-claude"));
    // GitHub is a simulator on 127.0.0.1, driven by the real gh.
    let github = sb.github();
    println!(
        "\n(SCRIPTED MODEL: no model is reachable here, so `claude` is a stand-in that prints real \
         stream-json with these scripted answers: the reviewer rejects once, the fixer fixes, the reviewer approves, \
         the librarian distils a learning, and later a dev run answers a reviewer on the PR. GitHub is a simulator on 127.0.0.1, which the real `gh` \
         talks to. Everything else is real: git, the journal, the rooms, the daemon.)"
    );
    println!(
        "\n$ hall daemon run --until-idle   (the loop: checks, review, fixes, hallmark, ship)"
    );
    print_log(&sb, &sb.run_loop(&script_path, &[]).json());
    let status = show(&sb, &sb.repo, &["status", &id]);
    show(&sb, &sb.repo, &["findings", &id]);
    show(&sb, &sb.repo, &["usage", "--by", "role"]);
    // What the loop learned: the librarian's proposal waits for a person.
    show(&sb, &sb.repo, &["library", "review"]);
    show(&sb, &sb.repo, &["library", "review", "--accept", "L-0001"]);
    show(&sb, &sb.repo, &["gazette", &id]);
    if let Some(sha) = status["item"]["hallmark"].as_str() {
        println!("\n$ git notes --ref=hallmark show {}", &sha[..7]);
        println!(
            "  {}",
            sb.git(&sb.repo, &["notes", "--ref=hallmark", "show", sha])
                .trim()
        );
    }
    if let Some(sha) = status["item"]["hallmark"].as_str() {
        // What CI does: a fresh clone of origin, no journal, the notes fetched, and
        // `hall verify` against the signers the base branch lists.
        let clone = sb.root.join("ci-clone");
        sb.git(
            &sb.root,
            &["clone", "-q", sb.origin.to_str().unwrap_or(""), "ci-clone"],
        );
        sb.git(
            &clone,
            &[
                "fetch",
                "-q",
                "origin",
                "refs/notes/hallmark:refs/notes/hallmark",
            ],
        );
        println!("\n(in a fresh clone of origin, as CI runs it, with no journal)");
        let v = show(&sb, &clone, &["verify", sha, "--base", "main"]);
        assert_eq!(
            v["sha"], sha,
            "the CI check did not verify the hallmark: {v}"
        );
    }
    assert_eq!(
        status["item"]["state"], "closed",
        "the demo's loop did not finish"
    );
    // The Delivery office follows the PR: a person asks for a change on GitHub, a dev
    // run makes it, the loop reviews it again and the same PR is updated; then it merges.
    println!("\n(on GitHub: grace asks for a change on PR #1)");
    github.review(
        1,
        "grace",
        hallmark_tests::github::ReviewState::ChangesRequested,
        "Please log once when the cap is hit.",
    );
    println!(
        "\n$ hall daemon run --until-idle   (the Delivery office: watch, dev run, review, update)"
    );
    print_log(&sb, &sb.run_loop(&script_path, &[]).json());
    println!("\n(on GitHub: PR #1 is merged)");
    github.merge(1);
    println!(
        "\n$ hall daemon run --until-idle   (the watch sees the merge; the sweeper removes the worktree)"
    );
    print_log(&sb, &sb.run_loop(&script_path, &[]).json());
    let status = show(&sb, &sb.repo, &["status", &id]);
    assert_eq!(
        status["item"]["delivered"]["merged"], true,
        "the demo's PR was not delivered"
    );
    assert!(!wt.exists(), "the sweeper did not remove the worktree");
    // The terminal app's board, one frame drawn as text: the item is in Records now.
    println!("\n$ hall frame --size 100x12   (one frame of `hall` on a terminal)");
    let frame = sb.hall(&sb.repo, &["frame", "--size", "100x12"]).ok();
    let rows: Vec<&str> = frame["rows"]
        .as_array()
        .map(|r| r.iter().filter_map(|l| l.as_str()).collect())
        .unwrap_or_default();
    for row in &rows {
        println!("{row}");
    }
    assert!(
        rows.iter().any(|r| r.contains(&format!("{id} closed"))),
        "the board's frame does not show {id} in Records: {rows:?}"
    );
    println!(
        "\n{id} is delivered: checked, reviewed, fixed, hallmarked on its exact commit, shipped as \
         PR #1, its signed hallmark verified without the journal, a reviewer's request answered \
         by a dev run, reviewed again and pushed to the same PR, merged, and its worktree swept. \
         `hall log {id}` has the whole record."
    );
    if keep {
        let path = sb.root.clone();
        std::mem::forget(sb);
        println!("Kept the sandbox at {}", path.display());
    }
}
