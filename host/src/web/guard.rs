//! Who may talk to the web app, decided per request before any handler runs.
//!
//! Three defences, all on every request:
//! - the `Host` header must name this server as `127.0.0.1:<port>` or `localhost:<port>`,
//!   so a page on another name that resolves to 127.0.0.1 (DNS rebinding) is refused;
//! - the caller holds a session (an HttpOnly, SameSite=Strict cookie, got once with
//!   the one-time launch token) or an API token (`Authorization: Bearer`);
//! - a request that changes something and rides on the cookie must come from this
//!   origin (`Origin`, and `Sec-Fetch-Site` when the browser sends it) and carry the
//!   session's CSRF token in `X-Hall-CSRF`.
//!
//! The functions here are pure, so each rule is tested on its own; `server.rs` applies
//! them and logs every refusal.

use std::collections::HashMap;

/// The session cookie's name.
pub const COOKIE: &str = "hall_session";
/// The header a page sends its CSRF token in.
pub const CSRF_HEADER: &str = "x-hall-csrf";

/// Why a request is refused, with the HTTP status it gets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    pub status: u16,
    pub why: String,
}

impl Refusal {
    fn new(status: u16, why: impl Into<String>) -> Self {
        Self {
            status,
            why: why.into(),
        }
    }
}

/// The `Host` header must be this server's own name for itself.
pub fn host(header: Option<&str>, port: u16) -> Result<(), Refusal> {
    let ok = header.is_some_and(|h| {
        h == format!("127.0.0.1:{port}") || h.eq_ignore_ascii_case(&format!("localhost:{port}"))
    });
    if ok {
        Ok(())
    } else {
        Err(Refusal::new(
            403,
            format!(
                "the Host header is {}, not 127.0.0.1:{port} or localhost:{port}",
                header.map_or("missing".to_string(), |h| format!("`{h}`"))
            ),
        ))
    }
}

/// Whether `origin` is this server.
pub fn same_origin(origin: &str, port: u16) -> bool {
    origin == format!("http://127.0.0.1:{port}")
        || origin.eq_ignore_ascii_case(&format!("http://localhost:{port}"))
}

/// How a request proved who it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Caller {
    /// A browser session: the cookie's value.
    Session(String),
    /// A script: the API token's name.
    Token(String),
}

/// The session cookie's value in a `Cookie` header.
pub fn session_cookie(header: Option<&str>) -> Option<&str> {
    header?.split(';').find_map(|part| {
        let (name, value) = part.trim().split_once('=')?;
        (name == COOKIE && !value.is_empty()).then_some(value)
    })
}

/// The bearer token in an `Authorization` header.
pub fn bearer(header: Option<&str>) -> Option<&str> {
    let h = header?;
    let (scheme, token) = h.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim())
        .filter(|t| !t.is_empty())
}

/// The request's headers that the rules read.
#[derive(Clone, Copy, Debug, Default)]
pub struct Seen<'a> {
    pub origin: Option<&'a str>,
    pub fetch_site: Option<&'a str>,
    pub csrf: Option<&'a str>,
}

/// A request that changes something: from this origin, with the session's CSRF token
/// when it rides on the cookie. A script with a token sends no cookie, so it can't be
/// forged by a page; if it does send an `Origin`, that must be this server too.
pub fn may_change(
    caller: &Caller,
    seen: Seen<'_>,
    csrf: Option<&str>,
    port: u16,
) -> Result<(), Refusal> {
    if let Some(origin) = seen.origin
        && !same_origin(origin, port)
    {
        return Err(Refusal::new(
            403,
            format!("a request from another origin (`{origin}`)"),
        ));
    }
    if let Some(site) = seen.fetch_site
        && site != "same-origin"
    {
        return Err(Refusal::new(
            403,
            format!("a request from another site (Sec-Fetch-Site: {site})"),
        ));
    }
    let Caller::Session(_) = caller else {
        return Ok(());
    };
    if seen.origin.is_none() {
        return Err(Refusal::new(403, "a change without an Origin header"));
    }
    match (seen.csrf, csrf) {
        (Some(sent), Some(want)) if crate::hall::web_tokens::same(sent, want) => Ok(()),
        (None, _) => Err(Refusal::new(403, "the CSRF token is missing")),
        _ => Err(Refusal::new(403, "the CSRF token is wrong")),
    }
}

/// One browser session.
#[derive(Clone, Debug)]
pub struct Session {
    pub csrf: String,
}

/// The launch token (until used) and the sessions it and its successors opened.
#[derive(Debug, Default)]
pub struct Sessions {
    launch: Option<String>,
    sessions: HashMap<String, Session>,
}

