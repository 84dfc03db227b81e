package paywall_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/paywall"
	"github.com/certbank/certbank/paywall/store/memstore"
	"github.com/certbank/certbank/paywall/x402"
)

// settlingFacilitator accepts every payment and settles it at once.
type settlingFacilitator struct{}

func (settlingFacilitator) Verify(ctx context.Context, p *x402.Payment, r x402.Requirement) (string, error) {
	return p.Authorization.From, nil
}

func (settlingFacilitator) Settle(ctx context.Context, p *x402.Payment, r x402.Requirement) (x402.Settlement, error) {
	return x402.Settlement{Transaction: "0x" + strings.Repeat("ab", 32), Network: r.Network, Payer: p.Authorization.From}, nil
}

const testCard = `{"name":"io.github.certbank/certbank"}`

// doorEnv is a server over the in-memory store (through Faulty) with a
// paying route, a server card and one free feed.
func doorEnv(t *testing.T) (*httptest.Server, *memstore.Faulty) {
	t.Helper()
	st := memstore.NewFaulty(memstore.New())
	s, err := paywall.New(paywall.Config{Bank: testBank(60), Store: st,
		Pay: &paywall.PayConfig{Facilitator: settlingFacilitator{}},
		Static: map[string][]byte{"index.html": []byte("<h1>hi</h1>"), "404.html": []byte("<p>nope</p>"),
			".well-known/mcp/server-card.json": []byte(testCard), "api/cissp/questions-free.json": []byte(`{"questions":[]}`)}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(func() { srv.Close(); s.Close() })
	return srv, st
}

func get(t *testing.T, method, url string, header ...string) resp {
	t.Helper()
	req, _ := http.NewRequest(method, url, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return resp{res.StatusCode, res.Header, b}
}

// TestX402ErrorNamesItsHeader: an unpaid request's 402 says, in each
// version's own place, which header carries the payment in that version.
func TestX402ErrorNamesItsHeader(t *testing.T) {
	srv, _ := doorEnv(t)
	r := get(t, "GET", srv.URL+"/api/v1/x402?certification=cissp&limit=10")
	if r.status != 402 {
		t.Fatalf("status %d, want 402: %s", r.status, r.body)
	}
	var v1 struct{ Error string }
	if err := json.Unmarshal(r.body, &v1); err != nil {
		t.Fatal(err)
	}
	raw, err := base64.StdEncoding.DecodeString(r.header.Get("PAYMENT-REQUIRED"))
	if err != nil {
		t.Fatal(err)
	}
	var v2 struct{ Error string }
	if err := json.Unmarshal(raw, &v2); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ version, got, want, not string }{
		{"v1 body", v1.Error, "X-PAYMENT", "PAYMENT-SIGNATURE"},
		{"v2 PAYMENT-REQUIRED", v2.Error, "PAYMENT-SIGNATURE", "X-PAYMENT"},
	}
	for _, tc := range tests {
		if !strings.Contains(tc.got, tc.want) || strings.Contains(tc.got, tc.not) {
			t.Errorf("%s error %q: want it to name %s, not %s", tc.version, tc.got, tc.want, tc.not)
		}
	}
}

// TestPaidResponses: a paid response holds the questions asked for, all
// distinct, with answer and explanation only when include_answer is set.
func TestPaidResponses(t *testing.T) {
	srv, _ := doorEnv(t)
	_, key := x402.DevWallet(1)
	tests := []struct {
		query   string
		v2      bool
		n       int
		answers bool
	}{
		{"certification=cissp&limit=10", false, 10, false},
		{"certification=cissp&limit=25&include_answer=true", true, 25, true},
		{"certification=pmp&limit=50&include_answer=false", true, 50, false},
		{"certification=cissp&limit=10&difficulty=hard&include_answer=true", false, 10, true},
	}
	for _, tc := range tests {
		t.Run(tc.query, func(t *testing.T) {
			res, err := x402.Pay(t.Context(), nil, srv.URL+"/api/v1/x402?"+tc.query, key, certbank.USDC(100000), tc.v2)
			if err != nil || res.Status != 200 {
				t.Fatalf("pay: %v, status %d: %s", err, res.Status, res.Body)
			}
			var body struct {
				Meta      map[string]any
				Questions []map[string]any
			}
			if err := json.Unmarshal(res.Body, &body); err != nil {
				t.Fatal(err)
			}
			if len(body.Questions) != tc.n {
				t.Errorf("%d questions, want %d", len(body.Questions), tc.n)
			}
			ids := map[string]bool{}
			for _, q := range body.Questions {
				id, _ := q["id"].(string)
				if ids[id] {
					t.Errorf("question %s served twice in one response", id)
				}
				ids[id] = true
				_, hasAnswer := q["answer"]
				_, hasExpl := q["explanation"]
				if hasAnswer != tc.answers || hasExpl != tc.answers {
					t.Errorf("question %s: answer %v, explanation %v; want both %v", id, hasAnswer, hasExpl, tc.answers)
				}
				if strings.Contains(tc.query, "difficulty=hard") && q["difficulty"] != "hard" {
					t.Errorf("question %s is %v, want hard", id, q["difficulty"])
				}
			}
		})
	}
}

// TestServerCardPaths: the card answers alike on both paths: its media
// type, one max-age, an ETag that browsers may read, 304 on a match, and a
// CORS preflight of 204.
func TestServerCardPaths(t *testing.T) {
	srv, _ := doorEnv(t)
	var maxAge []string
	for _, path := range []string{"/api/mcp/server-card", "/.well-known/mcp/server-card.json"} {
		t.Run(path, func(t *testing.T) {
			r := get(t, "GET", srv.URL+path, "Origin", "https://agent.example")
			if r.status != 200 || string(r.body) != testCard {
				t.Fatalf("GET: %d %s", r.status, r.body)
			}
			if ct := r.header.Get("Content-Type"); ct != "application/mcp-server-card+json" {
				t.Errorf("Content-Type %q, want application/mcp-server-card+json", ct)
			}
			etag := r.header.Get("ETag")
			if etag == "" || !strings.Contains(r.header.Get("Access-Control-Expose-Headers"), "ETag") {
				t.Errorf("ETag %q, exposed headers %q: want an ETag browsers may read", etag, r.header.Get("Access-Control-Expose-Headers"))
			}
			maxAge = append(maxAge, r.header.Get("Cache-Control"))
			if r := get(t, "GET", srv.URL+path, "If-None-Match", etag); r.status != 304 {
				t.Errorf("If-None-Match: %d, want 304", r.status)
			}
			p := get(t, "OPTIONS", srv.URL+path, "Origin", "https://agent.example", "Access-Control-Request-Method", "GET")
			if p.status != 204 || p.header.Get("Access-Control-Allow-Origin") == "" {
				t.Errorf("preflight: %d, allow-origin %q; want 204 and an allowed origin", p.status, p.header.Get("Access-Control-Allow-Origin"))
			}
		})
	}
	if len(maxAge) != 2 || maxAge[0] != maxAge[1] || !strings.Contains(maxAge[0], "max-age=") {
		t.Errorf("Cache-Control of the two paths: %q; want one max-age", maxAge)
	}
}

// TestAPINotFoundIsJSON: every unknown path under /api/ (and
// /functions/v1/), a missing free feed included, answers a JSON 404; the
// feeds that exist are served.
func TestAPINotFoundIsJSON(t *testing.T) {
	srv, _ := doorEnv(t)
	for _, path := range []string{"/api/v1/nope", "/functions/v1/nope", "/api/nope-cert/questions-free.json", "/api/cissp/other.json", "/api/", "/api/mcp/nope"} {
		r := get(t, "GET", srv.URL+path)
		var body struct{ Error, Code string }
		if r.status != 404 || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") || json.Unmarshal(r.body, &body) != nil || body.Code != "NOT_FOUND" {
			t.Errorf("GET %s: %d %s %s; want a JSON 404 with code NOT_FOUND", path, r.status, r.header.Get("Content-Type"), r.body)
		}
	}
	if r := get(t, "GET", srv.URL+"/api/cissp/questions-free.json"); r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
		t.Errorf("the free feed: %d %s", r.status, r.header.Get("Content-Type"))
	}
	if r := get(t, "GET", srv.URL+"/no-such-page"); r.status != 404 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") {
		t.Errorf("a missing page outside /api/: %d %s, want the HTML 404", r.status, r.header.Get("Content-Type"))
	}
}

// TestReadyzHidesStoreErrors: /readyz says the store is unavailable
// without showing any of the store's error text.
func TestReadyzHidesStoreErrors(t *testing.T) {
	srv, st := doorEnv(t)
	st.On("Ping", func() error {
		return certbank.Errorf(certbank.Unavailable, "dial tcp 10.0.0.7:5432: password authentication failed for user certbank")
	})
	r := get(t, "GET", srv.URL+"/readyz")
	if r.status != 503 {
		t.Fatalf("status %d, want 503", r.status)
	}
	for _, leak := range []string{"dial", "10.0.0.7", "password", "certbank"} {
		if strings.Contains(string(r.body), leak) {
			t.Errorf("/readyz shows %q of the store's error: %s", leak, r.body)
		}
	}
	st.On("Ping", nil)
	if r := get(t, "GET", srv.URL+"/readyz"); r.status != 200 {
		t.Errorf("after recovery: %d", r.status)
	}

}
