use super::*;

#[test]
fn a_proposal_is_a_file_that_parses_back_and_is_journaled() {
    let f = fixture(&[]);
    let l = f
        .library
        .propose(
            draft(
                LearningKind::Rule,
                "Cap retries",
                "Retry at most six times.\n",
                &["src/http/**"],
            ),
            &stamp(T0),
        )
        .expect("proposes");
    assert_eq!(l.id(), LearningId(1));
    assert_eq!(l.meta.status, LearningStatus::Proposed);
    let path = f.library.file_of(l.id());
    assert!(
        path.ends_with("library/learnings/L-0001.md"),
        "{}",
        path.display()
    );
    let text = std::fs::read_to_string(&path).expect("read");
    assert!(text.starts_with("+++\nid = \"L-0001\"\n"), "{text}");
    assert_eq!(Learning::parse(&text, &path).expect("parses"), l);
    assert_eq!(
        repo_events(&f.journal),
        [EventKind::LearningProposed {
            learning: LearningId(1),
            version: 1,
            kind: LearningKind::Rule,
            title: "Cap retries".into(),
            replaces: None,
            accepted: false,
        }]
    );
    let second = f
        .library
        .propose(draft(LearningKind::Map, "Map", "m", &[]), &stamp(T0))
        .expect("proposes");
    assert_eq!(second.id(), LearningId(2));
}

#[test]
fn auto_accepted_kinds_are_in_force_at_once() {
    let f = fixture(&[LearningKind::Map]);
    let map = f
        .library
        .propose(
            draft(LearningKind::Map, "What src/http does", "HTTP.", &[]),
            &stamp(T0),
        )
        .expect("proposes");
    let rule = f
        .library
        .propose(draft(LearningKind::Rule, "A rule", "r", &[]), &stamp(T0))
        .expect("proposes");
    assert_eq!(map.meta.status, LearningStatus::Accepted);
    assert_eq!(rule.meta.status, LearningStatus::Proposed);
    assert!(matches!(
        repo_events(&f.journal)[0],
        EventKind::LearningProposed { accepted: true, .. }
    ));
}

#[test]
fn an_update_waits_while_the_accepted_text_stays_in_force() {
    let f = fixture(&[]);
    let s = stamp(T0);
    let l = f
        .library
        .propose(draft(LearningKind::Rule, "Old title", "old body", &[]), &s)
        .expect("proposes");
    f.library.accept(l.id(), &s).expect("accepts");
    let update = f
        .library
        .propose_update(
            l.id(),
            draft(LearningKind::Rule, "New title", "new body", &[]),
            &stamp(T1),
        )
        .expect("updates");
    assert_eq!(update.meta.version, 2);
    assert_eq!(update.meta.replaces, Some(1));
    assert_eq!(update.meta.created, T0, "the learning keeps its birth");
    let entry = f.library.entry(l.id()).expect("entry");
    let in_force = entry.in_force.expect("v1 in force");
    assert_eq!(
        (in_force.meta.version, in_force.meta.title.as_str()),
        (1, "Old title")
    );
    let again = f
        .library
        .propose_update(l.id(), draft(LearningKind::Rule, "Third", "x", &[]), &s)
        .unwrap_err();
    assert!(matches!(again, LibraryError::WrongStatus { .. }), "{again}");
    let accepted = f.library.accept(l.id(), &s).expect("accepts the update");
    assert_eq!((accepted.meta.version, accepted.meta.replaces), (2, None));
    assert_eq!(f.library.history_versions(l.id()).expect("history"), [1]);
}

#[test]
fn rejecting_an_update_restores_the_replaced_version_byte_for_byte() {
    let f = fixture(&[]);
    let s = stamp(T0);
    let l = f
        .library
        .propose(
            draft(
                LearningKind::Rule,
                "Title",
                "body\n\nwith paragraphs\n",
                &["web/**"],
            ),
            &s,
        )
        .expect("proposes");
    f.library.accept(l.id(), &s).expect("accepts");
    let path = f.library.file_of(l.id());
    let before = std::fs::read(&path).expect("read");
    f.library
        .propose_update(
            l.id(),
            draft(LearningKind::Rule, "Worse", "worse", &[]),
            &stamp(T1),
        )
        .expect("updates");
    let restored = f.library.reject(l.id(), &stamp(T1)).expect("rejects");
    assert_eq!(std::fs::read(&path).expect("read"), before);
    assert_eq!(restored.map(|r| r.meta.version), Some(1));
    // The rejected text is kept too, and the next update gets a version of its own.
    assert_eq!(f.library.history_versions(l.id()).expect("history"), [1, 2]);
    let next = f
        .library
        .propose_update(
            l.id(),
            draft(LearningKind::Rule, "Better", "better", &[]),
            &s,
        )
        .expect("updates");
    assert_eq!(next.meta.version, 3);
    assert!(matches!(
        repo_events(&f.journal).as_slice(),
        [
            EventKind::LearningProposed { .. },
            EventKind::LearningAccepted { .. },
            EventKind::LearningProposed { .. },
            EventKind::LearningRejected {
                version: 2,
                restored: Some(1),
                ..
            },
            EventKind::LearningProposed { version: 3, .. },
        ]
    ));
}

