//! Committed content read through its chain of names, each object re-hashed.
//!
//! git trusts its object store: `git show <rev>:<path>` prints whatever bytes sit under
//! a name, and a loose object rewritten in place (or a packed one patched) is served as
//! if it were the original. The object directory is writable by anything that can
//! commit, so an agent could rewrite the base branch's `.hallmark.toml` blob without
//! moving a ref. What the rules are made of is therefore read here, from the commit a
//! ref names, through its tree and subtrees, to the blob, and every object's content is
//! hashed again and compared with the name it was asked for: the rules can then be
//! changed only by changing the ref, which is protected.
//!
//! One `git cat-file --batch` process answers every object of a read (it flushes after
//! each one, so the walk can ask for the next object once it has the last). SHA-1
//! names are checked with SHA-1DC, the collision-detecting SHA-1 git itself uses, so a
//! crafted colliding object is refused as git would refuse it; SHA-256 repositories
//! (64-hex names) are checked with SHA-256. Replacement refs are ignored.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout};

use sha2::Digest;

use super::{GitError, Invocation, Result};

/// One entry of a tree object.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Entry {
    mode: String,
    name: Vec<u8>,
    oid: String,
}

impl Entry {
    fn is_tree(&self) -> bool {
        self.mode == "40000"
    }

    /// A file's blob: a regular file, an executable one, or a symlink (whose blob is its
    /// target, which is what `git show` prints for it too).
    fn is_blob(&self) -> bool {
        matches!(
            self.mode.as_str(),
            "100644" | "100755" | "100664" | "120000"
        )
    }
}

/// A reader of committed objects for one repository; every object it returns hashed
/// to the name it was asked for.
pub struct Committed {
    dir: std::path::PathBuf,
    /// The `cat-file --batch` process, while it can be talked to; without it each object
    /// is read by commands of its own (see [`Committed::ask_alone`]).
    batch: Option<Batch>,
    trees: HashMap<String, Vec<Entry>>,
}

/// A running `git cat-file --batch` and its pipes.
struct Batch {
    child: Child,
    input: Option<ChildStdin>,
    output: BufReader<ChildStdout>,
}

impl Drop for Batch {
    fn drop(&mut self) {
        // Closing its input ends `cat-file`; it is waited for so no zombie is left.
        drop(self.input.take());
        let _ = self.child.wait();
    }
}

fn unverified(oid: &str, why: impl Into<String>) -> GitError {
    GitError::Unverified {
        oid: oid.to_string(),
        why: why.into(),
    }
}

/// The object name `data` of kind `kind` has, in the hash a name of `len` hex digits
/// is made with; `Err` names a SHA-1 collision attack.
fn object_name(kind: &str, data: &[u8], len: usize) -> std::result::Result<String, &'static str> {
    let header = format!("{kind} {}\0", data.len());
    let bytes: Vec<u8> = match len {
        64 => {
            let mut h = sha2::Sha256::new();
            h.update(header.as_bytes());
            h.update(data);
            h.finalize().to_vec()
        }
        40 => {
            let mut h = sha1_checked::Sha1::new();
            h.update(header.as_bytes());
            h.update(data);
            let result = h.try_finalize();
            if result.has_collision() {
                return Err("its content is part of a SHA-1 collision attack");
            }
            result.hash().to_vec()
        }
        _ => return Err("its name is neither a SHA-1 nor a SHA-256 object name"),
    };
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

