//! What checking a hallmark costs, in process, as the push gate pays it: reading the
//! base branch's signers (`Trust::from_base`, one git call), `verify_commit` on a signed
//! note with and without the journal (one git call, then ed25519 in process), and the
//! signature check alone.
//!
//! Run: `cargo bench -p hallmark --bench verify`.

mod common;

use std::time::{Duration, Instant};

use common::git;

use hallmark::hall::hallmark::{Note, Trust, sign_note, verify_commit};
use hallmark::item::event::EVENT_VERSION;
use hallmark::item::{Event, EventKind, ItemId};
use hallmark::journal::Journal;
use hallmark::sign::{self, Signer};

const RUNS: usize = 200;

/// Median and 90th percentile of `RUNS` calls, after a few warm-up calls.
fn measure(mut f: impl FnMut()) -> (Duration, Duration) {
    for _ in 0..5 {
        f();
    }
    let mut v: Vec<Duration> = (0..RUNS)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    v.sort();
    (v[v.len() / 2], v[v.len() * 9 / 10])
}

fn report(what: &str, (median, p90): (Duration, Duration)) {
    println!(
        "{what:<44} median {:>7.3} ms   p90 {:>7.3} ms",
        median.as_secs_f64() * 1000.0,
        p90.as_secs_f64() * 1000.0
    );
}

fn main() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let repo = tmp.path().join("repo");
    let config = tmp.path().join("config");
    std::fs::create_dir_all(&repo).expect("mkdir");
    std::fs::create_dir_all(&config).expect("mkdir");
    std::fs::write(
        config.join(sign::USER_CONFIG),
        "[signing]\nprincipal = \"bench@example.com\"\n",
    )
    .expect("user config");
    git(&repo, &["init", "-q", "-b", "main"]);
    std::fs::write(repo.join("a.txt"), "a\n").expect("write");
    let signer = Signer::load_in(&config, None).expect("signer");
    std::fs::create_dir_all(repo.join(".hallmark")).expect("mkdir");
    std::fs::write(
        repo.join(".hallmark/allowed_signers"),
        sign::allowed::line(signer.principal(), signer.public_key()) + "\n",
    )
    .expect("signers");
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "work"]);
    let sha = hallmark::item::Sha::new(git(&repo, &["rev-parse", "HEAD"]));
    let id = ItemId(1);
    let unsigned = Note {
        v: 2,
        item: id,
        sha: sha.clone(),
        tree: Some(git(&repo, &["rev-parse", "HEAD^{tree}"])),
        // A version 3 hallmark, as the loop strikes them.
        base: Some(sha.clone()),
        round: 1,
        model: Some("opus".into()),
        open_findings: vec![],
        actor: Some("assayer".into()),
        approved_sha: None,
        signer: None,
        key: None,
        sig: None,
    };
    let seal = sign_note(&signer, &unsigned).expect("signs");
    let note = unsigned.sealed(&seal);
    let body = serde_json::to_string(&note).expect("json");
    git(
        &repo,
        &["notes", "--ref=hallmark", "add", "-m", &body, &sha],
    );
    let journal = Journal::new(repo.join(".git/hallmark"));
    journal.init().expect("journal");
    std::fs::create_dir_all(journal.item_dir(id)).expect("item dir");
    std::fs::write(journal.item_file(id), "").expect("item file");
    journal
        .append_item(
            id,
            &[Event {
                v: EVENT_VERSION,
                t: "2026-11-02T09:00:00Z".into(),
                actor: "assayer".into(),
                kind: EventKind::Hallmarked {
                    sha: sha.clone(),
                    round: 1,
                    seal: Some(seal.clone()),
                },
                item: Some(id),
                via: None,
            }],
        )
        .expect("append");

    let trust = Trust::from_base(&repo, "main")
        .expect("git")
        .expect("main lists signers");
    verify_commit(&repo, &sha, &trust, Some(&journal)).expect("the hallmark verifies");

    println!("{RUNS} calls each");
    report(
        "Trust::from_base (one git cat-file)",
        measure(|| {
            Trust::from_base(&repo, "main").expect("git");
        }),
    );
    report(
        "verify_commit, no journal (CI)",
        measure(|| {
            verify_commit(&repo, &sha, &trust, None).expect("verifies");
        }),
    );
    report(
        "verify_commit, with the journal (push gate)",
        measure(|| {
            verify_commit(&repo, &sha, &trust, Some(&journal)).expect("verifies");
        }),
    );
    let statement = note.statement().expect("statement");
    report(
        "sign::check alone (SSHSIG, ed25519)",
        measure(|| {
            sign::check(statement.as_bytes(), &seal.sig).expect("verifies");
        }),
    );
    report(
        "git --version (a bare git process)",
        measure(|| {
            git(&repo, &["--version"]);
        }),
    );
}
