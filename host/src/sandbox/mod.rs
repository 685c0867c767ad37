//! The operating system's sandbox for what the loop runs on an item's code: its checks,
//! its `setup`, the merge checks, and a fix engine that isn't Claude Code.
//!
//! That code is the agent's own (a test file, a `conftest.py`, a build script, an npm
//! lifecycle script), so it must run where nothing the hallmark depends on can be
//! reached: the signing key, the user's Hallmark config and data, the journal, the
//! user's credentials and sockets, the network. A [`Policy`] says what a run may write,
//! what it must not see at all, and whether it may reach the network; [`Sandbox::wrap`]
//! turns it into a command line for the platform's sandbox:
//!
//! - Linux: bubblewrap. The whole file system is mounted read-only, hidden paths are
//!   covered by empty mounts, the writable places are bound back, and the run gets new
//!   user, PID, IPC, UTS, cgroup and network namespaces (loopback only unless the policy
//!   allows the network), its own `/tmp`, `/dev` and `/proc`, and dies with its parent.
//! - macOS: a Seatbelt profile for `sandbox-exec`, written from the same policy.
//! - Elsewhere (Windows): no sandbox; the caller decides whether a person opted out.
//!
//! Both command lines are built by pure functions, compiled and tested on every
//! platform; which one applies is [`crate::platform::loop_sandbox`]'s choice.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

/// What one confined run may do.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Policy {
    /// The directory the run starts in.
    pub workdir: PathBuf,
    /// Places the run may write (with everything below them).
    pub writable: Vec<PathBuf>,
    /// Places inside writable ones that stay read-only (a checkout's `.git` file, which
    /// says where git's data is for the loop's own later commands).
    pub read_only: Vec<PathBuf>,
    /// Places the run must not see at all: directories appear empty, files empty.
    pub hidden: Vec<PathBuf>,
    /// Places under the system's temporary directory that must stay visible (read-only):
    /// the repository's git data and the tools' directories when they live there.
    pub visible: Vec<PathBuf>,
    /// Whether the run may reach the network beyond loopback.
    pub network: bool,
    /// The temporary directory the run gets (its own, writable); Linux mounts an empty
    /// one on `/tmp` instead.
    pub temp: PathBuf,
}

/// The sandboxes Hallmark knows how to drive.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Sandbox {
    /// bubblewrap, at this path.
    Bubblewrap(PathBuf),
    /// `sandbox-exec`, at this path.
    Seatbelt(PathBuf),
}

/// Why the loop can't confine a run here.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{reason}")]
pub struct Unavailable {
    /// What is missing or broken, in words a person can act on.
    pub reason: String,
    /// The commands that would fix it.
    pub next: Vec<String>,
}

impl Sandbox {
    /// `program args…` inside the sandbox under `policy`. The caller sets the
    /// environment, the standard streams and the process group on the result.
    pub fn wrap(&self, policy: &Policy, program: &str, args: &[String]) -> Command {
        let (p, a) = self.argv(policy, program, args);
        let mut cmd = Command::new(p);
        cmd.args(a).current_dir(&policy.workdir);
        if matches!(self, Sandbox::Seatbelt(_)) {
            cmd.env("TMPDIR", &policy.temp);
        }
        cmd
    }

    /// The program and arguments that run `program args…` inside the sandbox, for
    /// runners that take an argument list (bubblewrap sets `TMPDIR` itself; under
    /// Seatbelt the caller keeps its own).
    pub fn argv(&self, policy: &Policy, program: &str, args: &[String]) -> (String, Vec<String>) {
        let lossy = |v: Vec<OsString>| -> Vec<String> {
            v.into_iter()
                .map(|w| w.to_string_lossy().into_owned())
                .collect()
        };
        match self {
            Sandbox::Bubblewrap(bwrap) => {
                let mut a = lossy(bwrap_args(policy, &existing));
                a.push("--".into());
                a.push(program.into());
                a.extend(args.iter().cloned());
                (bwrap.display().to_string(), a)
            }
            Sandbox::Seatbelt(exec) => {
                let mut a = vec!["-p".to_string(), seatbelt_profile(policy, &existing)];
                a.push(program.into());
                a.extend(args.iter().cloned());
                (exec.display().to_string(), a)
            }
        }
    }

