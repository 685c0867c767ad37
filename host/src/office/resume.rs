//! Questions the loop follows up: a default is taken once its wait has run out (and the
//! journal says so), and an answered question's session is resumed with the answer,
//! `claude -p --resume <session> "<answer>"`, once.

use super::runs::{self, usage_events};
use crate::claude::Headless;
use crate::error::Result;
use crate::hall::confine::{RunKind, Scope};
use crate::hall::{Ctx, Hall};
use crate::item::{EventKind, ItemId, QuestionId, fold};

/// Whether a pass would do anything: a question whose wait ran out, or an answer whose
/// session hasn't been resumed yet.
pub fn pending(hall: &Hall, ctx: &Ctx) -> Result<bool> {
    let now = ctx.stamp.clone();
    let questions = hall.index()?.questions(false)?;
    Ok(questions
        .iter()
        .filter(|q| q.item.is_some())
        .any(|q| match &q.answer {
            // A default is due.
            None => {
                q.default.is_some() && q.wait_until.as_deref().is_some_and(|u| u <= now.as_str())
            }
            // An answer waits for its session.
            Some(_) => q.session.is_some() && !q.resumed,
        }))
}

/// One pass over the repository's questions; returns what it did.
pub fn run(hall: &Hall, ctx: &Ctx) -> Result<Vec<String>> {
    let mut did = Vec::new();
    let questions = hall.index()?.questions(false)?;
    for q in questions {
        let Some(id) = q.item else { continue };
        // A default is taken when the wait ran out with no answer.
        if q.answer.is_none()
            && let (Some(default), Some(until)) = (&q.default, &q.wait_until)
            && until.as_str() <= ctx.stamp.as_str()
        {
            let qid = QuestionId(q.qid);
            let written = hall
                .journal
                .append_checked(Some(id), |events| -> Result<_> {
                    let item = fold(events);
                    let open = item
                        .questions
                        .get(&q.qid)
                        .is_some_and(|q| q.answer.is_none());
                    Ok(if open {
                        vec![ctx.event(
                            Some(id),
                            EventKind::Answered {
                                qid,
                                answer: default.clone(),
                                by_default: true,
                            },
                        )]
                    } else {
                        Vec::new()
                    })
                })?;
            if !written.is_empty() {
                did.push(format!(
                    "{qid}: nobody answered by {until}; took the default `{default}`"
                ));
            }
        }
    }
    // Resume every answered question's session that hasn't been resumed yet (the index
    // has just caught up with the journal, `resumed` events included).
    for q in hall.index()?.questions(false)? {
        let (Some(id), Some(answer), Some(session)) = (q.item, &q.answer, &q.session) else {
            continue;
        };
        if q.resumed {
            continue;
        }
        let qid = QuestionId(q.qid);
        let ok = resume(hall, ctx, id, qid, session, answer, q.by_default)?;
        did.push(format!(
            "{qid}: resumed session {session}{}",
            if ok { "" } else { " (the run failed)" }
        ));
    }
    Ok(did)
}

fn resume(
    hall: &Hall,
    ctx: &Ctx,
    id: ItemId,
    qid: QuestionId,
    session: &str,
    answer: &str,
    by_default: bool,
) -> Result<bool> {
    let item = hall.item(id)?;
    let wt = hall.worktree_of(&item);
    // The default is the asking agent's own words, so it is data; a person's answer is
    // theirs to give, and reaches the session as they wrote it.
    let message = if by_default {
        let mut p = super::fence::Prompt::new();
        p.text(format!(
            "No one answered {qid} in time, so go ahead with the default you proposed:\n"
        ));
        p.notice();
        p.data("the default you proposed", answer.to_string());
        p.render()
    } else {
        format!("The answer to {qid}: {answer}")
    };
    let scope = Scope {
        repo: &hall.repo,
        checkout: &wt,
        base: &hall.config.base,
        domains: &hall.config.sandbox.domains,
    };
    let _ = crate::hall::confine::prepare(&scope);
    let settings = crate::hall::confine::run_settings(
        &hall.config,
        RunKind::Resume,
        std::slice::from_ref(&wt),
        std::slice::from_ref(&wt),
        Some(&scope),
    );
    let args = Headless {
        resume: Some(session),
        settings: Some(&settings),
        // As every headless run: nothing from the worktree's `.claude/` or `.mcp.json`.
        setting_sources: Some("user"),
        strict_mcp: true,
        extra: &hall.config.claude_args,
        prompt: &message,
        ..Headless::default()
    }
    .args();
    let spec = runs::headless_spec(
        &hall.config,
        RunKind::Resume,
        id,
        &wt,
        "claude".into(),
        args,
        &message,
    );
    let runs_dir = crate::claude::runs_dir(&hall.journal.item_dir(id));
    let o = hall.runner.run(&runs_dir, &ctx.stamp, &spec)?;
    let mut events = usage_events(ctx, id, "resume", &o);
    let ok = o.failure.is_none();
    events.push(ctx.event(
        Some(id),
        EventKind::Resumed {
            qid,
            session: session.to_string(),
            ok,
        },
    ));
    if !ok {
        events.push(ctx.event(
            Some(id),
            EventKind::Notification {
                kind: "session_waiting".into(),
                message: format!(
                    "the answer to {qid} could not be delivered to session {session}: {}",
                    o.failure.clone().unwrap_or_default()
                ),
                session: Some(session.to_string()),
            },
        ));
    }
    hall.journal.append_item(id, &events)?;
    Ok(ok)
}
