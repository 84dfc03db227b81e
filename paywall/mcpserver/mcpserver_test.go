package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
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
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The MCP endpoint tested with the official Go SDK's own client over real
// HTTP, in both protocol eras: modern (2026-07-28, stateless, no
// handshake, Mcp-Method/Mcp-Name headers and _meta on every request) and
// legacy (2025-11-25, initialize handshake).

const (
	eraModern = "2026-07-28"
	eraLegacy = "2025-11-25"
)

var eras = []string{eraModern, eraLegacy}

func testBank(n int) *certbank.Bank { return paywalltest.Bank(n) }

type clock = paywalltest.Clock

func newClock(t time.Time) *clock { return paywalltest.NewClock(t) }

type resp struct {
	status int
	header http.Header
	body   []byte
}

// mcpEnv is a paywall server over an SQLite store with a fake clock, for
// tests and benchmarks.
type mcpEnv struct {
	tb    testing.TB
	srv   *httptest.Server
	store store.Store
	clock *clock
	bank  *certbank.Bank
}

func newMCPEnv(tb testing.TB, b *certbank.Bank) *mcpEnv {
	tb.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(tb.TempDir(), "t.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	clk := newClock(time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC))
	s, err := paywall.New(paywall.Config{Bank: b, Store: db, Now: clk.Now,
		Static: map[string][]byte{"index.html": []byte("<h1>hi</h1>"), "404.html": []byte("nope")}})
	if err != nil {
		tb.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	tb.Cleanup(func() { srv.Close(); s.Close() })
	return &mcpEnv{tb: tb, srv: srv, store: db, clock: clk, bank: b}
}

// newKey stores a fresh key on tier and returns it and its id. The tier is
// set with SetTier before the key is first used, so no cache is stale.
func (e *mcpEnv) newKey(tier string) (raw, id string) {
	e.tb.Helper()
	raw, hash, prefix := paywall.NewAPIKey()
	id = paywall.NewKeyID()
	k := store.Key{ID: id, Hash: hash, Prefix: prefix, Name: "test", Email: id + "@example.com", Tier: certbank.TierFree, CreatedAt: e.clock.Now()}
	if err := e.store.CreateKey(context.Background(), k); err != nil {
		e.tb.Fatal(err)
	}
	if tier != certbank.TierFree {
		if err := e.store.SetTier(context.Background(), id, tier, time.Time{}); err != nil {
			e.tb.Fatal(err)
		}
	}
	return raw, id
}

// usage is what the store holds for a key this month: requests, questions
// served and unique questions seen.
type usage struct{ requests, questions, unique int }

func (e *mcpEnv) usage(id string) usage {
	e.tb.Helper()
	ctx := context.Background()
	req, qs, err := e.store.MonthlyUsage(ctx, id, e.clock.Now().Format("2006-01"))
	if err != nil {
		e.tb.Fatal(err)
	}
	u := usage{requests: req, questions: qs}
	err = e.store.UpdateUsage(ctx, func(tx store.UsageTx) error {
		m, err := tx.Load(ctx, []string{id}, e.clock.Now().Format("2006-01"))
		if err == nil && m[id] != nil {
			u.unique = m[id].SeenCount
		}
		return err // saves nothing
	})
	if err != nil {
		e.tb.Fatal(err)
	}
	return u
}

// recorder is an http.RoundTripper that adds headers (x-api-key, Origin)
// to every request and records what was sent.
type recorder struct {
	set      http.Header
	mu       sync.Mutex
	sent     []http.Header
	received [][]byte // response bodies
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	for k, vs := range r.set {
		req.Header[k] = vs
	}
	res, err := http.DefaultTransport.RoundTrip(req)
	var body []byte
	if err == nil {
		body, _ = io.ReadAll(res.Body)
		res.Body.Close()
		res.Body = io.NopCloser(bytes.NewReader(body))
	}
	r.mu.Lock()
	r.sent = append(r.sent, req.Header.Clone())
	r.received = append(r.received, body)
	r.mu.Unlock()
	return res, err
}

// lastWith returns the last request headers sent with Mcp-Method method.
func (r *recorder) lastWith(method string) http.Header {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.sent) - 1; i >= 0; i-- {
		if r.sent[i].Get("Mcp-Method") == method {
			return r.sent[i]
		}
	}
	return nil
}

// connect opens an SDK client session in the given era, with key in
// x-api-key unless it is empty.
func (e *mcpEnv) connect(t *testing.T, era, key string) (*mcp.ClientSession, *recorder) {
	t.Helper()
	rec := &recorder{set: http.Header{}}
	if key != "" {
		rec.set.Set("x-api-key", key)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "certbank-test", Version: "1.0.0"}, nil)
	tr := &mcp.StreamableClientTransport{Endpoint: e.srv.URL + "/api/mcp", HTTPClient: &http.Client{Transport: rec}, MaxRetries: -1, DisableStandaloneSSE: true}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: era})
	if err != nil {
		t.Fatalf("connect (%s): %v", era, err)
	}
	t.Cleanup(func() { cs.Close() })
	if got := cs.InitializeResult().ProtocolVersion; got != era {
		t.Fatalf("negotiated protocol version %s, want %s", got, era)
	}
	return cs, rec
}

func ctx10(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// call calls a tool; a protocol error fails the test.
func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(ctx10(t), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: protocol error %v", name, args, err)
	}
	return res
}

