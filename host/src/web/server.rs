//! The HTTP side of `hall web`: routes, the guard applied to every request, the
//! security headers on every response, and the restart into a newer binary.

use std::net::TcpListener;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use axum::Router;
use axum::body::Body;
use axum::extract::{Query, Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use futures_util::stream::Stream;
use serde::Deserialize;
use serde_json::{Value, json};

use super::actions;
use super::feed::{After, Feed};
use super::guard::{self, Caller, Refusal, Seen, Sessions};
use crate::error::{HallError, Result};
use crate::hall::{Ctx, Hall};

const INDEX: &str = include_str!("assets/index.html");
const SCRIPT: &str = include_str!("assets/app.js");
const STYLE: &str = include_str!("assets/app.css");

/// Scripts and styles from this server only, no inline code, no frames, no plugins.
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; \
                   connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

/// The server's shared state.
pub struct App {
    ctx: Ctx,
    port: u16,
    sessions: Mutex<Sessions>,
    config_dir: Option<PathBuf>,
    feed: Arc<Feed>,
    /// Where the binary was when this server started (read once: on Linux the running
    /// binary's own link names the replaced file, not the path).
    binary_path: Option<PathBuf>,
    /// The binary as it was when this server started: (modified, length).
    binary: Option<(SystemTime, u64)>,
    /// A restart asked for by a page, taken by [`serve`] once the server has stopped.
    restart: Mutex<Option<Restart>>,
    stop: tokio::sync::Notify,
    /// Set when the server stops: ends every event stream, which would otherwise hold
    /// the graceful shutdown open for as long as a tab stays open.
    closing: tokio::sync::watch::Sender<bool>,
}

impl App {
    pub fn new(
        ctx: &Ctx,
        hall: &Hall,
        port: u16,
        launch: String,
        resumed: Vec<(String, String)>,
    ) -> Result<Arc<App>> {
        let binary_path = std::env::current_exe().ok();
        let mut sessions = Sessions::new(launch);
        for (id, csrf) in resumed {
            sessions.keep(id, csrf);
        }
        Ok(Arc::new(App {
            ctx: ctx.acting_as("you"),
            port,
            sessions: Mutex::new(sessions),
            config_dir: hall.user_config_dir(),
            feed: super::feed::start(hall),
            binary: binary_path.as_deref().and_then(binary_stamp),
            binary_path,
            restart: Mutex::new(None),
            stop: tokio::sync::Notify::new(),
            closing: tokio::sync::watch::Sender::new(false),
        }))
    }

    /// A context for one request: this server's directory and clock, stamped now.
    fn request_ctx(&self) -> Ctx {
        self.ctx.acting_as("you")
    }
}

/// The binary at `path`: its modification time and length.
fn binary_stamp(path: &std::path::Path) -> Option<(SystemTime, u64)> {
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.modified().ok()?, meta.len()))
}

impl App {
    /// The CSRF token of a session caller; a script's token has none (it rides on no
    /// cookie a page could send).
    fn csrf_of(&self, caller: &Caller) -> Option<String> {
        match caller {
            Caller::Session(id) => self
                .sessions
                .lock()
                .ok()
                .and_then(|s| s.get(id).map(|s| s.csrf.clone())),
            Caller::Token(_) => None,
        }
    }

    /// Whether the binary on disk is not the one this server started from.
    fn newer_binary(&self) -> bool {
        self.binary_path
            .as_deref()
            .and_then(binary_stamp)
            .is_some_and(|now| Some(now) != self.binary)
    }
}

