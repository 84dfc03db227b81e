package verify

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/generator"
)

// Status is where verification and calibration stand, per certification.
type Status struct {
	MinAgreeing    int          // quality.min_agreeing_solvers of site.yaml
	Certifications []CertStatus // sorted by slug
	Pending        []Unverified // fewer than MinAgreeing agreeing solvers, none disagreeing
	Disagreeing    []Unverified // at least one solver chose another answer, without override

	// Solvers are the solvers who answered questions of the certifications,
	// by name, with how often they agreed with the key.
	Solvers []SolverStats
	// Median is the median agreement rate of the solvers with at least
	// RateMinAnswers answers, and Judged how many there are (0: no median).
	Median float64
	Judged int

	Miscalibrated []Miscalibrated // rated in contradiction to the label
}

// CertStatus counts one certification's questions. Questions = Verified +
// Pending + Disagreeing.
type CertStatus struct {
	Slug          string
	Questions     int
	Verified      int // at least MinAgreeing agreeing solvers and none disagreeing
	Pending       int
	Disagreeing   int
	Unrated       int // no calibration entry
	Miscalibrated int // a calibration entry contradicts the difficulty label
}

// Unverified is a question that is not verified yet.
type Unverified struct {
	ID       string
	Source   generator.Source
	Answer   certbank.Letter         // the stored answer
	Agree    int                     // distinct solvers who chose it
	Disagree []certbank.Verification // solvers who chose another letter, without override
}

// A solver's agreement rate is judged only from RateMinAnswers answers on:
// it is flagged (SolverStats.Suspect) when it is more than RateGap
// percentage points below the median rate of the solvers so judged.
const (
	RateMinAnswers = 20
	RateGap        = 10
)

// SolverStats is how often one solver chose the stored answer.
type SolverStats struct {
	Name    string
	Answers int // questions answered (one per question, the first entry)
	Agree   int // of those, how many with the stored answer
	// Suspect is set when the solver has at least RateMinAnswers answers
	// and its rate is more than RateGap points below Status.Median: likely
	// a bad solver (or a badly run one), not bad questions.
	Suspect bool
}

// Rate returns the share of the solver's answers that chose the stored
// answer, from 0 to 1.
func (s SolverStats) Rate() float64 {
	if s.Answers == 0 {
		return 0
	}
	return float64(s.Agree) / float64(s.Answers)
}

// Miscalibrated is a question whose blind ratings contradict its label.
type Miscalibrated struct {
	ID      string
	Source  generator.Source
	Label   certbank.Difficulty
	Ratings []certbank.Calibration // the contradicting ratings
}

// contradicts reports whether rating c contradicts q's label, by the rule
// certbank lint --strict enforces: Calibration.Miscalibrated, or rated
// recall while labelled above easy.
func contradicts(c certbank.Calibration, q *certbank.Question) bool {
	if q.Measured != nil {
		return q.Measured.Difficulty != q.Difficulty
	}
	return c.Difficulty.Rank() >= 0 && c.Miscalibrated(q.Difficulty) ||
		c.Level == certbank.Recall && q.Difficulty != certbank.Easy
}

// Status reports the verification and calibration state of certification
// slug, or of every certification when slug is empty.
func (b *Bank) Status(slug string) (*Status, error) {
	if slug != "" {
		if err := b.certification(slug); err != nil {
			return nil, err
		}
	}
	c := b.content
	policy := c.Site.Quality
	st := &Status{MinAgreeing: policy.MinAgreeingSolvers}
	at := map[string]int{}
	for _, cert := range c.Certifications {
		if slug == "" || cert.Slug == slug {
			at[cert.Slug] = len(st.Certifications)
			st.Certifications = append(st.Certifications, CertStatus{Slug: cert.Slug})
		}
	}
	solvers := map[string]*SolverStats{}
	for i := range c.Questions {
		q := &c.Questions[i]
		j, ok := at[q.Certification]
		if !ok {
			continue
		}
		cs := &st.Certifications[j]
		cs.Questions++
		agree, disagree := q.Agreeing()
		o := Unverified{ID: q.ID, Source: c.Sources[i], Answer: q.Answer, Agree: agree, Disagree: disagree}
		switch {
		case len(disagree) > 0:
			cs.Disagreeing++
			st.Disagreeing = append(st.Disagreeing, o)
		case policy.Verified(q):
			cs.Verified++
		default:
			cs.Pending++
			st.Pending = append(st.Pending, o)
		}

		seen := map[string]bool{}
		for _, v := range q.Verifications {
			if seen[v.Solver] {
				continue
			}
			seen[v.Solver] = true
			s := solvers[v.Solver]
			if s == nil {
				s = &SolverStats{Name: v.Solver}
				solvers[v.Solver] = s
			}
			s.Answers++
			if v.Answer == q.Answer {
				s.Agree++
			}
		}

		if len(q.Calibrations) == 0 {
			cs.Unrated++
		}
		var bad []certbank.Calibration
		for _, r := range q.Calibrations {
			if contradicts(r, q) {
				bad = append(bad, r)
			}
		}
		if len(bad) > 0 {
			cs.Miscalibrated++
			st.Miscalibrated = append(st.Miscalibrated, Miscalibrated{ID: q.ID, Source: c.Sources[i], Label: q.Difficulty, Ratings: bad})
		}
	}

	for _, name := range slices.Sorted(maps.Keys(solvers)) {
		st.Solvers = append(st.Solvers, *solvers[name])
	}
	var rates []float64
	for _, s := range st.Solvers {
		if s.Answers >= RateMinAnswers {
			rates = append(rates, s.Rate())
		}
	}
	if st.Judged = len(rates); st.Judged > 0 {
		slices.Sort(rates)
		st.Median = (rates[(len(rates)-1)/2] + rates[len(rates)/2]) / 2
		for i, s := range st.Solvers {
			// The epsilon keeps a rate exactly RateGap points below unflagged.
			st.Solvers[i].Suspect = s.Answers >= RateMinAnswers && st.Median-s.Rate() > RateGap/100.0+1e-9
		}
	}
	return st, nil
}

// Override records a reviewed decision on solver's disagreeing entry on
// question id: it sets the entry's override to reason, in place. The
// quality policy then no longer counts the entry as a disagreement. Fixing
// the question is the other way to resolve a disagreement.
func (b *Bank) Override(id, solver, reason string) error {
	reason = strings.TrimSpace(reason)
	if reason == "" {
		return certbank.Errorf(certbank.Invalid, "give the reason for the override: why the stored answer stands although %s chose another", solver)
	}
	c, err := b.load(nil)
	if err != nil {
		return err
	}
	b.setContent(c)
	q, _, ok := b.question(id)
	if !ok {
		return certbank.Errorf(certbank.Invalid, "no question with id %q in %s", id, b.dir)
	}
	var solvers []string
	for _, v := range q.Verifications {
		if v.Solver != solver {
			solvers = append(solvers, fmt.Sprintf("%q", v.Solver))
			continue
		}
		if v.Answer == q.Answer {
			return certbank.Errorf(certbank.Invalid, "%s chose the stored answer %s of question %s; there is no disagreement to override", solver, v.Answer, id)
		}
		v.Override = reason
		_, err := b.record([]entry{verificationEntry(id, v)})
		return err
	}
	if len(solvers) == 0 {
		return certbank.Errorf(certbank.Invalid, "question %s has no verification entries yet", id)
	}
	return certbank.Errorf(certbank.Invalid, "question %s has no entry from solver %q; its solvers are %s", id, solver, strings.Join(solvers, ", "))
}
