// Package postgres is the shared store.Store: PostgreSQL through pgx v5 and
// its connection pool, for any number of certbank serve instances that share
// keys, quotas, the payments ledger and counters.
//
// Open applies the embedded migrations under an advisory lock, so instances
// that start together do not race. Tables live in the first schema of the
// connection's search_path (set it in the DSN, e.g. "&search_path=certbank",
// to keep certbank apart from other applications). Pool settings come from
// the DSN as well (pool_max_conns and friends, see pgxpool.ParseConfig).
//
// Durability is the server's: with the default synchronous_commit=on a
// committed transaction survives a crash of the server. Usage transactions
// run at READ COMMITTED and lock the usage rows they load (SELECT … FOR
// UPDATE, in key order), so concurrent transactions on one key, from any
// instance, run one after the other.
package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"path"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/paywall/store"
)

// migrationFiles holds the schema migrations, applied in name order.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrationLockClass is the first key of the advisory lock Migrate holds;
// the second is a hash of the schema, so certbank instances that use other
// schemas of one database do not wait on each other.
const migrationLockClass int32 = 0x63626e6b // "cbnk"

var _ store.Store = (*DB)(nil)

// DB is a store.Store over a PostgreSQL connection pool. It is safe for
// concurrent use.
type DB struct {
	pool     *pgxpool.Pool
	closed   atomic.Bool
	prunedAt atomic.Int64 // window (unix µs) of the last pruning of counters
	bases    baseCache    // seen bases read, by revision (see lockUsageSQL)
}

// Open connects to the PostgreSQL database of dsn (a URL or key=value
// string, as pgxpool.ParseConfig reads it) and applies the migrations it
// lacks. It fails with Invalid for a malformed DSN and with Unavailable when
// the server cannot be reached.
func Open(ctx context.Context, dsn string) (*DB, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w: %w", certbank.Errorf(certbank.Invalid, "invalid PostgreSQL DSN"), err)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: open: %w", err)
	}
	db := &DB{pool: pool}
	if err := db.Migrate(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("postgres: open: %w", err)
	}
	return db, nil
}

// Migrate applies the embedded migrations the database lacks, each in its
// own transaction, and records them in schema_migrations, all under an
// advisory lock so that instances starting together apply each migration
// once. It is idempotent. It fails when the database has a migration this
// program does not know (a newer certbank migrated it).
func (db *DB) Migrate(ctx context.Context) (err error) {
	names, err := fs.Glob(migrationFiles, "migrations/*.sql")
	if err != nil {
		return fmt.Errorf("list migrations: %w", err)
	}
	slices.Sort(names)
	versions := make([]string, len(names))
	for i, name := range names {
		versions[i] = strings.TrimSuffix(path.Base(name), ".sql")
	}

	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return db.fail("migrate", err)
	}
	defer conn.Release()
	const lockArgs = `$1, hashtext(coalesce(current_schema(), ''))`
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock(`+lockArgs+`)`, migrationLockClass); err != nil {
		return db.fail("lock migrations", err)
	}
	defer func() {
		if _, uerr := conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock(`+lockArgs+`)`, migrationLockClass); uerr != nil {
			// The lock is the session's: closing the connection frees it.
			_ = conn.Conn().Close(context.WithoutCancel(ctx))
		}
	}()

	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    text PRIMARY KEY,
		applied_at timestamptz NOT NULL DEFAULT now()
	)`); err != nil {
		return db.fail("create schema_migrations", err)
	}
	applied, err := pgxCollect(conn.Query(ctx, `SELECT version FROM schema_migrations ORDER BY version`))
	if err != nil {
		return db.fail("read schema_migrations", err)
	}
	for _, v := range applied {
		if !slices.Contains(versions, v) {
			return fmt.Errorf("database has schema migration %s, unknown to this certbank (is it older than the one that migrated the database?)", v)
		}
	}
	for i, name := range names {
		if slices.Contains(applied, versions[i]) {
			continue
		}
		body, err := migrationFiles.ReadFile(name)
		if err != nil {
			return fmt.Errorf("read migration %s: %w", name, err)
		}
		err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, string(body)); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version) VALUES ($1)`, versions[i])
			return err
		})
		if err != nil {
			return db.fail("apply migration "+versions[i], err)
		}
	}
	return nil
}