impl Committed {
    /// Starts the reader in the repository at `dir`.
    pub fn open(dir: &Path) -> Result<Committed> {
        let mut child =
            Invocation::at(dir).spawn(&["--no-replace-objects", "cat-file", "--batch"])?;
        let (Some(input), Some(output)) = (child.stdin.take(), child.stdout.take()) else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(GitError::Unexpected {
                args: "cat-file --batch".into(),
                what: "no pipes to talk to it".into(),
            });
        };
        Ok(Committed {
            dir: dir.to_path_buf(),
            batch: Some(Batch {
                child,
                input: Some(input),
                output: BufReader::new(output),
            }),
            trees: HashMap::new(),
        })
    }

    /// A reader that reads each object with commands of its own, as [`Committed::open`]'s
    /// does once its batch process can't be talked to.
    #[cfg(test)]
    fn without_batch(dir: &Path) -> Committed {
        Committed {
            dir: dir.to_path_buf(),
            batch: None,
            trees: HashMap::new(),
        }
    }

    fn broken(what: impl std::fmt::Display) -> GitError {
        GitError::Unexpected {
            args: "cat-file --batch".into(),
            what: what.to_string(),
        }
    }

    /// Asks for `name` (an object name, or `<ref>^{commit}`) and reads the answer:
    /// `None` when git has no such object. When the batch process can't be written to
    /// or read from (its pipe closed: it died, or the platform can't feed a pipe to it,
    /// as under Wine), it is let go, and this object and every later one are read by
    /// commands of their own. Either way the caller checks what comes back against
    /// its name.
    fn ask(&mut self, name: &str) -> Result<Option<(String, String, Vec<u8>)>> {
        if name.contains(['\n', '\r']) || name.starts_with('-') {
            return Ok(None);
        }
        if let Some(batch) = self.batch.as_mut() {
            match batch.ask(name) {
                Err(GitError::Unexpected { .. }) => {
                    // It is of no more use, and may be stuck: stopped before it is waited.
                    let _ = batch.child.kill();
                    self.batch = None;
                }
                answer => return answer,
            }
        }
        self.ask_alone(name)
    }

    /// [`Committed::ask`] without the batch process: the object's name from
    /// `rev-parse`, its kind and its bytes from `cat-file`, three commands that need no
    /// input.
    fn ask_alone(&self, name: &str) -> Result<Option<(String, String, Vec<u8>)>> {
        let git = Invocation::at(&self.dir);
        let run = |args: &[&str]| git.output(args);
        let named = run(&[
            "--no-replace-objects",
            "rev-parse",
            "--verify",
            "--quiet",
            name,
        ])?;
        if !named.status.success() {
            return Ok(None);
        }
        let oid = String::from_utf8_lossy(&named.stdout).trim().to_string();
        if !crate::item::sha::is_full(&oid) {
            return Err(Self::broken(format!(
                "rev-parse answered `{oid}` for {name}"
            )));
        }
        let kind = run(&["--no-replace-objects", "cat-file", "-t", &oid])?;
        if !kind.status.success() {
            return Ok(None);
        }
        let kind = String::from_utf8_lossy(&kind.stdout).trim().to_string();
        if !matches!(kind.as_str(), "commit" | "tree" | "blob" | "tag") {
            return Err(Self::broken(format!(
                "cat-file -t answered `{kind}` for {oid}"
            )));
        }
        let data = run(&["--no-replace-objects", "cat-file", &kind, &oid])?;
        if !data.status.success() {
            return Ok(None);
        }
        Ok(Some((oid, kind, data.stdout)))
    }

    /// The object `oid` of kind `kind`, its content checked against its name.
    fn object(&mut self, oid: &str, kind: &str) -> Result<Vec<u8>> {
        let oid = oid.to_ascii_lowercase();
        let Some((got, got_kind, data)) = self.ask(&oid)? else {
            return Err(unverified(&oid, "the object is missing"));
        };
        check(&oid, &got, &got_kind, &data)?;
        if got_kind != kind {
            return Err(unverified(
                &oid,
                format!("it is a {got_kind}, not a {kind}"),
            ));
        }
        Ok(data)
    }

    /// The commit `reference` (a full ref, or an object name) names, checked: `None`
    /// when it names nothing. A tag is peeled to its commit.
    pub fn commit_of(&mut self, reference: &str) -> Result<Option<String>> {
        let Some((oid, kind, data)) = self.ask(&format!("{reference}^{{commit}}"))? else {
            return Ok(None);
        };
        check(&oid, &oid, &kind, &data)?;
        Ok(Some(oid))
    }

    /// The tree of commit `commit`.
    fn tree_of(&mut self, commit: &str) -> Result<String> {
        let data = self.object(commit, "commit")?;
        let first = data.split(|b| *b == b'\n').next().unwrap_or_default();
        let tree = std::str::from_utf8(first)
            .ok()
            .and_then(|l| l.strip_prefix("tree "))
            .filter(|t| crate::item::sha::is_full(t) && t.len() == commit.len())
            .ok_or_else(|| unverified(commit, "the commit names no tree"))?;
        Ok(tree.to_string())
    }

    fn entries(&mut self, tree: &str) -> Result<Vec<Entry>> {
        if let Some(e) = self.trees.get(tree) {
            return Ok(e.clone());
        }
        let data = self.object(tree, "tree")?;
        let entries = parse_tree(tree, &data)?;
        self.trees.insert(tree.to_string(), entries.clone());
        Ok(entries)
    }

    /// The bytes of the file at `path` in commit `commit` (a full object name), every
    /// object on the way checked: `None` when the commit has no file there.
    pub fn file(&mut self, commit: &str, path: &str) -> Result<Option<Vec<u8>>> {
        let mut tree = self.tree_of(commit)?;
        let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
        let Some((last, dirs)) = parts.split_last() else {
            return Ok(None);
        };
        for dir in dirs {
            match self.lookup(&tree, dir)? {
                Some(e) if e.is_tree() => tree = e.oid,
                _ => return Ok(None),
            }
        }
        match self.lookup(&tree, last)? {
            Some(e) if e.is_blob() => self.object(&e.oid, "blob").map(Some),
            _ => Ok(None),
        }
    }

    fn lookup(&mut self, tree: &str, name: &str) -> Result<Option<Entry>> {
        Ok(self
            .entries(tree)?
            .into_iter()
            .find(|e| e.name == name.as_bytes()))
    }
}

