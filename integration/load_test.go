package integration_test

// Correctness under load, on both stores and across two service instances
// that share one database, and the in-process load benchmark
// (BenchmarkQuestionsLoad, for profiling; the recorded figures come from
// loadtest/, see BENCHMARKS.md).
//
// PostgreSQL runs when CERTBANK_TEST_POSTGRES is set (a fresh schema per
// test, dropped afterwards); SQLite always runs, with two instances over
// two handles on one file.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/generator"
	"github.com/certbank/certbank/generator/synth"
	"github.com/certbank/certbank/paywall"
	"github.com/certbank/certbank/paywall/paywalltest"
	"github.com/certbank/certbank/paywall/postgres"
	"github.com/certbank/certbank/paywall/quota"
	"github.com/certbank/certbank/paywall/sqlite"
	"github.com/certbank/certbank/paywall/store"
)

// ltPGDSN returns the DSN of a fresh schema on the server named by
// CERTBANK_TEST_POSTGRES, dropped at the end of the test, or skips.
func ltPGDSN(tb testing.TB) string {
	tb.Helper()
	base := os.Getenv("CERTBANK_TEST_POSTGRES")
	if base == "" {
		tb.Skip("CERTBANK_TEST_POSTGRES is not set; set it to a PostgreSQL URL (e.g. postgres://postgres@127.0.0.1:5432/test?sslmode=disable) to run the PostgreSQL variant")
	}
	schema := "certbank_load_" + ltHex(6)
	if err := postgres.CreateSchema(context.Background(), base, schema); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { postgres.DropSchema(context.Background(), base, schema) })
	u, err := url.Parse(base)
	if err != nil {
		tb.Fatalf("CERTBANK_TEST_POSTGRES must be a postgres:// URL: %v", err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

func ltHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// ltStores opens two store handles on one fresh database: two SQLite
// handles on one file, or two PostgreSQL pools on one schema.
func ltStores(tb testing.TB, kind string) (store.Store, store.Store) {
	tb.Helper()
	ctx := context.Background()
	var a, b store.Store
	var err error
	switch kind {
	case "sqlite":
		path := filepath.Join(tb.TempDir(), "certbank.db")
		if a, err = sqlite.Open(ctx, path); err == nil {
			b, err = sqlite.Open(ctx, path)
		}
	case "postgres":
		dsn := ltPGDSN(tb)
		if a, err = postgres.Open(ctx, dsn); err == nil {
			b, err = postgres.Open(ctx, dsn)
		}
	}
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { a.Close(); b.Close() })
	return a, b
}

// ltInstance is one paywall.Server behind its own httptest server.
type ltInstance struct {
	srv   *paywall.Server
	http  *httptest.Server
	store store.Store
}

func ltStart(tb testing.TB, bank *certbank.Bank, store store.Store, now func() time.Time) *ltInstance {
	tb.Helper()
	s, err := paywall.New(paywall.Config{Bank: bank, Store: store, Now: now,
		Static: map[string][]byte{"index.html": []byte("<h1>hi</h1>"), "404.html": []byte("nope")}})
	if err != nil {
		tb.Fatal(err)
	}
	h := httptest.NewServer(s.Handler())
	tb.Cleanup(func() { h.Close(); s.Close() })
	return &ltInstance{srv: s, http: h, store: store}
}

// ltKey stores a key on tier (created Free, then SetTier, as support does)
// and returns the raw key and its ID.
func ltKey(tb testing.TB, s store.Store, tier string, created time.Time) (raw, id string) {
	tb.Helper()
	raw, hash, prefix := paywall.NewAPIKey()
	id = paywall.NewKeyID()
	k := store.Key{ID: id, Hash: hash, Prefix: prefix, Name: "load", Email: id + "@example.com", Tier: certbank.TierFree, CreatedAt: created}
	if err := s.CreateKey(context.Background(), k); err != nil {
		tb.Fatal(err)
	}
	if tier != certbank.TierFree {
		if err := s.SetTier(context.Background(), id, tier, time.Time{}); err != nil {
			tb.Fatal(err)
		}
	}
	return raw, id
}

type ltResponse struct {
	status int
	code   string // the error body's code
	msg    string // and its message
	ids    []string
	header http.Header
}

var ltClient = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}, Timeout: 30 * time.Second}

