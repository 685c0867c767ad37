//! The phone channels: one HTTPS request each, through ureq (a small blocking client
//! with rustls and Mozilla's roots built in, so it needs neither OpenSSL nor the
//! system's certificate store; docs/decisions/0019-notifications.md).

use std::time::Duration;

use serde_json::json;

use super::{Message, Outcome, Target};

/// Telegram refuses a message longer than this, counted in UTF-16 units of the text
/// its HTML parse mode leaves.
pub const TELEGRAM_LIMIT: usize = 4096;

/// How long a rate limit that names no wait makes us wait.
const DEFAULT_BACKOFF: Duration = Duration::from_secs(5);

/// A request: where, its JSON body and its headers.
#[derive(Debug, PartialEq)]
pub struct Request {
    pub url: String,
    pub body: serde_json::Value,
    pub headers: Vec<(&'static str, String)>,
}

/// The request `target` takes to say `msg` (never called for the desktop).
pub fn request(target: &Target, msg: &Message) -> Request {
    let mut headers = vec![("X-Hall-Key", msg.key.clone())];
    match target {
        Target::Ntfy {
            server,
            topic,
            token,
        } => {
            if let Some(t) = token {
                headers.push(("Authorization", format!("Bearer {t}")));
            }
            let mut message = msg.body.clone();
            if !msg.answer.is_empty() {
                message.push_str(&format!("\n→ {}", msg.answer));
            }
            Request {
                url: format!("{server}/"),
                body: json!({
                    "topic": topic,
                    "title": msg.title,
                    "message": message,
                    "tags": ["hallmark"],
                    "priority": 4,
                }),
                headers,
            }
        }
        Target::Telegram {
            api,
            token,
            chat_id,
        } => Request {
            url: format!("{api}/bot{token}/sendMessage"),
            body: json!({
                "chat_id": chat_id,
                "text": telegram_text(msg),
                "parse_mode": "HTML",
                "link_preview_options": {"is_disabled": true},
            }),
            headers,
        },
        Target::Slack { webhook } => {
            let mut text = format!(
                "*{}*\n{}",
                slack_escape(&msg.title),
                slack_escape(&msg.body)
            );
            if !msg.answer.is_empty() {
                text.push_str(&format!("\n`{}`", slack_escape(&msg.answer)));
            }
            Request {
                url: webhook.clone(),
                body: json!({ "text": text }),
                headers,
            }
        }
        Target::Desktop => Request {
            url: String::new(),
            body: serde_json::Value::Null,
            headers,
        },
    }
}

/// Sends `msg` on a phone channel, once.
pub fn send(target: &Target, msg: &Message) -> Outcome {
    let req = request(target, msg);
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(20)))
        .http_status_as_error(false)
        .user_agent(concat!("hallmark/", env!("CARGO_PKG_VERSION")))
        .build()
        .into();
    let mut call = agent.post(&req.url);
    for (k, v) in &req.headers {
        call = call.header(*k, v);
    }
    let mut resp = match call.send_json(&req.body) {
        Ok(r) => r,
        Err(e) => {
            return Outcome::Failed(format!(
                "{}: {}",
                target.channel().as_str(),
                redact(&e.to_string(), target)
            ));
        }
    };
    let status = resp.status().as_u16();
    let retry_header = resp
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    let text = resp
        .body_mut()
        .with_config()
        .limit(64 * 1024)
        .read_to_string()
        .unwrap_or_default();
    judge(target, status, retry_header, &text)
}

/// What a response means: sent, slow down (429, or Telegram's `retry_after`), or failed.
pub fn judge(target: &Target, status: u16, retry_after: Option<u64>, body: &str) -> Outcome {
    let parsed: serde_json::Value = serde_json::from_str(body).unwrap_or_default();
    let telegram_wait = parsed["parameters"]["retry_after"].as_u64();
    let wait = telegram_wait.or(retry_after);
    if status == 429 || (matches!(target, Target::Telegram { .. }) && telegram_wait.is_some()) {
        let d = wait.map_or(DEFAULT_BACKOFF, Duration::from_secs);
        return Outcome::RetryAfter(d.min(Duration::from_secs(3600)));
    }
    let ok = (200..300).contains(&status)
        && match target {
            // The Bot API answers 200 with `"ok": true`; anything else is a failure.
            Target::Telegram { .. } => parsed["ok"].as_bool() == Some(true),
            _ => true,
        };
    if ok {
        return Outcome::Sent;
    }
    let said = parsed["description"]
        .as_str()
        .or(parsed["error"].as_str())
        .map(str::to_string)
        .unwrap_or_else(|| body.chars().take(200).collect());
    Outcome::Failed(format!(
        "{}: HTTP {status}: {}",
        target.channel().as_str(),
        redact(said.trim(), target)
    ))
}

