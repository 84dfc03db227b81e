package storetest

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/paywall/store"
)

// newPayment returns a distinct reserved payment for n.
func newPayment(n int) store.Payment {
	created := at(time.Duration(n) * time.Second)
	return store.Payment{
		Payer:     fmt.Sprintf("0x%040x", 0xabc000+n%3),
		Nonce:     fmt.Sprintf("0x%064x", n),
		Amount:    10000 * int64(n+1),
		Resource:  "/api/v1/x402?cert=cloud-one&count=10",
		Network:   "base",
		Status:    store.Reserved,
		CreatedAt: created,
		UpdatedAt: created,
	}
}

func testPaymentReserveAndGet(t *testing.T, s store.Store) {
	ctx := t.Context()
	p := newPayment(1)
	p.Status = "" // ReservePayment sets the status itself
	must(t, "ReservePayment", s.ReservePayment(ctx, p))
	got, err := s.PaymentByNonce(ctx, p.Payer, p.Nonce)
	must(t, "PaymentByNonce", err)
	p.Status = store.Reserved
	if d := paymentDiff(got, p); d != "" {
		t.Fatalf("PaymentByNonce: %s", d)
	}

	// The status of the argument is ignored: a reservation is always reserved.
	q := newPayment(2)
	q.Status = store.Settled
	must(t, "ReservePayment", s.ReservePayment(ctx, q))
	got, err = s.PaymentByNonce(ctx, q.Payer, q.Nonce)
	must(t, "PaymentByNonce", err)
	if got.Status != store.Reserved {
		t.Fatalf("status = %q, want %q", got.Status, store.Reserved)
	}
}

func testPaymentReserveDuplicate(t *testing.T, s store.Store) {
	ctx := t.Context()
	p := newPayment(1)
	must(t, "ReservePayment", s.ReservePayment(ctx, p))
	again := p
	again.Amount, again.CreatedAt = 1, at(time.Hour)
	wantKind(t, "ReservePayment(again)", s.ReservePayment(ctx, again), certbank.Conflict)

	// Any status keeps the (payer, nonce) taken.
	for _, status := range []store.PaymentStatus{store.Pending, store.Settled, store.Failed} {
		must(t, "UpdatePayment", s.UpdatePayment(ctx, p.Payer, p.Nonce, store.Update{To: store.State{Status: status, Reason: ""}, Transaction: "0xtx", At: at(time.Minute)}))
		wantKind(t, "ReservePayment(after "+string(status)+")", s.ReservePayment(ctx, again), certbank.Conflict)
	}
	got, err := s.PaymentByNonce(ctx, p.Payer, p.Nonce)
	must(t, "PaymentByNonce", err)
	if got.Amount != p.Amount {
		t.Fatalf("a refused reservation changed the amount to %d", got.Amount)
	}

	// The same nonce from another payer is another payment.
	other := p
	other.Payer = "0x" + strings.Repeat("f", 40)
	must(t, "ReservePayment(other payer)", s.ReservePayment(ctx, other))
}

func testPaymentReserveConcurrent(t *testing.T, s store.Store) {
	reserveOnce(t, []store.Store{s})
}

// reserveOnce runs concurrency reservations of one payment spread over
// stores and checks that exactly one succeeds and the rest are Conflict.
func reserveOnce(t *testing.T, stores []store.Store) {
	ctx := t.Context()
	p := newPayment(1)
	var ok, conflict atomic.Int32
	var wg sync.WaitGroup
	for i := range concurrency {
		s := stores[i%len(stores)]
		wg.Go(func() {
			q := p
			q.Amount = int64(i + 1)
			switch err := s.ReservePayment(ctx, q); certbank.ErrorCode(err) {
			case "":
				ok.Add(1)
			case certbank.Conflict:
				conflict.Add(1)
			default:
				t.Errorf("ReservePayment %d: %v (kind %q), want nil or Conflict", i, err, certbank.ErrorCode(err))
			}
		})
	}
	wg.Wait()
	if ok.Load() != 1 || conflict.Load() != concurrency-1 {
		t.Fatalf("%d concurrent reservations: %d succeeded, %d Conflict; want 1 and %d",
			concurrency, ok.Load(), conflict.Load(), concurrency-1)
	}
}

