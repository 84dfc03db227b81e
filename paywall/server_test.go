package paywall_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/paywall"
	"github.com/certbank/certbank/paywall/paywalltest"
	"github.com/certbank/certbank/paywall/sqlite"
	"github.com/certbank/certbank/paywall/store"
)

func testBank(n int) *certbank.Bank { return paywalltest.Bank(n) }

type clock = paywalltest.Clock

func newClock(t time.Time) *clock { return paywalltest.NewClock(t) }

type env struct {
	t     *testing.T
	srv   *httptest.Server
	store store.Store
	clock *clock
}

func newEnv(t *testing.T, n int) *env {
	t.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	clk := newClock(time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC))
	s, err := paywall.New(paywall.Config{Bank: testBank(n), Store: db, Now: clk.Now, Static: map[string][]byte{"index.html": []byte("<h1>hi</h1>"), "404.html": []byte("nope")}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	return &env{t: t, srv: srv, store: db, clock: clk}
}

type resp struct {
	status int
	header http.Header
	body   []byte
}

func (r resp) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("body is not JSON: %v\n%s", err, r.body)
	}
	return m
}

func (e *env) do(method, path, key, body string) resp {
	e.t.Helper()
	req, _ := http.NewRequest(method, e.srv.URL+path, strings.NewReader(body))
	if key != "" {
		req.Header.Set("x-api-key", key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return resp{res.StatusCode, res.Header, b}
}

var emailN atomic.Int64

func (e *env) signup() string {
	e.t.Helper()
	r := e.do("POST", "/api/v1/signup", "", fmt.Sprintf(`{"name":"Ada","email":"ada%d@example.com"}`, emailN.Add(1)))
	if r.status != 201 {
		e.t.Fatalf("signup: %d %s", r.status, r.body)
	}
	return r.json(e.t)["api_key"].(string)
}

func TestSignup(t *testing.T) {
	e := newEnv(t, 30)
	r := e.do("POST", "/api/v1/signup", "", `{"name":"Ada","email":"Ada@Example.com"}`)
	if r.status != 201 {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	m := r.json(t)
	key := m["api_key"].(string)
	if !strings.HasPrefix(key, paywall.KeyPrefix) || m["tier"] != "free" {
		t.Errorf("unexpected signup body %s", r.body)
	}
	if lim := m["limits"].(map[string]any); lim["requests_per_minute"] != 10.0 || lim["requests_per_month"] != 100.0 || lim["unique_questions"] != 50.0 {
		t.Errorf("limits = %v", lim)
	}
	// only the hash is stored
	k, err := e.store.KeyByHash(context.Background(), paywall.HashKey(key))
	if err != nil || k.Email != "ada@example.com" || strings.Contains(k.Hash, key) {
		t.Errorf("stored key %+v, %v", k, err)
	}
	tests := []struct {
		name, body string
		status     int
		code       string
	}{
		{"same email again", `{"name":"Ada","email":"ada@example.com"}`, 409, "CONFLICT"},
		{"bad email", `{"name":"Ada","email":"not-an-email"}`, 400, "INVALID_PARAMS"},
		{"no name", `{"name":"","email":"b@example.com"}`, 400, "INVALID_PARAMS"},
		{"unknown field", `{"name":"B","email":"b@example.com","tier":"enterprise"}`, 400, "INVALID_PARAMS"},
		{"not json", `name=B`, 400, "INVALID_PARAMS"},
		{"too big", `{"name":"` + strings.Repeat("x", 5000) + `","email":"b@example.com"}`, 400, "INVALID_PARAMS"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do("POST", "/api/v1/signup", "", tc.body)
			if r.status != tc.status || r.json(t)["code"] != tc.code {
				t.Errorf("got %d %s, want %d %s", r.status, r.body, tc.status, tc.code)
			}
		})
	}
	// Rate limit per client address: 5 valid attempts an hour. Two were
	// made above (the first signup and the duplicate email).
	for i := 0; i < 3; i++ {
		if r := e.do("POST", "/api/v1/signup", "", fmt.Sprintf(`{"name":"C","email":"c%d@example.com"}`, i)); r.status != 201 {
			t.Fatalf("signup %d: %d %s", i, r.status, r.body)
		}
	}
	r = e.do("POST", "/api/v1/signup", "", `{"name":"C","email":"c9@example.com"}`)
	if r.status != 429 || r.header.Get("Retry-After") == "" || r.json(t)["code"] != "RATE_LIMITED" {
		t.Errorf("signup flood: got %d %s", r.status, r.body)
	}
}

func TestQuestionsEnvelope(t *testing.T) {
	e := newEnv(t, 30)
	key := e.signup()
	r := e.do("GET", "/api/v1/questions?certification=cissp&limit=5", key, "")
	if r.status != 200 {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	m := r.json(t)
	data := m["data"].([]any)
	meta := m["meta"].(map[string]any)
	if len(data) != 5 || meta["returned"] != 5.0 || meta["limit"] != 5.0 || meta["random"] != true || meta["total_available"] != 30.0 {
		t.Errorf("meta = %v, %d questions", meta, len(data))
	}
	if u := meta["unique_questions"].(map[string]any); u["limit"] != 50.0 || u["used"] != 5.0 || u["remaining"] != 45.0 {
		t.Errorf("unique_questions = %v", u)
	}
	q := data[0].(map[string]any)
	for _, f := range []string{"id", "question", "options", "difficulty", "certification"} {
		if _, ok := q[f]; !ok {
			t.Errorf("question lacks %s: %v", f, q)
		}
	}
	if _, ok := q["correct_answer"]; ok {
		t.Errorf("quiz mode (default) must omit correct_answer: %v", q)
	}
	if c := q["certification"].(map[string]any); c["slug"] != "cissp" || c["provider"] != "SecBody" || c["name"] != "CISSP" {
		t.Errorf("certification = %v", c)
	}
	for _, h := range []string{"RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"} {
		if r.header.Get(h) == "" {
			t.Errorf("missing %s", h)
		}
	}
	r = e.do("GET", "/functions/v1/api-v1-questions?certification=pmp&include_answer=true&difficulty=hard&domain=beta", key, "")
	m = r.json(t)
	for _, d := range m["data"].([]any) {
		q := d.(map[string]any)
		if q["correct_answer"] == nil || q["explanation"] == nil || q["difficulty"] != "hard" || q["domain"] != "Beta" {
			t.Errorf("filtered question with answers: %v", q)
		}
	}
}

func TestQuestionsErrors(t *testing.T) {
	e := newEnv(t, 30)
	key := e.signup()
	tests := []struct {
		name, path, key string
		status          int
		code, mentions  string
	}{
		{"no key", "/api/v1/questions", "", 401, "UNAUTHORIZED", "x-api-key"},
		{"malformed key", "/api/v1/questions", "hello", 401, "UNAUTHORIZED", "x-api-key"},
		{"unknown key", "/api/v1/questions", paywall.KeyPrefix + strings.Repeat("a", 32), 401, "UNAUTHORIZED", "x-api-key"},
		{"limit zero", "/api/v1/questions?limit=0", key, 400, "INVALID_PARAMS", "limit"},
		{"limit above tier", "/api/v1/questions?limit=11", key, 400, "INVALID_PARAMS", "Free"},
		{"bad difficulty", "/api/v1/questions?difficulty=insane", key, 400, "INVALID_PARAMS", "easy, medium, hard"},
		{"unknown certification", "/api/v1/questions?certification=nope", key, 400, "INVALID_PARAMS", "cissp"},
		{"unknown domain", "/api/v1/questions?certification=cissp&domain=Gamma", key, 400, "INVALID_PARAMS", "Alpha"},
		{"unknown parameter", "/api/v1/questions?limt=5", key, 400, "INVALID_PARAMS", "limt"},
		{"bad boolean", "/api/v1/questions?include_answer=maybe", key, 400, "INVALID_PARAMS", "include_answer"},
		{"pagination needs enterprise", "/api/v1/questions?random=false", key, 403, "TIER_REQUIRED", "Enterprise"},
		{"export needs enterprise", "/api/v1/export?certification=cissp", key, 403, "TIER_REQUIRED", "Enterprise"},
		{"unknown provider", "/api/v1/certifications?provider=Nobody", key, 400, "INVALID_PARAMS", "SecBody"},
		{"unknown endpoint", "/api/v1/nothing", key, 404, "NOT_FOUND", "openapi"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do("GET", tc.path, tc.key, "")
			m := r.json(t)
			if r.status != tc.status || m["code"] != tc.code || !strings.Contains(m["error"].(string), tc.mentions) {
				t.Errorf("got %d %s; want %d %s mentioning %q", r.status, r.body, tc.status, tc.code, tc.mentions)
			}
		})
	}
	// the same answer for every bad key: no oracle
	a := e.do("GET", "/api/v1/questions", "", "")
	b := e.do("GET", "/api/v1/questions", paywall.KeyPrefix+strings.Repeat("b", 32), "")
	if string(a.body) != string(b.body) {
		t.Errorf("missing and unknown keys answer differently: %s vs %s", a.body, b.body)
	}
}

func TestRateLimitExactlyUnderConcurrency(t *testing.T) {
	e := newEnv(t, 30)
	key := e.signup()
	var ok, limited atomic.Int64
	var wg sync.WaitGroup
	for i := 0; i < 200; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest("GET", e.srv.URL+"/api/v1/questions?limit=1", nil)
			req.Header.Set("x-api-key", key)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			switch res.StatusCode {
			case 200:
				ok.Add(1)
			case 429:
				limited.Add(1)
				if res.Header.Get("Retry-After") == "" {
					t.Error("429 without Retry-After")
				}
			default:
				t.Errorf("status %d", res.StatusCode)
			}
		}()
	}
	wg.Wait()
	if ok.Load() != 10 || limited.Load() != 190 {
		t.Errorf("got %d OK and %d limited, want exactly 10 and 190", ok.Load(), limited.Load())
	}
	req, _, _ := e.store.MonthlyUsage(context.Background(), keyID(t, e, key), "2026-11")
	if req != 10 {
		t.Errorf("stored usage %d, want 10", req)
	}
	// the next minute allows 10 more
	e.clock.Add(time.Minute)
	if r := e.do("GET", "/api/v1/questions?limit=1", key, ""); r.status != 200 {
		t.Errorf("next minute: %d %s", r.status, r.body)
	}
}

