-- certbank store, schema 2 (PostgreSQL): a key's seen set in two parts.
--
-- usage_state.seen now holds the recent additions (paywall.Usage.Seen),
-- small and rewritten by most requests; seen_base holds the bulk of the
-- history (Usage.SeenBase). A save that does not change the base writes the
-- row's old value back (CASE … ELSE s.seen_base), which keeps its TOAST
-- pointer: the large value is not copied. Sets saved by schema 1 stay whole
-- in seen and are folded on their next growth.
ALTER TABLE usage_state ADD COLUMN seen_base bytea;
