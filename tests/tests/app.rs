//! The terminal app in a real terminal: tmux runs `hall` in a sandbox repository and
//! `send-keys` drives it through the board, an item, a run's trace followed while the
//! run's stream grows, answering a question from Your Office, and quitting; each step is
//! read back with `capture-pane`. And a panic gives the terminal back.

#![allow(clippy::unwrap_used)] // a panic is how a test fails

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use hallmark_tests::sandbox::{Sandbox, hall_bin};
use serde_json::json;

/// A tmux server of the test's own, with one pane running a plain shell in the sandbox.
struct Tmux {
    socket: String,
}

impl Tmux {
    fn start(sb: &Sandbox, dir: &Path, name: &str) -> Tmux {
        let socket = format!("hall-app-{name}-{}", std::process::id());
        let probe = sb.hall_command(dir);
        let mut cmd = Command::new("tmux");
        cmd.args([
            "-L",
            &socket,
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-s",
            "app",
            "-x",
            "100",
            "-y",
            "30",
        ])
        .arg("-c")
        .arg(dir);
        for (k, v) in probe.get_envs() {
            if let Some(v) = v {
                cmd.arg("-e")
                    .arg(format!("{}={}", k.to_string_lossy(), v.to_string_lossy()));
            }
        }
        cmd.args(["-e", "PS1=READY$ ", "bash", "--norc", "--noprofile"]);
        let out = cmd.output().expect("tmux (Debian's tmux package)");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let t = Tmux { socket };
        t.wait_for("the shell", |s| s.contains("READY$"));
        t
    }

