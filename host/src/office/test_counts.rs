//! How many tests a green check run says it ran, read from the title and summary
//! GitHub keeps for it (what a test reporter action or the job writes there), so the
//! merger room can refuse a green that tested nothing (`no_tests_ran`).
//!
//! GitHub has no field for a test count, so the count is read from the words test
//! tools print, and only when a phrase leaves no doubt: "no tests ran", "Ran 0 tests",
//! "Tests run: 0", or pass and fail counts ("0 passed, 3 skipped", "test result: ok. 0
//! passed; 0 failed"). Anything else is unknown, never zero: an unknown count does not
//! hold a PR.
//!
//! The counts of a head's finished checks do not change, so each head is asked for
//! once, in the pass's one GraphQL call, and its counts are kept in
//! `<journal>/check-reports.jsonl`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::error::{HallError, Result};
use crate::gh::CheckContext;
use crate::hall::Hall;

/// Phrases that say outright that nothing ran.
const NONE_RAN: [&str; 6] = [
    "no tests ran",
    "no tests were run",
    "no tests found",
    "no tests to run",
    "no test files found",
    "no tests collected",
];

/// Words after a number that count tests which ran.
const RAN: [&str; 8] = [
    "passed", "passing", "failed", "failing", "error", "errors", "broken", "pass",
];

/// The number of tests `title` and `summary` say ran, when they say it plainly.
pub fn tests_reported(title: &str, summary: &str) -> Option<u64> {
    let text = format!("{title}\n{summary}").to_lowercase();
    if NONE_RAN.iter().any(|p| text.contains(p)) {
        return Some(0);
    }
    let words: Vec<&str> = text
        .split(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | '(' | ')' | '|'))
        .filter(|w| !w.is_empty())
        .collect();
    let number = |w: &str| {
        w.trim_matches(|c: char| !c.is_ascii_digit())
            .parse::<u64>()
            .ok()
    };
    let word = |i: usize| {
        words
            .get(i)
            .map(|w| w.trim_matches(|c: char| !c.is_alphabetic()))
            .unwrap_or_default()
    };
    let mut told: Option<u64> = None;
    let mut counted = 0;
    let mut passed_seen = false;
    for (i, w) in words.iter().enumerate() {
        // "Ran 12 tests" (unittest), "Tests run: 12" (surefire, JUnit reporters).
        if let Some(n) = number(w).filter(|_| w.chars().all(|c| c.is_ascii_digit() || c == ':')) {
            let ran = word(i.wrapping_sub(1)) == "ran" && word(i + 1).starts_with("test");
            let run = word(i.wrapping_sub(1)) == "run" && word(i.wrapping_sub(2)) == "tests";
            if ran || run {
                told = Some(told.unwrap_or(0) + n);
                continue;
            }
            let next = word(i + 1);
            if RAN.contains(&next) {
                counted += n;
                passed_seen |= matches!(next, "passed" | "passing" | "pass");
            }
        }
    }
    // A fail count alone ("0 failed") says nothing about how many passed.
    told.or(passed_seen.then_some(counted))
}

/// One head's counts, by check name; `None` where the check did not say.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Kept {
    head: String,
    #[serde(default)]
    tests: BTreeMap<String, Option<u64>>,
}

/// The counts kept so far.
pub struct Reports {
    file: PathBuf,
    heads: BTreeMap<String, BTreeMap<String, Option<u64>>>,
}

