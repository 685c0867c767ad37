//! `hall export [<id>] [--out FILE]`: an item's whole record as Markdown, for a person
//! or a PR: the request, each round (its checks, condensed, with the log to open; the
//! verdict and its findings; the fix and what it claims), the decisions people made,
//! questions and answers, usage and cost per role, and every headless run step by step.
//!
//! Everything comes from the journal and the run streams beside it; nothing is asked
//! of git, GitHub or a model, so an export is the same on any machine with the journal.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use super::{Ctx, Reply};
use crate::cli::ExportArgs;
use crate::error::{IoContext, Result};
use crate::item::outcome::{Outcome, outcomes};
use crate::item::{Event, EventKind, Item, ItemId};

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
    let mut md = String::with_capacity(16 * 1024);
    header(&mut md, id, item, events);
    rounds(&mut md, events);
    decisions(&mut md, events);
    questions(&mut md, events);
    usage(&mut md, events);
    run_steps(&mut md, runs);
    md
}

fn header(md: &mut String, id: ItemId, item: &Item, events: &[Event]) {
    let _ = writeln!(md, "# {id}: {}\n", inline(&item.title));
    let _ = writeln!(
        md,
        "- State: {} (since {})",
        item.state,
        inline(&item.since)
    );
    let _ = writeln!(
        md,
        "- Branch: `{}` on `{}`",
        code(&item.branch),
        code(&item.base)
    );
    let _ = writeln!(md, "- Created: {}", inline(&item.created));
    if let Some(n) = item.issue {
        let _ = writeln!(md, "- Issue: #{n}");
    }
    if let Some(pr) = &item.follow_up {
        let _ = writeln!(md, "- Follows up on: {}", inline(pr));
    }
    if let Some(parent) = item.parent {
        let _ = writeln!(md, "- A part of: {parent}");
    }
    for part in &item.parts {
        let _ = writeln!(md, "- Part: {} \"{}\"", part.id, inline(&part.title));
    }
    if let Some(sha) = &item.hallmark {
        let _ = writeln!(md, "- Hallmark: `{sha}`");
    }
    if let Some(pr) = &item.pr {
        let _ = writeln!(md, "- PR: {}", inline(pr));
    }
    if let Some(d) = &item.delivered {
        let how = if d.merged {
            "merged"
        } else {
            "closed unmerged"
        };
        let _ = writeln!(md, "- Delivered: {how}");
    }
    let request = events.iter().find_map(|e| match &e.kind {
        EventKind::Created {
            request: Some(r), ..
        } => Some(r.as_str()),
        _ => None,
    });
    if let Some(r) = request {
        let _ = write!(md, "\n## Request\n\n{}", fenced(r));
    }
}

