package learn_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/paywall/bank"
	"github.com/certbank/certbank/paywall/draw"
	"github.com/certbank/certbank/paywall/learn"
	"github.com/certbank/certbank/paywall/paywalltest"
	"github.com/certbank/certbank/paywall/quota"
	"github.com/certbank/certbank/paywall/store"
	"github.com/certbank/certbank/paywall/store/memstore"
)

type fixture struct {
	svc   *learn.Service
	st    *memstore.Store
	clock *paywalltest.Clock
	acct  *quota.Accountant
	ix    *bank.Index
}

func newFixture(t *testing.T, n int) *fixture {
	t.Helper()
	b := paywalltest.Bank(n)
	st := memstore.New()
	clock := paywalltest.NewClock(time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC))
	ix := bank.New(b)
	acct := quota.New(st, nil)
	t.Cleanup(acct.Close)
	d := draw.New(ix, acct, clock.Now)
	return &fixture{svc: learn.New(d, st, clock.Now, nil), st: st, clock: clock, acct: acct, ix: ix}
}

func (f *fixture) key(t *testing.T, tier string) *store.Key {
	t.Helper()
	k := store.Key{ID: "key_" + tier, Hash: strings.Repeat(tier[:1], 64), Prefix: "cb_live_x", Name: tier, Email: tier + "@example.com", Tier: tier, CreatedAt: f.clock.Now()}
	if err := f.st.CreateKey(context.Background(), k); err != nil {
		t.Fatal(err)
	}
	return &k
}

func code(err error) certbank.Code { return certbank.ErrorCode(err) }

func TestStartExamWeightsAndSources(t *testing.T) {
	f := newFixture(t, 80)
	ctx := context.Background()
	dev := f.key(t, "developer")
	tests := []struct {
		name        string
		key         *store.Key
		length      string
		wantN       int
		wantMinutes int
		wantSource  string
		wantCode    certbank.Code
		wantInError string
	}{
		{"full with a Developer key", dev, "full", 60, 60, "bank", "", ""},
		{"half with a Developer key", dev, "half", 30, 30, "bank", "", ""},
		{"free learner: the free sample, shorter and its time with it", nil, "full", 5, 5, "free_sample", "", ""},
		{"unknown length", dev, "quarter", 0, 0, "", certbank.Invalid, "full or half"},
		{"a full exam is beyond the Free tier's 50 unique questions", f.key(t, "free"), "full", 0, 0, "", certbank.TierRequired, "Developer or Enterprise"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, err := f.svc.StartExam(ctx, tc.key, "cissp", tc.length, nil)
			if code(err) != tc.wantCode || (tc.wantInError != "" && !strings.Contains(err.Error(), tc.wantInError)) {
				t.Fatalf("error %v, want %q containing %q", err, tc.wantCode, tc.wantInError)
			}
			if err != nil {
				return
			}
			if len(st.Questions) != tc.wantN || st.Exam.Minutes != tc.wantMinutes || st.Exam.Source != tc.wantSource {
				t.Fatalf("%d questions, %d minutes, source %q; want %d, %d, %q", len(st.Questions), st.Exam.Minutes, st.Exam.Source, tc.wantN, tc.wantMinutes, tc.wantSource)
			}
			// Blueprint weights 50/50: the domains split evenly, and no
			// question repeats.
			byDomain, seen := map[string]int{}, map[string]bool{}
			for _, e := range st.Questions {
				byDomain[e.Q.Domain]++
				if seen[e.Q.ID] {
					t.Fatalf("question %s drawn twice", e.Q.ID)
				}
				seen[e.Q.ID] = true
			}
			if tc.wantSource == "bank" && (byDomain["Alpha"] != tc.wantN/2 || byDomain["Beta"] != tc.wantN/2) {
				t.Errorf("by domain %v, want %d each", byDomain, tc.wantN/2)
			}
			stored, err := f.st.ExamByID(ctx, st.Exam.ID)
			if err != nil || len(stored.Questions) != tc.wantN || !strings.HasPrefix(stored.ID, "ex_") || len(stored.ID) != 35 {
				t.Errorf("stored exam %+v, %v", stored, err)
			}
		})
	}
	// The keyed exams were accounted: two requests, 90 questions.
	u, _, _, err := draw.New(f.ix, f.acct, f.clock.Now).Usage(ctx, *dev)
	if err != nil || u.MonthRequests != 2 || u.MonthQuestions != 90 {
		t.Errorf("developer usage %d requests, %d questions (%v); want 2 and 90", u.MonthRequests, u.MonthQuestions, err)
	}
}

