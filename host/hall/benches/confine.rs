//! What confining a check costs: the same command run through the platform shell as the
//! loop ran it before, and through the loop's jail (bubblewrap on Linux), one after the
//! other in the same run. The figure that matters is the difference per command.
//!
//! Run: `cargo bench -p hallmark --bench confine`.

mod common;

use std::process::Stdio;
use std::time::Duration;

use common::{git, median, ms, time};

use hallmark::config::Config;
use hallmark::git::Repo;
use hallmark::hall::Hall;
use hallmark::hall::confine::Jail;
use hallmark::journal::Journal;

const RUNS: usize = 60;

/// The median of `RUNS` runs of `f`, after three to warm up.
fn median_of(mut f: impl FnMut()) -> Duration {
    for _ in 0..3 {
        f();
    }
    median((0..RUNS).map(|_| time(&mut f)).collect())
}

fn main() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let repo_dir = tmp.path().join("repo");
    std::fs::create_dir_all(&repo_dir).expect("mkdir");
    git(&repo_dir, &["init", "-q", "-b", "main"]);
    std::fs::write(repo_dir.join("a.txt"), "a\n").expect("write");
    git(&repo_dir, &["add", "-A"]);
    git(&repo_dir, &["commit", "-q", "-m", "one"]);
    let repo = Repo::discover(&repo_dir).expect("repo");
    let journal = Journal::new(repo.hall_dir());
    std::fs::create_dir_all(journal.root()).expect("journal");
    let mut hall = Hall::with(repo, journal, Config::default());
    hall.config_dir = Some(tmp.path().join("config"));
    hall.cache_dir = Some(tmp.path().join("cache"));
    let jail = match Jail::new(&hall) {
        Ok(j) => j,
        Err(e) => {
            println!("no sandbox here: {e}");
            return;
        }
    };
    let policy = jail.policy(false, &repo_dir, &[], &[repo_dir.join(".git")]);
    println!(
        "{RUNS} runs each, medians; the jail is {}",
        if jail.confined() { "on" } else { "off" }
    );
    for script in [
        "true",
        "git status --short",
        "sh -c 'for i in 1 2 3; do echo $i; done'",
    ] {
        let plain = median_of(|| {
            let ok = hallmark::platform::shell(script)
                .current_dir(&repo_dir)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            assert!(ok, "{script}");
        });
        let confined = median_of(|| {
            let mut j = jail.shell(&policy, script);
            let out = j
                .command
                .stdin(Stdio::null())
                .output()
                .expect("the jail starts");
            assert!(
                out.status.success(),
                "{script} (confined): {}",
                String::from_utf8_lossy(&out.stderr)
            );
        });
        println!(
            "{script:<48} unconfined {:>7.2} ms   confined {:>7.2} ms   costs {:>+7.2} ms",
            ms(plain),
            ms(confined),
            ms(confined) - ms(plain)
        );
    }
}
