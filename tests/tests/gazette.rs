//! The Gazette end to end: a real loop with the stand-in model prints the page as the
//! item moves on, `hall attach` adds a PNG and a link, `hall gazette` reprints it only
//! when stale, and Chromium renders it without a single request to the network.

#![allow(clippy::unwrap_used)] // a panic is how a test fails

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::*;

/// A PNG of `w`×`h` pixels drawn by `pixel`, encoded here (stored deflate blocks) so
/// the test needs no image crate.
fn png(w: u32, h: u32, pixel: impl Fn(u32, u32) -> [u8; 3]) -> Vec<u8> {
    fn crc(bytes: &[u8]) -> u32 {
        let mut c = 0xffff_ffffu32;
        for &b in bytes {
            c ^= u32::from(b);
            for _ in 0..8 {
                c = if c & 1 == 1 {
                    0xedb8_8320 ^ (c >> 1)
                } else {
                    c >> 1
                };
            }
        }
        !c
    }
    fn chunk(out: &mut Vec<u8>, kind: &[u8], data: &[u8]) {
        out.extend((data.len() as u32).to_be_bytes());
        let mut body = kind.to_vec();
        body.extend(data);
        out.extend(&body);
        out.extend(crc(&body).to_be_bytes());
    }
    let mut raw = Vec::new();
    for y in 0..h {
        raw.push(0);
        for x in 0..w {
            raw.extend(pixel(x, y));
        }
    }
    let mut z = vec![0x78, 0x01];
    let blocks: Vec<&[u8]> = raw.chunks(65_535).collect();
    for (i, block) in blocks.iter().enumerate() {
        z.push(u8::from(i + 1 == blocks.len()));
        let len = block.len() as u16;
        z.extend(len.to_le_bytes());
        z.extend((!len).to_le_bytes());
        z.extend(*block);
    }
    let (mut a, mut b) = (1u32, 0u32);
    for &byte in &raw {
        a = (a + u32::from(byte)) % 65_521;
        b = (b + a) % 65_521;
    }
    z.extend(((b << 16) | a).to_be_bytes());
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut ihdr = Vec::new();
    ihdr.extend(w.to_be_bytes());
    ihdr.extend(h.to_be_bytes());
    ihdr.extend([8, 2, 0, 0, 0]);
    chunk(&mut out, b"IHDR", &ihdr);
    chunk(&mut out, b"IDAT", &z);
    chunk(&mut out, b"IEND", &[]);
    out
}

/// A chart-like picture: coloured bars on white.
fn chart() -> Vec<u8> {
    png(120, 80, |x, y| match x / 20 {
        n if y > 70 - n * 12 && x % 20 < 14 => [40 + (n * 30) as u8, 90, 160],
        _ => [255, 255, 255],
    })
}

fn page_of(sb: &Sandbox, id: &str) -> PathBuf {
    sb.journal()
        .item_dir(id.parse().unwrap())
        .join("gazette.html")
}

