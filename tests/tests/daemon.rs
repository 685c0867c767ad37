//! The daemon: leases and a kill mid-review, running in the background, the login
//! service, the inbox and doctor's view of it, resumed sessions, `hall trace --follow`
//! and `hall next`.

#![allow(clippy::unwrap_used)] // a panic is how a test fails

use std::path::{Path, PathBuf};

use crate::common::*;

#[test]
fn a_daemon_killed_mid_review_loses_nothing_and_duplicates_nothing() {
    let slow = json!({"sleep": 30, "verdict": approve()["verdict"]});
    let l = Loop::ready(CONFIG, json!({"review": [slow, approve()]}));
    let mut cmd = l.sb.hall_command(&l.sb.repo);
    cmd.args(["daemon", "run", "--repo", ".", "--tick", "0.05"])
        .envs(l.sb.model_env(&l.script))
        .stdout(std::process::Stdio::null());
    let daemon = l.sb.spawn(&mut cmd);
    let runs =
        l.sb.repo
            .join(".git/hallmark/items")
            .join(&l.id)
            .join("runs");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !std::fs::read_dir(&runs).is_ok_and(|d| {
        d.filter_map(|e| e.ok())
            .any(|e| e.path().extension().is_some_and(|x| x == "lock"))
    }) {
        assert!(
            std::time::Instant::now() < deadline,
            "the review never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let status = l.status();
    assert!(
        status["now"]["lease"]["holder"]
            .as_str()
            .unwrap()
            .starts_with("daemon:"),
        "{}",
        status["now"]
    );
    assert_eq!(status["now"]["run"]["live"], true);
    l.sb.kill_spawned(daemon);
    // A second daemon takes the work up again: the dead holder's lease is free.
    l.daemon();
    let kinds = l.kinds();
    assert_eq!(
        kinds.iter().filter(|k| *k == "verdict").count(),
        1,
        "{kinds:?}"
    );
    assert_eq!(
        kinds.iter().filter(|k| *k == "hallmarked").count(),
        1,
        "{kinds:?}"
    );
    assert_eq!(l.status()["item"]["state"], "closed");
    // The killed run's stream has no end line; the retried one does.
    let streams: Vec<PathBuf> = std::fs::read_dir(&runs)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.extension().is_some_and(|x| x == "jsonl") && p.to_string_lossy().contains("-review")
        })
        .collect();
    assert_eq!(streams.len(), 2);
    let ended = streams
        .iter()
        .filter(|p| std::fs::read_to_string(p).unwrap().contains("hall_run_end"))
        .count();
    assert_eq!(ended, 1);
    // The killed daemon's run was left going, as it would be on any machine: the sandbox
    // ends it, and it is the only process left.
    let left = l.sb.reap();
    assert!(left.iter().all(|p| p.contains("claude")), "{left:?}");
}

#[test]
fn next_claims_with_a_lease_and_agents_may_not_give_verdicts() {
    let l = Loop::ready(CONFIG, json!({}));
    let first =
        l.sb.hall(
            &l.sb.repo,
            &["next", "--role", "assayer", "--holder", "agent-a"],
        )
        .ok();
    assert_eq!(first["item"], l.id.as_str());
    assert_eq!(first["lease"]["phase"], "checks");
    l.sb.hall(
        &l.sb.repo,
        &["next", "--role", "assayer", "--holder", "agent-b"],
    )
    .err("CLAIMED", 7);
    let none = l.sb.hall(&l.sb.repo, &["next", "--role", "shipper"]).ok();
    assert!(none["item"].is_null());
    // A verdict file from an agent (inside Claude Code) is refused; a person's is an override.
    let file = l.sb.root.join("verdict.json");
    std::fs::write(&file, approve()["verdict"].to_string()).unwrap();
    let f = file.display().to_string();
    l.sb.hall_env(
        &l.sb.repo,
        &["verdict", &l.id, "--file", &f],
        &[("CLAUDECODE", "1")],
    )
    .err("GATE_DENIED", 5);
    l.sb.hall_env(
        &l.sb.repo,
        &["verdict", &l.id, "--file", &f],
        &[("HALL_ACTOR", "fixer")],
    )
    .err("GATE_DENIED", 5);
    // The fixer may not decide the item's fate either: the command refuses it, and in a
    // Claude session the hook denies it before it runs.
    l.sb.hall_env(&l.wt, &["ready"], &[("HALL_ACTOR", "fixer")])
        .err("GATE_DENIED", 5);
    for (actor, command, denied) in [
        ("fixer", "hall ready", true),
        (
            "fixer",
            "cd . && HALL_ACTOR=you hall --json retry H-0001 --reason x",
            true,
        ),
        ("fixer", "hall fixed F1", false),
        ("agent", "hall verdict --file v.json", true),
        ("agent", "hall ready", false),
    ] {
        let (text, code) = l.bash_hook(actor, command);
        assert_eq!(
            text.contains("\"deny\""),
            denied,
            "{actor}: {command}: {text}"
        );
        assert_eq!(code, Some(0), "hooks always exit 0");
    }
}

