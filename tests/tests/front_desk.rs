//! The Front Desk end to end, with the scripted model: `hall new` runs the intake, the
//! plan room judges its plan, a split makes a parent and its parts (each with a branch
//! cut from the parent's and a worktree of its own), `hall merge` brings each part
//! home, and the parent alone is reviewed and shipped. Every doubt makes one item, with
//! the reason in the reply.

#![allow(clippy::unwrap_used)] // a panic is how a test fails

use std::path::{Path, PathBuf};

use crate::common::*;

/// A repository with the loop configured and the scripted model on PATH.
struct Desk {
    sb: Sandbox,
    script: PathBuf,
}

fn part(title: &str, paths: &[&str]) -> Value {
    json!({"title": title, "paths": paths, "acceptance": format!("{title} works, and its test passes")})
}

fn plan(parts: Vec<Value>) -> Value {
    json!({"verdict": {"split": true, "reason": "Three separate areas.", "parts": parts}})
}

fn three_parts() -> Value {
    plan(vec![
        part("Web form", &["web/**"]),
        part("API handler", &["api/**"]),
        part("Docs page", &["docs/**"]),
    ])
}

impl Desk {
    fn new(config: &str, script: Value) -> Desk {
        let sb = Sandbox::initialized();
        sb.stand_ins(Path::new(env!("CARGO_BIN_EXE_fake-claude")));
        sb.github();
        sb.configure(config, CHECK, "Configure the loop");
        // The base passes the check, so the integrated parent does too.
        sb.commit(&sb.repo, "lib.txt", "attempts <= 3\n", "Inclusive limit");
        sb.git(&sb.repo, &["push", "-q", "origin", "main"]);
        let script = sb.script_model(&script);
        Desk { sb, script }
    }

    fn hall(&self, dir: &Path, args: &[&str]) -> Run {
        let model = self.sb.model_env(&self.script);
        let vars: Vec<(&str, &str)> = model
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        self.sb.hall_env(dir, args, &vars)
    }

    fn new_item(&self, args: &[&str]) -> Value {
        let mut all = vec!["new"];
        all.extend_from_slice(args);
        self.hall(&self.sb.repo, &all).ok()
    }

    fn status(&self, id: &str) -> Value {
        self.sb.hall(&self.sb.repo, &["status", id]).ok()
    }

