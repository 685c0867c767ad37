//! Folding journal lines into the tables: the per-file catch-up the index runs on read,
//! and the side tables (questions, notices, usage) a few kinds of event feed.

use std::collections::BTreeSet;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use rusqlite::{Transaction, params};

use super::*;
use crate::item::state::Question;

/// Folding fails with a [`Fault`], so the caller can tell a damaged file from the rest.
type Result<T, E = Fault> = std::result::Result<T, E>;

/// A new prompt in a session answers its "session waiting" notice.
fn clear_waiting(tx: &Transaction<'_>, session: &str) -> Result<()> {
    tx.prepare_cached("UPDATE notices SET cleared = 1 WHERE session = ?1 AND kind = 'session_waiting' AND cleared = 0")?
        .execute([session])?;
    Ok(())
}

/// One line as the index reads it.
enum Decoded {
    Full(Box<Event>),
    /// The envelope alone, its strings as places in the file's bytes (they hold no
    /// escapes; a line whose do is decoded in full).
    Light {
        t: Span,
        actor: Span,
        event: Span,
        item: Option<ItemId>,
        session: Option<Span>,
    },
}

/// A file's rows for the `events` table, written together: most of a reindex is
/// these inserts, and one statement of [`EventRows::BATCH`] rows costs far less than as
/// many statements of one.
#[derive(Default)]
struct EventRows<'a> {
    rows: Vec<(i64, &'a str, &'a str, &'a str)>,
}

impl<'a> EventRows<'a> {
    const BATCH: usize = 64;

    fn push(&mut self, id: i64, t: &'a str, event: &'a str, actor: &'a str) {
        self.rows.push((id, t, event, actor));
    }

    fn insert(&self, tx: &Transaction<'_>) -> Result<()> {
        const ONE: &str = "(?,?,?,?)";
        let sql = |n: usize| {
            format!(
                "INSERT OR REPLACE INTO events(id,t,event,actor) VALUES {}",
                vec![ONE; n].join(",")
            )
        };
        let mut chunks = self.rows.chunks_exact(Self::BATCH);
        if chunks.len() > 0 {
            let mut batch = tx.prepare_cached(&sql(Self::BATCH))?;
            for chunk in chunks.by_ref() {
                let values = chunk.iter().flat_map(|(id, t, event, actor)| {
                    [
                        rusqlite::types::ToSqlOutput::from(*id),
                        (*t).into(),
                        (*event).into(),
                        (*actor).into(),
                    ]
                });
                batch.execute(rusqlite::params_from_iter(values))?;
            }
        }
        let mut single = tx.prepare_cached(&sql(1))?;
        for (id, t, event, actor) in chunks.remainder() {
            single.execute(params![id, t, event, actor])?;
        }
        Ok(())
    }
}

/// Where a string stands in the bytes it was decoded from.
#[derive(Clone, Copy)]
struct Span {
    start: u32,
    end: u32,
}

impl Span {
    /// Where `text` stands in `bytes`, when it is a slice of them (a string with no
    /// escapes, borrowed by serde; one serde unescaped lives in an allocation of its own,
    /// which never overlaps `bytes`) and the file is under 4 GiB.
    fn of(text: &str, bytes: &[u8]) -> Option<Span> {
        let start = (text.as_ptr() as usize).checked_sub(bytes.as_ptr() as usize)?;
        let end = start + text.len();
        (end <= bytes.len()).then_some(Span {
            start: u32::try_from(start).ok()?,
            end: u32::try_from(end).ok()?,
        })
    }

    fn get(self, bytes: &[u8]) -> &str {
        // A span is only made from a `str` inside these bytes.
        std::str::from_utf8(&bytes[self.start as usize..self.end as usize]).unwrap_or_default()
    }
}

/// Names of files appended to since `offset`, up to the last complete line.
pub(super) fn read_names(path: &Path, offset: u64) -> Result<(BTreeSet<String>, u64)> {
    let err = |e| Fault::io(path, e);
    let mut f = std::fs::File::open(path).map_err(err)?;
    f.seek(SeekFrom::Start(offset)).map_err(err)?;
    let mut buf = String::new();
    f.read_to_string(&mut buf).map_err(err)?;
    let complete = buf.rfind('\n').map(|i| i + 1).unwrap_or(0);
    let names = buf[..complete]
        .lines()
        .map(str::to_string)
        .filter(|l| !l.is_empty())
        .collect();
    Ok((names, offset + complete as u64))
}

