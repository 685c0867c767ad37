//! A client for `hall web` in tests: starts the real server in a sandbox, and speaks
//! HTTP/1.1 over a plain socket, so a test controls every header (a wrong `Host`, a
//! foreign `Origin`), and reads server-sent events as they arrive.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::sandbox::Sandbox;

/// A running `hall web`.
pub struct Server {
    pub pid: u32,
    pub port: u16,
    /// The launch URL's path and query (`/launch?token=…`).
    pub launch: String,
    pub stderr: PathBuf,
}

impl Server {
    /// Starts `hall web --no-open` in `dir` (extra arguments after), and waits for its
    /// launch URL.
    pub fn start(sb: &Sandbox, dir: &Path, extra: &[&str]) -> Server {
        Self::start_with(sb, dir, crate::sandbox::hall_bin(), extra)
    }

    /// [`Server::start`] with another `hall` binary (a copy a test replaces).
    pub fn start_with(sb: &Sandbox, dir: &Path, hall: &Path, extra: &[&str]) -> Server {
        let n = std::fs::read_dir(&sb.root).map(|d| d.count()).unwrap_or(0);
        let out = sb.root.join(format!("web-{n}.out"));
        let stderr = sb.root.join(format!("web-{n}.err"));
        let mut cmd = std::process::Command::new(hall);
        sb.apply_env(&mut cmd);
        cmd.current_dir(dir)
            .args(["web", "--no-open"])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&out).expect("stdout file"))
            .stderr(std::fs::File::create(&stderr).expect("stderr file"));
        let pid = sb.spawn(&mut cmd);
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let text = std::fs::read_to_string(&out).unwrap_or_default();
            if let Some(url) = text.lines().find_map(|l| l.strip_prefix("launch: ")) {
                let rest = url
                    .strip_prefix("http://127.0.0.1:")
                    .expect("the launch URL is on 127.0.0.1");
                let (port, path) = rest.split_once('/').expect("a path");
                return Server {
                    pid,
                    port: port.parse().expect("a port"),
                    launch: format!("/{path}"),
                    stderr,
                };
            }
            assert!(
                Instant::now() < deadline,
                "hall web printed no launch URL: {text}\n{}",
                std::fs::read_to_string(&stderr).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The Host header a browser sends for this server.
    pub fn host(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// This server's origin.
    pub fn origin(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Opens the launch URL once: the session cookie (`hall_session=…`) and the CSRF token.
    pub fn login(&self) -> (String, String) {
        let r = self.get(&self.launch, &[]);
        assert_eq!(r.status, 303, "{}", r.body);
        let set = r.header("set-cookie").expect("a cookie");
        let cookie = set.split(';').next().expect("name=value").to_string();
        let session = self.get("/api/session", &[("Cookie", &cookie)]);
        let csrf = session.json()["csrf"]
            .as_str()
            .expect("a csrf token")
            .to_string();
        (cookie, csrf)
    }

    /// [`Server::login`], as the headers a page's change sends: the cookie, this origin
    /// and the CSRF token.
    pub fn page_headers(&self) -> PageHeaders {
        let (cookie, csrf) = self.login();
        PageHeaders {
            cookie,
            origin: self.origin(),
            csrf,
        }
    }

    /// A GET with this server's Host and the extra headers.
    pub fn get(&self, path: &str, headers: &[(&str, &str)]) -> Response {
        let host = self.host();
        let mut all = vec![("Host", host.as_str())];
        all.extend_from_slice(headers);
        request(self.port, "GET", path, &all, None)
    }

    /// A POST of JSON with this server's Host and the extra headers.
    pub fn post(&self, path: &str, headers: &[(&str, &str)], body: &str) -> Response {
        let host = self.host();
        let mut all = vec![
            ("Host", host.as_str()),
            ("Content-Type", "application/json"),
        ];
        all.extend_from_slice(headers);
        request(self.port, "POST", path, &all, Some(body))
    }

    /// The server's log of refusals so far.
    pub fn refusals(&self) -> Vec<String> {
        std::fs::read_to_string(&self.stderr)
            .unwrap_or_default()
            .lines()
            .filter(|l| l.starts_with("hall web: refused"))
            .map(str::to_string)
            .collect()
    }
}

/// What a logged-in page sends with a change.
pub struct PageHeaders {
    pub cookie: String,
    pub origin: String,
    pub csrf: String,
}

impl PageHeaders {
    /// The three headers, to pass to [`Server::post`].
    pub fn all(&self) -> [(&str, &str); 3] {
        [
            ("Cookie", self.cookie.as_str()),
            ("Origin", self.origin.as_str()),
            ("X-Hall-CSRF", self.csrf.as_str()),
        ]
    }
}

/// An HTTP response.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }
}

/// One request on its own connection, with exactly these headers.
pub fn request(
    port: u16,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&str>,
) -> Response {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    let mut head = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\n");
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    if let Some(b) = body {
        head.push_str(&format!("Content-Length: {}\r\n", b.len()));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).expect("write");
    if let Some(b) = body {
        stream.write_all(b.as_bytes()).expect("write body");
    }
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).expect("read");
    parse(&raw)
}

