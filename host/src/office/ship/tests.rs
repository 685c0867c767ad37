use std::path::PathBuf;
use std::sync::Arc;

use super::*;
use crate::claude::{RunOutcome, RunSpec, Runner};
use crate::config::Config;
use crate::hall::hallmark::{NOTES_REF, Note};
use crate::office::tests::{BRANCH, Bench, LIB, PRINCIPAL, git_in, git_maybe, kinds};

const PR: &str = "https://github.com/acme/widgets/pull/7";

/// The shipper runs no model.
struct NoModel;

impl Runner for NoModel {
    fn run(&self, _dir: &Path, _stamp: &str, _spec: &RunSpec) -> crate::claude::Result<RunOutcome> {
        panic!("the shipper started a model run")
    }
}

/// How the fake `gh` answers `gh pr create`.
#[derive(Clone, Copy)]
enum Gh {
    Opens,
    Refuses,
}

const REFUSAL: &str = "pull request create failed: GraphQL: Resource not accessible by integration (createPullRequest)";

/// A hallmarked item (its note struck) whose branch is on `main`, a bare local
/// `origin` holding `main`, and the default ship and review commands with a fake
/// `gh` that logs its arguments.
struct World {
    bench: Bench,
    ctx: Ctx,
    id: ItemId,
    sha: Sha,
    origin: PathBuf,
    gh_log: PathBuf,
}

fn world(gh: Gh) -> World {
    let mut bench = Bench::new(Arc::new(NoModel));
    let base = bench.root.parent().unwrap().to_path_buf();
    let origin = base.join("origin.git");
    let origin_s = origin.display().to_string();
    git_in(&base, &["init", "-q", "--bare", "-b", "main", &origin_s]);
    git_in(&bench.root, &["remote", "add", "origin", &origin_s]);
    git_in(&bench.root, &["push", "-q", "origin", "main"]);
    let (id, sha) = bench.item_in_review();
    approve(&bench, id, &sha);
    let bin = base.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let gh_log = base.join("gh.log");
    let create = match gh {
        Gh::Opens => format!(
            "echo 'Creating pull request for {BRANCH} into main in acme/widgets'; echo; echo '{PR}'"
        ),
        Gh::Refuses => format!("echo '{REFUSAL}' >&2; exit 1"),
    };
    let script = format!(
        "#!/bin/sh\nprintf '%s\\n' \"$*\" >> '{}'\ncase \"$1 $2\" in\n'pr create') {create} ;;\n'pr comment') echo '{PR}#issuecomment-1' ;;\n*) echo \"gh: unexpected: $*\" >&2; exit 1 ;;\nesac\n",
        gh_log.display()
    );
    let fake = bin.join("gh");
    std::fs::write(&fake, script).unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let path = format!(
        "PATH={}:\"$PATH\" && ",
        crate::platform::shell_quote(&bin.display().to_string())
    );
    let defaults = Config::default();
    bench.hall.config.ship = path.clone() + &defaults.ship;
    bench.hall.config.review_comment = path + &defaults.review_comment;
    let ctx = bench.ctx.acting_as("shipper");
    World {
        bench,
        ctx,
        id,
        sha,
        origin,
        gh_log,
    }
}

/// The reviewer's approval of `sha`, signed and struck, as the review
/// step leaves it.
fn approve(bench: &Bench, id: ItemId, sha: &Sha) {
    let signer = hallmark::signer(&bench.hall).unwrap();
    let applied = bench
        .hall
        .change(&bench.ctx, id)
        .signed_by(&signer)
        .apply(Action::Verdict {
            sha: sha.clone(),
            approved: true,
            findings: Vec::new(),
            model: Some("claude-opus-4-1".into()),
            summary: Some("Caps retries at three attempts.".into()),
            by: None,
            learnings: Vec::new(),
            max_rejects: 3,
            seal: None,
        })
        .unwrap();
    assert_eq!(applied.after.state, State::Hallmarked);
    assert!(hallmark::ensure_note(&bench.hall, id, &applied.after).unwrap());
}

impl World {
    fn ship(&self) -> Step {
        let item = self.bench.hall.item(self.id).unwrap();
        run(&self.bench.hall, &self.ctx, self.id, &item).unwrap()
    }

