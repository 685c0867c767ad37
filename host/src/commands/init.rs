//! `hall init`: the journal directory, `.hallmark.toml`, the review stub, the CLAUDE.md
//! section, the repo's registration and the user's signing key (made when missing).
//! `--signers` also adds the user's key to `.hallmark/allowed_signers`, for a person to
//! commit on the base branch. Safe to run again: it only adds what is missing.

use std::path::Path;

use serde::Serialize;

use super::{Ctx, Reply, next_text};
use crate::cli::InitArgs;
use crate::config::{CaptureMode, Config};
use crate::error::{Code, HallError, IoContext, Result};
use crate::git;
use crate::journal::{Journal, file::write_atomic};

pub const MARK_START: &str = "<!-- hallmark:start -->";
pub const MARK_END: &str = "<!-- hallmark:end -->";

#[derive(Serialize, schemars::JsonSchema)]
pub struct InitReply {
    pub repo: String,
    pub journal: String,
    pub config: String,
    pub base: String,
    /// The repository's checks, as `gates` in `.hallmark.toml` lists them.
    pub checks: Vec<String>,
    /// Files created or changed by this run (empty on a repeat).
    pub wrote: Vec<String>,
    pub registered: bool,
    /// What check detection found, when this run wrote `.hallmark.toml`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detection: Option<DetectionReply>,
    /// Hallmark's files that the base branch doesn't have yet (new worktrees won't).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub uncommitted: Vec<String>,
    /// With `--signers`: the allowed_signers file that lists your key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signers: Option<String>,
    pub next: Vec<String>,
}

/// Which checks the checks room picked for `gates`, which it left out and why, and the
/// setup commands it wrote.
#[derive(Serialize, schemars::JsonSchema)]
pub struct DetectionReply {
    /// The checks written under `gates`, in run order, with the file that suggested each.
    pub picked: Vec<crate::rooms::types::Check>,
    /// The setup commands written.
    pub setup: Vec<crate::rooms::types::Check>,
    /// Commands considered and not written, with the reason.
    pub left_out: Vec<crate::rooms::types::LeftOut>,
    /// The room's other observations.
    pub notes: Vec<String>,
}

impl DetectionReply {
    fn text(&self) -> String {
        let mut out = Vec::new();
        if self.picked.is_empty() {
            out.push("No checks detected.".to_string());
        } else {
            out.push("Checks:".to_string());
            out.extend(
                self.picked
                    .iter()
                    .map(|c| format!("  {}  (from {})", c.command, c.source)),
            );
        }
        if !self.setup.is_empty() {
            out.push("Setup:".to_string());
            out.extend(
                self.setup
                    .iter()
                    .map(|c| format!("  {}  (from {})", c.command, c.source)),
            );
        }
        if !self.left_out.is_empty() {
            out.push("Left out:".to_string());
            out.extend(
                self.left_out
                    .iter()
                    .map(|l| format!("  {}  (from {}): {}", l.command, l.source, l.reason)),
            );
        }
        out.join("\n")
    }
}