fn parse(raw: &[u8]) -> Response {
    let text = String::from_utf8_lossy(raw);
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_lowercase(), v.trim().to_string()))
        .collect();
    let chunked = headers
        .iter()
        .any(|(k, v)| k == "transfer-encoding" && v.contains("chunked"));
    let body = if chunked {
        unchunk(body)
    } else {
        body.to_string()
    };
    Response {
        status,
        headers,
        body,
    }
}

fn unchunk(mut s: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = s.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if n == 0 || rest.len() < n {
            break;
        }
        out.push_str(&rest[..n]);
        s = rest[n..].trim_start_matches("\r\n");
    }
    out
}

/// One server-sent event.
#[derive(Clone, Debug, Default)]
pub struct Sse {
    pub id: Option<u64>,
    pub event: String,
    pub data: String,
}

/// A client following `/api/events`.
pub struct SseClient {
    reader: BufReader<TcpStream>,
    /// The id of the last event read, as a browser keeps it for `Last-Event-ID`.
    pub last_id: Option<u64>,
}

impl SseClient {
    /// Connects to the server on `port` with the session `cookie`, from `last_id` when
    /// given.
    pub fn connect(port: u16, cookie: &str, last_id: Option<u64>) -> SseClient {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        let mut head = format!(
            "GET /api/events HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nCookie: {cookie}\r\nAccept: text/event-stream\r\n"
        );
        if let Some(id) = last_id {
            head.push_str(&format!("Last-Event-ID: {id}\r\n"));
        }
        head.push_str("\r\n");
        stream.write_all(head.as_bytes()).expect("write");
        let mut reader = BufReader::new(stream);
        // The status line and headers.
        let mut line = String::new();
        reader.read_line(&mut line).expect("status");
        assert!(line.contains(" 200 "), "the stream was refused: {line}");
        loop {
            line.clear();
            reader.read_line(&mut line).expect("header");
            if line == "\r\n" || line.is_empty() {
                break;
            }
        }
        SseClient { reader, last_id }
    }

    /// The next event (comments and keep-alives skipped), or `None` on timeout or end.
    pub fn next(&mut self, timeout: Duration) -> Option<Sse> {
        self.reader
            .get_ref()
            .set_read_timeout(Some(timeout))
            .expect("timeout");
        let mut ev = Sse::default();
        let mut any = false;
        let mut line = String::new();
        loop {
            line.clear();
            match self.read_chunked_line(&mut line) {
                Ok(0) | Err(_) => return None,
                Ok(_) => {}
            }
            let l = line.trim_end_matches(['\r', '\n']);
            if l.is_empty() {
                if any {
                    if ev.id.is_some() {
                        self.last_id = ev.id;
                    }
                    return Some(ev);
                }
                continue;
            }
            if l.starts_with(':') {
                continue;
            }
            let (field, value) = l.split_once(':').unwrap_or((l, ""));
            let value = value.strip_prefix(' ').unwrap_or(value);
            any = true;
            match field {
                "id" => ev.id = value.parse().ok(),
                "event" => ev.event = value.to_string(),
                "data" => {
                    if !ev.data.is_empty() {
                        ev.data.push('\n');
                    }
                    ev.data.push_str(value);
                }
                _ => {}
            }
        }
    }

    /// A line of the event stream inside the chunked body: chunk-size lines are
    /// skipped (an event line never looks like bare hex followed by CRLF... except
    /// data, which always has a field name before it).
    fn read_chunked_line(&mut self, line: &mut String) -> std::io::Result<usize> {
        loop {
            line.clear();
            let n = self.reader.read_line(line)?;
            if n == 0 {
                return Ok(0);
            }
            let t = line.trim_end_matches(['\r', '\n']);
            let is_size =
                !t.is_empty() && t.chars().all(|c| c.is_ascii_hexdigit()) && line.ends_with("\r\n");
            if is_size {
                continue;
            }
            return Ok(n);
        }
    }
}
