//! A small HTTP/1.1 server on 127.0.0.1 for the loopback stand-ins (the Messages API stub,
//! the GitHub simulator): one accepting thread, one short-lived thread per connection,
//! one request per connection (`Connection: close`), parsed by hand with std only.
//!
//! A request may name its target as a path (`/v1/messages`) or, when the client was sent
//! here as its proxy, as an absolute URL (`http://api.github.localhost/graphql`); both
//! are split into host and path.

use std::fmt;
use std::io::{self, BufRead, BufReader, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::Duration;

/// How long a connection may stall on a read or a write.
const SOCKET_TIMEOUT: Duration = Duration::from_secs(15);
/// Caps on what one request may send, so a broken client can't exhaust memory.
const MAX_HEAD_BYTES: usize = 1 << 20;
const MAX_BODY_BYTES: usize = 64 << 20;
/// How often the accepting thread looks at the stop flag.
const ACCEPT_POLL: Duration = Duration::from_millis(10);

/// A parsed request.
#[derive(Clone, Debug)]
pub struct Request {
    pub method: String,
    /// The request target as sent (a path, or an absolute URL through a proxy).
    pub target: String,
    /// The host the request was for: the absolute URL's, else the `Host` header.
    pub host: String,
    /// The path without the query string or a trailing `/`.
    pub path: String,
    /// The query string, without the `?`.
    pub query: String,
    /// Header names in lower case, in arrival order.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Request {
    /// The first header called `name` (lower case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn is(&self, method: &str) -> bool {
        self.method.eq_ignore_ascii_case(method)
    }

    /// The value of `name` in the query string, undecoded.
    pub fn query_value(&self, name: &str) -> Option<&str> {
        self.query
            .split('&')
            .filter_map(|pair| pair.split_once('='))
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v)
    }
}

/// A response; the connection closes after it.
#[derive(Clone, Debug)]
pub struct Response {
    pub status: u16,
    pub content_type: &'static str,
    /// Headers beyond the content type, length and `Connection: close`.
    pub headers: Vec<(String, String)>,
    pub body: String,
    /// Sent without a `Content-Length` (an event stream ended by closing).
    pub streamed: bool,
}

impl Response {
    pub fn json(status: u16, body: &serde_json::Value) -> Response {
        Response {
            status,
            content_type: "application/json",
            headers: Vec::new(),
            body: body.to_string(),
            streamed: false,
        }
    }

    /// A body that is not JSON at all (for a test of a client meeting garbage).
    pub fn text(status: u16, body: impl Into<String>) -> Response {
        Response {
            status,
            content_type: "text/plain",
            headers: Vec::new(),
            body: body.into(),
            streamed: false,
        }
    }

    pub fn with_header(mut self, name: &str, value: impl Into<String>) -> Response {
        self.headers.push((name.to_string(), value.into()));
        self
    }
}

/// Answers each request; shared by the connection threads.
pub type Handler = dyn Fn(Request) -> Response + Send + Sync;

/// A server on an ephemeral port of 127.0.0.1, stopped on drop.
pub struct Server {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    errors: Arc<Mutex<Vec<String>>>,
    acceptor: Option<JoinHandle<()>>,
}

