package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/paywall/store"
)

// loadOne reads one key's usage for month in its own transaction.
func loadOne(t *testing.T, s store.Store, keyID, month string) store.Usage {
	t.Helper()
	var got store.Usage
	err := s.UpdateUsage(t.Context(), func(tx store.UsageTx) error {
		us, err := tx.Load(t.Context(), []string{keyID}, month)
		if err != nil {
			return err
		}
		u := us[keyID]
		if u == nil {
			return fmt.Errorf("Load returned no usage for %s", keyID)
		}
		got = *u
		return nil
	})
	must(t, "UpdateUsage(load "+keyID+")", err)
	return got
}

// saveUsage adds requests and questions to a key's counts for month.
func saveUsage(t *testing.T, s store.Store, keyID, month string, requests, questions int) {
	t.Helper()
	err := s.UpdateUsage(t.Context(), func(tx store.UsageTx) error {
		us, err := tx.Load(t.Context(), []string{keyID}, month)
		if err != nil {
			return err
		}
		u := us[keyID]
		u.MonthRequests += requests
		u.MonthQuestions += questions
		return tx.Save(t.Context(), []*store.Usage{u})
	})
	must(t, "UpdateUsage(save "+keyID+")", err)
}

// usageDiff describes how got differs from want, or returns "".
func usageDiff(got, want store.Usage) string {
	var d []string
	if got.KeyID != want.KeyID {
		d = append(d, fmt.Sprintf("KeyID = %q, want %q", got.KeyID, want.KeyID))
	}
	if !sameTime(got.MinuteStart, want.MinuteStart) {
		d = append(d, fmt.Sprintf("MinuteStart = %v, want %v", got.MinuteStart, want.MinuteStart))
	}
	if got.MinuteCount != want.MinuteCount {
		d = append(d, fmt.Sprintf("MinuteCount = %d, want %d", got.MinuteCount, want.MinuteCount))
	}
	if got.Month != want.Month {
		d = append(d, fmt.Sprintf("Month = %q, want %q", got.Month, want.Month))
	}
	if got.MonthRequests != want.MonthRequests || got.MonthQuestions != want.MonthQuestions {
		d = append(d, fmt.Sprintf("month counts = %d/%d, want %d/%d",
			got.MonthRequests, got.MonthQuestions, want.MonthRequests, want.MonthQuestions))
	}
	if !bytes.Equal(got.Seen, want.Seen) {
		d = append(d, fmt.Sprintf("Seen = %d bytes %x…, want %d bytes", len(got.Seen), got.Seen[:min(8, len(got.Seen))], len(want.Seen)))
	}
	if !bytes.Equal(got.SeenBase, want.SeenBase) {
		d = append(d, fmt.Sprintf("SeenBase = %d bytes %x…, want %d bytes", len(got.SeenBase), got.SeenBase[:min(8, len(got.SeenBase))], len(want.SeenBase)))
	}
	if got.SaveBase {
		d = append(d, "SaveBase = true, want false after Load")
	}
	if got.SeenCount != want.SeenCount {
		d = append(d, fmt.Sprintf("SeenCount = %d, want %d", got.SeenCount, want.SeenCount))
	}
	if len(d) == 0 {
		return ""
	}
	return fmt.Sprint(d)
}

func testUsageLoadWithoutUsage(t *testing.T, s store.Store) {
	ctx := t.Context()
	k := newKey(1)
	must(t, "CreateKey", s.CreateKey(ctx, k))
	// An ID no key has is loaded the same way: the store does not check keys.
	ids := []string{k.ID, "key_unknown", k.ID}
	err := s.UpdateUsage(ctx, func(tx store.UsageTx) error {
		us, err := tx.Load(ctx, ids, "2026-03")
		if err != nil {
			return err
		}
		if len(us) != 2 {
			return fmt.Errorf("Load(%v) returned %d usages, want 2", ids, len(us))
		}
		for _, id := range ids {
			u := us[id]
			if u == nil {
				return fmt.Errorf("Load returned no usage for %s", id)
			}
			if d := usageDiff(*u, store.Usage{KeyID: id, Month: "2026-03"}); d != "" {
				return fmt.Errorf("Load(%s): %s", id, d)
			}
		}
		empty, err := tx.Load(ctx, nil, "2026-03")
		if err != nil {
			return fmt.Errorf("Load(no keys): %w", err)
		}
		if len(empty) != 0 {
			return fmt.Errorf("Load(no keys) returned %d usages", len(empty))
		}
		return nil
	})
	must(t, "UpdateUsage", err)
}