func keyID(t *testing.T, e *env, key string) string {
	k, err := e.store.KeyByHash(context.Background(), paywall.HashKey(key))
	if err != nil {
		t.Fatal(err)
	}
	return k.ID
}

func TestMonthlyAndUniqueLimits(t *testing.T) {
	e := newEnv(t, 40)
	key := e.signup()
	seen := map[string]bool{}
	for i := 0; i < 100; i++ {
		if i%10 == 0 {
			e.clock.Add(time.Minute)
		}
		r := e.do("GET", "/api/v1/questions?limit=10", key, "")
		if r.status != 200 {
			t.Fatalf("request %d: %d %s", i, r.status, r.body)
		}
		for _, d := range r.json(t)["data"].([]any) {
			seen[d.(map[string]any)["id"].(string)] = true
		}
	}
	if len(seen) != 50 {
		t.Errorf("a Free key was served %d distinct questions, want exactly the limit of 50", len(seen))
	}
	e.clock.Add(time.Minute)
	r := e.do("GET", "/api/v1/questions?limit=10", key, "")
	if r.status != 429 || r.json(t)["code"] != "MONTHLY_LIMIT_EXCEEDED" {
		t.Fatalf("101st request: %d %s", r.status, r.body)
	}
	ra := r.header.Get("Retry-After")
	if want := fmt.Sprint(int(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC).Sub(e.clock.Now()).Seconds())); ra != want {
		t.Errorf("Retry-After = %s, want %s (to the first of next month)", ra, want)
	}
	u := e.do("GET", "/api/v1/usage", key, "").json(t)
	month := u["requests"].(map[string]any)["month"].(map[string]any)
	if month["used"] != 100.0 || month["limit"] != 100.0 || month["remaining"] != 0.0 {
		t.Errorf("usage month = %v", month)
	}
	if uq := u["unique_questions"].(map[string]any); uq["used"] != 50.0 || uq["remaining"] != 0.0 {
		t.Errorf("usage unique = %v", uq)
	}
	// a new month resets requests but not the unique questions
	e.clock.Set(time.Date(2026, 12, 1, 0, 0, 1, 0, time.UTC))
	r = e.do("GET", "/api/v1/questions?limit=10", key, "")
	if r.status != 200 {
		t.Fatalf("new month: %d %s", r.status, r.body)
	}
	for _, d := range r.json(t)["data"].([]any) {
		if id := d.(map[string]any)["id"].(string); !seen[id] {
			t.Errorf("served unseen question %s after the unique limit", id)
		}
	}
}

