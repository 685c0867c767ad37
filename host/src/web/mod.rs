//! `hall web`: the terminal app's views, the inbox and the settings in a browser, on
//! 127.0.0.1 only (docs/decisions/0021-the-web-app.md).
//!
//! The pages are one embedded script and style sheet; everything they show is a hall
//! command's reply or the board read from the index, and everything they do is a hall
//! command's argv ([`actions`]), run through the command line's parse and dispatch as
//! `you`, recorded `via: web`. [`guard`] decides who may ask; [`feed`] streams the
//! journal to the pages as server-sent events.

pub mod actions;
mod chart;
pub mod feed;
pub mod guard;
mod server;

use std::io::Write;
use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::time::{Duration, Instant};

use crate::cli::WebArgs;
use crate::commands::Reply;
use crate::error::{HallError, IoContext, Result};
use crate::hall::Ctx;

/// The environment variable naming the file a restarted `hall web` takes its sessions
/// from (written by the process it replaces, read once and deleted).
pub const RESUME: &str = "HALL_WEB_RESUME";

/// Serves until Ctrl-C (or a restart into a newer binary).
pub fn main(ctx: &Ctx, args: &WebArgs) -> Result<Reply> {
    // The app acts as you; a session's Bash must not open one for itself.
    ctx.person("web", "serves the app that acts as you in a browser")?;
    let hall = ctx.hall()?;
    let listener = bind(args.port)?;
    let port = listener
        .local_addr()
        .map_err(|e| HallError::internal(format!("the listener has no address: {e}")))?
        .port();
    let resumed = server::resume_sessions();
    let launch = crate::hall::web_tokens::random_hex()?;
    let url = format!("http://127.0.0.1:{port}/launch?token={launch}");
    let app = server::App::new(ctx, &hall, port, launch, resumed)?;
    {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "hall web: {}", hall.repo.name());
        let _ = writeln!(out, "launch: {url}");
        let _ = writeln!(
            out,
            "the launch URL works once; Ctrl-C stops the server (`hall web token create NAME` makes a token for scripts)"
        );
        let _ = out.flush();
    }
    if !args.no_open
        && let Err(e) = crate::platform::open_file(std::path::Path::new(&url))
    {
        eprintln!("hall web: the browser could not be opened ({e}); open the launch URL by hand");
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| HallError::internal(format!("the web server's runtime: {e}")))?;
    let restart = runtime.block_on(server::serve(app, listener))?;
    if let Some(next) = restart {
        next.start()?;
    }
    let reply = serde_json::json!({ "port": port, "stopped": true });
    Ok(Reply::new(&reply, "hall web stopped".into()))
}

/// A listener on 127.0.0.1 only: the app never listens on another address. A restart
/// waits a few seconds for the port its predecessor is giving up.
fn bind(port: Option<u16>) -> Result<TcpListener> {
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port.unwrap_or(0)));
    let deadline = Instant::now()
        + Duration::from_secs(if std::env::var_os(RESUME).is_some() {
            10
        } else {
            0
        });
    loop {
        match TcpListener::bind(addr) {
            Ok(l) => {
                l.set_nonblocking(true)
                    .at(std::path::Path::new("127.0.0.1"))?;
                return Ok(l);
            }
            Err(_) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(50)),
            Err(e) => {
                return Err(HallError::new(
                    crate::error::Code::CommandFailed,
                    format!("127.0.0.1:{} can't be listened on: {e}", addr.port()),
                )
                .hint("hall web --no-open")
                .hint("hall web --port <another port>"));
            }
        }
    }
}
