//! `hall library`: search the learnings, settle proposals, retire, show, export and
//! import. The librarian's runs (`distill`) and the review's briefing use the same
//! store through [`crate::library`].

use std::path::PathBuf;

use serde::Serialize;

use super::{Ctx, Hall, Reply, next_text};
use crate::cli::LibraryCmd;
use crate::error::{HallError, IoContext, Result};
use crate::item::{EventKind, ItemId, LearningId, LearningKind, LearningStatus};
use crate::library::{
    Hit, Imported, Learning, Library, Problem, Search, SearchFilter, Settings, Stamp,
};

#[derive(Serialize, schemars::JsonSchema)]
pub struct SearchReply {
    pub query: String,
    /// `builtin`: SQLite FTS5 (words and trigrams), fused by reciprocal rank.
    pub backend: String,
    pub hits: Vec<Hit>,
    /// Learning files that do not parse (left out of the search, nothing else).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<Problem>,
    pub next: Vec<String>,
}

/// A proposed learning, as `hall library review` lists it.
#[derive(Serialize, schemars::JsonSchema)]
pub struct Proposal {
    pub id: LearningId,
    pub kind: LearningKind,
    pub title: String,
    pub version: u32,
    /// An update: the accepted version in force until it is settled.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replaces: Option<u32>,
    pub paths: Vec<String>,
    pub body: String,
}

#[derive(Serialize, schemars::JsonSchema)]
pub struct ReviewReply {
    /// Still waiting (all of them when no flag was given).
    pub proposed: Vec<Proposal>,
    pub accepted: Vec<LearningId>,
    pub rejected: Vec<Rejected>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<Problem>,
    pub next: Vec<String>,
}

#[derive(Serialize, schemars::JsonSchema)]
pub struct Rejected {
    pub id: LearningId,
    /// The version back in force (a rejected update); none: the proposal left the store.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub restored: Option<u32>,
}

#[derive(Serialize, schemars::JsonSchema)]
pub struct LearningReply {
    pub learning: Learning,
    /// The version reviews are told, when it is not the current file (a pending update).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub in_force: Option<Learning>,
    /// Versions kept under `history/`.
    pub history: Vec<u32>,
    pub file: String,
    pub next: Vec<String>,
}

#[derive(Serialize, schemars::JsonSchema)]
pub struct ExportReply {
    pub file: String,
    pub learnings: usize,
    pub history: usize,
    pub bytes: usize,
    pub next: Vec<String>,
}

#[derive(Serialize, schemars::JsonSchema)]
pub struct ImportReply {
    /// `export` (a file written by `hall library export`) or `knowledge` (the old layout).
    pub from: String,
    #[serde(flatten)]
    pub imported: Imported,
    pub next: Vec<String>,
}

pub fn run(ctx: &Ctx, cmd: &LibraryCmd) -> Result<Reply> {
    let hall = ctx.hall()?;
    let library = Library::new(&hall.journal, Settings::from_config(&hall.config.library));
    let stamp = Stamp::new(ctx.stamp.clone(), ctx.actor.clone());
    match cmd {
        LibraryCmd::Search { query, limit, all } => {
            search(&library, &query.join(" "), *limit, *all)
        }
        LibraryCmd::Review { accept, reject } => review(ctx, &library, accept, reject, &stamp),
        LibraryCmd::Retire { id, undo, reason } => {
            ctx.person("library retire", "changes what every later review is told")?;
            let id = parse_id(id)?;
            let l = if *undo {
                library.restore(id, &stamp)?
            } else {
                library.retire(id, reason.clone(), &stamp)?
            };
            show_reply(
                &library,
                l,
                if *undo {
                    "is in force again"
                } else {
                    "is retired"
                },
            )
        }
        LibraryCmd::Show { id } => {
            let l = library.read(parse_id(id)?)?;
            show_reply(&library, l, "")
        }
        LibraryCmd::Distill { items } => {
            ctx.person(
                "library distill",
                "runs the librarian, which changes the Library",
            )?;
            distill(ctx, &hall, items)
        }
        LibraryCmd::Export { out } => export(&library, out.as_ref()),
        LibraryCmd::Import { file } => {
            // An export file carries learnings already accepted.
            ctx.person("library import", "changes what every later review is told")?;
            import(&hall, &library, file.as_ref(), &stamp)
        }
    }
}