// ltGet requests path with key and decodes what the tests look at.
func ltGet(base, path, key string) (ltResponse, error) {
	req, _ := http.NewRequest("GET", base+path, nil)
	if key != "" {
		req.Header.Set("x-api-key", key)
	}
	res, err := ltClient.Do(req)
	if err != nil {
		return ltResponse{}, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return ltResponse{}, err
	}
	r := ltResponse{status: res.StatusCode, header: res.Header}
	var m struct {
		Code  string `json:"code"`
		Error string `json:"error"`
		Data  []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &m); err != nil {
		return r, fmt.Errorf("%s: status %d, body is not JSON: %.200s", path, res.StatusCode, body)
	}
	r.code, r.msg = m.Code, m.Error
	for _, d := range m.Data {
		r.ids = append(r.ids, d.ID)
	}
	return r, nil
}

// ltBurst sends n concurrent requests for path with key, spread round-robin
// over the instances, and returns the responses.
func ltBurst(t *testing.T, insts []*ltInstance, n int, path, key string) []ltResponse {
	t.Helper()
	out := make([]ltResponse, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			r, err := ltGet(insts[i%len(insts)].http.URL, path, key)
			if err != nil {
				t.Error(err)
			}
			out[i] = r
		})
	}
	wg.Wait()
	return out
}

func ltCount(rs []ltResponse) map[string]int {
	m := map[string]int{}
	for _, r := range rs {
		k := strconv.Itoa(r.status)
		if r.code != "" {
			k += " " + r.code
		}
		m[k]++
	}
	return m
}

func ltForStores(t *testing.T, fn func(t *testing.T, kind string)) {
	for _, kind := range []string{"sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) { fn(t, kind) })
	}
}

// TestLoadRateLimitTwoInstances: 200 concurrent requests on one Free key,
// half through each of two instances sharing the database, succeed exactly
// 10 times in the minute (the Free tier's rate limit), and exactly those 10
// are stored.
func TestLoadRateLimitTwoInstances(t *testing.T) {
	ltForStores(t, func(t *testing.T, kind string) {
		a, b := ltStores(t, kind)
		clk := newClock(time.Date(2026, 11, 21, 12, 0, 30, 0, time.UTC))
		bank := testBank(30)
		insts := []*ltInstance{ltStart(t, bank, a, clk.Now), ltStart(t, bank, b, clk.Now)}
		key, id := ltKey(t, a, certbank.TierFree, clk.Now())

		got := ltCount(ltBurst(t, insts, 200, "/api/v1/questions?limit=1", key))
		if got["200"] != 10 || got["429 RATE_LIMITED"] != 190 {
			t.Errorf("200 concurrent requests over 2 instances: %v; want exactly 10 × 200 and 190 × 429 RATE_LIMITED", got)
		}
		for i, s := range []store.Store{a, b} {
			if req, qs, err := s.MonthlyUsage(context.Background(), id, "2026-11"); err != nil || req != 10 || qs != 10 {
				t.Errorf("store handle %d: stored %d requests, %d questions (%v); want 10, 10", i, req, qs, err)
			}
		}
		// The next minute allows exactly 10 more, again over both.
		clk.Add(time.Minute)
		got = ltCount(ltBurst(t, insts, 40, "/api/v1/questions?limit=1", key))
		if got["200"] != 10 || got["429 RATE_LIMITED"] != 30 {
			t.Errorf("next minute: %v; want exactly 10 × 200 and 30 × 429", got)
		}
	})
}

