//! Notifications through the real binary: each phone channel against a loopback stub that
//! speaks its API (the exact requests, a 429 waited out, quiet hours into the digest,
//! reminders, routes, a failing channel's one notice), the desktop on a real D-Bus
//! session bus, and delivery across a daemon killed between sending and recording.

#![allow(clippy::unwrap_used)] // a panic is how a test fails

use std::collections::VecDeque;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use hallmark_tests::http::{Request, Response, Server, lock};
use hallmark_tests::sandbox::{Run, Sandbox};
use serde_json::{Value, json};

/// Text that must never leave the machine: the item's prompt and its diff.
const PROMPT: &str = "PROMPT-7f3a: make invoices round half-even";
const DIFF: &str = "DIFF-91c2 fn round_half_even";

/// Responses by path prefix, taken in order.
type Script = Arc<Mutex<Vec<(String, VecDeque<Response>)>>>;

/// A stub of the three phone services: records every request and answers each path
/// from its script (then 200).
struct Phone {
    server: Server,
    seen: Arc<Mutex<Vec<Request>>>,
    script: Script,
}

impl Phone {
    fn start() -> Phone {
        let seen = Arc::new(Mutex::new(Vec::<Request>::new()));
        let script: Script = Arc::new(Mutex::new(Vec::new()));
        let (s, sc) = (Arc::clone(&seen), Arc::clone(&script));
        let server = Server::start(
            "phone",
            Arc::new(move |req: Request| {
                lock(&s).push(req.clone());
                let mut script = lock(&sc);
                let scripted = script
                    .iter_mut()
                    .find(|(p, _)| req.path.starts_with(p.as_str()))
                    .and_then(|(_, q)| q.pop_front());
                scripted.unwrap_or_else(|| {
                    if req.path.contains("/sendMessage") {
                        Response::json(200, &json!({"ok": true, "result": {"message_id": 1}}))
                    } else {
                        Response::text(200, "ok")
                    }
                })
            }),
        )
        .unwrap();
        Phone {
            server,
            seen,
            script,
        }
    }

    fn answer(&self, path: &str, responses: Vec<Response>) {
        lock(&self.script).push((path.to_string(), responses.into()));
    }

    fn requests(&self) -> Vec<Request> {
        lock(&self.seen).clone()
    }

    fn bodies(&self) -> Vec<Value> {
        self.requests()
            .iter()
            .map(|r| serde_json::from_slice(&r.body).unwrap())
            .collect()
    }
}

fn write_config(sb: &Sandbox, text: &str) {
    std::fs::create_dir_all(sb.config_dir()).unwrap();
    std::fs::write(sb.config_dir().join("config.toml"), text).unwrap();
}

/// An item whose agent asks a question (an escalation), with a prompt and a diff in its
/// record that must never be sent.
fn asking(sb: &Sandbox) -> std::path::PathBuf {
    let repo = sb.repo.clone();
    sb.hall(&repo, &["new", "--title", "Round invoices"]).ok();
    let wt = sb.worktree("H-0001");
    sb.record("H-0001", "you", json!({"event": "prompt", "text": PROMPT}));
    sb.commit(&wt, "lib.rs", &format!("// {DIFF}\n"), "Round half-even");
    sb.hall(&wt, &["ask", "billed or raw?", "--options", "billed,raw"])
        .ok();
    wt
}

fn notify(sb: &Sandbox, vars: &[(&str, &str)]) -> Run {
    let mut all = vec![("TZ", "UTC"), ("HALL_NOTIFY_PATIENCE", "5s")];
    all.extend_from_slice(vars);
    sb.hall_env(&sb.repo, &["notify", "now"], &all)
}

fn notified(sb: &Sandbox) -> Vec<Value> {
    let text =
        std::fs::read_to_string(sb.repo.join(".git/hallmark/events.jsonl")).unwrap_or_default();
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["event"] == "notified")
        .collect()
}

