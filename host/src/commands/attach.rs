//! `hall attach <path|url> [--caption] [--id]`: a plate for the item's Gazette. A file
//! is copied into the item's `plates/` in the journal; a link is recorded and never
//! fetched. Either way the journal gets an `attached` line.
//!
//! A file must be inside the item's worktree or the repository's checkout: the dev
//! agent attaches what it made where it works, and nothing else on the machine (a key
//! under `~/.ssh`, another repository) can be copied into a page meant to be shown.

use std::io::Read;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::{Ctx, Reply, next_text};
use crate::cli::AttachArgs;
use crate::error::{Code, HallError, Result};
use crate::gazette::plates::{self, MAX_PLATE_BYTES};
use crate::item::{EventKind, ItemId};

#[derive(Serialize, schemars::JsonSchema)]
pub struct AttachReply {
    pub item: ItemId,
    /// The copy's name under the item's `plates/` (absent for a link).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// The copy's path (absent for a link).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub caption: Option<String>,
    pub bytes: u64,
    /// Whether the page shows it as an image (told by its first bytes).
    pub image: bool,
    pub next: Vec<String>,
}

pub fn run(ctx: &Ctx, args: &AttachArgs) -> Result<Reply> {
    let hall = ctx.hall()?;
    let id = hall.resolve(args.item.as_deref())?;
    let caption = args
        .caption
        .as_deref()
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .map(str::to_string);
    let next = vec![format!("hall gazette {id}")];
    let what = args.what.trim();
    let lower = what.to_ascii_lowercase();
    if lower.starts_with("http://") || lower.starts_with("https://") {
        if !plates::is_link(what) {
            return Err(HallError::usage(format!(
                "`{what}` is not a link a page can carry: no spaces, quotes or angle brackets, at most 2048 characters"
            ))
            .hint(format!("hall attach <https://…> --id {id}")));
        }
        let event = ctx.event(
            Some(id),
            EventKind::Attached {
                file: None,
                url: Some(what.to_string()),
                caption: caption.clone(),
                bytes: 0,
                from: what.to_string(),
            },
        );
        hall.journal.append_item(id, &[event])?;
        let reply = AttachReply {
            item: id,
            file: None,
            path: None,
            url: Some(what.to_string()),
            caption,
            bytes: 0,
            image: false,
            next,
        };
        let text = format!(
            "{id}: attached the link {what} (never fetched)\n{}",
            next_text(&reply.next)
        );
        return Ok(Reply::new(&reply, text));
    }
    if looks_like_other_url(what) {
        return Err(HallError::usage(format!(
            "`{what}` is a link of a kind the Gazette doesn't carry: only http and https"
        ))
        .hint(format!("hall attach <https://…> --id {id}")));
    }
    let item = hall.item(id)?;
    let source = inside(
        &ctx.cwd.join(what),
        &[hall.worktree_of(&item), hall.repo.main_root.clone()],
        id,
    )?;
    let bytes = read_capped(&source, id)?;
    let name = source
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    let dir = crate::gazette::plates_dir(&hall.journal, id);
    std::fs::create_dir_all(&dir).map_err(|e| HallError::io(&dir, e))?;
    let (file, copy) = copy_in(&dir, &name, &bytes)?;
    let image = plates::image_kind(&file, &bytes).is_some();
    let event = ctx.event(
        Some(id),
        EventKind::Attached {
            file: Some(file.clone()),
            url: None,
            caption: caption.clone(),
            bytes: bytes.len() as u64,
            from: what.to_string(),
        },
    );
    if let Err(e) = hall.journal.append_item(id, &[event]) {
        // No record, no plate: the copy goes with the failed write.
        let _ = std::fs::remove_file(&copy);
        return Err(e.into());
    }
    let reply = AttachReply {
        item: id,
        file: Some(file.clone()),
        path: Some(copy.display().to_string()),
        url: None,
        caption,
        bytes: bytes.len() as u64,
        image,
        next,
    };
    let text = format!(
        "{id}: attached {what} as plate {file} ({}{})\n{}",
        plates::size(reply.bytes),
        if image { ", shown as an image" } else { "" },
        next_text(&reply.next)
    );
    Ok(Reply::new(&reply, text))
}

/// A scheme other than http(s) (`javascript:`, `file://`, `data:`), which would
/// otherwise be read as a file name.
fn looks_like_other_url(what: &str) -> bool {
    let Some((scheme, _)) = what.split_once(':') else {
        return false;
    };
    scheme.len() > 1
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+.-".contains(c))
        && scheme
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic())
        && !Path::new(what).exists()
}

/// `path` with every link resolved, when it is a file inside one of `roots`.
fn inside(path: &Path, roots: &[PathBuf], id: ItemId) -> Result<PathBuf> {
    let real = crate::platform::canonicalize(path).map_err(|e| {
        HallError::new(
            Code::Usage,
            format!("{} can't be read: {e}", path.display()),
        )
        .hint(format!("hall attach <file in the worktree> --id {id}"))
    })?;
    if !real.is_file() {
        return Err(
            HallError::usage(format!("{} is not a file", path.display()))
                .hint(format!("hall attach <file in the worktree> --id {id}")),
        );
    }
    let allowed = roots
        .iter()
        .filter_map(|r| crate::platform::canonicalize(r).ok())
        .any(|r| real.starts_with(&r));
    if !allowed {
        return Err(HallError::new(
            Code::Usage,
            format!(
                "{} is outside the item's worktree and the repository: only files from there can be attached",
                real.display()
            ),
        )
        .hint(format!("hall attach <file in the worktree> --id {id}"))
        .hint(format!("hall attach <https://…> --id {id}")));
    }
    Ok(real)
}