func TestGradeExamOnce(t *testing.T) {
	f := newFixture(t, 80)
	ctx := context.Background()
	st, err := f.svc.StartExam(ctx, f.key(t, "developer"), "cissp", "half", nil)
	if err != nil {
		t.Fatal(err)
	}
	// Answer the first ten: eight right, two wrong; leave the rest.
	answers := map[string]string{}
	for i, e := range st.Questions[:10] {
		l := string(e.Q.Answer)
		if i < 2 {
			l = string(certbank.Letters[(e.Q.Answer.Index()+1)%4])
		}
		answers[e.Q.ID] = strings.ToLower(l)
	}
	foreign := map[string]string{"00000000-0000-4000-8000-000000000002": "A"} // a pmp question
	bad := []struct {
		name    string
		id      string
		answers map[string]string
		want    certbank.Code
	}{
		{"a question not in the exam", st.Exam.ID, foreign, certbank.Invalid},
		{"a letter that is no option", st.Exam.ID, map[string]string{st.Questions[0].Q.ID: "E"}, certbank.Invalid},
		{"an unknown exam", "ex_00000000000000000000000000000000", answers, certbank.NotFound},
		{"a malformed id", "../etc", answers, certbank.NotFound},
	}
	for _, tc := range bad {
		if _, err := f.svc.GradeExam(ctx, tc.id, tc.answers); code(err) != tc.want {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
	if rs, _ := f.st.Responses(ctx, time.Time{}); len(rs) != 0 {
		t.Fatalf("refused gradings recorded %d responses", len(rs))
	}
	rep, err := f.svc.GradeExam(ctx, st.Exam.ID, answers)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Score.Correct != 8 || rep.Score.Total != 30 || rep.Answered != 10 || len(rep.Questions) != 30 {
		t.Errorf("score %+v, answered %d, %d questions; want 8/30, 10 answered", rep.Score, rep.Answered, len(rep.Questions))
	}
	sum := 0
	for _, d := range rep.ByDomain {
		sum += d.Correct
	}
	if len(rep.ByDomain) != 2 || sum != 8 || len(rep.ByDifficulty) != 3 {
		t.Errorf("by domain %+v, by difficulty %+v", rep.ByDomain, rep.ByDifficulty)
	}
	if _, err := f.svc.GradeExam(ctx, st.Exam.ID, answers); code(err) != certbank.Conflict {
		t.Errorf("second grading: %v, want CONFLICT", err)
	}
	rs, _ := f.st.Responses(ctx, time.Time{})
	if len(rs) != 30 {
		t.Fatalf("%d responses recorded, want 30 (one per question, unanswered included)", len(rs))
	}
	for _, r := range rs {
		if r.Source != store.SourceExam || r.Attempt == "" || strings.Contains(st.Exam.ID, r.Attempt) || r.Score != 8.0/30 {
			t.Fatalf("response %+v: want source exam, an attempt token that is not the exam id, score 8/30", r)
		}
	}

	// An exam expires after ExamTTL.
	st2, _ := f.svc.StartExam(ctx, nil, "cissp", "full", nil)
	f.clock.Add(learn.ExamTTL + time.Minute)
	if _, err := f.svc.GradeExam(ctx, st2.Exam.ID, nil); code(err) != certbank.NotFound {
		t.Errorf("expired exam: %v, want NOT_FOUND", err)
	}
}

func TestReportsAndPracticeAnswers(t *testing.T) {
	f := newFixture(t, 20)
	ctx := context.Background()
	q := f.ix.ByCert("cissp")[0].Q
	tests := []struct {
		name, id, reason, text string
		want                   certbank.Code
	}{
		{"unknown question", "nope", "typo", "", certbank.NotFound},
		{"unknown reason", q.ID, "boring", "", certbank.Invalid},
		{"text too long", q.ID, "other", strings.Repeat("x", store.ReportTextMax+1), certbank.Invalid},
		{"fine", q.ID, "wrong_key", "C is right: see the guide", ""},
	}
	for _, tc := range tests {
		if _, err := f.svc.ReportQuestion(ctx, "192.0.2.1", tc.id, tc.reason, tc.text); code(err) != tc.want {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	if rs, _ := f.st.Reports(ctx, store.ReportFilter{}); len(rs) != 1 || rs[0].Reason != "wrong_key" {
		t.Fatalf("reports %+v, want the one valid one", rs)
	}
	// A flood from one address is refused beyond the hourly limit, and
	// another address is not affected.
	var last error
	for range learn.ReportsPerHour {
		_, last = f.svc.ReportQuestion(ctx, "192.0.2.1", q.ID, "typo", "")
	}
	var le *quota.LimitError
	if !errors.As(last, &le) || code(last) != certbank.RateLimited || le.RetryAfter <= 0 {
		t.Errorf("report %d from one address: %v, want RATE_LIMITED with a retry time", learn.ReportsPerHour+1, last)
	}
	if _, err := f.svc.ReportQuestion(ctx, "192.0.2.2", q.ID, "typo", ""); err != nil {
		t.Errorf("another address: %v", err)
	}
	if rs, _ := f.st.Reports(ctx, store.ReportFilter{}); len(rs) != learn.ReportsPerHour+1 {
		t.Errorf("%d reports stored, want %d (the refused one is not)", len(rs), learn.ReportsPerHour+1)
	}

	// Practice answers are recorded with the right correctness, and
	// refused for unknown questions and letters.
	if err := f.svc.PracticeAnswer(ctx, "192.0.2.1", q.ID, string(q.Answer)); err != nil {
		t.Fatal(err)
	}
	if err := f.svc.PracticeAnswer(ctx, "192.0.2.1", q.ID, "z"); code(err) != certbank.Invalid {
		t.Errorf("letter z: %v", err)
	}
	if err := f.svc.PracticeAnswer(ctx, "192.0.2.1", "nope", "A"); code(err) != certbank.NotFound {
		t.Errorf("unknown question: %v", err)
	}
	rs, _ := f.st.Responses(ctx, time.Time{})
	if len(rs) != 1 || !rs[0].Correct || rs[0].Source != store.SourcePractice || rs[0].Score != -1 {
		t.Errorf("responses %+v", rs)
	}
}
