use super::decide::{TRANSITIONS, allowed};
use super::event::{EVENT_VERSION, Seal, decode, encode};
use super::*;

fn at(step: usize, kind: EventKind) -> Event {
    Event {
        v: EVENT_VERSION,
        t: format!("2026-01-01T00:{:02}:{:02}Z", step / 60 % 60, step % 60),
        actor: "you".into(),
        kind,
        item: Some(ItemId(1)),
        via: None,
    }
}

fn created() -> Event {
    at(
        0,
        EventKind::Created {
            title: "t".into(),
            request: None,
            branch: "hm/H-0001-t".into(),
            base: "main".into(),
            worktree: Some("/w".into()),
            source: Source::New,
            issue: None,
            pr: None,
        },
    )
}

/// Applies an action like a command would: decide, stamp, fold.
fn run(item: &mut Item, log: &mut Vec<Event>, action: &Action) -> Result<usize, Refusal> {
    let events = decide(item, action)?;
    let n = events.len();
    for kind in events {
        let e = at(log.len(), kind);
        item.apply(&e);
        log.push(e);
    }
    Ok(n)
}

fn start() -> (Item, Vec<Event>) {
    let log = vec![created()];
    (fold(&log), log)
}

fn ready(sha: &str) -> Action {
    Action::Ready {
        sha: sha.into(),
        note: None,
        on_base: true,
    }
}

/// A proposal at `a` that asks you to confirm it.
fn propose_ready(on_base: bool) -> Action {
    Action::ProposeReady {
        sha: "a".into(),
        summary: "s".into(),
        why: None,
        how: None,
        ask: true,
        auto_ready: true,
        on_base,
    }
}

fn verdict(approved: bool) -> Action {
    verdict_on(Sha::from("a"), approved, 3)
}

/// A reviewer's verdict on `sha` that names no findings and no learnings, escalating at
/// `max_rejects` rejections; an approval carries its seal.
fn verdict_on(sha: Sha, approved: bool, max_rejects: u32) -> Action {
    Action::Verdict {
        sha,
        approved,
        findings: vec![],
        model: None,
        summary: None,
        by: None,
        learnings: Vec::new(),
        max_rejects,
        seal: approved.then(seal),
    }
}

fn passed() -> Action {
    Action::ChecksPassed { sha: "a".into() }
}

/// A fix at `a` that claims nothing fixed and disputes nothing.
fn fix() -> Action {
    Action::FixSubmitted {
        sha: "a".into(),
        fixed: vec![],
        disputed: vec![],
    }
}

fn retry(reason: &str) -> Action {
    Action::Retry {
        reason: reason.into(),
        tokens: None,
    }
}

fn seal() -> Seal {
    Seal {
        tree: "t".into(),
        signer: "ada@example.com".into(),
        key: "SHA256:k".into(),
        sig: "-----BEGIN SSH SIGNATURE-----".into(),
        base: None,
    }
}

#[test]
fn an_approval_carries_its_seal_into_the_hallmarked_event() {
    let mut item = fold(&[created()]);
    item.state = State::Review;
    item.sha = Some("a".into());
    let events = decide(&item, &verdict(true)).expect("approves");
    assert_eq!(
        events.last(),
        Some(&EventKind::Hallmarked {
            sha: "a".into(),
            round: item.round,
            seal: Some(seal()),
        })
    );
}

#[test]
fn a_hallmarked_line_from_before_signing_still_decodes_without_a_seal() {
    let e = decode(
        r#"{"v":1,"t":"2026-01-01T00:00:00Z","actor":"assayer","event":"hallmarked","sha":"a","round":2,"item":"H-0001"}"#,
    )
    .expect("decodes");
    assert_eq!(
        e.kind,
        EventKind::Hallmarked {
            sha: "a".into(),
            round: 2,
            seal: None
        }
    );
    let signed = at(
        1,
        EventKind::Hallmarked {
            sha: "a".into(),
            round: 2,
            seal: Some(seal()),
        },
    );
    assert_eq!(decode(&encode(&signed)).expect("round trip"), signed);
}

fn failed() -> Action {
    Action::ChecksFailed {
        sha: "a".into(),
        failed: vec!["cargo test".into()],
        max_check_failures: 3,
    }
}

#[test]
fn ready_is_idempotent_at_the_same_sha_and_refused_at_another() {
    let (mut item, mut log) = start();
    assert_eq!(run(&mut item, &mut log, &ready("a")), Ok(1));
    assert_eq!(item.state, State::Checks);
    assert_eq!(item.round, 1);
    assert_eq!(run(&mut item, &mut log, &ready("a")), Ok(0));
    assert_eq!(
        run(&mut item, &mut log, &ready("b")),
        Err(Refusal::InReview {
            state: State::Checks,
            round: 1,
            sha: "a".into()
        })
    );
}

