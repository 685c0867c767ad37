//! One line for each kind of event: what `hall log`, the daemon's lines and the
//! record say it did.

use crate::item::EventKind;

/// A one-line human summary of an event.
pub fn describe(kind: &EventKind) -> String {
    match kind {
        EventKind::Created { title, branch, .. } => format!("\"{title}\" on {branch}"),
        EventKind::ProposedReady { summary, ask, .. } => {
            format!("{summary}{}", if *ask { " (asks you)" } else { "" })
        }
        EventKind::Ready { sha, round, note } => {
            format!(
                "froze {} for round {round}{}",
                sha.short(),
                note.as_ref().map(|n| format!(": {n}")).unwrap_or_default()
            )
        }
        EventKind::PulledBack { from, reason } => {
            format!(
                "from {from}{}",
                reason
                    .as_ref()
                    .map(|r| format!(": {r}"))
                    .unwrap_or_default()
            )
        }
        EventKind::Dropped { reason } => reason.clone(),
        EventKind::Retried {
            reason, released, ..
        } => match released {
            Some(k) => format!("released {} hold: {reason}", k.as_str()),
            None => format!("one more round: {reason}"),
        },
        EventKind::CheckRun {
            check,
            exit_code,
            duration_ms,
            cached,
            ..
        } => {
            format!(
                "`{check}` exit {exit_code} in {duration_ms} ms{}",
                if *cached { " (cached)" } else { "" }
            )
        }
        EventKind::SetupRun {
            command,
            exit_code,
            duration_ms,
            ..
        } => format!("setup `{command}` exit {exit_code} in {duration_ms} ms"),
        EventKind::ChecksPassed { sha } => format!("all checks green at {}", sha.short()),
        EventKind::ChecksFailed { failed, .. } => format!("failed: {}", failed.join(", ")),
        EventKind::Verdict {
            approved,
            findings,
            round,
            by,
            learnings,
            ..
        } => {
            format!(
                "round {round}: {} ({} findings){}{}",
                if *approved {
                    "approved"
                } else {
                    "changes requested"
                },
                findings.len(),
                match by.as_deref() {
                    Some("you") => ", a person's override",
                    Some("carried") => ", carried across a rebase",
                    _ => "",
                },
                if learnings.is_empty() {
                    String::new()
                } else {
                    format!("; used {}", learnings.join(", "))
                }
            )
        }
        EventKind::Rebased { from, sha, .. } => format!(
            "rebased {} to {}; the patch is unchanged, so the approval carries",
            from.short(),
            sha.short()
        ),
        EventKind::RunFailed { role, reason, run } => format!(
            "{role} run failed: {reason}{}",
            run.as_ref().map(|r| format!(" ({r})")).unwrap_or_default()
        ),
        EventKind::Resumed { qid, session, ok } => format!(
            "{qid}: resumed session {session}{}",
            if *ok { "" } else { " (the resume failed)" }
        ),
        EventKind::Paused { reason, until } => format!("paused until {until}: {reason}"),
        EventKind::BudgetGranted { day, tokens } => {
            format!("{tokens} more tokens allowed for {day}")
        }
        EventKind::Escalated { reason } => reason.clone(),
        EventKind::Hallmarked { sha, round, .. } => {
            format!("hallmark on {} (round {round})", sha.short())
        }
        EventKind::FixSubmitted { sha, fixed, .. } => {
            format!("{} fixes {}", sha.short(), fixed.join(", "))
        }
        EventKind::Shipped { pr, .. } => pr.clone().unwrap_or_else(|| "shipped".into()),
        EventKind::Reopened { reason, .. } => reason.clone(),
        EventKind::Restored {} => "CI passed on a re-run".into(),
        EventKind::RebaseRequested { base } => format!("rebase onto {base}"),
        EventKind::Restacked { from, to } => format!("now on {to} (was {from})"),
        EventKind::FollowUpOf { pr, earlier } => match earlier {
            Some(i) => format!("follows up on {pr} ({i})"),
            None => format!("follows up on {pr}"),
        },
        EventKind::IssueOf { number, labels, .. } if labels.is_empty() => {
            format!("from issue #{number}")
        }
        EventKind::IssueOf { number, labels, .. } => {
            format!("from issue #{number} ({})", labels.join(", "))
        }
        EventKind::Intake {
            split,
            reasons,
            problems,
            ..
        } => match (split, problems.first()) {
            (true, _) => "the intake split the request into parts".into(),
            (false, Some(p)) => format!("one item: {p} ({})", reasons.join(", ")),
            (false, None) => format!("one item ({})", reasons.join(", ")),
        },
        EventKind::PartOf { parent } => format!("a part of {parent}"),
        EventKind::PartAdded { child, title, .. } => format!("part {child}: \"{title}\""),
        EventKind::Merged { into, sha, commit } => format!(
            "merged at {} into {into} (merge commit {})",
            sha.short(),
            commit.short()
        ),
        EventKind::ReplyDrafted { comment, body } => {
            format!("a reply to review comment #{comment} drafted: {body}")
        }
        EventKind::ReplyPosted { comment } => format!("the reply to #{comment} posted on the PR"),
        EventKind::FollowThrough { kind, brief } => {
            format!("a dev run is due ({}): {brief}", kind.as_str())
        }
        EventKind::Delivered { pr, merged: true } => format!("{pr} merged"),
        EventKind::Delivered { pr, merged: false } => format!("{pr} closed without merging"),
        EventKind::WorktreeRemoved { path } => format!("worktree {path} removed"),
        EventKind::Merging { pr, head, onto } => {
            format!("merging PR #{pr} at {} onto {}", head.short(), onto.short())
        }
        EventKind::PrMerged { pr, head, onto } => {
            format!("PR #{pr} merged at {} onto {}", head.short(), onto.short())
        }
        EventKind::Held { kind, reason, .. } => format!("{}: {reason}", kind.as_str()),
        EventKind::Asked { qid, question, .. } => format!("{qid}: {question}"),
        EventKind::Answered {
            qid,
            answer,
            by_default,
        } => {
            format!(
                "{qid}: {answer}{}",
                if *by_default { " (default)" } else { "" }
            )
        }
        EventKind::Prompt { text, .. } => clip(text),
        EventKind::Turn { summary, .. } => clip(summary),
        EventKind::Commit { sha, subject, .. } => format!("{} {subject}", sha.short()),
        EventKind::Usage(u) => format!(
            "{} {}: {} in / {} out, ${:.4}",
            u.role, u.model, u.input, u.output, u.cost_usd
        ),
        EventKind::Notification { kind, message, .. } => format!("{kind}: {message}"),
        EventKind::GateDenied { gate, command, .. } => format!("{gate} gate: {}", clip(command)),
        EventKind::ToolPolicy {
            detector,
            action,
            would_block,
            call,
            ..
        } => {
            let what = if *would_block { "would block" } else { action };
            format!("{detector} {what}: {}", clip(call))
        }
        EventKind::RulesUsed { base, gating } => format!(
            "checks gated by the rules at {} (gating {})",
            base.short(),
            &gating[..gating.len().min(12)]
        ),
        EventKind::RoomUsed {
            world,
            room,
            sha256,
            source,
        } => {
            format!(
                "{world} decided by {room} ({source}, sha256 {})",
                &sha256[..sha256.len().min(12)]
            )
        }
        EventKind::InboxDismissed { key, .. } => key.clone(),
        EventKind::Notified {
            key,
            channel,
            how,
            reminder,
            ..
        } => match (how.as_str(), reminder) {
            ("deferred", _) => format!("{key} deferred on {channel} to the digest"),
            ("digest", _) => format!("{key} in the digest on {channel}"),
            (_, 0) => format!("{key} sent on {channel}"),
            (_, n) => format!("{key} reminder {n} on {channel}"),
        },
        EventKind::Attached {
            file, url, caption, ..
        } => {
            let what = url.as_deref().or(file.as_deref()).unwrap_or("a plate");
            match caption {
                Some(c) => format!("attached {what}: {}", clip(c)),
                None => format!("attached {what}"),
            }
        }
        EventKind::Distilled {
            proposed,
            retired,
            words,
            failed,
            ..
        } => {
            let ids = |v: &[crate::item::LearningId]| {
                v.iter()
                    .map(|l| l.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let mut said = Vec::new();
            if !proposed.is_empty() {
                said.push(format!("proposed {}", ids(proposed)));
            }
            if !retired.is_empty() {
                said.push(format!("retired {} (contradicted)", ids(retired)));
            }
            if *words {
                said.push("wrote the Gazette's words".to_string());
            }
            match (said.is_empty(), failed) {
                (true, true) => "the librarian's run gave nothing usable".to_string(),
                (true, false) => "the librarian proposed nothing".to_string(),
                _ => format!("the librarian {}", said.join("; ")),
            }
        }
        EventKind::TornLine { line, bytes } => {
            format!("line {line} ({bytes} bytes) was torn by a crash")
        }
        EventKind::LearningProposed {
            learning,
            version,
            kind,
            title,
            replaces,
            accepted,
        } => {
            let what = match replaces {
                Some(r) => format!("update of v{r} to v{version}"),
                None => format!("v{version}"),
            };
            let how = if *accepted { "accepted" } else { "proposed" };
            format!("{learning} {kind} {what} {how}: {}", clip(title))
        }
        EventKind::LearningAccepted { learning, version } => {
            format!("{learning} v{version} accepted")
        }
        EventKind::LearningRejected {
            learning,
            version,
            restored,
        } => match restored {
            Some(r) => format!("{learning} v{version} rejected; v{r} restored"),
            None => format!("{learning} v{version} rejected"),
        },
        EventKind::LearningRetired {
            learning, version, ..
        } => format!("{learning} v{version} retired"),
        EventKind::LearningRestored { learning, version } => {
            format!("{learning} v{version} in force again")
        }
        EventKind::Other => "(written by a newer hall)".into(),
    }
}

fn clip(s: &str) -> String {
    let one = s.lines().next().unwrap_or("");
    if one.chars().count() > 80 {
        format!("{}…", one.chars().take(80).collect::<String>())
    } else {
        one.to_string()
    }
}
