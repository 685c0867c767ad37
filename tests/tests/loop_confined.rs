//! What the loop runs on an item's code is confined: a test script, a `conftest.py`, a
//! build script and an npm lifecycle script of the item each try to read the signing
//! key, sign a note, commit, push, write the journal and the home directory, and reach a
//! server on the host's loopback. Run through `hall daemon run` with the real gates and
//! setup, none of it works, the key is never opened by anything but `hall` (strace), and
//! the checks, which use git and temporary files, still pass: the item ships once, with
//! the hallmark `hall` struck.

#![allow(clippy::unwrap_used)] // a panic is how a test fails

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::*;

/// Everything a hostile item tries, written to `.attack-<who>` in the directory it runs
/// in; exits 0 so the checks it hides in still pass.
const ATTACK: &str = r#"#!/bin/sh
who=$1; origin=$2; key=$3; journal=$4; port=$5
out="$PWD/.attack-$who"
{
  if grep -q 'PRIVATE KEY' "$key" 2>/dev/null; then echo "read the key"; else echo "no key"; fi
  if git -c user.name=x -c user.email=x@x commit -q --allow-empty -m "unreviewed $who" 2>/dev/null; then echo committed; else echo "no commit"; fi
  sha=$(git rev-parse HEAD)
  printf 'hallmark v3\ncommit %s\n' "$sha" > "${TMPDIR:-/tmp}/msg-$who"
  if ssh-keygen -q -Y sign -n hallmark -f "$key" "${TMPDIR:-/tmp}/msg-$who" > /dev/null 2>&1; then echo signed; else echo "no signature"; fi
  if git notes --ref=hallmark add -f -m forged "$sha" 2>/dev/null; then echo noted; else echo "no note"; fi
  if git push -q "$origin" "$sha:refs/heads/pwned-$who" 2>/dev/null; then echo pushed; else echo "no push"; fi
  if echo '{"forged":1}' >> "$journal/events.jsonl" 2>/dev/null; then echo "journal written"; else echo "no journal"; fi
  if touch "$HOME/.pwned-$who" 2>/dev/null; then echo "home written"; else echo "no home"; fi
  if python3 -c "import socket,sys; socket.create_connection(('127.0.0.1', int(sys.argv[1])), timeout=2)" "$port" 2>/dev/null; then echo "reached the host"; else echo "no network"; fi
} > "$out" 2>&1
exit 0
"#;

/// What an unconfined run of [`ATTACK`] manages, and a confined one must not.
const DAMAGE: &[&str] = &[
    "read the key",
    "committed",
    "signed",
    "noted",
    "pushed",
    "journal written",
    "home written",
    "reached the host",
];

/// A check that uses git and temporary files the way real test suites do.
const ORDINARY: &str = r#"set -e
t=$(mktemp -d)
git init -q "$t/r"
git -C "$t/r" -c user.name=t -c user.email=t@t commit -q --allow-empty -m one
test "$(git -C "$t/r" rev-list --count HEAD)" = 1
git log -1 --format=%s > /dev/null
git status --short > /dev/null
grep -q '<=' lib.txt
"#;

fn python() -> PathBuf {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("gh/venv/bin/python");
    assert!(
        Command::new(&p)
            .args(["-m", "pytest", "--version"])
            .output()
            .is_ok_and(|o| o.status.success()),
        "pytest is missing from tests/gh/venv: run the README's test command (it installs tests/gh/requirements.txt)"
    );
    p
}

