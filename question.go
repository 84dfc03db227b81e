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

// Level is the cognitive level a question asks for.
type Level string

// The cognitive levels, in ascending order.
const (
	Recall  Level = "recall"  // remember a fact, a term, a definition
	Apply   Level = "apply"   // use a concept in a given situation: choose an action, a tool, a setting
	Analyse Level = "analyse" // weigh constraints, diagnose, compare designs, order steps
)

// Levels lists every cognitive level in ascending order.
var Levels = []Level{Recall, Apply, Analyse}

// ParseLevel returns the level named s, or an Invalid error that lists the
// allowed values ("analyze" is accepted for "analyse").
func ParseLevel(s string) (Level, error) {
	switch l := Level(strings.ToLower(strings.TrimSpace(s))); l {
	case Recall, Apply, Analyse:
		return l, nil
	case "analyze":
		return Analyse, nil
	}
	return "", Errorf(Invalid, "level %q is not one of recall, apply, analyse", s)
}

// Rank returns the position of d among Difficulties (0 for easy), or -1.
func (d Difficulty) Rank() int {
	switch d {
	case Easy:
		return 0
	case Medium:
		return 1
	case Hard:
		return 2
	}
	return -1
}

// Calibration is one blind rating of a question's difficulty and cognitive
// level by a rater who saw the item and the exam but not its label.
type Calibration struct {
	Rater      string     `json:"rater,omitempty"`
	Difficulty Difficulty `json:"difficulty,omitempty"`
	Level      Level      `json:"level,omitempty"`
	Date       string     `json:"date,omitempty"` // YYYY-MM-DD
}

// Miscalibrated reports whether the rating contradicts label: they differ
// by two levels, or by one level when the label is hard.
func (c Calibration) Miscalibrated(label Difficulty) bool {
	d := label.Rank() - c.Difficulty.Rank()
	if d < 0 {
		d = -d
	}
	return d >= 2 || d == 1 && label == Hard
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
	Objective     string         `json:"objective,omitempty"` // code of one of the domain's objectives
	Tests         string         `json:"tests,omitempty"`     // the fact or skill the question checks, one line
	Difficulty    Difficulty     `json:"difficulty,omitempty"`
	Stem          string         `json:"stem,omitempty"`
	Options       Options        `json:"options,omitempty"`
	Answer        Letter         `json:"answer,omitempty"`
	Explanation   string         `json:"explanation,omitempty"`
	References    []string       `json:"references,omitempty"`
	Verifications []Verification `json:"verifications,omitempty"`
	Calibrations  []Calibration  `json:"calibrations,omitempty"`
	// Measured is the difficulty measured from learners' answers, once an
	// operator accepted it (certbank items apply); the label then equals
	// its Difficulty.
	Measured *Measurement `json:"measured,omitempty"`
}

// Measurement is a question's difficulty measured from learners' graded
// answers: the share correct P over Responses, the label P maps to, and
// the date the operator accepted it.
type Measurement struct {
	Responses  int        `json:"responses"`
	P          float64    `json:"p"`
	Difficulty Difficulty `json:"difficulty"`
	Date       string     `json:"date"`
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
