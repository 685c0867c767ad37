//! `hall web` in a real browser: Debian's Chromium, driven by Playwright
//! (`tests/web/browser.mjs`, pinned in `tests/web/package.json`; `.ci/run` installs it
//! with `npm ci`). The sandbox holds an item with a hostile title and a question, and
//! one ready for review; once the page follows its trace, the loop runs and the stand-in
//! review streams its steps. The script answers, changes a setting, checks the files on
//! disk, and leaves a screenshot of every page in `target/test-artifacts/web/`.

#![allow(clippy::unwrap_used)] // a panic is how a test fails

use std::path::{Path, PathBuf};
use std::process::Command;

use hallmark_tests::web::Server;

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
    // H-0001 waits for its checks and review; the stand-in model's review streams three
    // reads two seconds apart before it approves.
    let l = crate::common::streaming_review();
    let sb = &l.sb;
    let title = "<img src=x onerror=\"window.__pwned=1\"><script>window.__pwned=2</script> parser";
    let made = sb.hall(&sb.repo, &["new", title, "--no-split"]).ok();
    let id = made["item"].as_str().unwrap().to_string();
    sb.hall(
        &sb.worktree(&id),
        &["ask", "which parser?", "--options", "pest,nom"],
    )
    .ok();
    let item_dir = sb
        .repo
        .join(".git")
        .join("hallmark")
        .join("items")
        .join(&id);
    // The settings under test carry comments, which a save must keep.
    let config = sb.repo.join(".hallmark.toml");
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(
        &config,
        format!("# Our rules: ask Ada before changing the merge mode.\n{text}\n[merge]\nmode = \"off\"  # lit for now\n"),
    )
    .unwrap();
    let signal = sb.root.join("trace-open");

    let web = Server::start(sb, &sb.repo, &[]);
    let shots = workspace()
        .join("target")
        .join("test-artifacts")
        .join("web");
    let _ = std::fs::remove_dir_all(&shots);
    let mut node = Command::new("node");
    sb.apply_env(&mut node);
    node.arg(&script)
        .current_dir(script.parent().unwrap())
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HALL_WEB_URL", format!("{}{}", web.origin(), web.launch))
        .env("HALL_WEB_ITEM", &id)
        .env("HALL_WEB_EVENTS", item_dir.join("events.jsonl"))
        .env("HALL_WEB_RUN_ITEM", &l.id)
        .env("HALL_WEB_SIGNAL", &signal)
        .env("HALL_WEB_CONFIG", &config)
        .env("HALL_WEB_USER_CONFIG", sb.config_dir().join("config.toml"))
        .env("HALL_WEB_SHOTS", &shots)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let browser = node.spawn().expect("node runs");
    // Once the page follows H-0001's trace, the loop runs: the checks, then the review
    // whose steps the page must show as they stream.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while !signal.exists() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    if signal.exists() {
        l.daemon();
    }
    let out = browser.wait_with_output().expect("node ends");
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
    assert_eq!(
        l.status()["item"]["state"],
        "closed",
        "approved and shipped"
    );
}
