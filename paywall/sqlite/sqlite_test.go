package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/paywall/sqlite"
	"github.com/certbank/certbank/paywall/store"
	"github.com/certbank/certbank/paywall/storetest"
)

// openTest opens a fresh database file in a temporary directory, closed at
// the end of the test.
func openTest(t testing.TB) *sqlite.DB {
	t.Helper()
	return openPath(t, filepath.Join(t.TempDir(), "certbank.db"))
}

// openPath opens the database at path, closed at the end of the test.
func openPath(t testing.TB, path string) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return db
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return openTest(t) })
}

func TestConformanceInMemory(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return openPath(t, ":memory:") })
}

// TestMultiInstance runs two DBs on one file, as certbank serve and a
// certbank keys command do: BEGIN IMMEDIATE and busy_timeout serialize
// their writes.
func TestMultiInstance(t *testing.T) {
	storetest.RunMultiInstance(t, func(t *testing.T) (store.Store, store.Store) {
		path := filepath.Join(t.TempDir(), "certbank.db")
		return openPath(t, path), openPath(t, path)
	})
}

func TestReopenKeepsDataAndMigratesOnce(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "certbank.db")
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.CreateKey(ctx, store.Key{ID: "key_1", Hash: "h1", Email: "a@example.com", CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db = openPath(t, path)
	for range 2 {
		if err := db.Migrate(ctx); err != nil {
			t.Fatalf("Migrate on a migrated database: %v", err)
		}
	}
	if _, err := db.KeyByID(ctx, "key_1"); err != nil {
		t.Fatalf("KeyByID after reopening: %v", err)
	}
	files, err := filepath.Glob("migrations/*.sql") // the embedded ones
	if err != nil || len(files) < 2 {
		t.Fatalf("embedded migrations: %v, %v", files, err)
	}
	if got := countMigrations(t, path); got != len(files) {
		t.Fatalf("schema_migrations has %d rows, want %d (one per migration)", got, len(files))
	}
}

func TestUnknownMigrationFailsOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "certbank.db")
	db := openPath(t, path)
	db.Close()
	raw := rawOpen(t, path)
	if _, err := raw.Exec(`INSERT INTO schema_migrations (version, applied_at) VALUES ('9999_future', 0)`); err != nil {
		t.Fatal(err)
	}
	if db, err := sqlite.Open(t.Context(), path); err == nil {
		db.Close()
		t.Fatalf("Open of a database migrated by a newer certbank succeeded")
	}
}

func TestOpenErrors(t *testing.T) {
	_, err := sqlite.Open(t.Context(), "file.db?mode=ro")
	if certbank.ErrorCode(err) != certbank.Invalid {
		t.Errorf("Open(path with ?) = %v, want kind Invalid", err)
	}
	_, err = sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "missing", "dir", "certbank.db"))
	if certbank.ErrorCode(err) != certbank.Unavailable {
		t.Errorf("Open(path in a missing directory) = %v, want kind Unavailable", err)
	}
}

// TestCommittedUsageSurvivesSIGKILL commits usage in a child process that
// then kills itself with SIGKILL, and checks that the commit is there.
func TestCommittedUsageSurvivesSIGKILL(t *testing.T) {
	if path := os.Getenv("CERTBANK_SQLITE_CRASH_CHILD"); path != "" {
		crashChild(path)
		return
	}
	path := filepath.Join(t.TempDir(), "certbank.db")
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestCommittedUsageSurvivesSIGKILL$")
	cmd.Env = append(os.Environ(), "CERTBANK_SQLITE_CRASH_CHILD="+path)
	out, err := cmd.CombinedOutput()
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) || exitErr.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("child did not die of SIGKILL: %v\n%s", err, out)
	}
	db := openPath(t, path)
	req, q, err := db.MonthlyUsage(t.Context(), "key_1", "2026-03")
	if err != nil || req != 100 || q != 1000 {
		t.Fatalf("after SIGKILL: MonthlyUsage = %d, %d, %v; want 100, 1000, nil", req, q, err)
	}
}

// crashChild commits 100 usage transactions to path and kills the process
// without closing anything.
func crashChild(path string) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		os.Exit(2)
	}
	for range 100 {
		err := db.UpdateUsage(ctx, func(tx store.UsageTx) error {
			us, err := tx.Load(ctx, []string{"key_1"}, "2026-03")
			if err != nil {
				return err
			}
			us["key_1"].MonthRequests++
			us["key_1"].MonthQuestions += 10
			return tx.Save(ctx, []*store.Usage{us["key_1"]})
		})
		if err != nil {
			os.Exit(3)
		}
	}
	syscall.Kill(os.Getpid(), syscall.SIGKILL)
	time.Sleep(time.Minute)
}

// rawOpen opens path with database/sql directly, closed at the end of the
// test.
func rawOpen(t *testing.T, path string) *sql.DB {
	t.Helper()
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	return raw
}

func countMigrations(t *testing.T, path string) int {
	t.Helper()
	var n int
	if err := rawOpen(t, path).QueryRow(`SELECT count(*) FROM schema_migrations`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func BenchmarkUpdateUsageBatch(b *testing.B) {
	storetest.BenchUpdateUsageBatch(b, openTest(b))
}
