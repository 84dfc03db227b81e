package verify_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/verify"
)

func commandSolver(t *testing.T, script string) verify.Solver {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", script))
	if err != nil {
		t.Fatal(err)
	}
	s, err := verify.ParseSolver("cmd:"+p, "")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// recordedAnswers returns solver's answers in the tree, by question id.
func recordedAnswers(t *testing.T, dir, solver string) map[string]certbank.Letter {
	t.Helper()
	got := map[string]certbank.Letter{}
	for _, q := range mustOpen(t, dir).Content().Questions {
		for _, v := range q.Verifications {
			if v.Solver == solver {
				got[q.ID] = v.Answer
			}
		}
	}
	return got
}

func TestRunCommand(t *testing.T) {
	t.Parallel()
	dir := fixture(t)
	var progress bytes.Buffer
	opts := verify.RunOptions{
		Solvers:  []verify.NamedSolver{{Name: "testdata/solver.sh (answers C, or B to one question)", Solver: commandSolver(t, "solver.sh")}},
		Date:     date,
		Progress: &progress,
	}
	res, err := mustOpen(t, dir).Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Total != 7 || res.Answers != 7 || res.Agree != 4 || res.Disagree != 3 || len(res.Failed) != 0 {
		t.Errorf("result = %+v", res)
	}
	want := map[string]certbank.Letter{sprintLength: "C", sizing: "C", twoDevs: "B", whoDecides: "C", testingDept: "C", custodian: "C", ssd: "C"}
	if got := recordedAnswers(t, dir, opts.Solvers[0].Name); !mapsEqualL(got, want) {
		t.Errorf("recorded %v, want %v", got, want)
	}
	lines := strings.Split(strings.TrimSpace(progress.String()), "\n")
	if len(lines) > 10 || !strings.HasPrefix(lines[len(lines)-1], "verify: 7/7 done (4 agree, 3 disagree, 0 failed), ") || !strings.HasSuffix(lines[0], "questions/s") {
		t.Errorf("progress:\n%s", progress.String())
	}

	// Everything is answered: a second run asks nothing.
	res, err = mustOpen(t, dir).Run(context.Background(), opts)
	if err != nil || res.Total != 0 {
		t.Errorf("second run: %+v, %v", res, err)
	}
}

func mapsEqualL(a, b map[string]certbank.Letter) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestRunCommandFailures(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		solver  func(t *testing.T) verify.Solver
		fatal   string // the error Run returns, when it stops
		failure string // else each question's failure
	}{
		{name: "timeout", solver: func(t *testing.T) verify.Solver { return commandSolver(t, "slow.sh") }, failure: "no answer within 200ms (after 2 attempts)"},
		{name: "missing program", solver: func(t *testing.T) verify.Solver { return commandSolver(t, "no-such-solver.sh") }, fatal: "cannot run"},
		{name: "no letter", solver: func(t *testing.T) verify.Solver {
			return verify.SolverFunc(func(context.Context, verify.Item) (certbank.Letter, error) {
				return verify.ParseAnswer("I am not sure.")
			})
		}, failure: "no letter A, B, C or D"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := fixture(t)
			before := snapshot(t, dir)
			res, err := mustOpen(t, dir).Run(context.Background(), verify.RunOptions{
				Solvers:       []verify.NamedSolver{{Name: "test solver", Solver: tc.solver(t)}},
				Certification: "cissp",
				Timeout:       200 * time.Millisecond,
				Retries:       1,
				Backoff:       time.Millisecond,
			})
			if tc.fatal != "" {
				if err == nil || !strings.Contains(err.Error(), tc.fatal) {
					t.Errorf("Run error = %v, want one containing %q", err, tc.fatal)
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				if len(res.Failed) != 2 {
					t.Fatalf("failed = %+v, want both questions", res.Failed)
				}
				for _, f := range res.Failed {
					if !strings.Contains(f.Err.Error(), tc.failure) {
						t.Errorf("failure %v, want %q", f.Err, tc.failure)
					}
				}
			}
			if !mapsEqual(before, snapshot(t, dir)) {
				t.Errorf("a run without answers changed files")
			}
		})
	}
}

