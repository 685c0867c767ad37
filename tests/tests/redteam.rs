//! The red-team suite: every attack in `tests/fixtures/redteam/cases.toml` must really
//! push, write a note or move the base when nothing gates it, and must get nowhere
//! through the real hook. Each layer is also measured on its own; the counts are printed
//! and `docs/security.md` records them. `REDTEAM_ONLY=id1,id2` runs a subset.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;

use hallmark_tests::redteam::{self, Case, Gating, Outcome, Verdict, World};

/// Per case: which layers stop it on their own.
#[derive(Debug, Default, Clone)]
struct Row {
    class: String,
    stopped_by: BTreeSet<&'static str>,
    gates: Vec<String>,
}

fn selected() -> Vec<Case> {
    let only: Option<BTreeSet<String>> = std::env::var("REDTEAM_ONLY")
        .ok()
        .map(|s| s.split(',').map(str::to_string).collect());
    redteam::corpus()
        .cases
        .into_iter()
        .filter(|c| only.as_ref().is_none_or(|o| o.contains(&c.id)))
        .collect()
}

fn describe(o: &Outcome) -> String {
    let steps: Vec<String> = o
        .steps
        .iter()
        .map(|(v, ran)| match v {
            Verdict::Allowed => format!("allowed (ran: {ran})"),
            Verdict::Denied { gate, reason } => format!("denied by {gate}: {reason}"),
        })
        .collect();
    format!("steps: {steps:#?}\nchanged: {:?}", o.changed)
}

/// Runs one case every way; returns the row, or a failure message.
fn judge_case(w: &World, case: &Case) -> Result<Row, String> {
    for p in &case.needs {
        if !redteam::installed(p) {
            return Err(format!(
                "{}: needs `{p}`, which is not installed (.ci/run installs it)",
                case.id
            ));
        }
    }
    let bare = w.run(case, &Gating::None);
    if !bare.effect {
        return Err(format!(
            "{}: does nothing when ungated, so it proves nothing\n{}",
            case.id,
            describe(&bare)
        ));
    }
    let mut row = Row {
        class: case.class.clone(),
        ..Row::default()
    };
    // The CI check: whatever reached origin, or got a note here, must fail `hall verify`
    // in a fresh clone.
    // The commit that really is hallmarked may travel too (pushed to the base, say); it
    // is the others, the unreviewed ones, that CI must refuse.
    let genuine = &w.vars["other_sha"];
    let shipped: Vec<&String> = match case.effect.as_str() {
        "push" => bare.pushed.iter().map(|(_, sha)| sha).collect(),
        "note" => bare.noted.iter().collect(),
        _ => Vec::new(),
    };
    let unreviewed: Vec<&String> = shipped.into_iter().filter(|s| *s != genuine).collect();
    let caught_by_verify =
        !unreviewed.is_empty() && unreviewed.iter().all(|sha| !w.verified_in_clone(sha));
    if caught_by_verify {
        row.stopped_by.insert("L4/L5");
    }
    let gated = w.run(case, &Gating::Hook);
    if gated.effect {
        return Err(format!(
            "{}: GOT THROUGH the hook\n{}",
            case.id,
            describe(&gated)
        ));
    }
    for (v, _) in &gated.steps {
        if let Verdict::Denied { gate, .. } = v {
            row.gates.push(gate.clone());
        }
    }
    for layer in ["L1", "L2", "L6"] {
        let only = w.run(case, &Gating::Layers(BTreeSet::from([layer])));
        if !only.effect {
            row.stopped_by.insert(layer);
        }
    }
    let confined = w.run(case, &Gating::Sandbox);
    if !confined.effect {
        row.stopped_by.insert("L3");
    }
    Ok(row)
}