/// The file's bytes, refusing one over the cap (read with a bound, so a file that
/// grows after its size was checked can't slip past it).
fn read_capped(path: &Path, id: ItemId) -> Result<Vec<u8>> {
    let file = std::fs::File::open(path).map_err(|e| HallError::io(path, e))?;
    let mut bytes = Vec::new();
    file.take(MAX_PLATE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| HallError::io(path, e))?;
    if bytes.len() as u64 > MAX_PLATE_BYTES {
        return Err(HallError::new(
            Code::Usage,
            format!(
                "{} is larger than {}, the most a plate can be",
                path.display(),
                plates::size(MAX_PLATE_BYTES)
            ),
        )
        .hint(format!(
            "hall attach <a smaller file, a cropped screenshot> --id {id}"
        ))
        .hint(format!(
            "hall attach <https://… where it is published> --id {id}"
        )));
    }
    Ok(bytes)
}

/// Copies `bytes` into `dir` as `<n>-<name>`, the first number free, with the name cut
/// down to letters, digits, `.`, `-` and `_` (so the page can link it as it is).
fn copy_in(dir: &Path, name: &str, bytes: &[u8]) -> Result<(String, PathBuf)> {
    let mut clean: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .take(80)
        .collect();
    clean = clean.trim_start_matches('.').to_string();
    if clean.is_empty() {
        clean = "plate".to_string();
    }
    for n in 1..10_000u32 {
        let file = format!("{n}-{clean}");
        let path = dir.join(&file);
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(mut f) => {
                use std::io::Write;
                if let Err(e) = f.write_all(bytes).and_then(|()| f.sync_all()) {
                    let _ = std::fs::remove_file(&path);
                    return Err(HallError::io(&path, e));
                }
                return Ok((file, path));
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(HallError::io(&path, e)),
        }
    }
    Err(HallError::internal(format!(
        "{} holds too many plates",
        dir.display()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn other_schemes_are_told_from_file_names() {
        for url in [
            "javascript:alert(1)",
            "file:///etc/passwd",
            "data:text/html,x",
            "ftp://x",
        ] {
            assert!(looks_like_other_url(url), "{url}");
        }
        for file in ["shot.png", "docs/a b.txt", "C", "./x:y"] {
            assert!(!looks_like_other_url(file), "{file}");
        }
    }

    #[test]
    fn copies_take_the_next_free_number_and_a_plain_name() {
        let dir = tempfile::tempdir().unwrap();
        let (a, _) = copy_in(dir.path(), "my shot<1>.png", b"a").unwrap();
        let (b, _) = copy_in(dir.path(), "my shot<1>.png", b"b").unwrap();
        let (c, _) = copy_in(dir.path(), "..", b"c").unwrap();
        assert_eq!(
            (a.as_str(), b.as_str(), c.as_str()),
            ("1-my_shot_1_.png", "2-my_shot_1_.png", "1-plate")
        );
        assert_eq!(std::fs::read(dir.path().join(&b)).unwrap(), b"b");
    }

    #[test]
    fn a_file_outside_the_roots_is_refused() {
        let root = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        std::fs::write(root.path().join("in.txt"), "x").unwrap();
        std::fs::write(elsewhere.path().join("secret"), "x").unwrap();
        let roots = [root.path().to_path_buf()];
        assert!(inside(&root.path().join("in.txt"), &roots, ItemId(1)).is_ok());
        let err = inside(&elsewhere.path().join("secret"), &roots, ItemId(1)).unwrap_err();
        assert!(err.to_string().contains("outside"), "{err}");
        #[cfg(unix)]
        {
            // A link inside that points outside is judged by where it points.
            std::os::unix::fs::symlink(elsewhere.path().join("secret"), root.path().join("link"))
                .unwrap();
            assert!(inside(&root.path().join("link"), &roots, ItemId(1)).is_err());
        }
        assert!(inside(&root.path().join("missing"), &roots, ItemId(1)).is_err());
        assert!(
            inside(root.path(), &roots, ItemId(1)).is_err(),
            "a directory"
        );
    }

    #[test]
    fn a_file_over_the_cap_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("big.bin");
        let f = std::fs::File::create(&big).unwrap();
        f.set_len(MAX_PLATE_BYTES + 1).unwrap();
        let err = read_capped(&big, ItemId(1)).unwrap_err();
        assert!(err.to_string().contains("larger than 5.0 MB"), "{err}");
        f.set_len(MAX_PLATE_BYTES).unwrap();
        assert_eq!(
            read_capped(&big, ItemId(1)).unwrap().len() as u64,
            MAX_PLATE_BYTES
        );
    }
}