// chatServer is a stand-in for an OpenAI-compatible chat completions API.
// It fails the first request of some questions (429, then 500) and answers
// each question in its own style.
type chatServer struct {
	t      *testing.T
	mu     sync.Mutex
	calls  map[string]int // by the first words of the question
	status int            // when set, every request fails with it
}

func (s *chatServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	t := s.t
	body, _ := io.ReadAll(r.Body)
	var req struct {
		Model       string   `json:"model"`
		Temperature *float64 `json:"temperature"`
		Messages    []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil || r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		t.Errorf("unexpected request %s %s: %s", r.Method, r.URL.Path, body)
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	if got := r.Header.Get("Authorization"); got != "Bearer sk-test" {
		t.Errorf("Authorization = %q", got)
	}
	if req.Model != "m1" || req.Temperature == nil || *req.Temperature != 0 || len(req.Messages) != 2 ||
		req.Messages[0].Role != "system" || req.Messages[0].Content != verify.SystemPrompt || req.Messages[1].Role != "user" {
		t.Errorf("unexpected request body: %s", body)
		return
	}
	for _, leak := range []string{"EXPLAIN-", "difficulty", "domain", "07493def"} {
		if strings.Contains(string(body), leak) {
			t.Errorf("the request tells the solver %q: %s", leak, body)
		}
	}
	if s.status != 0 {
		http.Error(w, `{"error": {"message": "invalid api key"}}`, s.status)
		return
	}
	q := req.Messages[1].Content
	start := strings.Join(strings.Fields(q)[:3], " ")
	s.mu.Lock()
	s.calls[start]++
	n := s.calls[start]
	s.mu.Unlock()
	switch {
	case strings.Contains(q, "rule for Sprint length") && n == 1:
		w.Header().Set("Retry-After", "0")
		http.Error(w, `{"error": {"message": "rate limited"}}`, http.StatusTooManyRequests)
		return
	case strings.Contains(q, "sizing") && n == 1:
		http.Error(w, "upstream failed", http.StatusInternalServerError)
		return
	}
	reply := "C"
	switch {
	case strings.Contains(q, "Two Developers disagree"):
		reply = "<think>A or B? No.</think>The best answer is D."
	case strings.Contains(q, "functional manager"):
		reply = "**A**"
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion", "model": req.Model,
		"choices": []map[string]any{{"index": 0, "finish_reason": "stop", "message": map[string]string{"role": "assistant", "content": reply}}},
	})
}