/// Serves until Ctrl-C or a restart; returns the restart to start, if one was asked.
pub async fn serve(app: Arc<App>, listener: TcpListener) -> Result<Option<Restart>> {
    let listener = tokio::net::TcpListener::from_std(listener)
        .map_err(|e| HallError::internal(format!("the listener: {e}")))?;
    let router = Router::new()
        .route("/", get(index))
        .route("/launch", get(launch))
        .route(
            "/assets/app.js",
            get(|| async { asset(SCRIPT, "text/javascript; charset=utf-8") }),
        )
        .route(
            "/assets/app.css",
            get(|| async { asset(STYLE, "text/css; charset=utf-8") }),
        )
        .route("/favicon.ico", get(|| async { StatusCode::NO_CONTENT }))
        .route("/api/session", get(session))
        .route("/api/board", get(board))
        .route("/api/actions", get(action_table))
        .route("/api/view", get(view))
        .route("/api/run", post(run))
        .route("/api/events", get(events))
        .route("/api/chart/usage", get(usage_chart))
        .route("/api/restart", post(restart))
        .fallback(|| async { refuse_plain(StatusCode::NOT_FOUND, "no such page") })
        .layer(middleware::from_fn_with_state(app.clone(), guard_layer))
        .with_state(app.clone());
    let stopping = app.clone();
    axum::serve(listener, router)
        .with_graceful_shutdown(async move {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                () = stopping.stop.notified() => {}
            }
            stopping.closing.send_replace(true);
        })
        .await
        .map_err(|e| HallError::internal(format!("the web server stopped: {e}")))?;
    app.feed.stop();
    Ok(app.restart.lock().ok().and_then(|mut r| r.take()))
}

/// The guard, on every request: the Host header, then who the caller is, then for a
/// change its origin and CSRF token. Every refusal is logged and answered before any
/// handler runs, so a refused request writes nothing.
async fn guard_layer(State(app): State<Arc<App>>, mut req: Request, next: Next) -> Response {
    let path = req.uri().path().to_string();
    let method = req.method().clone();
    let headers = req.headers();
    let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let verdict = (|| -> std::result::Result<Option<Caller>, Refusal> {
        guard::host(text("host"), app.port)?;
        // The launch page and the static files need no session: the first is how one
        // is got, the others are public code.
        if path == "/launch" || path == "/favicon.ico" || path.starts_with("/assets/") {
            return Ok(None);
        }
        let caller = who(&app, headers)?;
        if method != Method::GET && method != Method::HEAD {
            let csrf = app.csrf_of(&caller);
            let seen = Seen {
                origin: text("origin"),
                fetch_site: text("sec-fetch-site"),
                csrf: text(guard::CSRF_HEADER),
            };
            guard::may_change(&caller, seen, csrf.as_deref(), app.port)?;
        }
        Ok(Some(caller))
    })();
    let mut response = match verdict {
        Ok(caller) => {
            if let Some(caller) = caller {
                req.extensions_mut().insert(caller);
            }
            next.run(req).await
        }
        Err(refusal) => {
            log_refusal(&method, &path, &refusal.why);
            let status = StatusCode::from_u16(refusal.status).unwrap_or(StatusCode::FORBIDDEN);
            if path == "/" && status == StatusCode::UNAUTHORIZED {
                refuse_plain(
                    status,
                    "This page needs the launch URL `hall web` printed (it works once). Run `hall web` again for a new one.",
                )
            } else {
                refuse_json(status, &refusal.why)
            }
        }
    };
    secure(response.headers_mut(), &path);
    response
}

/// The caller: a session cookie this server gave, or a live API token.
fn who(app: &App, headers: &HeaderMap) -> std::result::Result<Caller, Refusal> {
    let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    if let Some(token) = guard::bearer(text("authorization")) {
        return app
            .config_dir
            .as_deref()
            .and_then(|dir| crate::hall::web_tokens::check(dir, token))
            .map(Caller::Token)
            .ok_or_else(|| Refusal {
                status: 401,
                why: "the API token is not one `hall web token list` shows".into(),
            });
    }
    let cookie = headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find_map(|h| guard::session_cookie(Some(h)));
    match cookie {
        Some(id) if app.sessions.lock().is_ok_and(|s| s.get(id).is_some()) => {
            Ok(Caller::Session(id.to_string()))
        }
        Some(_) => Err(Refusal {
            status: 401,
            why: "the session is not one this server opened".into(),
        }),
        None => Err(Refusal {
            status: 401,
            why: "no session and no API token".into(),
        }),
    }
}

fn log_refusal(method: &Method, path: &str, why: &str) {
    eprintln!("hall web: refused {method} {path}: {why}");
}

/// Headers on every response: the content security policy, no sniffing, no referrer,
/// no framing, and no caching of anything but the static files.
fn secure(headers: &mut HeaderMap, path: &str) {
    let set = |h: &mut HeaderMap, k: &'static str, v: &'static str| {
        h.insert(k, HeaderValue::from_static(v));
    };
    set(headers, "content-security-policy", CSP);
    set(headers, "x-content-type-options", "nosniff");
    set(headers, "referrer-policy", "no-referrer");
    set(headers, "x-frame-options", "DENY");
    set(headers, "cross-origin-opener-policy", "same-origin");
    set(headers, "cross-origin-resource-policy", "same-origin");
    if !path.starts_with("/assets/") {
        set(headers, "cache-control", "no-store");
    }
}

