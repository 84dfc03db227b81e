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
	rater := certbank.Calibration{Rater: "rita", Difficulty: certbank.Hard, Level: certbank.Analyse, Date: "2026-11-20"}
	for _, tc := range []struct {
		name string
		in   string
		e    block
		want string // "" when upsert must fail
	}{
		{
			name: "new list after a block scalar",
			in:   "questions:\n  - id: q1\n    explanation: >-\n      text\n      more\n\n  # next\n  - id: q2\n",
			e:    verificationBlock(alice),
			want: "questions:\n  - id: q1\n    explanation: >-\n      text\n      more\n    verification:\n      - solver: alice\n        answer: B\n        date: 2026-11-21\n\n  # next\n  - id: q2\n",
		},
		{
			name: "items at column 0, no final line break",
			in:   "questions:\n- id: q1\n  answer: C",
			e:    verificationBlock(alice),
			want: "questions:\n- id: q1\n  answer: C\n  verification:\n    - solver: alice\n      answer: B\n      date: 2026-11-21",
		},
		{
			name: "CRLF",
			in:   "questions:\r\n  - id: q1\r\n    answer: C\r\n",
			e:    verificationBlock(alice),
			want: "questions:\r\n  - id: q1\r\n    answer: C\r\n    verification:\r\n      - solver: alice\r\n        answer: B\r\n        date: 2026-11-21\r\n",
		},
		{
			name: "CRLF, no final line break",
			in:   "questions:\r\n  - id: q1\r\n    answer: C",
			e:    verificationBlock(alice),
			want: "questions:\r\n  - id: q1\r\n    answer: C\r\n    verification:\r\n      - solver: alice\r\n        answer: B\r\n        date: 2026-11-21",
		},
		{
			name: "empty flow list",
			in:   "questions:\n  - id: q1\n    verification: []\n    answer: C\n",
			e:    verificationBlock(alice),
			want: "questions:\n  - id: q1\n    verification:\n      - solver: alice\n        answer: B\n        date: 2026-11-21\n    answer: C\n",
		},
		{
			name: "null list",
			in:   "questions:\n  - id: q1\n    verification:\n    answer: C\n",
			e:    verificationBlock(alice),
			want: "questions:\n  - id: q1\n    verification:\n      - solver: alice\n        answer: B\n        date: 2026-11-21\n    answer: C\n",
		},
		{
			name: "append to a list indented like its key",
			in:   "questions:\n  - id: q1\n    verification:\n    - solver: bob\n      answer: C\n      date: 2026-01-01\n    answer: C\n",
			e:    verificationBlock(alice),
			want: "questions:\n  - id: q1\n    verification:\n    - solver: bob\n      answer: C\n      date: 2026-01-01\n    - solver: alice\n      answer: B\n      date: 2026-11-21\n    answer: C\n",
		},
		{
			name: "replace, dropping a duplicate and keeping comments",
			in:   "questions:\n  - id: q1\n    verification:\n      - solver: alice\n        answer: C\n        date: 2026-01-01\n        # checked\n      - solver: bob\n        answer: C\n        date: 2026-01-01\n      - solver: alice\n        answer: D\n        date: 2026-01-02\n    # end\n",
			e:    verificationBlock(certbank.Verification{Solver: "alice", Answer: "B", Date: "2026-11-21", Override: `she said "B"`}),
			want: "questions:\n  - id: q1\n    verification:\n      - solver: alice\n        answer: B\n        date: 2026-11-21\n        override: \"she said \\\"B\\\"\"\n      - solver: bob\n        answer: C\n        date: 2026-01-01\n    # end\n",
		},
		{
			name: "quoted solver names",
			in:   "questions:\n  - id: q1\n",
			e:    verificationBlock(certbank.Verification{Solver: "true", Answer: "A", Date: "2026-11-21"}),
			want: "questions:\n  - id: q1\n    verification:\n      - solver: \"true\"\n        answer: A\n        date: 2026-11-21\n",
		},
		{
			name: "calibration after the verification list",
			in:   "questions:\n  - id: q1\n    verification:\n    - solver: bob\n      answer: C\n      date: 2026-01-01\n    # bob's\n    answer: C\n",
			e:    calibrationBlock(rater),
			want: "questions:\n  - id: q1\n    verification:\n    - solver: bob\n      answer: C\n      date: 2026-01-01\n    calibration:\n      - rater: rita\n        difficulty: hard\n        level: analyse\n        date: 2026-11-20\n    # bob's\n    answer: C\n",
		},
		{
			name: "verification before the calibration list",
			in:   "questions:\n  - id: q1\n    answer: C\n    calibration:\n      - rater: rita\n        difficulty: easy\n        level: recall\n        date: 2026-01-01\n",
			e:    verificationBlock(alice),
			want: "questions:\n  - id: q1\n    answer: C\n    verification:\n      - solver: alice\n        answer: B\n        date: 2026-11-21\n    calibration:\n      - rater: rita\n        difficulty: easy\n        level: recall\n        date: 2026-01-01\n",
		},
		{
			name: "replace a rating, keeping the solver with the same name",
			in:   "questions:\n  - id: q1\n    verification:\n      - solver: rita\n        answer: C\n        date: 2026-01-01\n    calibration:\n      - rater: rita\n        difficulty: easy\n        level: recall\n        date: 2026-01-01\n      - rater: sam\n        difficulty: easy\n        level: apply\n        date: 2026-01-01\n",
			e:    calibrationBlock(rater),
			want: "questions:\n  - id: q1\n    verification:\n      - solver: rita\n        answer: C\n        date: 2026-01-01\n    calibration:\n      - rater: rita\n        difficulty: hard\n        level: analyse\n        date: 2026-11-20\n      - rater: sam\n        difficulty: easy\n        level: apply\n        date: 2026-01-01\n",
		},
		{
			name: "calibration after an empty verification list",
			in:   "questions:\n  - id: q1\n    verification: []\n    answer: C\n",
			e:    calibrationBlock(rater),
			want: "questions:\n  - id: q1\n    verification: []\n    calibration:\n      - rater: rita\n        difficulty: hard\n        level: analyse\n        date: 2026-11-20\n    answer: C\n",
		},
		{name: "flow calibration list", in: "questions:\n  - id: q1\n    calibration: [{rater: sam}]\n", e: calibrationBlock(rater)},
		{name: "flow item", in: "questions:\n  - {id: q1, answer: C}\n", e: verificationBlock(alice)},
		{name: "flow list", in: "questions:\n  - id: q1\n    verification: [{solver: bob, answer: C, date: 2026-01-01}]\n", e: verificationBlock(alice)},
		{name: "missing question", in: "questions:\n  - id: q2\n", e: verificationBlock(alice)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := parseQuestionFile([]byte(tc.in))
			err := f.upsert("q1", tc.e)
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