#[test]
fn start_at_login_installs_a_user_service() {
    let l = Loop::new(CONFIG, json!({}));
    let run = l.hall(&l.sb.repo, &["daemon", "start", "--at-login"]);
    let v = run.ok();
    assert_eq!(v["service"], "dev.hallmark.daemon");
    let unit = std::fs::read_to_string(
        l.sb.home
            .join(".config/systemd/user/dev.hallmark.daemon.service"),
    )
    .or_else(|_| {
        std::fs::read_to_string(
            l.sb.home
                .join(".config/systemd/user/hallmark-daemon.service"),
        )
    })
    .expect("a systemd user unit");
    assert!(
        unit.contains(&format!("ExecStart={} daemon run", hall_bin().display())),
        "{unit}"
    );
    assert!(
        unit.contains("HALL_DATA_DIR="),
        "the service sees the same data dir: {unit}"
    );
    // Here there is no user session bus, so the service can't start now: the daemon runs
    // in the background instead, and the reply says so.
    if !run.stderr.is_empty() {
        assert!(
            run.stderr
                .contains("started the daemon in the background instead"),
            "{}",
            run.stderr
        );
    }
    assert_eq!(v["running"], true, "{v}");
    l.sb.hall(&l.sb.repo, &["daemon", "stop"]).ok();
}

#[test]
fn the_daemon_starts_in_the_background_works_the_registry_and_stops_on_request() {
    let l = Loop::new(CONFIG, json!({"review": [approve()]}));
    l.sb.commit(&l.wt, "lib.txt", "attempts <= 3\n", "Inclusive");
    let before = l.sb.hall(&l.sb.repo, &["doctor"]).ok();
    let daemon_check = |v: &Value| {
        v["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == "daemon")
            .cloned()
            .unwrap()
    };
    assert_eq!(daemon_check(&before)["ok"], false);
    assert_eq!(daemon_check(&before)["fix"], "hall daemon start");
    let started = l.hall(&l.sb.repo, &["daemon", "start"]).ok();
    assert_eq!(started["running"], true, "{started}");
    let pid = started["state"]["pid"].as_u64().unwrap();
    // It found the repository through the registry `hall init` wrote, and works it.
    l.sb.hall(&l.wt, &["ready"]).ok();
    wait_for("the item to close", 60, || {
        l.status()["item"]["state"] == "closed"
    });
    let status = l.sb.hall(&l.sb.repo, &["daemon", "status"]).ok();
    assert_eq!(status["running"], true);
    assert!(status["heartbeat_age_s"].as_u64().unwrap() < 10, "{status}");
    assert_eq!(
        daemon_check(&l.sb.hall(&l.sb.repo, &["doctor"]).ok())["ok"],
        true
    );
    // A second start finds it running and starts nothing.
    let again = l.hall(&l.sb.repo, &["daemon", "start"]).ok();
    assert_eq!(again["state"]["pid"].as_u64(), Some(pid));
    l.sb.hall(&l.sb.repo, &["daemon", "stop"]).ok();
    wait_for("the daemon to exit", 30, || {
        !Path::new(&format!("/proc/{pid}")).exists()
            || std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| s.contains(") Z"))
    });
    let after = l.sb.hall(&l.sb.repo, &["daemon", "status"]).ok();
    assert_eq!(after["running"], false, "{after}");
    // Stopped on request: nothing waits in the inbox for it.
    let inbox = l.sb.hall(&l.sb.repo, &["inbox"]).ok();
    assert!(!inbox.to_string().contains("daemon stopped"), "{inbox}");
}

