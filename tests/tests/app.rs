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

fn stream_line(text: &str) -> String {
    json!({"type": "assistant", "message": {"content": [
        {"type": "tool_use", "name": "Read", "input": {"file_path": text}}]}})
    .to_string()
}

#[test]
fn the_app_walks_the_board_an_item_a_live_trace_and_answers_from_the_inbox() {
    let sb = Sandbox::initialized();
    let repo = sb.repo.clone();
    sb.hall(&repo, &["new", "--title", "Round invoices"]).ok();
    let wt = sb.worktree("H-0001");
    sb.hall(&wt, &["ask", "billed or raw?", "--options", "billed,raw"])
        .ok();
    // A run that is still going: its stream, with one step so far.
    let runs = repo.join(".git/hallmark/items/H-0001/runs");
    std::fs::create_dir_all(&runs).unwrap();
    let stream = runs.join("20261205T100000Z-review.jsonl");
    std::fs::write(&stream, format!("{}\n", stream_line("src/lib.rs"))).unwrap();

    let t = Tmux::start(&sb, &repo, "walk");
    t.keys(&[&hall_bin().display().to_string(), "Enter"]);
    let board = t.wait_for("the board", |s| s.contains("Workshop (1)"));
    assert!(
        board.contains("H-0001 development  Round invoices"),
        "{board}"
    );
    assert!(board.contains("2 Office 1"), "{board}");
    assert!(board.contains("Enter: hall status H-0001"), "{board}");

    // The item: its now block is `hall status H-0001`'s text.
    t.keys(&["Enter"]);
    let item = t.wait_for("the item", |s| s.contains("H-0001 · now"));
    assert!(item.contains("r: hall ready H-0001"), "{item}");
    t.keys(&["Right"]);
    t.wait_for("the journal tab", |s| {
        s.contains("H-0001 · journal") && s.contains("asked")
    });

    // The trace, followed: a step appended to the stream shows up without a key.
    t.keys(&["t"]);
    t.wait_for("the trace", |s| {
        s.contains("trace (live)") && s.contains("src/lib.rs")
    });
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&stream)
        .unwrap();
    std::io::Write::write_all(
        &mut f,
        format!("{}\n", stream_line("src/invoice.rs")).as_bytes(),
    )
    .unwrap();
    t.wait_for("the new step", |s| s.contains("src/invoice.rs"));

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
    let answered = t.wait_for("the answer", |s| s.contains("Your Office is empty."));
    assert!(answered.contains("hall answer Q-1 raw"), "{answered}");
    let log = sb
        .hall(&repo, &["log", "H-0001", "--kind", "answered"])
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