#[test]
fn rejecting_a_new_proposal_removes_it_and_keeps_its_text() {
    let f = fixture(&[]);
    let s = stamp(T0);
    let l = f
        .library
        .propose(draft(LearningKind::Rule, "Nope", "no", &[]), &s)
        .expect("proposes");
    let text = std::fs::read(f.library.file_of(l.id())).expect("read");
    assert_eq!(f.library.reject(l.id(), &s).expect("rejects"), None);
    assert!(!f.library.file_of(l.id()).exists());
    assert_eq!(
        std::fs::read(f.library.history_file(l.id(), 1)).expect("kept"),
        text
    );
    assert!(matches!(
        f.library.read(l.id()),
        Err(LibraryError::NotFound(_))
    ));
    let next = f
        .library
        .propose(draft(LearningKind::Rule, "Yes", "y", &[]), &s)
        .expect("proposes");
    assert_eq!(
        next.id(),
        LearningId(2),
        "a rejected id is never given again"
    );
}

#[test]
fn retiring_is_reversible_and_checks_the_status() {
    let f = fixture(&[LearningKind::Rule]);
    let s = stamp(T0);
    let l = f
        .library
        .propose(draft(LearningKind::Rule, "R", "r", &[]), &s)
        .expect("proposes");
    let retired = f
        .library
        .retire(l.id(), Some("contradicted".into()), &s)
        .expect("retires");
    assert_eq!(retired.meta.status, LearningStatus::Retired);
    let twice = f.library.retire(l.id(), None, &s).unwrap_err();
    assert!(matches!(
        twice,
        LibraryError::WrongStatus {
            status: LearningStatus::Retired,
            ..
        }
    ));
    assert!(
        f.library.accept(l.id(), &s).is_err(),
        "a retired learning is not proposed"
    );
    let back = f.library.restore(l.id(), &s).expect("restores");
    assert_eq!(back.meta.status, LearningStatus::Accepted);
    assert_eq!(back.body, l.body);
    assert!(matches!(
        repo_events(&f.journal).as_slice(),
        [
            EventKind::LearningProposed { accepted: true, .. },
            EventKind::LearningRetired {
                reason: Some(_),
                ..
            },
            EventKind::LearningRestored { .. },
        ]
    ));
    assert!(matches!(
        f.library.restore(LearningId(9), &s),
        Err(LibraryError::NotFound(LearningId(9)))
    ));
}

#[test]
fn use_is_counted_on_accepted_learnings_only() {
    let f = fixture(&[]);
    let s = stamp(T0);
    let a = f
        .library
        .propose(draft(LearningKind::Rule, "A", "a", &[]), &s)
        .expect("a");
    let b = f
        .library
        .propose(draft(LearningKind::Rule, "B", "b", &[]), &s)
        .expect("b");
    f.library.accept(a.id(), &s).expect("accepts");
    let skipped = f
        .library
        .record_use(&[a.id(), b.id(), LearningId(7)], T1)
        .expect("records");
    assert_eq!(skipped, [b.id(), LearningId(7)]);
    let a = f.library.read(a.id()).expect("a");
    assert_eq!((a.meta.used, a.meta.last_used.as_deref()), (1, Some(T1)));
}

#[test]
fn drafts_without_a_title_or_with_escaping_paths_are_refused() {
    let f = fixture(&[]);
    let s = stamp(T0);
    for (title, paths) in [
        (" ", vec![]),
        ("T", vec!["/etc/**"]),
        ("T", vec!["../x"]),
        ("a\nb", vec![]),
    ] {
        let err = f
            .library
            .propose(draft(LearningKind::Rule, title, "b", &paths), &s)
            .unwrap_err();
        assert!(
            matches!(err, LibraryError::Invalid(_)),
            "{title:?} {paths:?}: {err}"
        );
    }
    assert!(
        f.library.list().expect("list").entries.is_empty(),
        "nothing was written"
    );
}

#[test]
fn a_malformed_file_is_named_and_hides_nothing_else() {
    let f = fixture(&[]);
    let s = stamp(T0);
    f.library
        .propose(draft(LearningKind::Rule, "Good", "g", &[]), &s)
        .expect("proposes");
    let dir = f.library.learnings_dir();
    let cases = [
        (
            "L-0002.md",
            "no front matter\n",
            "does not start with a `+++` line",
        ),
        ("L-0003.md", "+++\nid = \"L-0003\"\n", "no closing `+++`"),
        (
            "L-0004.md",
            "+++\nid = \"L-0004\"\nkind = \"rule\"\ntitle = \"t\"\nstatus = \"accepted\"\nversion = 1\ncreated = \"2026-11-02T09:00:00Z\"\nupdated = \"2026-11-02T09:00:00Z\"\nmood = \"x\"\n+++\n",
            "line 9: unknown field `mood`",
        ),
        (
            "L-0005.md",
            "+++\nid = \"L-0009\"\nkind = \"rule\"\ntitle = \"t\"\nstatus = \"accepted\"\nversion = 1\ncreated = \"2026-11-02T09:00:00Z\"\nupdated = \"2026-11-02T09:00:00Z\"\n+++\n",
            "does not match its id L-0009",
        ),
        (
            "L-0006.md",
            "+++\nid = \"L-0006\"\nkind = \"rules\"\ntitle = \"t\"\nstatus = \"accepted\"\nversion = 1\ncreated = \"2026-11-02T09:00:00Z\"\nupdated = \"2026-11-02T09:00:00Z\"\n+++\n",
            "unknown variant `rules`",
        ),
    ];
    for (name, text, _) in &cases {
        std::fs::write(dir.join(name), text).expect("write");
    }
    let listing = f.library.list().expect("lists");
    assert_eq!(listing.entries.len(), 1);
    assert_eq!(listing.problems.len(), cases.len());
    for ((name, _, needle), problem) in cases.iter().zip(&listing.problems) {
        assert!(problem.file.ends_with(name), "{problem:?}");
        assert!(
            problem.message.contains(needle),
            "{name}: {}",
            problem.message
        );
    }
}
