package generator

import (
	"crypto/sha256"
	"encoding/binary"
	"sort"

	"github.com/certbank/certbank"
)

// publish returns the questions that meet the site's quality policy, in
// content order.
func publish(c *Content) []certbank.Question {
	out := make([]certbank.Question, 0, len(c.Questions))
	for i := range c.Questions {
		if c.Site.Quality.Verified(&c.Questions[i]) {
			out = append(out, c.Questions[i])
		}
	}
	return out
}

// sampleKey orders questions pseudo-randomly but deterministically: the same
// id always sorts to the same place, so adding questions moves few samples.
func sampleKey(id string) uint64 {
	h := sha256.Sum256([]byte("certbank free sample\x00" + id))
	return binary.BigEndian.Uint64(h[:8])
}

// chooseSample picks up to n questions of one certification, stratified by
// domain and difficulty: each (domain, difficulty) stratum gets a share
// proportional to its size (largest remainder), and within a stratum the
// questions with the smallest sampleKey are taken. The result is ordered by
// the certification's domain order, then difficulty, then key.
func chooseSample(cert *certbank.Certification, qs []*certbank.Question, n int) []*certbank.Question {
	if n >= len(qs) {
		n = len(qs)
	}
	type stratum struct {
		domain int
		diff   int
		qs     []*certbank.Question
		quota  int
		rem    float64
	}
	domIdx := map[string]int{}
	for i, d := range cert.Domains {
		domIdx[d.Name] = i
	}
	diffIdx := map[certbank.Difficulty]int{certbank.Easy: 0, certbank.Medium: 1, certbank.Hard: 2}
	byKey := map[[2]int]*stratum{}
	var strata []*stratum
	for _, q := range qs {
		k := [2]int{domIdx[q.Domain], diffIdx[q.Difficulty]}
		s := byKey[k]
		if s == nil {
			s = &stratum{domain: k[0], diff: k[1]}
			byKey[k] = s
			strata = append(strata, s)
		}
		s.qs = append(s.qs, q)
	}
	sort.Slice(strata, func(i, j int) bool {
		if strata[i].domain != strata[j].domain {
			return strata[i].domain < strata[j].domain
		}
		return strata[i].diff < strata[j].diff
	})
	// Each key is hashed once, not once per comparison.
	keys := make(map[*certbank.Question]uint64, len(qs))
	for _, q := range qs {
		keys[q] = sampleKey(q.ID)
	}
	given := 0
	for _, s := range strata {
		sort.Slice(s.qs, func(i, j int) bool { return keys[s.qs[i]] < keys[s.qs[j]] })
		exact := float64(n) * float64(len(s.qs)) / float64(max(len(qs), 1))
		s.quota = int(exact)
		s.rem = exact - float64(s.quota)
		given += s.quota
	}
	order := make([]*stratum, len(strata))
	copy(order, strata)
	sort.SliceStable(order, func(i, j int) bool {
		if order[i].rem != order[j].rem {
			return order[i].rem > order[j].rem
		}
		return keys[order[i].qs[0]] < keys[order[j].qs[0]]
	})
	for i := 0; given < n && i < len(order); i++ {
		if order[i].quota < len(order[i].qs) {
			order[i].quota++
			given++
		}
	}
	out := make([]*certbank.Question, 0, n)
	for _, s := range strata {
		out = append(out, s.qs[:s.quota]...)
	}
	return out
}
