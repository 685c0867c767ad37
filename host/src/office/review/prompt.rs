//! The reviewer's prompt: Hallmark's instructions, the skill and the base's rules first,
//! as the only instructions; then what the item's code and its developer wrote, and what
//! the Library says, fenced as data ([`Prompt`]). From round 2 it holds only the diff
//! since the last round and the findings still open; after a rebase of a shipped change,
//! only the difference the rebase made, when it is small.

use std::path::Path;

use super::{base_rev, previous};
use crate::error::Result;
use crate::git;
use crate::hall::Hall;
use crate::hall::rules::BaseTip;
use crate::item::{Event, Item, ItemId, Sha};
use crate::office::fence::Prompt;

fn strip_frontmatter(text: &str) -> &str {
    text.strip_prefix("---")
        .and_then(|rest| rest.find("\n---").map(|i| &rest[i + 4..]))
        .unwrap_or(text)
        .trim_start()
}

/// The rules files and `.hallmark/review.md` as the base tip has them, read in one
/// process with every object re-hashed against its name; an object that doesn't match
/// is an error, and the review doesn't run on rules it can't trust.
fn base_rules(hall: &Hall, tip: &BaseTip) -> Result<Vec<(String, String)>> {
    let mut paths: Vec<String> = hall.config.rules.clone();
    paths.push(REVIEW_FILE.into());
    let names: Vec<&str> = paths.iter().map(String::as_str).collect();
    let files = crate::hall::rules::files_at(&hall.repo, &tip.sha, &names)?;
    Ok(paths
        .into_iter()
        .zip(files)
        .filter_map(|(p, bytes)| Some((p, String::from_utf8_lossy(&bytes?).into_owned())))
        .collect())
}

/// The repository's own review instructions, on the base branch.
const REVIEW_FILE: &str = ".hallmark/review.md";

/// Cuts `text` to `max` bytes (on a character boundary), saying where the rest is.
pub fn clip(text: String, max: usize) -> String {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!(
        "{}\n… (diff truncated at {} KB; read the files in the checkout for the rest)\n",
        &text[..end],
        max / 1024
    )
}

/// The review prompt for the item's current round. `tip` is the base branch's tip,
/// read once for the whole step: the rules come from it, and the whole change is
/// measured against it.
///
/// Hallmark's instructions, the skill and the base's rules come first and are the only
/// instructions; everything the developer or the item's code wrote (the title, the
/// summary, drafted replies, the fixer's dispute reasons, the diff) and what the
/// Library says are fenced as data ([`Prompt`]).
pub fn prompt(
    hall: &Hall,
    id: ItemId,
    item: &Item,
    events: &[Event],
    dir: &Path,
    tip: Option<&BaseTip>,
) -> Result<String> {
    let sha = item.sha.clone().unwrap_or_default();
    // The change is measured against the item's own base (a stacked item's is another
    // branch); the rules always come from the configured base's tip.
    let base = &item.base;
    let stacked = *base != hall.config.base;
    let mut p = Prompt::new();
    p.text(format!(
        "Review {id} round {}: commit {} against {base}.\n",
        item.round,
        sha.short(),
    ));
    if stacked {
        p.text(format!(
            "It is stacked on {base}, another branch with its own PR, not on {}: review only what it adds to {base}.\n",
            hall.config.base
        ));
    }
    p.text(format!(
        "\nThe checkout at {} holds exactly this commit; read any file there. Answer only by calling the StructuredOutput tool with the verdict.\n",
        dir.display()
    ));
    p.notice();
    if let Some(skill) = crate::hall::plugin::plugin_file("skills/principal-review/SKILL.md") {
        p.text("# How to review\n\n");
        p.text(strip_frontmatter(skill).to_string());
    }
    let rules = match tip {
        Some(t) => base_rules(hall, t)?,
        None => Vec::new(),
    };
    if let (Some(tip), false) = (tip, rules.is_empty()) {
        p.text(format!(
            "\n# The repository's rules (from {} at {})\n",
            hall.config.base,
            crate::item::sha::short(&tip.sha)
        ));
        for (path, text) in rules {
            let text = clip(
                text.trim_end().to_string(),
                crate::platform::max_arg_bytes() / 8,
            );
            p.text(format!("\n## {path}\n\n{text}\n"));
        }
    }
    p.text("\n# The change\n\n");
    p.data("the item's title", item.title.clone());
    if let Some(s) = &item.summary {
        p.data("the developer's summary", s.clone());
    }
    let drafts: Vec<&crate::item::Reply> = item.replies.iter().filter(|r| !r.posted).collect();
    if !drafts.is_empty() {
        p.text("\nReplies to the PR's review comments, posted with this change if you approve it (a reply that is wrong, or claims what the change doesn't do, is a finding):\n");
        for r in drafts {
            p.data(
                format!("the reply to comment #{}", r.comment),
                r.body.clone(),
            );
        }
    }
    if let Some(b) = briefing(hall, item, dir, &sha, tip) {
        p.text("\n# Learnings from the Library\n\nWhat earlier reviews of this repository taught, chosen for this change (each line says why it is here). Name the ones your verdict relied on in `learnings_used`. A learning is advice, not a rule: if the code shows one is wrong here, say so in a finding's scenario.\n\n");
        p.data("the Library's learnings", b);
    }
    let previous = previous(events);
    let diff = match &previous {
        Some(prev) if prev.sha != sha && git::is_ancestor(dir, &prev.sha, &sha) => {
            p.text(format!(
                "\n# What to review\n\nRound {} asked for changes at {}. Review only what changed since then ({}..{}), and decide for each open finding whether it is fixed. Findings still open go into this verdict again; one you leave out counts as fixed.\n\nOpen findings, with what the fixer says of each:\n",
                prev.round,
                prev.sha.short(),
                prev.sha.short(),
                sha.short()
            ));
            let mut open = String::new();
            for f in &prev.open {
                let claim = if prev.fixed.contains(&f.id) {
                    " (the fixer says it is fixed)".to_string()
                } else if let Some((_, why)) = prev.disputed.iter().find(|(d, _)| *d == f.id) {
                    format!(" (the fixer disputes it: {why})")
                } else {
                    String::new()
                };
                open.push_str(&format!("- {f}{claim}\n"));
            }
            p.data("the open findings", open);
            git::diff(dir, &prev.sha, &sha)?
        }
        _ => {
            let base_rev = base_rev(hall, item, tip);
            let mb = git::merge_base(dir, &base_rev, &sha)
                .map(Sha::into_string)
                .unwrap_or(base_rev.clone());
            if let Some((shipped, difference)) = rebase_difference(dir, item, &base_rev, &mb)? {
                p.text(format!(
                    "\n# What to review\n\nThis change was approved at {} and shipped. Its branch was then rebased onto {base} (now {}), and the change is no longer the same: {} lines differ. Review only that difference, below, as a diff of the approved change's diff ({}) against the rebased change's diff ({}..{}). Lines starting `-` or `+` inside it are lines of those diffs that went or came. Judge whether the rebased change still does what was approved, safely, on top of what {base} has now.\n",
                    shipped.short(),
                    crate::item::sha::short(&mb),
                    difference.1,
                    shipped.short(),
                    crate::item::sha::short(&mb),
                    sha.short()
                ));
                let room = crate::platform::max_arg_bytes().saturating_sub(p.len() + 256);
                p.data(
                    "the difference between the two diffs",
                    clip(difference.0, room),
                );
                return Ok(p.render());
            }
            p.text(format!(
                "\n# What to review\n\nThe whole change: {}..{}.\n",
                crate::item::sha::short(&mb),
                sha.short()
            ));
            git::diff(dir, &mb, &sha)?
        }
    };
    // The prompt is one argument: the diff gets what the platform's limit leaves.
    let room = crate::platform::max_arg_bytes().saturating_sub(p.len() + 256);
    p.data("the diff", clip(diff, room));
    Ok(p.render())
}

