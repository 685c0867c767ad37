//! What the attacks aim at, read before and after each case: origin's refs, the
//! repository's notes and replacement refs, the base branch, the protected trees; and
//! whether a commit verifies in a fresh clone, as CI would check it.

use super::*;

/// What the attacks aim at, read from the files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    pub origin: BTreeMap<String, String>,
    pub notes: BTreeMap<String, String>,
    pub base: BTreeMap<String, String>,
    /// Each watched path's content (see [`Case::watch`]).
    pub files: BTreeMap<String, String>,
    /// Journal lines recorded as `you`, and the user config directory's tree.
    pub person: BTreeMap<String, String>,
}

/// Every file under `p` (or `p` itself) with its bytes, symbolic links with their
/// targets, and `p`'s absence, keyed under `label`.
fn tree_of(p: &Path, label: &str, out: &mut BTreeMap<String, String>) {
    let Ok(meta) = std::fs::symlink_metadata(p) else {
        out.insert(label.to_string(), "(absent)".into());
        return;
    };
    if meta.file_type().is_symlink() {
        let target = std::fs::read_link(p).unwrap_or_default();
        out.insert(label.to_string(), format!("-> {}", target.display()));
    } else if meta.is_dir() {
        out.insert(label.to_string(), "(dir)".into());
        let Ok(entries) = std::fs::read_dir(p) else {
            return;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            tree_of(&e.path(), &format!("{label}/{name}"), out);
        }
    } else {
        let bytes = std::fs::read(p).unwrap_or_default();
        out.insert(
            label.to_string(),
            String::from_utf8_lossy(&bytes).into_owned(),
        );
    }
}

/// Every ref under `prefixes` in a git directory: loose files and packed-refs lines.
fn refs_under(git_dir: &Path, prefixes: &[&str]) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    fn walk(dir: &Path, rel: &str, out: &mut BTreeMap<String, String>) {
        let Ok(meta) = std::fs::symlink_metadata(dir) else {
            return;
        };
        if meta.is_file() || meta.file_type().is_symlink() {
            let v = std::fs::read_to_string(dir).unwrap_or_else(|_| "(unreadable)".into());
            out.insert(rel.to_string(), v.trim().to_string());
            return;
        }
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            walk(&e.path(), &format!("{rel}/{name}"), out);
        }
    }
    for p in prefixes {
        walk(&git_dir.join(p), p, &mut out);
    }
    let packed = std::fs::read_to_string(git_dir.join("packed-refs")).unwrap_or_default();
    for line in packed.lines() {
        if let Some((sha, name)) = line.split_once(' ')
            && prefixes.iter().any(|p| name.starts_with(p))
        {
            out.insert(format!("packed:{name}"), sha.to_string());
        }
    }
    out
}

impl World {
    /// Reads what the attacks aim at.
    pub fn snapshot(&self, case: &Case) -> Snapshot {
        let common = PathBuf::from(&self.vars["common"]);
        let mut notes = refs_under(&common, &["refs/notes", "refs/replace"]);
        let listed = self
            .command("git", &self.sb.repo)
            .args(["notes", "--ref=hallmark", "list"])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).to_string())
            .unwrap_or_default();
        notes.insert("(git notes --ref=hallmark list)".into(), listed);
        let mut base = refs_under(&common, &["refs/heads/main", "refs/remotes/origin/main"]);
        base.insert(
            "(main checkout HEAD)".into(),
            std::fs::read_to_string(common.join("HEAD")).unwrap_or_default(),
        );
        let head = self
            .command("git", &self.sb.repo)
            .args(["rev-parse", "HEAD"])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).to_string())
            .unwrap_or_default();
        base.insert("(main checkout HEAD commit)".into(), head);
        let mut files = BTreeMap::new();
        for w in &case.watch {
            let p = PathBuf::from(self.fill(w, &self.wt));
            tree_of(&p, &k_path(&p), &mut files);
        }
        let mut person = BTreeMap::new();
        let journal = PathBuf::from(&self.vars["journal"]);
        let mut logs = vec![journal.join("events.jsonl")];
        if let Ok(items) = std::fs::read_dir(journal.join("items")) {
            logs.extend(items.flatten().map(|e| e.path().join("events.jsonl")));
        }
        for log in logs {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            let yours: Vec<&str> = text
                .lines()
                .filter(|l| serde_json::from_str::<Value>(l).is_ok_and(|v| v["actor"] == "you"))
                .collect();
            person.insert(k_path(&log), yours.join("\n"));
        }
        let config = self.sb.config_dir();
        tree_of(&config, "(config dir)", &mut person);
        Snapshot {
            origin: refs_under(&self.sb.origin, &["refs"]),
            notes,
            base,
            files,
            person,
        }
    }

    /// Whether `hall verify` accepts `sha` in a fresh clone of origin with no journal,
    /// against the signers the base branch lists (the CI check).
    pub fn verified_in_clone(&self, sha: &str) -> bool {
        let clone = self.sb.root.join("ci-clone");
        let _ = std::fs::remove_dir_all(&clone);
        let ok = self
            .command("git", &self.sb.root)
            .args(["clone", "-q"])
            .arg(&self.sb.origin)
            .arg(&clone)
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            return false;
        }
        let quiet = |args: &[&str]| {
            let _ = self
                .command("git", &clone)
                .args(args)
                .stderr(Stdio::null())
                .status();
        };
        let notes = "+refs/notes/hallmark:refs/notes/hallmark";
        let here = self.sb.repo.display().to_string();
        quiet(&["fetch", "-q", "origin", notes]);
        // The commit may only exist in this repository (a note write): fetch it, and the
        // notes written here.
        quiet(&["fetch", "-q", &here, sha]);
        quiet(&["fetch", "-q", &here, notes]);
        let mut cmd = Command::new(crate::sandbox::hall_bin());
        self.sb.apply_env(&mut cmd);
        let out = cmd
            .args(["verify", sha, "--base", "main"])
            .current_dir(&clone)
            .env("HALL_CONFIG_DIR", self.sb.root.join("ci-no-config"))
            .output()
            .expect("hall verify runs");
        out.status.success()
    }
}
