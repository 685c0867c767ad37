//! Signed hallmarks seen from outside: `hall verify` in a fresh clone of origin, with no
//! journal and none of the user's keys, accepts a hallmark the loop struck and refuses
//! every forgery an agent with Bash has tried, each by the name of the check that caught
//! it. The CI snippet in docs/ci does the same, and ssh-keygen agrees with the
//! signatures through the by-hand recipe in docs/guide.md.

#![allow(clippy::unwrap_used)] // a panic is how a test fails

use std::path::{Path, PathBuf};

use crate::common::*;
use hallmark_tests::sandbox::{Approval, statement};

/// A fresh clone of origin in `root/<name>`, with origin's hallmark notes (and its
/// replace refs when `replace` is set), and no journal.
fn fresh_clone(sb: &Sandbox, name: &str, notes: bool, replace: bool) -> PathBuf {
    let origin = sb.origin.display().to_string();
    sb.git(&sb.root, &["clone", "-q", &origin, name]);
    let dir = sb.root.join(name);
    if notes {
        sb.git(
            &dir,
            &[
                "fetch",
                "-q",
                "origin",
                "+refs/notes/hallmark:refs/notes/hallmark",
            ],
        );
    }
    if replace {
        sb.git(
            &dir,
            &["fetch", "-q", "origin", "+refs/replace/*:refs/replace/*"],
        );
    }
    assert!(
        !dir.join(".git/hallmark").exists(),
        "a clone has no journal"
    );
    dir
}

/// `hall verify <rev> --base main` in `dir`, as someone who has none of the signer's
/// keys (an empty user config directory).
fn verify_in(sb: &Sandbox, dir: &Path, rev: &str) -> Run {
    let stranger = sb.root.join("stranger-config");
    std::fs::create_dir_all(&stranger).unwrap();
    sb.hall_env(
        dir,
        &["verify", rev, "--base", "main", "--json"],
        &[("HALL_CONFIG_DIR", stranger.to_str().unwrap())],
    )
}

/// Asserts that `run` refused with `NOT_HALLMARKED` because of `check`.
fn refused(run: &Run, check: &str) -> String {
    let v = run.err("NOT_HALLMARKED", 5);
    assert_eq!(v["error"]["check"], check, "{run:?}");
    v["error"]["message"].as_str().unwrap().to_string()
}

/// Pushes the item's branch and the notes as a forger would (forced, bypassing hall),
/// then verifies `rev` in a fresh clone named `name`.
fn forge_and_check(sb: &Sandbox, wt: &Path, name: &str, rev: &str) -> Run {
    sb.git(wt, &["push", "-q", "-f", "origin", "HEAD"]);
    sb.git(
        &sb.repo,
        &["push", "-q", "-f", "origin", "refs/notes/hallmark"],
    );
    let clone = fresh_clone(sb, name, true, false);
    verify_in(sb, &clone, rev)
}

