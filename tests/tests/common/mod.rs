//! What the review-loop tests share: a repository with the loop configured, one item,
//! the stand-in `claude` and `gh` on PATH, and the scripted model's answers.

#![allow(dead_code)] // each test file uses its own part
#![allow(clippy::unwrap_used)] // a panic is how a test fails

use std::path::{Path, PathBuf};

pub use hallmark_tests::github::ReviewState;
#[allow(unused_imports)] // not every test file needs each
pub use hallmark_tests::sandbox::{Run, Sandbox, hall_bin, lenses};
pub use serde_json::{Value, json};

pub fn approve() -> Value {
    json!({"verdict": {"verdict": "approve", "summary": "The change does what it says and is tested.", "lenses": lenses(), "findings": [
        {"lens": "evidence", "severity": "nit", "file": "lib.txt", "line": 1, "scenario": "A second example would read better."}
    ], "learnings_used": []}})
}

pub fn reject() -> Value {
    json!({"verdict": {"verdict": "reject", "summary": "The limit is off by one.", "lenses": lenses(), "findings": [
        {"lens": "correctness", "severity": "major", "file": "lib.txt", "line": 1, "scenario": "With 3 attempts allowed, the third is refused because the check uses < instead of <=."}
    ], "learnings_used": []}})
}

/// A fixer step: writes `content` to lib.txt, commits and says what it fixed.
pub fn fix(content: &str, ids: &str) -> Value {
    json!({"sh": format!("printf '%s\\n' '{content}' > lib.txt && git commit -qam 'Fix the limit' && hall fixed {ids}")})
}

pub struct Loop {
    pub sb: Sandbox,
    pub script: PathBuf,
    pub wt: PathBuf,
    pub id: String,
}

impl Loop {
    /// Moves `main` on origin with one commit, lets the ship step go ahead, retries the
    /// failed ship and runs the daemon until idle.
    pub fn move_main_then_ship(&self, file: &str, content: &str, message: &str) {
        self.sb.commit(&self.sb.repo, file, content, message);
        self.sb
            .git(&self.sb.repo, &["push", "-q", "origin", "main"]);
        // An untracked flag: the commit stays as approved.
        std::fs::write(self.wt.join("ship-ok.flag"), "").unwrap();
        self.sb
            .hall(
                &self.sb.repo,
                &["retry", &self.id, "--reason", "ship again"],
            )
            .ok();
        self.daemon();
    }

    /// [`Loop::new`], with the item's limit made inclusive (the check passes) and the
    /// item sent to review with `hall ready`.
    pub fn ready(config: &str, script: Value) -> Loop {
        let l = Loop::new(config, script);
        l.make_ready();
        l
    }

    /// An item shipped through the loop (approved, PR #1 opened), whose PR then gets a
    /// review from `grace` in `state` with `body`.
    pub fn shipped_then_reviewed(state: ReviewState, body: &str) -> Loop {
        let l = Loop::ready(CONFIG, json!({"review": [approve()]}));
        l.daemon();
        l.sb.github().review(1, "grace", state, body);
        l
    }

    /// Commits the inclusive limit (the check passes) and sends the item to review.
    pub fn make_ready(&self) {
        self.sb
            .commit(&self.wt, "lib.txt", "attempts <= 3\n", "Inclusive");
        self.sb.hall(&self.wt, &["ready"]).ok();
    }

    /// A repository whose config is `config` (on main), one item with a commit, ready.
    pub fn new(config: &str, script: Value) -> Loop {
        Loop::build(config, script, false)
    }

    /// [`Loop::new`], with `hall init --signers`'s `.hallmark/allowed_signers` committed
    /// on main, so hallmarks verify in any clone.
    pub fn signed(config: &str, script: Value) -> Loop {
        Loop::build(config, script, true)
    }

    fn build(config: &str, script: Value, signers: bool) -> Loop {
        let sb = Sandbox::initialized();
        if signers {
            let v = sb.hall(&sb.repo, &["init", "--signers"]).ok();
            assert!(v["signers"].is_string(), "{v}");
        }
        Loop::assemble(sb, config, CHECK, &[], script)
    }

    /// The loop in `sb`: the stand-ins on PATH, `config` committed on main with `check`
    /// as `check.sh` and `files` beside it, and one item with a commit.
    pub fn assemble(
        sb: Sandbox,
        config: &str,
        check: &str,
        files: &[(&str, &str)],
        script: Value,
    ) -> Loop {
        sb.stand_ins(Path::new(env!("CARGO_BIN_EXE_fake-claude")));
        sb.github();
        for (name, content) in files {
            std::fs::write(sb.repo.join(name), content).unwrap();
        }
        sb.configure(config, check, "Configure the loop");
        let script_path = sb.script_model(&script);
        let v = sb.hall(&sb.repo, &["new", "--title", "Cap retries"]).ok();
        let id = v["item"].as_str().expect("id").to_string();
        let wt = sb.worktree(&id);
        sb.commit(&wt, "lib.txt", "attempts < 3\n", "Cap retries at 3");
        Loop {
            sb,
            script: script_path,
            wt,
            id,
        }
    }

    /// `hall args…` in `dir` with the scripted model, plus `extra` variables.
    pub fn hall_with(&self, dir: &Path, args: &[&str], extra: &[(&str, &str)]) -> Run {
        let model = self.sb.model_env(&self.script);
        let mut vars: Vec<(&str, &str)> = model
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        vars.extend_from_slice(extra);
        self.sb.hall_env(dir, args, &vars)
    }

    pub fn hall(&self, dir: &Path, args: &[&str]) -> Run {
        self.hall_with(dir, args, &[])
    }

