package verify_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/generator"
	"github.com/certbank/certbank/verify"
)

func TestMeasure(t *testing.T) {
	dir := fixture(t)
	file := filepath.Join(dir, "certifications/scrum-psm1/questions/01-framework.yaml")
	before, _ := os.ReadFile(file)
	b, err := verify.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	id := "fb4865ca-2bad-4f81-8db3-ad057cd8ed31"
	m := certbank.Measurement{Responses: 42, P: 0.31, Difficulty: certbank.Hard, Date: "2026-12-01"}

	// Refused, and nothing written: a bad measurement, an unknown id.
	for _, bad := range []verify.Measured{{id, certbank.Measurement{Responses: 0, P: 0.3, Difficulty: certbank.Hard, Date: "2026-12-01"}},
		{id, certbank.Measurement{Responses: 5, P: 1.3, Difficulty: certbank.Hard, Date: "2026-12-01"}},
		{"nope", m}} {
		if _, err := b.Measure([]verify.Measured{bad}); err == nil {
			t.Errorf("Measure(%+v) accepted", bad)
		}
	}
	if now, _ := os.ReadFile(file); string(now) != string(before) {
		t.Fatal("a refused measurement changed the file")
	}

	files, err := b.Measure([]verify.Measured{{id, m}})
	if err != nil || len(files) != 1 {
		t.Fatalf("Measure: %v %v", files, err)
	}
	after, _ := os.ReadFile(file)
	added := diffLines(string(before), string(after))
	want := []string{"+    difficulty: hard", "-    difficulty: easy", "+    measured:", "+      responses: 42", "+      p: 0.31", "+      difficulty: hard", "+      date: 2026-12-01"}
	for _, w := range want {
		if !strings.Contains(added, w+"\n") {
			t.Errorf("edit lacks %q:\n%s", w, added)
		}
	}
	if n := strings.Count(added, "\n"); n != len(want) {
		t.Errorf("edit changed %d lines, want %d:\n%s", n, len(want), added)
	}
	c, err := generator.Load(os.DirFS(dir), dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range c.Questions {
		if q.ID == id && (q.Measured == nil || *q.Measured != m || q.Difficulty != certbank.Hard) {
			t.Errorf("loaded %+v, measured %+v", q.Difficulty, q.Measured)
		}
	}

	// Measuring again replaces the block, and only it.
	m2 := certbank.Measurement{Responses: 80, P: 0.72, Difficulty: certbank.Easy, Date: "2026-12-15"}
	if _, err := b.Measure([]verify.Measured{{id, m2}}); err != nil {
		t.Fatal(err)
	}
	again, _ := os.ReadFile(file)
	if strings.Count(string(again), "measured:") != 1 || !strings.Contains(string(again), "      responses: 80\n      p: 0.72\n      difficulty: easy\n      date: 2026-12-15") {
		t.Errorf("second measurement:\n%s", again)
	}
}

// diffLines lists, as "-line" and "+line", the lines of a that are not in b
// and of b that are not in a (by count).
func diffLines(a, b string) string {
	count := map[string]int{}
	for _, l := range strings.Split(a, "\n") {
		count[l]++
	}
	var out strings.Builder
	for _, l := range strings.Split(b, "\n") {
		if count[l] > 0 {
			count[l]--
			continue
		}
		out.WriteString("+" + l + "\n")
	}
	for _, l := range strings.Split(a, "\n") {
		if count[l] > 0 {
			count[l]--
			out.WriteString("-" + l + "\n")
		}
	}
	return out.String()
}