func testPaymentInvalidInput(t *testing.T, s store.Store) {
	ctx := t.Context()
	for _, tc := range []struct {
		name   string
		change func(p *store.Payment)
	}{
		{"no payer", func(p *store.Payment) { p.Payer = "" }},
		{"no nonce", func(p *store.Payment) { p.Nonce = "" }},
		{"no creation time", func(p *store.Payment) { p.CreatedAt = time.Time{} }},
	} {
		p := newPayment(1)
		tc.change(&p)
		wantKind(t, "ReservePayment("+tc.name+")", s.ReservePayment(ctx, p), certbank.Invalid)
	}
	p := newPayment(1)
	must(t, "ReservePayment", s.ReservePayment(ctx, p))
	wantKind(t, "UpdatePayment(unknown status)",
		s.UpdatePayment(ctx, p.Payer, p.Nonce, store.Update{To: store.State{Status: "paid", Reason: ""}, Transaction: "", At: at(time.Minute)}), certbank.Invalid)
	got, err := s.PaymentByNonce(ctx, p.Payer, p.Nonce)
	must(t, "PaymentByNonce", err)
	if got.Status != store.Reserved {
		t.Fatalf("status = %q after refused update, want reserved", got.Status)
	}
}

func testPaymentUpdate(t *testing.T, s store.Store) {
	ctx := t.Context()
	p := newPayment(1)
	must(t, "ReservePayment", s.ReservePayment(ctx, p))
	other := newPayment(2)
	must(t, "ReservePayment", s.ReservePayment(ctx, other))

	must(t, "UpdatePayment(pending)", s.UpdatePayment(ctx, p.Payer, p.Nonce, store.Update{To: store.State{Status: store.Pending, Reason: ""}, Transaction: "0xabc", At: at(time.Minute)}))
	want := p
	want.Status, want.Transaction, want.UpdatedAt = store.Pending, "0xabc", at(time.Minute)
	got, err := s.PaymentByNonce(ctx, p.Payer, p.Nonce)
	must(t, "PaymentByNonce", err)
	if d := paymentDiff(got, want); d != "" {
		t.Fatalf("after UpdatePayment(pending): %s", d)
	}

	must(t, "UpdatePayment(failed)", s.UpdatePayment(ctx, p.Payer, p.Nonce, store.Update{To: store.State{Status: store.Failed, Reason: "reverted"}, Transaction: "0xabc", At: at(2 * time.Minute)}))
	want.Status, want.Reason, want.UpdatedAt = store.Failed, "reverted", at(2*time.Minute)
	got, err = s.PaymentByNonce(ctx, p.Payer, p.Nonce)
	must(t, "PaymentByNonce", err)
	if d := paymentDiff(got, want); d != "" {
		t.Fatalf("after UpdatePayment(failed): %s", d)
	}

	got, err = s.PaymentByNonce(ctx, other.Payer, other.Nonce)
	must(t, "PaymentByNonce(other)", err)
	if d := paymentDiff(got, other); d != "" {
		t.Fatalf("UpdatePayment changed another payment: %s", d)
	}

	unknown := newPayment(3)
	wantKind(t, "UpdatePayment(unknown)",
		s.UpdatePayment(ctx, unknown.Payer, unknown.Nonce, store.Update{To: store.State{Status: store.Settled, Reason: ""}, Transaction: "0x1", At: at(time.Minute)}), certbank.NotFound)
}

func testPaymentRelease(t *testing.T, s store.Store) {
	ctx := t.Context()
	reserved, pending := newPayment(1), newPayment(2)
	must(t, "ReservePayment", s.ReservePayment(ctx, reserved))
	must(t, "ReservePayment", s.ReservePayment(ctx, pending))
	must(t, "UpdatePayment", s.UpdatePayment(ctx, pending.Payer, pending.Nonce, store.Update{To: store.State{Status: store.Pending, Reason: ""}, Transaction: "0xtx", At: at(time.Minute)}))

	must(t, "ReleasePayment(reserved)", s.ReleasePayment(ctx, reserved.Payer, reserved.Nonce))
	_, err := s.PaymentByNonce(ctx, reserved.Payer, reserved.Nonce)
	wantKind(t, "PaymentByNonce(released)", err, certbank.NotFound)
	// A corrected retry may use the nonce again.
	must(t, "ReservePayment(after release)", s.ReservePayment(ctx, reserved))

	// Rows past reserved stay: they may have reached the chain.
	must(t, "ReleasePayment(pending)", s.ReleasePayment(ctx, pending.Payer, pending.Nonce))
	got, err := s.PaymentByNonce(ctx, pending.Payer, pending.Nonce)
	must(t, "PaymentByNonce(pending)", err)
	if got.Status != store.Pending {
		t.Fatalf("status = %q after releasing a pending payment, want pending", got.Status)
	}

	// Releasing nothing is not an error.
	unknown := newPayment(3)
	must(t, "ReleasePayment(unknown)", s.ReleasePayment(ctx, unknown.Payer, unknown.Nonce))
}

