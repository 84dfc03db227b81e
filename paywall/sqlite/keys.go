package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/paywall/store"
)

const keyColumns = `id, hash, prefix, name, email, tier, tier_until, created_at, revoked_at`

// keyByHashSQL is the key lookup of every request whose key is not cached.
const keyByHashSQL = `SELECT ` + keyColumns + ` FROM api_keys WHERE hash = ?`

// scanKey reads a row of keyColumns.
func scanKey(row interface{ Scan(...any) error }) (store.Key, error) {
	var k store.Key
	var until, created, revoked sql.NullInt64
	if err := row.Scan(&k.ID, &k.Hash, &k.Prefix, &k.Name, &k.Email, &k.Tier, &until, &created, &revoked); err != nil {
		return store.Key{}, err
	}
	k.TierUntil, k.CreatedAt, k.RevokedAt = fromMicros(until), fromMicros(created), fromMicros(revoked)
	return k, nil
}

// CreateKey stores a new key. It fails with Conflict when an active key has
// the same email (case-insensitive), or any key has the same hash or ID, and
// with Invalid when k has no ID, hash or creation time.
func (db *DB) CreateKey(ctx context.Context, k store.Key) error {
	if k.ID == "" || k.Hash == "" || k.CreatedAt.IsZero() {
		return certbank.Errorf(certbank.Invalid, "a key needs an ID, a hash and a creation time")
	}
	_, err := db.write.ExecContext(ctx, `INSERT INTO api_keys (`+keyColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		k.ID, k.Hash, k.Prefix, k.Name, k.Email, k.Tier, micros(k.TierUntil), micros(k.CreatedAt), micros(k.RevokedAt))
	if err != nil {
		if isUnique(err) && !db.closed.Load() {
			if strings.Contains(err.Error(), "api_keys_active_email") {
				return fmt.Errorf("sqlite: create key: %w: %w",
					certbank.Errorf(certbank.Conflict, "an active API key already exists for this email"), err)
			}
			return fmt.Errorf("sqlite: create key: %w: %w",
				certbank.Errorf(certbank.Conflict, "this API key already exists"), err)
		}
		return db.fail("create key", err)
	}
	return nil
}

// KeyByHash returns the key (active or revoked) with the given hash, or
// NotFound.
func (db *DB) KeyByHash(ctx context.Context, hash string) (store.Key, error) {
	k, err := scanKey(db.keyByHash.QueryRowContext(ctx, hash))
	if errors.Is(err, sql.ErrNoRows) {
		return store.Key{}, certbank.Errorf(certbank.NotFound, "API key not found")
	}
	if err != nil {
		return store.Key{}, db.fail("key by hash", err)
	}
	return k, nil
}

// KeyByID returns the key with the given ID, or NotFound.
func (db *DB) KeyByID(ctx context.Context, id string) (store.Key, error) {
	k, err := scanKey(db.read.QueryRowContext(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return store.Key{}, certbank.Errorf(certbank.NotFound, "API key %q not found", id)
	}
	if err != nil {
		return store.Key{}, db.fail("key by ID", err)
	}
	return k, nil
}

// Keys returns every key, newest first.
func (db *DB) Keys(ctx context.Context) ([]store.Key, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT `+keyColumns+` FROM api_keys ORDER BY created_at DESC, id DESC`)
	if err != nil {
		return nil, db.fail("list keys", err)
	}
	defer rows.Close()
	var keys []store.Key
	for rows.Next() {
		k, err := scanKey(rows)
		if err != nil {
			return nil, db.fail("list keys", err)
		}
		keys = append(keys, k)
	}
	if err := rows.Err(); err != nil {
		return nil, db.fail("list keys", err)
	}
	return keys, nil
}

// SetTier sets a key's tier and the end of its subscription (zero: no end).
// NotFound if there is no such key.
func (db *DB) SetTier(ctx context.Context, id, tier string, until time.Time) error {
	res, err := db.write.ExecContext(ctx, `UPDATE api_keys SET tier = ?, tier_until = ? WHERE id = ?`,
		tier, micros(until), id)
	return db.updatedOne(res, err, "set tier", "API key %q not found", id)
}

// RevokeKey marks a key revoked at the given time. NotFound if there is no
// such key; revoking a revoked key changes nothing. Invalid for the zero
// time.
func (db *DB) RevokeKey(ctx context.Context, id string, at time.Time) error {
	if at.IsZero() {
		return certbank.Errorf(certbank.Invalid, "a revocation needs a time")
	}
	res, err := db.write.ExecContext(ctx, `UPDATE api_keys SET revoked_at = coalesce(revoked_at, ?) WHERE id = ?`,
		micros(at), id)
	return db.updatedOne(res, err, "revoke key", "API key %q not found", id)
}

// RotateKey replaces an active key's hash and prefix, keeping its ID, tier
// and usage. NotFound if there is no such active key; Conflict if the new
// hash belongs to any key.
func (db *DB) RotateKey(ctx context.Context, id, hash, prefix string) error {
	if hash == "" {
		return certbank.Errorf(certbank.Invalid, "a key needs a hash")
	}
	res, err := db.write.ExecContext(ctx, `UPDATE api_keys SET hash = ?, prefix = ? WHERE id = ? AND revoked_at IS NULL`,
		hash, prefix, id)
	if err != nil && isUnique(err) && !db.closed.Load() {
		return fmt.Errorf("sqlite: rotate key: %w: %w",
			certbank.Errorf(certbank.Conflict, "this API key already exists"), err)
	}
	return db.updatedOne(res, err, "rotate key", "active API key %q not found", id)
}

// updatedOne turns the result of an UPDATE of one row into an error:
// db.fail's for err, NotFound with the given message when no row matched.
func (db *DB) updatedOne(res sql.Result, err error, op, notFound string, args ...any) error {
	if err != nil {
		return db.fail(op, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return db.fail(op, err)
	}
	if n == 0 {
		return certbank.Errorf(certbank.NotFound, notFound, args...)
	}
	return nil
}
