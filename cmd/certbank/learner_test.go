package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/generator"
	"github.com/certbank/certbank/items"
	"github.com/certbank/certbank/paywall/sqlite"
	"github.com/certbank/certbank/paywall/store"
	"github.com/certbank/certbank/paywall/store/memstore"
)

func TestReportsRunFunctions(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	for i, r := range []store.Report{
		{ID: "rp_1", QuestionID: "q-a", Reason: "wrong_key", Text: "B, not C:\nsee the guide", CreatedAt: now},
		{ID: "rp_2", QuestionID: "q-b", Reason: "typo", CreatedAt: now.Add(time.Minute)},
	} {
		if err := st.AddReport(ctx, r); err != nil {
			t.Fatal(i, err)
		}
	}
	var out bytes.Buffer
	run := func(fn func(context.Context, store.Store, ioWriter, *reportsOptions) error, o reportsOptions) (string, error) {
		out.Reset()
		o.Now = func() time.Time { return now.Add(time.Hour) }
		err := fn(ctx, st, &out, &o)
		return out.String(), err
	}
	tests := []struct {
		name    string
		fn      func(context.Context, store.Store, ioWriter, *reportsOptions) error
		o       reportsOptions
		want    []string
		notWant []string
		code    certbank.Code
	}{
		{"list", runReportsList, reportsOptions{}, []string{"rp_2", "rp_1", "B, not C: see the guide", "open"}, nil, ""},
		{"list one question", runReportsList, reportsOptions{Question: "q-b"}, []string{"rp_2"}, []string{"rp_1"}, ""},
		{"show", runReportsShow, reportsOptions{ID: "rp_1"}, []string{"reason:   wrong_key", "status:   open", "see the guide"}, nil, ""},
		{"show unknown", runReportsShow, reportsOptions{ID: "rp_9"}, nil, nil, certbank.NotFound},
		{"resolve", runReportsResolve, reportsOptions{ID: "rp_1", Note: "key corrected to B"}, []string{"resolved rp_1"}, nil, ""},
		{"resolve again", runReportsResolve, reportsOptions{ID: "rp_1", Note: "again"}, nil, nil, certbank.Conflict},
		{"open only", runReportsList, reportsOptions{Open: true}, []string{"rp_2"}, []string{"rp_1"}, ""},
		{"show resolved", runReportsShow, reportsOptions{ID: "rp_1"}, []string{"resolved", "key corrected to B"}, nil, ""},
	}
	for _, tc := range tests {
		got, err := run(tc.fn, tc.o)
		if certbank.ErrorCode(err) != tc.code {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.code)
		}
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: output lacks %q:\n%s", tc.name, w, got)
			}
		}
		for _, w := range tc.notWant {
			if strings.Contains(got, w) {
				t.Errorf("%s: output has %q:\n%s", tc.name, w, got)
			}
		}
	}
	if r := cli(t, nil, "reports", "resolve", "rp_2", "--database", "sqlite:"+filepath.Join(t.TempDir(), "x.db")); r.code != exitUsage || !strings.Contains(r.stderr, "--note is required") {
		t.Errorf("resolve without --note: %+v", r)
	}
}

