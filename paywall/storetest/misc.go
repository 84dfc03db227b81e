package storetest

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/paywall/store"
)

func testHitCounts(t *testing.T, s store.Store) {
	ctx := t.Context()
	w1 := at(0).Truncate(time.Minute)
	w2 := w1.Add(time.Minute)
	for i, tc := range []struct {
		name   string
		window time.Time
		want   int
	}{
		{"signup:1.2.3.4", w1, 1},
		{"signup:1.2.3.4", w1, 2},
		{"signup:5.6.7.8", w1, 1},
		{"signup:1.2.3.4", w2, 1},
		{"signup:1.2.3.4", w1, 3},
		{"signup:1.2.3.4", w2, 2},
	} {
		n, err := s.Hit(ctx, tc.name, tc.window)
		must(t, "Hit", err)
		if n != tc.want {
			t.Fatalf("hit %d: Hit(%s, %v) = %d, want %d", i, tc.name, tc.window, n, tc.want)
		}
	}
	// A window older than a day may have been discarded, but hitting it
	// still works.
	if _, err := s.Hit(ctx, "signup:1.2.3.4", w1.Add(-48*time.Hour)); err != nil {
		t.Fatalf("Hit(old window): %v", err)
	}
}

func testHitConcurrent(t *testing.T, s store.Store) {
	hitConcurrent(t, []store.Store{s})
}

// hitConcurrent hits one counter 100 times at once, spread over stores, and
// checks that each hit got its own count.
func hitConcurrent(t *testing.T, stores []store.Store) {
	ctx := t.Context()
	const hits = 100
	window := at(0).Truncate(time.Minute)
	counts := make([]int, hits)
	var wg sync.WaitGroup
	for i := range hits {
		s := stores[i%len(stores)]
		wg.Go(func() {
			n, err := s.Hit(ctx, "x402:0xpayer", window)
			if err != nil {
				t.Errorf("Hit %d: %v", i, err)
			}
			counts[i] = n
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	slices.Sort(counts)
	for i, n := range counts {
		if n != i+1 {
			t.Fatalf("%d concurrent hits returned counts %v, want 1..%d once each", hits, counts, hits)
		}
	}
	n, err := stores[0].Hit(ctx, "x402:0xpayer", window)
	must(t, "Hit", err)
	if n != hits+1 {
		t.Fatalf("Hit after %d concurrent hits = %d, want %d", hits, n, hits+1)
	}
}

func testPing(t *testing.T, s store.Store) {
	must(t, "Ping", s.Ping(t.Context()))
}

func testClosedIsUnavailable(t *testing.T, s store.Store) {
	ctx := t.Context()
	must(t, "CreateKey", s.CreateKey(ctx, newKey(1)))
	must(t, "Close", s.Close())
	// A server shutting down answers the requests still in flight with 503.
	wantKind(t, "Ping after Close", s.Ping(ctx), certbank.Unavailable)
	_, err := s.KeyByID(ctx, newKey(1).ID)
	wantKind(t, "KeyByID after Close", err, certbank.Unavailable)
	wantKind(t, "CreateKey after Close", s.CreateKey(ctx, newKey(2)), certbank.Unavailable)
	err = s.UpdateUsage(ctx, func(tx store.UsageTx) error {
		_, err := tx.Load(ctx, []string{newKey(1).ID}, "2026-03")
		return err
	})
	wantKind(t, "UpdateUsage after Close", err, certbank.Unavailable)
	_, err = s.Hit(ctx, "x", at(0))
	wantKind(t, "Hit after Close", err, certbank.Unavailable)
}

func testMultiKeysShared(t *testing.T, a, b store.Store) {
	ctx := t.Context()
	k := newKey(1)
	must(t, "a.CreateKey", a.CreateKey(ctx, k))
	got, err := b.KeyByHash(ctx, k.Hash)
	must(t, "b.KeyByHash", err)
	if d := keyDiff(got, k); d != "" {
		t.Fatalf("b.KeyByHash: %s", d)
	}
	dup := newKey(2)
	dup.Email = k.Email
	wantKind(t, "b.CreateKey(same email)", b.CreateKey(ctx, dup), certbank.Conflict)
	must(t, "b.RevokeKey", b.RevokeKey(ctx, k.ID, at(time.Hour)))
	got, err = a.KeyByID(ctx, k.ID)
	must(t, "a.KeyByID", err)
	if got.Active() {
		t.Fatalf("a still sees the key b revoked as active")
	}
}

func testMultiUsageNoLostUpdate(t *testing.T, a, b store.Store) {
	concurrentSameKey(t, []store.Store{a, b})
}

func testMultiReserveOnce(t *testing.T, a, b store.Store) {
	reserveOnce(t, []store.Store{a, b})
}

func testMultiHitShared(t *testing.T, a, b store.Store) {
	hitConcurrent(t, []store.Store{a, b})
}
