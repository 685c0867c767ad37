//! A scripted stand-in for the Anthropic Messages API, and a runner for the real `claude` CLI.
//!
//! End-to-end tests drive the pinned Claude Code CLI (installed by `npm ci --prefix tests/claude`)
//! with no network: `ANTHROPIC_BASE_URL` points at a [`StubServer`] on 127.0.0.1, which plays a
//! fixed list of [`Turn`]s, one per main-loop request, and records every request body so a test
//! can check what reached the model (hook context, tool results, denial reasons).
//!
//! Only std and serde_json, no async runtime: one thread accepts, one short-lived thread serves
//! each connection, every socket has a timeout, and dropping the server stops it.
//!
//! ```ignore
//! let stub = StubServer::start([Turn::bash("git push origin HEAD"), Turn::text("Stopped.")])?;
//! let run = ClaudeCommand::new(&stub, home.path(), repo.path(), "push it")
//!     .plugin_dir(plugin_dir)
//!     .run()?;
//! assert!(run.succeeded(), "{}", run.describe());
//! let denied = stub.turn_requests()[1].tool_result_for("toolu_stub_0001_0").cloned();
//! ```
//!
//! Where the CLI puts things moves between models and versions: hook context arrives as a
//! `role: "system"` message for current models and as a `<system-reminder>` text block for older
//! ones, and tool results get reminders appended. Assert with [`RecordedRequest::mentions`] and
//! `contains`, not with fixed indexes or equality.

use std::collections::VecDeque;
use std::fmt;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// Model name the runner passes with `--model` unless a test picks another.
///
/// A current model: CLI 2.1.332 marks `claude-sonnet-4-5` as retired.
pub const DEFAULT_MODEL: &str = "claude-sonnet-5-5";

/// Environment variable that overrides where [`claude_binary`] looks for the CLI.
pub const CLAUDE_BIN_ENV: &str = "HALLMARK_TEST_CLAUDE";

/// How long a connection may stay silent before the stub gives up on it.
const SOCKET_TIMEOUT: Duration = Duration::from_secs(15);
/// Largest request head (request line plus headers) the stub accepts.
const MAX_HEAD_BYTES: usize = 1 << 20;
/// Largest request body the stub accepts; the CLI's requests are a few hundred KiB.
const MAX_BODY_BYTES: usize = 64 << 20;
/// How often the accept loop looks at the shutdown flag.
const ACCEPT_POLL: Duration = Duration::from_millis(10);

/// Token counts the stub reports for one response.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Usage {
    /// `usage.input_tokens`.
    pub input_tokens: u64,
    /// `usage.output_tokens` (sent in `message_delta`; `message_start` carries 1).
    pub output_tokens: u64,
    /// `usage.cache_read_input_tokens`.
    pub cache_read_input_tokens: u64,
    /// `usage.cache_creation_input_tokens`.
    pub cache_creation_input_tokens: u64,
}

impl Default for Usage {
    fn default() -> Self {
        Self {
            input_tokens: 100,
            output_tokens: 20,
            cache_read_input_tokens: 0,
            cache_creation_input_tokens: 0,
        }
    }
}

/// One content block of a scripted response.
#[derive(Clone, Debug, PartialEq)]
pub enum Block {
    /// A text block.
    Text(String),
    /// A tool call; the stub assigns the `toolu_…` id.
    ToolUse {
        /// Tool name as the CLI lists it, e.g. `Bash`, `Edit`, `Write`, `Skill`.
        name: String,
        /// Tool input, e.g. `{"command": "git push origin HEAD"}`.
        input: Value,
    },
}

/// What one scripted turn answers: a message, or an HTTP error.
#[derive(Clone, Debug, PartialEq)]
enum Reply {
    Message {
        blocks: Vec<Block>,
        stop_reason: String,
        usage: Usage,
    },
    Error {
        status: u16,
        kind: String,
        message: String,
    },
}

/// One scripted model response, consumed by one main-loop request.
#[derive(Clone, Debug, PartialEq)]
pub struct Turn {
    reply: Reply,
    times: usize,
}

impl Turn {
    /// A text-only answer that ends the run (`stop_reason: end_turn`).
    pub fn text(text: impl Into<String>) -> Self {
        Self::message(vec![Block::Text(text.into())], "end_turn")
    }

    /// A call to `tool` with `input` (`stop_reason: tool_use`).
    pub fn tool_use(tool: impl Into<String>, input: Value) -> Self {
        Self::message(
            vec![Block::ToolUse {
                name: tool.into(),
                input,
            }],
            "tool_use",
        )
    }

    /// A Bash tool call running `command`.
    pub fn bash(command: impl Into<String>) -> Self {
        let command = command.into();
        Self::tool_use(
            "Bash",
            json!({ "command": command, "description": "Run a command" }),
        )
    }

    /// A Write tool call creating `file_path` (absolute) with `content`.
    pub fn write(file_path: impl AsRef<Path>, content: impl Into<String>) -> Self {
        let path = file_path.as_ref().display().to_string();
        Self::tool_use(
            "Write",
            json!({ "file_path": path, "content": content.into() }),
        )
    }

    /// An Edit tool call replacing `old` with `new` in `file_path` (absolute).
    pub fn edit(
        file_path: impl AsRef<Path>,
        old: impl Into<String>,
        new: impl Into<String>,
    ) -> Self {
        let path = file_path.as_ref().display().to_string();
        Self::tool_use(
            "Edit",
            json!({ "file_path": path, "old_string": old.into(), "new_string": new.into() }),
        )
    }

    /// Any blocks with an explicit stop reason (`end_turn`, `tool_use`, `max_tokens`, …).
    pub fn message(blocks: Vec<Block>, stop_reason: impl Into<String>) -> Self {
        Self {
            reply: Reply::Message {
                blocks,
                stop_reason: stop_reason.into(),
                usage: Usage::default(),
            },
            times: 1,
        }
    }