/// What a journal file gained past the offset the index had read, decoded: the part of
/// a fold that needs no database, so a rebuild reads the next files on another thread
/// while this one writes.
pub(super) struct Loaded {
    offset: u64,
    bytes: Vec<u8>,
    parsed: journal::file::Parsed<Decoded>,
}

/// Folds what `name` gained since its stored offset into the tables.
pub(super) fn apply_file(
    tx: &Transaction<'_>,
    journal: &Journal,
    name: &str,
) -> Result<RebuildStats> {
    let (offset, lines): (u64, u64) = tx
        .prepare_cached("SELECT offset, lines FROM files WHERE name = ?1")?
        .query_row([name], |r| {
            Ok((r.get::<_, i64>(0)? as u64, r.get::<_, i64>(1)? as u64))
        })
        .optional()?
        .unwrap_or((0, 0));
    match load(journal, name, offset, lines)? {
        Some(loaded) => store(tx, name, loaded),
        None => Ok(RebuildStats::default()),
    }
}

/// Reads and decodes what `name` holds past `offset` (the index has read `lines` lines
/// of it); `None` when there is nothing new, or no such file.
pub(super) fn load(
    journal: &Journal,
    name: &str,
    offset: u64,
    lines: u64,
) -> Result<Option<Loaded>> {
    let Some(path) = journal.file_for(name) else {
        return Ok(None);
    };
    let mut f = match std::fs::File::open(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Fault::io(&path, e)),
    };
    let err = |e| Fault::io(&path, e);
    // Journal files only grow: one shorter than what the index has read of it was
    // edited by hand, or the offset is garbage. Either way, fold everything again.
    let len = f.metadata().map_err(err)?.len();
    if len < offset {
        return Err(Fault::Damaged(format!(
            "the index has read {offset} bytes of {}, which has only {len}",
            path.display()
        )));
    }
    f.seek(SeekFrom::Start(offset)).map_err(err)?;
    let mut bytes = Vec::with_capacity((len - offset) as usize);
    f.read_to_end(&mut bytes).map_err(err)?;
    // Decode every line's envelope; the payload only where it matters (most events are
    // prompts, turns and commits, and skipping their payload is most of a reindex).
    let parsed = journal::file::parse_with(&path, &bytes, lines + 1, |s| {
        let head: Head<'_> = serde_json::from_str(s).map_err(|e| e.to_string())?;
        let light = (head.v == EVENT_VERSION && !payload_matters(&head.event))
            .then(|| {
                let session = match &head.session {
                    Some(s) => Some(Span::of(s, &bytes)?),
                    None => None,
                };
                Some(Decoded::Light {
                    t: Span::of(&head.t, &bytes)?,
                    actor: Span::of(&head.actor, &bytes)?,
                    event: Span::of(&head.event, &bytes)?,
                    item: head.item,
                    session,
                })
            })
            .flatten();
        let Some(light) = light else {
            let event = decode(s).map_err(|e| e.to_string())?;
            return Ok((Decoded::Full(Box::new(event)), None));
        };
        let marker = if head.event == "torn_line" {
            head.line
        } else {
            None
        };
        Ok((light, marker))
    })?;
    if parsed.complete_len == 0 {
        return Ok(None);
    }
    Ok(Some(Loaded {
        offset,
        bytes,
        parsed,
    }))
}

