//! The merger through the daemon, against the GitHub simulator driven by the real gh:
//! parallel lanes on separate files, one merge at a time per base, a red base tip
//! stopping the line, a failed merge command and a `lit` PR held for a person, a crash
//! between the merge and its record, and `hall queue` agreeing with what then happens.

#![allow(clippy::unwrap_used)] // a panic is how a test fails

mod common;

use common::*;
use hallmark_tests::github::{CheckState, PrState};
use hallmark_tests::sandbox::{Run, Sandbox, built_wasm};

const MERGER: &str = "base = \"main\"\ngates = [\"sh check.sh\"]\n[merge]\nmode = \"auto\"\n";

/// A repository with the merger on, and PRs shipped straight into the journal.
struct Queue {
    sb: Sandbox,
}

/// One shipped PR: its item, its number and its head.
#[derive(Clone, Debug)]
struct Shipped {
    id: String,
    n: u64,
    sha: String,
}

impl Queue {
    fn new(extra: &str) -> Queue {
        let sb = Sandbox::initialized();
        sb.stand_ins(std::path::Path::new(env!("CARGO_BIN_EXE_fake-claude")));
        sb.github();
        sb.configure(&format!("{MERGER}{extra}"), CHECK, "Configure the merger");
        // The base passes the repository's check, so a merged result's checks (the
        // pre-merge check) pass unless a test makes them fail.
        sb.commit(
            &sb.repo,
            "lib.txt",
            "attempts <= 3\n",
            "Make the cap inclusive",
        );
        sb.git(&sb.repo, &["push", "-q", "origin", "main"]);
        Queue { sb }
    }

    /// A branch off main with one commit writing `file`, pushed, its PR opened, CI green
    /// at its head, and its item shipped and hallmarked at that head.
    fn ship(&self, branch: &str, file: &str, content: &str) -> Shipped {
        self.ship_with_body(branch, file, content, "")
    }

    /// [`Queue::ship`] with a PR description.
    fn ship_with_body(&self, branch: &str, file: &str, content: &str, body: &str) -> Shipped {
        let sb = &self.sb;
        sb.git(&sb.repo, &["switch", "-q", "-c", branch, "origin/main"]);
        let sha = sb.commit(&sb.repo, file, content, &format!("Change {file}"));
        sb.git(&sb.repo, &["push", "-q", "origin", branch]);
        sb.git(&sb.repo, &["switch", "-q", "main"]);
        let github = sb.github();
        let title = format!("Change {file}");
        let n = github.open_pr_with_body(branch, "main", &title, body, "hallmark-bot");
        github.ci(&sha).set("test", CheckState::Success);
        let id = sb.shipped_item(branch, None, &sha, Some(&github.pr_url(n)));
        Shipped { id, n, sha }
    }

    /// [`Queue::ship`] from a worktree of its own at `<root>/wt-<branch>`, which a
    /// rebase the merger asks for happens in.
    fn ship_in_worktree(&self, branch: &str, file: &str, content: &str) -> Shipped {
        let sb = &self.sb;
        let wt = sb.root.join(format!("wt-{branch}"));
        sb.git(
            &sb.repo,
            &[
                "worktree",
                "add",
                "-q",
                "-b",
                branch,
                wt.to_str().unwrap(),
                "origin/main",
            ],
        );
        let sha = sb.commit(&wt, file, content, &format!("Change {file}"));
        sb.git(&wt, &["push", "-q", "-u", "origin", branch]);
        let github = sb.github();
        let n = github.open_pr(branch, "main", &format!("Change {file}"), "hallmark-bot");
        github.ci(&sha).set("test", CheckState::Success);
        let id = sb.shipped_item(branch, Some(&wt), &sha, Some(&github.pr_url(n)));
        Shipped { id, n, sha }
    }

