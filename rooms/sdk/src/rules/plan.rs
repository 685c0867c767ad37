//! The built-in intake plan rules, as a pure function over the plan world's types
//! (named only through `super::model`, so the file also compiles natively).
//!
//! A plan is used as parts only when every rule holds. Otherwise the judgement is
//! `split = false` with every reason that applies, in the order below, so that one
//! look shows the person (or the model, asked again) all of them:
//!
//! | reason | the plan breaks it when |
//! |---|---|
//! | `not_split` | the model itself said not to split (its reason is quoted in the problem) |
//! | `splitting_off` | `max-parts` is below 2: this repository never splits |
//! | `one_part` | it has fewer than 2 parts |
//! | `too_many_parts` | it has more parts than `max-parts` (with splitting on) |
//! | `untitled_part` | a part's title is empty or whitespace |
//! | `no_paths` | a part names no paths |
//! | `no_acceptance` | a part's acceptance is empty or whitespace |
//! | `bad_path` | a path is empty, absolute, has a backslash, a `..` segment or an empty one |
//! | `overlapping_paths` | globs of two different parts could match the same path |
//! | `duplicate_titles` | two parts have the same title (trimmed, any case) |
//!
//! Overlap is decided exactly, not by trying sample paths: [`overlap`] searches
//! the product of the two globs' automata for a path both accept (see there).
//! The same glob twice within one part is not an overlap; only parts compete for
//! files. A bad path is reported as such and left out of the overlap check.

use std::collections::VecDeque;
use std::collections::btree_map::{BTreeMap, Entry};

use super::model::*;

/// Every reason code, in the order a judgement lists them.
pub const REASONS: [&str; 10] = [
    "not_split",
    "splitting_off",
    "one_part",
    "too_many_parts",
    "untitled_part",
    "no_paths",
    "no_acceptance",
    "bad_path",
    "overlapping_paths",
    "duplicate_titles",
];

/// One rule: appends a sentence per problem it finds to the list.
type Rule = fn(&PlanInput, &mut Vec<String>);

/// The rules, one per entry of [`REASONS`], in the same order.
const RULES: [Rule; 10] = [
    not_split,
    splitting_off,
    one_part,
    too_many_parts,
    untitled_part,
    no_paths,
    no_acceptance,
    bad_paths,
    overlapping_paths,
    duplicate_titles,
];

/// Judges an intake plan by the built-in rules.
pub fn judge(input: &PlanInput) -> PlanJudgement {
    judge_with(input, |_| None)
}

/// Judges like [`judge`], with one more rule: `extra` returns, for a plan it
/// refuses, a reason code and its problems. Its reason comes after the built-in
/// ones, and any reason at all means the plan does not split.
pub fn judge_with(
    input: &PlanInput,
    extra: impl Fn(&PlanInput) -> Option<(String, Vec<String>)>,
) -> PlanJudgement {
    let mut reasons = Vec::new();
    let mut problems = Vec::new();
    for (code, rule) in REASONS.iter().zip(RULES) {
        let before = problems.len();
        rule(input, &mut problems);
        if problems.len() > before {
            reasons.push(code.to_string());
        }
    }
    if let Some((code, more)) = extra(input) {
        reasons.push(code);
        problems.extend(more);
    }
    PlanJudgement {
        split: reasons.is_empty(),
        reasons,
        problems,
    }
}

fn not_split(input: &PlanInput, problems: &mut Vec<String>) {
    if input.split {
        return;
    }
    let reason = input.reason.trim();
    problems.push(if reason.is_empty() {
        "the intake model kept the request whole and gave no reason".to_string()
    } else {
        format!("the intake model kept the request whole: {reason}")
    });
}

fn splitting_off(input: &PlanInput, problems: &mut Vec<String>) {
    if input.max_parts < 2 {
        problems.push(format!(
            "splitting is off: [intake] max_parts is {}",
            input.max_parts
        ));
    }
}

fn one_part(input: &PlanInput, problems: &mut Vec<String>) {
    let count = input.parts.len();
    if count < 2 {
        problems.push(format!(
            "a split needs at least 2 parts; the plan has {count}"
        ));
    }
}

fn too_many_parts(input: &PlanInput, problems: &mut Vec<String>) {
    let count = input.parts.len();
    // Below 2, splitting is off and `splitting_off` says so; a count over such a
    // maximum says nothing more.
    if input.max_parts >= 2 && count > input.max_parts as usize {
        problems.push(format!(
            "the plan has {count} parts; [intake] max_parts allows {}",
            input.max_parts
        ));
    }
}

