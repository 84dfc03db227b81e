package verify_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/certbank/certbank/generator"
	"github.com/certbank/certbank/verify"
)

func TestSheetSplit(t *testing.T) {
	t.Parallel()
	s, err := mustOpen(t, fixture(t)).Sheet("scrum-psm1", verify.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		n     int
		sizes []int
	}{
		{2, []int{2, 2, 1}},
		{5, []int{5}},
		{50, []int{5}},
		{1, []int{1, 1, 1, 1, 1}},
	} {
		parts := s.Split(tc.n)
		var sizes []int
		var got []string
		for i, p := range parts {
			sizes = append(sizes, len(p.Questions))
			if p.Batch != i+1 || p.Batches != len(parts) {
				t.Errorf("batch %d: Batch %d of %d", i+1, p.Batch, p.Batches)
			}
			for _, r := range p.Questions {
				got = append(got, r.ID)
			}
		}
		if want := slices.Sorted(slices.Values(scrumIDs)); !slices.Equal(sizes, tc.sizes) || !slices.Equal(got, want) {
			t.Errorf("Split(%d): sizes %v, ids %v; want %v, %v (sheets list questions by id)", tc.n, sizes, got, tc.sizes, want)
		}
	}
	var buf bytes.Buffer
	if err := s.Split(2)[1].Write(&buf, verify.Text); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(buf.String(), "CERTBANK ANSWER SHEET\nCertification: scrum-psm1\nBatch: 2 of 3 (2 questions)\n") ||
		!strings.Contains(buf.String(), "Question 2 of 2 (id "+sprintLength+")") {
		t.Errorf("batch 2 of 3:\n%s", buf.String())
	}
	empty := &verify.Sheet{Certification: "x"}
	if parts := empty.Split(50); len(parts) != 0 {
		t.Errorf("an empty sheet splits into %d batches", len(parts))
	}
}

func TestSheetFilter(t *testing.T) {
	t.Parallel()
	// alice answered B on twoDevs (key D), bob agreed everywhere.
	dir := verifiedFixture(t)
	for _, tc := range []struct {
		name string
		f    verify.Filter
		want []string
	}{
		{"all", verify.Filter{}, scrumIDs},
		{"disagreeing", verify.Filter{Disagreeing: true}, []string{twoDevs}},
		{"unanswered by the human", verify.Filter{UnansweredBy: humanExpert}, []string{sprintLength, twoDevs, whoDecides, testingDept}},
		{"disagreeing, unanswered by carol", verify.Filter{Disagreeing: true, UnansweredBy: "carol"}, []string{twoDevs}},
		{"disagreeing, unanswered by bob", verify.Filter{Disagreeing: true, UnansweredBy: "bob"}, nil},
	} {
		s, err := mustOpen(t, dir).Sheet("scrum-psm1", tc.f)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range s.Questions {
			got = append(got, r.ID)
		}
		if want := slices.Sorted(slices.Values(tc.want)); !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", tc.name, got, want)
		}
	}
	// A reviewed override resolves the disagreement: no third solver needed.
	if err := mustOpen(t, dir).Override(twoDevs, "alice", "reviewed: D stands"); err != nil {
		t.Fatal(err)
	}
	if s, _ := mustOpen(t, dir).Sheet("scrum-psm1", verify.Filter{Disagreeing: true}); len(s.Questions) != 0 {
		t.Errorf("after the override the disagreeing sheet holds %d questions", len(s.Questions))
	}
}

