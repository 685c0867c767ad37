//! Hallmark's built-in condense room: the filters of `hall-condense`, exported as a
//! component so a repository can replace them like any other room.

use hall_room_sdk::condense::{CondenseInput, CondenseRoom, CondenseStats, Condensed, Failure};

struct Builtin;

impl CondenseRoom for Builtin {
    fn condense(input: CondenseInput) -> Result<Condensed, Failure> {
        let c = hall_condense::condense(&input.command, input.exit_code, &input.output, &input.log);
        let filter = if c.fell_back {
            format!("{} (fell back to generic)", c.family.name())
        } else {
            c.family.name().to_string()
        };
        Ok(Condensed {
            text: c.text,
            filter,
            stats: CondenseStats {
                bytes_in: c.bytes_in as u64,
                bytes_out: c.bytes_out as u64,
                lines_in: c.lines_in as u64,
                lines_out: c.lines_out as u64,
            },
        })
    }
}

hall_room_sdk::export_condense!(Builtin);
