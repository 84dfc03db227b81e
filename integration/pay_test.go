package integration_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/paywall"
	"github.com/certbank/certbank/paywall/sqlite"
	"github.com/certbank/certbank/paywall/store"
	"github.com/certbank/certbank/paywall/x402"
)

// The pay-per-request route over HTTP against the development chain: every
// bad input of issue 4 with its exact status and reason, replays, and what
// happens when settlement fails.

const payTo = "0x5a0b54d5dc17e0aadc383d2db43b0a0d3e029c4c"

type payEnv struct {
	srv   *httptest.Server
	chain *x402.DevChain
	store store.Store
	base  string
}

// faultyFacilitator verifies for real and fails where told to.
type faultyFacilitator struct {
	x402.Facilitator
	verifyErr, settleErr error
}

func (f faultyFacilitator) Verify(ctx context.Context, p *x402.Payment, r x402.Requirement) (string, error) {
	if f.verifyErr != nil {
		return "", f.verifyErr
	}
	return f.Facilitator.Verify(ctx, p, r)
}

func (f faultyFacilitator) Settle(ctx context.Context, p *x402.Payment, r x402.Requirement) (x402.Settlement, error) {
	if f.settleErr != nil {
		return x402.Settlement{}, f.settleErr
	}
	return f.Facilitator.Settle(ctx, p, r)
}

var (
	chainOnce sync.Once
	chain     *x402.DevChain
	chainErr  error
)

func devChain(t *testing.T) *x402.DevChain {
	t.Helper()
	chainOnce.Do(func() {
		chain, chainErr = x402.NewDevChain(context.Background(), x402.DevChainConfig{Network: x402.DevNetwork, Wallets: 4})
	})
	if chainErr != nil {
		t.Fatal(chainErr)
	}
	return chain
}

func newPayEnv(t *testing.T, wrap func(x402.Facilitator) x402.Facilitator) *payEnv {
	t.Helper()
	return newPayEnvReconciling(t, wrap, -1)
}

