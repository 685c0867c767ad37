//! Judges `gh` commands: which open or merge a PR, which write refs or contents through
//! the API, and which change GitHub in other ways (unfollowable in strict mode).

use super::shell::Walker;
use super::words::Arg;
use super::{Effect, Pushed};

/// `gh` verbs that only read, whatever the command group.
const READ_VERBS: &[&str] = &[
    "list", "view", "status", "diff", "checks", "checkout", "download", "watch", "browse",
    "search", "clone", "verify", "token", "get", "help",
];

/// Top-level `gh` commands that never change anything on GitHub.
const LOCAL_COMMANDS: &[&str] = &[
    "auth",
    "config",
    "completion",
    "help",
    "version",
    "--version",
    "--help",
    "-h",
    "extension",
    "alias",
    "browse",
    "status",
    "search",
    "co",
    "copilot",
    "agent-task",
];

impl Walker<'_> {
    /// Analyzes one `gh` invocation; `args` excludes the word `gh`.
    pub(super) fn gh(&mut self, args: &[Arg]) {
        let mut i = 0;
        // `-R owner/repo` may come before the command group.
        while let Some(a) = args.get(i) {
            if a.text == "-R" || a.text == "--repo" {
                i += 2;
            } else if a.text.starts_with("--repo=") {
                i += 1;
            } else {
                break;
            }
        }
        let Some(group) = args.get(i) else {
            return;
        };
        if group.dynamic {
            self.unfollowable(format!(
                "the gh command `{}` is computed at run time",
                group.text
            ));
            return;
        }
        let rest = &args[i + 1..];
        let verb = first_operand(rest);
        // Help only when it comes first, as in `gh pr create --help`: later on, a flag
        // that takes a value would swallow it (`--body --help` still creates the PR).
        let help_at = match verb {
            Some(v) => rest.iter().position(|a| std::ptr::eq(a, v)).map(|p| p + 1),
            None => Some(0),
        };
        if help_at
            .and_then(|p| rest.get(p))
            .is_some_and(|a| a.text == "--help" || a.text == "-h")
        {
            return;
        }
        match group.text.as_str() {
            "pr" => match verb.map(|v| v.text.as_str()) {
                Some("create" | "new") => self.found(Effect::PrCreate {
                    place: self.place.clone(),
                    head: flag_value(rest, &["--head", "-H"]),
                }),
                Some("revert") => self.found(Effect::Push {
                    how: "gh pr revert".to_owned(),
                    place: self.place.clone(),
                    pushed: Pushed::Unknown("a revert made on GitHub".to_owned()),
                }),
                Some("merge") => {
                    let pr = verb.and_then(|v| operand_after(rest, v));
                    self.found(Effect::PrMerge {
                        place: self.place.clone(),
                        pr,
                    })
                }
                Some("update-branch") => self.found(Effect::Push {
                    how: "gh pr update-branch".to_owned(),
                    place: self.place.clone(),
                    pushed: Pushed::Unknown("a merge made on GitHub".to_owned()),
                }),
                Some(v) if READ_VERBS.contains(&v) => {}
                None => {}
                Some(v) => self.gh_changes("pr", v),
            },
            "repo" => match verb.map(|v| v.text.as_str()) {
                // With no repository named, `gh repo sync` updates the local branch from
                // its remote, like a pull; naming one updates a fork on GitHub.
                Some("sync") => match verb.and_then(|v| operand_after(rest, v)) {
                    None if !rest
                        .iter()
                        .any(|a| a.text.starts_with("--source") || a.text == "-s") =>
                    {
                        self.repo_write("syncs the current branch from its remote", Vec::new())
                    }
                    _ => self.found(Effect::Push {
                        how: "gh repo sync".to_owned(),
                        place: self.place.clone(),
                        pushed: Pushed::Unknown("a branch of a repository on GitHub".to_owned()),
                    }),
                },
                Some("create") if rest.iter().any(|a| a.text == "--push") => {
                    self.found(Effect::Push {
                        how: "gh repo create --push".to_owned(),
                        place: self.place.clone(),
                        pushed: Pushed::Unknown("every branch of a new repository".to_owned()),
                    })
                }
                Some(v) if READ_VERBS.contains(&v) => {}
                None => {}
                Some(v) => self.gh_changes("repo", v),
            },
            "release" => match verb.map(|v| v.text.as_str()) {
                // A release creates its tag on GitHub: a ref write, like pushing a tag.
                Some("create") => self.found(Effect::Push {
                    how: "gh release create (makes a tag)".to_owned(),
                    place: self.place.clone(),
                    pushed: Pushed::Unknown("a tag made on GitHub".to_owned()),
                }),
                Some(v) if READ_VERBS.contains(&v) => {}
                None => {}
                Some(v) => self.gh_changes("release", v),
            },
            "api" => self.gh_api(rest),
            g if LOCAL_COMMANDS.contains(&g) => {}
            g => match verb {
                Some(v) if v.dynamic => self.gh_changes(g, &v.text.clone()),
                Some(v) if READ_VERBS.contains(&v.text.as_str()) => {}
                None if KNOWN_GROUPS.contains(&g) => {}
                Some(v) => {
                    let v = v.text.clone();
                    self.gh_changes(g, &v)
                }
                None => self.unfollowable(format!(
                    "`gh {g}` is not a gh command the guard knows (an extension or alias?)"
                )),
            },
        }
    }

    fn gh_changes(&mut self, group: &str, verb: &str) {
        let reason = if KNOWN_GROUPS.contains(&group) || matches!(group, "pr" | "repo" | "release")
        {
            format!("`gh {group} {verb}` changes GitHub")
        } else {
            format!("`gh {group}` is not a gh command the guard knows (an extension or alias?)")
        };
        self.unfollowable(reason);
    }

    /// `gh api [flags] ENDPOINT`: GET unless `-X` says otherwise or fields imply POST.
    fn gh_api(&mut self, rest: &[Arg]) {
        let mut method: Option<Arg> = None;
        let mut has_fields = false;
        let mut endpoint: Option<&Arg> = None;
        let mut query: Option<Arg> = None;
        let mut i = 0;
        while let Some(a) = rest.get(i) {
            i += 1;
            let t = a.text.as_str();
            let (flag, inline) = match t.split_once('=') {
                Some((f, v)) if t.starts_with("--") => (f, Some(v)),
                _ => (t, None),
            };
            // Short flags may carry their value attached: `-XPOST`, `-fquery=…`.
            let (flag, inline) = match (t.get(..2), t.get(2..)) {
                (Some(f), Some(v))
                    if !t.starts_with("--") && t.starts_with('-') && !v.is_empty() =>
                {
                    (f, Some(v))
                }
                _ => (flag, inline),
            };
            let takes_value = matches!(
                flag,
                "-X" | "--method"
                    | "-f"
                    | "--raw-field"
                    | "-F"
                    | "--field"
                    | "--input"
                    | "-H"
                    | "--header"
                    | "-q"
                    | "--jq"
                    | "-t"
                    | "--template"
                    | "--hostname"
                    | "-p"
                    | "--preview"
                    | "--cache"
            );
            if !t.starts_with('-') || a.dynamic && !t.starts_with('-') {
                if endpoint.is_none() {
                    endpoint = Some(a);
                }
                continue;
            }
            if !takes_value {
                continue;
            }
            let value = match inline {
                Some(v) => Arg {
                    text: v.to_owned(),
                    dynamic: a.dynamic,
                },
                None => {
                    let v = rest.get(i).cloned().unwrap_or_else(|| Arg::lit(""));
                    i += 1;
                    v
                }
            };
            match flag {
                "-X" | "--method" => method = Some(value),
                "-f" | "--raw-field" | "-F" | "--field" => {
                    has_fields = true;
                    if let Some(q) = value.text.strip_prefix("query=") {
                        let from_file = flag.eq_ignore_ascii_case("-F") || flag == "--field";
                        query = Some(Arg {
                            text: q.to_owned(),
                            dynamic: value.dynamic || (from_file && q.starts_with('@')),
                        });
                    }
                }
                "--input" => has_fields = true,
                _ => {}
            }
        }
        let Some(endpoint) = endpoint else {
            return;
        };
        let method_text = match &method {
            Some(m) if m.dynamic => {
                self.unfollowable(format!("`gh api` uses a computed method `{}`", m.text));
                return;
            }
            Some(m) => m.text.to_ascii_uppercase(),
            None if has_fields => "POST".to_owned(),
            None => "GET".to_owned(),
        };
        let path = endpoint
            .text
            .trim_start_matches("https://api.github.com")
            .trim_start_matches('/');
        let path = path.split('?').next().unwrap_or(path).to_owned();
        if path == "graphql" {
            self.gh_graphql(query.as_ref());
            return;
        }
        if matches!(method_text.as_str(), "GET" | "HEAD") {
            return;
        }
        if endpoint.dynamic {
            let reason = format!(
                "`gh api -X {method_text}` writes to a computed endpoint `{}`",
                endpoint.text
            );
            self.unfollowable(reason);
            return;
        }
        let segments: Vec<&str> = path.split('/').collect();
        let writes_code = segments.iter().any(|s| {
            matches!(
                *s,
                "pulls"
                    | "git"
                    | "refs"
                    | "merges"
                    | "merge"
                    | "contents"
                    | "merge-upstream"
                    | "branches"
                    | "update-branch"
            )
        });
        if writes_code {
            self.found(Effect::GhApiWrite {
                path,
                method: method_text,
            });
        } else {
            self.unfollowable(format!("`gh api -X {method_text} {path}` changes GitHub"));
        }
    }

    /// GraphQL: a mutation on pull requests, refs, merges, branches or commits is a
    /// push-gate write; other mutations change GitHub; queries only read.
    fn gh_graphql(&mut self, query: Option<&Arg>) {
        let Some(q) = query else {
            // No query we can see: `--input file` or none at all.
            self.unfollowable("`gh api graphql` sends a query the guard can't read");
            return;
        };
        if q.dynamic {
            self.unfollowable("`gh api graphql` sends a query the guard can't read");
            return;
        }
        let lower = q.text.to_ascii_lowercase();
        let Some(pos) = lower.find("mutation") else {
            return;
        };
        let after = &lower[pos + "mutation".len()..];
        let body = after.split_once('{').map(|(_, b)| b).unwrap_or(after);
        let name: String = body
            .trim_start()
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        let writes = ["pullrequest", "ref", "merge", "commit", "branch", "push"]
            .iter()
            .any(|w| body.contains(w));
        if writes {
            self.found(Effect::GhApiWrite {
                path: "graphql".to_owned(),
                method: format!("mutation {name}"),
            });
        } else {
            self.unfollowable(format!("the GraphQL mutation `{name}` changes GitHub"));
        }
    }
}

