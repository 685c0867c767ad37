use super::*;

/// A store with every kind of file: accepted, proposed, an update pending, a rejected
/// update, a rejected proposal, a retired one.
fn busy_store(f: &Fixture) {
    let s = stamp(T0);
    let lib = &f.library;
    let a = lib
        .propose(draft(LearningKind::Rule, "A", "alpha\n", &["src/**"]), &s)
        .expect("a");
    lib.accept(a.id(), &s).expect("accept");
    lib.propose_update(
        a.id(),
        draft(LearningKind::Rule, "A2", "alpha two", &[]),
        &stamp(T1),
    )
    .expect("update");
    let b = lib
        .propose(draft(LearningKind::Map, "B", "beta — ünïcode", &[]), &s)
        .expect("b");
    lib.accept(b.id(), &s).expect("accept");
    lib.propose_update(b.id(), draft(LearningKind::Map, "B2", "worse", &[]), &s)
        .expect("update");
    lib.reject(b.id(), &s).expect("reject");
    let c = lib
        .propose(draft(LearningKind::Decision, "C", "gamma", &[]), &s)
        .expect("c");
    lib.reject(c.id(), &s).expect("reject");
    let d = lib
        .propose(
            draft(
                LearningKind::FalsePositive,
                "D",
                "delta \"quoted\"\n\n- list\n",
                &[],
            ),
            &s,
        )
        .expect("d");
    lib.accept(d.id(), &s).expect("accept");
    lib.retire(d.id(), None, &s).expect("retire");
    lib.propose(draft(LearningKind::Rule, "E", "", &[]), &s)
        .expect("e");
}

