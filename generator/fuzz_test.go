package generator_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/generator"
)

// FuzzLoadQuestions loads arbitrary bytes as a question file of an
// otherwise valid tree: Load must never panic, and must either load or
// return Problems that point into the tree. What loads must be valid.
//
//	go test ./generator -run '^$' -fuzz FuzzLoadQuestions -fuzztime 60s
func FuzzLoadQuestions(f *testing.F) {
	f.Add(validTree()[in(qa)].Data)
	f.Add(validTree()[in(qb)].Data)
	files, _ := filepath.Glob(filepath.Join(fixtureContent, "certifications", "*", "questions", "*.yaml"))
	for _, p := range files {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	for _, s := range []string{
		"", "questions:", "questions: [", "questions: {}", "- a", "questions:\n  - *x", "questions:\n  - &a {id: *a}",
		"questions:\n  - id: !!binary aGk=\n", "questions:\n  - options: {A: [1], B: {}, C: ~, D: !!int 1}\n",
		"questions:\n  - verification: [{answer: [A]}, 1, ~]\n", "\xff\xfe", "questions:\n\t- x", "%YAML 1.1\n---\nquestions: []\n",
		"---\nquestions: []\n---\nquestions: []\n", "questions: [{id: 1}, {id: 1}]",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fsys := validTree()
		fsys[in(qa)] = &fstest.MapFile{Data: data}
		c, err := generator.Load(fsys, "content")
		if c == nil {
			t.Fatal("Load returned no Content")
		}
		if err != nil {
			var ps generator.Problems
			if !errors.As(err, &ps) || len(ps) == 0 {
				t.Fatalf("Load returned %T %v, want Problems", err, err)
			}
			for _, p := range ps {
				if p.File == "" || p.Msg == "" || p.Line < 0 {
					t.Fatalf("malformed problem %+v", p)
				}
			}
			return
		}
		if len(c.Questions) != len(c.Sources) {
			t.Fatalf("%d questions but %d sources", len(c.Questions), len(c.Sources))
		}
		ids := map[string]bool{}
		for i, q := range c.Questions {
			if ids[q.ID] || q.Answer.Index() < 0 || q.Stem == "" || q.Explanation == "" {
				t.Fatalf("loaded an invalid question without a problem: %+v", q)
			}
			ids[q.ID] = true
			if _, err := certbank.ParseDifficulty(string(q.Difficulty)); err != nil {
				t.Fatalf("loaded difficulty %q", q.Difficulty)
			}
			if c.Sources[i].Line < 1 {
				t.Fatalf("question %s has no line", q.ID)
			}
		}
	})
}
