//! A stand-in for an interactive `claude` launch (`hall new --open`): it records its
//! arguments and working directory in `$FAKE_CLAUDE_LOG` and exits.

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let cwd = std::env::current_dir()
        .map(|d| d.display().to_string())
        .unwrap_or_default();
    let record = serde_json::json!({ "args": args, "cwd": cwd });
    if let Some(path) = std::env::var_os("FAKE_CLAUDE_LOG") {
        let _ = std::fs::write(path, record.to_string());
    }
}