#[test]
fn a_closed_loop_prints_its_gazette_with_plates() {
    let l = Loop::new(
        CONFIG,
        json!({"review": [reject(), approve()], "fix": [fix("attempts <= 3", ""), fix("attempts <= 3 # inclusive", "F1")]}),
    );
    l.sb.hall(&l.wt, &["ready"]).ok();
    l.daemon();
    let status = l.status();
    assert_eq!(status["item"]["state"], "closed");
    let hallmark = status["item"]["hallmark"].as_str().unwrap().to_string();
    let pr = status["item"]["pr"].as_str().unwrap().to_string();
    // The loop printed the page itself when the item was hallmarked and shipped.
    let path = page_of(&l.sb, &l.id);
    let first = std::fs::read_to_string(&path).expect("printed by the loop");
    assert!(first.contains(&hallmark), "{first}");

    // Plates: a PNG from the worktree and a link.
    std::fs::write(l.wt.join("chart.png"), chart()).unwrap();
    let v =
        l.sb.hall(
            &l.wt,
            &[
                "attach",
                "chart.png",
                "--caption",
                "Retries <before> & after",
            ],
        )
        .ok();
    assert_eq!(
        (v["image"].as_bool(), v["file"].as_str()),
        (Some(true), Some("1-chart.png"))
    );
    let copy = PathBuf::from(v["path"].as_str().unwrap());
    assert_eq!(std::fs::read(&copy).unwrap(), chart());
    let url = "https://example.com/reports/7?tab=retries";
    l.sb.hall(&l.wt, &["attach", url, "--caption", "The report"])
        .ok();
    assert_eq!(l.events_of(&l.id, "attached").len(), 2);

    let v = l.sb.hall(&l.sb.repo, &["gazette", &l.id]).ok();
    assert_eq!(v["path"].as_str().unwrap(), path.display().to_string());
    assert_eq!(
        (v["printed"].as_bool(), v["words"].as_str()),
        (Some(true), Some("absent"))
    );
    let html = std::fs::read_to_string(&path).unwrap();
    for fact in [
        "<h1>Cap retries</h1>",
        "The librarian has not written this item's story yet.",
        &format!("<span class=\"sha\">{hallmark}</span>"),
        &format!("<dt>Pull request</dt><dd>{pr}</dd>"),
        "<dt>Rounds</dt><dd>3</dd>",
        "checks failed</span> (<code>sh check.sh</code> <span class=\"fail\">failed</span>)",
        "changes requested, 1 finding;",
        "approved, 1 finding.",
        "With 3 attempts allowed, the third is refused because the check uses &lt; instead of &lt;=.",
        // Fixed by the commit that was then approved.
        &format!("Fixed in <code>{}</code>.", &hallmark[..7]),
        "data:image/png;base64,",
        "<figcaption>Retries &lt;before&gt; &amp; after</figcaption>",
        &format!("<a href=\"{url}\" rel=\"noreferrer noopener\">{url}</a>"),
    ] {
        assert!(html.contains(fact), "missing {fact}\n{html}");
    }
    assert!(!html.contains("<script"));
    // Nothing changed: nothing is printed.
    let again = l.sb.hall(&l.sb.repo, &["gazette", &l.id]).ok();
    assert_eq!(again["printed"], false);

    // The librarian's words: the headline and the finding in plain words; the facts stay.
    let words = json!({"headline": "Retries stop at three, as promised", "story": "Clients now back off.",
        "findings": {"F1": "The third try was refused when it should have been let through."}});
    std::fs::write(
        path.with_file_name("gazette-words.json"),
        serde_json::to_vec(&words).unwrap(),
    )
    .unwrap();
    let v = l.sb.hall(&l.sb.repo, &["gazette", &l.id]).ok();
    assert_eq!(
        (v["printed"].as_bool(), v["words"].as_str()),
        (Some(true), Some("found"))
    );
    let html = std::fs::read_to_string(&path).unwrap();
    assert!(html.contains("<h1>Retries stop at three, as promised</h1>"));
    assert!(html.contains("The third try was refused when it should have been let through."));
    assert!(html.contains(&hallmark));

    // --open hands the page to the opener.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let opener = l.sb.root.join("opener.sh");
        let said = l.sb.root.join("opened.txt");
        std::fs::write(
            &opener,
            format!("#!/bin/sh\nprintf '%s' \"$1\" > '{}'\n", said.display()),
        )
        .unwrap();
        std::fs::set_permissions(&opener, std::fs::Permissions::from_mode(0o755)).unwrap();
        let v =
            l.sb.hall_env(
                &l.wt,
                &["gazette", "--open"],
                &[("HALL_OPENER", opener.to_str().unwrap())],
            )
            .ok();
        assert_eq!(v["opened"], true);
        assert_eq!(
            std::fs::read_to_string(&said).unwrap(),
            path.display().to_string()
        );
        let v =
            l.sb.hall_env(
                &l.wt,
                &["gazette", "--open"],
                &[("HALL_OPENER", "/bin/false")],
            )
            .err("COMMAND_FAILED", 1);
        assert!(
            v["error"]["message"]
                .as_str()
                .unwrap()
                .contains("not opened"),
            "{v}"
        );
    }
}

