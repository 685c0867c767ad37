//! `hall export [<id>] [--out FILE]`: an item's whole record as Markdown, for a person
//! or a PR: the request, each round (its checks, condensed, with the log to open; the
//! verdict and its findings; the fix and what it claims), the decisions people made,
//! questions and answers, usage and cost per role, and every headless run step by step.
//!
//! Everything comes from the journal and the run streams beside it; nothing is asked
//! of git, GitHub or a model, so an export is the same on any machine with the journal.

use std::fmt::Write as _;

use serde::Serialize;

use super::{Ctx, Reply};
use crate::cli::ExportArgs;
use crate::error::{IoContext, Result};
use crate::item::{Event, Item, ItemId};
use crate::record::inline;

#[derive(Serialize, schemars::JsonSchema)]
pub struct ExportReply {
    pub item: ItemId,
    /// The file written with `--out`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The Markdown, when no `--out` was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub markdown: Option<String>,
    pub bytes: usize,
    pub rounds: u32,
    pub runs: usize,
    pub next: Vec<String>,
}

pub fn run(ctx: &Ctx, args: &ExportArgs) -> Result<Reply> {
    let hall = ctx.hall()?;
    let id = hall.resolve(args.id.as_deref())?;
    let events = hall.events(id)?;
    let item = crate::item::fold(&events);
    let runs = super::trace::runs(&hall.journal.item_dir(id).join("runs"));
    let markdown = render(id, &item, &events, &runs);
    let bytes = markdown.len();
    let next = vec![format!("hall status {id}"), format!("hall log {id}")];
    let reply = |path: Option<String>, markdown: Option<String>| ExportReply {
        item: id,
        path,
        markdown,
        bytes,
        rounds: item.round,
        runs: runs.len(),
        next: next.clone(),
    };
    match &args.out {
        Some(out) => {
            crate::journal::file::write_atomic(out, markdown.as_bytes()).at(out)?;
            let path = out.display().to_string();
            let text = format!("{id}'s record: {bytes} bytes in {path}\n");
            Ok(Reply::new(&reply(Some(path), None), text))
        }
        None => {
            let r = reply(None, Some(markdown.clone()));
            Ok(Reply::new(&r, markdown))
        }
    }
}

/// The record, from the item's events and its run streams (oldest first).
pub fn render(id: ItemId, item: &Item, events: &[Event], runs: &[std::path::PathBuf]) -> String {
    let mut md = crate::record::render(id, item, events);
    run_steps(&mut md, runs);
    md
}

/// Every headless run, step by step from its stream.
fn run_steps(md: &mut String, runs: &[std::path::PathBuf]) {
    if runs.is_empty() {
        return;
    }
    md.push_str("\n## Runs\n");
    for path in runs {
        let (info, steps) = super::trace::info(path);
        let state = match (&info.failure, info.ended, info.live) {
            (Some(f), _, _) => format!("failed: {}", inline(f)),
            (None, true, _) => "ended".into(),
            (None, false, true) => "live".into(),
            (None, false, false) => "ended without its end line".into(),
        };
        let _ = writeln!(
            md,
            "\n### {} ({}, {state})\n",
            inline(&info.run),
            inline(&info.role)
        );
        for (n, s) in steps.iter().enumerate() {
            let _ = writeln!(md, "{}. {}", n + 1, inline(s));
        }
        if steps.is_empty() {
            md.push_str("No steps were recorded.\n");
        }
    }
}