func testUsageRoundTrip(t *testing.T, s store.Store) {
	ctx := t.Context()
	seen := make([]byte, 4096)
	for i := range seen {
		seen[i] = byte(i * 7) // every byte value, zeros included
	}
	want := store.Usage{
		KeyID:          newKey(1).ID,
		MinuteStart:    at(0).Truncate(time.Minute),
		MinuteCount:    17,
		Month:          "2026-03",
		MonthRequests:  1234,
		MonthQuestions: 12340,
		Seen:           seen,
		SeenCount:      512,
	}
	other := store.Usage{KeyID: newKey(2).ID, Month: "2026-03", MonthRequests: 1, MonthQuestions: 10, Seen: []byte{1}, SeenCount: 1}
	err := s.UpdateUsage(ctx, func(tx store.UsageTx) error {
		us, err := tx.Load(ctx, []string{want.KeyID, other.KeyID}, want.Month)
		if err != nil {
			return err
		}
		u, o := us[want.KeyID], us[other.KeyID]
		*u, *o = want, other
		u.Seen = bytes.Clone(seen)
		return tx.Save(ctx, []*store.Usage{u, o})
	})
	must(t, "UpdateUsage(save)", err)

	if d := usageDiff(loadOne(t, s, want.KeyID, want.Month), want); d != "" {
		t.Fatalf("reloaded usage: %s", d)
	}
	if d := usageDiff(loadOne(t, s, other.KeyID, other.Month), other); d != "" {
		t.Fatalf("reloaded usage of the other key: %s", d)
	}

	// Saving again overwrites every field, including with zero values.
	next := store.Usage{KeyID: want.KeyID, Month: want.Month, MinuteStart: want.MinuteStart.Add(time.Minute), MinuteCount: 1}
	err = s.UpdateUsage(ctx, func(tx store.UsageTx) error {
		us, err := tx.Load(ctx, []string{want.KeyID}, want.Month)
		if err != nil {
			return err
		}
		*us[want.KeyID] = next
		return tx.Save(ctx, []*store.Usage{us[want.KeyID]})
	})
	must(t, "UpdateUsage(overwrite)", err)
	if d := usageDiff(loadOne(t, s, want.KeyID, want.Month), next); d != "" {
		t.Fatalf("reloaded overwritten usage: %s", d)
	}
}

func testUsageFailingFn(t *testing.T, s store.Store) {
	ctx := t.Context()
	id := newKey(1).ID
	saveUsage(t, s, id, "2026-03", 5, 50)
	before := loadOne(t, s, id, "2026-03")

	errBoom := errors.New("boom")
	err := s.UpdateUsage(ctx, func(tx store.UsageTx) error {
		us, err := tx.Load(ctx, []string{id, newKey(2).ID}, "2026-03")
		if err != nil {
			return err
		}
		for _, u := range us {
			u.MinuteCount += 100
			u.MonthRequests += 100
			u.Seen = append(u.Seen, 0xff)
			u.SeenCount++
		}
		if err := tx.Save(ctx, []*store.Usage{us[id], us[newKey(2).ID]}); err != nil {
			return err
		}
		return errBoom
	})
	if !errors.Is(err, errBoom) {
		t.Fatalf("UpdateUsage returned %v, want fn's error", err)
	}

	// fn's own error kinds pass through unchanged.
	err = s.UpdateUsage(ctx, func(store.UsageTx) error {
		return certbank.Errorf(certbank.RateLimited, "slow down")
	})
	wantKind(t, "UpdateUsage(fn fails with a kind)", err, certbank.RateLimited)

	if d := usageDiff(loadOne(t, s, id, "2026-03"), before); d != "" {
		t.Fatalf("failed transaction changed usage: %s", d)
	}
	if d := usageDiff(loadOne(t, s, newKey(2).ID, "2026-03"), store.Usage{KeyID: newKey(2).ID, Month: "2026-03"}); d != "" {
		t.Fatalf("failed transaction created usage: %s", d)
	}
}

