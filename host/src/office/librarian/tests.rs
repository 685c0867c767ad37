use std::sync::{Arc, Mutex};

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::*;
use crate::claude::{RunOutcome, Runner};
use crate::gazette::words::Words;
use crate::item::event::{Finding, Usage};
use crate::item::{LearningKind, LearningStatus, Lens, QuestionId, Severity};
use crate::library::{Draft, Source};
use crate::office::tests::{Bench, kinds};

/// A stand-in for the librarian's model: answers every run with `answer`, and keeps
/// each spec it was given.
struct Answers {
    answer: Mutex<RunOutcome>,
    specs: Mutex<Vec<RunSpec>>,
}

impl Runner for Answers {
    fn run(&self, _dir: &Path, _stamp: &str, spec: &RunSpec) -> crate::claude::Result<RunOutcome> {
        self.specs.lock().unwrap().push(spec.clone());
        Ok(self.answer.lock().unwrap().clone())
    }
}

fn answering(structured: Option<Value>) -> Arc<Answers> {
    Arc::new(Answers {
        answer: Mutex::new(RunOutcome {
            run: "20261102T090000Z-librarian".into(),
            exit_code: Some(if structured.is_some() { 0 } else { 1 }),
            failure: structured
                .is_none()
                .then(|| "the model said no".to_string()),
            structured,
            usage: vec![Usage {
                model: "claude-haiku-4-5".into(),
                input: 900,
                output: 200,
                ..Usage::default()
            }],
            ..RunOutcome::default()
        }),
        specs: Mutex::new(Vec::new()),
    })
}

fn finding(id: &str, scenario: &str) -> Finding {
    Finding {
        id: id.into(),
        lens: Lens::ALL[0],
        severity: Severity::ALL[0],
        file: "lib.txt".into(),
        line: Some(5),
        scenario: scenario.into(),
    }
}

/// A reviewed item, then dropped: round 1 rejected with F1 and F2, and a person's
/// answer to Q-1.
fn finished(bench: &Bench) -> ItemId {
    let (id, sha) = bench.item_in_review();
    let e = |kind| bench.ctx.event(Some(id), kind);
    bench
        .hall
        .journal
        .append_item(
            id,
            &[
                e(EventKind::Verdict {
                    sha: sha.clone(),
                    round: 1,
                    approved: false,
                    findings: vec![
                        finding("F1", "three attempts allow a fourth"),
                        finding("F2", "the name is unclear"),
                    ],
                    model: None,
                    summary: None,
                    by: None,
                    learnings: vec!["L-0001".into()],
                }),
                e(EventKind::Asked {
                    qid: QuestionId(1),
                    question: "inclusive?".into(),
                    options: vec!["yes".into(), "no".into()],
                    default: None,
                    wait_until: None,
                    session: None,
                }),
                e(EventKind::Answered {
                    qid: QuestionId(1),
                    answer: "yes".into(),
                    by_default: false,
                }),
                e(EventKind::Dropped {
                    reason: "done by hand".into(),
                }),
            ],
        )
        .unwrap();
    id
}

fn answer() -> Value {
    json!({
        "learnings": [
            {"kind": "rule", "title": "Retry limits are inclusive", "body": "Check `<=` in retry caps.",
             "paths": ["lib.txt"], "round": 1, "finding": "F1"},
            {"kind": "false-positive", "title": "Short names are fine in lib.txt", "body": "The module is tiny.",
             "paths": [], "round": 1, "finding": "F2"},
            {"kind": "decision", "title": "Caps count the first try", "body": "A person ruled so.",
             "paths": ["lib.txt"], "ruling": "Q-1"}
        ],
        "contradicted": [],
        "gazette": {"headline": "Retries stop at three", "story": "The cap was off by one.",
                    "findings": {"F1": "A fourth try slipped through."}}
    })
}

#[test]
fn distillation_schema_is_generated() {
    let want = serde_json::to_string_pretty(&schema(&Known::default())).unwrap() + "\n";
    if std::env::var_os("HALL_WRITE_SCHEMA").is_some() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../plugin/schemas/distillation.json"
        );
        std::fs::write(path, &want).unwrap();
        return;
    }
    assert_eq!(
        SCHEMA_FILE, want,
        "plugin/schemas/distillation.json is stale: run HALL_WRITE_SCHEMA=1 cargo test -p hallmark-host distillation_schema_is_generated"
    );
}