    /// The program's name, for messages.
    pub fn name(&self) -> &'static str {
        match self {
            Sandbox::Bubblewrap(_) => "bubblewrap",
            Sandbox::Seatbelt(_) => "Seatbelt (sandbox-exec)",
        }
    }
}

/// The command for an argument list [`Sandbox::argv`] made (or the platform shell's, for
/// a run the person left unconfined).
pub fn command(program: &str, args: &[String]) -> Command {
    let mut cmd = Command::new(program);
    cmd.args(args);
    cmd
}

/// The sandbox this machine confines the loop's runs with, or why there is none.
pub fn find() -> Result<Sandbox, Unavailable> {
    use crate::platform::LoopSandbox;
    let (kind, program) = crate::platform::loop_sandbox();
    match kind {
        LoopSandbox::Bubblewrap => {
            let Some(path) = on_path(program) else {
                return Err(Unavailable {
                    reason: "bubblewrap (`bwrap`) is not installed, and the loop runs an item's code only inside it".into(),
                    next: vec![
                        "sudo apt install bubblewrap".into(),
                        "hall doctor".into(),
                    ],
                });
            };
            probe_bubblewrap(&path)?;
            Ok(Sandbox::Bubblewrap(path))
        }
        LoopSandbox::Seatbelt => {
            let path = PathBuf::from(program);
            if path.is_file() {
                Ok(Sandbox::Seatbelt(path))
            } else {
                Err(Unavailable {
                    reason: format!("{program} (Seatbelt) is missing"),
                    next: vec!["hall doctor".into()],
                })
            }
        }
        LoopSandbox::None => Err(Unavailable {
            reason: "this system has no sandbox the loop can run an item's code in".into(),
            next: vec![
                "hall config set --user loop.confine=false".into(),
                "hall doctor".into(),
            ],
        }),
    }
}

/// `program` found in a directory on `PATH`.
fn on_path(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(program))
        .find(|p| crate::platform::is_executable(p))
}

/// What is on the file system at `p`: a directory, another kind of file, or nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Entry {
    Dir,
    File,
    Missing,
}

fn existing(p: &Path) -> Entry {
    match std::fs::metadata(p) {
        Ok(m) if m.is_dir() => Entry::Dir,
        Ok(_) => Entry::File,
        Err(_) => Entry::Missing,
    }
}

/// The system's temporary directory, where Linux mounts the run's own empty one.
const LINUX_TMP: &str = "/tmp";

fn under(p: &Path, root: &Path) -> bool {
    p.starts_with(root)
}

/// One mount of a policy's places, over the read-only root.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Mount {
    /// A place under `/tmp` bound back read-only (the run's `/tmp` is empty).
    Visible,
    /// A writable place bound back.
    Writable,
    /// A place inside a writable one kept read-only.
    ReadOnly,
    /// A place covered by an empty one.
    Hidden,
}