impl Batch {
    /// Writes `name` to `cat-file --batch` and reads its answer.
    fn ask(&mut self, name: &str) -> Result<Option<(String, String, Vec<u8>)>> {
        let input = self
            .input
            .as_mut()
            .ok_or_else(|| Committed::broken("its input is closed"))?;
        input
            .write_all(format!("{name}\n").as_bytes())
            .and_then(|()| input.flush())
            .map_err(Committed::broken)?;
        let mut header = String::new();
        self.output
            .read_line(&mut header)
            .map_err(Committed::broken)?;
        let header = header.trim_end();
        let mut parts = header.split(' ');
        let (Some(oid), Some(kind)) = (parts.next(), parts.next()) else {
            return Err(Committed::broken(format!("`{header}`")));
        };
        if matches!(kind, "missing" | "ambiguous") {
            return Ok(None);
        }
        let size: usize = parts
            .next()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| Committed::broken(format!("`{header}`")))?;
        let mut data = vec![0; size + 1];
        self.output
            .read_exact(&mut data)
            .map_err(Committed::broken)?;
        data.pop();
        Ok(Some((oid.to_string(), kind.to_string(), data)))
    }
}

/// Checks that the object git answered for `asked` is the one asked for, and that its
/// content hashes to that name.
fn check(asked: &str, got: &str, kind: &str, data: &[u8]) -> Result<()> {
    if !got.eq_ignore_ascii_case(asked) {
        return Err(unverified(asked, format!("git answered with {got}")));
    }
    let name = object_name(kind, data, asked.len()).map_err(|why| unverified(asked, why))?;
    if !name.eq_ignore_ascii_case(asked) {
        return Err(unverified(
            asked,
            format!("its content hashes to {name}: the object was changed after it was written"),
        ));
    }
    Ok(())
}

/// A tree object's entries: `<mode> <name>\0<raw object name>`, the raw name as long as
/// the tree's own.
fn parse_tree(tree: &str, data: &[u8]) -> Result<Vec<Entry>> {
    let raw = tree.len() / 2;
    let bad = || unverified(tree, "the tree can't be read");
    let mut entries = Vec::new();
    let mut rest = data;
    while !rest.is_empty() {
        let space = rest.iter().position(|b| *b == b' ').ok_or_else(bad)?;
        let nul = rest.iter().position(|b| *b == 0).ok_or_else(bad)?;
        if nul < space || rest.len() < nul + 1 + raw {
            return Err(bad());
        }
        let mode = std::str::from_utf8(&rest[..space]).map_err(|_| bad())?;
        let oid: String = rest[nul + 1..nul + 1 + raw]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        entries.push(Entry {
            mode: mode.to_string(),
            name: rest[space + 1..nul].to_vec(),
            oid,
        });
        rest = &rest[nul + 1 + raw..];
    }
    Ok(entries)
}