/// Every rule `check` enforces that JSON Schema can say, the schema says: an answer the
/// schema takes is kept whole, and each way of breaking a rule is refused by both.
#[test]
fn the_schema_and_the_check_refuse_the_same_answers() {
    let known = Known {
        findings: BTreeMap::from([(1, vec!["F1".into(), "F2".into()]), (2, vec!["F1".into()])]),
        rounds: 2,
        rulings: vec!["Q-1".into()],
        shown: vec![LearningId(3), LearningId(4)],
        named: vec![LearningId(3)],
    };
    let schema = schema(&known);
    let validator = jsonschema::validator_for(&schema).expect("a valid schema");
    let good = json!({
        "learnings": [
            {"kind": "rule", "title": "t", "body": "b", "paths": ["src/**"], "round": 2, "finding": "F1"},
            {"kind": "decision", "title": "t", "body": "b", "ruling": "Q-1"},
            {"kind": "map", "title": "t", "body": "b", "round": 1},
            {"kind": "map", "title": "t", "body": "b", "updates": "L-0003"}
        ],
        "contradicted": [{"learning": "L-0003", "why": "round 2 proved it wrong"}],
        "gazette": {"headline": "h", "findings": {"F2": "said plainly"}}
    });
    assert!(
        validator.is_valid(&good),
        "{:?}",
        validator
            .iter_errors(&good)
            .map(|e| e.to_string())
            .collect::<Vec<_>>()
    );
    let kept = check(
        ItemId(1),
        serde_json::from_value(good.clone()).unwrap(),
        &known,
    );
    assert!(kept.problems.is_empty(), "{:?}", kept.problems);
    assert_eq!(kept.proposals.len(), 4);
    assert_eq!(kept.proposals[3].0, Some(LearningId(3)));
    assert_eq!(
        kept.contradicted,
        vec![(LearningId(3), "round 2 proved it wrong".into())]
    );
    assert!(kept.words.is_some());

    let with = |pointer: &str, value: Value| {
        let mut v = good.clone();
        *v.pointer_mut(pointer).unwrap() = value;
        v
    };
    let bad = [
        (
            "a finding of another round",
            with("/learnings/0/finding", json!("F2")),
        ),
        (
            "a round the item never had",
            with("/learnings/2/round", json!(3)),
        ),
        (
            "a ruling nobody gave",
            with("/learnings/1/ruling", json!("Q-2")),
        ),
        (
            "a learning it was not shown",
            with("/learnings/3/updates", json!("L-0005")),
        ),
        (
            "a title of two lines",
            with("/learnings/0/title", json!("a\nb")),
        ),
        ("a blank body", with("/learnings/0/body", json!("  "))),
        (
            "a path outside the repository",
            with("/learnings/0/paths/0", json!("../x")),
        ),
        (
            "an absolute path",
            with("/learnings/0/paths/0", json!("/etc/x")),
        ),
        (
            "a contradiction of an unknown learning",
            with("/contradicted/0/learning", json!("L-0001")),
        ),
        // Shown, but the item's review never relied on it: the record can't contradict it.
        (
            "a contradiction of a learning not relied on",
            with("/contradicted/0/learning", json!("L-0004")),
        ),
    ];
    for (what, answer) in bad {
        assert!(!validator.is_valid(&answer), "the schema took {what}");
        let kept = check(ItemId(1), serde_json::from_value(answer).unwrap(), &known);
        assert!(!kept.problems.is_empty(), "the check took {what}");
    }
    for (what, answer) in [
        ("a blank headline", with("/gazette/headline", json!(" "))),
        (
            "words for a finding there is not",
            with("/gazette/findings", json!({"F9": "x"})),
        ),
        ("both a finding and a ruling", {
            let mut v = good.clone();
            v["learnings"][0]["ruling"] = json!("Q-1");
            v
        }),
        ("too many learnings", {
            let mut v = good.clone();
            let one = v["learnings"][2].clone();
            v["learnings"] = Value::Array(vec![one; MAX_PROPOSALS + 1]);
            v
        }),
    ] {
        assert!(!validator.is_valid(&answer), "the schema took {what}");
        // Words are checked when they are written; the rest by `check`.
        if let Ok(parsed) = serde_json::from_value::<Distillation>(answer) {
            let kept = check(ItemId(1), parsed, &known);
            assert!(!kept.problems.is_empty(), "the check took {what}");
        }
    }
}

