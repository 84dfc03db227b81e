package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/certbank/certbank/paywall"
	"github.com/certbank/certbank/paywall/sqlite"
	"github.com/certbank/certbank/paywall/storetest"
)

// openTest opens a fresh database file in a temporary directory, closed at
// the end of the test.
func openTest(t testing.TB) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "certbank.db"))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return db
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) paywall.Store { return openTest(t) })
}

func BenchmarkUpdateUsageBatch(b *testing.B) {
	storetest.BenchUpdateUsageBatch(b, openTest(b))
}

func TestMultiInstance(t *testing.T) {
	storetest.RunMultiInstance(t, func(t *testing.T) (paywall.Store, paywall.Store) {
		path := filepath.Join(t.TempDir(), "certbank.db")
		var dbs [2]*sqlite.DB
		for i := range dbs {
			db, err := sqlite.Open(t.Context(), path)
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			t.Cleanup(func() { db.Close() })
			dbs[i] = db
		}
		return dbs[0], dbs[1]
	})
}
