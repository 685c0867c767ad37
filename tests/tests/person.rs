#![cfg(unix)]

//! A person's verbs need a person, proven by the operating system: the real `hall`
//! refuses them (`GATE_DENIED`, exit 5, writing nothing) to a process that an agent CLI
//! started, however indirectly and with `CLAUDECODE` unset (a program named `claude`,
//! node running Claude Code's package, codex), to one in a sandbox or with its user
//! config directory hidden, and to the loop's roles; from a person's shell (the test
//! harness, as far as the process table says) they run, and are recorded as `you`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use hallmark_tests::sandbox::{Run, Sandbox, hall_bin};
use serde_json::Value;

/// Every file a refused command must leave as it was: the journal's events, the user
/// config directory, the main checkout's `.hallmark.toml`, Claude Code's user settings
/// and the daemon's state.
fn state(sb: &Sandbox) -> BTreeMap<PathBuf, String> {
    fn walk(dir: &Path, keep: &dyn Fn(&Path) -> bool, out: &mut BTreeMap<PathBuf, String>) {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, keep, out);
            } else if keep(&p) {
                out.insert(p.clone(), std::fs::read_to_string(&p).unwrap_or_default());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(
        &sb.repo.join(".git/hallmark"),
        &|p| p.file_name().is_some_and(|n| n == "events.jsonl"),
        &mut out,
    );
    walk(&sb.config_dir(), &|_| true, &mut out);
    walk(&sb.root.join("data/daemon"), &|_| true, &mut out);
    for f in [
        sb.repo.join(".hallmark.toml"),
        sb.home.join(".claude/settings.json"),
    ] {
        out.insert(f.clone(), std::fs::read_to_string(&f).unwrap_or_default());
    }
    out
}

/// A copy of `sh` installed as `name`, the way an agent CLI is on disk.
fn agent(sb: &Sandbox, name: &str) -> PathBuf {
    let dir = sb.root.join("agents");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let path = dir.join(name);
    std::fs::copy("/bin/sh", &path).expect("copy sh");
    path
}

