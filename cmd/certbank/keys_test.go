package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/paywall/store"
	"github.com/certbank/certbank/paywall/store/memstore"
)

// TestKeysRunFunctions drives each keys subcommand's run function over
// the in-memory store, in the order support would use them.
func TestKeysRunFunctions(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	var out bytes.Buffer
	run := func(fn func(context.Context, store.Store, ioWriter, *keysOptions) error, o keysOptions) (string, error) {
		out.Reset()
		o.Now = clock
		err := fn(ctx, st, &out, &o)
		return out.String(), err
	}
	// create
	got, err := run(runKeysCreate, keysOptions{Name: "Ada", Email: "Ada@Example.com", Tier: certbank.TierFree})
	if err != nil || !strings.HasPrefix(got, "cb_live_") {
		t.Fatalf("create: %v\n%s", err, got)
	}
	raw := strings.SplitN(got, "\n", 2)[0]
	keys, _ := st.Keys(ctx)
	if len(keys) != 1 || keys[0].Email != "ada@example.com" || !keys[0].CreatedAt.Equal(now) {
		t.Fatalf("stored keys %+v", keys)
	}
	id := keys[0].ID
	tests := []struct {
		name    string
		fn      func(context.Context, store.Store, ioWriter, *keysOptions) error
		o       keysOptions
		want    []string // in the output
		wantErr certbank.Code
	}{
		{"list", runKeysList, keysOptions{}, []string{id, "ada@example.com", "free", "active"}, ""},
		{"show by email", runKeysShow, keysOptions{Ref: "ADA@example.com"}, []string{"id:       " + id, "usage:    0 requests"}, ""},
		{"show by key", runKeysShow, keysOptions{Ref: raw}, []string{id}, ""},
		{"show unknown", runKeysShow, keysOptions{Ref: "nobody@example.com"}, nil, certbank.Internal /* a usage error */},
		{"duplicate email", runKeysCreate, keysOptions{Email: "ada@example.com"}, nil, certbank.Conflict},
		{"set-tier", runKeysSetTier, keysOptions{Ref: id, NewTier: certbank.TierDeveloper, Until: "2027-01-31"}, []string{"is now developer until 2027-01-31"}, ""},
		{"rotate", runKeysRotate, keysOptions{Ref: id}, []string{"cb_live_", "new key for " + id}, ""},
		{"revoke", runKeysRevoke, keysOptions{Ref: id}, []string{"revoked " + id}, ""},
	}
	for _, tc := range tests {
		got, err := run(tc.fn, tc.o)
		if certbank.ErrorCode(err) != tc.wantErr {
			t.Errorf("%s: error %v, want kind %q", tc.name, err, tc.wantErr)
		}
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: output lacks %q:\n%s", tc.name, w, got)
			}
		}
	}
	k, _ := st.KeyByID(ctx, id)
	if k.Active() || k.Tier != certbank.TierDeveloper || k.TierUntil.Format(time.DateOnly) != "2027-01-31" || k.Hash == keys[0].Hash {
		t.Errorf("after set-tier, rotate and revoke: %+v", k)
	}
}

// TestKeysOptionsCheck: wrong options are usage errors before any store is
// opened.
func TestKeysOptionsCheck(t *testing.T) {
	tests := []struct {
		sub string
		o   keysOptions
		ok  bool
	}{
		{"create", keysOptions{Email: "a@b.c"}, true},
		{"create", keysOptions{}, false},
		{"create", keysOptions{Email: "a@b.c", Until: "tomorrow"}, false},
		{"set-tier", keysOptions{NewTier: certbank.TierFree}, true},
		{"set-tier", keysOptions{NewTier: certbank.TierDeveloper}, false},
		{"set-tier", keysOptions{NewTier: certbank.TierDeveloper, Until: "2027-01-31"}, true},
	}
	for _, tc := range tests {
		err := tc.o.check(tc.sub)
		var ue usageError
		if (err == nil) != tc.ok || (err != nil && !asUsage(err, &ue)) {
			t.Errorf("%s %+v: %v, want ok %v (or a usage error)", tc.sub, tc.o, err, tc.ok)
		}
	}
}

// TestPaymentsRunFunctions drives the payments subcommands' run functions
// over the in-memory store.
func TestPaymentsRunFunctions(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	at := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	for i, status := range []store.PaymentStatus{store.Settled, store.Pending, store.Settled} {
		p := store.Payment{Payer: "0xpayer", Nonce: "0xnonce" + string(rune('a'+i)), Amount: 10000, Resource: "r", Network: "base-sepolia", CreatedAt: at.AddDate(0, 0, i)}
		if err := st.ReservePayment(ctx, p); err != nil {
			t.Fatal(err)
		}
		if err := st.UpdatePayment(ctx, p.Payer, p.Nonce, store.Update{To: store.State{Status: status}, Transaction: "0xtx", At: p.CreatedAt}); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		fn   func(context.Context, store.Store, ioWriter, *paymentsOptions) error
		o    paymentsOptions
		want []string
		bad  bool
	}{
		{"list", runPaymentsList, paymentsOptions{}, []string{"3 payments, 0.02 USDC settled"}, false},
		{"list settled", runPaymentsList, paymentsOptions{Status: "settled"}, []string{"2 payments"}, false},
		{"list since", runPaymentsList, paymentsOptions{Since: "2026-11-03"}, []string{"2 payments"}, false},
		{"list limit", runPaymentsList, paymentsOptions{Limit: 1}, []string{"1 payments"}, false},
		{"bad status", runPaymentsList, paymentsOptions{Status: "paid"}, nil, true},
		{"bad since", runPaymentsExport, paymentsOptions{Since: "soon"}, nil, true},
		{"show", runPaymentsShow, paymentsOptions{Payer: "0xPAYER", Nonce: "0xnonceb"}, []string{"status:      pending"}, false},
		{"export", runPaymentsExport, paymentsOptions{Status: "settled"}, []string{"created_at,updated_at,status", "settled,0xpayer,0xnoncec,10000,0.01"}, false},
	}
	for _, tc := range tests {
		var out bytes.Buffer
		err := tc.fn(ctx, st, &out, &tc.o)
		if (err != nil) != tc.bad {
			t.Errorf("%s: error %v, want error %v", tc.name, err, tc.bad)
		}
		for _, w := range tc.want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("%s: output lacks %q:\n%s", tc.name, w, out.String())
			}
		}
	}
}

type ioWriter = io.Writer

func asUsage(err error, ue *usageError) bool { return errors.As(err, ue) }
