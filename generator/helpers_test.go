package generator_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/generator"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/ from the current output")

// The fixture of the golden and semantic tests: testdata/site/content is a
// small content tree (three certifications, twenty questions, three of which
// fail the quality policy); want/ holds every public file of its build and
// bank.json the private bundle.
const (
	fixtureContent = "testdata/site/content"
	fixtureWant    = "testdata/site/want"
	fixtureBank    = "testdata/site/bank.json"
	fixtureDate    = "2026-11-21"
)

// loadFixture loads the fixture content tree.
func loadFixture(t testing.TB) *generator.Content {
	t.Helper()
	c, err := generator.Load(os.DirFS(fixtureContent), "content")
	if err != nil {
		t.Fatalf("load %s:\n%v", fixtureContent, err)
	}
	return c
}

// buildFixture loads and builds the fixture with the fixed date.
func buildFixture(t testing.TB) (*generator.Content, *generator.Output) {
	t.Helper()
	c := loadFixture(t)
	out, err := generator.Build(c, generator.Options{Date: fixtureDate})
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	return c, out
}

// writeFixture builds the fixture and writes it under a new temp dir,
// returning the public directory and the bank path.
func writeFixture(t testing.TB, dir string) (pub, bank string) {
	t.Helper()
	_, out := buildFixture(t)
	pub, bank = filepath.Join(dir, "public"), filepath.Join(dir, "private", "bank.json")
	if err := out.Write(pub, bank); err != nil {
		t.Fatalf("write: %v", err)
	}
	return pub, bank
}

// readTree returns every regular file under dir by slash-separated path.
func readTree(t testing.TB, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		files[filepath.ToSlash(rel)] = data
		return err
	})
	if err != nil {
		t.Fatalf("read %s: %v", dir, err)
	}
	return files
}

// compareTrees reports every missing, extra and changed file of got against
// want, with a line diff for changed files.
func compareTrees(t testing.TB, what string, got, want map[string][]byte) {
	t.Helper()
	var paths []string
	for p := range want {
		paths = append(paths, p)
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	for _, p := range paths {
		g, inGot := got[p]
		w, inWant := want[p]
		switch {
		case !inGot:
			t.Errorf("%s: missing file %s (in want, not built)", what, p)
		case !inWant:
			t.Errorf("%s: extra file %s (built, not in want)", what, p)
		case !bytes.Equal(g, w):
			t.Errorf("%s: %s differs (-want +got):\n%s", what, p, lineDiff(w, g))
		}
	}
}

// lineDiff is a small unified-style diff of two texts: changed lines with
// two lines of context, at most 40 lines of output. Single-line JSON (the
// bank bundle) is indented first so the diff points at the field.
func lineDiff(want, got []byte) string {
	if bytes.Count(want, []byte("\n")) <= 1 && bytes.Count(got, []byte("\n")) <= 1 && json.Valid(want) && json.Valid(got) {
		var wi, gi bytes.Buffer
		if json.Indent(&wi, want, "", "  ") == nil && json.Indent(&gi, got, "", "  ") == nil {
			want, got = wi.Bytes(), gi.Bytes()
		}
	}
	a, b := strings.Split(string(want), "\n"), strings.Split(string(got), "\n")
	// Longest common subsequence on lines; fixture files are small.
	if len(a)*len(b) > 40_000_000 {
		for i := 0; i < min(len(a), len(b)); i++ {
			if a[i] != b[i] {
				return fmt.Sprintf("first difference at line %d:\n-%s\n+%s", i+1, a[i], b[i])
			}
		}
		return fmt.Sprintf("want %d lines, got %d", len(a), len(b))
	}
	lcs := make([][]int32, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int32, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	type line struct {
		op   byte
		text string
		n    int
	}
	var ops []line
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			ops = append(ops, line{' ', a[i], i + 1})
			i, j = i+1, j+1
		case i < len(a) && (j == len(b) || lcs[i+1][j] >= lcs[i][j+1]):
			ops = append(ops, line{'-', a[i], i + 1})
			i++
		default:
			ops = append(ops, line{'+', b[j], j + 1})
			j++
		}
	}
	var out strings.Builder
	shown, last := 0, -1
	for k, op := range ops {
		near := false
		for d := -2; d <= 2; d++ {
			if k+d >= 0 && k+d < len(ops) && ops[k+d].op != ' ' {
				near = true
			}
		}
		if !near {
			continue
		}
		if shown >= 40 {
			out.WriteString("…\n")
			break
		}
		if last >= 0 && k != last+1 {
			out.WriteString("…\n")
		}
		text := op.text
		if len(text) > 160 {
			text = text[:157] + "…"
		}
		fmt.Fprintf(&out, "%c %4d %s\n", op.op, op.n, text)
		shown++
		last = k
	}
	return out.String()
}

// publishedBy applies the quality policy of DESIGN.md §5 independently of
// the generator: at least min distinct solvers chose the key and no solver
// chose another letter without an override.
func publishedBy(q *certbank.Question, min int) bool {
	agree := map[string]bool{}
	for _, v := range q.Verifications {
		if v.Answer == q.Answer {
			agree[v.Solver] = true
		} else if v.Override == "" {
			return false
		}
	}
	return len(agree) >= min
}

// decodeJSON unmarshals a public JSON file into generic values.
func decodeJSON(t testing.TB, files map[string][]byte, p string) map[string]any {
	t.Helper()
	data, ok := files[p]
	if !ok {
		t.Fatalf("%s was not built", p)
	}
	var v map[string]any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%s is not a JSON object: %v", p, err)
	}
	return v
}
