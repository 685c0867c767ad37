//! Verifying a hallmark: whether a commit carries a signed approval that a key the base
//! branch trusts made for exactly that commit and tree, and if not, which check failed.

use super::*;

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
    /// The hallmark's change was measured from `base`, which `target` doesn't contain:
    /// the branch would bring in work before `base` that no review of it read (a PR
    /// stacked on another, pointed at the base before the other merged).
    BaseNotIn {
        head: String,
        base: String,
        target: String,
        why: String,
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
            NotHallmarked::BaseNotIn { .. } => "base_not_in",
        }
    }

    /// Every check name, in the order the checks run.
    pub const CHECKS: [&'static str; 13] = [
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
        "base_not_in",
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
            NotHallmarked::BaseNotIn {
                head,
                base,
                target,
                why,
            } => write!(
                f,
                "the hallmark on {} covers only what it adds to {}, and {target} {why}; what comes before {0} was not reviewed with it",
                s(head),
                s(base)
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

    /// The base branch's `.hallmark/allowed_signers`, read through the base's commit
    /// and trees with every object re-hashed against its name (`git::Committed`). `base`
    /// is a branch (the fresher of its local ref and origin's, as the rules are read) or
    /// a full ref (`refs/remotes/origin/main`). `None` when the base, or the file on it,
    /// does not exist; an error when an object on the way doesn't match its name.
    pub fn from_base(dir: &Path, base: &str) -> git::Result<Option<Trust>> {
        let mut reader = git::Committed::open(dir)?;
        let found = if base.starts_with("refs/") {
            reader.commit_of(base)?.map(|sha| (base.to_string(), sha))
        } else {
            let tip = git::Repo::discover(dir)
                .ok()
                .and_then(|repo| crate::hall::rules::base_tip(&repo, base));
            match tip {
                Some(t) => Some((t.reference, t.sha)),
                None => None,
            }
        };
        let Some((reference, sha)) = found else {
            return Ok(None);
        };
        let Some(bytes) = reader.file(&sha, SIGNERS_FILE)? else {
            return Ok(None);
        };
        Ok(Some(Trust::parse(
            &String::from_utf8_lossy(&bytes),
            format!(
                "{SIGNERS_FILE} on {} at {}",
                reference
                    .trim_start_matches("refs/heads/")
                    .trim_start_matches("refs/remotes/"),
                short(&sha)
            ),
        )))
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
    /// trust. A signers file that can't be read as committed trusts nobody: falling
    /// back to the user's key would let a rewritten object widen the trust.
    pub fn for_repo(dir: &Path, base: &str) -> Trust {
        match Trust::from_base(dir, base) {
            Ok(Some(t)) => t,
            Err(e @ git::GitError::Unverified { .. }) => Trust {
                signers: AllowedSigners::default(),
                source: format!("nobody ({SIGNERS_FILE} on {base} can't be read: {e})"),
            },
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

/// Checks that the change a verified hallmark covers sits on `target` (a revision: the
/// branch the commit is to land on). The hallmark names the commit its change was
/// measured from; everything up to that commit must already be in `target`, or landing
/// the commit brings in work its review never read. A base this clone doesn't have (a
/// shallow clone) fails closed. A version 2 hallmark names no base and passes.
pub fn check_base(dir: &Path, verified: &Verified, target: &str) -> Result<(), NotHallmarked> {
    let Some(base) = &verified.note.base else {
        return Ok(());
    };
    let fail = |why: String| NotHallmarked::BaseNotIn {
        head: verified.note.sha.to_string(),
        base: base.to_string(),
        target: target.to_string(),
        why,
    };
    if git::commit(dir, &format!("{}^{{commit}}", base.as_str())).is_none() {
        return Err(fail(
            "can't be compared with it: this clone doesn't have that commit (fetch more history: `git fetch --unshallow`)".into(),
        ));
    }
    if git::commit(dir, target).is_none() {
        return Err(fail("is not a commit in this clone".into()));
    }
    if !git::is_ancestor(dir, base.as_str(), target) {
        return Err(fail("doesn't contain it".into()));
    }
    Ok(())
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
pub(super) fn check_note(
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
        // Version 2 is signed too; it names no base, so `check_base` has nothing to check.
        2 | NOTE_VERSION => {}
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

#[cfg(test)]
mod tests {
    use super::super::tests::note;
    use super::*;

    fn signed(dir: &Path) -> (Note, Trust) {
        signed_with(dir, None)
    }

    /// [`signed`], measured from `base` (a version 3 hallmark).
    fn signed_on(dir: &Path, base: &str) -> (Note, Trust) {
        signed_with(dir, Some(base))
    }

    fn signed_with(dir: &Path, base: Option<&str>) -> (Note, Trust) {
        std::fs::write(
            dir.join(crate::sign::USER_CONFIG),
            "[signing]\nprincipal = \"ada@example.com\"\n",
        )
        .unwrap();
        let signer = Signer::load_in(dir, None).unwrap();
        let mut n = note();
        n.signer = None;
        n.base = base.map(Sha::new);
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

    #[test]
    fn a_version_3_hallmark_binds_its_base_and_version_2_still_verifies() {
        let dir = tempfile::tempdir().unwrap();
        let (good, trust) = signed_on(dir.path(), &"c".repeat(40));
        assert_eq!(good.v, 3);
        assert_eq!(good.seal().and_then(|s| s.base), Some("c".repeat(40)));
        assert!(run(&good, &trust).is_ok());
        let mut n = good.clone();
        n.base = Some("d".repeat(40).into());
        assert_eq!(run(&n, &trust).unwrap_err().check(), "bad_signature");
        let mut n = good.clone();
        n.base = None;
        assert_eq!(
            run(&n, &trust).unwrap_err().check(),
            "bad_signature",
            "a base can't be dropped"
        );
        let mut n = good;
        n.v = 2;
        assert_eq!(
            run(&n, &trust).unwrap_err().check(),
            "bad_signature",
            "nor the version lowered to skip it"
        );
        let (old, trust) = signed(dir.path());
        assert_eq!(old.v, 2, "no base: a version 2 statement");
        assert!(run(&old, &trust).is_ok());
    }

    fn git(dir: &Path, args: &[&str]) -> String {
        let out = std::process::Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.com")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.com")
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    }

    #[test]
    fn the_base_must_be_in_the_branch_the_commit_lands_on() {
        let repo = tempfile::tempdir().unwrap();
        let r = repo.path();
        git(r, &["init", "-q", "-b", "main"]);
        git(r, &["commit", "-q", "--allow-empty", "-m", "root"]);
        git(r, &["switch", "-q", "-c", "parent"]);
        git(r, &["commit", "-q", "--allow-empty", "-m", "parent's work"]);
        let parent = git(r, &["rev-parse", "HEAD"]);
        git(r, &["switch", "-q", "-c", "child"]);
        git(r, &["commit", "-q", "--allow-empty", "-m", "child's work"]);
        let keys = tempfile::tempdir().unwrap();
        let (note, _) = signed_on(keys.path(), &parent);
        let verified = Verified {
            note,
            trust: "test".into(),
        };
        assert!(check_base(r, &verified, "parent").is_ok());
        // Pointed at main before the parent merged: main lacks the parent's work.
        let e = check_base(r, &verified, "main").unwrap_err();
        assert_eq!(e.check(), "base_not_in");
        assert!(e.to_string().contains("doesn't contain it"), "{e}");
        git(r, &["switch", "-q", "main"]);
        git(
            r,
            &["merge", "-q", "--no-ff", "parent", "-m", "Merge parent"],
        );
        assert!(check_base(r, &verified, "main").is_ok(), "merged: it is in");
        // A base this clone doesn't have fails closed.
        let (note, _) = signed_on(keys.path(), &"e".repeat(40));
        let unknown = Verified {
            note,
            trust: "test".into(),
        };
        let e = check_base(r, &unknown, "main").unwrap_err();
        assert!(e.to_string().contains("doesn't have that commit"), "{e}");
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
