package verify

import (
	"strings"
	"testing"

	"github.com/certbank/certbank"
	"gopkg.in/yaml.v3"
)

func TestUpsert(t *testing.T) {
	t.Parallel()
	alice := certbank.Verification{Solver: "alice", Answer: "B", Date: "2026-11-21"}
	for _, tc := range []struct {
		name string
		in   string
		v    certbank.Verification
		want string // "" when upsert must fail
	}{
		{
			name: "new list after a block scalar",
			in:   "questions:\n  - id: q1\n    explanation: >-\n      text\n      more\n\n  # next\n  - id: q2\n",
			v:    alice,
			want: "questions:\n  - id: q1\n    explanation: >-\n      text\n      more\n    verification:\n      - solver: alice\n        answer: B\n        date: 2026-11-21\n\n  # next\n  - id: q2\n",
		},
		{
			name: "items at column 0, no final line break",
			in:   "questions:\n- id: q1\n  answer: C",
			v:    alice,
			want: "questions:\n- id: q1\n  answer: C\n  verification:\n    - solver: alice\n      answer: B\n      date: 2026-11-21",
		},
		{
			name: "CRLF",
			in:   "questions:\r\n  - id: q1\r\n    answer: C\r\n",
			v:    alice,
			want: "questions:\r\n  - id: q1\r\n    answer: C\r\n    verification:\r\n      - solver: alice\r\n        answer: B\r\n        date: 2026-11-21\r\n",
		},
		{
			name: "CRLF, no final line break",
			in:   "questions:\r\n  - id: q1\r\n    answer: C",
			v:    alice,
			want: "questions:\r\n  - id: q1\r\n    answer: C\r\n    verification:\r\n      - solver: alice\r\n        answer: B\r\n        date: 2026-11-21",
		},
		{
			name: "empty flow list",
			in:   "questions:\n  - id: q1\n    verification: []\n    answer: C\n",
			v:    alice,
			want: "questions:\n  - id: q1\n    verification:\n      - solver: alice\n        answer: B\n        date: 2026-11-21\n    answer: C\n",
		},
		{
			name: "null list",
			in:   "questions:\n  - id: q1\n    verification:\n    answer: C\n",
			v:    alice,
			want: "questions:\n  - id: q1\n    verification:\n      - solver: alice\n        answer: B\n        date: 2026-11-21\n    answer: C\n",
		},
		{
			name: "append to a list indented like its key",
			in:   "questions:\n  - id: q1\n    verification:\n    - solver: bob\n      answer: C\n      date: 2026-01-01\n    answer: C\n",
			v:    alice,
			want: "questions:\n  - id: q1\n    verification:\n    - solver: bob\n      answer: C\n      date: 2026-01-01\n    - solver: alice\n      answer: B\n      date: 2026-11-21\n    answer: C\n",
		},
		{
			name: "replace, dropping a duplicate and keeping comments",
			in:   "questions:\n  - id: q1\n    verification:\n      - solver: alice\n        answer: C\n        date: 2026-01-01\n        # checked\n      - solver: bob\n        answer: C\n        date: 2026-01-01\n      - solver: alice\n        answer: D\n        date: 2026-01-02\n    # end\n",
			v:    certbank.Verification{Solver: "alice", Answer: "B", Date: "2026-11-21", Override: `she said "B"`},
			want: "questions:\n  - id: q1\n    verification:\n      - solver: alice\n        answer: B\n        date: 2026-11-21\n        override: \"she said \\\"B\\\"\"\n      - solver: bob\n        answer: C\n        date: 2026-01-01\n    # end\n",
		},
		{
			name: "quoted solver names",
			in:   "questions:\n  - id: q1\n",
			v:    certbank.Verification{Solver: "true", Answer: "A", Date: "2026-11-21"},
			want: "questions:\n  - id: q1\n    verification:\n      - solver: \"true\"\n        answer: A\n        date: 2026-11-21\n",
		},
		{name: "flow item", in: "questions:\n  - {id: q1, answer: C}\n", v: alice},
		{name: "flow list", in: "questions:\n  - id: q1\n    verification: [{solver: bob, answer: C, date: 2026-01-01}]\n", v: alice},
		{name: "missing question", in: "questions:\n  - id: q2\n", v: alice},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := parseQuestionFile([]byte(tc.in))
			err := f.upsert("q1", tc.v)
			if tc.want == "" {
				if err == nil {
					t.Errorf("upsert succeeded:\n%s", f.bytes())
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := string(f.bytes()); got != tc.want {
				t.Errorf("got\n%q\nwant\n%q", got, tc.want)
			}
			var doc any
			if err := yaml.Unmarshal(f.bytes(), &doc); err != nil {
				t.Errorf("the result is not YAML: %v", err)
			}
		})
	}
}

func TestScalar(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"alice", "gpt-4o-2024-08-06 via API, temperature 0", "J. Doe (CISSP holder)", "true", "null", "2026", "a: b", "x #y", "- dash", "'quoted'", "tab\there", "ünïcödé solver", `back\slash "q"`} {
		out := scalar(s)
		var back struct{ V string }
		if err := yaml.Unmarshal([]byte("v: "+out), &back); err != nil || back.V != s {
			t.Errorf("scalar(%q) = %s reads back as %q (%v)", s, out, back.V, err)
		}
		if plain := !strings.HasPrefix(out, `"`); plain != (s == "alice" || strings.Contains(s, "via API") || strings.HasPrefix(s, "J. Doe") || s == "ünïcödé solver") {
			t.Errorf("scalar(%q) = %s", s, out)
		}
	}
}
