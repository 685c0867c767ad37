//! Check detection measured on a corpus of real repositories.
//!
//! Each directory under `tests/fixtures/detect/` holds one repository's manifests and CI
//! files (`files/`), where they came from (`ORIGIN`) and the checks a careful maintainer
//! would gate on, labelled by hand (`expected.toml`). This test copies every fixture into
//! a fresh git repository, runs the real `hall init` there and scores the gates and setup
//! commands it wrote against the labels: precision over what was proposed, recall over the
//! labels that are not optional. A proposed gate that publishes or never terminates fails
//! the test outright.
//!
//! `DETECT_REPORT=<path>` also writes the per-repository table there (docs/performance.md
//! quotes it); `HALL_BIN` measures another binary, such as an older build.

use std::path::{Path, PathBuf};

use hallmark_tests::sandbox::Sandbox;
use serde::Deserialize;

/// The goal from issue #12.
const MIN_PRECISION: f64 = 0.95;
const MIN_RECALL: f64 = 0.80;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Expected {
    split: String,
    #[allow(dead_code)]
    why: String,
    #[serde(default)]
    never: Vec<String>,
    #[serde(default)]
    gate: Vec<Label>,
    #[serde(default)]
    setup: Vec<Label>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Label {
    command: String,
    #[serde(default)]
    also: Vec<String>,
    #[serde(default)]
    optional: bool,
}

/// True and false positives and negatives of one list of commands.
#[derive(Default, Clone, Copy)]
struct Score {
    /// Proposed and labelled (required or optional).
    hits: usize,
    /// Proposed, not labelled.
    wrong: usize,
    /// Labelled as required and proposed.
    found: usize,
    /// Labelled as required.
    required: usize,
}

impl Score {
    fn add(&mut self, o: Score) {
        self.hits += o.hits;
        self.wrong += o.wrong;
        self.found += o.found;
        self.required += o.required;
    }
    fn precision(self) -> f64 {
        ratio(self.hits, self.hits + self.wrong)
    }
    fn recall(self) -> f64 {
        ratio(self.found, self.required)
    }
}

fn ratio(a: usize, b: usize) -> f64 {
    if b == 0 { 1.0 } else { a as f64 / b as f64 }
}

/// One spelling of a command, with the differences that change nothing removed:
/// whitespace, `npm run test` for `npm test`, `pnpm run x` for `pnpm x`, `tox run -e`
/// for `tox -e`, `nox --session` for `nox -s`, `--all` for `--workspace`, a leading
/// `./` or `bash ` on a repository script, `py.test` for `pytest`; and the arguments
/// that only tune a check, not choose it: `make` variable overrides (`make distcheck
/// FLAGS=…`) and the options of `./configure`.
fn normal(command: &str) -> String {
    let mut words: Vec<String> = command.split_whitespace().map(str::to_string).collect();
    if words.first().is_some_and(|w| w == "bash") && words.len() > 1 {
        words.remove(0);
    }
    if let Some(first) = words.first_mut() {
        if let Some(rest) = first.strip_prefix("./") {
            *first = rest.to_string();
        }
        if first == "py.test" {
            *first = "pytest".to_string();
        }
    }
    if words.len() >= 2 && words[0] == "python" && words[1] == "-m" {
        words.drain(..2);
    }
    let tool = words.first().cloned().unwrap_or_default();
    if ["pnpm", "yarn"].contains(&tool.as_str()) && words.get(1).is_some_and(|w| w == "run") {
        words.remove(1);
    }
    if tool == "npm"
        && words.get(1).is_some_and(|w| w == "run")
        && words.get(2).is_some_and(|w| w == "test")
    {
        words.remove(1);
    }
    if tool == "tox" && words.get(1).is_some_and(|w| w == "run") {
        words.remove(1);
    }
    for w in words.iter_mut() {
        match (tool.as_str(), w.as_str()) {
            ("nox", "--session") => *w = "-s".into(),
            ("cargo", "--all") => *w = "--workspace".into(),
            _ => {}
        }
    }
    if tool == "make" {
        // Drop `NAME=value` words, a quoted value running over several words included.
        let mut kept = vec![words[0].clone()];
        let mut open: Option<char> = None;
        for w in words.drain(1..) {
            if let Some(q) = open {
                if w.ends_with(q) {
                    open = None;
                }
                continue;
            }
            if let Some((_, value)) = w.split_once('=') {
                open = value.chars().next().filter(|c| {
                    (*c == '"' || *c == '\'') && !(value.len() > 1 && value.ends_with(*c))
                });
                continue;
            }
            kept.push(w);
        }
        words = kept;
    }
    if tool == "configure" {
        words.truncate(1);
    }
    // `cargo fmt --all -- --check` is `cargo fmt --all --check`.
    if tool == "cargo" && words.get(1).is_some_and(|w| w == "fmt") {
        words.retain(|w| w != "--");
    }
    words.join(" ")
}

/// Scores `proposed` against `labels`; each label is matched at most once.
fn score(proposed: &[String], labels: &[Label]) -> (Score, Vec<String>, Vec<String>) {
    let mut used = vec![false; labels.len()];
    let mut s = Score {
        required: labels.iter().filter(|l| !l.optional).count(),
        ..Score::default()
    };
    let mut wrong = Vec::new();
    for p in proposed {
        let p_n = normal(p);
        let hit = labels.iter().enumerate().position(|(i, l)| {
            !used[i]
                && std::iter::once(&l.command)
                    .chain(&l.also)
                    .any(|c| normal(c) == p_n)
        });
        match hit {
            Some(i) => {
                used[i] = true;
                s.hits += 1;
                if !labels[i].optional {
                    s.found += 1;
                }
            }
            None => {
                s.wrong += 1;
                wrong.push(p.clone());
            }
        }
    }
    let missed = labels
        .iter()
        .zip(&used)
        .filter(|(l, u)| !l.optional && !**u)
        .map(|(l, _)| l.command.clone())
        .collect();
    (s, wrong, missed)
}

/// Why `command` can never be a gate, whatever the labels say: it publishes, deploys or
/// releases, or it watches, serves or follows and so never ends.
fn never_a_gate(command: &str) -> Option<&'static str> {
    let words: Vec<&str> = command.split_whitespace().collect();
    for w in &words {
        let w = w.trim_matches(|c: char| !c.is_ascii_alphanumeric() && c != '-');
        if ["publish", "deploy", "release", "upload"].contains(&w) {
            return Some("publishes");
        }
        if ["watch", "--watch", "serve", "dev", "start"].contains(&w) {
            return Some("never terminates");
        }
    }
    if words.windows(2).any(|p| p == ["tail", "-f"]) {
        return Some("never terminates");
    }
    None
}

