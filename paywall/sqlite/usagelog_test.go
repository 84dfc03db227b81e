package sqlite

import (
	"bytes"
	"context"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/certbank/certbank/paywall/store"
)

func TestLogEntryRoundTrip(t *testing.T) {
	in := []logRecord{
		{keyID: "key_a", minuteStart: time.Date(2026, 3, 4, 5, 6, 0, 0, time.UTC), minuteCount: 7, month: "2026-03",
			monthRequests: 100, monthQuestions: 1000, seenCount: 300, recent: []byte("appended")},
		{keyID: "key_b", month: "2026-04", recentFull: true, recent: []byte{}, base: bytes.Repeat([]byte{0, 0xff}, 600), hasBase: true},
		{keyID: "", month: "2026-12", monthRequests: 1 << 40},
	}
	entry := appendEntry(nil, in)
	var out []logRecord
	if err := decodeEntry(entry, func(r logRecord) { out = append(out, r) }); err != nil {
		t.Fatal(err)
	}
	norm := func(rs []logRecord) []logRecord {
		for i := range rs {
			if len(rs[i].recent) == 0 {
				rs[i].recent = nil
			}
			if len(rs[i].base) == 0 {
				rs[i].base = nil
			}
		}
		return rs
	}
	if !reflect.DeepEqual(norm(out), norm(in)) {
		t.Fatalf("decoded %+v\nwant %+v", out, in)
	}
	// A record cut short, anywhere inside it, fails cleanly.
	one := appendEntry(nil, in[:1])
	for n := 2; n < len(one); n++ {
		if err := decodeEntry(one[:n], func(logRecord) {}); err == nil {
			t.Errorf("an entry cut to %d of %d bytes decoded", n, len(one))
		}
	}
	if err := decodeEntry(append([]byte{9}, entry[1:]...), func(logRecord) {}); err == nil {
		t.Fatal("an entry of an unknown version decoded")
	}
}

func FuzzDecodeEntry(f *testing.F) {
	f.Add(appendEntry(nil, []logRecord{{keyID: "k", month: "2026-03", recent: []byte("x")}}))
	f.Add([]byte{1, 200})
	f.Fuzz(func(t *testing.T, b []byte) {
		_ = decodeEntry(b, func(logRecord) {}) // must not panic
	})
}

