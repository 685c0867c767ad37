//! Unit tests, the labelled corpus, and fuzzing for the gate analysis.

use std::time::Instant;

use proptest::prelude::*;
use serde::Deserialize;

use super::*;

const CORPUS: &str = include_str!("../../../tests/fixtures/gate/commands.jsonl");
const CONTEXT: &str = include_str!("../../../tests/fixtures/gate/context.json");

#[derive(Deserialize)]
struct Entry {
    cmd: String,
    expect: String,
    gate: Option<String>,
    why: String,
    #[serde(default)]
    r#where: Option<String>,
    #[serde(default)]
    actor: Option<String>,
}

#[derive(Deserialize)]
struct Context {
    aliases: HashMap<String, String>,
    scripts: HashMap<String, String>,
    ship: Option<String>,
    push_allow: Vec<String>,
    free: Vec<String>,
}

fn load_context() -> (StaticContext, Vec<String>) {
    let c: Context = serde_json::from_str(CONTEXT).expect("context.json parses");
    let ctx = StaticContext {
        aliases: c.aliases,
        scripts: c.scripts,
        ship: c.ship,
        push_allow: c.push_allow,
        env: HashMap::new(),
    };
    (ctx, c.free)
}

/// `[capture] free` matching as the corpus assumes it: `dir/` is a prefix, `*.ext` a
/// suffix, anything else an exact path.
fn is_free(path: &str, free: &[String]) -> bool {
    let path = path.trim_start_matches("./");
    free.iter().any(|f| {
        if let Some(ext) = f.strip_prefix('*') {
            path.ends_with(ext)
        } else if f.ends_with('/') {
            path.starts_with(f.as_str()) || path == f.trim_end_matches('/')
        } else {
            path == f
        }
    })
}

/// A world for the corpus: nothing is hallmarked, `.git`, the user's git config and a
/// bare `origin` are protected, and places other than here are other repositories
/// (`../repo` is the main checkout).
struct CorpusWorld {
    free: Vec<String>,
}

impl World for CorpusWorld {
    fn base(&self) -> &str {
        "main"
    }
    fn place(&self, place: &Place) -> PlaceKind {
        if place.dynamic {
            return PlaceKind::Unknown;
        }
        if place.is_here() {
            return PlaceKind::Own;
        }
        let d = place
            .git_dir
            .clone()
            .or(place.dir.clone())
            .unwrap_or_default();
        if d.contains("origin") {
            PlaceKind::Protected("origin".into())
        } else if d == "../repo" || d == "../main" || d == ".git" {
            PlaceKind::MainCheckout
        } else if d == "../app" || d == "../other" {
            PlaceKind::OtherWorktree
        } else {
            PlaceKind::Elsewhere
        }
    }
    fn protected(&self, place: &Place, path: &str, access: Access) -> Option<String> {
        let full = match &place.dir {
            Some(d) => format!("{d}/{path}"),
            None => path.to_owned(),
        };
        if full.contains("signing_ed25519") {
            return Some("the signing key".into());
        }
        if access == Access::Read {
            return None;
        }
        let protected = full.starts_with(".git")
            || full.contains("/.git")
            || full.contains("origin.git")
            || full.contains(".gitconfig")
            || full.contains(".bashrc")
            || full.contains(".claude")
            || full.contains(".mcp.json")
            || full.contains(".bash_aliases")
            || full.starts_with("~/bin");
        protected.then(|| "a protected path".into())
    }
    fn protected_tree(&self, place: &Place, src: &str, dest: &str) -> Option<String> {
        // The corpus's `evil` directories hold a `.claude/settings.json`.
        let lands = |p: &str| self.protected(place, p, Access::Write);
        lands(dest).or_else(|| {
            src.contains("evil")
                .then(|| "it would create .claude/settings.json".into())
        })
    }
    fn open_dir(&self, place: &Place, dir: &str) -> Option<String> {
        let outside =
            dir.starts_with("/tmp/") || place.dir.as_deref().is_some_and(|d| d.starts_with("/tmp"));
        (!outside).then(|| "it is in the checkout".into())
    }
    fn checkout_writes(&self, _: &Place, rev: &str) -> Result<Option<String>, String> {
        match rev {
            r if r.contains("evil") => Ok(Some("makes h a symbolic link into .git/hooks".into())),
            r if r.contains("unmade") => Err("it doesn't name a revision yet".into()),
            _ => Ok(None),
        }
    }
    fn verify_revs(&self, _: &Place, revs: &[String]) -> Result<(), String> {
        Err(format!("{} has no hallmark", revs.join(", ")))
    }
    fn verify_pr(&self, _: &Place, _: Option<&str>) -> Result<(), String> {
        Err("its head has no hallmark".into())
    }
    fn commit_is_free(&self, effect: &Effect) -> bool {
        let Effect::Commit {
            pathspecs,
            all,
            paths_unknown,
            ..
        } = effect
        else {
            return false;
        };
        !all && !paths_unknown
            && !pathspecs.is_empty()
            && pathspecs.iter().all(|p| is_free(p, &self.free))
    }
}