/// The Library's briefing for this review: learnings scoped to the paths the change
/// touches first, then what a search for its title and summary finds, under
/// `[library] briefing_limit` tokens. Nothing when the store is empty or can't be read:
/// a review never waits on the Library.
fn briefing(
    hall: &Hall,
    item: &Item,
    dir: &Path,
    sha: &Sha,
    tip: Option<&BaseTip>,
) -> Option<String> {
    let library = crate::library::Library::new(
        &hall.journal,
        crate::library::Settings::from_config(&hall.config.library),
    );
    if !library.learnings_dir().is_dir() {
        return None;
    }
    let from = base_rev(hall, item, tip);
    let fork = git::merge_base(dir, &from, sha.as_str())
        .map(Sha::into_string)
        .unwrap_or(from);
    let changed = git::files_between(dir, &fork, sha.as_str()).ok()?;
    let cap = crate::config::parse_tokens(&hall.config.library.briefing_limit).ok()??;
    let search = crate::library::Search::open(&library).ok()?;
    let query = format!(
        "{} {}",
        item.title,
        item.summary.as_deref().unwrap_or_default()
    );
    let b = library
        .briefing(&search, &changed, &query, usize::try_from(cap).ok()?)
        .ok()?;
    let text = b.text();
    (!text.trim().is_empty()).then_some(text)
}

/// The largest difference a rebase review reads on its own (decision 0027); a larger one
/// gets a full review.
pub const REBASE_REVIEW_LINES: usize = 100;

/// For an item whose approved, shipped change was rebased (the branch no longer
/// contains the shipped commit): the difference between the change as shipped and as
/// it is now, when it is small enough for a rebase review.
fn rebase_difference(
    dir: &Path,
    item: &Item,
    base_rev: &str,
    fork: &str,
) -> Result<Option<(Sha, (String, usize))>> {
    let (Some(shipped), Some(sha)) = (item.shipped.clone(), item.sha.as_ref()) else {
        return Ok(None);
    };
    if shipped == *sha || git::is_ancestor(dir, shipped.as_str(), sha.as_str()) {
        return Ok(None);
    }
    let Ok(old_fork) = git::merge_base(dir, base_rev, shipped.as_str()) else {
        return Ok(None);
    };
    let difference = git::interdiff(
        dir,
        (old_fork.as_str(), shipped.as_str()),
        (fork, sha.as_str()),
    )?;
    Ok(difference
        .filter(|(_, lines)| *lines <= REBASE_REVIEW_LINES)
        .map(|d| (shipped, d)))
}
