package store_test

import (
	"testing"
	"time"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/paywall/store"
)

func TestParseStatus(t *testing.T) {
	tests := []struct {
		in   string
		want store.PaymentStatus
		ok   bool
	}{
		{"", "", true},
		{"reserved", store.Reserved, true},
		{"pending", store.Pending, true},
		{"settled", store.Settled, true},
		{"failed", store.Failed, true},
		{"paid", "", false},
		{"Settled", "", false},
	}
	for _, tc := range tests {
		got, err := store.ParseStatus(tc.in)
		if got != tc.want || (err == nil) != tc.ok {
			t.Errorf("ParseStatus(%q) = %q, %v; want %q, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
		if err != nil && certbank.ErrorCode(err) != certbank.Invalid {
			t.Errorf("ParseStatus(%q) error kind %s, want Invalid", tc.in, certbank.ErrorCode(err))
		}
	}
}

func TestTransitionCheck(t *testing.T) {
	at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	ok := store.Transition{Payer: "0xa", Nonce: "0x1", From: store.State{Status: store.Pending},
		Update: store.Update{To: store.State{Status: store.Settled}, At: at}}
	tests := []struct {
		name   string
		change func(*store.Transition)
		valid  bool
	}{
		{"valid", func(*store.Transition) {}, true},
		{"unknown to", func(t *store.Transition) { t.To.Status = "delivered" }, false},
		{"unknown from", func(t *store.Transition) { t.From.Status = "" }, false},
		{"zero time", func(t *store.Transition) { t.At = time.Time{} }, false},
	}
	for _, tc := range tests {
		tr := ok
		tc.change(&tr)
		err := tr.Check()
		if (err == nil) != tc.valid {
			t.Errorf("%s: Check() = %v, want valid %v", tc.name, err, tc.valid)
		}
		if err != nil && certbank.ErrorCode(err) != certbank.Invalid {
			t.Errorf("%s: error kind %s, want Invalid", tc.name, certbank.ErrorCode(err))
		}
	}
}
