// Package storetest is the conformance suite for store.Store. Every
// implementation (paywall/sqlite, paywall/postgres) runs Run from its own
// tests, and RunMultiInstance when several instances may share one database,
// so that all of them keep the promises written on the interface.
//
// The suite asserts error kinds with certbank.ErrorCode, never message text,
// and compares times to the microsecond (the precision every store keeps).
package storetest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/paywall/store"
)

// Run runs the conformance suite against the store that open returns.
//
// open is called once per test and must return a fresh, empty store that
// nothing else uses; it registers its own cleanup (closing the store and
// removing its data) with t.Cleanup. The suite may close the store before
// that cleanup runs, so Close must tolerate a second call. Tests run in
// parallel, so open must be safe to call concurrently.
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	t.Helper()
	runGroups(t, open, []group{
		{"Keys", []test{
			{"CreateAndLookup", testKeyCreateAndLookup},
			{"LookupNotFound", testKeyLookupNotFound},
			{"ListNewestFirst", testKeyListNewestFirst},
			{"DuplicateActiveEmail", testKeyDuplicateEmail},
			{"DuplicateHash", testKeyDuplicateHash},
			{"DuplicateID", testKeyDuplicateID},
			{"InvalidInput", testKeyInvalidInput},
			{"SetTier", testKeySetTier},
			{"Revoke", testKeyRevoke},
			{"Rotate", testKeyRotate},
		}},
		{"Usage", []test{
			{"LoadWithoutUsage", testUsageLoadWithoutUsage},
			{"RoundTrip", testUsageRoundTrip},
			{"SeenBase", testUsageSeenBase},
			{"FailingFnChangesNothing", testUsageFailingFn},
			{"SaveUnloadedFails", testUsageSaveUnloaded},
			{"InvalidMonth", testUsageInvalidMonth},
			{"MonthRollover", testUsageMonthRollover},
			{"MonthlyUsage", testUsageMonthly},
			{"ConcurrentSameKey", testUsageConcurrentSameKey},
			{"ConcurrentOverlappingBatches", testUsageConcurrentBatches},
		}},
		{"Payments", []test{
			{"ReserveAndGet", testPaymentReserveAndGet},
			{"ReserveDuplicate", testPaymentReserveDuplicate},
			{"ReserveConcurrent", testPaymentReserveConcurrent},
			{"InvalidInput", testPaymentInvalidInput},
			{"Update", testPaymentUpdate},
			{"Transition", testPaymentTransition},
			{"TransitionConcurrent", testPaymentTransitionConcurrent},
			{"Release", testPaymentRelease},
			{"GetNotFound", testPaymentGetNotFound},
			{"ListFilters", testPaymentList},
		}},
		{"Learner", []test{
			{"ExamRoundTrip", testExamRoundTrip},
			{"ExamFinishOnce", testExamFinishOnce},
			{"Responses", testResponses},
			{"Reports", testReports},
		}},
		{"Counters", []test{
			{"CountsPerNameAndWindow", testHitCounts},
			{"Concurrent", testHitConcurrent},
		}},
		{"Lifecycle", []test{
			{"Ping", testPing},
			{"ClosedIsUnavailable", testClosedIsUnavailable},
		}},
	})
}

// RunMultiInstance runs the tests that need two Store instances sharing one
// database, as when several certbank serve processes share a PostgreSQL
// server. open returns two fresh instances over the same empty database and
// registers their cleanup; it is called once per test, concurrently.
func RunMultiInstance(t *testing.T, open func(t *testing.T) (store.Store, store.Store)) {
	t.Helper()
	tests := []struct {
		name string
		test func(t *testing.T, a, b store.Store)
	}{
		{"KeysShared", testMultiKeysShared},
		{"UsageNoLostUpdate", testMultiUsageNoLostUpdate},
		{"SeenBaseShared", testMultiSeenBase},
		{"ReserveOnce", testMultiReserveOnce},
		{"TransitionOnce", func(t *testing.T, a, b store.Store) { transitionOnce(t, []store.Store{a, b}) }},
		{"HitShared", testMultiHitShared},
		{"ExamFinishOnce", testMultiFinishOnce},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a, b := open(t)
			tt.test(t, a, b)
		})
	}
}

type test struct {
	name string
	test func(t *testing.T, s store.Store)
}

type group struct {
	name  string
	tests []test
}