fn asset(body: &'static str, kind: &'static str) -> Response {
    ([(header::CONTENT_TYPE, kind)], body).into_response()
}

fn refuse_json(status: StatusCode, why: &str) -> Response {
    let err = HallError::new(crate::error::Code::GateDenied, why).hint("hall web --no-open");
    (status, axum::Json(err.reply())).into_response()
}

fn refuse_plain(status: StatusCode, why: &'static str) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        why,
    )
        .into_response()
}

async fn index() -> Response {
    asset(INDEX, "text/html; charset=utf-8")
}

/// `/launch?token=…`: the one-time token for a session cookie, then the board.
async fn launch(
    State(app): State<Arc<App>>,
    Query(q): Query<std::collections::HashMap<String, String>>,
) -> Response {
    let token = q.get("token").map(String::as_str).unwrap_or("");
    let (Ok(id), Ok(csrf)) = (
        crate::hall::web_tokens::random_hex(),
        crate::hall::web_tokens::random_hex(),
    ) else {
        return refuse_json(
            StatusCode::INTERNAL_SERVER_ERROR,
            "no randomness for a session",
        );
    };
    let opened = match app.sessions.lock() {
        Ok(mut s) => s.launch(token, id, csrf),
        Err(_) => {
            return refuse_json(
                StatusCode::INTERNAL_SERVER_ERROR,
                "the sessions are poisoned",
            );
        }
    };
    match opened {
        Ok(id) => {
            let cookie = format!("{}={id}; HttpOnly; SameSite=Strict; Path=/", guard::COOKIE);
            Response::builder()
                .status(StatusCode::SEE_OTHER)
                .header(header::LOCATION, "/")
                .header(header::SET_COOKIE, cookie)
                .body(Body::empty())
                .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
        }
        Err(refusal) => {
            log_refusal(&Method::GET, "/launch", &refusal.why);
            refuse_json(StatusCode::FORBIDDEN, &refusal.why)
        }
    }
}

/// The page's start: its CSRF token, the repository, and whether a newer binary waits.
async fn session(State(app): State<Arc<App>>, caller: axum::Extension<Caller>) -> Response {
    let csrf = app.csrf_of(&caller.0);
    let repo = app.ctx.hall().map(|h| h.repo.name()).unwrap_or_default();
    let newer = app.newer_binary();
    axum::Json(json!({
        "csrf": csrf,
        "repo": repo,
        "version": env!("CARGO_PKG_VERSION"),
        "newer_binary": newer,
        "position": app.feed.head(),
        "pid": std::process::id(),
    }))
    .into_response()
}

/// Every hall command and how a page may use it: `read`, `act`, or refused with why.
async fn action_table() -> Response {
    let rows: Vec<Value> = actions::TABLE
        .iter()
        .map(|(path, kind)| match kind {
            actions::Kind::Read => json!({ "command": path, "kind": "read" }),
            actions::Kind::Act => json!({ "command": path, "kind": "act" }),
            actions::Kind::Refused(why) => {
                json!({ "command": path, "kind": "refused", "why": why })
            }
        })
        .collect();
    axum::Json(json!({ "commands": rows })).into_response()
}

/// The board and the inbox, read from the index as the terminal app reads them.
async fn board(State(app): State<Arc<App>>) -> Response {
    let ctx = app.request_ctx();
    blocking(move || {
        let hall = ctx.hall()?;
        let data = crate::app::data::Data::load(&hall)?;
        let items: Vec<Value> = data
            .items
            .iter()
            .map(|r| {
                json!({
                    "id": r.id, "title": r.title, "state": r.state.as_str(),
                    "hold": r.hold, "round": r.round, "place": r.place,
                })
            })
            .collect();
        let questions: serde_json::Map<String, Value> = data
            .questions
            .into_iter()
            .map(|(q, options)| (q, json!(options)))
            .collect();
        Ok(json!({
            "repo": data.repo,
            "places": crate::app::data::PLACES,
            "items": items,
            "inbox": data.entries,
            "questions": questions,
        }))
    })
    .await
}

