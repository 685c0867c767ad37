//! The stub server and the runner, tested without the real CLI.

use super::*;
use std::io::Write;
use std::net::TcpStream;

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
    let side = json!({ "model": "haiku", "messages": [{ "role": "user", "content": "title?" }] });
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
