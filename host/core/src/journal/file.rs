//! One append-only JSONL file: whole-line appends under an exclusive lock, fsync, and a
//! reader that tells a crash's torn tail from real corruption.
//!
//! A crash mid-write can leave a last line without its newline. Readers skip it and say
//! so. The next writer, holding the lock, knows no one else is writing, so an
//! unterminated tail is certainly torn: it closes the line with `\n` and records a
//! `torn_line` event naming it. The fragment itself is never rewritten, and readers skip
//! exactly the lines such a marker names; any other undecodable line is corruption,
//! reported with its file and line number.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use fs4::FileExt;

use crate::item::event::{EVENT_VERSION, decode, encode};
use crate::item::{Event, EventKind};

/// Failures reading or writing a journal file.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    #[error("{path}:{line}: {reason}")]
    Corrupt {
        path: PathBuf,
        line: u64,
        reason: String,
    },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// No journal file for the item: it was never created (or its directory is gone).
    #[error("no item {0}")]
    NoItem(crate::item::ItemId),
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> JournalError + '_ {
    move |source| JournalError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// A torn line that was skipped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Torn {
    pub line: u64,
    pub bytes: u64,
    /// Whether a writer has since closed it (a `torn_line` marker follows it).
    pub closed: bool,
}

/// The decoded events of one file, plus what was skipped.
#[derive(Debug, Default)]
pub struct Contents {
    pub events: Vec<Event>,
    /// The line number of each event in `events`.
    pub line_numbers: Vec<u64>,
    pub torn: Vec<Torn>,
    /// Lines in the file including skipped ones (the next line's number is `lines + 1`).
    pub lines: u64,
    /// Bytes up to the end of the last complete line.
    pub complete_len: u64,
}

/// Lines decoded by some decoder, with what was skipped.
#[derive(Debug)]
pub struct Parsed<T> {
    /// Each decoded line with its line number.
    pub items: Vec<(u64, T)>,
    pub torn: Vec<Torn>,
    pub lines: u64,
    pub complete_len: u64,
}

/// Decodes `bytes`, the content of `path` from line `first_line` on.
pub fn parse(path: &Path, bytes: &[u8], first_line: u64) -> Result<Contents, JournalError> {
    let parsed = parse_with(path, bytes, first_line, |s| {
        let event = decode(s).map_err(|e| e.to_string())?;
        let marker = match &event.kind {
            EventKind::TornLine { line, .. } => Some(*line),
            _ => None,
        };
        Ok((event, marker))
    })?;
    let mut out = Contents {
        torn: parsed.torn,
        lines: parsed.lines,
        complete_len: parsed.complete_len,
        ..Contents::default()
    };
    for (n, e) in parsed.items {
        out.line_numbers.push(n);
        out.events.push(e);
    }
    Ok(out)
}

/// The line-level rules, for any decoder: `decode` returns the value and, for a
/// `torn_line` marker, the line it names. Blank lines are skipped; an undecodable line
/// is skipped only when the next line is a marker naming it, and an unterminated last
/// line is left for the next read.
pub fn parse_with<T>(
    path: &Path,
    bytes: &[u8],
    first_line: u64,
    decode: impl Fn(&str) -> Result<(T, Option<u64>), String>,
) -> Result<Parsed<T>, JournalError> {
    let corrupt = |line: u64, bytes: u64, reason: String| JournalError::Corrupt {
        path: path.to_path_buf(),
        line,
        reason: with_len(reason, bytes),
    };
    let mut out = Parsed {
        items: Vec::new(),
        torn: Vec::new(),
        lines: 0,
        complete_len: 0,
    };
    // An undecodable line waiting for the marker that names it.
    let mut pending: Option<(u64, u64, String)> = None;
    let mut pos = 0usize;
    let mut line_no = first_line.saturating_sub(1);
    while pos < bytes.len() {
        let Some(end) = bytes[pos..]
            .iter()
            .position(|&b| b == b'\n')
            .map(|i| pos + i)
        else {
            // A tail without newline: a crash, or a write still in flight. Skip it and
            // leave the offset before it; even a decodable tail may still be growing.
            if let Some((l, b, reason)) = pending.take() {
                return Err(corrupt(l, b, reason));
            }
            let line = &bytes[pos..];
            let decodable = std::str::from_utf8(line)
                .ok()
                .is_some_and(|s| decode(s.trim()).is_ok());
            if !decodable {
                out.torn.push(Torn {
                    line: line_no + 1,
                    bytes: line.len() as u64,
                    closed: false,
                });
            }
            break;
        };
        let line = &bytes[pos..end];
        line_no += 1;
        match std::str::from_utf8(line).map(str::trim) {
            Ok("") => {}
            Ok(s) => match decode(s) {
                Ok((value, marker)) => {
                    if let Some((l, b, reason)) = pending.take() {
                        if marker != Some(l) {
                            return Err(corrupt(l, b, reason));
                        }
                        out.torn.push(Torn {
                            line: l,
                            bytes: b,
                            closed: true,
                        });
                    }
                    out.items.push((line_no, value));
                }
                Err(e) => {
                    if let Some((l, b, reason)) = pending.take() {
                        return Err(corrupt(l, b, reason));
                    }
                    pending = Some((line_no, line.len() as u64, e));
                }
            },
            Err(_) => {
                if let Some((l, b, reason)) = pending.take() {
                    return Err(corrupt(l, b, reason));
                }
                pending = Some((line_no, line.len() as u64, "not UTF-8".to_string()));
            }
        }
        pos = end + 1;
        out.complete_len = pos as u64;
    }
    if let Some((l, b, reason)) = pending {
        return Err(corrupt(l, b, reason));
    }
    out.lines = line_no;
    Ok(out)
}