impl Reports {
    /// Reads `<journal>/check-reports.jsonl`; an unreadable line is skipped (its head
    /// is only asked for again).
    pub fn load(hall: &Hall) -> Self {
        let file = hall.journal.root().join("check-reports.jsonl");
        let heads = std::fs::read_to_string(&file)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str::<Kept>(l).ok())
            .map(|k| (k.head, k.tests))
            .collect();
        Self { file, heads }
    }

    pub fn has(&self, head: &str) -> bool {
        self.heads.contains_key(head)
    }

    /// The count check `name` at `head` reported, if it did.
    pub fn tests(&self, head: &str, name: &str) -> Option<u64> {
        self.heads.get(head)?.get(name).copied().flatten()
    }

    /// Keeps the counts of `checks`, the check runs at `head` as GitHub lists them
    /// with their titles and summaries. A head with a check still running is not
    /// kept (its counts may yet come).
    pub fn keep(&mut self, head: &str, checks: &[CheckContext]) -> Result<()> {
        if checks
            .iter()
            .any(|c| c.typename == "CheckRun" && c.status != "COMPLETED")
        {
            return Ok(());
        }
        let tests: BTreeMap<String, Option<u64>> = checks
            .iter()
            .filter(|c| c.typename == "CheckRun")
            .map(|c| (c.name.clone(), tests_reported(&c.title, &c.summary)))
            .collect();
        let line = serde_json::to_string(&Kept {
            head: head.to_string(),
            tests: tests.clone(),
        })
        .map_err(HallError::internal)?;
        crate::journal::file::append_raw(&self.file, &format!("{line}\n"))?;
        self.heads.insert(head.to_string(), tests);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::{Reports, tests_reported};
    use crate::gh::CheckContext;
    use crate::office::tests::{Bench, NoRuns};

    fn run(name: &str, status: &str, summary: &str) -> CheckContext {
        CheckContext {
            typename: "CheckRun".into(),
            name: name.into(),
            status: status.into(),
            summary: summary.into(),
            ..CheckContext::default()
        }
    }

    #[test]
    fn counts_are_kept_a_head_at_a_time_once_its_checks_finished() {
        let bench = Bench::new(Arc::new(NoRuns));
        let mut reports = Reports::load(&bench.hall);
        let done = [
            run("test", "COMPLETED", "Ran 0 tests in 0.000s"),
            run("lint", "COMPLETED", "clean"),
        ];
        reports.keep("h1", &done).unwrap();
        reports
            .keep("h2", &[run("test", "COMPLETED", "5 passed")])
            .unwrap();
        reports
            .keep("h3", &[run("test", "IN_PROGRESS", "")])
            .unwrap();
        let again = Reports::load(&bench.hall);
        assert_eq!(again.tests("h1", "test"), Some(0));
        assert_eq!(again.tests("h1", "lint"), None);
        assert_eq!(again.tests("h2", "test"), Some(5));
        assert!(again.has("h1") && again.has("h2"));
        assert!(!again.has("h3"), "a running check's count may yet come");
    }

    #[test]
    fn a_count_is_read_only_from_phrases_that_leave_no_doubt() {
        let cases: [(&str, &str, Option<u64>); 14] = [
            ("", "", None),
            ("Build succeeded", "All jobs finished", None),
            ("0 failed", "", None),
            ("No tests ran", "", Some(0)),
            (
                "pytest",
                "collected 0 items\n\nno tests ran in 0.01s",
                Some(0),
            ),
            (
                "",
                "test result: ok. 0 passed; 0 failed; 0 ignored",
                Some(0),
            ),
            (
                "",
                "test result: ok. 3 passed; 0 failed\ntest result: ok. 2 passed; 1 failed",
                Some(6),
            ),
            ("12 passed, 0 failed and 1 skipped", "", Some(12)),
            ("0 passed, 4 skipped", "", Some(0)),
            ("", "Ran 0 tests in 0.000s\n\nOK", Some(0)),
            ("", "Ran 17 tests in 1.2s", Some(17)),
            (
                "",
                "Tests run: 0, Failures: 0, Errors: 0, Skipped: 0",
                Some(0),
            ),
            ("", "Tests:       1 failed, 4 passed, 5 total", Some(5)),
            ("", "  3 passing (12ms)\n  1 failing", Some(4)),
        ];
        for (title, summary, want) in cases {
            assert_eq!(
                tests_reported(title, summary),
                want,
                "{title:?} / {summary:?}"
            );
        }
    }
}
