-- certbank store, schema 2 (SQLite): a key's seen set in two parts.
--
-- usage_state.seen now holds the recent additions (paywall.Usage.Seen),
-- small and rewritten by most requests; usage_seen holds the bulk of the
-- history (Usage.SeenBase), rewritten only when the recent part is folded
-- into it. A separate table, because SQLite rewrites a whole row, overflow
-- pages included, on every update. Sets saved by schema 1 stay whole in
-- usage_state.seen and are folded on their next growth.
CREATE TABLE usage_seen (
	key_id TEXT PRIMARY KEY,
	seen   BLOB NOT NULL
) STRICT;
