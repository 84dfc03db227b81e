// Package sqlite is the embedded store.Store: one SQLite file, opened with
// the pure-Go driver modernc.org/sqlite (no cgo), for a single certbank
// serve instance. Several instances that share state use paywall/postgres.
//
// Durability. The database runs in WAL mode with synchronous=NORMAL: a
// transaction that has committed survives a crash or SIGKILL of the process,
// but a crash of the operating system or a power loss may roll back the last
// transactions before the WAL was synced (never corrupting the file). A
// background goroutine checkpoints the WAL into the file five times a
// second (PASSIVE, on a read connection), so commits never wait for a
// checkpoint and its fsync; the write connection checkpoints by itself
// only past 8,000 pages (about 32 MB), as a backstop.
//
// Concurrency. Writes go through one connection, so they are serialized in
// the process (BEGIN IMMEDIATE, so that another process writing the same
// file, such as a certbank keys command, waits on busy_timeout instead of
// failing halfway through a transaction). Reads use a separate pool of
// read-only connections that WAL lets run beside the writer. A usage
// transaction therefore holds the only write connection until it ends: fn
// must not call other writing methods of the same DB (it would wait for
// itself). Usage transactions read the usage of recently used keys from a
// cache of what they last committed, valid while no other connection has
// written the file, and commit as one row appended to an append-only usage
// log that a background compaction folds into the per-key rows about once
// a second (see UpdateUsage and compact): a committed transaction is in
// the file either way, and readers of usage (Load, MonthlyUsage) read the
// rows and then the log.
//
// Times are stored as unix microseconds, UTC.
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sqlitedriver "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/paywall/store"
)

// migrationFiles holds the schema migrations, applied in name order.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

// busyTimeout is how long a statement waits for another process's write
// lock before failing with Unavailable.
const busyTimeout = 5 * time.Second

var _ store.Store = (*DB)(nil)

// DB is a store.Store over one SQLite database. It is safe for concurrent
// use.
type DB struct {
	write *sql.DB // one connection: every write, in order
	read  *sql.DB // read-only connections; the write pool for ":memory:"

	// Statements of the hot paths, prepared on the write connection.
	loadUsage    *sql.Stmt
	saveState    *sql.Stmt
	saveMonth    *sql.Stmt
	saveSeenBase *sql.Stmt
	appendLog    *sql.Stmt
	logAfter     *sql.Stmt
	trimLog      *sql.Stmt
	hitCounter   *sql.Stmt
	dataVersion  *sql.Stmt
	// keyByHash is prepared on the read pool (each connection prepares it
	// once): the service looks a key up whenever its cache entry expires.
	keyByHash *sql.Stmt

	usage usageCache // committed usage of recent keys (see UpdateUsage)

	closing  atomic.Bool // Close has begun
	closed   atomic.Bool
	prunedAt atomic.Int64 // window (unix µs) of the last pruning of counters

	// The checkpointer and the compactor (see checkpoint and compactOnce,
	// run by every), and how to stop them.
	stop       chan struct{}
	background sync.WaitGroup
}

// Open opens the SQLite database at path, creating the file if needed, and
// applies the migrations it lacks. The path ":memory:" opens a private
// in-memory database for tests; it has a single connection, so there even
// reads wait for a usage transaction to end. It fails with Invalid for a path holding
// "?" and with Unavailable when the file cannot be opened.
func Open(ctx context.Context, path string) (*DB, error) {
	if path == "" || strings.ContainsRune(path, '?') {
		return nil, certbank.Errorf(certbank.Invalid, "invalid SQLite database path %q", path)
	}
	pragmas := fmt.Sprintf("_pragma=busy_timeout(%d)", busyTimeout.Milliseconds())
	write, err := sql.Open("sqlite", path+"?"+pragmas+
		"&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=foreign_keys(1)&_pragma=wal_autocheckpoint(8000)&_txlock=immediate")
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	write.SetMaxOpenConns(1)
	write.SetMaxIdleConns(1)
	write.SetConnMaxLifetime(0)
	write.SetConnMaxIdleTime(0)
	db := &DB{write: write, read: write}
	if path != ":memory:" {
		// Readers connect lazily, after Migrate below has switched the
		// file to WAL on the write connection; they never change the mode.
		// Readers look keys up and read usage reports: a small page
		// cache each (256 KiB, not SQLite's 2 MB) keeps them off the
		// service's memory.
		db.read, err = sql.Open("sqlite", path+"?"+pragmas+"&_pragma=query_only(1)&_pragma=cache_size(-256)")
		if err != nil {
			write.Close()
			return nil, fmt.Errorf("sqlite: open %s for reading: %w", path, err)
		}
		db.read.SetMaxOpenConns(max(4, runtime.GOMAXPROCS(0)))
		db.read.SetMaxIdleConns(max(4, runtime.GOMAXPROCS(0)))
	}
	if err := db.Migrate(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	if err := db.prepare(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	db.stop = make(chan struct{})
	db.every(compactEvery, db.compactOnce)
	if db.read != db.write {
		db.every(checkpointEvery, db.checkpoint)
	}
	return db, nil
}

// checkpointEvery is how often the checkpointer copies the WAL into the
// database file.
const checkpointEvery = 200 * time.Millisecond

// every runs fn in the background every d until Close, each time with a
// context that ends after 10 s.
func (db *DB) every(d time.Duration, fn func(context.Context)) {
	db.background.Add(1)
	go func() {
		defer db.background.Done()
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-db.stop:
				return
			case <-t.C:
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				fn(ctx)
				cancel()
			}
		}
	}()
}

