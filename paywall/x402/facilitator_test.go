package x402

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/certbank/certbank"
	"github.com/ethereum/go-ethereum/crypto"
)

// newFacilitator serves a FacilitatorServer over f and returns a client.
func newFacilitator(t *testing.T, f Facilitator) (*httptest.Server, *FacilitatorClient) {
	t.Helper()
	srv := httptest.NewServer(&FacilitatorServer{Facilitator: f, Networks: []string{DevNetwork}})
	t.Cleanup(srv.Close)
	return srv, &FacilitatorClient{URL: srv.URL, HTTPClient: srv.Client()}
}

func TestFacilitatorClientServer(t *testing.T) {
	d := newDevChain(t, DevChainConfig{})
	_, client := newFacilitator(t, NewLocal(d))
	ctx := context.Background()
	req := testRequirement()
	payer, key := DevWallet(0)

	for i, version := range []int{1, 2} {
		p := makePayment(t, version, req, key, nil)
		got, err := client.Verify(ctx, p, req)
		if err != nil || got != payer {
			t.Fatalf("v%d Verify = %s, %v", version, got, err)
		}
		s, err := client.Settle(ctx, p, req)
		if err != nil {
			t.Fatalf("v%d Settle: %v", version, err)
		}
		if s.Pending || s.Payer != payer || s.Network != DevNetwork || len(s.Transaction) != 66 {
			t.Fatalf("settlement = %+v", s)
		}
		if got := balance(t, d, testPayTo); got != int64(i+1)*10000 {
			t.Errorf("payee balance = %d", got)
		}
		// The facilitator re-verifies on settle: a replay is refused.
		_, err = client.Settle(ctx, p, req)
		wantReason(t, err, ReasonNonceUsed)
		_, err = client.Verify(ctx, p, req)
		wantReason(t, err, ReasonNonceUsed)
	}

	t.Run("remote rejection", func(t *testing.T) {
		poor, err := crypto.GenerateKey()
		if err != nil {
			t.Fatal(err)
		}
		p := makePayment(t, 2, req, formatPrivateKey(poor), nil)
		_, err = client.Verify(ctx, p, req)
		wantReason(t, err, ReasonInsufficientBalance)
		_, err = client.Settle(ctx, p, req)
		wantReason(t, err, ReasonInsufficientBalance)
	})

	t.Run("local checks first", func(t *testing.T) {
		p := makePayment(t, 1, req, key, nil)
		p.Signature[5] ^= 1
		_, err := client.Verify(ctx, p, req)
		wantReason(t, err, ReasonSignature)
	})

	t.Run("supported", func(t *testing.T) {
		kinds, err := client.Supported(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := []SupportedKind{{1, "exact", DevNetwork}, {2, "exact", "eip155:84532"}}
		if len(kinds) != 2 || kinds[0] != want[0] || kinds[1] != want[1] {
			t.Fatalf("kinds = %+v", kinds)
		}
	})
}

func TestFacilitatorServerRequests(t *testing.T) {
	srv, _ := newFacilitator(t, NewLocal(fakeSettler{fakeChain: fakeChain{balance: bigInt(1e9)}}))
	req := testRequirement()
	_, key := DevWallet(0)
	good := makePayment(t, 1, req, key, nil)
	body := func(version int, payload, reqs any) string {
		b, _ := json.Marshal(map[string]any{"x402Version": version, "paymentPayload": payload, "paymentRequirements": reqs})
		return string(b)
	}
	v1req := json.RawMessage(req.wireJSON(1))
	mainnet := req
	mainnet.Network = "base" // not served by this facilitator
	noExtra := map[string]any{}
	_ = json.Unmarshal(req.wireJSON(2), &noExtra)
	delete(noExtra, "extra")

	tests := []struct {
		name, method, path, body string
		status                   int
		reason                   string
	}{
		{"verify ok", "POST", "/verify", body(1, json.RawMessage(good.JSON()), v1req), 200, ""},
		{"verify malformed JSON", "POST", "/verify", `{"x402Version":1,`, 400, ReasonInvalidPayload},
		{"verify oversized", "POST", "/verify", `{"x402Version":1,"paymentPayload":"` + strings.Repeat("a", 70<<10) + `"}`, 400, ReasonInvalidPayload},
		{"verify version 3", "POST", "/verify", body(3, json.RawMessage(good.JSON()), v1req), 400, ReasonInvalidVersion},
		{"verify version mismatch", "POST", "/verify", body(2, json.RawMessage(good.JSON()), v1req), 400, ReasonInvalidVersion},
		{"verify without requirements", "POST", "/verify", `{"x402Version":1,"paymentPayload":` + string(good.JSON()) + `}`, 400, ReasonInvalidPayload},
		{"verify unserved network", "POST", "/verify", body(1, json.RawMessage(good.JSON()), json.RawMessage(mainnet.wireJSON(1))), 400, ReasonNetworkMismatch},
		{"verify requirement without extra", "POST", "/verify", body(2, json.RawMessage(makePayment(t, 2, req, key, nil).JSON()), noExtra), 400, ReasonMissingDomain},
		{"settle malformed", "POST", "/settle", `[]`, 400, ReasonInvalidPayload},
		{"verify with GET", "GET", "/verify", "", 405, ""},
		{"supported with POST", "POST", "/supported", "", 405, ""},
		{"unknown path", "GET", "/discovery/resources", "", 404, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := http.NewRequest(tt.method, srv.URL+tt.path, strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			resp, err := srv.Client().Do(r)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			raw, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.status {
				t.Fatalf("status = %d (%s), want %d", resp.StatusCode, raw, tt.status)
			}
			var got map[string]any
			if err := json.Unmarshal(raw, &got); err != nil {
				t.Fatalf("body %q is not JSON", raw)
			}
			reason, _ := got["invalidReason"].(string)
			if r, ok := got["errorReason"].(string); ok {
				reason = r
			}
			if reason != tt.reason {
				t.Errorf("reason = %q, want %q (%s)", reason, tt.reason, raw)
			}
		})
	}
}

// fakeSettler settles everything with a fixed answer.
type fakeSettler struct {
	fakeChain
	settlement Settlement
	err        error
}

func (f fakeSettler) Settle(context.Context, *Payment, Requirement) (Settlement, error) {
	return f.settlement, f.err
}

func TestFacilitatorClientOutcomes(t *testing.T) {
	req := testRequirement()
	payer, key := DevWallet(0)
	ctx := context.Background()

	t.Run("settlement pending", func(t *testing.T) {
		pending := Settlement{Transaction: "0x" + strings.Repeat("ab", 32), Network: DevNetwork, Payer: payer, Pending: true}
		_, client := newFacilitator(t, NewLocal(fakeSettler{
			fakeChain:  fakeChain{balance: bigInt(1e9)},
			settlement: pending,
			err:        newError(ReasonSettlementPending, "not confirmed yet"),
		}))
		s, err := client.Settle(ctx, makePayment(t, 2, req, key, nil), req)
		wantReason(t, err, ReasonSettlementPending)
		if !s.Pending || s.Transaction != pending.Transaction {
			t.Fatalf("settlement = %+v", s)
		}
	})

	t.Run("chain down behind the facilitator", func(t *testing.T) {
		_, client := newFacilitator(t, NewLocal(fakeSettler{fakeChain: fakeChain{err: io.ErrUnexpectedEOF}}))
		_, err := client.Verify(ctx, makePayment(t, 1, req, key, nil), req)
		wantReason(t, err, ReasonUnexpectedVerify)
	})

	t.Run("facilitator unreachable", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		srv.Close()
		client := &FacilitatorClient{URL: srv.URL, VerifyTimeout: time.Second}
		_, err := client.Verify(ctx, makePayment(t, 1, req, key, nil), req)
		wantReason(t, err, ReasonUnexpectedVerify)
		if certbank.ErrorCode(err) != certbank.Unavailable {
			t.Errorf("code = %s", certbank.ErrorCode(err))
		}
		_, err = client.Settle(ctx, makePayment(t, 1, req, key, nil), req)
		wantReason(t, err, ReasonUnexpectedSettle)
	})

	for _, tt := range []struct {
		name    string
		handler http.HandlerFunc
		reason  string
	}{
		{"500 without a result", func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "boom", http.StatusInternalServerError)
		}, ReasonUnexpectedVerify},
		{"400 with a result", func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"isValid":false,"invalidReason":"invalid_exact_evm_signature"}`))
		}, ReasonSignature},
		{"oversized answer", func(w http.ResponseWriter, _ *http.Request) {
			w.Write(bytes.Repeat([]byte(" "), maxFacilitatorBody+10))
		}, ReasonUnexpectedVerify},
		{"slow answer", func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-time.After(500 * time.Millisecond):
			}
		}, ReasonUnexpectedVerify},
		{"other payer", func(w http.ResponseWriter, _ *http.Request) {
			w.Write([]byte(`{"isValid":true,"payer":"0x000000000000000000000000000000000000dEaD"}`))
		}, ReasonSignature},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(tt.handler)
			t.Cleanup(srv.Close)
			client := &FacilitatorClient{URL: srv.URL, VerifyTimeout: 200 * time.Millisecond}
			_, err := client.Verify(ctx, makePayment(t, 1, req, key, nil), req)
			wantReason(t, err, tt.reason)
		})
	}
}
