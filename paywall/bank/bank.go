// Package bank is the published question bank arranged for serving: an
// index by certification, id and free sample, every question with its JSON
// pre-encoded (so a request only copies bytes), the filters of the keyed,
// paid and MCP routes, and the pickers that draw from it. It reads the bank
// bundle's domain types and knows nothing of HTTP, keys or quotas: a
// picker is told which questions a key has seen, not how that is stored.
package bank

import (
	"bytes"
	"encoding/json"
	"hash/fnv"
	"slices"
	"sort"
	"strings"

	"github.com/certbank/certbank"
)

// Entry is one published question with its JSON pre-encoded, so a request
// only copies bytes. The two pay-per-request shapes are stored whole; the
// keyed shapes are assembled from them (see AppendKeyed), and the few
// paths that need the text as strings decode it (see Text), so the bank's
// text is held once in memory, in paidFull.
type Entry struct {
	// Q is the question without its text (stem, options, explanation,
	// references, verifications): what filtering needs.
	Q    *certbank.Question
	Cert *certbank.Certification
	Hash uint64 // stable 64-bit identity in a key's seen set
	// paidFull is the pay-per-request shape (SPEC.md §2.2) with answer and
	// explanation; its first quizLen bytes, then '}', are the shape
	// without them (see paidQuizOpen).
	paidFull []byte
	quizLen  int
	// certJSON is `,"certification":{…}`, shared by the certification's
	// entries; explOff is where the explanation's JSON string starts in
	// paidFull (0: the question has no explanation).
	certJSON []byte
	explOff  int
}

// AppendKeyed appends the question in the keyed route's shape (SPEC.md
// §2.5), with correct_answer and explanation when include is set: the bytes
// encoding/json writes for keyedQuestion (with HTML escaping off).
func (e *Entry) AppendKeyed(dst []byte, include bool) []byte {
	dst = append(dst, e.paidQuizOpen()...)
	dst = append(dst, e.certJSON...)
	if e.Q.Objective != "" { // a code like "1.2" or "4c": nothing to escape
		dst = append(dst, `,"objective":"`...)
		dst = append(dst, e.Q.Objective...)
		dst = append(dst, '"')
	}
	if include {
		if e.Q.Answer != "" { // a letter A-D: nothing to escape
			dst = append(dst, `,"correct_answer":"`...)
			dst = append(dst, e.Q.Answer...)
			dst = append(dst, '"')
		}
		if e.explOff > 0 {
			dst = append(dst, `,"explanation":`...)
			dst = append(dst, e.paidFull[e.explOff:len(e.paidFull)-1]...)
		}
	}
	return append(dst, '}')
}

// Index is the bank, arranged for fast filtering.
type Index struct {
	bank    *certbank.Bank
	all     []*Entry            // sorted by certification, then id
	byCert  map[string][]*Entry // sorted by id
	byID    map[string]*Entry
	samples map[string][]*Entry // free sample per certification
	certs   []certbank.Certification
	// stock counts each certification's questions by difficulty, for the
	// pay-per-request rule (certbank.Pricing.CanFill).
	stock map[string]certbank.Stock
}

// paidQuizOpen is the pay-per-request shape without answer and explanation,
// less its closing '}'.
func (e *Entry) paidQuizOpen() []byte { return e.paidFull[:e.quizLen:e.quizLen] }

