//! The HTTP side of the stub: one accepting thread, one short-lived thread per
//! connection, requests parsed by hand (std only), answers played from the script.

use super::*;

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