#[test]
fn every_attack_is_real_and_none_gets_through_the_hook() {
    let cases = selected();
    assert!(!cases.is_empty(), "no cases selected");
    let workers = 2.min(cases.len());
    let queue = Mutex::new(cases.clone());
    let rows: Mutex<BTreeMap<String, Row>> = Mutex::new(BTreeMap::new());
    let failures: Mutex<Vec<String>> = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| {
                let w = World::build();
                // The CI check must accept a real hallmark, or its column means nothing.
                assert!(
                    w.verified_in_clone(&w.vars["other_sha"]),
                    "hall verify rejects the real hallmark in a fresh clone"
                );
                loop {
                    let Some(case) = queue.lock().expect("queue").pop() else {
                        break;
                    };
                    match judge_case(&w, &case) {
                        Ok(row) => {
                            rows.lock().expect("rows").insert(case.id.clone(), row);
                        }
                        Err(e) => failures.lock().expect("failures").push(e),
                    }
                }
            });
        }
    });
    let rows = rows.into_inner().expect("rows");
    let failures = failures.into_inner().expect("failures");
    report(&rows);
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n\n")
    );
}

/// Prints the counts per class and layer.
fn report(rows: &BTreeMap<String, Row>) {
    let layers = ["L1", "L2", "L3", "L4/L5", "L6"];
    let mut by_class: BTreeMap<String, (usize, BTreeMap<&str, usize>)> = BTreeMap::new();
    for r in rows.values() {
        let e = by_class.entry(r.class.clone()).or_default();
        e.0 += 1;
        for l in &r.stopped_by {
            *e.1.entry(l).or_default() += 1;
        }
    }
    let mut out = String::from("\nred team: cases stopped by each layer on its own\n");
    out.push_str(&format!("{:<28} {:>5}", "class", "cases"));
    for l in layers {
        out.push_str(&format!(" {l:>6}"));
    }
    out.push('\n');
    let mut total = (0, BTreeMap::<&str, usize>::new());
    for (class, (n, per)) in &by_class {
        out.push_str(&format!("{class:<28} {n:>5}"));
        for l in layers {
            let c = per.get(l).copied().unwrap_or(0);
            *total.1.entry(l).or_default() += c;
            out.push_str(&format!(" {c:>6}"));
        }
        total.0 += n;
        out.push('\n');
    }
    out.push_str(&format!("{:<28} {:>5}", "all", total.0));
    for l in layers {
        out.push_str(&format!(" {:>6}", total.1.get(l).copied().unwrap_or(0)));
    }
    out.push('\n');
    eprintln!("{out}");
}

#[test]
fn everyday_commands_pass_the_hook() {
    let w = World::build();
    let list = redteam::allow_list();
    let mut denied = Vec::new();
    for cmd in &list.allow {
        w.restore();
        let step = redteam::Step::Bash(cmd.clone());
        if let Verdict::Denied { gate, reason } = w.ask_hook(&step, &w.wt) {
            denied.push(format!("{cmd}\n  denied by {gate}: {reason}"));
        }
    }
    for o in &list.in_other {
        w.restore();
        let step = redteam::Step::Bash(o.cmd.clone());
        if let Verdict::Denied { gate, reason } = w.ask_hook(&step, &w.other) {
            denied.push(format!(
                "{} (hallmarked worktree)\n  denied by {gate}: {reason}",
                o.cmd
            ));
        }
    }
    assert!(
        denied.is_empty(),
        "everyday commands denied:\n{}",
        denied.join("\n")
    );
}

/// The three forgeries are refused at their first write and again at the push, each on
/// its own: the push is judged as if the writes had gone through.
#[test]
fn forgeries_fail_at_the_first_write_and_at_the_push() {
    let w = World::build();
    // The step that writes the forgery's first protected file (the ones before only
    // make objects or an unreviewed commit).
    for (id, first) in [
        ("forge-bash-only", 0),
        ("forge-write-tool", 1),
        ("forge-replace", 1),
    ] {
        let case = redteam::corpus()
            .cases
            .into_iter()
            .find(|c| c.id == id)
            .expect("case");
        let cwd = w.cwd(&case);
        // Every write runs ungated, then the push is put to the hook.
        w.restore();
        let (push, writes) = case.steps.split_last().expect("steps");
        for (i, s) in writes.iter().enumerate() {
            if i == first {
                let verdict = w.ask_hook(s, &cwd);
                assert!(
                    matches!(verdict, Verdict::Denied { .. }),
                    "{id}: the first write was allowed"
                );
            }
            w.execute(s, &cwd);
        }
        match w.ask_hook(push, &cwd) {
            Verdict::Denied { gate, reason } => {
                assert_eq!(gate, "push", "{id}: {reason}");
            }
            Verdict::Allowed => panic!("{id}: the push after a completed forgery was allowed"),
        }
    }
}