#[derive(Deserialize)]
struct ViewQuery {
    /// The argv as a JSON array of strings.
    argv: String,
}

/// A read command's reply: `GET /api/view?argv=["status","H-0001"]`.
async fn view(State(app): State<Arc<App>>, Query(q): Query<ViewQuery>) -> Response {
    let argv: Vec<String> = match serde_json::from_str(&q.argv) {
        Ok(a) => a,
        Err(e) => {
            return refuse_json(
                StatusCode::BAD_REQUEST,
                &format!("argv is not a JSON list of strings: {e}"),
            );
        }
    };
    command(app, argv, false).await
}

#[derive(Deserialize)]
struct RunBody {
    argv: Vec<String>,
}

/// An action: `POST /api/run {"argv": ["answer", "Q-1", "yes"]}`.
async fn run(State(app): State<Arc<App>>, body: axum::Json<RunBody>) -> Response {
    command(app, body.0.argv, true).await
}

/// Runs a command from a page, after the table says it may run this way.
async fn command(app: Arc<App>, argv: Vec<String>, post: bool) -> Response {
    if let Some(why) = actions::refusal(&argv, post) {
        let method = if post { Method::POST } else { Method::GET };
        log_refusal(
            &method,
            &format!("/api/{} {argv:?}", if post { "run" } else { "view" }),
            &why,
        );
        return refuse_json(StatusCode::FORBIDDEN, &why);
    }
    let ctx = app.request_ctx();
    let shown = argv.clone();
    blocking(move || {
        let reply = actions::run(&ctx, &argv)?;
        let json: Value = serde_json::from_str(&reply.json).unwrap_or(Value::Null);
        Ok(json!({ "argv": shown, "ok": true, "json": json, "text": reply.text, "exit": reply.exit }))
    })
    .await
}

/// Runs `f` off the async threads, a panic becoming an internal error; a hall error
/// is the command's reply (HTTP 200 with `ok: false`), not a transport failure.
async fn blocking(f: impl FnOnce() -> Result<Value> + Send + 'static) -> Response {
    let joined = tokio::task::spawn_blocking(move || {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))
    })
    .await;
    match joined {
        Ok(Ok(Ok(value))) => axum::Json(value).into_response(),
        Ok(Ok(Err(err))) => {
            axum::Json(json!({ "ok": false, "error": err.reply().error })).into_response()
        }
        _ => refuse_json(
            StatusCode::INTERNAL_SERVER_ERROR,
            "hall panicked; this is a bug",
        ),
    }
}

/// The journal as server-sent events, from `Last-Event-ID` (a reconnect), `?after=`, or
/// now; the first event, `ready`, carries the position the stream starts from.
async fn events(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    Query(q): Query<std::collections::HashMap<String, String>>,
) -> Sse<impl Stream<Item = std::result::Result<Event, std::convert::Infallible>>> {
    let from = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .or(q.get("after").map(String::as_str))
        .and_then(|s| s.trim().parse::<u64>().ok());
    let head = app.feed.head();
    let start = from.unwrap_or(head);
    let rx = app.feed.moved.subscribe();
    let closing = app.closing.subscribe();
    let first = Event::default()
        .event("ready")
        .id(start.to_string())
        .data(start.to_string());
    let state = (
        app,
        start,
        (rx, closing),
        std::collections::VecDeque::from([first]),
    );
    let stream = futures_util::stream::unfold(
        state,
        |(app, mut last, (mut rx, mut closing), mut pending)| async move {
            loop {
                if *closing.borrow() {
                    return None;
                }
                if let Some(ev) = pending.pop_front() {
                    return Some((Ok(ev), (app, last, (rx, closing), pending)));
                }
                match app.feed.after(last) {
                    After::Batches(batches) if !batches.is_empty() => {
                        for b in batches {
                            last = b.id;
                            pending.push_back(Event::default().id(b.id.to_string()).data(b.data()));
                        }
                        continue;
                    }
                    After::Reset(at) => {
                        last = at;
                        pending.push_back(
                            Event::default()
                                .event("reset")
                                .id(at.to_string())
                                .data(at.to_string()),
                        );
                        continue;
                    }
                    After::Batches(_) => {}
                }
                tokio::select! {
                    moved = rx.changed() => {
                        if moved.is_err() {
                            return None;
                        }
                    }
                    _ = closing.changed() => return None,
                }
            }
        },
    );
    Sse::new(stream).keep_alive(KeepAlive::default())
}