func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// callOK calls a tool that must succeed and decodes its structured content
// into out. The text block must carry the same JSON.
func callOK(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any, out any) {
	t.Helper()
	res := call(t, cs, name, args)
	if res.IsError {
		t.Fatalf("%s %v: tool error %q", name, args, resultText(res))
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil || res.StructuredContent == nil {
		t.Fatalf("%s: no structured content (%v)", name, err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("%s: structured content %s: %v", name, b, err)
	}
	var fromText any
	if err := json.Unmarshal([]byte(resultText(res)), &fromText); err != nil {
		t.Errorf("%s: the text block is not the JSON result: %v", name, err)
	}
}

// callErr calls a tool that must fail with a tool execution error (isError)
// whose text mentions each of mentions.
func callErr(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any, mentions ...string) string {
	t.Helper()
	res := call(t, cs, name, args)
	text := resultText(res)
	if !res.IsError {
		t.Fatalf("%s %v: want a tool error, got %s", name, args, text)
	}
	for _, m := range mentions {
		if !strings.Contains(text, m) {
			t.Errorf("%s %v: error %q does not mention %q", name, args, text, m)
		}
	}
	return text
}

type practiceOut struct {
	Certification  string `json:"certification"`
	Source         string `json:"source"`
	TotalAvailable int    `json:"total_available"`
	Returned       int    `json:"returned"`
	Questions      []struct {
		ID          string            `json:"id"`
		Question    string            `json:"question"`
		Options     map[string]string `json:"options"`
		Difficulty  string            `json:"difficulty"`
		Domain      string            `json:"domain"`
		Answer      string            `json:"answer"`
		Explanation string            `json:"explanation"`
	} `json:"questions"`
	UniqueQuestions *struct{ Limit, Used, Remaining int } `json:"unique_questions"`
}

type checkOut struct {
	QuestionID    string `json:"question_id"`
	Chosen        string `json:"chosen"`
	Correct       bool   `json:"correct"`
	CorrectAnswer string `json:"correct_answer"`
	Explanation   string `json:"explanation"`
}

// qid is the id testBank gives question i of a certification.
func qid(slug string, i int) string {
	return fmt.Sprintf("%08x-0000-4000-8000-%012x", i, map[string]int{"cissp": 1, "pmp": 2}[slug])
}

// answerOf is the stored answer of question i in testBank.
func answerOf(i int) string { return string(certbank.Letters[i%4]) }

var wantTools = []string{"check_answer", "get_exam_blueprint", "get_practice_questions", "list_certifications", "report_question", "start_mock_exam", "submit_mock_exam"}

func TestMCPToolsList(t *testing.T) {
	e := newMCPEnv(t, testBank(12))
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			cs, _ := e.connect(t, era, "")
			res, err := cs.ListTools(ctx10(t), nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tl := range res.Tools {
				names = append(names, tl.Name)
				d, _ := certbank.LookupMCPTool(tl.Name)
				if tl.Annotations == nil || tl.Annotations.ReadOnlyHint != !d.Writes {
					t.Errorf("%s: readOnlyHint is not %v", tl.Name, !d.Writes)
				}
				if tl.Annotations != nil && (tl.Annotations.OpenWorldHint == nil || *tl.Annotations.OpenWorldHint) {
					t.Errorf("%s: openWorldHint should be false", tl.Name)
				}
				if tl.Description == "" || tl.Title == "" {
					t.Errorf("%s: no title or description", tl.Name)
				}
				for what, s := range map[string]any{"input": tl.InputSchema, "output": tl.OutputSchema} {
					m, _ := s.(map[string]any)
					if m["type"] != "object" {
						t.Errorf("%s: %s schema %v is not an object schema", tl.Name, what, s)
					}
				}
			}
			sorted := slices.Clone(names)
			sort.Strings(sorted)
			if !slices.Equal(sorted, wantTools) {
				t.Errorf("tools = %v, want %v", names, wantTools)
			}
		})
	}
}

// TestMCPToolsMatchDomain: the live server lists exactly the tools,
// prompts and resource templates of the domain package, which the server
// card in the build lists too.
func TestMCPToolsMatchDomain(t *testing.T) {
	e := newMCPEnv(t, testBank(12))
	cs, _ := e.connect(t, eraModern, "")
	ctx := ctx10(t)
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var live, want []string
	for _, tl := range tools.Tools {
		live = append(live, fmt.Sprintf("%s|%s|%s|ro=%v|idem=%v", tl.Name, tl.Title, tl.Description, tl.Annotations.ReadOnlyHint, tl.Annotations.IdempotentHint))
	}
	for _, tl := range certbank.MCPTools() {
		want = append(want, fmt.Sprintf("%s|%s|%s|ro=%v|idem=%v", tl.Name, tl.Title, tl.Description, !tl.Writes, tl.Idempotent))
	}
	sameSet(t, "tools", live, want)
	prompts, err := cs.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	live, want = nil, nil
	for _, p := range prompts.Prompts {
		live = append(live, p.Name+"|"+p.Description)
	}
	for _, p := range certbank.MCPPrompts() {
		want = append(want, p.Name+"|"+p.Description)
	}
	sameSet(t, "prompts", live, want)
	tpls, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	live, want = nil, nil
	for _, r := range tpls.ResourceTemplates {
		live = append(live, r.URITemplate+"|"+r.Description)
	}
	for _, r := range certbank.MCPResources() {
		want = append(want, r.Name+"|"+r.Description)
	}
	sameSet(t, "resource templates", live, want)
}

func sameSet(t *testing.T, what string, live, want []string) {
	t.Helper()
	slices.Sort(live)
	slices.Sort(want)
	if !slices.Equal(live, want) {
		t.Errorf("%s differ:\nlive: %q\nwant: %q", what, live, want)
	}
}