#[test]
fn the_items_code_runs_confined_and_nothing_it_does_signs_or_ships() {
    let python = python();
    let sb = Sandbox::initialized();
    sb.stand_ins(Path::new(env!("CARGO_BIN_EXE_fake-claude")));
    sb.github();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port().to_string();
    let key = sb.config_dir().join("signing_ed25519");
    assert!(key.is_file(), "hall init made the signing key");
    let journal = sb.repo.join(".git/hallmark");
    let args = |who: &str| {
        format!(
            "{who} {} {} {} {port}",
            sb.origin.display(),
            key.display(),
            journal.display()
        )
    };
    let config = format!(
        "base = \"main\"\nsetup = [\"npm install --offline --no-audit --no-fund\"]\ngates = [\"sh test.sh\", \"{} -m pytest -q -p no:cacheprovider\", \"sh build.sh\"]\n",
        python.display()
    );
    let files = [
        ("attack.sh".to_string(), ATTACK.to_string()),
        (
            ".gitignore".to_string(),
            ".attack-*\nnode_modules/\nout/\n".to_string(),
        ),
        ("lib.txt".to_string(), "attempts <= 3\n".to_string()),
    ];
    for (name, content) in &files {
        std::fs::write(sb.repo.join(name), content).unwrap();
    }
    sb.configure(&config, &format!("{ORDINARY}\n"), "Configure the loop");
    let script = sb.script_model(&json!({"review": [approve()]}));
    let v = sb
        .hall(&sb.repo, &["new", "--title", "Tidy the limits"])
        .ok();
    let id = v["item"].as_str().unwrap().to_string();
    let wt = sb.worktree(&id);
    // The item's own code: each piece the loop runs tries everything.
    let test_sh = format!("sh attack.sh {}\n{ORDINARY}", args("test"));
    let conftest = format!(
        "import subprocess\nsubprocess.run(['sh', 'attack.sh'] + '{}'.split())\n",
        args("conftest")
    );
    let test_py = "import subprocess\n\ndef test_git_and_temp_files(tmp_path):\n    subprocess.run(['git', 'init', '-q', str(tmp_path / 'r')], check=True)\n    (tmp_path / 'f.txt').write_text('x')\n    assert (tmp_path / 'f.txt').read_text() == 'x'\n";
    let build = format!(
        "sh attack.sh {}\nmkdir -p out && cp lib.txt out/lib.txt && test -s out/lib.txt\n",
        args("build")
    );
    let package = format!(
        "{{\"name\": \"tidy\", \"version\": \"1.0.0\", \"private\": true, \"scripts\": {{\"preinstall\": \"sh attack.sh {}\"}}}}\n",
        args("npm")
    );
    for (name, content) in [
        ("test.sh", test_sh.as_str()),
        ("conftest.py", conftest.as_str()),
        ("test_limits.py", test_py),
        ("build.sh", build.as_str()),
        ("package.json", package.as_str()),
    ] {
        std::fs::write(wt.join(name), content).unwrap();
    }
    sb.git(&wt, &["add", "-A"]);
    sb.git(&wt, &["commit", "-q", "-m", "Tidy the limits, with tests"]);

    // Unconfined, the attack does all its damage (against a copy of origin, so the real
    // one stays clean): the test below proves something.
    let scratch = sb.root.join("scratch-origin.git");
    sb.git(
        &sb.root,
        &[
            "clone",
            "-q",
            "--bare",
            &sb.origin.display().to_string(),
            &scratch.display().to_string(),
        ],
    );
    let probe = sb.root.join("probe");
    sb.git(
        &sb.root,
        &[
            "clone",
            "-q",
            &wt.display().to_string(),
            &probe.display().to_string(),
        ],
    );
    let scratch_journal = sb.root.join("scratch-journal");
    std::fs::create_dir_all(&scratch_journal).unwrap();
    let mut cmd = Command::new("sh");
    sb.apply_env(&mut cmd);
    let probe_args = format!(
        "probe {} {} {} {port}",
        scratch.display(),
        key.display(),
        scratch_journal.display()
    );
    let ran = cmd
        .args(["-c", &format!("sh attack.sh {probe_args}")])
        .current_dir(&probe)
        .status()
        .unwrap();
    assert!(ran.success());
    let unconfined = std::fs::read_to_string(probe.join(".attack-probe")).unwrap();
    for d in DAMAGE {
        assert!(
            unconfined.lines().any(|l| l == *d),
            "unconfined, the attack can't {d}:\n{unconfined}"
        );
    }
    while listener.accept().is_ok() {}

    sb.hall(&wt, &["ready"]).ok();
    let trace = sb.root.join("strace.log");
    let mut daemon = Command::new("strace");
    sb.apply_env(&mut daemon);
    for (k, v) in sb.model_env(&script) {
        daemon.env(k, v);
    }
    let out = daemon
        .args([
            "-f",
            "-qq",
            "-Y",
            "-e",
            "trace=open,openat,openat2,execve",
            "-o",
        ])
        .arg(&trace)
        .arg(hall_bin())
        .args(["daemon", "run", "--until-idle", "--tick", "0.05"])
        .current_dir(&sb.repo)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // The item went round the loop as a clean one would: its checks passed, it was
    // reviewed, hallmarked and shipped.
    let status = sb.hall(&sb.repo, &["status", &id]).ok();
    assert_eq!(status["item"]["state"], "closed", "{status}");

    // Every piece of the item's code ran, and none of its damage happened.
    let loop_dir = sb.loop_checkout(&id);
    for who in ["test", "conftest", "build", "npm"] {
        let said = std::fs::read_to_string(loop_dir.join(format!(".attack-{who}")))
            .unwrap_or_else(|e| panic!("{who}'s attack did not run in the loop: {e}"));
        for d in DAMAGE {
            assert!(!said.lines().any(|l| l == *d), "{who}: {d}\n{said}");
        }
    }
    let mut buf = [0u8; 1];
    let reached = listener
        .accept()
        .map(|(mut s, _)| s.read(&mut buf).is_ok())
        .is_ok();
    assert!(!reached, "a run reached the host's loopback");
    for who in ["test", "conftest", "build", "npm"] {
        assert!(!sb.home.join(format!(".pwned-{who}")).exists());
    }
    let origin_refs = sb.git(&sb.origin, &["for-each-ref", "--format=%(refname)"]);
    assert!(!origin_refs.contains("pwned"), "{origin_refs}");
    let journal_text = std::fs::read_to_string(journal.join("events.jsonl")).unwrap_or_default();
    assert!(!journal_text.contains("forged"), "{journal_text}");

    // What shipped is the reviewed commit, with the hallmark hall struck, which CI's
    // check accepts.
    let head = sb.git(&wt, &["rev-parse", "HEAD"]);
    let notes = sb.git(&sb.origin, &["notes", "--ref=hallmark", "list"]);
    assert_eq!(notes.lines().count(), 1, "{notes}");
    assert!(notes.ends_with(&head), "{notes}");

    // strace saw every attempt to open the key; the only ones that succeeded were hall's
    // own, signing the approval. Inside the sandbox the path is an empty file.
    let trace = stitched(&std::fs::read_to_string(&trace).unwrap());
    let key_text = key.display().to_string();
    // bubblewrap opens the path with O_PATH to mount an empty file over it, which reads
    // nothing; every other open counts.
    let opens: Vec<&str> = trace
        .iter()
        .map(String::as_str)
        .filter(|l| l.contains(&key_text) && !l.contains("O_PATH"))
        .collect();
    // Which program each process runs: its last execve; a thread of hall's never execs.
    let mut program: std::collections::BTreeMap<&str, &str> = Default::default();
    for l in trace.iter().map(String::as_str) {
        let Some((pid, rest)) = l.split_once('<') else {
            continue;
        };
        if let Some((_, call)) = rest.split_once("> execve(\"")
            && l.ends_with("= 0")
        {
            program.insert(pid, call.split('"').next().unwrap_or(""));
        }
    }
    let hall = hall_bin().canonicalize().unwrap();
    let is_hall = |l: &str| {
        let pid = l.split('<').next().unwrap_or("");
        program
            .get(pid)
            .is_none_or(|p| Path::new(p).canonicalize().is_ok_and(|p| p == hall))
    };
    let succeeded: Vec<&&str> = opens.iter().filter(|l| !l.contains("= -1 ")).collect();
    assert!(
        !succeeded.is_empty(),
        "hall signed the approval with the key"
    );
    for l in &succeeded {
        let pid = l.split('<').next().unwrap_or("");
        assert!(
            is_hall(l),
            "the key was opened by something other than hall:\n{l}\n(it runs {:?})",
            program.get(pid)
        );
    }
    let attempts = opens
        .iter()
        .filter(|l| l.contains("= -1 ") && !is_hall(l))
        .count();
    assert!(
        attempts >= 4,
        "the item's code tried the key and failed ({attempts} attempts):\n{}",
        opens.join("\n")
    );
}

