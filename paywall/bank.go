package paywall

import (
	"bytes"
	"encoding/json"
	"hash/fnv"
	"sort"
	"strings"

	"github.com/certbank/certbank"
)

// entry is one published question with its JSON pre-encoded in each shape
// the endpoints send, so a request only copies bytes.
type entry struct {
	Q    *certbank.Question
	Cert *certbank.Certification
	Hash uint64 // stable 64-bit identity in a key's seen set
	// keyed route (SPEC.md §2.5): with and without correct_answer/explanation
	keyedFull, keyedQuiz []byte
	// pay-per-request route (SPEC.md §2.2): with and without answer/explanation
	paidFull, paidQuiz []byte
}

// index is the bank, arranged for fast filtering.
type index struct {
	bank    *certbank.Bank
	all     []*entry            // sorted by certification, then id
	byCert  map[string][]*entry // sorted by id
	byID    map[string]*entry
	samples map[string][]*entry // free sample per certification
	certs   []certbank.Certification
}

func questionHash(id string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(id))
	return h.Sum64()
}

type keyedCert struct {
	Name     string `json:"name"`
	Slug     string `json:"slug"`
	Provider string `json:"provider"`
}

type keyedQuestion struct {
	ID            string            `json:"id"`
	Question      string            `json:"question"`
	Options       map[string]string `json:"options"`
	Difficulty    string            `json:"difficulty"`
	Domain        string            `json:"domain"`
	Certification keyedCert         `json:"certification"`
	CorrectAnswer string            `json:"correct_answer,omitempty"`
	Explanation   string            `json:"explanation,omitempty"`
}

type paidQuestion struct {
	ID          string            `json:"id"`
	Question    string            `json:"question"`
	Options     map[string]string `json:"options"`
	Difficulty  string            `json:"difficulty"`
	Domain      string            `json:"domain"`
	Answer      *string           `json:"answer,omitempty"`
	Explanation *string           `json:"explanation,omitempty"`
}

func marshal(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
	return bytes.TrimRight(buf.Bytes(), "\n")
}

func newIndex(b *certbank.Bank) *index {
	ix := &index{bank: b, byCert: map[string][]*entry{}, byID: map[string]*entry{}, samples: map[string][]*entry{}, certs: b.Certifications}
	certOf := map[string]*certbank.Certification{}
	for i := range b.Certifications {
		certOf[b.Certifications[i].Slug] = &b.Certifications[i]
	}
	for i := range b.Questions {
		q := &b.Questions[i]
		c := certOf[q.Certification]
		if c == nil {
			continue
		}
		opts := map[string]string{"A": q.Options[0], "B": q.Options[1], "C": q.Options[2], "D": q.Options[3]}
		kq := keyedQuestion{ID: q.ID, Question: q.Stem, Options: opts, Difficulty: string(q.Difficulty), Domain: q.Domain,
			Certification: keyedCert{c.Name, c.Slug, c.Provider}}
		e := &entry{Q: q, Cert: c, Hash: questionHash(q.ID)}
		e.keyedQuiz = marshal(kq)
		kq.CorrectAnswer, kq.Explanation = string(q.Answer), q.Explanation
		e.keyedFull = marshal(kq)
		pq := paidQuestion{ID: q.ID, Question: q.Stem, Options: opts, Difficulty: string(q.Difficulty), Domain: q.Domain}
		e.paidQuiz = marshal(pq)
		ans, ex := string(q.Answer), q.Explanation
		pq.Answer, pq.Explanation = &ans, &ex
		e.paidFull = marshal(pq)
		ix.all = append(ix.all, e)
		ix.byID[q.ID] = e
	}
	sort.Slice(ix.all, func(i, j int) bool {
		if ix.all[i].Cert.Slug != ix.all[j].Cert.Slug {
			return ix.all[i].Cert.Slug < ix.all[j].Cert.Slug
		}
		return ix.all[i].Q.ID < ix.all[j].Q.ID
	})
	for _, e := range ix.all {
		ix.byCert[e.Cert.Slug] = append(ix.byCert[e.Cert.Slug], e)
	}
	for slug, ids := range b.Samples {
		for _, id := range ids {
			if e := ix.byID[id]; e != nil {
				ix.samples[slug] = append(ix.samples[slug], e)
			}
		}
	}
	return ix
}

// cert returns the certification with the given slug.
func (ix *index) cert(slug string) (*certbank.Certification, bool) {
	return ix.bank.Certification(slug)
}

// filter is a question selection.
type filter struct {
	Cert       string // "" for all
	Difficulty certbank.Difficulty
	Domain     string
}

// matching returns the questions matching f, in stable order. The slice is
// shared when no filtering is needed; callers must not modify it.
func (ix *index) matching(f filter, from []*entry) []*entry {
	src := from
	if src == nil {
		src = ix.all
		if f.Cert != "" {
			src = ix.byCert[f.Cert]
		}
	}
	if f.Difficulty == "" && f.Domain == "" {
		return src
	}
	out := make([]*entry, 0, len(src)/2)
	for _, e := range src {
		if f.Difficulty != "" && e.Q.Difficulty != f.Difficulty {
			continue
		}
		if f.Domain != "" && !strings.EqualFold(e.Q.Domain, f.Domain) {
			continue
		}
		out = append(out, e)
	}
	return out
}

// providers returns the distinct providers.
func (ix *index) providers() []string {
	seen := map[string]bool{}
	var out []string
	for _, c := range ix.certs {
		if !seen[c.Provider] {
			seen[c.Provider] = true
			out = append(out, c.Provider)
		}
	}
	return out
}
