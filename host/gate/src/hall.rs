//! `hall` itself: the verbs that are a person's, however the command spells them.
//!
//! A verdict, a retry, an answer, dismissing the inbox, granting budget, the settings,
//! the web app and its tokens, the daemon, installing the plugin and settling the
//! Library are a person's calls: each records `actor: you` or changes what the gates
//! read. No session may run them, so they are found the way every other effect is,
//! after quote removal and through wrappers, shells, `eval`, scripts and variables
//! (`env -u CLAUDECODE hall verd''ict`, `h=hall; $h retry`). A call whose verb is
//! computed is refused by the strict guard, and so is a person's verb named in code
//! handed to an interpreter (`subprocess.run(["hall", "retry"])`).
//!
//! The binary refuses the same verbs to agents on its own; this is the hook's layer,
//! which must hold without it.

use super::Effect;
use super::classify::basename;
use super::shell::{Stdin, Walker};
use super::words::Arg;

/// What a `hall` call is, for the gates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HallKind {
    /// A person's verb: refused to every session.
    Person,
    /// Decides the item's fate (`ready`, `drop`, `merge`, a follow-up): refused to the
    /// fixer, whose work is the findings.
    Fate,
    /// The verb or an option that matters is computed at run time.
    Unknown,
}

/// Variables that change who `hall` acts as, or which keys, registry and clock it uses.
const IDENTITY_VARS: &[&str] = &[
    "HALL_ACTOR",
    "HALL_HOLDER",
    "HALL_CONFIG_DIR",
    "HALL_DATA_DIR",
    "HALL_CACHE_DIR",
    "HALL_NOW",
];

/// Whether a command word names the `hall` binary (`hall`, `/usr/local/bin/hall`,
/// `./target/debug/hall`, `hall.exe`).
pub(super) fn is_hall(word: &str) -> bool {
    let base = basename(word.rsplit('\\').next().unwrap_or(word));
    base == "hall" || base == "hall.exe"
}

/// What `hall ARGS…` is, with the verb as the reason shows it; `None` for the verbs a
/// session runs (status, log, propose-ready, ask, fixed…).
pub(super) fn judge_call(args: &[Arg]) -> Option<(HallKind, String)> {
    let mut words = args
        .iter()
        .filter(|a| a.dynamic || !a.text.starts_with('-'));
    let verb = words.next()?;
    if verb.dynamic {
        // `hall $(echo verdict)`: a verb that shows in the computed text counts.
        let shown = named_in_code(&format!("hall {}", verb.text));
        return Some(match shown {
            Some(v) => (HallKind::Person, v),
            None => (HallKind::Unknown, verb.text.clone()),
        });
    }
    let sub = words.next();
    let flag = |names: &[&str]| {
        args.iter().any(|a| {
            let t = a.text.split('=').next().unwrap_or("");
            names.contains(&t)
        })
    };
    let computed_flag = args.iter().any(|a| a.dynamic);
    let sub_text = sub.map(|s| s.text.as_str()).unwrap_or("");
    let v = verb.text.as_str();
    let person = |what: String| Some((HallKind::Person, what));
    match v {
        "verdict" | "retry" | "answer" | "setup" | "web" | "init" => person(match sub {
            Some(s) if v == "web" || v == "setup" => format!("{v} {}", s.text),
            _ => v.to_owned(),
        }),
        "inbox" if flag(&["--dismiss", "--clear"]) => person(format!(
            "inbox {}",
            if flag(&["--clear"]) {
                "--clear"
            } else {
                "--dismiss"
            }
        )),
        "budget" if flag(&["--set", "--grant"]) => person(format!(
            "budget {}",
            if flag(&["--set"]) { "--set" } else { "--grant" }
        )),
        "config" if sub.is_some_and(|s| s.dynamic) => Some((HallKind::Unknown, "config".into())),
        "config" if sub_text == "set" => person("config set".into()),
        "daemon" if sub.is_some_and(|s| s.dynamic) => Some((HallKind::Unknown, "daemon".into())),
        "daemon" if sub.is_some() && sub_text != "status" => person(format!("daemon {sub_text}")),
        "claude" if flag(&["--unconfined"]) => person("claude --unconfined".into()),
        "library" if sub.is_some_and(|s| s.dynamic) => Some((HallKind::Unknown, "library".into())),
        "library" if matches!(sub_text, "retire" | "import" | "distill") => {
            person(format!("library {sub_text}"))
        }
        "library" if sub_text == "review" && flag(&["--accept", "--reject"]) => {
            person("library review --accept/--reject".into())
        }
        "ready" | "drop" | "merge" => Some((HallKind::Fate, v.to_owned())),
        "new" if flag(&["--follow-up"]) => Some((HallKind::Fate, "new --follow-up".into())),
        // A computed option could be `--dismiss` or `--set`.
        "inbox" | "budget" | "library" | "claude" if computed_flag => {
            Some((HallKind::Unknown, v.to_owned()))
        }
        _ => None,
    }
}