// TestUsageLog follows a key's records through the log: appended as
// deltas, read back by another connection from rows plus log, compacted by
// the writer, across a month boundary, and folded from the file after
// another connection wrote.
func TestUsageLog(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "certbank.db")
	a, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	const id = "key_log"
	hash := func(i int) []byte { return bytes.Repeat([]byte{byte(i)}, 8) }
	// save adds one request and one seen entry to the key in month.
	save := func(db *DB, month string, i int) store.Usage {
		t.Helper()
		var got store.Usage
		err := db.UpdateUsage(ctx, func(tx store.UsageTx) error {
			us, err := tx.Load(ctx, []string{id}, month)
			if err != nil {
				return err
			}
			u := us[id]
			u.MonthRequests++
			u.MonthQuestions += 10
			u.Seen = append(bytes.Clone(u.Seen), hash(i)...)
			u.SeenCount++
			got = *u
			return tx.Save(ctx, []*store.Usage{u})
		})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	logRows := func() (n int) {
		t.Helper()
		if err := a.read.QueryRowContext(ctx, `SELECT count(*) FROM usage_log`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	monthly := func(db *DB, month string, want int) {
		t.Helper()
		req, q, err := db.MonthlyUsage(ctx, id, month)
		if err != nil || req != want || q != 10*want {
			t.Fatalf("MonthlyUsage(%s) = %d, %d, %v; want %d, %d", month, req, q, err, want, 10*want)
		}
	}

	for i := range 3 {
		save(a, "2026-03", i)
	}
	last := save(a, "2026-04", 3)
	if n := logRows(); n != 4 {
		t.Fatalf("%d log rows after 4 usage transactions, want 4", n)
	}
	// The records hold the appended bytes only.
	rows, err := a.read.QueryContext(ctx, `SELECT entry FROM usage_log ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	i := 0
	for rows.Next() {
		var entry []byte
		if err := rows.Scan(&entry); err != nil {
			t.Fatal(err)
		}
		if err := decodeEntry(entry, func(r logRecord) {
			if r.recentFull || !bytes.Equal(r.recent, hash(i)) {
				t.Errorf("record %d: recent %x (full %v), want the appended %x", i, r.recent, r.recentFull, hash(i))
			}
		}); err != nil {
			t.Fatal(err)
		}
		i++
	}
	rows.Close()

	// Another connection reads rows plus log.
	monthly(b, "2026-03", 3)
	monthly(b, "2026-04", 1)
	err = b.UpdateUsage(ctx, func(tx store.UsageTx) error {
		us, err := tx.Load(ctx, []string{id}, "2026-04")
		if err != nil {
			return err
		}
		if !bytes.Equal(us[id].Seen, last.Seen) || us[id].SeenCount != 4 || us[id].MonthRequests != 1 {
			t.Errorf("loaded by another connection: %+v, want %+v", *us[id], last)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	// The writer compacts from its cache: both months are stored, the log
	// is empty.
	if _, err := a.compact(ctx, 100, 0); err != nil {
		t.Fatal(err)
	}
	if n := logRows(); n != 1 {
		t.Fatalf("%d log rows after compaction, want 1 (the newest is kept)", n)
	}
	var march, april int
	if err := a.read.QueryRowContext(ctx, `SELECT
		(SELECT requests FROM usage_monthly WHERE key_id = ?1 AND month = '2026-03'),
		(SELECT requests FROM usage_monthly WHERE key_id = ?1 AND month = '2026-04')`, id).Scan(&march, &april); err != nil {
		t.Fatal(err)
	}
	if march != 3 || april != 1 {
		t.Fatalf("stored months after compaction: March %d, April %d; want 3, 1", march, april)
	}

	// The other connection writes; the first one notices, reads the
	// other's record from the log, and folds the whole log.
	before := a.usage.lastLog
	save(b, "2026-04", 4)
	u := save(a, "2026-04", 5)
	if a.usage.lastLog <= before+1 {
		t.Fatalf("log ids %d, then %d after another connection's row: an id was reused", before, a.usage.lastLog)
	}
	if u.MonthRequests != 3 || u.SeenCount != 6 {
		t.Fatalf("after writes by both connections: %d requests, %d seen; want 3, 6", u.MonthRequests, u.SeenCount)
	}
	if !a.usage.foldAll {
		t.Fatal("the first connection did not notice the other's write")
	}
	if _, err := a.compact(ctx, 100, 0); err != nil {
		t.Fatal(err)
	}
	if n := logRows(); n != 1 {
		t.Fatalf("%d log rows after folding, want 1 (the newest is kept)", n)
	}
	monthly(b, "2026-04", 3)
	monthly(b, "2026-03", 3)
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	c, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	monthly(c, "2026-04", 3)
	err = c.UpdateUsage(ctx, func(tx store.UsageTx) error {
		us, err := tx.Load(ctx, []string{id}, "2026-04")
		if err != nil {
			return err
		}
		want := append(bytes.Clone(last.Seen), append(hash(4), hash(5)...)...)
		if !bytes.Equal(us[id].Seen, want) {
			t.Errorf("seen after reopening: %x, want %x", us[id].Seen, want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestCompactionRunsByItself: without any call, the background compactor
// writes a key's rows and trims the log: first by folding the log (a fresh
// connection's cache does not account for it), then, for later records,
// from the cache once they are compactAge old.
func TestCompactionRunsByItself(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "certbank.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for round := 1; round <= 2; round++ {
		first := time.Now() // no record of this round is older
		for range 3 {
			err := db.UpdateUsage(ctx, func(tx store.UsageTx) error {
				us, err := tx.Load(ctx, []string{"key_bg"}, "2026-03")
				if err != nil {
					return err
				}
				us["key_bg"].MonthRequests++
				return tx.Save(ctx, []*store.Usage{us["key_bg"]})
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		written := time.Now()
		deadline := written.Add(compactAge + 20*compactEvery)
		for {
			var rows, stored int
			if err := db.read.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM usage_log),
				coalesce((SELECT requests FROM usage_monthly WHERE key_id = 'key_bg' AND month = '2026-03'), 0)`).Scan(&rows, &stored); err != nil {
				t.Fatal(err)
			}
			if rows == 1 && stored == 3*round {
				if round == 2 && time.Since(first) < compactAge {
					t.Fatalf("round 2 compacted after %s, before its records were %s old", time.Since(first), compactAge)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("round %d, after %s: %d log rows and %d stored requests; want the compactor to have left 1 and %d",
					round, time.Since(written), rows, stored, 3*round)
			}
			time.Sleep(compactEvery / 2)
		}
	}
}