fn assert_private(phone: &Phone) {
    for r in phone.requests() {
        let body = String::from_utf8_lossy(&r.body);
        for secret in [PROMPT, DIFF, "Round invoices", "lib.rs"] {
            assert!(!body.contains(secret), "`{secret}` left in {body}");
        }
    }
}

/// A sandbox, the phone stub, and the user's config.toml made from `config` with the
/// stub's address for `{url}`.
fn with_phone(config: &str) -> (Sandbox, Phone, String) {
    let sb = Sandbox::initialized();
    let phone = Phone::start();
    let url = phone.server.url();
    write_config(&sb, &config.replace("{url}", &url));
    (sb, phone, url)
}

#[test]
fn each_phone_channel_gets_its_exact_request_and_a_rate_limit_is_waited_out() {
    let (sb, phone, url) = with_phone(
        "[signing]\n# kept as it is\n[notify]\nchannels = [\"ntfy\", \"telegram\", \"slack\"]\n[notify.ntfy]\nserver = \"{url}\"\n[notify.telegram]\napi = \"{url}/tg\"\ntoken_env = \"TG_TOKEN\"\nchat_id = \"-1001\"\n[notify.slack]\nwebhook_env = \"SLACK_HOOK\"\n",
    );
    asking(&sb);
    phone.answer(
        "/tg/bot",
        vec![Response::json(
            429,
            &json!({"ok": false, "error_code": 429, "description": "Too Many Requests: retry after 1", "parameters": {"retry_after": 1}}),
        )],
    );
    phone.answer(
        "/services",
        vec![Response::text(429, "rate_limited").with_header("Retry-After", "1")],
    );
    let hook = format!("{url}/services/T1/B2/XYZ");
    let vars = [("TG_TOKEN", "123:ABC"), ("SLACK_HOOK", hook.as_str())];
    let started = Instant::now();
    let run = notify(&sb, &vars);
    run.ok();
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "the 429s were waited out"
    );

    // ntfy made a random topic on first use and kept it in the user's config.
    let config = std::fs::read_to_string(sb.config_dir().join("config.toml")).unwrap();
    let topic = config
        .lines()
        .find_map(|l| l.strip_prefix("topic = \""))
        .map(|t| t.trim_end_matches('"').to_string())
        .expect("a topic written");
    assert!(topic.starts_with("hall-") && topic.len() == 37, "{topic}");
    assert!(config.contains("# kept as it is"), "{config}");

    let reqs = phone.requests();
    let paths: Vec<&str> = reqs.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "/",
            "/tg/bot123:ABC/sendMessage",
            "/tg/bot123:ABC/sendMessage",
            "/services/T1/B2/XYZ",
            "/services/T1/B2/XYZ",
        ],
        "ntfy once, Telegram and Slack again after their 429"
    );
    assert!(reqs.iter().all(|r| r.is("POST")));
    let types: Vec<Option<&str>> = reqs.iter().map(|r| r.header("content-type")).collect();
    assert!(
        types
            .iter()
            .all(|t| t.is_some_and(|t| t.starts_with("application/json"))),
        "{types:?}"
    );
    let repo = sb.repo.file_name().unwrap().to_string_lossy().to_string();
    let key = reqs[0].header("x-hall-key").unwrap().to_string();
    assert!(key.starts_with("question:Q-1@"), "{key}");
    assert!(
        reqs.iter()
            .all(|r| r.header("x-hall-key") == Some(key.as_str()))
    );
    let bodies = phone.bodies();
    assert_eq!(
        bodies[0],
        json!({"topic": topic, "title": format!("hall · {repo}: H-0001 asks"),
            "message": "Q-1: billed or raw? [billed, raw]\n→ hall answer Q-1 \"…\"",
            "tags": ["hallmark"], "priority": 4})
    );
    assert_eq!(
        bodies[2],
        json!({"chat_id": "-1001", "parse_mode": "HTML", "link_preview_options": {"is_disabled": true},
            "text": format!("<b>hall · {repo}: H-0001 asks</b>\nQ-1: billed or raw? [billed, raw]\n<code>hall answer Q-1 \"…\"</code>")})
    );
    assert_eq!(
        bodies[4],
        json!({"text": format!("*hall · {repo}: H-0001 asks*\nQ-1: billed or raw? [billed, raw]\n`hall answer Q-1 \"…\"`")})
    );
    assert_private(&phone);

    // Recorded once per channel; a second pass sends nothing.
    let lines = notified(&sb);
    let channels: Vec<&str> = lines
        .iter()
        .map(|e| e["channel"].as_str().unwrap())
        .collect();
    assert_eq!(channels, ["ntfy", "telegram", "slack"]);
    assert!(
        lines
            .iter()
            .all(|e| e["how"] == "sent" && e["kind"] == "question")
    );
    let again = notify(&sb, &vars);
    assert_eq!(again.ok()["did"], Value::Null, "{again:?}");
    assert_eq!(phone.requests().len(), 5);

    // `hall notify test` reaches each channel and says where.
    let test = sb.hall_env(&sb.repo, &["notify", "test"], &vars).ok();
    let said: Vec<String> = test["channels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            format!(
                "{}: {}",
                c["channel"].as_str().unwrap(),
                c["said"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        said,
        [
            format!("ntfy: sent to {url}/{topic}"),
            "telegram: sent to Telegram chat -1001".to_string(),
            "slack: sent to the Slack webhook".to_string(),
        ]
    );
    // A missing secret is named, with what to do.
    let err = sb
        .hall_env(&sb.repo, &["notify", "test", "--channel", "telegram"], &[])
        .err("COMMAND_FAILED", 1);
    let msg = err["error"]["message"].as_str().unwrap();
    assert!(msg.contains("TG_TOKEN is not set"), "{msg}");
}

