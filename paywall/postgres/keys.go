package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/paywall/store"
)

const keyColumns = `id, hash, prefix, name, email, tier, tier_until, created_at, revoked_at`

// scanKey reads a row of keyColumns.
func scanKey(row pgx.Row) (store.Key, error) {
	var k store.Key
	var until, created, revoked pgtype.Timestamptz
	if err := row.Scan(&k.ID, &k.Hash, &k.Prefix, &k.Name, &k.Email, &k.Tier, &until, &created, &revoked); err != nil {
		return store.Key{}, err
	}
	k.TierUntil, k.CreatedAt, k.RevokedAt = fromTimestamptz(until), fromTimestamptz(created), fromTimestamptz(revoked)
	return k, nil
}

// CreateKey stores a new key. It fails with Conflict when an active key has
// the same email (case-insensitive), or any key has the same hash or ID, and
// with Invalid when k has no ID, hash or creation time.
func (db *DB) CreateKey(ctx context.Context, k store.Key) error {
	if k.ID == "" || k.Hash == "" || k.CreatedAt.IsZero() {
		return certbank.Errorf(certbank.Invalid, "a key needs an ID, a hash and a creation time")
	}
	_, err := db.pool.Exec(ctx, `INSERT INTO api_keys (`+keyColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		k.ID, k.Hash, k.Prefix, k.Name, k.Email, k.Tier,
		timestamptz(k.TierUntil), timestamptz(k.CreatedAt), timestamptz(k.RevokedAt))
	if constraint, ok := isUnique(err); ok {
		if constraint == "api_keys_active_email" {
			return fmt.Errorf("postgres: create key: %w: %w",
				certbank.Errorf(certbank.Conflict, "an active API key already exists for this email"), err)
		}
		return fmt.Errorf("postgres: create key: %w: %w",
			certbank.Errorf(certbank.Conflict, "this API key already exists"), err)
	}
	if err != nil {
		return db.fail("create key", err)
	}
	return nil
}

// KeyByHash returns the key (active or revoked) with the given hash, or
// NotFound.
func (db *DB) KeyByHash(ctx context.Context, hash string) (store.Key, error) {
	k, err := scanKey(db.pool.QueryRow(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE hash = $1`, hash))
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Key{}, certbank.Errorf(certbank.NotFound, "API key not found")
	}
	if err != nil {
		return store.Key{}, db.fail("key by hash", err)
	}
	return k, nil
}

// KeyByID returns the key with the given ID, or NotFound.
func (db *DB) KeyByID(ctx context.Context, id string) (store.Key, error) {
	k, err := scanKey(db.pool.QueryRow(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Key{}, certbank.Errorf(certbank.NotFound, "API key %q not found", id)
	}
	if err != nil {
		return store.Key{}, db.fail("key by ID", err)
	}
	return k, nil
}

// Keys returns every key, newest first.
func (db *DB) Keys(ctx context.Context) ([]store.Key, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+keyColumns+` FROM api_keys ORDER BY created_at DESC, id DESC`)
	if err != nil {
		return nil, db.fail("list keys", err)
	}
	keys, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.Key, error) { return scanKey(row) })
	if err != nil {
		return nil, db.fail("list keys", err)
	}
	return keys, nil
}

// SetTier sets a key's tier and the end of its subscription (zero: no end).
// NotFound if there is no such key.
func (db *DB) SetTier(ctx context.Context, id, tier string, until time.Time) error {
	tag, err := db.pool.Exec(ctx, `UPDATE api_keys SET tier = $1, tier_until = $2 WHERE id = $3`,
		tier, timestamptz(until), id)
	return db.updatedOne(tag, err, "set tier", "API key %q not found", id)
}

// RevokeKey marks a key revoked at the given time. NotFound if there is no
// such key; revoking a revoked key changes nothing. Invalid for the zero
// time.
func (db *DB) RevokeKey(ctx context.Context, id string, at time.Time) error {
	if at.IsZero() {
		return certbank.Errorf(certbank.Invalid, "a revocation needs a time")
	}
	tag, err := db.pool.Exec(ctx, `UPDATE api_keys SET revoked_at = coalesce(revoked_at, $1) WHERE id = $2`,
		timestamptz(at), id)
	return db.updatedOne(tag, err, "revoke key", "API key %q not found", id)
}

// RotateKey replaces an active key's hash and prefix, keeping its ID, tier
// and usage. NotFound if there is no such active key; Conflict if the new
// hash belongs to any key.
func (db *DB) RotateKey(ctx context.Context, id, hash, prefix string) error {
	if hash == "" {
		return certbank.Errorf(certbank.Invalid, "a key needs a hash")
	}
	tag, err := db.pool.Exec(ctx, `UPDATE api_keys SET hash = $1, prefix = $2 WHERE id = $3 AND revoked_at IS NULL`,
		hash, prefix, id)
	if _, ok := isUnique(err); ok {
		return fmt.Errorf("postgres: rotate key: %w: %w",
			certbank.Errorf(certbank.Conflict, "this API key already exists"), err)
	}
	return db.updatedOne(tag, err, "rotate key", "active API key %q not found", id)
}

// updatedOne turns the result of an UPDATE of one row into an error:
// db.fail's for err, NotFound with the given message when no row matched.
func (db *DB) updatedOne(tag pgconn.CommandTag, err error, op, notFound string, args ...any) error {
	if err != nil {
		return db.fail(op, err)
	}
	if tag.RowsAffected() == 0 {
		return certbank.Errorf(certbank.NotFound, notFound, args...)
	}
	return nil
}