/// strace's lines with each call that another process interrupted joined back into one:
/// `pid<comm> openat(... <unfinished ...>` and, later, `pid<comm> <... openat resumed>) = 3`
/// become `pid<comm> openat(...) = 3`, so a call's result sits on the line that names its
/// path.
fn stitched(trace: &str) -> Vec<String> {
    let mut pending: std::collections::HashMap<&str, &str> = Default::default();
    let mut lines = Vec::new();
    for l in trace.lines() {
        let pid = l.split('<').next().unwrap_or("");
        if let Some(start) = l.strip_suffix(" <unfinished ...>") {
            pending.insert(pid, start);
        } else if let Some((_, rest)) = l.split_once(" resumed>") {
            match pending.remove(pid) {
                Some(start) => lines.push(format!("{start}{rest}")),
                None => lines.push(l.to_string()),
            }
        } else {
            lines.push(l.to_string());
        }
    }
    // A call still unfinished when the trace ended never returned: keep it, unresolved,
    // so it counts as an open nobody can show failed.
    lines.extend(pending.into_values().map(str::to_string));
    lines
}

#[test]
fn a_call_another_process_interrupted_is_read_whole() {
    let trace = "7<sh> openat(AT_FDCWD, \"/k\", O_RDONLY <unfinished ...>\n\
                 8<hall> write(1, \"x\", 1) = 1\n\
                 7<sh> <... openat resumed>) = -1 ENOENT (No such file or directory)\n";
    assert_eq!(
        stitched(trace),
        [
            "8<hall> write(1, \"x\", 1) = 1",
            "7<sh> openat(AT_FDCWD, \"/k\", O_RDONLY) = -1 ENOENT (No such file or directory)",
        ]
    );
}
