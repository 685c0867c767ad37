//! The Library learns from the loop: two items close (a finding that proved right, and
//! one that was disputed and dropped), the daemon's librarian proposes a rule and a
//! false-positive from them, a person accepts both, and the next review is briefed with
//! them (scoped learnings first, under the cap) and names the one it used.

#![allow(clippy::unwrap_used)] // a panic is how a test fails

use crate::common::*;

fn verdict(decision: &str, findings: Value, used: &[&str]) -> Value {
    json!({"verdict": {"verdict": decision, "summary": "Reviewed.", "lenses": lenses(),
        "findings": findings, "learnings_used": used}})
}

fn finding(lens: &str, severity: &str, scenario: &str) -> Value {
    json!({"lens": lens, "severity": severity, "file": "lib.txt", "line": 1, "scenario": scenario})
}

/// The librarian's answer for an item: one learning from round 1's F1, and words.
fn distillation(kind: &str, title: &str, body: &str, paths: &[&str]) -> Value {
    json!({"verdict": {
        "learnings": [{"kind": kind, "title": title, "body": body, "paths": paths,
                       "round": 1, "finding": "F1"}],
        "contradicted": [],
        "gazette": {"headline": title, "story": body, "findings": {"F1": body}}
    }})
}

const RULE: &str = "Retry caps say that they are inclusive";
const FALSE_POSITIVE: &str = "Short names in text fixtures are fine";

/// Makes an item titled `title` whose worktree commits `content` to lib.txt, and sends
/// it to review; returns its id.
fn item(l: &Loop, title: &str, content: &str) -> String {
    let v = l.sb.hall(&l.sb.repo, &["new", "--title", title]).ok();
    let id = v["item"].as_str().unwrap().to_string();
    let wt = l.sb.worktree(&id);
    l.sb.commit(&wt, "lib.txt", content, title);
    l.sb.hall(&wt, &["ready"]).ok();
    id
}