/// `GET /api/chart/usage?by=day`: the usage as an SVG bar chart, drawn here.
async fn usage_chart(
    State(app): State<Arc<App>>,
    Query(q): Query<std::collections::HashMap<String, String>>,
) -> Response {
    let by = q.get("by").cloned().unwrap_or_else(|| "day".into());
    let ctx = app.request_ctx();
    let joined = tokio::task::spawn_blocking(move || {
        actions::run(&ctx, &["usage".into(), "--by".into(), by.clone()]).map(|r| (r, by))
    })
    .await;
    match joined {
        Ok(Ok((reply, by))) => {
            let value: Value = serde_json::from_str(&reply.json).unwrap_or(Value::Null);
            let svg = super::chart::usage(&value, &by);
            ([(header::CONTENT_TYPE, "image/svg+xml")], svg).into_response()
        }
        Ok(Err(e)) => refuse_json(StatusCode::BAD_REQUEST, &e.message),
        Err(_) => refuse_json(
            StatusCode::INTERNAL_SERVER_ERROR,
            "hall panicked; this is a bug",
        ),
    }
}

/// A restart into the binary on disk, keeping the port and the sessions.
pub struct Restart {
    exe: PathBuf,
    port: u16,
    sessions: Vec<(String, String)>,
    cwd: PathBuf,
}

impl Restart {
    /// Starts the new `hall web` on the same port, with the sessions in a private file
    /// it reads and deletes; this process then ends.
    pub fn start(self) -> Result<()> {
        let dir = std::env::temp_dir().join(format!("hall-web-{}", std::process::id()));
        crate::platform::create_private_dir(&dir).map_err(|e| HallError::io(&dir, e))?;
        let file = dir.join("sessions.json");
        let _ = std::fs::remove_file(&file);
        let mut f =
            crate::platform::create_private_file(&file).map_err(|e| HallError::io(&file, e))?;
        let body = serde_json::to_vec(&self.sessions).unwrap_or_default();
        std::io::Write::write_all(&mut f, &body).map_err(|e| HallError::io(&file, e))?;
        drop(f);
        std::process::Command::new(&self.exe)
            .args(["web", "--no-open", "--port", &self.port.to_string()])
            .current_dir(&self.cwd)
            .env(super::RESUME, &file)
            .spawn()
            .map_err(|e| HallError::internal(format!("the new hall web could not start: {e}")))?;
        Ok(())
    }
}

/// The sessions a restarted server carries over (and the file they came in, deleted).
pub fn resume_sessions() -> Vec<(String, String)> {
    let Some(path) = std::env::var_os(super::RESUME).map(PathBuf::from) else {
        return Vec::new();
    };
    let Some(sessions) = std::fs::read(&path)
        .ok()
        .and_then(|b| serde_json::from_slice::<Vec<(String, String)>>(&b).ok())
    else {
        eprintln!(
            "hall web: {} holds no sessions; starting without any",
            path.display()
        );
        return Vec::new();
    };
    // Read once: the file held secrets.
    let _ = std::fs::remove_file(&path);
    if let Some(dir) = path.parent() {
        let _ = std::fs::remove_dir(dir);
    }
    sessions
}

/// `POST /api/restart`: only when the binary on disk changed since this one started.
async fn restart(State(app): State<Arc<App>>) -> Response {
    let (newer, Some(exe)) = (app.newer_binary(), app.binary_path.clone()) else {
        return refuse_json(
            StatusCode::INTERNAL_SERVER_ERROR,
            "the binary's path is unknown",
        );
    };
    if !newer {
        return axum::Json(json!({ "ok": false, "error": { "code": "USAGE", "message": "the binary on disk is the one running", "next": ["hall --version"] } })).into_response();
    }
    let sessions = app
        .sessions
        .lock()
        .map(|s| s.all().map(|(k, v)| (k.clone(), v.csrf.clone())).collect())
        .unwrap_or_default();
    if let Ok(mut r) = app.restart.lock() {
        *r = Some(Restart {
            exe,
            port: app.port,
            sessions,
            cwd: app.ctx.cwd.clone(),
        });
    }
    app.stop.notify_one();
    axum::Json(json!({ "ok": true, "restarting": true })).into_response()
}