    /// Someone else's commit on origin's `main`, changing `file` to `text`; its SHA.
    fn advance_origin(&self, file: &str, text: &str) -> String {
        let other = self.origin.with_file_name("other");
        let origin = self.origin.display().to_string();
        let path = other.display().to_string();
        git_in(
            self.origin.parent().unwrap(),
            &["clone", "-q", &origin, &path],
        );
        std::fs::write(other.join(file), text).unwrap();
        git_in(&other, &["add", file]);
        git_in(&other, &["commit", "-qm", "Meanwhile on main"]);
        git_in(&other, &["push", "-q", "origin", "main"]);
        git_in(&other, &["rev-parse", "HEAD"])
    }

    /// The commit `name` names in origin, if any.
    fn on_origin(&self, name: &str) -> Option<String> {
        git_maybe(&self.origin, &["rev-parse", "--verify", "--quiet", name])
    }

    fn gh_calls(&self) -> Vec<String> {
        std::fs::read_to_string(&self.gh_log)
            .map(|t| t.lines().map(str::to_string).collect())
            .unwrap_or_default()
    }

    fn runs(&self) -> PathBuf {
        self.bench.hall.journal.item_dir(self.id).join("runs")
    }

    fn head(&self) -> Sha {
        Sha::new(git_in(&self.bench.worktree(), &["rev-parse", "HEAD"]))
    }
}

fn branch_ref() -> String {
    format!("refs/heads/{BRANCH}")
}

#[test]
fn a_hallmarked_item_is_pushed_its_pull_request_opened_and_recorded() {
    let w = world(Gh::Opens);
    let step = w.ship();
    assert_eq!(
        step.did,
        format!("shipped {} as {PR}; review posted", w.sha.short())
    );
    assert_eq!(step.after.state, State::Closed);
    assert_eq!(step.after.pr.as_deref(), Some(PR));
    assert_eq!(step.after.hallmark.as_ref(), Some(&w.sha));
    let events = w.bench.hall.events(w.id).unwrap();
    assert_eq!(
        events.last().map(|e| &e.kind),
        Some(&EventKind::Shipped {
            sha: w.sha.clone(),
            pr: Some(PR.into()),
        })
    );
    assert_eq!(events.last().unwrap().actor, "shipper");
    // The branch is on origin at the hallmarked commit, and so is its hallmark.
    assert_eq!(w.on_origin(&branch_ref()).as_deref(), Some(w.sha.as_str()));
    let verified = hallmark::verify_commit(&w.origin, w.sha.as_str(), &w.bench.trust(), None)
        .expect("origin's note verifies without the journal");
    assert_eq!(verified.note.signer.as_deref(), Some(PRINCIPAL));
    // gh opened the PR from the body file and was given the review to post.
    let body = w.runs().join("pr-body.md");
    let review = w.runs().join("review-round-1.md");
    assert_eq!(
        w.gh_calls(),
        [
            format!(
                "pr create --base main --head {BRANCH} --title Cap retries --body-file {}",
                body.display()
            ),
            format!("pr comment {PR} --body-file {}", review.display()),
        ]
    );
    let body = std::fs::read_to_string(body).unwrap();
    assert!(
        body.ends_with(&format!(
            "Hallmarked by Hallmark: {}, round 1, commit {}.\n",
            w.id, w.sha
        )),
        "{body}"
    );
    let review = std::fs::read_to_string(review).unwrap();
    assert!(
        review.contains(
            "**Round 1: approved** by claude-opus-4-1\n\nCaps retries at three attempts."
        ),
        "{review}"
    );
    assert_eq!(super::super::work_for(&step.after), None);
}

#[test]
fn a_push_origin_refuses_holds_the_item_and_opens_no_pull_request() {
    let w = world(Gh::Opens);
    let hook = w.origin.join("hooks/pre-receive");
    std::fs::write(
        &hook,
        "#!/bin/sh\nwhile read old new ref; do case \"$ref\" in refs/heads/hm/*) echo \"protected: $ref\" >&2; exit 1 ;; esac; done\n",
    )
    .unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let step = w.ship();
    let why = format!(
        "exited with 1: error: failed to push some refs to '{}'",
        w.origin.display()
    );
    assert!(
        step.did.starts_with("the ship command failed: `PATH=") && step.did.ends_with(&why),
        "{}",
        step.did
    );
    assert_eq!(step.after.state, State::Hallmarked);
    let hold = step.after.hold.as_ref().expect("held");
    assert_eq!(
        (hold.kind, hold.reason.as_str()),
        (HoldKind::ShipFailed, step.did.as_str())
    );
    let events = w.bench.hall.events(w.id).unwrap();
    assert_eq!(kinds(&events).last(), Some(&"held"));
    assert_eq!(step.after.pr, None);
    assert!(w.gh_calls().is_empty(), "`&&` stops before gh");
    assert_eq!(w.on_origin(&branch_ref()), None);
    // The notes went first, so a retry's PR finds its hallmark.
    assert!(w.on_origin(NOTES_REF).is_some());
    assert_eq!(super::super::work_for(&step.after), None);
}