fn with_len(reason: String, bytes: u64) -> String {
    format!("undecodable line ({bytes} bytes): {reason}")
}

/// Reads and decodes a whole file without locking. A missing file is empty.
pub fn read(path: &Path) -> Result<Contents, JournalError> {
    match std::fs::read(path) {
        Ok(bytes) => parse(path, &bytes, 1),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Contents::default()),
        Err(e) => Err(io(path)(e)),
    }
}

/// An open journal file under an exclusive lock. Dropping it releases the lock.
pub struct Locked {
    path: PathBuf,
    file: File,
    contents: Contents,
    /// Bytes after the last newline (a torn tail) that the next append must close.
    tail: Option<Torn>,
}

impl Locked {
    /// Opens (creating) `path`, takes the exclusive lock and reads what is there.
    pub fn open(path: &Path) -> Result<Locked, JournalError> {
        let err = io(path);
        let mut file = lock(path)?;
        let mut bytes = Vec::new();
        file.seek(SeekFrom::Start(0)).map_err(&err)?;
        file.read_to_end(&mut bytes).map_err(&err)?;
        let contents = parse(path, &bytes, 1)?;
        let rest = &bytes[contents.complete_len as usize..];
        let tail = (!rest.is_empty()).then(|| torn_tail(rest, contents.lines + 1));
        Ok(Locked {
            path: path.to_path_buf(),
            file,
            contents,
            tail,
        })
    }

    /// Opens `path` under the lock for appending only: instead of decoding the whole
    /// file it looks at the tail, which is all an append needs (to close a torn line).
    pub fn open_for_append(path: &Path) -> Result<Locked, JournalError> {
        let err = io(path);
        let mut file = lock(path)?;
        let len = file.seek(SeekFrom::End(0)).map_err(&err)?;
        // Read backwards in chunks to the last newline: the unterminated tail, if any.
        let mut rest: Vec<u8> = Vec::new();
        let mut pos = len;
        while pos > 0 {
            let step = pos.min(64 * 1024);
            pos -= step;
            let mut chunk = vec![0u8; step as usize];
            file.seek(SeekFrom::Start(pos)).map_err(&err)?;
            file.read_exact(&mut chunk).map_err(&err)?;
            chunk.extend_from_slice(&rest);
            rest = chunk;
            if let Some(i) = rest.iter().rposition(|&b| b == b'\n') {
                rest.drain(..=i);
                break;
            }
        }
        let tail = if rest.is_empty() {
            None
        } else {
            // The line number only names the torn line, so count lines just this once.
            file.seek(SeekFrom::Start(0)).map_err(&err)?;
            let mut all = Vec::new();
            file.read_to_end(&mut all).map_err(&err)?;
            Some(torn_tail(
                &rest,
                all.iter().filter(|&&b| b == b'\n').count() as u64 + 1,
            ))
        };
        Ok(Locked {
            path: path.to_path_buf(),
            file,
            contents: Contents::default(),
            tail,
        })
    }

    pub fn events(&self) -> &[Event] {
        &self.contents.events
    }

    pub fn contents(&self) -> &Contents {
        &self.contents
    }

    /// Torn lines seen, including an unterminated tail.
    pub fn torn(&self) -> Vec<Torn> {
        let mut t = self.contents.torn.clone();
        t.extend(self.tail.clone());
        t
    }

    /// Appends `events` in one write and fsyncs. A torn tail from a crashed writer is
    /// closed first, in the same write.
    pub fn append(&mut self, events: &[Event]) -> Result<(), JournalError> {
        if events.is_empty() {
            return Ok(());
        }
        let mut buf = String::new();
        if let Some(tail) = self.tail.take() {
            buf.push('\n');
            if !tail.closed {
                let marker = Event {
                    v: EVENT_VERSION,
                    t: events[0].t.clone(),
                    actor: "hall".to_string(),
                    kind: EventKind::TornLine {
                        line: tail.line,
                        bytes: tail.bytes,
                    },
                    item: events[0].item,
                    via: None,
                };
                buf.push_str(&encode(&marker));
                buf.push('\n');
            }
        }
        for e in events {
            buf.push_str(&encode(e));
            buf.push('\n');
        }
        let err = io(&self.path);
        self.file.write_all(buf.as_bytes()).map_err(&err)?;
        self.file.sync_data().map_err(&err)?;
        let first = self.contents.lines + 1;
        self.contents
            .line_numbers
            .extend((0..events.len() as u64).map(|i| first + i));
        self.contents.lines += events.len() as u64;
        self.contents.events.extend_from_slice(events);
        Ok(())
    }