#[test]
fn the_loop_ends_with_a_signed_hallmark_that_a_fresh_clone_verifies() {
    let l = Loop::signed(CONFIG, json!({"review": [approve()]}));
    l.make_ready();
    l.daemon();
    let status = l.status();
    assert_eq!(status["item"]["state"], "closed", "{status}");
    let sha = status["item"]["hallmark"].as_str().unwrap().to_string();
    // The note is a signed version 3 hallmark on that commit and its tree.
    let note: Value = serde_json::from_str(
        &l.sb
            .git(&l.sb.repo, &["notes", "--ref=hallmark", "show", &sha]),
    )
    .unwrap();
    assert_eq!(note["v"], 3);
    assert_eq!(note["sha"], sha.as_str());
    assert_eq!(
        note["tree"],
        l.sb.git(&l.sb.repo, &["rev-parse", &format!("{sha}^{{tree}}")])
    );
    assert_eq!(note["signer"], "ada@example.com");
    assert_eq!(note["key"], l.sb.fingerprint());
    assert!(
        note["sig"]
            .as_str()
            .unwrap()
            .starts_with("-----BEGIN SSH SIGNATURE-----")
    );
    // The journal's line carries the same signature.
    let struck = l.events_of(&l.id, "hallmarked");
    assert_eq!(struck[0]["seal"]["sig"], note["sig"]);
    // The shipper pushed the notes with the branch.
    assert_eq!(
        l.sb.git(&l.sb.origin, &["rev-parse", "refs/notes/hallmark"]),
        l.sb.git(&l.sb.repo, &["rev-parse", "refs/notes/hallmark"])
    );
    // A fresh clone of origin, no journal, none of Ada's keys: verified against main's
    // allowed_signers.
    let clone = fresh_clone(&l.sb, "clone", true, false);
    let v = verify_in(&l.sb, &clone, &sha).ok();
    assert_eq!(v["sha"], sha.as_str());
    assert_eq!(v["tree"], note["tree"]);
    assert_eq!(v["item"], l.id.as_str());
    assert_eq!(v["round"], note["round"]);
    assert_eq!(v["actor"], "assayer");
    assert_eq!(v["signer"], "ada@example.com");
    assert_eq!(v["key"], note["key"]);
    assert!(v["approved_sha"].is_null());
    assert!(
        v["trust"]
            .as_str()
            .unwrap()
            .contains(".hallmark/allowed_signers on main"),
        "{v}"
    );
    // `--pr` asks gh for the pull request's head and base: the PR the loop opened.
    let pr = l.sb.github().pr(1).expect("the loop opened PR 1");
    assert_eq!(pr.head_oid, sha);
    let by_pr = l.sb.hall(&clone, &["verify", "--pr", "1", "--json"]).ok();
    assert_eq!(by_pr["sha"], sha.as_str());
    // Without the notes, the same clone has nothing to show.
    let bare = fresh_clone(&l.sb, "clone-without-notes", false, false);
    refused(&verify_in(&l.sb, &bare, &sha), "no_note");
    // A base with no allowed_signers has its own error, which says how to make one.
    l.sb.git(&clone, &["branch", "before-signers", "HEAD~1"]);
    let e =
        l.sb.hall(&clone, &["verify", &sha, "--base", "before-signers"])
            .err("NO_ALLOWED_SIGNERS", 3);
    assert_eq!(e["error"]["next"][0], "hall init --signers");
}

#[test]
fn a_notes_push_that_fails_holds_the_item_and_notes_from_other_clones_are_kept() {
    let l = Loop::new(CONFIG, json!({"review": [approve()]}));
    // Another clone noted main's commit and pushed its notes first.
    let other = fresh_clone(&l.sb, "other", false, false);
    let elsewhere = l.sb.git(&other, &["rev-parse", "HEAD"]);
    l.sb.git(
        &other,
        &[
            "notes",
            "--ref=hallmark",
            "add",
            "-m",
            "noted elsewhere",
            "HEAD",
        ],
    );
    l.sb.git(&other, &["push", "-q", "origin", "refs/notes/hallmark"]);
    let theirs = l.sb.git(&other, &["rev-parse", "refs/notes/hallmark"]);
    // Origin refuses notes for now.
    let hook = l.sb.origin.join("hooks/pre-receive");
    std::fs::write(
        &hook,
        "#!/bin/sh\nwhile read old new ref; do case \"$ref\" in refs/notes/*) echo 'notes are closed today' >&2; exit 1;; esac; done\n",
    )
    .unwrap();
    assert_eq!(
        l.sb.sh(&l.sb.origin, "chmod +x hooks/pre-receive", &[])
            .code,
        0
    );
    l.make_ready();
    l.daemon();
    let status = l.status();
    assert_eq!(status["item"]["state"], "hallmarked", "{status}");
    assert_eq!(status["item"]["hold"]["kind"], "ship_failed");
    let reason = status["item"]["hold"]["reason"].as_str().unwrap();
    assert!(
        reason.contains("pushing the hallmark notes to origin failed")
            && reason.contains("notes are closed today"),
        "{reason}"
    );
    assert!(
        !l.sb
            .git(&l.sb.origin, &["branch", "--list"])
            .contains("hm/"),
        "nothing shipped"
    );
    // Origin takes notes again: the retry ships, and origin keeps both clones' notes.
    std::fs::remove_file(&hook).unwrap();
    l.sb.hall(
        &l.sb.repo,
        &["retry", &l.id, "--reason", "notes open again"],
    )
    .ok();
    l.daemon();
    let status = l.status();
    assert_eq!(status["item"]["state"], "closed", "{status}");
    let sha = status["item"]["hallmark"].as_str().unwrap().to_string();
    assert_eq!(
        l.sb.git(
            &l.sb.origin,
            &["notes", "--ref=hallmark", "show", &elsewhere]
        ),
        "noted elsewhere"
    );
    let ours: Value = serde_json::from_str(
        &l.sb
            .git(&l.sb.origin, &["notes", "--ref=hallmark", "show", &sha]),
    )
    .unwrap();
    assert_eq!(ours["v"], 3);
    let now =
        l.sb.git(&l.sb.origin, &["rev-parse", "refs/notes/hallmark"]);
    l.sb.git(
        &l.sb.origin,
        &["merge-base", "--is-ancestor", &theirs, &now],
    );
}