/// gh command groups whose verbs we judge by [`READ_VERBS`].
const KNOWN_GROUPS: &[&str] = &[
    "issue",
    "label",
    "gist",
    "secret",
    "variable",
    "workflow",
    "run",
    "cache",
    "ruleset",
    "project",
    "codespace",
    "org",
    "ssh-key",
    "gpg-key",
    "attestation",
    "repo",
    "release",
    "pr",
    "preview",
    "accessibility",
];

/// The value of the first of `names` given as a flag (`--head x`, `--head=x`, `-Hx`).
fn flag_value(rest: &[Arg], names: &[&str]) -> Option<Arg> {
    for (i, a) in rest.iter().enumerate() {
        for n in names {
            if a.text == *n {
                return rest.get(i + 1).cloned();
            }
            let inline = if n.starts_with("--") {
                a.text.strip_prefix(&format!("{n}="))
            } else {
                a.text.strip_prefix(n).filter(|v| !v.is_empty())
            };
            if let Some(v) = inline {
                return Some(Arg {
                    text: v.to_owned(),
                    dynamic: a.dynamic,
                });
            }
        }
    }
    None
}

/// The first operand after `verb` (a PR number, a repository), skipping flags and the
/// values of flags that take one.
fn operand_after(rest: &[Arg], verb: &Arg) -> Option<Arg> {
    let start = rest.iter().position(|a| std::ptr::eq(a, verb))? + 1;
    let mut i = start;
    while let Some(a) = rest.get(i) {
        i += 1;
        let t = a.text.as_str();
        if t.starts_with('-') && !a.dynamic {
            if !t.contains('=')
                && matches!(
                    t,
                    "-R" | "--repo"
                        | "-b"
                        | "--body"
                        | "-t"
                        | "--subject"
                        | "-A"
                        | "--author-email"
                        | "--match-head-commit"
                        | "-s"
                        | "--source"
                        | "-B"
                        | "--branch"
                )
            {
                i += 1;
            }
            continue;
        }
        return Some(a.clone());
    }
    None
}

/// The first word that is not a flag: the verb after `gh GROUP`.
fn first_operand(rest: &[Arg]) -> Option<&Arg> {
    let mut i = 0;
    while let Some(a) = rest.get(i) {
        if a.text == "-R" || a.text == "--repo" {
            i += 2;
            continue;
        }
        if a.text.starts_with('-') && !a.dynamic {
            i += 1;
            continue;
        }
        return Some(a);
    }
    None
}