// Text returns the question's text, decoded from paidFull.
func (e *Entry) Text() PaidQuestion {
	var p PaidQuestion
	if err := json.Unmarshal(e.paidFull, &p); err != nil {
		panic("bank: pre-encoded question does not decode: " + err.Error()) // encodePaid is tested to write valid JSON
	}
	return p
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

// keyedQuestion documents the keyed route's shape; AppendKeyed writes it.
type keyedQuestion struct {
	ID            string            `json:"id"`
	Question      string            `json:"question"`
	Options       map[string]string `json:"options"`
	Difficulty    string            `json:"difficulty"`
	Domain        string            `json:"domain"`
	Certification keyedCert         `json:"certification"`
	Objective     string            `json:"objective,omitempty"`
	CorrectAnswer string            `json:"correct_answer,omitempty"`
	Explanation   string            `json:"explanation,omitempty"`
}

// PaidQuestion documents the pay-per-request shape; encodePaid writes it.
type PaidQuestion struct {
	ID          string            `json:"id"`
	Question    string            `json:"question"`
	Options     map[string]string `json:"options"`
	Difficulty  string            `json:"difficulty"`
	Domain      string            `json:"domain"`
	Answer      *string           `json:"answer,omitempty"`
	Explanation *string           `json:"explanation,omitempty"`
}

// marshal encodes v as encoding/json does with HTML escaping off, without
// the trailing newline, in a slice of exactly its length (these slices live
// as long as the server).
func marshal(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
	return bytes.Clone(bytes.TrimRight(buf.Bytes(), "\n"))
}

// jsonString appends strings as encoding/json writes them with HTML
// escaping off.
type jsonString struct {
	buf bytes.Buffer
	enc *json.Encoder
}

func newJSONString() *jsonString {
	j := &jsonString{}
	j.enc = json.NewEncoder(&j.buf)
	j.enc.SetEscapeHTML(false)
	return j
}

func (j *jsonString) append(dst []byte, s string) []byte {
	j.buf.Reset()
	j.enc.Encode(s) // a string always encodes
	return append(dst, bytes.TrimSuffix(j.buf.Bytes(), []byte("\n"))...)
}

// encodePaid sets e.paidFull, e.quizLen and e.explOff: the bytes
// encoding/json writes for PaidQuestion with the answer, in a slice of
// exactly its length, and where the fields of the shape without it end.
func (e *Entry) encodePaid(scratch []byte, str *jsonString) []byte {
	q := e.Q
	appendJSONString := str.append
	b := append(scratch[:0], `{"id":`...)
	b = appendJSONString(b, q.ID)
	b = append(b, `,"question":`...)
	b = appendJSONString(b, q.Stem)
	b = append(b, `,"options":{`...)
	for i, l := range certbank.Letters {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, string(l)...)
		b = append(b, `":`...)
		b = appendJSONString(b, q.Options[i])
	}
	b = append(b, `},"difficulty":`...)
	b = appendJSONString(b, string(q.Difficulty))
	b = append(b, `,"domain":`...)
	b = appendJSONString(b, q.Domain)
	e.quizLen = len(b)
	b = append(b, `,"answer":`...)
	b = appendJSONString(b, string(q.Answer))
	b = append(b, `,"explanation":`...)
	expl := len(b)
	b = appendJSONString(b, q.Explanation)
	b = append(b, '}')
	e.paidFull = bytes.Clone(b)
	e.explOff = 0
	if q.Explanation != "" {
		e.explOff = expl
	}
	return b
}

