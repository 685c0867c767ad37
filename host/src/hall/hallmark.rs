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

/// The notes ref hallmarks live under.
pub const NOTES_REF: &str = "refs/notes/hallmark";

/// The note version this build writes: 2, the signed hallmark.
pub const NOTE_VERSION: u32 = 2;

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
    /// hallmark v2
    /// item H-0042
    /// commit <40-hex sha>
    /// tree <40-hex tree>
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
        let fields: [(&str, String); 10] = [
            ("hallmark", format!("v{}", self.v)),
            ("item", self.item.to_string()),
            ("commit", self.sha.to_string()),
            ("tree", tree.to_string()),
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
        ];
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
        })
    }

    /// The note with `seal`'s tree and signature: a signed version 2 hallmark.
    pub fn sealed(mut self, seal: &Seal) -> Note {
        self.v = NOTE_VERSION;
        self.tree = Some(seal.tree.clone());
        self.signer = Some(seal.signer.clone());
        self.key = Some(seal.key.clone());
        self.sig = Some(seal.sig.clone());
        self
    }
}

/// Signs `note` (its `tree` set) as a version 2 hallmark: the statement names the
/// signer's principal, and the seal carries the signature the journal records and the
/// note is written with.
pub fn sign_note(signer: &Signer, note: &Note) -> Result<Seal, sign::SignError> {
    let mut note = note.clone();
    note.v = NOTE_VERSION;
    note.signer = Some(signer.principal().to_string());
    let statement = note.statement().map_err(sign::SignError::Sign)?;
    Ok(Seal {
        tree: note.tree.clone().unwrap_or_default(),
        signer: signer.principal().to_string(),
        key: signer.fingerprint(),
        sig: signer.sign(statement.as_bytes())?,
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

/// Why a commit is not hallmarked. [`NotHallmarked::check`] names the failed check for
/// machines; `Display` says it for people.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NotHallmarked {
    NoHead,
    /// The revision does not name a commit in this clone.
    NoCommit {
        rev: String,
    },
    NoNote {
        head: String,
    },
    NotAHallmark {
        head: String,
        why: String,
    },
    OtherCommit {
        head: String,
        note_sha: String,
    },
    /// A version 1 note, or a version 2 note without its signature.
    Unsigned {
        head: String,
        version: u32,
    },
    OtherTree {
        head: String,
        tree: String,
        note_tree: String,
    },
    BadSignature {
        head: String,
        why: String,
    },
    WrongNamespace {
        head: String,
        namespace: String,
    },
    UnknownSigner {
        head: String,
        signer: String,
        key: String,
        trust: String,
    },
    NotInJournal {
        head: String,
        item: ItemId,
    },
    /// The journal records a hallmark at this commit, but with another signature.
    JournalMismatch {
        head: String,
        item: ItemId,
    },
}

impl NotHallmarked {
    /// The failed check's machine-readable name.
    pub fn check(&self) -> &'static str {
        match self {
            NotHallmarked::NoHead => "no_head",
            NotHallmarked::NoCommit { .. } => "no_commit",
            NotHallmarked::NoNote { .. } => "no_note",
            NotHallmarked::NotAHallmark { .. } => "not_a_hallmark",
            NotHallmarked::OtherCommit { .. } => "other_commit",
            NotHallmarked::Unsigned { .. } => "unsigned",
            NotHallmarked::OtherTree { .. } => "other_tree",
            NotHallmarked::BadSignature { .. } => "bad_signature",
            NotHallmarked::WrongNamespace { .. } => "wrong_namespace",
            NotHallmarked::UnknownSigner { .. } => "unknown_signer",
            NotHallmarked::NotInJournal { .. } => "not_in_journal",
            NotHallmarked::JournalMismatch { .. } => "journal_mismatch",
        }
    }

    /// Every check name, in the order the checks run.
    pub const CHECKS: [&'static str; 12] = [
        "no_head",
        "no_commit",
        "no_note",
        "not_a_hallmark",
        "other_commit",
        "unsigned",
        "other_tree",
        "bad_signature",
        "wrong_namespace",
        "unknown_signer",
        "not_in_journal",
        "journal_mismatch",
    ];
}

impl std::fmt::Display for NotHallmarked {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = short;
        match self {
            NotHallmarked::NoHead => write!(f, "there is no HEAD commit"),
            NotHallmarked::NoCommit { rev } => {
                write!(f, "{rev} is not a commit in this clone")
            }
            NotHallmarked::NoNote { head } => write!(f, "{} has no hallmark", s(head)),
            NotHallmarked::NotAHallmark { head, why } => {
                write!(f, "the note on {} is not a hallmark: {why}", s(head))
            }
            NotHallmarked::OtherCommit { head, note_sha } => {
                write!(f, "its note is for {}, not {}", s(note_sha), s(head))
            }
            NotHallmarked::Unsigned { head, version } => write!(
                f,
                "the hallmark on {} is unsigned (a version {version} note); only a signed hallmark counts",
                s(head)
            ),
            NotHallmarked::OtherTree {
                head,
                tree,
                note_tree,
            } => write!(
                f,
                "the hallmark on {} names tree {}, but the commit's tree is {}",
                s(head),
                s(note_tree),
                s(tree)
            ),
            NotHallmarked::BadSignature { head, why } => {
                write!(
                    f,
                    "the signature on {}'s hallmark does not verify: {why}",
                    s(head)
                )
            }
            NotHallmarked::WrongNamespace { head, namespace } => write!(
                f,
                "the hallmark on {} is signed for namespace `{namespace}`, not `{}`",
                s(head),
                sign::NAMESPACE
            ),
            NotHallmarked::UnknownSigner {
                head,
                signer,
                key,
                trust,
            } => write!(
                f,
                "the hallmark on {} is signed by {key} as {signer}, which {trust} does not allow",
                s(head)
            ),
            NotHallmarked::NotInJournal { head, item } => {
                write!(
                    f,
                    "the journal of {item} records no hallmark at {}",
                    s(head)
                )
            }
            NotHallmarked::JournalMismatch { head, item } => write!(
                f,
                "the journal of {item} records a hallmark at {} with another signature",
                s(head)
            ),
        }
    }
}

