package verify

import (
	"fmt"
	"strings"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/generator"
)

// Status is where verification stands, per certification.
type Status struct {
	MinAgreeing    int          // quality.min_agreeing_solvers of site.yaml
	Certifications []CertStatus // sorted by slug
	Pending        []Unverified // fewer than MinAgreeing agreeing solvers, none disagreeing
	Disagreeing    []Unverified // at least one solver chose another answer, without override
}

// CertStatus counts one certification's questions. Questions = Verified +
// Pending + Disagreeing.
type CertStatus struct {
	Slug        string
	Questions   int
	Verified    int // at least MinAgreeing agreeing solvers and none disagreeing
	Pending     int
	Disagreeing int
}

// Unverified is a question that is not verified yet.
type Unverified struct {
	ID       string
	Source   generator.Source
	Answer   certbank.Letter         // the stored answer
	Agree    int                     // distinct solvers who chose it
	Disagree []certbank.Verification // solvers who chose another letter, without override
}

// Status reports the verification state of certification slug, or of every
// certification when slug is empty.
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