#[test]
fn a_restack_moves_the_items_base_once() {
    let (mut item, mut log) = start();
    let from = item.base.clone();
    let to = Action::Restack {
        base: "parent".into(),
    };
    assert_eq!(run(&mut item, &mut log, &to), Ok(1));
    assert_eq!(
        log.last().map(|e| &e.kind),
        Some(&EventKind::Restacked {
            from,
            to: "parent".into()
        })
    );
    assert_eq!(item.base, "parent");
    assert_eq!(fold(&log).base, "parent");
    assert_eq!(run(&mut item, &mut log, &to), Ok(0));
    let blank = Action::Restack { base: " ".into() };
    assert_eq!(run(&mut item, &mut log, &blank), Ok(0));
    assert_eq!(item.base, "parent");
}

#[test]
fn a_standing_rebase_request_blocks_ready_and_is_kept() {
    let (mut item, mut log) = start();
    run(
        &mut item,
        &mut log,
        &Action::RequestRebase {
            base: "main".into(),
        },
    )
    .expect("request");
    let blocked = Action::Ready {
        sha: "a".into(),
        note: None,
        on_base: false,
    };
    assert_eq!(
        run(&mut item, &mut log, &blocked),
        Err(Refusal::RebasePending {
            base: "main".into()
        })
    );
    let propose = propose_ready(false);
    assert_eq!(
        run(&mut item, &mut log, &propose),
        Err(Refusal::RebasePending {
            base: "main".into()
        })
    );
    assert_eq!(item.rebase_requested.as_deref(), Some("main"));
    run(&mut item, &mut log, &ready("a")).expect("on base now");
    assert_eq!(item.rebase_requested, None);
}

#[test]
fn propose_ready_waits_for_you_when_asked_or_when_questions_are_open() {
    let propose = |ask, auto_ready| Action::ProposeReady {
        sha: "a".into(),
        summary: "done".into(),
        why: None,
        how: None,
        ask,
        auto_ready,
        on_base: true,
    };
    let (mut item, mut log) = start();
    run(&mut item, &mut log, &propose(false, true)).expect("proposes");
    assert_eq!(
        item.state,
        State::Checks,
        "auto_ready with nothing to confirm goes straight to checks"
    );

    let (mut item, mut log) = start();
    run(&mut item, &mut log, &propose(true, true)).expect("proposes");
    assert_eq!(item.state, State::AwaitingYou);

    let (mut item, mut log) = start();
    run(&mut item, &mut log, &propose(false, false)).expect("proposes");
    assert_eq!(item.state, State::AwaitingYou, "auto_ready off");

    let (mut item, mut log) = start();
    let asked = at(
        1,
        EventKind::Asked {
            qid: QuestionId(1),
            question: "billed or raw?".into(),
            options: vec![],
            default: None,
            wait_until: None,
            session: None,
        },
    );
    item.apply(&asked);
    log.push(asked);
    run(&mut item, &mut log, &propose(false, true)).expect("proposes");
    assert_eq!(
        item.state,
        State::AwaitingYou,
        "an open question is left to confirm"
    );
    run(&mut item, &mut log, &ready("a")).expect("you confirm");
    assert_eq!(item.state, State::Checks);
}

#[test]
fn pull_back_works_from_every_listed_state() {
    let paths: Vec<Vec<Action>> = vec![
        vec![propose_ready(true)],
        vec![ready("a")],
        vec![ready("a"), passed()],
        vec![ready("a"), failed()],
        vec![ready("a"), passed(), verdict(true)],
    ];
    let mut seen = Vec::new();
    for path in paths {
        let (mut item, mut log) = start();
        for a in &path {
            run(&mut item, &mut log, a).expect("path is legal");
        }
        seen.push(item.state);
        run(
            &mut item,
            &mut log,
            &Action::PullBack {
                reason: Some("not yet".into()),
            },
        )
        .expect("pull-back");
        assert_eq!(item.state, State::Development);
    }
    let (mut item, mut log) = escalated();
    seen.push(item.state);
    run(&mut item, &mut log, &Action::PullBack { reason: None }).expect("pull-back");
    assert_eq!(item.state, State::Development);
    assert_eq!(
        seen,
        vec![
            State::AwaitingYou,
            State::Checks,
            State::Review,
            State::Fixing,
            State::Hallmarked,
            State::Escalated
        ]
    );
}