/// Who may sign hallmarks, and where that came from.
#[derive(Clone, Debug, Default)]
pub struct Trust {
    signers: AllowedSigners,
    source: String,
}

impl Trust {
    /// Trusts the signers in `text` (an `allowed_signers` file); `source` says where it
    /// came from, for messages.
    pub fn parse(text: &str, source: impl Into<String>) -> Trust {
        Trust {
            signers: AllowedSigners::parse(text),
            source: source.into(),
        }
    }

    /// The base branch's `.hallmark/allowed_signers`, read in one git call. `base` is a
    /// branch (its local ref, else origin's) or a full ref (`refs/remotes/origin/main`).
    /// `None` when the base, or the file on it, does not exist.
    pub fn from_base(dir: &Path, base: &str) -> git::Result<Option<Trust>> {
        let refs: Vec<String> = if base.starts_with("refs/") {
            vec![base.to_string()]
        } else {
            vec![
                format!("refs/heads/{base}"),
                format!("refs/remotes/origin/{base}"),
            ]
        };
        let mut names = Vec::new();
        for r in &refs {
            names.push(format!("{r}^{{commit}}"));
            names.push(format!("{r}:{SIGNERS_FILE}"));
        }
        let answers = git::read_objects(dir, &names)?;
        for (i, r) in refs.iter().enumerate() {
            let (commit, file) = (&answers[2 * i], &answers[2 * i + 1]);
            let Some(git::Object { oid, .. }) = commit else {
                continue;
            };
            // The first ref that exists is the base, with or without the file.
            return Ok(file.as_ref().map(|f| {
                Trust::parse(
                    &String::from_utf8_lossy(&f.data),
                    format!(
                        "{SIGNERS_FILE} on {} at {}",
                        r.trim_start_matches("refs/heads/")
                            .trim_start_matches("refs/remotes/"),
                        short(oid)
                    ),
                )
            }));
        }
        Ok(None)
    }

    /// An `allowed_signers` file given by path.
    pub fn from_file(path: &Path) -> std::io::Result<Trust> {
        let text = std::fs::read_to_string(path)?;
        Ok(Trust::parse(&text, path.display().to_string()))
    }

    /// Only the user's own key (for any principal, in Hallmark's namespace): what a
    /// repository whose base lists no signers yet trusts locally.
    pub fn user() -> Trust {
        match sign::user_public_key() {
            Some(key) => Trust {
                signers: AllowedSigners::only(&key),
                source: format!("your own key ({})", sign::fingerprint(key.key_data())),
            },
            None => Trust {
                signers: AllowedSigners::default(),
                source: "nobody (the base has no allowed_signers and you have no key)".into(),
            },
        }
    }