func testUsageSaveUnloaded(t *testing.T, s store.Store) {
	ctx := t.Context()
	id := newKey(1).ID
	err := s.UpdateUsage(ctx, func(tx store.UsageTx) error {
		if _, err := tx.Load(ctx, []string{newKey(2).ID}, "2026-03"); err != nil {
			return err
		}
		return tx.Save(ctx, []*store.Usage{{KeyID: id, Month: "2026-03", MonthRequests: 9}})
	})
	if err == nil {
		t.Fatalf("Save of a usage not loaded in the transaction succeeded; it must fail (the key is not locked)")
	}
	if req, _, err := s.MonthlyUsage(ctx, id, "2026-03"); err != nil || req != 0 {
		t.Fatalf("MonthlyUsage after refused Save = %d, %v; want 0, nil", req, err)
	}
}

func testUsageInvalidMonth(t *testing.T, s store.Store) {
	ctx := t.Context()
	id := newKey(1).ID
	for _, month := range []string{"", "2026-3", "2026-13", "March"} {
		err := s.UpdateUsage(ctx, func(tx store.UsageTx) error {
			_, err := tx.Load(ctx, []string{id}, month)
			return err
		})
		wantKind(t, fmt.Sprintf("Load(month %q)", month), err, certbank.Invalid)
		_, _, err = s.MonthlyUsage(ctx, id, month)
		wantKind(t, fmt.Sprintf("MonthlyUsage(month %q)", month), err, certbank.Invalid)
	}
}

func testUsageMonthRollover(t *testing.T, s store.Store) {
	ctx := t.Context()
	id := newKey(1).ID
	march := store.Usage{
		KeyID: id, Month: "2026-03",
		MinuteStart: at(0).Truncate(time.Minute), MinuteCount: 3,
		MonthRequests: 40, MonthQuestions: 400,
		Seen: []byte("march-seen"), SeenCount: 10,
	}
	err := s.UpdateUsage(ctx, func(tx store.UsageTx) error {
		us, err := tx.Load(ctx, []string{id}, march.Month)
		if err != nil {
			return err
		}
		*us[id] = march
		return tx.Save(ctx, []*store.Usage{us[id]})
	})
	must(t, "UpdateUsage(march)", err)

	// A load for April sees zero April counts but the latest minute and seen
	// state; saving April leaves March's counts alone.
	april := loadOne(t, s, id, "2026-04")
	want := march
	want.Month, want.MonthRequests, want.MonthQuestions = "2026-04", 0, 0
	if d := usageDiff(april, want); d != "" {
		t.Fatalf("April load: %s", d)
	}
	err = s.UpdateUsage(ctx, func(tx store.UsageTx) error {
		us, err := tx.Load(ctx, []string{id}, "2026-04")
		if err != nil {
			return err
		}
		u := us[id]
		u.MinuteStart, u.MinuteCount = at(31*24*time.Hour).Truncate(time.Minute), 1
		u.MonthRequests, u.MonthQuestions = 1, 10
		u.Seen, u.SeenCount = append(u.Seen, "+april"...), 20
		return tx.Save(ctx, []*store.Usage{u})
	})
	must(t, "UpdateUsage(april)", err)

	for _, tc := range []struct {
		month     string
		req, ques int
	}{{"2026-03", 40, 400}, {"2026-04", 1, 10}, {"2026-05", 0, 0}} {
		req, q, err := s.MonthlyUsage(ctx, id, tc.month)
		must(t, "MonthlyUsage", err)
		if req != tc.req || q != tc.ques {
			t.Errorf("MonthlyUsage(%s) = %d/%d, want %d/%d", tc.month, req, q, tc.req, tc.ques)
		}
	}
	// Going back to March (a late batch) sees March's counts and the latest state.
	got := loadOne(t, s, id, "2026-03")
	if got.MonthRequests != 40 || string(got.Seen) != "march-seen+april" || got.MinuteCount != 1 {
		t.Fatalf("March reload = %d requests, seen %q, minute %d; want 40, %q, 1",
			got.MonthRequests, got.Seen, got.MinuteCount, "march-seen+april")
	}
}