fn escalated() -> (Item, Vec<Event>) {
    let (mut item, mut log) = start();
    run(&mut item, &mut log, &ready("a")).expect("ready");
    for round in 0..3 {
        run(&mut item, &mut log, &passed()).expect("pass");
        run(&mut item, &mut log, &verdict(false)).expect("reject");
        if round < 2 {
            assert_eq!(item.state, State::Fixing);
            run(&mut item, &mut log, &fix()).expect("fix");
        }
    }
    assert_eq!(
        item.state,
        State::Escalated,
        "the third rejection escalates"
    );
    (item, log)
}

#[test]
fn max_rejects_escalates_and_retry_allows_exactly_one_more_round() {
    let (mut item, mut log) = escalated();
    run(&mut item, &mut log, &retry("one more")).expect("retry");
    assert_eq!(item.state, State::Fixing);
    run(&mut item, &mut log, &fix()).expect("fix");
    run(&mut item, &mut log, &passed()).expect("pass");
    run(&mut item, &mut log, &verdict(false)).expect("reject");
    assert_eq!(item.state, State::Escalated);
}

#[test]
fn max_check_failures_in_a_row_holds_and_retry_releases() {
    let (mut item, mut log) = start();
    run(&mut item, &mut log, &ready("a")).expect("ready");
    for n in 1..=3 {
        run(&mut item, &mut log, &failed()).expect("fail");
        assert_eq!(item.state, State::Fixing);
        assert_eq!(
            item.hold.is_some(),
            n == 3,
            "held only on the third failure in a row"
        );
        if n < 3 {
            run(&mut item, &mut log, &fix()).expect("fix");
        }
    }
    assert_eq!(item.hold.as_ref().map(|h| h.kind), Some(HoldKind::Checks));
    run(&mut item, &mut log, &retry("try again")).expect("retry");
    assert_eq!(item.hold, None);
    assert_eq!(item.state, State::Fixing);
}

#[test]
fn a_pass_resets_the_failure_streak() {
    let (mut item, mut log) = start();
    run(&mut item, &mut log, &ready("a")).expect("ready");
    for _ in 0..2 {
        run(&mut item, &mut log, &failed()).expect("fail");
        run(&mut item, &mut log, &fix()).expect("fix");
    }
    run(&mut item, &mut log, &passed()).expect("pass");
    run(&mut item, &mut log, &verdict(false)).expect("reject");
    run(&mut item, &mut log, &fix()).expect("fix");
    run(&mut item, &mut log, &failed()).expect("fail");
    assert_eq!(item.hold, None);
}

#[test]
fn terminal_states_refuse_everything_but_the_documented_ways_out() {
    let (mut item, mut log) = start();
    run(
        &mut item,
        &mut log,
        &Action::Drop {
            reason: "no".into(),
        },
    )
    .expect("drop");
    for a in [ready("a"), Action::PullBack { reason: None }, retry("r")] {
        assert!(run(&mut item, &mut log, &a).is_err(), "{a:?}");
    }
    assert_eq!(
        run(
            &mut item,
            &mut log,
            &Action::Drop {
                reason: "again".into()
            }
        ),
        Ok(0),
        "drop is idempotent"
    );
}

#[test]
fn shipping_closes_and_reopening_and_restoring_follow_the_table() {
    let (mut item, mut log) = start();
    for a in [ready("a"), passed(), verdict(true)] {
        run(&mut item, &mut log, &a).expect("loop");
    }
    assert_eq!(item.hallmark.as_deref(), Some("a"));
    run(
        &mut item,
        &mut log,
        &Action::Shipped {
            pr: Some("https://pr/1".into()),
        },
    )
    .expect("ship");
    assert_eq!(item.state, State::Closed);
    assert!(
        run(&mut item, &mut log, &Action::Drop { reason: "x".into() }).is_err(),
        "closed is the end"
    );
    run(
        &mut item,
        &mut log,
        &Action::Reopen {
            reason: "red CI".into(),
            ci_at: Some(Sha::new("abc1234")),
            follow: None,
        },
    )
    .expect("reopen");
    assert_eq!(item.state, State::Development);
    run(&mut item, &mut log, &Action::Restore).expect("restore");
    assert_eq!(item.state, State::Closed);
}

/// Ships an item at `a` and reopens it, as the Delivery office does.
fn shipped_and_reopened() -> (Item, Vec<Event>) {
    let (mut item, mut log) = start();
    let a = Sha::from("a");
    let steps = [
        Action::Ready {
            sha: a.clone(),
            note: None,
            on_base: false,
        },
        Action::ChecksPassed { sha: a.clone() },
        verdict_on(a.clone(), true, 3),
        Action::Shipped {
            pr: Some("https://pr/1".into()),
        },
        Action::Reopen {
            reason: "conflicts".into(),
            ci_at: None,
            follow: None,
        },
    ];
    for s in &steps {
        run(&mut item, &mut log, s).expect("the walk to a reopened item");
    }
    (item, log)
}