#[test]
fn an_unsigned_or_mismatched_journal_line_never_becomes_a_note() {
    let l = Loop::new(CONFIG, json!({}));
    // An item whose journal says hallmarked, with no signature (a line from before
    // signing, or one an agent appended).
    let first =
        l.sb.commit(&l.wt, "lib.txt", "attempts <= 3\n", "Inclusive");
    l.sb.hall(&l.wt, &["ready"]).ok();
    l.sb.approve(&l.id, &first, 1);
    // A second item whose line carries a real signature, made for another commit.
    let v = l.sb.hall(&l.sb.repo, &["new", "--title", "Borrowed"]).ok();
    let id2 = v["item"].as_str().unwrap().to_string();
    let wt2 = l.sb.worktree(&id2);
    let second = l.sb.commit(&wt2, "b.txt", "b\n", "Borrowed approval");
    l.sb.hall(&wt2, &["ready"]).ok();
    let first_tree =
        l.sb.git(&l.wt, &["rev-parse", &format!("{first}^{{tree}}")]);
    let other =
        l.sb.signed_note(&id2, &first, &first_tree, &Approval::default());
    let seal = json!({
        "tree": l.sb.git(&wt2, &["rev-parse", &format!("{second}^{{tree}}")]),
        "signer": other["signer"], "key": other["key"], "sig": other["sig"],
    });
    for (event, actor) in [
        (json!({"event": "checks_passed", "sha": second}), "assayer"),
        (
            json!({"event": "verdict", "sha": second, "round": 1, "approved": true}),
            "assayer",
        ),
        (
            json!({"event": "hallmarked", "sha": second, "round": 1, "seal": seal}),
            "assayer",
        ),
    ] {
        l.sb.record(&id2, actor, event);
    }
    l.daemon();
    for (item, sha, why) in [
        (&l.id, &first, "is unsigned"),
        (&id2, &second, "does not match the approval it records"),
    ] {
        let status = l.sb.hall(&l.sb.repo, &["status", item]).ok();
        assert_eq!(status["item"]["state"], "hallmarked", "{status}");
        assert_eq!(status["item"]["hold"]["kind"], "ship_failed", "{status}");
        let reason = status["item"]["hold"]["reason"].as_str().unwrap();
        assert!(reason.contains(why), "{reason}");
        let note = l.sb.sh(
            &l.sb.repo,
            &format!("git notes --ref=hallmark show {sha}"),
            &[],
        );
        assert_ne!(note.code, 0, "no note was written on {sha}: {note:?}");
    }
    assert!(
        !l.sb
            .git(&l.sb.origin, &["branch", "--list"])
            .contains("hm/"),
        "nothing shipped"
    );
}

#[test]
fn a_hallmark_the_base_does_not_trust_is_held_before_anything_moves() {
    let l = shippable_later(json!({"review": [approve()]}));
    let sha = l.status()["item"]["hallmark"].as_str().unwrap().to_string();
    // main now lists only someone else's key, and has moved on.
    l.sb.sh(
        &l.sb.root,
        "ssh-keygen -q -t ed25519 -N '' -C grace -f grace",
        &[],
    );
    let grace = std::fs::read_to_string(l.sb.root.join("grace.pub")).unwrap();
    l.sb.commit(
        &l.sb.repo,
        ".hallmark/allowed_signers",
        &format!("grace@example.com namespaces=\"hallmark\" {grace}"),
        "Only Grace signs",
    );
    l.move_main_then_ship("CHANGELOG.md", "- unrelated\n", "Unrelated change");
    let status = l.status();
    assert_eq!(status["item"]["state"], "hallmarked", "{status}");
    assert_eq!(status["item"]["hold"]["kind"], "ship_failed");
    let reason = status["item"]["hold"]["reason"].as_str().unwrap();
    assert!(
        reason.contains("which .hallmark/allowed_signers on main")
            && reason.contains("hall init --signers"),
        "{reason}"
    );
    assert_eq!(
        l.sb.git(&l.wt, &["rev-parse", "HEAD"]),
        sha,
        "the branch was not rebased"
    );
    assert!(l.events().iter().all(|e| e["event"] != "rebased"));
    assert!(
        !l.sb
            .git(&l.sb.origin, &["branch", "--list"])
            .contains("hm/"),
        "nothing shipped"
    );
}

