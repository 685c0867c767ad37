//! `hall web` end to end, over real sockets against the real binary: who may talk to
//! it (and that every refusal is logged and writes nothing), that an action is a hall
//! command recorded as `you` via the web, and the journal's event stream under load.

#![allow(clippy::unwrap_used)] // a panic is how a test fails

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Barrier};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use hallmark_core::item::{Event, EventKind, ItemId};
use hallmark_tests::sandbox::Sandbox;
use hallmark_tests::web::{Server, SseClient, request};
use serde_json::{Value, json};

/// Every file under the journal with its bytes: what "nothing is written" compares.
fn journal_files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap().flatten() {
            let p = entry.path();
            let name = p.strip_prefix(dir).unwrap().to_string_lossy().to_string();
            // The index is a cache a read may refresh; the journal is what must not move.
            if name.starts_with("index.sqlite") || name.starts_with("state") {
                continue;
            }
            if p.is_dir() {
                stack.push(p);
            } else {
                out.insert(name, std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

fn new_item(sb: &Sandbox, title: &str) -> String {
    let r = sb.hall(&sb.repo, &["new", title, "--no-split"]).ok();
    r["item"].as_str().unwrap().to_string()
}

#[test]
fn refusals_are_logged_and_write_nothing() {
    let sb = Sandbox::initialized();
    let id = new_item(&sb, "parser");
    let web = Server::start(&sb, &sb.repo, &[]);
    let (cookie, csrf) = web.login();
    let origin = web.origin();
    let run = r#"{"argv":["answer","Q-1","yes"]}"#;
    let before = journal_files(&sb.repo.join(".git").join("hallmark"));

    // A second use of the launch URL.
    let again = web.get(&web.launch, &[]);
    assert_eq!(again.status, 403, "{}", again.body);
    assert!(again.body.contains("used already"), "{}", again.body);
    // No session, a session this server never opened, a bearer token it doesn't know.
    assert_eq!(web.get("/api/board", &[]).status, 401);
    let page = web.get("/", &[]);
    assert_eq!(page.status, 401);
    assert!(page.body.contains("launch URL"), "{}", page.body);
    assert_eq!(
        web.get("/api/board", &[("Cookie", "hall_session=0123")])
            .status,
        401
    );
    assert_eq!(
        web.get("/api/board", &[("Authorization", "Bearer hallweb_nope")])
            .status,
        401
    );
    // DNS rebinding: the right cookie, the wrong Host.
    let rebound = request(
        web.port,
        "GET",
        "/api/board",
        &[("Host", "attacker.example"), ("Cookie", &cookie)],
        None,
    );
    assert_eq!(rebound.status, 403, "{}", rebound.body);
    // A change from another origin, another site, or without the CSRF token.
    let cross = web.post(
        "/api/run",
        &[
            ("Cookie", &cookie),
            ("Origin", "http://evil.example"),
            ("X-Hall-CSRF", &csrf),
        ],
        run,
    );
    assert_eq!(cross.status, 403, "{}", cross.body);
    let site = web.post(
        "/api/run",
        &[
            ("Cookie", &cookie),
            ("Origin", &origin),
            ("Sec-Fetch-Site", "cross-site"),
            ("X-Hall-CSRF", &csrf),
        ],
        run,
    );
    assert_eq!(site.status, 403);
    let no_csrf = web.post("/api/run", &[("Cookie", &cookie), ("Origin", &origin)], run);
    assert_eq!(no_csrf.status, 403);
    assert!(
        no_csrf.body.contains("CSRF token is missing"),
        "{}",
        no_csrf.body
    );
    let wrong_csrf = web.post(
        "/api/run",
        &[
            ("Cookie", &cookie),
            ("Origin", &origin),
            ("X-Hall-CSRF", "00"),
        ],
        run,
    );
    assert_eq!(wrong_csrf.status, 403);
    let no_origin = web.post(
        "/api/run",
        &[("Cookie", &cookie), ("X-Hall-CSRF", &csrf)],
        run,
    );
    assert_eq!(no_origin.status, 403);
    // Commands a page may not run, and an action sent as a read.
    let ok = [
        ("Cookie", cookie.as_str()),
        ("Origin", origin.as_str()),
        ("X-Hall-CSRF", csrf.as_str()),
    ];
    for argv in [
        json!(["hook", "pre-tool-use"]),
        json!(["next", "--role", "fixer"]),
        json!(["daemon", "run"]),
        json!(["fixed", "F-1"]),
        json!(["run", "--", "touch", "pwned"]),
        json!(["trace", id, "--follow"]),
        json!(["web", "token", "create", "x"]),
    ] {
        let r = web.post("/api/run", &ok, &json!({ "argv": argv }).to_string());
        assert_eq!(r.status, 403, "{argv}: {}", r.body);
        assert_eq!(r.json()["error"]["code"], "GATE_DENIED");
    }
    let read_as_act = web.get(
        &format!(
            "/api/view?argv={}",
            "%5B%22drop%22%2C%22H-0001%22%2C%22--reason%22%2C%22x%22%5D"
        ),
        &[("Cookie", &cookie)],
    );
    assert_eq!(read_as_act.status, 403, "{}", read_as_act.body);

    assert_eq!(
        journal_files(&sb.repo.join(".git").join("hallmark")),
        before,
        "a refused request changed the journal"
    );
    assert!(!sb.repo.join("pwned").exists());
    let logged = web.refusals();
    assert_eq!(
        logged.len(),
        19,
        "one line per refusal:\n{}",
        logged.join("\n")
    );
    assert!(logged.iter().any(|l| l.contains("attacker.example")));

    // The listener is on 127.0.0.1 alone: the kernel's own table says so.
    let tcp = std::fs::read_to_string("/proc/net/tcp").unwrap();
    let port = format!("{:04X}", web.port);
    let listening: Vec<&str> = tcp
        .lines()
        .filter(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            f.len() > 3 && f[1].ends_with(&format!(":{port}")) && f[3] == "0A"
        })
        .collect();
    assert_eq!(listening.len(), 1, "{tcp}");
    assert!(
        listening[0]
            .split_whitespace()
            .nth(1)
            .unwrap()
            .starts_with("0100007F:"),
        "{}",
        listening[0]
    );
    assert!(
        !std::fs::read_to_string("/proc/net/tcp6")
            .unwrap_or_default()
            .contains(&format!(":{port} "))
    );

    // Every response carries the policy, and none lets another origin read it.
    let board = web.get(
        "/api/board",
        &[("Cookie", &cookie), ("Origin", "http://evil.example")],
    );
    assert_eq!(board.status, 200);
    assert!(
        board
            .header("content-security-policy")
            .unwrap()
            .contains("default-src 'none'")
    );
    assert_eq!(board.header("access-control-allow-origin"), None);
    assert_eq!(board.header("x-frame-options"), Some("DENY"));
}

#[test]
fn the_launch_cookie_is_http_only_and_strict() {
    let sb = Sandbox::initialized();
    let web = Server::start(&sb, &sb.repo, &[]);
    let r = web.get(&web.launch, &[]);
    assert_eq!(r.status, 303);
    let cookie = r.header("set-cookie").unwrap();
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"),
        "{cookie}"
    );
    assert_eq!(r.header("location"), Some("/"));
    // A wrong launch token is refused and leaves the right one working.
    let wrong = web.get("/launch?token=00", &[]);
    assert_eq!(wrong.status, 403);
}

#[test]
fn an_action_is_the_cli_command_recorded_as_you_via_web() {
    let sb = Sandbox::initialized();
    let id = new_item(&sb, "parser");
    let wt = sb.worktree(&id);
    sb.hall(&wt, &["ask", "which parser?", "--options", "pest,nom"])
        .ok();
    let web = Server::start(&sb, &sb.repo, &[]);
    let page = web.page_headers();
    let cookie = page.cookie.clone();
    let ok = page.all();

    let board = web.get("/api/board", &[("Cookie", &cookie)]).json();
    assert_eq!(board["items"][0]["id"], id);
    assert_eq!(board["inbox"][0]["kind"], "question");
    assert_eq!(board["questions"]["Q-1"], json!(["pest", "nom"]));

    let r = web
        .post("/api/run", &ok, r#"{"argv":["answer","Q-1","nom"]}"#)
        .json();
    assert_eq!(r["ok"], true, "{r}");
    assert_eq!(r["json"]["answer"], "nom");
    let line: Value = serde_json::from_str(
        std::fs::read_to_string(
            sb.repo
                .join(".git")
                .join("hallmark")
                .join("items")
                .join(&id)
                .join("events.jsonl"),
        )
        .unwrap()
        .lines()
        .last()
        .unwrap(),
    )
    .unwrap();
    assert_eq!(line["event"], "answered");
    assert_eq!(line["actor"], "you");
    assert_eq!(line["via"], "web");

    // The same command's error, with its next steps, as the CLI gives it.
    let twice = web
        .post("/api/run", &ok, r#"{"argv":["answer","Q-1","pest"]}"#)
        .json();
    assert_eq!(twice["ok"], false);
    let cli = sb.hall(&sb.repo, &["answer", "Q-1", "pest"]).json();
    assert_eq!(
        twice["error"]["code"], cli["error"]["code"],
        "{twice} vs {cli}"
    );

    // A read: the command's JSON and its text.
    let status = web
        .get(
            &format!("/api/view?argv=%5B%22status%22%2C%22{id}%22%5D"),
            &[("Cookie", &cookie)],
        )
        .json();
    assert_eq!(status["json"]["item"]["id"], id);
    assert!(status["text"].as_str().unwrap().contains(&id));

    // A script's token: no cookie, no CSRF token, same command path; revoked, refused.
    let made = sb.hall(&sb.repo, &["web", "token", "create", "ci"]).ok();
    let token = made["token"].as_str().unwrap().to_string();
    let bearer = format!("Bearer {token}");
    let by_token = web.post(
        "/api/run",
        &[("Authorization", &bearer)],
        r#"{"argv":["reindex"]}"#,
    );
    assert_eq!(by_token.status, 200, "{}", by_token.body);
    assert_eq!(by_token.json()["ok"], true, "{}", by_token.body);
    sb.hall(&sb.repo, &["web", "token", "revoke", "ci"]).ok();
    assert_eq!(
        web.get("/api/board", &[("Authorization", &bearer)]).status,
        401
    );
    // The token's hash is all that was kept.
    let stored = std::fs::read_to_string(sb.config_dir().join("web-tokens.json")).unwrap();
    assert!(!stored.contains(&token));
}

/// The text of a note whose text is the nanoseconds it was written at and its number.
fn note(id: ItemId, n: usize) -> Event {
    let sent = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    Event {
        v: 2,
        t: "2026-12-05T00:00:00Z".into(),
        actor: "agent".into(),
        kind: EventKind::Prompt {
            text: format!("{n} {sent}"),
            session: None,
        },
        item: Some(id),
        via: None,
    }
}

/// The notes a batch of the stream carries: (number, sent at).
fn notes(data: &str) -> Vec<(usize, u128)> {
    let v: Value = serde_json::from_str(data).unwrap();
    v["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["text"].as_str())
        .filter_map(|t| {
            let (n, at) = t.split_once(' ')?;
            Some((n.parse().ok()?, at.parse().ok()?))
        })
        .collect()
}

fn rss_kb(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap()
}

#[test]
fn fifty_clients_get_every_event_in_order_and_a_reconnect_misses_nothing() {
    const CLIENTS: usize = 50;
    const EVENTS: usize = 1000;
    let sb = Sandbox::initialized();
    let id: ItemId = new_item(&sb, "load").parse().unwrap();
    let web = Server::start(&sb, &sb.repo, &[]);
    let (cookie, _) = web.login();
    let journal = sb.journal();

    // Two rounds of EVENTS: the first warms the server up, the second shows its memory
    // stays where the first left it.
    let mut rss = vec![rss_kb(web.pid)];
    let mut p99s = Vec::new();
    for round in 0..2 {
        let ready = Arc::new(Barrier::new(CLIENTS + 1));
        let clients: Vec<_> = (0..CLIENTS)
            .map(|c| {
                let mut client = SseClient::connect(web.port, &cookie, None);
                let ready = ready.clone();
                let (port, cookie) = (web.port, cookie.clone());
                std::thread::spawn(move || {
                    let first = client.next(Duration::from_secs(10)).unwrap();
                    assert_eq!(first.event, "ready");
                    ready.wait();
                    let mut got: Vec<(usize, u128)> = Vec::new();
                    let mut latencies = Vec::new();
                    // Client 0 of round 0 drops its connection a third of the way in, and
                    // comes back with the last id it saw, as a browser does.
                    let mut dropped = c != 0 || round != 0;
                    while got.len() < EVENTS {
                        let Some(ev) = client.next(Duration::from_secs(20)) else {
                            panic!("client {c} stalled after {} events", got.len());
                        };
                        let now = SystemTime::now()
                            .duration_since(UNIX_EPOCH)
                            .unwrap()
                            .as_nanos();
                        // `ready` opens each connection; a `reset` would mean lost events,
                        // which the order check below catches.
                        if !ev.event.is_empty() {
                            continue;
                        }
                        for (n, sent) in notes(&ev.data) {
                            got.push((n, sent));
                            latencies.push(now.saturating_sub(sent));
                        }
                        if !dropped && got.len() >= EVENTS / 3 {
                            dropped = true;
                            let last = client.last_id;
                            drop(client);
                            std::thread::sleep(Duration::from_millis(300));
                            client = SseClient::connect(port, &cookie, last);
                        }
                    }
                    let order: Vec<usize> = got.iter().map(|(n, _)| *n).collect();
                    (order, latencies)
                })
            })
            .collect();
        ready.wait();
        for n in 0..EVENTS {
            journal
                .append_item(id, &[note(id, round * EVENTS + n)])
                .unwrap();
            std::thread::sleep(Duration::from_millis(2));
        }
        let mut all_latencies = Vec::new();
        for (c, h) in clients.into_iter().enumerate() {
            let (order, latencies) = h.join().unwrap();
            let want: Vec<usize> = (round * EVENTS..(round + 1) * EVENTS).collect();
            assert_eq!(
                order, want,
                "client {c} in round {round}: not every event, in order"
            );
            all_latencies.extend(latencies);
        }
        all_latencies.sort_unstable();
        let p99 = all_latencies[all_latencies.len() * 99 / 100] as f64 / 1e6;
        let p50 = all_latencies[all_latencies.len() / 2] as f64 / 1e6;
        eprintln!(
            "round {round}: {CLIENTS} clients x {EVENTS} events, delivery p50 {p50:.1} ms, p99 {p99:.1} ms"
        );
        p99s.push(p99);
        rss.push(rss_kb(web.pid));
    }
    eprintln!(
        "server RSS (kB): start {}, after round 1 {}, after round 2 {}",
        rss[0], rss[1], rss[2]
    );
    assert!(
        p99s.iter().all(|p| *p <= 250.0),
        "p99 delivery over 250 ms: {p99s:?}"
    );
    assert!(
        rss[2] <= rss[1] + 8 * 1024,
        "the server grew by {} kB in the second round",
        rss[2] - rss[1]
    );
}

#[test]
fn a_newer_binary_restarts_the_server_on_its_port_keeping_the_session() {
    let sb = Sandbox::initialized();
    // The server runs from a copy of hall the test replaces, as an update would.
    let hall = sb.root.join("hall-copy");
    std::fs::copy(hallmark_tests::sandbox::hall_bin(), &hall).unwrap();
    let web = Server::start_with(&sb, &sb.repo, &hall, &[]);
    let page = web.page_headers();
    let cookie = page.cookie.clone();
    let ok = page.all();
    let first = web.get("/api/session", &[("Cookie", &cookie)]).json();
    assert_eq!(first["newer_binary"], false);
    let not_yet = web.post("/api/restart", &ok, "{}").json();
    assert_eq!(not_yet["ok"], false, "{not_yet}");

    // A new binary lands on disk.
    let next = sb.root.join("hall-next");
    std::fs::copy(hallmark_tests::sandbox::hall_bin(), &next).unwrap();
    let later = SystemTime::now() + Duration::from_secs(60);
    std::fs::File::options()
        .write(true)
        .open(&next)
        .unwrap()
        .set_modified(later)
        .unwrap();
    std::fs::rename(&next, &hall).unwrap();
    let seen = web.get("/api/session", &[("Cookie", &cookie)]).json();
    assert_eq!(seen["newer_binary"], true, "{seen}");

    // A tab follows the journal while the restart is asked: its stream must end, or the
    // old server would wait for it forever.
    let mut follower = SseClient::connect(web.port, &cookie, None);
    assert_eq!(
        follower.next(Duration::from_secs(10)).unwrap().event,
        "ready"
    );
    // The restart keeps the port and the session: the same cookie works on the new
    // process, which knows of no newer binary.
    let r = web.post("/api/restart", &ok, "{}").json();
    assert_eq!(r["ok"], true, "{r}");
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let again = loop {
        assert!(
            std::time::Instant::now() < deadline,
            "the new server never answered"
        );
        std::thread::sleep(Duration::from_millis(100));
        if std::net::TcpStream::connect(("127.0.0.1", web.port)).is_err() {
            continue;
        }
        let s = web.get("/api/session", &[("Cookie", &cookie)]);
        if s.status == 200 && s.json()["pid"] != first["pid"] {
            break s.json();
        }
    };
    assert_eq!(again["newer_binary"], false);
    assert_eq!(again["csrf"], first["csrf"]);
    // An action works on the new process with the old session's token.
    let act = web.post("/api/run", &ok, r#"{"argv":["reindex"]}"#);
    assert_eq!(act.status, 200, "{}", act.body);
    // The sessions' file was read once and is gone.
    let leftovers: Vec<_> = std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy() == format!("hall-web-{}", first["pid"]))
        .collect();
    assert!(leftovers.is_empty());
    assert!(
        follower.next(Duration::from_secs(5)).is_none(),
        "the old server ended the stream"
    );
    // The new server was started by the old one: stopped here, as Ctrl-C would, with a
    // tab following it.
    let _tab = SseClient::connect(web.port, &cookie, None);
    let pid = again["pid"].as_u64().unwrap().to_string();
    std::process::Command::new("kill")
        .args(["-INT", &pid])
        .status()
        .unwrap();
    let gone = std::time::Instant::now() + Duration::from_secs(10);
    while Path::new(&format!("/proc/{pid}")).exists() {
        assert!(
            std::time::Instant::now() < gone,
            "the server did not stop on SIGINT"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn every_web_action_is_a_hall_command_and_an_agent_cant_open_the_app() {
    let sb = Sandbox::initialized();
    let web = Server::start(&sb, &sb.repo, &[]);
    let (cookie, _) = web.login();
    let table = web.get("/api/actions", &[("Cookie", &cookie)]).json();
    let help = sb.hall(&sb.repo, &["help", "--json"]).ok();
    let verbs: Vec<&str> = help["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    let rows = table["commands"].as_array().unwrap();
    // Each row is a command of the CLI: its verb is one `hall help --json` lists, and
    // `hall help` knows the whole path.
    for row in rows {
        let path = row["command"].as_str().unwrap();
        let verb = path.split(' ').next().unwrap();
        assert!(verbs.contains(&verb), "`{path}` is no hall command");
        let mut args = vec!["help"];
        args.extend(path.split(' '));
        sb.hall(&sb.repo, &args).ok();
    }
    // Each verb of the CLI has its row: a person can tell what a page may do with it.
    for verb in &verbs {
        assert!(
            rows.iter().any(|r| {
                let p = r["command"].as_str().unwrap();
                p == *verb || p.starts_with(&format!("{verb} "))
            }),
            "`hall {verb}` has no row in the web table"
        );
    }
    let refused: Vec<&str> = rows
        .iter()
        .filter(|r| r["kind"] == "refused")
        .map(|r| r["command"].as_str().unwrap())
        .collect();
    for must in ["hook", "next", "daemon run", "fixed", "propose-ready"] {
        assert!(
            refused.contains(&must),
            "{must} must be refused: {refused:?}"
        );
    }

    // An agent may not open the app (it acts as you) nor change the settings.
    let id = new_item(&sb, "agent");
    let wt = sb.worktree(&id);
    for command in [
        "hall web --no-open",
        "hall config set policy.mode=off",
        "hall web token create x",
    ] {
        let (out, _) = sb.bash_hook(&wt, "agent", command);
        assert!(out.contains("\"deny\""), "{command}: {out}");
    }
    let (out, _) = sb.bash_hook(&wt, "agent", "hall config show");
    assert!(
        !out.contains("\"deny\""),
        "reading the settings is fine: {out}"
    );
    // And run inside Claude Code, the commands themselves refuse.
    let inside = sb.hall_env(&sb.repo, &["web", "--no-open"], &[("CLAUDECODE", "1")]);
    inside.err("GATE_DENIED", 5);
    let inside = sb.hall_env(
        &sb.repo,
        &["config", "set", "stuck_after=1h"],
        &[("CLAUDECODE", "1")],
    );
    inside.err("GATE_DENIED", 5);
}