/// An error's text with the channel's secrets taken out (a Telegram token sits in the
/// URL an error may quote).
fn redact(text: &str, target: &Target) -> String {
    let secret = match target {
        Target::Telegram { token, .. } => Some(token.as_str()),
        Target::Slack { webhook } => Some(webhook.as_str()),
        Target::Ntfy { token, .. } => token.as_deref(),
        Target::Desktop => None,
    };
    match secret {
        Some(s) if !s.is_empty() => text.replace(s, "…"),
        _ => text.to_string(),
    }
}

fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn slack_escape(s: &str) -> String {
    html_escape(s)
}

fn utf16_len(s: &str) -> usize {
    s.encode_utf16().count()
}

/// The Telegram text in HTML parse mode: the title in bold, the body, the command as
/// code; the body is cut (with `…`) so the text Telegram counts stays within its limit.
pub fn telegram_text(msg: &Message) -> String {
    let tail = if msg.answer.is_empty() {
        String::new()
    } else {
        format!("\n{}", msg.answer)
    };
    let fixed = utf16_len(&msg.title) + 1 + utf16_len(&tail);
    let room = TELEGRAM_LIMIT.saturating_sub(fixed);
    let body = if utf16_len(&msg.body) <= room {
        msg.body.clone()
    } else {
        let mut out = String::new();
        let mut used = 0;
        for c in msg.body.chars() {
            if used + c.len_utf16() + 1 > room {
                break;
            }
            used += c.len_utf16();
            out.push(c);
        }
        out.push('…');
        out
    };
    let mut text = format!("<b>{}</b>\n{}", html_escape(&msg.title), html_escape(&body));
    if !msg.answer.is_empty() {
        text.push_str(&format!("\n<code>{}</code>", html_escape(&msg.answer)));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(body: &str) -> Message {
        Message {
            title: "hall · shop: H-0003 asks".into(),
            body: body.into(),
            answer: "hall answer Q-4 \"…\"".into(),
            key: "question:Q-4@2026-12-05T10:00:00Z#0".into(),
        }
    }

    fn visible(html: &str) -> String {
        let mut out = String::new();
        let mut in_tag = false;
        for c in html.chars() {
            match c {
                '<' => in_tag = true,
                '>' => in_tag = false,
                c if !in_tag => out.push(c),
                _ => {}
            }
        }
        out.replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&amp;", "&")
    }

    #[test]
    fn telegram_text_escapes_html_and_keeps_within_the_limit() {
        let t = telegram_text(&msg("a <b> & c"));
        assert_eq!(
            t,
            "<b>hall · shop: H-0003 asks</b>\na &lt;b&gt; &amp; c\n<code>hall answer Q-4 \"…\"</code>"
        );
        // Long bodies, with characters of two UTF-16 units and ones HTML escapes.
        for body in ["x".repeat(5000), "😀".repeat(3000), "<&>".repeat(2000)] {
            let t = telegram_text(&msg(&body));
            let seen = visible(&t);
            assert!(utf16_len(&seen) <= TELEGRAM_LIMIT, "{}", utf16_len(&seen));
            assert!(
                utf16_len(&seen) > TELEGRAM_LIMIT - 10,
                "cut no more than needed"
            );
            assert!(
                seen.ends_with("hall answer Q-4 \"…\""),
                "the command survives"
            );
        }
    }

    #[test]
    fn a_rate_limit_is_read_from_the_status_the_header_or_telegrams_body() {
        let tg = Target::Telegram {
            api: "http://x".into(),
            token: "123:SECRET".into(),
            chat_id: "1".into(),
        };
        let slack = Target::Slack {
            webhook: "http://hooks/T/SECRET".into(),
        };
        assert_eq!(
            judge(
                &tg,
                429,
                None,
                r#"{"ok":false,"error_code":429,"parameters":{"retry_after":7}}"#
            ),
            Outcome::RetryAfter(Duration::from_secs(7))
        );
        assert_eq!(
            judge(&slack, 429, Some(3), "rate_limited"),
            Outcome::RetryAfter(Duration::from_secs(3))
        );
        assert_eq!(
            judge(&slack, 429, None, ""),
            Outcome::RetryAfter(DEFAULT_BACKOFF)
        );
        assert_eq!(judge(&slack, 200, None, "ok"), Outcome::Sent);
        assert_eq!(
            judge(&tg, 200, None, r#"{"ok":true,"result":{}}"#),
            Outcome::Sent
        );
        match judge(
            &tg,
            401,
            None,
            r#"{"ok":false,"description":"Unauthorized for 123:SECRET"}"#,
        ) {
            Outcome::Failed(why) => {
                assert!(
                    why.contains("HTTP 401") && why.contains("Unauthorized"),
                    "{why}"
                );
                assert!(!why.contains("SECRET"), "the token is redacted: {why}");
            }
            other => panic!("{other:?}"),
        }
    }
}
