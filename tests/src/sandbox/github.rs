//! The sandbox's GitHub (the simulator, driven by the real gh) and shipped items written
//! straight into its journal, for the Delivery office's tests.

use std::path::Path;

use hallmark_core::item::Event;
use serde_json::{Value, json};

use super::Sandbox;

impl Sandbox {
    /// The GitHub simulator serving `acme/widgets` from this sandbox's origin, started on
    /// first use, with the real gh first on `PATH`: every later command of the sandbox
    /// (hall, and what hall runs) talks to it.
    pub fn github(&self) -> &crate::github::GitHub {
        self.github.get_or_init(|| {
            let gh = crate::github::gh_binary().unwrap_or_else(|| {
                panic!(
                    "the real gh is not installed: run `python3 -m venv tests/gh/venv && \
                     tests/gh/venv/bin/pip install -r tests/gh/requirements.txt` (or set {})",
                    crate::github::GH_BIN_ENV
                )
            });
            let dest = self.bin.join(format!("gh{}", std::env::consts::EXE_SUFFIX));
            // A link, not a copy: the binary weighs about 50 MB.
            #[cfg(unix)]
            std::os::unix::fs::symlink(&gh, &dest).expect("link gh");
            #[cfg(not(unix))]
            std::fs::copy(&gh, &dest).expect("copy gh");
            crate::github::GitHub::start(&self.origin, "acme/widgets", &self.root)
                .expect("the GitHub simulator starts")
        })
    }

    /// Writes an item that went through the loop and shipped, straight into the journal
    /// (for tests that need many of them): created on `branch` with `worktree`, frozen,
    /// hallmarked and shipped at `sha`, with `pr` when the ship opened one. Returns its id.
    pub fn shipped_item(
        &self,
        branch: &str,
        worktree: Option<&Path>,
        sha: &str,
        pr: Option<&str>,
    ) -> String {
        self.shipped_item_on(branch, "main", worktree, sha, pr)
    }

    /// [`Sandbox::shipped_item`] for an item whose base is `base` (another item's
    /// branch, for a stacked PR).
    pub fn shipped_item_on(
        &self,
        branch: &str,
        base: &str,
        worktree: Option<&Path>,
        sha: &str,
        pr: Option<&str>,
    ) -> String {
        let line = |kind: Value| -> Event {
            let mut line = kind;
            line["v"] = 2.into();
            line["t"] = self.now.clone().into();
            line["actor"] = "shipper".into();
            serde_json::from_value(line).expect("a valid event")
        };
        let (id, _) = self
            .journal()
            .create_item(|id| {
                let mut events = vec![
                    line(json!({"event": "created", "title": format!("Ship {branch}"), "branch": branch,
                        "base": base, "worktree": worktree.map(|w| w.display().to_string()), "source": "new"})),
                    line(json!({"event": "ready", "sha": sha, "round": 1})),
                ];
                for e in &mut events {
                    e.item = Some(id);
                }
                Ok::<_, hallmark_core::journal::JournalError>(events)
            })
            .expect("item");
        let id = id.to_string();
        // A real, signed hallmark on the head (the merger verifies what it merges).
        self.strike_on(&id, worktree.unwrap_or(&self.repo), sha, 1, base);
        self.record(
            &id,
            "shipper",
            json!({"event": "shipped", "sha": sha, "pr": pr}),
        );
        id
    }
}
