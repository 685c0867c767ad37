//! The paths no session may write, and the secrets no session may read.
//!
//! An agent that can write git's own files, another checkout, a local remote or the
//! user's configuration can make git push for it, plant a hallmark, or loosen the rules.
//! So every write the hooks see (a file tool's path, a redirection, an argument of a
//! program that writes) is resolved the way the operating system would resolve it, with
//! symbolic links followed, and refused when it lands in one of these places:
//!
//! - git's internals: the repository's common directory (hooks, config, refs,
//!   packed-refs, objects, the journal), any `.git` entry, and any other repository's
//!   git directory (a bare `origin` on disk);
//! - another checkout of this repository: the main checkout when the session works in an
//!   item's worktree, and every other worktree;
//! - files that make programs run: the user's git configuration, shell startup files
//!   (`.bashrc`, `.bash_aliases`, `.profile`, `.zshrc`, fish's `conf.d`…), SSH
//!   configuration, a `.claude` directory anywhere and `.mcp.json` (Claude Code obeys
//!   them, and their hooks and servers run outside any sandbox), the directories on
//!   `PATH` and the ones a login puts there (`~/bin`, `~/.local/bin`, `~/.cargo/bin`),
//!   the `hall` binary, and what starts later outside any session: autostart entries,
//!   user services (`~/.config/systemd/user`, where `hall daemon start --at-login`
//!   installs its own, `~/Library/LaunchAgents`) and cron;
//! - Hallmark's own directories: its configuration (the signing key lives there), its
//!   data (the registry of repositories, and which repository each session is bound
//!   to) and its cache (precompiled rooms and the
//!   tool-policy room's guards, which decide whether that room is asked at all).
//!
//! Reading is refused only for the secrets: the signing key and the directory it lives
//! in.

use std::path::{Component, Path, PathBuf};

use crate::gate::Access;

/// Files under the home directory that make programs run or hold credentials: shell
/// startup files, programs found on a login `PATH`, what starts at login or on a
/// schedule, and credentials.
const HOME_FILES: &[&str] = &[
    ".gitconfig",
    ".config/git",
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".bash_aliases",
    ".bashrc.d",
    ".profile",
    ".kshrc",
    ".mkshrc",
    ".cshrc",
    ".tcshrc",
    ".login",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".zlogout",
    ".config/zsh",
    ".oh-my-zsh",
    ".config/fish",
    ".config/nushell",
    ".config/environment.d",
    ".pam_environment",
    ".xprofile",
    ".xsessionrc",
    ".xinitrc",
    ".inputrc",
    ".ssh",
    ".netrc",
    ".git-credentials",
    ".claude",
    ".claude.json",
    ".config/gh",
    ".npmrc",
    ".cargo/config.toml",
    ".cargo/config",
    ".cargo/bin",
    ".local/bin",
    "bin",
    ".config/autostart",
    ".config/systemd",
    ".local/share/systemd",
    ".config/launchd",
    "Library/LaunchAgents",
    ".config/cron",
];

/// System places that start programs on a schedule or for every login.
const SYSTEM_FILES: &[&str] = &[
    "/etc/gitconfig",
    "/etc/crontab",
    "/etc/cron.d",
    "/etc/cron.hourly",
    "/etc/cron.daily",
    "/etc/cron.weekly",
    "/etc/cron.monthly",
    "/var/spool/cron",
    "/etc/profile",
    "/etc/profile.d",
    "/etc/bash.bashrc",
    "/etc/zsh",
    "/etc/environment",
    "/etc/xdg/autostart",
    "/etc/systemd",
    "/Library/LaunchAgents",
    "/Library/LaunchDaemons",
];

/// Directories under the user's configuration directory (`XDG_CONFIG_HOME`) that make
/// programs run: git's configuration, what starts at login, user services, shells.
const XDG_CONFIG: &[&str] = &[
    "git",
    "autostart",
    "systemd",
    "fish",
    "environment.d",
    "zsh",
];

