//! A stand-in for a build or test tool (`cargo`, `pytest`…): it prints the captured
//! real output named by `$FAKE_TOOL_OUTPUT` and exits with `$FAKE_TOOL_EXIT`, so
//! `hall run -- cargo test` can be tested on real output without running cargo.

use std::io::Write;

fn main() {
    let output = std::env::var_os("FAKE_TOOL_OUTPUT")
        .and_then(|p| std::fs::read(p).ok())
        .unwrap_or_default();
    let _ = std::io::stdout().write_all(&output);
    let code = std::env::var("FAKE_TOOL_EXIT")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    std::process::exit(code);
}
