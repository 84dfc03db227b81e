package certbank

import (
	"fmt"
	"strings"
)

// Difficulty is how hard a question is: easy, medium or hard.
type Difficulty string

// The three difficulties, in ascending order.
const (
	Easy   Difficulty = "easy"
	Medium Difficulty = "medium"
	Hard   Difficulty = "hard"
)

// Difficulties lists every difficulty in ascending order.
var Difficulties = []Difficulty{Easy, Medium, Hard}

// ParseDifficulty returns the difficulty named s, or an Invalid error that
// lists the allowed values.
func ParseDifficulty(s string) (Difficulty, error) {
	switch d := Difficulty(s); d {
	case Easy, Medium, Hard:
		return d, nil
	}
	return "", Errorf(Invalid, "difficulty %q is not one of easy, medium, hard", s)
}

// Letter is an option letter, A to D.
type Letter string

// Letters lists the four option letters in order.
var Letters = []Letter{"A", "B", "C", "D"}

// ParseLetter returns the option letter named s (case-insensitive), or an
// Invalid error.
func ParseLetter(s string) (Letter, error) {
	l := Letter(strings.ToUpper(strings.TrimSpace(s)))
	if l.Index() < 0 {
		return "", Errorf(Invalid, "%q is not an option letter; use one of A, B, C, D", s)
	}
	return l, nil
}

// Index returns 0 for A through 3 for D, and -1 for anything else.
func (l Letter) Index() int {
	switch l {
	case "A":
		return 0
	case "B":
		return 1
	case "C":
		return 2
	case "D":
		return 3
	}
	return -1
}

// Options holds the text of options A to D.
type Options [4]string

// Get returns the text of option l, or "" for an unknown letter.
func (o Options) Get(l Letter) string {
	if i := l.Index(); i >= 0 {
		return o[i]
	}
	return ""
}

// Verification is one solver's blind answer to a question.
type Verification struct {
	Solver string `json:"solver,omitempty"` // who answered, honestly described (a person, a model, a program)
	Answer Letter `json:"answer,omitempty"` // the letter the solver chose without seeing the key
	Date   string `json:"date,omitempty"`   // YYYY-MM-DD
	// Override, when set, records a reviewed decision that the solver's
	// disagreement is resolved; it says why.
	Override string `json:"override,omitempty"`
}

// Question is one single-best-answer practice question.
type Question struct {
	ID            string         `json:"id,omitempty"`
	Certification string         `json:"certification,omitempty"` // slug
	Domain        string         `json:"domain,omitempty"`
	Difficulty    Difficulty     `json:"difficulty,omitempty"`
	Stem          string         `json:"stem,omitempty"`
	Options       Options        `json:"options,omitempty"`
	Answer        Letter         `json:"answer,omitempty"`
	Explanation   string         `json:"explanation,omitempty"`
	References    []string       `json:"references,omitempty"`
	Verifications []Verification `json:"verifications,omitempty"`
}

// QualityPolicy decides which questions are published to the paid and keyed
// routes.
type QualityPolicy struct {
	MinAgreeingSolvers int `json:"min_agreeing_solvers,omitempty"`
}

// Agreeing returns how many distinct solvers chose the stored answer, and the
// distinct solvers who chose another letter without a reviewed override.
func (q *Question) Agreeing() (agree int, disagree []Verification) {
	seen := map[string]bool{}
	for _, v := range q.Verifications {
		if seen[v.Solver] {
			continue
		}
		seen[v.Solver] = true
		switch {
		case v.Answer == q.Answer:
			agree++
		case v.Override == "":
			disagree = append(disagree, v)
		}
	}
	return agree, disagree
}

// Verified reports whether q meets the policy: at least MinAgreeingSolvers
// distinct solvers chose the stored answer and none disagrees unresolved.
func (p QualityPolicy) Verified(q *Question) bool {
	agree, disagree := q.Agreeing()
	return agree >= p.MinAgreeingSolvers && len(disagree) == 0
}

// String returns "<certification>/<id>", for messages.
func (q *Question) String() string { return fmt.Sprintf("%s/%s", q.Certification, q.ID) }