/// A repository whose main trusts Ada's key, an item whose first commit `a` carries a
/// real hallmark, and a second, unreviewed commit `c` on its branch.
struct World {
    sb: Sandbox,
    id: String,
    wt: PathBuf,
    a: String,
    c: String,
    real: Value,
    real_notes: String,
}

fn world() -> World {
    let sb = Sandbox::initialized();
    std::os::unix::fs::symlink(hall_bin(), sb.bin.join("hall")).unwrap();
    sb.hall(&sb.repo, &["init", "--signers"]).ok();
    sb.git(&sb.repo, &["add", ".hallmark/allowed_signers"]);
    sb.git(
        &sb.repo,
        &["commit", "-q", "-m", "Trust Ada's hallmark key"],
    );
    sb.git(&sb.repo, &["push", "-q", "origin", "main"]);
    let v = sb.hall(&sb.repo, &["new", "--title", "Real work"]).ok();
    let id = v["item"].as_str().unwrap().to_string();
    let wt = sb.worktree(&id);
    let a = sb.commit(&wt, "a.txt", "a\n", "Approved work");
    sb.hall(&wt, &["ready"]).ok();
    let real = sb.strike(&id, &wt, &a, 1);
    let real_notes = sb.git(&sb.repo, &["rev-parse", "refs/notes/hallmark"]);
    let c = sb.commit(&wt, "c.txt", "c\n", "Unreviewed work");
    World {
        sb,
        id,
        wt,
        a,
        c,
        real,
        real_notes,
    }
}

impl World {
    /// What the push gate says to `git push origin <sha>:refs/heads/shipped` from the
    /// item's worktree: `None` when it lets the push through, else the denial's reason.
    fn push_gate(&self, sha: &str) -> Option<String> {
        let (out, code) = self.sb.bash_hook(
            &self.wt,
            "agent",
            &format!("git push origin {sha}:refs/heads/shipped"),
        );
        assert_eq!(code, Some(0), "a hook always exits 0: {out}");
        if !out.contains("\"deny\"") {
            return None;
        }
        let v: Value = serde_json::from_str(out.trim()).expect("hook JSON");
        Some(v["hookSpecificOutput"]["permissionDecisionReason"].to_string())
    }

    /// Puts the notes back as the real strike left them.
    fn restore(&self) {
        self.sb.git(
            &self.sb.repo,
            &["update-ref", "refs/notes/hallmark", &self.real_notes],
        );
    }

    /// The real note, edited to claim commit `c` (its signature still `a`'s).
    fn claim_c(&self) -> Value {
        let mut n = self.real.clone();
        n["sha"] = self.c.clone().into();
        n["tree"] = self
            .sb
            .git(&self.wt, &["rev-parse", &format!("{}^{{tree}}", self.c)])
            .into();
        n
    }

    /// The real hallmark's signature, as the journal records it.
    fn real_seal(&self) -> Value {
        json!({"tree": self.real["tree"], "signer": self.real["signer"], "key": self.real["key"], "sig": self.real["sig"]})
    }

    fn events_file(&self) -> PathBuf {
        self.sb
            .repo
            .join(".git/hallmark/items")
            .join(&self.id)
            .join("events.jsonl")
    }

    /// A `hallmarked` line for `c`, as a forger would append it.
    fn journal_line(&self, seal: Option<Value>) -> String {
        let mut line = json!({"v": 1, "t": NOW_T, "actor": "assayer", "event": "hallmarked", "sha": self.c, "round": 1, "item": self.id});
        if let Some(s) = seal {
            line["seal"] = s;
        }
        line.to_string()
    }
}

const NOW_T: &str = "2026-11-02T09:00:00Z";