#[test]
fn a_closed_item_is_distilled_into_proposals_words_and_one_journal_line() {
    let runner = answering(Some(answer()));
    let bench = Bench::new(runner.clone());
    let id = finished(&bench);
    let done = distill(&bench.hall, &bench.ctx, id).unwrap();
    assert!(!done.failed, "{:?}", done.problems);
    assert_eq!(
        done.proposed,
        vec![LearningId(1), LearningId(2), LearningId(3)]
    );
    assert!(done.words);

    let library = library(&bench.hall);
    let rule = library.read(LearningId(1)).unwrap();
    assert_eq!(rule.meta.status, LearningStatus::Proposed);
    assert_eq!(rule.meta.kind, LearningKind::Rule);
    assert_eq!(rule.meta.source.item, Some(id));
    assert_eq!(rule.meta.source.round, Some(1));
    assert_eq!(rule.meta.source.finding.as_deref(), Some("F1"));
    let decision = library.read(LearningId(3)).unwrap();
    assert_eq!(decision.meta.source.ruling.as_deref(), Some("Q-1"));

    let events = bench.hall.events(id).unwrap();
    let names = kinds(&events);
    assert_eq!(names[names.len() - 2..], ["usage", "distilled"]);
    let words = bench.hall.journal.item_dir(id).join(WORDS_FILE);
    assert!(Words::read(&words).found().is_some());
    let page = std::fs::read_to_string(crate::gazette::page_path(&bench.hall.journal, id)).unwrap();
    assert!(
        page.contains("Retries stop at three"),
        "the page was reprinted with the words"
    );

    // The run was the librarian, confined like the reviewer, with this item's schema.
    let specs = runner.specs.lock().unwrap();
    let spec = &specs[0];
    assert_eq!(spec.role, "librarian");
    assert!(
        spec.args
            .windows(2)
            .any(|w| w == ["--agent", "hallmark:librarian"])
    );
    let schema = spec
        .args
        .windows(2)
        .find(|w| w[0] == "--json-schema")
        .map(|w| w[1].clone())
        .expect("a schema");
    assert!(
        schema.contains("\"Q-1\"") && schema.contains("\"F2\""),
        "{schema}"
    );
    assert!(
        spec.prompt.contains("three attempts allow a fourth"),
        "the record is in the prompt"
    );
}

#[test]
fn a_failed_run_changes_nothing_but_its_journal_line() {
    let runner = answering(None);
    let bench = Bench::new(runner);
    let id = finished(&bench);
    let done = distill(&bench.hall, &bench.ctx, id).unwrap();
    assert!(done.failed);
    assert!(done.proposed.is_empty());
    assert!(!library(&bench.hall).learnings_dir().exists());
    let events = bench.hall.events(id).unwrap();
    let EventKind::Distilled {
        failed, problems, ..
    } = &events.last().unwrap().kind
    else {
        panic!("{:?}", events.last());
    };
    assert!(failed);
    assert!(problems[0].contains("the model said no"), "{problems:?}");
}

#[test]
fn an_open_item_is_not_distilled() {
    let bench = Bench::new(answering(Some(answer())));
    let (id, _) = bench.item_in_review();
    let err = distill(&bench.hall, &bench.ctx, id).unwrap_err();
    assert_eq!(err.code, Code::WrongState);
    assert!(
        err.message.contains("closed and dropped items only"),
        "{err}"
    );
}

