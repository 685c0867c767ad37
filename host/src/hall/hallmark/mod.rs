//! The hallmark: a signed git note under `refs/notes/hallmark` on the approved commit,
//! and the check that a commit really carries one.
//!
//! Anyone with the user's rights can write a note, a notes ref or a journal line, so
//! none of them proves anything alone. A hallmark (note version 2) carries an SSHSIG
//! signature over a short text [statement](Note::statement) that names the item, the
//! commit, its tree and the approval; the key that made it must be an allowed signer for
//! the principal the note names, read from the base branch's `.hallmark/allowed_signers`
//! (or, on a machine whose base has none yet, the user's own key). [`verify_commit`]
//! needs no journal, which is what lets a CI job check a pull request in a fresh clone;
//! locally the push gate also asks the journal.
//!
//! Every failed check has a name ([`NotHallmarked::check`]) and a sentence.
//!
//! This module owns the hallmark's whole life: the note's format and its statement,
//! signing ([`sign_note`]), striking it on the commit ([`strike`], [`ensure_note`]),
//! checking it ([`verify_commit`]) and pushing the notes to origin ([`push_notes`]).

use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Hall;
use crate::error::{Code, HallError, Result};
use crate::git;
use crate::item::event::Seal;
use crate::item::sha::short;
use crate::item::{Event, EventKind, Item, ItemId, Sha};
use crate::journal::Journal;
use crate::sign::allowed::AllowedSigners;
use crate::sign::{self, SigFailure, Signer};

mod verify;
pub use verify::{NotHallmarked, Trust, Verified, check_base, verify_commit};

/// The notes ref hallmarks live under.
pub const NOTES_REF: &str = "refs/notes/hallmark";

/// The note version this build writes: 3, the signed hallmark that names the commit its
/// change was measured from. Version 2 (signed, no base) still verifies.
pub const NOTE_VERSION: u32 = 3;

/// Where a repository lists who may sign its hallmarks, read from the base branch.
pub const SIGNERS_FILE: &str = ".hallmark/allowed_signers";

/// The note's JSON. Version 1 notes (unsigned, from before signing) still parse, so a
/// check can say that they are unsigned rather than that they are garbage.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Note {
    pub v: u32,
    pub item: ItemId,
    pub sha: Sha,
    /// The approved commit's tree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tree: Option<String>,
    /// The commit the approved change was measured from (version 3): the review covered
    /// `base..sha`, so the hallmark vouches for a branch only where `base` is in it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<Sha>,
    pub round: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Findings still open (minors and nits) when it was approved.
    #[serde(default)]
    pub open_findings: Vec<String>,
    /// `assayer`, or `you` for a person's verdict (absent on notes struck before it existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actor: Option<String>,
    /// For an approval carried across a rebase: the commit whose approval it carries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approved_sha: Option<Sha>,
    /// Who signed: the principal `allowed_signers` must list for the key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signer: Option<String>,
    /// The signing key's fingerprint, `SHA256:…`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// The armored SSHSIG signature over [`Note::statement`], namespace `hallmark`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sig: Option<String>,
}

impl Note {
    /// The text that is signed, one `name value` line each, in this order:
    ///
    /// ```text
    /// hallmark v3
    /// item H-0042
    /// commit <40-hex sha>
    /// tree <40-hex tree>
    /// base <40-hex sha the change was measured from; version 3 only>
    /// round 3
    /// actor assayer
    /// model claude-opus-4-1
    /// open F2,F5
    /// approved <sha, for an approval carried across a rebase>
    /// signer ada@example.com
    /// ```
    ///
    /// A missing value is written as nothing after the space (`model `), and the text
    /// ends with a newline. A value with a control character (or a finding id with a
    /// comma) can't be written unambiguously, so it has no statement.
    pub fn statement(&self) -> Result<String, String> {
        let tree = self.tree.as_deref().ok_or("it has no tree")?;
        let signer = self.signer.as_deref().ok_or("it names no signer")?;
        let open = self.open_findings.join(",");
        if self.open_findings.iter().any(|f| f.contains(',')) {
            return Err("a finding id has a comma".into());
        }
        let mut fields: Vec<(&str, String)> = vec![
            ("hallmark", format!("v{}", self.v)),
            ("item", self.item.to_string()),
            ("commit", self.sha.to_string()),
            ("tree", tree.to_string()),
        ];
        if self.v >= 3 {
            let base = self.base.as_ref().map(Sha::to_string).unwrap_or_default();
            fields.push(("base", base));
        }
        fields.extend([
            ("round", self.round.to_string()),
            ("actor", self.actor.clone().unwrap_or_default()),
            ("model", self.model.clone().unwrap_or_default()),
            ("open", open),
            (
                "approved",
                self.approved_sha
                    .as_ref()
                    .map(Sha::to_string)
                    .unwrap_or_default(),
            ),
            ("signer", signer.to_string()),
        ]);
        let mut text = String::new();
        for (name, value) in fields {
            if value.chars().any(char::is_control) {
                return Err(format!("its {name} has a control character"));
            }
            text.push_str(name);
            text.push(' ');
            text.push_str(&value);
            text.push('\n');
        }
        Ok(text)
    }