// checkpoint runs a PASSIVE checkpoint on a read connection (query_only
// does not prevent checkpoints). So the writer, which would otherwise
// checkpoint (and fsync) inside a usage transaction whenever the WAL passes
// wal_autocheckpoint, keeps committing while the WAL is copied; the write
// connection's own automatic checkpoint, at 8,000 pages, is only a
// backstop. A failed checkpoint is retried on the next tick.
func (db *DB) checkpoint(ctx context.Context) {
	_, _ = db.read.ExecContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`)
}

// prepare prepares the statements of the hot paths.
func (db *DB) prepare(ctx context.Context) error {
	for _, s := range []struct {
		stmt **sql.Stmt
		sql  string
	}{
		{&db.loadUsage, loadUsageSQL},
		{&db.saveState, saveStateSQL},
		{&db.saveMonth, saveMonthSQL},
		{&db.saveSeenBase, saveSeenBaseSQL},
		{&db.appendLog, appendLogSQL},
		{&db.logAfter, logAfterSQL},
		{&db.trimLog, trimLogSQL},
		{&db.hitCounter, hitSQL},
		{&db.dataVersion, dataVersionSQL},
	} {
		stmt, err := db.write.PrepareContext(ctx, s.sql)
		if err != nil {
			return db.fail("prepare statement", err)
		}
		*s.stmt = stmt
	}
	stmt, err := db.read.PrepareContext(ctx, keyByHashSQL)
	if err != nil {
		return db.fail("prepare statement", err)
	}
	db.keyByHash = stmt
	return nil
}

// Migrate applies the embedded migrations the database lacks, each in its
// own transaction, and records them in schema_migrations. It is idempotent,
// and safe when several processes run it at once. It fails when the database
// has a migration this program does not know (a newer certbank migrated it).
func (db *DB) Migrate(ctx context.Context) error {
	names, err := fs.Glob(migrationFiles, "migrations/*.sql")
	if err != nil {
		return fmt.Errorf("list migrations: %w", err)
	}
	slices.Sort(names)
	if _, err := db.write.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    TEXT PRIMARY KEY,
		applied_at INTEGER NOT NULL
	) STRICT`); err != nil {
		return db.fail("create schema_migrations", err)
	}
	versions := make([]string, len(names))
	for i, name := range names {
		versions[i] = strings.TrimSuffix(path.Base(name), ".sql")
	}
	if err := db.checkNoUnknownMigrations(ctx, versions); err != nil {
		return err
	}
	for i, name := range names {
		body, err := migrationFiles.ReadFile(name)
		if err != nil {
			return fmt.Errorf("read migration %s: %w", name, err)
		}
		if err := db.applyMigration(ctx, versions[i], string(body)); err != nil {
			return err
		}
	}
	return nil
}

// checkNoUnknownMigrations fails if schema_migrations records a version
// that is not in known.
func (db *DB) checkNoUnknownMigrations(ctx context.Context, known []string) error {
	rows, err := db.write.QueryContext(ctx, `SELECT version FROM schema_migrations ORDER BY version`)
	if err != nil {
		return db.fail("read schema_migrations", err)
	}
	defer rows.Close()
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return db.fail("read schema_migrations", err)
		}
		if !slices.Contains(known, v) {
			return fmt.Errorf("database has schema migration %s, unknown to this certbank (is it older than the one that migrated the database?)", v)
		}
	}
	if err := rows.Err(); err != nil {
		return db.fail("read schema_migrations", err)
	}
	return nil
}

