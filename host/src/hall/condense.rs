//! Condensing a command's output for an agent, through the repository's condense room.
//! `hall run` and the Assay Office's checks both print what this returns.

use super::Hall;
use crate::rooms::World;
use crate::rooms::types::CondenseInput;

/// What an agent reads of one command's output.
#[derive(Clone, Debug, PartialEq)]
pub struct View {
    pub text: String,
    /// The filter that condensed it, or `none` when the whole output is shown.
    pub filter: String,
    pub bytes_out: u64,
    /// Why the whole output is shown, when the room failed or refused.
    pub warnings: Vec<String>,
}

/// Condenses `input` with the repository's condense room (the built-in one outside a
/// repository). A room that fails or refuses hides nothing: the whole output comes
/// back, with a warning saying why.
pub fn condense(hall: Option<&Hall>, input: &CondenseInput) -> View {
    let condensed = super::policy::runtime_for(hall)
        .and_then(|rooms| super::policy::room(&rooms, hall, World::Condense))
        .and_then(|room| Ok(room.condense(input)?));
    let whole = |warning: String| View {
        text: whole(&input.output, input.exit_code, &input.log),
        filter: "none".to_string(),
        bytes_out: input.output.len() as u64,
        warnings: vec![warning],
    };
    match condensed {
        Ok(Ok(c)) => View {
            text: c.text,
            filter: c.filter,
            bytes_out: c.stats.bytes_out,
            warnings: Vec::new(),
        },
        Ok(Err(f)) => whole(format!(
            "the condense room refused this output ({}); showing all of it",
            f.message
        )),
        Err(e) => whole(format!(
            "{} ({}); showing the whole output",
            e.message,
            e.code.as_str()
        )),
    }
}

/// The output as it is, with the exit code and where it is kept, when no room condensed it.
fn whole(output: &str, exit_code: i32, log: &str) -> String {
    format!("{output}\n[exit {exit_code}; full log: {log}]")
}