/// Files at `commit`, by path, read in one process with every object checked.
pub fn committed_files(dir: &Path, commit: &str, paths: &[&str]) -> Result<Vec<Option<Vec<u8>>>> {
    let mut reader = Committed::open(dir)?;
    paths.iter().map(|p| reader.file(commit, p)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::git::tests::git;

    fn repo(format: &str) -> (tempfile::TempDir, std::path::PathBuf, String) {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("r");
        std::fs::create_dir_all(root.join("docs/deep")).expect("mkdir");
        git(
            &root,
            &[
                "init",
                "-q",
                "-b",
                "main",
                &format!("--object-format={format}"),
            ],
        );
        std::fs::write(root.join(".hallmark.toml"), "gates = [\"make test\"]\n").expect("w");
        std::fs::write(root.join("docs/deep/rules.md"), "be careful\n").expect("w");
        git(&root, &["add", "-A"]);
        git(&root, &["commit", "-q", "-m", "one"]);
        let head = git(&root, &["rev-parse", "HEAD"]);
        (dir, root, head)
    }

    /// Rewrites the loose object `oid` in place with `content` (a blob), so git serves
    /// the new bytes under the old name: git writes the forged object, whose file is
    /// then copied over the original's.
    fn rewrite_loose(root: &Path, oid: &str, content: &[u8]) {
        let src = root.join("forged-content");
        std::fs::write(&src, content).unwrap();
        let forged = git(root, &["hash-object", "-w", &src.display().to_string()]);
        std::fs::remove_file(&src).unwrap();
        let objects = root.join(".git/objects");
        let file = |oid: &str| objects.join(&oid[..2]).join(&oid[2..]);
        let path = file(oid);
        let mut perms = std::fs::metadata(&path).unwrap().permissions();
        #[allow(clippy::permissions_set_readonly_false)]
        perms.set_readonly(false);
        std::fs::set_permissions(&path, perms).unwrap();
        std::fs::copy(file(&forged), &path).unwrap();
    }

    #[test]
    fn files_are_read_through_the_commit_and_its_trees_in_both_hashes() {
        for format in ["sha1", "sha256"] {
            let (_d, root, head) = repo(format);
            let files = committed_files(
                &root,
                &head,
                &[
                    ".hallmark.toml",
                    "docs/deep/rules.md",
                    "nothing.md",
                    "docs",
                    "docs/deep",
                ],
            )
            .unwrap();
            assert_eq!(files[0].as_deref(), Some(&b"gates = [\"make test\"]\n"[..]));
            assert_eq!(files[1].as_deref(), Some(&b"be careful\n"[..]), "{format}");
            assert_eq!(
                files[2..],
                [None, None, None],
                "absent, and trees aren't files"
            );
            let mut reader = Committed::open(&root).unwrap();
            assert_eq!(reader.commit_of("refs/heads/main").unwrap(), Some(head));
            assert_eq!(reader.commit_of("refs/heads/nope").unwrap(), None);
        }
    }

    #[test]
    fn a_loose_object_rewritten_under_its_own_name_is_refused() {
        let (_d, root, head) = repo("sha1");
        let blob = git(&root, &["rev-parse", "HEAD:.hallmark.toml"]);
        rewrite_loose(&root, &blob, b"gates = [\"true\"]\n");
        // git itself serves the new bytes under the old name...
        assert_eq!(
            git(&root, &["show", "HEAD:.hallmark.toml"]),
            "gates = [\"true\"]"
        );
        // ...and the reader refuses them.
        let err = committed_files(&root, &head, &[".hallmark.toml"]).unwrap_err();
        let text = err.to_string();
        assert!(
            matches!(err, GitError::Unverified { ref oid, .. } if *oid == blob),
            "{text}"
        );
        assert!(text.contains("was changed after it was written"), "{text}");
        // A file beside it, whose objects are intact, still reads.
        let other = committed_files(&root, &head, &["docs/deep/rules.md"]).unwrap();
        assert_eq!(other[0].as_deref(), Some(&b"be careful\n"[..]));
    }

    #[test]
    fn a_rewritten_tree_or_a_commit_of_the_wrong_kind_is_refused() {
        let (_d, root, head) = repo("sha1");
        let tree = git(&root, &["rev-parse", "HEAD^{tree}"]);
        // A blob's bytes under the tree's name: the kind and the hash both differ.
        rewrite_loose(&root, &tree, b"not a tree");
        let err = committed_files(&root, &head, &[".hallmark.toml"]).unwrap_err();
        assert!(
            matches!(err, GitError::Unverified { ref oid, .. } if *oid == tree),
            "{err}"
        );
    }

    #[test]
    fn without_its_batch_process_the_reader_reads_and_refuses_the_same() {
        for format in ["sha1", "sha256"] {
            let (_d, root, head) = repo(format);
            let mut reader = Committed::without_batch(&root);
            let tip = reader.commit_of("refs/heads/main").unwrap();
            assert_eq!(tip.as_deref(), Some(head.as_str()), "{format}");
            assert_eq!(reader.commit_of("refs/heads/nothing").unwrap(), None);
            assert_eq!(
                reader.file(&head, "docs/deep/rules.md").unwrap().as_deref(),
                Some(&b"be careful\n"[..]),
                "{format}"
            );
            assert_eq!(reader.file(&head, "docs/deep").unwrap(), None);
        }
        let (_d, root, head) = repo("sha1");
        let blob = git(&root, &["rev-parse", "HEAD:.hallmark.toml"]);
        rewrite_loose(&root, &blob, b"gates = [\"true\"]\n");
        let err = Committed::without_batch(&root)
            .file(&head, ".hallmark.toml")
            .unwrap_err();
        assert!(
            matches!(err, GitError::Unverified { ref oid, .. } if *oid == blob),
            "{err}"
        );
    }

    #[test]
    fn a_batch_process_that_dies_is_let_go_and_the_read_goes_on() {
        let (_d, root, head) = repo("sha1");
        let mut reader = Committed::open(&root).unwrap();
        assert!(reader.file(&head, ".hallmark.toml").unwrap().is_some());
        if let Some(batch) = reader.batch.as_mut() {
            batch.child.kill().unwrap();
            let _ = batch.child.wait();
        }
        reader.trees.clear();
        assert_eq!(
            reader.file(&head, "docs/deep/rules.md").unwrap().as_deref(),
            Some(&b"be careful\n"[..])
        );
        assert!(reader.batch.is_none(), "the dead process was let go");
    }

    /// What a verified read costs against `git show`, the read it replaces (run with
    /// `--ignored --nocapture`; a debug build shows the ratio).
    #[test]
    #[ignore]
    fn time_a_verified_read_against_git_show() {
        let (_d, root, head) = repo("sha1");
        let n = 200;
        let started = std::time::Instant::now();
        for _ in 0..n {
            let shown = crate::git::show_file(&root, &head, ".hallmark.toml").unwrap();
            assert!(shown.is_some());
        }
        let show = started.elapsed() / n;
        let started = std::time::Instant::now();
        for _ in 0..n {
            let read = committed_files(&root, &head, &[".hallmark.toml"]).unwrap();
            assert!(read[0].is_some());
        }
        let verified = started.elapsed() / n;
        println!("git show: {show:?} a read; verified read: {verified:?} a read");
    }

    #[test]
    fn names_hash_as_git_hashes_them() {
        assert_eq!(
            object_name("blob", b"", 40).unwrap(),
            "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"
        );
        assert_eq!(
            object_name("blob", b"", 64).unwrap(),
            "473a0f4c3be8a93681a267e3b1e9a7dcda1185436fe141f7749120a303721813"
        );
        assert!(object_name("blob", b"", 12).is_err());
    }
}
