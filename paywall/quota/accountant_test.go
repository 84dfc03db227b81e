package quota_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/paywall/bank"
	"github.com/certbank/certbank/paywall/paywalltest"
	"github.com/certbank/certbank/paywall/quota"
	"github.com/certbank/certbank/paywall/store"
	"github.com/certbank/certbank/paywall/store/memstore"
)

func tier(perMonth int) certbank.Tier {
	return certbank.Tier{Name: "t", Title: "Test", PerMinute: 1000, PerMonth: perMonth, UniqueQuestions: certbank.Unlimited, MaxLimit: 10}
}

func monthly(t *testing.T, s store.Store, id, month string) (int, int) {
	t.Helper()
	r, q, err := s.MonthlyUsage(context.Background(), id, month)
	if err != nil {
		t.Fatal(err)
	}
	return r, q
}

// TestFailedBatchCountsNothing: when the store fails a group commit,
// every request of the batch is answered with the store's error kind
// (Unavailable: 503), none is given questions, and nothing is counted.
func TestFailedBatchCountsNothing(t *testing.T) {
	ix := bank.New(paywalltest.Bank(20))
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name     string
		hook     string // before the transaction, or at its commit
		fail     error
		wantKind certbank.Code
	}{
		{"store unavailable", "UpdateUsage", certbank.Errorf(certbank.Unavailable, "database down"), certbank.Unavailable},
		{"commit fails", "UpdateUsage.commit", certbank.Errorf(certbank.Unavailable, "connection lost at commit"), certbank.Unavailable},
		{"store broken", "UpdateUsage", context.DeadlineExceeded, certbank.Internal},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mem := memstore.New()
			f := memstore.NewFaulty(mem)
			a := quota.New(f, nil)
			defer a.Close()
			f.On(tc.hook, func() error { return tc.fail })
			const n = 8
			var wg sync.WaitGroup
			errs := make([]error, n)
			spends := make([]*quota.Spend, n)
			for i := range n {
				spends[i] = &quota.Spend{KeyID: []string{"key_a", "key_b"}[i%2], Tier: tier(certbank.Unlimited), Now: now,
					Pick: bank.PickRandom(ix.ByCert("cissp"), 3), Count: true}
				wg.Go(func() { errs[i] = a.Do(context.Background(), spends[i]) })
			}
			wg.Wait()
			for i, err := range errs {
				if certbank.ErrorCode(err) != tc.wantKind {
					t.Errorf("request %d: error %v (kind %s), want kind %s", i, err, certbank.ErrorCode(err), tc.wantKind)
				}
				if len(spends[i].Picked) != 0 {
					t.Errorf("request %d got %d questions from a failed batch", i, len(spends[i].Picked))
				}
			}
			f.On(tc.hook, nil)
			for _, id := range []string{"key_a", "key_b"} {
				if r, q := monthly(t, mem, id, "2026-11"); r != 0 || q != 0 {
					t.Errorf("%s: %d requests, %d questions counted by a failed batch", id, r, q)
				}
			}
			// The accountant recovers with the store.
			sp := &quota.Spend{KeyID: "key_a", Tier: tier(certbank.Unlimited), Now: now, Pick: bank.PickRandom(ix.ByCert("cissp"), 3), Count: true}
			if err := a.Do(context.Background(), sp); err != nil || len(sp.Picked) != 3 {
				t.Fatalf("after the store recovered: %v, %d questions", err, len(sp.Picked))
			}
			if r, q := monthly(t, mem, "key_a", "2026-11"); r != 1 || q != 3 {
				t.Errorf("after recovery: %d requests, %d questions; want 1, 3", r, q)
			}
		})
	}
}

// TestMonthChangeInsideBatch: a batch holding requests from both sides of
// a month boundary is committed in the newer month: every request that
// passes is counted there, the new month's limit applies to all of them,
// and the old month keeps its own counts.
func TestMonthChangeInsideBatch(t *testing.T) {
	ix := bank.New(paywalltest.Bank(20))
	mem := memstore.New()
	f := memstore.NewFaulty(mem)
	a := quota.New(f, nil)
	defer a.Close()
	oct := time.Date(2026, 10, 31, 23, 59, 59, 900e6, time.UTC)
	nov := time.Date(2026, 11, 1, 0, 0, 0, 100e6, time.UTC)
	pick := bank.PickRandom(ix.ByCert("cissp"), 2)
	// October: the key has used one request of its two a month.
	if err := a.Do(context.Background(), &quota.Spend{KeyID: "key_m", Tier: tier(2), Now: oct.Add(-time.Hour), Pick: pick, Count: true}); err != nil {
		t.Fatal(err)
	}
	// Hold the worker in a transaction of another key, queue the
	// boundary requests behind it, then let them go as one batch.
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	f.On("UpdateUsage", func() error {
		once.Do(func() { close(entered); <-release })
		return nil
	})
	var wg sync.WaitGroup
	wg.Go(func() {
		a.Do(context.Background(), &quota.Spend{KeyID: "key_other", Tier: tier(certbank.Unlimited), Now: oct, Pick: pick, Count: true})
	})
	<-entered
	spends := []*quota.Spend{
		{KeyID: "key_m", Tier: tier(2), Now: oct, Pick: pick, Count: true},
		{KeyID: "key_m", Tier: tier(2), Now: nov, Pick: pick, Count: true},
		{KeyID: "key_m", Tier: tier(2), Now: nov, Pick: pick, Count: true},
	}
	errs := make([]error, len(spends))
	for i, sp := range spends {
		wg.Go(func() { errs[i] = a.Do(context.Background(), sp) })
	}
	time.Sleep(50 * time.Millisecond) // let them queue
	close(release)
	wg.Wait()
	ok, limited := 0, 0
	for _, err := range errs {
		switch certbank.ErrorCode(err) {
		case "":
			ok++
		case certbank.MonthlyLimitExceeded:
			limited++
		default:
			t.Errorf("unexpected error %v", err)
		}
	}
	if ok != 2 || limited != 1 {
		t.Errorf("%d requests passed and %d were refused; want 2 and 1 (November's limit of 2)", ok, limited)
	}
	if r, q := monthly(t, mem, "key_m", "2026-10"); r != 1 || q != 2 {
		t.Errorf("October: %d requests, %d questions; want 1, 2 (unchanged)", r, q)
	}
	if r, q := monthly(t, mem, "key_m", "2026-11"); r != 2 || q != 4 {
		t.Errorf("November: %d requests, %d questions; want 2, 4", r, q)
	}
}

// TestNoopAccountant: the benchmark baseline picks and records nothing.
func TestNoopAccountant(t *testing.T) {
	ix := bank.New(paywalltest.Bank(20))
	var acct quota.Noop
	ar := acct.Arrive()
	sp := &quota.Spend{KeyID: "k", Tier: tier(0), Now: time.Now(), Pick: bank.PickRandom(ix.ByCert("cissp"), 4), Count: true, Arrival: &ar}
	if err := acct.Do(context.Background(), sp); err != nil || len(sp.Picked) != 4 {
		t.Fatalf("Noop.Do = %v with %d questions; want nil and 4 (no limit applies)", err, len(sp.Picked))
	}
}