pub fn run(ctx: &Ctx, args: &InitArgs) -> Result<Reply> {
    // It records the base branch the rules are read from, writes the rules, registers
    // the repository for the loop and can trust a signer: a person's to do.
    let you = ctx.person(
        "init",
        "sets up a repository: the branch its rules come from, its rules and its signers",
    )?;
    let repo = ctx.repo()?;
    let root = repo.main_root.clone();
    let journal = Journal::new(repo.hall_dir());
    let mut wrote = Vec::new();
    if !journal.exists() {
        wrote.push(journal.root().display().to_string());
    }
    journal.init().at(journal.root())?;

    let config_path = Config::path(&root);
    let mut detection = None;
    let config = if config_path.exists() {
        let c = Config::load(&root)?;
        if let Some(mode) = &args.capture
            && capture_name(c.capture.mode) != mode
        {
            return Err(HallError::new(
                Code::Usage,
                format!(
                    ".hallmark.toml already sets [capture] mode = \"{}\"",
                    capture_name(c.capture.mode)
                ),
            )
            .hint(format!(
                "edit {} and set [capture] mode = \"{mode}\"",
                config_path.display()
            )));
        }
        c
    } else {
        let base = args
            .base
            .clone()
            .unwrap_or_else(|| git::default_base(&root));
        let found = detect_checks(ctx, &repo, &journal)?;
        let commands = |list: &[crate::rooms::types::Check]| {
            list.iter().map(|c| c.command.clone()).collect::<Vec<_>>()
        };
        let mut text = Config::template(&base, &commands(&found.checks), &commands(&found.setup));
        detection = Some(DetectionReply {
            picked: found.checks,
            setup: found.setup,
            left_out: found.left_out,
            notes: found.notes,
        });
        if let Some(mode) = &args.capture {
            text = text.replace(
                "# mode = \"gate\"            # gate | ask | off",
                &format!("mode = \"{mode}\""),
            );
        }
        Config::parse(&text, &config_path)?;
        std::fs::write(&config_path, &text).at(&config_path)?;
        wrote.push(config_path.display().to_string());
        Config::load(&root)?
    };

    // Which branch is the base is recorded in the journal, where no checkout can change
    // it: the rules are read from that branch (see crate::hall::rules).
    let record_path = journal.root().join("repo.json");
    let base = args
        .base
        .clone()
        .or_else(|| crate::hall::rules::record(journal.root()).map(|r| r.base))
        .unwrap_or_else(|| config.base.clone());
    if crate::hall::rules::record(journal.root()).map(|r| r.base) != Some(base.clone()) {
        crate::hall::rules::write_record(journal.root(), &crate::hall::rules::RepoRecord { base })?;
        wrote.push(record_path.display().to_string());
    }

    let review = root.join(".hallmark").join("review.md");
    if !review.exists() {
        let dir = review.parent().unwrap_or(&root);
        std::fs::create_dir_all(dir).at(dir)?;
        std::fs::write(&review, REVIEW_STUB).at(&review)?;
        wrote.push(review.display().to_string());
    }

    if !args.no_claude_md {
        let target = ["CLAUDE.md", "AGENTS.md"]
            .iter()
            .map(|n| root.join(n))
            .find(|p| p.exists());
        let target = target.unwrap_or_else(|| root.join("CLAUDE.md"));
        if write_section(&target)? {
            wrote.push(target.display().to_string());
        }
    }

    let registered = crate::hall::registry::register(&root).is_ok();
    let mut warnings = Vec::new();
    // Sessions confined by the user settings (`hall setup claude`) keep out of this
    // repository's journal and git internals too, from now on.
    if registered && crate::hall::claude_settings::confining() && super::claude_confine_by_default()
    {
        match crate::hall::claude_settings::confine_sessions(you, true, false) {
            Ok(m) if m.outcome == "written" => wrote.push(m.settings),
            Ok(_) => {}
            Err(e) => warnings.push(format!(
                "sessions confined by Claude Code's user settings don't keep out of this repository yet: {}",
                e.message
            )),
        }
    }
    match crate::sign::ensure_key() {
        Ok(k) if k.created => wrote.push(k.path.display().to_string()),
        Ok(_) => {}
        Err(e) => warnings.push(format!("no signing key yet: {e}")),
    }
    let signers = if args.signers {
        let (path, changed) = add_signer(&root)?;
        if changed {
            wrote.push(path.display().to_string());
        }
        Some((path, changed))
    } else {
        None
    };
    let mut next = Vec::new();
    // New worktrees come from the base branch: files not committed there are missing
    // from every item until they are.
    let uncommitted = super::unshared::files(&repo, &config.base);
    if let Some(w) = super::unshared::warning(&uncommitted, &config.base) {
        warnings.push(w);
        next.push(super::unshared::commit_command(
            &root,
            &uncommitted,
            &config.base,
        ));
    }
    if let Some((_, true)) = &signers {
        next.push(format!(
            "git add {} && git commit -m \"Trust my hallmark key\" (on {})",
            crate::hall::hallmark::SIGNERS_FILE,
            config.base
        ));
    }
    if detection.as_ref().is_some_and(|d| d.picked.is_empty()) {
        warnings.push(format!(
            "no checks detected: work would be reviewed without any command proving it; list the repository's checks under `gates` in {}",
            config_path.display()
        ));
        next.insert(
            0,
            format!(
                "edit {} and list the checks under `gates`",
                config_path.display()
            ),
        );
    }
    next.push("hall new --title \"…\"".to_string());
    next.push("hall doctor".to_string());
    let reply = InitReply {
        repo: root.display().to_string(),
        journal: journal.root().display().to_string(),
        config: config_path.display().to_string(),
        base: config.base.clone(),
        checks: config.checks.clone(),
        detection,
        wrote,
        registered,
        uncommitted,
        signers: signers.map(|(p, _)| p.display().to_string()),
        next,
    };
    let text = format!(
        "Hallmark is set up in {} (base {}).\n{}{}\n{}",
        reply.repo,
        reply.base,
        reply
            .detection
            .as_ref()
            .map(|d| format!("{}\n", d.text()))
            .unwrap_or_default(),
        if reply.wrote.is_empty() {
            "Nothing to add.".to_string()
        } else {
            format!("Wrote: {}", reply.wrote.join(", "))
        },
        next_text(&reply.next)
    );
    Ok(Reply::new(&reply, text).warn(warnings))
}