impl fmt::Debug for Server {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Server")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

impl Server {
    /// Starts serving; `name` names the threads.
    pub fn start(name: &str, handler: Arc<Handler>) -> io::Result<Server> {
        let listener = TcpListener::bind(("127.0.0.1", 0))?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let errors = Arc::new(Mutex::new(Vec::new()));
        let acceptor = {
            let (stop, errors, name) = (Arc::clone(&stop), Arc::clone(&errors), name.to_string());
            thread::Builder::new()
                .name(format!("{name}-accept"))
                .spawn(move || accept_loop(&listener, &handler, &stop, &errors, &name))?
        };
        Ok(Server {
            addr,
            stop,
            errors,
            acceptor: Some(acceptor),
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Problems the server hit (malformed requests, write failures), for diagnostics.
    pub fn errors(&self) -> Vec<String> {
        lock(&self.errors).clone()
    }

    /// Stops accepting connections and waits for the accepting thread. Idempotent.
    pub fn shutdown(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(handle) = self.acceptor.take() {
            // The accepting thread only polls a flag, so this join is bounded by ACCEPT_POLL.
            let _ = handle.join();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// Locks, ignoring poisoning: a panicking connection thread must not hide what it logged.
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn accept_loop(
    listener: &TcpListener,
    handler: &Arc<Handler>,
    stop: &AtomicBool,
    errors: &Arc<Mutex<Vec<String>>>,
    name: &str,
) {
    while !stop.load(Ordering::SeqCst) {
        match listener.accept() {
            Ok((stream, _)) => {
                let (handler, conn_errors) = (Arc::clone(handler), Arc::clone(errors));
                let spawned = thread::Builder::new()
                    .name(format!("{name}-conn"))
                    .spawn(move || serve_connection(stream, &*handler, &conn_errors));
                if let Err(e) = spawned {
                    lock(errors).push(format!("spawn: {e}"));
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => thread::sleep(ACCEPT_POLL),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => {
                lock(errors).push(format!("accept: {e}"));
                thread::sleep(ACCEPT_POLL);
            }
        }
    }
}

fn serve_connection(stream: TcpStream, handler: &Handler, errors: &Mutex<Vec<String>>) {
    let outcome = (|| -> io::Result<()> {
        stream.set_nonblocking(false)?;
        stream.set_read_timeout(Some(SOCKET_TIMEOUT))?;
        stream.set_write_timeout(Some(SOCKET_TIMEOUT))?;
        let mut reader = BufReader::new(stream.try_clone()?);
        let Some(request) = read_request(&mut reader)? else {
            return Ok(());
        };
        let response = handler(request);
        let mut writer = stream;
        write_response(&mut writer, &response)?;
        writer.flush()?;
        let _ = writer.shutdown(Shutdown::Both);
        Ok(())
    })();
    if let Err(e) = outcome {
        lock(errors).push(format!("connection: {e}"));
    }
}

fn invalid(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what.to_string())
}

/// Reads one request; `None` when the peer closed before sending anything.
fn read_request(reader: &mut impl BufRead) -> io::Result<Option<Request>> {
    let mut head_bytes = 0usize;
    let mut line = String::new();
    let mut read_line = |line: &mut String| -> io::Result<usize> {
        line.clear();
        let n = reader.read_line(line)?;
        head_bytes += n;
        if head_bytes > MAX_HEAD_BYTES {
            return Err(invalid("request head too large"));
        }
        Ok(n)
    };
    if read_line(&mut line)? == 0 {
        return Ok(None);
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or_default().to_owned();
    let target = parts.next().unwrap_or_default().to_owned();
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
            return Err(invalid("request body too large"));
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body)?;
        body
    };
    // `http://host/path?q` through a proxy, `/path?q` otherwise.
    let (host, rest) = match target.split_once("://") {
        Some((_, after)) => match after.find('/') {
            Some(i) => (after[..i].to_string(), after[i..].to_string()),
            None => (after.to_string(), "/".to_string()),
        },
        None => (
            header("host").unwrap_or_default().to_string(),
            target.clone(),
        ),
    };
    let (path, query) = rest.split_once('?').unwrap_or((&rest, ""));
    let path = match path.trim_end_matches('/') {
        "" => "/".to_string(),
        p => p.to_string(),
    };
    Ok(Some(Request {
        method,
        host,
        path,
        query: query.to_string(),
        target,
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
        let size = usize::from_str_radix(size_text, 16).map_err(|_| invalid("bad chunk size"))?;
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
            return Err(invalid("request body too large"));
        }
        let start = body.len();
        body.resize(start + size, 0);
        reader.read_exact(&mut body[start..])?;
        line.clear();
        reader.read_line(&mut line)?;
    }
}

fn reason_phrase(status: u16) -> &'static str {
    match status {
        200 => "OK",
        201 => "Created",
        204 => "No Content",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        409 => "Conflict",
        413 => "Payload Too Large",
        422 => "Unprocessable Entity",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        529 => "Overloaded",
        _ => "Status",
    }
}

fn write_response(w: &mut impl Write, response: &Response) -> io::Result<()> {
    let mut head = format!(
        "HTTP/1.1 {} {}\r\ncontent-type: {}\r\ncache-control: no-cache\r\nconnection: close\r\n",
        response.status,
        reason_phrase(response.status),
        response.content_type,
    );
    for (name, value) in &response.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    if !response.streamed {
        head.push_str(&format!("content-length: {}\r\n", response.body.len()));
    }
    head.push_str("\r\n");
    w.write_all(head.as_bytes())?;
    w.write_all(response.body.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(raw: &str) -> Request {
        read_request(&mut raw.as_bytes())
            .expect("reads")
            .expect("a request")
    }

    #[test]
    fn a_proxied_request_names_its_host_and_path() {
        let r = parse(
            "POST http://api.github.localhost/graphql/ HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}",
        );
        assert_eq!(
            (r.host.as_str(), r.path.as_str(), r.body.as_slice()),
            ("api.github.localhost", "/graphql", &b"{}"[..])
        );
        let r = parse(
            "GET /repos/o/r/actions/runs?per_page=5&status=failure HTTP/1.1\r\nHost: h:1\r\n\r\n",
        );
        assert_eq!(
            (r.host.as_str(), r.path.as_str()),
            ("h:1", "/repos/o/r/actions/runs")
        );
        assert_eq!(r.query_value("status"), Some("failure"));
        assert_eq!(r.query_value("page"), None);
    }

    #[test]
    fn a_chunked_body_is_joined_and_an_oversized_head_refused() {
        let r = parse(
            "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n",
        );
        assert_eq!(r.body, b"abcde");
        let huge = format!(
            "GET / HTTP/1.1\r\nX: {}\r\n\r\n",
            "a".repeat(MAX_HEAD_BYTES)
        );
        assert!(read_request(&mut huge.as_bytes()).is_err());
    }
}
