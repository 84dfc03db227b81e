package sqlite

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestPragmas checks the settings the package documentation promises.
func TestPragmas(t *testing.T) {
	db, err := Open(t.Context(), filepath.Join(t.TempDir(), "certbank.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, tc := range []struct {
		pragma, want string
	}{
		{"journal_mode", "wal"},
		{"synchronous", "1"}, // NORMAL
		{"foreign_keys", "1"},
		{"busy_timeout", "5000"},
	} {
		var got string
		if err := db.write.QueryRowContext(t.Context(), "PRAGMA "+tc.pragma).Scan(&got); err != nil {
			t.Fatalf("PRAGMA %s: %v", tc.pragma, err)
		}
		if got != tc.want {
			t.Errorf("write connection: %s = %s, want %s", tc.pragma, got, tc.want)
		}
	}
	var queryOnly, cacheSize string
	if err := db.read.QueryRowContext(t.Context(), "PRAGMA query_only").Scan(&queryOnly); err != nil || queryOnly != "1" {
		t.Errorf("read connection: query_only = %q, %v; want 1", queryOnly, err)
	}
	if err := db.read.QueryRowContext(t.Context(), "PRAGMA cache_size").Scan(&cacheSize); err != nil || cacheSize != "-256" {
		t.Errorf("read connection: cache_size = %q, %v; want -256 (256 KiB)", cacheSize, err)
	}
}

// TestLoadUsesPrimaryKey checks that loading a batch looks keys up by
// primary key instead of scanning the usage tables.
func TestLoadUsesPrimaryKey(t *testing.T) {
	db, err := Open(t.Context(), filepath.Join(t.TempDir(), "certbank.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.write.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+loadUsageSQL, `["a","b"]`, "2026-03")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	searched := map[string]bool{}
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		t.Log(detail)
		for _, table := range []string{"s", "m"} {
			if strings.HasPrefix(detail, "SEARCH "+table+" USING ") {
				searched[table] = true
			}
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if !searched["s"] || !searched["m"] {
		t.Fatalf("the load plan does not look up usage_state (s) and usage_monthly (m) by key: %v", searched)
	}
}