func TestEnterpriseTierAndExpiry(t *testing.T) {
	e := newEnv(t, 30)
	key := e.signup()
	id := keyID(t, e, key)
	until := e.clock.Now().Add(48 * time.Hour)
	if err := e.store.SetTier(context.Background(), id, "enterprise", until); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond) // key cache TTL
	r := e.do("GET", "/api/v1/questions?certification=cissp&random=false&limit=20", key, "")
	if r.status != 200 {
		t.Fatalf("page 1: %d %s", r.status, r.body)
	}
	m := r.json(t)
	meta := m["meta"].(map[string]any)
	data := m["data"].([]any)
	if len(data) != 20 || meta["next_cursor"] == nil || meta["random"] != false {
		t.Fatalf("page 1 meta %v", meta)
	}
	r2 := e.do("GET", "/api/v1/questions?certification=cissp&random=false&limit=20&cursor="+meta["next_cursor"].(string), key, "")
	d2 := r2.json(t)["data"].([]any)
	if len(d2) != 10 || d2[0].(map[string]any)["id"].(string) <= data[19].(map[string]any)["id"].(string) {
		t.Errorf("page 2 does not continue page 1 in order: %d questions", len(d2))
	}
	p2 := e.do("GET", "/api/v1/questions?certification=cissp&random=false&limit=20&page=2", key, "").json(t)["data"].([]any)
	if len(p2) != 10 || p2[0].(map[string]any)["id"] != d2[0].(map[string]any)["id"] {
		t.Errorf("page=2 and the cursor disagree")
	}
	ex := e.do("GET", "/api/v1/export?certification=pmp&include_answer=true", key, "")
	lines := strings.Split(strings.TrimSpace(string(ex.body)), "\n")
	if ex.status != 200 || len(lines) != 30 || !strings.Contains(ex.header.Get("Content-Type"), "ndjson") {
		t.Errorf("export: %d, %d lines", ex.status, len(lines))
	}
	u := e.do("GET", "/api/v1/usage", key, "").json(t)
	if tier := u["tier"].(map[string]any); tier["name"] != "enterprise" || tier["until"] == nil {
		t.Errorf("usage tier = %v", tier)
	}
	// after the subscription ends the key is Free again
	e.clock.Add(72 * time.Hour)
	u = e.do("GET", "/api/v1/usage", key, "").json(t)
	if tier := u["tier"].(map[string]any); tier["name"] != "free" {
		t.Errorf("after expiry tier = %v", tier)
	}
	if r := e.do("GET", "/api/v1/questions?random=false", key, ""); r.status != 403 {
		t.Errorf("pagination after expiry: %d", r.status)
	}
}