/// The gates that deny `a`, by name; the strict guard's "can't follow" counts as the
/// push gate, as it always has in the corpus.
fn denying_gates(
    a: &Analysis,
    mode: GuardMode,
    in_item: bool,
    actor: Option<&str>,
    free: &[String],
) -> Vec<&'static str> {
    let world = CorpusWorld {
        free: free.to_vec(),
    };
    let session = Session {
        mode,
        actor,
        in_item,
    };
    let mut out: Vec<&'static str> = judge(&a.findings, session, &world)
        .iter()
        .map(|d| match d.gate {
            Gate::Unreadable => "push",
            g => g.name(),
        })
        .collect();
    out.dedup();
    out
}

fn ctx() -> StaticContext {
    load_context().0
}

/// The corpus world's judgement of `a` in strict mode, in an item's worktree.
fn strictly(a: &Analysis) -> Vec<Denial> {
    let world = CorpusWorld { free: vec![] };
    let session = Session {
        mode: GuardMode::Strict,
        actor: None,
        in_item: true,
    };
    judge(&a.findings, session, &world)
}

fn effects(cmd: &str) -> Vec<Effect> {
    analyze(cmd, &ctx())
        .findings
        .into_iter()
        .map(|f| f.effect)
        .collect()
}

fn pushes(cmd: &str) -> bool {
    let a = analyze(cmd, &ctx());
    denying_gates(&a, GuardMode::Parse, true, None, &[]).contains(&"push")
}

