package storetest

import (
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/paywall/store"
)

func newExam(n int) store.Exam {
	return store.Exam{
		ID:            fmt.Sprintf("ex_%032x", n),
		Certification: "cissp",
		Length:        "half",
		Source:        "bank",
		Questions:     []string{"q-b", "q-a", "q-c"},
		Minutes:       90,
		CreatedAt:     at(time.Duration(n) * time.Minute),
	}
}

func testExamRoundTrip(t *testing.T, s store.Store) {
	ctx := t.Context()
	e := newExam(1)
	must(t, "create", s.CreateExam(ctx, e))
	got, err := s.ExamByID(ctx, e.ID)
	must(t, "get", err)
	if got.ID != e.ID || got.Certification != e.Certification || got.Length != e.Length || got.Source != e.Source ||
		!reflect.DeepEqual(got.Questions, e.Questions) || got.Minutes != e.Minutes || !sameTime(got.CreatedAt, e.CreatedAt) || !got.GradedAt.IsZero() {
		t.Errorf("got %+v, want %+v", got, e)
	}
	wantKind(t, "create again", s.CreateExam(ctx, e), certbank.Conflict)
	_, err = s.ExamByID(ctx, "ex_nope")
	wantKind(t, "unknown exam", err, certbank.NotFound)
	bad := newExam(2)
	bad.Questions = nil
	wantKind(t, "no questions", s.CreateExam(ctx, bad), certbank.Invalid)
	bad = newExam(3)
	bad.ID = ""
	wantKind(t, "no id", s.CreateExam(ctx, bad), certbank.Invalid)
}

func testExamFinishOnce(t *testing.T, s store.Store) {
	finishOnce(t, []store.Store{s})
	_, err := s.FinishExam(t.Context(), "ex_nope", at(0))
	wantKind(t, "finish unknown", err, certbank.NotFound)
}

// finishOnce finishes one exam from many goroutines over the stores; exactly
// one call may win, and the exam keeps the winner's time.
func finishOnce(t *testing.T, stores []store.Store) {
	t.Helper()
	ctx := t.Context()
	e := newExam(7)
	must(t, "create", stores[0].CreateExam(ctx, e))
	var wins atomic.Int32
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, err := stores[i%len(stores)].FinishExam(ctx, e.ID, at(time.Hour))
			if err != nil {
				t.Errorf("finish: %v", err)
			}
			if ok {
				wins.Add(1)
			}
		}()
	}
	wg.Wait()
	if n := wins.Load(); n != 1 {
		t.Fatalf("%d calls finished the exam, want exactly 1", n)
	}
	got, err := stores[len(stores)-1].ExamByID(ctx, e.ID)
	must(t, "get", err)
	if !sameTime(got.GradedAt, at(time.Hour)) {
		t.Errorf("GradedAt = %v, want %v", got.GradedAt, at(time.Hour))
	}
}

func testResponses(t *testing.T, s store.Store) {
	ctx := t.Context()
	rs := []store.Response{
		{QuestionID: "q1", Chosen: "B", Correct: true, Source: store.SourcePractice, Score: -1, At: at(0)},
		{QuestionID: "q2", Chosen: "", Correct: false, Source: store.SourceExam, Attempt: "att1", Score: 0.75, At: at(time.Minute)},
		{QuestionID: "q1", Chosen: "D", Correct: false, Source: store.SourceMCP, Score: -1, At: at(2 * time.Minute)},
	}
	must(t, "add", s.AddResponses(ctx, rs))
	must(t, "add none", s.AddResponses(ctx, nil))
	got, err := s.Responses(ctx, time.Time{})
	must(t, "list", err)
	if len(got) != len(rs) {
		t.Fatalf("%d responses, want %d", len(got), len(rs))
	}
	for i := range rs {
		g, w := got[i], rs[i]
		if g.QuestionID != w.QuestionID || g.Chosen != w.Chosen || g.Correct != w.Correct || g.Source != w.Source ||
			g.Attempt != w.Attempt || g.Score != w.Score || !sameTime(g.At, w.At) {
			t.Errorf("response %d = %+v, want %+v", i, g, w)
		}
	}
	got, err = s.Responses(ctx, at(time.Minute))
	must(t, "list since", err)
	if len(got) != 2 || got[0].QuestionID != "q2" {
		t.Errorf("since the second: %+v", got)
	}
	// One bad response refuses the whole batch.
	bad := []store.Response{
		{QuestionID: "q3", Chosen: "A", Correct: true, Source: store.SourcePractice, Score: -1, At: at(time.Hour)},
		{QuestionID: "q4", Chosen: "E", Source: store.SourcePractice, Score: -1, At: at(time.Hour)},
	}
	wantKind(t, "bad letter", s.AddResponses(ctx, bad), certbank.Invalid)
	bad[1] = store.Response{QuestionID: "q4", Chosen: "A", Source: "web", Score: -1, At: at(time.Hour)}
	wantKind(t, "bad source", s.AddResponses(ctx, bad), certbank.Invalid)
	got, _ = s.Responses(ctx, time.Time{})
	if len(got) != len(rs) {
		t.Errorf("a refused batch stored something: %d responses", len(got))
	}
}

