//! What the gate analysis asks of the world, answered for this repository and this
//! session: git aliases and scripts for reading a command ([`HookContext`]), and where a
//! place is, what is protected, and whether a commit carries a hallmark ([`HookWorld`]).
//! Each answer is read only when a finding needs it.

use std::cell::{Cell, OnceCell};
use std::path::{Path, PathBuf};

use crate::gate::{Access, Effect, GateContext, Place, PlaceKind, World};
use crate::git::{self, Repo};
use crate::hooks::Hook;
use crate::hooks::glob::{self, Budget};
use crate::hooks::protect::{Protection, absolute, inside_git_dir, resolve};

/// The most of a script the strict guard reads to look for push or release.
const MAX_SCRIPT: u64 = 256 * 1024;

/// How the command analysis learns about this repository: git aliases (asked of git
/// itself, only when a subcommand is not one of git's own), scripts, the ship command.
pub(super) struct HookContext<'a> {
    pub(super) cwd: &'a Path,
    pub(super) ship: &'a str,
    pub(super) allow: &'a [String],
}

impl GateContext for HookContext<'_> {
    fn git_alias(&self, name: &str) -> Option<String> {
        git::alias(self.cwd, name)
    }
    fn read_script(&self, path: &str) -> Option<String> {
        use std::io::Read;
        let p = absolute(self.cwd, path);
        let mut bytes = Vec::new();
        std::fs::File::open(p)
            .ok()?
            .take(MAX_SCRIPT)
            .read_to_end(&mut bytes)
            .ok()?;
        Some(String::from_utf8_lossy(&bytes).into_owned())
    }
    fn ship_command(&self) -> Option<&str> {
        Some(self.ship).filter(|s| !s.trim().is_empty())
    }
    fn push_allow(&self) -> &[String] {
        self.allow
    }
    fn env_var(&self, name: &str) -> Option<String> {
        std::env::var(name).ok()
    }
}

/// The world the gates judge against: this repository, this session, git and gh.
pub struct HookWorld<'h> {
    hook: &'h Hook,
    protection: OnceCell<Protection>,
    trust: OnceCell<crate::hall::hallmark::Trust>,
    /// What this call's globs may still read and match.
    globs: Cell<Budget>,
}

impl<'h> HookWorld<'h> {
    pub fn new(hook: &'h Hook) -> Self {
        HookWorld {
            hook,
            protection: OnceCell::new(),
            trust: OnceCell::new(),
            globs: Cell::new(Budget::default()),
        }
    }

    pub(super) fn protection(&self) -> &Protection {
        self.protection.get_or_init(|| {
            // The session's own checkout is the one it is anchored in, not whatever
            // repository its working directory happens to be in.
            let mut p = Protection::new(&self.hook.repo, &self.hook.checkout);
            if let Some(dir) = crate::platform::config_dir() {
                p.add_secret(&crate::sign::key_path(&dir).0);
            }
            p
        })
    }

    fn trust(&self) -> &crate::hall::hallmark::Trust {
        self.trust.get_or_init(|| {
            crate::hall::hallmark::Trust::for_repo(
                &self.hook.repo.main_root,
                &self.hook.hall.config.base,
            )
        })
    }

    /// The directory a place names, resolved; `None` when it is computed.
    fn dir_of(&self, place: &Place) -> Option<PathBuf> {
        if place.dynamic {
            return None;
        }
        let dir = match &place.dir {
            Some(d) => absolute(&self.hook.cwd, d),
            None => self.hook.cwd.clone(),
        };
        Some(match &place.git_dir {
            Some(g) => absolute(&dir, g),
            None => dir,
        })
    }

    /// Whether a path is one of this repository's local remotes.
    fn is_local_remote(&self, dir: &Path) -> Option<String> {
        for (name, path) in git::local_remotes(&self.hook.repo.main_root) {
            let p = resolve(&path);
            if dir.starts_with(&p) {
                let name = if name.is_empty() { "a remote" } else { &name };
                return Some(format!("{} (the remote `{name}`)", p.display()));
            }
        }
        None
    }

    fn verify_at(&self, dir: &Path, rev: &str) -> std::result::Result<(), String> {
        let journal = self
            .hook
            .hall
            .journal
            .exists()
            .then_some(&self.hook.hall.journal);
        crate::hall::hallmark::verify_commit(dir, rev, self.trust(), journal)
            .map(|_| ())
            .map_err(|e| e.to_string())
    }
}