func TestMCPToolsWithoutKey(t *testing.T) {
	e := newMCPEnv(t, testBank(20))
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			cs, _ := e.connect(t, era, "")
			var lc struct {
				Certifications []struct {
					Slug, Name, Provider, ExamStatus string
					Questions                        int `json:"questions"`
					FreeQuestions                    int `json:"free_questions"`
				} `json:"certifications"`
			}
			callOK(t, cs, "list_certifications", nil, &lc)
			if len(lc.Certifications) != 2 || lc.Certifications[0].Slug != "cissp" || lc.Certifications[0].Questions != 20 || lc.Certifications[0].FreeQuestions != 5 {
				t.Errorf("list_certifications = %+v", lc)
			}
			callOK(t, cs, "list_certifications", map[string]any{"provider": "pmbody"}, &lc)
			if len(lc.Certifications) != 1 || lc.Certifications[0].Slug != "pmp" {
				t.Errorf("provider filter: %+v", lc)
			}

			var bp struct {
				Slug          string         `json:"slug"`
				ExamMinutes   int            `json:"exam_minutes"`
				ExamQuestions int            `json:"exam_questions"`
				Difficulty    map[string]int `json:"difficulty"`
				Domains       []struct {
					Name       string `json:"name"`
					Weight     int    `json:"weight"`
					Questions  int    `json:"questions"`
					Objectives []struct {
						Code      string `json:"code"`
						Name      string `json:"name"`
						Questions int    `json:"questions"`
					} `json:"objectives"`
				} `json:"domains"`
			}
			callOK(t, cs, "get_exam_blueprint", map[string]any{"certification": "cissp"}, &bp)
			if bp.Slug != "cissp" || bp.ExamMinutes != 60 || len(bp.Domains) != 2 || bp.Domains[0].Questions != 10 || bp.Domains[0].Weight != 50 ||
				bp.Difficulty["easy"]+bp.Difficulty["medium"]+bp.Difficulty["hard"] != 20 {
				t.Errorf("get_exam_blueprint = %+v", bp)
			}
			// The 20 questions cycle through objectives 1.1, 2.1, 1.2, 2.1.
			if o := bp.Domains[0].Objectives; len(o) != 2 || o[0].Code != "1.1" || o[0].Name != "Explain alpha" || o[0].Questions != 5 || o[1].Questions != 5 ||
				len(bp.Domains[1].Objectives) != 1 || bp.Domains[1].Objectives[0].Questions != 10 {
				t.Errorf("get_exam_blueprint objectives = %+v", bp.Domains)
			}

			// without a key only the free sample (questions 0-4) is drawn
			var p practiceOut
			callOK(t, cs, "get_practice_questions", map[string]any{"certification": "cissp", "count": 10}, &p)
			if p.Source != "free_sample" || p.TotalAvailable != 5 || p.Returned != 5 || len(p.Questions) != 5 || p.UniqueQuestions != nil {
				t.Errorf("no-key practice: %+v", p)
			}
			samples := map[string]bool{}
			for i := 0; i < 5; i++ {
				samples[qid("cissp", i)] = true
			}
			for _, q := range p.Questions {
				if !samples[q.ID] || q.Answer != "" || q.Explanation != "" || len(q.Options) != 4 {
					t.Errorf("no-key question %+v: not a sample, or shows its answer", q)
				}
			}
			callOK(t, cs, "get_practice_questions", map[string]any{"certification": "pmp", "count": 3, "difficulty": "EASY", "include_answers": true}, &p)
			for _, q := range p.Questions {
				if q.Difficulty != "easy" || q.Answer == "" || q.Explanation == "" {
					t.Errorf("filtered question with answers: %+v", q)
				}
			}

			// check_answer grades sample questions
			var c checkOut
			callOK(t, cs, "check_answer", map[string]any{"question_id": qid("cissp", 1), "answer": answerOf(1)}, &c)
			if !c.Correct || c.CorrectAnswer != answerOf(1) || c.Explanation == "" {
				t.Errorf("check_answer right: %+v", c)
			}
			callOK(t, cs, "check_answer", map[string]any{"question_id": qid("cissp", 2), "answer": strings.ToLower(answerOf(3))}, &c)
			if c.Correct || c.CorrectAnswer != answerOf(2) || c.Chosen != answerOf(3) {
				t.Errorf("check_answer wrong: %+v", c)
			}
			// but refuses the rest of the bank
			callErr(t, cs, "check_answer", map[string]any{"question_id": qid("cissp", 7), "answer": "A"}, "free-sample")
		})
	}
}

