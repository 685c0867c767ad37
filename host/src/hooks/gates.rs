//! PreToolUse: the gates. The file tools are checked against the protected paths and
//! the edit gate; reads against the secrets; Bash commands through the shell analysis
//! ([`crate::gate`]) and then judged against this repository and this session
//! ([`HookWorld`]); any other tool by what its input says ([`super::tools`]).
//!
//! Hooks fail open on their own errors, but a gate fails closed on what it can't read:
//! anything that may push, write a note or write where a session may not is denied when
//! the answer needed to allow it can't be had (an unreadable journal, a computed path,
//! a commit that can't be resolved).

use std::cell::{Cell, OnceCell};
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::Hook;
use super::glob::{self, Budget};
use super::protect::{Protection, absolute, inside_git_dir, resolve};
use super::tools::{self, ToolKind};
use crate::config::{CaptureMode, PushGuard};
use crate::error::{Code, HallError, Result};
use crate::gate::{self, Access, Effect, Gate, GateContext, GuardMode, Place, PlaceKind, World};
use crate::git::{self, Repo};
use crate::item::EventKind;

/// The most of a script the strict guard reads to look for push or release.
const MAX_SCRIPT: u64 = 256 * 1024;

/// How the command analysis learns about this repository: git aliases (asked of git
/// itself, only when a subcommand is not one of git's own), scripts, the ship command.
struct HookContext<'a> {
    cwd: &'a Path,
    ship: &'a str,
    allow: &'a [String],
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

    fn protection(&self) -> &Protection {
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
        commit_is_free(self.hook, effect)
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

/// The push, note, edit and protected-path gates: `Some` answer when one refuses.
/// Every tool is judged: the ones the hook knows by their fields, any other by what its
/// input says ([`other_tool_gate`]).
pub(super) fn gates(hook: &Hook) -> Result<Option<String>> {
    let tool = hook.input.tool_name.as_deref().unwrap_or("");
    let input = hook.input.tool_input.as_ref();
    let field = |k: &str| {
        input
            .and_then(|i| i.get(k))
            .and_then(|v| v.as_str())
            .map(str::to_string)
    };
    match tools::kind(tool) {
        ToolKind::Write => match field("file_path").or_else(|| field("notebook_path")) {
            Some(path) => edit_gate(hook, tool, &path),
            // A write tool without the field it names its file in: read it as any
            // other tool.
            None => other_tool_gate(hook, tool, input),
        },
        ToolKind::Read => {
            let Some(path) = field("file_path")
                .or_else(|| field("path"))
                .or_else(|| field("notebook_path"))
            else {
                return Ok(None);
            };
            read_gate(hook, tool, &path)
        }
        ToolKind::Bash => {
            let Some(command) = field("command") else {
                return Ok(None);
            };
            bash_gate(hook, &command)
        }
        ToolKind::Inert => Ok(None),
        ToolKind::Other => other_tool_gate(hook, tool, input),
    }
}

/// A tool the hook doesn't know (an MCP server's, `PowerShell`, `Monitor`…): a name
/// that says it pushes is a push it can't check; shell text it is given is judged as a
/// Bash command (PowerShell also for what the shell reading can't follow, in strict
/// mode); and every string in its input is a path it may write, refused when it lands
/// in a protected place. See [`super::tools`].
fn other_tool_gate(hook: &Hook, tool: &str, input: Option<&Value>) -> Result<Option<String>> {
    let refuse = |gate: Gate, why: String| {
        let err = HallError::new(
            Code::GateDenied,
            sentence(&format!("`{tool}` is refused: {why}")),
        )
        .hint("hall status")
        .hint("hall ask \"…\"")
        .with_check(gate.name());
        deny_hard(hook, gate.name(), tool, err)
    };
    if let Some(why) = tools::pushes_by_name(tool) {
        return Ok(Some(refuse(
            Gate::Push,
            format!(
                "{why}, and what it sends can't be checked for a hallmark; Hallmark ships approved work itself"
            ),
        )));
    }
    let Some(input) = input else {
        return Ok(None);
    };
    let strict = hook.hall.config.capture.push_guard == PushGuard::Strict;
    let powershell = tools::is_powershell(tool);
    let command = tools::shell_text(input);
    if let Some(command) = &command {
        if let Some(denied) = bash_gate(hook, command)? {
            return Ok(Some(denied));
        }
        if powershell
            && strict
            && let Some(why) = tools::powershell_hidden(command)
        {
            return Ok(Some(refuse(
                Gate::Unreadable,
                format!("its PowerShell can't be followed: {why}"),
            )));
        }
    }
    let strings = match tools::strings(input) {
        Ok(s) => s,
        Err(why) => {
            return Ok(Some(refuse(
                Gate::Unreadable,
                format!("{why}, so the paths it may write can't all be checked"),
            )));
        }
    };
    let words: Vec<&str> = match (&command, powershell) {
        (Some(c), true) => tools::powershell_words(c).collect(),
        _ => Vec::new(),
    };
    let world = HookWorld::new(hook);
    for s in strings.into_iter().chain(words) {
        for path in tools::as_paths(s) {
            if let Some(why) = world.protection().check(&hook.cwd, path, Access::Write) {
                return Ok(Some(refuse(
                    Gate::Protect,
                    format!(
                        "it is given {path}, and a tool the hook doesn't know is judged as writing every path it is given: {why}"
                    ),
                )));
            }
        }
    }
    Ok(None)
}

/// Whether `rel` (relative to the repository root, `/`-separated) is a `[capture] free`
/// path: `dir/` matches everything below it, a pattern without `/` matches file names,
/// any other pattern the whole path; `*` and `?` are wildcards.
pub fn is_free(rel: &str, free: &[String]) -> bool {
    free.iter().any(|pattern| {
        if let Some(dir) = pattern.strip_suffix('/') {
            rel == dir || rel.starts_with(&format!("{dir}/"))
        } else if !pattern.contains('/') {
            let name = rel.rsplit('/').next().unwrap_or(rel);
            glob::segments_match(pattern, name)
        } else {
            // `*` and `?` stay within one path segment, as in .gitignore.
            glob::segments_match(pattern, rel)
        }
    })
}

/// The nearest existing directory at or above `path` (a new file's folder may not exist).
fn existing_dir(path: &Path) -> Option<PathBuf> {
    path.ancestors()
        .skip(1)
        .find(|a| a.is_dir())
        .map(Path::to_path_buf)
}

fn relative(path: &Path, root: &Path) -> Option<String> {
    let canon_root = resolve(root);
    let full = resolve(path);
    let rel = full.strip_prefix(&canon_root).ok()?;
    Some(rel.to_string_lossy().replace('\\', "/"))
}

/// Read, Grep and Glob: only the secrets are refused.
fn read_gate(hook: &Hook, tool: &str, raw: &str) -> Result<Option<String>> {
    let world = HookWorld::new(hook);
    let Some(why) = world.protection().check(&hook.cwd, raw, Access::Read) else {
        return Ok(None);
    };
    let err = HallError::new(
        Code::GateDenied,
        format!("{tool} of {raw} is refused: {why}."),
    )
    .hint("hall status")
    .with_check(Gate::Protect.name());
    Ok(Some(deny(hook, Gate::Protect.name(), raw, err)))
}

fn edit_gate(hook: &Hook, tool: &str, raw: &str) -> Result<Option<String>> {
    let world = HookWorld::new(hook);
    // Protected paths are refused whatever `[capture] mode` says: the mode chooses how
    // work is captured, never whether git's internals can be written.
    if let Some(why) = world.protection().check(&hook.cwd, raw, Access::Write) {
        let err = HallError::new(
            Code::GateDenied,
            format!("{tool} of {raw} is refused: {why}."),
        )
        .hint("hall status")
        .hint("hall ask \"…\"")
        .with_check(Gate::Protect.name());
        return Ok(Some(deny_hard(hook, Gate::Protect.name(), raw, err)));
    }
    if hook.hall.config.capture.mode == CaptureMode::Off {
        return Ok(None);
    }
    let path = absolute(&hook.cwd, raw);
    let Some(dir) = existing_dir(&path) else {
        return Ok(None);
    };
    // Files outside this repository are never gated by the edit gate.
    let Ok(repo) = Repo::discover(&dir) else {
        return Ok(None);
    };
    if resolve(&repo.common_dir) != resolve(&hook.repo.common_dir) {
        return Ok(None);
    }
    let Some(rel) = relative(&path, &repo.toplevel) else {
        return Ok(None);
    };
    if is_free(&rel, &hook.hall.config.capture.free) {
        return Ok(None);
    }
    // Whether the file is in an item's worktree can't be told from an unreadable
    // journal; the edit gate then stands down (decision 0003). The protected paths were
    // checked above, whatever the journal says.
    match hook.worktree_item(&dir) {
        Ok(Some(_)) => return Ok(None),
        Ok(None) => {}
        Err(e) => {
            super::log_anywhere(&format!(
                "PreToolUse: {}; the edit gate lets {rel} through",
                e.message
            ));
            return Ok(None);
        }
    }
    let err = HallError::new(
        Code::GateDenied,
        format!(
            "{tool} of {rel} is outside an item's worktree. In this repository, work happens in items: start one \
             (or adopt this branch), then edit in the worktree it prints."
        ),
    )
    .hint("hall new --title \"…\"")
    .hint("hall adopt")
    .hint("hall status")
    .with_check("edit");
    Ok(Some(deny(hook, "edit", raw, err)))
}

fn bash_gate(hook: &Hook, command: &str) -> Result<Option<String>> {
    let actor = std::env::var("HALL_ACTOR").ok();
    let config = &hook.hall.config;
    let ctx = HookContext {
        cwd: &hook.cwd,
        ship: &config.ship,
        allow: &config.capture.push_allow,
    };
    let analysis = gate::analyze(command, &ctx);
    if analysis.findings.is_empty() && analysis.parse_error.is_none() {
        return Ok(None);
    }
    let mode = match config.capture.push_guard {
        PushGuard::Strict => GuardMode::Strict,
        PushGuard::Parse => GuardMode::Parse,
    };
    // Whether the session's checkout is an item's worktree; an unreadable journal
    // counts as "yes", which only relaxes the commit gate (nothing is pushed by a
    // commit).
    let in_item = match hook.worktree_item(&hook.checkout) {
        Ok(item) => item.is_some(),
        Err(e) => {
            super::log_anywhere(&format!(
                "PreToolUse: {}; judging as inside an item's worktree",
                e.message
            ));
            true
        }
    };
    let session = gate::Session {
        mode,
        actor: actor.as_deref(),
        in_item,
    };
    let world = HookWorld::new(hook);
    let denials = gate::judge(&analysis.findings, session, &world);
    let Some(first) = denials.first() else {
        return Ok(None);
    };
    let item = hook.worktree_item(&hook.checkout).ok().flatten();
    let reason = sentence(&first.reason);
    let err = match first.gate {
        Gate::Hall => HallError::new(
            Code::GateDenied,
            format!("{reason} A script or a person decides what happens to the item; a session says what it did and asks."),
        )
        .hint("hall findings")
        .hint("hall propose-ready --summary \"…\"")
        .hint("hall ask \"…\""),
        Gate::Note => HallError::new(
            Code::GateDenied,
            format!("{reason} Only Hallmark strikes hallmarks."),
        )
        .hint("hall status")
        .hint("hall log --kind hallmarked"),
        Gate::Push => {
            let e = HallError::new(
                Code::GateDenied,
                format!("{reason} Hallmark ships approved work itself."),
            );
            match item {
                Some(id) => e
                    .hint(format!("hall propose-ready {id} --summary \"…\""))
                    .hint(format!("hall status {id}")),
                None => e.hint("hall status").hint("hall new --title \"…\""),
            }
        }
        Gate::Commit => HallError::new(
            Code::GateDenied,
            format!("{reason} Commits happen in an item's worktree (or touch only [capture] free paths)."),
        )
        .hint("hall new --title \"…\"")
        .hint("hall adopt"),
        Gate::Protect | Gate::Repo | Gate::Config => HallError::new(Code::GateDenied, reason)
            .hint("hall status")
            .hint("hall ask \"…\""),
        Gate::Unreadable => HallError::new(Code::GateDenied, reason)
            .hint("hall status")
            .hint("hall ask \"…\""),
    };
    Ok(Some(deny_hard(
        hook,
        first.gate.name(),
        command,
        err.with_check(first.gate.name()),
    )))
}

fn sentence(s: &str) -> String {
    let t = s.trim_end_matches('.');
    let mut c = t.chars();
    match c.next() {
        Some(f) => format!("{}{}.", f.to_uppercase(), c.as_str()),
        None => String::new(),
    }
}

/// A commit outside a worktree passes when every path it commits is free.
fn commit_is_free(hook: &Hook, effect: &Effect) -> bool {
    let Effect::Commit {
        pathspecs,
        all,
        paths_unknown,
        place,
    } = effect
    else {
        return false;
    };
    if *paths_unknown || place.dynamic || place.git_dir.is_some() {
        return false;
    }
    let free = &hook.hall.config.capture.free;
    let cwd = match &place.dir {
        Some(d) => absolute(&hook.cwd, d),
        None => hook.cwd.clone(),
    };
    let mut paths: Vec<String> = Vec::new();
    if !pathspecs.is_empty() && !*all {
        let Ok(repo) = Repo::discover(&cwd) else {
            return false;
        };
        for spec in pathspecs {
            match relative(&cwd.join(spec), &repo.toplevel) {
                Some(rel) => paths.push(rel),
                None => return false,
            }
        }
    } else {
        let Ok(staged) = git::changed_paths(&cwd, false) else {
            return false;
        };
        paths.extend(staged);
        if *all {
            let Ok(changed) = git::changed_paths(&cwd, true) else {
                return false;
            };
            paths.extend(changed);
        }
    }
    !paths.is_empty() && paths.iter().all(|p| is_free(p, free))
}

/// The PreToolUse answer: `deny` (or `ask` for the edit gate in `[capture] mode = "ask"`)
/// with Hallmark's error JSON as the reason, and a `gate_denied` record when the journal
/// can take one. Recording is best effort: a denial is never lost to a journal error.
fn deny(hook: &Hook, gate: &str, what: &str, err: HallError) -> String {
    let decision = if gate == "edit" && hook.hall.config.capture.mode == CaptureMode::Ask {
        "ask"
    } else {
        "deny"
    };
    answer(hook, gate, what, err, decision)
}

/// A denial that `[capture] mode = "ask"` doesn't soften.
pub(super) fn deny_hard(hook: &Hook, gate: &str, what: &str, err: HallError) -> String {
    answer(hook, gate, what, err, "deny")
}

fn answer(hook: &Hook, gate: &str, what: &str, err: HallError, decision: &str) -> String {
    let reason = serde_json::to_string(&err.reply()).unwrap_or_else(|_| err.message.clone());
    if hook.hall.journal.exists() {
        let item = hook.worktree_item(&hook.checkout).ok().flatten();
        let mut event = hook.ctx.event(
            item,
            EventKind::GateDenied {
                gate: gate.to_string(),
                command: what.chars().take(2000).collect(),
                reason: err.message.clone(),
            },
        );
        event.actor = "hook".into();
        if let Err(e) = hook.hall.journal.append_repo(&[event]) {
            super::log_anywhere(&format!("PreToolUse: could not record a denial: {e}"));
        }
    }
    decision_json(decision, &reason)
}

/// A PreToolUse answer that denies (`deny`) or asks (`ask`), with its reason.
pub(super) fn decision_json(decision: &str, reason: &str) -> String {
    json!({
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": decision,
            "permissionDecisionReason": reason,
        }
    })
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::is_free;

    #[test]
    fn free_paths() {
        let free = vec![
            "docs/".to_string(),
            "*.md".to_string(),
            "notes/*.txt".to_string(),
        ];
        for p in [
            "docs/a.rs",
            "docs/x/y.png",
            "README.md",
            "src/deep/NOTES.md",
            "notes/a.txt",
        ] {
            assert!(is_free(p, &free), "{p}");
        }
        for p in [
            "src/main.rs",
            "docsx/a.rs",
            "notes/deep/a.txt",
            "README.mdx",
        ] {
            assert!(!is_free(p, &free), "{p}");
        }
    }
}
