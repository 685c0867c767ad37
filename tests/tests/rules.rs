//! The rules the loop gates with, end to end: read as committed (a rewritten object is
//! refused), from the fresher of the local base and origin's, and again from the base a
//! carried approval lands on, whose new gate runs before anything ships.

#![allow(clippy::unwrap_used)] // a panic is how a test fails

use std::path::Path;

use crate::common::*;

/// Rewrites the loose blob `oid` of the repository at `root` in place, under the same
/// name, with `content`: what an agent with write access to `objects/` can do. git
/// writes the forged blob; its file is copied over the original's.
fn rewrite_blob(root: &Path, oid: &str, content: &str) {
    let objects = root.join(".git/objects");
    let file = |oid: &str| objects.join(&oid[..2]).join(&oid[2..]);
    let path = file(oid);
    assert!(
        path.is_file(),
        "the blob is a loose object: {}",
        path.display()
    );
    let mut hash = std::process::Command::new("git")
        .args(["hash-object", "-w", "--stdin"])
        .current_dir(root)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut hash.stdin.take().unwrap(), content.as_bytes()).unwrap();
    let out = hash.wait_with_output().unwrap();
    assert!(out.status.success());
    let forged = String::from_utf8(out.stdout).unwrap();
    let mut perms = std::fs::metadata(&path).unwrap().permissions();
    #[allow(clippy::permissions_set_readonly_false)]
    perms.set_readonly(false);
    std::fs::set_permissions(&path, perms).unwrap();
    std::fs::copy(file(forged.trim()), &path).unwrap();
}

#[test]
fn a_config_blob_rewritten_under_its_own_name_gates_nothing() {
    let l = Loop::new(CONFIG, json!({"review": [approve()]}));
    // The item's commit fails the real gate (`<` where `<=` is wanted).
    l.sb.hall(&l.wt, &["ready"]).ok();
    // A person commits a stricter config; before anything reads it, its blob is
    // rewritten in place to a gate that always passes.
    let stricter = format!("{CONFIG}max_check_failures = 2\n");
    l.sb.commit(&l.sb.repo, ".hallmark.toml", &stricter, "Two failures hold");
    l.sb.git(&l.sb.repo, &["push", "-q", "origin", "main"]);
    let blob = l.sb.git(&l.sb.repo, &["rev-parse", "main:.hallmark.toml"]);
    let forged = "base = \"main\"\ngates = [\"true\"]\n";
    rewrite_blob(&l.sb.repo, &blob, forged);
    // What `git show` reads (and what the rules were read with before): the forgery.
    assert_eq!(
        l.sb.git(&l.sb.repo, &["show", "main:.hallmark.toml"]),
        forged.trim_end()
    );
    // The loop refuses the rules: nothing runs on them, and it says why.
    let run = l.sb.run_loop(&l.script, &[]);
    assert!(
        run.stderr.contains("can't be read")
            && run.stderr.contains(&blob)
            && run.stderr.contains("changed after it was written"),
        "{}",
        run.stderr
    );
    // (`hall log` refuses to open the repository too: the journal is read directly.)
    let id: hallmark_core::item::ItemId = l.id.parse().unwrap();
    let events = l.sb.journal().read_item(id).unwrap().events;
    let names: Vec<&str> = events.iter().map(|e| e.kind.name()).collect();
    assert!(
        !names.contains(&"check_run") && !names.contains(&"rules_used"),
        "no check ran on forged rules: {names:?}"
    );
    assert!(l.claude_calls().is_empty(), "nothing was reviewed");
    // A command refuses too, naming what to run.
    let err =
        l.sb.hall(&l.sb.repo, &["status", &l.id])
            .err("INVALID_CONFIG", 2);
    let next = err["error"]["next"].to_string();
    assert!(next.contains("git fsck --full"), "{err}");
    // The hook gates with the defaults and logs why: the forged config isn't used.
    let (out, code) = l.bash_hook("agent", "git push origin main");
    assert_eq!(code, Some(0));
    assert!(out.contains("\"deny\""), "{out}");
    let log = std::fs::read_to_string(l.sb.repo.join(".git/hallmark/hooks.log")).unwrap();
    assert!(
        log.contains("can't be read") && log.contains("the hooks use the default configuration"),
        "{log}"
    );
    // A person repairs the object (here: by writing it again from the file); the loop
    // then gates with the real rules, and the item's commit fails them.
    std::fs::remove_file(
        l.sb.repo
            .join(".git/objects")
            .join(&blob[..2])
            .join(&blob[2..]),
    )
    .unwrap();
    std::fs::write(l.sb.root.join("real.toml"), &stricter).unwrap();
    let again = l.sb.git(
        &l.sb.repo,
        &[
            "hash-object",
            "-w",
            l.sb.root.join("real.toml").to_str().unwrap(),
        ],
    );
    assert_eq!(again, blob);
    l.sb.run_loop(&l.script, &[]).ok();
    let ran = l.events_of(&l.id, "check_run");
    assert!(
        ran.iter()
            .any(|e| e["check"] == "sh check.sh" && e["exit_code"] == 1),
        "{ran:?}"
    );
}