/// Names Claude Code obeys in any checkout: its project directory (settings with hooks,
/// commands, agents and skills) and MCP servers. Their hooks and servers run outside
/// any sandbox.
const PROJECT_DIR: &str = ".claude";
const PROJECT_FILE: &str = ".mcp.json";

/// What the hooks know about where a session may write.
pub struct Protection {
    /// The session's own checkout.
    session_root: PathBuf,
    /// The repository's common git directory.
    common: PathBuf,
    /// The main checkout.
    main_root: PathBuf,
    /// Other checkouts of this repository (worktrees), by root.
    worktrees: Vec<PathBuf>,
    /// Protected files and directories with the reason for each.
    places: Vec<(PathBuf, String)>,
    /// Paths nobody in a session may read.
    secrets: Vec<PathBuf>,
}

/// `p` made absolute against `base`, with `~` expanded and `.`/`..` removed lexically.
pub fn absolute(base: &Path, p: &str) -> PathBuf {
    let expanded = match (p.strip_prefix("~/"), dirs::home_dir()) {
        (Some(rest), Some(home)) => home.join(rest),
        _ if p == "~" => dirs::home_dir().unwrap_or_else(|| PathBuf::from("~")),
        _ => PathBuf::from(p),
    };
    let joined = if expanded.is_absolute() {
        expanded
    } else {
        base.join(expanded)
    };
    crate::git::normalize(&joined)
}

/// Resolves `p` the way the operating system will: symbolic links in every existing
/// component followed (a dangling link to its target), the rest appended lexically.
pub fn resolve(p: &Path) -> PathBuf {
    resolve_depth(p, 0)
}

fn resolve_depth(p: &Path, depth: usize) -> PathBuf {
    if depth > 40 {
        return p.to_path_buf();
    }
    if let Ok(c) = crate::platform::canonicalize(p) {
        return c;
    }
    // A dangling symbolic link: where it points is where a write would go.
    if let Ok(meta) = std::fs::symlink_metadata(p)
        && meta.file_type().is_symlink()
        && let Ok(target) = std::fs::read_link(p)
    {
        let parent = p.parent().unwrap_or(Path::new("/"));
        let next = crate::git::normalize(&parent.join(target));
        return resolve_depth(&next, depth + 1);
    }
    match (p.parent(), p.file_name()) {
        (Some(parent), Some(name)) if parent != p => resolve_depth(parent, depth + 1).join(name),
        _ => p.to_path_buf(),
    }
}

/// Whether `dir` looks like a git directory: `HEAD`, `objects/` and `refs/`.
fn is_git_dir(dir: &Path) -> bool {
    dir.join("HEAD").is_file() && dir.join("objects").is_dir() && dir.join("refs").is_dir()
}

/// The git directory `p` is inside of, if any (a bare repository, a `.git` directory).
pub fn inside_git_dir(p: &Path) -> Option<PathBuf> {
    p.ancestors().find(|a| is_git_dir(a)).map(Path::to_path_buf)
}