    /// An API error: `status` with body `{"type":"error","error":{"type":kind,"message":…}}`.
    ///
    /// Each attempt the CLI makes consumes one turn, and how often it tries depends on the
    /// status and the CLI version (2.1.332: 403 once; 401, 404, 500 twice with
    /// `CLAUDE_CODE_MAX_RETRIES=1`; 400 six times, dropping beta headers one by one). Use
    /// [`times`](Self::times) with a generous count when the error should end the run.
    pub fn error(status: u16, kind: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            reply: Reply::Error {
                status,
                kind: kind.into(),
                message: message.into(),
            },
            times: 1,
        }
    }

    /// Serves this turn for the next `n` main-loop requests instead of one (at least one).
    #[must_use]
    pub fn times(mut self, n: usize) -> Self {
        self.times = n.max(1);
        self
    }

    /// Puts a text block before the existing blocks ("I'll push now.").
    #[must_use]
    pub fn with_preamble(mut self, text: impl Into<String>) -> Self {
        if let Reply::Message { blocks, .. } = &mut self.reply {
            blocks.insert(0, Block::Text(text.into()));
        }
        self
    }

    /// Sets the usage this response reports.
    #[must_use]
    pub fn with_usage(mut self, new_usage: Usage) -> Self {
        if let Reply::Message { usage, .. } = &mut self.reply {
            *usage = new_usage;
        }
        self
    }
}

/// What the stub did with a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RequestKind {
    /// A main-loop `POST /v1/messages` answered with the script's `n`th response (0-based;
    /// a turn repeated with [`Turn::times`] takes several numbers).
    Turn(usize),
    /// A main-loop request that arrived after the script ran out; answered with a fixed text.
    Unscripted,
    /// A `POST /v1/messages` without tools (title, summary, quota probe…); answered, not scripted.
    Side,
    /// `POST /v1/messages/count_tokens`.
    CountTokens,
    /// Anything else; answered `200 {}`.
    Other,
}

/// One request as the stub received it.
#[derive(Clone, Debug)]
pub struct RecordedRequest {
    /// HTTP method.
    pub method: String,
    /// Path including the query string, e.g. `/v1/messages?beta=true`.
    pub path: String,
    /// Headers, names lower-cased, in arrival order.
    pub headers: Vec<(String, String)>,
    /// The body as text (lossy UTF-8).
    pub raw_body: String,
    /// The body parsed as JSON, or `Null` when it isn't JSON.
    pub body: Value,
    /// How the stub classified and answered it.
    pub kind: RequestKind,
}

