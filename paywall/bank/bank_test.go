package bank

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/paywall/paywalltest"
)

// encodeStd is what encoding/json writes for v with HTML escaping off.
func encodeStd(t *testing.T, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// TestPreEncodedShapes: the bytes the index pre-encodes are exactly those
// encoding/json writes for the documented shapes, for text that needs
// escaping.
func TestPreEncodedShapes(t *testing.T) {
	b := paywalltest.Bank(3)
	tricky := []string{"plain", `quote " and \ backslash`, "line\nbreak\ttab\x01", "<html> & ünïcödé \u2028", "invalid \xff byte", ""}
	for i := range b.Questions {
		q := &b.Questions[i]
		q.Stem = tricky[i%len(tricky)]
		q.Options[1] = tricky[(i+1)%len(tricky)]
		q.Explanation = tricky[(i+2)%len(tricky)]
	}
	ix := New(b)
	if ix.Len() != len(b.Questions) {
		t.Fatalf("index holds %d questions, want %d", ix.Len(), len(b.Questions))
	}
	for _, q := range b.Questions {
		e, ok := ix.ByID(q.ID)
		if !ok {
			t.Fatalf("question %s not indexed", q.ID)
		}
		c, _ := b.Certification(q.Certification)
		opts := map[string]string{}
		for i, l := range certbank.Letters {
			opts[string(l)] = q.Options[i]
		}
		answer, expl := string(q.Answer), q.Explanation
		tests := []struct {
			name string
			got  []byte
			want any
		}{
			{"paid with answer", e.AppendPaid(nil, true), PaidQuestion{q.ID, q.Stem, opts, string(q.Difficulty), q.Domain, &answer, &expl}},
			{"paid quiz", e.AppendPaid(nil, false), PaidQuestion{q.ID, q.Stem, opts, string(q.Difficulty), q.Domain, nil, nil}},
			{"keyed with answer", e.AppendKeyed(nil, true), keyedQuestion{q.ID, q.Stem, opts, string(q.Difficulty), q.Domain, keyedCert{c.Name, c.Slug, c.Provider}, q.Objective, answer, expl}},
			{"keyed quiz", e.AppendKeyed(nil, false), keyedQuestion{q.ID, q.Stem, opts, string(q.Difficulty), q.Domain, keyedCert{c.Name, c.Slug, c.Provider}, q.Objective, "", ""}},
		}
		for _, tc := range tests {
			if want := encodeStd(t, tc.want); !bytes.Equal(tc.got, want) {
				t.Errorf("%s %s:\n got %s\nwant %s", q.ID, tc.name, tc.got, want)
			}
		}
		if got := e.Text(); got.ID != q.ID || got.Question != strings.ToValidUTF8(q.Stem, "\uFFFD") {
			t.Errorf("Text() of %s = %+v", q.ID, got)
		}
	}
}

// seenSet is a Seen for tests.
type seenSet map[uint64]bool

func (s seenSet) Has(h uint64) bool { return s[h] }

func TestPickers(t *testing.T) {
	ix := New(paywalltest.Bank(40))
	cands := ix.ByCert("cissp")
	seen := seenSet{}
	for _, e := range cands[:5] {
		seen[e.Hash] = true
	}
	tests := []struct {
		name       string
		pick       Picker
		newAllowed int
		want       int // how many picked
		maxNew     int // of them at most this many unseen
	}{
		{"random unlimited", PickRandom(cands, 10), certbank.Unlimited, 10, 10},
		{"random more than there are", PickRandom(cands, 100), certbank.Unlimited, 40, 40},
		{"random, 2 new allowed", PickRandom(cands, 10), 2, 7, 2},
		{"random, none new", PickRandom(cands, 10), 0, 5, 0},
		{"page", PickPage(cands, 0, 10), certbank.Unlimited, 10, 10},
		{"page past the end", PickPage(cands, 40, 10), certbank.Unlimited, 0, 0},
		{"page, 1 new allowed", PickPage(cands, 0, 10), 1, 6, 1},
		{"zero", PickRandom(cands, 0), certbank.Unlimited, 0, 0},
	}
	for _, tc := range tests {
		got := tc.pick(seen, tc.newAllowed)
		if len(got) != tc.want {
			t.Errorf("%s: picked %d, want %d", tc.name, len(got), tc.want)
		}
		distinct, unseen := map[*Entry]bool{}, 0
		for _, e := range got {
			if distinct[e] {
				t.Errorf("%s: %s picked twice", tc.name, e.Q.ID)
			}
			distinct[e] = true
			if !seen[e.Hash] {
				unseen++
			}
		}
		if unseen > tc.maxNew {
			t.Errorf("%s: %d unseen questions picked, at most %d allowed", tc.name, unseen, tc.maxNew)
		}
	}
}

func TestMatchingAndSamples(t *testing.T) {
	ix := New(paywalltest.Bank(12))
	tests := []struct {
		f    Filter
		want int
	}{
		{Filter{}, 24},
		{Filter{Cert: "cissp"}, 12},
		{Filter{Cert: "cissp", Difficulty: certbank.Difficulties[0]}, 4},
		{Filter{Cert: "pmp", Domain: "alpha"}, 6},
		{Filter{Cert: "pmp", Domain: "Alpha", Difficulty: certbank.Difficulties[1]}, 2},
	}
	for _, tc := range tests {
		if got := len(ix.Matching(tc.f, nil)); got != tc.want {
			t.Errorf("Matching(%+v) = %d questions, want %d", tc.f, got, tc.want)
		}
	}
	if n := len(ix.Samples("cissp")); n != 5 {
		t.Errorf("cissp sample has %d questions, want 5", n)
	}
	if !ix.IsSample(ix.Samples("pmp")[0]) || ix.IsSample(ix.ByCert("pmp")[11]) {
		t.Error("IsSample is wrong")
	}
}
