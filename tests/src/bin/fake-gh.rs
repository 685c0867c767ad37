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