impl RecordedRequest {
    /// The first header called `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.as_str())
    }

    /// `body.model`.
    pub fn model(&self) -> Option<&str> {
        self.body.get("model").and_then(Value::as_str)
    }

    /// `body.messages`, or an empty slice.
    pub fn messages(&self) -> &[Value] {
        self.body
            .get("messages")
            .and_then(Value::as_array)
            .map_or(&[], Vec::as_slice)
    }

    /// The last message with `role: "user"`.
    pub fn last_user_message(&self) -> Option<&Value> {
        self.messages()
            .iter()
            .rev()
            .find(|m| m.get("role").and_then(Value::as_str) == Some("user"))
    }

    /// Names of the tools offered to the model.
    pub fn tool_names(&self) -> Vec<&str> {
        self.body
            .get("tools")
            .and_then(Value::as_array)
            .map(|tools| {
                tools
                    .iter()
                    .filter_map(|t| t.get("name").and_then(Value::as_str))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Every `tool_result` block in `messages`, oldest first.
    pub fn tool_results(&self) -> Vec<&Value> {
        self.messages()
            .iter()
            .filter_map(|m| m.get("content").and_then(Value::as_array))
            .flatten()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
            .collect()
    }

    /// The `tool_result` block answering `tool_use_id`.
    pub fn tool_result_for(&self, tool_use_id: &str) -> Option<&Value> {
        self.tool_results()
            .into_iter()
            .find(|b| b.get("tool_use_id").and_then(Value::as_str) == Some(tool_use_id))
    }

    /// Every text the request carries: `system` blocks and message text, including text nested
    /// in `tool_result` content, in order.
    pub fn texts(&self) -> Vec<&str> {
        let mut out = Vec::new();
        if let Some(system) = self.body.get("system") {
            collect_texts(system, &mut out);
        }
        for message in self.messages() {
            if let Some(content) = message.get("content") {
                collect_texts(content, &mut out);
            }
        }
        out
    }

    /// Whether any text in [`texts`](Self::texts) contains `needle`.
    pub fn mentions(&self, needle: &str) -> bool {
        self.texts().iter().any(|t| t.contains(needle))
    }
}

/// Gathers string content and `text` fields from a message content value.
fn collect_texts<'a>(value: &'a Value, out: &mut Vec<&'a str>) {
    match value {
        Value::String(s) => out.push(s),
        Value::Array(items) => items.iter().for_each(|item| collect_texts(item, out)),
        Value::Object(map) => {
            if let Some(Value::String(text)) = map.get("text") {
                out.push(text);
            }
            if let Some(content) = map.get("content") {
                collect_texts(content, out);
            }
        }
        _ => {}
    }
}

/// Shared between the server handle and its threads.
#[derive(Default)]
struct State {
    script: VecDeque<Turn>,
    served_turns: usize,
    next_id: u64,
    requests: Vec<RecordedRequest>,
    errors: Vec<String>,
}

/// A scripted Messages API on 127.0.0.1, stopped on drop.
pub struct StubServer {
    addr: SocketAddr,
    state: Arc<Mutex<State>>,
    stop: Arc<AtomicBool>,
    acceptor: Option<JoinHandle<()>>,
}

impl fmt::Debug for StubServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StubServer")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

impl StubServer {
    /// Starts a stub on an ephemeral port that plays `script` in order.
    pub fn start(script: impl IntoIterator<Item = Turn>) -> io::Result<Self> {
        let listener = TcpListener::bind(("127.0.0.1", 0))?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let state = Arc::new(Mutex::new(State {
            script: script.into_iter().collect(),
            ..State::default()
        }));
        let stop = Arc::new(AtomicBool::new(false));
        let acceptor = {
            let state = Arc::clone(&state);
            let stop = Arc::clone(&stop);
            thread::Builder::new()
                .name("claude-stub-accept".into())
                .spawn(move || accept_loop(&listener, &state, &stop))?
        };
        Ok(Self {
            addr,
            state,
            stop,
            acceptor: Some(acceptor),
        })
    }

    /// The value for `ANTHROPIC_BASE_URL`, e.g. `http://127.0.0.1:41234`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The socket the stub listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Appends turns to the script (e.g. between two runs of a resumed session).
    pub fn push(&self, turns: impl IntoIterator<Item = Turn>) {
        lock(&self.state).script.extend(turns);
    }

    /// Every request so far, in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.state).requests.clone()
    }

    /// The requests that consumed a script turn, in script order.
    pub fn turn_requests(&self) -> Vec<RecordedRequest> {
        let mut turns: Vec<RecordedRequest> = self
            .requests()
            .into_iter()
            .filter(|r| matches!(r.kind, RequestKind::Turn(_)))
            .collect();
        turns.sort_by_key(|r| match r.kind {
            RequestKind::Turn(n) => n,
            _ => usize::MAX,
        });
        turns
    }

    /// How many scripted responses are still unplayed (a turn with `times(n)` counts `n`).
    pub fn remaining(&self) -> usize {
        lock(&self.state).script.iter().map(|t| t.times).sum()
    }

    /// How many main-loop requests found the script empty.
    pub fn unscripted(&self) -> usize {
        lock(&self.state)
            .requests
            .iter()
            .filter(|r| r.kind == RequestKind::Unscripted)
            .count()
    }

    /// Problems the stub hit (malformed requests, write failures), for test diagnostics.
    pub fn errors(&self) -> Vec<String> {
        lock(&self.state).errors.clone()
    }

    /// Writes every recorded request as one JSON line, for debugging a failing test.
    pub fn dump(&self, path: &Path) -> io::Result<()> {
        let mut out = String::new();
        for r in self.requests() {
            let line = json!({
                "method": r.method,
                "path": r.path,
                "kind": format!("{:?}", r.kind),
                "headers": r.headers.iter().map(|(k, v)| json!([k, v])).collect::<Vec<_>>(),
                "body": if r.body.is_null() { Value::String(r.raw_body.clone()) } else { r.body.clone() },
            });
            out.push_str(&line.to_string());
            out.push('\n');
        }
        std::fs::write(path, out)
    }

    /// Stops accepting connections and waits for the accept thread. Idempotent.
    pub fn shutdown(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(handle) = self.acceptor.take() {
            // The accept thread only polls a flag, so this join is bounded by ACCEPT_POLL.
            let _ = handle.join();
        }
    }
}

impl Drop for StubServer {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// Locks the state, ignoring poisoning: a panicking connection thread must not hide the log.
fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    state
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Accepts connections until `stop` is set; each connection gets its own thread.
fn accept_loop(listener: &TcpListener, state: &Arc<Mutex<State>>, stop: &AtomicBool) {
    while !stop.load(Ordering::SeqCst) {
        match listener.accept() {
            Ok((stream, _)) => {
                let conn_state = Arc::clone(state);
                let spawned = thread::Builder::new()
                    .name("claude-stub-conn".into())
                    .spawn(move || serve_connection(stream, &conn_state));
                if let Err(e) = spawned {
                    lock(state).errors.push(format!("spawn: {e}"));
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => thread::sleep(ACCEPT_POLL),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => {
                lock(state).errors.push(format!("accept: {e}"));
                thread::sleep(ACCEPT_POLL);
            }
        }
    }
}

/// A parsed HTTP/1.1 request.
struct HttpRequest {
    method: String,
    path: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

/// An HTTP response ready to write; the connection closes after it.
struct HttpResponse {
    status: u16,
    content_type: &'static str,
    request_id: Option<String>,
    body: String,
}

/// Serves one request, then closes: the stub answers `Connection: close`, so no reuse.
fn serve_connection(stream: TcpStream, state: &Mutex<State>) {
    let outcome = (|| -> io::Result<()> {
        stream.set_nonblocking(false)?;
        stream.set_read_timeout(Some(SOCKET_TIMEOUT))?;
        stream.set_write_timeout(Some(SOCKET_TIMEOUT))?;
        let mut reader = BufReader::new(stream.try_clone()?);
        let Some(request) = read_request(&mut reader)? else {
            return Ok(());
        };
        let response = answer(request, state);
        let mut writer = stream;
        write_response(&mut writer, &response)?;
        writer.flush()?;
        let _ = writer.shutdown(Shutdown::Both);
        Ok(())
    })();
    if let Err(e) = outcome {
        lock(state).errors.push(format!("connection: {e}"));
    }
}

/// Reads one request; `None` when the peer closed before sending anything.
fn read_request(reader: &mut impl BufRead) -> io::Result<Option<HttpRequest>> {
    let mut head_bytes = 0usize;
    let mut line = String::new();
    let mut read_line = |line: &mut String| -> io::Result<usize> {
        line.clear();
        let n = reader.read_line(line)?;
        head_bytes += n;
        if head_bytes > MAX_HEAD_BYTES {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "request head too large",
            ));
        }
        Ok(n)
    };
    if read_line(&mut line)? == 0 {
        return Ok(None);
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or_default().to_owned();
    let path = parts.next().unwrap_or_default().to_owned();
    let mut headers = Vec::new();
    loop {
        if read_line(&mut line)? == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "eof in request head",
            ));
        }
        let trimmed = line.trim_end_matches(['\r', '\n']);
        if trimmed.is_empty() {
            break;
        }
        if let Some((name, value)) = trimmed.split_once(':') {
            headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
        }
    }
    let header = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    };
    let body = if header("transfer-encoding")
        .is_some_and(|v| v.to_ascii_lowercase().contains("chunked"))
    {
        read_chunked(reader)?
    } else {
        let length: usize = header("content-length")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        if length > MAX_BODY_BYTES {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "request body too large",
            ));
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body)?;
        body
    };
    Ok(Some(HttpRequest {
        method,
        path,
        headers,
        body,
    }))
}