#[test]
fn a_rewritten_allowed_signers_blob_trusts_nobody() {
    let l = Loop::signed(CONFIG, json!({"review": [approve()]}));
    l.make_ready();
    l.daemon();
    let sha = l.status()["item"]["hallmark"].as_str().unwrap().to_string();
    l.sb.hall(&l.sb.repo, &["verify", &sha]).ok();
    // The base gets a new commit (so nothing has cached it), and its signers blob is
    // rewritten in place to trust another key.
    l.sb.commit(&l.sb.repo, "NOTES.md", "notes\n", "Notes");
    let blob =
        l.sb.git(&l.sb.repo, &["rev-parse", "main:.hallmark/allowed_signers"]);
    let content =
        l.sb.git(&l.sb.repo, &["show", "main:.hallmark/allowed_signers"]);
    // Same object name, other content: the old file plus a line.
    rewrite_blob(
        &l.sb.repo,
        &blob,
        &format!("{content}\nmallory@example.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHx\n"),
    );
    let err =
        l.sb.hall(&l.sb.repo, &["verify", &sha])
            .err("INVALID_CONFIG", 2);
    assert!(
        err["error"]["message"]
            .as_str()
            .unwrap()
            .contains("changed after it was written"),
        "{err}"
    );
}

#[test]
fn a_gate_added_on_origin_runs_though_the_local_base_is_behind() {
    let cfg = format!("{CONFIG}max_check_failures = 1\n");
    let l = Loop::new(&cfg, json!({}));
    // Someone else adds a gate on origin; this clone's main (and origin/main) are behind.
    let other = l.sb.root.join("other");
    l.sb.git(
        &l.sb.root,
        &["clone", "-q", l.sb.origin.to_str().unwrap(), "other"],
    );
    let gated = "base = \"main\"\ngates = [\"sh check.sh\", \"test -f CHANGELOG.md\"]\nmax_check_failures = 1\n";
    std::fs::write(other.join(".hallmark.toml"), gated).unwrap();
    l.sb.git(&other, &["add", "-A"]);
    l.sb.git(&other, &["commit", "-q", "-m", "A second gate"]);
    l.sb.git(&other, &["push", "-q", "origin", "main"]);
    let upstream = l.sb.git(&other, &["rev-parse", "HEAD"]);
    // The item passes the first gate.
    l.make_ready();
    // Read from the local base alone, the new gate would never run.
    assert!(
        !l.sb
            .git(&l.sb.repo, &["show", "main:.hallmark.toml"])
            .contains("CHANGELOG")
    );
    l.daemon();
    // The daemon fetched origin's base before the pass, and the checks ran its gates.
    assert_eq!(
        l.sb.git(&l.sb.repo, &["rev-parse", "refs/remotes/origin/main"]),
        upstream
    );
    let rules = l.events_of(&l.id, "rules_used");
    assert_eq!(
        rules.last().unwrap()["base"],
        upstream.as_str(),
        "{rules:?}"
    );
    let ran = l.events_of(&l.id, "check_run");
    assert!(
        ran.iter()
            .any(|e| e["check"] == "test -f CHANGELOG.md" && e["exit_code"] == 1),
        "{ran:?}"
    );
    let status = l.status();
    assert_eq!(status["item"]["state"], "fixing", "{status}");
    assert_eq!(status["item"]["hold"]["kind"], "checks", "{status}");
    assert!(l.claude_calls().is_empty(), "no review of a red commit");
}