#[test]
fn a_pull_request_gh_refuses_holds_the_item_with_ghs_words() {
    let w = world(Gh::Refuses);
    let step = w.ship();
    assert!(
        step.did.starts_with("the ship command failed: `PATH=")
            && step.did.ends_with(&format!("` exited with 1: {REFUSAL}")),
        "{}",
        step.did
    );
    assert_eq!(step.after.state, State::Hallmarked);
    assert_eq!(step.after.pr, None);
    let hold = step.after.hold.as_ref().expect("held");
    assert_eq!(
        (hold.kind, hold.reason.as_str()),
        (HoldKind::ShipFailed, step.did.as_str())
    );
    assert_eq!(
        w.gh_calls().len(),
        1,
        "no review is posted without a PR: {:?}",
        w.gh_calls()
    );
    // The push itself went through.
    assert_eq!(w.on_origin(&branch_ref()).as_deref(), Some(w.sha.as_str()));
    let events = w.bench.hall.events(w.id).unwrap();
    assert!(!kinds(&events).contains(&"shipped"), "{:?}", kinds(&events));
}

#[test]
fn an_approval_is_carried_and_signed_anew_across_a_rebase_that_keeps_the_patch() {
    let w = world(Gh::Opens);
    let tip = w.advance_origin("README.md", "Widgets.\n");
    let step = w.ship();
    let new = w.head();
    assert_ne!(new, w.sha);
    assert_eq!(
        git_in(&w.bench.worktree(), &["rev-parse", "HEAD^"]),
        tip,
        "rebased onto origin's main"
    );
    assert_eq!(
        step.did,
        format!("shipped {} as {PR}; review posted", new.short())
    );
    assert_eq!(step.after.state, State::Closed);
    assert_eq!(step.after.hallmark.as_ref(), Some(&new));
    let events = w.bench.hall.events(w.id).unwrap();
    let n = events.len();
    assert_eq!(
        kinds(&events)[n - 4..],
        ["rebased", "verdict", "hallmarked", "shipped"]
    );
    assert_eq!(
        events[n - 4].kind,
        EventKind::Rebased {
            from: w.sha.clone(),
            sha: new.clone(),
            carried: true,
        }
    );
    let EventKind::Verdict {
        sha, approved, by, ..
    } = &events[n - 3].kind
    else {
        panic!("a carried verdict: {:?}", events[n - 3])
    };
    assert_eq!(
        (sha, *approved, by.as_deref()),
        (&new, true, Some("carried"))
    );
    assert!(matches!(
        &events[n - 2].kind,
        EventKind::Hallmarked { sha, seal: Some(_), .. } if *sha == new
    ));
    // The new commit's note is a signed statement naming the approved commit.
    let verified = hallmark::verify_commit(
        &w.bench.root,
        new.as_str(),
        &w.bench.trust(),
        Some(&w.bench.hall.journal),
    )
    .unwrap();
    let note: Note = verified.note;
    assert_eq!(note.approved_sha.as_ref(), Some(&w.sha));
    assert_eq!(note.actor.as_deref(), Some("assayer"));
    assert_eq!(note.model.as_deref(), Some("claude-opus-4-1"));
    assert_eq!(w.on_origin(&branch_ref()).as_deref(), Some(new.as_str()));
    assert!(hallmark::verify_commit(&w.origin, new.as_str(), &w.bench.trust(), None).is_ok());
    let review = std::fs::read_to_string(w.runs().join("review-round-1.md")).unwrap();
    assert!(
        review.contains("**Round 1: approved** (carried across a rebase)"),
        "{review}"
    );
}