func testPaymentGetNotFound(t *testing.T, s store.Store) {
	ctx := t.Context()
	p := newPayment(1)
	must(t, "ReservePayment", s.ReservePayment(ctx, p))
	_, err := s.PaymentByNonce(ctx, p.Payer, newPayment(2).Nonce)
	wantKind(t, "PaymentByNonce(other nonce)", err, certbank.NotFound)
	_, err = s.PaymentByNonce(ctx, newPayment(2).Payer, p.Nonce)
	wantKind(t, "PaymentByNonce(other payer)", err, certbank.NotFound)
}

func testPaymentList(t *testing.T, s store.Store) {
	ctx := t.Context()
	ps, err := s.Payments(ctx, store.PaymentFilter{})
	must(t, "Payments(empty)", err)
	if len(ps) != 0 {
		t.Fatalf("Payments(empty) = %d, want 0", len(ps))
	}
	// Payments 1..6, created one second apart, inserted out of order;
	// even ones settled.
	for _, n := range []int{3, 1, 6, 2, 5, 4} {
		p := newPayment(n)
		must(t, "ReservePayment", s.ReservePayment(ctx, p))
		if n%2 == 0 {
			must(t, "UpdatePayment", s.UpdatePayment(ctx, p.Payer, p.Nonce, store.Update{To: store.State{Status: store.Settled, Reason: ""}, Transaction: fmt.Sprintf("0xtx%d", n), At: at(time.Hour)}))
		}
	}
	for _, tc := range []struct {
		name string
		f    store.PaymentFilter
		want []int
	}{
		{"all", store.PaymentFilter{}, []int{6, 5, 4, 3, 2, 1}},
		{"settled", store.PaymentFilter{Status: store.Settled}, []int{6, 4, 2}},
		{"reserved", store.PaymentFilter{Status: store.Reserved}, []int{5, 3, 1}},
		{"failed", store.PaymentFilter{Status: store.Failed}, nil},
		{"since (inclusive)", store.PaymentFilter{Since: at(3 * time.Second)}, []int{6, 5, 4, 3}},
		{"limit", store.PaymentFilter{Limit: 2}, []int{6, 5}},
		{"all filters", store.PaymentFilter{Status: store.Reserved, Since: at(2 * time.Second), Limit: 1}, []int{5}},
		{"since the future", store.PaymentFilter{Since: at(time.Hour)}, nil},
	} {
		ps, err := s.Payments(ctx, tc.f)
		must(t, "Payments("+tc.name+")", err)
		var got, want []string
		for _, p := range ps {
			got = append(got, p.Nonce)
		}
		for _, n := range tc.want {
			want = append(want, newPayment(n).Nonce)
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("Payments(%s) = %d payments %v, want %v", tc.name, len(got), got, want)
		}
	}
	ps, err = s.Payments(ctx, store.PaymentFilter{Limit: 1})
	must(t, "Payments", err)
	want := newPayment(6)
	want.Status, want.Transaction, want.UpdatedAt = store.Settled, "0xtx6", at(time.Hour)
	if d := paymentDiff(ps[0], want); d != "" {
		t.Fatalf("Payments[0]: %s", d)
	}
}