/// Writes what [`load`] read of `name` into the tables: its events, the side tables,
/// the item's fold and how far the file has been read.
pub(super) fn store(tx: &Transaction<'_>, name: &str, loaded: Loaded) -> Result<RebuildStats> {
    let Loaded {
        offset,
        bytes,
        parsed,
    } = loaded;
    let item_id = name.parse::<ItemId>().ok();
    let mut item: Option<Item> = match item_id {
        Some(id) => {
            let stored = tx
                .prepare_cached("SELECT json FROM item_json WHERE num = ?1")?
                .query_row([id.0], |r| r.get::<_, String>(0))
                .optional()?;
            // Folding on from a fold that doesn't decode would silently start the item
            // over; only a damaged file holds one.
            Some(match stored {
                Some(json) => serde_json::from_str(&json).map_err(|e| {
                    Fault::Damaged(format!("the cached fold of {id} does not decode: {e}"))
                })?,
                None => Item::default(),
            })
        }
        None => None,
    };
    let item_num = item_id.map(|i| i.0);
    let item_key = i64::from(item_num.unwrap_or(0)) << 32;
    let mut rows = EventRows::default();
    for (line, decoded) in &parsed.items {
        let id = item_key | (*line as i64 & 0xffff_ffff);
        match decoded {
            Decoded::Full(e) => {
                rows.push(id, &e.t, e.kind.name(), &e.actor);
                record_side_tables(tx, item_num.or(e.item.map(|i| i.0)), e)?;
                if let Some(it) = item.as_mut() {
                    it.apply(e);
                }
            }
            Decoded::Light {
                t,
                actor,
                event,
                item: of,
                session,
            } => {
                let (t, event) = (t.get(&bytes), event.get(&bytes));
                rows.push(id, t, event, actor.get(&bytes));
                if event == "prompt"
                    && let Some(s) = session
                {
                    clear_waiting(tx, s.get(&bytes))?;
                }
                if let Some(it) = item.as_mut() {
                    it.note(t, *of);
                }
            }
        }
    }
    rows.insert(tx)?;
    let contents = parsed;
    if let (Some(it), Some(num)) = (item, item_num) {
        let json = serde_json::to_string(&it)
            .map_err(|e| Fault::Damaged(format!("the fold of {num} does not encode: {e}")))?;
        tx.prepare_cached(
            "INSERT OR REPLACE INTO items(num,title,state,branch,base,worktree,hold,hold_since,round,sha,pr,created,updated,since,events)
             VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15)",
        )?
        .execute(params![
                num,
                it.title,
                it.state.as_str(),
                it.branch,
                it.base,
                it.worktree,
                it.hold.as_ref().map(|h| h.kind.as_str()),
                it.hold.as_ref().map(|h| h.since.clone()),
                it.round,
                it.sha.as_deref(),
                it.pr,
                it.created,
                it.updated,
                it.since,
                it.events as i64
        ])?;
        tx.prepare_cached("INSERT OR REPLACE INTO item_json(num, json) VALUES(?1, ?2)")?
            .execute(params![num, json])?;
    }
    tx.prepare_cached("INSERT OR REPLACE INTO files(name, offset, lines) VALUES(?1,?2,?3)")?
        .execute(params![
            name,
            (offset + contents.complete_len) as i64,
            contents.lines as i64
        ])?;
    Ok(RebuildStats {
        files: 1,
        events: contents.items.len() as u64,
        torn: contents.torn.len() as u64,
    })
}

