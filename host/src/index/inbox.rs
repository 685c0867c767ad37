//! What Your Office and its notices read: dismissals, notices, and what the notify worker
//! told a person.

use super::{Index, Result};
use crate::item::ItemId;

impl Index {
    pub fn dismissed(&self) -> Result<Vec<(String, String)>> {
        self.read(|conn| {
            let mut stmt = conn.prepare_cached("SELECT key, stamp FROM dismissed")?;
            let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
            Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
        })
    }

    /// Everything the notify worker recorded, oldest first.
    pub fn notified(&self) -> Result<Vec<NotifiedRow>> {
        self.read(|conn| {
            let mut stmt = conn.prepare_cached(
                "SELECT key,stamp,kind,channel,how,reminder,t,text FROM notified ORDER BY id",
            )?;
            let rows = stmt.query_map([], |r| {
                Ok(NotifiedRow {
                    key: r.get(0)?,
                    stamp: r.get(1)?,
                    kind: r.get(2)?,
                    channel: r.get(3)?,
                    how: r.get(4)?,
                    reminder: r.get(5)?,
                    t: r.get(6)?,
                    text: r.get(7)?,
                })
            })?;
            Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
        })
    }

    pub fn notices(&self) -> Result<Vec<NoticeRow>> {
        self.read(|conn| {
            let mut stmt = conn.prepare_cached(
                "SELECT item,t,kind,message,session FROM notices WHERE cleared = 0 ORDER BY t, id",
            )?;
            let rows = stmt.query_map([], |r| {
                Ok(NoticeRow {
                    item: r.get::<_, Option<u32>>(0)?.map(ItemId),
                    t: r.get(1)?,
                    kind: r.get(2)?,
                    message: r.get(3)?,
                    session: r.get(4)?,
                })
            })?;
            Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
        })
    }
}

/// One `notified` line.
#[derive(Clone, Debug, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct NotifiedRow {
    pub key: String,
    pub stamp: String,
    pub kind: String,
    pub channel: String,
    pub how: String,
    pub reminder: u32,
    pub t: String,
    pub text: String,
}

#[derive(Clone, Debug, serde::Serialize, schemars::JsonSchema)]
pub struct NoticeRow {
    pub item: Option<ItemId>,
    pub t: String,
    pub kind: String,
    pub message: String,
    pub session: Option<String>,
}