func testUsageMonthly(t *testing.T, s store.Store) {
	ctx := t.Context()
	req, q, err := s.MonthlyUsage(ctx, newKey(1).ID, "2026-03")
	must(t, "MonthlyUsage(no usage)", err)
	if req != 0 || q != 0 {
		t.Fatalf("MonthlyUsage(no usage) = %d/%d, want 0/0", req, q)
	}
	saveUsage(t, s, newKey(1).ID, "2026-03", 2, 20)
	saveUsage(t, s, newKey(1).ID, "2026-03", 3, 25)
	saveUsage(t, s, newKey(2).ID, "2026-03", 100, 1000)
	req, q, err = s.MonthlyUsage(ctx, newKey(1).ID, "2026-03")
	must(t, "MonthlyUsage", err)
	if req != 5 || q != 45 {
		t.Fatalf("MonthlyUsage = %d/%d, want 5/45", req, q)
	}
}

// incrementMinute runs one usage transaction that adds one to the minute
// count of each of ids, loading them in the given order.
func incrementMinute(ctx context.Context, s store.Store, ids []string) error {
	return s.UpdateUsage(ctx, func(tx store.UsageTx) error {
		us, err := tx.Load(ctx, ids, "2026-03")
		if err != nil {
			return err
		}
		save := make([]*store.Usage, 0, len(us))
		for _, id := range ids {
			u := us[id]
			u.MinuteCount++
			u.MonthRequests++
			u.Seen = append(u.Seen, byte(u.MinuteCount))
			u.SeenCount = len(u.Seen)
			save = append(save, u)
		}
		return tx.Save(ctx, save)
	})
}

// concurrency is how many goroutines the concurrency tests run at once.
const concurrency = 50

func testUsageConcurrentSameKey(t *testing.T, s store.Store) {
	concurrentSameKey(t, []store.Store{s})
}

