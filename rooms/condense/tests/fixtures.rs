//! Every real captured output, condensed: its failure signals must survive,
//! its exit code must be stated, and the cut must be measured honestly.

mod common;

use hall_condense::{Family, condense, strip_ansi};

fn log_for(id: &str) -> String {
    format!("runs/{}.log", id.replace('/', "-"))
}

#[test]
fn every_signal_survives_and_the_exit_code_is_stated() {
    let mut problems = Vec::new();
    for f in common::load_all() {
        let c = condense(&f.command, f.exit_code, &f.output, &log_for(&f.id));
        let plain = strip_ansi(&c.text);
        for s in &f.signals {
            // A signal must be real: present in the raw output as well.
            if !strip_ansi(&f.output).contains(s.as_str()) {
                problems.push(format!("{}: signal not in the raw output: {s:?}", f.id));
            }
            if !plain.contains(s.as_str()) {
                problems.push(format!("{}: lost signal {s:?}", f.id));
            }
        }
        if c.family == Family::Passthrough {
            if c.text != f.output {
                problems.push(format!("{}: evidence was changed", f.id));
            }
            continue;
        }
        if !c.text.contains(&format!("(exit {}", f.exit_code)) {
            problems.push(format!("{}: exit code {} not stated", f.id, f.exit_code));
        }
        if f.exit_code != 0 && c.text.contains(": PASS (") {
            problems.push(format!("{}: a failing run reads as PASS", f.id));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn measurements_match_the_text_and_runs_are_deterministic() {
    for f in common::load_all() {
        let log = log_for(&f.id);
        let a = condense(&f.command, f.exit_code, &f.output, &log);
        let b = condense(&f.command, f.exit_code, &f.output, &log);
        assert_eq!(a, b, "{}: two runs differ", f.id);
        assert_eq!(a.bytes_in, f.output.len(), "{}", f.id);
        assert_eq!(a.lines_in, f.output.lines().count(), "{}", f.id);
        assert_eq!(a.bytes_out, a.text.len(), "{}", f.id);
        assert_eq!(a.lines_out, a.text.lines().count(), "{}", f.id);
        assert_eq!(
            a.estimated_tokens_saved,
            a.bytes_in.saturating_sub(a.bytes_out) / 4,
            "{}",
            f.id
        );
        let condensed = a.family != Family::Passthrough
            && !(f.output.len() <= hall_condense::SMALL_BYTES
                && f.output.lines().count() <= hall_condense::SMALL_LINES);
        if condensed {
            assert!(
                a.text.contains(&log),
                "{}: footer does not name the log",
                f.id
            );
            assert!(a.text.contains("--lines a-b"), "{}", f.id);
            assert!(a.text.contains("--grep <pattern>"), "{}", f.id);
            assert!(a.text.contains("estimated as bytes/4"), "{}", f.id);
            assert!(a.text.len() < 30_000, "{}: over the harness limit", f.id);
            assert!(
                !a.fell_back,
                "{}: the family filter did not handle its own output",
                f.id
            );
        }
    }
}

#[test]
fn large_failing_runs_shrink_by_at_least_85_percent_overall() {
    let (mut bytes_in, mut bytes_out, mut n) = (0usize, 0usize, 0usize);
    for f in common::load_all() {
        if f.exit_code == 0 || f.output.len() < 10 * 1024 {
            continue;
        }
        let c = condense(&f.command, f.exit_code, &f.output, &log_for(&f.id));
        if c.family == Family::Passthrough {
            continue;
        }
        bytes_in += c.bytes_in;
        bytes_out += c.bytes_out;
        n += 1;
        // No single large failing run may be left mostly uncut (dense
        // compile errors and parametrized failures sit near 65-70%).
        assert!(
            c.bytes_out * 100 <= c.bytes_in * 40,
            "{}: only {}% saved",
            f.id,
            100 - c.bytes_out * 100 / c.bytes_in
        );
    }
    assert!(n >= 15, "too few large failing fixtures: {n}");
    let saved = 100.0 * (bytes_in - bytes_out) as f64 / bytes_in as f64;
    assert!(
        saved >= 85.0,
        "only {saved:.1}% saved over {n} large failing runs"
    );
}

#[test]
fn commands_of_the_corpus_pick_their_family() {
    for f in common::load_all() {
        let want = match f.id.split('/').next().unwrap_or("") {
            "cargo_test" => Family::CargoTest,
            "cargo_build" => Family::CargoBuild,
            "cargo_fmt" => Family::CargoFmt,
            "pytest" => Family::Pytest,
            "jest" => Family::Jest,
            "vitest" => Family::Vitest,
            "go_test" => Family::GoTest,
            "passthrough" => Family::Passthrough,
            _ => Family::Generic,
        };
        assert_eq!(hall_condense::family_for(&f.command), want, "{}", f.id);
    }
}

macro_rules! snapshot {
    ($name:ident, $id:literal) => {
        #[test]
        fn $name() {
            let f = common::load_one($id);
            let c = condense(&f.command, f.exit_code, &f.output, &log_for(&f.id));
            insta::assert_snapshot!(c.text);
        }
    };
}

snapshot!(
    snapshot_cargo_test_many_failures,
    "cargo_test/many_failures"
);
snapshot!(snapshot_cargo_test_crash, "cargo_test/crash_sigabrt_large");
snapshot!(
    snapshot_cargo_clippy_deny,
    "cargo_build/clippy_deny_warnings"
);
snapshot!(snapshot_cargo_fmt_large, "cargo_fmt/check_diff_large");
snapshot!(snapshot_pytest_large, "pytest/many_failures_large");
snapshot!(snapshot_pytest_segfault, "pytest/crash_segfault");
snapshot!(snapshot_jest_tty, "jest/many_failures_tty");
snapshot!(snapshot_vitest, "vitest/many_failures");
snapshot!(snapshot_go_verbose, "go_test/many_failures_verbose");
snapshot!(snapshot_generic_traceback, "generic/python_traceback");