/// Each round from its `ready`: the checks, the verdict, the fix. What happened before
/// the first round is the development: its commits.
fn rounds(md: &mut String, events: &[Event]) {
    let told = outcomes(events);
    md.push_str("\n## Development\n\n");
    let mut in_round = false;
    // A fix resubmits the item: the next round starts there, with no `ready`.
    let mut round = 0;
    for e in events {
        match &e.kind {
            EventKind::Commit { sha, subject, .. } => {
                let _ = writeln!(
                    md,
                    "- {} commit `{}` {}",
                    at(e),
                    sha.short(),
                    inline(subject)
                );
            }
            EventKind::ProposedReady { sha, summary, .. } => {
                let _ = writeln!(
                    md,
                    "- {} proposed ready at `{}`: {}",
                    at(e),
                    sha.short(),
                    inline(summary)
                );
            }
            EventKind::Ready { sha, round: r, .. } => {
                in_round = true;
                round = *r;
                let _ = writeln!(md, "\n## Round {r}\n\nFrozen at `{sha}` ({}).\n", at(e));
            }
            EventKind::SetupRun {
                command,
                exit_code,
                duration_ms,
                output,
                log,
                ..
            } => {
                let _ = writeln!(
                    md,
                    "- setup `{}`: exit {exit_code}, {duration_ms} ms{}",
                    code(command),
                    log_of(log.as_deref())
                );
                if let Some(o) = output.as_deref().filter(|_| *exit_code != 0) {
                    md.push_str(&indented(&fenced(o)));
                }
            }
            EventKind::CheckRun {
                check,
                exit_code,
                duration_ms,
                cached,
                output,
                log,
                ..
            } => {
                let cached = if *cached { ", cached" } else { "" };
                let verdict = if *exit_code == 0 { "passed" } else { "failed" };
                let _ = writeln!(
                    md,
                    "- check `{}` {verdict} (exit {exit_code}, {duration_ms} ms{cached}){}",
                    code(check),
                    log_of(log.as_deref())
                );
                if let Some(o) = output.as_deref().filter(|_| *exit_code != 0) {
                    md.push_str(&indented(&fenced(o)));
                }
            }
            EventKind::Verdict {
                round,
                approved,
                findings,
                model,
                summary,
                by,
                ..
            } => {
                let who = by.clone().or_else(|| model.clone()).unwrap_or_default();
                let _ = writeln!(
                    md,
                    "\n**Verdict** ({}{}): {}",
                    at(e),
                    if who.is_empty() {
                        String::new()
                    } else {
                        format!(", {}", inline(&who))
                    },
                    if *approved { "approved" } else { "rejected" }
                );
                if let Some(s) = summary {
                    let _ = writeln!(md, "\n{}\n", quoted(s));
                }
                for f in findings {
                    let end = told
                        .iter()
                        .find(|t| {
                            t.raised
                                .iter()
                                .zip(&t.ids)
                                .any(|(r, i)| r == round && *i == f.id)
                        })
                        .map(|t| outcome_text(&t.outcome))
                        .unwrap_or_default();
                    let _ = writeln!(
                        md,
                        "- **{}** [{}, {}] `{}`: {}{}",
                        inline(&f.id),
                        f.severity,
                        f.lens,
                        code(&f.location()),
                        inline(&f.scenario),
                        end
                    );
                }
            }
            EventKind::FixSubmitted {
                sha,
                fixed,
                disputed,
            } => {
                let _ = writeln!(
                    md,
                    "\n**Fix** `{}` ({}): fixes {}",
                    sha.short(),
                    at(e),
                    if fixed.is_empty() {
                        "nothing".to_string()
                    } else {
                        inline(&fixed.join(", "))
                    }
                );
                for d in disputed {
                    let _ = writeln!(
                        md,
                        "- disputes {}: {}",
                        inline(&d.finding),
                        inline(&d.reason)
                    );
                }
                round += 1;
                let _ = writeln!(
                    md,
                    "\n## Round {round}\n\nResubmitted by the fix at `{sha}`.\n"
                );
            }
            EventKind::Hallmarked { sha, round, .. } => {
                let _ = writeln!(md, "\n**Hallmarked** `{sha}` in round {round} ({}).", at(e));
            }
            EventKind::Shipped { sha, pr } => {
                let _ = writeln!(
                    md,
                    "\n**Shipped** `{}` ({}){}.",
                    sha.short(),
                    at(e),
                    pr.as_deref()
                        .map(|p| format!(" as {}", inline(p)))
                        .unwrap_or_default()
                );
            }
            EventKind::Merged { into, commit, .. } => {
                let _ = writeln!(
                    md,
                    "\n**Merged** into `{}` as `{}` ({}).",
                    code(into),
                    commit.short(),
                    at(e)
                );
            }
            EventKind::Delivered { pr, merged } => {
                let how = if *merged { "merged" } else { "closed unmerged" };
                let _ = writeln!(md, "\n**Delivered**: {} {how} ({}).", inline(pr), at(e));
            }
            _ => {}
        }
    }
    if !in_round {
        md.push_str("\nNo round of review yet.\n");
    }
}

/// What people decided: overrides, escalations, retries, holds, pull-backs and drops.
fn decisions(md: &mut String, events: &[Event]) {
    let mut lines = Vec::new();
    for e in events {
        let line = match &e.kind {
            EventKind::Escalated { reason } => format!("escalated: {}", inline(reason)),
            EventKind::Retried {
                reason, released, ..
            } => match released {
                Some(h) => format!("released the {} hold: {}", h.as_str(), inline(reason)),
                None => format!("allowed another round: {}", inline(reason)),
            },
            EventKind::Held { kind, reason, .. } => {
                format!("held ({}): {}", kind.as_str(), inline(reason))
            }
            EventKind::PulledBack { from, reason } => format!(
                "pulled back from {from}{}",
                reason
                    .as_deref()
                    .map(|r| format!(": {}", inline(r)))
                    .unwrap_or_default()
            ),
            EventKind::Dropped { reason } => format!("dropped: {}", inline(reason)),
            EventKind::Reopened { reason, .. } => format!("reopened: {}", inline(reason)),
            EventKind::Verdict {
                approved,
                by: Some(by),
                ..
            } if by == "you" => format!(
                "a person's verdict: {}",
                if *approved { "approved" } else { "rejected" }
            ),
            _ => continue,
        };
        lines.push(format!("- {} {} {line}", at(e), inline(&e.actor)));
    }
    if !lines.is_empty() {
        let _ = write!(md, "\n## Decisions\n\n{}\n", lines.join("\n"));
    }
}