// applyMigration runs one migration unless it is recorded as applied.
func (db *DB) applyMigration(ctx context.Context, version, body string) error {
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return db.fail("begin migration "+version, err)
	}
	defer tx.Rollback()
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations WHERE version = ?`, version).Scan(&n); err != nil {
		return db.fail("check migration "+version, err)
	}
	if n > 0 {
		return nil
	}
	if _, err := tx.ExecContext(ctx, body); err != nil {
		return db.fail("apply migration "+version, err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)`,
		version, time.Now().UnixMicro()); err != nil {
		return db.fail("record migration "+version, err)
	}
	if err := tx.Commit(); err != nil {
		return db.fail("commit migration "+version, err)
	}
	return nil
}

// Ping checks that the database answers a query.
func (db *DB) Ping(ctx context.Context) error {
	var one int
	if err := db.read.QueryRowContext(ctx, `SELECT 1`).Scan(&one); err != nil {
		return db.fail("ping", err)
	}
	return nil
}

// Close closes the database. Calls after the first do nothing; methods
// called after Close fail with Unavailable.
func (db *DB) Close() error {
	if db.closing.Swap(true) {
		return nil
	}
	var errs []error
	if db.stop != nil {
		close(db.stop)
		db.background.Wait()
		// Write what waits in the usage log, so that a clean stop leaves
		// it empty (a crash leaves it to be read and folded later).
		for {
			more, err := db.compact(context.Background(), 1<<30, 0)
			if err != nil {
				errs = append(errs, err)
			}
			if err != nil || !more {
				break
			}
		}
	}
	db.closed.Store(true)
	for _, stmt := range []*sql.Stmt{db.loadUsage, db.saveState, db.saveMonth, db.saveSeenBase, db.appendLog, db.logAfter, db.trimLog, db.hitCounter, db.dataVersion, db.keyByHash} {
		if stmt != nil {
			errs = append(errs, stmt.Close())
		}
	}
	if db.read != db.write {
		errs = append(errs, db.read.Close())
	}
	errs = append(errs, db.write.Close())
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("sqlite: close: %w", err)
	}
	return nil
}

// fail returns err, from operation op, as a certbank error of the kind the
// SQLite error maps to: Unavailable when the database is closed, locked by
// another process past busy_timeout, or cannot be read or written; Conflict
// for a uniqueness violation; Invalid for another constraint; otherwise the
// error itself, which counts as Internal.
func (db *DB) fail(op string, err error) error {
	if db.closed.Load() {
		return fmt.Errorf("sqlite: %s: %w: %w", op,
			certbank.Errorf(certbank.Unavailable, "the database is closed"), err)
	}
	switch kind := errorKind(err); kind {
	case certbank.Internal:
		return fmt.Errorf("sqlite: %s: %w", op, err)
	case certbank.Unavailable:
		return fmt.Errorf("sqlite: %s: %w: %w", op,
			certbank.Errorf(kind, "the database is unavailable; please retry"), err)
	case certbank.Conflict:
		return fmt.Errorf("sqlite: %s: %w: %w", op, certbank.Errorf(kind, "already exists"), err)
	default:
		return fmt.Errorf("sqlite: %s: %w: %w", op, certbank.Errorf(kind, "invalid value"), err)
	}
}

// errorKind maps a driver error to an error kind.
func errorKind(err error) certbank.Code {
	if errors.Is(err, sql.ErrConnDone) {
		return certbank.Unavailable
	}
	var se *sqlitedriver.Error
	if !errors.As(err, &se) {
		return certbank.Internal
	}
	switch code := se.Code(); code & 0xff {
	case sqlite3.SQLITE_CONSTRAINT:
		if code == sqlite3.SQLITE_CONSTRAINT_UNIQUE || code == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY {
			return certbank.Conflict
		}
		return certbank.Invalid
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_CANTOPEN,
		sqlite3.SQLITE_IOERR, sqlite3.SQLITE_FULL, sqlite3.SQLITE_READONLY:
		return certbank.Unavailable
	}
	return certbank.Internal
}

// isUnique reports whether err is a uniqueness violation.
func isUnique(err error) bool { return errorKind(err) == certbank.Conflict }

// micros returns t as unix microseconds, or nil (NULL) for the zero time.
func micros(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixMicro()
}

// fromMicros returns the UTC time of unix microseconds, or the zero time
// for NULL.
func fromMicros(n sql.NullInt64) time.Time {
	if !n.Valid {
		return time.Time{}
	}
	return time.UnixMicro(n.Int64).UTC()
}

// checkMonth fails with Invalid unless month is "2006-01".
func checkMonth(month string) error {
	if t, err := time.Parse("2006-01", month); err != nil || t.Format("2006-01") != month {
		return certbank.Errorf(certbank.Invalid, "invalid month %q: want YYYY-MM", month)
	}
	return nil
}
