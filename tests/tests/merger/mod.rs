//! The merger through the daemon, against the GitHub simulator driven by the real gh:
//! parallel lanes on separate files, one merge at a time per base, a red base tip
//! stopping the line, a failed merge command and a `lit` PR held for a person, a crash
//! between the merge and its record, and `hall queue` agreeing with what then happens.

#![allow(clippy::unwrap_used)] // a panic is how a test fails

use crate::common::*;
use hallmark_tests::github::{CheckState, PrState};
use hallmark_tests::sandbox::{Run, Sandbox, built_wasm};

mod holds;
mod order;

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
        sb.add_worktree(branch, &wt, Some("origin/main"));
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