func runGroups(t *testing.T, open func(t *testing.T) store.Store, groups []group) {
	t.Helper()
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			t.Parallel()
			for _, tt := range g.tests {
				t.Run(tt.name, func(t *testing.T) {
					t.Parallel()
					tt.test(t, open(t))
				})
			}
		})
	}
}

// at returns the suite's reference time plus d. The reference has a
// nanosecond part on purpose: stores keep at least microseconds, so
// comparisons truncate to those.
func at(d time.Duration) time.Time {
	return time.Date(2026, time.March, 14, 15, 9, 26, 535897932, time.UTC).Add(d)
}

// sameTime reports whether a and b are the same instant to the microsecond.
func sameTime(a, b time.Time) bool {
	return a.Truncate(time.Microsecond).Equal(b.Truncate(time.Microsecond))
}

// newKey returns a distinct, valid key for n.
func newKey(n int) store.Key {
	sum := sha256.Sum256(fmt.Appendf(nil, "cb_test_secret_%d", n))
	hash := hex.EncodeToString(sum[:])
	return store.Key{
		ID:        fmt.Sprintf("key_%016x", n),
		Hash:      hash,
		Prefix:    "cb_" + hash[:6],
		Name:      fmt.Sprintf("key %d", n),
		Email:     fmt.Sprintf("user%d@example.com", n),
		Tier:      "free",
		CreatedAt: at(time.Duration(n) * time.Minute),
	}
}

// hashOf returns a fresh hash, distinct from every newKey hash.
func hashOf(s string) string {
	sum := sha256.Sum256([]byte("other:" + s))
	return hex.EncodeToString(sum[:])
}

// wantKind fails the test unless err is of kind want.
func wantKind(t *testing.T, what string, err error, want certbank.Code) {
	t.Helper()
	if got := certbank.ErrorCode(err); got != want {
		t.Fatalf("%s: error %v (kind %q), want kind %q", what, err, got, want)
	}
}

// must fails the test if err is not nil.
func must(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v (kind %q)", what, err, certbank.ErrorCode(err))
	}
}

// keyDiff describes how got differs from want, or returns "".
func keyDiff(got, want store.Key) string {
	var d []string
	str := func(name, g, w string) {
		if g != w {
			d = append(d, fmt.Sprintf("%s = %q, want %q", name, g, w))
		}
	}
	tm := func(name string, g, w time.Time) {
		if !sameTime(g, w) {
			d = append(d, fmt.Sprintf("%s = %v, want %v", name, g, w))
		}
	}
	str("ID", got.ID, want.ID)
	str("Hash", got.Hash, want.Hash)
	str("Prefix", got.Prefix, want.Prefix)
	str("Name", got.Name, want.Name)
	str("Email", got.Email, want.Email)
	str("Tier", got.Tier, want.Tier)
	tm("TierUntil", got.TierUntil, want.TierUntil)
	tm("CreatedAt", got.CreatedAt, want.CreatedAt)
	tm("RevokedAt", got.RevokedAt, want.RevokedAt)
	return strings.Join(d, "; ")
}

// paymentDiff describes how got differs from want, or returns "".
func paymentDiff(got, want store.Payment) string {
	var d []string
	str := func(name, g, w string) {
		if g != w {
			d = append(d, fmt.Sprintf("%s = %q, want %q", name, g, w))
		}
	}
	str("Payer", got.Payer, want.Payer)
	str("Nonce", got.Nonce, want.Nonce)
	if got.Amount != want.Amount {
		d = append(d, fmt.Sprintf("Amount = %d, want %d", got.Amount, want.Amount))
	}
	str("Resource", got.Resource, want.Resource)
	str("Network", got.Network, want.Network)
	str("Transaction", got.Transaction, want.Transaction)
	str("Status", string(got.Status), string(want.Status))
	str("Reason", got.Reason, want.Reason)
	if !sameTime(got.CreatedAt, want.CreatedAt) {
		d = append(d, fmt.Sprintf("CreatedAt = %v, want %v", got.CreatedAt, want.CreatedAt))
	}
	if !sameTime(got.UpdatedAt, want.UpdatedAt) {
		d = append(d, fmt.Sprintf("UpdatedAt = %v, want %v", got.UpdatedAt, want.UpdatedAt))
	}
	return strings.Join(d, "; ")
}
