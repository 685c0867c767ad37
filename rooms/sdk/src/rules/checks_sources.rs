//! Reading the files check detection looks at: task runners' recipes with their bodies
//! and dependencies, and the commands CI workflows run.
//!
//! Every reader is a small line-based parser of the part of the format the rules need,
//! not a general YAML, TOML or Makefile parser: a construct it does not understand is
//! skipped, never an error, so an odd file costs a missed check rather than a refusal.

// This file is included by path from the SDK, so its modules are found by path too.
#[path = "checks_sources/ci.rs"]
mod ci;
#[path = "checks_sources/runners.rs"]
mod runners;

pub use ci::{CiCommand, ci};
pub use runners::{justfile, makefile, noxfile, package_scripts, taskfile, tox};

/// A runner that names commands a person runs by name.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum RunnerKind {
    Just,
    Make,
    Task,
    /// package.json scripts, run with the named client.
    Scripts(&'static str),
    Tox,
    Nox,
}

/// One named command of a runner.
#[derive(Clone, Debug, Default)]
pub struct Recipe {
    pub name: String,
    /// Recipes that run first.
    pub deps: Vec<String>,
    /// The command lines, as written.
    pub body: Vec<String>,
}

/// A runner file and its recipes.
#[derive(Clone, Debug)]
pub struct Runner {
    pub kind: RunnerKind,
    pub source: String,
    pub recipes: Vec<Recipe>,
    /// The recipe run with no name (`make` alone), when there is one.
    pub default: Option<String>,
    /// Names this file may define that the reader cannot see (an `include`, a catch-all
    /// pattern rule): an unknown name is then not reported as undefined.
    pub open: bool,
}

impl Runner {
    pub fn get(&self, name: &str) -> Option<&Recipe> {
        self.recipes.iter().find(|r| r.name == name)
    }

    /// The command line that runs recipe `name`.
    pub fn invoke(&self, name: &str) -> String {
        match self.kind {
            RunnerKind::Just => format!("just {name}"),
            RunnerKind::Make => format!("make {name}"),
            RunnerKind::Task => format!("task {name}"),
            RunnerKind::Scripts(pm) if name == "test" && pm != "bun" => format!("{pm} test"),
            RunnerKind::Scripts(pm) => format!("{pm} run {name}"),
            RunnerKind::Tox => format!("tox -e {name}"),
            RunnerKind::Nox => format!("nox -s {name}"),
        }
    }
}

/// The width of a line's leading whitespace: the readers' measure of nesting.
fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// `s` trimmed, without one pair of matching quotes around the whole of it.
pub fn unquote(s: &str) -> &str {
    let s = s.trim();
    for q in ['"', '\''] {
        if s.len() >= 2 && s.starts_with(q) && s.ends_with(q) {
            return &s[1..s.len() - 1];
        }
    }
    s
}