// TestLoadMonthlyAndUniqueTwoInstances: bursts on one Free key through two
// instances, minute after minute, hold the monthly limit (100 requests)
// and the unique-question limit (50) exactly; a second key bursting at the
// same time is counted apart.
func TestLoadMonthlyAndUniqueTwoInstances(t *testing.T) {
	ltForStores(t, func(t *testing.T, kind string) {
		a, b := ltStores(t, kind)
		clk := newClock(time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC))
		bank := testBank(60) // 120 questions, so the 50 unique are a real limit
		insts := []*ltInstance{ltStart(t, bank, a, clk.Now), ltStart(t, bank, b, clk.Now)}
		key, id := ltKey(t, a, certbank.TierFree, clk.Now())
		other, otherID := ltKey(t, b, certbank.TierFree, clk.Now())

		ok, otherOK := 0, 0
		seen := map[string]bool{}
		for minute := range 12 {
			clk.Add(time.Minute)
			var rs, ors []ltResponse
			var wg sync.WaitGroup
			wg.Go(func() { rs = ltBurst(t, insts, 25, "/api/v1/questions?limit=10", key) })
			wg.Go(func() { ors = ltBurst(t, insts, 15, "/api/v1/questions?limit=10", other) })
			wg.Wait()
			c := ltCount(rs)
			want := map[string]int{"200": 10, "429 RATE_LIMITED": 15}
			if minute >= 10 { // the month's 100 are used up
				want = map[string]int{"429 MONTHLY_LIMIT_EXCEEDED": 25}
			}
			if fmt.Sprint(c) != fmt.Sprint(want) {
				t.Errorf("minute %d: %v, want %v", minute, c, want)
			}
			for _, r := range rs {
				if r.status == 200 {
					ok++
					for _, q := range r.ids {
						seen[q] = true
					}
				}
			}
			otherOK += ltCount(ors)["200"]
		}
		if ok != 100 || len(seen) != 50 {
			t.Errorf("the key was served %d requests and %d distinct questions; want exactly 100 and 50", ok, len(seen))
		}
		if otherOK != 100 {
			t.Errorf("the second key was served %d requests, want 100", otherOK)
		}
		for _, c := range []struct {
			id       string
			requests int
		}{{id, 100}, {otherID, 100}} {
			if req, qs, err := a.MonthlyUsage(context.Background(), c.id, "2026-11"); err != nil || req != c.requests || qs != 10*c.requests {
				t.Errorf("stored usage of %s: %d requests, %d questions (%v); want %d, %d", c.id, req, qs, err, c.requests, 10*c.requests)
			}
		}
		// Both instances report the same usage.
		for i, in := range insts {
			u := ltUsage(t, in.http.URL, key)
			if u.Requests.Month.Used != 100 || u.Unique.Used != 50 || u.Unique.Remaining != 0 {
				t.Errorf("instance %d reports month %d, unique %d (remaining %d); want 100, 50, 0", i, u.Requests.Month.Used, u.Unique.Used, u.Unique.Remaining)
			}
		}
	})
}

type ltUsageBody struct {
	Requests struct {
		Month struct {
			Used int `json:"used"`
		} `json:"month"`
	} `json:"requests"`
	Unique struct {
		Used      int `json:"used"`
		Remaining int `json:"remaining"`
	} `json:"unique_questions"`
}

func ltUsage(t testing.TB, base, key string) ltUsageBody {
	t.Helper()
	req, _ := http.NewRequest("GET", base+"/api/v1/usage", nil)
	req.Header.Set("x-api-key", key)
	res, err := ltClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var u ltUsageBody
	if err := json.NewDecoder(res.Body).Decode(&u); err != nil || res.StatusCode != 200 {
		t.Fatalf("usage: %d %v", res.StatusCode, err)
	}
	return u
}

// TestLoadKeyedJSONShape checks the keyed route's pre-encoded questions
// byte for byte against encoding/json (HTML escaping off), with text that
// needs every kind of escaping.
func TestLoadKeyedJSONShape(t *testing.T) {
	bank := testBank(4)
	tricky := []string{`quote " back \ slash`, "<b>&amp;</b> 'single'", "nl\ncr\rtab\tbs\bff\f\x01\x1f\x7f", "ls\u2028ps\u2029", "bad \xff utf8 \xc3", "émoji 🎉"}
	for i := range bank.Questions[:len(tricky)] {
		q := &bank.Questions[i]
		s := tricky[i]
		q.Stem, q.Options[2], q.Explanation = s, s, s+" explained"
	}
	store, _ := ltStores(t, "sqlite")
	clk := newClock(time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC))
	in := ltStart(t, bank, store, clk.Now)
	key, _ := ltKey(t, store, certbank.TierEnterprise, clk.Now())
	type cert struct {
		Name     string `json:"name"`
		Slug     string `json:"slug"`
		Provider string `json:"provider"`
	}
	type question struct {
		ID            string            `json:"id"`
		Question      string            `json:"question"`
		Options       map[string]string `json:"options"`
		Difficulty    string            `json:"difficulty"`
		Domain        string            `json:"domain"`
		Certification cert              `json:"certification"`
		Objective     string            `json:"objective,omitempty"`
		CorrectAnswer string            `json:"correct_answer,omitempty"`
		Explanation   string            `json:"explanation,omitempty"`
	}
	for _, include := range []bool{false, true} {
		req, _ := http.NewRequest("GET", in.http.URL+"/api/v1/export?certification=cissp&include_answer="+strconv.FormatBool(include), nil)
		req.Header.Set("x-api-key", key)
		res, err := ltClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		lines := strings.Split(strings.TrimSuffix(string(body), "\n"), "\n")
		if res.StatusCode != 200 || len(lines) != 4 {
			t.Fatalf("export: %d, %d lines: %s", res.StatusCode, len(lines), body)
		}
		for i, line := range lines {
			q := bank.Questions[i]
			c, _ := bank.Certification(q.Certification)
			want := question{ID: q.ID, Question: q.Stem, Difficulty: string(q.Difficulty), Domain: q.Domain,
				Options:       map[string]string{"A": q.Options[0], "B": q.Options[1], "C": q.Options[2], "D": q.Options[3]},
				Certification: cert{c.Name, c.Slug, c.Provider}, Objective: q.Objective}
			if include {
				want.CorrectAnswer, want.Explanation = string(q.Answer), q.Explanation
			}
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			enc.Encode(want)
			if got := line; got != strings.TrimSuffix(buf.String(), "\n") {
				t.Errorf("include_answer=%v, question %d:\n got %s\nwant %s", include, i, got, buf.String())
			}
		}
	}
}

