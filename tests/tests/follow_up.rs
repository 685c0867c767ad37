//! Follow-up items (`hall new --follow-up`) and stacked items (`hall adopt --base`,
//! decision 0011), through the daemon, against the GitHub simulator driven by the real gh.

#![allow(clippy::unwrap_used)] // a panic is how a test fails

use std::path::{Path, PathBuf};

use crate::common::*;
use hallmark_tests::github::CheckState;
use hallmark_tests::sandbox::{Run, Sandbox};

/// A daemon run with the loop's scripted model, until idle.
fn watch(l: &Loop) -> Run {
    let run = l.sb.run_loop(&l.script, &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    run
}

fn status_of(l: &Loop, id: &str) -> Value {
    l.sb.hall(&l.sb.repo, &["status", id]).ok()
}

/// PR #1's CI fails at its head, then again at the dev run's fix: the item is held
/// `ci_failed` for a person.
fn held_ci_failed() -> Loop {
    let l = Loop::ready(
        CONFIG,
        json!({"review": [approve(), approve(), approve()],
               "develop": [{"sh": "printf 'fixed\\n' > ci.txt && git add ci.txt && git commit -qm 'Fix the CI job'"}]}),
    );
    l.daemon();
    let github = l.sb.github();
    for _ in 0..2 {
        let head = github.pr(1).unwrap().head_oid;
        github
            .ci(&head)
            .set("test", CheckState::Failure)
            .then("test", &[CheckState::Failure]);
        watch(&l);
        watch(&l);
    }
    let status = l.status();
    assert_eq!(status["item"]["hold"]["kind"], "ci_failed", "{status}");
    l
}

#[test]
fn a_ci_failed_hold_is_followed_up_from_the_base_and_clears_when_a_re_run_passes() {
    let l = held_ci_failed();
    let github = l.sb.github();
    let next = l.status()["item"]["hold"]["next"].to_string();
    assert!(next.contains("hall new --follow-up 1"), "{next}");
    let old_branch = l.status()["item"]["branch"].as_str().unwrap().to_string();

    let v = l.sb.hall(&l.sb.repo, &["new", "--follow-up", "1"]).ok();
    let id = v["item"].as_str().unwrap().to_string();
    assert_ne!(id, l.id);
    assert_eq!(v["base"], "main", "{v}");
    assert_ne!(v["branch"], old_branch.as_str(), "a branch of its own: {v}");
    let wt = PathBuf::from(v["worktree"].as_str().unwrap());
    assert!(wt.is_dir() && wt != l.wt);
    let created = &l.events_of(&id, "created")[0];
    assert_eq!(created["source"], "follow_up");
    assert!(
        created["pr"].is_null(),
        "a PR of its own when it ships: {created}"
    );
    let request = created["request"].as_str().unwrap();
    assert!(
        request.contains("PR #1") && request.contains("CI fails") && request.contains("test"),
        "{request}"
    );
    let link = &l.events_of(&id, "follow_up_of")[0];
    assert_eq!(link["pr"], github.pr_url(1));
    assert_eq!(
        link["earlier"],
        l.id.as_str(),
        "linked to the item that shipped the PR"
    );
    // The earlier item is left as it was: still held.
    assert_eq!(l.status()["item"]["hold"]["kind"], "ci_failed");

    // The follow-up's work goes through the loop onto a PR of its own.
    // (Cut from main, which lacks PR #1's change: the repository's check wants it too.)
    l.sb.commit(&wt, "lib.txt", "attempts <= 3\n", "Inclusive here too");
    l.sb.commit(
        &wt,
        "ci.txt",
        "fixed for real\n",
        "Fix what broke the CI job",
    );
    l.sb.hall(&wt, &["ready"]).ok();
    watch(&l);
    let status = status_of(&l, &id);
    assert_eq!(status["item"]["state"], "closed", "{status}");
    let pr = status["item"]["pr"].as_str().unwrap().to_string();
    assert_ne!(pr, github.pr_url(1), "its own PR");

    // With the cause fixed, a re-run of PR #1's checks passes at the same head: the
    // ci_failed hold clears and the earlier item is closed again, with no model run.
    let head = github.pr(1).unwrap().head_oid;
    let runs = l.claude_calls().len();
    github.ci(&head).set("test", CheckState::Success);
    watch(&l);
    let status = l.status();
    assert_eq!(status["item"]["state"], "closed", "{status}");
    assert!(status["item"]["hold"].is_null(), "{status}");
    assert_eq!(l.events_of(&l.id, "restored").len(), 1);
    assert_eq!(l.claude_calls().len(), runs, "no model run");
}

#[test]
fn a_follow_up_of_a_merged_pr_is_a_new_branch_from_its_base_with_the_comments_in_its_request() {
    let l = Loop::ready(CONFIG, json!({"review": [approve()]}));
    l.daemon();
    let github = l.sb.github();
    github.merge(1);
    watch(&l);
    assert_eq!(l.status()["item"]["delivered"]["merged"], true);
    // Someone comments after the merge: closed is the end, so this is new work.
    let comment = github.line_comment(1, "grace", "lib.txt", 1, "Say why the cap is 3");
    let v =
        l.sb.hall(&l.sb.repo, &["new", "--follow-up", &github.pr_url(1)])
            .ok();
    let id = v["item"].as_str().unwrap().to_string();
    assert_eq!(v["base"], "main");
    assert_ne!(v["branch"], l.status()["item"]["branch"], "{v}");
    assert!(PathBuf::from(v["worktree"].as_str().unwrap()).is_dir());
    let created = &l.events_of(&id, "created")[0];
    assert!(created["pr"].is_null(), "a new PR when it ships: {created}");
    let request = created["request"].as_str().unwrap();
    assert!(
        request.contains("merged")
            && request.contains("Say why the cap is 3")
            && request.contains(&format!("#{comment}")),
        "{request}"
    );
    assert_eq!(
        l.status()["item"]["state"],
        "closed",
        "the shipped item stays closed"
    );
}

/// A follow-up's request carries the review threads nobody has resolved, replies and
/// all, and leaves out a resolved one: GitHub's `isResolved`, read with GraphQL.
#[test]
fn a_follow_up_carries_the_unresolved_threads_and_leaves_out_a_resolved_one() {
    let l = Loop::ready(CONFIG, json!({"review": [approve()]}));
    l.daemon();
    let github = l.sb.github();
    github.merge(1);
    watch(&l);
    let settled = github.line_comment(1, "grace", "lib.txt", 1, "Name the constant");
    github.reply_to_line(1, settled, "hallmark-bot", "Named in 4f2a");
    github.resolve_thread(1, settled);
    let talked = github.line_comment(1, "grace", "lib.txt", 1, "Why 3 and not 5?");
    github.reply_to_line(1, talked, "ada", "Let me measure it");
    let silent = github.line_comment(1, "linus", "lib.txt", 1, "Log the cap once");
    let v = l.sb.hall(&l.sb.repo, &["new", "--follow-up", "1"]).ok();
    let id = v["item"].as_str().unwrap().to_string();
    let created = &l.events_of(&id, "created")[0];
    let request = created["request"].as_str().unwrap();
    assert!(request.contains("nobody has resolved"), "{request}");
    assert!(!request.contains("Name the constant"), "{request}");
    assert!(!request.contains(&format!("#{settled}")), "{request}");
    // Answered but not resolved is still open: the thread comes with its reply.
    assert!(
        request.contains(&format!("#{talked}"))
            && request.contains("Why 3 and not 5?")
            && request.contains("ada: Let me measure it"),
        "{request}"
    );
    assert!(
        request.contains(&format!("#{silent}")) && request.contains("Log the cap once"),
        "{request}"
    );
    let asked: Vec<_> = github
        .requests()
        .into_iter()
        .filter(|r| r.operation == "HallReviewThreads")
        .map(|r| r.variables["number"].clone())
        .collect();
    assert_eq!(asked, [json!(1)], "one GraphQL call for the threads");
}

#[test]
fn a_follow_up_of_a_pr_that_does_not_exist_is_a_clear_error_and_makes_nothing() {
    let l = Loop::ready(CONFIG, json!({"review": [approve()]}));
    l.daemon();
    let missing = l.sb.hall(&l.sb.repo, &["new", "--follow-up", "99"]);
    assert_ne!(missing.code, 0);
    let v = missing.json();
    let message = v["error"]["message"].as_str().unwrap();
    assert!(message.contains("--follow-up 99"), "{message}");
    assert!(v["error"]["next"].to_string().contains("gh pr list"), "{v}");
    let all = l.sb.hall(&l.sb.repo, &["status", "--all"]).ok();
    assert_eq!(all["items"].as_array().map(Vec::len), Some(1), "{all}");
    // An issue and a PR at once is a usage error.
    l.sb.hall(&l.sb.repo, &["new", "--follow-up", "1", "--issue", "1"])
        .err("USAGE", 2);
}

/// A parent PR onto main and a child PR stacked on the parent's branch, both opened
/// outside Hallmark; the child adopted. Returns the loop on the child.
fn stacked() -> Loop {
    let sb = Sandbox::initialized();
    // Signers on main, so hallmarks verify in any clone (`hall verify`).
    let v = sb.hall(&sb.repo, &["init", "--signers"]).ok();
    assert!(v["signers"].is_string(), "{v}");
    sb.stand_ins(Path::new(env!("CARGO_BIN_EXE_fake-claude")));
    {
        let github = sb.github();
        sb.configure(CONFIG, CHECK, "Configure the loop");
        sb.git(&sb.repo, &["push", "-q", "origin", "main"]);
        sb.git(&sb.repo, &["switch", "-q", "-c", "feature/parent"]);
        sb.commit(
            &sb.repo,
            "lib.txt",
            "attempts <= 3\n",
            "Make the cap inclusive",
        );
        sb.commit(
            &sb.repo,
            "parent.txt",
            "from the parent\n",
            "Parent's own file",
        );
        sb.git(&sb.repo, &["push", "-q", "origin", "feature/parent"]);
        sb.git(&sb.repo, &["switch", "-q", "-c", "feature/child"]);
        sb.commit(
            &sb.repo,
            "child.txt",
            "from the child\n",
            "Child's own file",
        );
        sb.git(&sb.repo, &["push", "-q", "origin", "feature/child"]);
        sb.git(&sb.repo, &["switch", "-q", "main"]);
        sb.git(
            &sb.repo,
            &["branch", "-q", "-D", "feature/child", "feature/parent"],
        );
        assert_eq!(github.open_pr("feature/parent", "main", "Parent", "ada"), 1);
        assert_eq!(
            github.open_pr("feature/child", "feature/parent", "Child", "ada"),
            2
        );
    }
    let script = sb.script_model(&json!({"review": [approve()]}));
    let adopted = sb.hall(&sb.repo, &["adopt", "--pr", "2"]).ok();
    assert_eq!(
        adopted["base"], "feature/parent",
        "the PR's own base: {adopted}"
    );
    let wt = PathBuf::from(adopted["worktree"].as_str().unwrap());
    Loop {
        id: adopted["item"].as_str().unwrap().to_string(),
        sb,
        script,
        wt,
    }
}

#[test]
fn a_stacked_pr_is_reviewed_against_its_own_base_updated_in_place_and_restacked_when_that_merges() {
    let l = stacked();
    let github = l.sb.github();
    l.sb.commit(&l.wt, "child.txt", "from the child, twice\n", "More child");
    l.sb.hall(&l.wt, &["ready"]).ok();
    watch(&l);
    // The review reads the child's change only, against the parent's branch; the
    // rules still come from main.
    let prompts: Vec<String> = l
        .claude_calls()
        .iter()
        .filter_map(|c| c["args"].as_array()?.last()?.as_str().map(str::to_string))
        .filter(|p| p.starts_with("Review "))
        .collect();
    assert_eq!(prompts.len(), 1, "{prompts:?}");
    let p = &prompts[0];
    assert!(
        p.contains("against feature/parent") && p.contains("stacked on feature/parent"),
        "{p}"
    );
    assert!(p.contains("child.txt"), "{p}");
    assert!(
        !p.contains("parent.txt") && !p.contains("+attempts <= 3"),
        "the parent's change is not the child's: {p}"
    );
    let head = l.sb.git(&l.wt, &["rev-parse", "HEAD"]);
    assert_eq!(
        github.pr(2).unwrap().head_oid,
        head,
        "PR 2 updated in place"
    );
    assert_eq!(github.pr(2).unwrap().base, "feature/parent");
    assert_eq!(l.status()["item"]["state"], "closed");

    // The hallmark vouches for what the child adds to the parent's branch: pointed at
    // main before the parent merged, it doesn't verify there, since main lacks the
    // parent's unreviewed-with-it work.
    let verify = |l: &Loop| l.sb.hall(&l.sb.repo, &["verify", "--pr", "2"]);
    let v = verify(&l).ok();
    assert_eq!(v["sha"], head.as_str());
    assert!(
        v["base"].is_string(),
        "a version 3 hallmark names its base: {v}"
    );
    github.retarget(2, "main");
    let e = verify(&l).err("NOT_HALLMARKED", 5);
    assert_eq!(e["error"]["check"], "base_not_in", "{e}");
    github.retarget(2, "feature/parent");

    // The parent merges and its branch goes: GitHub retargets the child onto main,
    // and the watch moves the item's base with it.
    github.merge_and_delete_branch(1);
    assert_eq!(github.pr(2).unwrap().base, "main");
    watch(&l);
    let restacked = l.events_of(&l.id, "restacked");
    assert_eq!(restacked.len(), 1, "{restacked:?}");
    assert_eq!(restacked[0]["from"], "feature/parent");
    assert_eq!(restacked[0]["to"], "main");
    assert_eq!(l.status()["item"]["base"], "main");
    watch(&l);
    assert_eq!(l.events_of(&l.id, "restacked").len(), 1, "said once");
    // With the parent merged into main, the child's hallmark verifies against main.
    l.sb.git(&l.sb.repo, &["fetch", "-q", "origin"]);
    assert_eq!(verify(&l).ok()["sha"], head.as_str());
}

#[test]
fn adopt_refuses_a_base_that_does_not_exist_or_is_its_own_branch() {
    let sb = Sandbox::initialized();
    sb.git(&sb.repo, &["switch", "-q", "-c", "feature/x"]);
    sb.commit(&sb.repo, "x.txt", "x\n", "X");
    let e = sb
        .hall(&sb.repo, &["adopt", "--base", "nowhere"])
        .err("USAGE", 2);
    assert!(
        e["error"]["message"].as_str().unwrap().contains("nowhere"),
        "{e}"
    );
    sb.hall(&sb.repo, &["adopt", "--base", "feature/x"])
        .err("WRONG_STATE", 4);
    // Nothing was created by either.
    let s = sb.hall(&sb.repo, &["status", "--all"]).ok();
    assert_eq!(s["items"].as_array().map(Vec::len), Some(0), "{s}");
    let ok = sb.hall(&sb.repo, &["adopt", "--base", "main"]).ok();
    assert_eq!(ok["base"], "main");
}

#[test]
fn a_review_that_only_comments_in_its_body_reopens_the_item_once_for_a_dev_run() {
    let l = Loop::shipped_then_reviewed(
        ReviewState::Commented,
        "Please also say in README.md what the cap is.",
    );
    std::fs::write(
        &l.script,
        json!({"review": [approve()],
               "develop": [{"sh": "printf 'The cap is 3.\\n' > README.md && git add README.md && git commit -qm 'Say what the cap is'"}]})
        .to_string(),
    )
    .unwrap();
    let run = watch(&l);
    let reopened = l.events_of(&l.id, "reopened");
    assert_eq!(reopened.len(), 1, "{}", run.stderr);
    let reason = reopened[0]["reason"].as_str().unwrap();
    assert!(
        reason.contains("grace: Please also say in README.md what the cap is."),
        "{reason}"
    );
    let head = l.sb.git(&l.wt, &["rev-parse", "HEAD"]);
    assert_eq!(
        l.sb.github().pr(1).unwrap().head_oid,
        head,
        "updated in place"
    );
    assert!(
        l.sb.git(&l.wt, &["show", "--stat", "--format=", &head])
            .contains("README.md")
    );
    // Given at the old head: it is answered, and no watch reopens for it again.
    watch(&l);
    assert_eq!(l.events_of(&l.id, "reopened").len(), 1);
}
