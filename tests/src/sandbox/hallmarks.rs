//! Hallmarks made by hand, as the Assay Office or a forger would: approvals recorded in
//! the journal, the signed statement rebuilt from the documentation, notes written with
//! git.

use std::path::{Path, PathBuf};
use std::process::Command;

use hallmark_core::item::ItemId;

use serde_json::Value;

use super::{PRINCIPAL, Sandbox};

/// What an approval says, for [`Sandbox::signed_note`].
#[derive(Clone, Debug)]
pub struct Approval<'a> {
    pub round: u32,
    /// `assayer`, or `you` for a person's verdict.
    pub actor: &'a str,
    pub model: Option<&'a str>,
    /// Findings still open when it was approved.
    pub open: Vec<&'a str>,
    /// For an approval carried across a rebase: the commit approved.
    pub carried_from: Option<&'a str>,
    /// The commit the change was measured from: a version 3 note (none: version 2).
    pub base: Option<&'a str>,
}

impl Default for Approval<'_> {
    fn default() -> Self {
        Approval {
            round: 1,
            actor: "assayer",
            model: None,
            open: Vec::new(),
            carried_from: None,
            base: None,
        }
    }
}

/// The text a hallmark's signature covers, rebuilt from the note's JSON as
/// docs/guide.md documents it (one `name value` line each, an empty value for a
/// missing field). Written here from the documentation rather than taken from `hall`, so
/// that a drift between the two fails the tests.
pub fn statement(note: &Value) -> String {
    let text = |k: &str| note[k].as_str().unwrap_or("").to_string();
    let open: Vec<&str> = note["open_findings"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    // Version 3 names the base after the tree.
    let base = if note["v"].as_u64().unwrap_or(0) >= 3 {
        format!("base {}\n", text("base"))
    } else {
        String::new()
    };
    format!(
        "hallmark v{}\nitem {}\ncommit {}\ntree {}\n{base}round {}\nactor {}\nmodel {}\nopen {}\napproved {}\nsigner {}\n",
        note["v"],
        text("item"),
        text("sha"),
        text("tree"),
        note["round"],
        text("actor"),
        text("model"),
        open.join(","),
        text("approved_sha"),
        text("signer"),
    )
}

impl Sandbox {
    /// Records the assayer's approval of `sha` (checks passed, an approving verdict,
    /// the hallmark) in the item's journal: the Assay Office's events, for tests that
    /// need a hallmarked item. The `hallmarked` line carries no signature (like a line
    /// from before signing, or a forged one); [`Sandbox::strike`] makes a real one.
    pub fn approve(&self, item: &str, sha: &str, round: u32) {
        self.record(
            item,
            "assayer",
            serde_json::json!({"event": "checks_passed", "sha": sha}),
        );
        self.record(
            item,
            "assayer",
            serde_json::json!({"event": "verdict", "sha": sha, "round": round, "approved": true}),
        );
        self.record(
            item,
            "assayer",
            serde_json::json!({"event": "hallmarked", "sha": sha, "round": round}),
        );
    }

    /// The user config directory every `hall` here runs with (`HALL_CONFIG_DIR`), where
    /// the signing key lives.
    pub fn config_dir(&self) -> PathBuf {
        self.root.join("config")
    }

    /// The loop's checkout of item `id`, under this sandbox's cache directory.
    pub fn loop_checkout(&self, id: &str) -> PathBuf {
        let checkouts = self.root.join("cache/checkouts");
        let repo_dir = std::fs::read_dir(&checkouts)
            .expect("the loop's checkouts")
            .flatten()
            .find(|e| e.path().is_dir())
            .expect("a repository's checkouts")
            .path();
        repo_dir.join(id)
    }

    /// The private key `hall` signs with in this sandbox (`signing_ed25519` in its config
    /// directory), made with `ssh-keygen` when `hall` hasn't made it yet: the test signs
    /// with the same tools a person could, never with hall's own code.
    pub fn signing_key(&self) -> PathBuf {
        let key = self.config_dir().join("signing_ed25519");
        if !key.exists() {
            let out = Command::new("ssh-keygen")
                .args(["-q", "-t", "ed25519", "-N", "", "-C", "hallmark", "-f"])
                .arg(&key)
                .output()
                .expect("ssh-keygen runs");
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        key
    }

    /// The signing key's public half, as an OpenSSH line without its comment.
    pub fn public_key(&self) -> String {
        let out = Command::new("ssh-keygen")
            .arg("-y")
            .arg("-f")
            .arg(self.signing_key())
            .output()
            .expect("ssh-keygen runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let line = String::from_utf8_lossy(&out.stdout).trim().to_string();
        line.split_whitespace()
            .take(2)
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// The signing key's fingerprint, `SHA256:…`, as `ssh-keygen -l` prints it.
    pub fn fingerprint(&self) -> String {
        let key = self.signing_key();
        let out = Command::new("ssh-keygen")
            .args(["-l", "-E", "sha256", "-f"])
            .arg(&key)
            .output()
            .expect("ssh-keygen runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .nth(1)
            .expect("a fingerprint")
            .to_string()
    }

    /// The `allowed_signers` line that trusts this sandbox's signer.
    pub fn signers_line(&self) -> String {
        format!("{PRINCIPAL} namespaces=\"hallmark\" {}", self.public_key())
    }

    /// Signs `statement` with this sandbox's key in Hallmark's namespace, the way
    /// `ssh-keygen -Y sign` does; returns the armored signature.
    pub fn sign(&self, statement: &str) -> String {
        use std::io::Write;
        let mut child = Command::new("ssh-keygen")
            .args(["-Y", "sign", "-n", "hallmark", "-q", "-f"])
            .arg(self.signing_key())
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("ssh-keygen runs");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(statement.as_bytes())
            .expect("write");
        let out = child.wait_with_output().expect("ssh-keygen runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// A signed hallmark for `sha` of item `item` (tree `tree`), as the assayer makes
    /// one: the note's JSON, with its [`statement`] signed.
    pub fn signed_note(&self, item: &str, sha: &str, tree: &str, approval: &Approval) -> Value {
        let item = item.parse::<ItemId>().expect("item id").to_string();
        let mut note = serde_json::json!({
            "v": 2, "item": item, "sha": sha, "tree": tree, "round": approval.round,
            "open_findings": approval.open, "actor": approval.actor,
            "signer": PRINCIPAL, "key": self.fingerprint(),
        });
        if let Some(m) = approval.model {
            note["model"] = m.into();
        }
        if let Some(from) = approval.carried_from {
            note["approved_sha"] = from.into();
        }
        if let Some(base) = approval.base {
            note["v"] = 3.into();
            note["base"] = base.into();
        }
        note["sig"] = self.sign(&statement(&note)).into();
        note
    }

    /// Strikes a real hallmark the way the assayer does: the checks pass, the verdict
    /// approves, the note the journal describes is signed with this sandbox's key, the
    /// journal records `hallmarked` with that signature, and the note goes on `sha`
    /// (written from `dir` with `HALL_ACTOR=assayer`). Returns the note.
    pub fn strike(&self, item: &str, dir: &Path, sha: &str, round: u32) -> Value {
        self.strike_on(item, dir, sha, round, "main")
    }

    /// [`Sandbox::strike`] for an item whose base is `base` (a stacked item is measured
    /// from where it left that branch, as the reviewer's diff is).
    pub fn strike_on(&self, item: &str, dir: &Path, sha: &str, round: u32, base: &str) -> Value {
        self.record(
            item,
            "assayer",
            serde_json::json!({"event": "checks_passed", "sha": sha}),
        );
        self.record(
            item,
            "assayer",
            serde_json::json!({"event": "verdict", "sha": sha, "round": round, "approved": true, "model": "opus"}),
        );
        let tree = self.git(dir, &["rev-parse", &format!("{sha}^{{tree}}")]);
        // Measured from where the branch left its base, as the reviewer's diff is.
        let base = self.git(dir, &["merge-base", base, sha]);
        let approval = Approval {
            round,
            model: Some("opus"),
            base: Some(&base),
            ..Approval::default()
        };
        let note = self.signed_note(item, sha, &tree, &approval);
        let seal = serde_json::json!({"tree": tree, "signer": note["signer"], "key": note["key"], "sig": note["sig"], "base": note["base"]});
        self.record(
            item,
            "assayer",
            serde_json::json!({"event": "hallmarked", "sha": sha, "round": round, "seal": seal}),
        );
        self.note_on(dir, sha, &note);
        note
    }

    /// Writes `body` as the hallmark note on HEAD of `dir`, as a process with
    /// `HALL_ACTOR=assayer` would: for forged, copied or unsigned notes.
    pub fn note(&self, dir: &Path, body: &Value) {
        self.note_on(dir, "HEAD", body);
    }

    /// Writes `body` as the hallmark note on `rev`, from `dir`.
    pub fn note_on(&self, dir: &Path, rev: &str, body: &Value) {
        let mut cmd = Command::new("git");
        self.env(&mut cmd);
        let out = cmd
            .env("HALL_ACTOR", "assayer")
            .args([
                "notes",
                "--ref=hallmark",
                "add",
                "-f",
                "-m",
                &body.to_string(),
                rev,
            ])
            .current_dir(dir)
            .output()
            .expect("git runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