/// The mounts for `policy`, in the order they must be made. A mount covers whatever was
/// mounted at or below its path before it, so the deeper path is mounted later and its
/// rule wins, whichever kind each is: a checkout writable inside a hidden cache, a
/// `deny_read` file hidden inside that checkout, the journal hidden inside the
/// repository's git data when a run's checkout is the repository itself. At one path a
/// read-only rule wins over a writable one, and a hidden one over both. A place that is
/// already empty (inside a hidden directory, or under the run's own `/tmp`, with nothing
/// bound back between) is not mounted again, and a visible place inside a hidden one
/// stays hidden.
fn mounts(policy: &Policy, entry: &dyn Fn(&Path) -> Entry) -> Vec<(PathBuf, Mount, Entry)> {
    let tmp = Path::new(LINUX_TMP);
    let hidden_at_or_above = |p: &Path| policy.hidden.iter().any(|h| p.starts_with(h));
    let mut all: Vec<(PathBuf, Mount, Entry)> = Vec::new();
    let mut add = |paths: &[PathBuf], kind: Mount, keep: &dyn Fn(&Path, Entry) -> bool| {
        for p in paths {
            let e = entry(p);
            if e != Entry::Missing && keep(p, e) {
                all.push((p.clone(), kind, e));
            }
        }
    };
    add(&policy.visible, Mount::Visible, &|p, _| {
        under(p, tmp) && !hidden_at_or_above(p)
    });
    add(&policy.writable, Mount::Writable, &|_, e| e == Entry::Dir);
    add(&policy.read_only, Mount::ReadOnly, &|_, _| true);
    add(&policy.hidden, Mount::Hidden, &|_, _| true);
    all.sort_by(|a, b| {
        (a.0.components().count(), a.1, &a.0).cmp(&(b.0.components().count(), b.1, &b.0))
    });
    all.dedup_by(|b, a| a.0 == b.0 && a.1 == b.1);
    // What a path shows without a mount of its own: what the nearest mount above it
    // shows, or, with none, the read-only root (or, under `/tmp`, the run's empty one).
    // A mount that would show the same again is left out.
    let mut made: Vec<(PathBuf, Mount, Entry)> = Vec::new();
    for (p, kind, e) in all {
        let above = made
            .iter()
            .filter(|(q, _, _)| p.starts_with(q) && *q != p)
            .max_by_key(|(q, _, _)| q.components().count())
            .map(|(_, k, _)| *k);
        let shown_already = match (kind, above) {
            // A visible place only undoes the empty `/tmp`: inside any other mount it
            // shows what that mount shows, as it would outside `/tmp`.
            (Mount::Visible, above) => above.is_some(),
            (Mount::Hidden, Some(above)) => above == Mount::Hidden,
            // Under the run's empty `/tmp` a hidden file is not there at all; a hidden
            // directory is still mounted, to be made read-only.
            (Mount::Hidden, None) => under(&p, tmp) && e == Entry::File,
            _ => false,
        };
        if shown_already {
            continue;
        }
        made.push((p, kind, e));
    }
    made
}

/// bubblewrap's arguments for `policy`, with `entry` telling what exists at a path (the
/// file system, or a table in tests): the read-only root, the run's own `/dev`, `/proc`
/// and `/tmp`, then [`mounts`] in their order, and last each hidden directory made
/// read-only (the places bound inside it stay as they were bound).
pub fn bwrap_args(policy: &Policy, entry: &dyn Fn(&Path) -> Entry) -> Vec<OsString> {
    let mut a: Vec<OsString> = Vec::new();
    let mut push = |words: &[&std::ffi::OsStr]| a.extend(words.iter().map(|w| w.to_os_string()));
    push(&[
        "--die-with-parent".as_ref(),
        "--new-session".as_ref(),
        "--unshare-all".as_ref(),
    ]);
    if policy.network {
        push(&["--share-net".as_ref()]);
    }
    push(&["--ro-bind".as_ref(), "/".as_ref(), "/".as_ref()]);
    push(&["--dev".as_ref(), "/dev".as_ref()]);
    push(&["--proc".as_ref(), "/proc".as_ref()]);
    let tmp = Path::new(LINUX_TMP);
    push(&[
        "--perms".as_ref(),
        "1777".as_ref(),
        "--tmpfs".as_ref(),
        tmp.as_os_str(),
    ]);
    if entry(Path::new("/var/tmp")) == Entry::Dir {
        push(&[
            "--perms".as_ref(),
            "1777".as_ref(),
            "--tmpfs".as_ref(),
            "/var/tmp".as_ref(),
        ]);
    }
    let made = mounts(policy, entry);
    for (p, kind, e) in &made {
        let p = p.as_os_str();
        match (kind, e) {
            (Mount::Visible | Mount::ReadOnly, _) => push(&["--ro-bind".as_ref(), p, p]),
            (Mount::Writable, _) => push(&["--bind".as_ref(), p, p]),
            (Mount::Hidden, Entry::Dir) => push(&["--tmpfs".as_ref(), p]),
            (Mount::Hidden, _) => push(&["--ro-bind".as_ref(), "/dev/null".as_ref(), p]),
        }
    }
    // A hidden directory is an empty one nothing can be written into (a run that could
    // would only fool itself, and the tools it runs, with a journal or a key of its own).
    for (p, kind, e) in &made {
        if *kind == Mount::Hidden && *e == Entry::Dir {
            push(&["--remount-ro".as_ref(), p.as_os_str()]);
        }
    }
    push(&[
        "--setenv".as_ref(),
        "TMPDIR".as_ref(),
        tmp.as_os_str(),
        "--chdir".as_ref(),
        policy.workdir.as_os_str(),
    ]);
    a
}

