package mcpserver_test

import (
	"context"
	"testing"
	"time"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/paywall/store"
)

type startExamOut struct {
	ExamID    string `json:"exam_id"`
	Source    string `json:"source"`
	Minutes   int    `json:"minutes"`
	Requested int    `json:"requested"`
	Questions []struct {
		ID          string `json:"id"`
		Answer      string `json:"answer"`
		Explanation string `json:"explanation"`
	} `json:"questions"`
}

type tally struct{ Correct, Total, Percent int }

type examReport struct {
	Score     tally   `json:"score"`
	Answered  int     `json:"answered"`
	ByDomain  []tally `json:"by_domain"`
	Questions []struct {
		Explanation string `json:"explanation"`
	} `json:"questions"`
}

type reportOut struct {
	ReportID string `json:"report_id"`
	Status   string `json:"status"`
}

// TestMCPMockExamAndReports: start_mock_exam draws from the free sample
// without a key and from the bank with one; submit_mock_exam grades once
// and records every answer; check_answer records too; report_question
// stores a report and refuses a bad reason.
func TestMCPMockExamAndReports(t *testing.T) {
	e := newMCPEnv(t, testBank(80))
	ctx := context.Background()
	anon, _ := e.connect(t, eraModern, "")
	var free startExamOut
	callOK(t, anon, "start_mock_exam", map[string]any{"certification": "cissp"}, &free)
	if free.Source != "free_sample" || len(free.Questions) != 5 || free.Requested != 60 || free.ExamID == "" {
		t.Errorf("free exam: source %s, %d questions of %d", free.Source, len(free.Questions), free.Requested)
	}

	key, _ := e.newKey(certbank.TierDeveloper)
	cs, _ := e.connect(t, eraModern, key)
	var ex startExamOut
	callOK(t, cs, "start_mock_exam", map[string]any{"certification": "cissp", "length": "half"}, &ex)
	if ex.Source != "bank" || len(ex.Questions) != 30 || ex.Minutes != 30 {
		t.Fatalf("keyed half exam: source %s, %d questions, %d minutes", ex.Source, len(ex.Questions), ex.Minutes)
	}
	for _, q := range ex.Questions {
		if q.Answer != "" || q.Explanation != "" {
			t.Fatalf("exam question %s carries its answer", q.ID)
		}
	}
	answers := map[string]any{}
	for i, q := range ex.Questions[:20] {
		answers[q.ID] = []string{"A", "B", "C", "D"}[i%4]
	}
	var rep examReport
	callOK(t, cs, "submit_mock_exam", map[string]any{"exam_id": ex.ExamID, "answers": answers}, &rep)
	if rep.Score.Total != 30 || rep.Answered != 20 || len(rep.Questions) != 30 || len(rep.ByDomain) != 2 || rep.Questions[0].Explanation == "" {
		t.Errorf("report: %+v", rep.Score)
	}
	callErr(t, cs, "submit_mock_exam", map[string]any{"exam_id": ex.ExamID, "answers": answers}, "already graded")
	callErr(t, cs, "submit_mock_exam", map[string]any{"exam_id": "ex_00000000000000000000000000000000", "answers": map[string]any{}}, "no exam")
	callErr(t, cs, "start_mock_exam", map[string]any{"certification": "cissp", "length": "double"}, "full or half")
	free2, _ := e.connect(t, eraModern, "")
	callErr(t, free2, "start_mock_exam", map[string]any{"certification": "nope"}, "nope")

	// check_answer records a response too.
	var c checkOut
	callOK(t, anon, "check_answer", map[string]any{"question_id": qid("pmp", 3), "answer": "A"}, &c)
	rs, err := e.store.Responses(ctx, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	bySource := map[string]int{}
	for _, r := range rs {
		bySource[r.Source]++
	}
	if bySource[store.SourceExam] != 30 || bySource[store.SourceMCP] != 1 {
		t.Errorf("responses by source %v, want 30 exam and 1 mcp", bySource)
	}

	var r reportOut
	callOK(t, anon, "report_question", map[string]any{"question_id": qid("cissp", 4), "reason": "ambiguous", "text": "B and C both fit"}, &r)
	if r.Status != "open" || r.ReportID == "" {
		t.Errorf("report: %+v", r)
	}
	callErr(t, anon, "report_question", map[string]any{"question_id": qid("cissp", 4), "reason": "meh"}, "wrong_key")
	reps, _ := e.store.Reports(ctx, store.ReportFilter{})
	if len(reps) != 1 || reps[0].Text != "B and C both fit" {
		t.Errorf("stored reports %+v", reps)
	}
}