    /// The base's signers, else the user's own key: what the push gate and the shipper
    /// trust.
    pub fn for_repo(dir: &Path, base: &str) -> Trust {
        match Trust::from_base(dir, base) {
            Ok(Some(t)) => t,
            _ => Trust::user(),
        }
    }

    /// Where the signers came from.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Lines of the file that were not used, with why.
    pub fn skipped(&self) -> &[(usize, String)] {
        &self.signers.skipped
    }

    pub fn is_empty(&self) -> bool {
        self.signers.is_empty()
    }

    fn allows(&self, principal: &str, key: &ssh_key::public::KeyData) -> bool {
        let now = crate::clock::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        self.signers.allows(principal, key, sign::NAMESPACE, now)
    }
}

/// A hallmark that passed every check.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct Verified {
    pub note: Note,
    /// Where the allowed signers came from.
    pub trust: String,
}

/// Checks that `rev` in the repository at `dir` carries a hallmark: a note under
/// `refs/notes/hallmark` that is the hallmark's JSON, version 2, for this exact commit
/// and tree, whose signature verifies over the statement rebuilt from the note, in
/// Hallmark's namespace, by a key `trust` allows for the principal the note names; and,
/// when `journal` is given, one that the item's journal records with the same signature.
///
/// One git call reads the commit, its tree and the note, with replacement refs ignored
/// (`git replace` can't swap in another notes commit); the signature is checked in
/// process.
pub fn verify_commit(
    dir: &Path,
    rev: &str,
    trust: &Trust,
    journal: Option<&Journal>,
) -> Result<Verified, NotHallmarked> {
    let no_commit = || NotHallmarked::NoCommit {
        rev: rev.to_string(),
    };
    match git::noted_commit(dir, rev, NOTES_REF) {
        Ok(Some(c)) => check_note(&c.sha, &c.tree, &c.note, trust, journal),
        Ok(None) | Err(_) => Err(no_commit()),
    }
}