    fn tmux(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .args(["-L", &self.socket])
            .args(args)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn keys(&self, keys: &[&str]) {
        for k in keys {
            self.tmux(&["send-keys", "-t", "app", k]);
            std::thread::sleep(Duration::from_millis(60));
        }
    }

    fn screen(&self) -> String {
        self.tmux(&["capture-pane", "-p", "-t", "app"])
    }

    /// Waits up to 15 seconds for the screen to satisfy `f`; returns that screen.
    fn wait_for(&self, what: &str, f: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            let s = self.screen();
            if f(&s) {
                return s;
            }
            assert!(
                Instant::now() < deadline,
                "never saw {what}; the screen:\n{s}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .output();
    }
}

#[test]
fn the_app_walks_the_board_an_item_a_live_trace_and_answers_from_the_inbox() {
    // H-0001 waits for its checks and review; the stand-in model's review streams three
    // reads two seconds apart before it approves.
    let l = crate::common::streaming_review();
    let sb = &l.sb;
    let repo = sb.repo.clone();
    sb.hall(&repo, &["new", "--title", "Round invoices"]).ok();
    let two = sb.worktree("H-0002");
    sb.hall(&two, &["ask", "billed or raw?", "--options", "billed,raw"])
        .ok();

    let t = Tmux::start(sb, &repo, "walk");
    t.keys(&[&hall_bin().display().to_string(), "Enter"]);
    let board = t.wait_for("the board", |s| s.contains("Assay Office (1)"));
    assert!(
        board.contains("H-0002 development  Round invoices"),
        "{board}"
    );
    assert!(board.contains("H-0001 checks       Cap retries"), "{board}");
    assert!(board.contains("2 Office 1"), "{board}");
    assert!(board.contains("Enter: hall status H-0002"), "{board}");

    // Down to H-0001, and into it: its now block is `hall status H-0001`'s text.
    t.keys(&["j"]);
    t.wait_for("the cursor", |s| s.contains("Enter: hall status H-0001"));
    t.keys(&["Enter"]);
    let item = t.wait_for("the item", |s| s.contains("H-0001 · now"));
    assert!(item.contains("t: hall trace H-0001"), "{item}");
    t.keys(&["Right"]);
    t.wait_for("the journal tab", |s| {
        s.contains("H-0001 · journal") && s.contains("ready")
    });

    std::thread::scope(|scope| {
        // The loop runs the checks, then the review: a real run of the stand-in.
        let daemon = scope.spawn(|| l.daemon());
        // The trace, followed: each step shows up as the run writes it, no key pressed.
        t.keys(&["t"]);
        let first = t.wait_for("the run's first step", |s| {
            s.contains("trace (live)") && s.contains("lib.txt")
        });
        assert!(first.contains("(review), live"), "{first}");
        assert!(!first.contains("README.md"), "all steps at once: {first}");
        t.wait_for("the second step", |s| s.contains("check.sh"));
        let done = t.wait_for("the run's end", |s| s.contains("ended: exit 0"));
        assert!(done.contains("README.md"), "{done}");
        assert!(!done.contains(", live"), "{done}");
        daemon.join().unwrap();
    });
    assert_eq!(
        l.status()["item"]["state"],
        "closed",
        "approved and shipped"
    );

    // Your Office: answer the question with its second option.
    t.keys(&["2"]);
    let office = t.wait_for("the inbox", |s| {
        s.contains("[question] Q-1: billed or raw?")
    });
    assert!(office.contains("hall answer Q-1"), "{office}");
    t.keys(&["a"]);
    t.wait_for("the answer prompt", |s| {
        s.contains("hall answer Q-1 [1 billed, 2 raw]:")
    });
    t.keys(&["2", "Enter"]);
    let answered = t.wait_for("the answer", |s| !s.contains("[question]"));
    assert!(answered.contains("hall answer Q-1 raw"), "{answered}");
    let log = sb
        .hall(&repo, &["log", "H-0002", "--kind", "answered"])
        .ok();
    assert!(log.to_string().contains("raw"), "{log}");

    // q from a view goes back; from the board it quits, and the shell is back.
    t.keys(&["q"]);
    t.wait_for("the board again", |s| s.contains("Workshop (1)"));
    t.keys(&["q"]);
    t.wait_for("the shell", |s| {
        s.lines().any(|l| l.starts_with("READY$")) && !s.contains("Workshop")
    });
}

/// Asserts the pane's terminal is in its usual modes again.
fn assert_sane(t: &Tmux) {
    t.keys(&[
        "clear; stty -a | tr ' ' '\\n' | grep -xE -- '-?(icanon|echo|opost)'",
        "Enter",
    ]);
    let modes = t.wait_for("stty", |s| {
        s.lines().any(|l| l.trim_start_matches('-') == "opost")
    });
    for sane in ["icanon", "echo", "opost"] {
        assert!(
            modes.lines().any(|l| l.trim() == sane),
            "{sane} is not on: {modes}"
        );
    }
}

#[test]
fn sigterm_and_ctrl_c_give_the_terminal_back() {
    let sb = Sandbox::initialized();
    let repo = sb.repo.clone();
    let t = Tmux::start(&sb, &repo, "term");
    let mark = format!("hall-tui-sigterm-{}", std::process::id());
    t.keys(&[
        &format!("(exec -a {mark} {})", hall_bin().display()),
        "Enter",
    ]);
    t.wait_for("the board", |s| s.contains("1 Board"));
    let killed = Command::new("pkill")
        .args(["-TERM", "-f", &mark])
        .status()
        .unwrap();
    assert!(killed.success(), "the app's process was found");
    t.wait_for("the shell after SIGTERM", |s| {
        !s.contains("1 Board") && s.contains("READY$")
    });
    assert_sane(&t);
    t.keys(&[&hall_bin().display().to_string(), "Enter"]);
    t.wait_for("the board", |s| s.contains("1 Board"));
    t.keys(&["C-c"]);
    t.wait_for("the shell after Ctrl-C", |s| {
        !s.contains("1 Board") && s.contains("READY$")
    });
    assert_sane(&t);
}

#[test]
fn a_panic_gives_the_terminal_back() {
    let sb = Sandbox::initialized();
    let repo = sb.repo.clone();
    let t = Tmux::start(&sb, &repo, "panic");
    let line = format!(
        "RUST_BACKTRACE=0 HALL_APP_PANIC_AFTER_FRAMES=1 {}",
        hall_bin().display()
    );
    t.keys(&[&line, "Enter"]);
    let after = t.wait_for("the shell after the panic", |s| {
        s.contains("hall panicked")
            && s.lines()
                .rfind(|l| !l.trim().is_empty())
                .is_some_and(|l| l.trim() == "READY$")
    });
    assert!(
        !after.contains("1 Board"),
        "the app's screen is gone: {after}"
    );
    t.keys(&[
        "stty -a | tr ' ' '\\n' | grep -xE -- '-?(icanon|echo|opost)'",
        "Enter",
    ]);
    let modes = t.wait_for("stty", |s| s.contains("opost"));
    for sane in ["icanon", "echo", "opost"] {
        assert!(
            modes.lines().any(|l| l.trim() == sane),
            "{sane} is not on: {modes}"
        );
    }
}

/// The views [`every_view_from_the_fixed_journal`] draws: every view of the app, and
/// each item tab on the item it says most about.
const VIEWS: [&str; 19] = [
    "board",
    "help",
    "inbox",
    "history",
    "usage",
    "usage:model",
    "usage:day",
    "repos",
    "queue",
    "H-0001",
    "H-0001:journal",
    "H-0001:usage",
    "H-0001:runs",
    "H-0001:trace",
    "H-0001:gazette",
    "H-0002",
    "H-0003",
    "H-0003:findings",
    "H-0005",
];

/// Every view at 80×24 and 120×40, drawn by `hall frame` (the app's own renderer on
/// ratatui's test backend) from a fixed journal: five items in every place, a question,
/// a hold, a dropped item, two review rounds with a fix, runs and a Gazette page.
#[test]
fn every_view_from_the_fixed_journal() {
    let sb = Sandbox::initialized();
    let journal = sb.repo.join(".git/hallmark");
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/app/journal"),
        &journal,
    );
    sb.hall(&sb.repo, &["reindex"]).ok();
    // The repository's own path is the sandbox's: written the same on every machine.
    let root = sb.root.display().to_string();
    let shown = |text: String| {
        let tmp = Path::new(&root)
            .parent()
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        let fixed = format!("{tmp}/{}", "X".repeat(root.len() - tmp.len() - 1));
        text.replace(&root, &fixed)
    };
    for size in ["80x24", "120x40"] {
        for view in VIEWS {
            let v = sb
                .hall_env(
                    &sb.repo,
                    &["frame", view, "--size", size],
                    &[("HALL_NOW", "2026-11-02T15:00:00Z")],
                )
                .ok();
            let rows: Vec<&str> = v["rows"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r.as_str().unwrap())
                .collect();
            let (w, h) = size.split_once('x').unwrap();
            assert_eq!(rows.len(), h.parse::<usize>().unwrap(), "{view} {size}");
            for r in &rows {
                assert!(
                    r.chars().count() <= w.parse().unwrap(),
                    "{view} {size}: {r}"
                );
            }
            let name = format!("{}_{size}", view.replace(':', "_"));
            insta::assert_snapshot!(name, shown(rows.join("\n")));
        }
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &to.join(entry.file_name()));
        } else {
            std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
    }
}