#[test]
fn two_closed_items_teach_the_next_review_through_the_librarian() {
    let script = json!({
        "review": [
            // H-0001: a finding that proves right (fixed, not raised again).
            verdict("reject", json!([finding("correctness", "major",
                "Nothing at the cap says it is inclusive, so the next change can make it < again.")]), &[]),
            verdict("approve", json!([]), &[]),
            // H-0002: a finding the fixer disputes and the reviewer lets go.
            verdict("reject", json!([finding("first-principles", "major",
                "The name `n` in lib.txt says nothing.")]), &[]),
            verdict("approve", json!([]), &[]),
            // H-0003: briefed, and it says which learning it relied on.
            verdict("approve", json!([]), &["L-0001"]),
        ],
        "fix": [
            fix("attempts <= 3 # inclusive: the third attempt runs", "F1"),
            {"sh": "printf 'fixture\\n' > notes.txt && git add notes.txt && git commit -qm 'Note' && hall fixed --dispute F1 --reason 'n is the fixture convention'"},
        ],
        "librarian": [
            distillation("rule", RULE, "A cap of N allows the Nth attempt: compare with <=.", &["lib.txt"]),
            distillation("false-positive", FALSE_POSITIVE, "Fixtures keep one-letter names on purpose.", &["*.txt"]),
        ],
    });
    let l = Loop::new(CONFIG, script);
    // H-0001 goes through its two rounds, ships and closes; the librarian reads it.
    l.make_ready();
    l.daemon();
    assert_eq!(l.status()["item"]["state"], "closed");
    let first = l.events_of(&l.id, "distilled");
    assert_eq!(first.len(), 1, "{first:?}");
    assert_eq!(first[0]["proposed"], json!(["L-0001"]), "{first:?}");
    assert_eq!(first[0]["words"], true);

    let second = item(&l, "Name the counter", "attempts <= 3\nn = 0\n");
    l.daemon();
    let s = l.sb.hall(&l.sb.repo, &["status", &second]).ok();
    assert_eq!(s["item"]["state"], "closed", "{s}");
    let distilled = l.events_of(&second, "distilled");
    assert_eq!(
        distilled[0]["proposed"],
        json!(["L-0002"]),
        "{distilled:?}\nverdicts: {:?}\nfirst: {:?}",
        l.events_of(&second, "verdict"),
        l.events_of(&l.id, "verdict")
    );

    // What each finding came to, as the record (and so the librarian) tells it.
    let record = |id: &str| l.sb.hall(&l.sb.repo, &["export", id]).stdout;
    assert!(record(&l.id).contains("(fixed in `"), "{}", record(&l.id));
    assert!(
        record(&second).contains("(disputed; the next review let it go)"),
        "{}",
        record(&second)
    );

    // Both wait for a person; nothing is told to a review before that.
    let waiting = l.sb.hall(&l.sb.repo, &["library", "review"]).ok();
    let ids: Vec<&str> = waiting["proposed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["L-0001", "L-0002"], "{waiting}");
    let notices = l.sb.hall(&l.sb.repo, &["inbox", "--notices"]).ok();
    let about: Vec<&Value> = notices["notices"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["kind"] == "learnings")
        .collect();
    assert_eq!(about.len(), 1, "one notice for both: {notices}");
    assert!(
        about[0]["message"]
            .as_str()
            .unwrap()
            .contains("L-0001, L-0002"),
        "{notices}"
    );
    let rule = l.sb.hall(&l.sb.repo, &["library", "show", "L-0001"]).ok();
    assert_eq!(rule["learning"]["kind"], "rule");
    assert_eq!(rule["learning"]["source"]["item"], l.id);
    assert_eq!(rule["learning"]["source"]["finding"], "F1");
    let accepted =
        l.sb.hall(
            &l.sb.repo,
            &["library", "review", "--accept", "L-0001", "L-0002"],
        )
        .ok();
    assert_eq!(
        accepted["accepted"],
        json!(["L-0001", "L-0002"]),
        "{accepted}"
    );
    let notices = l.sb.hall(&l.sb.repo, &["inbox", "--notices"]).ok();
    assert!(
        !notices.to_string().contains("\"learnings\""),
        "settled: {notices}"
    );

    // The Gazette of the first item carries the librarian's headline.
    let page = l.sb.hall(&l.sb.repo, &["gazette", &l.id]).ok();
    let html = std::fs::read_to_string(page["path"].as_str().unwrap()).unwrap();
    assert!(html.contains(RULE), "the headline is on the page");

    // H-0003 touches lib.txt: its review is briefed with both, the rule (scoped to the
    // file itself) before the false-positive (scoped to `*.txt`), each saying why.
    let third = item(&l, "Allow four retries", "attempts <= 4\n");
    l.daemon();
    let calls = l.claude_calls();
    let review = calls
        .iter()
        .rfind(|c| c.to_string().contains("hallmark:principal-engineer"))
        .map(|c| c.to_string())
        .unwrap();
    let briefing_at = review
        .find("# Learnings from the Library")
        .expect("a briefing");
    let briefing = &review[briefing_at..];
    let rule_at = briefing.find(RULE).expect("the rule is in the briefing");
    let fp_at = briefing
        .find(FALSE_POSITIVE)
        .expect("the false-positive too");
    assert!(rule_at < fp_at, "the more specific scope comes first");
    assert!(briefing.contains("scoped to lib.txt"), "{briefing}");
    assert!(briefing.contains("scoped to *.txt"), "{briefing}");
    // Within the cap (6k tokens by default, a quarter of the characters).
    let lines: String = briefing
        .split("\\n")
        .filter(|line| line.starts_with("- L-"))
        .collect();
    assert!(lines.chars().count() / 4 <= 6000, "{lines}");

    // The verdict names the learning it used; the Library counts it.
    let verdicts = l.events_of(&third, "verdict");
    assert_eq!(
        verdicts.last().unwrap()["learnings"],
        json!(["L-0001"]),
        "{verdicts:?}"
    );
    let used = l.sb.hall(&l.sb.repo, &["library", "show", "L-0001"]).ok();
    assert_eq!(used["learning"]["used"], 1, "{used}");
    let unused = l.sb.hall(&l.sb.repo, &["library", "show", "L-0002"]).ok();
    assert_eq!(unused["learning"]["used"], 0, "{unused}");
}

#[test]
fn a_librarian_run_that_fails_is_recorded_and_blocks_nothing() {
    let script = json!({
        "review": [verdict("approve", json!([]), &[])],
        "librarian": [{"error": "overloaded"}],
    });
    let l = Loop::ready(CONFIG, script);
    l.daemon();
    assert_eq!(l.status()["item"]["state"], "closed");
    let distilled = l.events_of(&l.id, "distilled");
    assert_eq!(distilled.len(), 1, "{distilled:?}");
    assert_eq!(distilled[0]["failed"], true);
    assert!(
        distilled[0]["problems"][0]
            .as_str()
            .unwrap()
            .contains("overloaded"),
        "{distilled:?}"
    );
    // Not retried on its own; by hand it runs again (and fails the same way).
    l.daemon();
    assert_eq!(l.events_of(&l.id, "distilled").len(), 1);
    let again = l.hall(&l.sb.repo, &["library", "distill", &l.id]).ok();
    assert_eq!(again["items"][0]["failed"], true, "{again}");
    assert_eq!(l.events_of(&l.id, "distilled").len(), 2);
    // A session may not run the librarian.
    let (out, code) = l.bash_hook("agent", &format!("hall library distill {}", l.id));
    assert!(out.contains("\"deny\""), "{out}");
    assert_eq!(code, Some(0), "hooks always exit 0");
    let session = l.hall_with(
        &l.sb.repo,
        &["library", "distill", &l.id],
        &[("CLAUDECODE", "1")],
    );
    session.err("GATE_DENIED", 5);
    assert_eq!(
        l.events_of(&l.id, "distilled").len(),
        2,
        "the refused run made nothing"
    );
}
