//! The journal as a stream of events for the pages (server-sent events).
//!
//! Every writer appends the name of the file it grew to the journal's `changes` file,
//! which is never truncated; the byte offset just past a name is a position in the
//! whole journal that only grows. One thread tails `changes`, reads each named file's
//! new whole lines, and keeps the newest [`RING`] batches in memory, each with its
//! position as the event's id. A client that reconnects with `Last-Event-ID` gets every
//! batch after it from the ring; one that fell further behind than the ring reaches is
//! told to `reset` (reload what it shows), so it never silently misses a line.

use std::collections::{HashMap, VecDeque};
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::hall::Hall;
use crate::item::ItemId;
use crate::journal::{Journal, REPO_FILE};

/// How many batches the ring keeps.
pub const RING: usize = 20_000;
/// How often the tailer looks at `changes`: one `stat` each time.
const TICK: Duration = Duration::from_millis(10);

/// One append to one journal file: its position and its lines.
#[derive(Clone, Debug)]
pub struct Batch {
    /// The offset in `changes` just past this append's name.
    pub id: u64,
    /// The item (`H-0001`), or `-` for the repository's own file.
    pub file: String,
    /// The appended lines, each a JSON object.
    pub lines: Vec<String>,
}

impl Batch {
    /// The event's data: `{"file": …, "events": [ … ]}`, built from the lines as they
    /// are, with no parse and re-encode per client.
    pub fn data(&self) -> String {
        let mut out = String::with_capacity(32 + self.lines.iter().map(String::len).sum::<usize>());
        out.push_str("{\"file\":");
        out.push_str(&serde_json::Value::String(self.file.clone()).to_string());
        out.push_str(",\"events\":[");
        out.push_str(&self.lines.join(","));
        out.push_str("]}");
        out
    }
}

/// What a client gets after its position.
#[derive(Debug, PartialEq)]
pub enum After {
    /// The batches after it, oldest first (maybe none).
    Batches(Vec<Batch>),
    /// It is older than the ring reaches, or from another journal: reload, then follow
    /// from this position.
    Reset(u64),
}

impl PartialEq for Batch {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
    }
}

#[derive(Debug, Default)]
struct Ring {
    /// Every batch after this position is in `batches`.
    floor: u64,
    /// The newest position read.
    head: u64,
    batches: VecDeque<Batch>,
}

/// The feed shared by the tailer and the clients.
#[derive(Debug)]
pub struct Feed {
    ring: Mutex<Ring>,
    /// Tells waiting clients the head moved.
    pub moved: tokio::sync::watch::Sender<u64>,
    stop: AtomicBool,
}

impl Feed {
    /// The newest position.
    pub fn head(&self) -> u64 {
        self.ring.lock().map(|r| r.head).unwrap_or(0)
    }

    /// The batches after `position`.
    pub fn after(&self, position: u64) -> After {
        let Ok(ring) = self.ring.lock() else {
            return After::Reset(0);
        };
        if position < ring.floor || position > ring.head {
            return After::Reset(ring.head);
        }
        let start = ring.batches.partition_point(|b| b.id <= position);
        After::Batches(ring.batches.range(start..).cloned().collect())
    }

    fn push(&self, batch: Batch) {
        if let Ok(mut ring) = self.ring.lock() {
            ring.head = batch.id;
            ring.batches.push_back(batch);
            while ring.batches.len() > RING {
                if let Some(old) = ring.batches.pop_front() {
                    ring.floor = old.id;
                }
            }
        }
    }

    fn moved_to(&self, head: u64) {
        if let Ok(mut ring) = self.ring.lock() {
            ring.head = ring.head.max(head);
        }
        self.moved.send_replace(head);
    }

    /// Asks the tailer to stop.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

/// Starts tailing `hall`'s journal; the feed starts at the journal's position now.
pub fn start(hall: &Hall) -> Arc<Feed> {
    let journal = hall.journal.clone();
    let mut tail = Tail::new(journal);
    let head = tail.position;
    let (moved, _) = tokio::sync::watch::channel(head);
    let feed = Arc::new(Feed {
        ring: Mutex::new(Ring {
            floor: head,
            head,
            batches: VecDeque::new(),
        }),
        moved,
        stop: AtomicBool::new(false),
    });
    let shared = feed.clone();
    std::thread::spawn(move || {
        while !shared.stop.load(Ordering::SeqCst) {
            let before = tail.position;
            for batch in tail.read() {
                shared.push(batch);
            }
            if tail.position != before {
                shared.moved_to(tail.position);
            }
            std::thread::sleep(TICK);
        }
    });
    feed
}

/// The tailer's own state: where it is in `changes` and in each file.
struct Tail {
    journal: Journal,
    changes: PathBuf,
    position: u64,
    offsets: HashMap<String, u64>,
}

impl Tail {
    fn new(journal: Journal) -> Tail {
        let changes = journal.changes_file();
        // Each file's length first, then the position: an append between the two is
        // past its file's offset and is read with the next name that file gets (and
        // the catch-up below reads it now, so it isn't left waiting for one).
        let mut offsets = HashMap::new();
        offsets.insert(REPO_FILE.to_string(), len(&journal.repo_file()));
        for id in journal.item_ids().unwrap_or_default() {
            offsets.insert(id.to_string(), len(&journal.item_file(id)));
        }
        let position = len(&changes);
        let mut tail = Tail {
            journal,
            changes,
            position,
            offsets,
        };
        let names: Vec<String> = tail.offsets.keys().cloned().collect();
        for name in names {
            tail.lines_of(&name);
        }
        tail
    }