#[test]
fn a_contradicted_learning_is_retired_with_the_reason_and_can_come_back() {
    let mut a = answer();
    a["learnings"] = json!([]);
    a["contradicted"] = json!([{"learning": "L-0001", "why": "F1 proved `<` wrong"}]);
    let bench = Bench::new(answering(Some(a)));
    let library = library(&bench.hall);
    let stamp = Stamp::new("2026-11-01T09:00:00Z", "you");
    let l = library
        .propose(
            Draft {
                kind: LearningKind::FalsePositive,
                title: "Caps may be exclusive".into(),
                body: "Do not flag `<` in caps.".into(),
                paths: vec!["lib.txt".into()],
                source: Source::default(),
            },
            &stamp,
        )
        .unwrap();
    assert_eq!(l.id(), LearningId(1));
    library.accept(l.id(), &stamp).unwrap();
    let id = finished(&bench);
    let done = distill(&bench.hall, &bench.ctx, id).unwrap();
    assert_eq!(done.retired, vec![l.id()], "{:?}", done.problems);
    let retired = library.read(l.id()).unwrap();
    assert_eq!(retired.meta.status, LearningStatus::Retired);
    let repo = crate::journal::file::read(&bench.hall.journal.repo_file()).unwrap();
    let reason = repo.events.iter().find_map(|e: &Event| match &e.kind {
        EventKind::LearningRetired { reason, .. } => reason.clone(),
        _ => None,
    });
    assert_eq!(
        reason.as_deref(),
        Some(format!("contradicted by {id}: F1 proved `<` wrong").as_str())
    );
    library.restore(l.id(), &stamp).unwrap();
    assert_eq!(
        library.read(l.id()).unwrap().meta.status,
        LearningStatus::Accepted
    );
}

#[test]
fn learnings_no_review_used_for_retire_after_are_retired_once_a_day() {
    let bench = Bench::new(answering(None));
    let library = library(&bench.hall);
    let old = Stamp::new("2026-07-01T09:00:00Z", "you");
    let recent = Stamp::new("2026-10-30T09:00:00Z", "you");
    let draft = |title: &str| Draft {
        kind: LearningKind::Rule,
        title: title.into(),
        body: "b".into(),
        paths: Vec::new(),
        source: Source::default(),
    };
    let stale = library.propose(draft("Old and unused"), &old).unwrap();
    library.accept(stale.id(), &old).unwrap();
    let used = library.propose(draft("Old but used"), &old).unwrap();
    library.accept(used.id(), &old).unwrap();
    library.record_use(&[used.id()], &recent.t).unwrap();
    let fresh = library.propose(draft("New"), &recent).unwrap();
    library.accept(fresh.id(), &recent).unwrap();

    let retired = sweep_stale(&bench.hall, &bench.ctx, false).unwrap();
    assert_eq!(retired, vec![stale.id()]);
    assert_eq!(
        library.read(used.id()).unwrap().meta.status,
        LearningStatus::Accepted
    );
    assert_eq!(
        library.read(fresh.id()).unwrap().meta.status,
        LearningStatus::Accepted
    );
    // The sweep is made once a day: a learning gone stale since waits for tomorrow, or
    // for `hall library distill`.
    let later = library.propose(draft("Went stale today"), &old).unwrap();
    library.accept(later.id(), &old).unwrap();
    assert!(
        sweep_stale(&bench.hall, &bench.ctx, false)
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        sweep_stale(&bench.hall, &bench.ctx, true).unwrap(),
        vec![later.id()]
    );
    // Put back by hand, its clock starts again: the next sweep leaves it in force.
    library.restore(stale.id(), &recent).unwrap();
    assert!(
        sweep_stale(&bench.hall, &bench.ctx, true)
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        library.read(stale.id()).unwrap().meta.status,
        LearningStatus::Accepted
    );
}

#[test]
fn the_daemon_distils_recent_reviewed_items_once() {
    let bench = Bench::new(answering(Some(answer())));
    let id = finished(&bench);
    let now = bench.ctx.clock.now();
    assert_eq!(pending(&bench.hall, now).unwrap(), vec![id]);
    let later = now + RECENT + Duration::from_secs(60);
    assert!(
        pending(&bench.hall, later).unwrap().is_empty(),
        "an old close is left alone"
    );
    let did = pass(&bench.hall, &bench.ctx).unwrap();
    assert_eq!(did.len(), 1, "{did:?}");
    assert!(did[0].1.contains("proposed L-0001"), "{did:?}");
    assert!(
        pending(&bench.hall, now).unwrap().is_empty(),
        "distilled once"
    );
}