    /// The raw handle, for tests that simulate a crash mid-write.
    pub fn file_mut(&mut self) -> &mut File {
        &mut self.file
    }
}

/// Opens (creating) `path` for reading and appending, under the exclusive lock.
fn lock(path: &Path) -> Result<File, JournalError> {
    let err = io(path);
    let file = OpenOptions::new()
        .read(true)
        .append(true)
        .create(true)
        .open(path)
        .map_err(&err)?;
    FileExt::lock(&file).map_err(&err)?;
    Ok(file)
}

/// The bytes after the last newline, as the torn line the next append must close; a
/// tail that decodes (a crash just before its newline) needs only the newline.
fn torn_tail(rest: &[u8], line: u64) -> Torn {
    let decodable = std::str::from_utf8(rest)
        .ok()
        .and_then(|s| decode(s.trim()).ok())
        .is_some();
    Torn {
        line,
        bytes: rest.len() as u64,
        closed: decodable,
    }
}

/// Appends `line` to `path` as it is, without fsync: for caches and logs that a lost
/// line only makes recompute. `line` carries its own trailing newline; without one the
/// next append runs on into it. `O_APPEND` keeps concurrent small writes whole.
pub fn append_raw(path: &Path, line: &str) -> Result<(), JournalError> {
    let err = io(path);
    let mut f = OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
        .map_err(&err)?;
    f.write_all(line.as_bytes()).map_err(&err)
}

/// Writes `bytes` to `path` atomically: a temp file in the same directory, fsync, rename.
/// An error's message names the file or directory it happened to.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile_in(dir, path).map_err(at(dir))?;
    tmp.1.write_all(bytes).map_err(at(&tmp.0))?;
    tmp.1.sync_data().map_err(at(&tmp.0))?;
    drop(tmp.1);
    std::fs::rename(&tmp.0, path)
        .inspect_err(|_| {
            let _ = std::fs::remove_file(&tmp.0);
        })
        .map_err(at(path))
}

/// Puts `path` in front of an io error's message, keeping its kind, for callers that
/// pass a plain `std::io::Error` on.
pub fn at(path: &Path) -> impl Fn(std::io::Error) -> std::io::Error + '_ {
    move |e| std::io::Error::new(e.kind(), format!("{}: {e}", path.display()))
}

fn tempfile_in(dir: &Path, path: &Path) -> std::io::Result<(PathBuf, File)> {
    let stem = path.file_name().and_then(|n| n.to_str()).unwrap_or("tmp");
    for attempt in 0..100u32 {
        let candidate = dir.join(format!(".{stem}.{}.{attempt}.tmp", std::process::id()));
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&candidate)
        {
            Ok(f) => return Ok((candidate, f)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::other("could not create a temp file"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::item::ItemId;

    fn ev(n: u32) -> Event {
        Event {
            v: 1,
            t: "2026-01-01T00:00:00Z".into(),
            actor: "you".into(),
            kind: EventKind::Prompt {
                text: format!("p{n}"),
                session: None,
            },
            item: Some(ItemId(1)),
            via: None,
        }
    }

    #[test]
    fn a_torn_tail_is_skipped_then_closed_by_the_next_writer() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("events.jsonl");
        let mut w = Locked::open(&path).expect("open");
        w.append(&[ev(1), ev(2)]).expect("append");
        w.file_mut()
            .write_all(b"{\"v\":1,\"t\":\"2026")
            .expect("torn write");
        drop(w);

        let c = read(&path).expect("reads despite the torn tail");
        assert_eq!(c.events.len(), 2);
        assert_eq!(
            c.torn,
            vec![Torn {
                line: 3,
                bytes: 16,
                closed: false
            }]
        );

        let mut w = Locked::open(&path).expect("open");
        w.append(&[ev(3)]).expect("append after crash");
        drop(w);
        let c = read(&path).expect("reads");
        let texts: Vec<_> = c
            .events
            .iter()
            .filter_map(|e| match &e.kind {
                EventKind::Prompt { text, .. } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(texts, ["p1", "p2", "p3"]);
        assert_eq!(
            c.torn,
            vec![Torn {
                line: 3,
                bytes: 16,
                closed: true
            }]
        );
        let raw = std::fs::read_to_string(&path).expect("raw");
        assert!(
            raw.contains("{\"v\":1,\"t\":\"2026\n"),
            "the fragment is kept, not rewritten: {raw}"
        );
    }

    #[test]
    fn a_corrupt_middle_line_names_file_and_line() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("events.jsonl");
        let good = encode(&ev(1));
        std::fs::write(&path, format!("{good}\ngarbage here\n{good}\n")).expect("write");
        let err = read(&path).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("events.jsonl:2:"), "{msg}");
        assert!(
            Locked::open(&path).is_err(),
            "writers refuse too, so nothing is appended after corruption"
        );
    }
}