/// Reads a `Transfer-Encoding: chunked` body.
fn read_chunked(reader: &mut impl BufRead) -> io::Result<Vec<u8>> {
    let mut body = Vec::new();
    let mut line = String::new();
    // Each chunk is at least one byte, so the body limit also bounds the loop.
    loop {
        line.clear();
        if reader.read_line(&mut line)? == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "eof in chunked body",
            ));
        }
        let size_text = line.trim().split(';').next().unwrap_or_default();
        let size = usize::from_str_radix(size_text, 16)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "bad chunk size"))?;
        if size == 0 {
            // Trailers end with an empty line.
            for _ in 0..64 {
                line.clear();
                if reader.read_line(&mut line)? == 0 || line.trim().is_empty() {
                    break;
                }
            }
            return Ok(body);
        }
        if body.len() + size > MAX_BODY_BYTES {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "request body too large",
            ));
        }
        let start = body.len();
        body.resize(start + size, 0);
        reader.read_exact(&mut body[start..])?;
        line.clear();
        reader.read_line(&mut line)?;
    }
}

/// Classifies a request, records it and builds its response.
fn answer(request: HttpRequest, state: &Mutex<State>) -> HttpResponse {
    let raw_body = String::from_utf8_lossy(&request.body).into_owned();
    let body: Value = serde_json::from_str(&raw_body).unwrap_or(Value::Null);
    let route = request
        .path
        .split('?')
        .next()
        .unwrap_or_default()
        .trim_end_matches('/')
        .to_owned();
    let is_post = request.method.eq_ignore_ascii_case("POST");
    let has_tools = body
        .get("tools")
        .and_then(Value::as_array)
        .is_some_and(|t| !t.is_empty());
    let streaming = body.get("stream").and_then(Value::as_bool).unwrap_or(false);
    let model = body
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or(DEFAULT_MODEL)
        .to_owned();

    let mut st = lock(state);
    st.next_id += 1;
    let id = st.next_id;
    let (kind, reply) = if is_post && route.ends_with("/v1/messages/count_tokens") {
        (RequestKind::CountTokens, None)
    } else if is_post && route.ends_with("/v1/messages") && has_tools {
        let next = match st.script.front_mut() {
            Some(turn) if turn.times > 1 => {
                turn.times -= 1;
                Some(turn.reply.clone())
            }
            Some(_) => st.script.pop_front().map(|turn| turn.reply),
            None => None,
        };
        match next {
            Some(reply) => {
                let n = st.served_turns;
                st.served_turns += 1;
                (RequestKind::Turn(n), Some(reply))
            }
            None => (
                RequestKind::Unscripted,
                Some(Turn::text(UNSCRIPTED_TEXT).reply),
            ),
        }
    } else if is_post && route.ends_with("/v1/messages") {
        (RequestKind::Side, Some(Turn::text(SIDE_TEXT).reply))
    } else {
        (RequestKind::Other, None)
    };
    st.requests.push(RecordedRequest {
        method: request.method,
        path: request.path,
        headers: request.headers,
        raw_body,
        body,
        kind,
    });
    drop(st);

    let request_id = Some(format!("req_stub_{id:04}"));
    match (kind, reply) {
        (RequestKind::CountTokens, _) => {
            json_response(200, request_id, &json!({ "input_tokens": 100 }))
        }
        (
            _,
            Some(Reply::Error {
                status,
                kind,
                message,
            }),
        ) => json_response(
            status,
            request_id,
            &json!({ "type": "error", "error": { "type": kind, "message": message } }),
        ),
        (
            _,
            Some(Reply::Message {
                blocks,
                stop_reason,
                usage,
            }),
        ) => {
            let message = Message {
                id,
                model: &model,
                blocks: &blocks,
                stop_reason: &stop_reason,
                usage,
            };
            if streaming {
                HttpResponse {
                    status: 200,
                    content_type: "text/event-stream",
                    request_id,
                    body: message.to_sse(),
                }
            } else {
                json_response(200, request_id, &message.to_json())
            }
        }
        (_, None) if route.ends_with("/v1/models") => json_response(
            200,
            request_id,
            &json!({ "data": [], "has_more": false, "first_id": null, "last_id": null }),
        ),
        (_, None) => json_response(200, request_id, &json!({})),
    }
}

/// Text of the answer to a main-loop request that found the script empty.
pub const UNSCRIPTED_TEXT: &str = "(claude_stub: the script has no more turns)";
/// Text of the answer to a side request (a request without tools).
pub const SIDE_TEXT: &str = "Stub reply";

fn json_response(status: u16, request_id: Option<String>, body: &Value) -> HttpResponse {
    HttpResponse {
        status,
        content_type: "application/json",
        request_id,
        body: body.to_string(),
    }
}

/// A scripted assistant message, rendered as JSON or as an SSE stream.
struct Message<'a> {
    id: u64,
    model: &'a str,
    blocks: &'a [Block],
    stop_reason: &'a str,
    usage: Usage,
}

