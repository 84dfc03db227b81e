package items

import (
	"math"
	"slices"
	"testing"

	"github.com/certbank/certbank"
)

// responses returns n responses to q: right of them choosing the key, the
// rest choosing wrong, all outside a mock exam.
func responses(id string, key, wrong certbank.Letter, right, n int) []Response {
	var rs []Response
	for i := range n {
		l := wrong
		if i < right {
			l = key
		}
		rs = append(rs, Response{QuestionID: id, Chosen: l, Score: -1})
	}
	return rs
}

func TestAnalyseThresholds(t *testing.T) {
	q := func(id string) *certbank.Question {
		return &certbank.Question{ID: id, Certification: "cissp", Answer: "B", Difficulty: certbank.Medium}
	}
	tests := []struct {
		name     string
		right, n int
		proposed certbank.Difficulty
		flags    []string
	}{
		{"too few responses: nothing proposed", 29, 29, "", nil},
		{"p 0.97: easy and too easy", 97, 100, certbank.Easy, []string{FlagTooEasy}},
		{"p 0.70: easy", 70, 100, certbank.Easy, nil},
		{"p 0.69: medium", 69, 100, certbank.Medium, nil},
		{"p 0.40: medium", 40, 100, certbank.Medium, nil},
		{"p 0.39: hard", 39, 100, certbank.Hard, nil},
		{"p 0.20: hard and too hard", 20, 100, certbank.Hard, []string{FlagTooHard}},
	}
	for _, tc := range tests {
		st := Analyse([]*certbank.Question{q("x"), q("unanswered")}, responses("x", "B", "C", tc.right, tc.n), 0)
		if len(st) != 1 {
			t.Fatalf("%s: %d stats, want 1 (questions without responses are left out)", tc.name, len(st))
		}
		s := st[0]
		if s.Proposed != tc.proposed || !slices.Equal(s.Flags, tc.flags) || s.Responses != tc.n {
			t.Errorf("%s: proposed %q flags %v, want %q %v", tc.name, s.Proposed, s.Flags, tc.proposed, tc.flags)
		}
		if want := float64(tc.right) / float64(tc.n); s.P != want || s.Shares[1] != want || math.Abs(s.Shares[2]-(1-want)) > 1e-9 {
			t.Errorf("%s: p %.2f shares %v", tc.name, s.P, s.Shares)
		}
		if s.HasDiscrimination || s.TopChoice != "" {
			t.Errorf("%s: discrimination or top third without mock-exam responses", tc.name)
		}
	}
}

func TestPointBiserial(t *testing.T) {
	// Those right scored higher: positive; reversed: negative; everyone
	// right: undefined.
	mk := func(scores []float64, right []bool) []Response {
		var rs []Response
		for i, s := range scores {
			l := certbank.Letter("C")
			if right[i] {
				l = "B"
			}
			rs = append(rs, Response{Chosen: l, Score: s})
		}
		return rs
	}
	sc := []float64{0.9, 0.8, 0.7, 0.4, 0.3, 0.2}
	if r, ok := pointBiserial(mk(sc, []bool{true, true, true, false, false, false}), "B"); !ok || r < 0.9 {
		t.Errorf("aligned: %.2f %v", r, ok)
	}
	if r, ok := pointBiserial(mk(sc, []bool{false, false, false, true, true, true}), "B"); !ok || r > -0.9 {
		t.Errorf("reversed: %.2f %v", r, ok)
	}
	if _, ok := pointBiserial(mk(sc, []bool{true, true, true, true, true, true}), "B"); ok {
		t.Error("no variance in rightness gave a value")
	}
}