#[test]
fn the_real_hallmark_passes_and_every_forgery_fails_by_name() {
    let w = world();
    let sb = &w.sb;
    // The real hallmark, in a fresh clone.
    let v = forge_and_check(sb, &w.wt, "clone-real", &w.a).ok();
    assert_eq!(v["sha"], w.a.as_str());
    // The push gate, which also asks the journal, agrees.
    assert_eq!(w.push_gate(&w.a), None, "the real hallmark");
    refused(&forge_and_check(sb, &w.wt, "clone-none", &w.c), "no_note");

    // A valid note copied from another commit.
    sb.note_on(&w.wt, &w.c, &w.real);
    let msg = refused(
        &forge_and_check(sb, &w.wt, "clone-copied", &w.c),
        "other_commit",
    );
    assert!(
        msg.contains(&format!("its note is for {}", &w.a[..7])),
        "{msg}"
    );
    w.restore();

    // A tampered field on the real commit's own note.
    let mut tampered = w.real.clone();
    tampered["round"] = 2.into();
    sb.note_on(&w.wt, &w.a, &tampered);
    refused(
        &forge_and_check(sb, &w.wt, "clone-tampered", &w.a),
        "bad_signature",
    );
    w.restore();

    // A version 1 note: the shape hallmarks had before they were signed.
    sb.note_on(
        &w.wt,
        &w.c,
        &json!({"v": 1, "item": w.id, "sha": w.c, "round": 1, "actor": "assayer"}),
    );
    refused(&forge_and_check(sb, &w.wt, "clone-v1", &w.c), "unsigned");
    w.restore();

    // A note signed properly, by a key main does not list, claiming to be Ada.
    let mallory = sb.root.join("mallory");
    sb.sh(
        &sb.root,
        "ssh-keygen -q -t ed25519 -N '' -C mallory -f mallory",
        &[],
    );
    let fp = sb.sh(&sb.root, "ssh-keygen -lf mallory.pub | cut -d' ' -f2", &[]);
    let mut forged = w.claim_c();
    forged["key"] = fp.stdout.trim().into();
    std::fs::write(sb.root.join("statement"), statement(&forged)).unwrap();
    let signed = sb.sh(
        &sb.root,
        "ssh-keygen -q -Y sign -f mallory -n hallmark statement",
        &[],
    );
    assert_eq!(signed.code, 0, "{signed:?}");
    forged["sig"] = std::fs::read_to_string(sb.root.join("statement.sig"))
        .unwrap()
        .into();
    assert!(mallory.exists());
    sb.note_on(&w.wt, &w.c, &forged);
    let msg = refused(
        &forge_and_check(sb, &w.wt, "clone-mallory", &w.c),
        "unknown_signer",
    );
    assert!(msg.contains("ada@example.com"), "{msg}");
    w.restore();
}

#[test]
fn forgery_with_bash_plumbing_and_a_journal_line_fails() {
    let w = world();
    let sb = &w.sb;
    // The notes commit made by hand: the real note edited to claim `c`, a tree with it
    // beside the real notes, a commit on top, the ref moved; and a journal line.
    std::fs::write(sb.root.join("note.json"), w.claim_c().to_string()).unwrap();
    let line = w.journal_line(Some(w.real_seal()));
    let run = sb.sh(
        &sb.repo,
        &format!(
            "set -e\n\
             blob=$(git hash-object -w ../note.json)\n\
             tree=$( {{ git ls-tree refs/notes/hallmark; printf '100644 blob %s\\t%s\\n' \"$blob\" \"$C\"; }} | git mktree )\n\
             commit=$(git commit-tree \"$tree\" -p refs/notes/hallmark -m 'Notes added by git notes add')\n\
             git update-ref refs/notes/hallmark \"$commit\"\n\
             printf '%s\\n' '{line}' >> '{}'\n",
            w.events_file().display()
        ),
        &[("C", &w.c)],
    );
    assert_eq!(run.code, 0, "{run:?}");
    // git itself now shows the forged note on `c`.
    assert!(
        sb.git(&sb.repo, &["notes", "--ref=hallmark", "show", &w.c])
            .contains(&w.c)
    );
    refused(
        &forge_and_check(sb, &w.wt, "clone-plumbing", &w.c),
        "bad_signature",
    );
    // Locally, with the forged journal line, the push gate refuses it too.
    let why = w.push_gate(&w.c).expect("denied");
    assert!(why.contains("does not verify"), "{why}");
}