#[test]
fn a_carried_approval_meets_the_new_bases_gate_before_it_ships() {
    let l = shippable_later(json!({
        "review": [approve(), approve()],
        "fix": [fix("attempts <= 3 # inclusive, as the docs say", "")],
    }));
    let approved = l.status()["item"]["hallmark"].as_str().unwrap().to_string();
    // main gains a gate the approved change fails, on files the change doesn't touch:
    // the rebase keeps the patch, so the approval would be carried.
    let gated = format!(
        "{}gates = [\"sh check.sh\", \"sh gate2.sh\"]\n",
        ship_later_config().replace("gates = [\"sh check.sh\"]\n", "")
    );
    std::fs::write(l.sb.repo.join(".hallmark.toml"), gated).unwrap();
    std::fs::write(
        l.sb.repo.join("gate2.sh"),
        "grep -q '# inclusive' lib.txt || { echo 'lib.txt:1: say why the limit is inclusive'; exit 1; }\n",
    )
    .unwrap();
    l.sb.git(&l.sb.repo, &["add", "-A"]);
    l.sb.git(&l.sb.repo, &["commit", "-q", "-m", "A second gate"]);
    l.sb.git(&l.sb.repo, &["push", "-q", "origin", "main"]);
    // The flag that lets the ship go ahead is ignored, so the fixer's worktree is clean.
    let exclude = l.sb.repo.join(".git/info/exclude");
    let mut ignored = std::fs::read_to_string(&exclude).unwrap_or_default();
    ignored.push_str("\nship-ok.flag\n");
    std::fs::write(&exclude, ignored).unwrap();
    std::fs::write(l.wt.join("ship-ok.flag"), "").unwrap();
    l.sb.hall(&l.sb.repo, &["retry", &l.id, "--reason", "ship again"])
        .ok();
    l.daemon();
    let kinds = l.kinds();
    let at = kinds.iter().position(|k| k == "hallmarked").unwrap();
    assert_eq!(
        kinds[at..],
        [
            "hallmarked",
            "held",
            "retried",
            "checks_failed",
            "fix_submitted",
            "checks_passed",
            "verdict",
            "hallmarked",
            "shipped"
        ],
        "the new gate failed at the rebased commit, went to the fixer, and the fix was checked and reviewed"
    );
    // It failed at the rebased commit, not at the approved one.
    let red: Vec<Value> = l
        .events_of(&l.id, "check_run")
        .into_iter()
        .filter(|e| e["check"] == "sh gate2.sh" && e["exit_code"] == 1)
        .collect();
    assert_eq!(red.len(), 1, "{red:?}");
    assert_ne!(red[0]["sha"], approved.as_str());
    assert!(
        l.sb.git(
            &l.sb.repo,
            &[
                "merge-base",
                "--is-ancestor",
                "origin/main",
                red[0]["sha"].as_str().unwrap()
            ]
        )
        .is_empty()
    );
    assert!(
        l.events_of(&l.id, "rebased").is_empty(),
        "nothing was carried"
    );
    // What shipped passes both gates.
    let status = l.status();
    assert_eq!(status["item"]["state"], "closed", "{status}");
    let shipped = status["item"]["hallmark"].as_str().unwrap();
    let branch = status["item"]["branch"].as_str().unwrap();
    assert_eq!(l.sb.git(&l.sb.origin, &["rev-parse", branch]), shipped);
    assert!(
        l.sb.git(&l.sb.repo, &["show", &format!("{shipped}:lib.txt")])
            .contains("# inclusive")
    );
}