/// What the librarian made of one item.
#[derive(Serialize, schemars::JsonSchema)]
pub struct DistilledItem {
    pub item: ItemId,
    /// Learnings it proposed (or updated), waiting for `hall library review` unless
    /// their kind is auto-accepted.
    pub proposed: Vec<LearningId>,
    /// Accepted learnings the item's record contradicted, now retired.
    pub retired: Vec<LearningId>,
    /// Whether it wrote the Gazette's words.
    pub words: bool,
    /// The run gave nothing usable (nothing else changed).
    pub failed: bool,
    /// What it said that could not be used.
    pub problems: Vec<String>,
}

#[derive(Serialize, schemars::JsonSchema)]
pub struct DistillReply {
    pub items: Vec<DistilledItem>,
    /// Learnings retired because no review used them for `[library] retire_after`.
    pub stale: Vec<LearningId>,
    pub next: Vec<String>,
}

fn distill(ctx: &Ctx, hall: &Hall, items: &[String]) -> Result<Reply> {
    use crate::office::librarian;
    let ids: Vec<ItemId> = if items.is_empty() {
        librarian::pending(hall, ctx.clock.now())?
    } else {
        // Every id is resolved before any run, so a typo costs nothing.
        items
            .iter()
            .map(|s| hall.resolve(Some(s)))
            .collect::<Result<_>>()?
    };
    // And every one must be finished: an open item would fail after others were paid for.
    for &id in &ids {
        librarian::check_finished(id, &hall.item(id)?)?;
    }
    let stale = librarian::sweep_stale(hall, ctx, true)?;
    let mut done = Vec::new();
    for id in ids {
        let d = librarian::distill(hall, ctx, id)?;
        done.push(DistilledItem {
            item: id,
            proposed: d.proposed,
            retired: d.retired,
            words: d.words,
            failed: d.failed,
            problems: d.problems,
        });
    }
    let mut next = Vec::new();
    if done.iter().any(|d| !d.proposed.is_empty()) {
        next.push("hall library review".to_string());
    }
    for d in done.iter().filter(|d| d.words) {
        next.push(format!("hall gazette {}", d.item));
    }
    let mut text: Vec<String> = done
        .iter()
        .map(|d| {
            let mut line = format!(
                "{}: {}",
                d.item,
                crate::record::describe(&EventKind::Distilled {
                    proposed: d.proposed.clone(),
                    retired: d.retired.clone(),
                    words: d.words,
                    problems: Vec::new(),
                    failed: d.failed,
                    run: None,
                })
            );
            for p in &d.problems {
                line.push_str(&format!("\n  {p}"));
            }
            line
        })
        .collect();
    if done.is_empty() {
        text.push("No closed item waits for the librarian.".to_string());
    }
    if !stale.is_empty() {
        let ids: Vec<String> = stale.iter().map(|l| l.to_string()).collect();
        text.push(format!(
            "Retired as unused for retire_after: {}",
            ids.join(", ")
        ));
    }
    let reply = DistillReply {
        items: done,
        stale,
        next,
    };
    let text = format!("{}\n{}", text.join("\n"), next_text(&reply.next));
    Ok(Reply::new(&reply, text))
}

fn parse_id(s: &str) -> Result<LearningId> {
    s.parse::<LearningId>().map_err(|e| {
        HallError::usage(e.to_string())
            .hint("hall library review")
            .hint("hall library search <words> --all")
    })
}