/// The checks on a note already read: everything [`verify_commit`] does after git.
fn check_note(
    sha: &str,
    tree: &str,
    raw: &str,
    trust: &Trust,
    journal: Option<&Journal>,
) -> Result<Verified, NotHallmarked> {
    let head = sha.to_string();
    if raw.is_empty() {
        return Err(NotHallmarked::NoNote { head });
    }
    let note: Note = serde_json::from_str(raw).map_err(|e| NotHallmarked::NotAHallmark {
        head: head.clone(),
        why: format!("not its JSON ({e})"),
    })?;
    if note.sha != sha {
        return Err(NotHallmarked::OtherCommit {
            head,
            note_sha: note.sha.into_string(),
        });
    }
    match note.v {
        NOTE_VERSION => {}
        1 => return Err(NotHallmarked::Unsigned { head, version: 1 }),
        v => {
            return Err(NotHallmarked::NotAHallmark {
                head,
                why: format!("version {v} is not {NOTE_VERSION}"),
            });
        }
    }
    let Some(seal) = note.seal() else {
        return Err(NotHallmarked::Unsigned {
            head,
            version: note.v,
        });
    };
    if seal.tree != tree {
        return Err(NotHallmarked::OtherTree {
            head,
            tree: tree.to_string(),
            note_tree: seal.tree,
        });
    }
    let statement = note
        .statement()
        .map_err(|why| NotHallmarked::NotAHallmark {
            head: head.clone(),
            why,
        })?;
    let key = sign::check(statement.as_bytes(), &seal.sig).map_err(|f| match f {
        SigFailure::Namespace(namespace) => NotHallmarked::WrongNamespace {
            head: head.clone(),
            namespace,
        },
        SigFailure::Malformed(why) => NotHallmarked::BadSignature {
            head: head.clone(),
            why: format!("not an SSH signature ({why})"),
        },
        SigFailure::Invalid(_) => NotHallmarked::BadSignature {
            head: head.clone(),
            why: "it was not made over this note's statement".into(),
        },
    })?;
    let made_by = sign::fingerprint(&key);
    if made_by != seal.key {
        return Err(NotHallmarked::BadSignature {
            head,
            why: format!("it was made by {made_by}, not the {} it names", seal.key),
        });
    }
    if !trust.allows(&seal.signer, &key) {
        return Err(NotHallmarked::UnknownSigner {
            head,
            signer: seal.signer,
            key: made_by,
            trust: trust.source().to_string(),
        });
    }
    if let Some(journal) = journal {
        let events = journal
            .read_item(note.item)
            .map(|c| c.events)
            .unwrap_or_default();
        let mut at_sha = events.iter().filter_map(|e| match &e.kind {
            EventKind::Hallmarked { sha: s, seal, .. } if s == sha => Some(seal),
            _ => None,
        });
        let mut any = false;
        let same = at_sha.any(|s| {
            any = true;
            s.as_ref().is_some_and(|s| s.sig == seal.sig)
        });
        if !same {
            return Err(if any {
                NotHallmarked::JournalMismatch {
                    head,
                    item: note.item,
                }
            } else {
                NotHallmarked::NotInJournal {
                    head,
                    item: note.item,
                }
            });
        }
    }
    Ok(Verified {
        note,
        trust: trust.source().to_string(),
    })
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

/// The key approvals are signed with, or why it can't be had (a held item's reason).
pub fn signer(hall: &Hall) -> std::result::Result<Signer, String> {
    Signer::load(Some(&hall.repo.main_root)).map_err(|e| format!("hallmarks can't be signed: {e}"))
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

    fn note() -> Note {
        Note {
            v: 2,
            item: ItemId(42),
            sha: "a".repeat(40).into(),
            tree: Some("b".repeat(40)),
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

    fn signed(dir: &Path) -> (Note, Trust) {
        std::fs::write(
            dir.join(crate::sign::USER_CONFIG),
            "[signing]\nprincipal = \"ada@example.com\"\n",
        )
        .unwrap();
        let signer = Signer::load_in(dir, None).unwrap();
        let mut n = note();
        n.signer = None;
        let seal = sign_note(&signer, &n).unwrap();
        let trust = Trust {
            signers: AllowedSigners::parse(&crate::sign::allowed::line(
                "ada@example.com",
                signer.public_key(),
            )),
            source: "test".into(),
        };
        (n.sealed(&seal), trust)
    }

    fn run(n: &Note, trust: &Trust) -> Result<Verified, NotHallmarked> {
        check_note(
            &"a".repeat(40),
            &"b".repeat(40),
            &serde_json::to_string(n).unwrap(),
            trust,
            None,
        )
    }

    #[test]
    fn each_check_fails_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let (good, trust) = signed(dir.path());
        assert_eq!(good.signer.as_deref(), Some("ada@example.com"));
        assert!(run(&good, &trust).is_ok());
        let fails = |n: &Note, t: &Trust| run(n, t).unwrap_err().check();
        let mut n = good.clone();
        n.round = 4;
        assert_eq!(fails(&n, &trust), "bad_signature");
        let mut n = good.clone();
        n.sha = "c".repeat(40).into();
        assert_eq!(fails(&n, &trust), "other_commit");
        let mut n = good.clone();
        n.tree = Some("d".repeat(40));
        assert_eq!(fails(&n, &trust), "other_tree");
        let mut n = good.clone();
        n.v = 1;
        assert_eq!(fails(&n, &trust), "unsigned");
        let mut n = good.clone();
        n.sig = None;
        assert_eq!(fails(&n, &trust), "unsigned");
        let mut n = good.clone();
        n.key = Some("SHA256:someoneelse".into());
        assert_eq!(fails(&n, &trust), "bad_signature");
        let mut n = good.clone();
        n.signer = Some("mallory@example.com".into());
        assert_eq!(
            fails(&n, &trust),
            "bad_signature",
            "the signer is part of the statement"
        );
        let stranger = tempfile::tempdir().unwrap();
        let (_, other_trust) = signed(stranger.path());
        assert_eq!(fails(&good, &other_trust), "unknown_signer");
        assert_eq!(
            check_note(&"a".repeat(40), &"b".repeat(40), "{}", &trust, None)
                .unwrap_err()
                .check(),
            "not_a_hallmark"
        );
        assert_eq!(
            check_note(&"a".repeat(40), &"b".repeat(40), "", &trust, None)
                .unwrap_err()
                .check(),
            "no_note"
        );
    }
}
