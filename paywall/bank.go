package paywall

import (
	"bytes"
	"encoding/json"
	"hash/fnv"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/certbank/certbank"
)

// entry is one published question with its JSON pre-encoded, so a request
// only copies bytes. The two pay-per-request shapes are stored whole; the
// keyed shapes are assembled from them (see appendKeyed), and the few
// paths that need the text as strings decode it (see text), so the bank's
// text is held once in memory, in paidFull.
type entry struct {
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

// appendKeyed appends the question in the keyed route's shape (SPEC.md
// §2.5), with correct_answer and explanation when include is set: the bytes
// encoding/json writes for keyedQuestion (with HTML escaping off).
func (e *entry) appendKeyed(dst []byte, include bool) []byte {
	dst = append(dst, e.paidQuizOpen()...)
	dst = append(dst, e.certJSON...)
	if include {
		if e.Q.Answer != "" {
			dst = append(dst, `,"correct_answer":`...)
			dst = appendJSONString(dst, string(e.Q.Answer))
		}
		if e.explOff > 0 {
			dst = append(dst, `,"explanation":`...)
			dst = append(dst, e.paidFull[e.explOff:len(e.paidFull)-1]...)
		}
	}
	return append(dst, '}')
}

// index is the bank, arranged for fast filtering.
type index struct {
	bank    *certbank.Bank
	all     []*entry            // sorted by certification, then id
	byCert  map[string][]*entry // sorted by id
	byID    map[string]*entry
	samples map[string][]*entry // free sample per certification
	certs   []certbank.Certification
	// stock counts each certification's questions by difficulty, for the
	// pay-per-request rule (certbank.Pricing.CanFill).
	stock map[string]certbank.Stock
}

// paidQuizOpen is the pay-per-request shape without answer and explanation,
// less its closing '}'.
func (e *entry) paidQuizOpen() []byte { return e.paidFull[:e.quizLen:e.quizLen] }

// text returns the question's text, decoded from paidFull.
func (e *entry) text() paidQuestion {
	var p paidQuestion
	if err := json.Unmarshal(e.paidFull, &p); err != nil {
		panic("paywall: pre-encoded question does not decode: " + err.Error()) // encodePaid is tested to write valid JSON
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

// keyedQuestion documents the keyed route's shape; appendKeyed writes it.
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

// paidQuestion documents the pay-per-request shape; encodePaid writes it.
type paidQuestion struct {
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

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string exactly as encoding/json
// does with HTML escaping off: quotes, backslashes and control characters
// escaped, invalid UTF-8 as \ufffd, U+2028 and U+2029 escaped.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// encodePaid sets e.paidFull, e.quizLen and e.explOff: the bytes
// encoding/json writes for paidQuestion with the answer, in a slice of
// exactly its length, and where the fields of the shape without it end.
func (e *entry) encodePaid(scratch []byte) []byte {
	q := e.Q
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

func newIndex(b *certbank.Bank) *index {
	ix := &index{bank: b, byCert: map[string][]*entry{}, byID: make(map[string]*entry, len(b.Questions)), samples: map[string][]*entry{}, certs: b.Certifications}
	certOf := map[string]*certbank.Certification{}
	certJSON := map[string][]byte{}
	for i := range b.Certifications {
		c := &b.Certifications[i]
		certOf[c.Slug] = c
		certJSON[c.Slug] = append([]byte(`,"certification":`), marshal(keyedCert{c.Name, c.Slug, c.Provider})...)
	}
	entries := make([]entry, len(b.Questions))
	slim := make([]certbank.Question, len(b.Questions))
	ix.all = make([]*entry, 0, len(b.Questions))
	var scratch []byte
	for i := range b.Questions {
		q := &b.Questions[i]
		c := certOf[q.Certification]
		if c == nil {
			continue
		}
		e := &entries[i]
		*e = entry{Q: q, Cert: c, Hash: questionHash(q.ID), certJSON: certJSON[c.Slug]}
		scratch = e.encodePaid(scratch)
		slim[i] = certbank.Question{ID: q.ID, Certification: q.Certification, Domain: q.Domain, Objective: q.Objective, Difficulty: q.Difficulty, Answer: q.Answer}
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