fn search(library: &Library, query: &str, limit: usize, all: bool) -> Result<Reply> {
    if query.trim().is_empty() {
        return Err(
            HallError::usage("`hall library search` needs words to search for")
                .hint("hall library search \"connection reset by peer\""),
        );
    }
    library.check_backend(std::env::var_os("PATH").as_deref())?;
    let search = Search::open(library)?;
    let filter = SearchFilter {
        all,
        kinds: Vec::new(),
    };
    let found = search.search(query, limit.max(1), &filter)?;
    let mut next: Vec<String> = found
        .hits
        .iter()
        .take(3)
        .map(|h| format!("hall library show {}", h.id))
        .collect();
    if found.hits.is_empty() && !all {
        next.push(format!("hall library search {query:?} --all"));
    }
    let mut text = match found.hits.len() {
        0 => format!("No learning matches {query:?}.\n"),
        n => format!("{n} learnings match {query:?}:\n"),
    };
    for h in &found.hits {
        let status = match h.status {
            LearningStatus::Accepted => String::new(),
            other => format!(" ({other})"),
        };
        text.push_str(&format!(
            "  {} [{}] {}{status}  ({})\n",
            h.id,
            h.kind,
            h.title,
            h.matched.join("+")
        ));
    }
    text.push_str(&next_text(&next));
    let warnings = problem_lines(&found.problems);
    let reply = SearchReply {
        query: query.to_string(),
        backend: "builtin".into(),
        hits: found.hits,
        problems: found.problems,
        next,
    };
    Ok(Reply::new(&reply, text).warn(warnings))
}

fn problem_lines(problems: &[Problem]) -> Vec<String> {
    problems
        .iter()
        .map(|p| format!("{}: {} (left out)", p.file, p.message))
        .collect()
}

fn review(
    ctx: &Ctx,
    library: &Library,
    accept: &[String],
    reject: &[String],
    stamp: &Stamp,
) -> Result<Reply> {
    if !accept.is_empty() || !reject.is_empty() {
        // Settling the Library is a person's call, like a verdict.
        ctx.person("library review", "changes what every later review is told")?;
    }
    let accept: Vec<LearningId> = accept.iter().map(|s| parse_id(s)).collect::<Result<_>>()?;
    let reject: Vec<LearningId> = reject.iter().map(|s| parse_id(s)).collect::<Result<_>>()?;
    if let Some(both) = accept.iter().find(|id| reject.contains(id)) {
        return Err(
            HallError::usage(format!("{both} is both accepted and rejected"))
                .hint(format!("hall library show {both}")),
        );
    }
    // Every id is checked before anything changes, so a typo loses nothing.
    for &id in accept.iter().chain(&reject) {
        let l = library.read(id)?;
        if l.meta.status != LearningStatus::Proposed {
            return Err(crate::library::LibraryError::WrongStatus {
                id,
                status: l.meta.status,
                message: "only a proposed learning can be accepted or rejected".into(),
            }
            .into());
        }
    }
    for &id in &accept {
        library.accept(id, stamp)?;
    }
    let mut rejected = Vec::new();
    for &id in &reject {
        let after = library.reject(id, stamp)?;
        rejected.push(Rejected {
            id,
            restored: after.map(|l| l.meta.version),
        });
    }
    let listing = library.list()?;
    let proposed: Vec<Proposal> = listing
        .entries
        .iter()
        .filter(|e| e.current.meta.status == LearningStatus::Proposed)
        .map(|e| Proposal {
            id: e.current.id(),
            kind: e.current.meta.kind,
            title: e.current.meta.title.clone(),
            version: e.current.meta.version,
            replaces: e.current.meta.replaces,
            paths: e.current.meta.paths.clone(),
            body: e.current.body.clone(),
        })
        .collect();
    let next: Vec<String> = match proposed.first() {
        Some(p) => vec![
            format!("hall library review --accept {}", p.id),
            format!("hall library review --reject {}", p.id),
            format!("hall library show {}", p.id),
        ],
        None => vec!["hall library search <words>".into()],
    };
    let mut text = String::new();
    if !accept.is_empty() {
        let ids: Vec<String> = accept.iter().map(ToString::to_string).collect();
        text.push_str(&format!("Accepted {}.\n", ids.join(", ")));
    }
    for r in &rejected {
        match r.restored {
            Some(v) => text.push_str(&format!(
                "Rejected {}; version {v} is back in force.\n",
                r.id
            )),
            None => text.push_str(&format!(
                "Rejected {}; it left the store (history keeps it).\n",
                r.id
            )),
        }
    }
    match proposed.len() {
        0 => text.push_str("No learning waits for review.\n"),
        1 => text.push_str("1 learning waits for review:\n"),
        n => text.push_str(&format!("{n} learnings wait for review:\n")),
    }
    for p in &proposed {
        let what = match p.replaces {
            Some(v) => format!("update of v{v}"),
            None => "new".into(),
        };
        text.push_str(&format!("  {} [{}] {} ({what})\n", p.id, p.kind, p.title));
    }
    text.push_str(&next_text(&next));
    let warnings = problem_lines(&listing.problems);
    let reply = ReviewReply {
        proposed,
        accepted: accept,
        rejected,
        problems: listing.problems,
        next,
    };
    Ok(Reply::new(&reply, text).warn(warnings))
}

