//! The desktop: the system's own notification service through notify-rust (D-Bus's
//! `org.freedesktop.Notifications` on Linux and the BSDs, the Notification Center on
//! macOS, toasts on Windows; the crate picks the back end for the target).

use std::time::Duration;

use super::{Message, Outcome};

/// How long the notification service may take to take a message.
const TIMEOUT: Duration = Duration::from_secs(10);

/// Shows `msg`. The call runs on a thread of its own so a service that never answers
/// costs this wait, not the worker.
pub fn show(msg: &Message) -> Outcome {
    let mut n = notify_rust::Notification::new();
    n.summary(&msg.title).appname("hall");
    let body = if msg.answer.is_empty() {
        msg.body.clone()
    } else {
        format!("{}\n{}", msg.body, msg.answer)
    };
    n.body(&body);
    let (tx, rx) = std::sync::mpsc::channel();
    let spawned = std::thread::Builder::new()
        .name("hall-desktop-notify".into())
        .spawn(move || {
            let _ = tx.send(n.show().map(|_| ()).map_err(|e| e.to_string()));
        });
    if let Err(e) = spawned {
        return Outcome::Failed(format!("desktop: {e}"));
    }
    match rx.recv_timeout(TIMEOUT) {
        Ok(Ok(())) => Outcome::Sent,
        Ok(Err(e)) => Outcome::Failed(format!("desktop: {e}")),
        Err(_) => Outcome::Failed(format!(
            "desktop: the notification service did not answer in {}s",
            TIMEOUT.as_secs()
        )),
    }
}