fn copy_tree(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).expect("read fixture") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("type").is_dir() {
            std::fs::create_dir_all(&target).expect("mkdir");
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
}

fn strings(v: &serde_json::Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn check_detection_on_the_corpus_meets_its_goal() {
    let corpus = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/detect");
    let mut names: Vec<String> = std::fs::read_dir(&corpus)
        .expect("corpus")
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("expected.toml").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort_by_key(|n| n.to_lowercase());
    assert!(
        names.len() >= 30,
        "the corpus has {} repositories",
        names.len()
    );

    // One sandbox: the compiled room is cached once for every fixture.
    let sb = Sandbox::new();
    let mut table = vec![
        "| repository | split | gates proposed | precision | recall | wrong | missed |".to_string(),
        "|---|---|---|---|---|---|---|".to_string(),
    ];
    let mut by_split: std::collections::BTreeMap<String, Score> = Default::default();
    let mut total = Score::default();
    let mut setup_total = Score::default();
    let mut violations = Vec::new();
    for name in &names {
        let dir = corpus.join(name);
        let expected: Expected = toml::from_str(
            &std::fs::read_to_string(dir.join("expected.toml")).expect("expected.toml"),
        )
        .unwrap_or_else(|e| panic!("{name}/expected.toml: {e}"));
        assert!(
            dir.join("ORIGIN").is_file(),
            "{name} names no ORIGIN for its files"
        );
        let repo = sb.root.join("corpus").join(name);
        std::fs::create_dir_all(&repo).expect("mkdir");
        copy_tree(&dir.join("files"), &repo);
        sb.git(&repo, &["init", "-q", "-b", "main"]);
        sb.git(&repo, &["add", "-A"]);
        sb.git(&repo, &["commit", "-q", "-m", "fixture"]);
        let reply = sb.hall(&repo, &["init"]).ok();
        let gates = strings(&reply["checks"]);
        let setup: Vec<String> = reply["detection"]["setup"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|c| c["command"].as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();

        for g in &gates {
            let n = normal(g);
            if let Some(why) = never_a_gate(g) {
                violations.push(format!("{name}: `{g}` {why}"));
            } else if expected.never.iter().any(|x| normal(x) == n) {
                violations.push(format!("{name}: `{g}` is labelled never a gate"));
            }
        }
        let (s, wrong, missed) = score(&gates, &expected.gate);
        let (setup_score, _, _) = score(&setup, &expected.setup);
        setup_total.add(setup_score);
        total.add(s);
        by_split.entry(expected.split.clone()).or_default().add(s);
        table.push(format!(
            "| {} | {} | {} | {:.0}% | {:.0}% | {} | {} |",
            name.replacen("__", "/", 1),
            expected.split,
            gates.len(),
            100.0 * s.precision(),
            100.0 * s.recall(),
            wrong
                .iter()
                .map(|w| format!("`{w}`"))
                .collect::<Vec<_>>()
                .join(" "),
            missed
                .iter()
                .map(|m| format!("`{m}`"))
                .collect::<Vec<_>>()
                .join(" "),
        ));
    }
    let mut summary = vec![String::new()];
    for (split, s) in by_split
        .iter()
        .chain(std::iter::once((&"all".to_string(), &total)))
    {
        summary.push(format!(
            "{split}: precision {:.1}% ({}/{}), recall {:.1}% ({}/{})",
            100.0 * s.precision(),
            s.hits,
            s.hits + s.wrong,
            100.0 * s.recall(),
            s.found,
            s.required
        ));
    }
    summary.push(format!(
        "setup: precision {:.1}% ({}/{}), recall {:.1}% ({}/{})",
        100.0 * setup_total.precision(),
        setup_total.hits,
        setup_total.hits + setup_total.wrong,
        100.0 * setup_total.recall(),
        setup_total.found,
        setup_total.required
    ));
    summary.push(format!(
        "gates that publish or never terminate: {}",
        violations.len()
    ));
    let report = format!("{}\n{}\n", table.join("\n"), summary.join("\n"));
    eprintln!("{report}");
    if let Some(path) = std::env::var_os("DETECT_REPORT") {
        std::fs::write(path, &report).expect("write report");
    }
    assert!(violations.is_empty(), "{}", violations.join("\n"));
    assert!(
        total.precision() >= MIN_PRECISION,
        "precision {:.3} is under {MIN_PRECISION}",
        total.precision()
    );
    assert!(
        total.recall() >= MIN_RECALL,
        "recall {:.3} is under {MIN_RECALL}",
        total.recall()
    );
}

#[test]
fn spellings_of_one_command_compare_equal() {
    for (a, b) in [
        ("npm run test", "npm test"),
        ("pnpm run lint", "pnpm lint"),
        ("tox run -e typing", "tox -e typing"),
        ("nox --session lint", "nox -s lint"),
        (
            "cargo fmt --all -- --check",
            "cargo fmt --workspace --check",
        ),
        ("bash scripts/lint.sh", "scripts/lint.sh"),
        ("./scripts/check", "scripts/check"),
        ("python -m tox -e py", "tox -e py"),
        ("make distcheck FLAGS=\"-a -b\"", "make distcheck"),
        ("./configure --enable-werror", "./configure"),
    ] {
        assert_eq!(normal(a), normal(b), "{a} / {b}");
    }
    for (a, b) in [("bun test", "bun run test"), ("npm run lint", "npm lint")] {
        assert_ne!(normal(a), normal(b), "{a} / {b}");
    }
    assert_eq!(never_a_gate("npm run release"), Some("publishes"));
    assert_eq!(never_a_gate("tail -f log"), Some("never terminates"));
    assert_eq!(never_a_gate("cargo test --workspace"), None);
}
