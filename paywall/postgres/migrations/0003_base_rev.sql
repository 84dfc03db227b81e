-- certbank store, schema 3 (PostgreSQL): a revision for each seen base.
--
-- base_rev rises by one whenever seen_base is written, under the row's
-- lock, so (key_id, base_rev) names one version of a base for every
-- instance. An instance keeps the bases it has read and asks the server to
-- send a key's base only when its revision differs from the kept one: the
-- large, rarely changed part of a seen set then crosses the network once
-- per change instead of with every usage transaction.
ALTER TABLE usage_state ADD COLUMN base_rev bigint NOT NULL DEFAULT 0;