#[test]
fn quiet_hours_defer_the_phone_into_the_digest_then_reminders_repeat_and_routes_hold() {
    let (sb, phone, url) = with_phone(
        "[notify]\nchannels = [\"ntfy\", \"slack\"]\nquiet = \"22:00-07:00\"\ndigest = \"08:00\"\nremind = \"2h\"\n[notify.ntfy]\nserver = \"{url}\"\ntopic = \"hall-test\"\n[notify.slack]\nwebhook_env = \"SLACK_HOOK\"\n[notify.route]\nquestion = [\"ntfy\"]\n",
    );
    let hook = format!("{url}/services/T/B/C");
    let at = |t: &str| vec![("HALL_NOW", t.to_string()), ("SLACK_HOOK", hook.clone())];
    let run = |t: &str| {
        let v = at(t);
        let vars: Vec<(&str, &str)> = v.iter().map(|(k, v)| (*k, v.as_str())).collect();
        notify(&sb, &vars)
    };
    // The question comes at night: held back, recorded as deferred.
    let night = "2026-12-05T23:10:00Z";
    let repo = sb.repo.clone();
    sb.hall_env(
        &repo,
        &["new", "--title", "Round invoices"],
        &[("HALL_NOW", night)],
    )
    .ok();
    let wt = sb.worktree("H-0001");
    sb.hall_env(
        &wt,
        &["ask", "billed or raw?", "--options", "billed,raw"],
        &[("HALL_NOW", night)],
    )
    .ok();
    run(night).ok();
    assert!(phone.requests().is_empty(), "nothing at night");
    let lines = notified(&sb);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(lines[0]["how"], "deferred");
    assert_eq!(lines[0]["channel"], "ntfy", "routed to ntfy only");

    // 07:30: the quiet is over, but the digest is at 08:00.
    run("2026-12-06T07:30:00Z").ok();
    assert!(phone.requests().is_empty());
    // 08:05: the digest on ntfy; Slack, which hears of no question, has nothing to
    // say this morning and says nothing.
    run("2026-12-06T08:05:00Z").ok();
    let bodies = phone.bodies();
    assert_eq!(bodies.len(), 1, "{bodies:?}");
    let ntfy = bodies[0]["message"].as_str().unwrap();
    assert!(
        ntfy.starts_with(
            "Held back in quiet hours:\n• Q-1: billed or raw? [billed, raw] — hall answer Q-1"
        ),
        "{ntfy}"
    );
    assert!(bodies[0]["title"].as_str().unwrap().ends_with(": digest"));
    let mornings: Vec<Value> = notified(&sb)
        .into_iter()
        .filter(|e| e["key"] == "digest:2026-12-06")
        .collect();
    assert_eq!(
        mornings.len(),
        2,
        "the morning is marked on both: {mornings:?}"
    );
    run("2026-12-06T09:00:00Z").ok();
    assert_eq!(phone.requests().len(), 1, "one digest a morning");
    // 10:06: two hours after the digest told of it, a reminder.
    run("2026-12-06T10:06:00Z").ok();
    let bodies = phone.bodies();
    assert_eq!(bodies.len(), 2);
    assert_eq!(
        bodies[1]["message"],
        "Reminder 1: Q-1: billed or raw? [billed, raw]\n→ hall answer Q-1 \"…\""
    );
    // Answered: no more reminders.
    sb.hall_env(
        &repo,
        &["answer", "Q-1", "billed"],
        &[("HALL_NOW", "2026-12-06T10:30:00Z")],
    )
    .ok();
    run("2026-12-06T14:00:00Z").ok();
    assert_eq!(phone.requests().len(), 2);
    assert_private(&phone);
}

