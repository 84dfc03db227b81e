-- certbank store, schema 3 (SQLite): an append-only usage log.
--
-- A usage transaction appends one row holding the new state of every key it
-- changed (counts in full, the recent seen part as the bytes appended) in
-- place of an upsert per key and table; a background compaction writes the
-- keys' rows in usage_state, usage_seen and usage_monthly from time to time
-- and deletes the log rows they cover. usage_state.log_id is the last log
-- row a key's stored state includes: reading a key means its stored rows,
-- then its records in log rows after log_id. Trimming always keeps the
-- newest row, so that a new row's id (one more than the largest) is never
-- one that was used before (no AUTOINCREMENT, which costs a page write per
-- commit).
CREATE TABLE usage_log (
	id    INTEGER PRIMARY KEY,
	entry BLOB NOT NULL
) STRICT;

ALTER TABLE usage_state ADD COLUMN log_id INTEGER NOT NULL DEFAULT 0;
