//! A repository's own rooms serve from its base branch only: the same commit on
//! another branch changes nothing (`hall::policy`).

use std::path::Path;

use super::rules::tests::{edit, input, ok, runs};
use super::{fixture, git, rooms, temp_hall};
use crate::hall::{Hall, policy};
use crate::rooms::types::{PlanInput, PlanPart, PolicyAction};
use crate::rooms::{CURRENT_VERSION, RoomSource, World};

fn part(title: &str, paths: &[&str]) -> PlanPart {
    PlanPart {
        title: title.into(),
        paths: paths.iter().map(|p| p.to_string()).collect(),
        acceptance: format!("{title} has tests that pass"),
    }
}

/// A plan split into `parts`, which the built-in rules allow up to four of.
fn plan(parts: Vec<PlanPart>) -> PlanInput {
    PlanInput {
        request: "Add a login page and the API behind it".into(),
        split: true,
        reason: "the page and the API touch different files".into(),
        parts,
        max_parts: 4,
    }
}

/// Two titled parts on disjoint directories: every rule lets it through.
fn two() -> PlanInput {
    plan(vec![part("API", &["api/**"]), part("Web", &["web/**"])])
}

/// Commits the two-part plan room on the branch checked out in `root`, named in
/// `[rooms]`.
fn commit_strict_room(root: &Path) {
    std::fs::create_dir_all(root.join("rooms")).expect("mkdir");
    std::fs::write(
        root.join("rooms/two-parts.wasm"),
        fixture("hall_fixture_two_part_plan.wasm"),
    )
    .expect("write");
    std::fs::write(
        root.join(".hallmark.toml"),
        "[rooms]\nplan = \"rooms/two-parts.wasm\"\n",
    )
    .expect("write");
    git(root, &["add", "-A"]);
    git(root, &["commit", "-qm", "Two parts at most"]);
}

#[test]
fn the_base_branch_plan_room_decides_and_one_on_another_branch_changes_nothing() {
    let (_dir, root, hall) = temp_hall();

    // Three parts, which the built-in rules allow with max_parts = 4.
    let three = plan(vec![
        part("API", &["api/"]),
        part("Web", &["web/"]),
        part("Docs", &["docs/"]),
    ]);
    let serving = |hall: &Hall| policy::room(rooms(), Some(hall), World::Plan).expect("plan room");

    // A branch brings the stricter room and names it in its own config: it is not
    // the base branch, so the built-in room still serves.
    git(&root, &["switch", "-q", "-c", "strict"]);
    commit_strict_room(&root);
    let room = serving(&hall);
    assert_eq!(room.info().source, RoomSource::Builtin);
    let got = room.judge_plan(&three).expect("call").expect("answer");
    assert!(got.split, "{got:?}");

    // The same commit on the base branch decides.
    git(&root, &["switch", "-q", "main"]);
    git(&root, &["merge", "-q", "--ff-only", "strict"]);
    let room = serving(&hall);
    assert!(
        matches!(&room.info().source, RoomSource::Repo { path, .. } if path == "rooms/two-parts.wasm"),
        "{:?}",
        room.info()
    );
    assert_eq!(room.info().version, CURRENT_VERSION);
    let got = room.judge_plan(&three).expect("call").expect("answer");
    assert!(!got.split);
    assert_eq!(got.reasons, ["more_than_two_parts"]);
    assert_eq!(
        got.problems,
        ["this repository splits a request into 2 parts at most; the plan has 3"]
    );
    // Its other rules are the standard ones: two parts still split.
    let got = room.judge_plan(&two()).expect("call").expect("answer");
    assert!(got.split, "{got:?}");
}

/// `[rooms] tool-policy = "…"` names the repository's own room, read from the
/// base branch like every room's; from another branch it changes nothing.
#[test]
fn the_base_branch_names_the_tool_policy_room() {
    let (_dir, root, hall) = temp_hall();
    let serving = |hall: &Hall| {
        policy::room(rooms(), Some(hall), World::ToolPolicy).expect("tool-policy room")
    };

    git(&root, &["switch", "-q", "-c", "strict"]);
    std::fs::create_dir_all(root.join("rooms")).expect("mkdir");
    std::fs::write(
        root.join("rooms/strict.wasm"),
        fixture("hall_fixture_strict_tool_policy.wasm"),
    )
    .expect("write");
    std::fs::write(
        root.join(".hallmark.toml"),
        "[rooms]\ntool-policy = \"rooms/strict.wasm\"\n",
    )
    .expect("write");
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-qm", "A stricter tool policy"]);
    assert_eq!(serving(&hall).info().source, RoomSource::Builtin);

    git(&root, &["switch", "-q", "main"]);
    git(&root, &["merge", "-q", "--ff-only", "strict"]);
    let room = serving(&hall);
    assert!(
        matches!(&room.info().source, RoomSource::Repo { path, .. } if path == "rooms/strict.wasm"),
        "{:?}",
        room.info()
    );
    let x = edit("src/x.rs");
    let second = input(x.clone(), runs(&x, 1, |c, _| ok(c)));
    let verdict = room
        .decide_tool_policy(&second)
        .expect("call")
        .expect("answer");
    assert_eq!(verdict.action, PolicyAction::Nudge);
}