#[test]
fn a_killed_daemon_shows_in_the_inbox_and_doctor() {
    let l = Loop::new(CONFIG, json!({}));
    let started = l.hall(&l.sb.repo, &["daemon", "start"]).ok();
    let pid = started["state"]["pid"].as_u64().unwrap().to_string();
    std::process::Command::new("kill")
        .args(["-9", &pid])
        .status()
        .unwrap();
    wait_for("the kill", 10, || {
        l.sb.hall(&l.sb.repo, &["daemon", "status"]).ok()["running"] == false
    });
    let inbox = l.sb.hall(&l.sb.repo, &["inbox"]).ok();
    let entry = inbox["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == "daemon stopped")
        .cloned();
    assert!(
        entry.is_some_and(|e| e["next"][0] == "hall daemon start"),
        "{inbox}"
    );
    let doctor = l.sb.hall(&l.sb.repo, &["doctor"]).ok();
    let check = doctor["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "daemon")
        .cloned()
        .unwrap();
    assert!(
        check["detail"]
            .as_str()
            .unwrap()
            .contains("stopped without being asked"),
        "{check}"
    );
}

#[test]
fn questions_take_their_default_after_the_wait_and_answers_resume_the_session() {
    let l = Loop::new(CONFIG, json!({}));
    let asked =
        l.sb.hall(
            &l.wt,
            &[
                "ask",
                "billed or raw?",
                "--options",
                "billed,raw",
                "--default",
                "billed",
                "--wait",
                "30m",
                "--session",
                "sess-1",
            ],
        )
        .ok();
    let q1 = asked["question"].as_str().unwrap().to_string();
    let asked =
        l.sb.hall(&l.wt, &["ask", "which region?", "--session", "sess-2"])
            .ok();
    let q2 = asked["question"].as_str().unwrap().to_string();
    // Before the wait runs out, nothing happens.
    l.daemon();
    assert!(l.claude_calls().is_empty());
    // An hour later the default is taken, said so, and the session resumed with it.
    let later = [("HALL_NOW", "2026-11-02T10:00:00Z")];
    l.daemon_with(&later);
    let answered = l.of_kind("answered");
    assert_eq!(answered.len(), 1);
    assert_eq!(answered[0]["answer"], "billed");
    assert_eq!(answered[0]["by_default"], true);
    let calls = l.claude_calls();
    assert_eq!(calls.len(), 1);
    let args: Vec<&str> = calls[0]["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(
        args[args.iter().position(|a| *a == "--resume").unwrap() + 1],
        "sess-1"
    );
    // The default is the asking agent's own words: fenced as data.
    let message = args.last().unwrap();
    assert!(
        message.contains("go ahead with the default you proposed")
            && message.contains("begins: the default you proposed]\nbilled\n"),
        "{args:?}"
    );
    assert_eq!(calls[0]["cwd"], l.wt.display().to_string());
    // A person's answer resumes the other session, once.
    l.sb.hall(&l.sb.repo, &["answer", &q2, "eu-west"]).ok();
    l.daemon_with(&later);
    l.daemon_with(&later);
    let calls = l.claude_calls();
    assert_eq!(calls.len(), 2, "each session resumed once");
    assert!(
        calls[1]["args"]
            .as_array()
            .unwrap()
            .last()
            .unwrap()
            .as_str()
            .unwrap()
            .contains(&format!("The answer to {q2}: eu-west"))
    );
    let resumed = l.of_kind("resumed");
    assert_eq!(resumed.len(), 2);
    assert_eq!(resumed[0]["qid"], q1.as_str());
}

#[test]
fn trace_follows_a_live_run_to_its_end() {
    let l = Loop::ready(
        CONFIG,
        json!({"review": [{"sleep": 2, "verdict": approve()["verdict"]}]}),
    );
    let mut cmd = l.sb.hall_command(&l.sb.repo);
    cmd.args(["daemon", "run", "--until-idle", "--tick", "0.05"])
        .envs(l.sb.model_env(&l.script))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    l.sb.spawn(&mut cmd);
    wait_for("the live review", 60, || {
        l.status()["now"]["run"]["live"] == true
    });
    assert_eq!(
        l.status()["now"]["offer"],
        format!("hall trace {} --follow", l.id)
    );
    let follow = l.sb.hall(&l.sb.repo, &["trace", &l.id, "--follow"]);
    let v = follow.ok();
    assert_eq!(
        v["run"]["ended"], true,
        "--follow returns once the run ends: {v}"
    );
    assert!(
        follow.stderr.contains("started: model claude-opus-4-8")
            && follow.stderr.contains("ended: exit 0"),
        "{}",
        follow.stderr
    );
}

#[test]
fn a_process_left_behind_fails_its_sandbox_and_is_ended() {
    let sb = Sandbox::new();
    let mut cmd = std::process::Command::new("sleep");
    sb.apply_env(&mut cmd);
    let child = cmd.arg("600").spawn().expect("sleep");
    let pid = child.id();
    assert!(
        sb.processes().iter().any(|(p, _)| *p == pid),
        "the stray is seen: {:?}",
        sb.processes()
    );
    let dropped = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || drop(sb)));
    let message = dropped.expect_err("a process outlived its sandbox");
    let message = message
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
    assert!(message.contains(&format!("{pid} `sleep 600`")), "{message}");
    let mut child = child;
    let status = child.wait().expect("reaped");
    assert!(
        !status.success(),
        "it was killed, not left to finish: {status:?}"
    );
}

#[test]
fn the_daemon_stops_when_its_data_directory_is_gone() {
    let l = Loop::new(CONFIG, json!({}));
    let mut cmd = l.sb.hall_command(&l.sb.repo);
    cmd.args(["daemon", "run", "--tick", "0.05"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    let mut daemon = cmd.spawn().expect("daemon");
    let state = l.sb.root.join("data/daemon/state.json");
    wait_for("the daemon's first pass", 30, || state.is_file());
    // The daemon may write its state between the listing and the last rmdir of one
    // try: take the directory away again until it is gone.
    wait_for("the data directory to be removed", 10, || {
        std::fs::remove_dir_all(l.sb.root.join("data")).is_ok()
    });
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let status = loop {
        if let Some(s) = daemon.try_wait().unwrap() {
            break s;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the daemon outlived its data directory"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let mut log = String::new();
    std::io::Read::read_to_string(&mut daemon.stderr.take().unwrap(), &mut log).unwrap();
    assert!(status.success(), "{status:?}: {log}");
    assert!(log.contains("is gone; stopping"), "{log}");
    assert!(!l.sb.root.join("data").exists(), "nothing was made again");
}