impl Sessions {
    pub fn new(launch: String) -> Self {
        Self {
            launch: Some(launch),
            sessions: HashMap::new(),
        }
    }

    /// Exchanges the launch token for a new session (its id and CSRF token); the token
    /// works once.
    pub fn launch(
        &mut self,
        token: &str,
        session: String,
        csrf: String,
    ) -> Result<String, Refusal> {
        match &self.launch {
            Some(want) if crate::hall::web_tokens::same(token, want) => {
                self.launch = None;
                self.sessions.insert(session.clone(), Session { csrf });
                Ok(session)
            }
            Some(_) => Err(Refusal::new(403, "the launch token is wrong")),
            None => Err(Refusal::new(
                403,
                "the launch token was used already; run `hall web` again for a new one",
            )),
        }
    }

    /// The session with this cookie value.
    pub fn get(&self, id: &str) -> Option<&Session> {
        self.sessions
            .iter()
            .find(|(k, _)| crate::hall::web_tokens::same(k, id))
            .map(|(_, s)| s)
    }

    /// Every session, for a restart to carry over.
    pub fn all(&self) -> impl Iterator<Item = (&String, &Session)> {
        self.sessions.iter()
    }

    /// Adds a session carried over from the process this one replaced.
    pub fn keep(&mut self, id: String, csrf: String) {
        self.sessions.insert(id, Session { csrf });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_this_servers_own_names_are_accepted_as_host() {
        assert!(host(Some("127.0.0.1:8080"), 8080).is_ok());
        assert!(host(Some("localhost:8080"), 8080).is_ok());
        assert!(host(Some("LOCALHOST:8080"), 8080).is_ok());
        for bad in [
            "127.0.0.1:8081",
            "evil.example:8080",
            "127.0.0.1",
            "localhost",
            "[::1]:8080",
        ] {
            assert_eq!(
                host(Some(bad), 8080).map_err(|r| r.status),
                Err(403),
                "{bad}"
            );
        }
        assert!(host(None, 8080).is_err());
    }

    #[test]
    fn the_cookie_and_the_bearer_token_are_read_exactly() {
        assert_eq!(
            session_cookie(Some("a=1; hall_session=abc; b=2")),
            Some("abc")
        );
        assert_eq!(session_cookie(Some("xhall_session=abc")), None);
        assert_eq!(session_cookie(Some("hall_session=")), None);
        assert_eq!(bearer(Some("Bearer hallweb_x")), Some("hallweb_x"));
        assert_eq!(bearer(Some("bearer  hallweb_x ")), Some("hallweb_x"));
        assert_eq!(bearer(Some("Basic abc")), None);
        assert_eq!(bearer(Some("Bearer ")), None);
    }

    #[test]
    fn a_change_needs_this_origin_and_the_csrf_token() {
        let session = Caller::Session("s".into());
        let ok = Seen {
            origin: Some("http://127.0.0.1:9000"),
            fetch_site: Some("same-origin"),
            csrf: Some("t"),
        };
        assert!(may_change(&session, ok, Some("t"), 9000).is_ok());
        let cross = Seen {
            origin: Some("http://evil.example"),
            ..ok
        };
        assert!(may_change(&session, cross, Some("t"), 9000).is_err());
        let site = Seen {
            fetch_site: Some("cross-site"),
            ..ok
        };
        assert!(may_change(&session, site, Some("t"), 9000).is_err());
        let no_csrf = Seen { csrf: None, ..ok };
        assert_eq!(
            may_change(&session, no_csrf, Some("t"), 9000).map_err(|r| r.why),
            Err("the CSRF token is missing".into())
        );
        let wrong = Seen {
            csrf: Some("u"),
            ..ok
        };
        assert!(may_change(&session, wrong, Some("t"), 9000).is_err());
        let no_origin = Seen { origin: None, ..ok };
        assert!(may_change(&session, no_origin, Some("t"), 9000).is_err());
        // A script's token is no cookie a page could ride on: no CSRF token needed,
        // but a foreign Origin is still refused.
        let script = Caller::Token("ci".into());
        assert!(may_change(&script, Seen::default(), None, 9000).is_ok());
        assert!(may_change(&script, cross, None, 9000).is_err());
    }

    #[test]
    fn the_launch_token_opens_one_session_once() {
        let mut s = Sessions::new("launch".into());
        assert!(s.launch("nope", "a".into(), "c".into()).is_err());
        assert_eq!(s.launch("launch", "a".into(), "c".into()), Ok("a".into()));
        assert_eq!(s.get("a").map(|x| x.csrf.clone()), Some("c".into()));
        let again = s
            .launch("launch", "b".into(), "d".into())
            .expect_err("used");
        assert!(again.why.contains("used already"), "{}", again.why);
        assert!(s.get("b").is_none());
    }
}