/// Adds the user's key to `.hallmark/allowed_signers` unless a line already lets it sign
/// hallmarks as the user's principal; true when the file changed.
fn add_signer(root: &Path) -> Result<(std::path::PathBuf, bool)> {
    use crate::sign::allowed::{AllowedSigners, line};
    let signer = crate::sign::Signer::load(Some(root))?;
    let path = root.join(crate::hall::hallmark::SIGNERS_FILE);
    let old = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(HallError::io(&path, e)),
    };
    let key = signer.public_key();
    if AllowedSigners::parse(&old).lists(signer.principal(), key.key_data()) {
        return Ok((path, false));
    }
    let mut text = if old.is_empty() {
        SIGNERS_HEADER.to_string()
    } else if old.ends_with('\n') {
        old
    } else {
        format!("{old}\n")
    };
    text.push_str(&line(signer.principal(), key));
    text.push('\n');
    let dir = path.parent().unwrap_or(root);
    std::fs::create_dir_all(dir).at(dir)?;
    write_atomic(&path, text.as_bytes()).at(&path)?;
    Ok((path, true))
}

const SIGNERS_HEADER: &str =
    "# Who may sign this repository's hallmarks, read from the base branch by `hall verify`
# and the push gate (the format of ssh-keygen's allowed_signers). Add yourself with
# `hall init --signers` and commit the file on the base branch.
";

/// Asks the checks room which checks this repository has, from its tracked files, root
/// manifests and CI definitions, and records which room decided.
fn detect_checks(
    ctx: &Ctx,
    repo: &crate::git::Repo,
    journal: &Journal,
) -> Result<crate::rooms::types::Detection> {
    use crate::rooms::World;
    use crate::rooms::types::{ChecksInput, Manifest};
    let root = &repo.main_root;
    let files = git::tracked_files(root).unwrap_or_default();
    let read = |path: &str| {
        let content = std::fs::read(root.join(path)).ok()?;
        Some(Manifest {
            path: path.to_string(),
            content: String::from_utf8_lossy(&content).into_owned(),
        })
    };
    let manifests = ChecksInput::MANIFESTS
        .iter()
        .filter(|m| files.iter().any(|f| f == *m))
        .filter_map(|m| read(m))
        .collect();
    let ci = files
        .iter()
        .filter(|f| ChecksInput::is_ci(f))
        .filter_map(|f| read(f))
        .collect();
    let rooms = crate::hall::policy::runtime()?;
    // No journal config yet: the repo's [rooms] (if any) is read from the base branch
    // through a provisional view of the repository.
    let hall = super::Hall::with(repo.clone(), journal.clone(), Config::load(root)?);
    let room = crate::hall::policy::room(&rooms, Some(&hall), World::Checks)?;
    let report = room
        .detect_checks(&ChecksInput {
            files,
            manifests,
            ci,
        })?
        .map_err(|f| {
            HallError::new(
                Code::RoomFailed,
                format!("the checks room refused: {}", f.message),
            )
            .hint("hall rooms list")
        })?;
    journal.append_repo(&[crate::hall::policy::used(ctx, None, room.info())])?;
    Ok(report)
}

fn capture_name(m: CaptureMode) -> &'static str {
    match m {
        CaptureMode::Gate => "gate",
        CaptureMode::Ask => "ask",
        CaptureMode::Off => "off",
    }
}

/// Writes or refreshes the section between the markers; true when the file changed.
pub fn write_section(path: &Path) -> Result<bool> {
    let old = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(HallError::io(path, e)),
    };
    let section = format!("{MARK_START}\n{SECTION}{MARK_END}\n");
    let new = match (old.find(MARK_START), old.find(MARK_END)) {
        (Some(s), Some(e)) if e > s => {
            let after = &old[e + MARK_END.len()..];
            let after = after.strip_prefix('\n').unwrap_or(after);
            format!("{}{section}{after}", &old[..s])
        }
        _ if old.is_empty() => section,
        _ => format!(
            "{}{}\n{section}",
            old,
            if old.ends_with('\n') { "" } else { "\n" }
        ),
    };
    if new == old {
        return Ok(false);
    }
    write_atomic(path, new.as_bytes()).at(path)?;
    Ok(true)
}

const SECTION: &str = "## Hallmark

This repository uses Hallmark (`hall`). Development happens in items, each with its own
branch and worktree; an independent reviewer approves the work before it can be pushed.

- Start work with `hall new --title \"…\"` (or `hall adopt` on an existing branch), then `cd`
  into the worktree it prints. Edits outside an item's worktree are refused.
- When the work is done, commit it and run `hall propose-ready --summary \"…\"`.
- `hall status` shows where each item is; `hall inbox` what waits for a person.
- Never push or open a PR yourself: only a hallmarked commit ships, and Hallmark ships it.
- Ask a person with `hall ask \"…\"` rather than guessing.
";

const REVIEW_STUB: &str = "# Review rules

Rules for Hallmark's reviewer, read from the base branch. Add what a reviewer of this
repository must always check; situational knowledge belongs in the Library instead.
";