fn untitled_part(input: &PlanInput, problems: &mut Vec<String>) {
    for (i, part) in input.parts.iter().enumerate() {
        if part.title.trim().is_empty() {
            problems.push(format!("{} has no title", part_name(i, part)));
        }
    }
}

fn no_paths(input: &PlanInput, problems: &mut Vec<String>) {
    for (i, part) in input.parts.iter().enumerate() {
        if part.paths.is_empty() {
            problems.push(format!(
                "{} names no paths, so nothing keeps it apart from the others",
                part_name(i, part)
            ));
        }
    }
}

fn no_acceptance(input: &PlanInput, problems: &mut Vec<String>) {
    for (i, part) in input.parts.iter().enumerate() {
        if part.acceptance.trim().is_empty() {
            problems.push(format!(
                "{} does not say how to tell it is done (acceptance is empty)",
                part_name(i, part)
            ));
        }
    }
}

fn bad_paths(input: &PlanInput, problems: &mut Vec<String>) {
    for (i, part) in input.parts.iter().enumerate() {
        for path in &part.paths {
            if let Some(why) = bad_path(path) {
                problems.push(format!("{}: the path \"{path}\" {why}", part_name(i, part)));
            }
        }
    }
}

fn overlapping_paths(input: &PlanInput, problems: &mut Vec<String>) {
    let parts = &input.parts;
    for (i, first) in parts.iter().enumerate() {
        for (j, second) in parts.iter().enumerate().skip(i + 1) {
            // One sentence per pair of parts: the first pair of globs that meets.
            let found = good_paths(&first.paths).find_map(|a| {
                good_paths(&second.paths).find_map(|b| overlap(a, b).map(|path| (a, b, path)))
            });
            if let Some((a, b, path)) = found {
                problems.push(format!(
                    "{} and {} could change the same files: \"{a}\" and \"{b}\" both match {path}",
                    part_name(i, first),
                    part_name(j, second)
                ));
            }
        }
    }
}

fn duplicate_titles(input: &PlanInput, problems: &mut Vec<String>) {
    // Title (trimmed, lowercase) -> the parts that carry it, in plan order.
    let mut by_title: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, part) in input.parts.iter().enumerate() {
        let title = part.title.trim();
        if !title.is_empty() {
            by_title.entry(title.to_lowercase()).or_default().push(i);
        }
    }
    let mut groups: Vec<&Vec<usize>> = by_title.values().filter(|g| g.len() > 1).collect();
    groups.sort_by_key(|g| g[0]);
    for group in groups {
        let numbers: Vec<String> = group.iter().map(|i| (i + 1).to_string()).collect();
        let (last, rest) = numbers.split_last().expect("a group has two parts or more");
        problems.push(format!(
            "parts {} and {last} have the same title \"{}\"",
            rest.join(", "),
            input.parts[group[0]].title.trim()
        ));
    }
}

/// `part 2 ("Web client")`, or `part 2` when it has no title: numbered from 1,
/// as a person counts.
fn part_name(index: usize, part: &Part) -> String {
    let title = part.title.trim();
    if title.is_empty() {
        format!("part {}", index + 1)
    } else {
        format!("part {} (\"{title}\")", index + 1)
    }
}

fn good_paths(paths: &[String]) -> impl Iterator<Item = &str> {
    paths
        .iter()
        .map(String::as_str)
        .filter(|p| bad_path(p).is_none())
}

/// Why `path` cannot name files inside the repository, if it cannot.
fn bad_path(path: &str) -> Option<&'static str> {
    if path.trim().is_empty() {
        return Some("is empty");
    }
    if path.starts_with('/') {
        return Some("is absolute; paths are relative to the repository root");
    }
    if path.contains('\\') {
        return Some("has a backslash; paths are separated by `/`");
    }
    let body = path.strip_suffix('/').unwrap_or(path);
    if body.split('/').any(|s| s == "..") {
        return Some("has a `..` segment");
    }
    if body.split('/').any(str::is_empty) {
        return Some("has an empty segment (`//`)");
    }
    None
}

// ---------------------------------------------------------------- globs

