package postgres_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/certbank/certbank/paywall"
	"github.com/certbank/certbank/paywall/postgres"
	"github.com/certbank/certbank/paywall/storetest"
)

// testDSN returns the DSN of a fresh schema of the server named by
// CERTBANK_TEST_POSTGRES, dropped with everything in it at the end of the
// test, or skips the test when the variable is unset.
func testDSN(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv("CERTBANK_TEST_POSTGRES")
	if dsn == "" {
		t.Skip("CERTBANK_TEST_POSTGRES is not set; set it to a PostgreSQL URL (e.g. postgres://postgres@127.0.0.1:5432/test?sslmode=disable) to run these tests")
	}
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
	storetest.Run(t, func(t *testing.T) paywall.Store { return openDSN(t, testDSN(t)) })
}

func TestMultiInstance(t *testing.T) {
	storetest.RunMultiInstance(t, func(t *testing.T) (paywall.Store, paywall.Store) {
		dsn := testDSN(t)
		return openDSN(t, dsn), openDSN(t, dsn)
	})
}

func BenchmarkUpdateUsageBatch(b *testing.B) {
	storetest.BenchUpdateUsageBatch(b, openDSN(b, testDSN(b)))
}