    fn path(&self, name: &str) -> Option<PathBuf> {
        if name == REPO_FILE {
            return Some(self.journal.repo_file());
        }
        name.parse::<ItemId>()
            .ok()
            .map(|id| self.journal.item_file(id))
    }

    /// The whole lines appended to `name` since last read.
    fn lines_of(&mut self, name: &str) -> Vec<String> {
        let Some(path) = self.path(name) else {
            return Vec::new();
        };
        // A file first named after the start is new: read it from its start.
        let from = *self.offsets.get(name).unwrap_or(&0);
        let bytes = read_from(&path, from);
        let whole = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        self.offsets.insert(name.to_string(), from + whole as u64);
        String::from_utf8_lossy(&bytes[..whole])
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(str::to_string)
            .collect()
    }

    /// Every batch since the last read.
    fn read(&mut self) -> Vec<Batch> {
        if len(&self.changes) <= self.position {
            return Vec::new();
        }
        let bytes = read_from(&self.changes, self.position);
        let mut out = Vec::new();
        let mut at = 0usize;
        while let Some(nl) = bytes[at..].iter().position(|&b| b == b'\n') {
            let name = String::from_utf8_lossy(&bytes[at..at + nl])
                .trim()
                .to_string();
            at += nl + 1;
            let id = self.position + at as u64;
            let lines = self.lines_of(&name);
            if !lines.is_empty() {
                out.push(Batch {
                    id,
                    file: name,
                    lines,
                });
            }
        }
        self.position += at as u64;
        out
    }
}

fn len(path: &Path) -> u64 {
    std::fs::metadata(path).map(|m| m.len()).unwrap_or(0)
}

/// The bytes of `path` from `offset` to its end now.
fn read_from(path: &Path, offset: u64) -> Vec<u8> {
    let mut out = Vec::new();
    if let Ok(mut f) = std::fs::File::open(path)
        && f.seek(SeekFrom::Start(offset)).is_ok()
    {
        let _ = f.read_to_end(&mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed_with(ids: &[u64]) -> Feed {
        let (moved, _) = tokio::sync::watch::channel(0);
        let feed = Feed {
            ring: Mutex::new(Ring {
                floor: 0,
                head: 0,
                batches: VecDeque::new(),
            }),
            moved,
            stop: AtomicBool::new(false),
        };
        for &id in ids {
            feed.push(Batch {
                id,
                file: "H-0001".into(),
                lines: vec![format!("{{\"n\":{id}}}")],
            });
        }
        feed
    }

    #[test]
    fn a_client_gets_every_batch_after_its_position_or_a_reset() {
        let feed = feed_with(&[7, 14, 21]);
        let ids = |a: After| match a {
            After::Batches(b) => b.iter().map(|b| b.id).collect::<Vec<_>>(),
            After::Reset(at) => vec![u64::MAX, at],
        };
        assert_eq!(ids(feed.after(0)), [7, 14, 21]);
        assert_eq!(ids(feed.after(7)), [14, 21]);
        assert_eq!(ids(feed.after(10)), [14, 21]);
        assert_eq!(ids(feed.after(21)), Vec::<u64>::new());
        // From the future (another journal, a restarted server on a new one): reset.
        assert_eq!(ids(feed.after(99)), [u64::MAX, 21]);
    }

    #[test]
    fn the_ring_forgets_the_oldest_and_sends_a_reset_to_who_needed_them() {
        let ids: Vec<u64> = (1..=(RING as u64 + 5)).collect();
        let feed = feed_with(&ids);
        assert_eq!(feed.after(0), After::Reset(RING as u64 + 5));
        assert_eq!(feed.after(4), After::Reset(RING as u64 + 5));
        match feed.after(5) {
            After::Batches(b) => assert_eq!(b.len(), RING),
            After::Reset(_) => panic!("position 5 is the floor: everything after it is kept"),
        }
    }

    #[test]
    fn a_batch_is_json_built_from_its_lines() {
        let b = Batch {
            id: 3,
            file: "H-0002".into(),
            lines: vec!["{\"a\":1}".into(), "{\"b\":\"<script>\"}".into()],
        };
        let v: serde_json::Value = serde_json::from_str(&b.data()).expect("json");
        assert_eq!(v["file"], "H-0002");
        assert_eq!(v["events"][1]["b"], "<script>");
    }
}