impl Protection {
    /// The protection for a session whose checkout is `session_root`, in the
    /// repository `repo`.
    pub fn new(repo: &crate::git::Repo, session_root: &Path) -> Protection {
        let canon = |p: &Path| resolve(p);
        let common = canon(&repo.common_dir);
        let main_root = canon(&repo.main_root);
        let session_root = canon(session_root);
        let worktrees = worktree_roots(&common)
            .into_iter()
            .map(|p| canon(&p))
            .filter(|p| *p != session_root && *p != main_root)
            .collect();
        let mut places: Vec<(PathBuf, String)> = Vec::new();
        if let Some(home) = dirs::home_dir() {
            for f in HOME_FILES {
                places.push((
                    canon(&home.join(f)),
                    format!("~/{f} is configuration that makes programs run or holds credentials"),
                ));
            }
        }
        if let Some(x) = std::env::var_os("XDG_CONFIG_HOME") {
            for d in XDG_CONFIG {
                places.push((
                    canon(&PathBuf::from(&x).join(d)),
                    format!("$XDG_CONFIG_HOME/{d} makes programs run (configuration, login items, user services)"),
                ));
            }
        }
        for var in ["GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM"] {
            if let Some(v) = std::env::var_os(var).filter(|v| v != "/dev/null") {
                places.push((canon(Path::new(&v)), format!("{var}, git's configuration")));
            }
        }
        for f in SYSTEM_FILES {
            places.push((
                canon(Path::new(f)),
                format!("{f} makes programs run for every login or on a schedule"),
            ));
        }
        let mut secrets = Vec::new();
        for (dir, what) in [
            (
                crate::platform::config_dir(),
                "Hallmark's configuration and signing key",
            ),
            (
                crate::platform::data_dir(),
                "Hallmark's registry of repositories and the sessions' bindings to them",
            ),
            (
                crate::platform::cache_dir(),
                "Hallmark's cache of compiled rooms and their guards, and the loop's own checkouts",
            ),
        ] {
            if let Some(d) = dir {
                let d = canon(&d);
                places.push((d.clone(), format!("it holds {what}")));
                if what.contains("signing key") {
                    secrets.push(d);
                }
            }
        }
        if let Some(path) = std::env::var_os("PATH") {
            for d in std::env::split_paths(&path) {
                if d.is_absolute() || !d.as_os_str().is_empty() {
                    places.push((
                        canon(&d),
                        "it is a directory on PATH, where the hooks find git".to_owned(),
                    ));
                }
            }
        }
        if let Ok(exe) = std::env::current_exe() {
            places.push((
                canon(&exe),
                "it is the hall binary the hooks run".to_owned(),
            ));
        }
        Protection {
            session_root,
            common,
            main_root,
            worktrees,
            places,
            secrets,
        }
    }

    /// Adds the signing key's own path (an SSH key named in the user config can live
    /// outside Hallmark's directory).
    pub fn add_secret(&mut self, p: &Path) {
        self.secrets.push(resolve(p));
    }

    /// Why `path` (resolved against `base`) may not be accessed this way; `None` when
    /// it may.
    pub fn check(&self, base: &Path, path: &str, access: Access) -> Option<String> {
        let full = resolve(&absolute(base, path));
        self.check_resolved(&full, access)
    }

    /// [`Protection::check`] for a path already resolved.
    pub fn check_resolved(&self, full: &Path, access: Access) -> Option<String> {
        if let Some(s) = self.secrets.iter().find(|s| full.starts_with(s)) {
            return Some(format!(
                "{} holds Hallmark's signing key, which no session may read",
                s.display()
            ));
        }
        if access == Access::Read {
            return None;
        }
        if full.starts_with(&self.common) {
            return Some(format!(
                "it is inside git's own directory {} (hooks, config, refs, notes, objects and the journal live there)",
                self.common.display()
            ));
        }
        if full
            .components()
            .any(|c| matches!(c, Component::Normal(n) if n == ".git"))
        {
            return Some("it is a repository's .git, which git obeys".to_owned());
        }
        if let Some(g) = inside_git_dir(full) {
            return Some(format!(
                "it is inside the git repository {}, whose refs and hooks no session writes",
                g.display()
            ));
        }
        if full
            .components()
            .any(|c| matches!(c, Component::Normal(n) if n == PROJECT_DIR))
        {
            return Some(format!(
                "it is in a {PROJECT_DIR} directory, Claude Code's configuration: its hooks run outside any sandbox"
            ));
        }
        if full.file_name().is_some_and(|n| n == PROJECT_FILE) {
            return Some(format!(
                "{PROJECT_FILE} is Claude Code configuration: the servers it names run outside any sandbox"
            ));
        }
        if !full.starts_with(&self.session_root) {
            if full.starts_with(&self.main_root) {
                return Some(format!(
                    "it is in the main checkout {}; a session in an item's worktree works only there",
                    self.main_root.display()
                ));
            }
            if let Some(w) = self.worktrees.iter().find(|w| full.starts_with(w)) {
                return Some(format!(
                    "it is in another worktree of this repository ({})",
                    w.display()
                ));
            }
        }
        for (p, why) in &self.places {
            if full.starts_with(p) {
                return Some(format!("{}: {why}", p.display()));
            }
        }
        None
    }