#[test]
fn corpus_has_no_wrong_answers() {
    let (ctx, free) = load_context();
    let mut wrong = Vec::new();
    let mut count = 0;
    for (n, line) in CORPUS.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        count += 1;
        let e: Entry = serde_json::from_str(line).expect("corpus line parses");
        let in_wt = e.r#where.as_deref() != Some("main");
        let a = analyze(&e.cmd, &ctx);
        let strict = denying_gates(&a, GuardMode::Strict, in_wt, e.actor.as_deref(), &free);
        let parse = denying_gates(&a, GuardMode::Parse, in_wt, e.actor.as_deref(), &free);
        let gate = e.gate.as_deref().unwrap_or("");
        let ok = match e.expect.as_str() {
            "deny" => strict.contains(&gate) && parse.contains(&gate),
            "deny-strict" => strict.contains(&gate) && parse.is_empty(),
            "allow" => strict.is_empty() && parse.is_empty(),
            other => panic!("line {}: unknown expectation {other}", n + 1),
        };
        if !ok {
            wrong.push(format!(
                "line {}: {:?} expected {} {} ({}); strict={strict:?} parse={parse:?}\n  {:?}",
                n + 1,
                e.cmd,
                e.expect,
                gate,
                e.why,
                a.findings
            ));
        }
    }
    assert!(count >= 150, "corpus has only {count} entries");
    assert!(
        wrong.is_empty(),
        "{} wrong answers:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

#[test]
fn commit_reports_pathspecs() {
    let e = effects("git commit -m 'x y' -- docs/a.md src/b.rs");
    assert_eq!(
        e,
        vec![Effect::Commit {
            pathspecs: vec!["docs/a.md".into(), "src/b.rs".into()],
            all: false,
            paths_unknown: false,
            place: Place::default(),
        }]
    );
    let e = effects("cd ../app && git commit -qam msg");
    assert_eq!(
        e,
        vec![Effect::Commit {
            pathspecs: vec![],
            all: true,
            paths_unknown: false,
            place: Place {
                dir: Some("../app".into()),
                ..Place::default()
            },
        }]
    );
}

#[test]
fn heredoc_commit_message_is_one_literal_argument() {
    let cmd = "git commit -m \"$(cat <<'EOF'\nfix: (a) b\n\nIt's git push\nEOF\n)\" -- a.rs";
    assert_eq!(
        effects(cmd),
        vec![Effect::Commit {
            pathspecs: vec!["a.rs".into()],
            all: false,
            paths_unknown: false,
            place: Place::default(),
        }]
    );
}

#[test]
fn finding_names_the_command_and_its_origin() {
    let a = analyze("cargo test && bash -c 'git push origin main'", &ctx());
    assert_eq!(a.findings.len(), 1);
    assert_eq!(a.findings[0].snippet, "git push origin main");
    assert_eq!(
        a.findings[0].within.as_deref(),
        Some("bash -c git push origin main")
    );
    let d = strictly(&a);
    let reason = d.first().map(|t| t.reason.clone()).unwrap_or_default();
    assert!(reason.contains("`git push origin main`"), "{reason}");
    assert!(
        reason.contains("base branch"),
        "pushing to main names the base: {reason}"
    );
}

#[test]
fn strict_findings_count_everywhere_but_only_in_strict_mode() {
    let a = analyze("git frobnicate", &ctx());
    assert_eq!(
        denying_gates(&a, GuardMode::Strict, true, None, &[]),
        ["push"]
    );
    assert_eq!(
        denying_gates(&a, GuardMode::Strict, false, None, &[]),
        ["push"]
    );
    assert!(denying_gates(&a, GuardMode::Parse, true, None, &[]).is_empty());
}

#[test]
fn definite_push_outranks_unfollowable() {
    let a = analyze("git frobnicate; git push", &ctx());
    let d = strictly(&a);
    assert!(matches!(d[0].finding.effect, Effect::Push { .. }), "{d:?}");
}

#[test]
fn note_gate_ignores_the_command_text_actor() {
    let a = analyze("HALL_ACTOR=shipper git notes add -m x", &ctx());
    assert!(denying_gates(&a, GuardMode::Parse, true, None, &[]).contains(&"note"));
    assert!(!denying_gates(&a, GuardMode::Parse, true, Some("shipper"), &[]).contains(&"note"));
}

#[test]
fn alias_loops_end() {
    let mut c = ctx();
    c.aliases.insert("a".into(), "b".into());
    c.aliases.insert("b".into(), "a".into());
    let a = analyze("git a", &c);
    assert!(
        a.findings
            .iter()
            .any(|f| matches!(f.effect, Effect::Unfollowable { .. }))
    );
    c.aliases.insert("s".into(), "!git s".into());
    let a = analyze("git s", &c);
    assert!(!a.findings.is_empty());
}

#[test]
fn deep_nesting_is_bounded() {
    let mut cmd = "git push".to_owned();
    for _ in 0..6 {
        cmd = format!("bash -c {}", super::shell::quote(&cmd));
    }
    assert!(pushes(&cmd), "nested shells must still deny");
    let evals = format!("{}git push", "eval ".repeat(60));
    assert!(pushes(&evals), "deep nesting must still deny");
    let parens = format!("{}git push{}", "(".repeat(5000), ")".repeat(5000));
    assert!(pushes(&parens));
    let subst = format!("{}git push{}", "$(".repeat(3000), ")".repeat(3000));
    let _ = analyze(&subst, &ctx());
}

#[test]
fn huge_input_is_scanned_not_parsed() {
    let cmd = format!("{}; git push", "echo x; ".repeat(20_000));
    assert!(cmd.len() > MAX_COMMAND_BYTES);
    assert!(pushes(&cmd));
}

#[test]
fn push_allow_matches_word_prefixes() {
    let mut c = ctx();
    c.push_allow = vec!["make release".into()];
    let a = analyze("make release VERSION=1", &c);
    assert!(a.is_empty());
    // Words, not characters: `make release` doesn't cover `make release-notes`.
    let a = analyze("make release-notes", &c);
    assert!(!a.is_empty());
    let a = analyze("make push", &c);
    assert!(!a.is_empty());
}

#[test]
fn ship_template_placeholders_end_the_match() {
    let mut c = ctx();
    c.ship = Some("tool ship --pr {branch} && other".into());
    assert!(
        analyze("tool ship --pr x", &c)
            .findings
            .iter()
            .any(|f| matches!(f.effect, Effect::ShipCommand { .. }))
    );
    assert!(analyze("tool status", &c).is_empty());
}

/// Reports what a typical command costs; the hook runs this on every Bash call.
#[test]
fn typical_command_takes_microseconds() {
    let c = ctx();
    let cmds = [
        "cargo test --all",
        "git status",
        "git add -A && git commit -m \"$(cat <<'EOF'\nfix: thing\n\nbody\nEOF\n)\"",
        "cd host && cargo clippy --all-targets -- -D warnings 2>&1 | tail -20",
        "git push -u origin HEAD",
    ];
    for cmd in cmds {
        let _ = analyze(cmd, &c);
    }
    let rounds = 200;
    let start = Instant::now();
    for _ in 0..rounds {
        for cmd in cmds {
            std::hint::black_box(analyze(std::hint::black_box(cmd), &c));
        }
    }
    let per = start.elapsed() / (rounds * cmds.len() as u32);
    eprintln!("gate: analyze takes {per:?} per typical command");
    // Generous so debug builds on a busy machine pass; release is far below.
    assert!(per.as_millis() < 20, "analyze took {per:?}");
}

#[test]
fn truncated_options_do_not_panic() {
    for cmd in [
        "xargs -n",
        "xargs -I",
        "find . -exec",
        "find -exec",
        "gh api -é",
        "gh api -Xé",
        "timeout",
        "timeout -s",
        "sudo -u",
        "env -u",
        "env -S",
        "git -C",
        "git -c",
        "git --config-env",
        "nix develop --command",
        "bash -c",
        "bash -o",
        "git rebase -x",
        "git notes --ref",
        "git update-ref -m",
        "git commit -m",
        "gh pr",
        "gh api",
        "git fetch --refmap",
        "git config",
        "watch -n",
        "flock",
        "trap",
        "eval",
        "su -c",
        "git submodule foreach",
        "git bisect run",
        "direnv exec",
        "nice -n",
        "alias x",
        "alias x=y; x; x",
        "alias l='l -a'; l",
    ] {
        let a = analyze(cmd, &ctx());
        let _ = denying_gates(&a, GuardMode::Strict, true, None, &[]);
    }
}

fn shellish() -> impl Strategy<Value = String> {
    let atoms = prop::sample::select(vec![
        "git",
        "push",
        "gh",
        "pr",
        "create",
        "notes",
        "add",
        "-c",
        "alias.p=push",
        "p",
        "sh",
        "bash",
        "-c",
        "eval",
        "env",
        "-S",
        "xargs",
        "'",
        "\"",
        "$(",
        ")",
        "`",
        "{",
        "}",
        "(",
        ";",
        "&&",
        "||",
        "|",
        "<<",
        "EOF",
        "\n",
        "$X",
        "${X:-$(y)}",
        "\\",
        " ",
        "=",
        "X=1",
        "$'\\x41'",
        "<<<",
        ">",
        "refs/notes/*:refs/notes/*",
        "fetch",
        "commit",
        "-m",
        "!",
        "if",
        "then",
        "fi",
        "for",
        "do",
        "done",
        "case",
        "in",
        "esac",
        ";;",
        "f()",
        "[[",
        "]]",
        "$((",
        "))",
        "#",
        "~",
        "*",
        "&",
        "exec",
        "sudo",
        "timeout",
        "1",
        "-x",
        "rebase",
    ]);
    prop::collection::vec(atoms, 0..40).prop_map(|v| v.join(" "))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn shellish_input_never_panics(s in shellish()) {
        let a = analyze(&s, &ctx());
        let _ = denying_gates(&a, GuardMode::Strict, true, None, &[]);
        let _ = denying_gates(&a, GuardMode::Parse, false, Some("assayer"), &[]);
    }

    #[test]
    fn arbitrary_input_never_panics(s in "\\PC{0,300}") {
        let a = analyze(&s, &ctx());
        let _ = denying_gates(&a, GuardMode::Strict, true, None, &[]);
    }

    #[test]
    fn arbitrary_bytes_never_panic(b in prop::collection::vec(any::<u8>(), 0..200)) {
        let s = String::from_utf8_lossy(&b);
        let _ = analyze(&s, &ctx());
    }
}
