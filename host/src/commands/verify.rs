//! `hall verify [<rev>] [--pr N] [--base B] [--allowed-signers FILE]`: does this commit
//! carry a signed hallmark? The check a CI job runs on a pull request, in any clone and
//! without the journal: the note must name this exact commit and tree, and its
//! signature must verify and come from a signer the base branch allows.

use std::path::Path;

use serde::Serialize;

use super::{Ctx, Reply, next_text};
use crate::cli::VerifyArgs;
use crate::config::Config;
use crate::error::{Code, HallError, Result};
use crate::git;
use crate::hallmark::{self, NotHallmarked, SIGNERS_FILE, Trust};
use crate::item::ItemId;

#[derive(Serialize, schemars::JsonSchema)]
pub struct VerifyReply {
    /// The commit checked.
    pub sha: String,
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
    pub approved_sha: Option<String>,
    /// Where the allowed signers came from.
    pub trust: String,
    pub next: Vec<String>,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct GhPrHead {
    head_ref_oid: String,
    #[serde(default)]
    base_ref_name: String,
}

/// The PR's head commit and base branch, from gh.
fn pr_head(dir: &Path, n: u64) -> Result<(String, Option<String>)> {
    let out = std::process::Command::new("gh")
        .args([
            "pr",
            "view",
            &n.to_string(),
            "--json",
            "headRefOid,baseRefName",
        ])
        .current_dir(dir)
        .output()
        .map_err(|_| {
            HallError::new(
                Code::GhUnavailable,
                "`--pr` needs the GitHub CLI, and gh is not installed",
            )
            .hint("install gh, then `gh auth login`")
            .hint("hall verify <sha> --base <branch>")
        })?;
    if !out.status.success() {
        return Err(HallError::new(
            Code::GhUnavailable,
            format!(
                "gh could not read PR {n}: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ),
        )
        .hint("gh auth status"));
    }
    let pr: GhPrHead = serde_json::from_slice(&out.stdout).map_err(|e| {
        HallError::new(
            Code::GhUnavailable,
            format!("gh printed unexpected JSON: {e}"),
        )
    })?;
    Ok((
        pr.head_ref_oid,
        Some(pr.base_ref_name).filter(|b| !b.is_empty()),
    ))
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
    let base = args.base.clone().or(pr_base).unwrap_or_else(|| {
        Config::load(&repo.main_root)
            .map(|c| c.base)
            .unwrap_or_else(|_| git::default_base(&dir))
    });
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
    let note = verified.note;
    let reply = VerifyReply {
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
            super::short(&note.sha)
        )],
        sha: note.sha,
    };
    let text = format!(
        "{} carries the hallmark of {}, round {}{}, signed by {} ({}), trusted through {}.\n{}",
        super::short(&reply.sha),
        reply.item,
        reply.round,
        reply
            .approved_sha
            .as_deref()
            .map(|a| format!(" (carried from {})", super::short(a)))
            .unwrap_or_default(),
        reply.signer,
        reply.key,
        reply.trust,
        next_text(&reply.next)
    );
    Ok(Reply::new(&reply, text))
}