#[test]
fn a_channel_that_keeps_failing_becomes_one_notice_cleared_when_it_delivers() {
    let (sb, phone, _) = with_phone(
        "[notify]\nchannels = [\"ntfy\"]\n[notify.ntfy]\nserver = \"{url}\"\ntopic = \"hall-t\"\n",
    );
    asking(&sb);
    phone.answer(
        "",
        (0..4)
            .map(|_| Response::text(500, "upstream down"))
            .collect(),
    );
    let notices = |sb: &Sandbox| -> Vec<Value> {
        sb.hall(&sb.repo, &["inbox", "--notices"]).ok()["notices"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|n| n["kind"] == "notify_failed")
            .cloned()
            .collect()
    };
    for n in 1..=4 {
        let run = notify(&sb, &[]);
        run.ok();
        assert_eq!(phone.requests().len(), n);
        assert_eq!(
            notices(&sb).len(),
            usize::from(n >= 3),
            "after {n} failures"
        );
    }
    let notice = &notices(&sb)[0];
    let msg = notice["message"].as_str().unwrap();
    assert!(
        msg.starts_with("ntfy: 3 deliveries failed in a row"),
        "{msg}"
    );
    assert!(
        msg.contains("HTTP 500") && msg.contains("hall notify test --channel ntfy"),
        "{msg}"
    );
    assert!(notified(&sb).is_empty(), "nothing recorded as told");
    // The service is back: the message goes, the notice goes.
    notify(&sb, &[]).ok();
    assert_eq!(phone.requests().len(), 5);
    assert_eq!(notified(&sb).len(), 1);
    assert!(notices(&sb).is_empty());
    // A notice is never notified; the inbox entry was, once.
    notify(&sb, &[]).ok();
    assert_eq!(phone.requests().len(), 5);
}

/// A notification server on a private session bus that records each `Notify` call.
struct Recorder {
    tx: Mutex<mpsc::Sender<(String, String, String)>>,
}

#[zbus::interface(name = "org.freedesktop.Notifications")]
impl Recorder {
    #[allow(clippy::too_many_arguments)]
    fn notify(
        &self,
        app_name: String,
        _replaces_id: u32,
        _app_icon: String,
        summary: String,
        body: String,
        _actions: Vec<String>,
        _hints: std::collections::HashMap<String, zbus::OwnedVariant>,
        _expire_timeout: i32,
    ) -> u32 {
        let _ = lock(&self.tx).send((app_name, summary, body));
        1
    }