/// A path both globs match, if there is one: the first the search meets, with
/// `x` wherever any character would do.
///
/// The language: `*` is any run of characters but `/`, `?` one character but `/`,
/// a whole segment `**` any number of segments (none too), and anything else is
/// itself. A glob ending in `/` is everything under that directory (`dir/` is
/// `dir/**`); a glob with no wildcard is that file, or everything under it when
/// it is a directory (`src/a` is `src/a/**`, which matches `src/a` as well).
/// Paths are `/`-separated, with no empty segment.
///
/// `*` and `?` never match `/` and `**` only ever takes whole segments, so two
/// globs that meet meet segment by segment. The search walks pairs of positions
/// in the two segment lists (plus whether a segment was taken yet, since the
/// empty path is no path); each pair is visited once. A step takes one segment
/// both sides accept: two plain segments must share a non-empty string, which a
/// second search of the same kind decides over character positions, and is
/// remembered per pair of segments. So the answer is exact, and the work is the
/// product of the globs' lengths.
pub fn overlap(a: &str, b: &str) -> Option<String> {
    let (a, b) = (segments(a), segments(b));
    let mut meets: BTreeMap<(usize, usize), Option<String>> = BTreeMap::new();
    let taken = search((0, 0, false), |(i, j, took), out| {
        if a.get(i) == Some(&Segment::Deep) {
            out.push(((i + 1, j, took), None));
        }
        if b.get(j) == Some(&Segment::Deep) {
            out.push(((i, j + 1, took), None));
        }
        let (Some(x), Some(y)) = (a.get(i), b.get(j)) else {
            return i == a.len() && j == b.len() && took;
        };
        let meet = meets
            .entry((i, j))
            .or_insert_with(|| meet(x.tokens(), y.tokens()));
        if let Some(segment) = meet {
            // `**` stays where it is: it may take more segments after this one.
            let next = (
                if *x == Segment::Deep { i } else { i + 1 },
                if *y == Segment::Deep { j } else { j + 1 },
                true,
            );
            out.push((next, Some(segment.clone())));
        }
        false
    })?;
    Some(taken.join("/"))
}

/// One `/`-separated piece of a glob.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment {
    /// `**`: any number of whole segments.
    Deep,
    /// Characters and wildcards within one segment.
    Plain(Vec<Token>),
}

/// A `**` segment takes any one segment, as `*` would.
const ANY_SEGMENT: &[Token] = &[Token::Star];