fn show_reply(library: &Library, learning: Learning, what: &str) -> Result<Reply> {
    let id = learning.id();
    let entry = library.entry_of_current(learning)?;
    let in_force = entry
        .in_force
        .filter(|f| f.meta.version != entry.current.meta.version);
    let history = library.history_versions(id)?;
    let m = &entry.current.meta;
    let next = match m.status {
        LearningStatus::Proposed => vec![
            format!("hall library review --accept {id}"),
            format!("hall library review --reject {id}"),
        ],
        LearningStatus::Accepted => vec![format!("hall library retire {id}")],
        LearningStatus::Retired => vec![format!("hall library retire {id} --undo")],
    };
    let head = if what.is_empty() {
        String::new()
    } else {
        format!("{id} {what}.\n")
    };
    let scope = if m.paths.is_empty() {
        "the whole repository".to_string()
    } else {
        m.paths.join(", ")
    };
    let text = format!(
        "{head}{id} [{}] {} — {} v{}, scoped to {scope}\n\n{}\n{}",
        m.kind,
        m.title,
        m.status,
        m.version,
        entry.current.body.trim_end(),
        next_text(&next)
    );
    let reply = LearningReply {
        file: library.file_of(id).display().to_string(),
        learning: entry.current,
        in_force,
        history,
        next,
    };
    Ok(Reply::new(&reply, text))
}

fn export(library: &Library, out: Option<&PathBuf>) -> Result<Reply> {
    let document = library.export()?;
    let Some(out) = out else {
        // The document itself is the reply: one JSON line per file.
        let body = document.trim_end_matches('\n').to_string();
        let mut reply = Reply::new(&serde_json::Value::Null, body.clone());
        reply.json = body;
        return Ok(reply);
    };
    crate::journal::file::write_atomic(out, document.as_bytes()).at(out)?;
    let learnings = document.matches("{\"path\":\"learnings/").count();
    let history = document.matches("{\"path\":\"history/").count();
    let next = vec![format!("hall library import {}", out.display())];
    let text = format!(
        "Wrote {learnings} learnings and {history} kept versions to {}.\n{}",
        out.display(),
        next_text(&next)
    );
    let reply = ExportReply {
        file: out.display().to_string(),
        learnings,
        history,
        bytes: document.len(),
        next,
    };
    Ok(Reply::new(&reply, text))
}

fn import(hall: &Hall, library: &Library, file: Option<&PathBuf>, stamp: &Stamp) -> Result<Reply> {
    let (from, imported) = match file {
        Some(path) => {
            let document = std::fs::read_to_string(path).at(path)?;
            ("export", library.import_export(&document, path)?)
        }
        None => {
            let dir = hall.repo.toplevel.join(".hallmark").join("knowledge");
            if !dir.is_dir() {
                return Err(HallError::usage(format!(
                    "{} does not exist: there is nothing of the old layout to import",
                    dir.display()
                ))
                .hint("hall library import <file written by hall library export>"));
            }
            let done = library.import_knowledge(&dir, &hall.repo.toplevel, stamp)?;
            ("knowledge", done)
        }
    };
    let next = if imported.learnings.is_empty() {
        vec!["hall library search <words> --all".into()]
    } else {
        vec![
            "hall library review".into(),
            "hall library search <words> --all".into(),
        ]
    };
    let text = format!(
        "Imported {} learnings ({} kept versions, {} already there).\n{}",
        imported.learnings.len(),
        imported.history,
        imported.skipped.len(),
        next_text(&next)
    );
    let reply = ImportReply {
        from: from.into(),
        imported,
        next,
    };
    Ok(Reply::new(&reply, text))
}
