package postgres_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/paywall/postgres"
	"github.com/certbank/certbank/paywall/store"
	"github.com/certbank/certbank/paywall/storetest"
)

// testDSN returns the DSN of a fresh schema of the server named by
// CERTBANK_TEST_POSTGRES, dropped with everything in it at the end of the
// test, or skips the test when the variable is unset.
func testDSN(t testing.TB) string {
	t.Helper()
	dsn := serverDSN(t)
	ctx := t.Context()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connect to CERTBANK_TEST_POSTGRES: %v", err)
	}
	defer conn.Close(ctx)
	schema := "certbank_test_" + randomHex(8)
	if _, err := conn.Exec(ctx, `CREATE SCHEMA `+schema); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		ctx := context.WithoutCancel(t.Context())
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Errorf("connect to drop schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, `DROP SCHEMA `+schema+` CASCADE`); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	return withSearchPath(t, dsn, schema)
}

// serverDSN returns CERTBANK_TEST_POSTGRES, or skips the test when it is
// unset.
func serverDSN(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv("CERTBANK_TEST_POSTGRES")
	if dsn == "" {
		if os.Getenv("CERTBANK_REQUIRE_POSTGRES") == "1" {
			t.Fatal("CERTBANK_REQUIRE_POSTGRES=1 but CERTBANK_TEST_POSTGRES is not set: the PostgreSQL suite must run")
		}
		t.Skip("CERTBANK_TEST_POSTGRES is not set; set it to a PostgreSQL URL (e.g. postgres://postgres@127.0.0.1:5432/test?sslmode=disable) to run these tests")
	}
	return dsn
}

// withSearchPath adds search_path=schema to a URL or key=value DSN.
func withSearchPath(t testing.TB, dsn, schema string) string {
	t.Helper()
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			t.Fatalf("parse CERTBANK_TEST_POSTGRES: %v", err)
		}
		q := u.Query()
		q.Set("search_path", schema)
		u.RawQuery = q.Encode()
		return u.String()
	}
	return dsn + " search_path=" + schema
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// openDSN opens dsn, closed at the end of the test (before its schema is
// dropped: cleanups run last-registered first).
func openDSN(t testing.TB, dsn string) *postgres.DB {
	t.Helper()
	db, err := postgres.Open(t.Context(), dsn)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestConformance(t *testing.T) {
	serverDSN(t)
	storetest.Run(t, func(t *testing.T) store.Store { return openDSN(t, testDSN(t)) })
}

func TestMultiInstance(t *testing.T) {
	serverDSN(t)
	storetest.RunMultiInstance(t, func(t *testing.T) (store.Store, store.Store) {
		dsn := testDSN(t)
		return openDSN(t, dsn), openDSN(t, dsn)
	})
}

func TestOpenErrors(t *testing.T) {
	// Nothing listens on port 1: no server is needed for this test.
	_, err := postgres.Open(t.Context(), "postgres://postgres@127.0.0.1:1/test?sslmode=disable&connect_timeout=5")
	if certbank.ErrorCode(err) != certbank.Unavailable {
		t.Errorf("Open(unreachable server) = %v, want kind Unavailable", err)
	}
	_, err = postgres.Open(t.Context(), "postgres://postgres@127.0.0.1:5432/test?sslmode=bogus")
	if certbank.ErrorCode(err) != certbank.Invalid {
		t.Errorf("Open(malformed DSN) = %v, want kind Invalid", err)
	}
}

// TestConcurrentOpenMigratesOnce starts several instances on one empty
// schema at once, as a deployment does: the advisory lock lets exactly one
// apply each migration.
func TestConcurrentOpenMigratesOnce(t *testing.T) {
	dsn := testDSN(t)
	const instances = 5
	var wg sync.WaitGroup
	dbs := make([]*postgres.DB, instances)
	errs := make([]error, instances)
	for i := range instances {
		wg.Go(func() { dbs[i], errs[i] = postgres.Open(t.Context(), dsn) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("instance %d: Open: %v", i, err)
		}
		t.Cleanup(func() { dbs[i].Close() })
	}
	for range 2 {
		if err := dbs[0].Migrate(t.Context()); err != nil {
			t.Fatalf("Migrate on a migrated database: %v", err)
		}
	}
	files, err := filepath.Glob("migrations/*.sql") // the embedded ones
	if err != nil || len(files) < 2 {
		t.Fatalf("embedded migrations: %v, %v", files, err)
	}
	if n := queryInt(t, dsn, `SELECT count(*) FROM schema_migrations`); n != len(files) {
		t.Fatalf("schema_migrations has %d rows, want %d (one per migration)", n, len(files))
	}
}

func TestUnknownMigrationFailsOpen(t *testing.T) {
	dsn := testDSN(t)
	openDSN(t, dsn).Close()
	queryInt(t, dsn, `WITH i AS (INSERT INTO schema_migrations (version) VALUES ('9999_future') RETURNING 1) SELECT count(*) FROM i`)
	if db, err := postgres.Open(t.Context(), dsn); err == nil {
		db.Close()
		t.Fatalf("Open of a database migrated by a newer certbank succeeded")
	}
}

// TestTerminatedConnectionIsUnavailable kills the server side of the pool's
// only connection, as a server restart does: the next query fails with
// Unavailable (the service answers 503), and the one after reconnects.
func TestTerminatedConnectionIsUnavailable(t *testing.T) {
	base := testDSN(t)
	if !strings.HasPrefix(base, "postgres") {
		t.Skip("needs a URL DSN")
	}
	app := "certbank_test_" + randomHex(4)
	db := openDSN(t, base+"&pool_max_conns=1&application_name="+app)
	if err := db.Ping(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n := queryInt(t, base, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = '`+app+`'`); n != 1 {
		t.Fatalf("terminated %d connections, want 1", n)
	}
	_, err := db.KeyByID(t.Context(), "key_1")
	if certbank.ErrorCode(err) != certbank.Unavailable {
		t.Fatalf("KeyByID on a terminated connection = %v (kind %q), want kind Unavailable", err, certbank.ErrorCode(err))
	}
	t.Logf("error on the terminated connection: %v", err)
	if _, err := db.KeyByID(t.Context(), "key_1"); certbank.ErrorCode(err) != certbank.NotFound {
		t.Fatalf("KeyByID after reconnecting = %v, want kind NotFound", err)
	}
}

// queryInt runs a query that returns one integer on a connection of its own.
func queryInt(t *testing.T, dsn, query string) int {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(t.Context())
	var n int
	if err := conn.QueryRow(t.Context(), query).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

func BenchmarkUpdateUsageBatch(b *testing.B) {
	storetest.BenchUpdateUsageBatch(b, openDSN(b, testDSN(b)))
}