fn questions(md: &mut String, events: &[Event]) {
    let mut asked: Vec<(u32, String, Vec<String>, Option<String>)> = Vec::new();
    for e in events {
        match &e.kind {
            EventKind::Asked {
                qid,
                question,
                options,
                ..
            } => asked.push((qid.0, question.clone(), options.clone(), None)),
            EventKind::Answered {
                qid,
                answer,
                by_default,
            } => {
                if let Some(q) = asked.iter_mut().find(|q| q.0 == qid.0) {
                    let how = if *by_default { " (by default)" } else { "" };
                    q.3 = Some(format!("{}{how}", inline(answer)));
                }
            }
            _ => {}
        }
    }
    if asked.is_empty() {
        return;
    }
    md.push_str("\n## Questions\n\n");
    for (qid, question, options, answer) in asked {
        let options = if options.is_empty() {
            String::new()
        } else {
            format!(" ({})", inline(&options.join(" / ")))
        };
        let _ = writeln!(
            md,
            "- Q{qid}: {}{options}\n  - answer: {}",
            inline(&question),
            answer.unwrap_or_else(|| "none yet".into())
        );
    }
}

/// Tokens and list-price cost per role, in the order the roles first spent.
fn usage(md: &mut String, events: &[Event]) {
    let mut by_role: BTreeMap<String, (usize, u64, u64, u64, f64)> = BTreeMap::new();
    for e in events {
        if let EventKind::Usage(u) = &e.kind {
            let r = by_role.entry(u.role.clone()).or_default();
            r.0 += 1;
            r.1 += u.input + u.cache_read + u.cache_write;
            r.2 += u.output;
            r.3 += u.cache_read;
            r.4 += u.cost_usd;
        }
    }
    if by_role.is_empty() {
        return;
    }
    md.push_str("\n## Usage\n\n| Role | Runs | Input tokens | Output tokens | Cache reads | Cost |\n|---|---:|---:|---:|---:|---:|\n");
    let mut total = (0, 0, 0, 0, 0.0);
    for (role, (n, input, output, cache, cost)) in &by_role {
        let _ = writeln!(
            md,
            "| {} | {n} | {input} | {output} | {cache} | ${cost:.4} |",
            inline(role)
        );
        total = (
            total.0 + n,
            total.1 + input,
            total.2 + output,
            total.3 + cache,
            total.4 + cost,
        );
    }
    let _ = writeln!(
        md,
        "| total | {} | {} | {} | {} | ${:.4} |",
        total.0, total.1, total.2, total.3, total.4
    );
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

fn outcome_text(o: &Outcome) -> String {
    match o {
        Outcome::Fixed { sha } => format!(" (fixed in `{}`)", sha.short()),
        Outcome::DisputeUpheld { .. } => " (disputed; the next review let it go)".into(),
        Outcome::DisputeRejected { .. } => " (disputed; raised again)".into(),
        Outcome::Dropped => " (not raised again)".into(),
        Outcome::Open => String::new(),
    }
}

fn at(e: &Event) -> String {
    inline(&e.t)
}

fn log_of(log: Option<&str>) -> String {
    log.map(|l| format!(", log `{}`", code(l)))
        .unwrap_or_default()
}

/// Text on one line of Markdown: newlines folded, and the characters that would start
/// markup escaped, so what a model or a person wrote cannot restructure the page.
fn inline(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\n' | '\r' | '\t' => out.push(' '),
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '#' | '|' | '~' | '!' => {
                out.push('\\');
                out.push(c);
            }
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// Text inside backticks: a backtick would end the span, so it becomes a quote.
fn code(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '`' => '\'',
            '\n' | '\r' => ' ',
            c => c,
        })
        .collect()
}

/// Free text kept as written, in a fence longer than any run of backticks inside it.
fn fenced(s: &str) -> String {
    let longest = s.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    format!("{fence}text\n{}\n{fence}\n", s.trim_end())
}

fn quoted(s: &str) -> String {
    s.lines()
        .map(|l| format!("> {}", inline(l)))
        .collect::<Vec<_>>()
        .join("\n")
}

fn indented(block: &str) -> String {
    block.lines().map(|l| format!("  {l}\n")).collect()
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
    use crate::item::event::{Dispute, EVENT_VERSION, Finding, Usage};
    use crate::item::{Lens, Severity, Sha, Source};

    fn at(step: usize, actor: &str, kind: EventKind) -> Event {
        Event {
            v: EVENT_VERSION,
            t: format!("2026-11-02T10:{:02}:{:02}Z", step / 60, step % 60),
            actor: actor.into(),
            kind,
            item: Some(ItemId(1)),
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
                EventKind::Verdict {
                    sha: sha(1),
                    round: 1,
                    approved: false,
                    findings: vec![finding("F1", scenario)],
                    model: Some("opus".into()),
                    summary: Some("One off-by-one.".into()),
                    by: None,
                },
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
            (
                "assayer",
                EventKind::Verdict {
                    sha: sha(2),
                    round: 2,
                    approved: true,
                    findings: vec![],
                    model: Some("opus".into()),
                    summary: None,
                    by: None,
                },
            ),
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