func TestRevokedKey(t *testing.T) {
	e := newEnv(t, 10)
	key := e.signup()
	if err := e.store.RevokeKey(context.Background(), keyID(t, e, key), e.clock.Now()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond)
	if r := e.do("GET", "/api/v1/usage", key, ""); r.status != 401 {
		t.Errorf("revoked key: %d %s", r.status, r.body)
	}
}

func TestCertificationsAndHealth(t *testing.T) {
	e := newEnv(t, 12)
	key := e.signup()
	r := e.do("GET", "/api/v1/certifications?provider=secbody", key, "")
	m := r.json(t)
	data := m["data"].([]any)
	if r.status != 200 || len(data) != 1 || data[0].(map[string]any)["questions"] != 12.0 {
		t.Errorf("certifications: %d %s", r.status, r.body)
	}
	for path, want := range map[string]int{"/healthz": 200, "/readyz": 200, "/metrics": 200, "/": 200, "/nope": 404} {
		if r := e.do("GET", path, "", ""); r.status != want {
			t.Errorf("%s: %d, want %d", path, r.status, want)
		}
	}
	metrics := string(e.do("GET", "/metrics", "", "").body)
	for _, s := range []string{`certbank_http_requests_total{route="certifications",status="200"} 1`, "certbank_http_request_duration_seconds_bucket", "certbank_quota_rejections_total", "certbank_store_errors_total 0"} {
		if !strings.Contains(metrics, s) {
			t.Errorf("metrics lack %q", s)
		}
	}
	// CORS preflight is answered before auth
	req, _ := http.NewRequest("OPTIONS", e.srv.URL+"/api/v1/questions", nil)
	req.Header.Set("Origin", "https://learner.example")
	req.Header.Set("Access-Control-Request-Headers", "x-api-key")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 204 || !strings.Contains(res.Header.Get("Access-Control-Allow-Headers"), "x-api-key") {
		t.Errorf("preflight: %d %v", res.StatusCode, res.Header)
	}
}