/// Writes `tests/fixtures/app/journal`: the fixed journal the snapshots of every view are
/// drawn from (`every_view_from_the_fixed_journal`). Run by hand when the journal's
/// format changes: `cargo test -p hallmark-tests --test e2e -- --ignored app::write_the_fixed_journal`.
#[test]
#[ignore]
fn write_the_fixed_journal() {
    let review = json!({"review": [
        {"stream": [
            {"tool": "Read", "input": {"file_path": "lib.txt"}},
            {"tool": "Grep", "input": {"pattern": "attempts", "path": "."}},
            {"tool": "Bash", "input": {"command": "sh check.sh"}}
        ], "verdict": crate::common::reject()["verdict"]},
        crate::common::approve()
    ], "fix": [crate::common::fix("attempts <= 3", "F1")]});
    let mut l = crate::common::Loop::new(crate::common::CONFIG, review);
    // H-0001 goes round twice: rejected, fixed, approved.
    l.sb.commit(&l.wt, "lib.txt", "attempts <= 2\n", "Inclusive, off by one");
    l.sb.hall(&l.wt, &["ready"]).ok();
    l.daemon();
    l.sb.now = "2026-11-02T10:15:00Z".into();
    let sb = &l.sb;
    // H-0002 waits on a question; H-0003 failed its check; H-0004 was dropped.
    let two = sb
        .hall(&sb.repo, &["new", "--title", "Round invoices half-even"])
        .ok();
    let two_wt = sb.worktree(two["item"].as_str().unwrap());
    sb.hall(
        &two_wt,
        &[
            "ask",
            "Round the billed or the raw amount?",
            "--options",
            "billed,raw",
        ],
    )
    .ok();
    let sb = at(&mut l, "2026-11-02T11:30:00Z");
    let three = sb
        .hall(&sb.repo, &["new", "--title", "Faster status line"])
        .ok();
    let three_wt = sb.worktree(three["item"].as_str().unwrap());
    sb.commit(&three_wt, "lib.txt", "attempts < 5\n", "Five attempts");
    sb.hall(&three_wt, &["ready"]).ok();
    l.daemon();
    let sb = at(&mut l, "2026-11-02T13:00:00Z");
    sb.hall(&sb.repo, &["new", "--title", "Try a second index"])
        .ok();
    sb.hall(
        &sb.repo,
        &["drop", "H-0004", "--reason", "superseded by H-0003"],
    )
    .ok();
    // H-0005 waits for its checks (no daemon runs them).
    let sb = at(&mut l, "2026-11-02T14:45:00Z");
    sb.hall(&sb.repo, &["new", "--title", "Nightly export"])
        .ok();
    let five_wt = sb.worktree("H-0005");
    sb.commit(&five_wt, "export.txt", "nightly\n", "Export nightly");
    sb.hall(&five_wt, &["ready"]).ok();

    let from = sb.repo.join(".git/hallmark");
    let to = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/app/journal");
    let _ = std::fs::remove_dir_all(&to);
    copy_journal(&from, &to, &sb.root.display().to_string());
}

/// The loop's sandbox with its clock moved to `now`.
fn at<'a>(l: &'a mut crate::common::Loop, now: &str) -> &'a Sandbox {
    l.sb.now = now.to_string();
    &l.sb
}

/// Copies the journal's files (not its index, locks or leases) with `root` written as
/// `/home/ada`, so the fixture names no machine's temporary directory.
fn copy_journal(from: &Path, to: &Path, root: &str) {
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().into_owned();
        let path = entry.path();
        if entry.file_type().unwrap().is_dir() {
            if !matches!(name.as_str(), "leases" | "state" | "tmp") {
                copy_journal(&path, &to.join(&name), root);
            }
            continue;
        }
        // The Gazette's page is printed from the journal when asked for.
        if name.ends_with(".sqlite")
            || name == "gazette.html"
            || name.ends_with(".lock")
            || name.contains(".sqlite-")
            || name == "changes"
        {
            continue;
        }
        std::fs::create_dir_all(to).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        let bytes = match String::from_utf8(bytes) {
            Ok(s) => s.replace(root, "/home/ada").into_bytes(),
            Err(e) => e.into_bytes(),
        };
        std::fs::write(to.join(&name), bytes).unwrap();
    }
}