#[test]
fn attach_refuses_what_a_page_must_not_carry() {
    let sb = Sandbox::initialized();
    let v = sb.hall(&sb.repo, &["new", "--title", "Plates"]).ok();
    let id = v["item"].as_str().unwrap().to_string();
    let wt = sb.worktree(&id);
    // Outside the worktree and the repository.
    let outside = sb.home.join("secret.txt");
    std::fs::write(&outside, "key").unwrap();
    let v = sb
        .hall(&wt, &["attach", outside.to_str().unwrap()])
        .err("USAGE", 2);
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("outside the item's worktree"),
        "{v}"
    );
    // Too large.
    let big = wt.join("big.bin");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(5 * 1024 * 1024 + 1)
        .unwrap();
    let v = sb.hall(&wt, &["attach", "big.bin"]).err("USAGE", 2);
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("larger than 5.0 MB"),
        "{v}"
    );
    // Links that aren't http(s), or would break out of an attribute.
    sb.hall(&wt, &["attach", "javascript:alert(1)"])
        .err("USAGE", 2);
    sb.hall(&wt, &["attach", "https://x.example/\"><script>"])
        .err("USAGE", 2);
    sb.hall(&wt, &["attach", "missing.png"]).err("USAGE", 2);
    // Nothing was recorded or copied.
    let log = sb.hall(&sb.repo, &["log", &id, "--kind", "attached"]).ok();
    assert_eq!(log["events"], json!([]));
    assert!(
        !sb.journal()
            .item_dir(id.parse().unwrap())
            .join("plates")
            .join("1-big.bin")
            .exists()
    );
    // A text file is a plate too, shown as a link with its size; `--id` names the item.
    std::fs::write(wt.join("notes.txt"), "hello").unwrap();
    let v = sb
        .hall(
            &sb.repo,
            &[
                "attach",
                wt.join("notes.txt").to_str().unwrap(),
                "--id",
                &id,
            ],
        )
        .ok();
    assert_eq!(
        (v["image"].as_bool(), v["bytes"].as_u64()),
        (Some(false), Some(5))
    );
    sb.hall(&sb.repo, &["gazette", &id]).ok();
    let html = std::fs::read_to_string(page_of(&sb, &id)).unwrap();
    assert!(
        html.contains("<a href=\"plates/1-notes.txt\">1-notes.txt</a>, 5 bytes"),
        "{html}"
    );
    let schema = sb.hall(&sb.repo, &["schema", "gazette-words"]).ok();
    assert!(schema["properties"]["headline"].is_object(), "{schema}");
}

/// Chromium, when this machine has it (the CI installs Debian's `chromium`).
fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .flat_map(|name| std::env::split_paths(&path).map(move |d| d.join(name)))
        .find(|p| p.is_file())
}

