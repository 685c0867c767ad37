//! The watchman: items in the loop that have sat in one state past `stuck_after` with
//! nobody working on them get one `stuck` notice per stay.

use std::time::Duration;

use super::lease;
use crate::error::Result;
use crate::hall::{Ctx, Hall};
use crate::item::{EventKind, State};

/// One round of the corridor; returns a line for each item it flagged.
pub fn patrol(hall: &Hall, ctx: &Ctx) -> Result<Vec<String>> {
    let after =
        crate::clock::parse_duration(&hall.config.stuck_after).unwrap_or(Duration::from_secs(1800));
    let watchman = ctx.acting_as("watchman");
    let root = hall.journal.root().to_path_buf();
    let mut did = Vec::new();
    for row in hall.index()?.items(false)? {
        if !matches!(
            row.state,
            State::Checks | State::Review | State::Fixing | State::Hallmarked
        ) || row.hold.is_some()
        {
            continue;
        }
        let Some(since) = crate::clock::parse(&row.since) else {
            continue;
        };
        if watchman.now.duration_since(since).unwrap_or_default() < after
            || lease::current(&root, row.id).is_some()
        {
            continue;
        }
        let message = format!(
            "{} has been in {} since {} with no worker",
            row.id, row.state, row.since
        );
        let written = hall.journal.append_checked(Some(row.id), |events| {
            let noted = events.iter().rev().take_while(|e| e.t >= row.since).any(
                |e| matches!(&e.kind, EventKind::Notification { kind, .. } if kind == "stuck"),
            );
            Ok::<_, crate::error::HallError>(if noted {
                Vec::new()
            } else {
                vec![watchman.event(
                    Some(row.id),
                    EventKind::Notification {
                        kind: "stuck".into(),
                        message: message.clone(),
                        session: None,
                    },
                )]
            })
        })?;
        if !written.is_empty() {
            did.push(message);
        }
    }
    Ok(did)
}
