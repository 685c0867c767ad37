//! Lookups the librarian's daemon job makes each pass: narrow, indexed, and cheap.

use rusqlite::params;

use super::{Index, Result};
use crate::item::ItemId;

impl Index {
    /// Items closed or dropped at `since` (an RFC 3339 stamp) or later, in order.
    pub fn finished_since(&self, since: &str) -> Result<Vec<ItemId>> {
        self.read(|conn| {
            let mut stmt = conn.prepare_cached(
                "SELECT num FROM items INDEXED BY items_state
                 WHERE state IN ('closed','dropped') AND since >= ?1 ORDER BY num",
            )?;
            let rows = stmt.query_map(params![since], |r| Ok(ItemId(r.get(0)?)))?;
            Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
        })
    }

    /// The kinds of event item `id`'s journal holds, each once: a range of the events'
    /// key (the item's number in its high bits), so it reads that item's rows alone.
    pub fn event_names(&self, id: ItemId) -> Result<Vec<String>> {
        let from = i64::from(id.0) << 32;
        let to = (i64::from(id.0) + 1) << 32;
        self.read(|conn| {
            let mut stmt = conn
                .prepare_cached("SELECT DISTINCT event FROM events WHERE id >= ?1 AND id < ?2")?;
            let rows = stmt.query_map(params![from, to], |r| r.get::<_, String>(0))?;
            Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
        })
    }
}