// TestItemsOnSimulatedCohort fills a SQLite store with the answers of 300
// simulated candidates of known ability (a Rasch model: a candidate knows
// a question with probability 1/(1+e^-(ability-difficulty)), else
// guesses), each taking the fixture's seven cissp questions as one mock
// exam attempt, and runs certbank items on it: the planted wrong-key
// question is flagged, and planted easy and hard questions get easy and
// hard proposals.
func TestItemsOnSimulatedCohort(t *testing.T) {
	content := copyContent(t)
	c, err := generator.Load(os.DirFS(content), content)
	if err != nil {
		t.Fatal(err)
	}
	var qs []*certbank.Question
	for i := range c.Questions {
		if c.Questions[i].Certification == "cissp" {
			qs = append(qs, &c.Questions[i])
		}
	}
	if len(qs) < 6 {
		t.Fatalf("fixture has %d cissp questions", len(qs))
	}
	easy, hard, wrong := qs[0], qs[1], qs[2]
	truth := map[string]certbank.Letter{}
	diff := map[string]float64{}
	for i, q := range qs {
		truth[q.ID] = q.Answer
		diff[q.ID] = -0.8 + 0.4*float64(i%5)
	}
	truth[wrong.ID] = certbank.Letters[(wrong.Answer.Index()+1)%4]
	diff[easy.ID], diff[hard.ID], diff[wrong.ID] = -3.5, 3.5, -0.5

	dsn := "sqlite:" + filepath.Join(t.TempDir(), "cohort.db")
	db, err := sqlite.Open(context.Background(), strings.TrimPrefix(dsn, "sqlite:"))
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 11))
	at := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	for cand := range 300 {
		ability := rng.NormFloat64()
		chosen := map[string]certbank.Letter{}
		right := 0
		for _, q := range qs {
			l := certbank.Letters[rng.IntN(4)]
			if rng.Float64() < 1/(1+math.Exp(-(ability-diff[q.ID]))) {
				l = truth[q.ID]
			}
			chosen[q.ID] = l
			if l == q.Answer {
				right++
			}
		}
		var rs []store.Response
		for _, q := range qs {
			rs = append(rs, store.Response{QuestionID: q.ID, Chosen: chosen[q.ID], Correct: chosen[q.ID] == q.Answer, Source: store.SourceExam,
				Attempt: fmt.Sprintf("att%d", cand), Score: float64(right) / float64(len(qs)), At: at})
		}
		if err := db.AddResponses(context.Background(), rs); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()

	r := cli(t, nil, "items", "--content", content, "--database", dsn, "--certification", "cissp", "--json")
	if r.code != exitOK {
		t.Fatalf("items: %+v", r)
	}
	var got []itemJSON
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("items --json: %v\n%s", err, r.stdout)
	}
	by := map[string]itemJSON{}
	for _, s := range got {
		by[s.ID] = s
	}
	if len(by) != len(qs) {
		t.Fatalf("%d questions reported, want %d", len(by), len(qs))
	}
	w := by[wrong.ID]
	if !slices.Contains(w.Flags, items.FlagStrongPreferOther) || !slices.Contains(w.Flags, items.FlagNegativeDiscrim) || w.TopChoice != string(truth[wrong.ID]) {
		t.Errorf("planted wrong key %s: %+v", wrong.ID, w)
	}
	if s := by[easy.ID]; s.Proposed != "easy" {
		t.Errorf("planted easy question: %+v", s)
	}
	if s := by[hard.ID]; s.Proposed != "hard" {
		t.Errorf("planted hard question: %+v", s)
	}
	// The table and --flagged.
	r = cli(t, nil, "items", "--content", content, "--database", dsn, "--flagged")
	if r.code != exitOK || !strings.Contains(r.stdout, wrong.ID) || !strings.Contains(r.stdout, items.FlagStrongPreferOther) {
		t.Errorf("items --flagged: %+v", r)
	}
	if r := cli(t, nil, "items", "--content", content, "--database", dsn, "--min-responses", "0"); r.code != exitUsage {
		t.Errorf("--min-responses 0: %+v", r)
	}

	// apply: --dry-run writes nothing; then the labels follow the
	// proposals, each question records its measurement, lint checks the
	// label against it, and the build publishes the questions as calibrated.
	before := snapshotDir(t, content)
	r = cli(t, nil, "items", "apply", "--content", content, "--database", dsn, "--certification", "cissp", "--dry-run")
	if r.code != exitOK || !strings.Contains(r.stdout, "nothing written") || snapshotDir(t, content) != before {
		t.Fatalf("apply --dry-run: %+v", r)
	}
	r = cli(t, nil, "items", "apply", "--content", content, "--database", dsn, "--certification", "cissp", "--date", "2026-12-01")
	if r.code != exitOK || !strings.Contains(r.stdout, fmt.Sprintf("recorded %d measured difficulties", len(qs))) {
		t.Fatalf("apply: %+v", r)
	}
	c, err = generator.Load(os.DirFS(content), content)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range c.Questions {
		if q.Certification != "cissp" {
			continue
		}
		if q.Measured == nil || q.Measured.Difficulty != q.Difficulty || q.Measured.Date != "2026-12-01" || q.Measured.Responses != 300 {
			t.Errorf("%s after apply: label %s, measured %+v", q.ID, q.Difficulty, q.Measured)
		}
		want := map[string]certbank.Difficulty{easy.ID: certbank.Easy, hard.ID: certbank.Hard}[q.ID]
		if want != "" && q.Difficulty != want {
			t.Errorf("planted question %s is now %s, want %s", q.ID, q.Difficulty, want)
		}
	}
	for _, f := range generator.Lint(c) {
		if f.Rule == "calibration" {
			t.Errorf("lint after apply: %s", f)
		}
	}
	// Applying again relabels nothing.
	if r := cli(t, nil, "items", "apply", "--content", content, "--database", dsn, "--certification", "cissp", "--date", "2026-12-01"); !strings.Contains(r.stdout, "(0 relabelled)") {
		t.Errorf("second apply: %+v", r)
	}
	out := filepath.Join(t.TempDir(), "public")
	if r := cli(t, nil, "build", "--content", content, "--out", out, "--bank", filepath.Join(t.TempDir(), "bank.json"), "--date", "2026-12-01"); r.code != exitOK {
		t.Fatalf("build: %+v", r)
	}
	cat, _ := os.ReadFile(filepath.Join(out, "catalog.json"))
	feed, _ := os.ReadFile(filepath.Join(out, "api", "cissp", "questions-free.json"))
	if !strings.Contains(string(cat), `"calibrated_questions":`) || !strings.Contains(string(feed), `"calibrated": true`) {
		t.Errorf("build does not publish the calibration:\n%.400s\n%.400s", cat, feed)
	}
}

// snapshotDir returns the concatenated bytes of every file under dir.
func snapshotDir(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		b.WriteString(p)
		b.Write(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestVerifyStatusListsOpenReports: with --database, verify status lists
// the questions learners reported, with file:line, until resolved.
func TestVerifyStatusListsOpenReports(t *testing.T) {
	content := verifyContent(t)
	path := filepath.Join(t.TempDir(), "r.db")
	db, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	qid := "07493def-2ce7-46c9-a2c3-3c5ede61f64e"
	if err := db.AddReport(context.Background(), store.Report{ID: "rp_x", QuestionID: qid, Reason: "ambiguous", Text: "two answers fit", CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	r := cli(t, nil, "verify", "status", "--content", content, "--database", "sqlite:"+path)
	if !strings.Contains(r.stdout, "Open learner reports") || !strings.Contains(r.stdout, "01-framework.yaml:") || !strings.Contains(r.stdout, qid+": rp_x ambiguous: two answers fit") {
		t.Errorf("verify status --database: %+v", r)
	}
	if r := cli(t, nil, "reports", "resolve", "rp_x", "--note", "fixed", "--database", "sqlite:"+path); r.code != exitOK {
		t.Fatalf("resolve: %+v", r)
	}
	if r := cli(t, nil, "verify", "status", "--content", content, "--database", "sqlite:"+path); !strings.Contains(r.stdout, "no open learner reports") {
		t.Errorf("after resolve: %+v", r)
	}
}
