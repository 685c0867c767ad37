//! `hall ready`: freeze HEAD and queue the item for the Assay Office.

use super::{Ctx, ItemReply, Reply};
use crate::cli::ReadyArgs;
use crate::error::{Code, HallError, Result};
use crate::git;
use crate::hall::worktree::freeze_point;
use crate::item::{Action, Item, State};

pub fn run(ctx: &Ctx, args: &ReadyArgs) -> Result<Reply> {
    ctx.refuse_fixer("ready")?;
    let hall = ctx.hall()?;
    let id = hall.resolve(args.id.as_deref())?;
    let item = hall.item(id)?;
    parts_done(&hall, &item)?;
    let (sha, on_base) = freeze_point(&hall, &item)?;
    nothing_new(&hall, &item)?;
    let applied = hall.change(ctx, id).apply(Action::Ready {
        sha,
        note: args.note.clone(),
        on_base,
    })?;
    let mut warnings = super::torn_warnings(&hall.journal.item_file(id), &applied.torn);
    let mut reply = ItemReply::of(&applied.after, applied.changed());
    if let Some(idle) = no_daemon() {
        reply.warnings.push(idle.clone());
        reply.next.insert(0, "hall daemon start".into());
        reply.next.insert(1, "hall daemon run --until-idle".into());
        warnings.push(idle);
    }
    Ok(reply
        .render(&applied.after, "is frozen and queued for checks")
        .warn(warnings))
}

/// Refuses to freeze a parent while one of its parts is open (`CHILDREN_OPEN`): the
/// reviewer reviews the parent once, with every part merged in. (A part
/// itself is refused by the state machine: it merges, it is never frozen.)
fn parts_done(hall: &crate::hall::Hall, item: &Item) -> Result<()> {
    let open: Vec<(String, State)> = item
        .parts
        .iter()
        .filter_map(|p| hall.item(p.id).ok().map(|i| (p.id.to_string(), i.state)))
        .filter(|(_, s)| !matches!(s, State::Closed | State::Dropped))
        .collect();
    if open.is_empty() {
        return Ok(());
    }
    let id = item.id.map(|i| i.to_string()).unwrap_or_default();
    let listed: Vec<String> = open
        .iter()
        .map(|(p, s)| format!("{p} ({})", s.as_str().replace('_', " ")))
        .collect();
    let mut e = HallError::new(
        Code::ChildrenOpen,
        format!(
            "{id} has parts still open: {}. Merge each finished part (or drop it) first; the \
             parent is reviewed once, whole",
            listed.join(", ")
        ),
    );
    for (p, _) in &open {
        e = e.hint(format!("hall merge {p}"));
    }
    Err(e.hint(format!("hall status {id}")))
}

/// Refuses to freeze an item whose branch has no commit its base lacks: the loop would
/// review an empty diff.
fn nothing_new(hall: &crate::hall::Hall, item: &Item) -> Result<()> {
    if !matches!(item.state, State::Development | State::AwaitingYou) {
        return Ok(());
    }
    let wt = hall.worktree_of(item);
    // A base that doesn't resolve here (a deleted branch) is the loop's to report.
    if git::commit(&wt, &item.base).is_none() || !git::is_ancestor(&wt, "HEAD", &item.base) {
        return Ok(());
    }
    let id = item.id.map(|i| i.to_string()).unwrap_or_default();
    let at = wt.display();
    Err(HallError::new(
        Code::WrongState,
        format!(
            "{id} has no commits since its base {}: there is nothing to check or review yet; commit the work in {at} first",
            item.base
        ),
    )
    .hint(format!("git -C {at} add -A && git -C {at} commit -m \"…\""))
    .hint(format!("hall ready {id}"))
    .hint(format!("hall status {id}")))
}

/// What to say when no daemon runs: then nothing picks up a ready item.
fn no_daemon() -> Option<String> {
    let running = crate::daemon::read_state().is_some_and(|s| crate::daemon::alive(&s));
    (!running).then(|| {
        "no daemon is running, so nothing will check or review this item until one does: \
         `hall daemon start` (in the background) or `hall daemon run --until-idle` (here, once)"
            .to_string()
    })
}
