package x402

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/certbank/certbank"
)

// paidServer is a tiny x402 resource server built from this package: a 402
// with both the v1 body and the v2 header, then Decode, Verify, Settle and
// the settlement header.
func paidServer(t testing.TB, f Facilitator, price certbank.USDC, offerV1 bool) *httptest.Server {
	t.Helper()
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/free" {
			w.Write([]byte(`{"free":true}`))
			return
		}
		req := testRequirement()
		req.Amount = price
		req.Resource = srv.URL + r.URL.RequestURI()
		name, value := HeaderPayment, r.Header.Get(HeaderPayment)
		if v := r.Header.Get(HeaderPaymentSignature); v != "" {
			name, value = HeaderPaymentSignature, v
		}
		fail := func(msg string) {
			w.Header().Set(HeaderPaymentRequired, req.V2Header(msg))
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusPaymentRequired)
			if offerV1 {
				w.Write(req.V1Body(msg))
			} else {
				w.Write([]byte(`{}`))
			}
		}
		if value == "" {
			fail("payment required")
			return
		}
		p, err := Decode(name, value)
		if err != nil {
			fail(ReasonOf(err))
			return
		}
		if _, err := f.Verify(r.Context(), p, req); err != nil {
			fail(ReasonOf(err))
			return
		}
		s, err := f.Settle(r.Context(), p, req)
		if err != nil {
			fail(ReasonOf(err))
			return
		}
		hn, hv := SettlementHeader(p.Version, s, "")
		w.Header().Set(hn, hv)
		w.Write([]byte(`{"questions":[]}`))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestPay(t *testing.T) {
	d := newDevChain(t, DevChainConfig{})
	ctx := context.Background()
	payer, key := DevWallet(2)
	srv := paidServer(t, NewLocal(d), 10000, true)
	start := balance(t, d, payer)

	for i, tt := range []struct {
		preferV2    bool
		wantVersion int
		wantNetwork string
	}{
		{false, 1, DevNetwork},
		{true, 2, "eip155:84532"},
	} {
		res, err := Pay(ctx, srv.Client(), srv.URL+"/api/v1/x402?certification=cissp&limit=10", key, 10000, tt.preferV2)
		if err != nil {
			t.Fatalf("Pay: %v", err)
		}
		if res.Status != http.StatusOK || string(res.Body) != `{"questions":[]}` {
			t.Fatalf("result %d %s", res.Status, res.Body)
		}
		if res.Version != tt.wantVersion || res.Amount != 10000 {
			t.Errorf("version %d amount %s", res.Version, res.Amount)
		}
		s := res.Settlement
		if s == nil || !s.Success || s.Network != tt.wantNetwork || s.Payer != payer || len(s.Transaction) != 66 {
			t.Fatalf("settlement = %+v", s)
		}
		if got, want := balance(t, d, payer), start-int64(i+1)*10000; got != want {
			t.Errorf("payer balance = %d, want %d", got, want)
		}
	}

	t.Run("too expensive", func(t *testing.T) {
		before := balance(t, d, payer)
		res, err := Pay(ctx, srv.Client(), srv.URL+"/x", key, 9999, false)
		if err == nil || !strings.Contains(err.Error(), "more than the maximum") {
			t.Fatalf("err = %v", err)
		}
		if res.Status != http.StatusPaymentRequired || res.Amount != 0 {
			t.Errorf("result = %+v", res)
		}
		if got := balance(t, d, payer); got != before {
			t.Errorf("balance moved from %d to %d", before, got)
		}
	})

	t.Run("free resource", func(t *testing.T) {
		res, err := Pay(ctx, srv.Client(), srv.URL+"/free", key, 1, false)
		if err != nil || res.Status != 200 || res.Amount != 0 || res.Settlement != nil {
			t.Fatalf("Pay = %+v, %v", res, err)
		}
	})

	t.Run("v2-only server", func(t *testing.T) {
		v2only := paidServer(t, NewLocal(d), 7000, false)
		res, err := Pay(ctx, v2only.Client(), v2only.URL+"/x", key, 10000, false)
		if err != nil || res.Status != 200 || res.Version != 2 || res.Amount != 7000 {
			t.Fatalf("Pay = %+v, %v", res, err)
		}
	})

	t.Run("payer without funds", func(t *testing.T) {
		poor := "0x" + strings.Repeat("11", 32)
		res, err := Pay(ctx, srv.Client(), srv.URL+"/x", poor, 10000, true)
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != http.StatusPaymentRequired || res.Settlement != nil {
			t.Fatalf("result = %+v", res)
		}
	})

	t.Run("bad key", func(t *testing.T) {
		if _, err := Pay(ctx, srv.Client(), srv.URL+"/x", "not a key", 10000, false); err == nil {
			t.Fatal("Pay with a bad key succeeded")
		}
	})
}

func TestPayNoRequirements(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusPaymentRequired)
		w.Write([]byte(`{"x402Version":1,"error":"x","accepts":[{"scheme":"exact","network":"base-mainnet"}]}`))
	}))
	t.Cleanup(srv.Close)
	_, key := DevWallet(0)
	_, err := Pay(context.Background(), srv.Client(), srv.URL, key, 10000, false)
	if err == nil || !strings.Contains(err.Error(), "no payable requirement") {
		t.Fatalf("err = %v", err)
	}
}
