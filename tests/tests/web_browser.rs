//! `hall web` in a real browser: Debian's Chromium, driven by Playwright
//! (`tests/web/browser.mjs`, pinned in `tests/web/package.json`; `.ci/run` installs it
//! with `npm ci`). The sandbox holds an item with a hostile title, a question and a run
//! whose stream the script grows while the trace is open; the script answers, changes a
//! setting, checks the files on disk, and leaves a screenshot of every page in
//! `target/test-artifacts/web/`.

#![allow(clippy::unwrap_used)] // a panic is how a test fails

use std::path::{Path, PathBuf};
use std::process::Command;

use hallmark_tests::sandbox::Sandbox;
use hallmark_tests::web::Server;
use serde_json::{Value, json};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// Node, Playwright and Chromium, or why the test can't run here.
fn browser_tools() -> Result<PathBuf, String> {
    let script_dir = workspace().join("tests").join("web");
    if !script_dir
        .join("node_modules")
        .join("playwright-core")
        .is_dir()
    {
        return Err("run `npm ci --prefix tests/web`".into());
    }
    for (tool, hint) in [("node", "Node.js"), ("chromium", "Debian's chromium")] {
        let found = Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .output()
            .is_ok_and(|o| o.status.success());
        if !found {
            return Err(format!("{tool} is missing ({hint})"));
        }
    }
    Ok(script_dir.join("browser.mjs"))
}

#[test]
fn the_pages_in_chromium() {
    let script = match browser_tools() {
        Ok(s) => s,
        // CI installs all three; a developer's machine without them is told how.
        Err(why) if std::env::var_os("HALL_TEST_REQUIRE_BROWSER").is_none() => {
            eprintln!("skipped: {why}");
            return;
        }
        Err(why) => panic!("{why}"),
    };
    let sb = Sandbox::initialized();
    let title = "<img src=x onerror=\"window.__pwned=1\"><script>window.__pwned=2</script> parser";
    let made = sb.hall(&sb.repo, &["new", title, "--no-split"]).ok();
    let id = made["item"].as_str().unwrap().to_string();
    sb.hall(
        &sb.worktree(&id),
        &["ask", "which parser?", "--options", "pest,nom"],
    )
    .ok();
    // A run in progress: the trace tab shows its first step, then one the script adds.
    let item_dir = sb
        .repo
        .join(".git")
        .join("hallmark")
        .join("items")
        .join(&id);
    let runs = item_dir.join("runs");
    std::fs::create_dir_all(&runs).unwrap();
    let run = runs.join("20261205T090000Z-review.jsonl");
    let lines: Vec<Value> = vec![
        json!({"type": "system", "subtype": "init", "model": "claude-opus-4", "session_id": "s-1"}),
        json!({"type": "assistant", "message": {"content": [{"type": "tool_use", "name": "Read", "input": {"file_path": "first-step.txt"}}]}}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&run, text).unwrap();

    let web = Server::start(&sb, &sb.repo, &[]);
    let shots = workspace()
        .join("target")
        .join("test-artifacts")
        .join("web");
    let _ = std::fs::remove_dir_all(&shots);
    let mut node = Command::new("node");
    sb.apply_env(&mut node);
    let out = node
        .arg(&script)
        .current_dir(script.parent().unwrap())
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HALL_WEB_URL", format!("{}{}", web.origin(), web.launch))
        .env("HALL_WEB_ITEM", &id)
        .env("HALL_WEB_EVENTS", item_dir.join("events.jsonl"))
        .env("HALL_WEB_RUN", &run)
        .env("HALL_WEB_CONFIG", sb.repo.join(".hallmark.toml"))
        .env("HALL_WEB_SHOTS", &shots)
        .output()
        .expect("node runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the browser script failed:\n{stdout}\n{stderr}\nserver log:\n{}",
        std::fs::read_to_string(&web.stderr).unwrap_or_default()
    );
    eprintln!("{stdout}");
    for page in [
        "board",
        "item-now",
        "item-journal",
        "item-findings",
        "item-runs",
        "item-trace",
        "item-gazette",
        "item-usage",
        "inbox",
        "history",
        "usage",
        "queue",
        "repos",
        "settings",
        "settings-diff",
    ] {
        let png = shots.join(format!("{page}.png"));
        let bytes =
            std::fs::read(&png).unwrap_or_else(|_| panic!("no screenshot {}", png.display()));
        assert!(bytes.starts_with(b"\x89PNG"), "{page}.png is no PNG");
    }
    // The browser's own requests were all allowed: nothing was refused.
    assert_eq!(web.refusals(), Vec::<String>::new());
}
