//! The record of items that left the loop: `hall history` lists them with how they
//! ended and, with `--rejected`, what each review rejected and what became of it;
//! `hall export` writes one item's whole record as Markdown, its runs step by step.

#![allow(clippy::unwrap_used)] // a panic is how a test fails

use crate::common::*;

#[test]
fn history_and_export_tell_what_was_rejected_fixed_and_run() {
    // Round 1: the checks fail and the fixer fixes them; the review rejects (F1), the
    // fixer fixes F1, the next review approves; it ships. A second item is dropped.
    let l = Loop::new(
        CONFIG,
        json!({"review": [reject(), approve()], "fix": [fix("attempts <= 3", ""), fix("attempts <= 3 # inclusive", "F1")]}),
    );
    l.sb.hall(&l.wt, &["ready"]).ok();
    l.daemon();
    assert_eq!(l.status()["item"]["state"], "closed");
    let dropped =
        l.sb.hall(&l.sb.repo, &["new", "--title", "Try a bigger cap"])
            .ok();
    let other = dropped["item"].as_str().unwrap().to_string();
    l.sb.hall(
        &l.sb.repo,
        &["drop", &other, "--reason", "the cap stays at 3"],
    )
    .ok();

    let h = l.sb.hall(&l.sb.repo, &["history"]).ok();
    let items = h["items"].as_array().unwrap();
    assert_eq!(items.len(), 2, "{h}");
    // Newest first: the dropped one, with its reason; then the shipped one.
    assert_eq!(items[0]["item"], other.as_str(), "{h}");
    assert_eq!(items[0]["how"], "dropped: the cap stays at 3", "{h}");
    assert_eq!(items[1]["item"], l.id.as_str(), "{h}");
    assert_eq!(items[1]["how"], "shipped", "{h}");
    assert_eq!(items[1]["rejects"], 1, "{h}");
    assert!(items[0]["findings"].is_null(), "{h}");

    let r = l.sb.hall(&l.sb.repo, &["history", "--rejected"]).ok();
    let items = r["items"].as_array().unwrap();
    assert_eq!(items.len(), 1, "only the item a review rejected: {r}");
    let findings = items[0]["findings"].as_array().unwrap();
    let f1 = findings
        .iter()
        .find(|f| f["finding"]["lens"] == "correctness")
        .unwrap_or_else(|| panic!("{r}"));
    assert_eq!(f1["outcome"], "fixed", "{f1}");
    // Round 1's checks failed; the fixer's commit was round 2, the first reviewed.
    assert_eq!(f1["raised"], json!([2]), "{f1}");
    assert_eq!(r["rejected"]["by_outcome"]["fixed"], 1, "{r}");
    // The approving verdict's nit is still open: nobody settles a finding on an approval.
    assert!(findings.iter().any(|f| f["outcome"] == "open"), "{r}");
    let security =
        l.sb.hall(&l.sb.repo, &["history", "--lens", "security"])
            .ok();
    assert_eq!(security["items"], json!([]), "{security}");
    let correctness =
        l.sb.hall(&l.sb.repo, &["history", "--lens", "Correctness"])
            .ok();
    assert_eq!(correctness["items"].as_array().unwrap().len(), 1);
    l.sb.hall(&l.sb.repo, &["history", "--lens", "speed"])
        .err("USAGE", 2);
    l.sb.hall(&l.sb.repo, &["history", "--since", "yesterday-ish"])
        .err("USAGE", 2);
    let future =
        l.sb.hall(&l.sb.repo, &["history", "--since", "2999-01-01"])
            .ok();
    assert_eq!(future["items"], json!([]), "{future}");

    // The export: every round, the failing check's condensed output, the verdict's
    // finding and the fix that claims it, the cost per role, and each run's steps.
    let out = l.sb.root.join("record.md");
    let e =
        l.sb.hall(
            &l.sb.repo,
            &["export", &l.id, "--out", out.to_str().unwrap()],
        )
        .ok();
    assert_eq!(e["path"], out.to_str().unwrap(), "{e}");
    let md = std::fs::read_to_string(&out).unwrap();
    assert_eq!(e["bytes"], md.len(), "{e}");
    for want in [
        &format!("# {}: Cap retries", l.id),
        "## Round 1",
        "check `sh check.sh` failed",
        "## Round 2",
        "Resubmitted by the fix at",
        "expected <= in the limit check",
        "**Verdict**",
        "rejected",
        "[major, correctness] `lib.txt:1`",
        "(fixed in `",
        "**Fix**",
        "fixes F1",
        "approved",
        "## Round 3",
        "**Hallmarked**",
        "**Shipped**",
        "## Runs",
        "(review, ended)",
        "(fix, ended)",
    ] {
        assert!(md.contains(want), "{want:?} missing from:\n{md}");
    }
    let runs = e["runs"].as_u64().unwrap();
    assert!(runs >= 5, "two reviews, two fixes and the librarian: {e}");
    assert!(
        md.lines().filter(|l| l.starts_with("1. started")).count() as u64 == runs,
        "each run's steps from its stream:\n{md}"
    );
    // The runs in the order they ran: the fix for the red check, the review, the fix
    // it asked for, the approving review, and the librarian's after the close.
    let roles: Vec<&str> = md
        .lines()
        .filter(|l| l.starts_with("### "))
        .filter_map(|l| l.split('(').nth(1)?.split(',').next())
        .collect();
    assert_eq!(
        roles,
        ["fix", "review", "fix", "review", "librarian"],
        "{md}"
    );
    // Without --out the Markdown is the reply's text, and in the JSON.
    let inline = l.sb.hall(&l.sb.repo, &["export", &l.id]).ok();
    assert_eq!(inline["markdown"].as_str().unwrap(), md);
    l.sb.hall(&l.sb.repo, &["export", "H-0099"])
        .err("ITEM_NOT_FOUND", 3);
}
