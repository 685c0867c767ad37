//! Condensing command output so an agent reads what it must act on.
//!
//! An agent that runs a test suite pays for every byte of output in its
//! context window, and most of those bytes are progress, passing tests and
//! repeated boilerplate. Condensing is lossy, so it is only safe under rules
//! that keep the verdict honest:
//!
//! - evidence (`git diff`, `git show`, `git log`) is never condensed;
//! - small output (at most 2 KB and 60 lines) is shown in full;
//! - the exit code decides the verdict, and a failing run whose failure the
//!   filter cannot find shows *more* of the output, not less;
//! - a family filter that does not recognise its output hands over to the
//!   generic head-and-tail filter and says so;
//! - every condensed output states how much was cut and where the full log is.
//!
//! Everything here is a pure function over text (no files, processes, clocks
//! or threads), so the same code can run inside a WebAssembly component.

mod cargo_build;
mod cargo_fmt;
mod cargo_test;
mod command;
mod generic;
mod go_test;
mod jest;
mod pytest;
mod render;
mod rustc;
mod text;
mod vitest;

pub use command::{EVIDENCE_GIT_SUBCOMMANDS, family_for};
pub use text::strip_ansi;

/// Output of at most this many bytes *and* [`SMALL_LINES`] lines is shown verbatim.
pub const SMALL_BYTES: usize = 2048;
/// Output of at most this many lines *and* [`SMALL_BYTES`] bytes is shown verbatim.
pub const SMALL_LINES: usize = 60;

/// The kind of command whose output is being condensed; picks the filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Family {
    /// `cargo test` (libtest output, plus compile errors before tests run).
    CargoTest,
    /// `cargo build`, `cargo check` and `cargo clippy`.
    CargoBuild,
    /// `cargo fmt --check`.
    CargoFmt,
    /// pytest, however it is launched.
    Pytest,
    /// jest.
    Jest,
    /// vitest.
    Vitest,
    /// `go test`.
    GoTest,
    /// Anything else: head and tail, with repeats folded.
    Generic,
    /// Evidence commands (`git diff`, `git show`, `git log`): never condensed.
    Passthrough,
}

impl Family {
    /// Every family, in a stable order for reports.
    pub const ALL: [Family; 9] = [
        Family::CargoTest,
        Family::CargoBuild,
        Family::CargoFmt,
        Family::Pytest,
        Family::Jest,
        Family::Vitest,
        Family::GoTest,
        Family::Generic,
        Family::Passthrough,
    ];

    /// The short name shown in the header line of condensed output.
    pub fn name(self) -> &'static str {
        match self {
            Family::CargoTest => "cargo test",
            Family::CargoBuild => "cargo build",
            Family::CargoFmt => "cargo fmt",
            Family::Pytest => "pytest",
            Family::Jest => "jest",
            Family::Vitest => "vitest",
            Family::GoTest => "go test",
            Family::Generic => "generic",
            Family::Passthrough => "evidence",
        }
    }
}

impl std::fmt::Display for Family {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The condensed view of one command's output, with honest measurements.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Condensed {
    /// What the agent reads.
    pub text: String,
    /// The family picked from the command line.
    pub family: Family,
    /// True when the family filter could not be trusted with this output
    /// (it did not recognise it, or found no failure in a failing run) and
    /// the generic view was shown instead or as well.
    pub fell_back: bool,
    /// Size of the raw output.
    pub bytes_in: usize,
    /// Size of `text`.
    pub bytes_out: usize,
    /// Lines in the raw output.
    pub lines_in: usize,
    /// Lines in `text`.
    pub lines_out: usize,
    /// `(bytes_in - bytes_out) / 4`: an estimate, not a tokenizer count.
    pub estimated_tokens_saved: usize,
}

/// What a family filter found, before the header and footer are added.
#[derive(Debug, Default)]
pub(crate) struct Body {
    /// The condensed lines.
    pub lines: Vec<String>,
    /// Failures, errors and crashes the filter recognised. Zero in a failing
    /// run means the filter missed something, and more is shown.
    pub failures: usize,
}

impl Body {
    pub(crate) fn push(&mut self, s: impl Into<String>) {
        self.lines.push(s.into());
    }
}

/// Condenses `output`, produced by `command` with `exit_code`. `log_name`
/// names the full log on disk, for the drill-down footer.
pub fn condense(command: &str, exit_code: i32, output: &str, log_name: &str) -> Condensed {
    let family = family_for(command);
    let bytes_in = output.len();
    let lines_in = output.lines().count();

    if family == Family::Passthrough {
        return render::measured(family, false, output.to_string(), bytes_in, lines_in);
    }
    if bytes_in <= SMALL_BYTES && lines_in <= SMALL_LINES {
        return render::small(family, exit_code, output, bytes_in, lines_in);
    }

    let lines = text::clean(output);
    let found = match family {
        Family::CargoTest => cargo_test::filter(&lines),
        Family::CargoBuild => cargo_build::filter(&lines),
        Family::CargoFmt => cargo_fmt::filter(&lines),
        Family::Pytest => pytest::filter(&lines),
        Family::Jest => jest::filter(&lines),
        Family::Vitest => vitest::filter(&lines),
        Family::GoTest => go_test::filter(&lines),
        Family::Generic | Family::Passthrough => None,
    };

    let mut notes = Vec::new();
    let (body, fell_back) = match found {
        Some(body) if exit_code != 0 && body.failures == 0 => {
            notes.push(format!(
                "hall: exit {exit_code}, but the {family} filter found no failure in this output; \
                 showing the generic view as well, so nothing is hidden"
            ));
            let mut merged = body;
            merged.push("");
            merged.push("[hall: generic view of the same output]");
            merged
                .lines
                .extend(generic::view(&lines, generic::Window::Wide));
            (merged, true)
        }
        Some(body) => {
            if exit_code == 0 && body.failures > 0 {
                notes.push(format!(
                    "hall: exit 0, but the output reports {} failure(s); read them before trusting the exit code",
                    body.failures
                ));
            }
            (body, false)
        }
        None if family == Family::Generic => {
            // The generic view has no notion of a failure to miss: it always
            // keeps head, tail and the problem-looking lines in between.
            let body = Body {
                lines: generic::view(&lines, generic::Window::Normal),
                failures: 0,
            };
            (body, false)
        }
        None => {
            notes.push(format!(
                "hall: the {family} filter did not recognise this output; showing the generic view"
            ));
            let body = Body {
                lines: generic::view(&lines, generic::Window::Wide),
                failures: 0,
            };
            (body, true)
        }
    };

    render::condensed(
        family, fell_back, exit_code, &notes, body, bytes_in, lines_in, log_name,
    )
}