func TestMCPToolsWithKey(t *testing.T) {
	e := newMCPEnv(t, testBank(20))
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			key, id := e.newKey(certbank.TierFree)
			cs, _ := e.connect(t, era, key)
			var p practiceOut
			// cissp domain Alpha is questions 0, 2, ..., 18: the whole draw
			callOK(t, cs, "get_practice_questions", map[string]any{"certification": "cissp", "domain": "alpha", "count": 10}, &p)
			if p.Source != "bank" || p.TotalAvailable != 10 || p.Returned != 10 || p.UniqueQuestions == nil || *p.UniqueQuestions != (struct{ Limit, Used, Remaining int }{50, 10, 40}) {
				t.Errorf("keyed practice: %+v %+v", p, p.UniqueQuestions)
			}
			for _, q := range p.Questions {
				if q.Domain != "Alpha" || q.Answer != "" {
					t.Errorf("keyed question %+v", q)
				}
			}
			before := e.usage(id)
			// a question served to the key (not a sample) can be checked
			var c checkOut
			callOK(t, cs, "check_answer", map[string]any{"question_id": qid("cissp", 6), "answer": answerOf(6)}, &c)
			if !c.Correct {
				t.Errorf("check_answer on a served question: %+v", c)
			}
			// one never served cannot
			callErr(t, cs, "check_answer", map[string]any{"question_id": qid("cissp", 7), "answer": "A"}, "not served")
			// samples can always be checked
			callOK(t, cs, "check_answer", map[string]any{"question_id": qid("pmp", 3), "answer": "A"}, &c)
			if after := e.usage(id); after != before {
				t.Errorf("check_answer was counted: usage %+v → %+v", before, after)
			}
			var lc map[string]any
			callOK(t, cs, "list_certifications", nil, &lc)
			var bp map[string]any
			callOK(t, cs, "get_exam_blueprint", map[string]any{"certification": "pmp"}, &bp)
			if after := e.usage(id); after != before {
				t.Errorf("catalog tools were counted: usage %+v → %+v", before, after)
			}
		})
	}
}

// TestMCPCountsLikeREST makes the same draws through GET /api/v1/questions
// with one key and get_practice_questions with another, and compares what
// the store counted after each.
func TestMCPCountsLikeREST(t *testing.T) {
	e := newMCPEnv(t, testBank(20))
	restKey, restID := e.newKey(certbank.TierFree)
	steps := []struct {
		query string
		args  map[string]any
		want  usage
	}{
		// every draw takes all its candidates, so the counts are exact
		{"certification=cissp&domain=Alpha&limit=10", map[string]any{"certification": "cissp", "domain": "Alpha", "count": 10}, usage{1, 10, 10}},
		{"certification=cissp&domain=Alpha&limit=10", map[string]any{"certification": "cissp", "domain": "Alpha", "count": 10}, usage{2, 20, 10}},
		{"certification=pmp&domain=Beta&limit=10", map[string]any{"certification": "pmp", "domain": "Beta", "count": 10}, usage{3, 30, 20}},
		{"certification=pmp&domain=Beta&difficulty=hard&limit=10", map[string]any{"certification": "pmp", "domain": "Beta", "difficulty": "hard", "count": 10}, usage{4, 33, 20}},
	}
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			mcpKey, mcpID := e.newKey(certbank.TierFree)
			cs, _ := e.connect(t, era, mcpKey)
			for i, st := range steps {
				var p practiceOut
				callOK(t, cs, "get_practice_questions", st.args, &p)
				mu := e.usage(mcpID)
				if mu != st.want {
					t.Errorf("step %d: MCP usage %+v, want %+v", i, mu, st.want)
				}
				if p.UniqueQuestions == nil || p.UniqueQuestions.Used != st.want.unique {
					t.Errorf("step %d: MCP unique_questions %+v", i, p.UniqueQuestions)
				}
			}
		})
	}
	for i, st := range steps {
		r := restGet(t, e, "/api/v1/questions?"+st.query, restKey)
		if r.status != 200 {
			t.Fatalf("REST step %d: %d %s", i, r.status, r.body)
		}
		if ru := e.usage(restID); ru != st.want {
			t.Errorf("step %d: REST usage %+v, want %+v", i, ru, st.want)
		}
	}
}

func restGet(t *testing.T, e *mcpEnv, path, key string) resp {
	t.Helper()
	req, _ := http.NewRequest("GET", e.srv.URL+path, nil)
	if key != "" {
		req.Header.Set("x-api-key", key)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return resp{res.StatusCode, res.Header, b}
}

// TestMCPQuotaShared: a Free key's 10 requests a minute are shared by REST
// and MCP; the 11th get_practice_questions is a tool error naming the limit.
func TestMCPQuotaShared(t *testing.T) {
	e := newMCPEnv(t, testBank(20))
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			key, id := e.newKey(certbank.TierFree)
			cs, _ := e.connect(t, era, key)
			for i := 0; i < 4; i++ {
				if r := restGet(t, e, "/api/v1/questions?limit=1", key); r.status != 200 {
					t.Fatalf("REST %d: %d %s", i, r.status, r.body)
				}
			}
			for i := 0; i < 6; i++ {
				var p practiceOut
				callOK(t, cs, "get_practice_questions", map[string]any{"certification": "cissp", "count": 1}, &p)
			}
			callErr(t, cs, "get_practice_questions", map[string]any{"certification": "cissp", "count": 1}, "rate limit of 10 requests per minute", "Free tier", "retry after")
			if r := restGet(t, e, "/api/v1/questions?limit=1", key); r.status != 429 {
				t.Errorf("REST after MCP exhausted the minute: %d", r.status)
			}
			if u := e.usage(id); u.requests != 10 || u.questions != 10 {
				t.Errorf("usage %+v, want 10 requests and 10 questions", u)
			}
			e.clock.Add(time.Minute)
			var p practiceOut
			callOK(t, cs, "get_practice_questions", map[string]any{"certification": "cissp", "count": 1}, &p)
		})
	}
}