#[test]
fn forgery_by_writing_the_journal_and_the_notes_ref_as_files_fails() {
    let w = world();
    let sb = &w.sb;
    // Objects for an unsigned note on `c`…
    std::fs::write(
        sb.root.join("note.json"),
        json!({"v": 1, "item": w.id, "sha": w.c, "round": 1, "actor": "assayer"}).to_string(),
    )
    .unwrap();
    let run = sb.sh(
        &sb.repo,
        "set -e\n\
         blob=$(git hash-object -w ../note.json)\n\
         tree=$( { git ls-tree refs/notes/hallmark; printf '100644 blob %s\\t%s\\n' \"$blob\" \"$C\"; } | git mktree )\n\
         git commit-tree \"$tree\" -p refs/notes/hallmark -m 'Notes added by git notes add'\n",
        &[("C", &w.c)],
    );
    assert_eq!(run.code, 0, "{run:?}");
    let commit = run.stdout.trim().to_string();
    // …then the ref and the journal written as plain files, as a Write tool would.
    let git_dir = sb.repo.join(".git");
    std::fs::create_dir_all(git_dir.join("refs/notes")).unwrap();
    std::fs::write(git_dir.join("refs/notes/hallmark"), format!("{commit}\n")).unwrap();
    let mut events = std::fs::read_to_string(w.events_file()).unwrap();
    events.push_str(&w.journal_line(None));
    events.push('\n');
    std::fs::write(w.events_file(), events).unwrap();
    assert_eq!(
        sb.git(&sb.repo, &["rev-parse", "refs/notes/hallmark"]),
        commit
    );
    let status = sb.hall(&sb.repo, &["status", &w.id]).ok();
    assert_eq!(
        status["item"]["hallmark"],
        w.c.as_str(),
        "the journal believes it"
    );
    refused(&forge_and_check(sb, &w.wt, "clone-files", &w.c), "unsigned");
    let why = w.push_gate(&w.c).expect("denied");
    assert!(why.contains("is unsigned"), "{why}");
}

#[test]
fn forgery_by_git_replace_of_the_notes_commit_fails() {
    let w = world();
    let sb = &w.sb;
    // A notes commit with a note on `c` that replaces the real one.
    std::fs::write(sb.root.join("note.json"), w.claim_c().to_string()).unwrap();
    let run = sb.sh(
        &sb.repo,
        "set -e\n\
         blob=$(git hash-object -w ../note.json)\n\
         tree=$( { git ls-tree refs/notes/hallmark; printf '100644 blob %s\\t%s\\n' \"$blob\" \"$C\"; } | git mktree )\n\
         fake=$(git commit-tree \"$tree\" -m 'Notes added by git notes add')\n\
         git replace \"$(git rev-parse refs/notes/hallmark)\" \"$fake\"\n",
        &[("C", &w.c)],
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        sb.git(&sb.repo, &["rev-parse", "refs/notes/hallmark"]),
        w.real_notes,
        "the ref itself is untouched"
    );
    assert!(
        sb.git(&sb.repo, &["notes", "--ref=hallmark", "show", &w.c])
            .contains(&w.c),
        "plain git obeys the replacement"
    );
    refused(&verify_in(sb, &sb.repo, &w.c), "no_note");
    // Pushed with its replace refs and fetched into a fresh clone: the same.
    sb.git(&w.wt, &["push", "-q", "-f", "origin", "HEAD"]);
    sb.git(
        &sb.repo,
        &["push", "-q", "-f", "origin", "refs/notes/hallmark"],
    );
    sb.git(&sb.repo, &["push", "-q", "-f", "origin", "refs/replace/*"]);
    let clone = fresh_clone(sb, "clone-replace", true, true);
    assert!(
        sb.git(&clone, &["notes", "--ref=hallmark", "show", &w.c])
            .contains(&w.c)
    );
    refused(&verify_in(sb, &clone, &w.c), "no_note");
    // The real hallmark still verifies there.
    verify_in(sb, &clone, &w.a).ok();
}

/// The verify step of docs/ci/hallmark-verify.yml: its `env:` (names and the GitHub
/// expressions they come from) and its `run:` block.
fn ci_step() -> (Vec<(String, String)>, String) {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../docs/ci/hallmark-verify.yml"
    ))
    .unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let start = lines
        .iter()
        .position(|l| l.trim() == "id: verify")
        .expect("a step with id: verify");
    let indent = |l: &str| l.len() - l.trim_start().len();
    let step_indent = indent(lines[start]);
    let mut env = Vec::new();
    let mut run = String::new();
    let mut i = start + 1;
    while i < lines.len() {
        let l = lines[i];
        if !l.trim().is_empty() && indent(l) < step_indent {
            break;
        }
        if l.trim() == "env:" {
            i += 1;
            while i < lines.len() && indent(lines[i]) > step_indent {
                let (k, v) = lines[i].trim().split_once(':').unwrap();
                env.push((k.trim().to_string(), v.trim().to_string()));
                i += 1;
            }
            continue;
        }
        if l.trim() == "run: |" {
            i += 1;
            while i < lines.len() && (lines[i].trim().is_empty() || indent(lines[i]) > step_indent)
            {
                run.push_str(lines[i].trim_start());
                run.push('\n');
                i += 1;
            }
            continue;
        }
        i += 1;
    }
    (env, run)
}

