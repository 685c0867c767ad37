//! An item's record as Markdown, from its journal alone: the header, each round (its
//! checks, the verdict and what became of each finding, the fix), the decisions people
//! made, questions and answers, and usage per role. `hall export` adds the runs' steps;
//! the librarian reads it as it is.

mod describe;

use std::collections::BTreeMap;
use std::fmt::Write as _;

pub use describe::describe;

use crate::item::outcome::{Outcome, Told, outcomes};
use crate::item::{Event, EventKind, Item, ItemId};

/// The record of item `id` from its events.
pub fn render(id: ItemId, item: &Item, events: &[Event]) -> String {
    let mut md = String::with_capacity(16 * 1024);
    header(&mut md, id, item, events);
    rounds(&mut md, events);
    decisions(&mut md, events);
    questions(&mut md, events);
    usage(&mut md, events);
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
            EventKind::Verdict { .. } => verdict(md, e, &told),
            EventKind::Distilled { problems, .. } => {
                let said = describe(&e.kind);
                let _ = writeln!(md, "\n**Librarian** ({}): {}", at(e), inline(&said));
                for p in problems {
                    let _ = writeln!(md, "- {}", inline(p));
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

/// A verdict in its round: who gave it and how it went, its summary, each finding with
/// what became of it, and the learnings it used.
fn verdict(md: &mut String, e: &Event, told: &[Told]) {
    let Some(v) = e.kind.verdict() else {
        return;
    };
    let who = v.by.or(v.model).unwrap_or_default();
    let _ = writeln!(
        md,
        "\n**Verdict** ({}{}): {}",
        at(e),
        if who.is_empty() {
            String::new()
        } else {
            format!(", {}", inline(who))
        },
        if v.approved { "approved" } else { "rejected" }
    );
    if let Some(s) = v.summary {
        let _ = writeln!(md, "\n{}\n", quoted(s));
    }
    for f in v.findings {
        let end = told
            .iter()
            .find(|t| {
                t.raised
                    .iter()
                    .zip(&t.ids)
                    .any(|(r, i)| *r == v.round && *i == f.id)
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
    if !v.learnings.is_empty() {
        let _ = writeln!(md, "- learnings used: {}", inline(&v.learnings.join(", ")));
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
pub fn inline(s: &str) -> String {
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