func New(b *certbank.Bank) *Index {
	ix := &Index{bank: b, byCert: map[string][]*Entry{}, byID: make(map[string]*Entry, len(b.Questions)), samples: map[string][]*Entry{}, certs: b.Certifications}
	certOf := map[string]*certbank.Certification{}
	certJSON := map[string][]byte{}
	for i := range b.Certifications {
		c := &b.Certifications[i]
		certOf[c.Slug] = c
		certJSON[c.Slug] = append([]byte(`,"certification":`), marshal(keyedCert{c.Name, c.Slug, c.Provider})...)
	}
	entries := make([]Entry, len(b.Questions))
	slim := make([]certbank.Question, len(b.Questions))
	ix.all = make([]*Entry, 0, len(b.Questions))
	var scratch []byte
	str := newJSONString()
	for i := range b.Questions {
		q := &b.Questions[i]
		c := certOf[q.Certification]
		if c == nil {
			continue
		}
		e := &entries[i]
		*e = Entry{Q: q, Cert: c, Hash: questionHash(q.ID), certJSON: certJSON[c.Slug]}
		scratch = e.encodePaid(scratch, str)
		slim[i] = certbank.Question{ID: q.ID, Certification: q.Certification, Domain: q.Domain, Objective: q.Objective, Difficulty: q.Difficulty, Answer: q.Answer}
		if strings.Trim(q.Objective, "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.") != "" {
			slim[i].Objective = "" // not a code AppendKeyed may copy unescaped (the loader allows no other)
		}
		e.Q = &slim[i] // the text is in paidFull: b's copy can go
		ix.all = append(ix.all, e)
		ix.byID[q.ID] = e
	}
	sort.Slice(ix.all, func(i, j int) bool {
		if ix.all[i].Cert.Slug != ix.all[j].Cert.Slug {
			return ix.all[i].Cert.Slug < ix.all[j].Cert.Slug
		}
		return ix.all[i].Q.ID < ix.all[j].Q.ID
	})
	ix.stock = map[string]certbank.Stock{}
	for _, e := range ix.all {
		ix.byCert[e.Cert.Slug] = append(ix.byCert[e.Cert.Slug], e)
		if ix.stock[e.Cert.Slug] == nil {
			ix.stock[e.Cert.Slug] = certbank.Stock{}
		}
		ix.stock[e.Cert.Slug][e.Q.Difficulty]++
	}
	// The index holds every question's text once, encoded; keep the rest
	// of the bank (site, certifications, samples) but not its questions.
	slimBank := *b
	slimBank.Questions = nil
	ix.bank = &slimBank
	for slug, ids := range b.Samples {
		for _, id := range ids {
			if e := ix.byID[id]; e != nil {
				ix.samples[slug] = append(ix.samples[slug], e)
			}
		}
	}
	return ix
}

// Cert returns the certification with the given slug.
func (ix *Index) Cert(slug string) (*certbank.Certification, bool) {
	return ix.bank.Certification(slug)
}

// Filter is a question selection.
type Filter struct {
	Cert       string // "" for all
	Difficulty certbank.Difficulty
	Domain     string
}

// Matching returns the questions matching f, in stable order. The slice is
// shared when no filtering is needed; callers must not modify it.
func (ix *Index) Matching(f Filter, from []*Entry) []*Entry {
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
	out := make([]*Entry, 0, len(src)/2)
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

// Providers returns the distinct providers.
func (ix *Index) Providers() []string {
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

// Bank returns the bank the index was built from (without its questions'
// text, which the index holds encoded).
func (ix *Index) Bank() *certbank.Bank { return ix.bank }

// Len returns the number of published questions.
func (ix *Index) Len() int { return len(ix.all) }

// All returns every question, sorted by certification, then id. The slice
// is shared: callers must not modify it.
func (ix *Index) All() []*Entry { return ix.all }

// ByCert returns a certification's questions sorted by id (shared).
func (ix *Index) ByCert(slug string) []*Entry { return ix.byCert[slug] }

// ByID returns the question with the given id.
func (ix *Index) ByID(id string) (*Entry, bool) {
	e, ok := ix.byID[id]
	return e, ok
}

// Samples returns a certification's free sample (shared).
func (ix *Index) Samples(slug string) []*Entry { return ix.samples[slug] }

// IsSample reports whether e is in its certification's free sample.
func (ix *Index) IsSample(e *Entry) bool { return slices.Contains(ix.samples[e.Cert.Slug], e) }

// Certs returns the certifications in the bank's order.
func (ix *Index) Certs() []certbank.Certification { return ix.certs }

// Stock counts a certification's questions by difficulty, for the
// pay-per-request rule (certbank.Pricing.CanFill).
func (ix *Index) Stock(slug string) certbank.Stock { return ix.stock[slug] }

// AppendPaid appends the question in the pay-per-request shape (SPEC.md
// §2.2), with answer and explanation when include is set.
func (e *Entry) AppendPaid(dst []byte, include bool) []byte {
	if include {
		return append(dst, e.paidFull...)
	}
	return append(append(dst, e.paidQuizOpen()...), '}')
}
