//! The web app at scale: a repository with 10,000 items.
//!
//! 1. The board's JSON (`GET /api/board`, what the page draws the board from), taking
//!    turns with `GET /api/session` (the smallest authenticated request, the baseline)
//!    on the same server (goal: ≤ 50 ms).
//! 2. A cold page load in Chromium: a new browser context (nothing cached) opens `/` with
//!    the session cookie, until the board is drawn (goal: ≤ 300 ms), against the same
//!    load of an empty repository's board. Needs `npm ci --prefix tests/web` and
//!    Debian's `chromium`; skipped with a line saying so otherwise.
//!
//! Run: `cargo bench -p hallmark --bench web` (figures go to docs/performance.md).

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Instant;

use common::{generate_committed, ms};

const ITEMS: u32 = 10_000;
const EVENTS_PER_ITEM: u32 = 20;
const RUNS: usize = 60;

/// A running `hall web` and its session cookie.
struct Web {
    child: Child,
    port: u16,
    cookie: String,
}

impl Drop for Web {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn get(port: u16, path: &str, cookie: &str) -> (u16, Vec<(String, String)>, Vec<u8>) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nCookie: {cookie}\r\nConnection: close\r\n\r\n"
    )
    .expect("write");
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).expect("read");
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a head");
    let head = String::from_utf8_lossy(&raw[..split]).to_string();
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let headers = head
        .lines()
        .skip(1)
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_lowercase(), v.trim().to_string()))
        .collect();
    (status, headers, raw[split + 4..].to_vec())
}

fn start(hall: &str, repo: &Path, config: &Path) -> Web {
    let mut child = Command::new(hall)
        .args(["web", "--no-open"])
        .current_dir(repo)
        .env("HALL_CONFIG_DIR", config)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("hall web");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let url = loop {
        let line = lines.next().expect("a launch line").expect("read");
        if let Some(url) = line.strip_prefix("launch: ") {
            break url.to_string();
        }
    };
    let rest = url.strip_prefix("http://127.0.0.1:").expect("loopback");
    let (port, path) = rest.split_once('/').expect("path");
    let port: u16 = port.parse().expect("port");
    let (status, headers, _) = get(port, &format!("/{path}"), "");
    assert_eq!(status, 303);
    let cookie = headers
        .iter()
        .find(|(k, _)| k == "set-cookie")
        .and_then(|(_, v)| v.split(';').next())
        .expect("cookie")
        .to_string();
    Web {
        child,
        port,
        cookie,
    }
}

fn percentile(mut v: Vec<f64>, p: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    v[((v.len() - 1) as f64 * p).round() as usize]
}

/// The node script's runs: (first contentful paint, board drawn), in ms.
fn page_loads(web: &Web, runs: usize) -> Option<(Vec<f64>, Vec<f64>)> {
    // host/hall → the repository.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)?
        .join("tests")
        .join("web");
    if !dir.join("node_modules").join("playwright-core").is_dir() {
        println!("page load: skipped (run `npm ci --prefix tests/web`)");
        return None;
    }
    let out = Command::new("node")
        .arg("bench.mjs")
        .current_dir(&dir)
        .env("HALL_WEB_ORIGIN", format!("http://127.0.0.1:{}", web.port))
        .env("HALL_WEB_COOKIE", &web.cookie)
        .env("HALL_WEB_RUNS", runs.to_string())
        .output()
        .ok()?;
    if !out.status.success() {
        println!(
            "page load: the browser failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        return None;
    }
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).ok()?;
    let nums = |k: &str| -> Vec<f64> {
        v[k].as_array()
            .map(|a| a.iter().filter_map(serde_json::Value::as_f64).collect())
            .unwrap_or_default()
    };
    Some((nums("paint"), nums("board")))
}

fn main() {
    let hall = env!("CARGO_BIN_EXE_hall");
    let (_dir, root, config) = common::scratch();
    let (_, repo) = generate_committed(&root, ITEMS, EVENTS_PER_ITEM);
    common::reindex(hall, &repo, &config);
    let empty_root = root.join("empty");
    std::fs::create_dir_all(&empty_root).expect("mkdir");
    let (_, empty) = generate_committed(&empty_root, 0, 0);

    let web = start(hall, &repo, &config);
    // 1. The board's JSON against the smallest authenticated request, in turns.
    let (mut board, mut session) = (Vec::new(), Vec::new());
    let mut size = 0;
    for i in 0..RUNS + 5 {
        let t = Instant::now();
        let (status, _, body) = get(web.port, "/api/board", &web.cookie);
        let b = t.elapsed();
        assert_eq!(status, 200);
        size = body.len();
        let t = Instant::now();
        let (status, _, _) = get(web.port, "/api/session", &web.cookie);
        let s = t.elapsed();
        assert_eq!(status, 200);
        if i >= 5 {
            board.push(ms(b));
            session.push(ms(s));
        }
    }
    let parsed: serde_json::Value =
        serde_json::from_slice(&get(web.port, "/api/board", &web.cookie).2).expect("json");
    let rows = parsed["items"].as_array().map_or(0, Vec::len);
    let (b50, b99, s50) = (
        percentile(board.clone(), 0.5),
        percentile(board, 0.99),
        percentile(session, 0.5),
    );
    println!(
        "GET /api/board, {ITEMS} items ({rows} rows, {} kB): median {b50:.1} ms, p99 {b99:.1} ms; GET /api/session median {s50:.2} ms; ratio {:.1}x (goal: <= 50 ms)",
        size / 1024,
        b50 / s50
    );

    // 2. Cold page loads, this repository and an empty one, taking turns.
    let empty_web = start(hall, &empty, &config);
    let (mut big, mut small) = (Vec::new(), Vec::new());
    for _ in 0..2 {
        let Some(b) = page_loads(&web, 5) else { break };
        let Some(s) = page_loads(&empty_web, 5) else {
            break;
        };
        big.push(b);
        small.push(s);
    }
    if !big.is_empty() {
        let flat = |v: &[(Vec<f64>, Vec<f64>)], board: bool| -> Vec<f64> {
            v.iter()
                .flat_map(|(p, b)| if board { b.clone() } else { p.clone() })
                .collect()
        };
        let (bb, bp, sb) = (flat(&big, true), flat(&big, false), flat(&small, true));
        println!(
            "cold page load in Chromium, {ITEMS} items: board drawn median {:.0} ms (p90 {:.0} ms), first paint {:.0} ms; empty repository's board {:.0} ms; ratio {:.1}x (goal: <= 300 ms)",
            percentile(bb.clone(), 0.5),
            percentile(bb.clone(), 0.9),
            percentile(bp, 0.5),
            percentile(sb.clone(), 0.5),
            percentile(bb, 0.5) / percentile(sb, 0.5)
        );
    }
    let _ = std::io::stdout().flush();
    drop(empty_web);
    drop(web);
}