/// Runs the shell line `line` (where `hall` is the binary under test) with `program`
/// (a copy of `sh`, or `sh` itself) as the parent, with the sandbox's environment,
/// `CLAUDECODE` never set, and `extra` arguments after the line (`$0` for `sh -c`).
fn under(sb: &Sandbox, program: &Path, line: &str, extra: &[&str]) -> Run {
    let line = line.replace("hall ", &format!("{} ", hall_bin().display()));
    let mut cmd = Command::new(program);
    sb.apply_env(&mut cmd);
    // `; true` keeps the shell alive as the parent: sh may run a last command with exec.
    cmd.args([
        "-c",
        &format!("env -u CLAUDECODE {line}; status=$?; true; exit $status"),
    ])
    .args(extra)
    .current_dir(&sb.repo);
    let out = cmd.output().expect("runs");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// An initialized sandbox with one item and one question waiting for the person.
fn world() -> (Sandbox, String) {
    let sb = Sandbox::initialized();
    let v = sb.hall(&sb.repo, &["new", "--title", "Cap retries"]).ok();
    let id = v["item"].as_str().expect("id").to_string();
    sb.hall(&sb.repo, &["ask", "Keep the old limit?", "--item", &id])
        .ok();
    std::fs::write(
        sb.root.join("v.json"),
        serde_json::json!({"verdict": "approve", "summary": "fine", "lenses": hallmark_tests::sandbox::lenses(), "findings": []}).to_string(),
    )
    .expect("verdict file");
    (sb, id)
}

/// The commands that act as a person, each as an agent would try it.
fn person_verbs(id: &str, sb: &Sandbox) -> Vec<String> {
    let v = sb.root.join("v.json").display().to_string();
    [
        format!("hall verdict {id} --file {v}"),
        format!("hall retry {id} --reason 'one more'"),
        "hall answer Q-1 yes".into(),
        "hall inbox 1 --dismiss".into(),
        "hall inbox --clear".into(),
        "hall budget --grant 5M".into(),
        "hall budget --set daily=99M".into(),
        "hall config set --user sessions.confine=false".into(),
        "hall config set merge.mode=auto".into(),
        "hall web token create mine".into(),
        "hall web token list".into(),
        "hall web --no-open".into(),
        "hall setup claude --dry-run".into(),
        "hall daemon start".into(),
        "hall daemon run --until-idle".into(),
        "hall daemon stop".into(),
        "hall library review --accept L-0001".into(),
        "hall library retire L-0001".into(),
        "hall init --base main".into(),
    ]
    .to_vec()
}

fn refused(run: &Run, what: &str) -> Value {
    let v: Value = serde_json::from_str(run.stdout.trim())
        .unwrap_or_else(|e| panic!("{what}: not JSON ({e}): {run:?}"));
    assert_eq!(v["error"]["code"], "GATE_DENIED", "{what}: {run:?}");
    assert_eq!(run.code, 5, "{what}: {run:?}");
    let next = v["error"]["next"].as_array().expect("next");
    assert!(
        next.iter()
            .any(|n| n.as_str().is_some_and(|n| n.starts_with("hall "))),
        "{what}: the fix is the command, from the person's own terminal: {v}"
    );
    v
}

#[test]
fn every_person_verb_is_refused_under_a_program_named_claude_with_claudecode_unset() {
    let (sb, id) = world();
    let claude = agent(&sb, "claude");
    let before = state(&sb);
    for line in person_verbs(&id, &sb) {
        let run = under(&sb, &claude, &line, &[]);
        let v = refused(&run, &line);
        let message = v["error"]["message"].as_str().unwrap_or("");
        assert!(
            message.contains("started by an agent: `claude`"),
            "{line}: {message}"
        );
    }
    assert_eq!(state(&sb), before, "a refused command writes nothing");
    // The same verbs from the person's shell: the answer is recorded as theirs.
    let run = under(&sb, Path::new("/bin/sh"), "hall answer Q-1 yes", &[]);
    assert_eq!(run.code, 0, "{run:?}");
    let log = sb.hall(&sb.repo, &["log", &id, "--kind", "answered"]).ok();
    assert_eq!(log["events"][0]["actor"], "you", "{log}");
}

#[test]
fn an_agent_is_known_by_its_link_its_package_or_its_name_and_its_own_verbs_are_recorded_as_its() {
    let (sb, id) = world();
    let v = sb.root.join("v.json").display().to_string();
    let line = format!("hall verdict {id} --file {v}");
    let before = state(&sb);
    // A link named `claude` to a shell: the system names the process by the link.
    let link = sb.root.join("agents/link/claude");
    std::fs::create_dir_all(link.parent().expect("dir")).expect("mkdir");
    std::os::unix::fs::symlink("/bin/sh", &link).expect("symlink");
    refused(&under(&sb, &link, &line, &[]), "under a link named claude");
    // node running Claude Code's package.
    let node = agent(&sb, "node");
    let cli = "/usr/lib/node_modules/@anthropic-ai/claude-code/cli.js";
    let run = under(&sb, &node, &line, &[cli]);
    let m = refused(&run, "node running claude-code");
    assert!(
        m["error"]["message"]
            .as_str()
            .is_some_and(|s| s.contains("@anthropic-ai/claude-code")),
        "{m}"
    );
    // Another agent CLI, two shells down.
    let codex = agent(&sb, "codex");
    refused(
        &under(&sb, &codex, &format!("sh -c \"{line}\""), &[]),
        "under codex, two shells down",
    );
    assert_eq!(state(&sb), before);
    // An agent's own verb, run with the environment stripped: recorded as the agent's.
    let claude = agent(&sb, "claude");
    let run = under(
        &sb,
        &claude,
        &format!("hall ask 'Which limit?' --item {id}"),
        &[],
    );
    assert_eq!(run.code, 0, "{run:?}");
    let log = sb.hall(&sb.repo, &["log", &id, "--kind", "asked"]).ok();
    let actors: Vec<&str> = log["events"]
        .as_array()
        .expect("events")
        .iter()
        .filter_map(|e| e["actor"].as_str())
        .collect();
    assert_eq!(actors, ["you", "agent"], "{log}");
}

#[test]
fn the_environment_can_only_refuse() {
    let (sb, id) = world();
    let v = sb.root.join("v.json").display().to_string();
    let before = state(&sb);
    let verdict = ["verdict", id.as_str(), "--file", v.as_str()];
    let run = sb.hall_env(&sb.repo, &verdict, &[("HALL_ACTOR", "fixer")]);
    let e = refused(&run, "as the fixer");
    assert!(
        e["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("the loop's fixer")),
        "{e}"
    );
    let run = sb.hall_env(&sb.repo, &verdict, &[("CLAUDECODE", "1")]);
    let e = refused(&run, "with CLAUDECODE");
    assert!(
        e["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("CLAUDECODE")),
        "{e}"
    );
    assert_eq!(state(&sb), before);
}

#[test]
fn a_sandbox_or_a_hidden_config_directory_is_no_person() {
    let (sb, id) = world();
    let v = sb.root.join("v.json").display().to_string();
    let hall = hall_bin().display().to_string();
    let config = sb.config_dir().display().to_string();
    let before = state(&sb);
    // Under bubblewrap, as Claude Code runs every Bash command.
    let bwrap = Command::new("bwrap").arg("--version").output();
    assert!(
        bwrap.is_ok_and(|o| o.status.success()),
        "bubblewrap is needed for this test (apt install bubblewrap)"
    );
    let mut cmd = Command::new("bwrap");
    sb.apply_env(&mut cmd);
    cmd.args(["--dev-bind", "/", "/", "--tmpfs", &config, "--", &hall])
        .args(["verdict", &id, "--file", &v])
        .current_dir(&sb.repo);
    let out = cmd.output().expect("bwrap runs");
    let run = Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    let e = refused(&run, "under bwrap");
    assert!(
        e["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("sandbox")),
        "{e}"
    );
    // No sandbox program among the parents, only the config directory hidden by an
    // empty file system mounted over it (a user namespace of the test's own).
    let script = format!("mount -t tmpfs none {config} && exec {hall} verdict {id} --file {v}");
    let mut cmd = Command::new("unshare");
    sb.apply_env(&mut cmd);
    cmd.args(["-rm", "sh", "-c", &script]).current_dir(&sb.repo);
    let out = cmd.output().expect("unshare runs");
    let run = Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    let e = refused(&run, "with the config directory hidden");
    assert!(
        e["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("private directory") && m.contains("mounted over")),
        "{e}"
    );
    assert_eq!(state(&sb), before);
}