    /// One `hall daemon run --until-idle`: a watch, then a merger pass (and whatever
    /// the loop then does, with a scripted model that approves).
    fn daemon(&self) -> Run {
        let script = self
            .sb
            .script_model(&json!({"review": [approve(), approve()]}));
        let run = self.sb.run_loop(&script, &[]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        run
    }

    /// A change to b.txt built on branch `a` in a worktree of its own, green, shipped
    /// with its PR based on `a` (a stacked PR). Returns its PR number and item id.
    fn ship_stacked_on_a(&self) -> (u64, String) {
        let (sb, github) = (&self.sb, self.sb.github());
        let wt = sb.root.join("wt-b");
        let path = wt.to_str().unwrap();
        sb.git(&sb.repo, &["worktree", "add", "-q", "-b", "b", path, "a"]);
        let sha = sb.commit(&wt, "b.txt", "b\n", "Change b.txt");
        sb.git(&wt, &["push", "-q", "-u", "origin", "b"]);
        let n = github.open_pr("b", "a", "Change b.txt", "hallmark-bot");
        github.ci(&sha).set("test", CheckState::Success);
        let id = sb.shipped_item_on("b", "a", Some(&wt), &sha, Some(&github.pr_url(n)));
        (n, id)
    }

    /// `hall queue` (JSON, off a terminal).
    fn queue(&self) -> Value {
        self.sb.hall(&self.sb.repo, &["queue"]).ok()
    }

    /// The action `hall queue` gives PR `n`, with its reasons and what it waits for.
    fn planned(&self, n: u64) -> (String, Vec<String>, Vec<u64>) {
        let q = self.queue();
        for base in q["bases"].as_array().unwrap() {
            for pr in base["prs"].as_array().unwrap() {
                if pr["number"] == n {
                    let strings = |v: &Value| -> Vec<String> {
                        v.as_array()
                            .unwrap()
                            .iter()
                            .map(|s| s.as_str().unwrap().to_string())
                            .collect()
                    };
                    let waits = pr["waits_for"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|w| w.as_u64().unwrap())
                        .collect();
                    return (
                        pr["action"].as_str().unwrap().to_string(),
                        strings(&pr["reasons"]),
                        waits,
                    );
                }
            }
        }
        panic!("PR #{n} is not in the queue: {q}");
    }

    /// The PRs merged on the simulated GitHub, ascending.
    fn merged(&self) -> Vec<u64> {
        self.sb
            .github()
            .prs()
            .into_iter()
            .filter(|p| p.state == PrState::Merged)
            .map(|p| p.number)
            .collect()
    }

    /// main's tip on the origin.
    fn tip(&self) -> String {
        self.sb.git(
            &self.sb.root,
            &["--git-dir", "origin.git", "rev-parse", "main"],
        )
    }

    fn events_of(&self, id: &str, kind: &str) -> Vec<Value> {
        let v = self.sb.hall(
            &self.sb.repo,
            &["log", id, "--kind", kind, "--limit", "1000"],
        );
        v.ok()["events"].as_array().cloned().unwrap_or_default()
    }

    fn status(&self, id: &str) -> Value {
        self.sb.hall(&self.sb.repo, &["status", id]).ok()["item"].clone()
    }

    /// The operations of the gh requests since `mark`, in order.
    fn asked_since(&self, mark: usize) -> Vec<String> {
        self.sb
            .github()
            .requests_since(mark)
            .into_iter()
            .map(|r| r.operation)
            .collect()
    }
}

fn said(run: &Run, role: &str) -> Vec<String> {
    run.stderr
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|l| l["role"] == role)
        .map(|l| l["did"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn three_prs_on_separate_files_merge_one_a_pass_with_no_rebase() {
    let q = Queue::new("");
    let a = q.ship("a", "a.txt", "a\n");
    let b = q.ship("b", "b.txt", "b\n");
    let c = q.ship("c", "c.txt", "c\n");

    let mark = q.sb.github().requests().len();
    let run = q.daemon();
    assert!(run.stderr.contains("merger"), "{}", run.stderr);
    // The pass judged: #1 merges; the others form a train behind it, each checked in
    // the same pass on the tip with the PRs ahead of it merged in, and wait only for
    // those to merge, not for their files.
    assert_eq!(q.planned(a.n).0, "merge", "{}", run.stderr);
    for (later, ahead) in [(&b, vec![a.n]), (&c, vec![a.n, b.n])] {
        let (action, reasons, waits) = q.planned(later.n);
        assert_eq!(action, "wait");
        assert_eq!(reasons, ["merge_check_ahead"], "{}", run.stderr);
        assert_eq!(waits, ahead);
    }
    assert_eq!(q.merged(), [a.n], "{}", run.stderr);
    // A pass costs two gh calls however many PRs there are: the open list and the
    // base tips' checks (besides the watch's list, and the merge command's own).
    let asked = q.asked_since(mark);
    let count = |op: &str| asked.iter().filter(|a| *a == op).count();
    assert_eq!(count("PullRequestList"), 2, "{asked:?}");
    assert_eq!(count("MergerBaseTips"), 1, "{asked:?}");
    assert_eq!(count("PullRequestMerge"), 1, "{asked:?}");
    assert_eq!(q.queue()["calls"], 2);
    eprintln!("requests of one daemon run with a merge: {asked:?}");
    assert_eq!(q.queue()["room"]["name"], "builtin:merger");
    // On a terminal, the same plan for a person.
    if let Some(text) = q.sb.on_a_terminal(&q.sb.repo, "hall queue") {
        assert!(
            text.contains(&format!("#1 {}  merge: ready", a.id)),
            "{text}"
        );
        assert!(
            text.contains(&format!("#2 {}  wait for #1: merge_check_ahead", b.id)),
            "{text}"
        );
    }
    let merged = q.events_of(&a.id, "pr_merged");
    assert_eq!(merged.len(), 1);
    assert_eq!(merged[0]["head"], a.sha.as_str());
    assert_eq!(q.events_of(&a.id, "merging").len(), 1);
    assert!(
        !q.events_of(&a.id, "room_used").is_empty(),
        "the decision records its room"
    );

    // Next pass: the watch records #1 delivered first, so #2 goes; it is not behind on
    // its own files, so nothing is rebased.
    let run = q.daemon();
    assert_eq!(q.status(&a.id)["delivered"]["merged"], true);
    assert_eq!(q.planned(b.n).0, "merge");
    assert_eq!(q.merged(), [a.n, b.n], "{}", run.stderr);
    let run = q.daemon();
    assert_eq!(q.merged(), [a.n, b.n, c.n], "{}", run.stderr);
    q.daemon();
    for s in [&a, &b, &c] {
        assert!(q.events_of(&s.id, "rebase_requested").is_empty());
        assert!(q.events_of(&s.id, "reopened").is_empty());
        assert_eq!(q.status(&s.id)["delivered"]["merged"], true);
        assert_eq!(q.events_of(&s.id, "pr_merged").len(), 1);
    }
    // Nothing queued and main's last tip settled: a pass asks GitHub nothing.
    q.daemon();
    let mark = q.sb.github().requests().len();
    let run = q.daemon();
    assert_eq!(q.asked_since(mark), Vec::<String>::new(), "{}", run.stderr);
    // Every file is on main.
    let tree = q.sb.git(
        &q.sb.root,
        &["--git-dir", "origin.git", "ls-tree", "--name-only", "main"],
    );
    for f in ["a.txt", "b.txt", "c.txt"] {
        assert!(tree.lines().any(|l| l == f), "{tree}");
    }
}

#[test]
fn two_prs_on_one_file_merge_in_order_with_one_rebase_of_the_second() {
    let q = Queue::new("");
    let lines: String = (1..=40).map(|n| format!("line {n}\n")).collect();
    q.sb.commit(&q.sb.repo, "long.txt", &lines, "A long file");
    q.sb.git(&q.sb.repo, &["push", "-q", "origin", "main"]);
    let a = q.ship_in_worktree("a", "long.txt", &lines.replace("line 1\n", "line one\n"));
    let b = q.ship_in_worktree("b", "long.txt", &lines.replace("line 40\n", "line forty\n"));

    // #1 merges; #2 touches the file #1 claims, so it waits for #1 and is not rebased
    // yet (its rebase would have to be done again after #1 lands).
    let run = q.daemon();
    assert_eq!(q.merged(), [a.n], "{}", run.stderr);
    let (action, reasons, waits) = q.planned(b.n);
    assert_eq!(
        (action.as_str(), reasons, waits),
        ("wait", vec!["claimed_files".to_string()], vec![a.n])
    );
    assert!(q.events_of(&b.id, "rebase_requested").is_empty());

    // #1 delivered: #2's turn. It is behind main on its own file, so it is reopened
    // with a rebase request, which git does alone; the approval carries and the PR is
    // updated in place.
    let run = q.daemon();
    assert_eq!(q.planned(b.n).0, "rebase", "{}", run.stderr);
    let asked = q.events_of(&b.id, "rebase_requested");
    assert_eq!(asked.len(), 1, "{}", run.stderr);
    assert_eq!(asked[0]["actor"], "merger");
    let item = q.status(&b.id);
    assert_eq!(item["state"], "closed", "{item} {}", run.stderr);
    let head = q.sb.github().pr(b.n).unwrap().head_oid;
    assert_ne!(head, b.sha, "the PR was updated with the rebased head");
    assert_eq!(q.merged(), [a.n]);

    // Its CI passes at the new head: it merges, with no second rebase.
    q.sb.github().ci(&head).set("test", CheckState::Success);
    let run = q.daemon();
    assert_eq!(q.merged(), [a.n, b.n], "{}", run.stderr);
    assert_eq!(q.events_of(&b.id, "rebase_requested").len(), 1);
    assert!(q.events_of(&a.id, "rebase_requested").is_empty());
    assert_eq!(q.events_of(&b.id, "pr_merged")[0]["head"], head.as_str());
    let main = q.sb.git(
        &q.sb.root,
        &["--git-dir", "origin.git", "show", "main:long.txt"],
    );
    assert!(
        main.starts_with("line one\n") && main.ends_with("line forty"),
        "{main}"
    );
}

#[test]
fn a_pr_that_depends_on_a_newer_one_merges_after_it() {
    let q = Queue::new("");
    let a = q.ship_with_body("a", "a.txt", "a\n", "Uses the helper.\n\nDepends on #2\n");
    let b = q.ship("b", "b.txt", "b\n");
    let run = q.daemon();
    let (action, reasons, waits) = q.planned(a.n);
    assert_eq!(
        (action.as_str(), reasons, waits),
        ("wait", vec!["depends_on_open".to_string()], vec![b.n]),
        "{}",
        run.stderr
    );
    assert_eq!(q.planned(b.n).0, "merge");
    assert_eq!(q.merged(), [b.n]);
    let run = q.daemon();
    assert_eq!(q.merged(), [a.n, b.n], "{}", run.stderr);
}

#[test]
fn the_base_branch_merger_room_decides_and_one_on_a_pr_branch_changes_nothing() {
    let q = Queue::new("");
    // PR #1 brings a stricter merger room (it holds every PR) and names it in its own
    // copy of the config: a branch can't choose its own judge, so the built-in room
    // decides and #1 merges.
    let sb = &q.sb;
    sb.git(&sb.repo, &["switch", "-q", "-c", "strict", "origin/main"]);
    std::fs::create_dir_all(sb.repo.join("rooms")).unwrap();
    std::fs::copy(
        built_wasm("hall_fixture_hold_all.wasm"),
        sb.repo.join("rooms/hold-all.wasm"),
    )
    .unwrap();
    let config = std::fs::read_to_string(sb.repo.join(".hallmark.toml")).unwrap();
    std::fs::write(
        sb.repo.join(".hallmark.toml"),
        format!("{config}[rooms]\nmerger = \"rooms/hold-all.wasm\"\n"),
    )
    .unwrap();
    sb.git(&sb.repo, &["add", "-A"]);
    sb.git(&sb.repo, &["commit", "-q", "-m", "A stricter merger room"]);
    let sha = sb.git(&sb.repo, &["rev-parse", "HEAD"]);
    sb.git(&sb.repo, &["push", "-q", "origin", "strict"]);
    sb.git(&sb.repo, &["switch", "-q", "main"]);
    let github = sb.github();
    let n = github.open_pr("strict", "main", "A stricter merger room", "hallmark-bot");
    github.ci(&sha).set("test", CheckState::Success);
    let strict = sb.shipped_item("strict", None, &sha, Some(&github.pr_url(n)));
    let run = q.daemon();
    assert_eq!(
        q.queue()["room"]["name"],
        "builtin:merger",
        "{}",
        run.stderr
    );
    assert_eq!(q.merged(), [n], "{}", run.stderr);
    let used = q.events_of(&strict, "room_used");
    assert_eq!(used.last().unwrap()["source"], "built-in", "{used:?}");

    // Once it is on the base branch, it decides: the next PR is held, not merged.
    q.daemon();
    sb.git(&sb.repo, &["pull", "-q", "--ff-only", "origin", "main"]);
    let b = q.ship("b", "b.txt", "b\n");
    let run = q.daemon();
    let plan = q.queue();
    assert!(
        plan["room"]["name"]
            .as_str()
            .unwrap()
            .contains("rooms/hold-all.wasm"),
        "{plan}"
    );
    let (action, reasons, _) = q.planned(b.n);
    assert_eq!(action, "hold", "{}", run.stderr);
    assert_eq!(reasons, ["held_by_the_repository_room"]);
    assert_eq!(q.merged(), [n], "{}", run.stderr);
    // Not a `lit` hold, so the item itself is not held: the plan says why it waits.
    assert!(q.status(&b.id)["hold"].is_null());
}

#[test]
fn a_merge_waits_for_the_base_tip_checks() {
    let q = Queue::new("");
    // The base has CI, so a tip with no run yet counts as running.
    let sb = &q.sb;
    std::fs::create_dir_all(sb.repo.join(".github/workflows")).unwrap();
    sb.commit(
        &sb.repo,
        ".github/workflows/ci.yml",
        "on: [push, pull_request]\n",
        "CI",
    );
    sb.git(&sb.repo, &["push", "-q", "origin", "main"]);
    let a = q.ship("a", "a.txt", "a\n");
    let b = q.ship("b", "b.txt", "b\n");
    let run = q.daemon();
    let (action, reasons, _) = q.planned(a.n);
    assert_eq!(
        (action.as_str(), reasons),
        ("wait", vec!["base_ci_pending".to_string()]),
        "{}",
        run.stderr
    );
    assert_eq!(q.queue()["bases"][0]["tip_ci"], "pending");
    assert!(q.merged().is_empty());
    // Five minutes on with still no run: none is coming, and #1 merges.
    let later = sb.run_loop(
        &sb.script_model(&json!({})),
        &[("HALL_NOW", "2026-11-02T09:06:00Z")],
    );
    assert_eq!(later.code, 0, "{}", later.stderr);
    assert_eq!(q.merged(), [a.n], "{}", later.stderr);
    // The merge's tip: its run is going, then passes.
    let tip = q.tip();
    q.sb.github().ci(&tip).set("test", CheckState::Running);
    let run = q.daemon();
    assert_eq!(q.planned(b.n).1, ["base_ci_pending"], "{}", run.stderr);
    assert_eq!(q.merged(), [a.n]);
    q.sb.github().ci(&tip).set("test", CheckState::Success);
    let run = q.daemon();
    assert_eq!(q.merged(), [a.n, b.n], "{}", run.stderr);
}

#[test]
fn a_stacked_pr_waits_for_its_parent_then_is_retargeted_and_rebased_at_its_turn() {
    let q = Queue::new("");
    let github = q.sb.github();
    github.delete_branch_on_merge(true);
    let a = q.ship("a", "a.txt", "a\n");
    // #2 is built on #1's branch, and its PR is based on it.
    let (n, b) = q.ship_stacked_on_a();

    let run = q.daemon();
    assert_eq!(q.merged(), [a.n], "{}", run.stderr);
    let (action, reasons, waits) = q.planned(n);
    assert_eq!(
        (action.as_str(), reasons, waits),
        ("wait", vec!["depends_on_open".to_string()], vec![a.n]),
        "{}",
        run.stderr
    );
    let plan = q.queue();
    assert!(
        plan["bases"]
            .as_array()
            .unwrap()
            .iter()
            .any(|b| b["base"] == "a"),
        "#2 is in the queue of its own base: {plan}"
    );
    // GitHub deleted #1's branch and moved #2 onto main; at #2's turn it is behind main
    // on the files #1 brought (squashed there), so it is reopened to be rebased, never
    // merged into the finished branch.
    assert_eq!(github.pr(n).unwrap().base, "main");
    let run = q.daemon();
    let asked = q.events_of(&b, "rebase_requested");
    assert_eq!(asked.len(), 1, "{}", run.stderr);
    assert_eq!(asked[0]["base"], "main");
    assert_eq!(asked[0]["actor"], "merger");
    assert_ne!(github.pr(n).unwrap().state, PrState::Merged);
}

/// The agent's way around the stack: `gh pr edit --base main` on a PR stacked on a
/// branch that has not merged. Its hallmark was measured from that branch, so it vouches
/// for only part of what the PR would bring into main: the merger holds it.
#[test]
fn a_stacked_pr_pointed_at_main_before_its_parent_merged_is_held_not_merged() {
    let q = Queue::new("");
    let github = q.sb.github();
    let a = q.ship("a", "a.txt", "a\n");
    // #1 cannot merge yet: its CI is red.
    github.ci(&a.sha).set("test", CheckState::Failure);
    let (n, _) = q.ship_stacked_on_a();
    github.retarget(n, "main");

    let run = q.daemon();
    assert_eq!(q.merged(), Vec::<u64>::new(), "{}", run.stderr);
    let (action, reasons, _) = q.planned(n);
    assert_eq!(action, "hold", "{}", run.stderr);
    assert_eq!(reasons.first().map(String::as_str), Some("not_hallmarked"));
    assert_ne!(github.pr(n).unwrap().state, PrState::Merged);
    // A journal line saying #1 merged, written by hand, does not make #1's changes part
    // of main: git shows they are not there, and #2 stays held.
    q.sb.record(
        &a.id,
        "delivery",
        json!({"event": "delivered", "pr": github.pr_url(a.n), "merged": true}),
    );
    let run = q.daemon();
    let (action, reasons, _) = q.planned(n);
    assert_eq!(action, "hold", "{}", run.stderr);
    assert_eq!(reasons.first().map(String::as_str), Some("not_hallmarked"));
    assert_ne!(github.pr(n).unwrap().state, PrState::Merged);
    // Its twin, still stacked on #1's branch, is hallmarked there and waits for #1.
    github.retarget(n, "a");
    let run = q.daemon();
    let (action, reasons, waits) = q.planned(n);
    assert_eq!(
        (action.as_str(), waits),
        ("wait", vec![a.n]),
        "{}",
        run.stderr
    );
    assert!(
        reasons.iter().all(|r| r.starts_with("depends_on_")),
        "{reasons:?}"
    );
}

#[test]
fn a_red_base_tip_stops_the_line_names_the_suspect_and_green_resumes_it() {
    let q = Queue::new("");
    let a = q.ship("a", "a.txt", "a\n");
    let b = q.ship("b", "b.txt", "b\n");
    q.daemon();
    assert_eq!(q.merged(), [a.n]);
    // #1's merge broke main.
    q.sb.github().ci(&q.tip()).set("test", CheckState::Failure);
    let run = q.daemon();
    assert_eq!(q.merged(), [a.n], "nothing merges into a red base");
    let (action, reasons, _) = q.planned(b.n);
    assert_eq!(action, "wait");
    assert_eq!(reasons, ["base_red"]);
    assert_eq!(q.queue()["bases"][0]["line_stopped"], true);
    let inbox = q.sb.hall(&q.sb.repo, &["inbox"]).ok();
    let red: Vec<&Value> = inbox["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "base_red")
        .collect();
    assert_eq!(red.len(), 1, "{inbox}");
    let text = red[0]["text"].as_str().unwrap();
    assert!(text.contains(&format!("Suspects: #{}", a.n)), "{text}");
    assert!(
        said(&run, "merger")
            .iter()
            .any(|d| d.contains("a check failed")),
        "{}",
        run.stderr
    );
    // Said once: another pass at the same red tip adds nothing.
    q.daemon();
    let notices = q.sb.hall(&q.sb.repo, &["inbox", "--notices"]).ok();
    let reds = notices["notices"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["kind"] == "base_red")
        .count();
    assert_eq!(reds, 1, "{notices}");
    // Someone fixes main's CI (a re-run passes): the line moves again.
    q.sb.github().ci(&q.tip()).set("test", CheckState::Success);
    let run = q.daemon();
    assert_eq!(q.merged(), [a.n, b.n], "{}", run.stderr);
    let inbox = q.sb.hall(&q.sb.repo, &["inbox"]).ok();
    assert!(
        !inbox["entries"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["kind"] == "base_red"),
        "{inbox}"
    );

    // #2's merge breaks main too, and nothing else is queued: a tip after a merge is
    // still watched, and so is the stopped line, until the tip is green.
    q.sb.github().ci(&q.tip()).set("test", CheckState::Failure);
    q.daemon();
    let reds = || -> Vec<String> {
        q.sb.hall(&q.sb.repo, &["inbox"]).ok()["entries"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["kind"] == "base_red")
            .map(|e| e["text"].as_str().unwrap().to_string())
            .collect()
    };
    let now_red = reds();
    assert_eq!(now_red.len(), 1, "{now_red:?}");
    assert!(
        now_red[0].ends_with(&format!("Suspects: #{}", b.n)),
        "{now_red:?}"
    );
    q.sb.github().ci(&q.tip()).set("test", CheckState::Success);
    q.daemon();
    assert!(reds().is_empty());
}

#[test]
fn a_failed_merge_command_holds_the_item_and_retry_merges_it() {
    let q = Queue::new(
        "command = \"test -f merge-ok.flag && gh pr merge {pr} --squash --match-head-commit {pr_head}\"\n",
    );
    let a = q.ship("a", "a.txt", "a\n");
    let b = q.ship("b", "b.txt", "b\n");
    let run = q.daemon();
    assert!(q.merged().is_empty(), "{}", run.stderr);
    let item = q.status(&a.id);
    assert_eq!(item["hold"]["kind"], "merge_failed", "{item}");
    assert_eq!(item["state"], "closed");
    let inbox = q.sb.hall(&q.sb.repo, &["inbox"]).ok();
    assert!(
        inbox["entries"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["kind"] == "merge_failed" && e["item"] == a.id.as_str()),
        "{inbox}"
    );
    // Held, #1 is left alone; #2 is judged on its own and its command fails too.
    std::fs::write(q.sb.repo.join("merge-ok.flag"), "").unwrap();
    let run = q.daemon();
    assert_eq!(q.merged(), [b.n], "{}", run.stderr);
    let held = q.queue()["held"].clone();
    assert_eq!(held[0]["number"], a.n, "{held}");
    assert_eq!(held[0]["hold"], "merge_failed");
    q.daemon();
    q.sb.hall(&q.sb.repo, &["retry", &a.id, "--reason", "merge again"])
        .ok();
    let run = q.daemon();
    assert_eq!(q.merged(), [a.n, b.n], "{}", run.stderr);
    assert_eq!(q.events_of(&a.id, "pr_merged").len(), 1);
}

#[test]
fn a_lit_pr_is_held_for_a_person_and_merges_after_retry() {
    let q = Queue::new("lit = [\"deploy/\"]\n");
    let a = q.ship("a", "deploy/prod.yml", "replicas: 3\n");
    let b = q.ship("b", "b.txt", "b\n");
    let run = q.daemon();
    // #1 is put to a person and claims nothing, so #2 merges past it.
    assert_eq!(q.planned(a.n).0, "hold");
    assert_eq!(q.planned(a.n).1, ["lit"]);
    assert_eq!(q.merged(), [b.n], "{}", run.stderr);
    let item = q.status(&a.id);
    assert_eq!(item["hold"]["kind"], "lit", "{item}");
    assert!(
        item["hold"]["reason"].as_str().unwrap().contains("deploy/"),
        "{item}"
    );
    // Held: later passes leave it alone and hold it no second time.
    q.daemon();
    assert_eq!(q.merged(), [b.n]);
    assert_eq!(q.events_of(&a.id, "held").len(), 1);
    // The person clears this head.
    q.sb.hall(&q.sb.repo, &["retry", &a.id, "--reason", "merge this head"])
        .ok();
    let run = q.daemon();
    assert_eq!(q.merged(), [a.n, b.n], "{}", run.stderr);
    assert_eq!(q.events_of(&a.id, "pr_merged")[0]["head"], a.sha.as_str());

    // Another lit PR, merged by the person on GitHub instead: once delivered, its hold
    // is gone from the item and the inbox.
    let c = q.ship("c", "deploy/staging.yml", "replicas: 1\n");
    q.daemon();
    assert_eq!(q.status(&c.id)["hold"]["kind"], "lit");
    q.sb.github().merge(c.n);
    let run = q.daemon();
    let item = q.status(&c.id);
    assert_eq!(item["delivered"]["merged"], true, "{}", run.stderr);
    assert!(item["hold"].is_null(), "{item}");
    let inbox = q.sb.hall(&q.sb.repo, &["inbox"]).ok();
    assert!(
        !inbox["entries"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["kind"] == "lit"),
        "{inbox}"
    );
    assert!(
        q.events_of(&c.id, "merging").is_empty(),
        "the merger never ran it"
    );
}

#[test]
fn a_daemon_killed_between_the_merge_and_its_record_merges_nothing_twice() {
    // The command merges, then kills the daemon that ran it before it can record the
    // merge.
    let q = Queue::new(
        "command = \"gh pr merge {pr} --squash --match-head-commit {pr_head} && kill -9 $PPID\"\n",
    );
    let a = q.ship("a", "a.txt", "a\n");
    let b = q.ship("b", "b.txt", "b\n");
    let daemon = || {
        q.sb.hall(
            &q.sb.repo,
            &["daemon", "run", "--until-idle", "--tick", "0.05"],
        )
    };
    let run = daemon();
    assert_ne!(run.code, 0, "the daemon was killed: {}", run.stderr);
    assert_eq!(q.merged(), [a.n]);
    assert_eq!(q.events_of(&a.id, "merging").len(), 1);
    assert!(q.events_of(&a.id, "pr_merged").is_empty());
    // The next daemon's watch can't reach GitHub, so #1's delivery is not recorded:
    // the merger counts #1 in flight and merges nothing.
    q.sb.github()
        .fail_next(hallmark_tests::github::Fault::Status(502), 1);
    let run = daemon();
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(q.status(&a.id)["delivered"].is_null());
    let (action, reasons, waits) = q.planned(b.n);
    assert_eq!(action, "wait", "{}", run.stderr);
    assert_eq!(reasons, ["merge_in_flight"]);
    assert_eq!(waits, [a.n]);
    assert_eq!(q.queue()["bases"][0]["merge_in_flight"], a.n);
    assert_eq!(q.merged(), [a.n]);
    // Once the watch records it, #2 merges (and its command kills that daemon too).
    daemon();
    assert_eq!(q.status(&a.id)["delivered"]["merged"], true);
    assert_eq!(q.merged(), [a.n, b.n]);
    let merges: Vec<u64> =
        q.sb.github()
            .requests()
            .iter()
            .filter(|r| r.operation == "PullRequestMerge")
            .map(|r| {
                r.variables["input"]["pullRequestId"]
                    .as_str()
                    .unwrap()
                    .trim_start_matches("PR_kwSim")
                    .parse()
                    .unwrap()
            })
            .collect();
    assert_eq!(merges, [a.n, b.n], "each PR merged once");
}

#[test]
fn a_pr_whose_merged_result_fails_the_checks_is_not_merged_but_rebased() {
    let q = Queue::new("");
    // Two changes that are each fine, and together break the repository's check: the
    // kind of merge that is clean as text and broken as code.
    q.sb.commit(
        &q.sb.repo,
        "check.sh",
        "grep -q '<=' lib.txt || exit 1\nif [ -f a.txt ] && [ -f b.txt ]; then echo 'a.txt and b.txt clash'; exit 1; fi\n",
        "Check that a and b never meet",
    );
    q.sb.git(&q.sb.repo, &["push", "-q", "origin", "main"]);
    let a = q.ship_in_worktree("a", "a.txt", "a\n");
    let b = q.ship_in_worktree("b", "b.txt", "b\n");
    // #1 merges; #2 is checked behind it, on the tip with #1 merged in, and fails
    // there although it is green on its own. With #1 not yet merged, the failure
    // may be #1's: #2 waits to meet that tree on the real tip.
    let first = q.daemon();
    assert_eq!(q.merged(), [a.n]);
    assert!(
        first.stderr.contains(&format!("PR #{}: merged onto", b.n))
            && first.stderr.contains("its checks are red (sh check.sh)"),
        "{}",
        first.stderr
    );
    let (action, reasons, waits) = q.planned(b.n);
    assert_eq!(
        (action.as_str(), reasons, waits),
        ("wait", vec!["merge_check_red_ahead".to_string()], vec![a.n])
    );
    // #1 is in main: the tip now holds the very tree #2 was checked on. One red
    // result could be a flaky gate, so that tree is checked once more in this pass
    // (red again), and only then is the PR sent back.
    let run = q.daemon();
    assert_eq!(q.merged(), [a.n], "not merged: {}", run.stderr);
    assert_eq!(
        run.stderr
            .matches(&format!("PR #{}: merged onto", b.n))
            .count(),
        1,
        "checked once more: {}",
        run.stderr
    );
    let (action, reasons, _) = q.planned(b.n);
    assert_eq!(action, "rebase");
    assert_eq!(reasons.first().map(String::as_str), Some("merge_check_red"));
    // Rebased at its turn (git rebases it alone, and the unchanged change keeps its
    // approval): the PR's head now has #1 under it, and its CI runs there.
    assert_eq!(q.events_of(&b.id, "rebase_requested").len(), 1);
    let head = q.sb.github().pr(b.n).unwrap().head_oid;
    assert_ne!(head, b.sha, "rebased");
    q.sb.github().ci(&head).set("test", CheckState::Failure);
    // Red there too: it stays out of main, and the kept result is not checked again.
    let again = q.daemon();
    assert!(
        !again.stderr.contains(&format!("PR #{}: merged onto", b.n)),
        "checked once a head and tip: {}",
        again.stderr
    );
    assert_eq!(q.merged(), [a.n]);
}

#[test]
fn a_merge_check_the_host_cannot_run_costs_that_pr_one_pass_and_nothing_else() {
    let q = Queue::new("");
    let a = q.ship("a", "a.txt", "a\n");
    let b = q.ship("b", "b.txt", "b\n");
    // No loop checkout can be made: a file stands where their directory goes.
    let blocker = q.sb.root.join("cache").join("checkouts");
    let _ = std::fs::remove_dir_all(&blocker);
    std::fs::write(&blocker, "not a directory\n").unwrap();
    let run = q.daemon();
    // #1 still merges; #2's check is reported and tried again later, not a paused merger.
    assert_eq!(q.merged(), [a.n], "{}", run.stderr);
    assert!(
        run.stderr
            .contains(&format!("PR #{}: its merge check could not run", b.n)),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("merger paused"), "{}", run.stderr);
    assert_eq!(q.planned(b.n).1, ["merge_check_missing"]);
    // Once the checkout can be made, the next pass runs it and #2 merges.
    std::fs::remove_file(&blocker).unwrap();
    q.daemon();
    let run = q.daemon();
    assert_eq!(q.merged(), [a.n, b.n], "{}", run.stderr);
}

#[test]
fn a_green_check_that_ran_no_tests_is_not_green_and_its_count_is_read_once() {
    let q = Queue::new("");
    let a = q.ship("a", "a.txt", "a\n");
    let b = q.ship("b", "b.txt", "b\n");
    // #1's test job is green and ran nothing (a filter that selected no tests); #2's
    // says how many it ran.
    q.sb.github().ci(&a.sha).report(
        "test",
        "pytest",
        "collected 4 items / 4 deselected\n\n4 deselected, 0 passed in 0.02s",
    );
    q.sb.github()
        .ci(&b.sha)
        .report("test", "12 passed, 0 failed", "");
    let mark = q.sb.github().requests().len();
    let run = q.daemon();
    // #1 is put to a person and claims nothing, so #2 merges in its place.
    let (action, reasons, _) = q.planned(a.n);
    assert_eq!(
        (action.as_str(), reasons.as_slice()),
        ("hold", ["no_tests_ran".to_string()].as_slice()),
        "{}",
        run.stderr
    );
    assert_eq!(q.merged(), [b.n], "{}", run.stderr);
    // The counts rode on the pass's one call for the base tips.
    let asked = q.asked_since(mark);
    assert_eq!(
        asked.iter().filter(|a| *a == "MergerBaseTips").count(),
        1,
        "{asked:?}"
    );
    let kept =
        std::fs::read_to_string(q.sb.repo.join(".git/hallmark/check-reports.jsonl")).unwrap();
    assert_eq!(kept.lines().count(), 2, "{kept}");
    // The next pass does not ask again for heads it has read, and #1 stays held.
    q.daemon();
    let kept =
        std::fs::read_to_string(q.sb.repo.join(".git/hallmark/check-reports.jsonl")).unwrap();
    assert_eq!(kept.lines().count(), 2, "read once a head: {kept}");
    assert_eq!(q.planned(a.n).1, ["no_tests_ran"]);
    assert_eq!(q.merged(), [b.n]);
}