    /// The note's signature, when it has every part of one.
    pub fn seal(&self) -> Option<Seal> {
        Some(Seal {
            tree: self.tree.clone()?,
            signer: self.signer.clone()?,
            key: self.key.clone()?,
            sig: self.sig.clone()?,
            base: self.base.as_ref().map(Sha::to_string),
        })
    }

    /// The note with `seal`'s tree, base and signature: a signed hallmark (version 3, or
    /// 2 for a seal made before hallmarks named their base).
    pub fn sealed(mut self, seal: &Seal) -> Note {
        self.v = if seal.base.is_some() { NOTE_VERSION } else { 2 };
        self.tree = Some(seal.tree.clone());
        self.base = seal.base.as_deref().map(Sha::new);
        self.signer = Some(seal.signer.clone());
        self.key = Some(seal.key.clone());
        self.sig = Some(seal.sig.clone());
        self
    }
}

/// Signs `note` (its `tree` and `base` set) as a version 3 hallmark (2 without a base): the statement
/// names the signer's principal, and the seal carries the signature the journal records
/// and the note is written with.
pub fn sign_note(signer: &Signer, note: &Note) -> Result<Seal, sign::SignError> {
    let mut note = note.clone();
    // With no base to name (a branch with no base commit at all, whose review read its
    // whole history), the statement is version 2's.
    note.v = if note.base.is_some() { NOTE_VERSION } else { 2 };
    note.signer = Some(signer.principal().to_string());
    let statement = note.statement().map_err(sign::SignError::Sign)?;
    Ok(Seal {
        tree: note.tree.clone().unwrap_or_default(),
        signer: signer.principal().to_string(),
        key: signer.fingerprint(),
        sig: signer.sign(statement.as_bytes())?,
        base: note.base.as_ref().map(Sha::to_string),
    })
}

/// The unsigned note the journal describes for the hallmark on `sha`: the approving
/// verdict's model, actor and open findings (for an approval carried across a rebase,
/// the original approval's, plus the commit it was carried from). Both the signer and
/// the note writer build it from here, so what is signed is what is written.
pub fn approval_note(events: &[Event], item: ItemId, sha: &Sha, round: u32) -> Note {
    let approved_sha = events.iter().rev().find_map(|e| match &e.kind {
        EventKind::Rebased {
            from,
            sha: to,
            carried: true,
        } if to == sha => Some(from.clone()),
        _ => None,
    });
    let (model, actor, open) = events
        .iter()
        .rev()
        .find_map(|e| match &e.kind {
            // The approval itself, not its carrying across a rebase.
            EventKind::Verdict {
                approved: true,
                model,
                findings,
                by,
                ..
            } if by.as_deref() != Some("carried") => Some((
                model.clone(),
                e.actor.clone(),
                findings.iter().map(|f| f.id.clone()).collect::<Vec<_>>(),
            )),
            _ => None,
        })
        .unwrap_or((None, "assayer".to_string(), Vec::new()));
    Note {
        v: NOTE_VERSION,
        item,
        sha: sha.clone(),
        tree: None,
        base: None,
        round,
        model,
        open_findings: open,
        actor: Some(actor),
        approved_sha,
        signer: None,
        key: None,
        sig: None,
    }
}

/// Writes the hallmark note on its commit (replacing any note there, which can only be
/// a forgery or an earlier strike of the same approval), as the actor that approved it.
pub fn strike(hall: &Hall, note: &Note) -> Result<()> {
    let body = serde_json::to_string(note).map_err(HallError::internal)?;
    let actor = note.actor.as_deref().unwrap_or("assayer");
    git::add_note(&hall.repo.main_root, NOTES_REF, &note.sha, &body, actor).map_err(|e| {
        HallError::from(e).context(format!(
            "could not write the hallmark note on {}",
            note.sha.short()
        ))
    })
}

/// The key approvals are signed with, from the hall's user config directory
/// ([`Hall::user_config_dir`]), or why it can't be had (a held item's reason).
pub fn signer(hall: &Hall) -> std::result::Result<Signer, String> {
    hall.user_config_dir()
        .ok_or(sign::SignError::NoConfigDir)
        .and_then(|dir| Signer::load_in(&dir, Some(&hall.repo.main_root)))
        .map_err(|e| format!("hallmarks can't be signed: {e}"))
}

