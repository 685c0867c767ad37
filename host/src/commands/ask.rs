//! `hall ask`: a question for a person, under the item it concerns (or the repo).

use std::time::Duration;

use serde::Serialize;

use super::{Ctx, Reply, next_text};
use crate::cli::AskArgs;
use crate::error::{HallError, Result};
use crate::item::{EventKind, ItemId, QuestionId};

#[derive(Serialize, schemars::JsonSchema)]
pub struct AskReply {
    pub question: QuestionId,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub item: Option<ItemId>,
    pub text: String,
    pub options: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    /// When the default is taken if nobody answers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wait_until: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    pub next: Vec<String>,
}

pub fn run(ctx: &Ctx, args: &AskArgs) -> Result<Reply> {
    let hall = ctx.hall()?;
    if args.question.trim().is_empty() {
        return Err(HallError::usage("the question is empty").hint("hall ask \"…\""));
    }
    let item = match &args.item {
        Some(raw) => Some(hall.resolve(Some(raw))?),
        None => hall.resolve(None).ok(),
    };
    let options: Vec<String> = args
        .options
        .iter()
        .map(|o| o.trim().to_string())
        .filter(|o| !o.is_empty())
        .collect();
    if let Some(d) = &args.default
        && !options.is_empty()
        && !options.contains(d)
    {
        return Err(HallError::usage(format!(
            "--default `{d}` is not one of the options: {}",
            options.join(", ")
        )));
    }
    let wait_until = match &args.wait {
        Some(w) => {
            let d: Duration = crate::clock::parse_duration(w).map_err(HallError::usage)?;
            Some(crate::clock::stamp(ctx.now + d))
        }
        None => None,
    };
    let qid = hall.journal.next_question()?;
    let event = ctx.event(
        item,
        EventKind::Asked {
            qid,
            question: args.question.clone(),
            options: options.clone(),
            default: args.default.clone(),
            wait_until: wait_until.clone(),
            session: args.session.clone(),
        },
    );
    hall.journal
        .append_checked(item, |_| Ok::<_, HallError>(vec![event]))?;
    let next = vec![format!("hall answer {qid} \"…\""), "hall inbox".to_string()];
    let text = format!(
        "{qid} is in Your Office: {}\n{}",
        args.question,
        next_text(&next)
    );
    let reply = AskReply {
        question: qid,
        item,
        text: args.question.clone(),
        options,
        default: args.default.clone(),
        wait_until,
        session: args.session.clone(),
        next,
    };
    Ok(Reply::new(&reply, text))
}
