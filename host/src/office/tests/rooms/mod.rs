//! The rooms' tests that need the host around them: the verdict schema the office
//! hands the reviewer, held against the built-in verdict room; the rooms a
//! repository names on its base branch, as `hall::policy` picks them; and the
//! tool-policy room's defaults against `[policy]`'s. The runtime's own tests are in
//! its crate (`host/rooms/src/tests`).

use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use crate::config::Config;
use crate::git::Repo;
use crate::hall::Hall;
use crate::journal::Journal;
use crate::rooms::Rooms;

mod base_branch;
mod verdict_schema;

/// The host's plain types under the names the shared rules file expects.
mod model {
    pub use crate::rooms::types::{
        CallOutcome as Outcome, CommandKind, DetectorSetting, FailingCheck, ItemFacts, PastCall,
        PolicyAction as Action, PolicyInput, PolicyMode as Mode, PolicyTrigger as Trigger,
        PolicyVerdict, Recurrence, ShellCommand as Command, ToolCall,
    };
}

/// The rules the built-in tool-policy room is built from, compiled natively for their
/// defaults and their input helpers. Their own tests come along and run here too, as
/// they do in the rooms crate.
#[path = "../../../../../rooms/sdk/src/rules/tool_policy.rs"]
mod rules;

/// One runtime for these tests, with a cache in a temp directory.
static SHARED: LazyLock<(Rooms, tempfile::TempDir)> = LazyLock::new(|| {
    let dir = tempfile::tempdir().expect("temp dir");
    let rooms = Rooms::new(dir.path().join("cache")).expect("engine");
    (rooms, dir)
});

fn rooms() -> &'static Rooms {
    &SHARED.0
}

/// The bytes of a fixture room the rooms crate's build made
/// (`hall_fixture_two_part_plan.wasm`).
fn fixture(file: &str) -> Vec<u8> {
    let path = Path::new(crate::rooms::BUILT_DIR).join(file);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A repository on `main` with one commit, its journal, and a `Hall` with no
/// user-level rooms: only the repository's choice and the built-in room can serve.
fn temp_hall() -> (tempfile::TempDir, PathBuf, Hall) {
    let dir = tempfile::tempdir().expect("temp dir");
    let base = dir.path().canonicalize().expect("canonical");
    let root = base.join("repo");
    std::fs::create_dir_all(&root).expect("mkdir");
    git(&root, &["init", "-q", "-b", "main"]);
    std::fs::write(root.join("README.md"), "hello\n").expect("write");
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-qm", "Start"]);
    let repo = Repo::discover(&root).expect("repo");
    let journal = Journal::new(repo.hall_dir());
    journal.init().expect("journal");
    let mut hall = Hall::with(repo, journal, Config::default());
    hall.config_dir = Some(base.join("config"));
    hall.cache_dir = Some(base.join("cache"));
    (dir, root, hall)
}

fn git(dir: &Path, args: &[&str]) -> String {
    super::git_in(dir, args)
}

/// The room's own defaults (for a detector the settings leave out) are the ones the
/// host's config starts from, so the two can't drift apart.
#[test]
fn the_rooms_defaults_are_the_configs() {
    assert_eq!(rules::DEFAULTS, crate::config::POLICY_DETECTORS);
}