func testPaymentTransition(t *testing.T, s store.Store) {
	ctx := t.Context()
	p := newPayment(1)
	must(t, "ReservePayment", s.ReservePayment(ctx, p))
	must(t, "UpdatePayment(pending)", s.UpdatePayment(ctx, p.Payer, p.Nonce, store.Update{To: store.State{Status: store.Pending, Reason: "settlement_pending"}, Transaction: "0xabc", At: at(time.Minute)}))

	for _, tc := range []struct {
		from   store.PaymentStatus
		reason string
	}{
		{store.Reserved, ""},                  // wrong status
		{store.Pending, ""},                   // wrong reason
		{store.Pending, "something else"},     // wrong reason
		{store.Settled, "settlement_pending"}, // wrong status
	} {
		ok, err := s.TransitionPayment(ctx, store.Transition{Payer: p.Payer, Nonce: p.Nonce, From: store.State{Status: tc.from, Reason: tc.reason}, Update: store.Update{To: store.State{Status: store.Settled, Reason: ""}, Transaction: "0xabc", At: at(2 * time.Minute)}})
		must(t, "TransitionPayment", err)
		if ok {
			t.Fatalf("TransitionPayment from (%s, %q) succeeded on a payment in (pending, settlement_pending)", tc.from, tc.reason)
		}
	}
	got, err := s.PaymentByNonce(ctx, p.Payer, p.Nonce)
	must(t, "PaymentByNonce", err)
	if got.Status != store.Pending || got.Reason != "settlement_pending" {
		t.Fatalf("refused transitions changed the payment: %+v", got)
	}

	ok, err := s.TransitionPayment(ctx, store.Transition{Payer: p.Payer, Nonce: p.Nonce, From: store.State{Status: store.Pending, Reason: "settlement_pending"}, Update: store.Update{To: store.State{Status: store.Settled, Reason: store.ReasonUndelivered}, Transaction: "0xdef", At: at(3 * time.Minute)}})
	must(t, "TransitionPayment", err)
	if !ok {
		t.Fatal("TransitionPayment from the payment's own state failed")
	}
	want := p
	want.Status, want.Transaction, want.Reason, want.UpdatedAt = store.Settled, "0xdef", store.ReasonUndelivered, at(3*time.Minute)
	got, err = s.PaymentByNonce(ctx, p.Payer, p.Nonce)
	must(t, "PaymentByNonce", err)
	if d := paymentDiff(got, want); d != "" {
		t.Fatalf("after TransitionPayment: %s", d)
	}
	// The same transition again finds the payment moved.
	ok, err = s.TransitionPayment(ctx, store.Transition{Payer: p.Payer, Nonce: p.Nonce, From: store.State{Status: store.Pending, Reason: "settlement_pending"}, Update: store.Update{To: store.State{Status: store.Settled, Reason: ""}, Transaction: "0xdef", At: at(4 * time.Minute)}})
	must(t, "TransitionPayment", err)
	if ok {
		t.Fatal("a second transition out of the same state succeeded")
	}
	// Unknown payments and bad input.
	unknown := newPayment(9)
	if ok, err := s.TransitionPayment(ctx, store.Transition{Payer: unknown.Payer, Nonce: unknown.Nonce, From: store.State{Status: store.Pending, Reason: ""}, Update: store.Update{To: store.State{Status: store.Settled, Reason: ""}, Transaction: "", At: at(0)}}); ok || err != nil {
		t.Fatalf("TransitionPayment of an unknown payment = %v, %v; want false, nil", ok, err)
	}
	_, err = s.TransitionPayment(ctx, store.Transition{Payer: p.Payer, Nonce: p.Nonce, From: store.State{Status: store.Settled, Reason: store.ReasonUndelivered}, Update: store.Update{To: store.State{Status: "delivered", Reason: ""}, Transaction: "", At: at(0)}})
	wantKind(t, "TransitionPayment(unknown status)", err, certbank.Invalid)
	_, err = s.TransitionPayment(ctx, store.Transition{Payer: p.Payer, Nonce: p.Nonce, From: store.State{Status: store.Settled, Reason: store.ReasonUndelivered}, Update: store.Update{To: store.State{Status: store.Settled, Reason: ""}, Transaction: "", At: time.Time{}}})
	wantKind(t, "TransitionPayment(zero time)", err, certbank.Invalid)
}

// transitionOnce runs 20 concurrent transitions of one payment out of the
// same state over stores (instances of one database) and checks that
// exactly one succeeds.
func transitionOnce(t *testing.T, stores []store.Store) {
	ctx := t.Context()
	p := newPayment(5)
	must(t, "ReservePayment", stores[0].ReservePayment(ctx, p))
	must(t, "UpdatePayment", stores[0].UpdatePayment(ctx, p.Payer, p.Nonce, store.Update{To: store.State{Status: store.Settled, Reason: store.ReasonUndelivered}, Transaction: "0x1", At: at(time.Minute)}))
	const n = 20
	var wg sync.WaitGroup
	won := make([]bool, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			won[i], errs[i] = stores[i%len(stores)].TransitionPayment(ctx, store.Transition{Payer: p.Payer, Nonce: p.Nonce, From: store.State{Status: store.Settled, Reason: store.ReasonUndelivered}, Update: store.Update{To: store.State{Status: store.Settled, Reason: ""}, Transaction: "0x1", At: at(2 * time.Minute)}})
		})
	}
	wg.Wait()
	wins := 0
	for i := range n {
		must(t, "TransitionPayment", errs[i])
		if won[i] {
			wins++
		}
	}
	if wins != 1 {
		t.Fatalf("%d of %d concurrent transitions out of one state succeeded, want 1", wins, n)
	}
}

func testPaymentTransitionConcurrent(t *testing.T, s store.Store) {
	transitionOnce(t, []store.Store{s})
}
