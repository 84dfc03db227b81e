package learn_test

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/items"
)

// TestSimulatedCohort: 800 simulated candidates of known ability take
// half-length mock exams through the service, which records their answers;
// the item statistics computed from the store then flag a planted
// wrong-key question and propose easy and hard for planted easy and hard
// ones. A candidate knows a question with probability 1/(1+e^-(ability -
// difficulty)) (a Rasch model) and otherwise guesses.
func TestSimulatedCohort(t *testing.T) {
	f := newFixture(t, 80)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	qs := f.ix.ByCert("cissp")
	easy, hard, wrong := qs[3].Q.ID, qs[10].Q.ID, qs[17].Q.ID
	// The planted wrong-key question's stored key is not the true answer.
	trueAnswer := map[string]certbank.Letter{}
	difficulty := map[string]float64{}
	for _, e := range qs {
		trueAnswer[e.Q.ID] = e.Q.Answer
		difficulty[e.Q.ID] = rng.Float64()*2 - 1
	}
	trueAnswer[wrong] = certbank.Letters[(qs[17].Q.Answer.Index()+1)%4]
	difficulty[easy], difficulty[hard], difficulty[wrong] = -3.5, 3, -0.5

	dev := f.key(t, "enterprise")
	for c := range 800 {
		ability := rng.NormFloat64()
		st, err := f.svc.StartExam(ctx, dev, "cissp", "half", nil)
		if err != nil {
			t.Fatalf("candidate %d: %v", c, err)
		}
		answers := map[string]string{}
		for _, e := range st.Questions {
			know := 1 / (1 + math.Exp(-(ability - difficulty[e.Q.ID])))
			l := certbank.Letters[rng.IntN(4)]
			if rng.Float64() < know {
				l = trueAnswer[e.Q.ID]
			}
			if rng.Float64() < 0.03 {
				continue // a few questions left unanswered
			}
			answers[e.Q.ID] = string(l)
		}
		if _, err := f.svc.GradeExam(ctx, st.Exam.ID, answers); err != nil {
			t.Fatalf("candidate %d: grade: %v", c, err)
		}
		f.clock.Add(time.Minute)
	}

	recorded, err := f.st.Responses(ctx, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	var rs []items.Response
	for _, r := range recorded {
		rs = append(rs, items.Response{QuestionID: r.QuestionID, Chosen: r.Chosen, Attempt: r.Attempt, Score: r.Score})
	}
	var questions []*certbank.Question
	for _, e := range qs {
		questions = append(questions, e.Q)
	}
	stats := map[string]items.Stat{}
	for _, s := range items.Analyse(questions, rs, 0) {
		stats[s.ID] = s
	}
	if len(stats) != len(qs) {
		t.Fatalf("statistics for %d questions, want %d", len(stats), len(qs))
	}
	for id, s := range stats {
		if s.Responses < items.MinResponses {
			t.Fatalf("question %s has only %d responses; the cohort is too small", id, s.Responses)
		}
	}
	w := stats[wrong]
	if !slices.Contains(w.Flags, items.FlagStrongPreferOther) || !slices.Contains(w.Flags, items.FlagNegativeDiscrim) || w.TopChoice != trueAnswer[wrong] {
		t.Errorf("planted wrong key: flags %v, top third chose %s (true answer %s), discrimination %.2f, p %.2f", w.Flags, w.TopChoice, trueAnswer[wrong], w.Discrimination, w.P)
	}
	if s := stats[easy]; s.Proposed != certbank.Easy {
		t.Errorf("planted easy question: p %.2f, proposed %q", s.P, s.Proposed)
	}
	if s := stats[hard]; s.Proposed != certbank.Hard {
		t.Errorf("planted hard question: p %.2f, proposed %q", s.P, s.Proposed)
	}
	// The ordinary questions discriminate positively and are not flagged
	// as having a wrong key.
	falseAlarms := 0
	for id, s := range stats {
		if id == wrong || id == easy || id == hard {
			continue
		}
		if slices.Contains(s.Flags, items.FlagStrongPreferOther) || !s.HasDiscrimination || s.Discrimination <= 0 {
			falseAlarms++
		}
	}
	if falseAlarms > 1 { // one in 77 may fall to chance; the draw is random
		t.Errorf("%d ordinary questions flagged or not discriminating", falseAlarms)
	}
}
