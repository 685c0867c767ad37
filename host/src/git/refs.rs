//! Refs read from the files git keeps (loose refs, `packed-refs`), for the paths that
//! run on every command or tool call, where a `git` process would cost more than the
//! rest of the work. Each answer says when the files cannot answer, so the caller asks
//! git instead of guessing.

use std::path::Path;

use super::{Repo, Sha};
use crate::item::sha::is_full as is_sha;

/// What git's ref files say about one ref.
#[derive(Debug, PartialEq, Eq)]
pub enum RefFiles {
    /// The ref names this commit.
    Commit(String),
    /// The files answer for every ref and this one is not among them.
    Absent,
    /// The files cannot say (a symbolic or odd loose ref, reftable storage): ask git.
    Ask,
}

/// What the files in the common git directory `common` say about the full ref `name`.
pub fn ref_files(common: &Path, name: &str) -> RefFiles {
    if name.contains("..") || !name.starts_with("refs/") {
        return RefFiles::Absent;
    }
    match std::fs::read_to_string(common.join(name)) {
        Ok(loose) => {
            let loose = loose.trim();
            return if is_sha(loose) {
                RefFiles::Commit(loose.to_string())
            } else {
                RefFiles::Ask
            };
        }
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return RefFiles::Ask,
        Err(_) => {}
    }
    let packed = match std::fs::read_to_string(common.join("packed-refs")) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(_) => return RefFiles::Ask,
    };
    let found = packed.as_deref().and_then(|text| {
        text.lines().find_map(|line| {
            let (sha, r) = line.split_once(' ')?;
            (r == name && is_sha(sha)).then(|| sha.to_string())
        })
    });
    match found {
        Some(sha) => RefFiles::Commit(sha),
        // A repository that keeps its refs in a reftable has no loose files to read.
        None if common.join("reftable").exists() => RefFiles::Ask,
        None => RefFiles::Absent,
    }
}

/// The commit a full ref name points at, from the loose ref file or `packed-refs`.
pub fn read_ref(common: &Path, name: &str) -> Option<String> {
    match ref_files(common, name) {
        RefFiles::Commit(sha) => Some(sha),
        RefFiles::Absent | RefFiles::Ask => None,
    }
}

/// HEAD's commit read from the files git keeps (HEAD, the loose ref, packed-refs), for
/// the hot path of a hook; `None` whenever the layout is anything but the plain one
/// (reftable, symbolic chains, a missing ref), and the caller then asks git.
pub fn head_native(repo: &Repo) -> Option<Sha> {
    let head = std::fs::read_to_string(repo.git_dir.join("HEAD")).ok()?;
    let head = head.trim();
    let Some(name) = head.strip_prefix("ref: ") else {
        return is_sha(head).then(|| Sha::new(head));
    };
    if !name.starts_with("refs/heads/") {
        return None;
    }
    read_ref(&repo.common_dir, name).map(Sha::new)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn refs_are_read_from_loose_files_and_packed_refs() {
        let dir = tempfile::tempdir().unwrap();
        let common = dir.path();
        let a = "a".repeat(40);
        let b = "b".repeat(40);
        std::fs::create_dir_all(common.join("refs/heads")).unwrap();
        std::fs::write(common.join("refs/heads/main"), format!("{a}\n")).unwrap();
        std::fs::write(
            common.join("packed-refs"),
            format!("# pack-refs with: peeled fully-peeled sorted\n{b} refs/heads/trunk\n"),
        )
        .unwrap();
        assert_eq!(read_ref(common, "refs/heads/main"), Some(a));
        assert_eq!(read_ref(common, "refs/heads/trunk"), Some(b));
        assert_eq!(read_ref(common, "refs/heads/none"), None);
        assert_eq!(read_ref(common, "refs/heads/../../x"), None, "no escapes");
        assert_eq!(read_ref(common, "HEAD"), None, "only refs/");
        assert_eq!(ref_files(common, "refs/heads/none"), RefFiles::Absent);
        std::fs::write(common.join("refs/heads/link"), "ref: refs/heads/main\n").unwrap();
        assert_eq!(
            ref_files(common, "refs/heads/link"),
            RefFiles::Ask,
            "a symbolic ref is git's to resolve"
        );
        std::fs::create_dir(common.join("reftable")).unwrap();
        assert_eq!(
            ref_files(common, "refs/heads/none"),
            RefFiles::Ask,
            "reftable storage keeps no loose files"
        );
    }
}