#[test]
fn a_rebase_that_changes_the_patch_sends_the_item_back_to_development() {
    let w = world(Gh::Opens);
    // Not a conflict, but inside the diff's context: the patch is another patch.
    w.advance_origin("lib.txt", &LIB.replace("backoff: 1s", "backoff: 2s"));
    let step = w.ship();
    let why = "the rebase onto origin/main changed the patch; it needs another review";
    assert_eq!(step.did, why);
    assert_eq!(step.after.state, State::Development);
    assert_eq!(step.after.hallmark, None);
    assert!(step.after.hold.is_none());
    let events = w.bench.hall.events(w.id).unwrap();
    assert_eq!(
        events.last().map(|e| &e.kind),
        Some(&EventKind::PulledBack {
            from: State::Hallmarked,
            reason: Some(why.into()),
        })
    );
    assert!(!kinds(&events).contains(&"rebased"));
    assert_eq!(w.on_origin(&branch_ref()), None, "nothing unreviewed ships");
    assert!(w.gh_calls().is_empty());
}

#[test]
fn a_rebase_that_conflicts_sends_the_item_back_with_its_branch_as_it_was() {
    let w = world(Gh::Opens);
    w.advance_origin("lib.txt", &LIB.replace("attempts < 3", "attempts < 5"));
    let step = w.ship();
    assert_eq!(step.did, "the rebase onto origin/main conflicts");
    assert_eq!(step.after.state, State::Development);
    assert_eq!(w.head(), w.sha, "the rebase was aborted");
    assert_eq!(w.on_origin(&branch_ref()), None);
    assert!(w.gh_calls().is_empty());
}

#[test]
fn a_hallmark_the_base_does_not_trust_ships_nothing() {
    let w = world(Gh::Opens);
    // The base now lists only someone else's key.
    let stranger = w.bench.dir.path().join("stranger");
    std::fs::create_dir_all(&stranger).unwrap();
    crate::sign::ensure_key_in(&stranger).unwrap();
    let key = crate::sign::user_public_key_in(&stranger).unwrap();
    std::fs::write(
        w.bench.root.join(hallmark::SIGNERS_FILE),
        crate::sign::allowed::line("bob@example.com", &key) + "\n",
    )
    .unwrap();
    git_in(&w.bench.root, &["commit", "-qam", "Trust bob only"]);
    let main = git_in(&w.bench.root, &["rev-parse", "--short=7", "main"]);
    let step = w.ship();
    assert!(
        step.did.starts_with(&format!(
            "the hallmark on {} is signed by SHA256:",
            w.sha.short()
        )),
        "{}",
        step.did
    );
    assert!(
        step.did.ends_with(&format!(
            " as {PRINCIPAL}, which .hallmark/allowed_signers on main at {main} does not allow; nothing was shipped (to trust this key, run `hall init --signers` and commit .hallmark/allowed_signers on main)"
        )),
        "{}",
        step.did
    );
    let hold = step.after.hold.as_ref().expect("held");
    assert_eq!(hold.kind, HoldKind::ShipFailed);
    assert_eq!(step.after.state, State::Hallmarked);
    assert_eq!(w.on_origin(&branch_ref()), None);
    assert_eq!(w.on_origin(NOTES_REF), None, "not even the notes");
    assert!(w.gh_calls().is_empty());
}

#[test]
fn a_branch_that_moved_after_its_hallmark_goes_back_to_development() {
    let w = world(Gh::Opens);
    let wt = w.bench.worktree();
    std::fs::write(wt.join("lib.txt"), "unreviewed\n").unwrap();
    git_in(&wt, &["commit", "-qam", "Sneak in a change"]);
    let step = w.ship();
    assert_eq!(
        step.did,
        format!(
            "the branch moved to {} after the hallmark on {}",
            w.head().short(),
            w.sha.short()
        )
    );
    assert_eq!(step.after.state, State::Development);
    assert_eq!(w.on_origin(&branch_ref()), None);
    assert!(w.gh_calls().is_empty());
}

#[test]
fn the_pr_body_closes_the_issue_an_item_started_from() {
    let from_issue = crate::item::Item {
        title: "Fix the SSO login".into(),
        issue: Some(212),
        ..crate::item::Item::default()
    };
    let (body, _) = super::review_text(crate::item::ItemId(7), &from_issue, &[]);
    assert!(body.contains("Closes #212\n"), "{body}");
    let plain = crate::item::Item {
        issue: None,
        ..from_issue
    };
    let (body, _) = super::review_text(crate::item::ItemId(7), &plain, &[]);
    assert!(!body.contains("Closes"), "{body}");
}