    /// `hall daemon run --until-idle` with `extra` variables (a later `HALL_NOW`, …).
    pub fn daemon_with(&self, extra: &[(&str, &str)]) -> Value {
        let run = self.sb.run_loop(&self.script, extra);
        eprintln!("{}", run.stderr);
        run.ok()
    }

    pub fn daemon(&self) -> Value {
        self.daemon_with(&[])
    }

    /// Item `id`'s journal lines of one kind.
    pub fn events_of(&self, id: &str, kind: &str) -> Vec<Value> {
        let v = self
            .sb
            .hall(
                &self.sb.repo,
                &["log", id, "--kind", kind, "--limit", "1000"],
            )
            .ok();
        v["events"].as_array().cloned().unwrap_or_default()
    }

    pub fn events(&self) -> Vec<Value> {
        let v = self
            .sb
            .hall(&self.sb.repo, &["log", &self.id, "--limit", "1000"])
            .ok();
        v["events"].as_array().cloned().unwrap_or_default()
    }

    /// This item's journal lines of one kind, in order.
    pub fn of_kind(&self, kind: &str) -> Vec<Value> {
        self.events()
            .into_iter()
            .filter(|e| e["event"] == kind)
            .collect()
    }

    pub fn kinds(&self) -> Vec<String> {
        self.events()
            .iter()
            .map(|e| e["event"].as_str().unwrap_or("").to_string())
            .filter(|k| {
                !matches!(
                    k.as_str(),
                    "usage"
                        | "room_used"
                        | "rules_used"
                        | "check_run"
                        | "commit"
                        | "notification"
                        | "distilled"
                )
            })
            .collect()
    }

    pub fn status(&self) -> Value {
        self.sb.hall(&self.sb.repo, &["status", &self.id]).ok()
    }

    /// Runs `hall hook pre-tool-use` in the worktree for a Bash `command`, as Claude Code
    /// would, with `HALL_ACTOR=actor`; returns the hook's stdout and exit code.
    pub fn bash_hook(&self, actor: &str, command: &str) -> (String, Option<i32>) {
        self.sb.bash_hook(&self.wt, actor, command)
    }

    /// The stand-in `claude`'s runs for the item loop (reviews, fixes, dev runs,
    /// resumes), oldest first; the librarian's, which follow an item's close, are
    /// [`Loop::librarian_calls`].
    pub fn claude_calls(&self) -> Vec<Value> {
        self.all_claude_calls()
            .into_iter()
            .filter(|c| !is_librarian(c))
            .collect()
    }

    pub fn librarian_calls(&self) -> Vec<Value> {
        self.all_claude_calls()
            .into_iter()
            .filter(is_librarian)
            .collect()
    }

    fn all_claude_calls(&self) -> Vec<Value> {
        let log = std::fs::read_to_string(self.sb.root.join("claude.jsonl")).unwrap_or_default();
        // A line still being written has no newline yet: it is counted on the next read.
        let whole = log.rfind('\n').map_or("", |end| &log[..end]);
        whole
            .lines()
            .map(|l| serde_json::from_str(l).expect("json"))
            .collect()
    }
}

fn is_librarian(call: &Value) -> bool {
    call["args"]
        .as_array()
        .is_some_and(|args| args.iter().any(|a| a == "hallmark:librarian"))
}

/// [`CONFIG`]'s loop with its item ready for review, whose stand-in review streams three
/// reads two seconds apart before it approves: a run to follow live.
pub fn streaming_review() -> Loop {
    let read = |f: &str| json!({"tool": "Read", "input": {"file_path": f}});
    Loop::ready(
        CONFIG,
        json!({"review": [{
            "stream": [read("lib.txt"), read("check.sh"), read("README.md")],
            "every": 2.0,
            "verdict": approve()["verdict"],
        }]}),
    )
}

/// The journal of an item that failed its check once, was fixed, asked for one change
/// by the reviewer, fixed again, approved, hallmarked and shipped (bookkeeping kinds
/// left out, as [`Loop::kinds`] does).
pub const TWO_ROUNDS_TO_SHIP: [&str; 11] = [
    "created",
    "ready",
    "checks_failed",
    "fix_submitted",
    "checks_passed",
    "verdict",
    "fix_submitted",
    "checks_passed",
    "verdict",
    "hallmarked",
    "shipped",
];

pub const CONFIG: &str = "base = \"main\"\ngates = [\"sh check.sh\"]\n";

/// The one check [`CONFIG`] names: the limit in lib.txt must be inclusive.
pub const CHECK: &str = "grep -q '<=' lib.txt || { echo 'lib.txt:1: expected <= in the limit check'; echo 'error: 1 check failed'; exit 1; }\n";

pub fn wait_for(what: &str, secs: u64, mut done: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    while !done() {
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

/// [`CONFIG`] with a ship step that fails until the worktree has `ship-ok.flag`, so the
/// base can move between the hallmark and the ship.
pub fn ship_later_config() -> String {
    format!(
        "{CONFIG}ship = \"test -f ship-ok.flag && git push -u origin {{branch}} && gh pr create --base {{base}} --head {{branch}} --title {{title}} --body-file {{body_file}}\"\n"
    )
}

/// A hallmarked loop whose first ship failed (see [`ship_later_config`]).
pub fn shippable_later(script: Value) -> Loop {
    let l = Loop::ready(&ship_later_config(), script);
    l.daemon();
    let status = l.status();
    assert_eq!(status["item"]["state"], "hallmarked");
    assert_eq!(status["item"]["hold"]["kind"], "ship_failed", "{status}");
    l
}