    /// Whether a protected place lies at or below `dir` (resolved), so that a file of
    /// any name written under `dir` could land in one.
    pub fn holds_below(&self, dir: &Path) -> bool {
        std::iter::once(&self.common)
            .chain(self.places.iter().map(|(p, _)| p))
            .chain(&self.secrets)
            .any(|p| p.starts_with(dir))
            || !self.session_root.starts_with(dir) && self.main_root.starts_with(dir)
            || self.worktrees.iter().any(|w| w.starts_with(dir))
    }

    /// The checkout of this repository that `p` (resolved) is in, if any.
    pub fn checkout_of(&self, p: &Path) -> Option<&Path> {
        std::iter::once(&self.session_root)
            .chain(std::iter::once(&self.main_root))
            .chain(&self.worktrees)
            .find(|r| p.starts_with(r))
            .map(PathBuf::as_path)
    }

    /// Why copying the tree at `src` to `dest` (both resolved) would create a protected
    /// path or a link into one: each entry of `src` lands at `dest/<entry>` or, when
    /// `dest` is a directory, `dest/<name of src>/<entry>`. At most `limit` entries are
    /// looked at; a bigger tree is refused only when `dest` holds a protected place.
    pub fn check_tree(&self, src: &Path, dest: &Path, limit: usize) -> Option<String> {
        let Ok(meta) = std::fs::symlink_metadata(src) else {
            return None;
        };
        let mut roots = vec![dest.to_path_buf()];
        if dest.is_dir()
            && let Some(name) = src.file_name()
        {
            roots.push(dest.join(name));
        }
        let deep = roots.iter().any(|r| self.holds_below(&resolve(r)));
        let mut stack: Vec<(PathBuf, PathBuf)> = vec![(src.to_path_buf(), PathBuf::new())];
        let mut seen = 0usize;
        let _ = meta;
        while let Some((from, rel)) = stack.pop() {
            seen += 1;
            if seen > limit {
                return deep.then(|| {
                    format!(
                        "{} holds more than {limit} entries, too many to check, and the destination holds protected places",
                        src.display()
                    )
                });
            }
            let Ok(m) = std::fs::symlink_metadata(&from) else {
                continue;
            };
            for root in &roots {
                let to = if rel.as_os_str().is_empty() {
                    root.clone()
                } else {
                    root.join(&rel)
                };
                let named = rel.components().any(|c| {
                    matches!(c, Component::Normal(n) if n == PROJECT_DIR || n == ".git" || n == PROJECT_FILE)
                });
                if (named || deep)
                    && let Some(why) = self.check_resolved(&resolve(&to), Access::Write)
                {
                    return Some(format!("it would create {}: {why}", to.display()));
                }
                if m.file_type().is_symlink()
                    && let Ok(target) = std::fs::read_link(&from)
                {
                    let parent = to.parent().unwrap_or(Path::new("/"));
                    let landed = resolve(&crate::git::normalize(&parent.join(&target)));
                    if let Some(why) = self.check_resolved(&landed, Access::Write) {
                        return Some(format!(
                            "it would create {}, a link to {}: {why}",
                            to.display(),
                            landed.display()
                        ));
                    }
                }
            }
            if m.is_dir()
                && let Ok(entries) = std::fs::read_dir(&from)
            {
                for e in entries.flatten() {
                    stack.push((e.path(), rel.join(e.file_name())));
                }
            }
        }
        None
    }

    /// The session's own checkout.
    pub fn session_root(&self) -> &Path {
        &self.session_root
    }

    /// The main checkout.
    pub fn main_root(&self) -> &Path {
        &self.main_root
    }

    /// The common git directory.
    pub fn common(&self) -> &Path {
        &self.common
    }
}