#[test]
fn the_ci_snippet_passes_the_real_hallmark_and_fails_a_forged_one() {
    let (env, run) = ci_step();
    assert!(
        !run.contains("${{"),
        "the run block reads only its env: {run}"
    );
    assert!(run.contains("hall verify"), "{run}");
    let w = world();
    let sb = &w.sb;
    sb.note_on(&w.wt, &w.c, &w.real);
    sb.git(&w.wt, &["push", "-q", "origin", "HEAD"]);
    sb.git(&sb.repo, &["push", "-q", "origin", "refs/notes/hallmark"]);
    // What GitHub would set for a pull request from the item's branch into main.
    let ci = |head: &str| {
        let clone = fresh_clone(sb, &format!("ci-{}", &head[..7]), false, false);
        sb.git(&clone, &["checkout", "-q", "--detach", head]);
        let vars: Vec<(String, String)> = env
            .iter()
            .map(|(k, expr)| {
                let value = match expr.as_str() {
                    "${{ github.event.pull_request.head.sha }}" => head.to_string(),
                    "${{ github.event.pull_request.base.ref }}" => "main".to_string(),
                    other => panic!("the test doesn't know what GitHub sets for {other}"),
                };
                (k.clone(), value)
            })
            .collect();
        let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        sb.sh(&clone, &format!("set -eo pipefail\n{run}"), &vars)
    };
    let ok = ci(&w.a);
    assert_eq!(ok.code, 0, "{ok:?}");
    let v: Value = serde_json::from_str(ok.stdout.trim()).unwrap();
    assert_eq!(v["sha"], w.a.as_str());
    let forged = ci(&w.c);
    assert_eq!(forged.code, 5, "{forged:?}");
    assert!(forged.stdout.contains("other_commit"), "{forged:?}");
}

/// The by-hand recipe in docs/guide.md (the shell block after `<!-- by-hand -->`).
fn by_hand_recipe() -> String {
    let text =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/guide.md")).unwrap();
    let after = text
        .split("<!-- by-hand -->")
        .nth(1)
        .expect("the guide has the by-hand recipe");
    let block = after.split("```sh\n").nth(1).unwrap();
    block.split("```").next().unwrap().to_string()
}

#[test]
fn ssh_keygen_verifies_a_hallmark_through_the_documented_recipe() {
    let recipe = by_hand_recipe();
    assert!(recipe.contains("ssh-keygen -Y verify"), "{recipe}");
    let w = world();
    let sb = &w.sb;
    let mut tampered = w.real.clone();
    tampered["open_findings"] = json!(["F1"]);
    sb.note_on(&w.wt, &w.c, &tampered);
    sb.git(&w.wt, &["push", "-q", "origin", "HEAD"]);
    sb.git(&sb.repo, &["push", "-q", "origin", "refs/notes/hallmark"]);
    let by_hand = |rev: &str| {
        let clone = fresh_clone(sb, &format!("by-hand-{}", &rev[..7]), false, false);
        sb.git(&clone, &["checkout", "-q", "--detach", rev]);
        sb.sh(&clone, &format!("set -eo pipefail\n{recipe}"), &[])
    };
    let good = by_hand(&w.a);
    assert_eq!(good.code, 0, "{good:?}");
    assert!(
        good.stdout
            .contains("Good \"hallmark\" signature for ada@example.com"),
        "{good:?}"
    );
    // The statement the recipe rebuilt is the one hall signs.
    let rebuilt =
        std::fs::read_to_string(sb.root.join(format!("by-hand-{}/statement.txt", &w.a[..7])))
            .unwrap();
    assert_eq!(rebuilt, statement(&w.real));
    // The same note with its findings changed, on another commit: refused.
    let bad = by_hand(&w.c);
    assert_ne!(bad.code, 0, "{bad:?}");
}