/// Where screenshots are kept after the run: `<target>/test-artifacts/gazette/`.
fn artifacts() -> PathBuf {
    let target = hall_bin()
        .parent()
        .and_then(Path::parent)
        .unwrap()
        .to_path_buf();
    let dir = target.join("test-artifacts").join("gazette");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Screenshots `page` with headless Chromium, recording its network log; returns the
/// screenshot's bytes and the URLs the page asked for. The browser's own requests (its
/// clock, account and suggestion services) carry no origin and are not the page's; a
/// `file://` load never reaches the network stack, so the log holds none for the page
/// itself. A dead proxy keeps every request on this machine.
fn screenshot(browser: &Path, page: &Path, shot: &Path, scratch: &Path) -> (Vec<u8>, Vec<String>) {
    let netlog = scratch.join(format!(
        "{}.netlog.json",
        shot.file_stem().unwrap().to_string_lossy()
    ));
    let profile = scratch.join("profile");
    let _ = std::fs::remove_file(shot);
    let out = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-default-apps",
            "--proxy-server=http://127.0.0.1:9",
            "--window-size=1200,1600",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("--log-net-log={}", netlog.display()))
        .arg(format!("file://{}", page.display()))
        .env("HOME", scratch)
        .output()
        .expect("chromium runs");
    assert!(
        out.status.success() && shot.is_file(),
        "chromium failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let log = std::fs::read_to_string(&netlog).unwrap();
    // One event a line after the constants; a log cut short by the exit still reads.
    let events: Vec<Value> = match serde_json::from_str::<Value>(&log) {
        Ok(whole) => whole["events"].as_array().cloned().unwrap_or_default(),
        Err(_) => log
            .lines()
            .filter_map(|l| serde_json::from_str(l.trim().trim_end_matches(',')).ok())
            .collect(),
    };
    let mut asked = Vec::new();
    for e in &events {
        let p = &e["params"];
        if let (Some(initiator), Some(url)) = (p["initiator"].as_str(), p["url"].as_str())
            && initiator != "not an origin"
            && !asked.iter().any(|u| u == url)
        {
            asked.push(url.to_string());
        }
    }
    (std::fs::read(shot).unwrap(), asked)
}

#[test]
fn chromium_renders_the_page_and_fetches_nothing() {
    let Some(browser) = chromium() else {
        eprintln!(
            "\n\n!!! SKIPPED: no chromium on PATH; the CI installs it (`apt-get install chromium`) !!!\n\n"
        );
        return;
    };
    let sb = Sandbox::initialized();
    let v = sb
        .hall(
            &sb.repo,
            &[
                "new",
                "--title",
                "</style><script>alert(1)</script> Cap retries",
            ],
        )
        .ok();
    let id = v["item"].as_str().unwrap().to_string();
    let wt = sb.worktree(&id);
    std::fs::write(wt.join("chart.png"), chart()).unwrap();
    sb.hall(
        &wt,
        &["attach", "chart.png", "--caption", "Retries per minute"],
    )
    .ok();
    sb.hall(&wt, &["attach", "https://example.com/never-fetched.png"])
        .ok();
    let long = "y".repeat(3000);
    let words = json!({"headline": "Retries stop at three", "story": format!("A story.\n\n{long}"),
        "diagram": {"nodes": [{"id": "a", "label": "Request"}, {"id": "b", "label": "Retry loop"}, {"id": "c", "label": "Response"}],
                    "edges": [{"from": "a", "to": "b"}, {"from": "b", "to": "c", "label": "ok"}, {"from": "b", "to": "a", "label": "again"}]}});
    let path = page_of(&sb, &id);
    std::fs::write(path.with_file_name("gazette-words.json"), words.to_string()).unwrap();
    sb.hall(&sb.repo, &["gazette", &id]).ok();
    let html = std::fs::read_to_string(&path).unwrap();
    assert!(html.contains("<svg class=\"diagram\""));

    let out = artifacts();
    let scratch = tempfile::tempdir().unwrap();
    let blank = scratch.path().join("blank.html");
    std::fs::write(&blank, "<!DOCTYPE html><html><body></body></html>").unwrap();
    let (blank_png, _) = screenshot(&browser, &blank, &out.join("blank.png"), scratch.path());
    // The log does show a page's requests: one that loads an image and a stylesheet.
    let leaky = scratch.path().join("leaky.html");
    std::fs::write(
        &leaky,
        "<!DOCTYPE html><img src=\"http://leak.example.invalid/x.png\"><link rel=stylesheet href=\"https://leak.example.invalid/a.css\">",
    )
    .unwrap();
    let (_, mut leaked) = screenshot(
        &browser,
        &leaky,
        &scratch.path().join("leaky.png"),
        scratch.path(),
    );
    leaked.sort();
    assert_eq!(
        leaked,
        [
            "http://leak.example.invalid/x.png",
            "https://leak.example.invalid/a.css"
        ],
        "the net log names what a page fetches"
    );
    let (shot, asked) = screenshot(&browser, &path, &out.join("gazette.png"), scratch.path());
    eprintln!(
        "screenshot: {} ({} bytes; a blank page: {} bytes)",
        out.join("gazette.png").display(),
        shot.len(),
        blank_png.len()
    );
    assert!(shot.starts_with(b"\x89PNG\r\n\x1a\n"), "a PNG");
    // A page of text, a chart and a diagram compresses far worse than a white one.
    assert!(
        shot.len() > 4 * blank_png.len() && shot.len() > 20_000,
        "{} vs {}",
        shot.len(),
        blank_png.len()
    );
    assert!(asked.is_empty(), "the Gazette fetched {asked:?}");
}