impl Message<'_> {
    fn message_id(&self) -> String {
        format!("msg_stub_{:04}", self.id)
    }

    /// Tool-use ids are unique per request and per block.
    fn tool_use_id(&self, index: usize) -> String {
        format!("toolu_stub_{:04}_{index}", self.id)
    }

    fn usage_json(&self, output_tokens: u64) -> Value {
        json!({
            "input_tokens": self.usage.input_tokens,
            "output_tokens": output_tokens,
            "cache_creation_input_tokens": self.usage.cache_creation_input_tokens,
            "cache_read_input_tokens": self.usage.cache_read_input_tokens,
        })
    }

    fn to_json(&self) -> Value {
        let content: Vec<Value> = self
            .blocks
            .iter()
            .enumerate()
            .map(|(i, block)| match block {
                Block::Text(text) => json!({ "type": "text", "text": text }),
                Block::ToolUse { name, input } => {
                    json!({ "type": "tool_use", "id": self.tool_use_id(i), "name": name, "input": input })
                }
            })
            .collect();
        json!({
            "id": self.message_id(),
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "content": content,
            "stop_reason": self.stop_reason,
            "stop_sequence": null,
            "usage": self.usage_json(self.usage.output_tokens),
        })
    }

    fn to_sse(&self) -> String {
        let mut out = String::new();
        let mut event = |name: &str, data: Value| {
            out.push_str("event: ");
            out.push_str(name);
            out.push_str("\ndata: ");
            out.push_str(&data.to_string());
            out.push_str("\n\n");
        };
        event(
            "message_start",
            json!({ "type": "message_start", "message": {
                "id": self.message_id(), "type": "message", "role": "assistant", "model": self.model,
                "content": [], "stop_reason": null, "stop_sequence": null, "usage": self.usage_json(1),
            }}),
        );
        for (index, block) in self.blocks.iter().enumerate() {
            let (start, delta) = match block {
                Block::Text(text) => (
                    json!({ "type": "text", "text": "" }),
                    json!({ "type": "text_delta", "text": text }),
                ),
                Block::ToolUse { name, input } => (
                    json!({ "type": "tool_use", "id": self.tool_use_id(index), "name": name, "input": {} }),
                    json!({ "type": "input_json_delta", "partial_json": input.to_string() }),
                ),
            };
            event(
                "content_block_start",
                json!({ "type": "content_block_start", "index": index, "content_block": start }),
            );
            event(
                "content_block_delta",
                json!({ "type": "content_block_delta", "index": index, "delta": delta }),
            );
            event(
                "content_block_stop",
                json!({ "type": "content_block_stop", "index": index }),
            );
        }
        event(
            "message_delta",
            json!({ "type": "message_delta",
                    "delta": { "stop_reason": self.stop_reason, "stop_sequence": null },
                    "usage": { "output_tokens": self.usage.output_tokens } }),
        );
        event("message_stop", json!({ "type": "message_stop" }));
        out
    }
}

fn reason_phrase(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        413 => "Payload Too Large",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        529 => "Overloaded",
        _ => "Status",
    }
}

fn write_response(w: &mut impl Write, response: &HttpResponse) -> io::Result<()> {
    let mut head = format!(
        "HTTP/1.1 {} {}\r\ncontent-type: {}\r\ncache-control: no-cache\r\nconnection: close\r\n",
        response.status,
        reason_phrase(response.status),
        response.content_type,
    );
    if let Some(id) = &response.request_id {
        head.push_str(&format!("request-id: {id}\r\n"));
    }
    if response.status != 200 {
        // Keeps the CLI's retries of 429/5xx fast.
        head.push_str("retry-after: 0\r\nretry-after-ms: 10\r\n");
    }
    if response.content_type != "text/event-stream" {
        head.push_str(&format!("content-length: {}\r\n", response.body.len()));
    }
    head.push_str("\r\n");
    w.write_all(head.as_bytes())?;
    w.write_all(response.body.as_bytes())
}

/// The `claude` executable the tests drive.
///
/// `$HALLMARK_TEST_CLAUDE` wins; otherwise `tests/claude/node_modules/.bin/claude`, which
/// `npm ci --prefix tests/claude` installs. When npm skipped the package's postinstall (which
/// copies the native binary over a small placeholder script), the platform package's binary is
/// used directly.
pub fn claude_binary() -> PathBuf {
    if let Some(path) = std::env::var_os(CLAUDE_BIN_ENV).filter(|p| !p.is_empty()) {
        return PathBuf::from(path);
    }
    let modules = Path::new(env!("CARGO_MANIFEST_DIR")).join("claude/node_modules");
    let wrapper = modules.join(".bin/claude");
    let is_placeholder = std::fs::metadata(&wrapper).is_ok_and(|m| m.len() < 1 << 20);
    let platform = match (std::env::consts::OS, std::env::consts::ARCH) {
        ("linux", "x86_64") => Some("linux-x64"),
        ("linux", "aarch64") => Some("linux-arm64"),
        ("macos", "x86_64") => Some("darwin-x64"),
        ("macos", "aarch64") => Some("darwin-arm64"),
        _ => None,
    };
    if is_placeholder && let Some(platform) = platform {
        let native = modules.join(format!("@anthropic-ai/claude-code-{platform}/claude"));
        if native.is_file() {
            return native;
        }
    }
    wrapper
}

/// A headless `claude -p` invocation against a [`StubServer`].
///
/// The child gets a cleared environment: `PATH` from the test process (override with
/// [`env`](Self::env)), the given `HOME`, the stub's base URL, a dummy key, and the switches that
/// keep the CLI from reaching the network, updating itself or prompting.
#[derive(Clone, Debug)]
pub struct ClaudeCommand {
    binary: PathBuf,
    prompt: String,
    home: PathBuf,
    cwd: PathBuf,
    model: String,
    permission_mode: Option<String>,
    plugin_dirs: Vec<PathBuf>,
    args: Vec<String>,
    env: Vec<(String, String)>,
    timeout: Duration,
}