impl World for HookWorld<'_> {
    fn base(&self) -> &str {
        &self.hook.hall.config.base
    }

    fn place(&self, place: &Place) -> PlaceKind {
        let Some(dir) = self.dir_of(place) else {
            return PlaceKind::Unknown;
        };
        let dir = resolve(&dir);
        if !dir.exists() {
            // A directory that doesn't exist yet can't be placed; it may be made later
            // in the same command.
            return PlaceKind::Unknown;
        }
        let p = self.protection();
        if place.git_dir.is_some() || !dir.join(".git").exists() && inside_git_dir(&dir).is_some() {
            // A git directory named directly, or a bare repository.
            if dir.starts_with(p.common()) {
                return if p.session_root() == p.main_root() {
                    PlaceKind::Own
                } else {
                    PlaceKind::MainCheckout
                };
            }
            if let Some(g) = inside_git_dir(&dir) {
                return PlaceKind::Protected(format!("the repository {}", g.display()));
            }
        }
        let Ok(repo) = Repo::discover(&dir) else {
            return PlaceKind::Elsewhere;
        };
        let top = resolve(&repo.toplevel);
        if resolve(&repo.common_dir) != p.common() {
            return match self.is_local_remote(&top) {
                Some(what) => PlaceKind::Protected(what),
                None => PlaceKind::Elsewhere,
            };
        }
        if top == p.session_root() {
            return PlaceKind::Own;
        }
        if top == p.main_root() {
            return PlaceKind::MainCheckout;
        }
        match self.hook.worktree_item(&top) {
            Ok(Some(_)) => PlaceKind::ItemWorktree,
            _ => PlaceKind::OtherWorktree,
        }
    }

    fn protected(&self, place: &Place, path: &str, access: Access) -> Option<String> {
        let base = self.dir_of(place)?;
        if glob::is_pattern(path) {
            return self.protected_glob(&base, path, access);
        }
        self.protection().check(&base, path, access)
    }

    fn verify_revs(&self, place: &Place, revs: &[String]) -> std::result::Result<(), String> {
        let Some(dir) = self.dir_of(place) else {
            return Err("it runs in a directory computed at run time".into());
        };
        if revs.iter().any(|r| r == "HEAD") {
            self.default_push_config(&dir)?;
        }
        for rev in revs {
            self.verify_at(&dir, rev)?;
        }
        Ok(())
    }

    fn verify_pr(&self, place: &Place, pr: Option<&str>) -> std::result::Result<(), String> {
        let Some(dir) = self.dir_of(place) else {
            return Err("it runs in a directory computed at run time".into());
        };
        let head = crate::gh::pull_request(&dir, pr)
            .map_err(|e| format!("its head can't be read: {e}"))?
            .head()
            .ok_or("its head can't be read: gh named no head commit")?;
        self.verify_at(&dir, &head)
    }

    fn commit_is_free(&self, effect: &Effect) -> bool {
        super::commit_is_free(self.hook, effect)
    }

    fn protected_tree(&self, place: &Place, src: &str, dest: &str) -> Option<String> {
        let base = self.dir_of(place)?;
        let src = absolute(&base, src);
        let dest = resolve(&absolute(&base, dest));
        self.protection().check_tree(&src, &dest, MAX_TREE)
    }

    fn open_dir(&self, place: &Place, dir: &str) -> Option<String> {
        let base = self.dir_of(place)?;
        let full = resolve(&absolute(&base, dir));
        let p = self.protection();
        if let Some(root) = p.checkout_of(&full) {
            return Some(format!(
                "{} is in the checkout {}, where they could create .claude/settings.json, .mcp.json or a .git",
                full.display(),
                root.display()
            ));
        }
        if p.holds_below(&full) {
            return Some(format!(
                "{} holds protected places (git's directory, your configuration), which they could overwrite",
                full.display()
            ));
        }
        if let Some(top) = full.ancestors().find(|a| a.join(".git").exists()) {
            return Some(format!(
                "{} is in the checkout {}, where they could create .claude/settings.json, .mcp.json or a .git",
                full.display(),
                top.display()
            ));
        }
        None
    }

    fn checkout_writes(
        &self,
        place: &Place,
        rev: &str,
    ) -> std::result::Result<Option<String>, String> {
        let Some(dir) = self.dir_of(place) else {
            return Err("it runs in a directory computed at run time".into());
        };
        let rev = if rev == "-" { "@{-1}" } else { rev };
        let Ok(changes) = git::tree_changes(&dir, "HEAD", rev) else {
            // `git checkout lib.txt` names a path, not a revision. A stash or an earlier
            // branch holds only what this checkout held, which its own gates saw.
            if dir.join(rev).exists()
                || rev.contains(['*', '?'])
                || rev.starts_with("stash@{")
                || rev.starts_with("@{-")
            {
                return Ok(None);
            }
            return Err(format!(
                "`{rev}` doesn't name a revision yet (one made earlier in this command can't be checked for links into protected places)"
            ));
        };
        let top = Repo::discover(&dir)
            .map(|r| r.toplevel)
            .unwrap_or_else(|_| dir.clone());
        let p = self.protection();
        let mut links = Vec::new();
        for c in &changes {
            let at = top.join(&c.path);
            if let Some(why) = p.check_resolved(&resolve(&at), Access::Write) {
                return Ok(Some(format!("writes {}: {why}", c.path)));
            }
            if c.mode == "120000" {
                links.push(c);
            }
        }
        if links.is_empty() {
            return Ok(None);
        }
        if links.len() > MAX_LINKS {
            return Err(format!(
                "it writes {} symbolic links, more than the guard reads",
                links.len()
            ));
        }
        let names: Vec<String> = links.iter().map(|c| c.oid.clone()).collect();
        let objects =
            git::read_objects(&dir, &names).map_err(|e| format!("its links can't be read: {e}"))?;
        for (c, o) in links.iter().zip(objects) {
            let Some(o) = o else {
                return Err(format!("the link {} can't be read", c.path));
            };
            let target = String::from_utf8_lossy(&o.data).to_string();
            let at = top.join(&c.path);
            let parent = at.parent().unwrap_or(Path::new("/"));
            let landed = resolve(&absolute(parent, &target));
            if let Some(why) = p.check_resolved(&landed, Access::Write) {
                return Ok(Some(format!(
                    "makes {} a symbolic link to {target}: {why}",
                    c.path
                )));
            }
        }
        Ok(None)
    }
}