func TestMCPBadArguments(t *testing.T) {
	e := newMCPEnv(t, testBank(12))
	key, id := e.newKey(certbank.TierFree)
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			anon, _ := e.connect(t, era, "")
			keyed, _ := e.connect(t, era, key)
			tests := []struct {
				name     string
				cs       *mcp.ClientSession
				tool     string
				args     map[string]any
				mentions []string
			}{
				{"unknown certification", anon, "get_practice_questions", map[string]any{"certification": "nope"}, []string{`"nope"`, "list_certifications"}},
				{"unknown certification keyed", keyed, "get_practice_questions", map[string]any{"certification": "nope"}, []string{"list_certifications"}},
				{"blueprint unknown certification", anon, "get_exam_blueprint", map[string]any{"certification": "nope"}, []string{"list_certifications"}},
				{"missing certification", anon, "get_practice_questions", map[string]any{}, []string{"certification"}},
				{"bad difficulty", anon, "get_practice_questions", map[string]any{"certification": "cissp", "difficulty": "insane"}, []string{"easy, medium or hard"}},
				{"unknown domain", keyed, "get_practice_questions", map[string]any{"certification": "cissp", "domain": "Gamma"}, []string{"Gamma", "get_exam_blueprint"}},
				{"count above 10 without key", anon, "get_practice_questions", map[string]any{"certification": "cissp", "count": 11}, []string{"1 to 10", "without an API key"}},
				{"negative count", anon, "get_practice_questions", map[string]any{"certification": "cissp", "count": -1}, []string{"count", "1 to 10"}},
				{"zero count", anon, "get_practice_questions", map[string]any{"certification": "cissp", "count": 0}, []string{"count", "1 to 10"}},
				{"zero count keyed", keyed, "get_practice_questions", map[string]any{"certification": "cissp", "count": 0}, []string{"count", "1 to 10", "Free tier"}},
				{"negative count keyed", keyed, "get_practice_questions", map[string]any{"certification": "cissp", "count": -3}, []string{"count", "1 to 10", "Free tier"}},
				{"count above tier", keyed, "get_practice_questions", map[string]any{"certification": "cissp", "count": 11}, []string{"1 to 10", "Free tier"}},
				{"count not a number", keyed, "get_practice_questions", map[string]any{"certification": "cissp", "count": "ten"}, []string{"count"}},
				{"unknown argument", anon, "get_practice_questions", map[string]any{"certification": "cissp", "limit": 5}, []string{"limit"}},
				{"bad letter", anon, "check_answer", map[string]any{"question_id": qid("cissp", 0), "answer": "E"}, []string{"A, B, C, D"}},
				{"missing letter", anon, "check_answer", map[string]any{"question_id": qid("cissp", 0)}, []string{"answer"}},
				{"unknown question", anon, "check_answer", map[string]any{"question_id": "nope", "answer": "A"}, []string{"nope", "get_practice_questions"}},
				{"unknown provider", anon, "list_certifications", map[string]any{"provider": "Nobody"}, []string{"Nobody", "SecBody"}},
			}
			for _, tc := range tests {
				t.Run(tc.name, func(t *testing.T) { callErr(t, tc.cs, tc.tool, tc.args, tc.mentions...) })
			}
			// an unknown tool is a protocol error
			_, err := anon.CallTool(ctx10(t), &mcp.CallToolParams{Name: "drop_tables", Arguments: map[string]any{}})
			var werr *jsonrpc.Error
			if !errors.As(err, &werr) || werr.Code != jsonrpc.CodeInvalidParams || !strings.Contains(werr.Message, "drop_tables") {
				t.Errorf("unknown tool: %v, want a -32602 protocol error naming the tool", err)
			}
		})
	}
	if u := e.usage(id); u != (usage{}) {
		t.Errorf("rejected calls were counted: %+v", u)
	}
}

