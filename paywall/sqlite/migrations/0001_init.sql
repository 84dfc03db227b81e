-- certbank store, schema 1 (SQLite).
--
-- Times are unix microseconds in UTC, NULL for "none": the precision of
-- PostgreSQL's timestamptz, so both stores round-trip times identically.
-- Usage rows are deliberately not foreign-keyed to api_keys: keys are never
-- deleted, and a group-commit batch must never fail because of one key.

CREATE TABLE api_keys (
	id         TEXT PRIMARY KEY,
	hash       TEXT NOT NULL UNIQUE, -- unique among all keys, so KeyByHash is never ambiguous
	prefix     TEXT NOT NULL,
	name       TEXT NOT NULL,
	email      TEXT NOT NULL,
	tier       TEXT NOT NULL,
	tier_until INTEGER,
	created_at INTEGER NOT NULL,
	revoked_at INTEGER
) STRICT;

-- One active key per email.
CREATE UNIQUE INDEX api_keys_active_email ON api_keys (lower(email)) WHERE revoked_at IS NULL;
CREATE INDEX api_keys_created_at ON api_keys (created_at);

-- The latest rate-limit and seen state of each key.
CREATE TABLE usage_state (
	key_id       TEXT PRIMARY KEY,
	minute_start INTEGER,
	minute_count INTEGER NOT NULL DEFAULT 0,
	seen         BLOB,
	seen_count   INTEGER NOT NULL DEFAULT 0
) STRICT;

-- Request and question counts per key and calendar month ("2006-01", UTC).
CREATE TABLE usage_monthly (
	key_id    TEXT NOT NULL,
	month     TEXT NOT NULL,
	requests  INTEGER NOT NULL DEFAULT 0,
	questions INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (key_id, month)
) STRICT, WITHOUT ROWID;

-- The x402 payments ledger.
CREATE TABLE payments (
	payer      TEXT NOT NULL,
	nonce      TEXT NOT NULL,
	amount     INTEGER NOT NULL,
	resource   TEXT NOT NULL,
	network    TEXT NOT NULL,
	tx         TEXT NOT NULL DEFAULT '',
	status     TEXT NOT NULL CHECK (status IN ('reserved', 'pending', 'settled', 'failed')),
	reason     TEXT NOT NULL DEFAULT '',
	created_at INTEGER NOT NULL,
	updated_at INTEGER NOT NULL,
	PRIMARY KEY (payer, nonce)
) STRICT;

CREATE INDEX payments_created_at ON payments (created_at);

-- Windowed counters (Store.Hit).
CREATE TABLE counters (
	name         TEXT NOT NULL,
	window_start INTEGER NOT NULL,
	hits         INTEGER NOT NULL,
	PRIMARY KEY (name, window_start)
) STRICT, WITHOUT ROWID;

CREATE INDEX counters_window_start ON counters (window_start);
