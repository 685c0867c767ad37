//! A journal writer for the concurrency and crash tests: many of these append to one
//! item at once through the real journal code, and one can die mid-write.
//!
//! `journal-writer <hall-dir> <item> append <count> <tag>` appends `count` prompt events.
//! `journal-writer <hall-dir> <item> tear` takes the lock, writes half a line and
//! SIGKILLs itself while holding the lock.
//! `journal-writer <hall-dir> <item> big <count>` appends large events until killed.

use std::io::Write;
use std::path::PathBuf;

use hallmark_core::item::{Event, EventKind, ItemId};
use hallmark_core::journal::{Journal, Locked};

fn event(id: ItemId, text: String) -> Event {
    Event {
        v: 1,
        t: "2026-11-02T09:00:00Z".into(),
        actor: "agent".into(),
        kind: EventKind::Prompt {
            text,
            session: None,
        },
        item: Some(id),
        via: None,
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let journal = Journal::new(PathBuf::from(&args[1]));
    let id: ItemId = args[2].parse().expect("item id");
    match args[3].as_str() {
        "append" => {
            let count: usize = args[4].parse().expect("count");
            let tag = &args[5];
            for i in 0..count {
                journal
                    .append_item(id, &[event(id, format!("{tag}-{i}"))])
                    .expect("append");
            }
        }
        "tear" => {
            let mut locked = Locked::open(&journal.item_file(id)).expect("lock");
            let line = hallmark_core::item::event::encode(&event(id, "x".repeat(4096)));
            locked
                .file_mut()
                .write_all(&line.as_bytes()[..line.len() / 2])
                .expect("half a line");
            locked.file_mut().sync_data().expect("sync");
            // Die holding the lock, mid-line, the way a crash would.
            let me = std::process::id().to_string();
            let _ = std::process::Command::new("kill")
                .args(["-KILL", &me])
                .status();
            std::thread::sleep(std::time::Duration::from_secs(10));
            unreachable!("SIGKILL did not arrive");
        }
        "big" => {
            let count: usize = args[4].parse().expect("count");
            for i in 0..count {
                journal
                    .append_item(id, &[event(id, format!("{i}:{}", "y".repeat(512 * 1024)))])
                    .expect("append");
            }
        }
        other => panic!("unknown mode {other}"),
    }
}