    fn kinds(&self, id: &str) -> Vec<String> {
        let v = self
            .sb
            .hall(&self.sb.repo, &["log", id, "--limit", "1000"])
            .ok();
        v["events"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .iter()
            .map(|e| e["event"].as_str().unwrap_or("").to_string())
            .collect()
    }

    /// The stand-in `claude`'s calls with this agent.
    fn calls_of(&self, agent: &str) -> usize {
        std::fs::read_to_string(self.sb.root.join("claude.jsonl"))
            .unwrap_or_default()
            .lines()
            .filter(|l| l.contains(agent))
            .count()
    }
}

#[test]
fn a_request_split_in_three_is_built_in_parts_merged_reviewed_once_and_shipped() {
    let d = Desk::new(
        CONFIG,
        json!({"intake": [three_parts()], "review": [approve()]}),
    );
    let v = d.new_item(&["Add a signup form, its API endpoint, and a docs page"]);
    let parent = v["item"].as_str().unwrap().to_string();
    assert_eq!(v["intake"]["split"], true, "{v}");
    let parts = v["parts"].as_array().unwrap().clone();
    assert_eq!(parts.len(), 3, "{v}");
    let parent_branch = v["branch"].as_str().unwrap().to_string();
    let parent_tip = d.sb.git(&d.sb.repo, &["rev-parse", &parent_branch]);
    // Each part: an item of its own, on a branch cut from the parent's, in its own
    // worktree; the parent's journal lists them.
    for (p, dir) in parts.iter().zip(["web", "api", "docs"]) {
        let id = p["item"].as_str().unwrap();
        let wt = PathBuf::from(p["worktree"].as_str().unwrap());
        assert!(wt.is_dir(), "{p}");
        let branch = p["branch"].as_str().unwrap();
        assert_eq!(d.sb.git(&d.sb.repo, &["rev-parse", branch]), parent_tip);
        let s = d.status(id);
        assert_eq!(s["item"]["parent"], parent.as_str());
        assert_eq!(s["item"]["base"], parent_branch.as_str());
        d.sb.commit(
            &wt,
            &format!("{dir}/{dir}.txt"),
            dir,
            &format!("Build the {dir} part"),
        );
    }
    let s = d.status(&parent);
    assert_eq!(s["parts"].as_array().unwrap().len(), 3, "{s}");
    assert!(
        d.kinds(&parent)
            .iter()
            .filter(|k| *k == "part_added")
            .count()
            == 3
    );
    // The parent cannot be frozen while a part is open, and a part never can.
    let refused = d.sb.hall(&d.sb.repo, &["ready", &parent]);
    assert_eq!(refused.code, 4, "{}", refused.stdout);
    assert!(
        refused.stdout.contains("CHILDREN_OPEN"),
        "{}",
        refused.stdout
    );
    let first = parts[0]["item"].as_str().unwrap();
    let child_ready = d.sb.hall(&d.sb.repo, &["ready", first]);
    assert_eq!(child_ready.code, 4, "{}", child_ready.stdout);
    assert!(
        child_ready.stdout.contains("hall merge"),
        "{}",
        child_ready.stdout
    );
    // Merge each part: a merge commit on the parent's branch naming it; the part is
    // closed and its worktree gone.
    for p in &parts {
        let id = p["item"].as_str().unwrap();
        let m = d.sb.hall(&d.sb.repo, &["merge", id]).ok();
        assert_eq!(m["state"], "closed", "{m}");
        assert_eq!(m["worktree_removed"], true, "{m}");
        let subject =
            d.sb.git(&d.sb.repo, &["log", "-1", "--format=%s", &parent_branch]);
        assert!(subject.contains(id), "{subject}");
        assert!(!Path::new(p["worktree"].as_str().unwrap()).exists());
        assert_eq!(
            d.kinds(id).last().map(String::as_str),
            Some("worktree_removed")
        );
        assert!(d.kinds(id).contains(&"merged".to_string()));
    }
    let merges = d.sb.git(
        &d.sb.repo,
        &[
            "rev-list",
            "--merges",
            "--count",
            &format!("main..{parent_branch}"),
        ],
    );
    assert_eq!(merges.trim(), "3");
    // Now the parent goes to review, once, whole, and ships.
    let parent_wt = d.sb.worktree(&parent);
    d.hall(&parent_wt, &["ready"]).ok();
    let run = d.sb.run_loop(&d.script, &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let s = d.status(&parent);
    assert_eq!(s["item"]["state"], "closed", "{s}");
    assert!(s["item"]["hallmark"].is_string(), "{s}");
    let kinds = d.kinds(&parent);
    assert_eq!(
        kinds.iter().filter(|k| *k == "verdict").count(),
        1,
        "{kinds:?}"
    );
    assert!(kinds.contains(&"shipped".to_string()), "{kinds:?}");
    // The daemon never took a part.
    for p in &parts {
        let k = d.kinds(p["item"].as_str().unwrap());
        assert!(!k.iter().any(|e| e == "ready" || e == "verdict"), "{k:?}");
    }
    // One review run, none for the parts; one intake run.
    assert_eq!(d.calls_of("hallmark:principal-engineer"), 1);
    assert_eq!(d.calls_of("hallmark:intake"), 1);
}

/// Each way the intake can fail to give a usable plan makes one item, and says why.
#[test]
fn every_doubt_makes_one_item_with_the_reason_in_the_reply() {
    let cases: Vec<(&str, Value, &str)> = vec![
        (
            "no plan at all (text, no structured answer)",
            json!({"text": "I think it splits."}),
            "not_a_plan",
        ),
        (
            "overlapping paths",
            plan(vec![
                part("Web", &["web/**"]),
                part("Forms", &["web/forms/*.ts"]),
            ]),
            "overlapping_paths",
        ),
        ("one part", plan(vec![part("Web", &["web/**"])]), "one_part"),
        (
            "the model says it does not split",
            json!({"verdict": {"split": false, "reason": "One change.", "parts": []}}),
            "not_split",
        ),
        (
            "a run that fails",
            json!({"error": "overloaded"}),
            "run_failed",
        ),
        (
            "a run that outlives the timeout",
            json!({"sleep": 5, "verdict": {"split": false, "reason": "slow", "parts": []}}),
            "timed_out",
        ),
    ];
    for (what, step, code) in cases {
        let d = Desk::new(
            &format!("{CONFIG}[intake]\ntimeout = 2\n"),
            json!({"intake": [step]}),
        );
        let started = std::time::Instant::now();
        let v = d.new_item(&["Build the thing"]);
        assert!(
            started.elapsed().as_secs() < 20,
            "{what}: took {:?}",
            started.elapsed()
        );
        assert_eq!(v["intake"]["split"], false, "{what}: {v}");
        let reasons: Vec<&str> = v["intake"]["reasons"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r.as_str().unwrap())
            .collect();
        assert!(reasons.contains(&code), "{what}: {v}");
        assert!(v["parts"].is_null(), "{what}: {v}");
        assert!(
            !v["intake"]["why"].as_array().unwrap().is_empty(),
            "{what}: {v}"
        );
        let id = v["item"].as_str().unwrap();
        assert!(d.kinds(id).contains(&"intake".to_string()), "{what}");
        assert!(d.sb.worktree(id).is_dir(), "{what}");
    }
}

#[test]
fn more_parts_than_max_parts_and_no_split_make_one_item() {
    let four = plan(vec![
        part("A", &["a/**"]),
        part("B", &["b/**"]),
        part("C", &["c/**"]),
        part("D", &["d/**"]),
    ]);
    let d = Desk::new(
        &format!("{CONFIG}[intake]\nmax_parts = 3\n"),
        json!({"intake": [four]}),
    );
    let v = d.new_item(&["Four things"]);
    // The schema caps `parts` at max_parts, so the (scripted) model's answer is refused
    // before it reaches hall: one item, the run's failure said.
    assert_eq!(v["intake"]["split"], false, "{v}");
    // --no-split runs no intake at all.
    let v = d.new_item(&["Four things again", "--no-split"]);
    assert_eq!(v["intake"]["reasons"], json!(["no_split"]), "{v}");
    assert_eq!(d.calls_of("hallmark:intake"), 1);
}

#[test]
fn a_missing_model_binary_makes_one_item() {
    let sb = Sandbox::initialized();
    sb.configure(CONFIG, CHECK, "Configure the loop");
    // No stand-in on PATH: `claude` cannot be found.
    let run = sb.hall_env(
        &sb.repo,
        &["new", "Build two things"],
        &[("PATH", "/usr/bin:/bin")],
    );
    let v = run.ok();
    assert_eq!(v["intake"]["reasons"], json!(["no_model"]), "{v}");
}

#[test]
fn a_merge_conflict_changes_neither_branch_and_leaves_the_parent_clean() {
    let d = Desk::new(
        CONFIG,
        json!({"intake": [plan(vec![part("Web", &["web/**"]), part("API", &["api/**"])])]}),
    );
    let v = d.new_item(&["Two parts"]);
    let parent = v["item"].as_str().unwrap().to_string();
    let parent_wt = d.sb.worktree(&parent);
    let parts = v["parts"].as_array().unwrap().clone();
    let (a, b) = (&parts[0], &parts[1]);
    let (a_wt, b_wt) = (
        PathBuf::from(a["worktree"].as_str().unwrap()),
        PathBuf::from(b["worktree"].as_str().unwrap()),
    );
    // Both parts write the same file, against the plan: the second merge conflicts.
    d.sb.commit(&a_wt, "shared.txt", "from a\n", "A writes shared");
    d.sb.commit(&b_wt, "shared.txt", "from b\n", "B writes shared");
    d.sb.hall(&d.sb.repo, &["merge", a["item"].as_str().unwrap()])
        .ok();
    let parent_branch = v["branch"].as_str().unwrap();
    let b_branch = b["branch"].as_str().unwrap();
    let before = (
        d.sb.git(&d.sb.repo, &["rev-parse", parent_branch]),
        d.sb.git(&d.sb.repo, &["rev-parse", b_branch]),
    );
    let run =
        d.sb.hall(&d.sb.repo, &["merge", b["item"].as_str().unwrap()]);
    assert_eq!(run.code, 4, "{}", run.stdout);
    let e: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(e["error"]["code"], "MERGE_CONFLICT", "{e}");
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap()
            .contains("shared.txt"),
        "{e}"
    );
    assert!(
        e["error"]["next"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n.as_str().unwrap().contains("merge --no-ff")),
        "{e}"
    );
    let after = (
        d.sb.git(&d.sb.repo, &["rev-parse", parent_branch]),
        d.sb.git(&d.sb.repo, &["rev-parse", b_branch]),
    );
    assert_eq!(before, after, "both branches as they were");
    assert_eq!(d.sb.git(&parent_wt, &["status", "--porcelain"]).trim(), "");
    assert!(!parent_wt.join(".git").is_dir());
    // The part stays open, its worktree with it.
    let s = d.status(b["item"].as_str().unwrap());
    assert_eq!(s["item"]["state"], "development", "{s}");
    assert!(b_wt.is_dir());
    // Resolved by hand as the reply says; the next `hall merge` records it.
    let (merged, _) =
        d.sb.git_may_fail(&parent_wt, &["merge", "--no-ff", "-q", b_branch]);
    assert!(!merged, "the same conflict by hand");
    std::fs::write(parent_wt.join("shared.txt"), "from a and b\n").unwrap();
    d.sb.git(&parent_wt, &["add", "shared.txt"]);
    d.sb.git(&parent_wt, &["commit", "-q", "--no-edit"]);
    let by_hand = d.sb.git(&parent_wt, &["rev-parse", "HEAD"]);
    let b_id = b["item"].as_str().unwrap();
    let m = d.sb.hall(&d.sb.repo, &["merge", b_id]).ok();
    assert_eq!(m["commit"], by_hand.trim(), "{m}");
    assert_eq!(m["state"], "closed", "{m}");
    // The parent moves on; asking again gives the same answer and writes nothing.
    d.sb.commit(&parent_wt, "after.txt", "more\n", "More on the parent");
    let events = d.kinds(b_id).len();
    let again = d.sb.hall(&d.sb.repo, &["merge", b_id]).ok();
    assert_eq!(again["commit"], by_hand.trim(), "{again}");
    assert_eq!(again["changed"], false, "{again}");
    assert_eq!(d.kinds(b_id).len(), events);
}

#[test]
fn a_part_added_by_hand_and_a_part_s_session_cannot_edit_a_sibling() {
    let d = Desk::new(
        CONFIG,
        json!({"intake": [plan(vec![part("Web", &["web/**"]), part("API", &["api/**"])])]}),
    );
    let v = d.new_item(&["Two parts"]);
    let parent = v["item"].as_str().unwrap().to_string();
    let parts = v["parts"].as_array().unwrap().clone();
    // `--parent` adds one more, by hand, with no intake run.
    let extra = d.new_item(&["--parent", &parent, "--title", "CLI flag"]);
    assert_eq!(extra["parent"], parent.as_str(), "{extra}");
    assert!(extra["intake"].is_null(), "{extra}");
    let s = d.status(&parent);
    assert_eq!(s["parts"].as_array().unwrap().len(), 3, "{s}");
    // A session in one part's worktree may edit there, and not in its sibling's.
    let (a_wt, b_wt) = (
        PathBuf::from(parts[0]["worktree"].as_str().unwrap()),
        PathBuf::from(parts[1]["worktree"].as_str().unwrap()),
    );
    let edit = |target: &Path| {
        let input = json!({
            "session_id": "s1", "cwd": a_wt, "hook_event_name": "PreToolUse",
            "tool_name": "Write", "tool_input": {"file_path": target, "content": "x"}
        });
        d.sb.hook(&a_wt, "pre-tool-use", &input, &[]).0
    };
    let own = edit(&a_wt.join("web/page.ts"));
    assert!(!own.contains("\"deny\""), "{own}");
    let sibling = edit(&b_wt.join("api/handler.ts"));
    assert!(sibling.contains("\"deny\""), "{sibling}");
}

/// `hall new --issue N` reads the issue's title, body and labels with the real gh,
/// links it in the journal, and the PR the loop opens for the item closes it.
#[test]
fn an_issue_item_is_linked_with_its_labels_and_its_pr_closes_the_issue() {
    let d = Desk::new(
        CONFIG,
        json!({
            "intake": [{"verdict": {"split": false, "reason": "One change in one place."}}],
            "review": [approve()]
        }),
    );
    let github = d.sb.github();
    let n = github.add_issue("Export is slow", "It takes 40 s on a big table.");
    github.label_issue(n, &["bug", "perf"]);
    let v = d.new_item(&["--issue", &n.to_string()]);
    let id = v["item"].as_str().unwrap().to_string();
    assert_eq!(v["issue"], n, "{v}");
    assert_eq!(v["intake"]["split"], false, "{v}");
    let log = d.sb.hall(&d.sb.repo, &["log", &id, "--limit", "100"]).ok();
    let events = log["events"].as_array().unwrap();
    let request = events[0]["request"].as_str().unwrap();
    assert!(request.contains("It takes 40 s"), "{request}");
    assert!(request.contains("Labels: bug, perf"), "{request}");
    let link = events
        .iter()
        .find(|e| e["event"] == "issue_of")
        .unwrap_or_else(|| panic!("no issue_of in {log}"));
    assert_eq!(link["number"], n, "{link}");
    assert_eq!(link["labels"], json!(["bug", "perf"]), "{link}");
    assert!(
        link["url"]
            .as_str()
            .unwrap()
            .ends_with(&format!("/issues/{n}")),
        "{link}"
    );
    // Work, review, ship: the PR's body closes the issue.
    let wt = d.sb.worktree(&id);
    d.sb.commit(&wt, "export.txt", "streamed\n", "Stream the export");
    d.hall(&wt, &["ready"]).ok();
    let run = d.sb.run_loop(&d.script, &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let s = d.status(&id);
    assert_eq!(s["item"]["state"], "closed", "{s}");
    let prs = github.prs();
    assert_eq!(prs.len(), 1, "{prs:?}");
    assert!(
        prs[0].body.contains(&format!("Closes #{n}\n")),
        "{}",
        prs[0].body
    );
    // The issue itself is GitHub's to close when the PR merges: nothing touched it.
    let touched: Vec<_> = github
        .requests()
        .into_iter()
        .filter(|r| r.operation.contains("Issue") && r.operation != "IssueByNumber")
        .map(|r| r.operation)
        .collect();
    assert!(touched.is_empty(), "{touched:?}");
}