/// Makes sure a hallmarked item's note is on its commit: a daemon that died between the
/// journal line and the note leaves it to be written here, once. Returns whether it
/// wrote one.
///
/// The note is written from the journal's `hallmarked` line and its signature; nothing
/// is signed here. A line without a signature (from before signing, or forged) becomes
/// no note at all, and a signature that doesn't match the statement the journal
/// describes is refused rather than written.
pub fn ensure_note(hall: &Hall, id: ItemId, item: &Item) -> Result<bool> {
    let Some(sha) = item.hallmark.clone() else {
        return Ok(false);
    };
    let events = hall.events(id)?;
    let seal = events.iter().rev().find_map(|e| match &e.kind {
        EventKind::Hallmarked { sha: s, seal, .. } if *s == sha => Some(seal.clone()),
        _ => None,
    });
    let Some(seal) = seal.flatten() else {
        return Err(HallError::new(
            Code::NotHallmarked,
            format!(
                "the journal's hallmark on {} is unsigned, so it can't become a note",
                sha.short()
            ),
        )
        .with_check("unsigned")
        .hint(format!(
            "hall pull-back {id} --reason \"sign the approval again\""
        ))
        .hint(format!("hall log {id} --kind hallmarked")));
    };
    let existing = git::note(&hall.repo.main_root, NOTES_REF, &sha)?;
    if existing
        .as_deref()
        .and_then(|text| serde_json::from_str::<Note>(text).ok())
        .is_some_and(|n| n.sha == sha && n.item == id && n.sig.as_ref() == Some(&seal.sig))
    {
        return Ok(false);
    }
    let note = approval_note(&events, id, &sha, item.round).sealed(&seal);
    let statement = note.statement().unwrap_or_default();
    if sign::check(statement.as_bytes(), &seal.sig).is_err() {
        return Err(HallError::new(
            Code::NotHallmarked,
            format!(
                "the journal's signature on {} does not match the approval it records; the note is not written",
                sha.short()
            ),
        )
        .with_check("bad_signature")
        .hint(format!("hall log {id} --kind hallmarked")));
    }
    strike(hall, &note)?;
    Ok(true)
}

/// Where origin's notes are fetched to before they are merged into ours.
const ORIGIN_NOTES: &str = "refs/notes/hallmark-origin";

/// Pushes `refs/notes/hallmark` to origin as the shipper: origin's notes are fetched
/// and merged first (ours win only where both clones noted the same commit), so notes
/// struck from other clones are kept, and the push is never forced. A push that loses
/// a race is tried again from the fetch. Nothing to do without an origin.
pub fn push_notes(root: &Path) -> std::result::Result<(), git::GitError> {
    const ACTOR: &str = "shipper";
    if !git::has_remote(root, "origin") {
        return Ok(());
    }
    let mut last = None;
    for _ in 0..3 {
        if git::remote_has_ref(root, "origin", NOTES_REF, ACTOR)? {
            git::fetch_as(
                root,
                "origin",
                &format!("+{NOTES_REF}:{ORIGIN_NOTES}"),
                ACTOR,
            )?;
            git::merge_notes(root, NOTES_REF, ORIGIN_NOTES, ACTOR)?;
        }
        match git::push_as(root, "origin", &format!("{NOTES_REF}:{NOTES_REF}"), ACTOR) {
            Ok(()) => return Ok(()),
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| git::GitError::Unexpected {
        args: "push".into(),
        what: "no attempt was made".into(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn note() -> Note {
        Note {
            v: 2,
            item: ItemId(42),
            sha: "a".repeat(40).into(),
            tree: Some("b".repeat(40)),
            base: None,
            round: 3,
            model: Some("opus".into()),
            open_findings: vec!["F2".into(), "F5".into()],
            actor: Some("assayer".into()),
            approved_sha: None,
            signer: Some("ada@example.com".into()),
            key: None,
            sig: None,
        }
    }

    #[test]
    fn a_version_3_statement_names_the_base_after_the_tree() {
        let mut n = note();
        n.v = 3;
        n.base = Some("c".repeat(40).into());
        let text = n.statement().unwrap();
        assert!(
            text.starts_with(&format!(
                "hallmark v3\nitem H-0042\ncommit {}\ntree {}\nbase {}\nround 3\n",
                "a".repeat(40),
                "b".repeat(40),
                "c".repeat(40)
            )),
            "{text}"
        );
        // Version 3 has the line even with no base, so leaving it out changes the text.
        n.base = None;
        assert!(n.statement().unwrap().contains("\nbase \nround"));
    }

    #[test]
    fn the_statement_is_the_documented_text() {
        assert_eq!(
            note().statement().unwrap(),
            format!(
                "hallmark v2\nitem H-0042\ncommit {}\ntree {}\nround 3\nactor assayer\nmodel opus\nopen F2,F5\napproved \nsigner ada@example.com\n",
                "a".repeat(40),
                "b".repeat(40)
            )
        );
        let mut n = note();
        n.model = Some("opus\nopen F9".into());
        assert!(n.statement().is_err(), "no field can forge another line");
    }
}