func TestRunOpenAI(t *testing.T) {
	t.Parallel()
	dir := fixture(t)
	srv := &chatServer{t: t, calls: map[string]int{}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	solver, err := verify.ParseSolver("openai:"+ts.URL+"/v1/,model=m1", "sk-test")
	if err != nil {
		t.Fatal(err)
	}
	const name = "m1 via the test server, temperature 0"
	res, err := mustOpen(t, dir).Run(context.Background(), verify.RunOptions{
		Solvers:       []verify.NamedSolver{{Name: name, Solver: solver}},
		Certification: "scrum-psm1",
		Date:          date,
		Backoff:       time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Answers != 5 || res.Agree != 4 || res.Disagree != 1 || len(res.Failed) != 0 {
		t.Errorf("result = %+v", res)
	}
	want := map[string]certbank.Letter{sprintLength: "C", sizing: "C", twoDevs: "D", whoDecides: "A", testingDept: "C"}
	if got := recordedAnswers(t, dir, name); !mapsEqualL(got, want) {
		t.Errorf("recorded %v, want %v", got, want)
	}
	wantCalls := map[string]int{"A company adopting": 2, "During Product Backlog": 2, "Two Developers disagree": 1, "A functional manager": 1, "A Scrum Team's": 1}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if len(srv.calls) != len(wantCalls) {
		t.Errorf("calls = %v, want %v", srv.calls, wantCalls)
	}
	for k, n := range wantCalls {
		if srv.calls[k] != n {
			t.Errorf("%q asked %d times, want %d (calls %v)", k, srv.calls[k], n, srv.calls)
		}
	}
}

func TestRunOpenAIUnauthorized(t *testing.T) {
	t.Parallel()
	dir := fixture(t)
	before := snapshot(t, dir)
	ts := httptest.NewServer(&chatServer{t: t, status: http.StatusUnauthorized})
	defer ts.Close()
	solver, _ := verify.ParseSolver("openai:"+ts.URL+"/v1,model=m1", "sk-test")
	_, err := mustOpen(t, dir).Run(context.Background(), verify.RunOptions{
		Solvers: []verify.NamedSolver{{Name: "m1", Solver: solver}},
		Backoff: time.Millisecond,
	})
	if err == nil || !strings.Contains(err.Error(), "401") || !strings.Contains(err.Error(), "invalid api key") {
		t.Errorf("Run error = %v, want the 401 with the API's message", err)
	}
	if !mapsEqual(before, snapshot(t, dir)) {
		t.Errorf("a failed run changed files")
	}
}

func TestRunResume(t *testing.T) {
	t.Parallel()
	dir := fixture(t)
	const name = "key reader (test)"
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	var first []string
	interrupting := verify.SolverFunc(func(ctx context.Context, it verify.Item) (certbank.Letter, error) {
		mu.Lock()
		defer mu.Unlock()
		if err := ctx.Err(); err != nil {
			return "", err
		}
		first = append(first, it.ID)
		if len(first) == 3 {
			cancel() // the operator presses Ctrl-C while this answer arrives
		}
		return keys[it.ID], nil
	})
	opts := verify.RunOptions{Solvers: []verify.NamedSolver{{Name: name, Solver: interrupting}}, Concurrency: 1, Batch: 2, Date: date}
	res, err := mustOpen(t, dir).Run(ctx, opts)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted run: error %v, want context.Canceled", err)
	}
	if res.Answers != 3 {
		t.Errorf("interrupted run recorded %d answers, want 3", res.Answers)
	}
	kept := recordedAnswers(t, dir, name)
	if len(kept) != 3 {
		t.Fatalf("after the interrupted run the tree holds %v, want the 3 answers %v", kept, first)
	}

	var second []string
	opts.Solvers[0].Solver = verify.SolverFunc(func(_ context.Context, it verify.Item) (certbank.Letter, error) {
		mu.Lock()
		defer mu.Unlock()
		second = append(second, it.ID)
		return keys[it.ID], nil
	})
	opts.Concurrency = 3
	res, err = mustOpen(t, dir).Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range second {
		if _, ok := kept[id]; ok {
			t.Errorf("the rerun asked %s again", id)
		}
	}
	if len(second) != len(keys)-3 || res.Total != len(keys)-3 {
		t.Errorf("the rerun asked %d questions (total %d), want %d", len(second), res.Total, len(keys)-3)
	}
	if got := recordedAnswers(t, dir, name); !mapsEqualL(got, keys) {
		t.Errorf("after the rerun: %v, want every key %v", got, keys)
	}
}

func TestParseSolver(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		spec string
		ok   bool
	}{
		{"openai:https://api.example.com/v1,model=m", true},
		{"cmd:./solve.sh", true},
		{"openai:https://api.example.com/v1", false},
		{"openai:api.example.com,model=m", false},
		{"openai:https://api.example.com/v1,model=m,temperature=1", false},
		{"cmd:", false},
		{"gpt-4o", false},
	} {
		_, err := verify.ParseSolver(tc.spec, "")
		if (err == nil) != tc.ok || err != nil && certbank.ErrorCode(err) != certbank.Invalid {
			t.Errorf("ParseSolver(%q) error = %v, want ok=%v", tc.spec, err, tc.ok)
		}
	}
}

func TestParseAnswer(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		reply string
		want  certbank.Letter
	}{
		{"B", "B"},
		{"Answer: C.", "C"},
		{"**D**", "D"},
		{"(A)", "A"},
		{"<think>Is it A? Or B?</think>\nC", "C"},
		{"Option B is best; D is wrong.", "B"},
		{"Absolutely", ""},
		{"b", ""},
		{"", ""},
	} {
		got, err := verify.ParseAnswer(tc.reply)
		if got != tc.want || (err == nil) != (tc.want != "") {
			t.Errorf("ParseAnswer(%q) = %q, %v; want %q", tc.reply, got, err, tc.want)
		}
	}
}