/// A string literal in Seatbelt's profile language.
fn sb_quote(p: &Path) -> String {
    let s = p.display().to_string();
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

/// The Seatbelt profile for `policy`. In Seatbelt a later rule wins over an earlier one
/// it overlaps, so the profile allows by default, then denies every write, then allows
/// the writable places back, then denies what stays read-only and what is hidden.
pub fn seatbelt_profile(policy: &Policy, entry: &dyn Fn(&Path) -> Entry) -> String {
    let mut p = String::from("(version 1)\n(allow default)\n");
    p.push_str("(deny file-write*)\n");
    p.push_str("(allow file-write*\n");
    let mut writable: Vec<&PathBuf> = policy.writable.iter().collect();
    writable.push(&policy.temp);
    for w in writable {
        p.push_str(&format!("  (subpath {})\n", sb_quote(w)));
    }
    p.push_str(
        "  (literal \"/dev/null\") (literal \"/dev/zero\") (literal \"/dev/dtracehelper\")\n",
    );
    p.push_str("  (regex #\"^/dev/tty\") (regex #\"^/dev/fd/\"))\n");
    for r in &policy.read_only {
        p.push_str(&format!("(deny file-write* (literal {}))\n", sb_quote(r)));
    }
    for h in &policy.hidden {
        let rule = match entry(h) {
            Entry::File => "literal",
            _ => "subpath",
        };
        p.push_str(&format!(
            "(deny file-read* file-write* ({rule} {}))\n",
            sb_quote(h)
        ));
    }
    // The keychain: a run may not ask the security server for the user's secrets.
    p.push_str("(deny mach-lookup (global-name \"com.apple.SecurityServer\") (global-name \"com.apple.secd\"))\n");
    if !policy.network {
        p.push_str("(deny network-outbound (remote ip))\n");
        p.push_str("(allow network-outbound (remote ip \"localhost:*\"))\n");
        p.push_str("(deny network-bind)\n(allow network-bind (local ip \"localhost:*\"))\n");
    }
    // Another process's socket (an SSH or GPG agent, a D-Bus bus) is out of reach; the
    // run's own sockets, in its writable places, are not.
    p.push_str("(deny network-outbound (remote unix-socket))\n");
    p.push_str("(allow network-outbound (remote unix-socket (subpath ");
    p.push_str(&sb_quote(&policy.temp));
    p.push_str(")))\n");
    p
}

/// Whether bubblewrap at `bwrap` really works here (user namespaces may be off), once
/// per process: `Ok` or the reason, in bubblewrap's own words.
pub fn probe_bubblewrap(bwrap: &Path) -> Result<(), Unavailable> {
    static SEEN: std::sync::OnceLock<Result<(), Unavailable>> = std::sync::OnceLock::new();
    SEEN.get_or_init(|| {
        let out = Command::new(bwrap)
            .args([
                "--die-with-parent",
                "--unshare-all",
                "--ro-bind",
                "/",
                "/",
                "--dev",
                "/dev",
                "--proc",
                "/proc",
                "--",
                "true",
            ])
            .stdin(std::process::Stdio::null())
            .output();
        match out {
            Ok(o) if o.status.success() => Ok(()),
            Ok(o) => Err(Unavailable {
                reason: format!(
                    "bubblewrap can't make a sandbox here: {}",
                    String::from_utf8_lossy(&o.stderr).trim()
                ),
                next: vec![
                    "sysctl kernel.unprivileged_userns_clone".into(),
                    "hall doctor".into(),
                ],
            }),
            Err(e) => Err(Unavailable {
                reason: format!("bubblewrap could not be started: {e}"),
                next: vec!["hall doctor".into()],
            }),
        }
    })
    .clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy_of_a_loop_checkout() -> Policy {
        Policy {
            workdir: "/cache/hallmark/checkouts/r/H-0001".into(),
            writable: vec!["/cache/hallmark/checkouts/r/H-0001".into()],
            read_only: vec!["/cache/hallmark/checkouts/r/H-0001/.git".into()],
            hidden: vec![
                "/home/u/.config/hallmark".into(),
                "/cache/hallmark".into(),
                "/home/u/.netrc".into(),
                "/home/u/.nothing".into(),
            ],
            visible: vec!["/tmp/t/repo/.git".into(), "/usr/bin".into()],
            network: false,
            temp: "/tmp/run".into(),
        }
    }

    fn table_of_a_loop_checkout(p: &Path) -> Entry {
        let s = p.to_string_lossy();
        if s.ends_with(".netrc") || s.ends_with("/.git") && s.contains("checkouts") {
            Entry::File
        } else if s.contains("nothing") {
            Entry::Missing
        } else {
            Entry::Dir
        }
    }

    fn words(a: &[OsString]) -> Vec<String> {
        a.iter().map(|w| w.to_string_lossy().into_owned()).collect()
    }

    fn position(w: &[String], seq: &[&str]) -> usize {
        w.windows(seq.len())
            .position(|win| win.iter().zip(seq).all(|(a, b)| a == b))
            .unwrap_or_else(|| panic!("{seq:?} not in {w:?}"))
    }

    #[test]
    fn bubblewrap_hides_before_it_binds_back_and_keeps_the_git_file_read_only() {
        let w = words(&bwrap_args(
            &policy_of_a_loop_checkout(),
            &table_of_a_loop_checkout,
        ));
        let root = position(&w, &["--ro-bind", "/", "/"]);
        let tmp = position(&w, &["--tmpfs", "/tmp"]);
        let repo = position(&w, &["--ro-bind", "/tmp/t/repo/.git", "/tmp/t/repo/.git"]);
        let cache = position(&w, &["--tmpfs", "/cache/hallmark"]);
        let netrc = position(&w, &["--ro-bind", "/dev/null", "/home/u/.netrc"]);
        let wt = "/cache/hallmark/checkouts/r/H-0001";
        let bind = position(&w, &["--bind", wt, wt]);
        let git = format!("{wt}/.git");
        let ro = position(&w, &["--ro-bind", &git, &git]);
        assert!(root < tmp && tmp < repo && tmp < cache && cache < bind && bind < ro);
        assert!(netrc < bind);
        let sealed = position(&w, &["--remount-ro", "/cache/hallmark"]);
        assert!(
            ro < sealed,
            "the hidden cache is sealed after the checkout is bound in it"
        );
        assert!(w.contains(&"--unshare-all".to_string()));
        assert!(
            !w.contains(&"--share-net".to_string()),
            "no network by default"
        );
        assert!(
            !w.iter().any(|x| x.contains("nothing")),
            "a missing path is skipped"
        );
        // /usr/bin is not under /tmp: visible already, not bound again.
        assert!(!w.contains(&"/usr/bin".to_string()));
        let mut net = policy_of_a_loop_checkout();
        net.network = true;
        assert!(
            words(&bwrap_args(&net, &table_of_a_loop_checkout))
                .contains(&"--share-net".to_string())
        );
    }

    /// Every `--remount-ro` target is a place this command line mounted an empty
    /// directory on (bubblewrap fails on any other).
    fn remounts_only_what_it_hid(w: &[String]) {
        for (i, word) in w.iter().enumerate() {
            if word == "--remount-ro" {
                let p = &w[i + 1];
                assert!(
                    w.windows(2).any(|x| x[0] == "--tmpfs" && x[1] == *p),
                    "{p} is remounted but was never mounted: {w:?}"
                );
            }
        }
    }

    #[test]
    fn the_deeper_rule_wins_whichever_kind_it_is() {
        // A run whose checkout is the repository itself, under /tmp: the journal inside
        // its git data and a `deny_read` file inside the checkout stay hidden though the
        // checkout is bound after them; the user's config, under /tmp too but under
        // nothing visible, is an empty read-only directory without its key file.
        let repo = "/tmp/t/repo";
        let policy = Policy {
            workdir: repo.into(),
            writable: vec![repo.into()],
            read_only: vec![format!("{repo}/.git").into()],
            hidden: vec![
                format!("{repo}/.git/hallmark").into(),
                format!("{repo}/.env").into(),
                "/tmp/t/config".into(),
                "/tmp/t/config/signing_ed25519".into(),
                "/home/u/.config/hallmark".into(),
                "/home/u/.config/hallmark/signing_ed25519".into(),
            ],
            visible: vec![
                format!("{repo}/.git").into(),
                "/tmp/t/home".into(),
                "/tmp/t/home/bin".into(),
                "/tmp/t/config/bin".into(),
            ],
            network: false,
            temp: "/tmp/run".into(),
        };
        let table = |p: &Path| {
            let s = p.to_string_lossy();
            if s.ends_with(".env") || s.ends_with("ed25519") {
                Entry::File
            } else {
                Entry::Dir
            }
        };
        let w = words(&bwrap_args(&policy, &table));
        let bind = position(&w, &["--bind", repo, repo]);
        let git = format!("{repo}/.git");
        let ro = position(&w, &["--ro-bind", &git, &git]);
        let journal = position(&w, &["--tmpfs", &format!("{repo}/.git/hallmark")]);
        let env = position(&w, &["--ro-bind", "/dev/null", &format!("{repo}/.env")]);
        assert!(bind < ro && ro < journal && bind < env, "{w:?}");
        assert_eq!(
            w.iter().filter(|x| **x == git).count(),
            2,
            "the git data is bound once, read-only (visible adds nothing inside the checkout)"
        );
        position(&w, &["--ro-bind", "/tmp/t/home", "/tmp/t/home"]);
        assert!(
            !w.contains(&"/tmp/t/home/bin".to_string()),
            "inside a visible one"
        );
        position(&w, &["--tmpfs", "/tmp/t/config"]);
        position(&w, &["--remount-ro", "/tmp/t/config"]);
        assert!(
            !w.iter().any(|x| x.starts_with("/tmp/t/config/")),
            "a visible place inside a hidden one stays hidden, and the key isn't there: {w:?}"
        );
        position(&w, &["--tmpfs", "/home/u/.config/hallmark"]);
        assert!(
            !w.contains(&"/home/u/.config/hallmark/signing_ed25519".to_string()),
            "inside a hidden directory the key is not there at all"
        );
        remounts_only_what_it_hid(&w);
        remounts_only_what_it_hid(&words(&bwrap_args(
            &policy_of_a_loop_checkout(),
            &table_of_a_loop_checkout,
        )));
    }

    /// The same rules through the real bubblewrap: what a run inside sees and may write.
    #[cfg(target_os = "linux")]
    #[test]
    fn bubblewrap_keeps_every_rule_where_they_nest() {
        let bwrap = find().unwrap_or_else(|e| {
            panic!("bubblewrap is needed here ({e}): run tests/setup, which installs it")
        });
        let t = tempfile::tempdir().unwrap();
        let t = crate::platform::canonicalize(t.path()).unwrap();
        let mk = |rel: &str, text: &str| {
            let p = t.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, text).unwrap();
            p
        };
        mk("repo/src/a.txt", "code\n");
        mk("repo/.env", "TOKEN=secret\n");
        mk("repo/.git/HEAD", "ref: refs/heads/main\n");
        mk("repo/.git/hallmark/events.jsonl", "{}\n");
        mk("home/.netrc", "password secret\n");
        mk("config/signing_ed25519", "PRIVATE KEY\n");
        mk("cache/secret", "secret\n");
        mk("cache/checkouts/H-1/b.txt", "loop\n");
        let p = |rel: &str| t.join(rel);
        let policy = Policy {
            workdir: p("repo"),
            writable: vec![p("repo"), p("cache/checkouts/H-1")],
            read_only: vec![p("repo/.git")],
            hidden: vec![
                p("repo/.git/hallmark"),
                p("repo/.env"),
                p("home/.netrc"),
                p("config"),
                p("config/signing_ed25519"),
                p("cache"),
            ],
            visible: vec![p("repo/.git"), p("home")],
            network: false,
            temp: std::env::temp_dir(),
        };
        let script = r#"
for f in repo/src/a.txt repo/.env repo/.git/HEAD repo/.git/hallmark/events.jsonl home/.netrc config/signing_ed25519 cache/secret cache/checkouts/H-1/b.txt; do
  if [ -s "$T/$f" ]; then echo "reads $f"; else echo "not $f"; fi
done
for d in repo repo/.git repo/.git/hallmark cache cache/checkouts/H-1 home; do
  if touch "$T/$d/new" 2>/dev/null; then echo "writes $d"; else echo "not $d"; fi
done
"#;
        let mut cmd = bwrap.wrap(&policy, "sh", &["-c".into(), script.into()]);
        let out = cmd.env("T", &t).output().unwrap();
        let said = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{said}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let expected = [
            "reads repo/src/a.txt",
            "not repo/.env",
            "reads repo/.git/HEAD",
            "not repo/.git/hallmark/events.jsonl",
            "not home/.netrc",
            "not config/signing_ed25519",
            "not cache/secret",
            "reads cache/checkouts/H-1/b.txt",
            "writes repo",
            "not repo/.git",
            "not repo/.git/hallmark",
            "not cache",
            "writes cache/checkouts/H-1",
            "not home",
        ];
        assert_eq!(said.lines().collect::<Vec<_>>(), expected);
    }

    #[test]
    fn the_seatbelt_profile_denies_after_it_allows() {
        let p = seatbelt_profile(&policy_of_a_loop_checkout(), &table_of_a_loop_checkout);
        let allow = p.find("(allow file-write*").unwrap();
        let deny_all = p.find("(deny file-write*)").unwrap();
        let hidden = p
            .find("(deny file-read* file-write* (subpath \"/home/u/.config/hallmark\"))")
            .unwrap();
        let netrc = p
            .find("(deny file-read* file-write* (literal \"/home/u/.netrc\"))")
            .unwrap();
        let git = p
            .find("(deny file-write* (literal \"/cache/hallmark/checkouts/r/H-0001/.git\"))")
            .unwrap();
        assert!(deny_all < allow && allow < git && git < hidden && hidden < netrc);
        assert!(p.contains("(deny network-outbound (remote ip))"));
        assert!(p.contains("(subpath \"/tmp/run\")"));
        let mut net = policy_of_a_loop_checkout();
        net.network = true;
        assert!(!seatbelt_profile(&net, &table_of_a_loop_checkout).contains("(remote ip))"));
    }

    #[test]
    fn a_quote_in_a_path_stays_inside_its_literal() {
        assert_eq!(sb_quote(Path::new("/a\"b\\c")), "\"/a\\\"b\\\\c\"");
    }
}