/// Whether code handed to an interpreter names `hall` followed by a person's verb
/// (`["hall", "retry", …]`, `system("hall verdict …")`); the verb found.
pub(super) fn named_in_code(code: &str) -> Option<String> {
    if !code.contains("hall") {
        return None;
    }
    let tokens: Vec<&str> = code
        .split(|c: char| !(c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | '/' | '\\')))
        .filter(|t| !t.is_empty())
        .collect();
    for (i, t) in tokens.iter().enumerate() {
        if !is_hall(t) {
            continue;
        }
        let rest: Vec<Arg> = tokens[i + 1..]
            .iter()
            .take(8)
            .map(|w| Arg::lit(*w))
            .collect();
        if let Some((HallKind::Person, verb)) = judge_call(&rest) {
            return Some(verb);
        }
    }
    None
}

impl Walker<'_> {
    /// `hall ARGS…`, with the prefix assignments `env`.
    pub(super) fn hall(&mut self, argv: &[Arg], env: &[(String, Arg)]) {
        let args = &argv[1..];
        let set_here = env
            .iter()
            .map(|(k, _)| k.as_str())
            .find(|k| IDENTITY_VARS.contains(k));
        let set_before = IDENTITY_VARS
            .iter()
            .find(|k| self.vars.contains_key(**k))
            .copied();
        if let Some(var) = set_here.or(set_before) {
            self.found(Effect::HallCall {
                verb: format!("with {var} set"),
                kind: HallKind::Person,
            });
        }
        if let Some((kind, verb)) = judge_call(args) {
            self.found(Effect::HallCall { verb, kind });
        }
        let mut words = args.iter().filter(|a| !a.text.starts_with('-'));
        match words.next().map(|a| a.text.as_str()) {
            // `hall run -- CMD` runs CMD.
            Some("run") => {
                if let Some(pos) = args.iter().position(|a| a.text == "--") {
                    let inner = args[pos + 1..].to_vec();
                    if !inner.is_empty() {
                        self.with_outer(argv, |w| {
                            w.current = super::shell::join_args(&inner);
                            w.classify(inner, Vec::new(), Stdin::Inherit)
                        });
                    }
                }
            }
            // `hall export --out FILE`, `hall library export --out FILE` write FILE.
            Some("export" | "library") => {
                for (i, a) in args.iter().enumerate() {
                    if a.text == "--out"
                        && let Some(p) = args.get(i + 1)
                    {
                        self.write_to(p, "`hall` writes");
                    } else if let Some(p) = a.text.strip_prefix("--out=") {
                        self.write_to(
                            &Arg {
                                text: p.to_owned(),
                                dynamic: a.dynamic,
                            },
                            "`hall` writes",
                        );
                    }
                }
            }
            _ => {}
        }
    }

    /// Code for an interpreter that names a person's `hall` verb.
    pub(super) fn hall_in_code(&mut self, code: &str) {
        if let Some(verb) = named_in_code(code) {
            self.found(Effect::HallCall {
                verb,
                kind: HallKind::Person,
            });
        }
    }
}
