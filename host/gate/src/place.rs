//! Where a command acts: the directory it runs in after `cd` and `git -C`, and the
//! repository it names directly with `--git-dir` or `GIT_DIR`.
//!
//! A git command aimed at another checkout or at a local remote is judged for that
//! repository, so the analysis keeps the place beside each effect. Paths stay as
//! written (relative to the hook's working directory); the host resolves them.

use super::words::Arg;

/// Where a command runs, as far as the text says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Place {
    /// The directory, relative to the session's working directory unless absolute; `None`
    /// is the session's directory itself.
    pub dir: Option<String>,
    /// A repository named directly (`--git-dir`, `GIT_DIR`), relative to `dir`.
    pub git_dir: Option<String>,
    /// A work tree named directly (`--work-tree`, `GIT_WORK_TREE`).
    pub work_tree: Option<String>,
    /// Part of the place is computed at run time (`cd "$(mktemp -d)"`, `git -C "$D"`),
    /// or depends on control flow the analysis doesn't follow.
    pub dynamic: bool,
}

impl Place {
    /// The place after `cd ARG` (or `git -C ARG`).
    pub fn enter(&self, d: &Arg) -> Place {
        let mut p = self.clone();
        if d.dynamic {
            p.dynamic = true;
        }
        p.dir = Some(join(self.dir.as_deref(), &d.text));
        p
    }

    /// The place with a repository named by `--git-dir`/`GIT_DIR`.
    pub fn with_git_dir(&self, d: &Arg) -> Place {
        let mut p = self.clone();
        p.dynamic |= d.dynamic;
        p.git_dir = Some(d.text.clone());
        p
    }

    /// The place with a work tree named by `--work-tree`/`GIT_WORK_TREE`.
    pub fn with_work_tree(&self, d: &Arg) -> Place {
        let mut p = self.clone();
        p.dynamic |= d.dynamic;
        p.work_tree = Some(d.text.clone());
        p
    }

    /// A place that can't be known.
    pub fn unknown() -> Place {
        Place {
            dynamic: true,
            ..Place::default()
        }
    }

    /// Whether this is the session's own directory, unchanged.
    pub fn is_here(&self) -> bool {
        *self == Place::default()
    }

    /// The directory as one readable phrase, for reasons.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(d) = &self.dir {
            parts.push(format!("in {d}"));
        }
        if let Some(g) = &self.git_dir {
            parts.push(format!("with the repository {g}"));
        }
        if let Some(w) = &self.work_tree {
            parts.push(format!("with the work tree {w}"));
        }
        if self.dynamic {
            parts.push("(computed at run time)".to_owned());
        }
        if parts.is_empty() {
            "here".to_owned()
        } else {
            parts.join(" ")
        }
    }
}

/// `base` joined with `next` the way `cd` joins them (an absolute `next` replaces).
pub fn join(base: Option<&str>, next: &str) -> String {
    if next.starts_with('/') || next.starts_with('~') {
        return next.to_owned();
    }
    match base {
        Some(b) if !b.is_empty() => format!("{}/{next}", b.trim_end_matches('/')),
        _ => next.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_compose_like_cd() {
        let p = Place::default().enter(&Arg::lit("../a"));
        assert_eq!(p.dir.as_deref(), Some("../a"));
        let p = p.enter(&Arg::lit("b"));
        assert_eq!(p.dir.as_deref(), Some("../a/b"));
        let p = p.enter(&Arg::lit("/abs"));
        assert_eq!(p.dir.as_deref(), Some("/abs"));
        assert!(!p.dynamic);
        assert!(p.enter(&Arg::dynamic("$D")).dynamic);
        assert!(Place::default().is_here());
    }
}
