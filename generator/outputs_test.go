package generator

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/certbank/certbank"
)

func TestHubTitle(t *testing.T) {
	cases := []struct{ name, code, want string }{
		{"Certified Information Systems Security Professional (CISSP)", "CISSP", "Certified Information Systems Security Professional (CISSP) practice questions"},
		{"VendorFour Security+", "SY0-701", "VendorFour Security+ (SY0-701) practice questions"},
		{"CloudThree Cloud Digital Leader", "", "CloudThree Cloud Digital Leader practice questions"},
	}
	for _, c := range cases {
		if got := hubTitle(c.name, c.code); got != c.want {
			t.Errorf("hubTitle(%q, %q) = %q, want %q", c.name, c.code, got, c.want)
		}
	}
}

// TestHubJSONLDBudget: the Quiz lists the sample in the page's order, all of
// it when it fits, and only a leading part of it, within jsonLDBudget, when
// the questions are long.
func TestHubJSONLDBudget(t *testing.T) {
	sample := func(stemLen int) []*certbank.Question {
		var qs []*certbank.Question
		for i := range 20 {
			qs = append(qs, &certbank.Question{
				ID: fmt.Sprintf("q%02d", i), Difficulty: certbank.Medium, Answer: "B",
				Stem:    fmt.Sprintf("Question %d: %s?", i, strings.Repeat("word ", stemLen/5)),
				Options: certbank.Options{"alpha", "bravo", "charlie", "delta"},
			})
		}
		return qs
	}
	m := &model{Site: certbank.Site{Name: "certbank", BaseURL: "https://example.org"}, Date: "2026-11-25"}
	for _, tc := range []struct {
		name    string
		stemLen int
		all     bool
	}{{"short questions all fit", 100, true}, {"long scenarios are cut to the budget", 1200, false}} {
		t.Run(tc.name, func(t *testing.T) {
			c := &certStats{Cert: &certbank.Certification{Slug: "x", Name: "X"}, Sample: sample(tc.stemLen), HubURL: "https://example.org/certifications/x/"}
			js, err := hubJSONLD(m, c)
			if err != nil {
				t.Fatal(err)
			}
			if len(js) > jsonLDBudget {
				t.Errorf("Quiz is %d bytes, over the %d budget", len(js), jsonLDBudget)
			}
			var doc struct {
				Description string
				HasPart     []struct{ Text string } `json:"hasPart"`
			}
			if err := json.Unmarshal([]byte(js), &doc); err != nil {
				t.Fatal(err)
			}
			if n := len(doc.HasPart); tc.all != (n == len(c.Sample)) || n == 0 {
				t.Fatalf("Quiz lists %d of %d questions", n, len(c.Sample))
			}
			want := fmt.Sprintf("%d free practice questions with explanations for X.", len(c.Sample))
			if !tc.all {
				want = fmt.Sprintf("%d of the %d free practice questions with explanations for X.", len(doc.HasPart), len(c.Sample))
			}
			if doc.Description != want {
				t.Errorf("description %q, want %q", doc.Description, want)
			}
			for i, q := range doc.HasPart {
				if q.Text != c.Sample[i].Stem {
					t.Errorf("hasPart[%d] is %.30q, want the sample's question %d", i, q.Text, i)
				}
			}
		})
	}
}
