//! `hall answer`: the answer to a question. Repeating the same answer is a no-op; a
//! different one is refused.

use serde::Serialize;

use super::{Ctx, Reply, next_text};
use crate::cli::AnswerArgs;
use crate::error::{Code, HallError, Result};
use crate::item::{Event, EventKind, ItemId, QuestionId};

#[derive(Serialize, schemars::JsonSchema)]
pub struct AnswerReply {
    pub question: QuestionId,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub item: Option<ItemId>,
    pub answer: String,
    pub changed: bool,
    pub next: Vec<String>,
}

/// Maps `a`, `b`… or an option's text to the option; free text when there are none.
fn resolve(answer: &str, options: &[String]) -> Result<String> {
    let a = answer.trim();
    if options.is_empty() {
        return Ok(a.to_string());
    }
    if let Some(o) = options.iter().find(|o| o.eq_ignore_ascii_case(a)) {
        return Ok(o.clone());
    }
    let mut chars = a.chars();
    if let (Some(c), None) = (chars.next(), chars.next())
        && c.is_ascii_lowercase()
        && let Some(o) = options.get((c as u8 - b'a') as usize)
    {
        return Ok(o.clone());
    }
    let letters: Vec<String> = options
        .iter()
        .enumerate()
        .map(|(i, o)| format!("{} = {o}", (b'a' + i as u8) as char))
        .collect();
    Err(HallError::usage(format!(
        "`{a}` is not an option: {}",
        letters.join(", ")
    )))
}

pub fn run(ctx: &Ctx, args: &AnswerArgs) -> Result<Reply> {
    // The question was put to a person; an agent answering it would decide for them.
    let _you = ctx.person("answer", "answers a question put to a person")?;
    let hall = ctx.hall()?;
    let qid: QuestionId = args
        .qid
        .parse()
        .map_err(|e: crate::item::id::BadId| HallError::usage(e.to_string()))?;
    let row = hall.index()?.question(qid.0)?.ok_or_else(|| {
        HallError::new(Code::QuestionNotFound, format!("no question {qid}")).hint("hall inbox")
    })?;
    let answer = resolve(&args.answer, &row.options)?;
    let mut changed = false;
    hall.journal.append_checked(row.item, |events: &[Event]| {
        // Re-check under the lock: another answer may have landed since the index read.
        let previous = events.iter().rev().find_map(|e| match &e.kind {
            EventKind::Answered { qid: q, answer, .. } if *q == qid => Some(answer.clone()),
            _ => None,
        });
        match previous {
            Some(p) if p == answer => Ok(Vec::new()),
            Some(p) => Err(HallError::new(
                Code::AlreadyAnswered,
                format!("{qid} was already answered: {p}"),
            )
            .hint("hall inbox")),
            None => {
                changed = true;
                Ok(vec![ctx.event(
                    row.item,
                    EventKind::Answered {
                        qid,
                        answer: answer.clone(),
                        by_default: false,
                    },
                )])
            }
        }
    })?;
    let mut next = vec!["hall inbox".to_string()];
    if let Some(id) = row.item {
        next.push(format!("hall status {id}"));
    }
    let text = format!(
        "{qid}: {answer}{}\n{}",
        if changed { "" } else { " (already so)" },
        next_text(&next)
    );
    Ok(Reply::new(
        &AnswerReply {
            question: qid,
            item: row.item,
            answer,
            changed,
            next,
        },
        text,
    ))
}