/// The most entries of a copied tree the hook looks at.
const MAX_TREE: usize = 20_000;
/// The most symbolic links of a checkout the hook reads.
const MAX_LINKS: usize = 64;

impl HookWorld<'_> {
    /// A path with glob characters: every existing match must be allowed, and so must
    /// the directory the pattern starts in. A glob that would take more than this
    /// call's budget to list is refused, since what wasn't listed wasn't checked.
    fn protected_glob(&self, base: &Path, pattern: &str, access: Access) -> Option<String> {
        let full = absolute(base, pattern);
        let text = full.to_string_lossy().to_string();
        let fixed = text
            .split(['*', '?', '['])
            .next()
            .unwrap_or("")
            .rsplit_once('/')
            .map(|(d, _)| d.to_string())
            .unwrap_or_else(|| "/".into());
        if let Some(why) = self
            .protection()
            .check_resolved(&resolve(Path::new(&fixed)), access)
        {
            return Some(why);
        }
        let mut budget = self.globs.get();
        let listed = glob::expand(&full, &mut budget);
        self.globs.set(budget);
        let Ok(matches) = listed else {
            return Some(format!(
                "the pattern matches more files than the hook checks in one call (it lists at most {} entries and {} matches); name the files, or use a narrower pattern",
                glob::MAX_ENTRIES,
                glob::MAX_MATCHES
            ));
        };
        for m in matches {
            if let Some(why) = self.protection().check_resolved(&resolve(&m), access) {
                return Some(why);
            }
        }
        None
    }

    /// A push with no refspec sends the current branch, unless git is configured to
    /// send more; that configuration can't be followed here.
    fn default_push_config(&self, dir: &Path) -> std::result::Result<(), String> {
        let entries = git::config_matching(dir, r"^(push\.default|remote\..*\.(push|mirror))$")
            .map_err(|e| e.to_string())?;
        for (k, v) in &entries {
            let (k, v) = (k.as_str(), v.as_str());
            let more = (k == "push.default" && v == "matching")
                || k.ends_with(".push")
                || (k.ends_with(".mirror") && v == "true");
            if more {
                return Err(format!(
                    "git is configured (`{k} {v}`) to push more than the current branch"
                ));
            }
        }
        Ok(())
    }
}
