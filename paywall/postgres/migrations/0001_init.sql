-- certbank store, schema 1 (PostgreSQL).
--
-- Tables are created unqualified, in the first schema of search_path.
-- Usage rows are deliberately not foreign-keyed to api_keys: keys are never
-- deleted, and a group-commit batch must never fail because of one key.

CREATE TABLE api_keys (
	id         text PRIMARY KEY,
	hash       text NOT NULL UNIQUE, -- unique among all keys, so KeyByHash is never ambiguous
	prefix     text NOT NULL,
	name       text NOT NULL,
	email      text NOT NULL,
	tier       text NOT NULL,
	tier_until timestamptz,
	created_at timestamptz NOT NULL,
	revoked_at timestamptz
);

-- One active key per email.
CREATE UNIQUE INDEX api_keys_active_email ON api_keys (lower(email)) WHERE revoked_at IS NULL;
CREATE INDEX api_keys_created_at ON api_keys (created_at);

-- The latest rate-limit and seen state of each key. Rewritten by every
-- usage batch: free space in each page (fillfactor) lets PostgreSQL update
-- rows in place of the page (HOT) instead of adding index entries.
CREATE TABLE usage_state (
	key_id       text PRIMARY KEY,
	minute_start timestamptz,
	minute_count bigint NOT NULL DEFAULT 0,
	seen         bytea,
	seen_count   bigint NOT NULL DEFAULT 0
) WITH (fillfactor = 70);

-- Request and question counts per key and calendar month ("2006-01", UTC).
CREATE TABLE usage_monthly (
	key_id    text NOT NULL,
	month     text NOT NULL,
	requests  bigint NOT NULL DEFAULT 0,
	questions bigint NOT NULL DEFAULT 0,
	PRIMARY KEY (key_id, month)
) WITH (fillfactor = 70);

-- The x402 payments ledger.
CREATE TABLE payments (
	payer      text NOT NULL,
	nonce      text NOT NULL,
	amount     bigint NOT NULL,
	resource   text NOT NULL,
	network    text NOT NULL,
	tx         text NOT NULL DEFAULT '',
	status     text NOT NULL CHECK (status IN ('reserved', 'pending', 'settled', 'failed')),
	reason     text NOT NULL DEFAULT '',
	created_at timestamptz NOT NULL,
	updated_at timestamptz NOT NULL,
	PRIMARY KEY (payer, nonce)
);

CREATE INDEX payments_created_at ON payments (created_at);

-- Windowed counters (Store.Hit).
CREATE TABLE counters (
	name         text NOT NULL,
	window_start timestamptz NOT NULL,
	hits         bigint NOT NULL,
	PRIMARY KEY (name, window_start)
);

CREATE INDEX counters_window_start ON counters (window_start);
