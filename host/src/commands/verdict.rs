//! `hall verdict --file <json>`: a person's verdict, checked by the verdict room and
//! recorded as a human override (named as one in the log, the note and the PR comment).
//! Agents are refused: only a script or a person decides approval. An approval is signed
//! here with the person's key, the only place besides the loop's own steps that signs.

use super::{Ctx, ItemReply, Reply};
use crate::cli::VerdictArgs;
use crate::error::{Code, HallError, Result};
use crate::hall::hallmark;
use crate::item::{Action, fold};
use crate::office::{review, verdict};

pub fn run(ctx: &Ctx, args: &VerdictArgs) -> Result<Reply> {
    let _you = ctx.person("verdict", "records a person's verdict")?;
    let hall = ctx.hall()?;
    let id = hall.resolve(args.id.as_deref())?;
    let text = std::fs::read_to_string(&args.file).map_err(|e| {
        HallError::usage(format!("can't read {}: {e}", args.file.display()))
            .hint("hall schema verdict-file")
    })?;
    let (checked, used) = verdict::validate(&hall, ctx, id, &text)?;
    let checked = checked.map_err(|why| {
        HallError::new(
            Code::InvalidVerdict,
            format!("the verdict was refused: {why}"),
        )
        .hint("hall schema verdict-file")
    })?;
    let events = hall.events(id)?;
    let item = fold(&events);
    let sha = item.sha.clone().unwrap_or_default();
    let findings = verdict::findings(&checked, review::findings_so_far(&events) + 1);
    let max_rejects = hall.config.max_rejects;
    // A person's approval is signed with their key, here, like the assayer's.
    let signer = if checked.approved {
        Some(crate::sign::Signer::load(Some(&hall.repo.main_root))?)
    } else {
        None
    };
    let mut change = hall.change(ctx, id).recording([used]);
    if let Some(signer) = &signer {
        change = change.signed_by(signer);
    }
    let applied = change.apply(Action::Verdict {
        sha,
        approved: checked.approved,
        findings,
        model: None,
        summary: Some(checked.summary.clone()),
        by: Some("you".into()),
        learnings: Vec::new(),
        max_rejects,
        seal: None,
    })?;
    if applied.after.hallmark.is_some() {
        hallmark::ensure_note(&hall, id, &applied.after)?;
    }
    Ok(ItemReply::reply(
        &applied.after,
        true,
        "has your verdict (a human override)",
    ))
}
