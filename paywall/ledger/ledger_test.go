package ledger_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/paywall/ledger"
	"github.com/certbank/certbank/paywall/store"
	"github.com/certbank/certbank/paywall/store/memstore"
	"github.com/certbank/certbank/paywall/x402"
)

// fakeFacilitator verifies with verifyErr and settles with settle.
type fakeFacilitator struct {
	verifyErr error
	settle    func() (x402.Settlement, error)
	settled   atomic.Int64
}

func (f *fakeFacilitator) Verify(ctx context.Context, p *x402.Payment, r x402.Requirement) (string, error) {
	return p.Authorization.From, f.verifyErr
}

func (f *fakeFacilitator) Settle(ctx context.Context, p *x402.Payment, r x402.Requirement) (x402.Settlement, error) {
	f.settled.Add(1)
	return f.settle()
}

// fakeReconciler answers what the chain says of every authorization.
type fakeReconciler struct {
	mu  sync.Mutex
	st  x402.Settlement
	err error
}

func (r *fakeReconciler) set(st x402.Settlement, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.st, r.err = st, err
}

func (r *fakeReconciler) Reconcile(ctx context.Context, payer, nonce string) (x402.Settlement, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.st, r.err
}

var (
	now = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	req = x402.Requirement{Network: "base-sepolia", PayTo: "0xe16deA7B82DCB0BbBB5fDb38Cf11B248EEef4ee6", Amount: 10000,
		Resource: "http://certbank.test/api/v1/x402?certification=cissp&limit=10", MimeType: "application/json", MaxTimeoutSeconds: 300}
	settledOK   = x402.Settlement{Transaction: "0xabc", Network: "base-sepolia"}
	pendingTx   = x402.Settlement{Transaction: "0xabc", Network: "base-sepolia", Pending: true}
	reverted    = &x402.Error{Reason: x402.ReasonTransactionFailed, Message: "reverted"}
	chainDown   = certbank.Errorf(certbank.Unavailable, "the chain does not answer")
	badSig      = &x402.Error{Reason: x402.ReasonSignature, Message: "bad signature"}
	stillUnsure = &x402.Error{Reason: x402.ReasonSettlementPending, Message: "not yet"}
)