/// Every file under the store's learnings/ and history/, with its bytes.
fn files(lib: &Library) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![lib.learnings_dir(), lib.history_dir()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("dir").flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let rel = path
                    .strip_prefix(lib.root())
                    .expect("inside")
                    .display()
                    .to_string();
                out.push((rel, std::fs::read(&path).expect("read")));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn export_then_import_round_trips_byte_for_byte() {
    let f = fixture(&[]);
    busy_store(&f);
    let first = f.library.export().expect("exports");
    assert!(
        first.starts_with("{\"format\":\"hallmark-library\",\"v\":1}\n"),
        "{first}"
    );
    let fresh = fixture(&[]);
    let imported = fresh
        .library
        .import_export(&first, std::path::Path::new("export.jsonl"))
        .expect("imports");
    assert_eq!(imported.learnings.len(), 4, "{imported:?}");
    assert_eq!(imported.history, 4, "{imported:?}");
    assert_eq!(fresh.library.export().expect("exports again"), first);
    let (before, after) = (files(&f.library), files(&fresh.library));
    assert_eq!(before.len(), 8);
    assert_eq!(before, after);
    // The imported store works: a pending update still shows the version in force.
    let entry = fresh.library.entry(LearningId(1)).expect("entry");
    assert_eq!(entry.in_force.map(|l| l.meta.title), Some("A".to_string()));
    let next = fresh
        .library
        .propose(draft(LearningKind::Rule, "F", "f", &[]), &stamp(T0))
        .expect("proposes");
    assert_eq!(
        next.id(),
        LearningId(6),
        "ids continue after the imported ones"
    );
}

#[test]
fn import_refuses_a_store_that_holds_learnings_and_bad_documents() {
    let f = fixture(&[]);
    busy_store(&f);
    let doc = f.library.export().expect("exports");
    let err = f
        .library
        .import_export(&doc, std::path::Path::new("e"))
        .unwrap_err();
    assert!(matches!(err, LibraryError::NotEmpty { .. }), "{err}");
    let fresh = fixture(&[]);
    let path = std::path::Path::new("bad.jsonl");
    for (doc, needle) in [
        ("", "is empty"),
        (
            "{\"format\":\"other\",\"v\":1}\n",
            "is not a Library export",
        ),
        (
            "{\"format\":\"hallmark-library\",\"v\":1}\nnot json\n",
            "line 2",
        ),
        (
            "{\"format\":\"hallmark-library\",\"v\":1}\n{\"path\":\"../../etc/passwd\",\"text\":\"x\"}\n",
            "is not a store file",
        ),
        (
            "{\"format\":\"hallmark-library\",\"v\":1}\n{\"path\":\"learnings/L-1.md\",\"text\":\"x\"}\n",
            "is not a store file",
        ),
        (
            "{\"format\":\"hallmark-library\",\"v\":1}\n{\"path\":\"history/L-0001/1.md\",\"text\":\"x\"}\n{\"path\":\"history/L-0001/1.md\",\"text\":\"y\"}\n",
            "appears twice",
        ),
    ] {
        let err = fresh.library.import_export(doc, path).unwrap_err();
        assert!(err.to_string().contains(needle), "{doc:?}: {err}");
        assert!(err.to_string().starts_with("bad.jsonl"), "{err}");
    }
    assert!(
        files_or_none(&fresh.library).is_empty(),
        "nothing was written"
    );
}

fn files_or_none(lib: &Library) -> Vec<(String, Vec<u8>)> {
    if lib.learnings_dir().is_dir() {
        files(lib)
    } else {
        Vec::new()
    }
}

#[test]
fn the_old_knowledge_layout_is_proposed_with_kinds_from_folders_or_front_matter() {
    let f = fixture(&[LearningKind::Map]);
    let tree = tempfile::tempdir().expect("tree");
    let knowledge = tree.path().join(".hallmark/knowledge");
    for (rel, text) in [
        ("rules/retry-cap.md", "# Cap retries\n\nAt most six.\n"),
        ("maps/http.md", "src/http is the client.\n"),
        (
            "false-positives/clone.md",
            "+++\ntitle = \"Arc clones are cheap\"\npaths = [\"src/**\"]\n+++\nDon't flag them.\n",
        ),
        (
            "misc/ruling.md",
            "+++\nkind = \"decision\"\n+++\n# Keep the tax rate\nOf issue time.\n",
        ),
    ] {
        let path = knowledge.join(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("dir");
        std::fs::write(&path, text).expect("write");
    }
    let s = stamp(T0);
    let done = f
        .library
        .import_knowledge(&knowledge, tree.path(), &s)
        .expect("imports");
    assert_eq!(done.learnings.len(), 4);
    let listing = f.library.list().expect("list");
    let got: Vec<(LearningKind, String, LearningStatus)> = listing
        .entries
        .iter()
        .map(|e| {
            (
                e.current.meta.kind,
                e.current.meta.title.clone(),
                e.current.meta.status,
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (
                LearningKind::FalsePositive,
                "Arc clones are cheap".into(),
                LearningStatus::Proposed
            ),
            (LearningKind::Map, "http".into(), LearningStatus::Accepted),
            (
                LearningKind::Decision,
                "Keep the tax rate".into(),
                LearningStatus::Proposed
            ),
            (
                LearningKind::Rule,
                "Cap retries".into(),
                LearningStatus::Proposed
            ),
        ]
    );
    let fp = &listing.entries[0].current;
    assert_eq!(fp.meta.paths, ["src/**"]);
    assert_eq!(
        fp.meta.source.file.as_deref(),
        Some(".hallmark/knowledge/false-positives/clone.md")
    );
    let again = f
        .library
        .import_knowledge(&knowledge, tree.path(), &s)
        .expect("imports again");
    assert!(again.learnings.is_empty());
    assert_eq!(again.skipped.len(), 4);
    // A file with no kind anywhere stops the import before anything is proposed.
    std::fs::write(knowledge.join("stray.md"), "what am I\n").expect("write");
    std::fs::write(knowledge.join("rules/new.md"), "new rule\n").expect("write");
    let err = f
        .library
        .import_knowledge(&knowledge, tree.path(), &s)
        .unwrap_err();
    assert!(
        err.to_string().contains("stray.md") && err.to_string().contains("no kind"),
        "{err}"
    );
    assert_eq!(f.library.list().expect("list").entries.len(), 4);
}