// newPayEnvReconciling is newPayEnv with the background reconciler running
// every reconcileEvery (negative: never).
func newPayEnvReconciling(t *testing.T, wrap func(x402.Facilitator) x402.Facilitator, reconcileEvery time.Duration) *payEnv {
	t.Helper()
	dc := devChain(t)
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "pay.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	bank := testBank(60)
	bank.Site.Payment.PayTo = payTo
	var fac x402.Facilitator = x402.NewLocal(dc)
	if wrap != nil {
		fac = wrap(fac)
	}
	s, err := paywall.New(paywall.Config{Bank: bank, Store: db, Pay: &paywall.PayConfig{Facilitator: fac, Reconciler: dc, ReconcileEvery: reconcileEvery}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	return &payEnv{srv: srv, chain: dc, store: db, base: bank.Site.BaseURL}
}

// requirement is the server's own requirement for a query.
func requirement(amount certbank.USDC) x402.Requirement {
	return x402.Requirement{Network: x402.DevNetwork, PayTo: payTo, Amount: amount, Resource: "http://certbank.test/api/v1/x402", MaxTimeoutSeconds: 300}
}

type payResp struct {
	status int
	header http.Header
	body   map[string]any
	raw    string
}

func (e *payEnv) get(t *testing.T, query, header, value string) payResp {
	t.Helper()
	req, _ := http.NewRequest("GET", e.srv.URL+"/api/v1/x402?"+query, nil)
	if header != "" {
		req.Header.Set(header, value)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	r := payResp{status: res.StatusCode, header: res.Header, raw: string(b)}
	json.Unmarshal(b, &r.body)
	return r
}

func (e *payEnv) balance(t *testing.T, addr string) *big.Int {
	t.Helper()
	b, err := e.chain.BalanceOf(context.Background(), addr)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestPayRefusals(t *testing.T) {
	e := newPayEnv(t, nil)
	payer, key := x402.DevWallet(0)
	_, otherKey := x402.DevWallet(1)
	now := time.Now()
	req := requirement(7000) // limit=10, quiz mode
	sign := func(p x402.PaymentParams) string {
		v, err := x402.SignPayment(key, req, p, now)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	valid := sign(x402.PaymentParams{})
	var decoded map[string]any
	raw, _ := base64.StdEncoding.DecodeString(valid)
	json.Unmarshal(raw, &decoded)
	decoded["x402Version"] = 3
	wrongVersion, _ := json.Marshal(decoded)
	const q10 = "certification=cissp&limit=10"
	tests := []struct {
		name, query, value string
		status             int
		reason             string
	}{
		{"malformed base64", q10, "%%%not base64%%%", 402, x402.ReasonInvalidPayload},
		{"malformed JSON", q10, b64(`{"x402Version":1,`), 402, x402.ReasonInvalidPayload},
		{"oversized header", q10, strings.Repeat("A", 9000), 402, x402.ReasonInvalidPayload},
		{"wrong x402Version", q10, base64.StdEncoding.EncodeToString(wrongVersion), 402, x402.ReasonInvalidVersion},
		{"unknown scheme", q10, sign(x402.PaymentParams{Scheme: "upto"}), 402, x402.ReasonScheme},
		{"wrong network", q10, sign(x402.PaymentParams{Network: "base"}), 402, x402.ReasonNetworkMismatch},
		{"wrong payee", q10, sign(x402.PaymentParams{To: "0x000000000000000000000000000000000000dEaD"}), 402, x402.ReasonRecipientMismatch},
		{"value too low", q10, sign(x402.PaymentParams{Value: 6999}), 402, x402.ReasonValueMismatch},
		{"value too high", q10, sign(x402.PaymentParams{Value: 7001}), 402, x402.ReasonValueMismatch},
		{"validBefore past", q10, sign(x402.PaymentParams{ValidBefore: now.Add(-time.Minute)}), 402, x402.ReasonValidBefore},
		{"validBefore too close", q10, sign(x402.PaymentParams{ValidBefore: now.Add(3 * time.Second)}), 402, x402.ReasonValidBefore},
		{"validAfter in the future", q10, sign(x402.PaymentParams{ValidAfter: now.Add(time.Minute)}), 402, x402.ReasonValidAfter},
		{"bad signature (wrong EIP-712 name)", q10, sign(x402.PaymentParams{TokenName: "USD Coin"}), 402, x402.ReasonSignature},
		{"signed by someone other than from", q10, sign(x402.PaymentParams{SignerKey: otherKey}), 402, x402.ReasonSignature},
		{"high-s signature", q10, sign(x402.PaymentParams{HighS: true}), 402, x402.ReasonSignature},
		{"payment for a cheaper request", "certification=cissp&limit=25", valid, 402, x402.ReasonValueMismatch},
		{"filter with fewer questions than limit", "certification=cissp&limit=25&difficulty=hard", valid, 400, "INVALID_PARAMS"},
		{"limit not offered", "certification=cissp&limit=11", valid, 400, "INVALID_PARAMS"},
	}
	before := e.balance(t, payer)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := e.get(t, tc.query, "X-PAYMENT", tc.value)
			got := r.body["error"]
			if tc.status == 400 {
				got = r.body["code"]
			}
			if r.status != tc.status || got != tc.reason {
				t.Fatalf("got %d %s, want %d %s", r.status, r.raw, tc.status, tc.reason)
			}
			if _, leaked := r.body["questions"]; leaked {
				t.Fatal("a refused payment returned questions")
			}
			if tc.status == 402 {
				if r.header.Get("PAYMENT-REQUIRED") == "" || r.header.Get("Cache-Control") != "no-store" || r.body["accepts"] == nil {
					t.Errorf("a refusal must carry the requirements again: %v %s", r.header, r.raw)
				}
			}
		})
	}
	if after := e.balance(t, payer); after.Cmp(before) != 0 {
		t.Errorf("refused payments moved money: %s → %s", before, after)
	}
	// The valid payment still works afterwards: none of the refusals used its nonce.
	if r := e.get(t, q10, "X-PAYMENT", valid); r.status != 200 || r.body["meta"].(map[string]any)["price_paid_usdc"] != "0.007" {
		t.Fatalf("valid payment: %d %s", r.status, r.raw)
	}
}

func TestPayInsufficientBalance(t *testing.T) {
	e := newPayEnv(t, nil)
	// A key with no test USDC at all.
	v, err := x402.SignPayment("0x"+strings.Repeat("42", 32), requirement(7000), x402.PaymentParams{}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	r := e.get(t, "certification=cissp&limit=10", "X-PAYMENT", v)
	if r.status != 402 || r.body["error"] != x402.ReasonInsufficientBalance {
		t.Fatalf("got %d %s", r.status, r.raw)
	}
}

func TestPayReplay(t *testing.T) {
	e := newPayEnv(t, nil)
	_, key := x402.DevWallet(2)
	v, err := x402.SignPayment(key, requirement(10000), x402.PaymentParams{}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	const q = "certification=pmp&limit=10&include_answer=true"
	before := e.balance(t, payTo)
	var wg sync.WaitGroup
	var mu sync.Mutex
	statuses := map[int]int{}
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := e.get(t, q, "X-PAYMENT", v)
			mu.Lock()
			statuses[r.status]++
			mu.Unlock()
			if r.status == 200 {
				if r.header.Get("X-PAYMENT-RESPONSE") == "" || len(r.body["questions"].([]any)) != 10 {
					t.Errorf("paid response: %v %s", r.header, r.raw)
				}
			} else if r.status != 402 || r.body["error"] != x402.ReasonNonceUsed {
				t.Errorf("copy: %d %s", r.status, r.raw)
			}
		}()
	}
	wg.Wait()
	if statuses[200] != 1 || statuses[402] != 49 {
		t.Fatalf("50 concurrent copies: %v, want exactly one 200", statuses)
	}
	if got := new(big.Int).Sub(e.balance(t, payTo), before); got.Int64() != 10000 {
		t.Fatalf("payee received %s, want exactly one transfer of 10000", got)
	}
	// sequential replay after settlement
	if r := e.get(t, q, "X-PAYMENT", v); r.status != 402 || r.body["error"] != x402.ReasonNonceUsed {
		t.Fatalf("replay: %d %s", r.status, r.raw)
	}
	ps, err := e.store.Payments(context.Background(), store.PaymentFilter{})
	if err != nil || len(ps) != 1 || ps[0].Status != store.Settled || ps[0].Transaction == "" || ps[0].Amount != 10000 {
		t.Fatalf("ledger: %+v %v", ps, err)
	}
}

func TestPaySettlementFailures(t *testing.T) {
	tests := []struct {
		name     string
		fault    func(x402.Facilitator) x402.Facilitator
		status   int
		reason   string
		recorded store.PaymentStatus // ledger status afterwards, "" for no row
	}{
		{"settlement reverted", func(f x402.Facilitator) x402.Facilitator {
			return faultyFacilitator{Facilitator: f, settleErr: &x402.Error{Reason: x402.ReasonTransactionFailed, Message: "the token refused the transfer; nothing was charged"}}
		}, 402, x402.ReasonTransactionFailed, store.Failed},
		{"chain unreachable at verification", func(f x402.Facilitator) x402.Facilitator {
			return faultyFacilitator{Facilitator: f, verifyErr: &x402.Error{Reason: x402.ReasonUnexpectedVerify, Message: "the chain did not answer; retry later"}}
		}, 503, "UNAVAILABLE", ""},
		{"chain unreachable at settlement", func(f x402.Facilitator) x402.Facilitator {
			return faultyFacilitator{Facilitator: f, settleErr: &x402.Error{Reason: x402.ReasonUnexpectedSettle, Message: "nothing was sent; retry later"}}
		}, 503, "UNAVAILABLE", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newPayEnv(t, tc.fault)
			payer, key := x402.DevWallet(3)
			v, err := x402.SignPayment(key, requirement(7000), x402.PaymentParams{}, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			before := e.balance(t, payer)
			r := e.get(t, "certification=cissp&limit=10", "X-PAYMENT", v)
			got := r.body["error"]
			if tc.status == 503 {
				got = r.body["code"]
			}
			if r.status != tc.status || got != tc.reason {
				t.Fatalf("got %d %s, want %d %s", r.status, r.raw, tc.status, tc.reason)
			}
			if strings.Contains(r.raw, `"questions"`) {
				t.Fatal("content was sent although settlement failed")
			}
			if e.balance(t, payer).Cmp(before) != 0 {
				t.Fatal("money moved")
			}
			ps, _ := e.store.Payments(context.Background(), store.PaymentFilter{})
			switch {
			case tc.recorded == "" && len(ps) != 0:
				t.Fatalf("the reservation was not released: %+v", ps)
			case tc.recorded != "" && (len(ps) != 1 || ps[0].Status != tc.recorded):
				t.Fatalf("ledger: %+v, want one %s row", ps, tc.recorded)
			}
		})
	}
}

// slowReceipts settles for real but reports the settlement as pending, as a
// backend does when the receipt does not arrive in time.
type slowReceipts struct{ x402.Facilitator }

func (f slowReceipts) Settle(ctx context.Context, p *x402.Payment, r x402.Requirement) (x402.Settlement, error) {
	st, err := f.Facilitator.Settle(ctx, p, r)
	if err != nil {
		return st, err
	}
	st.Pending = true
	return st, &x402.Error{Reason: x402.ReasonSettlementPending, Message: "the receipt did not arrive in time"}
}

func TestPayPendingIsReconciledNotChargedTwice(t *testing.T) {
	e := newPayEnv(t, func(f x402.Facilitator) x402.Facilitator { return slowReceipts{f} })
	payer, key := x402.DevWallet(1)
	v, err := x402.SignPayment(key, requirement(7000), x402.PaymentParams{}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	before := e.balance(t, payer)
	const q = "certification=cissp&limit=10"
	r := e.get(t, q, "X-PAYMENT", v)
	if r.status != 503 || !strings.Contains(r.raw, "settlement_pending") || strings.Contains(r.raw, `"questions"`) {
		t.Fatalf("pending settlement: %d %s", r.status, r.raw)
	}
	ps, _ := e.store.Payments(context.Background(), store.PaymentFilter{})
	if len(ps) != 1 || ps[0].Status != store.Pending || ps[0].Transaction == "" {
		t.Fatalf("ledger after timeout: %+v", ps)
	}
	// The client retries with the same payment: reconciled through
	// authorizationState, delivered, and charged once.
	r = e.get(t, q, "X-PAYMENT", v)
	if r.status != 200 || len(r.body["questions"].([]any)) != 10 || r.header.Get("X-PAYMENT-RESPONSE") == "" {
		t.Fatalf("retry: %d %s", r.status, r.raw)
	}
	if spent := new(big.Int).Sub(before, e.balance(t, payer)); spent.Int64() != 7000 {
		t.Fatalf("payer spent %s, want 7000 once", spent)
	}
	ps, _ = e.store.Payments(context.Background(), store.PaymentFilter{})
	if len(ps) != 1 || ps[0].Status != store.Settled {
		t.Fatalf("ledger after reconcile: %+v", ps)
	}
	// A third use is a replay.
	if r := e.get(t, q, "X-PAYMENT", v); r.status != 402 || r.body["error"] != x402.ReasonNonceUsed {
		t.Fatalf("replay after reconcile: %d %s", r.status, r.raw)
	}
}

// TestPayPendingConcurrentRetriesDeliverOnce: many retries of one pending
// payment at once are reconciled, and exactly one of them gets the content.
func TestPayPendingConcurrentRetriesDeliverOnce(t *testing.T) {
	e := newPayEnv(t, func(f x402.Facilitator) x402.Facilitator { return slowReceipts{f} })
	payer, key := x402.DevWallet(2)
	v, err := x402.SignPayment(key, requirement(7000), x402.PaymentParams{}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	before := e.balance(t, payer)
	const q = "certification=cissp&limit=10"
	if r := e.get(t, q, "X-PAYMENT", v); r.status != 503 {
		t.Fatalf("pending settlement: %d %s", r.status, r.raw)
	}
	const n = 20
	statuses := make([]int, n)
	reasons := make([]any, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			r := e.get(t, q, "X-PAYMENT", v)
			statuses[i], reasons[i] = r.status, r.body["error"]
		})
	}
	wg.Wait()
	ok := 0
	for i, st := range statuses {
		switch {
		case st == 200:
			ok++
		case st == 402 && reasons[i] == x402.ReasonNonceUsed:
		default:
			t.Errorf("retry %d: %d %v, want 200 once and otherwise 402 %s", i, st, reasons[i], x402.ReasonNonceUsed)
		}
	}
	if ok != 1 {
		t.Fatalf("%d of %d concurrent retries got the content, want exactly 1", ok, n)
	}
	if spent := new(big.Int).Sub(before, e.balance(t, payer)); spent.Int64() != 7000 {
		t.Fatalf("payer spent %s, want 7000 once", spent)
	}
}

// TestPayReconciledInBackgroundIsDeliveredOnRetry: when the background
// reconciler finds a pending payment settled before the payer retries, the
// retry still gets the content, once.
func TestPayReconciledInBackgroundIsDeliveredOnRetry(t *testing.T) {
	e := newPayEnvReconciling(t, func(f x402.Facilitator) x402.Facilitator { return slowReceipts{f} }, 20*time.Millisecond)
	_, key := x402.DevWallet(3)
	v, err := x402.SignPayment(key, requirement(7000), x402.PaymentParams{}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	const q = "certification=cissp&limit=10"
	if r := e.get(t, q, "X-PAYMENT", v); r.status != 503 {
		t.Fatalf("pending settlement: %d %s", r.status, r.raw)
	}
	var ps []store.Payment
	for deadline := time.Now().Add(10 * time.Second); ; {
		ps, _ = e.store.Payments(context.Background(), store.PaymentFilter{})
		if len(ps) == 1 && ps[0].Status == store.Settled {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the background reconciler did not settle the payment: %+v", ps)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if ps[0].Reason != store.ReasonUndelivered {
		t.Fatalf("reconciled in the background: reason %q, want %q", ps[0].Reason, store.ReasonUndelivered)
	}
	r := e.get(t, q, "X-PAYMENT", v)
	if r.status != 200 || len(r.body["questions"].([]any)) != 10 || r.header.Get("X-PAYMENT-RESPONSE") == "" {
		t.Fatalf("retry after background reconcile: %d %s", r.status, r.raw)
	}
	if r := e.get(t, q, "X-PAYMENT", v); r.status != 402 || r.body["error"] != x402.ReasonNonceUsed {
		t.Fatalf("second retry: %d %s, want a replay refusal", r.status, r.raw)
	}
	ps, _ = e.store.Payments(context.Background(), store.PaymentFilter{})
	if len(ps) != 1 || ps[0].Status != store.Settled || ps[0].Reason != "" {
		t.Fatalf("ledger after delivery: %+v", ps)
	}
}