// ---- in-process load benchmark ----

var (
	ltBankOnce sync.Once
	ltBankVal  *certbank.Bank
	ltBankErr  error
)

// ltSyntheticBank is the 13,000-question synthetic bank (26 × 500), built
// in memory once per test binary, with the Enterprise rate limit raised so
// that only throughput is measured.
func ltSyntheticBank(tb testing.TB) *certbank.Bank {
	ltBankOnce.Do(func() {
		dir, err := os.MkdirTemp("", "certbank-synth-")
		if err != nil {
			ltBankErr = err
			return
		}
		defer os.RemoveAll(dir)
		if ltBankErr = synth.Write(dir, 26, 500, 1); ltBankErr != nil {
			return
		}
		c, err := generator.Load(os.DirFS(dir), dir)
		if err != nil {
			ltBankErr = err
			return
		}
		out, err := generator.Build(c, generator.Options{})
		if err != nil {
			ltBankErr = err
			return
		}
		ltBankVal = out.Bank
		for i := range ltBankVal.Site.Tiers {
			if ltBankVal.Site.Tiers[i].Name == certbank.TierEnterprise {
				ltBankVal.Site.Tiers[i].PerMinute = 1 << 30
			}
		}
	})
	if ltBankErr != nil {
		tb.Fatal(ltBankErr)
	}
	return ltBankVal
}

// BenchmarkQuestionsLoad drives GET /api/v1/questions?limit=10 over 50
// keep-alive connections with keys drawn from 1,000 Enterprise keys, with
// accounting off, on SQLite, on PostgreSQL, and on "mem" (usage kept in
// memory: the accountant without a database). It reports requests per
// second, p50/p99 latency, the process's CPU per request and the mean
// group-commit batch. Client and server share the process, so use it to
// profile (-cpuprofile); loadtest/ gives the recorded figures.
//
//	go test ./paywall -run '^$' -bench QuestionsLoad -benchtime 50000x
func BenchmarkQuestionsLoad(b *testing.B) {
	bank := ltSyntheticBank(b)
	for _, cfg := range []string{"off", "sqlite", "postgres", "mem"} {
		b.Run(cfg, func(b *testing.B) {
			var store store.Store
			var err error
			switch cfg {
			case "off", "sqlite":
				store, err = sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "bench.db"))
			case "mem":
				store, err = sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "bench.db"))
				store = &ltMemUsage{Store: store}
			case "postgres":
				store, err = postgres.Open(context.Background(), ltPGDSN(b))
			}
			if err != nil {
				b.Fatal(err)
			}
			defer store.Close()
			keys := make([]string, 1000)
			for i := range keys {
				keys[i], _ = ltKey(b, store, certbank.TierEnterprise, time.Now())
			}
			pc := paywall.Config{Bank: bank, Store: store}
			if cfg == "off" {
				pc.Accountant = quota.Noop{}
			}
			s, err := paywall.New(pc)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			h := httptest.NewServer(s.Handler())
			defer h.Close()
			addr := strings.TrimPrefix(h.URL, "http://")
			reqs := make([][]byte, len(keys))
			for i, k := range keys {
				reqs[i] = []byte("GET /api/v1/questions?limit=10 HTTP/1.1\r\nHost: " + addr + "\r\nX-Api-Key: " + k + "\r\n\r\n")
			}
			var mu sync.Mutex
			var lats []time.Duration
			var failed atomic.Int64
			b.SetParallelism(25) // 50 connections with GOMAXPROCS=2
			b.ResetTimer()
			start, cpu0 := time.Now(), ltCPU()
			b.RunParallel(func(pb *testing.PB) {
				c := &ltRawClient{addr: addr}
				defer c.close()
				mine := make([]time.Duration, 0, 4096)
				for pb.Next() {
					t0 := time.Now()
					status, err := c.do(reqs[mrand.IntN(len(reqs))])
					if err != nil || status != 200 {
						failed.Add(1)
						c.close()
						continue
					}
					mine = append(mine, time.Since(t0))
				}
				mu.Lock()
				lats = append(lats, mine...)
				mu.Unlock()
			})
			elapsed, cpu := time.Since(start), ltCPU()-cpu0
			b.StopTimer()
			if n := failed.Load(); n > 0 {
				b.Errorf("%d requests failed or were not 200", n)
			}
			slices.Sort(lats)
			if len(lats) > 0 {
				b.ReportMetric(float64(len(lats))/elapsed.Seconds(), "req/s")
				b.ReportMetric(float64(lats[len(lats)/2].Microseconds())/1000, "p50-ms")
				b.ReportMetric(float64(lats[len(lats)*99/100].Microseconds())/1000, "p99-ms")
				b.ReportMetric(float64(cpu.Microseconds())/float64(len(lats)), "cpu-µs/req")
				if batches, reqs := ltMetric(h.URL, "certbank_usage_batches_total"), ltMetric(h.URL, "certbank_usage_batch_requests_total"); batches > 0 {
					b.ReportMetric(reqs/batches, "req/batch")
				}
			}
		})
	}
}

