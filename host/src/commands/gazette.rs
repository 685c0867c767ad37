//! `hall gazette [ID] [--open]`: prints the item's Gazette page if it is stale (see
//! `crate::gazette`) and says where it is; `--open` shows it with the system's opener.

use serde::Serialize;

use super::{Ctx, Reply, next_text};
use crate::cli::GazetteArgs;
use crate::error::{Code, HallError, Result};
use crate::gazette::{self, Words};
use crate::item::ItemId;

#[derive(Serialize, schemars::JsonSchema)]
pub struct GazetteReply {
    pub item: ItemId,
    /// The page: `items/<id>/gazette.html` in the journal.
    pub path: String,
    /// False when the page was already printed from this journal and these words.
    pub printed: bool,
    /// The words file: `found`, `absent` (the librarian has not written one) or
    /// `invalid` (the page's footer says why).
    pub words: String,
    /// Whether `--open` handed the page to the opener.
    pub opened: bool,
    /// With `--text`: the page as plain text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    pub next: Vec<String>,
}

pub fn run(ctx: &Ctx, args: &GazetteArgs) -> Result<Reply> {
    let hall = ctx.hall()?;
    let id = hall.resolve(args.id.as_deref())?;
    let printed = gazette::print(&hall.journal, id)?;
    let words = match Words::read(&hall.journal.item_dir(id).join(gazette::words::WORDS_FILE)) {
        Words::Absent => "absent",
        Words::Invalid(_) => "invalid",
        Words::Found(_) => "found",
    };
    if args.open {
        crate::platform::open_file(&printed.path).map_err(|why| {
            HallError::new(
                Code::CommandFailed,
                format!(
                    "{} was printed but not opened: {why}",
                    printed.path.display()
                ),
            )
            .hint(format!("hall gazette {id}"))
        })?;
    }
    let reply = GazetteReply {
        item: id,
        path: printed.path.display().to_string(),
        printed: printed.printed,
        words: words.to_string(),
        opened: args.open,
        text: if args.text {
            let html = std::fs::read_to_string(&printed.path).map_err(|e| {
                HallError::internal(format!("{} can't be read: {e}", printed.path.display()))
                    .hint(format!("hall gazette {id}"))
            })?;
            Some(gazette::escape::plain(&html))
        } else {
            None
        },
        next: vec![
            format!("hall attach <file|https://…> --id {id}"),
            format!("hall status {id}"),
        ],
    };
    let page = reply
        .text
        .as_deref()
        .map(|t| format!("{t}\n\n"))
        .unwrap_or_default();
    let text = format!(
        "{page}{id}'s Gazette{}: {}\n{}",
        if printed.printed {
            ", printed"
        } else {
            " (up to date)"
        },
        reply.path,
        next_text(&reply.next)
    );
    Ok(Reply::new(&reply, text))
}