func TestMCPResourcesAndPrompt(t *testing.T) {
	e := newMCPEnv(t, testBank(12))
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			cs, _ := e.connect(t, era, "")
			ctx := ctx10(t)
			rl, err := cs.ListResources(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var uris []string
			for _, r := range rl.Resources {
				uris = append(uris, r.URI)
				if r.MIMEType != "application/json" || r.Title == "" {
					t.Errorf("resource %+v", r)
				}
			}
			if !slices.Equal(uris, []string{"certbank://certifications/cissp", "certbank://certifications/pmp"}) {
				t.Errorf("resources = %v", uris)
			}
			tl, err := cs.ListResourceTemplates(ctx, nil)
			if err != nil || len(tl.ResourceTemplates) != 1 || tl.ResourceTemplates[0].URITemplate != "certbank://certifications/{slug}" {
				t.Errorf("templates = %+v, %v", tl, err)
			}
			rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "certbank://certifications/pmp"})
			if err != nil || len(rr.Contents) != 1 {
				t.Fatalf("read: %+v %v", rr, err)
			}
			var bp struct {
				Slug    string           `json:"slug"`
				Domains []map[string]any `json:"domains"`
			}
			if err := json.Unmarshal([]byte(rr.Contents[0].Text), &bp); err != nil || bp.Slug != "pmp" || len(bp.Domains) != 2 || rr.Contents[0].MIMEType != "application/json" ||
				len(bp.Domains[0]["objectives"].([]any)) != 2 {
				t.Errorf("read pmp: %s (%v)", rr.Contents[0].Text, err)
			}
			for _, uri := range []string{"certbank://certifications/nope", "certbank://other/cissp", "https://example.com/"} {
				_, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
				var werr *jsonrpc.Error
				if !errors.As(err, &werr) || werr.Code != mcp.CodeResourceNotFound {
					t.Errorf("read %s: %v, want resource-not-found (%d)", uri, err, mcp.CodeResourceNotFound)
				}
			}

			pl, err := cs.ListPrompts(ctx, nil)
			if err != nil || len(pl.Prompts) != 1 || pl.Prompts[0].Name != "quiz_me" || len(pl.Prompts[0].Arguments) != 3 || !pl.Prompts[0].Arguments[0].Required {
				t.Fatalf("prompts = %+v, %v", pl, err)
			}
			gp, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "quiz_me", Arguments: map[string]string{"certification": "cissp", "count": "3", "difficulty": "hard"}})
			if err != nil || len(gp.Messages) != 1 || gp.Messages[0].Role != "user" {
				t.Fatalf("quiz_me: %+v %v", gp, err)
			}
			text := gp.Messages[0].Content.(*mcp.TextContent).Text
			for _, s := range []string{"get_practice_questions", `"cissp"`, "count 3", `difficulty "hard"`, "check_answer"} {
				if !strings.Contains(text, s) {
					t.Errorf("quiz_me text lacks %q:\n%s", s, text)
				}
			}
			// Bad prompt arguments are invalid params (-32602) that name
			// the argument and what is allowed.
			for _, tc := range []struct {
				args     map[string]string
				mentions []string
			}{
				{map[string]string{}, []string{"certification", "list_certifications"}},
				{map[string]string{"certification": "nope"}, []string{`"nope"`, "list_certifications"}},
				{map[string]string{"certification": "cissp", "difficulty": "insane"}, []string{"insane", "easy, medium or hard"}},
				{map[string]string{"certification": "cissp", "count": "lots"}, []string{"count", "from 1 to"}},
				{map[string]string{"certification": "cissp", "count": "0"}, []string{"count", "from 1 to"}},
				{map[string]string{"certification": "cissp", "count": "-2"}, []string{"count", "from 1 to"}},
			} {
				_, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "quiz_me", Arguments: tc.args})
				var werr *jsonrpc.Error
				if !errors.As(err, &werr) || werr.Code != jsonrpc.CodeInvalidParams {
					t.Errorf("quiz_me %v: %v, want a -32602 invalid-params error", tc.args, err)
					continue
				}
				for _, m := range tc.mentions {
					if !strings.Contains(werr.Message, m) {
						t.Errorf("quiz_me %v: message %q does not mention %q", tc.args, werr.Message, m)
					}
				}
			}
		})
	}
}

// TestMCPDiscoverMatchesCard: server/discover reports exactly the
// protocol versions the server card lists (certbank.MCPProtocolVersions).
func TestMCPDiscoverMatchesCard(t *testing.T) {
	e := newMCPEnv(t, testBank(12))
	body := `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + modernMeta + `}}`
	r := rawMCP(t, http.DefaultClient, e.srv.URL+"/api/mcp", body, modernHeaders("server/discover", "")...)
	var out struct {
		Result struct {
			SupportedVersions []string `json:"supportedVersions"`
		}
		Error any
	}
	if err := json.Unmarshal(r.body, &out); err != nil || r.status != 200 || out.Error != nil {
		t.Fatalf("server/discover: %d %s (%v)", r.status, r.body, err)
	}
	got, want := out.Result.SupportedVersions, certbank.MCPProtocolVersions()
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("server/discover lists %q; the server card lists %q\n%s", got, want, r.body)
	}
}

// TestMCPModernHeaders checks that the SDK client really spoke the modern
// era (headers and no handshake) and the legacy one (handshake, version
// header).
func TestMCPModernHeaders(t *testing.T) {
	e := newMCPEnv(t, testBank(12))
	cs, rec := e.connect(t, eraModern, "")
	call(t, cs, "get_exam_blueprint", map[string]any{"certification": "cissp"})
	h := rec.lastWith("tools/call")
	if h == nil || h.Get("Mcp-Protocol-Version") != eraModern || h.Get("Mcp-Name") != "get_exam_blueprint" {
		t.Errorf("modern tools/call headers: %v", h)
	}
	if rec.lastWith("server/discover") == nil {
		t.Error("the modern client did not call server/discover")
	}
	for _, sent := range rec.sent {
		if sent.Get("Mcp-Session-Id") != "" {
			t.Errorf("a session id was sent: %v", sent)
		}
	}
	cs, rec = e.connect(t, eraLegacy, "")
	call(t, cs, "get_exam_blueprint", map[string]any{"certification": "cissp"})
	last := rec.sent[len(rec.sent)-1]
	if last.Get("Mcp-Protocol-Version") != eraLegacy || last.Get("Mcp-Session-Id") != "" {
		t.Errorf("legacy tools/call headers: %v", last)
	}
}

// rawMCP POSTs one JSON-RPC message to /api/mcp with the headers given
// (pairs of name, value) on top of Content-Type and Accept.
func rawMCP(t testing.TB, client *http.Client, url, body string, headers ...string) resp {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return resp{res.StatusCode, res.Header, b}
}

const legacyInit = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}}`