impl ClaudeCommand {
    /// `claude -p <prompt>` run in `cwd` with `HOME=home` (created if missing), talking to `stub`.
    pub fn new(
        stub: &StubServer,
        home: impl Into<PathBuf>,
        cwd: impl Into<PathBuf>,
        prompt: impl Into<String>,
    ) -> Self {
        let proxy = "http://127.0.0.1:9".to_owned();
        let env = [
            ("ANTHROPIC_BASE_URL", stub.base_url()),
            ("ANTHROPIC_API_KEY", "dummy".to_owned()),
            // Without this the CLI tries api.anthropic.com directly and stalls offline.
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".to_owned()),
            ("DISABLE_AUTOUPDATER", "1".to_owned()),
            ("DISABLE_TELEMETRY", "1".to_owned()),
            ("DISABLE_ERROR_REPORTING", "1".to_owned()),
            ("CLAUDE_CODE_MAX_RETRIES", "1".to_owned()),
            // Anything that still tries to leave the machine fails at once on a dead local port.
            ("HTTPS_PROXY", proxy.clone()),
            ("HTTP_PROXY", proxy),
            ("NO_PROXY", "127.0.0.1,localhost".to_owned()),
            // bypassPermissions is refused to root unless the CLI is told it is sandboxed.
            ("IS_SANDBOX", "1".to_owned()),
            ("SHELL", "/bin/bash".to_owned()),
            ("LANG", "C.UTF-8".to_owned()),
            ("TERM", "dumb".to_owned()),
            ("NO_COLOR", "1".to_owned()),
            (
                "PATH",
                std::env::var("PATH").unwrap_or_else(|_| "/usr/local/bin:/usr/bin:/bin".to_owned()),
            ),
        ];
        Self {
            binary: claude_binary(),
            prompt: prompt.into(),
            home: home.into(),
            cwd: cwd.into(),
            model: DEFAULT_MODEL.to_owned(),
            permission_mode: Some("bypassPermissions".to_owned()),
            plugin_dirs: Vec::new(),
            args: Vec::new(),
            env: env.into_iter().map(|(k, v)| (k.to_owned(), v)).collect(),
            timeout: Duration::from_secs(120),
        }
    }

    /// Runs this executable instead of [`claude_binary`].
    #[must_use]
    pub fn binary(mut self, path: impl Into<PathBuf>) -> Self {
        self.binary = path.into();
        self
    }

    /// The `--model` value (default [`DEFAULT_MODEL`]).
    #[must_use]
    pub fn model(mut self, model: impl Into<String>) -> Self {
        self.model = model.into();
        self
    }

    /// `--permission-mode <mode>`, or none at all (`-p` default: edits are denied) with `None`.
    #[must_use]
    pub fn permission_mode(mut self, mode: Option<&str>) -> Self {
        self.permission_mode = mode.map(str::to_owned);
        self
    }

    /// Adds `--plugin-dir <dir>`.
    #[must_use]
    pub fn plugin_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.plugin_dirs.push(dir.into());
        self
    }

    /// Adds an argument after the defaults (`--max-turns`, `--session-id`, `--resume`, …).
    #[must_use]
    pub fn arg(mut self, arg: impl Into<String>) -> Self {
        self.args.push(arg.into());
        self
    }

    /// Sets an environment variable for the CLI and, through it, its hooks.
    #[must_use]
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        let key = key.into();
        self.env.retain(|(k, _)| *k != key);
        self.env.push((key, value.into()));
        self
    }

    /// Kills the run (and its process group) after `timeout` (default 120 s).
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The full argument list, for logging.
    pub fn argv(&self) -> Vec<String> {
        // The prompt goes straight after -p: variadic flags such as --allowedTools would
        // otherwise swallow it.
        let mut argv = vec![
            "-p".to_owned(),
            self.prompt.clone(),
            "--model".to_owned(),
            self.model.clone(),
            "--output-format".to_owned(),
            "stream-json".to_owned(),
            "--verbose".to_owned(),
        ];
        if let Some(mode) = &self.permission_mode {
            argv.push("--permission-mode".to_owned());
            argv.push(mode.clone());
        }
        for dir in &self.plugin_dirs {
            argv.push("--plugin-dir".to_owned());
            argv.push(dir.display().to_string());
        }
        argv.extend(self.args.iter().cloned());
        argv
    }

    /// Runs the CLI to completion or until the timeout.
    pub fn run(&self) -> io::Result<ClaudeRun> {
        std::fs::create_dir_all(&self.home)?;
        let mut command = Command::new(&self.binary);
        command
            .args(self.argv())
            .current_dir(&self.cwd)
            .env_clear()
            .envs(self.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .env("HOME", &self.home)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        #[cfg(unix)]
        {
            use std::os::unix::process::CommandExt;
            // Its own group, so a timeout can kill hooks and tool processes too.
            command.process_group(0);
        }
        let started = Instant::now();
        let mut child = command.spawn().map_err(|e| {
            io::Error::new(
                e.kind(),
                format!(
                    "cannot run {}: {e} (run `npm ci --prefix tests/claude`)",
                    self.binary.display()
                ),
            )
        })?;
        let stdout = drain(child.stdout.take());
        let stderr = drain(child.stderr.take());
        let (status, timed_out) = wait_with_deadline(&mut child, started + self.timeout)?;
        let elapsed = started.elapsed();
        Ok(ClaudeRun {
            status: status.and_then(|s| s.code()),
            stdout: collect(stdout),
            stderr: collect(stderr),
            timed_out,
            elapsed,
            home: self.home.clone(),
        })
    }
}