func newReport(n int, q string) store.Report {
	return store.Report{ID: fmt.Sprintf("rp_%032x", n), QuestionID: q, Reason: "wrong_key", Text: "B is right, not C", CreatedAt: at(time.Duration(n) * time.Minute)}
}

func testReports(t *testing.T, s store.Store) {
	ctx := t.Context()
	r1, r2, r3 := newReport(1, "q1"), newReport(2, "q2"), newReport(3, "q1")
	r2.Reason, r2.Text = "typo", ""
	for _, r := range []store.Report{r1, r2, r3} {
		must(t, "add "+r.ID, s.AddReport(ctx, r))
	}
	wantKind(t, "add again", s.AddReport(ctx, r1), certbank.Conflict)
	got, err := s.ReportByID(ctx, r2.ID)
	must(t, "get", err)
	if got != r2 && !(got.ID == r2.ID && got.QuestionID == r2.QuestionID && got.Reason == r2.Reason && got.Text == r2.Text && sameTime(got.CreatedAt, r2.CreatedAt) && got.Open()) {
		t.Errorf("got %+v, want %+v", got, r2)
	}
	_, err = s.ReportByID(ctx, "rp_nope")
	wantKind(t, "unknown report", err, certbank.NotFound)

	ids := func(rs []store.Report) string {
		var out []string
		for _, r := range rs {
			out = append(out, r.ID[len(r.ID)-1:])
		}
		return strings.Join(out, ",")
	}
	list := func(f store.ReportFilter) string {
		t.Helper()
		rs, err := s.Reports(ctx, f)
		must(t, "list", err)
		return ids(rs)
	}
	if got := list(store.ReportFilter{}); got != "3,2,1" {
		t.Errorf("all reports: %s, want newest first 3,2,1", got)
	}
	if got := list(store.ReportFilter{QuestionID: "q1"}); got != "3,1" {
		t.Errorf("reports of q1: %s, want 3,1", got)
	}
	if got := list(store.ReportFilter{Limit: 1}); got != "3" {
		t.Errorf("limit 1: %s, want 3", got)
	}

	must(t, "resolve", s.ResolveReport(ctx, r3.ID, "fixed the key", at(time.Hour)))
	wantKind(t, "resolve again", s.ResolveReport(ctx, r3.ID, "again", at(2*time.Hour)), certbank.Conflict)
	wantKind(t, "resolve unknown", s.ResolveReport(ctx, "rp_nope", "x", at(time.Hour)), certbank.NotFound)
	wantKind(t, "resolve without time", s.ResolveReport(ctx, r1.ID, "x", time.Time{}), certbank.Invalid)
	got, _ = s.ReportByID(ctx, r3.ID)
	if got.Open() || got.Resolution != "fixed the key" || !sameTime(got.ResolvedAt, at(time.Hour)) {
		t.Errorf("resolved report %+v", got)
	}
	if got := list(store.ReportFilter{Open: true}); got != "2,1" {
		t.Errorf("open reports: %s, want 2,1", got)
	}

	bad := newReport(9, "q9")
	bad.Reason = "hate_it"
	wantKind(t, "unknown reason", s.AddReport(ctx, bad), certbank.Invalid)
	bad = newReport(9, "q9")
	bad.Text = strings.Repeat("é", store.ReportTextMax+1)
	wantKind(t, "text too long", s.AddReport(ctx, bad), certbank.Invalid)
	bad.Text = strings.Repeat("é", store.ReportTextMax)
	must(t, "text at the limit", s.AddReport(ctx, bad))
	if got, _ := s.ReportByID(ctx, bad.ID); got.Text != bad.Text {
		t.Errorf("text of %d characters did not round-trip", store.ReportTextMax)
	}
}

func testMultiFinishOnce(t *testing.T, a, b store.Store) { finishOnce(t, []store.Store{a, b}) }