func modernCall(tool string, args string) string {
	return `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `,` + modernMeta + `}}`
}

func modernHeaders(method, name string) []string {
	h := []string{"MCP-Protocol-Version", eraModern, "Mcp-Method", method}
	if name != "" {
		h = append(h, "Mcp-Name", name)
	}
	return h
}

// TestMCPRawModern sends modern-era requests by hand, as research §1.3
// describes them, and checks the wire format and the header rules.
func TestMCPRawModern(t *testing.T) {
	e := newMCPEnv(t, testBank(12))
	key, _ := e.newKey(certbank.TierFree)
	url := e.srv.URL + "/api/mcp"
	c := http.DefaultClient

	r := rawMCP(t, c, url, `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{`+modernMeta+`}}`, modernHeaders("server/discover", "")...)
	var disc struct {
		Result struct {
			SupportedVersions []string       `json:"supportedVersions"`
			Capabilities      map[string]any `json:"capabilities"`
		} `json:"result"`
	}
	if err := json.Unmarshal(r.body, &disc); r.status != 200 || err != nil || !slices.Contains(disc.Result.SupportedVersions, eraModern) || !slices.Contains(disc.Result.SupportedVersions, eraLegacy) {
		t.Errorf("server/discover: %d %s", r.status, r.body)
	}
	for _, cap := range []string{"tools", "resources", "prompts"} {
		if disc.Result.Capabilities[cap] == nil {
			t.Errorf("server/discover lacks capability %s: %s", cap, r.body)
		}
	}
	if r.header.Get("Mcp-Session-Id") != "" {
		t.Error("a stateless server minted a session id")
	}

	r = rawMCP(t, c, url, modernCall("get_practice_questions", `{"certification":"cissp","count":2}`), append(modernHeaders("tools/call", "get_practice_questions"), "x-api-key", key)...)
	var res struct {
		Result struct {
			ResultType        string      `json:"resultType"`
			IsError           bool        `json:"isError"`
			StructuredContent practiceOut `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal(r.body, &res); r.status != 200 || err != nil || res.Result.ResultType != "complete" || res.Result.IsError ||
		res.Result.StructuredContent.Source != "bank" || res.Result.StructuredContent.Returned != 2 || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
		t.Errorf("modern tools/call: %d %s", r.status, r.body)
	}

	r = rawMCP(t, c, url, `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{`+modernMeta+`}}`, modernHeaders("tools/list", "")...)
	var tl struct {
		Result struct {
			ResultType string           `json:"resultType"`
			TTL        *int             `json:"ttlMs"`
			CacheScope string           `json:"cacheScope"`
			Tools      []map[string]any `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal(r.body, &tl); r.status != 200 || err != nil || len(tl.Result.Tools) != len(certbank.MCPTools()) || tl.Result.TTL == nil || tl.Result.CacheScope == "" {
		t.Errorf("modern tools/list: %d %s", r.status, r.body)
	}

	// header rules
	for _, tc := range []struct {
		name    string
		headers []string
		status  int
		code    int
	}{
		{"Mcp-Name mismatch", modernHeaders("tools/call", "check_answer"), 400, -32020},
		{"Mcp-Method mismatch", modernHeaders("tools/list", "get_practice_questions"), 400, -32020},
		{"no Mcp-Name", modernHeaders("tools/call", ""), 400, -32020},
		{"unsupported version", []string{"MCP-Protocol-Version", "2099-01-01", "Mcp-Method", "tools/call", "Mcp-Name", "get_practice_questions"}, 400, 0},
	} {
		r := rawMCP(t, c, url, modernCall("get_practice_questions", `{"certification":"cissp"}`), tc.headers...)
		var body struct {
			Error struct{ Code int } `json:"error"`
		}
		json.Unmarshal(r.body, &body)
		if r.status != tc.status || (tc.code != 0 && body.Error.Code != tc.code) {
			t.Errorf("%s: %d %s, want %d with code %d", tc.name, r.status, r.body, tc.status, tc.code)
		}
	}
}

func TestMCPHTTPRules(t *testing.T) {
	e := newMCPEnv(t, testBank(12))
	key, _ := e.newKey(certbank.TierFree)
	url := e.srv.URL + "/api/mcp"
	c := http.DefaultClient
	for _, tc := range []struct {
		name    string
		headers []string
		status  int
		mention string
	}{
		{"no origin", nil, 200, ""},
		{"same origin", []string{"Origin", e.srv.URL}, 200, ""},
		{"site origin", []string{"Origin", "http://certbank.test"}, 200, ""},
		{"foreign origin", []string{"Origin", "http://evil.example.com"}, 403, "evil.example.com"},
		{"foreign origin with key", []string{"Origin", "https://evil.example.com", "x-api-key", key}, 403, "origin"},
		{"null origin", []string{"Origin", "null"}, 403, "origin"},
		{"lookalike origin", []string{"Origin", "http://certbank.test.evil.example"}, 403, "origin"},
		{"good key", []string{"x-api-key", key}, 200, ""},
		{"malformed key", []string{"x-api-key", "hello"}, 401, "x-api-key"},
		{"unknown key", []string{"x-api-key", paywall.KeyPrefix + strings.Repeat("a", 32)}, 401, "x-api-key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rawMCP(t, c, url, legacyInit, tc.headers...)
			if r.status != tc.status || !strings.Contains(string(r.body), tc.mention) {
				t.Errorf("got %d %s, want %d mentioning %q", r.status, r.body, tc.status, tc.mention)
			}
			if tc.status == 200 {
				var m struct {
					Result struct{ ProtocolVersion string } `json:"result"`
				}
				if json.Unmarshal(r.body, &m); m.Result.ProtocolVersion != eraLegacy {
					t.Errorf("initialize: %s", r.body)
				}
			}
			if len(tc.headers) > 0 && tc.headers[0] == "Origin" && tc.status == 200 && r.header.Get("Access-Control-Allow-Origin") != tc.headers[1] {
				t.Errorf("Access-Control-Allow-Origin = %q", r.header.Get("Access-Control-Allow-Origin"))
			}
		})
	}
	// a foreign origin is refused before the key is looked at, and a modern
	// request is checked the same way
	r := rawMCP(t, c, url, modernCall("list_certifications", `{}`), append(modernHeaders("tools/call", "list_certifications"), "Origin", "http://evil.example.com")...)
	if r.status != 403 {
		t.Errorf("modern request from a foreign origin: %d %s", r.status, r.body)
	}
	// a preflight from an allowed origin is answered before auth
	for origin, want := range map[string]int{e.srv.URL: 204, "http://evil.example.com": 403} {
		req, _ := http.NewRequest("OPTIONS", url, nil)
		req.Header.Set("Origin", origin)
		req.Header.Set("Access-Control-Request-Method", "POST")
		req.Header.Set("Access-Control-Request-Headers", "x-api-key, mcp-protocol-version")
		res, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != want || want == 204 && !strings.Contains(res.Header.Get("Access-Control-Allow-Headers"), "Mcp-Method") {
			t.Errorf("preflight from %s: %d %v", origin, res.StatusCode, res.Header)
		}
	}
	// stateless: GET and DELETE are 405
	for _, m := range []string{"GET", "DELETE"} {
		req, _ := http.NewRequest(m, url, nil)
		req.Header.Set("Accept", "text/event-stream")
		res, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 405 {
			t.Errorf("%s /api/mcp: %d, want 405", m, res.StatusCode)
		}
	}
	// a body over the limit is refused
	big := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"check_answer","arguments":{"question_id":"` + strings.Repeat("x", 2<<20) + `","answer":"A"}}}`
	if r := rawMCP(t, c, url, big, "MCP-Protocol-Version", eraLegacy); r.status != 413 && r.status != 400 {
		t.Errorf("2 MiB body: %d", r.status)
	}
}

// Benchmarks: the same draw (10 random questions of one certification with
// an Enterprise key) through GET /api/v1/questions and through tools/call
// get_practice_questions, over a real HTTP server with the SQLite store.
//
//	go test ./paywall/ -run '^$' -bench 'RESTQuestions|MCPGetPracticeQuestions' -benchtime 3s
//
// (BENCHMARKS.md, section MCP, has figures and a loop that interleaves
// several runs.)

func benchEnv(b *testing.B) (*mcpEnv, string, *http.Client) {
	bank := testBank(300)
	// an Enterprise key without the per-minute limit, so only throughput
	// is measured (both routes go through the same accounting)
	for i := range bank.Site.Tiers {
		if bank.Site.Tiers[i].Name == certbank.TierEnterprise {
			bank.Site.Tiers[i].PerMinute = 1 << 30
		}
	}
	e := newMCPEnv(b, bank)
	key, _ := e.newKey(certbank.TierEnterprise)
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 256
	b.Cleanup(tr.CloseIdleConnections)
	return e, key, &http.Client{Transport: tr}
}

// benchParallel runs do from 16 goroutines (8 per CPU on the 2-CPU
// machines). Besides ns/op it reports cpu-µs/op, the process's CPU time
// (client and server, user and system) per request, which is steadier
// than wall time on a shared machine.
func benchParallel(b *testing.B, do func() error) {
	var failed atomic.Int64
	var firstErr atomic.Value
	b.SetParallelism(8)
	b.ReportAllocs()
	cpu0 := processCPU()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := do(); err != nil {
				if failed.Add(1) == 1 {
					firstErr.Store(err)
				}
			}
		}
	})
	b.StopTimer()
	if cpu1 := processCPU(); cpu0 >= 0 && cpu1 >= 0 {
		b.ReportMetric(float64((cpu1-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
	}
	if n := failed.Load(); n > 0 {
		b.Fatalf("%d requests failed; first: %v", n, firstErr.Load())
	}
}

// processCPU is the user+system CPU time of this process from
// /proc/self/stat (Linux; -1 elsewhere), in clock ticks of 10 ms.
func processCPU() time.Duration {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return -1
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 13 {
		return -1
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return -1
	}
	return time.Duration(ut+st) * 10 * time.Millisecond
}

func BenchmarkRESTQuestions(b *testing.B) {
	e, key, client := benchEnv(b)
	url := e.srv.URL + "/api/v1/questions?certification=cissp&limit=10"
	benchParallel(b, func() error {
		req, _ := http.NewRequest("GET", url, nil)
		req.Header.Set("x-api-key", key)
		res, err := client.Do(req)
		if err != nil {
			return err
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || !bytes.Contains(body, []byte(`"returned":10`)) {
			return fmt.Errorf("%d %s", res.StatusCode, body)
		}
		return nil
	})
}

func BenchmarkMCPGetPracticeQuestions(b *testing.B) {
	benchMCP(b, modernCall("get_practice_questions", `{"certification":"cissp","count":10}`))
}

func benchMCP(b *testing.B, body string) {
	e, key, client := benchEnv(b)
	url := e.srv.URL + "/api/mcp"
	benchParallel(b, func() error {
		req, _ := http.NewRequest("POST", url, strings.NewReader(body))
		h := req.Header
		h.Set("Content-Type", "application/json")
		h.Set("Accept", "application/json, text/event-stream")
		h.Set("MCP-Protocol-Version", eraModern)
		h.Set("Mcp-Method", "tools/call")
		h.Set("Mcp-Name", "get_practice_questions")
		h.Set("x-api-key", key)
		res, err := client.Do(req)
		if err != nil {
			return err
		}
		rb, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || !bytes.Contains(rb, []byte(`"returned":10`)) || bytes.Contains(rb, []byte(`"isError":true`)) {
			return fmt.Errorf("%d %s", res.StatusCode, rb)
		}
		return nil
	})
}