impl Segment {
    fn tokens(&self) -> &[Token] {
        match self {
            Self::Deep => ANY_SEGMENT,
            Self::Plain(tokens) => tokens,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token {
    Char(char),
    /// `*`
    Star,
    /// `?`
    One,
}

fn segments(glob: &str) -> Vec<Segment> {
    let (body, under) = match glob.strip_suffix('/') {
        Some(dir) => (dir, true),
        None => (glob, !glob.contains(['*', '?'])),
    };
    let mut out: Vec<Segment> = body.split('/').map(segment).collect();
    if under {
        out.push(Segment::Deep);
    }
    out
}

fn segment(text: &str) -> Segment {
    if text == "**" {
        return Segment::Deep;
    }
    let mut tokens = Vec::with_capacity(text.len());
    for c in text.chars() {
        let token = match c {
            '*' => Token::Star,
            '?' => Token::One,
            c => Token::Char(c),
        };
        // `**` inside a segment is one `*`.
        if !(token == Token::Star && tokens.last() == Some(&Token::Star)) {
            tokens.push(token);
        }
    }
    Segment::Plain(tokens)
}

/// A non-empty string (with no `/`) both segment globs match, if there is one.
fn meet(a: &[Token], b: &[Token]) -> Option<String> {
    // What one character step at a position takes, and where it leads.
    fn step(tokens: &[Token], at: usize) -> Option<(Option<char>, usize)> {
        match tokens.get(at)? {
            Token::Star => Some((None, at)),
            Token::One => Some((None, at + 1)),
            Token::Char(c) => Some((Some(*c), at + 1)),
        }
    }
    let chars = search((0, 0, false), |(p, q, took), out| {
        if a.get(p) == Some(&Token::Star) {
            out.push(((p + 1, q, took), None));
        }
        if b.get(q) == Some(&Token::Star) {
            out.push(((p, q + 1, took), None));
        }
        let (Some((x, p2)), Some((y, q2))) = (step(a, p), step(b, q)) else {
            return p == a.len() && q == b.len() && took;
        };
        let c = match (x, y) {
            (Some(x), Some(y)) => (x == y).then_some(x),
            (Some(c), None) | (None, Some(c)) => Some(c),
            (None, None) => Some('x'),
        };
        if let Some(c) = c {
            out.push(((p2, q2, true), Some(c)));
        }
        false
    })?;
    Some(chars.into_iter().collect())
}

/// Breadth-first search of a product automaton from `start`, visiting each state
/// once: `visit` says whether a state accepts, and pushes its moves (each with
/// the label it reads, or `None` for a move that reads nothing). Returns the
/// labels read on the way to the first accepting state found.
fn search<S: Copy + Ord, L: Clone>(
    start: S,
    mut visit: impl FnMut(S, &mut Vec<(S, Option<L>)>) -> bool,
) -> Option<Vec<L>> {
    // State -> the state it was reached from and the label read on the way.
    let mut came_from: BTreeMap<S, Option<(S, Option<L>)>> = BTreeMap::new();
    came_from.insert(start, None);
    let mut queue = VecDeque::from([start]);
    let mut moves = Vec::new();
    while let Some(state) = queue.pop_front() {
        moves.clear();
        if visit(state, &mut moves) {
            let mut labels = Vec::new();
            let mut at = state;
            while let Some(Some((from, label))) = came_from.get(&at) {
                labels.extend(label.clone());
                at = *from;
            }
            labels.reverse();
            return Some(labels);
        }
        for (next, label) in moves.drain(..) {
            if let Entry::Vacant(slot) = came_from.entry(next) {
                slot.insert(Some((state, label)));
                queue.push_back(next);
            }
        }
    }
    None
}

/// The rules' table, shared: the SDK runs it natively, and hall's tests include
/// this file to run the same rows through the built-in room as a component.
#[cfg(test)]
pub(crate) mod tests {
    use super::super::model::{Part, PlanInput, PlanJudgement};
    use super::{REASONS, judge, overlap};

    pub(crate) fn part(title: &str, paths: &[&str]) -> Part {
        Part {
            title: title.into(),
            paths: paths.iter().map(|p| p.to_string()).collect(),
            acceptance: format!("{title} has tests that pass"),
        }
    }

    pub(crate) fn plan(parts: Vec<Part>) -> PlanInput {
        PlanInput {
            request: "Add a login page and the API behind it".into(),
            split: true,
            reason: "the page and the API touch different files".into(),
            parts,
            max_parts: 4,
        }
    }

    /// A plan every rule lets through: two titled parts on disjoint directories.
    pub(crate) fn two() -> PlanInput {
        plan(vec![part("API", &["api/**"]), part("Web", &["web/**"])])
    }

    /// Two parts whose only paths are `a` and `b`.
    pub(crate) fn globs(a: &str, b: &str) -> PlanInput {
        plan(vec![part("API", &[a]), part("Web", &[b])])
    }

    pub(crate) fn with<T>(mut value: T, f: impl FnOnce(&mut T)) -> T {
        f(&mut value);
        value
    }

    fn three(max_parts: u32) -> PlanInput {
        with(
            plan(vec![
                part("API", &["api/"]),
                part("Web", &["web/"]),
                part("Docs", &["docs/"]),
            ]),
            |p| p.max_parts = max_parts,
        )
    }

    /// Per rule: a plan that breaks only that rule, and its twin, which differs
    /// only in the fact the rule reads and breaks nothing. A rule that does
    /// nothing fails the first; one that fires on anything fails the second.
    pub(crate) fn twins() -> Vec<(&'static str, PlanInput, PlanInput)> {
        vec![
            (
                "not_split",
                with(two(), |p| p.split = false),
                with(two(), |p| p.split = true),
            ),
            (
                "splitting_off",
                with(two(), |p| p.max_parts = 1),
                with(two(), |p| p.max_parts = 2),
            ),
            (
                "splitting_off",
                with(two(), |p| p.max_parts = 0),
                with(two(), |p| p.max_parts = 2),
            ),
            ("one_part", plan(vec![part("API", &["api/**"])]), two()),
            ("one_part", plan(Vec::new()), two()),
            ("too_many_parts", three(2), three(3)),
            (
                "untitled_part",
                with(two(), |p| p.parts[1].title = " \t".into()),
                with(two(), |p| p.parts[1].title = "Web".into()),
            ),
            (
                "no_paths",
                with(two(), |p| p.parts[1].paths.clear()),
                with(two(), |p| p.parts[1].paths = vec!["web/**".into()]),
            ),
            (
                "no_acceptance",
                with(two(), |p| p.parts[0].acceptance = "  ".into()),
                with(two(), |p| p.parts[0].acceptance = "login works".into()),
            ),
            (
                "bad_path",
                globs("api/**", "/web/x"),
                globs("api/**", "web/x"),
            ),
            (
                "bad_path",
                globs("api/**", "web/../api/x"),
                globs("api/**", "web/api/x"),
            ),
            // `*.rs` would match `web\x.rs`, as one segment: a bad path is no
            // overlap, only bad.
            (
                "bad_path",
                globs("*.rs", "web\\x.rs"),
                globs("*.rs", "web/x.rs"),
            ),
            ("bad_path", globs("api/**", ""), globs("api/**", "web")),
            ("bad_path", globs("api/**", "  "), globs("api/**", "web")),
            (
                "bad_path",
                globs("api/**", "web//x"),
                globs("api/**", "web/x"),
            ),
            (
                "overlapping_paths",
                plan(vec![
                    part("API", &["api/**", "shared/x.rs"]),
                    part("Web", &["web/**", "shared/x.rs"]),
                ]),
                // The same path twice in one part is no overlap.
                plan(vec![
                    part("API", &["api/**", "shared/x.rs", "shared/x.rs"]),
                    part("Web", &["web/**"]),
                ]),
            ),
            (
                "overlapping_paths",
                globs("src/*.rs", "src/lib.rs"),
                globs("src/*.rs", "src/a/lib.rs"),
            ),
            (
                "overlapping_paths",
                globs("a?c", "abc"),
                globs("a?c", "a/c"),
            ),
            ("overlapping_paths", globs("a/", "a/b"), globs("b/", "a/b")),
            (
                "duplicate_titles",
                with(two(), |p| p.parts[1].title = "API".into()),
                with(two(), |p| p.parts[1].title = "Web".into()),
            ),
            (
                "duplicate_titles",
                with(two(), |p| p.parts[1].title = " api ".into()),
                with(two(), |p| p.parts[1].title = "apis".into()),
            ),
        ]
    }

    /// Holds one twin pair's judgements to the table's promise.
    pub(crate) fn assert_twins(reason: &str, broken: &PlanJudgement, twin: &PlanJudgement) {
        assert!(!broken.split, "{reason}: {:?}", broken.reasons);
        assert_eq!(broken.reasons, [reason], "{reason}: {:?}", broken.problems);
        assert!(!broken.problems.is_empty(), "{reason}");
        assert!(twin.split, "{reason}'s twin: {:?}", twin.problems);
        assert!(
            twin.reasons.is_empty(),
            "{reason}'s twin: {:?}",
            twin.reasons
        );
        assert!(
            twin.problems.is_empty(),
            "{reason}'s twin: {:?}",
            twin.problems
        );
    }

    #[test]
    fn every_rule_tells_its_twins_apart() {
        let twins = twins();
        for (reason, broken, twin) in &twins {
            assert_twins(reason, &judge(broken), &judge(twin));
        }
        for reason in REASONS {
            assert!(twins.iter().any(|t| t.0 == reason), "{reason} has no twins");
        }
    }

    /// Whether `glob` matches `path`, by backtracking straight from the
    /// definition: a second reading of the language to hold [`overlap`] to.
    fn matches(glob: &str, path: &str) -> bool {
        fn plain(glob: &[char], text: &[char]) -> bool {
            match glob.split_first() {
                None => text.is_empty(),
                Some(('*', rest)) => (0..=text.len()).any(|n| plain(rest, &text[n..])),
                Some(('?', rest)) => !text.is_empty() && plain(rest, &text[1..]),
                Some((c, rest)) => text.first() == Some(c) && plain(rest, &text[1..]),
            }
        }
        fn walk(glob: &[&str], path: &[&str]) -> bool {
            match glob.split_first() {
                None => path.is_empty(),
                Some((&"**", rest)) => (0..=path.len()).any(|n| walk(rest, &path[n..])),
                Some((segment, rest)) => path.split_first().is_some_and(|(first, tail)| {
                    let g: Vec<char> = segment.chars().collect();
                    let t: Vec<char> = first.chars().collect();
                    plain(&g, &t) && walk(rest, tail)
                }),
            }
        }
        if path.is_empty() || path.split('/').any(str::is_empty) {
            return false;
        }
        let deep = if let Some(dir) = glob.strip_suffix('/') {
            format!("{dir}/**")
        } else if !glob.contains(['*', '?']) {
            format!("{glob}/**")
        } else {
            glob.to_string()
        };
        let glob: Vec<&str> = deep.split('/').collect();
        let path: Vec<&str> = path.split('/').collect();
        walk(&glob, &path)
    }

    #[test]
    fn overlap_table() {
        let cases = [
            ("src/a/**", "src/a/x.rs", Some("src/a/x.rs")),
            ("src/*.rs", "src/lib.rs", Some("src/lib.rs")),
            ("src/*.rs", "src/a/lib.rs", None),
            ("**/*.md", "docs/x.md", Some("docs/x.md")),
            ("web/**", "api/**", None),
            ("a/", "a/b", Some("a/b")),
            ("a?c", "abc", Some("abc")),
            ("a?c", "a/c", None),
            ("**", "some/deep/file.txt", Some("some/deep/file.txt")),
            ("**", "*.toml", Some(".toml")),
            ("src/a", "src/a/b.rs", Some("src/a/b.rs")),
            ("src/a", "src/ab", None),
            ("src/*", "src/a/b.rs", None),
            ("src/", "src", Some("src")),
            ("a/**/b", "a/b", Some("a/b")),
            ("a/**/b", "a/x/y/b", Some("a/x/y/b")),
            ("a/**/b", "a/*/c", None),
            // A path with no wildcard is a directory too.
            ("a/**/b", "a/x/c", Some("a/x/c/b")),
            ("*a", "b*", Some("ba")),
            ("*a", "*b", None),
            ("a*", "?", Some("a")),
            ("??", "a", None),
            ("*.rs", "*.md", None),
            ("docs/*.md", "docs/**/x.md", Some("docs/x.md")),
            ("a/*/c/", "a/b/*", Some("a/b/c")),
            ("a//b", "a/b", None),
        ];
        for (a, b, want) in cases {
            let got = overlap(a, b);
            assert_eq!(got.as_deref(), want, "{a} vs {b}");
            assert_eq!(overlap(b, a).is_some(), want.is_some(), "{b} vs {a}");
            if let Some(path) = &got {
                assert!(matches(a, path) && matches(b, path), "{a} vs {b}: {path}");
            }
        }
    }

    /// Every pair of small globs: a path the search returns matches both, and when
    /// it finds none, no path of a small universe matches both.
    #[test]
    fn overlap_agrees_with_matching_on_every_small_glob() {
        let pieces = ["a", "b", "*", "?", "a*", "*a", "?b", "ab", "**"];
        let mut globs: Vec<String> = Vec::new();
        for x in pieces {
            globs.push(x.to_string());
            globs.push(format!("{x}/"));
            for y in pieces {
                globs.push(format!("{x}/{y}"));
                globs.push(format!("{x}/{y}/"));
            }
        }
        let letters = ["a", "b", "x"];
        let mut names: Vec<String> = letters.iter().map(|s| s.to_string()).collect();
        for x in letters {
            for y in letters {
                names.push(format!("{x}{y}"));
            }
        }
        // Every path of one to three segments over those names.
        let mut level = names.clone();
        let mut paths = names.clone();
        for _ in 0..2 {
            level = level
                .iter()
                .flat_map(|p| names.iter().map(move |n| format!("{p}/{n}")))
                .collect();
            paths.extend(level.iter().cloned());
        }
        let matched: Vec<Vec<bool>> = globs
            .iter()
            .map(|g| paths.iter().map(|p| matches(g, p)).collect())
            .collect();
        for (i, a) in globs.iter().enumerate() {
            for (j, b) in globs.iter().enumerate() {
                match overlap(a, b) {
                    Some(path) => {
                        assert!(matches(a, &path) && matches(b, &path), "{a} vs {b}: {path}")
                    }
                    None => {
                        let common = (0..paths.len()).find(|&k| matched[i][k] && matched[j][k]);
                        assert!(
                            common.is_none(),
                            "{a} vs {b}: both match {}",
                            paths[common.unwrap_or(0)]
                        );
                    }
                }
            }
        }
    }
}