fn record_side_tables(tx: &Transaction<'_>, item: Option<u32>, e: &Event) -> Result<()> {
    match &e.kind {
        EventKind::Usage(u) => {
            tx.prepare_cached(
                "INSERT INTO usage(item,t,model,role,input,output,cache_read,cache_write,cost,session,request_id)
                 VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11)",
            )?
            .execute(params![
                item,
                e.t,
                u.model,
                u.role,
                u.input as i64,
                u.output as i64,
                u.cache_read as i64,
                u.cache_write as i64,
                u.cost_usd,
                u.session,
                u.request_id
            ])?;
        }
        EventKind::Asked { .. } => {
            if let Some(q) = Question::asked(e) {
                tx.execute(
                    "INSERT OR REPLACE INTO questions(qid,item,question,options,dflt,asked,wait_until,session,answer,by_default)
                     VALUES(?1,?2,?3,?4,?5,?6,?7,?8,NULL,0)",
                    params![
                        q.qid.0,
                        item,
                        q.question,
                        serde_json::to_string(&q.options).unwrap_or_default(),
                        q.default,
                        q.asked,
                        q.wait_until,
                        q.session
                    ],
                )?;
            }
        }
        EventKind::Answered {
            qid,
            answer,
            by_default,
        } => {
            tx.execute(
                "UPDATE questions SET answer = ?2, by_default = ?3 WHERE qid = ?1",
                params![qid.0, answer, *by_default as i64],
            )?;
        }
        EventKind::Resumed { qid, .. } => {
            tx.execute("UPDATE questions SET resumed = 1 WHERE qid = ?1", [qid.0])?;
        }
        EventKind::InboxDismissed { key, stamp } => {
            tx.execute(
                "INSERT OR REPLACE INTO dismissed(key, stamp) VALUES(?1, ?2)",
                params![key, stamp],
            )?;
        }
        EventKind::Notified {
            key,
            stamp,
            kind,
            channel,
            how,
            reminder,
            text,
        } => {
            tx.execute(
                "INSERT INTO notified(key,stamp,kind,channel,how,reminder,t,text) VALUES(?1,?2,?3,?4,?5,?6,?7,?8)",
                params![key, stamp, kind, channel, how, reminder, e.t, text],
            )?;
            // A channel that delivers again is no longer failing.
            if how != "deferred" {
                tx.execute(
                    "UPDATE notices SET cleared = 1 WHERE kind = 'notify_failed' AND cleared = 0 AND message LIKE ?1 || ':%'",
                    [channel],
                )?;
            }
        }
        EventKind::Notification {
            kind,
            message,
            session,
        } => {
            tx.execute(
                "INSERT INTO notices(item,t,kind,message,session) VALUES(?1,?2,?3,?4,?5)",
                params![item, e.t, kind, message, session],
            )?;
        }
        EventKind::Prompt {
            session: Some(s), ..
        } => clear_waiting(tx, s)?,
        _ => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::item::event::decode;

    fn line(json: &str) -> Event {
        decode(json).expect("a valid journal line")
    }

    /// A span is only taken of a string serde borrowed from the file's bytes; one it had
    /// to unescape is not in them, so its line is decoded in full instead.
    #[test]
    fn spans_point_into_the_bytes_or_nowhere() {
        let bytes = br#"{"actor":"agent","note":"a\"b"}"#.to_vec();
        let text = std::str::from_utf8(&bytes).expect("utf8");
        #[derive(serde::Deserialize)]
        struct Two<'a> {
            #[serde(borrow)]
            actor: std::borrow::Cow<'a, str>,
            #[serde(borrow)]
            note: std::borrow::Cow<'a, str>,
        }
        let two: Two<'_> = serde_json::from_str(text).expect("json");
        let span = Span::of(&two.actor, &bytes).expect("borrowed");
        assert_eq!(span.get(&bytes), "agent");
        assert!(matches!(two.note, std::borrow::Cow::Owned(_)));
        assert!(
            Span::of(&two.note, &bytes).is_none(),
            "unescaped: not in the bytes"
        );
        assert!(Span::of("agent", &bytes).is_none(), "another allocation");
    }

    /// The daemon asks the index whether a session still waits for its answer, so the
    /// `resumed` column must follow the journal as it grows.
    #[test]
    fn a_resumed_question_is_marked_in_the_index() {
        let dir = tempfile::tempdir().expect("temp dir");
        let journal = Journal::new(dir.path().join("hallmark"));
        journal.init().expect("init");
        let (id, _) = journal
            .create_item(|_| {
                Ok::<_, crate::journal::JournalError>(vec![line(
                    r#"{"v":1,"t":"2026-11-30T10:00:00Z","actor":"you","event":"created","item":"H-0001","title":"T","branch":"hall/h-0001","base":"main","source":"new"}"#,
                )])
            })
            .expect("item");
        let resumed = || -> Vec<bool> {
            let index = Index::open(&journal).expect("index");
            let questions = index.questions(false).expect("questions");
            questions.iter().map(|q| q.resumed).collect()
        };
        let add = |json: &str| journal.append_item(id, &[line(json)]).expect("append");
        add(
            r#"{"v":1,"t":"2026-11-30T10:01:00Z","actor":"agent","event":"asked","item":"H-0001","qid":"Q-1","question":"which?","session":"s-1"}"#,
        );
        add(
            r#"{"v":1,"t":"2026-11-30T10:02:00Z","actor":"you","event":"answered","item":"H-0001","qid":"Q-1","answer":"this"}"#,
        );
        assert_eq!(resumed(), [false]);
        add(
            r#"{"v":1,"t":"2026-11-30T10:03:00Z","actor":"daemon","event":"resumed","item":"H-0001","qid":"Q-1","session":"s-1","ok":true}"#,
        );
        assert_eq!(resumed(), [true]);
        // A rebuild from nothing agrees.
        let (index, _) = Index::rebuild(&journal).expect("rebuild");
        assert!(index.questions(false).expect("questions")[0].resumed);
    }
}