/// Reads a pipe to its end on a thread, handing the bytes back over a channel.
fn drain(pipe: Option<impl Read + Send + 'static>) -> std::sync::mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = std::sync::mpsc::channel();
    if let Some(mut pipe) = pipe {
        let _ = thread::Builder::new()
            .name("claude-stub-pipe".into())
            .spawn(move || {
                let mut buf = Vec::new();
                let _ = pipe.read_to_end(&mut buf);
                let _ = tx.send(buf);
            });
    }
    rx
}

/// Waits briefly for a pipe reader: a leftover grandchild may hold the pipe open.
fn collect(rx: std::sync::mpsc::Receiver<Vec<u8>>) -> String {
    let bytes = rx.recv_timeout(Duration::from_secs(5)).unwrap_or_default();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Polls the child until it exits or the deadline passes; on the deadline, kills its group.
fn wait_with_deadline(
    child: &mut Child,
    deadline: Instant,
) -> io::Result<(Option<ExitStatus>, bool)> {
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok((Some(status), false));
        }
        if Instant::now() >= deadline {
            kill_group(child);
            let status = child.wait().ok();
            return Ok((status, true));
        }
        thread::sleep(Duration::from_millis(20));
    }
}

/// Kills the CLI, its process group, and every process below it.
///
/// The CLI starts each hook in a process group of its own, so killing the CLI's group alone
/// would leave a hanging hook behind.
fn kill_group(child: &mut Child) {
    #[cfg(unix)]
    {
        let root = child.id();
        let mut targets = vec![format!("-{root}")];
        for pid in descendants(root) {
            targets.push(pid.to_string());
            targets.push(format!("-{pid}"));
        }
        let _ = Command::new("kill")
            .arg("-KILL")
            .arg("--")
            .args(&targets)
            .stderr(Stdio::null())
            .status();
    }
    let _ = child.kill();
}

/// Every process whose chain of parents leads to `root` (Linux `/proc`; empty elsewhere).
fn descendants(root: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut parents = Vec::new();
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // The command name may hold spaces and parentheses; the fields after the last ')'
        // are fixed: state, then the parent pid.
        let ppid = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|s| s.parse::<u32>().ok());
        if let Some(ppid) = ppid {
            parents.push((pid, ppid));
        }
    }
    let mut found = vec![root];
    let mut next = 0;
    while next < found.len() {
        let parent = found[next];
        for &(pid, ppid) in &parents {
            if ppid == parent && !found.contains(&pid) {
                found.push(pid);
            }
        }
        next += 1;
    }
    found.split_off(1)
}

/// What a `claude -p` run left behind.
#[derive(Clone, Debug)]
pub struct ClaudeRun {
    /// Exit code; `None` when killed by a signal (e.g. on timeout).
    pub status: Option<i32>,
    /// The stream-json lines.
    pub stdout: String,
    /// Diagnostics.
    pub stderr: String,
    /// Whether the runner had to kill the CLI.
    pub timed_out: bool,
    /// Wall time of the run.
    pub elapsed: Duration,
    /// The `HOME` the run used (transcripts live under `<home>/.claude/projects/`).
    pub home: PathBuf,
}

