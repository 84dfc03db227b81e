// Package items computes item statistics from learners' graded answers, as
// exam vendors do to calibrate difficulty from real data and to catch bad
// questions: per question the responses, the share correct (p), each
// option's share, the discrimination (point-biserial correlation of being
// right with the mock-exam attempt's total score), and the option most
// chosen by the strongest third of candidates. It flags items whose p is
// below 0.25 or above 0.95, whose discrimination is negative, or whose
// strong candidates prefer a distractor (the classic sign of a wrong key),
// and proposes a difficulty label from p once a question has enough
// responses. It depends only on the standard library and the domain.
package items

import (
	"math"
	"sort"

	"github.com/certbank/certbank"
)

// Response is one graded answer: the letter chosen ("" unanswered) and,
// for a mock exam, the attempt's share correct (negative outside one).
type Response struct {
	QuestionID string
	Chosen     certbank.Letter
	Attempt    string  // the mock-exam attempt, "" outside one
	Score      float64 // the attempt's share correct, negative outside one
}

// Thresholds of the flags and proposals.
const (
	// MinResponses is how many responses a question needs before its
	// difficulty is proposed and it is flagged.
	MinResponses = 30
	// PLow and PHigh bound the share correct of a useful item.
	PLow, PHigh = 0.25, 0.95
	// EasyFrom and HardBelow map p to a label: p >= EasyFrom is easy,
	// p < HardBelow hard, medium between.
	EasyFrom, HardBelow = 0.70, 0.40
)

// Flags.
const (
	FlagTooHard           = "p_below_0.25"
	FlagTooEasy           = "p_above_0.95"
	FlagNegativeDiscrim   = "negative_discrimination"
	FlagStrongPreferOther = "top_third_prefers_distractor"
)

// Stat is one question's statistics.
type Stat struct {
	ID            string
	Certification string
	Label         certbank.Difficulty
	Key           certbank.Letter
	Responses     int
	P             float64
	// Shares of A, B, C, D and unanswered, in that order.
	Shares [5]float64
	// Discrimination is the point-biserial correlation of being right
	// with the rest of the attempt's score (the attempt without this
	// question, so that the item does not correlate with itself), over the
	// responses given in a mock exam; HasDiscrimination is false when
	// there are too few of them (under 10) or no variance.
	Discrimination    float64
	HasDiscrimination bool
	// TopChoice is the option chosen most by the top third of mock-exam
	// candidates by attempt score ("" when there are fewer than 3).
	TopChoice certbank.Letter
	Flags     []string
	// Proposed is the label p suggests, "" below MinResponses.
	Proposed certbank.Difficulty
}

// Analyse computes the statistics of every question of qs that has
// responses, in qs's order; min is the response count needed for flags
// and proposals (MinResponses if 0).
func Analyse(qs []*certbank.Question, rs []Response, min int) []Stat {
	if min <= 0 {
		min = MinResponses
	}
	by := map[string][]Response{}
	length := map[string]int{} // questions per attempt
	for _, r := range rs {
		by[r.QuestionID] = append(by[r.QuestionID], r)
		if r.Attempt != "" {
			length[r.Attempt]++
		}
	}
	// The rest score: the attempt's share correct without the question.
	qByID := make(map[string]*certbank.Question, len(qs))
	for _, q := range qs {
		qByID[q.ID] = q
	}
	for id, list := range by {
		for i, r := range list {
			n := length[r.Attempt]
			if r.Score < 0 || n < 2 {
				continue
			}
			right := 0.0
			if q := qByID[id]; q != nil && r.Chosen == q.Answer {
				right = 1
			}
			list[i].Score = max((r.Score*float64(n)-right)/float64(n-1), 0)
		}
	}
	var out []Stat
	for _, q := range qs {
		got := by[q.ID]
		if len(got) == 0 {
			continue
		}
		out = append(out, analyse(q, got, min))
	}
	return out
}

func analyse(q *certbank.Question, rs []Response, min int) Stat {
	s := Stat{ID: q.ID, Certification: q.Certification, Label: q.Difficulty, Key: q.Answer, Responses: len(rs)}
	right := 0
	var counts [5]int
	for _, r := range rs {
		if i := r.Chosen.Index(); i >= 0 {
			counts[i]++
		} else {
			counts[4]++
		}
		if r.Chosen == q.Answer {
			right++
		}
	}
	n := float64(len(rs))
	s.P = float64(right) / n
	for i, c := range counts {
		s.Shares[i] = float64(c) / n
	}

	// Discrimination and the top third, over mock-exam responses.
	var scored []Response
	for _, r := range rs {
		if r.Score >= 0 {
			scored = append(scored, r)
		}
	}
	if len(scored) >= 10 {
		s.Discrimination, s.HasDiscrimination = pointBiserial(scored, q.Answer)
	}
	if len(scored) >= 9 {
		sort.SliceStable(scored, func(i, j int) bool { return scored[i].Score > scored[j].Score })
		top := scored[:(len(scored)+2)/3]
		var tc [4]int
		for _, r := range top {
			if i := r.Chosen.Index(); i >= 0 {
				tc[i]++
			}
		}
		best := -1
		for i, c := range tc {
			if c > 0 && (best < 0 || c > tc[best]) {
				best = i
			}
		}
		if best >= 0 {
			s.TopChoice = certbank.Letters[best]
		}
	}

	if len(rs) < min {
		return s
	}
	if s.P < PLow {
		s.Flags = append(s.Flags, FlagTooHard)
	}
	if s.P > PHigh {
		s.Flags = append(s.Flags, FlagTooEasy)
	}
	if s.HasDiscrimination && s.Discrimination < 0 {
		s.Flags = append(s.Flags, FlagNegativeDiscrim)
	}
	if s.TopChoice != "" && s.TopChoice != q.Answer {
		s.Flags = append(s.Flags, FlagStrongPreferOther)
	}
	switch {
	case s.P >= EasyFrom:
		s.Proposed = certbank.Easy
	case s.P < HardBelow:
		s.Proposed = certbank.Hard
	default:
		s.Proposed = certbank.Medium
	}
	return s
}

// pointBiserial is the correlation of being right (key) with the attempt
// score: (M1 - M0) / sd * sqrt(p q).
func pointBiserial(rs []Response, key certbank.Letter) (float64, bool) {
	var sum, sum1 float64
	n1 := 0
	for _, r := range rs {
		sum += r.Score
		if r.Chosen == key {
			sum1 += r.Score
			n1++
		}
	}
	n := float64(len(rs))
	n0 := len(rs) - n1
	if n1 == 0 || n0 == 0 {
		return 0, false
	}
	mean := sum / n
	var ss float64
	for _, r := range rs {
		ss += (r.Score - mean) * (r.Score - mean)
	}
	sd := math.Sqrt(ss / n)
	if sd == 0 {
		return 0, false
	}
	m1 := sum1 / float64(n1)
	m0 := (sum - sum1) / float64(n0)
	p := float64(n1) / n
	return (m1 - m0) / sd * math.Sqrt(p*(1-p)), true
}