// textSheet returns a scrum-psm1 text sheet filled with the keys.
func textSheet(t *testing.T, dir string) string {
	t.Helper()
	data, err := os.ReadFile(writeSheet(t, dir, "scrum-psm1", verify.Text, correct(nil)))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// lineOf returns the 1-based number of the first line of text that
// contains sub at or after line from.
func lineOf(t *testing.T, text, sub string, from int) int {
	t.Helper()
	for i, l := range strings.Split(text, "\n") {
		if i+1 >= from && strings.Contains(l, sub) {
			return i + 1
		}
	}
	t.Fatalf("no line with %q", sub)
	return 0
}

func TestImportTextTolerant(t *testing.T) {
	t.Parallel()
	dir := fixture(t)
	text := textSheet(t, dir)
	// Lower case, spaces around the colon and the letter, blank and
	// comment lines, CRLF, the block in another order: all fine.
	text = strings.Replace(text, sprintLength+": C\n", "  "+sprintLength+"  :   c  \n\n# checked twice\n", 1)
	text = strings.Replace(text, twoDevs+": D\n", "", 1) + twoDevs + ":d\n"
	text = strings.ReplaceAll(text, "\n", "\r\n")
	p := filepath.Join(t.TempDir(), "filled.txt")
	os.WriteFile(p, []byte(text), 0o644)
	n, err := mustOpen(t, dir).Import("alice", date, p)
	if err != nil {
		t.Fatal(err)
	}
	if n.Answers != 5 || n.Agree != 5 {
		t.Errorf("counts = %+v", n)
	}
	if q := question(t, dir, sprintLength); len(q.Verifications) != 1 || q.Verifications[0].Answer != "C" {
		t.Errorf("verifications = %+v", q.Verifications)
	}
}

func TestImportTextRefusals(t *testing.T) {
	t.Parallel()
	const stranger = "00000000-0000-4000-8000-000000000000"
	// ans is the line number of id's ANSWERS line, head of its "Question" line.
	ans := func(t *testing.T, text, id string) int { return lineOf(t, text, id+":", lineOf(t, text, "ANSWERS", 1)) }
	head := func(t *testing.T, text, id string) int { return lineOf(t, text, "(id "+id+")", 1) }
	for _, tc := range []struct {
		name string
		edit func(text string) string
		line func(t *testing.T, text string) int // in the edited text; nil: no line
		want []string                            // all in one problem
	}{
		{
			name: "missing ANSWERS line",
			edit: func(s string) string { return strings.Replace(s, whoDecides+": C\n", "", 1) },
			line: func(t *testing.T, s string) int { return head(t, s, whoDecides) },
			want: []string{whoDecides, "has no line in ANSWERS", "add the line"},
		},
		{
			name: "repeated id",
			edit: func(s string) string { return s + sizing + ": C\n" },
			line: func(t *testing.T, s string) int { return strings.Count(s, "\n") },
			want: []string{sizing, "appears again in ANSWERS (first at line", "keep one line per question"},
		},
		{
			name: "id of another sheet",
			edit: func(s string) string { return s + custodian + ": B\n" },
			line: func(t *testing.T, s string) int { return ans(t, s, custodian) },
			want: []string{custodian, "not among the questions of this sheet", "delete the line"},
		},
		{
			name: "empty letter",
			edit: func(s string) string { return strings.Replace(s, twoDevs+": D", twoDevs+":   ", 1) },
			line: func(t *testing.T, s string) int { return ans(t, s, twoDevs) },
			want: []string{twoDevs, "has no answer", "write A, B, C or D"},
		},
		{
			name: "invalid letter",
			edit: func(s string) string { return strings.Replace(s, twoDevs+": D", twoDevs+": E", 1) },
			line: func(t *testing.T, s string) int { return ans(t, s, twoDevs) },
			want: []string{twoDevs, `answer "E" is not one of A, B, C, D`},
		},
		{
			name: "two letters",
			edit: func(s string) string { return strings.Replace(s, twoDevs+": D", twoDevs+": B or D", 1) },
			line: func(t *testing.T, s string) int { return ans(t, s, twoDevs) },
			want: []string{twoDevs, `"B or D" is not one of`},
		},
		{
			name: "id unknown to the bank",
			edit: func(s string) string { return strings.ReplaceAll(s, testingDept, stranger) },
			line: func(t *testing.T, s string) int { return ans(t, s, stranger) },
			want: []string{stranger, "unknown question id", "export a new one"},
		},
		{
			name: "not an answer line",
			edit: func(s string) string { return strings.Replace(s, sizing+": C", sizing+" C", 1) },
			line: func(t *testing.T, s string) int { return lineOf(t, s, sizing+" C", 1) },
			want: []string{sizing, "is not a line of ANSWERS", `"<id>: <letter>"`},
		},
		{
			name: "edited question",
			edit: func(s string) string {
				return strings.Replace(s, "A) Escalate the decision to the architect", "A) Escalate it", 1)
			},
			line: func(t *testing.T, s string) int { return head(t, s, twoDevs) },
			want: []string{twoDevs, "option A differs from the bank", "export a new sheet"},
		},
		{
			name: "question repeated in the question section",
			edit: func(s string) string {
				return strings.Replace(s, "Question 2 of 5 (id "+testingDept+")", "Question 2 of 5 (id "+sprintLength+")", 1)
			},
			line: func(t *testing.T, s string) int { return lineOf(t, s, "Question 4 of 5", 1) },
			want: []string{sprintLength, "appears again in the question section", "export a new one"},
		},
		{
			name: "no ANSWERS block",
			edit: func(s string) string { return strings.Replace(s, "\nANSWERS\n", "\nMY ANSWERS\n", 1) },
			want: []string{"no ANSWERS block", "export a new sheet"},
		},
		{
			name: "a rating sheet",
			edit: func(s string) string { return strings.Replace(s, "\nANSWERS\n", "\nRATINGS\n", 1) },
			line: func(t *testing.T, s string) int { return lineOf(t, s, "RATINGS", 1) },
			want: []string{"rating sheet", "certbank verify rate-import"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := fixture(t)
			text := tc.edit(textSheet(t, dir))
			p := filepath.Join(t.TempDir(), "filled.txt")
			os.WriteFile(p, []byte(text), 0o644)
			before := snapshot(t, dir)

			_, err := mustOpen(t, dir).Import("alice", date, p)
			var probs generator.Problems
			if !errors.As(err, &probs) {
				t.Fatalf("Import error = %v, want generator.Problems", err)
			}
			line := 0
			if tc.line != nil {
				line = tc.line(t, text)
			}
			found := false
			for _, pr := range probs {
				ok := pr.File == p && pr.Line == line
				for _, w := range tc.want {
					ok = ok && strings.Contains(pr.Msg, w)
				}
				found = found || ok
			}
			if !found {
				t.Errorf("no problem at %s:%d containing %q in:\n%v", p, line, tc.want, err)
			}
			if after := snapshot(t, dir); !mapsEqual(before, after) {
				t.Errorf("a refused import changed the content tree")
			}
		})
	}
}

// The sheets of the bootstrap (content/verification/solver-d and -e) head
// each question "=== ID  (exam: SLUG)", mix exams, and write options "A.".
func TestImportBootstrapTextSheet(t *testing.T) {
	t.Parallel()
	dir := fixture(t)
	n, err := mustOpen(t, dir).Import("alice", date, "testdata/bootstrap-sheet.txt")
	if err != nil {
		t.Fatal(err)
	}
	if n.Answers != 7 || n.Agree != 7 || n.Added != 7 {
		t.Errorf("counts = %+v", n)
	}
	// An edited option is still caught.
	data, _ := os.ReadFile("testdata/bootstrap-sheet.txt")
	p := filepath.Join(t.TempDir(), "edited.txt")
	os.WriteFile(p, bytes.Replace(data, []byte("  B. Data custodian"), []byte("  B. Custodian"), 1), 0o644)
	_, err = mustOpen(t, fixture(t)).Import("alice", date, p)
	if err == nil || !strings.Contains(err.Error(), "edited.txt:"+fmt.Sprint(lineOf(t, string(data), "=== "+custodian, 1))+": question "+custodian+": option B differs") {
		t.Errorf("edited bootstrap sheet: %v", err)
	}
}
