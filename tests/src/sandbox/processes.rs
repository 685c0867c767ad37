//! The processes a sandbox started, and ending them: what makes a test that leaves one
//! behind fail, however it ends.

use std::process::Command;

use serde_json::Value;

use super::Sandbox;

/// Whether process `pid` has exited (gone, or a zombie waiting for its parent).
fn gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
        Err(_) => true,
    }
}

fn kill(pid: u32, signal: &str) {
    let _ = Command::new("kill")
        .args([signal, &pid.to_string()])
        .stderr(std::process::Stdio::null())
        .status();
}

fn wait_gone(pids: &[u32], limit: std::time::Duration) {
    let until = std::time::Instant::now() + limit;
    while pids.iter().any(|p| !gone(*p)) && std::time::Instant::now() < until {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

impl Sandbox {
    /// The processes still running in this sandbox's environment (with its data
    /// directory as `HALL_DATA_DIR`), as `pid command line`. Linux only; elsewhere none.
    pub fn processes(&self) -> Vec<(u32, String)> {
        let marker = format!("HALL_DATA_DIR={}", self.root.join("data").display());
        let mut found = Vec::new();
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return found;
        };
        for e in entries.flatten() {
            let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
                continue;
            };
            if pid == std::process::id() || gone(pid) {
                continue;
            }
            let Ok(env) = std::fs::read(e.path().join("environ")) else {
                continue;
            };
            if env.split(|b| *b == 0).any(|v| v == marker.as_bytes()) {
                let cmd = std::fs::read(e.path().join("cmdline"))
                    .map(|c| {
                        String::from_utf8_lossy(&c)
                            .replace('\0', " ")
                            .trim()
                            .to_string()
                    })
                    .unwrap_or_default();
                found.push((pid, cmd));
            }
        }
        found
    }

    /// Ends every process still running in this sandbox now, without failing: for a
    /// test that leaves one behind on purpose (a daemon killed mid-run leaves its run
    /// going). Returns what it had to end, as `pid command line`.
    pub fn reap(&self) -> Vec<String> {
        self.end_processes()
    }

    /// Ends every process this sandbox started; returns those it had to kill that it
    /// didn't know about.
    pub(super) fn end_processes(&self) -> Vec<String> {
        // What the test spawned through the sandbox: known, so ended without complaint.
        let children =
            std::mem::take(&mut *self.children.lock().unwrap_or_else(|e| e.into_inner()));
        for mut child in children {
            let _ = child.kill();
            let _ = child.wait();
        }
        // The background daemon, by its state file: asked to stop, then killed.
        let state = self.root.join("data").join("daemon").join("state.json");
        if let Some(pid) = std::fs::read(&state)
            .ok()
            .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
            .and_then(|v| v["pid"].as_u64())
            .and_then(|p| u32::try_from(p).ok())
            .filter(|p| *p != 0 && !gone(*p))
        {
            kill(pid, "-TERM");
            wait_gone(&[pid], std::time::Duration::from_secs(5));
            kill(pid, "-KILL");
        }
        // Anything else gets a moment to finish on its own (a hook, a run winding down).
        let stray: Vec<u32> = self.processes().into_iter().map(|(p, _)| p).collect();
        wait_gone(&stray, std::time::Duration::from_secs(5));
        let survivors = self.processes();
        for (pid, _) in &survivors {
            kill(*pid, "-KILL");
        }
        survivors
            .into_iter()
            .map(|(pid, cmd)| format!("{pid} `{cmd}`"))
            .collect()
    }

    /// Starts `cmd` in the background (a `hall daemon run`, say); the sandbox ends it
    /// when it is dropped, however the test ends. Returns its pid.
    pub fn spawn(&self, cmd: &mut Command) -> u32 {
        let child = cmd.spawn().expect("the command starts");
        let pid = child.id();
        self.children
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(child);
        pid
    }

    /// Kills what [`Sandbox::spawn`] started as `pid` at once (a crash, as far as it
    /// can tell), and waits for it.
    pub fn kill_spawned(&self, pid: u32) {
        let mut children = self.children.lock().unwrap_or_else(|e| e.into_inner());
        let at = children
            .iter()
            .position(|c| c.id() == pid)
            .expect("a process this sandbox spawned");
        let mut child = children.swap_remove(at);
        child.kill().expect("SIGKILL");
        child.wait().expect("reaped");
    }

    /// Whether what [`Sandbox::spawn`] started as `pid` has exited, with its status.
    pub fn spawned_exit(&self, pid: u32) -> Option<std::process::ExitStatus> {
        let mut children = self.children.lock().unwrap_or_else(|e| e.into_inner());
        let child = children
            .iter_mut()
            .find(|c| c.id() == pid)
            .expect("a process this sandbox spawned");
        child.try_wait().expect("try_wait")
    }
}
