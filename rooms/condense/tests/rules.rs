//! The rules every condensed output obeys, each pinned by a small test.

use hall_condense::{Family, SMALL_BYTES, SMALL_LINES, condense};

/// Output big enough to be condensed: `n` numbered lines.
fn big(prefix: &str, n: usize) -> String {
    (0..n)
        .map(|i| format!("{prefix} line {i:04} of filler text\n"))
        .collect()
}

#[test]
fn evidence_is_never_condensed() {
    let mut diff =
        String::from("diff --git a/x.rs b/x.rs\n--- a/x.rs\n+++ b/x.rs\n@@ -1,400 +1,400 @@\n");
    for i in 0..400 {
        diff.push_str(&format!("-old {i}\n+new {i}\n"));
    }
    for cmd in [
        "git diff",
        "git show HEAD",
        "git log -p",
        "cd repo && git --no-pager diff --cached",
    ] {
        let c = condense(cmd, 0, &diff, "run.log");
        assert_eq!(c.family, Family::Passthrough, "{cmd}");
        assert_eq!(c.text, diff, "{cmd}: evidence changed");
        assert_eq!(c.bytes_out, c.bytes_in);
        assert!(!c.fell_back);
    }
    // Even a failing evidence command, and even with colour codes.
    let coloured = format!("\x1b[1mdiff --git a/x b/x\x1b[m\n{}", big("+", 300));
    assert_eq!(
        condense("git diff --color=always", 1, &coloured, "l").text,
        coloured
    );
}

#[test]
fn small_output_is_shown_verbatim_with_its_exit_code() {
    let out = "test a ... ok\n\x1b[31mtest b ... FAILED\x1b[0m\nsome detail\n";
    let c = condense("cargo test", 101, out, "run.log");
    assert!(c.text.starts_with(out), "small output was altered");
    assert!(c.text.contains("cargo test: FAIL (exit 101)"));
    assert_eq!(c.text.lines().count(), out.lines().count() + 1);

    // Right at the limits it is still verbatim; one line over, it is not.
    let at_limit: String = (0..SMALL_LINES).map(|i| format!("{i}\n")).collect();
    assert!(
        condense("make", 0, &at_limit, "l")
            .text
            .starts_with(&at_limit)
    );
    let over: String = (0..=SMALL_LINES).map(|i| format!("{i}\n")).collect();
    assert!(!condense("make", 0, &over, "l").text.starts_with(&over));
    let wide = "x".repeat(SMALL_BYTES + 1);
    assert!(
        condense("make", 0, &wide, "l")
            .text
            .contains("bytes / 1 lines in")
    );
}

#[test]
fn a_failing_run_without_a_recognised_failure_shows_more_not_less() {
    // cargo test output in which every test passed, yet the exit code says
    // the run failed (say, the harness was killed after the summary).
    let mut out = String::from("running 300 tests\n");
    for i in 0..300 {
        out.push_str(&format!("test tests::case_{i:03} ... ok\n"));
    }
    out.push_str(
        "\ntest result: ok. 300 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out\n",
    );
    out.push_str("something odd happened after the tests\n");
    let c = condense("cargo test", 101, &out, "run.log");
    assert!(c.fell_back);
    assert!(c.text.starts_with("cargo test: FAIL (exit 101)"));
    assert!(c.text.contains("found no failure"), "{}", c.text);
    assert!(c.text.contains("something odd happened after the tests"));
    assert!(
        c.text.contains("test tests::case_000 ... ok"),
        "the head is shown"
    );
}

#[test]
fn a_family_filter_that_does_not_recognise_its_output_says_so() {
    let out = big("unrelated output from a wrapper script", 200);
    let c = condense("pytest -x", 2, &out, "run.log");
    assert!(c.fell_back);
    assert_eq!(c.family, Family::Pytest);
    assert!(
        c.text
            .contains("the pytest filter did not recognise this output")
    );
    assert!(
        c.text
            .contains("unrelated output from a wrapper script line 0000")
    );
    assert!(
        c.text
            .contains("unrelated output from a wrapper script line 0199")
    );
}

#[test]
fn the_exit_code_decides_the_verdict() {
    let mut out = big("test t", 100);
    out.push_str(
        "\ntest result: ok. 100 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out\n",
    );
    assert!(
        condense("cargo test", 0, &out, "l")
            .text
            .starts_with("cargo test: PASS (exit 0)")
    );
    assert!(
        condense("cargo test", 1, &out, "l")
            .text
            .starts_with("cargo test: FAIL (exit 1)")
    );
    assert!(
        condense("make", 139, &out, "l")
            .text
            .starts_with("generic: FAIL (exit 139: killed by signal 11)")
    );
}