#[test]
fn a_follow_through_rebase_that_keeps_the_change_carries_the_approval_from_development() {
    let (mut item, mut log) = shipped_and_reopened();
    assert_eq!(item.shipped.as_deref(), Some("a"));
    let b = Sha::from("b");
    let carry = Action::Rebased {
        sha: b.clone(),
        seal: Some(seal()),
    };
    assert!(
        run(&mut item, &mut log, &carry).is_err(),
        "no carry without a follow-through for a conflict"
    );
    let follow = Action::FollowThrough {
        kind: FollowKind::Conflict,
        brief: "rebase onto main".into(),
    };
    run(&mut item, &mut log, &follow).expect("follow");
    assert_eq!(run(&mut item, &mut log, &follow), Ok(0), "asked once");
    run(&mut item, &mut log, &carry).expect("carry");
    assert_eq!(item.state, State::Hallmarked);
    assert_eq!(item.hallmark.as_ref(), Some(&b));
    assert_eq!(item.follow, None);
    let verdict = log.iter().rev().find_map(|e| match &e.kind {
        EventKind::Verdict { by, .. } => Some(by.clone()),
        _ => None,
    });
    assert_eq!(verdict, Some(Some("carried".into())));
}

#[test]
fn a_follow_through_for_ci_is_counted_and_a_ready_answers_it() {
    let (mut item, mut log) = shipped_and_reopened();
    let ci = Action::FollowThrough {
        kind: FollowKind::Ci,
        brief: "test failed".into(),
    };
    run(&mut item, &mut log, &ci).expect("follow");
    assert_eq!(item.ci_fixes, 1);
    let carry = Action::Rebased {
        sha: Sha::from("b"),
        seal: Some(seal()),
    };
    assert!(
        run(&mut item, &mut log, &carry).is_err(),
        "only a conflict's run may carry"
    );
    run(
        &mut item,
        &mut log,
        &Action::Ready {
            sha: Sha::from("b"),
            note: None,
            on_base: true,
        },
    )
    .expect("ready");
    assert_eq!(item.follow, None);
    assert_eq!(item.ci_fixes, 1, "kept: a second red CI is a person's");
}

#[test]
fn a_reply_is_drafted_in_development_replaced_until_posted_and_posted_once() {
    let (mut item, mut log) = start();
    let draft = |body: &str| Action::DraftReply {
        comment: 7,
        body: body.into(),
    };
    assert!(
        run(&mut item, &mut log, &draft("x")).is_err(),
        "no PR, nothing to reply on"
    );
    let (mut item, mut log) = shipped_and_reopened();
    run(&mut item, &mut log, &draft("first")).expect("draft");
    run(&mut item, &mut log, &draft("second")).expect("redraft");
    assert_eq!(run(&mut item, &mut log, &draft("second")), Ok(0));
    assert_eq!(item.replies.len(), 1);
    assert_eq!(item.replies[0].body, "second");
    run(&mut item, &mut log, &Action::PostReply { comment: 7 }).expect("post");
    assert!(item.replies[0].posted);
    assert_eq!(
        run(&mut item, &mut log, &Action::PostReply { comment: 7 }),
        Ok(0),
        "posted once"
    );
    assert!(run(&mut item, &mut log, &Action::PostReply { comment: 8 }).is_err());
    // A new draft for a posted comment is a second reply; the first stays posted.
    run(&mut item, &mut log, &draft("third")).expect("draft again");
    assert_eq!(item.replies.len(), 2);
}

mod properties;

#[test]
fn checks_failed_at_a_rebased_commit_sends_a_hallmarked_item_to_the_fixer_from_there() {
    let (mut item, mut log) = start();
    run(&mut item, &mut log, &ready("a")).unwrap();
    run(&mut item, &mut log, &passed()).unwrap();
    run(&mut item, &mut log, &verdict(true)).unwrap();
    assert_eq!(
        (item.state, item.hallmark.as_deref()),
        (State::Hallmarked, Some("a"))
    );
    let failed = Action::ChecksFailed {
        sha: "b".into(),
        failed: vec!["sh gate2.sh".into()],
        max_check_failures: 3,
    };
    run(&mut item, &mut log, &failed).unwrap();
    assert_eq!(item.state, State::Fixing);
    assert_eq!(
        item.sha.as_deref(),
        Some("b"),
        "the fix starts at the rebased commit"
    );
    assert_eq!(item.hallmark, None, "the approval went with it");
    assert_eq!(item.check_failures, 1);
    assert_eq!(fold(&log), item, "the fold agrees");
}