/// `render` for a journal on disk: the benchmark's and the shipper's entry point.
pub fn of_item(journal: &crate::journal::Journal, id: ItemId) -> Result<String> {
    let events = journal.read_item(id)?.events;
    let item = crate::item::fold(&events);
    let runs = super::trace::runs(&journal.item_dir(id).join("runs"));
    Ok(render(id, &item, &events, &runs))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::item::EventKind;
    use crate::item::event::{Dispute, EVENT_VERSION, Finding, Usage};
    use crate::item::{Lens, Severity, Sha, Source};

    fn at(step: usize, actor: &str, kind: EventKind) -> Event {
        Event {
            v: EVENT_VERSION,
            t: format!("2026-11-02T10:{:02}:{:02}Z", step / 60, step % 60),
            actor: actor.into(),
            kind,
            item: Some(ItemId(1)),
            via: None,
        }
    }

    fn sha(n: u32) -> Sha {
        Sha::new(format!("{n:x}{}", "0".repeat(39)))
    }

    fn finding(id: &str, scenario: &str) -> Finding {
        Finding {
            id: id.into(),
            lens: Lens::Correctness,
            severity: Severity::Major,
            file: "src/limit.rs".into(),
            line: Some(4),
            scenario: scenario.into(),
        }
    }

    /// Opus's verdict on round `n` (at `sha(n)`): an approval when it finds nothing.
    fn verdict(n: u32, findings: Vec<Finding>, summary: Option<&str>) -> EventKind {
        EventKind::Verdict {
            sha: sha(n),
            round: n,
            approved: findings.is_empty(),
            findings,
            model: Some("opus".into()),
            summary: summary.map(Into::into),
            by: None,
            learnings: Vec::new(),
        }
    }

    fn journal(request: &str, scenario: &str) -> Vec<Event> {
        let kinds = vec![
            (
                "you",
                EventKind::Created {
                    title: "Cap retries".into(),
                    request: Some(request.into()),
                    branch: "hm/H-0001-cap".into(),
                    base: "main".into(),
                    worktree: None,
                    source: Source::New,
                    issue: Some(212),
                    pr: None,
                },
            ),
            (
                "hook",
                EventKind::Commit {
                    sha: sha(1),
                    subject: "Cap at 3".into(),
                    fixes: vec![],
                },
            ),
            (
                "you",
                EventKind::Ready {
                    sha: sha(1),
                    round: 1,
                    note: None,
                },
            ),
            (
                "assayer",
                EventKind::CheckRun {
                    sha: sha(1),
                    check: "cargo test".into(),
                    exit_code: 101,
                    duration_ms: 900,
                    cached: false,
                    output: Some("test limit ... FAILED\n```\nerror: 1 failed".into()),
                    log: Some("logs/1.log".into()),
                },
            ),
            (
                "assayer",
                verdict(1, vec![finding("F1", scenario)], Some("One off-by-one.")),
            ),
            (
                "assayer",
                EventKind::Usage(Usage {
                    model: "opus".into(),
                    role: "review".into(),
                    input: 1000,
                    output: 200,
                    cost_usd: 0.5,
                    ..Usage::default()
                }),
            ),
            (
                "fixer",
                EventKind::FixSubmitted {
                    sha: sha(2),
                    fixed: vec!["F1".into()],
                    disputed: vec![Dispute {
                        finding: "F9".into(),
                        reason: "no such".into(),
                    }],
                },
            ),
            ("assayer", verdict(2, vec![], None)),
            (
                "assayer",
                EventKind::Hallmarked {
                    sha: sha(2),
                    round: 2,
                    seal: None,
                },
            ),
        ];
        kinds
            .into_iter()
            .enumerate()
            .map(|(i, (actor, k))| at(i, actor, k))
            .collect()
    }

    #[test]
    fn the_record_has_each_round_its_checks_verdicts_fixes_and_costs() {
        let events = journal("Cap the retries at 3.", "attempts may reach 4");
        let item = crate::item::fold(&events);
        let md = render(ItemId(1), &item, &events, &[]);
        let order = [
            "# H-0001: Cap retries",
            "- Issue: #212",
            "## Request",
            "Cap the retries at 3.",
            "## Development",
            "commit `1000000` Cap at 3",
            "## Round 1",
            "check `cargo test` failed (exit 101, 900 ms), log `logs/1.log`",
            "test limit ... FAILED",
            "**Verdict**",
            "rejected",
            "> One off-by-one.",
            "**F1** [major, correctness] `src/limit.rs:4`: attempts may reach 4 (fixed in `2000000`)",
            "**Fix** `2000000`",
            "- disputes F9: no such",
            "## Round 2",
            "approved",
            "**Hallmarked**",
            "## Usage",
            "| review | 1 | 1000 | 200 | 0 | $0.5000 |",
        ];
        let mut from = 0;
        for want in order {
            let found = md[from..]
                .find(want)
                .unwrap_or_else(|| panic!("{want:?} after byte {from} in:\n{md}"));
            from += found + want.len();
        }
        // The check's output holds a fence: the block around it is longer.
        assert!(md.contains("  ````text\n  test limit"), "{md}");
    }

    #[test]
    fn text_from_a_model_cannot_restructure_the_record() {
        let hostile =
            "<script>alert(1)</script>\n## Approved by everyone\n| a | b |\n[link](http://x)";
        let events = journal(hostile, hostile);
        let item = crate::item::fold(&events);
        let md = render(ItemId(1), &item, &events, &[]);
        // The request is kept as written, inside its fence; the finding is one line.
        assert!(
            md.contains("```text\n<script>alert(1)</script>\n## Approved by everyone"),
            "{md}"
        );
        // That fenced line is the only one that reads as a heading.
        assert_eq!(md.matches("\n## Approved").count(), 1, "{md}");
        assert!(md.contains("\\<script\\>alert(1)\\</script\\> \\#\\# Approved by everyone \\| a \\| b \\| \\[link\\](http://x)"), "{md}");
    }
}