#[test]
fn a_zero_exit_with_reported_failures_is_flagged() {
    let mut out = String::new();
    for i in 0..100 {
        out.push_str(&format!(
            "=== RUN   TestOk{i}\n--- PASS: TestOk{i} (0.00s)\n"
        ));
    }
    out.push_str(
        "--- FAIL: TestBroken (0.00s)\n    x_test.go:9: boom\nFAIL\nok  \texample.com/x\t0.1s\n",
    );
    let c = condense("go test -v ./...", 0, &out, "l");
    assert!(
        c.text.contains("exit 0, but the output reports 1 failure"),
        "{}",
        c.text
    );
    assert!(c.text.contains("x_test.go:9: boom"));
}

#[test]
fn ansi_and_carriage_return_redraws_are_removed() {
    let mut out = String::new();
    for i in 0..100 {
        out.push_str(&format!("\x1b[32mprogress {i}%\x1b[0m\r"));
    }
    out.push_str("\x1b[32mprogress 100%\x1b[0m\n");
    out.push_str(&big("\x1b[1mstep\x1b[0m", 100));
    out.push_str("\x1b[31merror: it broke\x1b[0m\n");
    let c = condense("./build.sh", 1, &out, "l");
    assert!(!c.text.contains('\x1b'), "escape left in {}", c.text);
    assert!(!c.text.contains('\r'));
    assert!(c.text.contains("progress 100%"));
    assert!(!c.text.contains("progress 99%"));
    assert!(c.text.contains("error: it broke"));
}

#[test]
fn repeated_lines_fold_into_a_count() {
    let mut out = String::from("starting\n");
    for _ in 0..500 {
        out.push_str("retrying connection to db:5432\n");
    }
    out.push_str("gave up\n");
    let c = condense("./deploy.sh", 1, &out, "l");
    assert!(
        c.text.contains("retrying connection to db:5432 [x500]"),
        "{}",
        c.text
    );
    assert!(c.text.contains("gave up"));
    assert!(c.bytes_out < 1000);
}

#[test]
fn generic_keeps_head_tail_and_errors_from_the_middle() {
    let mut out = String::new();
    for i in 0..300 {
        out.push_str(&format!("step {i}: {}\n", "ok ".repeat(i % 7 + 1)));
        if i == 150 {
            out.push_str("ERROR: checksum mismatch in chunk 150\n");
        }
    }
    let c = condense("./pipeline", 1, &out, "run.log");
    assert!(c.text.contains("step 0:"));
    assert!(c.text.contains("step 299:"));
    assert!(c.text.contains("ERROR: checksum mismatch in chunk 150"));
    assert!(
        c.text.contains("[line 152]"),
        "rescued lines carry their log line"
    );
    assert!(c.text.contains("of the log omitted"));
}

#[test]
fn the_footer_measures_and_labels_the_estimate() {
    let out = big("x", 500);
    let c = condense("./x", 0, &out, "runs/42.log");
    let footer: Vec<&str> = c.text.lines().rev().take(2).collect();
    assert!(footer[1].contains(&format!("{} bytes / {} lines in", c.bytes_in, c.lines_in)));
    assert!(footer[1].contains(&format!(
        "{} bytes / {} lines out",
        c.bytes_out, c.lines_out
    )));
    assert!(footer[1].contains("estimated as bytes/4"));
    assert!(footer[0].contains("`hall run --show runs/42.log --lines a-b`"));
    assert!(footer[0].contains("--grep <pattern>"));
}

#[test]
fn a_collection_error_is_not_a_clean_run() {
    let mut out = String::from(
        "============================= test session starts ==============================\n\
         collected 0 items / 1 error\n\n\
         ==================================== ERRORS ====================================\n\
         ________________________ ERROR collecting tests/test_a.py ________________________\n\
         ImportError while importing test module '/p/tests/test_a.py'.\n\
         tests/test_a.py:1: in <module>\n    import missing_mod\n\
         E   ModuleNotFoundError: No module named 'missing_mod'\n",
    );
    out.push_str(&big("filler", 80));
    out.push_str(
        "!!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!\n\
         =============================== 1 error in 0.05s ===============================\n",
    );
    let c = condense("pytest", 2, &out, "l");
    assert!(!c.fell_back);
    assert!(
        c.text
            .contains("ModuleNotFoundError: No module named 'missing_mod'")
    );
    assert!(c.text.contains("tests/test_a.py:1"));
    assert!(c.text.contains("Interrupted: 1 error during collection"));
    assert!(c.text.contains("1 error in 0.05s"));
}