// ltMetric reads one unlabelled value from the server's /metrics.
func ltMetric(base, name string) float64 {
	res, err := http.Get(base + "/metrics")
	if err != nil {
		return 0
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			f, _ := strconv.ParseFloat(v, 64)
			return f
		}
	}
	return 0
}

// ltCPU is the CPU time the process has used (client and server).
func ltCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// ltRawClient is a keep-alive HTTP/1.1 connection that reads a response's
// status and discards its body without allocating (net/http's client would
// cost about as much CPU as the server).
type ltRawClient struct {
	addr string
	conn net.Conn
	br   *bufio.Reader
}

func (c *ltRawClient) close() {
	if c.conn != nil {
		c.conn.Close()
		c.conn = nil
	}
}

func (c *ltRawClient) do(req []byte) (int, error) {
	if c.conn == nil {
		conn, err := net.Dial("tcp", c.addr)
		if err != nil {
			return 0, err
		}
		c.conn, c.br = conn, bufio.NewReaderSize(conn, 64<<10)
	}
	if _, err := c.conn.Write(req); err != nil {
		return 0, err
	}
	line, err := c.br.ReadSlice('\n')
	if err != nil || len(line) < 12 {
		return 0, fmt.Errorf("status line %q: %v", line, err)
	}
	status, _ := strconv.Atoi(string(line[9:12]))
	length, chunked := -1, false
	for {
		line, err := c.br.ReadSlice('\n')
		if err != nil {
			return 0, err
		}
		if len(line) <= 2 {
			break
		}
		name, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimSpace(value)
		if bytes.EqualFold(name, []byte("Content-Length")) {
			length, _ = strconv.Atoi(string(value))
		} else if bytes.EqualFold(name, []byte("Transfer-Encoding")) {
			chunked = bytes.EqualFold(value, []byte("chunked"))
		}
	}
	if chunked {
		for {
			line, err := c.br.ReadSlice('\n')
			if err != nil {
				return 0, err
			}
			size, err := strconv.ParseInt(string(bytes.TrimSpace(line)), 16, 64)
			if err != nil {
				return 0, err
			}
			if _, err := c.br.Discard(int(size) + 2); err != nil {
				return 0, err
			}
			if size == 0 {
				return status, nil
			}
		}
	}
	if length < 0 {
		return 0, fmt.Errorf("response without a length")
	}
	_, err = c.br.Discard(length)
	return status, err
}

// ltMemUsage keeps usage in memory over another store: the "mem"
// benchmark measures the accountant without any database cost.
type ltMemUsage struct {
	store.Store
	mu sync.Mutex
	m  map[string]store.Usage
}

type ltMemTx struct{ s *ltMemUsage }

func (t ltMemTx) Load(ctx context.Context, ids []string, month string) (map[string]*store.Usage, error) {
	out := map[string]*store.Usage{}
	for _, id := range ids {
		u := t.s.m[id]
		u.KeyID, u.Month = id, month
		out[id] = &u
	}
	return out, nil
}
func (t ltMemTx) Save(ctx context.Context, us []*store.Usage) error {
	for _, u := range us {
		t.s.m[u.KeyID] = *u
	}
	return nil
}
func (s *ltMemUsage) UpdateUsage(ctx context.Context, fn func(store.UsageTx) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]store.Usage{}
	}
	return fn(ltMemTx{s})
}

func testBank(n int) *certbank.Bank { return paywalltest.Bank(n) }

func newClock(t time.Time) *paywalltest.Clock { return paywalltest.NewClock(t) }