// concurrentSameKey runs concurrency usage transactions on one key, spread
// over stores, and checks that none was lost.
func concurrentSameKey(t *testing.T, stores []store.Store) {
	ctx := t.Context()
	id := newKey(1).ID
	var wg sync.WaitGroup
	for i := range concurrency {
		s := stores[i%len(stores)]
		wg.Go(func() {
			if err := incrementMinute(ctx, s, []string{id}); err != nil {
				t.Errorf("UpdateUsage %d: %v (kind %q)", i, err, certbank.ErrorCode(err))
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	for i, s := range stores {
		u := loadOne(t, s, id, "2026-03")
		if u.MinuteCount != concurrency || u.MonthRequests != concurrency || u.SeenCount != concurrency {
			t.Fatalf("store %d: after %d concurrent increments: minute %d, month %d, seen %d; want %d each (lost updates)",
				i, concurrency, u.MinuteCount, u.MonthRequests, u.SeenCount, concurrency)
		}
	}
}

func testUsageConcurrentBatches(t *testing.T, s store.Store) {
	// Each transaction loads the same five keys in its own order, as batches
	// of requests do; none may deadlock or lose an update.
	ctx := t.Context()
	ids := make([]string, 5)
	for i := range ids {
		ids[i] = newKey(i + 1).ID
	}
	const workers, rounds = 10, 3
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 1))
			for range rounds {
				order := append([]string(nil), ids...)
				r.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
				if err := incrementMinute(ctx, s, order); err != nil {
					t.Errorf("worker %d: %v (kind %q)", w, err, certbank.ErrorCode(err))
					return
				}
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	for _, id := range ids {
		if u := loadOne(t, s, id, "2026-03"); u.MinuteCount != workers*rounds {
			t.Errorf("%s: minute count %d, want %d", id, u.MinuteCount, workers*rounds)
		}
	}
}

// testUsageSeenBase checks the two parts of a seen set: SeenBase is written
// only by a Save with SaveBase set, kept (whatever the Usage holds) by one
// without, and both parts survive other keys' saves and later
// transactions.
func testUsageSeenBase(t *testing.T, s store.Store) {
	ctx := t.Context()
	id, month := newKey(1).ID, "2026-03"
	big := make([]byte, 64<<10) // large enough to be stored out of line
	for i := range big {
		big[i] = byte(i*13 + i>>8)
	}
	save := func(what string, change func(u *store.Usage)) {
		t.Helper()
		err := s.UpdateUsage(ctx, func(tx store.UsageTx) error {
			us, err := tx.Load(ctx, []string{id}, month)
			if err != nil {
				return err
			}
			change(us[id])
			return tx.Save(ctx, []*store.Usage{us[id]})
		})
		must(t, "UpdateUsage("+what+")", err)
	}
	want := store.Usage{KeyID: id, Month: month, MonthRequests: 1, Seen: []byte("r1"), SeenBase: bytes.Clone(big), SeenCount: 8194}
	save("fold", func(u *store.Usage) {
		*u = want
		u.SeenBase, u.SaveBase = bytes.Clone(big), true
	})
	if d := usageDiff(loadOne(t, s, id, month), want); d != "" {
		t.Fatalf("after a save with SaveBase: %s", d)
	}

	// Without SaveBase the stored base stays, whatever the Usage holds.
	want.MonthRequests, want.Seen, want.SeenCount = 2, []byte("r1r2"), 8195
	save("recent only", func(u *store.Usage) {
		u.MonthRequests, u.Seen, u.SeenCount = 2, []byte("r1r2"), 8195
		u.SeenBase = []byte("not to be written")
	})
	if d := usageDiff(loadOne(t, s, id, month), want); d != "" {
		t.Fatalf("after a save without SaveBase: %s", d)
	}

	// A new base replaces the old one, and the empty base is stored as empty.
	want.MonthRequests, want.Seen, want.SeenBase = 3, nil, []byte("new base")
	save("second fold", func(u *store.Usage) {
		u.MonthRequests, u.Seen, u.SeenBase, u.SaveBase = 3, nil, []byte("new base"), true
	})
	if d := usageDiff(loadOne(t, s, id, month), want); d != "" {
		t.Fatalf("after a second fold: %s", d)
	}
	want.MonthRequests, want.SeenBase = 4, nil
	save("empty base", func(u *store.Usage) {
		u.MonthRequests, u.SeenBase, u.SaveBase = 4, nil, true
	})
	if d := usageDiff(loadOne(t, s, id, month), want); d != "" {
		t.Fatalf("after saving an empty base: %s", d)
	}

	// A transaction that fails after a fold leaves the old base.
	boom := errors.New("boom")
	err := s.UpdateUsage(ctx, func(tx store.UsageTx) error {
		us, err := tx.Load(ctx, []string{id}, month)
		if err != nil {
			return err
		}
		us[id].SeenBase, us[id].SaveBase = []byte("rolled back"), true
		if err := tx.Save(ctx, []*store.Usage{us[id]}); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("UpdateUsage = %v, want the function's error", err)
	}
	if d := usageDiff(loadOne(t, s, id, month), want); d != "" {
		t.Fatalf("after a failed fold: %s", d)
	}
}

// testMultiSeenBase checks that a seen base written by one instance is what
// the other loads, however often each has loaded it before (an instance
// may keep bases it has read, but never serve one that another instance
// has replaced).
func testMultiSeenBase(t *testing.T, a, b store.Store) {
	ctx := t.Context()
	id, month := newKey(7).ID, "2026-03"
	fold := func(s store.Store, base string) {
		t.Helper()
		err := s.UpdateUsage(ctx, func(tx store.UsageTx) error {
			us, err := tx.Load(ctx, []string{id}, month)
			if err != nil {
				return err
			}
			u := us[id]
			u.MonthRequests++
			u.Seen, u.SeenBase, u.SaveBase = nil, []byte(base), true
			return tx.Save(ctx, []*store.Usage{u})
		})
		must(t, "UpdateUsage(fold "+base+")", err)
	}
	check := func(s store.Store, who, base string, requests int) {
		t.Helper()
		for range 2 { // a second load may come from what the instance kept
			got := loadOne(t, s, id, month)
			if string(got.SeenBase) != base || got.MonthRequests != requests {
				t.Fatalf("%s loads base %q after %d requests, want %q after %d", who, got.SeenBase, got.MonthRequests, base, requests)
			}
		}
	}
	fold(a, "base-1")
	check(a, "the writer", "base-1", 1)
	check(b, "the other instance", "base-1", 1)
	fold(b, "base-2")
	check(a, "the first instance", "base-2", 2)
	fold(a, "base-3")
	check(b, "the second instance", "base-3", 3)
	check(a, "the first instance", "base-3", 3)
}
