//! `hall verify [<rev>] [--pr N] [--base B] [--allowed-signers FILE]`: does this commit
//! carry a signed hallmark? The check a CI job runs on a pull request, in any clone and
//! without the journal: the note must name this exact commit and tree, and its
//! signature must verify and come from a signer the base branch allows.

use std::path::Path;

use serde::Serialize;

use super::{Ctx, Reply, next_text};
use crate::cli::VerifyArgs;
use crate::error::{Code, HallError, Result};
use crate::hall::hallmark::{self, NotHallmarked, SIGNERS_FILE, Trust};
use crate::item::{ItemId, Sha};

#[derive(Serialize, schemars::JsonSchema)]
pub struct VerifyReply {
    /// The commit checked.
    pub sha: Sha,
    /// Its tree, which the hallmark names too.
    pub tree: String,
    pub item: ItemId,
    pub round: u32,
    /// Who approved: `assayer`, or `you` for a person's verdict.
    pub actor: Option<String>,
    pub model: Option<String>,
    pub open_findings: Vec<String>,
    /// The principal that signed.
    pub signer: String,
    /// The signing key's fingerprint.
    pub key: String,
    /// For an approval carried across a rebase: the commit that was approved.
    pub approved_sha: Option<Sha>,
    /// The commit the approved change was measured from (a version 3 hallmark), which
    /// the base checked against contains.
    pub base: Option<Sha>,
    /// Where the allowed signers came from.
    pub trust: String,
    pub next: Vec<String>,
}

/// The PR's head commit and base branch, from gh.
fn pr_head(dir: &Path, n: u64) -> Result<(String, Option<String>)> {
    let pr = crate::gh::pull_request(dir, Some(&n.to_string())).map_err(|e| {
        HallError::from(e)
            .context(format!("`--pr {n}` can't be read"))
            .hint("hall verify <sha> --base <branch>")
    })?;
    let head = pr.head().ok_or_else(|| {
        HallError::new(
            Code::GhUnavailable,
            format!("gh named no head commit for PR {n}"),
        )
        .hint("gh auth status")
    })?;
    Ok((
        head.into_string(),
        Some(pr.base_ref_name).filter(|b| !b.is_empty()),
    ))
}

/// The revisions `base` may name here: a full ref as given, else origin's copy of the
/// branch and the local branch, those that exist (the name itself when neither does).
fn target_revs(dir: &Path, base: &str) -> Vec<String> {
    if base.starts_with("refs/") {
        return vec![base.to_string()];
    }
    let found: Vec<String> = [
        format!("refs/remotes/origin/{base}"),
        format!("refs/heads/{base}"),
    ]
    .into_iter()
    .filter(|r| crate::git::commit(dir, r).is_some())
    .collect();
    if found.is_empty() {
        vec![base.to_string()]
    } else {
        found
    }
}

fn no_signers(what: String) -> HallError {
    HallError::new(Code::NoAllowedSigners, what)
        .hint("hall init --signers")
        .hint(format!(
            "git add {SIGNERS_FILE} && git commit -m \"Trust my hallmark key\""
        ))
}

pub fn run(ctx: &Ctx, args: &VerifyArgs) -> Result<Reply> {
    let repo = ctx.repo()?;
    let dir = repo.toplevel.clone();
    let (rev, pr_base) = match args.pr {
        Some(n) => pr_head(&dir, n)?,
        None => (args.rev.clone().unwrap_or_else(|| "HEAD".into()), None),
    };
    // The base comes from the command line, the PR, or the journal's record (never a
    // working copy's `.hallmark.toml`, which the commit under test could have changed).
    let base = args
        .base
        .clone()
        .or(pr_base)
        .unwrap_or_else(|| crate::hall::rules::base_name(&repo));
    let trust = match &args.allowed_signers {
        Some(path) => Trust::from_file(path)
            .map_err(|e| no_signers(format!("can't read {}: {e}", path.display())))?,
        None => Trust::from_base(&dir, &base)?.ok_or_else(|| {
            no_signers(format!(
                "the base branch {base} has no {SIGNERS_FILE}, so there is nobody to trust"
            ))
        })?,
    };
    if trust.is_empty() {
        return Err(no_signers(format!(
            "{} lists no signer this hall can use",
            trust.source()
        )));
    }
    let verified = hallmark::verify_commit(&dir, &rev, &trust, None).map_err(|why| {
        let mut err = HallError::new(Code::NotHallmarked, why.to_string()).with_check(why.check());
        err = match &why {
            NotHallmarked::NoNote { .. } | NotHallmarked::NoCommit { .. } => {
                err.hint(format!("git fetch origin {0}:{0}", hallmark::NOTES_REF))
            }
            NotHallmarked::UnknownSigner { .. } => err.hint("hall init --signers"),
            _ => err,
        };
        err.hint("hall status")
    })?;
    // The change it vouches for must sit on the base it is checked against.
    let targets = target_revs(&dir, &base);
    let on_base = targets
        .iter()
        .map(|t| hallmark::check_base(&dir, &verified, t))
        .find(|r| r.is_ok())
        .unwrap_or_else(|| {
            let first = targets.first().map(String::as_str).unwrap_or(base.as_str());
            hallmark::check_base(&dir, &verified, first)
        });
    if let Err(why) = on_base {
        return Err(HallError::new(Code::NotHallmarked, why.to_string())
            .with_check(why.check())
            .hint(format!("git fetch origin {base}"))
            .hint("hall adopt --base <the branch it was reviewed on>")
            .hint("hall status"));
    }
    let note = verified.note;
    let reply = VerifyReply {
        base: note.base.clone(),
        tree: note.tree.clone().unwrap_or_default(),
        item: note.item,
        round: note.round,
        actor: note.actor.clone(),
        model: note.model.clone(),
        open_findings: note.open_findings.clone(),
        signer: note.signer.clone().unwrap_or_default(),
        key: note.key.clone().unwrap_or_default(),
        approved_sha: note.approved_sha.clone(),
        trust: verified.trust,
        next: vec![format!(
            "git notes --ref={} show {}",
            hallmark::NOTES_REF,
            note.sha.short()
        )],
        sha: note.sha,
    };
    let text = format!(
        "{} carries the hallmark of {}, round {}{}, signed by {} ({}), trusted through {}.\n{}",
        reply.sha.short(),
        reply.item,
        reply.round,
        reply
            .approved_sha
            .as_deref()
            .map(|a| format!(" (carried from {})", crate::item::sha::short(a)))
            .unwrap_or_default(),
        reply.signer,
        reply.key,
        reply.trust,
        next_text(&reply.next)
    );
    Ok(Reply::new(&reply, text))
}