func payment(t *testing.T) *x402.Payment {
	t.Helper()
	_, key := x402.DevWallet(0)
	header, err := x402.SignPayment(key, req, x402.PaymentParams{}, now)
	if err != nil {
		t.Fatal(err)
	}
	p, err := x402.Decode(x402.HeaderPayment, header)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

type env struct {
	st  *memstore.Store
	fac *fakeFacilitator
	rec *fakeReconciler
	l   *ledger.Ledger
	pay *x402.Payment
}

func newEnv(t *testing.T, settle func() (x402.Settlement, error), verifyErr error) *env {
	e := &env{st: memstore.New(), fac: &fakeFacilitator{settle: settle, verifyErr: verifyErr}, rec: &fakeReconciler{st: pendingTx, err: stillUnsure}}
	l, err := ledger.New(ledger.Config{Store: e.st, Facilitator: e.fac, Reconciler: e.rec, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	e.l, e.pay = l, payment(t)
	return e
}

// row returns the payment's ledger state ("" status: no row).
func (e *env) row(t *testing.T) store.State {
	t.Helper()
	payer, nonce := ledger.Key(e.pay)
	p, err := e.st.PaymentByNonce(context.Background(), payer, nonce)
	if certbank.ErrorCode(err) == certbank.NotFound {
		return store.State{}
	}
	if err != nil {
		t.Fatal(err)
	}
	return store.State{Status: p.Status, Reason: p.Reason}
}

func TestFirstAttempt(t *testing.T) {
	tests := []struct {
		name        string
		settle      func() (x402.Settlement, error)
		verifyErr   error
		want        ledger.Verdict
		wantSettled bool // the outcome carries a settlement
		wantRow     store.State
	}{
		{"settled", func() (x402.Settlement, error) { return settledOK, nil }, nil, ledger.Deliver, true, store.State{Status: store.Settled}},
		{"reverted", func() (x402.Settlement, error) { return x402.Settlement{Transaction: "0xabc"}, reverted }, nil, ledger.Refuse, true, store.State{Status: store.Failed, Reason: x402.ReasonTransactionFailed}},
		{"verification refused", nil, badSig, ledger.Refuse, false, store.State{}},
		{"nothing broadcast", func() (x402.Settlement, error) { return x402.Settlement{}, chainDown }, nil, ledger.Fail, false, store.State{}},
		{"receipt late", func() (x402.Settlement, error) { return pendingTx, nil }, nil, ledger.Pending, true, store.State{Status: store.Pending, Reason: x402.ReasonSettlementPending}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, tc.settle, tc.verifyErr)
			o := e.l.Accept(context.Background(), e.pay, req)
			if o.Verdict != tc.want || (o.Settlement != nil) != tc.wantSettled {
				t.Fatalf("outcome %v (settlement %v, err %v), want %v (settlement %v)", o.Verdict, o.Settlement, o.Err, tc.want, tc.wantSettled)
			}
			if got := e.row(t); got != tc.wantRow {
				t.Errorf("ledger row %+v, want %+v", got, tc.wantRow)
			}
		})
	}
}

// TestRetryOfPending: a retry of a pending payment is delivered once the
// chain says it settled, and only once.
func TestRetryOfPending(t *testing.T) {
	e := newEnv(t, func() (x402.Settlement, error) { return pendingTx, nil }, nil)
	ctx := context.Background()
	if o := e.l.Accept(ctx, e.pay, req); o.Verdict != ledger.Pending {
		t.Fatalf("first attempt: %v", o.Verdict)
	}
	// Still unknown: pending again, nothing delivered.
	if o := e.l.Accept(ctx, e.pay, req); o.Verdict != ledger.Pending {
		t.Fatalf("retry while unknown: %v (%v), want pending", o.Verdict, o.Err)
	}
	e.rec.set(settledOK, nil)
	if o := e.l.Accept(ctx, e.pay, req); o.Verdict != ledger.Deliver {
		t.Fatalf("retry after settlement: %v (%v), want deliver", o.Verdict, o.Err)
	}
	if got := e.row(t); got != (store.State{Status: store.Settled}) {
		t.Errorf("row %+v, want settled", got)
	}
	if o := e.l.Accept(ctx, e.pay, req); o.Verdict != ledger.Refuse || x402.ReasonOf(o.Err) != x402.ReasonNonceUsed {
		t.Errorf("second retry after delivery: %v (%v), want a nonce_used refusal", o.Verdict, o.Err)
	}
	if n := e.fac.settled.Load(); n != 1 {
		t.Errorf("settled %d times, want once", n)
	}
}

// TestUndelivered: the reconciler finds a pending payment settled; it
// waits, undelivered, for the payer's retry, which gets the content once.
func TestUndelivered(t *testing.T) {
	e := newEnv(t, func() (x402.Settlement, error) { return pendingTx, nil }, nil)
	ctx := context.Background()
	e.l.Accept(ctx, e.pay, req)
	e.rec.set(settledOK, nil)
	e.l.ReconcilePending(ctx)
	if got := e.row(t); got != (store.State{Status: store.Settled, Reason: store.ReasonUndelivered}) {
		t.Fatalf("after reconciliation: %+v, want settled/undelivered", got)
	}
	e.rec.set(x402.Settlement{}, stillUnsure) // the retry must not need the chain
	if o := e.l.Accept(ctx, e.pay, req); o.Verdict != ledger.Deliver {
		t.Fatalf("retry of an undelivered payment: %v (%v), want deliver", o.Verdict, o.Err)
	}
	if got := e.row(t); got != (store.State{Status: store.Settled}) {
		t.Errorf("after delivery: %+v, want settled", got)
	}
	if o := e.l.Accept(ctx, e.pay, req); o.Verdict != ledger.Refuse {
		t.Errorf("second retry: %v, want refuse", o.Verdict)
	}
}

// TestReconciledFailure: a pending payment whose transfer reverted fails.
func TestReconciledFailure(t *testing.T) {
	e := newEnv(t, func() (x402.Settlement, error) { return pendingTx, nil }, nil)
	ctx := context.Background()
	e.l.Accept(ctx, e.pay, req)
	e.rec.set(x402.Settlement{}, reverted)
	e.l.ReconcilePending(ctx)
	if got := e.row(t); got != (store.State{Status: store.Failed, Reason: x402.ReasonTransactionFailed}) {
		t.Fatalf("after reconciliation: %+v, want failed/transaction_failed", got)
	}
	if o := e.l.Accept(ctx, e.pay, req); o.Verdict != ledger.Refuse {
		t.Errorf("retry of a failed payment: %v, want refuse", o.Verdict)
	}
}

// TestConcurrentClaimants: of many concurrent retries of one settled
// pending payment (and the reconciler beside them), exactly one gets the
// content.
func TestConcurrentClaimants(t *testing.T) {
	for _, undelivered := range []bool{false, true} {
		mem := memstore.New()
		f := memstore.NewFaulty(mem)
		rec := &fakeReconciler{st: pendingTx, err: stillUnsure}
		fac := &fakeFacilitator{settle: func() (x402.Settlement, error) { return pendingTx, nil }}
		l, err := ledger.New(ledger.Config{Store: f, Facilitator: fac, Reconciler: rec, Now: func() time.Time { return now }})
		if err != nil {
			t.Fatal(err)
		}
		pay, ctx := payment(t), context.Background()
		l.Accept(ctx, pay, req)
		rec.set(settledOK, nil)
		if undelivered {
			l.ReconcilePending(ctx)
		}
		const n = 20
		// Hold every claimant at its claim until all have read the
		// ledger row, so that they race for it.
		var arrived atomic.Int64
		all := make(chan struct{})
		f.On("TransitionPayment", func() error {
			if arrived.Add(1) == n {
				close(all)
			}
			select {
			case <-all:
			case <-time.After(time.Second):
			}
			return nil
		})
		var wg sync.WaitGroup
		var delivered, refused atomic.Int64
		for range n {
			wg.Go(func() {
				switch l.Accept(ctx, pay, req).Verdict {
				case ledger.Deliver:
					delivered.Add(1)
				case ledger.Refuse:
					refused.Add(1)
				}
			})
		}
		wg.Wait()
		if delivered.Load() != 1 || refused.Load() != n-1 {
			t.Errorf("undelivered=%v: %d delivered, %d refused of %d claimants; want 1 and %d", undelivered, delivered.Load(), refused.Load(), n, n-1)
		}
	}
}

// TestStoreFailureOnRetry: a store error while claiming delivers nothing,
// and the same retry can come again.
func TestStoreFailureOnRetry(t *testing.T) {
	st := memstore.New()
	f := memstore.NewFaulty(st)
	rec := &fakeReconciler{st: settledOK}
	fac := &fakeFacilitator{settle: func() (x402.Settlement, error) { return pendingTx, nil }}
	l, err := ledger.New(ledger.Config{Store: f, Facilitator: fac, Reconciler: rec, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	pay, ctx := payment(t), context.Background()
	l.Accept(ctx, pay, req)
	f.On("TransitionPayment", func() error { return certbank.Errorf(certbank.Unavailable, "database down") })
	if o := l.Accept(ctx, pay, req); o.Verdict != ledger.Fail || certbank.ErrorCode(o.Err) != certbank.Unavailable {
		t.Fatalf("retry with the store down: %v (%v), want fail/Unavailable", o.Verdict, o.Err)
	}
	f.On("TransitionPayment", nil)
	if o := l.Accept(ctx, pay, req); o.Verdict != ledger.Deliver {
		t.Fatalf("the same retry after the store recovered: %v (%v), want deliver", o.Verdict, o.Err)
	}
}