// pgxCollect reads a column of text from rows.
func pgxCollect(rows pgx.Rows, err error) ([]string, error) {
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// Ping checks that the server answers a query.
func (db *DB) Ping(ctx context.Context) error {
	if err := db.pool.Ping(ctx); err != nil {
		return db.fail("ping", err)
	}
	return nil
}

// Close closes the pool, waiting for connections in use to be released.
// Calls after the first do nothing; methods called after Close fail with
// Unavailable.
func (db *DB) Close() error {
	if !db.closed.Swap(true) {
		db.pool.Close()
	}
	return nil
}

// fail returns err, from operation op, as a certbank error of the kind the
// PostgreSQL error maps to: Unavailable when the pool is closed or the server
// cannot be reached, refuses connections or is shutting down; Conflict for a
// uniqueness violation; Invalid for another constraint or bad data;
// otherwise the error itself, which counts as Internal.
func (db *DB) fail(op string, err error) error {
	if db.closed.Load() {
		return fmt.Errorf("postgres: %s: %w: %w", op,
			certbank.Errorf(certbank.Unavailable, "the database is closed"), err)
	}
	switch kind := errorKind(err); kind {
	case certbank.Internal:
		return fmt.Errorf("postgres: %s: %w", op, err)
	case certbank.Unavailable:
		return fmt.Errorf("postgres: %s: %w: %w", op,
			certbank.Errorf(kind, "the database is unavailable; please retry"), err)
	case certbank.Conflict:
		return fmt.Errorf("postgres: %s: %w: %w", op, certbank.Errorf(kind, "already exists"), err)
	default:
		return fmt.Errorf("postgres: %s: %w: %w", op, certbank.Errorf(kind, "invalid value"), err)
	}
}

// errorKind maps a pgx error to an error kind.
func errorKind(err error) certbank.Code {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch code := pgErr.Code; {
		case code == "23505": // unique_violation
			return certbank.Conflict
		case strings.HasPrefix(code, "22"), strings.HasPrefix(code, "23"): // data exception, integrity
			return certbank.Invalid
		case strings.HasPrefix(code, "08"), // connection exception
			strings.HasPrefix(code, "53"),                     // insufficient resources: disk full, too many connections
			code == "57P01", code == "57P02", code == "57P03": // admin/crash shutdown, cannot connect now
			return certbank.Unavailable
		}
		return certbank.Internal
	}
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	switch {
	case errors.As(err, &connectErr), errors.As(err, &netErr),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		pgconn.SafeToRetry(err):
		return certbank.Unavailable
	}
	return certbank.Internal
}

// isUnique reports whether err is a uniqueness violation, and on which
// constraint.
func isUnique(err error) (constraint string, ok bool) {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" {
		return pgErr.ConstraintName, true
	}
	return "", false
}

// timestamptz returns t as a parameter: NULL for the zero time.
func timestamptz(t time.Time) pgtype.Timestamptz {
	return pgtype.Timestamptz{Time: t, Valid: !t.IsZero()}
}

// fromTimestamptz returns the UTC time of v, or the zero time for NULL.
func fromTimestamptz(v pgtype.Timestamptz) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return v.Time.UTC()
}

// checkMonth fails with Invalid unless month is "2006-01".
func checkMonth(month string) error {
	if t, err := time.Parse("2006-01", month); err != nil || t.Format("2006-01") != month {
		return certbank.Errorf(certbank.Invalid, "invalid month %q: want YYYY-MM", month)
	}
	return nil
}
