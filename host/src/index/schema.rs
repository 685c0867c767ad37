//! The index's tables, its version, and the queries whose plans a test pins.

pub(super) const SCHEMA_VERSION: i64 = 7;

pub(super) const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS files(name TEXT PRIMARY KEY, offset INTEGER NOT NULL, lines INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS items(
  num INTEGER PRIMARY KEY, title TEXT NOT NULL, state TEXT NOT NULL, branch TEXT NOT NULL,
  base TEXT NOT NULL, worktree TEXT, hold TEXT, hold_since TEXT, round INTEGER NOT NULL, sha TEXT, pr TEXT,
  created TEXT NOT NULL, updated TEXT NOT NULL, since TEXT NOT NULL, events INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS item_json(num INTEGER PRIMARY KEY, json TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS items_state ON items(state);
-- `hall status` lists the open items from this alone: a fifth of the rows, none of the rest.
CREATE INDEX IF NOT EXISTS items_open ON items(num,title,state,branch,base,worktree,hold,round,sha,pr,created,updated,since)
  WHERE state NOT IN ('closed','dropped');
CREATE INDEX IF NOT EXISTS items_hold ON items(hold) WHERE hold IS NOT NULL;
CREATE INDEX IF NOT EXISTS items_branch ON items(branch);
CREATE INDEX IF NOT EXISTS items_worktree ON items(worktree) WHERE worktree IS NOT NULL;
-- id is the item's number << 32 | the line's: a rebuild writes them in that order.
CREATE TABLE IF NOT EXISTS events(
  id INTEGER PRIMARY KEY, t TEXT NOT NULL, event TEXT NOT NULL, actor TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS events_t ON events(t);
CREATE TABLE IF NOT EXISTS usage(
  item INTEGER, t TEXT NOT NULL, model TEXT NOT NULL, role TEXT NOT NULL,
  input INTEGER NOT NULL, output INTEGER NOT NULL, cache_read INTEGER NOT NULL,
  cache_write INTEGER NOT NULL, cost REAL NOT NULL, session TEXT, request_id TEXT);
CREATE TABLE IF NOT EXISTS questions(
  qid INTEGER PRIMARY KEY, item INTEGER, question TEXT NOT NULL, options TEXT NOT NULL,
  dflt TEXT, asked TEXT NOT NULL, wait_until TEXT, session TEXT, answer TEXT, by_default INTEGER NOT NULL DEFAULT 0,
  resumed INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS dismissed(key TEXT PRIMARY KEY, stamp TEXT NOT NULL);
-- What the notify worker told a person, per inbox entry (key and stamp) and channel.
CREATE TABLE IF NOT EXISTS notified(
  id INTEGER PRIMARY KEY, key TEXT NOT NULL, stamp TEXT NOT NULL, kind TEXT NOT NULL,
  channel TEXT NOT NULL, how TEXT NOT NULL, reminder INTEGER NOT NULL, t TEXT NOT NULL,
  text TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS notices(
  id INTEGER PRIMARY KEY, item INTEGER, t TEXT NOT NULL, kind TEXT NOT NULL, message TEXT NOT NULL,
  session TEXT, cleared INTEGER NOT NULL DEFAULT 0);
";

/// The item a worktree or branch belongs to, live items first. Both sides are indexed,
/// since a hook asks this on every edit; `branch = NULL` matches nothing, so a detached
/// HEAD looks up the worktree alone.
pub(super) const PLACE_QUERY: &str = "SELECT num FROM items WHERE worktree = ?1 OR branch = ?2
     ORDER BY state IN ('closed','dropped'), num DESC LIMIT 1";

/// The items not closed or dropped: read from the covering index `items_open` alone
/// (its `WHERE` must stay word for word the index's, or SQLite scans the table).
pub(super) const OPEN_QUERY: &str =
    "SELECT num,title,state,branch,base,worktree,hold,round,sha,pr,created,updated,since FROM items
     WHERE state NOT IN ('closed','dropped') ORDER BY num";

/// The items that wait for a person: two indexed lookups, where one `OR` would read
/// every item.
pub(super) const WAITING_QUERY: &str =
    "SELECT num,title,state,branch,base,worktree,hold,round,sha,pr,created,updated,since FROM items
     WHERE state IN ('escalated','awaiting_you')
     UNION
     SELECT num,title,state,branch,base,worktree,hold,round,sha,pr,created,updated,since
     FROM items INDEXED BY items_hold WHERE hold IS NOT NULL ORDER BY num";
