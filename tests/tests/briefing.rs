//! The Library in a review: the review's prompt carries a briefing (learnings scoped to
//! the changed paths first, each saying why it is there, under the cap), and the
//! learnings the verdict says it used are counted.

#![allow(clippy::unwrap_used)] // a panic is how a test fails

use crate::common::*;

#[test]
fn a_review_is_briefed_scoped_learnings_first_and_the_used_one_is_counted() {
    let mut verdict = approve();
    verdict["verdict"]["learnings_used"] = json!(["L-0002"]);
    let l = Loop::ready(CONFIG, json!({"review": [verdict]}));
    // Two learnings from the old layout: one about docs, one scoped to lib.txt.
    for (rel, text) in [
        (
            "maps/docs.md",
            "+++\npaths = [\"docs/**\"]\n+++\n# The docs site is built by mkdocs\n\nNothing under docs/ ships.\n",
        ),
        (
            "rules/limit.md",
            "+++\npaths = [\"lib.txt\"]\n+++\n# Retry limits are inclusive\n\nA cap of 3 allows the third attempt: compare with <=.\n",
        ),
    ] {
        let path = l.sb.repo.join(".hallmark/knowledge").join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    l.sb.hall(&l.sb.repo, &["library", "import"]).ok();
    l.sb.hall(
        &l.sb.repo,
        &[
            "library", "review", "--accept", "L-0001", "--accept", "L-0002",
        ],
    )
    .ok();
    l.daemon();
    assert_eq!(l.status()["item"]["state"], "closed");
    let calls = l.claude_calls();
    let review = calls
        .iter()
        .map(|c| c.to_string())
        .find(|c| c.contains("hallmark:principal-engineer"))
        .unwrap_or_else(|| panic!("no review run in {calls:?}"));
    assert!(review.contains("# Learnings from the Library"), "{review}");
    assert!(review.contains("Retry limits are inclusive"), "{review}");
    // The docs learning is not scoped to anything this change touches, and no search
    // of the title finds it: it stays out.
    assert!(!review.contains("built by mkdocs"), "{review}");
    let show = l.sb.hall(&l.sb.repo, &["library", "show", "L-0002"]).ok();
    assert!(show.to_string().contains("\"used\":1"), "{show}");
    let other = l.sb.hall(&l.sb.repo, &["library", "show", "L-0001"]).ok();
    assert!(!other.to_string().contains("\"used\":1"), "{other}");
}