/// The roots of the repository's linked worktrees, from `<common>/worktrees/*/gitdir`.
fn worktree_roots(common: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(common.join("worktrees")) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| std::fs::read_to_string(e.path().join("gitdir")).ok())
        .filter_map(|g| PathBuf::from(g.trim()).parent().map(Path::to_path_buf))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symlinks_are_followed_even_when_dangling() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("repo/.git/hooks")).unwrap();
        std::fs::create_dir_all(root.join("wt")).unwrap();
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(root.join("repo/.git/hooks"), root.join("wt/h")).unwrap();
            std::os::unix::fs::symlink(root.join("repo/.git/hooks/post-commit"), root.join("wt/p"))
                .unwrap();
            assert_eq!(
                resolve(&root.join("wt/h/post-commit")),
                root.join("repo/.git/hooks/post-commit")
            );
            assert_eq!(
                resolve(&root.join("wt/p")),
                root.join("repo/.git/hooks/post-commit"),
                "a dangling link resolves to where a write would land"
            );
        }
        assert_eq!(
            absolute(&root.join("wt"), "../repo/./x/../y"),
            root.join("repo/y")
        );
    }

    #[cfg(unix)]
    #[test]
    fn trees_are_judged_by_every_path_they_create() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let common = root.join("repo/.git");
        for d in ["hooks", "objects", "refs"] {
            std::fs::create_dir_all(common.join(d)).unwrap();
        }
        std::fs::write(common.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        let wt = root.join("wt");
        let home = root.join("home");
        std::fs::create_dir_all(&wt).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        let p = Protection {
            session_root: wt.clone(),
            common: common.clone(),
            main_root: root.join("repo"),
            worktrees: Vec::new(),
            places: vec![(home.join(".bashrc"), "a startup file".into())],
            secrets: Vec::new(),
        };
        let file = |rel: &str| {
            let f = root.join(rel);
            std::fs::create_dir_all(f.parent().unwrap()).unwrap();
            std::fs::write(&f, "x").unwrap();
        };
        file("claude/.claude/settings.json");
        file("plain/src/a.txt");
        file("dots/.bashrc");
        std::fs::create_dir_all(root.join("links")).unwrap();
        std::os::unix::fs::symlink(common.join("hooks"), root.join("links/h")).unwrap();

        let tree = |src: &str, dest: &Path| p.check_tree(&root.join(src), dest, 1000);
        assert!(tree("claude", &wt).is_some(), "a .claude inside the source");
        assert!(tree("claude/.", &wt.join("new")).is_some());
        assert_eq!(tree("plain", &wt), None);
        assert!(
            tree("links", &wt.join("copy"))
                .unwrap()
                .contains("a link to")
        );
        assert!(
            tree("dots/.", &home).is_some(),
            "into a directory holding a protected file"
        );
        assert_eq!(tree("dots/.", &root.join("elsewhere")), None);
        assert_eq!(tree("missing", &wt), None, "nothing to copy");
        assert!(p.holds_below(&root) && !p.holds_below(&wt));

        for bad in [
            "wt/.claude/agents/a.md",
            "wt/sub/.mcp.json",
            "elsewhere/.claude",
        ] {
            assert!(
                p.check_resolved(&root.join(bad), Access::Write).is_some(),
                "{bad}"
            );
        }
        assert_eq!(
            p.check_resolved(&root.join("wt/.claude-notes"), Access::Write),
            None
        );
        assert_eq!(
            p.check_resolved(&root.join("wt/.claude/x"), Access::Read),
            None
        );
    }

    #[test]
    fn git_dirs_are_recognised_by_their_shape() {
        let dir = tempfile::tempdir().unwrap();
        let bare = dir.path().join("origin.git");
        std::fs::create_dir_all(bare.join("objects")).unwrap();
        std::fs::create_dir_all(bare.join("refs/heads")).unwrap();
        std::fs::write(bare.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        assert_eq!(
            inside_git_dir(&bare.join("refs/heads/x")),
            Some(bare.clone())
        );
        assert_eq!(inside_git_dir(dir.path()), None);
    }
}