    fn get_capabilities(&self) -> Vec<String> {
        vec!["body".into()]
    }

    fn get_server_information(&self) -> (String, String, String, String) {
        (
            "recorder".into(),
            "hallmark-tests".into(),
            "1".into(),
            "1.2".into(),
        )
    }

    fn close_notification(&self, _id: u32) {}
}

#[test]
fn the_desktop_channel_speaks_to_a_real_session_bus() {
    let sb = Sandbox::initialized();
    let mut bus = Command::new("dbus-daemon")
        .args(["--session", "--nofork", "--print-address=1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("dbus-daemon (Debian's dbus-daemon package)");
    let mut address = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(bus.stdout.take().unwrap()),
        &mut address,
    )
    .unwrap();
    let address = address.trim().to_string();
    let (tx, rx) = mpsc::channel();
    let (ready_tx, ready_rx) = mpsc::channel();
    let addr = address.clone();
    std::thread::spawn(move || {
        zbus::block_on(async move {
            let conn = zbus::connection::Builder::address(addr.as_str())
                .name("org.freedesktop.Notifications")
                .serve_at(
                    "/org/freedesktop/Notifications",
                    Recorder { tx: Mutex::new(tx) },
                )
                .build()
                .await
                .unwrap();
            ready_tx.send(()).unwrap();
            std::future::pending::<()>().await;
            drop(conn);
        })
    });
    ready_rx.recv_timeout(Duration::from_secs(20)).unwrap();
    write_config(&sb, "[notify]\nchannels = [\"desktop\"]\n");
    asking(&sb);
    let run = notify(&sb, &[("DBUS_SESSION_BUS_ADDRESS", address.as_str())]);
    run.ok();
    let (app, summary, body) = rx.recv_timeout(Duration::from_secs(10)).unwrap();
    let repo = sb.repo.file_name().unwrap().to_string_lossy().to_string();
    assert_eq!(app, "hall");
    assert_eq!(summary, format!("hall · {repo}: H-0001 asks"));
    assert_eq!(
        body,
        "Q-1: billed or raw? [billed, raw]\nhall answer Q-1 \"…\""
    );
    assert_eq!(notified(&sb).len(), 1);
    // `hall notify test` on the same bus.
    let test = sb
        .hall_env(
            &sb.repo,
            &["notify", "test"],
            &[("DBUS_SESSION_BUS_ADDRESS", address.as_str())],
        )
        .ok();
    assert_eq!(test["channels"][0]["said"], "sent to the desktop");
    let (_, summary, _) = rx.recv_timeout(Duration::from_secs(10)).unwrap();
    assert!(summary.ends_with(": a test"), "{summary}");
    // No bus at all: the failure is said, never a crash.
    let err = sb
        .hall_env(
            &sb.repo,
            &["notify", "test"],
            &[("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/bus")],
        )
        .err("COMMAND_FAILED", 1);
    assert!(
        err["error"]["message"]
            .as_str()
            .unwrap()
            .contains("desktop: "),
        "{err}"
    );
    let _ = bus.kill();
    let _ = bus.wait();
}

/// Waits for `f` to hold, up to 30 seconds.
fn wait_for(what: &str, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn daemon(sb: &Sandbox, until_idle: bool) -> std::process::Child {
    let mut cmd = sb.hall_command(&sb.repo);
    cmd.args(["daemon", "run", "--tick", "0.05"])
        .args(if until_idle {
            vec!["--until-idle"]
        } else {
            vec!["--repo", "."]
        })
        .env("TZ", "UTC")
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    cmd.spawn().unwrap()
}

#[test]
fn a_daemon_killed_between_sending_and_recording_sends_again_with_the_same_key_and_records_once() {
    let sb = Sandbox::initialized();
    // The stub holds the first request until the test lets it go.
    let seen = Arc::new(Mutex::new(Vec::<Request>::new()));
    let (arrived_tx, arrived_rx) = mpsc::channel::<()>();
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let gate = Arc::new(Mutex::new(Some((arrived_tx, release_rx))));
    let s = Arc::clone(&seen);
    let server = Server::start(
        "ntfy",
        Arc::new(move |req: Request| {
            lock(&s).push(req);
            let first = lock(&gate).take();
            if let Some((arrived, release)) = first {
                let _ = arrived.send(());
                let _ = release.recv_timeout(Duration::from_secs(30));
            }
            Response::text(200, "ok")
        }),
    )
    .unwrap();
    write_config(
        &sb,
        &format!(
            "[notify]\nchannels = [\"ntfy\"]\n[notify.ntfy]\nserver = \"{}\"\ntopic = \"hall-k\"\n",
            server.url()
        ),
    );
    asking(&sb);

    // Killed after ntfy took the message and before the line was written.
    let mut first = daemon(&sb, false);
    arrived_rx
        .recv_timeout(Duration::from_secs(60))
        .expect("the daemon sent");
    first.kill().unwrap();
    first.wait().unwrap();
    release_tx.send(()).unwrap();
    assert!(notified(&sb).is_empty(), "killed before recording");

    // The next daemon sends it again, with the same key, and records it once.
    let mut second = daemon(&sb, false);
    wait_for("the line", || !notified(&sb).is_empty());
    std::thread::sleep(Duration::from_millis(500));
    // Killed after recording: the third daemon sends nothing.
    second.kill().unwrap();
    second.wait().unwrap();
    let mut third = daemon(&sb, false);
    std::thread::sleep(Duration::from_secs(2));
    third.kill().unwrap();
    third.wait().unwrap();

    let reqs = lock(&seen).clone();
    assert_eq!(
        reqs.len(),
        2,
        "sent twice: once before the kill, once after"
    );
    assert_eq!(reqs[0].header("x-hall-key"), reqs[1].header("x-hall-key"));
    assert_eq!(reqs[0].body, reqs[1].body);
    let lines = notified(&sb);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(lines[0]["actor"], "notify");
}

#[test]
fn a_stopped_daemon_is_told_once_by_the_next_session_to_start() {
    let (sb, phone, _) = with_phone(
        "[notify]\nchannels = [\"ntfy\"]\n[notify.ntfy]\nserver = \"{url}\"\ntopic = \"hall-d\"\n",
    );
    // A daemon that should run (no stop flag) and died ten minutes ago.
    let mut gone = Command::new("true").spawn().unwrap();
    let pid = gone.id();
    gone.wait().unwrap();
    let wall = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let dir = sb.root.join("data").join("daemon");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("state.json"),
        json!({"pid": pid, "started": "2026-12-05T01:00:00Z", "heartbeat": "2026-12-05T02:00:00Z",
            "heartbeat_unix": wall - 600, "passes": 9, "stop": false, "paused": []})
        .to_string(),
    )
    .unwrap();
    let start = json!({"session_id": "s-1", "hook_event_name": "SessionStart", "source": "startup",
        "cwd": sb.repo, "transcript_path": "/dev/null"});
    let (out, code) = sb.hook(&sb.repo, "session-start", &start, &[]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("wait for the person"), "{out}");
    wait_for("the message", || !phone.requests().is_empty());
    wait_for("its line", || !notified(&sb).is_empty());
    let body = &phone.bodies()[0];
    assert!(
        body["title"]
            .as_str()
            .unwrap()
            .ends_with(": the loop stopped"),
        "{body}"
    );
    assert_eq!(
        body["message"],
        "The daemon has no heartbeat; nothing moves items.\n→ hall daemon start"
    );
    assert_eq!(notified(&sb)[0]["key"], format!("daemon:{pid}"));
    // The next session start says nothing more.
    sb.hook(&sb.repo, "session-start", &start, &[]);
    std::thread::sleep(Duration::from_secs(1));
    assert_eq!(phone.requests().len(), 1);
}
