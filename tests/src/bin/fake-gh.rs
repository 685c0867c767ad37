//! A stand-in for the GitHub CLI: it takes gh's real flags and prints the JSON shapes gh
//! prints, from files under `$FAKE_GH_STATE` (`issues/<n>.json`, `prs/<n>.json`). Every
//! call is appended to `$FAKE_GH_STATE/calls.log` so tests can see what hall asked.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let state = PathBuf::from(std::env::var_os("FAKE_GH_STATE").unwrap_or_default());
    let _ = std::fs::create_dir_all(&state);
    if let Ok(mut log) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(state.join("calls.log"))
    {
        let _ = writeln!(log, "{}", args.join(" "));
    }
    let words: Vec<&str> = args.iter().map(String::as_str).collect();
    match words.as_slice() {
        ["--version"] => {
            println!("gh version 2.63.0 (fake)");
            ExitCode::SUCCESS
        }
        ["issue", "view", n, rest @ ..] => show(&state.join("issues"), n, rest, "issue"),
        ["pr", "view", n, rest @ ..] => show(&state.join("prs"), n, rest, "pull request"),
        ["pr", "create", rest @ ..] => create(&state, rest),
        ["pr", "list", "--state", "open", ..] => list_open(&state),
        ["pr", "comment", n, "--body-file", file] => comment(&state, n, file),
        _ => {
            eprintln!("fake gh: unsupported call: {}", args.join(" "));
            ExitCode::from(1)
        }
    }
}

/// Prints the stored object, narrowed to the `--json` fields like gh does.
fn show(dir: &std::path::Path, n: &str, rest: &[&str], what: &str) -> ExitCode {
    // PR references may be URLs; the number is the last path segment.
    let key = n.rsplit('/').next().unwrap_or(n);
    let Ok(text) = std::fs::read_to_string(dir.join(format!("{key}.json"))) else {
        eprintln!("GraphQL: Could not resolve to a {what} with the number of {key}.");
        return ExitCode::from(1);
    };
    let Ok(serde_json::Value::Object(all)) = serde_json::from_str::<serde_json::Value>(&text)
    else {
        eprintln!("fake gh: bad state file");
        return ExitCode::from(1);
    };
    let fields = rest
        .iter()
        .position(|a| *a == "--json")
        .and_then(|i| rest.get(i + 1));
    let out = match fields {
        Some(f) => {
            let keep: Vec<&str> = f.split(',').collect();
            serde_json::Value::Object(
                all.into_iter()
                    .filter(|(k, _)| keep.contains(&k.as_str()))
                    .collect(),
            )
        }
        None => serde_json::Value::Object(all),
    };
    println!("{out}");
    ExitCode::SUCCESS
}

fn flag<'a>(rest: &[&'a str], name: &str) -> Option<&'a str> {
    rest.iter()
        .position(|a| *a == name)
        .and_then(|i| rest.get(i + 1))
        .copied()
}

/// `gh pr create --base B --head H --title T --body-file F`: stores the PR and prints its
/// URL, as gh does.
fn create(state: &std::path::Path, rest: &[&str]) -> ExitCode {
    let (Some(base), Some(head), Some(title)) = (
        flag(rest, "--base"),
        flag(rest, "--head"),
        flag(rest, "--title"),
    ) else {
        eprintln!("fake gh: pr create needs --base, --head and --title");
        return ExitCode::from(1);
    };
    let body = flag(rest, "--body-file")
        .and_then(|f| std::fs::read_to_string(f).ok())
        .unwrap_or_default();
    let dir = state.join("prs");
    let _ = std::fs::create_dir_all(&dir);
    let n = (1..)
        .find(|n| !dir.join(format!("{n}.json")).exists())
        .unwrap_or(1);
    let url = format!("https://github.com/acme/widgets/pull/{n}");
    let pr = serde_json::json!({
        "number": n, "url": url, "title": title, "body": body, "baseRefName": base,
        "headRefName": head, "state": "OPEN", "comments": []
    });
    let _ = std::fs::write(dir.join(format!("{n}.json")), pr.to_string());
    println!("{url}");
    ExitCode::SUCCESS
}

/// `gh pr list --state open …`: the stored PRs still open, as one JSON array.
fn list_open(state: &std::path::Path) -> ExitCode {
    let open: Vec<serde_json::Value> = std::fs::read_dir(state.join("prs"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| std::fs::read_to_string(e.path()).ok())
        .filter_map(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .filter(|pr| pr["state"] == "OPEN")
        .collect();
    println!("{}", serde_json::Value::Array(open));
    ExitCode::SUCCESS
}

/// `gh pr comment <pr> --body-file F`: appends the comment and prints its URL.
fn comment(state: &std::path::Path, n: &str, file: &str) -> ExitCode {
    let key = n.rsplit('/').next().unwrap_or(n);
    let path = state.join("prs").join(format!("{key}.json"));
    let Ok(mut pr) = std::fs::read_to_string(&path)
        .map_err(|_| ())
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).map_err(|_| ()))
    else {
        eprintln!("GraphQL: Could not resolve to a PullRequest with the number of {key}.");
        return ExitCode::from(1);
    };
    let body = std::fs::read_to_string(file).unwrap_or_default();
    if let Some(list) = pr.get_mut("comments").and_then(|c| c.as_array_mut()) {
        list.push(serde_json::json!({ "body": body }));
    }
    let _ = std::fs::write(&path, pr.to_string());
    println!("https://github.com/acme/widgets/pull/{key}#issuecomment-1");
    ExitCode::SUCCESS
}
