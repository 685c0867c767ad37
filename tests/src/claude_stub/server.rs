//! The HTTP side of the stub: one accepting thread, one short-lived thread per
//! connection, requests parsed by hand (std only), answers played from the script.

use super::*;

/// Shared between the server handle and its connection threads.
#[derive(Default)]
struct State {
    script: VecDeque<Turn>,
    served_turns: usize,
    next_id: u64,
    requests: Vec<RecordedRequest>,
}

/// A scripted Messages API on 127.0.0.1, stopped on drop.
pub struct StubServer {
    server: http::Server,
    state: Arc<Mutex<State>>,
}

impl fmt::Debug for StubServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StubServer")
            .field("addr", &self.server.addr())
            .finish_non_exhaustive()
    }
}

impl StubServer {
    /// Starts a stub on an ephemeral port that plays `script` in order.
    pub fn start(script: impl IntoIterator<Item = Turn>) -> io::Result<Self> {
        let state = Arc::new(Mutex::new(State {
            script: script.into_iter().collect(),
            ..State::default()
        }));
        let handler = {
            let state = Arc::clone(&state);
            Arc::new(move |request| answer(request, &state))
        };
        Ok(Self {
            server: http::Server::start("claude-stub", handler)?,
            state,
        })
    }

    /// The value for `ANTHROPIC_BASE_URL`, e.g. `http://127.0.0.1:41234`.
    pub fn base_url(&self) -> String {
        self.server.url()
    }

    /// The socket the stub listens on.
    pub fn addr(&self) -> SocketAddr {
        self.server.addr()
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
        self.server.errors()
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

    /// Stops accepting connections. Idempotent.
    pub fn shutdown(&mut self) {
        self.server.shutdown();
    }
}

fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    http::lock(state)
}

/// Classifies a request, records it and builds its response.
fn answer(request: http::Request, state: &Mutex<State>) -> http::Response {
    let raw_body = String::from_utf8_lossy(&request.body).into_owned();
    let body: Value = serde_json::from_str(&raw_body).unwrap_or(Value::Null);
    let route = request.path.clone();
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
        path: request.target,
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
                with_id(
                    http::Response {
                        status: 200,
                        content_type: "text/event-stream",
                        headers: Vec::new(),
                        body: message.to_sse(),
                        streamed: true,
                    },
                    request_id,
                )
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

fn json_response(status: u16, request_id: Option<String>, body: &Value) -> http::Response {
    with_id(http::Response::json(status, body), request_id)
}

/// The Messages API's request id, and on an error the retry hints that keep the CLI's
/// retries of 429/5xx fast.
fn with_id(mut response: http::Response, request_id: Option<String>) -> http::Response {
    if let Some(id) = request_id {
        response = response.with_header("request-id", id);
    }
    if response.status != 200 {
        response = response
            .with_header("retry-after", "0")
            .with_header("retry-after-ms", "10");
    }
    response
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