impl ClaudeRun {
    /// Every stdout line that parses as JSON.
    pub fn events(&self) -> Vec<Value> {
        self.stdout
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// The `system`/`init` event.
    pub fn init(&self) -> Option<Value> {
        self.events().into_iter().find(|e| {
            e.get("type").and_then(Value::as_str) == Some("system")
                && e.get("subtype").and_then(Value::as_str) == Some("init")
        })
    }

    /// The last `result` event (a run may emit several when background agents finish late).
    pub fn result(&self) -> Option<Value> {
        self.events()
            .into_iter()
            .rev()
            .find(|e| e.get("type").and_then(Value::as_str) == Some("result"))
    }

    /// Exit 0 and a final result with `is_error: false`.
    pub fn succeeded(&self) -> bool {
        self.status == Some(0)
            && self
                .result()
                .and_then(|r| r.get("is_error").and_then(Value::as_bool))
                == Some(false)
    }

    /// The session id from the result or init event.
    pub fn session_id(&self) -> Option<String> {
        self.result().or_else(|| self.init()).and_then(|e| {
            e.get("session_id")
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
    }

    /// The session transcript, found by session id under `<home>/.claude/projects/*/`.
    pub fn transcript_path(&self) -> Option<PathBuf> {
        let file = format!("{}.jsonl", self.session_id()?);
        let projects = self.home.join(".claude").join("projects");
        std::fs::read_dir(projects)
            .ok()?
            .filter_map(Result::ok)
            .map(|entry| entry.path().join(&file))
            .find(|path| path.is_file())
    }

    /// The transcript's lines parsed as JSON (empty when there is none).
    pub fn transcript(&self) -> Vec<Value> {
        self.transcript_path()
            .and_then(|p| std::fs::read_to_string(p).ok())
            .map(|text| {
                text.lines()
                    .filter_map(|l| serde_json::from_str(l).ok())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// A one-paragraph summary for assertion messages.
    pub fn describe(&self) -> String {
        format!(
            "claude exited {:?} after {:?}{}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.status,
            self.elapsed,
            if self.timed_out {
                " (timed out, killed)"
            } else {
                ""
            },
            self.stdout,
            self.stderr
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sends one HTTP request and returns (status, body).
    fn send(stub: &StubServer, method: &str, path: &str, body: &Value) -> (u16, String) {
        let mut stream = TcpStream::connect(stub.addr()).expect("connect to stub");
        stream
            .set_read_timeout(Some(Duration::from_secs(5)))
            .expect("set timeout");
        let body = body.to_string();
        let request = format!(
            "{method} {path} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        );
        stream.write_all(request.as_bytes()).expect("write request");
        let mut response = String::new();
        stream.read_to_string(&mut response).expect("read response");
        let status = response
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .expect("status code");
        let body = response
            .split_once("\r\n\r\n")
            .map(|(_, b)| b.to_owned())
            .expect("head/body split");
        (status, body)
    }

    fn main_loop(stream: bool) -> Value {
        json!({ "model": "m", "stream": stream, "tools": [{ "name": "Bash" }],
                "messages": [{ "role": "user", "content": "hi" }] })
    }

    fn sse_events(body: &str) -> Vec<Value> {
        body.lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .map(|d| serde_json::from_str(d).expect("SSE data is JSON"))
            .collect()
    }

    #[test]
    fn streams_a_tool_call_then_text() {
        let stub = StubServer::start([
            Turn::bash("git push origin HEAD").with_preamble("Pushing."),
            Turn::text("Done."),
        ])
        .expect("start stub");
        let (status, body) = send(&stub, "POST", "/v1/messages?beta=true", &main_loop(true));
        assert_eq!(status, 200);
        let events = sse_events(&body);
        let kinds: Vec<&str> = events.iter().filter_map(|e| e["type"].as_str()).collect();
        assert_eq!(
            kinds,
            [
                "message_start",
                "content_block_start",
                "content_block_delta",
                "content_block_stop",
                "content_block_start",
                "content_block_delta",
                "content_block_stop",
                "message_delta",
                "message_stop",
            ]
        );
        assert_eq!(events[4]["content_block"]["name"], "Bash");
        let input: Value = serde_json::from_str(
            events[5]["delta"]["partial_json"]
                .as_str()
                .expect("partial_json"),
        )
        .expect("tool input is JSON");
        assert_eq!(input["command"], "git push origin HEAD");
        assert_eq!(events[7]["delta"]["stop_reason"], "tool_use");

        let (_, body) = send(&stub, "POST", "/v1/messages", &main_loop(true));
        let events = sse_events(&body);
        assert_eq!(events[2]["delta"]["text"], "Done.");
        assert_eq!(events[4]["delta"]["stop_reason"], "end_turn");
        assert_eq!(stub.remaining(), 0);
        assert_eq!(stub.turn_requests().len(), 2);
    }

    #[test]
    fn answers_without_streaming_when_asked() {
        let stub = StubServer::start([Turn::text("plain")]).expect("start stub");
        let (status, body) = send(&stub, "POST", "/v1/messages", &main_loop(false));
        assert_eq!(status, 200);
        let message: Value = serde_json::from_str(&body).expect("JSON message");
        assert_eq!(message["content"][0]["text"], "plain");
        assert_eq!(message["stop_reason"], "end_turn");
    }

    #[test]
    fn side_requests_do_not_consume_the_script() {
        let stub = StubServer::start([Turn::text("scripted")]).expect("start stub");
        let side =
            json!({ "model": "haiku", "messages": [{ "role": "user", "content": "title?" }] });
        let (status, _) = send(&stub, "POST", "/v1/messages", &side);
        assert_eq!(status, 200);
        let (_, tokens) = send(
            &stub,
            "POST",
            "/v1/messages/count_tokens",
            &main_loop(false),
        );
        assert_eq!(
            serde_json::from_str::<Value>(&tokens).expect("JSON")["input_tokens"],
            100
        );
        let (status, _) = send(&stub, "GET", "/v1/models", &Value::Null);
        assert_eq!(status, 200);
        assert_eq!(stub.remaining(), 1);
        let kinds: Vec<RequestKind> = stub.requests().iter().map(|r| r.kind).collect();
        assert_eq!(
            kinds,
            [
                RequestKind::Side,
                RequestKind::CountTokens,
                RequestKind::Other
            ]
        );
    }

    #[test]
    fn repeats_errors_and_survives_an_empty_script() {
        let stub = StubServer::start([Turn::error(529, "overloaded_error", "busy").times(2)])
            .expect("start stub");
        assert_eq!(stub.remaining(), 2);
        for _ in 0..2 {
            let (status, body) = send(&stub, "POST", "/v1/messages", &main_loop(true));
            assert_eq!(status, 529);
            assert!(body.contains("overloaded_error"));
        }
        let (status, body) = send(&stub, "POST", "/v1/messages", &main_loop(true));
        assert_eq!(status, 200);
        assert!(body.contains("no more turns"));
        assert_eq!(stub.unscripted(), 1);
    }

    #[test]
    fn finds_tool_results_and_texts() {
        let stub = StubServer::start([Turn::text("ok")]).expect("start stub");
        let body = json!({ "model": "m", "stream": true, "tools": [{ "name": "Bash" }],
            "system": [{ "type": "text", "text": "sys" }],
            "messages": [
                { "role": "user", "content": [{ "type": "text", "text": "ctx: HALL" }] },
                { "role": "system", "content": "SessionStart hook additional context: X" },
                { "role": "user", "content": [{ "type": "tool_result", "tool_use_id": "t1", "is_error": true,
                                                 "content": "PreToolUse:Bash hook error: denied" }] },
            ] });
        send(&stub, "POST", "/v1/messages", &body);
        let request = &stub.turn_requests()[0];
        assert!(request.mentions("SessionStart hook additional context: X"));
        assert!(request.mentions("hook error: denied"));
        assert_eq!(
            request.tool_result_for("t1").expect("tool result")["is_error"],
            true
        );
        assert_eq!(request.tool_names(), ["Bash"]);
    }

    #[test]
    fn stops_listening_on_drop() {
        let stub = StubServer::start([]).expect("start stub");
        let addr = stub.addr();
        drop(stub);
        assert!(TcpStream::connect_timeout(&addr, Duration::from_secs(1)).is_err());
    }
}
